//! Spark over Spark Connect: `sc://HOST:PORT` (Spark's own URL form, also
//! Databricks Connect's), with `;token=…`, `;use_ssl=true`, `;user_id=…` and
//! any other `;name=value` sent as a gRPC header (e.g.
//! `x-databricks-cluster-id`). SQL in the `databricks` dialect, read-only,
//! under a timeout that interrupts the operation on the server, a row cap,
//! and introspection from Spark's catalog.
//!
//! Why the client's transport crate (`apache-spark-connect-core`) and not
//! its DataFrame crate: we send SQL text only, and the session of the
//! DataFrame crate keeps the default retry policy (15 retries, backoff to a
//! minute, up to an hour on a server that is down) and blocks on a global
//! runtime of its own. Here the engine owns a small runtime (`runtime`),
//! sets a retry policy of a few hundred milliseconds and bounds the first
//! call, so an agent hears "unreachable" within seconds.
//!
//! How the limits hold:
//! - read-only: Spark Connect has no read-only session, so every statement
//!   passes the free-SQL guard (one query, no DDL/DML, no file or reflection
//!   functions), parsed by the dialect profile's own parser, before it is
//!   sent; connect as a principal with read grants in production;
//! - timeout and cancellation: each operation carries a tag of its own; at
//!   the deadline (or on cancel) `interrupt_tag` stops it on the server,
//!   and the session answers the next call (Spark Connect has no per-call
//!   deadline);
//! - row cap: Arrow batches are read until `max_rows + 1` rows, then the
//!   stream is dropped and the operation interrupted.
//!
//! The session runs in UTC (`spark.sql.session.timeZone`), so timestamps
//! read back as the naive values DuckDB gives.
//!
//! Architecture invariant: no planning, no envelopes; failures are `EngineError`s.

use std::sync::Arc;
use std::time::Duration;

use datafusion::arrow::ipc::reader::StreamReader;
use serde_json::Value as Json;
use spark_connect_core::channel::ChannelBuilder;
use spark_connect_core::{RetryPolicy, SparkConnectClient, SparkError};
use spark_connect_proto as proto;

use super::batches::Collector;
use super::{cancel, runtime, Cancel, EngineError, Limits, ResultColumn, ResultSet, Stop};
use crate::catalog::{Catalog, ColumnInfo, TableInfo};
use crate::ir::Value;
use crate::sql::{CompiledSql, Dialect};

/// How long opening a source may take before it is called unreachable.
const CONNECT_DEADLINE: Duration = Duration::from_secs(10);

/// Limits of the catalog calls `introspect` makes.
const CATALOG_LIMITS: Limits = Limits { max_rows: 100_000, timeout: Duration::from_secs(120) };

/// gRPC's UNAVAILABLE: the server is down, unreachable or refused the connection.
const GRPC_UNAVAILABLE: i32 = 14;

pub struct SparkEngine {
    rt: runtime::Runtime,
    client: Arc<SparkConnectClient>,
    /// The URL with its token hidden, for messages and the catalog.
    source: String,
    version: String,
    dialect: &'static Dialect,
}

/// Whether a URL names a Spark Connect server.
pub fn is_spark_url(source: &str) -> bool {
    source.starts_with("sc://")
}

/// The URL with the value of every parameter that could be a secret hidden
/// (`token`, and headers naming a token, secret, password or authorization).
pub fn redact(url: &str) -> String {
    let Some((head, params)) = url.split_once(';') else { return url.to_string() };
    let params: Vec<String> = params
        .split(';')
        .map(|p| match p.split_once('=') {
            Some((k, _)) if ["token", "secret", "password", "authorization"].iter().any(|s| k.to_ascii_lowercase().contains(s)) => {
                format!("{k}=***")
            }
            _ => p.to_string(),
        })
        .collect();
    format!("{head};{}", params.join(";"))
}

