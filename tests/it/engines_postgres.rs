//! The Postgres engine on a real server: read-only, an interrupting
//! timeout, the row cap, result types, parameters bound by inferred type,
//! and introspection.

use std::time::{Duration, Instant};

use serde_json::json;

use schemabrain::engine::{Engine, EngineError, Limits, PostgresEngine};
use schemabrain::ir::Value;
use schemabrain::sql::CompiledSql;

use crate::engines_servers::PgSchema;

fn sql(text: &str, params: Vec<Value>) -> CompiledSql {
    CompiledSql { sql: text.to_string(), params, dialect: "postgres" }
}

fn limits(max_rows: usize, timeout_ms: u64) -> Limits {
    Limits { max_rows, timeout: Duration::from_millis(timeout_ms) }
}

fn engine(schema: &PgSchema) -> PostgresEngine {
    PostgresEngine::connect(&schema.url).expect("the engine connects")
}

#[test]
fn postgres_refuses_writes() {
    let Some(schema) = PgSchema::create("ro") else { return };
    schema.exec(&format!("CREATE TABLE \"{0}\".t (x integer); INSERT INTO \"{0}\".t VALUES (1)", schema.name));
    let pg = engine(&schema);
    for write in [
        format!("CREATE TABLE \"{}\".intruder (x integer)", schema.name),
        format!("INSERT INTO \"{}\".t VALUES (2)", schema.name),
        format!("WITH d AS (DELETE FROM \"{}\".t RETURNING x) SELECT count(*) FROM d", schema.name),
    ] {
        let err = pg.run(&sql(&write, vec![]), limits(10, 5_000)).expect_err("a write must fail");
        assert!(err.to_string().contains("read-only transaction"), "{write}: {err}");
    }
    // Nothing changed, and the session still answers after the failures.
    let rs = pg.run(&sql(&format!("SELECT count(*) AS n FROM \"{}\".t", schema.name), vec![]), limits(10, 5_000)).unwrap();
    assert_eq!(rs.rows, vec![vec![json!(1)]]);
}

#[test]
fn postgres_timeout_interrupts_the_query() {
    let Some(schema) = PgSchema::create("timeout") else { return };
    let pg = engine(&schema);
    // The interrupt must land well before the statement would have ended:
    // within a quarter of its 30 s (a timeout that only reports when the
    // sleep is over never stopped it).
    let natural = Duration::from_secs(30);
    let started = Instant::now();
    let err = pg.run(&sql("SELECT pg_sleep(30)", vec![]), limits(10, 200)).expect_err("must time out");
    assert!(matches!(err, EngineError::Timeout(_)), "{err}");
    assert!(started.elapsed() < natural / 4, "took {:?} of the statement's {natural:?}: the server did not stop the query", started.elapsed());
    // The next query runs normally (no timeout left behind on the session).
    let rs = pg.run(&sql("SELECT pg_sleep(0.3)::text AS slept", vec![]), limits(10, 5_000)).unwrap();
    assert_eq!(rs.rows.len(), 1);
}

#[test]
fn postgres_row_cap_truncates_without_fetching_everything() {
    let Some(schema) = PgSchema::create("cap") else { return };
    let pg = engine(&schema);
    let started = Instant::now();
    // A hundred million rows (a streaming nested loop over two small series)
    // would take minutes to produce and send; the portal fetches eleven.
    let rs = pg
        .run(&sql("SELECT a.g * 10000 + b.g AS g FROM generate_series(0, 9999) AS a(g), generate_series(1, 10000) AS b(g)", vec![]), limits(10, 20_000))
        .unwrap();
    assert!(started.elapsed() < Duration::from_secs(3), "took {:?}", started.elapsed());
    assert_eq!(rs.rows.len(), 10);
    assert!(rs.truncated);
    assert_eq!(rs.columns[0].data_type, "int4");
    let rs = pg.run(&sql("SELECT g FROM generate_series(1, 10) AS g", vec![]), limits(10, 5_000)).unwrap();
    assert_eq!((rs.rows.len(), rs.truncated), (10, false), "exactly the cap is not truncated");
}

