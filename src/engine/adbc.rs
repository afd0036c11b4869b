//! Any ADBC driver: `adbc:DRIVER?uri=URI&option=value…`. DRIVER is the path
//! of a driver's shared library (the `adbc-driver-*` Python wheels ship one:
//! Snowflake, BigQuery, Flight SQL, PostgreSQL, SQLite, …) or a name the ADBC
//! driver manager resolves (a driver manifest, or a library on the loader's
//! path). `uri`, `username` and `password` are the standard database
//! options; every other option goes to the driver as given (e.g.
//! `adbc.snowflake.sql.warehouse=WH`), except `dialect=NAME`, which is ours:
//! it overrides the dialect otherwise taken from the driver's vendor name.
//! Values are percent-decoded (write `&` inside a value as `%26`).
//!
//! How the limits hold:
//! - read-only: every statement passes the free-SQL guard (one query, no
//!   DDL/DML), parsed by the dialect profile's own parser, before the driver
//!   sees it; the connection is also asked to be read-only where the driver
//!   supports it. Connect as a principal with read grants in production;
//! - timeout and cancellation: the statement runs on a thread of its own;
//!   at the deadline (or on cancel) the connection's `cancel` (ADBC 1.1)
//!   stops it in the driver, and the call returns at once either way (a
//!   driver that cannot cancel finishes in the background, its connection
//!   is then dropped, never reused);
//! - row cap: Arrow batches are read until `max_rows + 1` rows, then the
//!   stream is released.
//!
//! Concurrency: each call takes a connection of its own from a small pool.
//!
//! Architecture invariant: no planning, no envelopes; failures are `EngineError`s.

use std::collections::HashSet;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use adbc_core::options::{AdbcVersion, InfoCode, IngestMode, ObjectDepth, OptionConnection, OptionDatabase, OptionStatement, OptionValue};
use adbc_core::{Connection, Database, Driver, Optionable, Statement, LOAD_FLAG_DEFAULT};
use adbc_driver_manager::{ManagedConnection, ManagedDatabase, ManagedDriver};
use datafusion::arrow::array::{
    Array, ArrayRef, BooleanArray, Date32Array, Float64Array, Int64Array, RecordBatch, RecordBatchIterator, StringArray, TimestampMicrosecondArray,
    UnionArray,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef, TimeUnit};
use serde_json::Value as Json;

use super::batches::Collector;
use super::pool::Pool;
use super::{Cancel, EngineError, Limits, ResultSet};
use crate::catalog::{Catalog, ColumnInfo, ForeignKey, TableInfo};
use crate::ir::Value;
use crate::sql::{CompiledSql, Dialect};

/// Idle connections kept between calls.
const MAX_IDLE: usize = 4;

/// How long a cancelled statement is given to stop before the call returns anyway.
const CANCEL_GRACE: Duration = Duration::from_secs(2);

/// Schemas that hold the engine's own catalog, not data.
const SYSTEM_SCHEMAS: [&str; 5] = ["information_schema", "pg_catalog", "pg_toast", "sys", "INFORMATION_SCHEMA"];

pub struct AdbcEngine {
    database: ManagedDatabase,
    connections: Pool<ManagedConnection>,
    /// The URL with its password and secret options hidden.
    source: String,
    vendor: String,
    dialect: &'static Dialect,
}

/// Whether a URL names an ADBC driver.
pub fn is_adbc_url(source: &str) -> bool {
    source.starts_with("adbc:")
}

/// What an `adbc:` URL says.
#[derive(Clone, Debug, PartialEq)]
pub struct AdbcUrl {
    pub driver: String,
    /// Database options in order (`uri` first where given).
    pub options: Vec<(String, String)>,
    /// `dialect=NAME`, when the URL names one.
    pub dialect: Option<String>,
}

