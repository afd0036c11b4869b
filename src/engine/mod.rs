//! Engines: where SQL runs. Each engine introspects its catalog and executes
//! one compiled statement read-only, under a row cap and a timeout that
//! really interrupts the query, returning typed columns.
//!
//! Owns source URLs (`duckdb:PATH`, a path ending `.duckdb`,
//! `postgres://…` / `postgresql://…`, `mysql://…` / `mariadb://…`,
//! `parquet:DIR` / `csv:DIR` for DataFusion, `sc://HOST:PORT` for Spark
//! Connect, `adbc:DRIVER?uri=…` for any ADBC driver), the typed result set, and the
//! export of a DuckDB database into another engine (`export`). Network
//! engines own a small tokio runtime each (`runtime`); DataFusion owns a
//! multi-threaded one.
//!
//! Architecture invariant: knows catalogs and compiled SQL, never plans or
//! envelopes; failures are `EngineError`s that `tools` maps to error kinds.

mod adbc;
mod batches;
mod cancel;
mod datafusion;
mod duckdb;
pub mod export;
mod mysql;
mod pool;
mod postgres;
mod runtime;
mod spark;
pub mod substrait;

use std::path::Path;
use std::time::Duration;

pub use self::adbc::{dialect_of_vendor, is_adbc_url, AdbcEngine, AdbcUrl};
pub use self::cancel::{watch, Cancel, Stop, Watch};
pub use self::datafusion::{arrow_type, is_datafusion_url, DataFusionEngine};
pub use self::duckdb::DuckDbEngine;
pub use self::mysql::{is_mysql_url, MySqlEngine};
pub use self::postgres::{is_postgres_url, PostgresEngine};
pub use self::spark::{is_spark_url, SparkEngine};
use crate::catalog::Catalog;
use crate::sql::{CompiledSql, Dialect};

/// The dialects whose SQL has run on their own engine here (the oracle
/// corpus answered as DuckDB answers it, `tests/it/cross_engine.rs`), and
/// on which: what `capabilities` reports as executed. Every other dialect
/// is parse-checked only.
pub const EXECUTED_DIALECTS: [(&str, &str); 6] = [
    ("duckdb", "DuckDB 1.5 (bundled)"),
    ("postgres", "PostgreSQL, native and through the ADBC PostgreSQL driver"),
    ("mysql", "MariaDB"),
    ("datafusion", "DataFusion 54 over Parquet and CSV"),
    ("databricks", "Apache Spark 4.3 over Spark Connect"),
    ("sqlite", "SQLite through the ADBC SQLite driver"),
];

/// A result row as exactly `N` cells (missing ones NULL), so the catalog
/// queries read their columns by position without a way to panic.
pub(crate) fn cells<const N: usize>(row: Vec<Option<String>>) -> [Option<String>; N] {
    let mut it = row.into_iter();
    std::array::from_fn(|_| it.next().flatten())
}

/// Limits every execution runs under.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Rows returned at most; more are cut and the result is marked truncated.
    pub max_rows: usize,
    pub timeout: Duration,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ResultColumn {
    pub name: String,
    /// The engine's type name (`BIGINT`, `DECIMAL(38,2)`, `TIMESTAMP`).
    pub data_type: String,
}

