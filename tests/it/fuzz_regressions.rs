//! Replays every input under `fuzz/seeds/` and `fuzz/regressions/` (crashes
//! found by `fuzz/run.sh`, kept once fixed) on stable, in every test run,
//! through the fuzz targets' own bodies (`fuzz/bodies/*.rs`, compiled here
//! too, so a target that stops compiling fails the build): each must end in
//! an answer or a clean error, never a panic.

use std::path::PathBuf;

use schemabrain::tools::{self, Execution};

use crate::common::{demo_project, entries, repo};

#[path = "../../fuzz/bodies/dbt_import.rs"]
mod fuzz_dbt_import;
#[path = "../../fuzz/bodies/measure_expr.rs"]
mod fuzz_measure_expr;
#[path = "../../fuzz/bodies/model_yaml.rs"]
mod fuzz_model_yaml;
#[path = "../../fuzz/bodies/request_json.rs"]
mod fuzz_request_json;
#[path = "../../fuzz/bodies/sql_guard.rs"]
mod fuzz_sql_guard;

fn inputs(target: &str) -> Vec<PathBuf> {
    let mut all = Vec::new();
    for dir in ["fuzz/seeds", "fuzz/regressions"] {
        let d = repo(&format!("{dir}/{target}"));
        if d.is_dir() {
            all.extend(entries(&d, ""));
        }
    }
    all
}

#[test]
fn fuzz_inputs_end_in_an_answer_or_a_clean_error() {
    let targets: [(&str, fn(&[u8])); 5] = [
        ("model_yaml", fuzz_model_yaml::run),
        ("measure_expr", fuzz_measure_expr::run),
        ("sql_guard", fuzz_sql_guard::run),
        ("dbt_import", fuzz_dbt_import::run),
        ("request_json", fuzz_request_json::run),
    ];
    for (target, run) in targets {
        let files = inputs(target);
        assert!(!files.is_empty(), "the {target} seeds are there");
        for file in files {
            run(&std::fs::read(&file).unwrap());
        }
    }
    // What the SQL guard's fuzz inputs got admitted reads no blocked column.
    let duck = guard_oracle();
    for file in inputs("sql_guard") {
        if let Some((dialect, sql)) = fuzz_sql_guard::admitted(&std::fs::read(&file).unwrap()) {
            if let Err(e) = duck.execute_batch(&sql) {
                assert!(!e.to_string().contains(SENTINEL), "{}: admitted in {dialect} and reads customers.ssn:\n{sql}", file.display());
            }
        }
    }
    // The request corpus also through the tool layer, as an agent sends it.
    for file in inputs("request_json") {
        let Ok(args) = serde_json::from_slice::<serde_json::Value>(&std::fs::read(&file).unwrap()) else { continue };
        let mut args = args;
        if let Some(m) = args.as_object_mut() {
            m.insert("dry_run".into(), true.into());
        }
        let env = tools::call(demo_project(), "get_metric", &args, Execution::DryRun);
        let _ = serde_json::to_string(&env).unwrap();
    }
}

/// Raised by the oracle warehouse whenever a row's `customers.ssn` is read.
const SENTINEL: &str = "blocked column read: customers.ssn";

/// The SQL guard fuzz's catalog as a DuckDB warehouse whose `customers.ssn`
/// (blocked: a national id, the catastrophic floor) raises `SENTINEL` when
/// any row's value is read (a view column DuckDB computes only when a
/// statement uses it), whatever the statement does with it.
fn guard_oracle() -> duckdb::Connection {
    let duck = duckdb::Connection::open_in_memory().unwrap();
    duck.execute_batch(&format!(
        "CREATE TABLE customers_raw (id VARCHAR, email VARCHAR, ssn VARCHAR, country VARCHAR, date_of_birth VARCHAR);
         INSERT INTO customers_raw SELECT i::VARCHAR, 'u' || i || '@example.com', 'SSN-' || i, CASE WHEN i % 2 = 0 THEN 'DE' ELSE 'FR' END, '1990-01-0' || i FROM range(1, 6) t(i);
         CREATE VIEW customers AS SELECT id, email, CAST(error('{SENTINEL} ' || ssn) AS VARCHAR) AS ssn, country, date_of_birth FROM customers_raw;
         CREATE TABLE orders (id VARCHAR, customer_id VARCHAR, amount VARCHAR);
         INSERT INTO orders SELECT i::VARCHAR, (1 + i % 5)::VARCHAR, (i * 3)::VARCHAR FROM range(1, 11) t(i);"
    ))
    .unwrap();
    duck
}