#[test]
fn postgres_types_come_back_right() {
    let Some(schema) = PgSchema::create("types") else { return };
    schema.exec(&format!(
        "CREATE TABLE \"{0}\".t (i integer, b bigint, s smallint, n numeric(12,2), f double precision, t text, v varchar(20), \
         d date, ts timestamp, tz timestamptz, ok boolean);
         INSERT INTO \"{0}\".t VALUES (7, 9007199254740993, -3, 1234.50, 0.25, 'héllo', 'x', DATE '2024-02-29', \
         TIMESTAMP '2024-03-01 08:09:10.5', TIMESTAMPTZ '2024-03-01 08:09:10+02', true),
         (NULL, NULL, NULL, -0.01, NULL, NULL, NULL, NULL, TIMESTAMP '2024-03-01 00:00:00', NULL, false)",
        schema.name
    ));
    let pg = engine(&schema);
    let rs = pg
        .run(&sql(&format!("SELECT i, b, s, n, f, t, v, d, ts, tz, ok, NULL::text AS nothing FROM \"{}\".t ORDER BY i NULLS LAST", schema.name), vec![]), limits(10, 5_000))
        .unwrap();
    let types: Vec<&str> = rs.columns.iter().map(|c| c.data_type.as_str()).collect();
    assert_eq!(types, ["int4", "int8", "int2", "numeric(12,2)", "float8", "text", "varchar(20)", "date", "timestamp", "timestamptz", "bool", "text"]);
    assert_eq!(
        rs.rows[0],
        vec![
            json!(7),
            json!(9007199254740993i64),
            json!(-3),
            json!(1234.5),
            json!(0.25),
            json!("héllo"),
            json!("x"),
            json!("2024-02-29"),
            json!("2024-03-01 08:09:10.500"),
            json!("2024-03-01 06:09:10"),
            json!(true),
            json!(null)
        ]
    );
    assert_eq!(rs.rows[1][3], json!(-0.01));
    assert_eq!(rs.rows[1][8], json!("2024-03-01 00:00:00"));
    assert_eq!(rs.rows[1][10], json!(false));
    assert!(rs.rows[1].iter().enumerate().all(|(i, v)| [3, 8, 10].contains(&i) || v.is_null()), "{:?}", rs.rows[1]);
    assert_eq!(rs.columns[0].name, "i");
}