fn decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let hex = bytes.get(i + 1..i + 3).and_then(|h| std::str::from_utf8(h).ok()).and_then(|h| u8::from_str_radix(h, 16).ok());
        match (b, hex) {
            (b'%', Some(v)) => {
                out.push(v);
                i += 3;
            }
            _ => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

fn secret(key: &str) -> bool {
    let k = key.to_ascii_lowercase();
    ["password", "token", "secret", "private_key", "credential"].iter().any(|s| k.contains(s))
}

impl AdbcUrl {
    pub fn parse(source: &str) -> Result<AdbcUrl, String> {
        let rest = source.strip_prefix("adbc:").ok_or("an ADBC source starts with `adbc:`")?;
        let (driver, query) = rest.split_once('?').unwrap_or((rest, ""));
        let driver = decode(driver);
        if driver.is_empty() {
            return Err("no driver: the form is adbc:DRIVER?uri=URI&option=value, DRIVER a driver library's path or a driver name".into());
        }
        let mut options = Vec::new();
        let mut dialect = None;
        for pair in query.split('&').filter(|p| !p.is_empty()) {
            let Some((k, v)) = pair.split_once('=') else {
                return Err(format!("option `{}` has no value: write name=value", crate::model::echo(&decode(pair))));
            };
            let (k, v) = (decode(k), decode(v));
            match k.as_str() {
                "dialect" => dialect = Some(v),
                _ => options.push((k, v)),
            }
        }
        Ok(AdbcUrl { driver, options, dialect })
    }

    /// The URL for messages and the catalog: secrets hidden, also inside `uri`.
    pub fn shown(&self) -> String {
        let mut parts: Vec<String> = self
            .options
            .iter()
            .map(|(k, v)| match k.as_str() {
                _ if secret(k) => format!("{k}=***"),
                "uri" => format!("uri={}", super::runtime::redact(v)),
                _ => format!("{k}={v}"),
            })
            .collect();
        if let Some(d) = &self.dialect {
            parts.push(format!("dialect={d}"));
        }
        format!("adbc:{}?{}", self.driver, parts.join("&"))
    }
}

/// The dialect a driver's vendor name stands for (`None`: unknown vendor).
pub fn dialect_of_vendor(vendor: &str) -> Option<&'static str> {
    let v = vendor.to_ascii_lowercase();
    Some(match v.as_str() {
        _ if v.contains("sqlite") => "sqlite",
        _ if v.contains("postgres") => "postgres",
        _ if v.contains("snowflake") => "snowflake",
        _ if v.contains("bigquery") => "bigquery",
        _ if v.contains("duckdb") => "duckdb",
        _ if v.contains("mysql") || v.contains("mariadb") => "mysql",
        _ if v.contains("sql server") || v.contains("mssql") => "mssql",
        _ if v.contains("trino") || v.contains("presto") => "trino",
        _ if v.contains("databricks") || v.contains("spark") => "databricks",
        _ if v.contains("datafusion") => "datafusion",
        _ => return None,
    })
}

fn adbc_error(e: adbc_core::error::Error) -> String {
    let mut s = e.message.clone();
    if let Some(state) = Some(e.sqlstate).filter(|s| s.iter().any(|c| *c != 0)) {
        let code: String = state.iter().take_while(|c| **c != 0).map(|c| *c as u8 as char).collect();
        s.push_str(&format!(" (SQLSTATE {code})"));
    }
    if s.is_empty() {
        s = format!("{:?}", e.status);
    }
    s
}

