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
