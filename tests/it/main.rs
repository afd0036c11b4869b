//! The one integration-test binary (each test binary links DuckDB, so there
//! is only one). Modules by concern; data-driven suites read their cases
//! from files under `tests/` and `dialects/`.

// A failing unwrap in a test is a failing test (the crate denies them elsewhere).
#![allow(clippy::unwrap_used, clippy::expect_used)]

// The binary's allocator (src/main.rs): the in-process servers and the
// load tests run as the shipped binary does.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

mod common;
// Rules about the source itself: no unwrap/expect outside tests.
mod policy;

// The envelope's invariants and wire shape.
mod envelope;
// Broken projects give clear diagnostics, good ones load.
mod loader;
// Golden SQL per dialect, one case per file.
mod golden;
// Answers on the demo warehouse equal hand-written SQL.
mod oracle;
// Computed columns: answers, what the relation carries, PII, refusals.
mod computed;
// Custom grains of the time spine: answers equal hand SQL over the spine.
mod custom_grain;
// The planner against a brute-force evaluator on random schemas and data.
mod oracle_fuzz;
// Every error kind the planner raises, and its recovery followed.
mod recovery;
// The binary: exit codes, --json, stdout discipline.
mod cli;
// The MCP server through rmcp's client, both protocol eras, schema-validated.
mod mcp;
// The binary over real stdio: raw JSON-RPC and the Python mcp SDK client.
mod mcp_stdio;
// Hostile bytes into the MCP transport: never a panic, never a torn line.
mod mcp_framing;
// The real server as its own process, in rounds: 0 errors, flat memory.
mod soak;
// Streamable HTTP on loopback: both eras, Origin guard, bounded load test.
mod mcp_http;
// Authenticated HTTP: bearer tokens and API keys, 401 and resource metadata, the audit's principal.
mod mcp_auth;
// Row-level security per role: row filters through get_metric and query_sql against hand-written SQL.
mod row_security;
// Entity allowlists and PII widening per role; the JWKS fetched from the issuer's jwks_uri.
mod auth_scope;
// The hash-chained audit log: tampering, torn writes, kills, concurrency.
mod audit;
// Search: the golden question set and Recall@k.
mod search;
// Held-out sets written without looking at the code: search over Chinook and Sakila, PII names from public schemas.
mod heldout;
// Real servers (Postgres, MySQL/MariaDB): where they are, scratch schemas, skip or fail.
mod engines_servers;
// The Postgres engine: read-only, timeout, row cap, types, parameters, introspection.
mod engines_postgres;
// The MySQL/MariaDB engine, and the demo exported into it.
mod engines_mysql;
// The DataFusion engine over Parquet and CSV directories, and validation without data.
mod engines_datafusion;
// The engines from Python wheels: the venv, the local Spark Connect server, the ADBC drivers.
mod engines_wheels;
// The Spark engine over Spark Connect: read-only, timeout interrupting on the server, index.
mod engines_spark;
// The ADBC engine with the SQLite and PostgreSQL drivers.
mod engines_adbc;
// Engines without a lock: calls side by side, cancellation stopping the query in the engine.
mod engines_concurrency;
// The same oracle requests answered alike on DuckDB, Postgres, MariaDB, DataFusion, Spark and ADBC (SQLite, PostgreSQL); Parquet export.
mod cross_engine;
// The provider toolset: the adversarial query_sql corpus on DuckDB and Postgres, paging, tokens, MCP.
mod provider;
// The masking policy through query_sql, preview_masked and the writes; query_sql's time_range.
mod provider_views;
// fuzz/seeds and fuzz/regressions replayed on stable.
mod fuzz_regressions;
// Arbitrary JSON arguments into every tool: a valid envelope, never a panic.
mod tool_fuzz;
// Confidence and provenance derived from the definitions a plan used.
mod trust;
// Seed 004 as an agent meets it: next actions, escalation, the circuit breaker, fingerprints.
mod agent_session;
// One PII decision for every tool, on a project without a policy.
mod pii;
// The minimum group size (k) for quasi-identifiers, against a brute-force evaluator.
mod pii_groups;
// schemabrain index: inference from DuckDB, Postgres and Parquet, re-indexing, PII tags, graph.
mod index;
// schemabrain import dbt: the dbt_shop manifest, checked against MetricFlow's recorded answers.
mod dbt_import;
// schemabrain import dbt on plain dbt projects (models, tests, docs): jaffle_shop and rule fixtures.
mod dbt_plain;
// TPC-H: semantics/tpch's requests against SQL written by hand, on DuckDB and Postgres; `via` on unequal paths.
mod tpch;
// schemabrain import/export ossie: a hand-written Ossie model against hand SQL, Ossie's TPC-DS example, the demo's round trip.
mod ossie;
