//! DataFusion 54 over directories of Parquet or CSV files (`parquet:DIR`,
//! `csv:DIR`), and the validation of DataFusion SQL against empty tables
//! shaped like a model (`compile --validate`).
//!
//! Owns the mapping of a directory to tables (every `*.parquet` / `*.csv`
//! file, or sub-directory of such files, is table `main.<stem>`), the
//! mapping between Arrow types and the type names the model and catalog use,
//! the JSON form of Arrow values (the same as the DuckDB engine's, so that the
//! same query answers the same JSON on both), and the engine's tokio runtime.
//!
//! How the limits hold:
//! - read-only: files are only ever registered as tables, and every statement
//!   is planned with DDL, DML (`INSERT`, `COPY … TO`) and `SET` statements
//!   refused, so no query can write a file or change the session;
//! - timeout: the query runs as a task on the engine's runtime while the
//!   caller waits with a deadline of its own; past it the task is aborted,
//!   and dropping it drops the record-batch stream, which aborts every task
//!   DataFusion spawned for the query. An abort lands when a task yields, so
//!   every operator is made to yield between batches (`YieldBetweenBatches`);
//! - row cap: batches are pulled until `max_rows + 1` rows have arrived,
//!   then the stream is dropped, so the rest is never computed.
//!
//! Architecture invariant: knows catalogs, compiled SQL and model column
//! types, never plans or envelopes; must not depend on the DuckDB engine
//! (DataFusion answers on its own, which is what makes it a second opinion).
//! Failures are `EngineError`s.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use datafusion::arrow::array::RecordBatch;
use datafusion::arrow::datatypes::{DataType, Field, Schema, TimeUnit};
use datafusion::catalog::{MemorySchemaProvider, MemTable};
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::ScalarValue;
use datafusion::config::ConfigOptions;
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::coop::CooperativeExec;
use datafusion::physical_plan::execution_plan::SchedulingType;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::execution::context::{SQLOptions, SessionConfig, SessionContext};
use datafusion::prelude::{CsvReadOptions, ParquetReadOptions};
use futures_util::StreamExt;

use super::{EngineError, Limits, ResultColumn, ResultSet};
use crate::catalog::{Catalog, ColumnInfo, TableInfo};
use crate::ir::Value;
use crate::sql::CompiledSql;

/// The catalog DataFusion keeps its schemas in (its own default name).
const CATALOG: &str = "datafusion";
/// The schema files are registered in: the one the demo's bindings use.
const SCHEMA: &str = "main";
/// Rows read per CSV file to infer its column types. DataFusion's default
/// (1000) guesses a column that is empty in its first rows as text.
const CSV_INFER_ROWS: usize = 100_000;

/// The file format of a directory source.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileFormat {
    Parquet,
    Csv,
}

impl FileFormat {
    fn extension(self) -> &'static str {
        match self {
            FileFormat::Parquet => "parquet",
            FileFormat::Csv => "csv",
        }
    }
}

/// The format and directory of a `parquet:DIR` / `csv:DIR` source.
pub fn parse_url(source: &str) -> Option<(FileFormat, &str)> {
    if let Some(dir) = source.strip_prefix("parquet:") {
        Some((FileFormat::Parquet, dir))
    } else {
        source.strip_prefix("csv:").map(|dir| (FileFormat::Csv, dir))
    }
}

/// Whether a URL names a directory DataFusion reads.
pub fn is_datafusion_url(source: &str) -> bool {
    parse_url(source).is_some()
}

pub struct DataFusionEngine {
    /// Always `Some` until dropped (`Drop` takes it out to shut it down).
    rt: Option<tokio::runtime::Runtime>,
    ctx: SessionContext,
    format: Option<FileFormat>,
    source: String,
}

/// DataFusion runs a query as several partitions, each a task; a
/// multi-threaded runtime lets them use the cores (the network engines'
/// current-thread runtime only waits on sockets).
fn new_runtime(source: &str) -> Result<tokio::runtime::Runtime, EngineError> {
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, 8);
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(threads)
        .thread_name("schemabrain-datafusion")
        .enable_all()
        .build()
        .map_err(|e| EngineError::Connect { source_url: source.to_string(), message: format!("cannot start the async runtime: {e}") })
}

