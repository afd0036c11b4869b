//! PostgreSQL through `tokio-postgres`: read-only transactions, a server-side
//! statement timeout, a row cap enforced by fetching from a portal, typed
//! results, and catalog introspection from `pg_catalog`.
//!
//! Why `tokio-postgres` (0.7): it is the maintained async client of the
//! rust-postgres project (the same protocol code as the blocking `postgres`
//! crate), speaks the extended protocol directly (prepared statements with
//! server-inferred parameter types, portals that fetch N rows at a time,
//! cancel tokens), and needs no TLS or ORM layers we do not use. `sqlx` would
//! bring a macro and pool stack for nothing; the blocking `postgres` crate
//! hides the portal and cancel APIs behind its own runtime.
//!
//! How the limits hold:
//! - read-only: the session sets `default_transaction_read_only = on` and
//!   every query runs in `BEGIN READ ONLY`, rolled back afterwards;
//! - timeout: `SET LOCAL statement_timeout` inside that transaction (the
//!   server cancels the query, SQLSTATE 57014); a client-side deadline a
//!   little later sends a cancel request if the server does not answer;
//! - row cap: the statement is bound to a portal and at most `max_rows + 1`
//!   rows are fetched, so the server never sends more.
//!
//! Concurrency: each call takes a connection of its own from a small pool
//! (opened on demand, set up read-only), so calls never queue behind each
//! other; a cancelled call sends the server a cancel request for its query.
//!
//! A read-only transaction stops writes to tables and sequences, not every
//! side effect a superuser's function call can have: in production, connect
//! as a role with SELECT privileges only.
//!
//! Architecture invariant: no planning, no envelopes; failures are `EngineError`s.

use std::time::Duration;

use tokio_postgres::types::{FromSql, IsNull, Kind, ToSql, Type};
use tokio_postgres::{Client, Config, NoTls};

use super::pool::Pool;
use super::{cancel, runtime, Cancel, EngineError, Limits, ResultColumn, ResultSet, Stop};
use crate::catalog::{Catalog, ColumnInfo, ForeignKey, TableInfo};
use crate::ir::Value;
use crate::sql::CompiledSql;

pub struct PostgresEngine {
    rt: runtime::Runtime,
    clients: Pool<Client>,
    /// The URL as given, for new connections.
    url: String,
    /// The URL with its password hidden, for messages and the catalog.
    source: String,
}

/// Idle connections kept between calls.
const MAX_IDLE: usize = 4;

/// Whether a URL names a Postgres server.
pub fn is_postgres_url(source: &str) -> bool {
    source.starts_with("postgres://") || source.starts_with("postgresql://")
}

/// Connects (plain TCP or Unix socket, no TLS) and spawns the connection task
/// on `rt`. Read-write: callers decide what the session may do.
pub(crate) fn connect(rt: &tokio::runtime::Runtime, source: &str) -> Result<Client, EngineError> {
    let err = |message: String| EngineError::Connect { source_url: runtime::redact(source), message };
    let mut config: Config = source.parse().map_err(|e: tokio_postgres::Error| err(e.to_string()))?;
    if config.get_connect_timeout().is_none() {
        config.connect_timeout(Duration::from_secs(5));
    }
    if config.get_application_name().is_none() {
        config.application_name("schemabrain");
    }
    let (client, connection) = runtime::block_on(rt, config.connect(NoTls)).map_err(|e| err(error_text(&e)))?;
    rt.spawn(async move {
        if let Err(e) = connection.await {
            tracing::debug!("postgres connection closed: {e}");
        }
    });
    Ok(client)
}

/// The server's message (with its detail) rather than tokio-postgres' "db error".
pub(crate) fn error_text(e: &tokio_postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => {
            let mut s = format!("{}: {}", db.severity(), db.message());
            if let Some(d) = db.detail() {
                s.push_str(&format!(" ({d})"));
            }
            s
        }
        None => {
            let mut s = e.to_string();
            let mut src = std::error::Error::source(e);
            while let Some(inner) = src {
                s.push_str(&format!(": {inner}"));
                src = inner.source();
            }
            s
        }
    }
}