impl AdbcEngine {
    /// Loads the driver, opens the database and one connection (so a bad
    /// URL, a missing driver or a server that is down fails here), and
    /// reads the vendor name for the dialect.
    pub fn connect(source: &str) -> Result<Self, EngineError> {
        let url = AdbcUrl::parse(source).map_err(|message| EngineError::Connect { source_url: source.chars().take(120).collect(), message })?;
        let shown = url.shown();
        let err = |message: String| EngineError::Connect { source_url: shown.clone(), message };
        let mut driver = ManagedDriver::load_from_name(&url.driver, None, AdbcVersion::V110, LOAD_FLAG_DEFAULT, None)
            .or_else(|_| ManagedDriver::load_from_name(&url.driver, None, AdbcVersion::V100, LOAD_FLAG_DEFAULT, None))
            .map_err(|e| {
                err(format!(
                    "cannot load the ADBC driver `{}`: {}; give the path of the driver's shared library (e.g. the libadbc_driver_*.so inside the adbc-driver-* Python wheel) or a driver name the ADBC driver manager finds",
                    url.driver,
                    adbc_error(e)
                ))
            })?;
        let options = url.options.iter().map(|(k, v)| {
            let key = match k.as_str() {
                "uri" => OptionDatabase::Uri,
                "username" => OptionDatabase::Username,
                "password" => OptionDatabase::Password,
                other => OptionDatabase::Other(other.to_string()),
            };
            (key, OptionValue::String(v.clone()))
        });
        let database = driver.new_database_with_opts(options).map_err(|e| err(adbc_error(e)))?;
        let mut engine = AdbcEngine { database, connections: Pool::new(MAX_IDLE), source: shown.clone(), vendor: String::new(), dialect: Dialect::duckdb() };
        let connection = engine.connection()?;
        engine.vendor = vendor(&connection).unwrap_or_default();
        let name = match (&url.dialect, dialect_of_vendor(&engine.vendor)) {
            (Some(asked), _) => asked.clone(),
            (None, Some(known)) => known.to_string(),
            (None, None) => {
                return Err(err(format!(
                    "the driver names its database `{}`, which names no dialect here; add &dialect=NAME to the URL (one of {})",
                    engine.vendor,
                    Dialect::supported().join(", ")
                )))
            }
        };
        engine.dialect = Dialect::from_name(&name).map_err(err)?;
        engine.connections.give(connection);
        Ok(engine)
    }

    /// An idle connection, or a new one (asked to be read-only where the driver can).
    fn connection(&self) -> Result<ManagedConnection, EngineError> {
        if let Some(c) = self.connections.take() {
            return Ok(c);
        }
        let mut c = self.database.new_connection().map_err(|e| EngineError::Connect { source_url: self.source.clone(), message: adbc_error(e) })?;
        if let Err(e) = c.set_option(OptionConnection::ReadOnly, OptionValue::String("true".into())) {
            tracing::debug!("the ADBC driver keeps its connections writable ({}); the guard still admits reads only", adbc_error(e));
        }
        Ok(c)
    }

    /// Runs `work` on a thread of its own with a connection, stopping it
    /// through the connection's cancel at the deadline or on `cancel`.
    fn on_connection<T: Send + 'static>(
        &self,
        mut connection: ManagedConnection,
        timeout: Duration,
        cancel: &Cancel,
        work: impl FnOnce(&mut ManagedConnection) -> Result<T, EngineError> + Send + 'static,
    ) -> Result<T, EngineError> {
        let mut canceller = connection.clone();
        let (tx, rx) = mpsc::channel();
        std::thread::Builder::new()
            .name("schemabrain-adbc".into())
            .spawn(move || {
                let result = work(&mut connection);
                let _ = tx.send((result, connection));
            })
            .map_err(|e| EngineError::Query(format!("cannot start the statement's thread: {e}")))?;
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let stop = match rx.recv_timeout(left.min(Duration::from_millis(20))) {
                Ok((result, connection)) => {
                    if result.is_ok() {
                        self.connections.give(connection);
                    }
                    return result;
                }
                Err(mpsc::RecvTimeoutError::Disconnected) => return Err(EngineError::Query("the ADBC statement's thread ended without an answer".into())),
                Err(mpsc::RecvTimeoutError::Timeout) if cancel.is_cancelled() => EngineError::Cancelled,
                Err(mpsc::RecvTimeoutError::Timeout) if left.is_zero() => EngineError::Timeout(timeout),
                Err(mpsc::RecvTimeoutError::Timeout) => continue,
            };
            if let Err(e) = canceller.cancel() {
                tracing::warn!("the ADBC driver could not cancel the statement ({}); it finishes in the background", adbc_error(e));
            }
            // Wait a moment for the driver to stop; the connection is not reused.
            let _ = rx.recv_timeout(CANCEL_GRACE);
            return Err(stop);
        }
    }
}

