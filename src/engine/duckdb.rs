//! DuckDB (bundled): read-only connections, catalog introspection, execution
//! with a row cap and an interrupting timeout.

use std::path::Path;

use duckdb::arrow::datatypes::DataType;
use duckdb::types::{TimeUnit, ValueRef};
use duckdb::{AccessMode, Config, Connection};

use super::{Cancel, EngineError, Limits, ResultColumn, ResultSet, Stop};
use crate::catalog::{Catalog, ColumnInfo, ForeignKey, TableInfo};
use crate::ir::Value;
use crate::sql::CompiledSql;

pub struct DuckDbEngine {
    /// The database's first connection; every call works on a clone of it
    /// (a new connection to the same database), so calls run side by side.
    /// The lock is held only to clone.
    base: std::sync::Mutex<Connection>,
    source: String,
}

impl DuckDbEngine {
    /// Opens an existing database file read-only; nothing a query does can
    /// change it.
    pub fn open_read_only(path: &Path, source: &str) -> Result<Self, EngineError> {
        Self::open_file(path, source, AccessMode::ReadOnly)
    }

    /// Opens an existing database file read-write, for a server started
    /// with `--allow-writes` (its reads still pass the free-SQL guard).
    pub fn open_read_write(path: &Path, source: &str) -> Result<Self, EngineError> {
        Self::open_file(path, source, AccessMode::ReadWrite)
    }

    fn open_file(path: &Path, source: &str, mode: AccessMode) -> Result<Self, EngineError> {
        let connect_err = |message: String| EngineError::Connect { source_url: source.to_string(), message };
        if !path.is_file() {
            return Err(connect_err(format!("no database file at {}", path.display())));
        }
        // No file, network or extension access either: free SQL (query_sql)
        // is guarded before it gets here, and this holds if a guard misses.
        let config = Config::default()
            .access_mode(mode)
            .and_then(|c| c.enable_external_access(false))
            .and_then(|c| c.enable_autoload_extension(false))
            .map_err(|e| connect_err(e.to_string()))?;
        let conn = Connection::open_with_flags(path, config).map_err(|e| connect_err(e.to_string()))?;
        Ok(DuckDbEngine { base: std::sync::Mutex::new(conn), source: source.to_string() })
    }