impl PostgresEngine {
    /// Connects to `source` (`postgres://user@host:port/db`); every
    /// transaction of the session is read-only.
    pub fn connect(source: &str) -> Result<Self, EngineError> {
        let rt = runtime::new(source)?;
        let engine = PostgresEngine { rt, clients: Pool::new(MAX_IDLE), url: source.to_string(), source: runtime::redact(source) };
        // Connect once now, so a bad URL or a server that is down fails here.
        let client = engine.session()?;
        engine.clients.give(client);
        Ok(engine)
    }

    /// A connection for one call: an idle one, or a new read-only session.
    fn session(&self) -> Result<Client, EngineError> {
        if let Some(client) = self.clients.take().filter(|c| !c.is_closed()) {
            return Ok(client);
        }
        let client = connect(&self.rt, &self.url)?;
        runtime::block_on(&self.rt, client.batch_execute("SET default_transaction_read_only = on; SET TIME ZONE 'UTC'"))
            .map_err(|e| EngineError::Connect { source_url: self.source.clone(), message: error_text(&e) })?;
        Ok(client)
    }

    /// Rows of a catalog query as text (simple protocol).
    fn strings(&self, sql: &str) -> Result<Vec<Vec<Option<String>>>, EngineError> {
        let client = self.session()?;
        let messages = runtime::block_on(&self.rt, client.simple_query(sql)).map_err(|e| EngineError::Query(error_text(&e)))?;
        self.clients.give(client);
        Ok(messages
            .into_iter()
            .filter_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(r) => {
                    Some((0..r.len()).map(|i| r.get(i).map(str::to_string)).collect())
                }
                _ => None,
            })
            .collect())
    }
}

impl super::Engine for PostgresEngine {
    fn write(&self, statements: &[String], timeout: Duration, cancel: &Cancel) -> Result<(), EngineError> {
        // A writer connection of its own: the pool's sessions stay read-only.
        let client = connect(&self.rt, &self.url)?;
        let token = client.cancel_token();
        let handle = self.rt.handle().clone();
        let watch = super::watch(timeout + Duration::from_secs(2), cancel, move || {
            handle.spawn(async move {
                let _ = token.cancel_query(NoTls).await;
            });
        });
        let ms = timeout.as_millis().clamp(1, i32::MAX as u128);
        let batch = format!("BEGIN; SET LOCAL statement_timeout = {ms}; SET LOCAL TIME ZONE 'UTC';\n{};\nCOMMIT;", statements.join(";\n"));
        let result = runtime::block_on(&self.rt, client.batch_execute(&batch)).map_err(|e| EngineError::Query(error_text(&e)));
        // A cancel that lands after COMMIT is too late: the write happened.
        match (watch.finish(), result) {
            (Stop::Cancelled, Err(_)) => Err(EngineError::Cancelled),
            (_, Err(EngineError::Query(m))) if m.contains("statement timeout") => Err(EngineError::Timeout(timeout)),
            (_, other) => other,
        }
    }