impl AdbcEngine {
    /// The export's load: the DDL, then each table's rows by the driver's
    /// bulk ingest (append), on a writer connection of its own. Returns the
    /// rows loaded per table.
    pub(crate) fn load(&self, ddl: &[String], tables: Vec<(String, SchemaRef, Vec<RecordBatch>)>) -> Result<Vec<u64>, EngineError> {
        let q = |e: adbc_core::error::Error| EngineError::Query(adbc_error(e));
        let mut c = self.database.new_connection().map_err(|e| EngineError::Connect { source_url: self.source.clone(), message: adbc_error(e) })?;
        for sql in ddl {
            let mut s = c.new_statement().map_err(q)?;
            s.set_sql_query(sql).map_err(q)?;
            s.execute_update().map_err(q)?;
        }
        let mut counts = Vec::new();
        for (table, schema, batches) in tables {
            let rows: usize = batches.iter().map(RecordBatch::num_rows).sum();
            let mut s = c.new_statement().map_err(q)?;
            s.set_option(OptionStatement::TargetTable, OptionValue::String(table)).map_err(q)?;
            s.set_option(OptionStatement::IngestMode, IngestMode::Append.into()).map_err(q)?;
            s.bind_stream(Box::new(RecordBatchIterator::new(batches.into_iter().map(Ok), schema))).map_err(q)?;
            s.execute_update().map_err(q)?;
            counts.push(rows as u64);
        }
        Ok(counts)
    }
}

/// The driver's `VendorName` (and version) from `get_info`.
fn vendor(connection: &ManagedConnection) -> Option<String> {
    let codes = HashSet::from([InfoCode::VendorName, InfoCode::VendorVersion]);
    let reader = connection.get_info(Some(codes)).ok()?;
    let (mut name, mut version) = (None, None);
    for batch in reader.flatten() {
        let codes = batch.column(0).as_any().downcast_ref::<datafusion::arrow::array::UInt32Array>()?.clone();
        let values = batch.column(1).as_any().downcast_ref::<UnionArray>()?.clone();
        for i in 0..batch.num_rows() {
            let value = values.value(i);
            let Some(text) = value.as_any().downcast_ref::<StringArray>().filter(|a| a.len() == 1 && a.is_valid(0)).map(|a| a.value(0).to_string()) else {
                continue;
            };
            match codes.value(i) {
                0 => name = Some(text),
                1 => version = Some(text),
                _ => {}
            }
        }
    }
    Some(match (name?, version) {
        (n, Some(v)) => format!("{n} {v}"),
        (n, None) => n,
    })
}

/// The statement's parameters as one Arrow row. Where the dialect compares
/// dates as text (it writes no cast for them: SQLite), dates and timestamps
/// are bound as ISO text; elsewhere typed.
fn parameters(params: &[Value], dialect: &Dialect) -> Result<Option<RecordBatch>, EngineError> {
    if params.is_empty() {
        return Ok(None);
    }
    let as_text = dialect.date_param_types.is_none();
    let mut fields = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for (i, v) in params.iter().enumerate() {
        let (t, a): (DataType, ArrayRef) = match v {
            Value::Bool(b) => (DataType::Boolean, std::sync::Arc::new(BooleanArray::from(vec![*b]))),
            Value::Int(n) => (DataType::Int64, std::sync::Arc::new(Int64Array::from(vec![*n]))),
            Value::Float(f) => (DataType::Float64, std::sync::Arc::new(Float64Array::from(vec![*f]))),
            Value::Text(s) => (DataType::Utf8, std::sync::Arc::new(StringArray::from(vec![s.clone()]))),
            Value::Date(d) if as_text => (DataType::Utf8, std::sync::Arc::new(StringArray::from(vec![d.format("%Y-%m-%d").to_string()]))),
            Value::Timestamp(t) if as_text => (DataType::Utf8, std::sync::Arc::new(StringArray::from(vec![t.format("%Y-%m-%d %H:%M:%S").to_string()]))),
            Value::Date(d) => {
                let days = i32::try_from((*d - chrono::DateTime::UNIX_EPOCH.date_naive()).num_days())
                    .map_err(|_| EngineError::Query(format!("date {d} is out of range")))?;
                (DataType::Date32, std::sync::Arc::new(Date32Array::from(vec![days])))
            }
            Value::Timestamp(t) => {
                (DataType::Timestamp(TimeUnit::Microsecond, None), std::sync::Arc::new(TimestampMicrosecondArray::from(vec![t.and_utc().timestamp_micros()])))
            }
        };
        fields.push(Field::new(format!("p{i}"), t, false));
        columns.push(a);
    }
    RecordBatch::try_new(std::sync::Arc::new(Schema::new(fields)), columns).map(Some).map_err(|e| EngineError::Query(format!("cannot bind the parameters: {e}")))
}

