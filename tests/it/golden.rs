//! Golden SQL: every request in `tests/corpus/` compiled for every dialect
//! and compared with `dialects/<dialect>/<case>.sql` (UPDATE_GOLDEN=1
//! rewrites). Each golden must parse with sqlparser under its dialect and
//! print back identically; DuckDB goldens are also prepared by DuckDB, and
//! DataFusion goldens planned (and run on no rows) by DataFusion, against
//! empty tables shaped like the demo model.

use schemabrain::engine::{DataFusionEngine, DuckDbEngine};
use schemabrain::envelope::Status;
use schemabrain::sql::Dialect;
use schemabrain::tools::{self, Execution};
use sqlparser::parser::Parser;

use crate::common::{demo_project, entries, repo, yaml_file_as_json};

#[test]
fn corpus_compiles_to_golden_sql_for_every_dialect() {
    let project = demo_project();
    let validator = DuckDbEngine::empty_like(&project.model).expect("empty tables");
    let df_validator = DataFusionEngine::empty_like(&project.model).expect("empty DataFusion tables");
    let mut df_planned = 0;
    // One sqlparser comparison per compiled (dialect, case).
    let (mut compiled, mut compared) = (0, 0);
    let cases = entries(&repo("tests/corpus"), ".yaml");
    assert!(cases.len() >= 40, "the corpus shrank to {} cases", cases.len());
    let mut failures = Vec::new();
    for case in &cases {
        let name = case.file_stem().and_then(|s| s.to_str()).expect("case name");
        let spec = yaml_file_as_json(case);
        for dialect in Dialect::supported() {
            let mut args = spec["request"].clone();
            args["dry_run"] = true.into();
            args["dialect"] = dialect.into();
            let env = tools::call(project, "get_metric", &args, Execution::DryRun);
            if let Some(kind) = spec["expect_error"].as_str() {
                let got = env.tool_error().map(|e| e.kind().as_str());
                if env.status() != Status::Error || got != Some(kind) {
                    failures.push(format!("{name} [{dialect}]: expected error {kind}, got {:?} {got:?}", env.status()));
                }
                continue;
            }
            let Some(data) = env.data() else {
                // A dialect may lack an exact form of what the request needs; the
                // refusal is the golden then, reviewed like SQL.
                let Some(err) = env.tool_error() else {
                    failures.push(format!("{name} [{dialect}]: no data: {}", serde_json::to_string(&env).unwrap()));
                    continue;
                };
                let golden = format!(
                    "-- case: {name}\n-- dialect: {dialect}\n-- status: {}\n-- {}\n-- error: {}: {}\n",
                    env.status().as_str(),
                    spec["description"].as_str().unwrap_or(""),
                    err.kind().as_str(),
                    err.message()
                );
                let path = repo(&format!("dialects/{dialect}/{name}.sql"));
                if let Err(e) = std::panic::catch_unwind(|| crate::common::check_golden(&path, &golden)) {
                    failures.push(format!("{name} [{dialect}]: {}", panic_text(e)));
                }
                continue;
            };
            let sql = data["sql"].as_str().expect("sql").to_string();
            check_parses(name, dialect, &sql, &mut failures);
            compiled += 1;
            match check_written_as_sqlparser_writes(project, name, dialect, &args, &mut failures) {
                Ok(()) => compared += 1,
                Err(why) => failures.push(format!("compiled by get_metric but not compared with sqlparser: {why}")),
            }
            if dialect == "duckdb" {
                if let Err(e) = validator.validate(&sql) {
                    failures.push(format!("{name} [duckdb]: DuckDB rejects the SQL: {e}"));
                }
            }
            if dialect == "datafusion" {
                let compiled = schemabrain::sql::CompiledSql { sql: sql.clone(), params: params_of(&data["params"]), dialect: "datafusion" };
                match df_validator.validate(&compiled) {
                    Ok(()) => df_planned += 1,
                    Err(e) => failures.push(format!("{name} [datafusion]: DataFusion rejects the SQL: {e}")),
                }
            }
            let golden = format!(
                "-- case: {name}\n-- dialect: {dialect}\n-- status: {}\n-- {}\n{sql}\n-- params: {}\n",
                env.status().as_str(),
                spec["description"].as_str().unwrap_or(""),
                data["params"]
            );
            let path = repo(&format!("dialects/{dialect}/{name}.sql"));
            if let Err(e) = std::panic::catch_unwind(|| crate::common::check_golden(&path, &golden)) {
                failures.push(format!("{name} [{dialect}]: {}", panic_text(e)));
            }
        }
    }
    assert!(failures.is_empty(), "{} golden failures:\n{}", failures.len(), failures.join("\n\n"));
    assert!(df_planned >= 35, "only {df_planned} DataFusion goldens were planned");
    assert_eq!(compared, compiled, "every compiled case is compared with sqlparser's text");
    assert!(compared >= 600, "only {compared} (case, dialect) pairs compiled and compared");
}

/// The envelope's JSON parameters as values. Dates and timestamps come back
/// as text, which the SQL casts anyway.
fn params_of(params: &serde_json::Value) -> Vec<schemabrain::ir::Value> {
    use schemabrain::ir::Value;
    params
        .as_array()
        .expect("params")
        .iter()
        .map(|p| match p {
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => n.as_i64().map(Value::Int).unwrap_or_else(|| Value::Float(n.as_f64().unwrap())),
            serde_json::Value::String(s) => Value::Text(s.clone()),
            other => panic!("parameter {other}"),
        })
        .collect()
}