    fn dialect(&self) -> &'static crate::sql::Dialect {
        crate::sql::Dialect::postgres()
    }

    fn describe(&self) -> String {
        let version = self
            .strings("SELECT current_setting('server_version')")
            .ok()
            .and_then(|r| r.into_iter().next())
            .and_then(|r| r.into_iter().next().flatten())
            .unwrap_or_else(|| "unknown".into());
        format!("postgres {version}")
    }

    fn introspect(&self) -> Result<Catalog, EngineError> {
        let mut catalog = Catalog { source: self.source.clone(), engine: self.describe(), tables: Default::default() };
        const USER_SCHEMAS: &str = "n.nspname NOT IN ('pg_catalog', 'information_schema') \
             AND n.nspname NOT LIKE 'pg\\_toast%' AND n.nspname NOT LIKE 'pg\\_temp\\_%' \
             AND has_schema_privilege(n.oid, 'USAGE')";
        let relations = self.strings(&format!(
            "SELECT n.nspname, c.relname, \
             CASE WHEN c.relkind IN ('r', 'm', 'p') AND c.reltuples >= 0 THEN c.reltuples::bigint::text END, \
             obj_description(c.oid, 'pg_class') \
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f') AND {USER_SCHEMAS} ORDER BY 1, 2"
        ))?;
        for r in relations {
            let r = super::cells::<4>(r);
            let (Some(schema), Some(name)) = (r[0].clone(), r[1].clone()) else { continue };
            let row_count = r[2].as_deref().and_then(|s| s.parse().ok());
            catalog.tables.insert(
                format!("{schema}.{name}"),
                TableInfo { schema, name, row_count, comment: r[3].clone(), ..Default::default() },
            );
        }
        let columns = self.strings(&format!(
            "SELECT n.nspname, c.relname, a.attname, format_type(a.atttypid, a.atttypmod), \
             (NOT a.attnotnull)::text, col_description(c.oid, a.attnum) \
             FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE a.attnum > 0 AND NOT a.attisdropped AND c.relkind IN ('r', 'v', 'm', 'p', 'f') AND {USER_SCHEMAS} \
             ORDER BY n.nspname, c.relname, a.attnum"
        ))?;
        for c in columns {
            let c = super::cells::<6>(c);
            let key = format!("{}.{}", c[0].as_deref().unwrap_or(""), c[1].as_deref().unwrap_or(""));
            if let Some(t) = catalog.tables.get_mut(&key) {
                t.columns.push(ColumnInfo {
                    name: c[2].clone().unwrap_or_default(),
                    data_type: c[3].clone().unwrap_or_default(),
                    nullable: c[4].as_deref() != Some("false"),
                    comment: c[5].clone(),
                    stats: None,
                });
            }
        }
        let keys = self.strings(&format!(
            "SELECT n.nspname, c.relname, k.contype::text, \
             (SELECT string_agg(a.attname, ',' ORDER BY u.ord) FROM unnest(k.conkey) WITH ORDINALITY u(attnum, ord) \
              JOIN pg_attribute a ON a.attrelid = k.conrelid AND a.attnum = u.attnum), \
             rn.nspname, rc.relname, \
             (SELECT string_agg(a.attname, ',' ORDER BY u.ord) FROM unnest(k.confkey) WITH ORDINALITY u(attnum, ord) \
              JOIN pg_attribute a ON a.attrelid = k.confrelid AND a.attnum = u.attnum) \
             FROM pg_constraint k JOIN pg_class c ON c.oid = k.conrelid JOIN pg_namespace n ON n.oid = c.relnamespace \
             LEFT JOIN pg_class rc ON rc.oid = k.confrelid LEFT JOIN pg_namespace rn ON rn.oid = rc.relnamespace \
             WHERE k.contype IN ('p', 'f') AND {USER_SCHEMAS} ORDER BY 1, 2, 3, k.conname"
        ))?;
        let split = |s: &Option<String>| -> Vec<String> {
            s.as_deref().unwrap_or("").split(',').filter(|x| !x.is_empty()).map(str::to_string).collect()
        };
        for k in keys {
            let k = super::cells::<7>(k);
            let key = format!("{}.{}", k[0].as_deref().unwrap_or(""), k[1].as_deref().unwrap_or(""));
            let Some(t) = catalog.tables.get_mut(&key) else { continue };
            match k[2].as_deref() {
                Some("p") => t.primary_key = split(&k[3]),
                Some("f") => t.foreign_keys.push(ForeignKey {
                    columns: split(&k[3]),
                    ref_schema: k[4].clone().unwrap_or_default(),
                    ref_table: k[5].clone().unwrap_or_default(),
                    ref_columns: split(&k[6]),
                }),
                _ => {}
            }
        }
        Ok(catalog)
    }

    fn execute(&self, compiled: &CompiledSql, limits: Limits, cancel: &Cancel) -> Result<ResultSet, EngineError> {
        let mut client = self.session()?;
        // The server's statement_timeout is the real limit; the watch sends a
        // cancel request when the caller cancels, or as a backstop when the
        // server lets the deadline pass.
        let token = client.cancel_token();
        let handle = self.rt.handle().clone();
        let backstop = limits.timeout + Duration::from_secs(2);
        let watch = cancel::watch(backstop, cancel, move || {
            handle.spawn(async move {
                if let Err(e) = token.cancel_query(NoTls).await {
                    tracing::warn!("postgres cancel request failed: {e}");
                }
            });
        });
        // A server that answers nothing, not even the cancel, is given up on.
        let outcome = runtime::block_on_within(&self.rt, backstop + Duration::from_secs(3), run(&mut client, compiled, limits));
        let stop = watch.finish();
        match outcome {
            Some(result) => {
                // The transaction ended (or is rolled back as it drops): the
                // session is clean for the next call.
                if !client.is_closed() {
                    self.clients.give(client);
                }
                // A cancelled call answers nothing, even if the query got done.
                match (result, stop) {
                    (_, Stop::Cancelled) => Err(EngineError::Cancelled),
                    (Err(_), Stop::TimedOut) => Err(EngineError::Timeout(limits.timeout)),
                    (result, _) => result,
                }
            }
            None if stop == Stop::Cancelled => Err(EngineError::Cancelled),
            None => Err(EngineError::Timeout(limits.timeout)),
        }
    }
}

