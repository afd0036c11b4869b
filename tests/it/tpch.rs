//! TPC-H (issue 34): the `semantics/tpch` project over the warehouse of
//! `tests/support/tpch_warehouse.rs` at scale factor 0.01 (seconds to build).
//!
//! - Every request in `tests/tpch/requests/` (a get_metric request and the
//!   SQL an expert writes by hand from the definitions, `sql` for DuckDB and
//!   `sql_postgres` where Postgres needs another text) answers the same rows
//!   through get_metric as its SQL does, on DuckDB and on Postgres: numbers
//!   within a relative 1e-9, row order compared only where the case says
//!   `ordered: true`. The hand SQL names the tables unqualified: DuckDB reads
//!   `main`, Postgres the test's schema through its search path.
//! - `via` on the unequal diamond: a line item reaches `nation` in two hops
//!   through its supplier and in three through its order and customer.
//! - The warehouse itself: TPC-H's keys, NOT NULL columns and row counts.
//! - The project: `schemabrain check` finds no problem in it, alone or
//!   against the warehouse; its PII policy refuses the personal columns and
//!   answers on the others.
//!
//! The same cases are the bench's (`benches/tpch.rs`).

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::{json, Value as Json};

use schemabrain::engine::{DuckDbEngine, Engine, PostgresEngine};
use schemabrain::envelope::{Envelope, Status};
use schemabrain::project::Project;
use schemabrain::sql::CompiledSql;
use schemabrain::tools::{self, Execution};

use crate::common::{limits, repo};
use crate::engines_servers::PgSchema;

#[path = "../support/tpch_warehouse.rs"]
mod warehouse;

const SCALE_FACTOR: f64 = 0.01;

/// The DuckDB warehouse, built once per fingerprint into the cargo target's
/// test temp dir.
fn duckdb_file() -> &'static Path {
    static W: OnceLock<PathBuf> = OnceLock::new();
    W.get_or_init(|| warehouse::ensure_duckdb(&Path::new(env!("CARGO_TARGET_TMPDIR")).join("tpch"), SCALE_FACTOR))
}

fn duck() -> DuckDbEngine {
    let w = duckdb_file();
    DuckDbEngine::open_read_only(w, &format!("duckdb:{}", w.display())).expect("the TPC-H warehouse opens")
}

/// The project checked against the warehouse's catalog (keys included).
fn project_on_duckdb() -> &'static Project {
    static P: OnceLock<Project> = OnceLock::new();
    P.get_or_init(|| {
        let declared = Project::open_declared(&repo("semantics/tpch")).unwrap_or_else(|d| panic!("semantics/tpch does not load:\n{d}"));
        declared.with_catalog(duck().introspect().expect("introspects")).unwrap_or_else(|d| panic!("semantics/tpch disagrees with its warehouse:\n{d}"))
    })
}

fn cases() -> Vec<warehouse::Case> {
    let cases = warehouse::cases();
    assert!(cases.len() >= 21, "only {} TPC-H requests", cases.len());
    cases
}

fn rows_of(env: &Envelope) -> Vec<Vec<Json>> {
    serde_json::from_value(env.data().expect("data")["rows"].clone()).unwrap()
}

fn run_sql(engine: &dyn Engine, sql: &str, dialect: &'static str) -> Result<Vec<Vec<Json>>, String> {
    let hand = CompiledSql { sql: sql.to_string(), params: Vec::new(), dialect };
    engine.run(&hand, limits()).map(|r| r.rows).map_err(|e| e.to_string())
}

/// Answers `request` through get_metric on `engine`; `Err` says why it is
/// not the rows of `sql`.
fn agrees(project: &Project, engine: &dyn Engine, request: &Json, sql: &str, ordered: bool) -> Result<(), String> {
    let env = tools::call(project, "get_metric", request, Execution::run(engine, limits()));
    if env.status() != Status::Success {
        return Err(format!("status {:?}: {}", env.status(), serde_json::to_string(&env).unwrap()));
    }
    let ours = rows_of(&env);
    let hand = run_sql(engine, sql, engine.dialect().name).map_err(|e| format!("the hand-written SQL fails: {e}"))?;
    if hand.is_empty() {
        return Err("the hand-written SQL returns no rows, so it proves nothing".into());
    }
    if warehouse::same_answer(&ours, &hand, ordered) {
        return Ok(());
    }
    Err(format!(
        "{} rows from get_metric, {} by hand\n  get_metric: {:?}\n  by hand:    {:?}\n  our sql: {}",
        ours.len(),
        hand.len(),
        ours.iter().take(4).collect::<Vec<_>>(),
        hand.iter().take(4).collect::<Vec<_>>(),
        env.data().unwrap()["sql"].as_str().unwrap_or_default()
    ))
}