/// Runs one query on `connection`, reading at most `max_rows` rows.
fn query(connection: &mut ManagedConnection, sql: &str, params: Option<RecordBatch>, max_rows: usize) -> Result<ResultSet, EngineError> {
    let q = |e: adbc_core::error::Error| EngineError::Query(adbc_error(e));
    let mut statement = connection.new_statement().map_err(q)?;
    statement.set_sql_query(sql).map_err(q)?;
    if let Some(batch) = params {
        statement.bind(batch).map_err(q)?;
    }
    let reader = statement.execute().map_err(q)?;
    let mut rows = Collector::new(max_rows);
    let mut first = true;
    for batch in reader {
        let batch = numbers_of_numeric_text(batch.map_err(|e| EngineError::Query(format!("the driver's result broke off: {e}")))?)?;
        if std::mem::take(&mut first) {
            rows.schema(batch.schema().as_ref());
        }
        if !rows.push(&batch)? {
            break;
        }
    }
    Ok(rows.finish(Vec::new))
}

/// Decimals some drivers send as text (the PostgreSQL driver's NUMERIC,
/// marked so in the field's metadata) as numbers, as every other engine
/// answers them.
fn numbers_of_numeric_text(batch: RecordBatch) -> Result<RecordBatch, EngineError> {
    let schema = batch.schema();
    let numeric = |f: &Field| {
        matches!(f.data_type(), DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View)
            && f.metadata().values().any(|v| matches!(v.to_ascii_lowercase().as_str(), "numeric" | "decimal"))
    };
    if !schema.fields().iter().any(|f| numeric(f)) {
        return Ok(batch);
    }
    let mut fields = Vec::new();
    let mut columns = Vec::new();
    for (f, c) in schema.fields().iter().zip(batch.columns()) {
        if numeric(f) {
            let cast = datafusion::arrow::compute::cast(c, &DataType::Float64).map_err(|e| EngineError::Query(format!("numeric column `{}`: {e}", f.name())))?;
            fields.push(Field::new(f.name(), DataType::Float64, f.is_nullable()));
            columns.push(cast);
        } else {
            fields.push(f.as_ref().clone());
            columns.push(c.clone());
        }
    }
    RecordBatch::try_new(std::sync::Arc::new(Schema::new(fields)), columns).map_err(|e| EngineError::Query(e.to_string()))
}

