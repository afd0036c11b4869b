//! The MySQL/MariaDB engine on a real server: read-only, an interrupting
//! timeout, the row cap, result types, parameters, introspection, and the
//! demo warehouse exported into it and queried with hand-written SQL.
//!
//! The corpus agreement (every oracle request through the `mysql` dialect)
//! waits for that dialect; these tests use SQL written for MariaDB.

use std::time::{Duration, Instant};

use serde_json::json;

use schemabrain::engine::{self, Engine, EngineError, Limits, MySqlEngine};
use schemabrain::ir::Value;
use schemabrain::sql::CompiledSql;

use crate::common::demo_engine;
use crate::engines_servers::MyDatabase;

fn sql(text: &str, params: Vec<Value>) -> CompiledSql {
    CompiledSql { sql: text.to_string(), params, dialect: "mysql" }
}

fn limits(max_rows: usize, timeout_ms: u64) -> Limits {
    Limits { max_rows, timeout: Duration::from_millis(timeout_ms) }
}

fn engine(db: &MyDatabase) -> MySqlEngine {
    MySqlEngine::connect(&db.url).expect("the engine connects")
}

#[test]
fn mysql_refuses_writes() {
    let Some(db) = MyDatabase::create("ro") else { return };
    db.exec(&format!("CREATE TABLE `{0}`.t (x INT); INSERT INTO `{0}`.t VALUES (1)", db.name));
    let my = engine(&db);
    for write in [format!("INSERT INTO `{}`.t VALUES (2)", db.name), format!("UPDATE `{}`.t SET x = 3", db.name), format!("DELETE FROM `{}`.t", db.name)] {
        let err = my.run(&sql(&write, vec![]), limits(10, 5_000)).expect_err("a write must fail");
        assert!(err.to_string().contains("READ ONLY"), "{write}: {err}");
    }
    let rs = my.run(&sql(&format!("SELECT x FROM `{}`.t", db.name), vec![]), limits(10, 5_000)).unwrap();
    assert_eq!(rs.rows, vec![vec![json!(1)]], "nothing changed, and the session still answers");
}

#[test]
fn mysql_timeout_interrupts_the_query() {
    let Some(db) = MyDatabase::create("timeout") else { return };
    let my = engine(&db);
    // The interrupt must land well before the statement would have ended:
    // within a quarter of its 30 s.
    let natural = Duration::from_secs(30);
    let started = Instant::now();
    let result = my.run(&sql("SELECT SLEEP(30) AS s", vec![]), limits(10, 200));
    assert!(started.elapsed() < natural / 4, "took {:?} of the statement's {natural:?}: the server did not stop the query", started.elapsed());
    let err = result.expect_err("must time out");
    assert!(matches!(err, EngineError::Timeout(_)), "{err}");
    let rs = my.run(&sql("SELECT SLEEP(0.3) AS s", vec![]), limits(10, 5_000)).unwrap();
    assert_eq!(rs.rows, vec![vec![json!(0)]], "the next query runs to its end");
}

#[test]
fn mysql_types_come_back_right() {
    let Some(db) = MyDatabase::create("types") else { return };
    db.exec(&format!(
        "CREATE TABLE `{0}`.t (i INT, b BIGINT, n DECIMAL(12,2), f DOUBLE, t TEXT, v VARCHAR(20), d DATE, ts DATETIME(6), ok BOOLEAN);
         INSERT INTO `{0}`.t VALUES (7, 9007199254740993, 1234.50, 0.25, 'héllo', 'x', '2024-02-29', '2024-03-01 08:09:10.5', TRUE),
         (NULL, NULL, -0.01, NULL, NULL, NULL, NULL, '2024-03-01 00:00:00', FALSE)",
        db.name
    ));
    let my = engine(&db);
    let rs = my.run(&sql(&format!("SELECT i, b, n, f, t, v, d, ts, ok, NULL AS nothing FROM `{}`.t ORDER BY i IS NULL, i", db.name), vec![]), limits(10, 5_000)).unwrap();
    let types: Vec<&str> = rs.columns.iter().map(|c| c.data_type.as_str()).collect();
    assert_eq!(types, ["int", "bigint", "decimal(12,2)", "double", "text", "varchar", "date", "datetime", "boolean", "null"]);
    assert_eq!(
        rs.rows[0],
        vec![json!(7), json!(9007199254740993i64), json!(1234.5), json!(0.25), json!("héllo"), json!("x"), json!("2024-02-29"), json!("2024-03-01 08:09:10.500"), json!(true), json!(null)]
    );
    assert_eq!(rs.rows[1][2], json!(-0.01));
    assert_eq!(rs.rows[1][7], json!("2024-03-01 00:00:00"));
    assert_eq!(rs.rows[1][8], json!(false));
    assert!(rs.rows[1].iter().enumerate().all(|(i, v)| [2, 7, 8].contains(&i) || v.is_null()), "{:?}", rs.rows[1]);
    // Parameters are `?`, bound as typed values; dates as ISO text cast in the SQL.
    let q = sql(
        &format!("SELECT count(*) AS n FROM `{}`.t WHERE n > ? AND v = ? AND d >= CAST(? AS DATE) AND ok = ? AND i < ?", db.name),
        vec![Value::Float(1000.0), Value::Text("x".into()), Value::Date(chrono::NaiveDate::from_ymd_opt(2024, 1, 1).unwrap()), Value::Bool(true), Value::Int(8)],
    );
    assert_eq!(my.run(&q, limits(10, 5_000)).unwrap().rows, vec![vec![json!(1)]]);
}