/// Statements that read `customers.ssn`, each in another place of a query.
const READS_SSN: &[&str] = &[
    "SELECT ssn FROM customers",
    "SELECT * FROM customers",
    "SELECT c.* FROM main.customers c",
    "SELECT * EXCLUDE (email) FROM customers",
    "SELECT count(*) FROM customers WHERE ssn = 'SSN-1'",
    "SELECT id FROM customers ORDER BY ssn",
    "SELECT upper(ssn) FROM main.customers",
    "SELECT count(ssn) FROM customers",
    "SELECT count(DISTINCT ssn) FROM customers",
    "WITH t AS (SELECT ssn AS s FROM customers) SELECT s FROM t",
    "SELECT (SELECT max(ssn) FROM customers) AS x",
    "SELECT o.id FROM orders o JOIN customers c ON c.ssn = o.customer_id",
    "SELECT hash(c) FROM customers c",
    "SELECT c FROM customers c",
    "SELECT id FROM customers GROUP BY ssn, id",
    "SELECT id FROM customers UNION SELECT ssn FROM customers",
    "SELECT x.s FROM (SELECT ssn AS s FROM customers) x",
    "SELECT string_agg(ssn, ',') FROM customers",
    "SELECT id FROM customers QUALIFY row_number() OVER (PARTITION BY ssn ORDER BY id) = 1",
    "SELECT id FROM customers WHERE EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = customers.ssn)",
    "SELECT id || ssn FROM customers",
];

/// Statements that read no blocked column: admitted, and they run.
const CLEAN: &[&str] = &[
    "SELECT country, count(*) FROM customers GROUP BY country",
    "SELECT id, country FROM main.customers",
    "SELECT count(DISTINCT email) FROM customers",
    "SELECT o.amount, c.country FROM orders o JOIN customers c ON c.id = o.customer_id",
    "WITH t AS (SELECT id FROM customers) SELECT count(*) FROM t",
    "SELECT id FROM orders WHERE customer_id IN (SELECT id FROM customers WHERE country = 'DE')",
];

/// The SQL guard with the column check admits none of `READS_SSN` in any
/// dialect; each of them does read the column when run unguarded (the
/// oracle sees it), and every `CLEAN` one is admitted and runs.
#[test]
fn the_sql_guard_admits_no_statement_that_reads_a_blocked_column() {
    let duck = guard_oracle();
    let mut checked = 0;
    for sql in READS_SSN {
        let err = duck.execute_batch(sql).expect_err(sql).to_string();
        assert!(err.contains(SENTINEL), "the oracle does not see {sql} read ssn: {err}");
        for (d, dialect) in schemabrain::provider::guard::DIALECTS.iter().enumerate() {
            let input = [&[d as u8], sql.as_bytes()].concat();
            if let Some((_, text)) = fuzz_sql_guard::admitted(&input) {
                let ran = duck.execute_batch(&text);
                panic!("admitted in {dialect}: {sql}\n(as {text}); on the oracle warehouse: {ran:?}");
            }
            checked += 1;
        }
    }
    assert_eq!(checked, READS_SSN.len() * schemabrain::provider::guard::DIALECTS.len());
    for sql in CLEAN {
        let input = [&[0u8], sql.as_bytes()].concat();
        let (_, text) = fuzz_sql_guard::admitted(&input).unwrap_or_else(|| panic!("refused: {sql}"));
        duck.execute_batch(&text).unwrap_or_else(|e| panic!("{text}: {e}"));
    }
}