pub(crate) fn new_context() -> SessionContext {
    let mut config = SessionConfig::new()
        .with_default_catalog_and_schema(CATALOG, SCHEMA)
        .with_create_default_catalog_and_schema(true)
        .with_information_schema(false);
    // Wrong rows: the join dynamic filter, pushed through an aggregate
    // grouping on a column named like another (`customers.id` beside
    // `orders.id`), drops matching rows (apache/datafusion#25264; the
    // test datafusion_joins_an_aggregate_over_same_named_columns_as_duckdb_does).
    config.options_mut().optimizer.enable_join_dynamic_filter_pushdown = false;
    let state = SessionStateBuilder::new()
        .with_config(config)
        .with_default_features()
        .with_physical_optimizer_rule(Arc::new(YieldBetweenBatches))
        .build();
    SessionContext::new_with_state(state)
}

/// Makes every operator of a plan spend a unit of the task's scheduling
/// budget per batch it produces, so that a query yields to the scheduler at
/// least every 128 batches wherever its work happens, and an aborted query
/// stops there. DataFusion's own rule (`EnsureCooperative`) only does this
/// for scans and exchanges: a join that makes millions of rows from one
/// input batch (a cross join) never reaches a scan again to yield, and could
/// not be stopped until it ends.
#[derive(Debug)]
struct YieldBetweenBatches;

impl PhysicalOptimizerRule for YieldBetweenBatches {
    fn name(&self) -> &str {
        "schemabrain_yield_between_batches"
    }

    fn optimize(&self, plan: Arc<dyn ExecutionPlan>, _config: &ConfigOptions) -> datafusion::error::Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|p| {
            if p.children().is_empty() || p.properties().scheduling_type == SchedulingType::Cooperative {
                return Ok(Transformed::no(p));
            }
            Ok(Transformed::yes(Arc::new(CooperativeExec::new(p)) as Arc<dyn ExecutionPlan>))
        })
        .map(|t| t.data)
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// Statements are queries only: no DDL, no DML (`INSERT`, `COPY … TO`
/// would write files), no `SET`.
pub(crate) fn read_only() -> SQLOptions {
    SQLOptions::new().with_allow_ddl(false).with_allow_dml(false).with_allow_statements(false)
}

fn df_err(e: datafusion::error::DataFusionError) -> EngineError {
    EngineError::Query(e.to_string())
}

impl DataFusionEngine {
    /// Opens `parquet:DIR` or `csv:DIR`: every `*.parquet` (`*.csv`) file of
    /// DIR, and every sub-directory holding such files, becomes a table
    /// `main.<stem>`. Column types are read from the Parquet footers or
    /// inferred from the CSV files (which have a header row).
    pub fn open(source: &str) -> Result<Self, EngineError> {
        let connect_err = |message: String| EngineError::Connect { source_url: source.to_string(), message };
        let Some((format, dir)) = parse_url(source) else {
            return Err(EngineError::UnsupportedSource(source.to_string()));
        };
        let dir = Path::new(dir);
        let tables = tables_in(dir, format).map_err(connect_err)?;
        let rt = new_runtime(source)?;
        let ctx = new_context();
        super::runtime::block_on(&rt, async {
            for (name, path) in &tables {
                let path = path.display().to_string();
                let table = datafusion::sql::TableReference::partial(SCHEMA, name.as_str());
                let registered = match format {
                    FileFormat::Parquet => ctx.register_parquet(table, &path, ParquetReadOptions::default()).await,
                    FileFormat::Csv => {
                        // Quoted values may hold line breaks (the export writes them so);
                        // reading them right costs splitting a file across partitions.
                        let options = CsvReadOptions::new()
                            .has_header(true)
                            .newlines_in_values(true)
                            .schema_infer_max_records(CSV_INFER_ROWS);
                        ctx.register_csv(table, &path, options).await
                    }
                };
                registered.map_err(|e| connect_err(format!("cannot read {path}: {e}")))?;
            }
            Ok::<_, EngineError>(())
        })?;
        Ok(DataFusionEngine { rt: Some(rt), ctx, format: Some(format), source: source.to_string() })
    }

