//! Replays every input under `fuzz/seeds/` and `fuzz/regressions/` (crashes
//! found by `fuzz/run.sh`, kept once fixed) on stable, in every test run:
//! each must end in an answer or a clean error, never a panic.

use std::path::PathBuf;

use schemabrain::model::{load_checked_from_files, FileKind, MeasureExpr};
use schemabrain::tools::{self, Execution};

use crate::common::{demo_project, entries, repo};

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
    let yaml = inputs("model_yaml");
    assert!(!yaml.is_empty(), "the seeds are there");
    for file in &yaml {
        let data = std::fs::read(file).unwrap();
        let Some((&kind, rest)) = data.split_first() else { continue };
        // As fuzz/fuzz_targets/model_yaml.rs reads them.
        let kind = [FileKind::Entity, FileKind::Join, FileKind::Metric, FileKind::Policy, FileKind::Query, FileKind::Settings][kind as usize % 6];
        let entity = "version: 1\nname: order\nbinding: {single_table: main.orders}\nidentity: id\ncolumns:\n  - {name: id, type: integer}\n  - {name: amount, type: decimal}\n  - {name: ordered_at, type: timestamp}\n";
        let files = vec![
            (FileKind::Entity, PathBuf::from("entities/order.yaml"), entity.to_string()),
            (kind, file.clone(), String::from_utf8_lossy(rest).into_owned()),
        ];
        let _ = load_checked_from_files(&files);
    }
    for file in inputs("measure_expr") {
        let _ = MeasureExpr::parse(&String::from_utf8_lossy(&std::fs::read(&file).unwrap()));
    }
    for file in inputs("sql_guard") {
        let data = std::fs::read(&file).unwrap();
        let Some((&d, rest)) = data.split_first() else { continue };
        let dialects = schemabrain::provider::guard::DIALECTS;
        if let Ok(statement) = schemabrain::provider::guard::check(&String::from_utf8_lossy(rest), dialects[d as usize % dialects.len()]) {
            let catalog = crate::common::demo_project_with_catalog().catalog.clone().unwrap_or_default();
            let _ = schemabrain::provider::columns::check(&statement, &catalog, &schemabrain::model::PiiPolicy::default());
        }
    }
    let dbt = inputs("dbt_import");
    assert!(!dbt.is_empty(), "the dbt seeds are there");
    for file in dbt {
        let data = std::fs::read(&file).unwrap();
        if let Ok(json) = serde_json::from_slice::<serde_json::Value>(&data) {
            let _ = schemabrain::dbt::import_semantic_manifest(&json, "fuzz.json");
        }
        let names: std::collections::BTreeMap<String, String> = [("customer__country".to_string(), "customer.country".to_string())].into();
        let ids = std::collections::BTreeMap::new();
        let resolve = schemabrain::dbt::where_filter::resolver(&names, &ids, Some("order.ordered_at"));
        let _ = schemabrain::dbt::where_filter::parse(&String::from_utf8_lossy(&data), &resolve);
    }
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
