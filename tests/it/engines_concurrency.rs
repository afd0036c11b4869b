//! Engines shared without a lock: while one call's query runs, another call
//! on the same engine answers; a cancelled call is stopped in the engine
//! itself (Postgres cancel request, MySQL `KILL QUERY`, DuckDB interrupt,
//! DataFusion task abort), checked from the engine's side, not just
//! abandoned; and the engine answers again afterwards.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;

use schemabrain::engine::{Cancel, DataFusionEngine, Engine, EngineError, Limits, MySqlEngine, PostgresEngine};
use schemabrain::sql::CompiledSql;

use crate::common::demo_engine;
use crate::engines_datafusion::demo_files;
use crate::engines_servers::{MyDatabase, PgSchema};

fn sql(text: &str, dialect: &'static str) -> CompiledSql {
    CompiledSql { sql: text.to_string(), params: vec![], dialect }
}

fn limits(timeout_s: u64) -> Limits {
    Limits { max_rows: 100, timeout: Duration::from_secs(timeout_s) }
}

/// Runs `long` on a thread of its own; once it is under way, `short` must
/// answer on the same engine while `long` still runs; then `long` is
/// cancelled and must come back `Cancelled` within `within` of the cancel
/// (a fraction of what `long` would take to finish), else the test fails
/// right away (the runner is left to end on its own). Returns how long the
/// call took to come back after the cancel.
fn side_by_side_then_cancel(engine: Arc<dyn Engine>, long: CompiledSql, short: CompiledSql, started: impl Fn() -> bool, within: Duration) -> Duration {
    let cancel = Cancel::new();
    let long_done = Arc::new(AtomicBool::new(false));
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    let runner = {
        let (engine, cancel, long_done) = (engine.clone(), cancel.clone(), long_done.clone());
        std::thread::spawn(move || {
            let result = engine.execute(&long, limits(600), &cancel);
            long_done.store(true, Ordering::SeqCst);
            let _ = done_tx.send(());
            result
        })
    };
    let deadline = Instant::now() + Duration::from_secs(20);
    while !started() {
        assert!(Instant::now() < deadline, "the long query never showed up as running");
        assert!(!long_done.load(Ordering::SeqCst), "the long query ended before it was seen: {:?}", runner.join().unwrap().err());
        std::thread::sleep(Duration::from_millis(50));
    }
    let rs = engine.execute(&short, limits(20), &Cancel::never()).expect("the short query answers beside the long one");
    assert_eq!(rs.rows, vec![vec![json!(42)]]);
    assert!(!long_done.load(Ordering::SeqCst), "the short query waited for the long one to end");
    let cancelled_at = Instant::now();
    cancel.cancel();
    // The call must come back well before the statement would have ended:
    // a `Cancelled` that only arrives when the statement finishes anyway
    // was never stopped in the engine.
    let returned = done_rx.recv_timeout(within);
    let took = cancelled_at.elapsed();
    assert!(returned.is_ok(), "the cancelled call had not returned {took:?} after the cancel (bound {within:?}): the engine did not stop the query");
    let result = runner.join().expect("the runner thread");
    assert!(matches!(result, Err(EngineError::Cancelled)), "{:?}", result.map(|r| r.rows));
    eprintln!("cancelled; the call returned {took:?} after the cancel (bound {within:?})");
    // The engine keeps answering after a cancellation.
    let rs = engine.execute(&short, limits(20), &Cancel::never()).expect("the engine answers after a cancel");
    assert_eq!(rs.rows, vec![vec![json!(42)]]);
    took
}