    /// An engine holding empty tables shaped like the entities of `model`
    /// (their catalog or declared column types), for validating DataFusion
    /// SQL without any data. A column type DataFusion has no Arrow type for
    /// is an error naming the column.
    pub fn empty_like(model: &crate::model::SemanticModel) -> Result<Self, EngineError> {
        let source = "datafusion::memory:".to_string();
        let rt = new_runtime(&source)?;
        let ctx = new_context();
        let mut entities: Vec<&crate::model::Entity> = model.entities.values().collect();
        entities.sort_by(|a, b| a.table.cmp(&b.table));
        entities.dedup_by(|a, b| a.table == b.table);
        for e in entities {
            let fields = e
                .columns
                .iter()
                .map(|c| {
                    let name = c.data_type.as_deref().unwrap_or("varchar");
                    arrow_type(name).map(|t| Field::new(&c.name, t, true)).ok_or_else(|| {
                        EngineError::Query(format!(
                            "column `{}` of `{}` has type `{name}`, which has no DataFusion counterpart",
                            c.name, e.table
                        ))
                    })
                })
                .collect::<Result<Vec<_>, _>>()?;
            register_empty(&ctx, &e.table.schema, &e.table.table, fields)?;
        }
        Ok(DataFusionEngine { rt: Some(rt), ctx, format: None, source })
    }

    /// Plans `compiled` with its parameters bound, optimises it and runs it
    /// (on empty tables that costs nothing): names, types, functions and the
    /// arguments aggregates check only when they start are all bound.
    pub fn validate(&self, compiled: &CompiledSql) -> Result<(), EngineError> {
        let ctx = &self.ctx;
        super::runtime::block_on(self.rt(), async {
            let df = ctx.sql_with_options(&compiled.sql, read_only()).await.map_err(df_err)?;
            let df = df.with_param_values(param_values(&compiled.params)?).map_err(df_err)?;
            df.collect().await.map(|_| ()).map_err(df_err)
        })
    }

    /// Tokio tasks still alive on the engine's runtime: none once a query has
    /// finished, failed or been interrupted (tests check the timeout with it).
    #[doc(hidden)]
    pub fn running_tasks(&self) -> usize {
        self.rt().metrics().num_alive_tasks()
    }

    // `None` only inside `drop`, after which nothing calls it.
    #[allow(clippy::expect_used)]
    fn rt(&self) -> &tokio::runtime::Runtime {
        self.rt.as_ref().expect("the runtime lives as long as the engine")
    }
}

/// Shuts the runtime down without waiting: dropping a runtime the ordinary
/// way blocks, which panics when the engine is dropped inside async code
/// (an MCP handler); tasks still running stop at their next yield.
impl Drop for DataFusionEngine {
    fn drop(&mut self) {
        if let Some(rt) = self.rt.take() {
            rt.shutdown_background();
        }
    }
}

/// Registers an empty table `schema.table` with `fields` (its schema too,
/// unless it is there).
pub(crate) fn register_empty(ctx: &SessionContext, schema: &str, table: &str, fields: Vec<Field>) -> Result<(), EngineError> {
    let empty = MemTable::try_new(Arc::new(Schema::new(fields)), vec![vec![]]).map_err(df_err)?;
    ensure_schema(ctx, schema)?;
    let reference = datafusion::sql::TableReference::partial(schema, table);
    ctx.register_table(reference, Arc::new(empty)).map_err(df_err)?;
    Ok(())
}

/// Registers schema `name` in the default catalog unless it is there.
fn ensure_schema(ctx: &SessionContext, name: &str) -> Result<(), EngineError> {
    let catalog = ctx.catalog(CATALOG).ok_or_else(|| EngineError::Query("DataFusion has no default catalog".into()))?;
    if catalog.schema(name).is_none() {
        catalog.register_schema(name, Arc::new(MemorySchemaProvider::new())).map_err(df_err)?;
    }
    Ok(())
}