#[test]
fn postgres_binds_parameters_by_the_type_the_server_infers() {
    let Some(schema) = PgSchema::create("params") else { return };
    schema.exec(&format!(
        "CREATE TABLE \"{0}\".t (id integer, amount numeric(12,2), name text, day date, at timestamp, flag boolean);
         INSERT INTO \"{0}\".t SELECT g, g * 1.5, 'n' || g, DATE '2024-01-01' + g, TIMESTAMP '2024-01-01' + g * interval '1 hour', g % 2 = 0
         FROM generate_series(1, 20) g",
        schema.name
    ));
    let pg = engine(&schema);
    let date = |s: &str| Value::Date(chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").unwrap());
    let ts = |s: &str| Value::Timestamp(chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S").unwrap());
    let q = sql(
        &format!(
            "SELECT count(*) AS n FROM \"{}\".t WHERE id >= $1 AND amount <= $2 AND name <> $3 AND day >= CAST($4 AS DATE) \
             AND at < CAST($5 AS TIMESTAMP) AND flag = $6 AND amount > $7",
            schema.name
        ),
        vec![Value::Int(2), Value::Float(27.0), Value::Text("n4".into()), date("2024-01-03"), ts("2024-01-01 17:00:00"), Value::Bool(true), Value::Int(0)],
    );
    // ids 2..=16 (at < 17:00 means g < 17; amount <= 27 means g <= 18), even, not 4: 2, 6, 8, 10, 12, 14, 16.
    let rs = pg.run(&q, limits(10, 5_000)).unwrap();
    assert_eq!(rs.rows, vec![vec![json!(7)]]);
    // Values compared with uncast parameters: the server infers date and timestamp.
    let q = sql(
        &format!("SELECT count(*) AS n FROM \"{}\".t WHERE day = $1 OR at = $2 OR amount = $3", schema.name),
        vec![date("2024-01-05"), ts("2024-01-01 10:00:00"), Value::Float(1.5)],
    );
    assert_eq!(pg.run(&q, limits(10, 5_000)).unwrap().rows, vec![vec![json!(3)]]);
    // Nothing to infer from: the value declares its own type.
    let q = sql("SELECT $1 IS NULL AS a, $2 AS b", vec![Value::Int(1), Value::Text("x".into())]);
    assert_eq!(pg.run(&q, limits(10, 5_000)).unwrap().rows, vec![vec![json!(false), json!("x")]]);
}

#[test]
fn postgres_introspects_tables_keys_and_comments() {
    let Some(schema) = PgSchema::create("catalog") else { return };
    let s = &schema.name;
    schema.exec(&format!(
        "CREATE TABLE \"{s}\".parent (a integer, b text, PRIMARY KEY (a, b));
         CREATE TABLE \"{s}\".child (id bigint PRIMARY KEY, pa integer NOT NULL, pb text NOT NULL, amount numeric(10,2),
           FOREIGN KEY (pa, pb) REFERENCES \"{s}\".parent (a, b));
         CREATE VIEW \"{s}\".v AS SELECT id FROM \"{s}\".child;
         COMMENT ON TABLE \"{s}\".child IS 'Children.'; COMMENT ON COLUMN \"{s}\".child.amount IS 'Money.';
         INSERT INTO \"{s}\".parent SELECT g, 'x' FROM generate_series(1, 500) g;
         ANALYZE \"{s}\".parent"
    ));
    let pg = engine(&schema);
    let catalog = pg.introspect().unwrap();
    assert!(catalog.engine.starts_with("postgres "), "{}", catalog.engine);
    let child = &catalog.tables[&format!("{s}.child")];
    let cols: Vec<(&str, &str, bool)> = child.columns.iter().map(|c| (c.name.as_str(), c.data_type.as_str(), c.nullable)).collect();
    assert_eq!(cols, [("id", "bigint", false), ("pa", "integer", false), ("pb", "text", false), ("amount", "numeric(10,2)", true)]);
    assert_eq!(child.primary_key, ["id"]);
    assert_eq!(child.foreign_keys.len(), 1);
    let fk = &child.foreign_keys[0];
    assert_eq!((fk.columns.clone(), fk.ref_schema.as_str(), fk.ref_table.as_str(), fk.ref_columns.clone()),
        (vec!["pa".to_string(), "pb".to_string()], s.as_str(), "parent", vec!["a".to_string(), "b".to_string()]));
    assert_eq!(child.comment.as_deref(), Some("Children."));
    assert_eq!(child.columns[3].comment.as_deref(), Some("Money."));
    let parent = &catalog.tables[&format!("{s}.parent")];
    assert_eq!(parent.primary_key, ["a", "b"]);
    assert_eq!(parent.row_count, Some(500));
    let view = &catalog.tables[&format!("{s}.v")];
    assert_eq!((view.columns.len(), view.row_count), (1, None));
}

#[test]
fn postgres_urls_open_through_engine_open() {
    let Some(schema) = PgSchema::create("open") else { return };
    for url in [schema.url.clone(), schema.url.replacen("postgres://", "postgresql://", 1)] {
        let engine = schemabrain::engine::open(&url).unwrap_or_else(|e| panic!("{url}: {e}"));
        assert!(engine.describe().starts_with("postgres "), "{}", engine.describe());
    }
    let err = schemabrain::engine::open("postgres://nobody@127.0.0.1:1/none").err().expect("nothing listens on port 1");
    assert!(matches!(err, EngineError::Connect { .. }), "{err}");
}

#[test]
fn postgres_engine_can_be_called_from_async_code() {
    let Some(schema) = PgSchema::create("async") else { return };
    let pg = engine(&schema);
    // An async caller (an MCP handler) calls the synchronous engine: it must
    // neither panic ("cannot start a runtime from within a runtime") nor hang.
    let outer = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let rows = outer.block_on(async { pg.run(&sql("SELECT 40 + $1 AS n", vec![Value::Int(2)]), limits(10, 5_000)).unwrap().rows });
    assert_eq!(rows, vec![vec![json!(42)]]);
    let catalog = outer.block_on(async { pg.introspect().unwrap() });
    assert!(catalog.engine.starts_with("postgres "));
}

/// Engines are shared by async servers (MCP): both network engines must be
/// `Send + Sync` (checked at compile time).
#[test]
fn network_engines_are_send_and_sync() {
    fn shareable<T: Send + Sync + 'static>() {}
    shareable::<PostgresEngine>();
    shareable::<schemabrain::engine::MySqlEngine>();
}