/// A few quick retries of a call that met UNAVAILABLE (a server restarting),
/// never more than a couple of seconds in all.
fn quick_retries() -> RetryPolicy {
    RetryPolicy {
        max_retries: Some(3),
        initial_backoff_ms: 100,
        max_backoff_ms: Some(800),
        backoff_multiplier: 2.0,
        jitter_ms: 0,
        min_jitter_threshold_ms: 0,
        recognize_server_retry_delay: false,
        max_server_retry_delay_ms: None,
        max_retry_exception_elapsed_time_ms: Some(2_000),
    }
}

impl SparkEngine {
    /// Connects to `source` (`sc://HOST:PORT[/;name=value…]`), checks that a
    /// server answers within seconds, and sets the session to UTC.
    pub fn connect(source: &str) -> Result<Self, EngineError> {
        let shown = redact(source);
        let err = |message: String| EngineError::Connect { source_url: shown.clone(), message };
        let mut builder = ChannelBuilder::parse(source)
            .map_err(|e| err(format!("{e} (the form is sc://HOST:PORT, optionally followed by /;token=…;use_ssl=true;header=value)")))?;
        // As PySpark does: a token means TLS, except on this machine.
        if builder.token().is_some() && !builder.use_ssl() && !builder.is_loopback() {
            builder.set("use_ssl", "true");
        }
        let dialect = Dialect::from_name("databricks").map_err(err)?;
        let rt = runtime::new(&shown)?;
        let mut client = runtime::block_on(&rt, SparkConnectClient::connect(&builder)).map_err(|e| err(e.message()))?;
        client.set_retry_policy(quick_retries());
        let client = Arc::new(client);
        let endpoint = builder.endpoint();
        let unreachable = |what: String| {
            err(format!("no Spark Connect server answered at {endpoint} ({what}); start the server, or check the host, port, token and use_ssl in the URL"))
        };
        let version = runtime::block_on_within(&rt, CONNECT_DEADLINE, spark_version(&client))
            .ok_or_else(|| unreachable(format!("no answer within {}s", CONNECT_DEADLINE.as_secs())))?
            .map_err(|e| unreachable(e.message()))?;
        runtime::block_on_within(&rt, CONNECT_DEADLINE, client.set_config("spark.sql.session.timeZone", "UTC"))
            .ok_or_else(|| unreachable(format!("no answer within {}s", CONNECT_DEADLINE.as_secs())))?
            .map_err(|e| err(format!("cannot set the session time zone: {}", e.message())))?;
        Ok(SparkEngine { rt, client, source: shown, version, dialect })
    }

    fn user_context(&self) -> proto::UserContext {
        proto::UserContext { user_id: self.client.user_id().unwrap_or_default().to_string(), ..Default::default() }
    }

    /// Runs one relation as an operation tagged for interruption, reading
    /// at most `max_rows` rows.
    fn run(&self, relation: proto::Relation, limits: Limits, cancel: &Cancel) -> Result<ResultSet, EngineError> {
        let tag = format!("schemabrain-{}", uuid::Uuid::new_v4());
        let request = proto::ExecutePlanRequest {
            session_id: self.client.session_id().to_string(),
            user_context: Some(self.user_context()),
            operation_id: Some(uuid::Uuid::new_v4().to_string()),
            plan: Some(proto::Plan { op_type: Some(proto::plan::OpType::Root(relation)) }),
            client_type: Some(format!("schemabrain/{}", env!("CARGO_PKG_VERSION"))),
            tags: vec![tag.clone()],
            ..Default::default()
        };
        let watch = {
            let (client, handle, tag) = (self.client.clone(), self.rt.handle().clone(), tag.clone());
            cancel::watch(limits.timeout, cancel, move || {
                handle.spawn(async move {
                    if let Err(e) = client.interrupt_tag(&tag).await {
                        tracing::warn!("spark interrupt of {tag} failed: {e}");
                    }
                });
            })
        };
        // A server that answers nothing, not even the interrupt, is given up on.
        let backstop = limits.timeout + Duration::from_secs(5);
        let outcome = runtime::block_on_within(&self.rt, backstop, collect(&self.client, request, limits.max_rows));
        let stop = watch.finish();
        if matches!(&outcome, Some(Ok(rs)) if rs.truncated) || outcome.is_none() {
            // Stopped reading (row cap) or gave up: the operation may still
            // run on the server; stop it there.
            self.interrupt(&tag);
        }
        match (outcome, stop) {
            (_, Stop::Cancelled) => Err(EngineError::Cancelled),
            (Some(Ok(rs)), _) => Ok(rs),
            (Some(Err(_)), Stop::TimedOut) | (None, _) => Err(EngineError::Timeout(limits.timeout)),
            (Some(Err(e)), Stop::Done) => Err(e),
        }
    }

