//! MySQL and MariaDB through `mysql_async`: read-only transactions, a
//! server-side statement timeout, a server-side row cap, typed results and
//! catalog introspection from `information_schema`.
//!
//! Why `mysql_async` (0.37): the maintained async client of the
//! `blackbeam/rust-mysql-simple` family (shared protocol code in
//! `mysql_common`), tokio-based like our Postgres client, with binary-protocol
//! prepared statements (`?` placeholders bound as typed values) and rows read
//! one at a time. It is built without TLS and with the pure-Rust zlib backend
//! (`minimal-rust`), so it adds no C dependency. `sqlx` would bring a macro
//! and pool stack we do not use.
//!
//! How the limits hold (the server flavour is read at connect time):
//! - read-only: each query runs in `START TRANSACTION READ ONLY`, rolled back
//!   afterwards; a write inside it fails with error 1792;
//! - timeout: MariaDB `SET SESSION max_statement_time = <seconds>`, MySQL
//!   `SET SESSION max_execution_time = <ms>` (the two servers name it
//!   differently); the server aborts the statement. A client-side deadline a
//!   little later sends `KILL QUERY` from a second connection;
//! - row cap: `SET SESSION sql_select_limit = max_rows + 1`, so the server
//!   stops sending after that many rows of the outer SELECT (a LIMIT in the
//!   statement itself still applies).
//!
//! Concurrency: each call takes a connection of its own from a small pool
//! (opened on demand, session set to UTC), so calls never queue behind each
//! other; a cancelled call is stopped with `KILL QUERY` from another
//! connection, as a statement past its deadline is.
//!
//! A READ ONLY transaction stops writes to tables, not `SET GLOBAL` or
//! `SELECT … INTO OUTFILE`: in production, connect as an account with SELECT
//! privileges only (the SQL we run is generated, but defence in depth).
//!
//! Booleans: MySQL has no boolean type; `BOOLEAN` is `tinyint(1)`. Result
//! columns of that shape come back as JSON booleans and the catalog reports
//! them as `boolean`.
//!
//! Architecture invariant: no planning, no envelopes; failures are `EngineError`s.

use std::time::Duration;

use mysql_async::consts::{ColumnFlags, ColumnType};
use mysql_async::prelude::Queryable;
use mysql_async::{Conn, Opts, Params};

use super::pool::Pool;
use super::{cancel, runtime, Cancel, EngineError, Limits, ResultColumn, ResultSet, Stop};
use crate::catalog::{Catalog, ColumnInfo, ForeignKey, TableInfo};
use crate::ir::Value;
use crate::sql::CompiledSql;

pub struct MySqlEngine {
    rt: runtime::Runtime,
    conns: Pool<Conn>,
    opts: Opts,
    mariadb: bool,
    version: String,
    source: String,
}

/// Whether a URL names a MySQL or MariaDB server.
pub fn is_mysql_url(source: &str) -> bool {
    source.starts_with("mysql://") || source.starts_with("mariadb://")
}

/// Parses `mysql://` or `mariadb://` URLs (the client knows only `mysql://`).
pub(crate) fn opts_of(source: &str) -> Result<Opts, EngineError> {
    let url = match source.strip_prefix("mariadb://") {
        Some(rest) => format!("mysql://{rest}"),
        None => source.to_string(),
    };
    let err = |message: String| EngineError::Connect { source_url: runtime::redact(source), message };
    let opts = Opts::from_url(&url).map_err(|e| err(e.to_string()))?;
    // Statements are prepared per query; no pool, no cache surprises across sessions.
    Ok(mysql_async::OptsBuilder::from_opts(opts).prefer_socket(false).into())
}

/// Idle connections kept between calls.
const MAX_IDLE: usize = 4;

/// A new connection with the session every query assumes (UTC).
async fn session_conn(opts: &Opts) -> Result<Conn, mysql_async::Error> {
    let mut conn = connect_conn(opts).await?;
    conn.query_drop("SET SESSION time_zone = '+00:00'").await?;
    Ok(conn)
}