async fn run(client: &mut Client, compiled: &CompiledSql, limits: Limits) -> Result<ResultSet, EngineError> {
    let q = |e: tokio_postgres::Error| -> EngineError {
        if e.code() == Some(&tokio_postgres::error::SqlState::QUERY_CANCELED) {
            EngineError::Timeout(limits.timeout)
        } else {
            EngineError::Query(error_text(&e))
        }
    };
    // Parameter types are inferred by the server from the SQL; a value is
    // encoded for the type inferred. Where nothing can be inferred (`$1 IS
    // NULL`), the value's own type is declared instead. Prepared outside the
    // transaction, so that a failed first attempt does not abort it.
    let stmt = match client.prepare(&compiled.sql).await {
        Ok(s) => s,
        Err(e) if e.code() == Some(&tokio_postgres::error::SqlState::INDETERMINATE_DATATYPE) => {
            let types: Vec<Type> = compiled.params.iter().map(declared_type).collect();
            client.prepare_typed(&compiled.sql, &types).await.map_err(q)?
        }
        Err(e) => return Err(q(e)),
    };
    let tx = client.build_transaction().read_only(true).start().await.map_err(q)?;
    let ms = limits.timeout.as_millis().clamp(1, i32::MAX as u128);
    tx.batch_execute(&format!("SET LOCAL statement_timeout = {ms}")).await.map_err(q)?;
    let params: Vec<Param<'_>> = compiled.params.iter().map(Param).collect();
    let refs: Vec<&(dyn ToSql + Sync)> = params.iter().map(|p| p as &(dyn ToSql + Sync)).collect();
    let columns: Vec<ResultColumn> = stmt
        .columns()
        .iter()
        .map(|c| ResultColumn { name: c.name().to_string(), data_type: type_name(c.type_(), c.type_modifier()) })
        .collect();
    let fetch = i32::try_from(limits.max_rows.saturating_add(1)).unwrap_or(i32::MAX);
    let portal = tx.bind(&stmt, &refs).await.map_err(q)?;
    let rows = tx.query_portal(&portal, fetch).await.map_err(q)?;
    let truncated = rows.len() > limits.max_rows;
    let mut out = Vec::with_capacity(rows.len().min(limits.max_rows));
    for row in rows.iter().take(limits.max_rows) {
        let mut v = Vec::with_capacity(row.len());
        for i in 0..row.len() {
            let cell: Cell = row.try_get(i).map_err(|e| EngineError::Query(error_text(&e)))?;
            v.push(cell.0);
        }
        out.push(v);
    }
    tx.rollback().await.map_err(q)?;
    Ok(ResultSet { columns, rows: out, truncated })
}