    /// Builds a new database file from a batch of SQL. The file appears only
    /// when the batch succeeded (it is built beside and renamed into place).
    pub fn create_database(path: &Path, batch: &str) -> Result<(), EngineError> {
        let source = format!("duckdb:{}", path.display());
        let err = |message: String| EngineError::Connect { source_url: source.clone(), message };
        let tmp = path.with_extension("duckdb.building");
        let _ = std::fs::remove_file(&tmp);
        let _ = std::fs::remove_file(tmp.with_extension("building.wal"));
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| err(e.to_string()))?;
        }
        {
            let conn = Connection::open(&tmp).map_err(|e| err(e.to_string()))?;
            conn.execute_batch(batch).map_err(|e| EngineError::Query(e.to_string()))?;
            conn.execute_batch("CHECKPOINT").map_err(|e| EngineError::Query(e.to_string()))?;
        }
        std::fs::rename(&tmp, path).map_err(|e| err(e.to_string()))
    }

    /// An in-memory database built by a batch of SQL (tests, small fixtures).
    pub fn in_memory(batch: &str) -> Result<Self, EngineError> {
        let source = "duckdb::memory:".to_string();
        let conn = Connection::open_in_memory()
            .map_err(|e| EngineError::Connect { source_url: source.clone(), message: e.to_string() })?;
        conn.execute_batch(batch).map_err(|e| EngineError::Query(e.to_string()))?;
        Ok(DuckDbEngine { base: std::sync::Mutex::new(conn), source })
    }

    /// An in-memory database holding empty tables shaped like the entities
    /// of `model` (their catalog or declared column types), for validating
    /// SQL without any data.
    pub fn empty_like(model: &crate::model::SemanticModel) -> Result<Self, EngineError> {
        let source = "duckdb::memory:".to_string();
        let err = |e: duckdb::Error| EngineError::Connect { source_url: source.clone(), message: e.to_string() };
        let conn = Connection::open_in_memory().map_err(err)?;
        let quote = |s: &str| format!("\"{}\"", s.replace('"', "\"\""));
        let mut ddl = String::new();
        let mut tables: Vec<&crate::model::Entity> = model.entities.values().collect();
        tables.sort_by(|a, b| a.table.cmp(&b.table));
        tables.dedup_by(|a, b| a.table == b.table);
        for e in tables {
            let cols: Vec<String> = e
                .columns
                .iter()
                .map(|c| format!("{} {}", quote(&c.name), c.data_type.as_deref().unwrap_or("varchar")))
                .collect();
            ddl.push_str(&format!(
                "CREATE SCHEMA IF NOT EXISTS {schema}; CREATE TABLE {schema}.{table} ({cols});\n",
                schema = quote(&e.table.schema),
                table = quote(&e.table.table),
                cols = cols.join(", ")
            ));
        }
        conn.execute_batch(&ddl).map_err(|e| EngineError::Query(format!("{e} in\n{ddl}")))?;
        Ok(DuckDbEngine { base: std::sync::Mutex::new(conn), source })
    }

    /// A new connection to the shared database, for one call.
    fn connection(&self) -> Result<Connection, EngineError> {
        let base = self.base.lock().unwrap_or_else(|p| p.into_inner());
        base.try_clone().map_err(|e| EngineError::Connect { source_url: self.source.clone(), message: e.to_string() })
    }

    /// Prepares `sql` (names and types are bound) without running it.
    pub fn validate(&self, sql: &str) -> Result<(), EngineError> {
        self.connection()?.prepare(sql).map(|_| ()).map_err(|e| EngineError::Query(e.to_string()))
    }

    /// Every row of `sql` as text (NULL as `None`), `n` columns each.
    pub(crate) fn strings(&self, sql: &str, n: usize) -> Result<Vec<Vec<Option<String>>>, EngineError> {
        let q = |e: duckdb::Error| EngineError::Query(e.to_string());
        let conn = self.connection()?;
        let mut stmt = conn.prepare(sql).map_err(q)?;
        let mut rows = stmt.query([]).map_err(q)?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(q)? {
            let mut v = Vec::with_capacity(n);
            for i in 0..n {
                v.push(row.get::<_, Option<String>>(i).map_err(q)?);
            }
            out.push(v);
        }
        Ok(out)
    }

    /// Writes the result of `select` to a Parquet file, returning its row
    /// count. DuckDB hands the rows over as Arrow batches and the `parquet`
    /// crate writes them: the bundled DuckDB has no parquet extension built
    /// in (it would try to download one), and the crate is the one DataFusion
    /// reads Parquet with.
    pub(crate) fn copy_to_parquet(&self, select: &str, path: &Path) -> Result<u64, EngineError> {
        let q = |e: duckdb::Error| EngineError::Query(e.to_string());
        let w = |e: parquet::errors::ParquetError| EngineError::Query(format!("{}: {e}", path.display()));
        let conn = self.connection()?;
        let mut stmt = conn.prepare(select).map_err(q)?;
        let batches = stmt.query_arrow([]).map_err(q)?;
        let schema = batches.get_schema();
        let tmp = path.with_extension("parquet.writing");
        let file = std::fs::File::create(&tmp).map_err(|e| EngineError::Query(format!("{}: {e}", tmp.display())))?;
        let props = parquet::file::properties::WriterProperties::builder()
            .set_compression(parquet::basic::Compression::SNAPPY)
            .build();
        let mut writer = parquet::arrow::ArrowWriter::try_new(file, schema, Some(props)).map_err(w)?;
        let mut rows = 0u64;
        for batch in batches {
            rows += batch.num_rows() as u64;
            writer.write(&batch).map_err(w)?;
        }
        writer.close().map_err(w)?;
        std::fs::rename(&tmp, path).map_err(|e| EngineError::Query(format!("{}: {e}", path.display())))?;
        Ok(rows)
    }

    /// The result of `select` as Arrow batches (the export into an ADBC
    /// driver's bulk ingest).
    pub(crate) fn arrow_batches(&self, select: &str) -> Result<(duckdb::arrow::datatypes::SchemaRef, Vec<duckdb::arrow::array::RecordBatch>), EngineError> {
        let q = |e: duckdb::Error| EngineError::Query(e.to_string());
        let conn = self.connection()?;
        let mut stmt = conn.prepare(select).map_err(q)?;
        let batches = stmt.query_arrow([]).map_err(q)?;
        let schema = batches.get_schema();
        Ok((schema, batches.collect()))
    }

    /// Writes the result of `select` to a CSV file with a header row,
    /// returning its row count. Arrow's CSV writer (the format DataFusion's
    /// reader infers types from) writes DuckDB's Arrow batches: decimals
    /// exactly, dates as `YYYY-MM-DD`, timestamps always with six fractional
    /// digits (so every value infers as a microsecond timestamp), NULL as an
    /// empty field. CSV itself cannot tell an empty string from NULL.
    pub(crate) fn copy_to_csv(&self, select: &str, path: &Path) -> Result<u64, EngineError> {
        let q = |e: duckdb::Error| EngineError::Query(e.to_string());
        let w = |e: duckdb::arrow::error::ArrowError| EngineError::Query(format!("{}: {e}", path.display()));
        let conn = self.connection()?;
        let mut stmt = conn.prepare(select).map_err(q)?;
        let batches = stmt.query_arrow([]).map_err(q)?;
        let tmp = path.with_extension("csv.writing");
        let file = std::fs::File::create(&tmp).map_err(|e| EngineError::Query(format!("{}: {e}", tmp.display())))?;
        let mut writer = datafusion::arrow::csv::WriterBuilder::new()
            .with_header(true)
            .with_timestamp_format("%Y-%m-%d %H:%M:%S%.6f".into())
            .build(std::io::BufWriter::new(file));
        let mut rows = 0u64;
        for batch in batches {
            rows += batch.num_rows() as u64;
            writer.write(&batch).map_err(w)?;
        }
        drop(writer);
        std::fs::rename(&tmp, path).map_err(|e| EngineError::Query(format!("{}: {e}", path.display())))?;
        Ok(rows)
    }
}

