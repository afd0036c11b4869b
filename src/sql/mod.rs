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
pub use emit::{emit, lower, Lowered, Unsupported};

use crate::ir::Value;

/// SQL text with its parameters in placeholder order.
#[derive(Clone, Debug, PartialEq)]
pub struct CompiledSql {
    pub sql: String,
    pub params: Vec<Value>,
    pub dialect: &'static str,
}
