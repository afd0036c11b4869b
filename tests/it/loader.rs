//! The loader: the demo and a SchemaBrain-layout project load cleanly; every
//! broken project in `tests/bad_projects/` gives diagnostics (never a panic)
//! that match its reviewed `expected.txt` (UPDATE_GOLDEN=1 rewrites).

use std::path::PathBuf;

use schemabrain::model::{load_project, load_project_from_files, Diagnostics, FileKind};

use crate::common::{check_golden, entries, repo};

fn load_text(kind: FileKind, text: &str) -> Diagnostics {
    load_project_from_files(&[(kind, PathBuf::from("x.yaml"), text.to_string())]).1
}

#[test]
fn demo_loads_without_diagnostics() {
    let (model, diags) = load_project(&repo("semantics/demo"));
    assert!(diags.is_empty(), "{diags}");
    assert_eq!(model.entities.len(), 9);
    assert!(model.metrics.len() >= 8);
    assert!(model.joins.len() >= 9);
}

#[test]
fn schemabrain_layout_loads_unchanged() {
    let (model, diags) = load_project(&repo("tests/fixtures/schemabrain_layout"));
    assert!(diags.is_empty(), "{diags}");
    assert_eq!(model.entities.len(), 2);
    let m = model.metric("open_ticket_minutes").expect("metric");
    assert_eq!(m.measure.columns(), vec!["minutes_open", "weight"]);
    // A bare `on:` key is a string under YAML 1.2, not a boolean.
    assert_eq!(model.join("ticket_account").unwrap().on[0].source, "account_id");
    assert_eq!(model.pii_policy.block, vec!["contact".to_string()]);
}

#[test]
fn unknown_key_names_line_allowed_keys_and_close_match() {
    let d = load_text(FileKind::Entity, "version: 1\nname: a\nbinding: {single_table: s.t}\nidentiy: id\n");
    let text = d.to_string();
    assert!(text.contains("x.yaml:4: key `identiy`: unknown key `identiy`"), "{text}");
    assert!(text.contains("did you mean identity?"), "{text}");
    assert!(text.contains("allowed: version, name, description, binding, identity"), "{text}");
    // The missing `identity` is reported too, at the document's line.
    assert!(text.contains("missing required key `identity`"), "{text}");
}

#[test]
fn every_error_of_a_project_is_reported_at_once() {
    let files = vec![
        (FileKind::Entity, PathBuf::from("entities/a.yaml"), "version: 1\nname: a\nbinding: {single_table: s.t}\nidentity: id\ncolumns: [{name: id}]\n".to_string()),
        (FileKind::Metric, PathBuf::from("metrics/m.yaml"), "version: 1\nname: m\nentity: b\nmeasure: {agg: summ, column: x}\n".to_string()),
        (FileKind::Join, PathBuf::from("joins/j.yaml"), "version: 2\nname: j\nsource_entity: a\ntarget_entity: c\n\"on\": [{source: id, target: a_id}]\ncardinality: one-to-one\n".to_string()),
    ];
    let (_, d) = load_project_from_files(&files);
    let text = d.to_string();
    for needle in ["`summ` is not allowed", "`version` must be the integer 1", "unknown entity `c`", "`one-to-one` is not allowed"] {
        assert!(text.contains(needle), "missing {needle:?} in\n{text}");
    }
    assert!(d.len() >= 4, "{text}");
}

#[test]
fn dangling_column_reference_points_at_the_key_line() {
    let files = vec![
        (FileKind::Entity, PathBuf::from("entities/o.yaml"), "version: 1\nname: o\nbinding: {single_table: s.o}\nidentity: id\ncolumns: [{name: id}, {name: amount, type: decimal(10,2)}]\n".to_string()),
        (FileKind::Metric, PathBuf::from("metrics/m.yaml"), "version: 1\nname: m\nentity: o\n\nmeasure: {agg: sum, column: amout}\n".to_string()),
    ];
    let (_, d) = load_project_from_files(&files);
    let text = d.to_string();
    assert!(text.contains("metrics/m.yaml:5: key `measure.column`: entity `o` has no column `amout`"), "{text}");
    assert!(text.contains("did you mean amount?"), "{text}");
}

#[test]
fn broken_projects_give_reviewed_diagnostics_and_never_panic() {
    let dir = repo("tests/bad_projects");
    let cases = entries(&dir, "");
    let cases: Vec<_> = cases.into_iter().filter(|p| p.is_dir()).collect();
    assert!(cases.len() >= 30, "only {} broken projects", cases.len());
    for case in cases {
        let loaded = std::panic::catch_unwind(|| load_project(&case));
        let (_, diags) = loaded.unwrap_or_else(|_| panic!("the loader panicked on {}", case.display()));
        assert!(!diags.is_empty(), "{} loads without a diagnostic", case.display());
        let prefix = format!("{}/", case.display());
        let rendered = diags.to_string().replace(&prefix, "") + "\n";
        check_golden(&case.join("expected.txt"), &rendered);
    }
}

#[test]
fn ratio_and_derived_metrics_are_checked() {
    let entity = (FileKind::Entity, PathBuf::from("entities/o.yaml"), "version: 1\nname: o\nbinding: {single_table: s.o}\nidentity: id\ncolumns: [{name: id}, {name: status}]\n".to_string());
    let simple = (FileKind::Metric, PathBuf::from("metrics/n.yaml"), "version: 1\nname: n\nentity: o\nmeasure: {agg: count, column: id}\n".to_string());
    let bad = (
        FileKind::Metric,
        PathBuf::from("metrics/r.yaml"),
        "version: 1\nname: r\ntype: ratio\nnumerator: {metric: nn, filter: [{column: o.stat, op: eq, value: x}]}\ndenominator: n\n".to_string(),
    );
    let derived = (
        FileKind::Metric,
        PathBuf::from("metrics/d.yaml"),
        "version: 1\nname: d\ntype: derived\nexpression: a - bb\nmetrics: [{name: n, alias: a}, {name: n, alias: b}]\n".to_string(),
    );
    let (_, d) = load_project_from_files(&[entity.clone(), simple.clone(), bad, derived]);
    let text = d.to_string();
    assert!(text.contains("metrics/r.yaml:4: key `numerator`: unknown metric `nn`; did you mean n?"), "{text}");
    assert!(text.contains("`bb` is not one of the inputs"), "{text}");
    let good = (FileKind::Metric, PathBuf::from("metrics/g.yaml"), "version: 1\nname: g\ntype: ratio\nnumerator: n\ndenominator: n\n".to_string());
    let (model, d) = load_project_from_files(&[entity, simple, good]);
    assert!(d.is_empty(), "{d}");
    assert_eq!(model.derived["g"].inputs.len(), 2);
}