/// The tables of a directory source: `(stem, path)` sorted by name. A
/// sub-directory is a table when it holds files of the format (partitioned
/// layouts such as `orders/year=2024/part-0.parquet` included).
fn tables_in(dir: &Path, format: FileFormat) -> Result<Vec<(String, PathBuf)>, String> {
    let ext = format.extension();
    if !dir.is_dir() {
        return Err(format!("no directory at {}", dir.display()));
    }
    let entries = std::fs::read_dir(dir).map_err(|e| format!("cannot list {}: {e}", dir.display()))?;
    let mut tables: Vec<(String, PathBuf)> = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| format!("cannot list {}: {e}", dir.display()))?.path();
        let name = if path.is_dir() {
            if !holds_files(&path, ext) {
                continue;
            }
            path.file_name().and_then(|n| n.to_str()).map(str::to_string)
        } else if path.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case(ext)) {
            path.file_stem().and_then(|n| n.to_str()).map(str::to_string)
        } else {
            None
        };
        let Some(name) = name.filter(|n| !n.starts_with('.')) else { continue };
        if let Some((_, other)) = tables.iter().find(|(n, _)| *n == name) {
            return Err(format!("{} and {} would both be table `{SCHEMA}.{name}`", other.display(), path.display()));
        }
        tables.push((name, path));
    }
    if tables.is_empty() {
        return Err(format!("no *.{ext} files (or directories of them) in {}", dir.display()));
    }
    tables.sort();
    Ok(tables)
}

/// Whether `dir` holds files with extension `ext`, looking a few levels
/// down (partitioned layouts), and no further (a symlink cycle ends there).
fn holds_files(dir: &Path, ext: &str) -> bool {
    holds_files_within(dir, ext, 8)
}

fn holds_files_within(dir: &Path, ext: &str, depth: usize) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else { return false };
    entries.flatten().map(|e| e.path()).any(|p| {
        if p.is_dir() {
            depth > 0 && holds_files_within(&p, ext, depth - 1)
        } else {
            p.extension().and_then(|e| e.to_str()).is_some_and(|e| e.eq_ignore_ascii_case(ext))
        }
    })
}

