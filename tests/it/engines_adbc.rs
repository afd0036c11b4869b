//! The ADBC engine with two real drivers from their wheels
//! (`engines_wheels`): SQLite (the demo warehouse exported into a file
//! through the driver's bulk ingest) and PostgreSQL (the local server,
//! cross-checked with the native Postgres engine). The dialect from the
//! driver's vendor name, read-only, a timeout that stops the statement in
//! the server, and an unreachable source named within seconds.

use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use schemabrain::engine::{self, Engine, EngineError, Limits, PostgresEngine};
use schemabrain::sql::CompiledSql;

use crate::engines_servers::PgSchema;
use crate::engines_wheels::{adbc_driver, free_port, open};

fn limits(seconds: u64) -> Limits {
    Limits { max_rows: 10_000, timeout: Duration::from_secs(seconds) }
}

/// The URL of a SQLite file holding the demo warehouse (exported once per binary).
pub fn demo_sqlite() -> Option<String> {
    static URL: OnceLock<String> = OnceLock::new();
    let driver = adbc_driver("sqlite")?;
    Some(
        URL.get_or_init(|| {
            let file: PathBuf = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(crate::engines_servers::unique_name("demo") + ".sqlite");
            let url = format!("adbc:{}?uri=file:{}", driver.display(), file.display());
            let target = engine::export::Target::parse(&url, None).unwrap();
            let report = engine::export::export(&crate::common::demo_engine(), "main", &target).expect("export to SQLite");
            assert!(report.tables.contains(&("main.orders".to_string(), 120_000)), "{:?}", report.tables);
            url
        })
        .clone(),
    )
}

/// The ADBC URL of the PostgreSQL driver for the server at `pg_url`.
pub fn postgres_via_adbc(pg_url: &str) -> Option<String> {
    let driver = adbc_driver("postgresql")?;
    Some(format!("adbc:{}?uri={}", driver.display(), pg_url))
}

#[test]
fn sqlite_through_adbc_reads_introspects_and_refuses_writes() {
    let Some(url) = demo_sqlite() else { return };
    let sqlite = open(&url);
    assert_eq!(sqlite.dialect().name, "sqlite", "from the vendor name");
    assert!(sqlite.describe().starts_with("SQLite 3."), "{}", sqlite.describe());
    let catalog = sqlite.introspect().expect("introspects");
    let orders = &catalog.tables["main.orders"];
    assert_eq!(orders.primary_key, ["id"]);
    let fks: Vec<&str> = orders.foreign_keys.iter().map(|f| f.ref_table.as_str()).collect();
    assert!(fks.contains(&"customers"), "{fks:?}");
    let amount = orders.columns.iter().find(|c| c.name == "amount").unwrap();
    assert_eq!(amount.data_type.to_ascii_lowercase(), "decimal(12,2)");
    // Timestamps compare as text, bound as text.
    let q = CompiledSql {
        sql: "SELECT count(*) FROM \"main\".\"orders\" WHERE \"ordered_at\" >= ? AND \"is_gift\" = ?".into(),
        params: vec![
            schemabrain::ir::Value::Timestamp(chrono::NaiveDate::from_ymd_opt(2024, 6, 1).unwrap().and_hms_opt(0, 0, 0).unwrap()),
            schemabrain::ir::Value::Bool(true),
        ],
        dialect: "sqlite",
    };
    let duck = crate::common::demo_engine();
    let expected = duck.run(&CompiledSql { sql: "SELECT count(*) FROM main.orders WHERE ordered_at >= TIMESTAMP '2024-06-01' AND is_gift".into(), params: vec![], dialect: "duckdb" }, limits(60)).unwrap();
    assert_eq!(sqlite.run(&q, limits(60)).unwrap().rows, expected.rows);
    for write in ["DROP TABLE main.orders", "DELETE FROM main.orders", "ATTACH 'x.db' AS x", "PRAGMA writable_schema = 1"] {
        let r = sqlite.run(&CompiledSql { sql: write.into(), params: vec![], dialect: "sqlite" }, limits(10));
        assert!(matches!(&r, Err(EngineError::Query(m)) if m.contains("refused before it reached the driver")), "{write}: {r:?}");
    }
    let capped = sqlite.run(&CompiledSql { sql: "SELECT id FROM main.orders".into(), params: vec![], dialect: "sqlite" }, Limits { max_rows: 5, timeout: Duration::from_secs(10) }).unwrap();
    assert_eq!((capped.rows.len(), capped.truncated), (5, true));
    // The dialect can be named instead.
    assert_eq!(open(&format!("{url}&dialect=ansi")).dialect().name, "ansi");
}

