//! Export of a DuckDB database's tables (the demo warehouse) into Parquet or
//! CSV files (one per table, read back by DataFusion), a Postgres schema, a
//! MySQL/MariaDB database or a SQLite database through its ADBC driver: same tables, same
//! column types as near as the target has them, same rows, primary and
//! foreign keys, comments.
//!
//! Owns the type mapping between engines and the bulk loads: Postgres by
//! `COPY … FROM STDIN` (text format), MySQL by multi-row
//! INSERTs of quoted literals, Parquet and CSV from DuckDB's Arrow batches
//! through the `parquet` and `arrow-csv` crates, ADBC by the driver's bulk
//! ingest of DuckDB's Arrow batches.
//!
//! Architecture invariant: reads only from the DuckDB engine it is given and
//! writes only into the target schema it names (tables of the same names
//! there are replaced).

use std::path::Path;
use std::time::{Duration, Instant};

use super::{mysql, postgres, runtime, DuckDbEngine, Engine, EngineError};
use crate::catalog::TableInfo;

/// What an export wrote.
#[derive(Clone, Debug, PartialEq)]
pub struct ExportReport {
    /// `schema.table` (or the Parquet file) and its row count, in load order.
    pub tables: Vec<(String, u64)>,
    pub elapsed: Duration,
}

/// Where an export goes.
#[derive(Clone, Debug, PartialEq)]
pub enum Target {
    Parquet(std::path::PathBuf),
    Csv(std::path::PathBuf),
    Postgres { url: String, schema: String },
    MySql { url: String, database: String },
    /// `adbc:DRIVER?uri=…` of a SQLite driver (the only ADBC target so far:
    /// its tables go into the database's `main`).
    Adbc { url: String },
}

impl Target {
    /// Reads `parquet:DIR`, `csv:DIR`, `postgres://…`/`postgresql://…`, `mysql://…`/`mariadb://…`;
    /// `schema` names the Postgres schema or MySQL database (default `main`,
    /// the schema the demo's entity bindings use).
    pub fn parse(to: &str, schema: Option<&str>) -> Result<Target, String> {
        let schema = schema.unwrap_or("main").to_string();
        if let Some(dir) = to.strip_prefix("parquet:") {
            Ok(Target::Parquet(dir.into()))
        } else if let Some(dir) = to.strip_prefix("csv:") {
            Ok(Target::Csv(dir.into()))
        } else if postgres::is_postgres_url(to) {
            Ok(Target::Postgres { url: to.to_string(), schema })
        } else if mysql::is_mysql_url(to) {
            Ok(Target::MySql { url: to.to_string(), database: schema })
        } else if super::is_adbc_url(to) {
            Ok(Target::Adbc { url: to.to_string() })
        } else {
            Err(format!("cannot export to `{to}`: targets are parquet:DIR, csv:DIR, postgres://…, postgresql://…, mysql://…, mariadb://… and adbc:DRIVER?uri=… (a SQLite driver)"))
        }
    }
}

/// Copies every table of `source_schema` in `source` to `target`.
pub fn export(source: &DuckDbEngine, source_schema: &str, target: &Target) -> Result<ExportReport, EngineError> {
    let started = Instant::now();
    let catalog = source.introspect()?;
    let tables = load_order(catalog.tables.values().filter(|t| t.schema == source_schema && !t.columns.is_empty()).collect());
    if tables.is_empty() {
        return Err(EngineError::Query(format!("no tables in schema `{source_schema}` of the source")));
    }
    let counts = match target {
        Target::Parquet(dir) => to_files(source, &tables, dir, "parquet")?,
        Target::Csv(dir) => to_files(source, &tables, dir, "csv")?,
        Target::Postgres { url, schema } => to_postgres(source, &tables, url, schema)?,
        Target::MySql { url, database } => to_mysql(source, &tables, url, database)?,
        Target::Adbc { url } => to_adbc(source, &tables, url)?,
    };
    Ok(ExportReport { tables: counts, elapsed: started.elapsed() })
}

/// Referenced tables before the tables that reference them.
fn load_order(mut pending: Vec<&TableInfo>) -> Vec<&TableInfo> {
    pending.sort_by(|a, b| a.name.cmp(&b.name));
    let mut done: Vec<&TableInfo> = Vec::new();
    while !pending.is_empty() {
        let ready = pending.iter().position(|t| {
            t.foreign_keys.iter().all(|fk| fk.ref_table == t.name || done.iter().any(|d| d.name == fk.ref_table))
                || pending.iter().all(|p| t.foreign_keys.iter().all(|fk| fk.ref_table != p.name || p.name == t.name))
        });
        // A cycle: take the first; keys are added after all loads anyway.
        let i = ready.unwrap_or(0);
        done.push(pending.remove(i));
    }
    done
}

