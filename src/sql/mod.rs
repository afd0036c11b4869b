//! SQL generation: a `RequestPlan` lowered to our own small SQL AST and
//! rendered for one dialect, with every value bound as a parameter.
//!
//! Owns the lowering (`emit`), the AST (`ast`), the dialect profiles
//! (`dialect`), the text writer (`render`), and the oracle the text is
//! checked against: the same tree as sqlparser's (`oracle`, built with
//! `build`), written by sqlparser's own `Display`.
//!
//! Architecture invariant: never opens a connection or reads files; the text
//! it returns is one statement with no `;`, and no value from a request is
//! ever pasted into it.

mod ast;
mod build;
mod dialect;
mod emit;
mod oracle;
mod render;

pub use dialect::{Buckets, Dialect, LimitStyle, Median, NullSafeEq, NullsLast, Percentile, Placeholders};
pub use emit::{emit, emit_filtered, lower, lower_filtered, tables_read, Lowered, Unsupported};

use crate::ir::Value;

/// Row filters the lowering applies to the tables it reads (the caller's
/// row-level security, `auth::row_filter`): each read of a restricted table
/// becomes `(SELECT * FROM table WHERE condition) AS alias`, so the
/// condition holds before any join or filter of the request.
pub trait TableFilters {
    /// The condition on `table`'s own columns (unqualified, identifiers
    /// quoted with `quote`); `None`: every row.
    fn condition(&self, table: &crate::model::TableRef, quote: char) -> Option<String>;
}

/// SQL text with its parameters in placeholder order.
#[derive(Clone, Debug, PartialEq)]
pub struct CompiledSql {
    pub sql: String,
    pub params: Vec<Value>,
    pub dialect: &'static str,
}
