//! The DataFusion engine on the demo warehouse exported to Parquet and to
//! CSV: directories as tables, types and JSON exactly as DuckDB answers them,
//! parameters, the row cap, a timeout that stops the query, no writes, clear
//! errors for bad directories, awkward text; validation against empty
//! tables; and why the `datafusion` profile has median but no percentile.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use serde_json::json;

use schemabrain::engine::{self, DataFusionEngine, Engine, EngineError, Limits};
use schemabrain::ir::Value;
use schemabrain::sql::CompiledSql;

use crate::common::demo_engine;

fn sql(text: &str, params: Vec<Value>) -> CompiledSql {
    CompiledSql { sql: text.to_string(), params, dialect: "datafusion" }
}

fn limits(max_rows: usize, timeout_ms: u64) -> Limits {
    Limits { max_rows, timeout: Duration::from_millis(timeout_ms) }
}

/// The demo warehouse exported once per test run to `DIR/<table>.parquet`
/// (or `.csv`); returns the `parquet:DIR` / `csv:DIR` source URL.
pub fn demo_files(format: &str) -> String {
    static PARQUET: OnceLock<PathBuf> = OnceLock::new();
    static CSV: OnceLock<PathBuf> = OnceLock::new();
    let cell = if format == "csv" { &CSV } else { &PARQUET };
    let dir = cell.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(crate::engines_servers::unique_name(format));
        let target = engine::export::Target::parse(&format!("{format}:{}", dir.display()), None).unwrap();
        let report = engine::export::export(&demo_engine(), "main", &target).expect("export");
        assert_eq!(report.tables.len(), demo_tables());
        dir
    });
    format!("{format}:{}", dir.display())
}

/// How many tables the demo warehouse has in `main`.
fn demo_tables() -> usize {
    let catalog = demo_engine().introspect().expect("introspects");
    let n = catalog.tables.values().filter(|t| t.schema == "main").count();
    assert!(n >= 8, "the demo warehouse shrank to {n} tables");
    n
}