pub(crate) async fn connect_conn(opts: &Opts) -> Result<Conn, mysql_async::Error> {
    match tokio::time::timeout(Duration::from_secs(5), Conn::new(opts.clone())).await {
        Ok(r) => r,
        Err(_) => Err(mysql_async::Error::Other("connection attempt timed out after 5s".into())),
    }
}

pub(crate) fn error_text(e: &mysql_async::Error) -> String {
    match e {
        mysql_async::Error::Server(s) => format!("ERROR {} ({}): {}", s.code, s.state, s.message),
        other => other.to_string(),
    }
}

/// MariaDB's ER_STATEMENT_TIMEOUT, MySQL's ER_QUERY_TIMEOUT, and "query
/// execution was interrupted" (what KILL QUERY causes).
fn is_timeout(e: &mysql_async::Error) -> bool {
    matches!(e, mysql_async::Error::Server(s) if matches!(s.code, 1969 | 3024 | 1317 | 1028))
}

impl MySqlEngine {
    pub fn connect(source: &str) -> Result<Self, EngineError> {
        let rt = runtime::new(source)?;
        let opts = opts_of(source)?;
        let err = |message: String| EngineError::Connect { source_url: runtime::redact(source), message };
        let (conn, version) = runtime::block_on(&rt, async {
                let mut conn = session_conn(&opts).await?;
                let version: Option<String> = conn.query_first("SELECT VERSION()").await?;
                Ok::<_, mysql_async::Error>((conn, version.unwrap_or_default()))
            })
            .map_err(|e| err(error_text(&e)))?;
        let mariadb = version.to_ascii_lowercase().contains("mariadb");
        let conns = Pool::new(MAX_IDLE);
        conns.give(conn);
        Ok(MySqlEngine { rt, conns, opts, mariadb, version, source: runtime::redact(source) })
    }

    /// A connection for one call: an idle one, or a new session.
    fn session(&self) -> Result<Conn, mysql_async::Error> {
        match self.conns.take() {
            Some(conn) => Ok(conn),
            None => runtime::block_on(&self.rt, session_conn(&self.opts)),
        }
    }

    /// Whether the server is MariaDB (as opposed to MySQL).
    pub fn is_mariadb(&self) -> bool {
        self.mariadb
    }

    fn strings(&self, sql: &'static str) -> Result<Vec<Vec<Option<String>>>, EngineError> {
        let query = |e: mysql_async::Error| EngineError::Query(error_text(&e));
        let mut conn = self.session().map_err(query)?;
        let rows = runtime::block_on(&self.rt, async {
                // No row cap left over from a query that ended early.
                conn.query_drop("SET SESSION sql_select_limit = DEFAULT").await?;
                conn.query::<mysql_async::Row, _>(sql).await
            })
            .map_err(query)?;
        self.conns.give(conn);
        Ok(rows
            .into_iter()
            .map(|r| {
                mysql_async::Row::unwrap(r)
                    .into_iter()
                    .map(|v| match v {
                        mysql_async::Value::NULL => None,
                        mysql_async::Value::Bytes(b) => Some(String::from_utf8_lossy(&b).into_owned()),
                        other => Some(other.as_sql(true).trim_matches('\'').to_string()),
                    })
                    .collect()
            })
            .collect())
    }
}