/// The type a value declares when the server cannot infer one.
fn declared_type(v: &Value) -> Type {
    match v {
        Value::Bool(_) => Type::BOOL,
        Value::Int(_) => Type::INT8,
        Value::Float(_) => Type::FLOAT8,
        Value::Text(_) | Value::Date(_) | Value::Timestamp(_) => Type::TEXT,
    }
}

/// Postgres' name for a result type, with numeric precision and scale and
/// varchar length where the type modifier carries them.
fn type_name(ty: &Type, typmod: i32) -> String {
    match *ty {
        Type::NUMERIC if typmod >= 4 => {
            let m = typmod - 4;
            format!("numeric({},{})", (m >> 16) & 0xffff, m & 0xffff)
        }
        Type::VARCHAR if typmod >= 4 => format!("varchar({})", typmod - 4),
        _ => ty.name().to_string(),
    }
}

/// A bound value, encoded in binary for the parameter type the server chose.
#[derive(Debug)]
struct Param<'a>(&'a Value);

type BoxError = Box<dyn std::error::Error + Sync + Send>;

const PG_EPOCH_DAYS_FROM_CE: i32 = 730_120; // 2000-01-01 as days from 0001-01-01

impl ToSql for Param<'_> {
    fn to_sql(&self, ty: &Type, out: &mut bytes::BytesMut) -> Result<IsNull, BoxError> {
        use chrono::Datelike;
        let text_like = matches!(*ty, Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN)
            || matches!(ty.kind(), Kind::Enum(_));
        let wrong = || -> BoxError { format!("cannot bind {:?} as a {} parameter", self.0, ty.name()).into() };
        match (self.0, ty.clone()) {
            (Value::Bool(b), Type::BOOL) => b.to_sql(ty, out),
            (Value::Int(i), Type::INT2) => i16::try_from(*i)?.to_sql(ty, out),
            (Value::Int(i), Type::INT4) => i32::try_from(*i)?.to_sql(ty, out),
            (Value::Int(i), Type::INT8) => i.to_sql(ty, out),
            (Value::Int(i), Type::FLOAT4) => (*i as f32).to_sql(ty, out),
            (Value::Int(i), Type::FLOAT8) => (*i as f64).to_sql(ty, out),
            (Value::Int(i), Type::NUMERIC) => encode_numeric(&i.to_string(), out),
            (Value::Float(f), Type::FLOAT4) => (*f as f32).to_sql(ty, out),
            (Value::Float(f), Type::FLOAT8) => f.to_sql(ty, out),
            (Value::Float(f), Type::NUMERIC) if f.is_finite() => encode_numeric(&f.to_string(), out),
            (Value::Date(d), Type::DATE) => (d.num_days_from_ce() - PG_EPOCH_DAYS_FROM_CE).to_sql(ty, out),
            (Value::Date(d), Type::TIMESTAMP | Type::TIMESTAMPTZ) => {
                let t = d.and_hms_opt(0, 0, 0).ok_or_else(wrong)?;
                micros_since_2000(&t).to_sql(&Type::INT8, out)
            }
            (Value::Timestamp(t), Type::TIMESTAMP | Type::TIMESTAMPTZ) => micros_since_2000(t).to_sql(&Type::INT8, out),
            (v, _) if text_like => {
                let text = match v {
                    Value::Text(s) => s.clone(),
                    other => match other.to_json() {
                        serde_json::Value::String(s) => s,
                        j => j.to_string(),
                    },
                };
                out.extend_from_slice(text.as_bytes());
                Ok(IsNull::No)
            }
            _ => Err(wrong()),
        }
    }

    fn accepts(_: &Type) -> bool {
        true
    }

    tokio_postgres::types::to_sql_checked!();
}

fn micros_since_2000(t: &chrono::NaiveDateTime) -> i64 {
    let epoch = chrono::NaiveDate::from_ymd_opt(2000, 1, 1).and_then(|d| d.and_hms_opt(0, 0, 0)).unwrap_or_default();
    (*t - epoch).num_microseconds().unwrap_or(i64::MAX)
}

