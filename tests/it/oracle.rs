//! Answers on the demo warehouse against hand-written SQL: each file in
//! `tests/oracle/` holds a get_metric request and SQL written by hand from
//! the definitions; both run on DuckDB and must return the same rows
//! (numbers within a relative 1e-9, order compared only where the request
//! fixes it).

use serde_json::Value as Json;

use schemabrain::engine::Engine;
use schemabrain::envelope::Status;
use schemabrain::sql::CompiledSql;
use schemabrain::tools::{self, Execution};

use crate::common::{demo_engine, demo_project_with_catalog, entries, limits, repo, yaml_file_as_json};

fn same_value(a: &Json, b: &Json) -> bool {
    match (a, b) {
        (Json::Number(x), Json::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap(), y.as_f64().unwrap());
            (x - y).abs() <= 1e-9 * x.abs().max(y.abs()).max(1.0)
        }
        _ => a == b,
    }
}

fn same_rows(a: &[Vec<Json>], b: &[Vec<Json>]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(r, s)| r.len() == s.len() && r.iter().zip(s).all(|(x, y)| same_value(x, y)))
}

fn sorted(mut rows: Vec<Vec<Json>>) -> Vec<Vec<Json>> {
    rows.sort_by_key(|r| serde_json::to_string(r).unwrap());
    rows
}

#[test]
fn planner_answers_equal_hand_written_sql() {
    let project = demo_project_with_catalog();
    let engine = demo_engine();
    let cases = entries(&repo("tests/oracle"), ".yaml");
    assert!(cases.len() >= 14, "only {} oracle cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let name = case.file_name().unwrap().to_string_lossy().to_string();
        let spec = yaml_file_as_json(case);
        let env = tools::call(project, "get_metric", &spec["request"], Execution::run(&engine, limits()));
        if env.status() != Status::Success {
            failures.push(format!("{name}: status {:?}: {}", env.status(), serde_json::to_string(&env).unwrap()));
            continue;
        }
        let data = env.data().unwrap();
        let ours: Vec<Vec<Json>> = serde_json::from_value(data["rows"].clone()).unwrap();
        let hand = CompiledSql { sql: spec["sql"].as_str().unwrap().to_string(), params: Vec::new(), dialect: "duckdb" };
        let theirs = engine.run(&hand, limits()).unwrap_or_else(|e| panic!("{name}: hand SQL fails: {e}")).rows;
        assert!(!theirs.is_empty(), "{name}: the hand-written SQL returns no rows, so it proves nothing");
        let ordered = spec["ordered"].as_bool().unwrap_or(false);
        let equal = if ordered { same_rows(&ours, &theirs) } else { same_rows(&sorted(ours.clone()), &sorted(theirs.clone())) };
        if !equal {
            failures.push(format!(
                "{name}: {} rows from the planner, {} by hand; first rows\n  planner: {:?}\n  by hand: {:?}\n  sql: {}",
                ours.len(),
                theirs.len(),
                ours.iter().take(3).collect::<Vec<_>>(),
                theirs.iter().take(3).collect::<Vec<_>>(),
                data["sql"].as_str().unwrap()
            ));
        }
    }
    assert!(failures.is_empty(), "{} oracle mismatches:\n{}", failures.len(), failures.join("\n"));
}

#[test]
fn result_columns_are_named_typed_and_in_role_order() {
    let project = demo_project_with_catalog();
    let engine = demo_engine();
    let args = serde_json::json!({"name": "revenue", "time_grain": "month", "group_by": ["customer.country"], "limit": 3});
    let env = tools::call(project, "get_metric", &args, Execution::run(&engine, limits()));
    let data = env.data().expect("data");
    let cols = data["columns"].as_array().unwrap();
    let triples: Vec<(&str, &str, &str)> =
        cols.iter().map(|c| (c["name"].as_str().unwrap(), c["type"].as_str().unwrap(), c["role"].as_str().unwrap())).collect();
    assert_eq!(
        triples,
        vec![
            ("order.ordered_at__month", "timestamp", "time"),
            ("customer.country", "varchar", "dimension"),
            ("revenue", "decimal(38,2)", "metric")
        ]
    );
    assert_eq!(data["row_count"], 3);
    // 36 months × many countries: the limit of 3 cut rows off, and says so.
    assert_eq!(data["truncated"], true);
    assert_eq!(data["params"], serde_json::json!(["cancelled"]));
}

#[test]
fn row_cap_truncates_and_says_so() {
    let project = demo_project_with_catalog();
    let engine = demo_engine();
    // The limit (2000) keeps every day; only the engine's row cap cuts.
    let args = serde_json::json!({"name": "order_count", "time_grain": "day", "limit": 2000});
    let mut l = limits();
    l.max_rows = 7;
    let env = tools::call(project, "get_metric", &args, Execution::run(&engine, l));
    assert_eq!(env.status(), Status::Partial);
    let data = env.data().unwrap();
    assert_eq!(data["row_count"], 7);
    assert_eq!(data["truncated"], true);
}

#[test]
fn a_timeout_interrupts_the_query() {
    let engine = demo_engine();
    // A cross join of the items with themselves runs for minutes; the
    // watchdog must stop it long before.
    let slow = CompiledSql {
        sql: "SELECT count(*) FROM main.order_items a, main.order_items b WHERE a.quantity * b.unit_price > -1".into(),
        params: Vec::new(),
        dialect: "duckdb",
    };
    let mut l = limits();
    l.timeout = std::time::Duration::from_millis(300);
    // Only an interrupted query ends in Timeout: a finished one returns rows.
    let err = engine.run(&slow, l).expect_err("must time out");
    assert!(matches!(err, schemabrain::engine::EngineError::Timeout(_)), "{err}");
}

#[test]
fn queries_cannot_write_to_the_warehouse() {
    let engine = demo_engine();
    let write = CompiledSql { sql: "CREATE TABLE main.intruder (x INTEGER)".into(), params: Vec::new(), dialect: "duckdb" };
    let err = engine.run(&write, limits()).expect_err("read-only");
    assert!(err.to_string().to_lowercase().contains("read-only") || err.to_string().to_lowercase().contains("read only"), "{err}");
}

#[test]
fn a_limit_that_cuts_unordered_groups_is_degraded() {
    let project = demo_project_with_catalog();
    let engine = demo_engine();
    let run = |args: serde_json::Value| tools::call(project, "get_metric", &args, Execution::run(&engine, limits()));
    let env = run(serde_json::json!({"name": "revenue", "group_by": ["customer.country"], "limit": 3}));
    assert_eq!(env.status(), Status::Degraded);
    assert_eq!(env.degradation_reason().unwrap().as_str(), "missing_order_by_with_limit");
    let data = env.data().unwrap();
    assert_eq!((data["row_count"].as_i64(), data["truncated"].as_bool()), (Some(3), Some(true)));
    assert!(data["sql"].as_str().unwrap().ends_with("LIMIT 3"), "data.sql is the query as asked");
    // Ordered: the top 3 are what was asked for.
    let env = run(serde_json::json!({"name": "revenue", "group_by": ["customer.country"], "limit": 3, "order_by": [{"column": "revenue", "direction": "desc"}]}));
    assert_eq!(env.status(), Status::Success);
    assert_eq!(env.data().unwrap()["truncated"], true);
    // A limit that cuts nothing says so.
    let env = run(serde_json::json!({"name": "revenue", "group_by": ["order.status"], "limit": 10}));
    assert_eq!(env.status(), Status::Success);
    assert_eq!(env.data().unwrap()["truncated"], false);
}