impl super::Engine for MySqlEngine {
    fn write(&self, statements: &[String], timeout: Duration, cancel: &Cancel) -> Result<(), EngineError> {
        let q = |e: mysql_async::Error| if is_timeout(&e) { EngineError::Timeout(timeout) } else { EngineError::Query(error_text(&e)) };
        // A connection of its own (the pool's run READ ONLY transactions).
        let mut conn = runtime::block_on(&self.rt, session_conn(&self.opts)).map_err(q)?;
        let id = conn.id();
        let (handle, opts) = (self.rt.handle().clone(), self.opts.clone());
        let watch = cancel::watch(timeout, cancel, move || {
            handle.spawn(async move {
                if let Ok(mut killer) = connect_conn(&opts).await {
                    let _ = killer.query_drop(format!("KILL QUERY {id}")).await;
                    let _ = killer.disconnect().await;
                }
            });
        });
        let result = runtime::block_on(&self.rt, async {
            conn.query_drop("START TRANSACTION").await?;
            for s in statements {
                conn.query_drop(s.as_str()).await?;
            }
            conn.query_drop("COMMIT").await?;
            conn.disconnect().await
        })
        .map_err(q);
        // A cancel that lands after COMMIT is too late: the write happened.
        match (watch.finish(), result) {
            (Stop::Cancelled, Err(_)) => Err(EngineError::Cancelled),
            (Stop::TimedOut, Err(_)) => Err(EngineError::Timeout(timeout)),
            (_, other) => other,
        }
    }