    /// Interrupts the operations tagged `tag` without waiting for the answer.
    fn interrupt(&self, tag: &str) {
        let (client, tag) = (self.client.clone(), tag.to_string());
        self.rt.spawn(async move {
            let _ = client.interrupt_tag(&tag).await;
        });
    }

    /// Rows of one catalog call (`spark.catalog.listTables` and friends).
    fn catalog_rows(&self, call: proto::catalog::CatType) -> Result<ResultSet, EngineError> {
        let relation = proto::Relation {
            rel_type: Some(proto::relation::RelType::Catalog(proto::Catalog { cat_type: Some(call) })),
            ..Default::default()
        };
        self.run(relation, CATALOG_LIMITS, &Cancel::never())
    }
}

/// The value of the column named `name` in `row`.
fn field<'r>(rs: &ResultSet, row: &'r [Json], name: &str) -> Option<&'r Json> {
    rs.columns.iter().position(|c| c.name == name).and_then(|i| row.get(i))
}

fn text(v: Option<&Json>) -> Option<String> {
    match v {
        Some(Json::String(s)) => Some(s.clone()),
        _ => None,
    }
}

impl super::Engine for SparkEngine {
    fn dialect(&self) -> &'static Dialect {
        self.dialect
    }

    fn describe(&self) -> String {
        format!("spark {}", self.version)
    }

    fn introspect(&self) -> Result<Catalog, EngineError> {
        use proto::catalog::CatType;
        let mut catalog = Catalog { source: self.source.clone(), engine: self.describe(), tables: Default::default() };
        let databases = self.catalog_rows(CatType::ListDatabases(proto::ListDatabases { pattern: None }))?;
        for db in &databases.rows {
            let Some(db) = text(field(&databases, db, "name")) else { continue };
            let tables = self.catalog_rows(CatType::ListTables(proto::ListTables { db_name: Some(db.clone()), pattern: None }))?;
            for t in &tables.rows {
                let Some(name) = text(field(&tables, t, "name")) else { continue };
                if field(&tables, t, "isTemporary") == Some(&Json::Bool(true)) {
                    continue;
                }
                let columns = self.catalog_rows(CatType::ListColumns(proto::ListColumns { table_name: name.clone(), db_name: Some(db.clone()) }))?;
                let columns = columns
                    .rows
                    .iter()
                    .filter_map(|c| {
                        Some(ColumnInfo {
                            name: text(field(&columns, c, "name"))?,
                            data_type: text(field(&columns, c, "dataType")).unwrap_or_default(),
                            nullable: field(&columns, c, "nullable") != Some(&Json::Bool(false)),
                            comment: text(field(&columns, c, "description")).filter(|d| !d.is_empty()),
                            stats: None,
                        })
                    })
                    .collect();
                let comment = text(field(&tables, t, "description")).filter(|d| !d.is_empty());
                catalog.tables.insert(format!("{db}.{name}"), TableInfo { schema: db.clone(), name, columns, comment, ..Default::default() });
            }
        }
        Ok(catalog)
    }

    fn execute(&self, compiled: &CompiledSql, limits: Limits, cancel: &Cancel) -> Result<ResultSet, EngineError> {
        crate::provider::guard::check_parsed_by(&compiled.sql, self.dialect.parser, self.dialect.name)
            .map_err(|r| EngineError::Query(format!("refused before it reached Spark: {}", r.message)))?;
        let pos_arguments = compiled.params.iter().map(literal).collect::<Result<Vec<_>, _>>()?;
        let relation = proto::Relation {
            rel_type: Some(proto::relation::RelType::Sql(proto::Sql { query: compiled.sql.clone(), pos_arguments, ..Default::default() })),
            ..Default::default()
        };
        self.run(relation, limits, cancel)
    }

    /// Statements one after another (Spark has no transactions: a failure
    /// leaves the ones before it done), each interrupted at the timeout.
    fn write(&self, statements: &[String], timeout: Duration, cancel: &Cancel) -> Result<(), EngineError> {
        for sql in statements {
            let relation = proto::Relation {
                rel_type: Some(proto::relation::RelType::Sql(proto::Sql { query: sql.clone(), ..Default::default() })),
                ..Default::default()
            };
            self.run(relation, Limits { max_rows: 0, timeout }, cancel)?;
        }
        Ok(())
    }
}