impl super::Engine for AdbcEngine {
    fn dialect(&self) -> &'static Dialect {
        self.dialect
    }

    fn describe(&self) -> String {
        format!("{} (ADBC)", if self.vendor.is_empty() { "unknown database" } else { &self.vendor })
    }

    fn introspect(&self) -> Result<Catalog, EngineError> {
        let connection = self.connection()?;
        let objects = self.on_connection(connection, Duration::from_secs(120), &Cancel::never(), |c| {
            let reader = c.get_objects(ObjectDepth::All, None, None, None, None, None).map_err(|e| EngineError::Query(adbc_error(e)))?;
            let mut writer = datafusion::arrow::json::ArrayWriter::new(Vec::new());
            for batch in reader {
                let batch = batch.map_err(|e| EngineError::Query(e.to_string()))?;
                writer.write(&batch).map_err(|e| EngineError::Query(e.to_string()))?;
            }
            writer.finish().map_err(|e| EngineError::Query(e.to_string()))?;
            serde_json::from_slice::<Json>(&writer.into_inner()).map_err(|e| EngineError::Query(e.to_string()))
        })?;
        Ok(catalog_of(&objects, &self.source, &self.describe()))
    }

    fn execute(&self, compiled: &CompiledSql, limits: Limits, cancel: &Cancel) -> Result<ResultSet, EngineError> {
        crate::provider::guard::check_parsed_by(&compiled.sql, self.dialect.parser, self.dialect.name)
            .map_err(|r| EngineError::Query(format!("refused before it reached the driver: {}", r.message)))?;
        let params = parameters(&compiled.params, self.dialect)?;
        let (sql, max_rows) = (compiled.sql.clone(), limits.max_rows);
        let connection = self.connection()?;
        self.on_connection(connection, limits.timeout, cancel, move |c| query(c, &sql, params, max_rows))
    }

    /// One transaction on a connection of its own (autocommit off), where
    /// the driver has transactions.
    fn write(&self, statements: &[String], timeout: Duration, cancel: &Cancel) -> Result<(), EngineError> {
        let mut connection = self.database.new_connection().map_err(|e| EngineError::Connect { source_url: self.source.clone(), message: adbc_error(e) })?;
        let transactional = connection.set_option(OptionConnection::AutoCommit, OptionValue::String("false".into())).is_ok();
        let statements = statements.to_vec();
        // Not given back to the pool: the pool's connections stay read-only.
        let result = self.on_connection(connection.clone(), timeout, cancel, move |c| {
            let q = |e: adbc_core::error::Error| EngineError::Query(adbc_error(e));
            for sql in &statements {
                let mut s = c.new_statement().map_err(q)?;
                s.set_sql_query(sql).map_err(q)?;
                s.execute_update().map_err(q)?;
            }
            if transactional {
                c.commit().map_err(q)?;
            }
            Ok(())
        });
        if result.is_err() && transactional {
            let _ = connection.rollback();
        }
        result
    }
}