/// Every case on `engine`; panics listing every disagreement.
fn every_case_agrees(label: &str, project: &Project, engine: &dyn Engine) {
    let cases = cases();
    let mut failures = Vec::new();
    for case in &cases {
        if let Err(why) = agrees(project, engine, &case.request, case.sql_for(engine.dialect().name), case.ordered) {
            failures.push(format!("{}: {why}", case.name));
        }
    }
    assert!(failures.is_empty(), "{} of {} TPC-H requests disagree with their hand-written SQL on {label}:\n{}", failures.len(), cases.len(), failures.join("\n\n"));
}

#[test]
fn every_request_answers_as_its_hand_written_sql_on_duckdb() {
    every_case_agrees("DuckDB", project_on_duckdb(), &duck());
}

#[test]
fn every_request_answers_as_its_hand_written_sql_on_postgres() {
    let Some(schema) = PgSchema::create("tpch") else { return };
    warehouse::load_postgres(&schema.url, &schema.name, SCALE_FACTOR).unwrap_or_else(|e| panic!("loading TPC-H into Postgres: {e}"));
    let pg = PostgresEngine::connect(&warehouse::url_with_search_path(&schema.url, &schema.name)).expect("connects");
    let catalog = pg.introspect().expect("introspects");
    let ours = |t: &str| format!("{}.{t}", schema.name);
    assert_eq!(catalog.tables[&ours("lineitem")].primary_key, ["l_orderkey", "l_linenumber"]);
    assert_eq!(catalog.tables[&ours("lineitem")].foreign_keys.len(), 4);
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(&schema.name);
    warehouse::write_project_in_schema(&schema.name, &dir);
    let declared = Project::open_declared(&dir).unwrap_or_else(|d| panic!("{d}"));
    let project = declared.with_catalog(catalog).unwrap_or_else(|d| panic!("the Postgres warehouse disagrees with the model:\n{d}"));
    every_case_agrees("Postgres", &project, &pg);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn the_warehouse_has_the_keys_and_rows_tpch_declares() {
    let catalog = duck().introspect().expect("introspects");
    // Row counts of TPC-H at SF 0.01 (spec 4.2.5: region and nation fixed,
    // the others scale; lineitem has 1 to 7 lines per order).
    let counts = [("region", 5), ("nation", 25), ("supplier", 100), ("customer", 1_500), ("part", 2_000), ("partsupp", 8_000), ("orders", 15_000)];
    let engine = duck();
    for t in warehouse::TABLES {
        let info = &catalog.tables[&format!("main.{}", t.name)];
        let columns: Vec<&str> = info.columns.iter().map(|c| c.name.as_str()).collect();
        let declared: Vec<&str> = t.columns.iter().map(|(n, _)| *n).collect();
        assert_eq!(columns, declared, "{}", t.name);
        assert!(info.columns.iter().all(|c| !c.nullable), "{}: a nullable column", t.name);
        assert_eq!(info.primary_key, t.primary_key, "{}", t.name);
        let fks: Vec<(Vec<String>, String, Vec<String>)> = info.foreign_keys.iter().map(|f| (f.columns.clone(), f.ref_table.clone(), f.ref_columns.clone())).collect();
        for (cols, target, target_cols) in t.foreign_keys {
            let want = (cols.iter().map(|c| c.to_string()).collect(), target.to_string(), target_cols.iter().map(|c| c.to_string()).collect());
            assert!(fks.contains(&want), "{}: no foreign key {want:?} in {fks:?}", t.name);
        }
        assert_eq!(fks.len(), t.foreign_keys.len(), "{}: {fks:?}", t.name);
        let n = run_sql(&engine, &format!("SELECT count(*) FROM {}", t.name), "duckdb").unwrap()[0][0].as_i64().unwrap();
        match counts.iter().find(|(name, _)| *name == t.name) {
            Some((_, want)) => assert_eq!(n, *want, "{} rows", t.name),
            None => assert!((15_000..=7 * 15_000).contains(&n), "{n} line items for 15,000 orders"),
        }
    }
    // Every order has lines and every line's part/supplier pair is offered
    // in partsupp: what the hand-written SQL relies on.
    let orphans = "SELECT (SELECT count(*) FROM orders WHERE o_orderkey NOT IN (SELECT l_orderkey FROM lineitem)) \
                   + (SELECT count(*) FROM lineitem l LEFT JOIN partsupp ps ON ps.ps_partkey = l.l_partkey AND ps.ps_suppkey = l.l_suppkey WHERE ps.ps_partkey IS NULL)";
    assert_eq!(run_sql(&engine, orphans, "duckdb").unwrap()[0][0], json!(0));
}

/// revenue by nation.n_name with `via`, dry-run and executed on DuckDB.
fn revenue_by_nation(via: Option<&str>) -> Envelope {
    let args = match via {
        Some(join) => json!({"name": "revenue", "group_by": ["nation.n_name"], "via": [join]}),
        None => json!({"name": "revenue", "group_by": ["nation.n_name"]}),
    };
    tools::call(project_on_duckdb(), "get_metric", &args, Execution::run(&duck(), limits()))
}

fn case_sql(file: &str) -> String {
    cases().into_iter().find(|c| c.name == file).unwrap_or_else(|| panic!("no case {file}")).sql
}

#[test]
fn via_customer_nation_takes_the_longer_path_and_means_the_customers_nation() {
    let engine = duck();
    let by_customer = run_sql(&engine, &case_sql("002_revenue_by_customer_nation.yaml"), "duckdb").unwrap();
    let by_supplier = run_sql(&engine, &case_sql("003_revenue_by_supplier_nation.yaml"), "duckdb").unwrap();
    assert_eq!(by_customer.len(), 25);
    let same = |a: &[Vec<Json>], b: &[Vec<Json>]| warehouse::same_answer(a, b, false);
    assert!(!same(&by_customer, &by_supplier), "the two nations must give different answers, or this test proves nothing");

    let env = revenue_by_nation(Some("customer_nation"));
    assert_eq!(env.status(), Status::Success, "{}", serde_json::to_string(&env).unwrap());
    let ours = rows_of(&env);
    assert!(!same(&ours, &by_supplier), "via customer_nation answered with the supplier's nation:\n{}", env.data().unwrap()["sql"]);
    assert!(same(&ours, &by_customer), "via customer_nation: {ours:?}\nby hand: {by_customer:?}");
    let joins = serde_json::to_string(&env.data().unwrap()["joins"]).unwrap();
    for join in ["lineitem_order", "order_customer", "customer_nation"] {
        assert!(joins.contains(join), "the plan's joins do not name {join}: {joins}");
    }
    assert!(!joins.contains("supplier_nation"), "{joins}");

    let env = revenue_by_nation(Some("supplier_nation"));
    assert_eq!(env.status(), Status::Success, "{}", serde_json::to_string(&env).unwrap());
    assert!(same(&rows_of(&env), &by_supplier));
}

#[test]
fn without_via_the_nation_of_a_line_is_ambiguous_and_the_recovery_picks_one_role() {
    let env = revenue_by_nation(None);
    let err = env.tool_error().unwrap_or_else(|| panic!("revenue by nation without via answers: {}", serde_json::to_string(&env).unwrap()));
    assert_eq!(err.kind().as_str(), "ambiguous_path", "{}", err.message());
    // Both roles are listed, each with the joins that name it.
    let listed = format!("{} {:?}", err.message(), err.recovery().fuzzy_matches());
    for join in ["customer_nation", "supplier_nation", "order_customer", "lineitem_supplier"] {
        assert!(listed.contains(join), "the paths listed do not name {join}: {listed}");
    }
    // The suggested call keeps the question (metric and group-by) and
    // answers it for one of the roles.
    let r = err.recovery();
    assert_eq!(r.suggested_tool(), Some("get_metric"));
    let next_args = Json::Object(r.suggested_args().cloned().unwrap_or_default());
    assert_eq!(next_args["name"], "revenue");
    assert_eq!(next_args["group_by"], json!(["nation.n_name"]));
    assert!(next_args["via"].as_array().is_some_and(|v| !v.is_empty()), "{next_args}");
    let next = tools::call(project_on_duckdb(), "get_metric", &next_args, Execution::run(&duck(), limits()));
    assert_eq!(next.status(), Status::Success, "{}", serde_json::to_string(&next).unwrap());
    let engine = duck();
    let answer = rows_of(&next);
    let roles = ["002_revenue_by_customer_nation.yaml", "003_revenue_by_supplier_nation.yaml"];
    assert!(
        roles.iter().any(|case| warehouse::same_answer(&answer, &run_sql(&engine, &case_sql(case), "duckdb").unwrap(), false)),
        "the recovery {next_args} answers neither the customer's nor the supplier's nation: {answer:?}"
    );
}

/// describe_entity says what get_metric will do: an entity reached in one
/// role lists its joins (and a request through them answers), one reached
/// in several roles lists the choices `via` takes (and a request without
/// `via` is ambiguous_path). The shortest path alone would show nation as
/// reached one way, two hops away.
#[test]
fn describe_entity_shows_the_roles_get_metric_will_ask_to_choose_between() {
    let project = project_on_duckdb();
    let env = tools::call(project, "describe_entity", &json!({"name": "lineitem"}), Execution::DryRun);
    assert_eq!(env.status(), Status::Success, "{}", serde_json::to_string(&env).unwrap());
    let reachable = env.data().unwrap()["reachable_entities"].as_array().unwrap().clone();
    let entry = |name: &str| reachable.iter().find(|r| r["entity"] == name).unwrap_or_else(|| panic!("{name} not reachable: {reachable:?}")).clone();
    let nation = entry("nation");
    assert_eq!(nation["paths"], 2, "{nation}");
    let choices = nation["via_choices"].to_string();
    assert!(choices.contains("customer_nation") && choices.contains("supplier_nation"), "{nation}");
    for r in &reachable {
        let entity = r["entity"].as_str().unwrap();
        // A column that is not a key: a key could be read on the near side of its join.
        let e = &project.model.entities[entity];
        let column = e.columns.iter().find(|c| !e.identity.contains(&c.name)).map(|c| c.name.clone()).unwrap();
        let ask = |via: &Json| {
            let mut args = json!({"name": "revenue", "group_by": [format!("{entity}.{column}")], "dry_run": true});
            if !via.is_null() {
                args["via"] = via.clone();
            }
            tools::call(project, "get_metric", &args, Execution::DryRun)
        };
        let plain = ask(&Json::Null);
        let kind = plain.tool_error().map(|e| e.kind().as_str().to_string());
        if r["paths"] == 1 {
            // The personal columns of the policy may refuse; a path never does.
            assert_ne!(kind.as_deref(), Some("ambiguous_path"), "{entity}: {r}");
        } else {
            assert_eq!(kind.as_deref(), Some("ambiguous_path"), "{entity}: {r}");
            for choice in r["via_choices"].as_array().unwrap() {
                let chosen = ask(choice);
                assert_ne!(chosen.tool_error().map(|e| e.kind().as_str().to_string()).as_deref(), Some("ambiguous_path"), "{entity} via {choice}");
            }
        }
    }
}

#[test]
fn the_project_checks_clean_alone_and_against_its_warehouse() {
    let source = format!("duckdb:{}", duckdb_file().display());
    for args in [vec!["check", "--project", "semantics/tpch"], vec!["check", "--project", "semantics/tpch", "--source", &source]] {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_schemabrain")).args(&args).current_dir(repo("")).output().expect("binary runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stdout}\n{}", String::from_utf8_lossy(&out.stderr));
        assert!(stdout.contains("8 entities, 10 joins, 21 metrics, no problems"), "{args:?}: {stdout}");
    }
}