/// Writes a decimal string (`-12.5`, `3`) in Postgres' binary NUMERIC form:
/// base-10000 digit groups around the decimal point.
fn encode_numeric(text: &str, out: &mut bytes::BytesMut) -> Result<IsNull, BoxError> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (int_part, frac_part) = digits.split_once('.').unwrap_or((digits, ""));
    if !int_part.bytes().chain(frac_part.bytes()).all(|b| b.is_ascii_digit()) {
        return Err(format!("not a decimal: {text}").into());
    }
    let int_part = int_part.trim_start_matches('0');
    let dscale = frac_part.len();
    let int_pad = (4 - int_part.len() % 4) % 4;
    let int_str = format!("{}{int_part}", "0".repeat(int_pad));
    let frac_str = format!("{frac_part}{}", "0".repeat((4 - frac_part.len() % 4) % 4));
    let mut groups: Vec<i16> = Vec::new();
    for chunk in int_str.as_bytes().chunks(4).chain(frac_str.as_bytes().chunks(4)) {
        groups.push(std::str::from_utf8(chunk)?.parse()?);
    }
    let mut weight = (int_str.len() / 4) as i16 - 1;
    while groups.first() == Some(&0) {
        groups.remove(0);
        weight -= 1;
    }
    while groups.last() == Some(&0) {
        groups.pop();
    }
    if groups.is_empty() {
        weight = 0;
    }
    let sign: u16 = if negative && !groups.is_empty() { 0x4000 } else { 0 };
    out.extend_from_slice(&(groups.len() as i16).to_be_bytes());
    out.extend_from_slice(&weight.to_be_bytes());
    out.extend_from_slice(&sign.to_be_bytes());
    out.extend_from_slice(&(dscale as u16).to_be_bytes());
    for g in groups {
        out.extend_from_slice(&g.to_be_bytes());
    }
    Ok(IsNull::No)
}

/// Reads Postgres' binary NUMERIC as decimal text (`NaN`, `Infinity` too).
fn decode_numeric(raw: &[u8]) -> Result<String, BoxError> {
    let word = |i: usize| -> Result<u16, BoxError> {
        match raw.get(i..i + 2) {
            Some(&[hi, lo]) => Ok(u16::from_be_bytes([hi, lo])),
            _ => Err("short numeric".into()),
        }
    };
    let ndigits = word(0)? as usize;
    let weight = word(2)? as i16 as i64;
    let sign = word(4)?;
    let dscale = word(6)? as usize;
    match sign {
        0xC000 => return Ok("NaN".into()),
        0xD000 => return Ok("Infinity".into()),
        0xF000 => return Ok("-Infinity".into()),
        _ => {}
    }
    let digits: Vec<u16> = (0..ndigits).map(|i| word(8 + 2 * i)).collect::<Result<_, _>>()?;
    let digit = |i: i64| -> u16 { usize::try_from(i).ok().and_then(|i| digits.get(i)).copied().unwrap_or(0) };
    let mut s = String::new();
    if sign == 0x4000 {
        s.push('-');
    }
    if weight < 0 {
        s.push('0');
    } else {
        for i in 0..=weight {
            if i == 0 {
                s.push_str(&digit(i).to_string());
            } else {
                s.push_str(&format!("{:04}", digit(i)));
            }
        }
    }
    if dscale > 0 {
        let mut frac = String::new();
        let mut i = weight + 1;
        while frac.len() < dscale {
            frac.push_str(&format!("{:04}", digit(i)));
            i += 1;
        }
        frac.truncate(dscale);
        s.push('.');
        s.push_str(&frac);
    }
    Ok(s)
}

/// One result value as JSON: numbers, strings, ISO dates and timestamps, NULL.
struct Cell(serde_json::Value);