#[test]
fn duckdb_runs_calls_side_by_side_and_interrupts_a_cancelled_one() {
    let duck: Arc<dyn Engine> = Arc::new(demo_engine());
    // Ten billion pairs: minutes of work unless interrupted. The same
    // statement on a thousandth of the pairs, timed here, says how long the
    // whole would take on this machine now: the cancelled call must return
    // within ten thousandths, a hundredth of the whole (relative, so a busy
    // machine slows both sides).
    let pairs = |n: u32| sql(&format!("SELECT sum(a.range * b.range) FROM range(100000) a, range({n}) b"), "duckdb");
    let sample = Instant::now();
    duck.execute(&pairs(100), limits(600), &Cancel::never()).expect("the sample runs");
    let thousandth = sample.elapsed();
    let t0 = Instant::now();
    let took = side_by_side_then_cancel(duck, pairs(100_000), sql("SELECT 42 AS n", "duckdb"), || t0.elapsed() > Duration::from_millis(300), thousandth * 10);
    eprintln!("DuckDB: a thousandth of the statement ran in {thousandth:?}; the cancel landed after {took:?}");
}

#[test]
fn datafusion_runs_calls_side_by_side_and_aborts_a_cancelled_one() {
    let df = Arc::new(DataFusionEngine::open(&demo_files("parquet")).expect("opens"));
    let long = sql("SELECT sum(a.id * b.id) FROM main.orders a CROSS JOIN main.orders b WHERE a.amount + b.amount > 0", "datafusion");
    let watched = df.clone();
    // The cross join of the orders runs for minutes; a tenth of a minute
    // is far below it.
    side_by_side_then_cancel(df.clone(), long, sql("SELECT 42 AS n", "datafusion"), move || watched.running_tasks() > 0, Duration::from_secs(6));
    // Aborted, not abandoned: every task of the query ends.
    let deadline = Instant::now() + Duration::from_secs(10);
    while df.running_tasks() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(df.running_tasks(), 0, "the cancelled query still runs");
}

#[test]
fn postgres_runs_calls_side_by_side_and_cancels_on_the_server() {
    let Some(schema) = PgSchema::create("cancel") else { return };
    let pg: Arc<dyn Engine> = Arc::new(PostgresEngine::connect(&schema.url).expect("connects"));
    let marker = format!("sb_cancel_{}", schema.name);
    let long = sql(&format!("SELECT pg_sleep(60) AS {marker}"), "postgres");
    // A second engine looks at the server's own list of running queries.
    let observer = PostgresEngine::connect(&schema.url).expect("connects");
    let running = move || -> i64 {
        let probe = sql(&format!("SELECT count(*)::int8 AS n FROM pg_stat_activity WHERE state = 'active' AND query LIKE '%AS {marker}'"), "postgres");
        observer.run(&probe, limits(10)).expect("pg_stat_activity").rows[0][0].as_i64().unwrap()
    };
    // pg_sleep(60): the cancel must land within a tenth of it.
    side_by_side_then_cancel(pg, long, sql("SELECT 42 AS n", "postgres"), || running() == 1, Duration::from_secs(6));
    assert_eq!(running(), 0, "the cancelled query still runs on the server");
}

#[test]
fn mysql_runs_calls_side_by_side_and_kills_a_cancelled_query() {
    let Some(db) = MyDatabase::create("cancel") else { return };
    let my: Arc<dyn Engine> = Arc::new(MySqlEngine::connect(&db.url).expect("connects"));
    let marker = format!("sb_cancel_{}", db.name);
    let long = sql(&format!("SELECT SLEEP(60) AS {marker}"), "mysql");
    let observer = MySqlEngine::connect(&db.url).expect("connects");
    let running = move || -> i64 {
        let probe = sql(&format!("SELECT count(*) AS n FROM information_schema.PROCESSLIST WHERE COMMAND = 'Execute' AND INFO LIKE '%AS {marker}'"), "mysql");
        observer.run(&probe, limits(10)).expect("processlist").rows[0][0].as_i64().unwrap()
    };
    // SLEEP(60): the cancel must land within a tenth of it.
    side_by_side_then_cancel(my, long, sql("SELECT 42 AS n", "mysql"), || running() == 1, Duration::from_secs(6));
    assert_eq!(running(), 0, "the cancelled query still runs on the server");
}
