//! The data-provider surface of seed 003 (free SQL beside the semantic
//! layer): the pure checks every free statement passes before an engine
//! sees it. `guard` admits one read-only query that reaches nothing outside
//! the database; `columns` resolves its column references against the
//! catalog and applies the PII policy, so free SQL is no side door around
//! get_metric; `views` rewrites a checked statement so masked and
//! time-restricted tables are read only through their views. The tools themselves (and their page tokens) live in
//! `tools::provider` and `tools::contract::paging`.
//!
//! Architecture invariant: pure functions over SQL text, the catalog and
//! the policy; no engine, no IO.

pub mod columns;
pub mod guard;
pub mod views;