impl<'a> FromSql<'a> for Cell {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> Result<Self, BoxError> {
        use serde_json::Value as J;
        let float = |f: f64| serde_json::Number::from_f64(f).map_or(J::Null, J::Number);
        let epoch = chrono::NaiveDate::from_ymd_opt(2000, 1, 1).unwrap_or_default();
        let value = match *ty {
            Type::BOOL => J::Bool(bool::from_sql(ty, raw)?),
            Type::INT2 => i16::from_sql(ty, raw)?.into(),
            Type::INT4 => i32::from_sql(ty, raw)?.into(),
            Type::INT8 => i64::from_sql(ty, raw)?.into(),
            Type::OID => u32::from_sql(ty, raw)?.into(),
            Type::FLOAT4 => float(f64::from(f32::from_sql(ty, raw)?)),
            Type::FLOAT8 => float(f64::from_sql(ty, raw)?),
            // Decimals come back as JSON numbers, as the DuckDB engine does.
            Type::NUMERIC => {
                let text = decode_numeric(raw)?;
                text.parse::<f64>().ok().filter(|f| f.is_finite()).map_or(J::String(text), float)
            }
            Type::DATE => match i32::from_sql(ty, raw)? {
                i32::MAX => J::String("infinity".into()),
                i32::MIN => J::String("-infinity".into()),
                days => epoch
                    .checked_add_signed(chrono::Duration::days(i64::from(days)))
                    .map_or(J::Null, |d| J::String(d.format("%Y-%m-%d").to_string())),
            },
            Type::TIMESTAMP | Type::TIMESTAMPTZ => match i64::from_sql(&Type::INT8, raw)? {
                i64::MAX => J::String("infinity".into()),
                i64::MIN => J::String("-infinity".into()),
                micros => epoch
                    .and_hms_opt(0, 0, 0)
                    .and_then(|e| e.checked_add_signed(chrono::Duration::microseconds(micros)))
                    .map_or(J::Null, |t| J::String(t.format("%Y-%m-%d %H:%M:%S%.f").to_string())),
            },
            Type::TIME => {
                let micros = i64::from_sql(&Type::INT8, raw)?;
                chrono::NaiveTime::from_num_seconds_from_midnight_opt((micros / 1_000_000) as u32, ((micros % 1_000_000) * 1000) as u32)
                    .map_or(J::Null, |t| J::String(t.format("%H:%M:%S%.f").to_string()))
            }
            Type::JSON => serde_json::from_slice(raw)?,
            Type::JSONB => serde_json::from_slice(raw.get(1..).unwrap_or_default())?,
            Type::UUID if raw.len() == 16 => {
                let h: String = raw.iter().map(|b| format!("{b:02x}")).collect();
                J::String(format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..]))
            }
            _ if matches!(*ty, Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN)
                || matches!(ty.kind(), Kind::Enum(_)) =>
            {
                J::String(std::str::from_utf8(raw)?.to_string())
            }
            _ => return Err(format!("result type `{}` is not supported; cast it (e.g. to text) in the SQL", ty.name()).into()),
        };
        Ok(Cell(value))
    }

    fn from_sql_null(_: &Type) -> Result<Self, BoxError> {
        Ok(Cell(serde_json::Value::Null))
    }

    fn accepts(_: &Type) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(text: &str) -> String {
        let mut buf = bytes::BytesMut::new();
        encode_numeric(text, &mut buf).unwrap();
        decode_numeric(&buf).unwrap()
    }

    #[test]
    fn numerics_round_trip_through_the_binary_form() {
        assert_eq!(round_trip("0"), "0");
        assert_eq!(round_trip("12.5"), "12.5");
        assert_eq!(round_trip("-12.50"), "-12.50");
        assert_eq!(round_trip("100000"), "100000");
        assert_eq!(round_trip("0.0001"), "0.0001");
        assert_eq!(round_trip("0.00001234"), "0.00001234");
        assert_eq!(round_trip("123456789.123456789"), "123456789.123456789");
    }

    #[test]
    fn redacts_passwords() {
        assert_eq!(runtime::redact("postgres://u:secret@h:5432/db"), "postgres://u:***@h:5432/db");
        assert_eq!(runtime::redact("postgres://u@h/db"), "postgres://u@h/db");
    }
}