fn dq(s: &str) -> String {
    format!("\"{}\"", s.replace('"', "\"\""))
}

fn bq(s: &str) -> String {
    format!("`{}`", s.replace('`', "``"))
}

fn sq(s: &str) -> String {
    format!("'{}'", s.replace('\'', "''"))
}

/// DuckDB's SELECT of a table's columns as text, in column order.
fn text_select(t: &TableInfo, boolean_as_int: bool) -> String {
    let cols: Vec<String> = t
        .columns
        .iter()
        .map(|c| {
            if boolean_as_int && c.data_type == "boolean" {
                format!("CAST(CAST({} AS INTEGER) AS VARCHAR)", dq(&c.name))
            } else {
                format!("CAST({} AS VARCHAR)", dq(&c.name))
            }
        })
        .collect();
    let order = if t.primary_key.is_empty() { String::new() } else { format!(" ORDER BY {}", t.primary_key.iter().map(|c| dq(c)).collect::<Vec<_>>().join(", ")) };
    format!("SELECT {} FROM {}.{}{order}", cols.join(", "), dq(&t.schema), dq(&t.name))
}

/// One file per table, `DIR/<table>.<ext>` (`parquet` or `csv`).
fn to_files(source: &DuckDbEngine, tables: &[&TableInfo], dir: &Path, ext: &str) -> Result<Vec<(String, u64)>, EngineError> {
    std::fs::create_dir_all(dir).map_err(|e| EngineError::Query(format!("cannot create {}: {e}", dir.display())))?;
    let mut counts = Vec::new();
    for t in tables {
        let path = dir.join(format!("{}.{ext}", t.name));
        let select = format!("SELECT * FROM {}.{}", dq(&t.schema), dq(&t.name));
        let n = if ext == "csv" { source.copy_to_csv(&select, &path)? } else { source.copy_to_parquet(&select, &path)? };
        counts.push((path.display().to_string(), n));
    }
    Ok(counts)
}

/// A DuckDB column type as Postgres spells it.
pub fn postgres_type(duckdb_type: &str) -> String {
    let t = duckdb_type.to_ascii_lowercase();
    let base = t.split('(').next().unwrap_or("").trim();
    match base {
        "boolean" | "bool" => "boolean".into(),
        "tinyint" | "smallint" | "utinyint" => "smallint".into(),
        "integer" | "int" | "usmallint" => "integer".into(),
        "bigint" | "uinteger" => "bigint".into(),
        "hugeint" | "ubigint" | "uhugeint" => "numeric(38,0)".into(),
        "float" | "real" => "real".into(),
        "double" => "double precision".into(),
        "decimal" | "numeric" => t.replace("decimal", "numeric"),
        "date" => "date".into(),
        "time" => "time".into(),
        "timestamp with time zone" | "timestamptz" => "timestamptz".into(),
        _ if base.starts_with("timestamp") => "timestamp".into(),
        "uuid" => "uuid".into(),
        "blob" => "bytea".into(),
        _ => "text".into(),
    }
}

/// A DuckDB column type as MySQL/MariaDB spell it; text that keys use must
/// be a bounded VARCHAR.
pub fn mysql_type(duckdb_type: &str, is_key: bool) -> String {
    let t = duckdb_type.to_ascii_lowercase();
    let base = t.split('(').next().unwrap_or("").trim();
    match base {
        "boolean" | "bool" => "BOOLEAN".into(),
        "tinyint" => "TINYINT".into(),
        "smallint" => "SMALLINT".into(),
        "integer" | "int" => "INT".into(),
        "bigint" => "BIGINT".into(),
        "utinyint" => "TINYINT UNSIGNED".into(),
        "usmallint" => "SMALLINT UNSIGNED".into(),
        "uinteger" => "INT UNSIGNED".into(),
        "ubigint" => "BIGINT UNSIGNED".into(),
        "hugeint" | "uhugeint" => "DECIMAL(38,0)".into(),
        "float" | "real" => "FLOAT".into(),
        "double" => "DOUBLE".into(),
        "decimal" | "numeric" => t.to_ascii_uppercase().replace("NUMERIC", "DECIMAL"),
        "date" => "DATE".into(),
        "time" => "TIME(6)".into(),
        _ if base.starts_with("timestamp") => "DATETIME(6)".into(),
        "uuid" => "CHAR(36)".into(),
        "blob" => "LONGBLOB".into(),
        _ if is_key => "VARCHAR(255)".into(),
        _ => "TEXT".into(),
    }
}