impl Drop for SparkEngine {
    /// Releases the server-side session (best effort, briefly): a server
    /// keeps an idle session for an hour otherwise.
    fn drop(&mut self) {
        let client = self.client.clone();
        let _ = runtime::block_on_within(&self.rt, Duration::from_secs(1), async move { client.release_session().await });
    }
}

async fn spark_version(client: &SparkConnectClient) -> Result<String, SparkError> {
    let request = proto::AnalyzePlanRequest {
        session_id: client.session_id().to_string(),
        user_context: Some(proto::UserContext { user_id: client.user_id().unwrap_or_default().to_string(), ..Default::default() }),
        analyze: Some(proto::analyze_plan_request::Analyze::SparkVersion(Default::default())),
        ..Default::default()
    };
    match client.analyze_plan(request).await?.result {
        Some(proto::analyze_plan_response::Result::SparkVersion(v)) => Ok(v.version),
        _ => Err(SparkError::connect_msg("the server's answer carried no Spark version")),
    }
}

/// A Spark error as ours: UNAVAILABLE is a lost server, the rest the query's.
fn spark_error(e: SparkError) -> EngineError {
    if e.grpc_code() == Some(GRPC_UNAVAILABLE) {
        return EngineError::Connect { source_url: "sc://".into(), message: format!("the Spark Connect server went away: {}", e.message()) };
    }
    EngineError::Query(e.message())
}

/// Reads the operation's Arrow batches into a result, stopping after
/// `max_rows` rows.
async fn collect(client: &SparkConnectClient, request: proto::ExecutePlanRequest, max_rows: usize) -> Result<ResultSet, EngineError> {
    use proto::execute_plan_response::ResponseType;
    let mut stream = client.execute_plan(request).await.map_err(spark_error)?;
    let mut rows = Collector::new(max_rows);
    let mut schema = None;
    loop {
        let Some(response) = stream.message().await.map_err(|s| spark_error(SparkError::from_grpc_status(s)))? else { break };
        if schema.is_none() {
            schema = response.schema;
        }
        match response.response_type {
            Some(ResponseType::ArrowBatch(batch)) => {
                let arrow = |e: datafusion::arrow::error::ArrowError| EngineError::Query(format!("unreadable Arrow batch from Spark: {e}"));
                let reader = StreamReader::try_new(std::io::Cursor::new(batch.data), None).map_err(arrow)?;
                rows.schema(reader.schema().as_ref());
                for b in reader {
                    if !rows.push(&b.map_err(arrow)?)? {
                        return Ok(rows.finish(Vec::new));
                    }
                }
            }
            Some(ResponseType::ResultComplete(_)) => break,
            _ => {}
        }
    }
    Ok(rows.finish(|| columns_of(schema.as_ref())))
}