fn open(format: &str) -> DataFusionEngine {
    DataFusionEngine::open(&demo_files(format)).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn datafusion_reads_every_file_as_a_main_table() {
    for format in ["parquet", "csv"] {
        let df = open(format);
        let catalog = df.introspect().expect("introspects");
        assert!(catalog.engine.starts_with("datafusion 54."), "{}", catalog.engine);
        let names: Vec<&str> = catalog.tables.keys().map(String::as_str).collect();
        assert_eq!(names.len(), demo_tables(), "{names:?}");
        assert!(names.iter().all(|n| n.starts_with("main.")), "{names:?}");
        let orders = &catalog.tables["main.orders"];
        let types: std::collections::BTreeMap<&str, &str> = orders.columns.iter().map(|c| (c.name.as_str(), c.data_type.as_str())).collect();
        assert_eq!(types["ordered_at"], "timestamp", "{format}");
        assert_eq!(types["is_gift"], "boolean", "{format}");
        assert_eq!(types["status"], "varchar", "{format}");
        if format == "parquet" {
            // The footers carry DuckDB's types and the row count.
            assert_eq!(types["amount"], "decimal(12,2)");
            assert_eq!(orders.row_count, Some(120_000));
        } else {
            // CSV has no types: numbers with a point are inferred as doubles.
            assert_eq!(types["amount"], "double");
            assert_eq!(orders.row_count, None);
        }
        let count = df.run(&sql("SELECT count(*) AS n FROM main.orders", vec![]), limits(10, 30_000)).unwrap();
        assert_eq!(count.rows, vec![vec![json!(120_000)]], "{format}");
    }
}

#[test]
fn datafusion_answers_the_same_json_as_duckdb() {
    let duck = demo_engine();
    let df = open("parquet");
    // Every type of the demo: integers, NULLs, text, timestamps, decimals, booleans, dates.
    let orders = "SELECT id, store_id, status, ordered_at, amount, discount, is_gift FROM main.orders ORDER BY id LIMIT 300";
    let customers = "SELECT * FROM main.customers ORDER BY 1 LIMIT 300";
    for q in [orders, customers] {
        let a = duck.run(&CompiledSql { sql: q.into(), params: vec![], dialect: "duckdb" }, limits(1000, 30_000)).unwrap();
        let b = df.run(&sql(q, vec![]), limits(1000, 30_000)).unwrap();
        assert_eq!(a.rows.len(), 300);
        assert_eq!(b.columns, a.columns, "{q}");
        assert_eq!(b.rows, a.rows, "{q}");
    }
    assert!(duck.run(&CompiledSql { sql: orders.into(), params: vec![], dialect: "duckdb" }, limits(1000, 30_000)).unwrap().rows.iter().any(|r| r[1].is_null()));
    // Computed values too: a decimal sum, a date bucket, a cast to date.
    let q = "SELECT CAST(date_trunc('month', ordered_at) AS DATE) AS m, sum(amount) AS s, count(*) AS n \
             FROM main.orders GROUP BY 1 ORDER BY 1 LIMIT 5";
    let a = duck.run(&CompiledSql { sql: q.into(), params: vec![], dialect: "duckdb" }, limits(1000, 30_000)).unwrap();
    let b = df.run(&sql(q, vec![]), limits(1000, 30_000)).unwrap();
    assert_eq!(b.rows, a.rows);
    assert!(a.rows[0][0].as_str().unwrap().ends_with("-01"), "{:?}", a.rows[0]);
}

#[test]
fn datafusion_binds_parameters_of_every_type() {
    let duck = demo_engine();
    let df = open("parquet");
    let q = "SELECT count(*) AS n, sum(amount) AS s FROM main.orders WHERE status = $1 AND amount >= $2 AND discount < $3 \
             AND ordered_at >= CAST($4 AS TIMESTAMP) AND CAST(ordered_at AS DATE) < CAST($5 AS DATE) AND is_gift = $6";
    let params = vec![
        Value::Text("delivered".into()),
        Value::Int(20),
        Value::Float(50.5),
        Value::Timestamp(chrono::NaiveDate::from_ymd_opt(2023, 3, 1).unwrap().and_hms_opt(6, 0, 0).unwrap()),
        Value::Date(chrono::NaiveDate::from_ymd_opt(2024, 6, 1).unwrap()),
        Value::Bool(false),
    ];
    let a = duck.run(&CompiledSql { sql: q.into(), params: params.clone(), dialect: "duckdb" }, limits(10, 30_000)).unwrap();
    let b = df.run(&sql(q, params), limits(10, 30_000)).unwrap();
    assert!(a.rows[0][0].as_i64().unwrap() > 0, "{:?}", a.rows);
    assert_eq!(b.rows, a.rows);
    // A missing parameter is an error, not a panic.
    let err = df.run(&sql("SELECT count(*) FROM main.orders WHERE id > $1", vec![]), limits(10, 30_000)).unwrap_err();
    assert!(matches!(err, EngineError::Query(_)) && err.to_string().contains("$1"), "{err}");
}

#[test]
fn datafusion_row_cap_truncates() {
    let df = open("parquet");
    let rs = df.run(&sql("SELECT id FROM main.orders", vec![]), limits(10, 30_000)).unwrap();
    assert_eq!(rs.rows.len(), 10);
    assert!(rs.truncated);
    let rs = df.run(&sql("SELECT DISTINCT status FROM main.orders", vec![]), limits(5, 30_000)).unwrap();
    assert_eq!(rs.rows.len(), 5);
    assert!(!rs.truncated, "exactly the cap is not truncated");
}

#[test]
fn datafusion_timeout_stops_the_query() {
    let df = open("parquet");
    // 14.4 billion pairs: minutes of work, unless the timeout stops it. The
    // same statement on a ten-thousandth of the pairs, timed first, says how
    // long the whole would take on this machine now: the timed-out call must
    // be back within two hundred of those (a fiftieth of the whole).
    let pairs = |b: &str| sql(&format!("SELECT sum(a.id * b.id) FROM main.orders a CROSS JOIN {b} b WHERE a.amount + b.amount > 0"), vec![]);
    let sample = Instant::now();
    df.run(&pairs("(SELECT * FROM main.orders LIMIT 12)"), limits(10, 600_000)).expect("the sample runs");
    let part = sample.elapsed();
    let slow = pairs("main.orders");
    let started = Instant::now();
    let err = df.run(&slow, limits(10, 300)).unwrap_err();
    let took = started.elapsed();
    assert!(matches!(err, EngineError::Timeout(_)), "{err}");
    eprintln!("DataFusion: a ten-thousandth of the statement ran in {part:?}; the timeout returned after {took:?}");
    assert!(took < part * 200, "took {took:?}; a ten-thousandth of the statement ran in {part:?}");
    // Stopped, not abandoned: every task of the query ends.
    let deadline = Instant::now() + Duration::from_secs(5);
    while df.running_tasks() > 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(df.running_tasks(), 0, "the interrupted query still runs");
    eprintln!("timeout after {took:?}; every task of the query ended {:?} after the call began", started.elapsed());
    let rs = df.run(&sql("SELECT 40 + $1 AS n", vec![Value::Int(2)]), limits(10, 5_000)).unwrap();
    assert_eq!(rs.rows, vec![vec![json!(42)]]);
}

#[test]
fn datafusion_refuses_every_write() {
    let df = open("parquet");
    let out = Path::new(env!("CARGO_TARGET_TMPDIR")).join(crate::engines_servers::unique_name("df-write"));
    let writes = [
        format!("COPY (SELECT 1 AS x) TO '{}.csv'", out.display()),
        format!("COPY main.orders TO '{}.parquet'", out.display()),
        "INSERT INTO main.orders SELECT * FROM main.orders".to_string(),
        "CREATE TABLE main.t AS SELECT 1 AS x".to_string(),
        format!("CREATE EXTERNAL TABLE t2 STORED AS CSV LOCATION '{}'", out.display()),
        "DROP TABLE main.orders".to_string(),
        "SET datafusion.execution.batch_size = 1".to_string(),
    ];
    for w in &writes {
        let err = df.run(&sql(w, vec![]), limits(10, 5_000)).unwrap_err();
        assert!(matches!(err, EngineError::Query(_)), "{w}: {err}");
        assert!(err.to_string().contains("not supported") || err.to_string().contains("not allowed"), "{w}: {err}");
    }
    for ext in ["csv", "parquet"] {
        assert!(!out.with_extension(ext).exists(), "a {ext} file was written");
    }
    let rs = df.run(&sql("SELECT count(*) FROM main.orders", vec![]), limits(10, 30_000)).unwrap();
    assert_eq!(rs.rows, vec![vec![json!(120_000)]]);
}

#[test]
fn datafusion_reads_a_directory_of_files_as_one_table() {
    let parquet = demo_files("parquet");
    let src = Path::new(parquet.strip_prefix("parquet:").unwrap());
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(crate::engines_servers::unique_name("df-parts"));
    std::fs::create_dir_all(dir.join("orders_parts/year=x")).unwrap();
    std::fs::copy(src.join("orders.parquet"), dir.join("orders_parts/part-0.parquet")).unwrap();
    std::fs::copy(src.join("orders.parquet"), dir.join("orders_parts/year=x/part-1.parquet")).unwrap();
    std::fs::copy(src.join("stores.parquet"), dir.join("stores.parquet")).unwrap();
    std::fs::write(dir.join("notes.txt"), "not a table").unwrap();
    std::fs::create_dir_all(dir.join("empty")).unwrap();
    let df = engine::open(&format!("parquet:{}", dir.display())).expect("opens");
    let catalog = df.introspect().unwrap();
    assert_eq!(catalog.tables.keys().collect::<Vec<_>>(), ["main.orders_parts", "main.stores"]);
    let rs = df.run(&sql("SELECT count(*) FROM main.orders_parts", vec![]), limits(10, 30_000)).unwrap();
    assert_eq!(rs.rows, vec![vec![json!(240_000)]]);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn bad_directory_sources_are_clear_errors() {
    let base = Path::new(env!("CARGO_TARGET_TMPDIR")).join(crate::engines_servers::unique_name("df-bad"));
    let connect = |url: String| -> String {
        match engine::open(&url) {
            Err(e @ EngineError::Connect { .. }) => e.to_string(),
            Err(e) => panic!("{url}: not a connect error: {e}"),
            Ok(_) => panic!("{url} opened"),
        }
    };
    let msg = connect(format!("parquet:{}", base.join("missing").display()));
    assert!(msg.contains("no directory at"), "{msg}");
    std::fs::create_dir_all(base.join("empty")).unwrap();
    let msg = connect(format!("csv:{}", base.join("empty").display()));
    assert!(msg.contains("no *.csv files"), "{msg}");
    std::fs::create_dir_all(base.join("clash/t")).unwrap();
    std::fs::write(base.join("clash/t/a.csv"), "x\n1\n").unwrap();
    std::fs::write(base.join("clash/t.csv"), "x\n1\n").unwrap();
    let msg = connect(format!("csv:{}", base.join("clash").display()));
    assert!(msg.contains("would both be table `main.t`"), "{msg}");
    std::fs::create_dir_all(base.join("corrupt")).unwrap();
    std::fs::write(base.join("corrupt/broken.parquet"), "this is not parquet").unwrap();
    let msg = connect(format!("parquet:{}", base.join("corrupt").display()));
    assert!(msg.contains("broken.parquet"), "{msg}");
    let err = engine::open("parquet").err().expect("not a source");
    assert!(err.to_string().contains("parquet:DIR, csv:DIR") && err.to_string().contains("sc://HOST:PORT"), "{err}");
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn relative_directories_resolve_against_the_project() {
    let base = Path::new("/projects/shop");
    assert_eq!(engine::resolve_source("parquet:lake", base), "parquet:/projects/shop/lake");
    assert_eq!(engine::resolve_source("csv:../exports", base), "csv:/projects/shop/../exports");
    assert_eq!(engine::resolve_source("parquet:/abs/lake", base), "parquet:/abs/lake");
    assert_eq!(engine::resolve_source("duckdb:w.duckdb", base), "duckdb:/projects/shop/w.duckdb");
}

#[test]
fn datafusion_engine_can_be_called_from_async_code() {
    fn shareable<T: Send + Sync + 'static>() {}
    shareable::<DataFusionEngine>();
    let df = open("parquet");
    let outer = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let rows = outer.block_on(async { df.run(&sql("SELECT count(*) FROM main.stores", vec![]), limits(10, 5_000)).unwrap().rows });
    assert_eq!(rows.len(), 1);
    let catalog = outer.block_on(async { df.introspect().unwrap() });
    assert_eq!(catalog.tables.len(), demo_tables());
    // Opened and dropped inside async code: no "cannot drop a runtime" panic.
    outer.block_on(async {
        let inner = open("parquet");
        assert!(inner.run(&sql("SELECT 1", vec![]), limits(10, 5_000)).is_ok());
        drop(inner);
    });
}

#[test]
fn datafusion_validates_against_empty_tables_of_the_model() {
    let model = &crate::common::demo_project().model;
    let df = DataFusionEngine::empty_like(model).expect("empty tables");
    df.validate(&sql("SELECT o.status, sum(o.amount) FROM main.orders AS o WHERE o.amount > $1 GROUP BY 1", vec![Value::Int(3)])).expect("valid");
    let bad = [
        ("SELECT sum(status) FROM main.orders", "Sum"),
        ("SELECT nope FROM main.orders", "nope"),
        ("SELECT * FROM main.no_such_table", "no_such_table"),
        ("SELECT status FROM main.orders GROUP BY id", "status"),
    ];
    let mut wrong = Vec::new();
    for (q, needle) in bad {
        match df.validate(&sql(q, vec![])) {
            Err(e) if e.to_string().to_ascii_lowercase().contains(&needle.to_ascii_lowercase()) => {}
            other => wrong.push(format!("{q}: {other:?}")),
        }
    }
    assert!(wrong.is_empty(), "{wrong:#?}");
}

#[test]
fn cli_exports_the_demo_to_csv_and_queries_it_with_datafusion() {
    use std::process::Command;
    let bin = env!("CARGO_BIN_EXE_schemabrain");
    let warehouse_dir = crate::common::demo_warehouse().parent().unwrap().to_path_buf();
    let files = Path::new(env!("CARGO_TARGET_TMPDIR")).join(crate::engines_servers::unique_name("cli-csv"));
    let out = Command::new(bin)
        .args(["export", "--to", &format!("csv:{}", files.display()), "--project", &warehouse_dir.display().to_string()])
        .output()
        .expect("binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "stdout:\n{stdout}\nstderr:\n{}", String::from_utf8_lossy(&out.stderr));
    assert!(stdout.contains("orders.csv: 120000 rows"), "{stdout}");

    // A copy of the project: the query writes its catalog snapshot there.
    let project = files.with_extension("project");
    schemabrain::demo::materialize(&project).expect("materialize");
    let out = Command::new(bin)
        .args(["query", "order_count", "--project", &project.display().to_string(), "--source", &format!("csv:{}", files.display())])
        .args(["--dialect", "datafusion", "--group-by", "order.status", "--json"])
        .output()
        .expect("binary runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    let env: serde_json::Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(env["data"]["dialect"], "datafusion");
    let rows = env["data"]["rows"].as_array().unwrap();
    assert_eq!(rows.len(), 5, "{stdout}");
    assert_eq!(rows.iter().map(|r| r[1].as_i64().unwrap()).sum::<i64>(), 120_000);
    assert!(project.join(".schemabrain/catalog.json").is_file(), "the snapshot goes to the project");
    let _ = std::fs::remove_dir_all(&files);
    let _ = std::fs::remove_dir_all(&project);
}

/// Why the `datafusion` dialect profile writes medians as `median` but
/// refuses percentiles: DataFusion 54's `median` is exact, while its
/// `percentile_cont` (alias `quantile_cont`) truncates the interpolation
/// weight to millionths (`INTERPOLATION_PRECISION` in
/// datafusion-functions-aggregate), an error of up to 1e-6 of the gap
/// between the two neighbouring values, which DuckDB's and Postgres's do not
/// make. When this test fails because the two agree, DataFusion has become
/// exact: switch the profile to `Percentile::WithinGroup`.
#[test]
fn datafusion_median_is_exact_and_its_percentile_is_not() {
    let duck = demo_engine();
    let df = open("parquet");
    let on_duck = "SELECT status, median(CAST(amount AS DOUBLE PRECISION)), quantile_cont(CAST(amount AS DOUBLE PRECISION), 0.9) \
                   FROM main.orders GROUP BY status ORDER BY status";
    let on_df = "SELECT status, median(CAST(amount AS DOUBLE PRECISION)), percentile_cont(0.9) WITHIN GROUP (ORDER BY amount ASC) \
                 FROM main.orders GROUP BY status ORDER BY status";
    let a = duck.run(&CompiledSql { sql: on_duck.into(), params: vec![], dialect: "duckdb" }, limits(100, 30_000)).unwrap();
    let b = df.run(&sql(on_df, vec![]), limits(100, 30_000)).unwrap();
    assert_eq!(a.rows.len(), 5);
    let column = |rows: &[Vec<serde_json::Value>], i: usize| -> Vec<serde_json::Value> { rows.iter().map(|r| r[i].clone()).collect() };
    assert_eq!(column(&b.rows, 1), column(&a.rows, 1), "median: exact on both");
    let exact = a.rows.iter().map(|r| r[2].as_f64().unwrap());
    let quantized = b.rows.iter().map(|r| r[2].as_f64().unwrap());
    let worst = exact.zip(quantized).map(|(x, y)| (x - y).abs() / x.abs()).fold(0.0, f64::max);
    assert!(worst > 1e-9, "percentile_cont now agrees with DuckDB (worst relative error {worst:e}): make the profile use it");
    assert!(worst < 1e-6, "percentile_cont is off by more than its quantization explains: {worst:e}");
}

/// Awkward text survives Parquet byte for byte, and CSV too except that CSV
/// cannot tell an empty string from NULL (both are an empty field).
#[test]
fn awkward_text_survives_parquet_and_csv() {
    let values = ["it's", "back\\slash", "tab\there", "line\nbreak\r\n", "\\N", "ünï 😀", "", "'; DROP TABLE t; --", "comma, \"quoted\""];
    let mut batch = String::from("CREATE TABLE main.t (id INTEGER PRIMARY KEY, s VARCHAR, n DECIMAL(10,2), d DATE, ok BOOLEAN);\n");
    for (i, v) in values.iter().enumerate() {
        batch.push_str(&format!("INSERT INTO main.t VALUES ({i}, '{}', {i}.25, DATE '2024-01-01' + {i}, {});\n", v.replace('\'', "''"), i % 2 == 0));
    }
    batch.push_str("INSERT INTO main.t VALUES (99, NULL, NULL, NULL, NULL);\n");
    let duck = schemabrain::engine::DuckDbEngine::in_memory(&batch).unwrap();
    let select = "SELECT id, s, n, d, ok FROM main.t ORDER BY id";
    let expected = duck.run(&CompiledSql { sql: select.into(), params: vec![], dialect: "duckdb" }, limits(100, 5_000)).unwrap().rows;
    assert_eq!(expected.len(), values.len() + 1);
    for format in ["parquet", "csv"] {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(crate::engines_servers::unique_name(&format!("awkward-{format}")));
        let url = format!("{format}:{}", dir.display());
        engine::export::export(&duck, "main", &engine::export::Target::parse(&url, None).unwrap()).expect("export");
        let df = DataFusionEngine::open(&url).unwrap_or_else(|e| panic!("{e}"));
        let rows = df.run(&sql(select, vec![]), limits(100, 5_000)).unwrap().rows;
        let mut want = expected.clone();
        if format == "csv" {
            want[6][1] = serde_json::Value::Null;
        }
        assert_eq!(rows, want, "{format}");
        let _ = std::fs::remove_dir_all(&dir);
    }
}