#[test]
fn postgres_through_adbc_answers_as_the_native_engine_and_stops_at_its_timeout() {
    let Some(schema) = PgSchema::create("adbcpg") else { return };
    let Some(url) = postgres_via_adbc(&schema.url) else { return };
    schema.exec(&format!(
        "CREATE TABLE \"{0}\".t (id integer PRIMARY KEY, amount numeric(12,2), day date, at timestamp, ok boolean, name text);
         INSERT INTO \"{0}\".t SELECT i, i * 1.25, DATE '2024-01-01' + i, TIMESTAMP '2024-01-01 08:00' + i * INTERVAL '1 hour', i % 2 = 0, 'n' || i FROM generate_series(1, 500) i;",
        schema.name
    ));
    let adbc = open(&url);
    assert_eq!(adbc.dialect().name, "postgres");
    assert!(adbc.describe().starts_with("PostgreSQL"), "{}", adbc.describe());
    let native = PostgresEngine::connect(&schema.url).unwrap();
    let catalog = adbc.introspect().unwrap();
    let t = &catalog.tables[&format!("{}.t", schema.name)];
    assert_eq!(t.primary_key, ["id"]);
    assert_eq!(t.columns.iter().map(|c| c.name.as_str()).collect::<Vec<_>>(), ["id", "amount", "day", "at", "ok", "name"]);
    let q = CompiledSql {
        sql: format!("SELECT day, at, amount, ok, name, sum(amount) OVER () FROM \"{}\".t WHERE day >= CAST($1 AS DATE) AND ok = $2 ORDER BY id", schema.name),
        params: vec![schemabrain::ir::Value::Date(chrono::NaiveDate::from_ymd_opt(2024, 6, 1).unwrap()), schemabrain::ir::Value::Bool(true)],
        dialect: "postgres",
    };
    let (a, n) = (adbc.run(&q, limits(30)).unwrap(), native.run(&q, limits(30)).unwrap());
    assert!(!n.rows.is_empty());
    assert!(crate::cross_engine::same_rows(&a.rows, &n.rows), "ADBC {:?}\nnative {:?}", &a.rows[..2], &n.rows[..2]);
    // The timeout stops the statement in the server.
    let started = Instant::now();
    let slow = CompiledSql { sql: "SELECT pg_sleep(30)".into(), params: vec![], dialect: "postgres" };
    let err = adbc.run(&slow, limits(1)).unwrap_err();
    assert!(matches!(err, EngineError::Timeout(_)), "{err:?}");
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    let running = native
        .run(&CompiledSql { sql: "SELECT count(*) FROM pg_stat_activity WHERE query = 'SELECT pg_sleep(30)' AND state = 'active'".into(), params: vec![], dialect: "postgres" }, limits(10))
        .unwrap()
        .rows;
    assert_eq!(running, vec![vec![serde_json::json!(0)]], "the sleep still runs on the server");
    assert_eq!(adbc.run(&CompiledSql { sql: "SELECT 1".into(), params: vec![], dialect: "postgres" }, limits(10)).unwrap().rows.len(), 1);
}

#[test]
fn an_unreachable_or_missing_adbc_source_is_an_error_within_seconds() {
    let Some(pg_driver) = adbc_driver("postgresql") else { return };
    let url = format!("adbc:{}?uri=postgresql://postgres@127.0.0.1:{}/test", pg_driver.display(), free_port());
    let started = Instant::now();
    let err = engine::open(&url).err().expect("nothing listens there");
    assert!(started.elapsed() < Duration::from_secs(5), "{:?}", started.elapsed());
    assert!(matches!(err, EngineError::Connect { .. }), "{err:?}");
    let missing = engine::open("adbc:/nowhere/libadbc_driver_x.so?uri=x").err().unwrap().to_string();
    assert!(missing.contains("cannot load the ADBC driver") && missing.contains("shared library"), "{missing}");
    let secret = engine::open(&format!("adbc:{}?uri=postgresql://u:hunter2@127.0.0.1:{}/db&password=hunter3", pg_driver.display(), free_port())).err().unwrap().to_string();
    assert!(!secret.contains("hunter2") && !secret.contains("hunter3"), "{secret}");
}