impl super::Engine for DataFusionEngine {
    fn dialect(&self) -> &'static crate::sql::Dialect {
        crate::sql::Dialect::datafusion()
    }

    fn describe(&self) -> String {
        format!("datafusion {}", datafusion::DATAFUSION_VERSION)
    }

    fn introspect(&self) -> Result<Catalog, EngineError> {
        let mut catalog = Catalog { source: self.source.clone(), engine: self.describe(), tables: Default::default() };
        let ctx = &self.ctx;
        let format = self.format;
        let tables = super::runtime::block_on(self.rt(), async {
            let mut out = Vec::new();
            let Some(schema) = ctx.catalog(CATALOG).and_then(|c| c.schema(SCHEMA)) else { return Ok(out) };
            let mut names = schema.table_names();
            names.sort();
            for name in names {
                let Some(table) = schema.table(&name).await.map_err(df_err)? else { continue };
                // Parquet footers hold the row count (DataFusion answers
                // count(*) from them without reading data); a CSV file would
                // have to be read whole, so its count stays unknown.
                let row_count = if format == Some(FileFormat::Parquet) {
                    let sql = format!("SELECT count(*) FROM \"{SCHEMA}\".\"{}\"", name.replace('"', "\"\""));
                    let batches = ctx.sql_with_options(&sql, read_only()).await.map_err(df_err)?.collect().await.map_err(df_err)?;
                    batches.first().filter(|b| b.num_rows() == 1).and_then(|b| match ScalarValue::try_from_array(b.column(0), 0) {
                        Ok(ScalarValue::Int64(Some(n))) => u64::try_from(n).ok(),
                        _ => None,
                    })
                } else {
                    None
                };
                out.push((name, table.schema(), row_count));
            }
            Ok::<_, EngineError>(out)
        })?;
        for (name, schema, row_count) in tables {
            let columns = schema
                .fields()
                .iter()
                .map(|f| ColumnInfo {
                    name: f.name().clone(),
                    data_type: type_name(f.data_type()).to_ascii_lowercase(),
                    nullable: f.is_nullable(),
                    comment: None,
                    stats: None,
                })
                .collect();
            catalog.tables.insert(
                format!("{SCHEMA}.{name}"),
                TableInfo { schema: SCHEMA.to_string(), name, columns, row_count, ..Default::default() },
            );
        }
        Ok(catalog)
    }

    fn execute(&self, compiled: &CompiledSql, limits: Limits, cancel: &super::Cancel) -> Result<ResultSet, EngineError> {
        // The query runs as a task and the caller waits on a plain channel.
        // The deadline is kept by this thread, not by a tokio timer: timers
        // fire only when a worker parks, and a CPU-bound query keeps every
        // worker busy. On timeout or cancellation the task is aborted; at its
        // next yield (DataFusion's operators yield to the scheduler regularly)
        // it is dropped with its stream, which aborts every task the query
        // spawned. Calls share the session context, never a lock.
        let (tx, rx) = std::sync::mpsc::channel();
        let (ctx, compiled_sql, max_rows) = (self.ctx.clone(), compiled.clone(), limits.max_rows);
        let task = self.rt().spawn(async move {
            let _ = tx.send(run(&ctx, &compiled_sql, max_rows).await);
        });
        let deadline = std::time::Instant::now() + limits.timeout;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match rx.recv_timeout(left.min(std::time::Duration::from_millis(20))) {
                Ok(result) => return result,
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) if cancel.is_cancelled() => {
                    task.abort();
                    return Err(EngineError::Cancelled);
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) if left.is_zero() => {
                    task.abort();
                    return Err(EngineError::Timeout(limits.timeout));
                }
                Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {}
                Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
                    return Err(EngineError::Query("the query task ended without an answer (it panicked)".into()));
                }
            }
        }
    }
}

async fn run(ctx: &SessionContext, compiled: &CompiledSql, max_rows: usize) -> Result<ResultSet, EngineError> {
    let df = ctx.sql_with_options(&compiled.sql, read_only()).await.map_err(df_err)?;
    let df = df.with_param_values(param_values(&compiled.params)?).map_err(df_err)?;
    let mut stream = df.execute_stream().await.map_err(df_err)?;
    let schema = stream.schema();
    let columns = schema
        .fields()
        .iter()
        .map(|f| ResultColumn { name: f.name().clone(), data_type: type_name(f.data_type()) })
        .collect();
    let mut rows = Vec::new();
    let mut truncated = false;
    'batches: while let Some(batch) = stream.next().await {
        let batch = batch.map_err(df_err)?;
        for i in 0..batch.num_rows() {
            if rows.len() == max_rows {
                truncated = true;
                break 'batches;
            }
            rows.push(row_of(&batch, i)?);
        }
    }
    drop(stream);
    Ok(ResultSet { columns, rows, truncated })
}

pub(crate) fn row_of(batch: &RecordBatch, i: usize) -> Result<Vec<serde_json::Value>, EngineError> {
    batch
        .columns()
        .iter()
        .map(|a| ScalarValue::try_from_array(a, i).map(|v| json_of(&v)).map_err(df_err))
        .collect()
}

/// Parameters as DataFusion literals for `$1`, `$2`, …. Dates and timestamps
/// are bound typed (the SQL casts them as well, which is then a no-op).
fn param_values(params: &[Value]) -> Result<Vec<ScalarValue>, EngineError> {
    params
        .iter()
        .map(|v| {
            Ok(match v {
                Value::Bool(b) => ScalarValue::Boolean(Some(*b)),
                Value::Int(i) => ScalarValue::Int64(Some(*i)),
                Value::Float(f) => ScalarValue::Float64(Some(*f)),
                Value::Text(s) => ScalarValue::Utf8(Some(s.clone())),
                Value::Date(d) => {
                    let epoch = chrono::DateTime::UNIX_EPOCH.date_naive();
                    let days = i32::try_from((*d - epoch).num_days())
                        .map_err(|_| EngineError::Query(format!("date {d} is out of range")))?;
                    ScalarValue::Date32(Some(days))
                }
                Value::Timestamp(t) => ScalarValue::TimestampMicrosecond(Some(t.and_utc().timestamp_micros()), None),
            })
        })
        .collect()
}