#[test]
fn the_pii_policy_refuses_personal_columns_and_answers_the_rest() {
    let call = |args: Json| tools::call(project_on_duckdb(), "get_metric", &args, Execution::DryRun);
    for (args, category) in [
        (json!({"name": "customer_count", "group_by": ["customer.c_name"]}), "contact"),
        (json!({"name": "order_count", "filters": [{"column": "customer.c_phone", "op": "eq", "value": "25-989-741-2988"}]}), "contact"),
        (json!({"name": "supplier_count", "group_by": ["supplier.s_address"]}), "location"),
        (json!({"name": "customer_count", "filters": [{"column": "customer.c_acctbal", "op": "gt", "value": 0}]}), "financial"),
    ] {
        let env = serde_json::to_value(call(args.clone())).unwrap();
        assert_eq!(env["status"], "refused", "{args}: {env:#}");
        assert_eq!(env["error"]["kind"], "pii_blocked", "{args}: {env:#}");
        assert_eq!(env["error"]["pii_categories"], json!([category]), "{args}: {env:#}");
    }
    // A supplier's balance is the business's own ledger, and comments are filler.
    for args in [json!({"name": "supplier_count", "filters": [{"column": "supplier.s_acctbal", "op": "gt", "value": 0}]}), json!({"name": "part_count", "group_by": ["part.p_mfgr"]})] {
        let env = call(args.clone());
        assert_eq!(env.status(), Status::Success, "{args}: {}", serde_json::to_string(&env).unwrap());
    }
}