/// Column names and types from the schema Spark sends beside the batches
/// (used when no batch came at all).
fn columns_of(schema: Option<&proto::DataType>) -> Vec<ResultColumn> {
    use proto::data_type::Kind;
    let Some(Kind::Struct(s)) = schema.and_then(|d| d.kind.as_ref()) else { return Vec::new() };
    s.fields
        .iter()
        .map(|f| {
            let data_type = match f.data_type.as_ref().and_then(|d| d.kind.as_ref()) {
                Some(Kind::Boolean(_)) => "BOOLEAN".to_string(),
                Some(Kind::Byte(_)) => "TINYINT".into(),
                Some(Kind::Short(_)) => "SMALLINT".into(),
                Some(Kind::Integer(_)) => "INTEGER".into(),
                Some(Kind::Long(_)) => "BIGINT".into(),
                Some(Kind::Float(_)) => "FLOAT".into(),
                Some(Kind::Double(_)) => "DOUBLE".into(),
                Some(Kind::Decimal(d)) => format!("DECIMAL({},{})", d.precision.unwrap_or(10), d.scale.unwrap_or(0)),
                Some(Kind::String(_) | Kind::Char(_) | Kind::VarChar(_)) => "VARCHAR".into(),
                Some(Kind::Date(_)) => "DATE".into(),
                Some(Kind::Timestamp(_)) => "TIMESTAMP WITH TIME ZONE".into(),
                Some(Kind::TimestampNtz(_)) => "TIMESTAMP".into(),
                _ => "OTHER".into(),
            };
            ResultColumn { name: f.name.clone(), data_type }
        })
        .collect()
}

/// A bound value as a Spark literal for a `?` placeholder.
fn literal(v: &Value) -> Result<proto::Expression, EngineError> {
    use proto::expression::literal::LiteralType;
    let t = match v {
        Value::Bool(b) => LiteralType::Boolean(*b),
        Value::Int(i) => LiteralType::Long(*i),
        Value::Float(f) => LiteralType::Double(*f),
        Value::Text(s) => LiteralType::String(s.clone()),
        Value::Date(d) => {
            let days = (*d - chrono::DateTime::UNIX_EPOCH.date_naive()).num_days();
            LiteralType::Date(i32::try_from(days).map_err(|_| EngineError::Query(format!("date {d} is out of range")))?)
        }
        Value::Timestamp(t) => LiteralType::TimestampNtz(t.and_utc().timestamp_micros()),
    };
    Ok(proto::Expression {
        expr_type: Some(proto::expression::ExprType::Literal(proto::expression::Literal { literal_type: Some(t), ..Default::default() })),
        ..Default::default()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hides_tokens_and_secret_headers() {
        assert_eq!(redact("sc://h:443/;token=abc;x-databricks-cluster-id=0101"), "sc://h:443/;token=***;x-databricks-cluster-id=0101");
        assert_eq!(redact("sc://h:15002"), "sc://h:15002");
        assert_eq!(redact("sc://h/;use_ssl=true;x-api-secret=s"), "sc://h/;use_ssl=true;x-api-secret=***");
    }

    #[test]
    fn values_bind_as_typed_literals() {
        use proto::expression::literal::LiteralType;
        let lit = |v: Value| match literal(&v).unwrap().expr_type {
            Some(proto::expression::ExprType::Literal(l)) => l.literal_type.unwrap(),
            other => panic!("{other:?}"),
        };
        assert_eq!(lit(Value::Date(chrono::NaiveDate::from_ymd_opt(2024, 1, 2).unwrap())), LiteralType::Date(19_724));
        let t = chrono::NaiveDate::from_ymd_opt(1970, 1, 1).unwrap().and_hms_opt(0, 0, 1).unwrap();
        assert_eq!(lit(Value::Timestamp(t)), LiteralType::TimestampNtz(1_000_000));
        assert_eq!(lit(Value::Int(7)), LiteralType::Long(7));
    }
}