/// The catalog in `get_objects`' answer (as JSON): a table's schema is its
/// database schema, or its catalog where the driver has no schemas (SQLite's
/// `main`); keys from its PRIMARY KEY and FOREIGN KEY constraints.
fn catalog_of(objects: &Json, source: &str, engine: &str) -> Catalog {
    let list = |v: &Json, key: &str| -> Vec<Json> { v.get(key).and_then(Json::as_array).cloned().unwrap_or_default() };
    let text = |v: &Json, key: &str| -> Option<String> { v.get(key).and_then(Json::as_str).filter(|s| !s.is_empty()).map(str::to_string) };
    let mut catalog = Catalog { source: source.to_string(), engine: engine.to_string(), tables: Default::default() };
    for cat in objects.as_array().into_iter().flatten() {
        let cat_name = text(cat, "catalog_name");
        for db in list(cat, "catalog_db_schemas") {
            let Some(schema) = text(&db, "db_schema_name").or_else(|| cat_name.clone()) else { continue };
            if SYSTEM_SCHEMAS.contains(&schema.as_str()) || schema.starts_with("pg_temp") || schema == "temp" {
                continue;
            }
            for t in list(&db, "db_schema_tables") {
                let Some(name) = text(&t, "table_name") else { continue };
                let mut columns: Vec<(i64, ColumnInfo)> = list(&t, "table_columns")
                    .iter()
                    .filter_map(|c| {
                        let info = ColumnInfo {
                            name: text(c, "column_name")?,
                            data_type: text(c, "xdbc_type_name").unwrap_or_default(),
                            nullable: c.get("xdbc_nullable").and_then(Json::as_i64) != Some(0) && text(c, "xdbc_is_nullable").as_deref() != Some("NO"),
                            comment: text(c, "remarks"),
                            stats: None,
                        };
                        Some((c.get("ordinal_position").and_then(Json::as_i64).unwrap_or(i64::MAX), info))
                    })
                    .collect();
                columns.sort_by_key(|(at, _)| *at);
                let mut table = TableInfo { schema: schema.clone(), name: name.clone(), columns: columns.into_iter().map(|(_, c)| c).collect(), ..Default::default() };
                for k in list(&t, "table_constraints") {
                    let cols: Vec<String> = list(&k, "constraint_column_names").iter().filter_map(|c| c.as_str().map(str::to_string)).collect();
                    match text(&k, "constraint_type").as_deref() {
                        Some("PRIMARY KEY") => table.primary_key = cols,
                        Some("FOREIGN KEY") => {
                            let usage = list(&k, "constraint_column_usage");
                            let Some(first) = usage.first() else { continue };
                            table.foreign_keys.push(ForeignKey {
                                columns: cols,
                                ref_schema: text(first, "fk_db_schema").or_else(|| text(first, "fk_catalog")).unwrap_or_else(|| schema.clone()),
                                ref_table: text(first, "fk_table").unwrap_or_default(),
                                ref_columns: usage.iter().filter_map(|u| text(u, "fk_column_name")).collect(),
                            });
                        }
                        _ => {}
                    }
                }
                catalog.tables.insert(format!("{schema}.{name}"), table);
            }
        }
    }
    catalog
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_driver_options_and_dialect_and_hides_secrets() {
        let url = AdbcUrl::parse("adbc:/opt/libadbc_driver_snowflake.so?uri=user:pw@acct/db&adbc.snowflake.sql.warehouse=WH&password=s%26cret&dialect=snowflake").unwrap();
        assert_eq!(url.driver, "/opt/libadbc_driver_snowflake.so");
        assert_eq!(url.dialect.as_deref(), Some("snowflake"));
        assert_eq!(url.options[1], ("adbc.snowflake.sql.warehouse".to_string(), "WH".to_string()));
        assert_eq!(url.options[2], ("password".to_string(), "s&cret".to_string()));
        let shown = url.shown();
        assert!(!shown.contains("s&cret") && shown.contains("password=***"), "{shown}");
        let sqlite = AdbcUrl::parse("adbc:adbc_driver_sqlite?uri=file:/tmp/x.db?mode=ro").unwrap();
        assert_eq!(sqlite.options, [("uri".to_string(), "file:/tmp/x.db?mode=ro".to_string())]);
        assert!(AdbcUrl::parse("adbc:?uri=x").is_err());
        assert!(AdbcUrl::parse("adbc:d?uri").is_err());
    }

    #[test]
    fn vendors_name_their_dialects() {
        assert_eq!(dialect_of_vendor("SQLite"), Some("sqlite"));
        assert_eq!(dialect_of_vendor("PostgreSQL"), Some("postgres"));
        assert_eq!(dialect_of_vendor("Snowflake"), Some("snowflake"));
        assert_eq!(dialect_of_vendor("Google BigQuery"), Some("bigquery"));
        assert_eq!(dialect_of_vendor("Dremio"), None);
        for (_, d) in [("", "sqlite"), ("", "postgres"), ("", "snowflake"), ("", "bigquery"), ("", "duckdb"), ("", "mysql"), ("", "mssql"), ("", "trino"), ("", "databricks")] {
            assert!(Dialect::from_name(d).is_ok(), "{d}");
        }
    }

    #[test]
    fn reads_the_catalog_from_get_objects() {
        let objects = serde_json::json!([{"catalog_name": "main", "catalog_db_schemas": [{"db_schema_name": null, "db_schema_tables": [
            {"table_name": "orders", "table_type": "table",
             "table_columns": [{"column_name": "customer_id", "ordinal_position": 2, "xdbc_type_name": "INTEGER", "xdbc_nullable": 1},
                               {"column_name": "id", "ordinal_position": 1, "xdbc_type_name": "INTEGER", "xdbc_nullable": 0}],
             "table_constraints": [{"constraint_type": "PRIMARY KEY", "constraint_column_names": ["id"]},
                                   {"constraint_type": "FOREIGN KEY", "constraint_column_names": ["customer_id"],
                                    "constraint_column_usage": [{"fk_catalog": "main", "fk_table": "customers", "fk_column_name": "id"}]}]}]}]}]);
        let c = catalog_of(&objects, "adbc:x", "SQLite (ADBC)");
        let t = &c.tables["main.orders"];
        assert_eq!(t.columns.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["id", "customer_id"]);
        assert!(!t.columns[0].nullable && t.columns[1].nullable);
        assert_eq!(t.primary_key, ["id"]);
        assert_eq!((t.foreign_keys[0].ref_schema.as_str(), t.foreign_keys[0].ref_table.as_str()), ("main", "customers"));
    }
}