/// The Arrow type of a model or catalog type name (`decimal(12,2)`,
/// `timestamp`, `varchar`, `bigint`…); `None` when DataFusion has none.
pub fn arrow_type(type_name: &str) -> Option<DataType> {
    let t = type_name.trim().to_ascii_lowercase();
    let base = t.split('(').next().unwrap_or("").trim();
    let args: Vec<u32> = t
        .split_once('(')
        .and_then(|(_, rest)| rest.split_once(')'))
        .map(|(inside, _)| inside.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_default();
    Some(match base {
        "boolean" | "bool" => DataType::Boolean,
        "tinyint" | "int1" => DataType::Int8,
        "smallint" | "int2" => DataType::Int16,
        "integer" | "int" | "int4" | "mediumint" | "serial" => DataType::Int32,
        "bigint" | "int8" | "bigserial" => DataType::Int64,
        "utinyint" => DataType::UInt8,
        "usmallint" => DataType::UInt16,
        "uinteger" => DataType::UInt32,
        "ubigint" => DataType::UInt64,
        "hugeint" | "uhugeint" => DataType::Decimal128(38, 0),
        "real" | "float" | "float4" => DataType::Float32,
        "double" | "double precision" | "float8" => DataType::Float64,
        "decimal" | "numeric" | "number" => match args.as_slice() {
            [p] => DataType::Decimal128(u8::try_from(*p).ok().filter(|p| (1..=38).contains(p))?, 0),
            [p, s] => DataType::Decimal128(
                u8::try_from(*p).ok().filter(|p| (1..=38).contains(p))?,
                i8::try_from(*s).ok().filter(|s| u32::try_from(*s).is_ok_and(|s| s <= *p))?,
            ),
            // Postgres' unconstrained numeric; DuckDB's bare DECIMAL is (18,3).
            _ => DataType::Decimal128(38, 10),
        },
        "varchar" | "text" | "string" | "char" | "bpchar" | "character varying" | "character" | "nvarchar"
        | "nchar" | "uuid" | "enum" | "json" => DataType::Utf8,
        "blob" | "bytea" | "binary" | "varbinary" => DataType::Binary,
        "date" => DataType::Date32,
        "time" | "time without time zone" => DataType::Time64(TimeUnit::Microsecond),
        "timestamp with time zone" | "timestamptz" => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
        "timestamp_s" => DataType::Timestamp(TimeUnit::Second, None),
        "timestamp_ms" => DataType::Timestamp(TimeUnit::Millisecond, None),
        "timestamp_ns" => DataType::Timestamp(TimeUnit::Nanosecond, None),
        "timestamp" | "timestamp without time zone" | "datetime" => DataType::Timestamp(TimeUnit::Microsecond, None),
        _ => return None,
    })
}

/// The type name a catalog records for an Arrow type: DuckDB's spelling, so
/// that a warehouse exported to Parquet introspects as it did in DuckDB.
pub(crate) fn type_name(t: &DataType) -> String {
    match t {
        DataType::Boolean => "BOOLEAN".into(),
        DataType::Int8 => "TINYINT".into(),
        DataType::Int16 => "SMALLINT".into(),
        DataType::Int32 => "INTEGER".into(),
        DataType::Int64 => "BIGINT".into(),
        DataType::UInt8 => "UTINYINT".into(),
        DataType::UInt16 => "USMALLINT".into(),
        DataType::UInt32 => "UINTEGER".into(),
        DataType::UInt64 => "UBIGINT".into(),
        DataType::Float16 | DataType::Float32 => "FLOAT".into(),
        DataType::Float64 => "DOUBLE".into(),
        DataType::Decimal32(p, s) | DataType::Decimal64(p, s) | DataType::Decimal128(p, s) | DataType::Decimal256(p, s) => {
            format!("DECIMAL({p},{s})")
        }
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "VARCHAR".into(),
        DataType::Binary | DataType::LargeBinary | DataType::BinaryView | DataType::FixedSizeBinary(_) => "BLOB".into(),
        DataType::Date32 | DataType::Date64 => "DATE".into(),
        DataType::Timestamp(_, None) => "TIMESTAMP".into(),
        DataType::Timestamp(_, Some(_)) => "TIMESTAMP WITH TIME ZONE".into(),
        DataType::Time32(_) | DataType::Time64(_) => "TIME".into(),
        DataType::Dictionary(_, values) => type_name(values),
        other => format!("{other}").to_ascii_uppercase(),
    }
}

/// A decimal's exact text (`1250`, scale 2 → `12.50`).
fn decimal_text(v: i128, scale: i8) -> String {
    if scale <= 0 {
        return format!("{v}{}", "0".repeat(usize::from(scale.unsigned_abs())));
    }
    let digits = v.unsigned_abs().to_string();
    let scale = usize::from(scale.unsigned_abs());
    let padded = format!("{digits:0>width$}", width = scale + 1);
    let (int, frac) = padded.split_at(padded.len() - scale);
    format!("{}{int}.{frac}", if v < 0 { "-" } else { "" })
}

/// JSON of one value, as the DuckDB engine writes it: decimals as numbers
/// (through their exact text), dates and timestamps as ISO text (UTC).
fn json_of(v: &ScalarValue) -> serde_json::Value {
    use serde_json::Value as J;
    let float = |f: f64| serde_json::Number::from_f64(f).map_or(J::Null, J::Number);
    let micros = |n: i64, per_second: i64| -> J {
        let micros = match per_second {
            1 => n.saturating_mul(1_000_000),
            1_000 => n.saturating_mul(1_000),
            1_000_000 => n,
            _ => n / 1_000,
        };
        chrono::DateTime::from_timestamp_micros(micros)
            .map_or(J::Null, |t| J::String(t.naive_utc().format("%Y-%m-%d %H:%M:%S%.f").to_string()))
    };
    let time = |nanos: i64| -> J {
        let secs = u32::try_from(nanos.div_euclid(1_000_000_000)).unwrap_or(u32::MAX);
        let frac = u32::try_from(nanos.rem_euclid(1_000_000_000)).unwrap_or(0);
        chrono::NaiveTime::from_num_seconds_from_midnight_opt(secs, frac)
            .map_or(J::Null, |t| J::String(t.format("%H:%M:%S%.f").to_string()))
    };
    if v.is_null() {
        return J::Null;
    }
    match v {
        ScalarValue::Boolean(Some(b)) => J::Bool(*b),
        ScalarValue::Int8(Some(i)) => (*i).into(),
        ScalarValue::Int16(Some(i)) => (*i).into(),
        ScalarValue::Int32(Some(i)) => (*i).into(),
        ScalarValue::Int64(Some(i)) => (*i).into(),
        ScalarValue::UInt8(Some(i)) => (*i).into(),
        ScalarValue::UInt16(Some(i)) => (*i).into(),
        ScalarValue::UInt32(Some(i)) => (*i).into(),
        ScalarValue::UInt64(Some(i)) => (*i).into(),
        ScalarValue::Float16(Some(f)) => float(f64::from(f32::from(*f))),
        ScalarValue::Float32(Some(f)) => float(f64::from(*f)),
        ScalarValue::Float64(Some(f)) => float(*f),
        ScalarValue::Decimal32(Some(d), _, s) => decimal_text(i128::from(*d), *s).parse::<f64>().map_or(J::Null, float),
        ScalarValue::Decimal64(Some(d), _, s) => decimal_text(i128::from(*d), *s).parse::<f64>().map_or(J::Null, float),
        ScalarValue::Decimal128(Some(d), _, s) => decimal_text(*d, *s).parse::<f64>().map_or(J::Null, float),
        ScalarValue::Decimal256(Some(_), _, _) => v.to_string().parse::<f64>().map_or(J::Null, float),
        ScalarValue::Utf8(Some(s)) | ScalarValue::Utf8View(Some(s)) | ScalarValue::LargeUtf8(Some(s)) => J::String(s.clone()),
        ScalarValue::Date32(Some(days)) => chrono::NaiveDate::from_ymd_opt(1970, 1, 1)
            .and_then(|d| d.checked_add_signed(chrono::Duration::days(i64::from(*days))))
            .map_or(J::Null, |d| J::String(d.format("%Y-%m-%d").to_string())),
        ScalarValue::Date64(Some(ms)) => chrono::DateTime::from_timestamp_millis(*ms)
            .map_or(J::Null, |t| J::String(t.date_naive().format("%Y-%m-%d").to_string())),
        ScalarValue::TimestampSecond(Some(n), _) => micros(*n, 1),
        ScalarValue::TimestampMillisecond(Some(n), _) => micros(*n, 1_000),
        ScalarValue::TimestampMicrosecond(Some(n), _) => micros(*n, 1_000_000),
        ScalarValue::TimestampNanosecond(Some(n), _) => micros(*n, 1_000_000_000),
        ScalarValue::Time32Second(Some(s)) => time(i64::from(*s) * 1_000_000_000),
        ScalarValue::Time32Millisecond(Some(ms)) => time(i64::from(*ms) * 1_000_000),
        ScalarValue::Time64Microsecond(Some(us)) => time(us.saturating_mul(1_000)),
        ScalarValue::Time64Nanosecond(Some(ns)) => time(*ns),
        ScalarValue::Dictionary(_, inner) => json_of(inner),
        other => J::String(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_print_exactly() {
        assert_eq!(decimal_text(1250, 2), "12.50");
        assert_eq!(decimal_text(-5, 2), "-0.05");
        assert_eq!(decimal_text(0, 3), "0.000");
        assert_eq!(decimal_text(7, 0), "7");
        assert_eq!(decimal_text(7, -2), "700");
    }

    #[test]
    fn maps_type_names_to_arrow() {
        assert_eq!(arrow_type("DECIMAL(12,2)"), Some(DataType::Decimal128(12, 2)));
        assert_eq!(arrow_type("integer"), Some(DataType::Int32));
        assert_eq!(arrow_type("bigint"), Some(DataType::Int64));
        assert_eq!(arrow_type("varchar"), Some(DataType::Utf8));
        assert_eq!(arrow_type("date"), Some(DataType::Date32));
        assert_eq!(arrow_type("timestamp"), Some(DataType::Timestamp(TimeUnit::Microsecond, None)));
        assert_eq!(arrow_type("double"), Some(DataType::Float64));
        assert_eq!(arrow_type("decimal(50,2)"), None, "beyond Decimal128");
        assert_eq!(arrow_type("decimal(4,6)"), None, "scale above precision");
        assert_eq!(arrow_type("geometry"), None);
        // A catalog written from Arrow maps back to the same Arrow type.
        for t in [DataType::Int32, DataType::Int64, DataType::Decimal128(12, 2), DataType::Date32, DataType::Boolean, DataType::Float64] {
            assert_eq!(arrow_type(&type_name(&t)), Some(t));
        }
    }

    #[test]
    fn values_render_like_duckdb() {
        assert_eq!(json_of(&ScalarValue::Decimal128(Some(1250), 12, 2)), serde_json::json!(12.5));
        assert_eq!(json_of(&ScalarValue::Date32(Some(19_723))), serde_json::json!("2024-01-01"));
        assert_eq!(json_of(&ScalarValue::TimestampMicrosecond(Some(1_704_067_200_000_000), None)), serde_json::json!("2024-01-01 00:00:00"));
        assert_eq!(json_of(&ScalarValue::TimestampNanosecond(Some(1_704_067_200_500_000_000), None)), serde_json::json!("2024-01-01 00:00:00.500"));
        assert_eq!(json_of(&ScalarValue::Int64(None)), serde_json::Value::Null);
        assert_eq!(json_of(&ScalarValue::Float64(Some(f64::NAN))), serde_json::Value::Null);
    }
}