    fn dialect(&self) -> &'static crate::sql::Dialect {
        crate::sql::Dialect::mysql()
    }

    fn describe(&self) -> String {
        format!("{} {}", if self.mariadb { "mariadb" } else { "mysql" }, self.version)
    }

    fn introspect(&self) -> Result<Catalog, EngineError> {
        let mut catalog = Catalog { source: self.source.clone(), engine: self.describe(), tables: Default::default() };
        let relations = self.strings(
            "SELECT TABLE_SCHEMA, TABLE_NAME, CAST(TABLE_ROWS AS CHAR), TABLE_COMMENT, TABLE_TYPE \
             FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys') \
             ORDER BY 1, 2",
        )?;
        for r in relations {
            let r = super::cells::<5>(r);
            let (Some(schema), Some(name)) = (r[0].clone(), r[1].clone()) else { continue };
            let is_view = r[4].as_deref() == Some("VIEW");
            let row_count = if is_view { None } else { r[2].as_deref().and_then(|s| s.parse().ok()) };
            let comment = r[3].clone().filter(|c| !c.is_empty() && !is_view);
            catalog.tables.insert(format!("{schema}.{name}"), TableInfo { schema, name, row_count, comment, ..Default::default() });
        }
        let columns = self.strings(
            "SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_COMMENT \
             FROM information_schema.COLUMNS \
             WHERE TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys') \
             ORDER BY TABLE_SCHEMA, TABLE_NAME, ORDINAL_POSITION",
        )?;
        for c in columns {
            let c = super::cells::<6>(c);
            let key = format!("{}.{}", c[0].as_deref().unwrap_or(""), c[1].as_deref().unwrap_or(""));
            if let Some(t) = catalog.tables.get_mut(&key) {
                let raw = c[3].clone().unwrap_or_default().to_ascii_lowercase();
                let data_type = if raw == "tinyint(1)" { "boolean".to_string() } else { raw };
                t.columns.push(ColumnInfo {
                    name: c[2].clone().unwrap_or_default(),
                    data_type,
                    nullable: c[4].as_deref() != Some("NO"),
                    comment: c[5].clone().filter(|s| !s.is_empty()),
                    stats: None,
                });
            }
        }
        let keys = self.strings(
            "SELECT TABLE_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, COLUMN_NAME, \
             REFERENCED_TABLE_SCHEMA, REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME \
             FROM information_schema.KEY_COLUMN_USAGE \
             WHERE TABLE_SCHEMA NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys') \
             AND (CONSTRAINT_NAME = 'PRIMARY' OR REFERENCED_TABLE_NAME IS NOT NULL) \
             ORDER BY TABLE_SCHEMA, TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION",
        )?;
        let mut last_fk: Option<(String, String)> = None;
        for k in keys {
            let k = super::cells::<7>(k);
            let key = format!("{}.{}", k[0].as_deref().unwrap_or(""), k[1].as_deref().unwrap_or(""));
            let Some(t) = catalog.tables.get_mut(&key) else { continue };
            let constraint = k[2].clone().unwrap_or_default();
            let column = k[3].clone().unwrap_or_default();
            if constraint == "PRIMARY" {
                t.primary_key.push(column);
                continue;
            }
            let this = (key.clone(), constraint);
            if last_fk.as_ref() != Some(&this) || t.foreign_keys.is_empty() {
                t.foreign_keys.push(ForeignKey {
                    columns: Vec::new(),
                    ref_schema: k[4].clone().unwrap_or_default(),
                    ref_table: k[5].clone().unwrap_or_default(),
                    ref_columns: Vec::new(),
                });
                last_fk = Some(this);
            }
            if let Some(fk) = t.foreign_keys.last_mut() {
                fk.columns.push(column);
                fk.ref_columns.push(k[6].clone().unwrap_or_default());
            }
        }
        Ok(catalog)
    }

    fn execute(&self, compiled: &CompiledSql, limits: Limits, cancel: &Cancel) -> Result<ResultSet, EngineError> {
        let q = |e: mysql_async::Error| -> EngineError {
            if is_timeout(&e) {
                EngineError::Timeout(limits.timeout)
            } else {
                EngineError::Query(error_text(&e))
            }
        };
        let mut conn = self.session().map_err(q)?;
        let id = conn.id();
        // The server's own statement timeout is the real limit; the watch
        // kills the query from another connection when the caller cancels,
        // or as a backstop when the server lets the deadline pass.
        let backstop = limits.timeout + Duration::from_secs(2);
        let (handle, opts) = (self.rt.handle().clone(), self.opts.clone());
        let watch = cancel::watch(backstop, cancel, move || {
            handle.spawn(async move {
                let killed = async {
                    let mut killer = connect_conn(&opts).await?;
                    killer.query_drop(format!("KILL QUERY {id}")).await?;
                    killer.disconnect().await
                };
                if let Err(e) = killed.await {
                    tracing::warn!("KILL QUERY {id} failed: {e}");
                }
            });
        });
        let outcome = runtime::block_on_within(&self.rt, backstop + Duration::from_secs(3), run(&mut conn, compiled, limits, self.mariadb));
        let stop = watch.finish();
        match outcome {
            Some(Ok(rs)) => {
                self.conns.give(conn);
                // A killed SLEEP() returns normally; a cancelled call answers nothing.
                if stop == Stop::Cancelled {
                    return Err(EngineError::Cancelled);
                }
                Ok(rs)
            }
            Some(Err(e)) => {
                // A failed statement leaves the transaction open: end it, and
                // keep the connection only if that works.
                let ended = runtime::block_on(&self.rt, async {
                    conn.query_drop("ROLLBACK").await?;
                    conn.query_drop("SET SESSION sql_select_limit = DEFAULT").await
                });
                if ended.is_ok() {
                    self.conns.give(conn);
                }
                match stop {
                    Stop::Cancelled => Err(EngineError::Cancelled),
                    _ => Err(q(e)),
                }
            }
            // The statement did not stop: the connection's state is unknown, drop it.
            None if stop == Stop::Cancelled => Err(EngineError::Cancelled),
            None => Err(EngineError::Timeout(limits.timeout)),
        }
    }
}

