//! schemabrain: a semantic-layer metric compiler and SQL planner whose first
//! users are AI agents.
//!
//! # Code map
//!
//! ```text
//! project dir ──model::load──► SemanticModel ◄──catalog::overlay── Catalog ◄── engine::introspect
//!                                   │
//! tool args ──ir::resolve──► MetricQuery ──plan::plan_request──► RequestPlan ──sql::emit──► SQL + params
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
//! - `pii`: taxonomy, name classifier, policy, refusal checks. **Invariant:** names
//!   only the categories that caused a refusal.
//! - `ir`: requests resolved into typed queries. **Invariant:** no joins, no SQL.
//! - `plan`: join graph, paths, fan-out, grains. **Invariant:** pure; `dry_run`
//!   needs no engine.
//! - `sql`: sqlparser AST and dialect profiles. **Invariant:** values are always
//!   bound, one statement, no IO.
//! - `engine`: DuckDB (bundled), PostgreSQL, MySQL/MariaDB and DataFusion (Parquet
//!   and CSV directories): read-only, row cap, a timeout the engine enforces, typed
//!   results, catalog introspection; validation without data (DuckDB, DataFusion).
//! - `tools`: one function per tool; all behaviour lives here, in four rooms
//!   (`contract` ← `semantic` ← `provider` ← `surface`). **Invariant:** no room
//!   imports from a room after it.
//! - `cli`: clap front end. **Invariant:** holds no logic a test of `tools` would miss.
//! - `mcp`: rmcp adapter (stdio, streamable HTTP; both protocol eras).
//!   **Invariant:** adapts `tools::surface` only; never prints to stdout.
//! - `audit`: SHA-256 hash-chained, append-only call log and its verifier.
//!   **Invariant:** stores hashes of arguments, never their values.
//! - `auth`: who calls over HTTP (API keys, OAuth access tokens as signed
//!   JWTs). **Invariant:** no credential in a log, an error or the audit.
//!
//! # Features
//!
//! `app` (default) builds the program: `engine`, `tools`, `project`, `audit`,
//! `auth`, `demo`, `cli`, `mcp`. A crate that wants the planner alone depends on
//! `schemabrain = { version = "0.2", default-features = false }` and gets
//! `model`, `ir`, `plan`, `sql`, `envelope`, `catalog` and `pii`, with
//! [`plan`] and [`compile`] as the entry points: no DuckDB, no DataFusion,
//! no async runtime.

pub mod catalog;
pub mod dbt;
pub mod envelope;
pub mod ir;
pub mod json;
pub mod model;
pub mod ossie;
pub mod pii;
pub mod provider;
pub mod plan;
pub mod sql;
pub mod unmapped;

// The program around the planner (feature `app`, on by default): engines,
// tools, the CLI and the MCP server. Without it the crate builds none of
// DuckDB, DataFusion, tokio, rmcp or the database clients.
#[cfg(feature = "app")]
pub mod audit;
#[cfg(feature = "app")]
pub mod auth;
#[cfg(feature = "app")]
pub mod cli;
#[cfg(feature = "app")]
pub mod demo;
#[cfg(feature = "app")]
pub mod engine;
#[cfg(feature = "app")]
pub mod index;
#[cfg(feature = "app")]
pub mod mcp;
#[cfg(feature = "app")]
pub mod project;
#[cfg(feature = "app")]
pub mod tools;

use crate::ir::{Issue, MetricRequest};
use crate::model::CheckedModel;
use crate::plan::RequestPlan;
use crate::sql::{CompiledSql, Dialect};

/// Resolves and plans a request against a checked model. Pure: no engine,
/// no IO.
///
/// ```
/// use schemabrain::ir::MetricRequest;
/// use schemabrain::model::{load_checked_from_files, FileKind};
///
/// let files = vec![
///     (FileKind::Entity, "entities/order.yaml".into(),
///      "version: 1\nname: order\nbinding: {single_table: main.orders}\nidentity: id\n".to_string()),
///     (FileKind::Metric, "metrics/order_count.yaml".into(),
///      "version: 1\nname: order_count\nentity: order\nmeasure: {agg: count, column: id}\n".to_string()),
/// ];
/// let model = load_checked_from_files(&files).expect("the model loads");
/// let request = MetricRequest { names: vec!["order_count".into()], ..Default::default() };
/// let plan = schemabrain::plan(&model, &request).unwrap();
/// assert_eq!(plan.components[0].anchor.alias, "order");
/// assert!(plan.components[0].joins.is_empty());
/// ```
pub fn plan(model: &CheckedModel, request: &MetricRequest) -> Result<RequestPlan, Issue> {
    let resolved = ir::resolve(model, request)?;
    plan::plan_request(model, &resolved)
}

/// Why `compile` could not produce SQL.
#[derive(Clone, Debug, PartialEq)]
pub enum CompileError {
    /// The dialect name is not one of `Dialect::supported()`.
    UnknownDialect(String),
    /// The request is wrong for this model (the issue says how).
    Request(Issue),
    /// The dialect has no exact form of something the request needs.
    Unsupported(sql::Unsupported),
}

/// Plans a request and renders its SQL for a dialect; values are bound
/// parameters, never pasted into the text.
///
/// ```
/// use schemabrain::ir::{FilterArg, FilterValue, MetricRequest};
/// use schemabrain::model::{load_checked_from_files, FileKind, Literal};
///
/// let files = vec![
///     (FileKind::Entity, "entities/order.yaml".into(),
///      "version: 1\nname: order\nbinding: {single_table: main.orders}\nidentity: id\n".to_string()),
///     (FileKind::Metric, "metrics/revenue.yaml".into(),
///      "version: 1\nname: revenue\nentity: order\nmeasure: {agg: sum, column: amount}\n".to_string()),
/// ];
/// let model = load_checked_from_files(&files).expect("the model loads");
/// let request = MetricRequest {
///     names: vec!["revenue".into()],
///     group_by: vec!["order.status".into()],
///     filters: vec![FilterArg {
///         column: "order.status".into(),
///         op: "ne".into(),
///         value: FilterValue::Scalar(Literal::Text("cancelled".into())),
///         metric: None,
///     }],
///     ..Default::default()
/// };
/// let compiled = schemabrain::compile(&model, &request, "postgres").unwrap();
/// assert!(compiled.sql.contains(r#""order"."status" <> $1"#));
/// assert_eq!(compiled.params.len(), 1);
/// ```
pub fn compile(model: &CheckedModel, request: &MetricRequest, dialect: &str) -> Result<CompiledSql, CompileError> {
    let dialect = Dialect::from_name(dialect).map_err(CompileError::UnknownDialect)?;
    let plan = plan(model, request).map_err(CompileError::Request)?;
    sql::emit(&plan, dialect).map_err(CompileError::Unsupported)
}