impl super::Engine for DuckDbEngine {
    fn describe(&self) -> String {
        let version = self
            .connection()
            .ok()
            .and_then(|c| c.query_row("SELECT version()", [], |r| r.get::<_, String>(0)).ok())
            .unwrap_or_else(|| "unknown".into());
        format!("duckdb {version}")
    }

    fn introspect(&self) -> Result<Catalog, EngineError> {
        let mut catalog = Catalog { source: self.source.clone(), engine: self.describe(), tables: Default::default() };
        let relations = self.strings(
            "SELECT schema_name, table_name, CAST(estimated_size AS VARCHAR), comment FROM duckdb_tables() \
             WHERE NOT internal AND database_name = current_database() \
             UNION ALL SELECT schema_name, view_name, NULL, comment FROM duckdb_views() \
             WHERE NOT internal AND database_name = current_database() ORDER BY 1, 2",
            4,
        )?;
        for r in relations {
            let r = super::cells::<4>(r);
            let (Some(schema), Some(name)) = (r[0].clone(), r[1].clone()) else { continue };
            let row_count = r[2].as_deref().and_then(|s| s.parse().ok());
            catalog.tables.insert(
                format!("{schema}.{name}"),
                TableInfo { schema, name, row_count, comment: r[3].clone(), ..Default::default() },
            );
        }
        let columns = self.strings(
            "SELECT schema_name, table_name, column_name, data_type, CAST(is_nullable AS VARCHAR), comment \
             FROM duckdb_columns() WHERE NOT internal AND database_name = current_database() \
             ORDER BY schema_name, table_name, column_index",
            6,
        )?;
        for c in columns {
            let c = super::cells::<6>(c);
            let key = format!("{}.{}", c[0].as_deref().unwrap_or(""), c[1].as_deref().unwrap_or(""));
            if let Some(t) = catalog.tables.get_mut(&key) {
                t.columns.push(ColumnInfo {
                    name: c[2].clone().unwrap_or_default(),
                    data_type: c[3].clone().unwrap_or_default().to_ascii_lowercase(),
                    nullable: c[4].as_deref() != Some("false"),
                    comment: c[5].clone(),
                    stats: None,
                });
            }
        }
        let constraints = self.strings(
            "SELECT schema_name, table_name, constraint_type, array_to_string(constraint_column_names, ','), \
             referenced_table, array_to_string(referenced_column_names, ',') FROM duckdb_constraints() \
             WHERE database_name = current_database() AND constraint_type IN ('PRIMARY KEY', 'FOREIGN KEY') \
             ORDER BY 1, 2, 3, 4",
            6,
        )?;
        let split = |s: &Option<String>| -> Vec<String> {
            s.as_deref().unwrap_or("").split(',').filter(|x| !x.is_empty()).map(str::to_string).collect()
        };
        for k in constraints {
            let k = super::cells::<6>(k);
            let schema = k[0].clone().unwrap_or_default();
            let key = format!("{schema}.{}", k[1].as_deref().unwrap_or(""));
            let Some(t) = catalog.tables.get_mut(&key) else { continue };
            match k[2].as_deref() {
                Some("PRIMARY KEY") => t.primary_key = split(&k[3]),
                Some("FOREIGN KEY") => t.foreign_keys.push(ForeignKey {
                    columns: split(&k[3]),
                    ref_schema: schema,
                    ref_table: k[4].clone().unwrap_or_default(),
                    ref_columns: split(&k[5]),
                }),
                _ => {}
            }
        }
        Ok(catalog)
    }