async fn run(conn: &mut Conn, compiled: &CompiledSql, limits: Limits, mariadb: bool) -> Result<ResultSet, mysql_async::Error> {
    let ms = limits.timeout.as_millis().max(1);
    let timeout = if mariadb {
        format!("SET SESSION max_statement_time = {}.{:03}", ms / 1000, ms % 1000)
    } else {
        format!("SET SESSION max_execution_time = {ms}")
    };
    let cap = limits.max_rows.saturating_add(1).min(u32::MAX as usize);
    conn.query_drop(format!("{timeout}, SESSION sql_select_limit = {cap}")).await?;
    conn.query_drop("START TRANSACTION READ ONLY").await?;
    let params: Vec<mysql_async::Value> = compiled.params.iter().map(to_mysql).collect();
    let params = if params.is_empty() { Params::Empty } else { Params::Positional(params) };
    let mut result = conn.exec_iter(compiled.sql.as_str(), params).await?;
    let meta: Vec<mysql_async::Column> = result.columns().map(|c| c.to_vec()).unwrap_or_default();
    let columns: Vec<ResultColumn> =
        meta.iter().map(|c| ResultColumn { name: c.name_str().into_owned(), data_type: type_name(c) }).collect();
    let mut rows = Vec::new();
    let mut truncated = false;
    while let Some(row) = result.next().await? {
        if rows.len() == limits.max_rows {
            truncated = true;
            break;
        }
        let values = mysql_async::Row::unwrap(row);
        rows.push(values.into_iter().zip(&meta).map(|(v, c)| json_of(v, c)).collect::<Vec<_>>());
    }
    // Drains at most the one row past the cap (sql_select_limit stops the server there).
    result.drop_result().await?;
    conn.query_drop("ROLLBACK").await?;
    conn.query_drop("SET SESSION sql_select_limit = DEFAULT").await?;
    Ok(ResultSet { columns, rows, truncated })
}

/// Values bound by type; dates and timestamps as ISO text (the SQL casts them).
fn to_mysql(v: &Value) -> mysql_async::Value {
    use mysql_async::Value as M;
    match v {
        Value::Bool(b) => M::Int(i64::from(*b)),
        Value::Int(i) => M::Int(*i),
        Value::Float(f) => M::Double(*f),
        Value::Text(s) => M::Bytes(s.clone().into_bytes()),
        Value::Date(_) | Value::Timestamp(_) => M::Bytes(v.to_json().as_str().unwrap_or_default().as_bytes().to_vec()),
    }
}

fn is_boolean(c: &mysql_async::Column) -> bool {
    c.column_type() == ColumnType::MYSQL_TYPE_TINY && c.column_length() == 1
}

/// The server's name for a result column's type.
fn type_name(c: &mysql_async::Column) -> String {
    use ColumnType as T;
    let binary = c.character_set() == 63;
    let unsigned = if c.flags().contains(ColumnFlags::UNSIGNED_FLAG) { " unsigned" } else { "" };
    let name = match c.column_type() {
        T::MYSQL_TYPE_TINY if is_boolean(c) => "boolean".to_string(),
        T::MYSQL_TYPE_TINY => format!("tinyint{unsigned}"),
        T::MYSQL_TYPE_SHORT => format!("smallint{unsigned}"),
        T::MYSQL_TYPE_INT24 => format!("mediumint{unsigned}"),
        T::MYSQL_TYPE_LONG => format!("int{unsigned}"),
        T::MYSQL_TYPE_LONGLONG => format!("bigint{unsigned}"),
        T::MYSQL_TYPE_FLOAT => "float".into(),
        T::MYSQL_TYPE_DOUBLE => "double".into(),
        T::MYSQL_TYPE_DECIMAL | T::MYSQL_TYPE_NEWDECIMAL => {
            let scale = u32::from(c.decimals());
            // The display length counts the sign and the point.
            let signed = u32::from(!c.flags().contains(ColumnFlags::UNSIGNED_FLAG));
            let precision = c.column_length().saturating_sub(signed + u32::from(scale > 0));
            format!("decimal({precision},{scale})")
        }
        T::MYSQL_TYPE_DATE | T::MYSQL_TYPE_NEWDATE => "date".into(),
        T::MYSQL_TYPE_DATETIME | T::MYSQL_TYPE_DATETIME2 => "datetime".into(),
        T::MYSQL_TYPE_TIMESTAMP | T::MYSQL_TYPE_TIMESTAMP2 => "timestamp".into(),
        T::MYSQL_TYPE_TIME | T::MYSQL_TYPE_TIME2 => "time".into(),
        T::MYSQL_TYPE_YEAR => "year".into(),
        T::MYSQL_TYPE_JSON => "json".into(),
        T::MYSQL_TYPE_NULL => "null".into(),
        T::MYSQL_TYPE_BIT => "bit".into(),
        T::MYSQL_TYPE_VARCHAR | T::MYSQL_TYPE_VAR_STRING if binary => "varbinary".into(),
        T::MYSQL_TYPE_VARCHAR | T::MYSQL_TYPE_VAR_STRING => "varchar".into(),
        T::MYSQL_TYPE_STRING if binary => "binary".into(),
        T::MYSQL_TYPE_STRING => "char".into(),
        T::MYSQL_TYPE_TINY_BLOB | T::MYSQL_TYPE_BLOB | T::MYSQL_TYPE_MEDIUM_BLOB | T::MYSQL_TYPE_LONG_BLOB if binary => {
            "blob".into()
        }
        T::MYSQL_TYPE_TINY_BLOB | T::MYSQL_TYPE_BLOB | T::MYSQL_TYPE_MEDIUM_BLOB | T::MYSQL_TYPE_LONG_BLOB => "text".into(),
        other => format!("{other:?}").trim_start_matches("MYSQL_TYPE_").to_ascii_lowercase(),
    };
    name
}

