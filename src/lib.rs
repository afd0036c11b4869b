//! schemabrain: a semantic-layer metric compiler and SQL planner whose first
//! users are AI agents.
//!
//! # Code map
//!
//! ```text
//! project dir ──model::load──► SemanticModel ◄──catalog::overlay── Catalog ◄── engine::introspect
//!                                   │
//! tool args ──ir::resolve──► MetricQuery ──plan::plan──► QueryPlan ──sql::emit──► SQL + params
//!                                                                          │
//!                                             engine::execute ◄────────────┘
//!                                                   │
//!                             tools::* ──► envelope::Envelope ──► cli (and mcp)
//! ```
//!
//! - `model`: the YAML grammar, strict loading, diagnostics with file:line:key.
//!   **Architecture invariant:** a leaf; knows nothing of catalogs, SQL or engines.
//! - `envelope`: the charter v1.2 wire contract. **Invariant:** a leaf.
//! - `catalog`: physical tables and the on-disk snapshot. **Invariant:** never connects.
//! - `ir`: requests resolved into typed queries. **Invariant:** no joins, no SQL.
//! - `plan`: join graph, paths, fan-out, grains. **Invariant:** pure; `dry_run`
//!   needs no engine.
//! - `sql`: sqlparser AST and dialect profiles. **Invariant:** values are always
//!   bound, one statement, no IO.
//! - `engine`: DuckDB, read-only, row cap, interrupting timeout.
//! - `tools`: one function per tool; all behaviour lives here.
//! - `cli`: clap front end. **Invariant:** holds no logic a test of `tools` would miss.
//! - `mcp`: rmcp adapter (stdio, streamable HTTP; both protocol eras).
//!   **Invariant:** adapts `tools::surface` only; never prints to stdout.
//! - `audit`: SHA-256 hash-chained, append-only call log and its verifier.
//!   **Invariant:** stores hashes of arguments, never their values.

pub mod audit;
pub mod catalog;
pub mod cli;
pub mod demo;
pub mod engine;
pub mod envelope;
pub mod ir;
pub mod mcp;
pub mod model;
pub mod plan;
pub mod project;
pub mod sql;
pub mod tools;