pub(crate) fn check_parses(name: &str, dialect: &str, sql: &str, failures: &mut Vec<String>) {
    let d = Dialect::from_name(dialect).expect("supported");
    match Parser::parse_sql(d.parser_dialect(), sql) {
        Ok(stmts) if stmts.len() == 1 => {
            let reprinted = format!("{:#}", stmts[0]);
            if reprinted != sql {
                failures.push(format!("{name} [{dialect}]: does not print back identically:\n{reprinted}"));
            }
        }
        Ok(stmts) => failures.push(format!("{name} [{dialect}]: {} statements", stmts.len())),
        Err(e) => failures.push(format!("{name} [{dialect}]: does not parse: {e}")),
    }
}

/// Our SQL writer (`sql::render`) against its oracle: the text sqlparser's
/// own pretty `Display` writes for the same AST, byte for byte. Returns
/// whether the comparison was made: `Err` names why the request did not
/// get as far as SQL (its arguments, its plan, or the dialect refused); a
/// caller that saw the request compile treats that as a failure.
pub(crate) fn check_written_as_sqlparser_writes(project: &schemabrain::project::Project, name: &str, dialect: &str, args: &serde_json::Value, failures: &mut Vec<String>) -> Result<(), String> {
    let args = serde_json::from_value::<tools::GetMetricArgs>(args.clone()).map_err(|e| format!("{name} [{dialect}]: arguments: {e}"))?;
    let plan = tools::request_plan(project, &args).map_err(|env| format!("{name} [{dialect}]: no plan: {}", serde_json::to_string(&env).unwrap_or_default()))?;
    let lowered = schemabrain::sql::lower(&plan, Dialect::from_name(dialect).expect("supported")).map_err(|e| format!("{name} [{dialect}]: not lowered: {e:?}"))?;
    let ours = lowered.compiled().sql;
    let theirs = lowered.sqlparser_text();
    if ours != theirs {
        failures.push(format!("{name} [{dialect}]: sql::render writes\n{ours}\nwhere sqlparser writes\n{theirs}"));
    }
    Ok(())
}

fn panic_text(e: Box<dyn std::any::Any + Send>) -> String {
    e.downcast_ref::<String>().cloned().or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

#[test]
fn every_golden_file_has_a_corpus_case() {
    for dialect in Dialect::supported() {
        let dir = repo(&format!("dialects/{dialect}"));
        if !dir.is_dir() {
            continue;
        }
        for golden in entries(&dir, ".sql") {
            let stem = golden.file_stem().and_then(|s| s.to_str()).unwrap();
            assert!(repo(&format!("tests/corpus/{stem}.yaml")).is_file(), "orphan golden {}", golden.display());
        }
    }
}

#[test]
fn unknown_dialect_lists_the_supported_ones() {
    let args = serde_json::json!({"name": "revenue", "dialect": "oracle9", "dry_run": true});
    let env = tools::call(demo_project(), "get_metric", &args, Execution::DryRun);
    let err = env.tool_error().expect("error");
    assert_eq!(err.kind().as_str(), "malformed_name");
    assert_eq!(err.code().as_str(), "INVALID_INPUT");
    for d in Dialect::supported() {
        assert!(err.message().contains(d), "{} lacks {d}", err.message());
    }
    // The recovery is the same call with a supported dialect, and it answers.
    let r = err.recovery();
    let retry = tools::call(demo_project(), r.suggested_tool().unwrap(), &serde_json::Value::Object(r.suggested_args().unwrap().clone()), Execution::DryRun);
    assert_eq!(retry.status(), Status::Success);
}

/// The plan of every corpus request, as text (`tests/golden/plan/<case>.txt`):
/// planner changes show apart from rendering changes.
#[test]
fn corpus_plans_match_their_snapshots() {
    let project = demo_project();
    let cases = entries(&repo("tests/corpus"), ".yaml");
    let mut failures = Vec::new();
    let mut planned = 0;
    for case in &cases {
        let name = case.file_stem().and_then(|s| s.to_str()).expect("case name");
        let spec = yaml_file_as_json(case);
        if spec["expect_error"].is_string() {
            continue;
        }
        let args: tools::GetMetricArgs = serde_json::from_value(spec["request"].clone()).expect("request arguments");
        let text = match tools::request_plan(project, &args) {
            Ok(plan) => plan.to_string(),
            Err(env) => match env.tool_error() {
                // A request the planner refuses: the refusal is its snapshot.
                Some(err) => format!("error: {}: {}\n", err.kind().as_str(), err.message()),
                None => {
                    failures.push(format!("{name}: no plan: {}", serde_json::to_string(&env).unwrap()));
                    continue;
                }
            },
        };
        planned += 1;
        let golden = format!("# {name}: {}\n{text}", spec["description"].as_str().unwrap_or(""));
        let path = repo(&format!("tests/golden/plan/{name}.txt"));
        if let Err(e) = std::panic::catch_unwind(|| crate::common::check_golden(&path, &golden)) {
            failures.push(format!("{name}: {}", panic_text(e)));
        }
    }
    assert!(failures.is_empty(), "{} plan snapshot failures:\n{}", failures.len(), failures.join("\n\n"));
    assert!(planned >= 40, "only {planned} plans");
}