    fn write(&self, statements: &[String], timeout: std::time::Duration, cancel: &Cancel) -> Result<(), EngineError> {
        let conn = self.connection()?;
        let handle = conn.interrupt_handle();
        let watch = super::watch(timeout, cancel, move || handle.interrupt());
        let batch = format!("BEGIN TRANSACTION;\n{};\nCOMMIT;", statements.join(";\n"));
        let result = conn.execute_batch(&batch).map_err(|e| EngineError::Query(e.to_string()));
        if result.is_err() {
            let _ = conn.execute_batch("ROLLBACK");
        }
        // A cancel that lands after COMMIT is too late: the write happened,
        // and saying "cancelled" would invite a second one.
        match (watch.finish(), result) {
            (Stop::TimedOut, Err(_)) => Err(EngineError::Timeout(timeout)),
            (Stop::Cancelled, Err(_)) => Err(EngineError::Cancelled),
            (_, other) => other,
        }
    }

    fn execute(&self, compiled: &CompiledSql, limits: Limits, cancel: &Cancel) -> Result<ResultSet, EngineError> {
        // A connection of its own, and a watch that interrupts it when the
        // timeout passes or the caller cancels.
        let conn = self.connection()?;
        let handle = conn.interrupt_handle();
        let watch = super::watch(limits.timeout, cancel, move || handle.interrupt());
        let result = run(&conn, compiled, limits.max_rows);
        match (watch.finish(), result) {
            (Stop::TimedOut, Err(_)) => Err(EngineError::Timeout(limits.timeout)),
            (Stop::Cancelled, _) => Err(EngineError::Cancelled),
            (_, other) => other,
        }
    }
}

fn run(conn: &Connection, compiled: &CompiledSql, max_rows: usize) -> Result<ResultSet, EngineError> {
    let q = |e: duckdb::Error| EngineError::Query(e.to_string());
    let mut stmt = conn.prepare(&compiled.sql).map_err(q)?;
    let params: Vec<Box<dyn duckdb::ToSql>> = compiled.params.iter().map(to_sql).collect();
    let mut out_rows = Vec::new();
    let mut truncated = false;
    {
        let mut rows = stmt.query(duckdb::params_from_iter(params.iter())).map_err(q)?;
        while let Some(row) = rows.next().map_err(q)? {
            if out_rows.len() == max_rows {
                truncated = true;
                break;
            }
            let n = row.as_ref().column_count();
            let mut v = Vec::with_capacity(n);
            for i in 0..n {
                v.push(json_of(row.get_ref(i).map_err(q)?));
            }
            out_rows.push(v);
        }
    }
    let columns = (0..stmt.column_count())
        .map(|i| ResultColumn {
            name: stmt.column_name(i).map(|s| s.to_string()).unwrap_or_default(),
            data_type: type_name(&stmt.column_type(i)),
        })
        .collect();
    Ok(ResultSet { columns, rows: out_rows, truncated })
}