#[test]
fn mariadb_demo_export_introspects_and_answers_hand_written_sql() {
    let Some(db) = MyDatabase::create("demo") else { return };
    let started = Instant::now();
    let target = engine::export::Target::parse(&db.url, Some(&db.name)).unwrap();
    let report = engine::export::export(&demo_engine(), "main", &target).expect("export");
    // How long the export takes is a figure for benches/, not a bound here.
    eprintln!("exported the demo warehouse to MySQL/MariaDB in {:?}", started.elapsed());
    let loaded: std::collections::BTreeMap<String, u64> = report.tables.iter().cloned().collect();
    assert_eq!(loaded[&format!("{}.orders", db.name)], 120_000);
    assert!(loaded[&format!("{}.order_items", db.name)] > 300_000);

    let my = engine(&db);
    assert!(my.describe().starts_with("mariadb ") || my.describe().starts_with("mysql "), "{}", my.describe());
    let catalog = my.introspect().unwrap();
    let orders = &catalog.tables[&format!("{}.orders", db.name)];
    let types: Vec<(&str, &str)> = orders.columns.iter().map(|c| (c.name.as_str(), c.data_type.as_str())).collect();
    assert!(types.contains(&("amount", "decimal(12,2)")) && types.contains(&("is_gift", "boolean")) && types.contains(&("ordered_at", "datetime(6)")), "{types:?}");
    assert_eq!(orders.primary_key, ["id"]);
    let fks: Vec<(&str, &str)> = orders.foreign_keys.iter().map(|f| (f.columns[0].as_str(), f.ref_table.as_str())).collect();
    assert!(fks.contains(&("customer_id", "customers")) && fks.contains(&("store_id", "stores")), "{fks:?}");
    assert_eq!(orders.comment.as_deref(), Some("One row per order placed by a customer."));
    assert!(orders.row_count.is_some_and(|n| n > 50_000), "estimate {:?}", orders.row_count);

    // The same hand-written question on DuckDB and on the export agrees.
    let duck = demo_engine();
    let question = |schema: &str| {
        format!(
            "SELECT o.status, count(*) AS orders, sum(o.amount) AS revenue, sum(CASE WHEN o.is_gift THEN 1 ELSE 0 END) AS gifts, \
             min(o.ordered_at) AS first_at FROM {schema}.orders o LEFT JOIN {schema}.stores s ON s.id = o.store_id \
             WHERE o.amount >= ? GROUP BY o.status ORDER BY o.status"
        )
    };
    let ours = my.run(&sql(&question(&format!("`{}`", db.name)), vec![Value::Float(10.0)]), limits(100, 30_000)).unwrap();
    let duck_sql = CompiledSql { sql: question("main").replace('?', "$1"), params: vec![Value::Float(10.0)], dialect: "duckdb" };
    let theirs = duck.run(&duck_sql, limits(100, 30_000)).unwrap();
    assert_eq!(ours.rows.len(), 5);
    assert!(crate::cross_engine::same_rows(&ours.rows, &theirs.rows), "MariaDB {:?}\nDuckDB {:?}", ours.rows, theirs.rows);

    // The row cap holds on a big table, and the server stops there: a cross
    // join of the items with themselves (1.3e11 rows) ends at once.
    let started = Instant::now();
    let rs = my.run(&sql(&format!("SELECT a.id, b.id FROM `{0}`.order_items a CROSS JOIN `{0}`.order_items b", db.name), vec![]), limits(10, 20_000)).unwrap();
    assert!(started.elapsed() < Duration::from_secs(3), "took {:?}", started.elapsed());
    assert_eq!((rs.rows.len(), rs.truncated), (10, true));
    // A statement's own LIMIT below the cap is kept, and no cap is left on
    // the session for introspection.
    let rs = my.run(&sql(&format!("SELECT id FROM `{}`.order_items ORDER BY id LIMIT 3", db.name), vec![]), limits(10, 10_000)).unwrap();
    assert_eq!((rs.rows.len(), rs.truncated), (3, false));
    assert!(my.introspect().unwrap().tables.len() >= 8);
    let rs = my.run(&sql(&format!("SELECT id FROM `{}`.order_items ORDER BY id", db.name), vec![]), limits(5, 10_000)).unwrap();
    assert_eq!((rs.rows.len(), rs.truncated), (5, true));
    assert_eq!(rs.rows[4], vec![json!(5)]);
    let rs = my.run(&sql(&format!("SELECT id FROM `{}`.regions", db.name), vec![]), limits(8, 10_000)).unwrap();
    assert_eq!((rs.rows.len(), rs.truncated), (8, false), "exactly the cap is not truncated");
}

#[test]
fn mysql_and_mariadb_urls_open_through_engine_open() {
    let Some(db) = MyDatabase::create("open") else { return };
    for url in [db.url.clone(), db.url.replacen("mysql://", "mariadb://", 1)] {
        let engine = schemabrain::engine::open(&url).unwrap_or_else(|e| panic!("{url}: {e}"));
        let d = engine.describe();
        assert!(d.starts_with("mariadb ") || d.starts_with("mysql "), "{d}");
    }
    let err = schemabrain::engine::open("mysql://nobody@127.0.0.1:1/none").err().expect("nothing listens on port 1");
    assert!(matches!(err, EngineError::Connect { .. }), "{err}");
}

#[test]
fn mysql_engine_can_be_called_from_async_code() {
    let Some(db) = MyDatabase::create("async") else { return };
    let outer = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let my = outer.block_on(async { engine(&db) });
    let rows = outer.block_on(async { my.run(&sql("SELECT 40 + ? AS n", vec![Value::Int(2)]), limits(10, 5_000)).unwrap().rows });
    assert_eq!(rows, vec![vec![json!(42)]]);
}