#[derive(Clone, Debug, PartialEq)]
pub struct ResultSet {
    pub columns: Vec<ResultColumn>,
    /// Rows in column order; JSON scalars (dates and timestamps as ISO text).
    pub rows: Vec<Vec<serde_json::Value>>,
    /// True when the row cap cut the result.
    pub truncated: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum EngineError {
    #[error("cannot open source `{source_url}`: {message}")]
    Connect { source_url: String, message: String },
    #[error("the query did not finish within {0:?} and was interrupted")]
    Timeout(Duration),
    #[error("the query was cancelled by the caller and interrupted")]
    Cancelled,
    #[error("the engine rejected the query: {0}")]
    Query(String),
    #[error("unsupported source `{0}`: supported are duckdb:PATH, paths ending in .duckdb, postgres://…, postgresql://…, mysql://…, mariadb://…, parquet:DIR, csv:DIR, sc://HOST:PORT (Spark Connect) and adbc:DRIVER?uri=… (an ADBC driver)")]
    UnsupportedSource(String),
}

/// An engine serves many calls at once: every method takes `&self`, and
/// none holds a lock for the length of a query (DuckDB opens a connection
/// per call from the shared database, the network engines take one from a
/// small pool), so a long query never makes a metadata call wait.
pub trait Engine: Send + Sync {
    /// Engine name and version, for the catalog snapshot.
    fn describe(&self) -> String;
    fn introspect(&self) -> Result<Catalog, EngineError>;
    /// Runs one read-only statement; a timeout or `cancel` interrupts it in
    /// the engine.
    fn execute(&self, sql: &CompiledSql, limits: Limits, cancel: &Cancel) -> Result<ResultSet, EngineError>;
    /// `execute` with nothing to stop it but its timeout.
    fn run(&self, sql: &CompiledSql, limits: Limits) -> Result<ResultSet, EngineError> {
        self.execute(sql, limits, &Cancel::never())
    }
    /// The dialect this engine runs: SQL is compiled for it unless the
    /// request or the project names another.
    fn dialect(&self) -> &'static Dialect {
        Dialect::duckdb()
    }
    /// Runs statements that write (the provider's materialize_sql and
    /// create_view, with `serve --allow-writes`) in one transaction, on a
    /// connection of their own that is not read-only; a timeout or
    /// `cancel` interrupts them. Engines that cannot write say so.
    fn write(&self, statements: &[String], timeout: Duration, cancel: &Cancel) -> Result<(), EngineError> {
        let _ = (statements, timeout, cancel);
        Err(EngineError::Query(format!("{} does not take writes", self.describe())))
    }
}

/// Makes a relative `duckdb:` path (or bare `.duckdb` path), or the
/// relative DIR of `parquet:DIR` / `csv:DIR`, relative to `base`.
pub fn resolve_source(source: &str, base: &Path) -> String {
    if let Some((prefix, dir)) = source.split_once(':').filter(|_| is_datafusion_url(source)) {
        return match Path::new(dir).is_relative() {
            true => format!("{prefix}:{}", base.join(dir).display()),
            false => source.to_string(),
        };
    }
    let path = source.strip_prefix("duckdb:").or_else(|| source.ends_with(".duckdb").then_some(source));
    match path {
        Some(p) if Path::new(p).is_relative() => format!("duckdb:{}", base.join(p).display()),
        Some(p) => format!("duckdb:{p}"),
        None => source.to_string(),
    }
}

/// Opens a source URL for reads and, with `writable`, for the write tools:
/// a DuckDB file then opens read-write (reads still pass the free-SQL
/// guard); the network engines keep read-only sessions for reads and open
/// a writer connection per write.
pub fn open_for(source: &str, writable: bool) -> Result<Box<dyn Engine>, EngineError> {
    let path = source.strip_prefix("duckdb:").or_else(|| source.ends_with(".duckdb").then_some(source));
    match path {
        Some(p) if writable => Ok(Box::new(DuckDbEngine::open_read_write(Path::new(p), source)?)),
        _ => open(source),
    }
}

/// Opens a source URL read-only.
pub fn open(source: &str) -> Result<Box<dyn Engine>, EngineError> {
    let path = source.strip_prefix("duckdb:").or_else(|| source.ends_with(".duckdb").then_some(source));
    match path {
        Some(p) => Ok(Box::new(DuckDbEngine::open_read_only(Path::new(p), source)?)),
        None if is_postgres_url(source) => Ok(Box::new(PostgresEngine::connect(source)?)),
        None if is_mysql_url(source) => Ok(Box::new(MySqlEngine::connect(source)?)),
        None if is_datafusion_url(source) => Ok(Box::new(DataFusionEngine::open(source)?)),
        None if is_spark_url(source) => Ok(Box::new(SparkEngine::connect(source)?)),
        None if is_adbc_url(source) => Ok(Box::new(AdbcEngine::connect(source)?)),
        None => Err(EngineError::UnsupportedSource(source.to_string())),
    }
}