fn to_sql(v: &Value) -> Box<dyn duckdb::ToSql> {
    match v {
        Value::Bool(b) => Box::new(*b),
        Value::Int(i) => Box::new(*i),
        Value::Float(f) => Box::new(*f),
        Value::Text(s) => Box::new(s.clone()),
        // Dates and timestamps are bound as ISO text; the SQL casts them.
        Value::Date(_) | Value::Timestamp(_) => Box::new(v.to_json().as_str().unwrap_or_default().to_string()),
    }
}

/// DuckDB's own name for a result type, from the Arrow type it reports.
fn type_name(t: &DataType) -> String {
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
        DataType::Float32 => "FLOAT".into(),
        DataType::Float64 => "DOUBLE".into(),
        DataType::Decimal128(p, s) | DataType::Decimal256(p, s) => format!("DECIMAL({p},{s})"),
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => "VARCHAR".into(),
        DataType::Date32 | DataType::Date64 => "DATE".into(),
        DataType::Timestamp(_, None) => "TIMESTAMP".into(),
        DataType::Timestamp(_, Some(_)) => "TIMESTAMP WITH TIME ZONE".into(),
        DataType::Time32(_) | DataType::Time64(_) => "TIME".into(),
        other => format!("{other}").to_ascii_uppercase(),
    }
}

fn json_of(v: ValueRef<'_>) -> serde_json::Value {
    use serde_json::Value as J;
    let float = |f: f64| serde_json::Number::from_f64(f).map_or(J::Null, J::Number);
    match v {
        ValueRef::Null => J::Null,
        ValueRef::Boolean(b) => J::Bool(b),
        ValueRef::TinyInt(i) => i.into(),
        ValueRef::SmallInt(i) => i.into(),
        ValueRef::Int(i) => i.into(),
        ValueRef::BigInt(i) => i.into(),
        ValueRef::UTinyInt(i) => i.into(),
        ValueRef::USmallInt(i) => i.into(),
        ValueRef::UInt(i) => i.into(),
        ValueRef::UBigInt(i) => i.into(),
        ValueRef::HugeInt(i) => i64::try_from(i).map(J::from).unwrap_or_else(|_| J::String(i.to_string())),
        ValueRef::UHugeInt(i) => u64::try_from(i).map(J::from).unwrap_or_else(|_| J::String(i.to_string())),
        ValueRef::Float(f) => float(f64::from(f)),
        ValueRef::Double(f) => float(f),
        ValueRef::Decimal(d) => d.to_string().parse::<f64>().map_or(J::Null, float),
        ValueRef::Text(b) => J::String(String::from_utf8_lossy(b).into_owned()),
        ValueRef::Date32(days) => chrono::NaiveDate::from_ymd_opt(1970, 1, 1)
            .and_then(|d| d.checked_add_signed(chrono::Duration::days(i64::from(days))))
            .map_or(J::Null, |d| J::String(d.format("%Y-%m-%d").to_string())),
        ValueRef::Timestamp(unit, n) => {
            let micros = match unit {
                TimeUnit::Second => n.saturating_mul(1_000_000),
                TimeUnit::Millisecond => n.saturating_mul(1_000),
                TimeUnit::Microsecond => n,
                TimeUnit::Nanosecond => n / 1_000,
            };
            chrono::DateTime::from_timestamp_micros(micros)
                .map_or(J::Null, |t| J::String(t.naive_utc().format("%Y-%m-%d %H:%M:%S%.f").to_string()))
        }
        ValueRef::Time64(unit, n) => {
            let nanos = match unit {
                TimeUnit::Second => n.saturating_mul(1_000_000_000),
                TimeUnit::Millisecond => n.saturating_mul(1_000_000),
                TimeUnit::Microsecond => n.saturating_mul(1_000),
                TimeUnit::Nanosecond => n,
            };
            let secs = u32::try_from(nanos.div_euclid(1_000_000_000)).unwrap_or(u32::MAX);
            let frac = u32::try_from(nanos.rem_euclid(1_000_000_000)).unwrap_or(0);
            chrono::NaiveTime::from_num_seconds_from_midnight_opt(secs, frac)
                .map_or(J::Null, |t| J::String(t.format("%H:%M:%S%.f").to_string()))
        }
        other => J::String(format!("{other:?}")),
    }
}