fn to_postgres(source: &DuckDbEngine, tables: &[&TableInfo], url: &str, schema: &str) -> Result<Vec<(String, u64)>, EngineError> {
    let rt = runtime::new(url)?;
    let mut client = postgres::connect(&rt, url)?;
    let q = |e: tokio_postgres::Error| EngineError::Query(postgres::error_text(&e));
    let s = dq(schema);
    let mut ddl = format!("SET client_min_messages = warning; CREATE SCHEMA IF NOT EXISTS {s};\n");
    for t in tables.iter().rev() {
        ddl.push_str(&format!("DROP TABLE IF EXISTS {s}.{} CASCADE;\n", dq(&t.name)));
    }
    for t in tables {
        let mut cols: Vec<String> = t
            .columns
            .iter()
            .map(|c| format!("{} {}{}", dq(&c.name), postgres_type(&c.data_type), if c.nullable { "" } else { " NOT NULL" }))
            .collect();
        if !t.primary_key.is_empty() {
            cols.push(format!("PRIMARY KEY ({})", t.primary_key.iter().map(|c| dq(c)).collect::<Vec<_>>().join(", ")));
        }
        ddl.push_str(&format!("CREATE TABLE {s}.{} ({});\n", dq(&t.name), cols.join(", ")));
        if let Some(c) = &t.comment {
            ddl.push_str(&format!("COMMENT ON TABLE {s}.{} IS {};\n", dq(&t.name), sq(c)));
        }
        for c in t.columns.iter().filter(|c| c.comment.is_some()) {
            let text = c.comment.as_deref().unwrap_or_default();
            ddl.push_str(&format!("COMMENT ON COLUMN {s}.{}.{} IS {};\n", dq(&t.name), dq(&c.name), sq(text)));
        }
    }
    let mut counts = Vec::new();
    rt.block_on(async {
        let tx = client.transaction().await.map_err(q)?;
        tx.batch_execute(&ddl).await.map_err(q)?;
        for t in tables {
            let rows = source.strings(&text_select(t, false), t.columns.len())?;
            let cols = t.columns.iter().map(|c| dq(&c.name)).collect::<Vec<_>>().join(", ");
            let sink = tx.copy_in(&format!("COPY {s}.{} ({cols}) FROM STDIN", dq(&t.name))).await.map_err(q)?;
            futures_util::pin_mut!(sink);
            let mut buf = String::with_capacity(1 << 20);
            for row in &rows {
                for (i, v) in row.iter().enumerate() {
                    if i > 0 {
                        buf.push('\t');
                    }
                    match v {
                        None => buf.push_str("\\N"),
                        Some(text) => copy_escape(text, &mut buf),
                    }
                }
                buf.push('\n');
                if buf.len() >= 1 << 20 {
                    use futures_util::SinkExt;
                    sink.send(bytes::Bytes::from(std::mem::take(&mut buf))).await.map_err(q)?;
                }
            }
            if !buf.is_empty() {
                use futures_util::SinkExt;
                sink.send(bytes::Bytes::from(buf)).await.map_err(q)?;
            }
            let n = sink.finish().await.map_err(q)?;
            tracing::info!("{schema}.{}: {n} rows copied", t.name);
            counts.push((format!("{schema}.{}", t.name), n));
        }
        let mut keys = String::new();
        for t in tables {
            for (i, fk) in t.foreign_keys.iter().enumerate() {
                keys.push_str(&format!(
                    "ALTER TABLE {s}.{} ADD CONSTRAINT {} FOREIGN KEY ({}) REFERENCES {s}.{} ({});\n",
                    dq(&t.name),
                    dq(&format!("{}_fk{}", t.name, i + 1)),
                    fk.columns.iter().map(|c| dq(c)).collect::<Vec<_>>().join(", "),
                    dq(&fk.ref_table),
                    fk.ref_columns.iter().map(|c| dq(c)).collect::<Vec<_>>().join(", ")
                ));
            }
        }
        tx.batch_execute(&keys).await.map_err(q)?;
        tx.commit().await.map_err(q)?;
        // Row estimates for introspection (pg_class.reltuples).
        let analyze: Vec<String> = tables.iter().map(|t| format!("{s}.{}", dq(&t.name))).collect();
        client.batch_execute(&format!("ANALYZE {}", analyze.join(", "))).await.map_err(q)?;
        Ok::<_, EngineError>(())
    })?;
    Ok(counts)
}