fn json_of(v: mysql_async::Value, c: &mysql_async::Column) -> serde_json::Value {
    use mysql_async::Value as M;
    use serde_json::Value as J;
    use ColumnType as T;
    let float = |f: f64| serde_json::Number::from_f64(f).map_or(J::Null, J::Number);
    match v {
        M::NULL => J::Null,
        M::Int(i) if is_boolean(c) => J::Bool(i != 0),
        M::Int(i) => i.into(),
        M::UInt(u) => u.into(),
        M::Float(f) => float(f64::from(f)),
        M::Double(f) => float(f),
        M::Bytes(b) => {
            let text = String::from_utf8_lossy(&b).into_owned();
            match c.column_type() {
                // Decimals come back as JSON numbers, as the other engines do.
                T::MYSQL_TYPE_DECIMAL | T::MYSQL_TYPE_NEWDECIMAL => text.parse::<f64>().map_or(J::String(text), float),
                T::MYSQL_TYPE_TINY if is_boolean(c) => J::Bool(text != "0"),
                T::MYSQL_TYPE_TINY | T::MYSQL_TYPE_SHORT | T::MYSQL_TYPE_LONG | T::MYSQL_TYPE_INT24 | T::MYSQL_TYPE_LONGLONG => {
                    text.parse::<i64>().map(J::from).unwrap_or(J::String(text))
                }
                T::MYSQL_TYPE_JSON => serde_json::from_str(&text).unwrap_or(J::String(text)),
                _ => J::String(text),
            }
        }
        M::Date(y, mo, d, h, mi, s, us) => {
            let date = chrono::NaiveDate::from_ymd_opt(i32::from(y), u32::from(mo), u32::from(d));
            if matches!(c.column_type(), T::MYSQL_TYPE_DATE | T::MYSQL_TYPE_NEWDATE) {
                return date.map_or(J::Null, |d| J::String(d.format("%Y-%m-%d").to_string()));
            }
            date.and_then(|d| d.and_hms_micro_opt(u32::from(h), u32::from(mi), u32::from(s), us))
                .map_or(J::Null, |t| J::String(t.format("%Y-%m-%d %H:%M:%S%.f").to_string()))
        }
        M::Time(neg, days, h, mi, s, us) => {
            let hours = days * 24 + u32::from(h);
            let frac = if us > 0 { format!(".{us:06}") } else { String::new() };
            J::String(format!("{}{hours:02}:{mi:02}:{s:02}{frac}", if neg { "-" } else { "" }))
        }
    }
}