/// Escapes a value for COPY's text format.
fn copy_escape(text: &str, buf: &mut String) {
    for ch in text.chars() {
        match ch {
            '\\' => buf.push_str("\\\\"),
            '\t' => buf.push_str("\\t"),
            '\n' => buf.push_str("\\n"),
            '\r' => buf.push_str("\\r"),
            c => buf.push(c),
        }
    }
}

fn to_mysql(source: &DuckDbEngine, tables: &[&TableInfo], url: &str, database: &str) -> Result<Vec<(String, u64)>, EngineError> {
    use mysql_async::prelude::Queryable;
    let rt = runtime::new(url)?;
    let opts = mysql::opts_of(url)?;
    let q = |e: mysql_async::Error| EngineError::Query(mysql::error_text(&e));
    let d = bq(database);
    let esc = |s: &str| format!("'{}'", s.replace('\'', "''"));
    rt.block_on(async {
        let mut conn = mysql::connect_conn(&opts).await.map_err(|e| EngineError::Connect { source_url: runtime::redact(url), message: mysql::error_text(&e) })?;
        conn.query_drop(
            "SET SESSION foreign_key_checks = 0, SESSION unique_checks = 0, SESSION time_zone = '+00:00', \
             SESSION sql_mode = CONCAT_WS(',', NULLIF(@@sql_mode, ''), 'NO_BACKSLASH_ESCAPES')",
        )
        .await
        .map_err(q)?;
        conn.query_drop(format!("CREATE DATABASE IF NOT EXISTS {d} CHARACTER SET utf8mb4")).await.map_err(q)?;
        let mut counts = Vec::new();
        for t in tables {
            conn.query_drop(format!("DROP TABLE IF EXISTS {d}.{}", bq(&t.name))).await.map_err(q)?;
            let keyed = |c: &str| t.primary_key.iter().any(|k| k == c) || t.foreign_keys.iter().any(|fk| fk.columns.iter().any(|k| k == c));
            let mut cols: Vec<String> = t
                .columns
                .iter()
                .map(|c| {
                    let comment = c.comment.as_deref().map(|x| format!(" COMMENT {}", esc(x))).unwrap_or_default();
                    format!("{} {}{}{comment}", bq(&c.name), mysql_type(&c.data_type, keyed(&c.name)), if c.nullable { "" } else { " NOT NULL" })
                })
                .collect();
            if !t.primary_key.is_empty() {
                cols.push(format!("PRIMARY KEY ({})", t.primary_key.iter().map(|c| bq(c)).collect::<Vec<_>>().join(", ")));
            }
            for fk in &t.foreign_keys {
                cols.push(format!(
                    "FOREIGN KEY ({}) REFERENCES {d}.{} ({})",
                    fk.columns.iter().map(|c| bq(c)).collect::<Vec<_>>().join(", "),
                    bq(&fk.ref_table),
                    fk.ref_columns.iter().map(|c| bq(c)).collect::<Vec<_>>().join(", ")
                ));
            }
            let comment = t.comment.as_deref().map(|x| format!(" COMMENT={}", esc(x))).unwrap_or_default();
            conn.query_drop(format!("CREATE TABLE {d}.{} ({}) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4{comment}", bq(&t.name), cols.join(", ")))
                .await
                .map_err(q)?;
            let read_at = Instant::now();
            let rows = source.strings(&text_select(t, true), t.columns.len())?;
            let load_at = Instant::now();
            let names = t.columns.iter().map(|c| bq(&c.name)).collect::<Vec<_>>().join(", ");
            // Multi-row INSERTs of about 1 MiB each, values as quoted literals
            // (the session has NO_BACKSLASH_ESCAPES, so doubling quotes is the
            // whole escaping). Prepared statements with tens of thousands of
            // placeholders load three times slower.
            let head = format!("INSERT INTO {d}.{} ({names}) VALUES ", bq(&t.name));
            conn.query_drop("START TRANSACTION").await.map_err(q)?;
            let mut stmt = String::with_capacity(1 << 21);
            for row in &rows {
                stmt.push_str(if stmt.is_empty() { head.as_str() } else { ", " });
                stmt.push('(');
                for (i, v) in row.iter().enumerate() {
                    if i > 0 {
                        stmt.push_str(", ");
                    }
                    match v {
                        None => stmt.push_str("NULL"),
                        Some(text) => {
                            stmt.push('\'');
                            stmt.push_str(&text.replace('\'', "''"));
                            stmt.push('\'');
                        }
                    }
                }
                stmt.push(')');
                if stmt.len() >= 1 << 20 {
                    conn.query_drop(std::mem::take(&mut stmt)).await.map_err(q)?;
                }
            }
            if !stmt.is_empty() {
                conn.query_drop(stmt).await.map_err(q)?;
            }
            conn.query_drop("COMMIT").await.map_err(q)?;
            tracing::info!("{database}.{}: {} rows read in {:.1?}, loaded in {:.1?}", t.name, rows.len(), load_at - read_at, load_at.elapsed());
            counts.push((format!("{database}.{}", t.name), rows.len() as u64));
        }
        let analyze: Vec<String> = tables.iter().map(|t| format!("{d}.{}", bq(&t.name))).collect();
        conn.query_drop(format!("ANALYZE TABLE {}", analyze.join(", "))).await.map_err(q)?;
        let _ = conn.disconnect().await;
        Ok(counts)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn maps_duckdb_types() {
        assert_eq!(postgres_type("decimal(12,2)"), "numeric(12,2)");
        assert_eq!(postgres_type("timestamp"), "timestamp");
        assert_eq!(postgres_type("varchar"), "text");
        assert_eq!(mysql_type("decimal(12,2)", false), "DECIMAL(12,2)");
        assert_eq!(mysql_type("varchar", true), "VARCHAR(255)");
        assert_eq!(mysql_type("varchar", false), "TEXT");
        assert_eq!(mysql_type("timestamp", false), "DATETIME(6)");
    }

    #[test]
    fn escapes_copy_text() {
        let mut b = String::new();
        copy_escape("a\tb\\c\nd", &mut b);
        assert_eq!(b, "a\\tb\\\\c\\nd");
    }
}

/// Into a SQLite database through its ADBC driver: tables declared with
/// DuckDB's type names (so they introspect as they were), keys included;
/// the rows as SQLite keeps them (dates and timestamps as ISO text, decimals
/// as REAL, booleans as 0/1), which is what the `sqlite` dialect reads.
fn to_adbc(source: &DuckDbEngine, tables: &[&TableInfo], url: &str) -> Result<Vec<(String, u64)>, EngineError> {
    let target = super::AdbcEngine::connect(url)?;
    if target.dialect().name != "sqlite" {
        return Err(EngineError::Query(format!("export through ADBC writes SQLite databases only, and `{}` is {}", target.describe(), target.dialect().name)));
    }
    let mut ddl: Vec<String> = tables.iter().rev().map(|t| format!("DROP TABLE IF EXISTS \"main\".{}", dq(&t.name))).collect();
    let mut loads = Vec::new();
    for t in tables {
        let mut cols: Vec<String> = t.columns.iter().map(|c| format!("{} {}{}", dq(&c.name), c.data_type.to_ascii_uppercase(), if c.nullable { "" } else { " NOT NULL" })).collect();
        if !t.primary_key.is_empty() {
            cols.push(format!("PRIMARY KEY ({})", t.primary_key.iter().map(|c| dq(c)).collect::<Vec<_>>().join(", ")));
        }
        for fk in &t.foreign_keys {
            let list = |cs: &[String]| cs.iter().map(|c| dq(c)).collect::<Vec<_>>().join(", ");
            cols.push(format!("FOREIGN KEY ({}) REFERENCES {} ({})", list(&fk.columns), dq(&fk.ref_table), list(&fk.ref_columns)));
        }
        ddl.push(format!("CREATE TABLE \"main\".{} ({})", dq(&t.name), cols.join(", ")));
        let select: Vec<String> = t
            .columns
            .iter()
            .map(|c| {
                let class = crate::model::TypeClass::of(&c.data_type);
                let cast = match class {
                    crate::model::TypeClass::Boolean => Some("INTEGER"),
                    crate::model::TypeClass::Decimal => Some("DOUBLE"),
                    crate::model::TypeClass::Date | crate::model::TypeClass::Timestamp | crate::model::TypeClass::Time => Some("VARCHAR"),
                    _ => None,
                };
                match cast {
                    Some(to) => format!("CAST({} AS {to}) AS {}", dq(&c.name), dq(&c.name)),
                    None => dq(&c.name),
                }
            })
            .collect();
        let (schema, batches) = source.arrow_batches(&format!("SELECT {} FROM {}.{}", select.join(", "), dq(&t.schema), dq(&t.name)))?;
        loads.push((t.name.clone(), schema, batches));
    }
    let names: Vec<String> = loads.iter().map(|(n, _, _)| format!("main.{n}")).collect();
    let counts = target.load(&ddl, loads)?;
    Ok(names.into_iter().zip(counts).collect())
}
