//! One PII decision for every tool (issue 13, item 4), on a project with no
//! `pii_policy.yaml` at all: the name classifier alone must keep every tool
//! from being a side door. Catastrophic columns (`ssn`, `member_ssn`,
//! `password_hash`) are never named, not in listings, join conditions,
//! SQL skeletons, foreign keys, search hits or error suggestions; other
//! PII columns are shown with their categories. get_metric refuses the
//! floor in every use and MIN/MAX of any PII column, and groups, buckets
//! and filters on the other PII columns with the minimum group size.
//! Then the policy decides (issue 33, item 9), on the demo warehouse.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::{json, Value as Json};

use schemabrain::engine::{DuckDbEngine, Engine};
use schemabrain::project::Project;
use schemabrain::sql::CompiledSql;
use schemabrain::tools::{self, Execution, TOOL_NAMES};

use crate::common::{demo_engine, limits, repo};

/// Names that must never appear in any output.
const CATASTROPHIC: [&str; 3] = ["ssn", "password", "card_number"];

const WAREHOUSE: &str = "
CREATE TABLE patients (
    id INTEGER PRIMARY KEY,
    full_name VARCHAR,
    email VARCHAR,
    ssn VARCHAR UNIQUE,
    password_hash VARCHAR,
    date_of_birth DATE,
    country VARCHAR
);
CREATE TABLE visits (
    id INTEGER PRIMARY KEY,
    patient_id INTEGER REFERENCES patients (id),
    member_ssn VARCHAR REFERENCES patients (ssn),
    card_number VARCHAR,
    cost DECIMAL(10, 2),
    visited_at TIMESTAMP,
    department VARCHAR
);
INSERT INTO patients VALUES
    (1, 'Ada Lovelace', 'ada@example.com', '123-45-6789', 'x1', DATE '1990-01-01', 'GB'),
    (2, 'Alan Turing', 'alan@example.com', '987-65-4321', 'x2', DATE '1985-06-23', 'GB');
INSERT INTO visits VALUES
    (1, 1, '123-45-6789', '4111111111111111', 10.00, TIMESTAMP '2024-01-02 10:00:00', 'cardiology'),
    (2, 2, '987-65-4321', '4012888888881881', 20.00, TIMESTAMP '2024-02-03 11:00:00', 'oncology');
";

const FILES: &[(&str, &str)] = &[
    ("schemabrain.yaml", "version: 1\nname: clinic\ndialect: duckdb\n"),
    (
        "entities/patient.yaml",
        "version: 1\nname: patient\nbinding: {single_table: main.patients}\nidentity: id\ncolumns:\n  - {name: id, type: integer}\n  - {name: full_name, type: varchar, description: Name of the patient.}\n  - {name: email, type: varchar, description: Contact address.}\n  - {name: ssn, type: varchar, description: Social security number.}\n  - {name: password_hash, type: varchar, description: Portal password.}\n  - {name: date_of_birth, type: date}\n  - {name: country, type: varchar}\n",
    ),
    (
        "entities/visit.yaml",
        "version: 1\nname: visit\nbinding: {single_table: main.visits}\nidentity: id\ncolumns:\n  - {name: id, type: integer}\n  - {name: patient_id, type: integer}\n  - {name: member_ssn, type: varchar}\n  - {name: card_number, type: varchar}\n  - {name: cost, type: 'decimal(10,2)'}\n  - {name: visited_at, type: timestamp}\n  - {name: department, type: varchar}\n",
    ),
    (
        "joins/visit_patient.yaml",
        "version: 1\nname: visit_patient\nsource_entity: visit\ntarget_entity: patient\n\"on\": [{source: patient_id, target: id}]\ncardinality: many_to_one\n",
    ),
    (
        "joins/visit_member.yaml",
        "version: 1\nname: visit_member\nsource_entity: visit\ntarget_entity: patient\n\"on\": [{source: member_ssn, target: ssn}]\ncardinality: many_to_one\n",
    ),
    (
        "metrics/visit_cost.yaml",
        "version: 1\nname: visit_cost\nentity: visit\nmeasure: {agg: sum, column: cost}\ntime_dimension: visit.visited_at\ntime_grains: [day, month, year]\n",
    ),
    ("metrics/patient_count.yaml", "version: 1\nname: patient_count\nentity: patient\nmeasure: {agg: count, column: id}\n"),
    ("metrics/youngest_birth.yaml", "version: 1\nname: youngest_birth\nentity: patient\nmeasure: {agg: max, column: date_of_birth}\n"),
];

/// The clinic project (no pii_policy.yaml) with its warehouse's catalog,
/// in a directory of its own per test (`tag`).
fn clinic(tag: &str) -> Project {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("pii-{tag}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let warehouse: PathBuf = dir.join("clinic.duckdb");
    duckdb::Connection::open(&warehouse).unwrap().execute_batch(WAREHOUSE).unwrap();
    let project_dir = dir.join("project");
    for (rel, text) in FILES {
        let path = project_dir.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    assert!(!project_dir.join("pii_policy.yaml").exists());
    let engine = DuckDbEngine::open_read_only(&warehouse, &format!("duckdb:{}", warehouse.display())).unwrap();
    let catalog = engine.introspect().expect("introspects");
    Project::open(&project_dir).unwrap_or_else(|d| panic!("{d}")).with_catalog(catalog).unwrap_or_else(|d| panic!("{d}"))
}

fn call(project: &Project, tool: &str, args: Json) -> Json {
    serde_json::to_value(tools::call(project, tool, &args, Execution::DryRun)).unwrap()
}

fn assert_no_catastrophic(tool: &str, env: &Json) {
    // The caller's own words echoed back (a search query) are not a leak.
    let mut env = env.clone();
    if let Some(d) = env["data"].as_object_mut() {
        d.remove("query");
    }
    let text = env.to_string().to_ascii_lowercase();
    for word in CATASTROPHIC {
        assert!(!text.contains(word), "{tool} names a catastrophic column (`{word}`): {env:#}");
    }
}

/// Every tool, called in the ways that show columns, names no catastrophic column.
#[test]
fn no_tool_names_a_catastrophic_column_without_a_policy() {
    let p = clinic("side-door");
    let calls: Vec<(&str, Json)> = vec![
        ("list_entities", json!({})),
        ("list_metrics", json!({})),
        ("list_joins", json!({})),
        ("describe_entity", json!({"name": "patient"})),
        ("describe_entity", json!({"name": "visit"})),
        ("resolve_join", json!({"entity_a": "visit", "entity_b": "patient", "name": "visit_member"})),
        ("resolve_join", json!({"entity_a": "visit", "entity_b": "patient"})),
        ("find_relevant_tables", json!({"query": "ssn social security password card number"})),
        ("find_relevant_tables", json!({"query": "*"})),
        ("find_relevant_entities", json!({"query": "ssn password patient"})),
        ("describe_table", json!({"qualified_name": "main.patients"})),
        ("describe_table", json!({"qualified_name": "main.visits"})),
        ("describe_column", json!({"qualified_name": "main.patients.id"})),
        ("describe_column", json!({"qualified_name": "main.patients.nope"})),
        ("suggest_joins", json!({"tables": ["main.visits", "main.patients"]})),
        ("get_example_queries", json!({"qualified_name": "main.visits"})),
        ("get_metric", json!({"name": "visit_cost", "group_by": ["patient.nope"]})),
        ("get_metric", json!({"name": "visit_cost", "group_by": ["patient.country"], "dry_run": true})),
        ("get_metric", json!({"name": "visit_cost", "group_by": ["patient.country"], "via": ["visit_patient"], "dry_run": true})),
        ("get_metric", json!({"name": "visit_cost", "group_by": ["patient.country"], "via": ["visit_member"], "dry_run": true})),
    ];
    let mut seen = std::collections::BTreeSet::new();
    for (tool, args) in calls {
        seen.insert(tool);
        assert_no_catastrophic(tool, &call(&p, tool, args));
    }
    assert_eq!(seen.len(), TOOL_NAMES.len(), "every tool is exercised");
}

/// The listings mark PII by the name classifier: catastrophic columns as
/// redacted placeholders, contact and birth dates with their categories.
#[test]
fn listings_show_the_classifiers_decision() {
    let p = clinic("listings");
    for (tool, args) in [
        ("describe_entity", json!({"name": "patient"})),
        ("describe_table", json!({"qualified_name": "main.patients"})),
    ] {
        let env = call(&p, tool, args);
        let cols = env["data"]["columns"].as_array().unwrap_or_else(|| panic!("{tool}: {env:#}"));
        let by_name = |n: &str| cols.iter().find(|c| c["name"] == n).unwrap_or_else(|| panic!("{tool}: {n} listed: {env:#}"));
        let placeholders: Vec<&Json> = cols.iter().filter(|c| c["name"].as_str().unwrap().starts_with("<redacted_column_")).collect();
        assert_eq!(placeholders.len(), 2, "{tool}: ssn and password_hash as placeholders: {env:#}");
        for c in placeholders {
            assert_eq!(c["redacted"], true);
            assert!(c["description"].is_null(), "{tool}: no description of a redacted column");
        }
        assert_eq!(by_name("email")["pii_categories"], json!(["contact"]), "{tool}");
        assert_eq!(by_name("date_of_birth")["pii_categories"], json!(["demographic_protected"]), "{tool}");
        assert_eq!(by_name("country")["pii_categories"], json!([]), "{tool}");
    }
    // The placeholder also stands in the foreign key and in the join's condition.
    let visits = call(&p, "describe_table", json!({"qualified_name": "main.visits"}));
    let fk_cols: Vec<String> = visits["data"]["foreign_keys"].as_array().unwrap().iter().flat_map(|f| {
        f["source_columns"].as_array().unwrap().iter().chain(f["target_columns"].as_array().unwrap()).map(|c| c.as_str().unwrap().to_string()).collect::<Vec<_>>()
    }).collect();
    assert!(fk_cols.iter().any(|c| c.starts_with("<redacted_column")), "{fk_cols:?}");
    let join = call(&p, "resolve_join", json!({"entity_a": "visit", "entity_b": "patient", "name": "visit_member"}));
    assert!(join["data"]["sql_skeleton"].as_str().unwrap().contains("<redacted_column>"), "{join:#}");
}

/// get_metric reads the same decision: catastrophic anywhere is blocked
/// (join keys included) and MIN/MAX of any PII column is refused; the
/// other PII columns (not blocked: there is no policy) are grouped,
/// bucketed and filtered on with small groups withheld. (Before issue 33
/// those three uses were refused whatever the policy said.)
#[test]
fn get_metric_refuses_the_floor_and_floors_the_rest() {
    let p = clinic("refusals");
    let refused = |args: Json, want: &str| {
        let env = call(&p, "get_metric", args.clone());
        assert_eq!(env["status"], "refused", "{args}: {env:#}");
        assert_eq!(env["error"]["kind"], "pii_blocked", "{args}: {env:#}");
        let message = env["error"]["message"].as_str().unwrap();
        assert!(message.contains(want), "{args}: `{want}` in {message}");
        assert_no_catastrophic("get_metric", &env);
    };
    refused(json!({"name": "youngest_birth"}), "over `patient.date_of_birth`");
    refused(json!({"name": "visit_cost", "group_by": ["patient.country"], "via": ["visit_member"]}), "government_id");
    refused(json!({"name": "visit_cost", "group_by": ["visit.card_number"]}), "payment_card");
    refused(json!({"name": "visit_cost", "filters": [{"column": "visit.card_number", "op": "=", "value": "4111111111111111"}]}), "payment_card");
    // Unblocked PII: answered, with the group floor in the SQL and a note.
    for args in [
        json!({"name": "visit_cost", "group_by": ["patient.email"], "via": ["visit_patient"], "dry_run": true}),
        json!({"name": "visit_cost", "via": ["visit_patient"], "filters": [{"column": "patient.email", "op": "=", "value": "ada@example.com"}], "dry_run": true}),
        json!({"name": "patient_count", "time_dimension": "patient.date_of_birth", "time_grain": "year", "dry_run": true}),
    ] {
        let env = call(&p, "get_metric", args.clone());
        assert_eq!(env["status"], "success", "{args}: {env:#}");
        assert!(env["data"]["sql"].as_str().unwrap().contains("HAVING"), "{args}: {env:#}");
        assert!(env.to_string().contains("min_group_size is 5"), "{args}: {env:#}");
    }
    // Counting over PII, and grouping by a clean column, answers with no floor.
    let ok = call(&p, "get_metric", json!({"name": "visit_cost", "group_by": ["patient.country"], "via": ["visit_patient"], "dry_run": true}));
    assert_eq!(ok["status"], "success", "{ok:#}");
    assert!(!ok["data"]["sql"].as_str().unwrap().contains("HAVING"), "{ok:#}");
    let ok = call(&p, "get_metric", json!({"name": "patient_count", "dry_run": true}));
    assert_eq!(ok["status"], "success", "{ok:#}");
}

/// The clinic: a policy blocks `contact`; a cohort filter on the
/// birth date (demographic_protected, not blocked) answers, its one
/// patient born since 1990 withheld (fewer than 5), while the e-mail stays
/// refused in any use but a presence test.
#[test]
fn a_cohort_filter_answers_where_the_policy_blocks_contact() {
    let base = clinic("cohort");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pii-cohort/project");
    std::fs::write(dir.join("pii_policy.yaml"), "version: 1\nblock: [contact]\n").unwrap();
    let p = Project::open(&dir).unwrap_or_else(|d| panic!("{d}")).with_catalog(base.catalog.clone().unwrap()).unwrap_or_else(|d| panic!("{d}"));
    let warehouse = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pii-cohort/clinic.duckdb");
    let engine = DuckDbEngine::open_read_only(&warehouse, &format!("duckdb:{}", warehouse.display())).unwrap();
    let run = |args: Json| serde_json::to_value(tools::call(&p, "get_metric", &args, Execution::run(&engine, limits()))).unwrap();
    let env = run(json!({"name": "patient_count", "filters": [{"column": "patient.date_of_birth", "op": "gte", "value": "1990-01-01"}]}));
    assert_eq!(env["status"], "empty", "one patient is fewer than 5: {env:#}");
    assert!(env.to_string().contains("min_group_size is 5"), "{env:#}");
    let env = run(json!({"name": "patient_count", "filters": [{"column": "patient.email", "op": "not_null"}]}));
    assert_eq!(env["data"]["rows"], json!([[2]]), "both patients have an e-mail: {env:#}");
    let env = run(json!({"name": "patient_count", "filters": [{"column": "patient.email", "op": "=", "value": "ada@example.com"}]}));
    assert_eq!(env["error"]["pii_categories"], json!(["contact"]), "{env:#}");
}

/// Inferred tags (the index's `inferred:` section) are read by every tool;
/// a reviewed override wins over them.
#[test]
fn inferred_tags_count_and_overrides_win() {
    let base = clinic("inferred");
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("pii-inferred/project");
    std::fs::write(
        dir.join("pii_policy.yaml"),
        "version: 1\nblock: [health]\ncolumn_overrides:\n  main.patients.email: {sensitivity: public, categories: []}\ninferred:\n  main.visits.department: {sensitivity: pii, categories: [health], evidence: \"values: 100% match a diagnosis vocabulary\"}\n  main.patients.email: {sensitivity: pii, categories: [contact], evidence: name}\n",
    )
    .unwrap();
    let p = Project::open(&dir).unwrap_or_else(|d| panic!("{d}")).with_catalog(base.catalog.clone().unwrap()).unwrap_or_else(|d| panic!("{d}"));
    let t = call(&p, "describe_table", json!({"qualified_name": "main.visits"}));
    let dept = t["data"]["columns"].as_array().unwrap().iter().find(|c| c["name"] == "department").unwrap().clone();
    assert_eq!(dept["redacted"], true, "{t:#}");
    assert_eq!(dept["pii_categories"], json!(["health"]));
    let env = call(&p, "get_metric", json!({"name": "visit_cost", "dry_run": true, "filters": [{"column": "visit.department", "op": "=", "value": "oncology"}]}));
    assert_eq!(env["error"]["pii_categories"], json!(["health"]), "{env:#}");
    let hits = call(&p, "find_relevant_tables", json!({"query": "department"}));
    assert!(!hits["data"]["hits"].to_string().contains("department"), "a blocked column is not searchable: {hits:#}");
    // The reviewed override says email is clean: grouping by it answers.
    let env = call(&p, "get_metric", json!({"name": "visit_cost", "group_by": ["patient.email"], "via": ["visit_patient"], "dry_run": true}));
    assert_eq!(env["status"], "success", "{env:#}");
}

/// The labelled corpus (`tests/pii/corpus.tsv`: names in several languages,
/// look-alikes, columns known only by their values): precision and recall
/// of (column, category) pairs, with every catastrophic column found.
/// The figures are reported in docs/pii.md.
#[test]
fn classifier_precision_and_recall_on_the_labelled_corpus() {
    let text = std::fs::read_to_string(crate::common::repo("tests/pii/corpus.tsv")).unwrap();
    let (mut tp, mut predicted, mut expected) = (0usize, 0usize, 0usize);
    let mut missed_catastrophic = Vec::new();
    let mut wrong = Vec::new();
    let mut columns = 0;
    for line in text.lines().filter(|l| !l.starts_with('#') && !l.trim().is_empty()) {
        let mut parts = line.split('\t');
        let name = parts.next().unwrap();
        let want: BTreeSet<String> = parts.next().unwrap_or("").split(',').filter(|s| !s.is_empty()).map(str::to_string).collect();
        let samples: Vec<&str> = parts.next().unwrap_or("").split('|').filter(|s| !s.is_empty()).collect();
        let mut got: BTreeSet<String> = schemabrain::pii::classify_name(name).into_iter().map(str::to_string).collect();
        if let Some(m) = schemabrain::pii::classify_values(&samples) {
            got.insert(m.category.to_string());
        }
        columns += 1;
        tp += got.intersection(&want).count();
        predicted += got.len();
        expected += want.len();
        for c in want.difference(&got) {
            if schemabrain::pii::is_catastrophic(c) {
                missed_catastrophic.push(name.to_string());
            }
        }
        if got != want {
            wrong.push(format!("{name}: expected {want:?}, got {got:?}"));
        }
    }
    let precision = tp as f64 / predicted as f64;
    let recall = tp as f64 / expected as f64;
    eprintln!("PII corpus: {columns} columns, precision {precision:.3}, recall {recall:.3}\n  {}", wrong.join("\n  "));
    assert!(columns >= 150, "the corpus holds at least 150 columns");
    assert!(missed_catastrophic.is_empty(), "catastrophic columns missed: {missed_catastrophic:?}");
    assert!(precision >= 0.95 && recall >= 0.95, "precision {precision:.3}, recall {recall:.3}:\n{}", wrong.join("\n"));
}

// ---------------------------------------------------------------------------
// The policy decides (issue 33, item 9), on the demo warehouse, whose policy
// blocks `contact` (full_name, email, phone); `password_hash` is a credential
// (the floor); `date_of_birth` is demographic_protected, not blocked. The
// policy sets no min_group_size, so the default applies.
// ---------------------------------------------------------------------------


/// Computed columns on `customer`: presence tests only, a value read, and
/// an unblocked personal value.
const DEMO_COLUMNS: &str = "  - {name: has_phone, expr: \"phone is not null\", type: boolean}
  - {name: contact_kind, expr: \"case when phone is null then 'none' when email is null then 'phone only' else 'both' end\", type: varchar}
  - {name: mail_domain, expr: \"split_part(email, '@', 2)\", type: varchar}
  - {name: phone_or_none, expr: \"case when phone is null then 'none' else phone end\", type: varchar}
  - {name: secret_set, expr: \"case when password_hash like '$md5$%' then 1 end\", type: integer}
  - {name: birth_year, expr: \"year(date_of_birth)\", type: integer}
";

const DEMO_METRICS: &[(&str, &str)] = &[
    ("metrics/email_count.yaml", "version: 1\nname: email_count\nentity: customer\nmeasure: {agg: count, column: email}\n"),
    ("metrics/distinct_emails.yaml", "version: 1\nname: distinct_emails\nentity: customer\nmeasure: {agg: count_distinct, column: email}\n"),
    ("metrics/latest_email.yaml", "version: 1\nname: latest_email\nentity: customer\nmeasure: {agg: max, column: email}\n"),
    ("metrics/customers_total.yaml", "version: 1\nname: customers_total\nentity: customer\nmeasure: {agg: count_distinct, column: id}\n"),
    ("metrics/latest_birth.yaml", "version: 1\nname: latest_birth\nentity: customer\nmeasure: {agg: max, column: date_of_birth}\n"),
];

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_dir(&e.path(), &target);
        } else {
            std::fs::copy(e.path(), target).unwrap();
        }
    }
}

/// The demo project with the computed columns and metrics above, and
/// `policy_extra` appended to its pii_policy.yaml, checked against the
/// demo warehouse's catalog.
fn demo(tag: &str, policy_extra: &str) -> Project {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("pii-rules-{tag}"));
    let _ = std::fs::remove_dir_all(&dir);
    copy_dir(&repo("semantics/demo"), &dir);
    let _ = std::fs::remove_file(dir.join("warehouse.duckdb"));
    let _ = std::fs::remove_dir_all(dir.join(".schemabrain"));
    let customer = dir.join("entities/customer.yaml");
    let text = std::fs::read_to_string(&customer).unwrap();
    std::fs::write(&customer, format!("{}\n{DEMO_COLUMNS}", text.trim_end())).unwrap();
    for (rel, text) in DEMO_METRICS {
        std::fs::write(dir.join(rel), text).unwrap();
    }
    let policy = dir.join("pii_policy.yaml");
    let text = std::fs::read_to_string(&policy).unwrap();
    assert!(text.contains("block: [contact]") && !text.contains("min_group_size"), "the demo policy blocks contact and sets no k");
    std::fs::write(&policy, format!("{}\n{policy_extra}", text.trim_end())).unwrap();
    let catalog = demo_engine().introspect().expect("introspects");
    Project::open_declared(&dir).unwrap_or_else(|d| panic!("{d}")).with_catalog(catalog).unwrap_or_else(|d| panic!("{d}"))
}

fn run(project: &Project, args: Json) -> Json {
    serde_json::to_value(tools::call(project, "get_metric", &args, Execution::run(&demo_engine(), limits()))).unwrap()
}

/// A row as text, each value cut to 10 characters when it reads as a date
/// (a bucket is a DATE by hand and may be a TIMESTAMP in ours).
fn row_text(row: &Json) -> String {
    let cells: Vec<String> = row
        .as_array()
        .unwrap_or_else(|| panic!("a row is an array: {row}"))
        .iter()
        .map(|v| match v.as_str() {
            Some(s) if s.len() >= 10 && s.as_bytes()[4] == b'-' && s.as_bytes()[7] == b'-' => s[..10].to_string(),
            Some(s) => s.to_string(),
            None => v.to_string(),
        })
        .collect();
    cells.join(" | ")
}

fn answer_rows(env: &Json) -> Vec<String> {
    assert!(env["status"] == "success" || env["status"] == "empty", "{env:#}");
    let mut rows: Vec<String> = env["data"]["rows"].as_array().unwrap_or_else(|| panic!("rows: {env:#}")).iter().map(row_text).collect();
    rows.sort();
    rows
}

fn by_hand(sql: &str) -> Vec<String> {
    let hand = CompiledSql { sql: sql.to_string(), params: Vec::new(), dialect: "duckdb" };
    let rows = demo_engine().run(&hand, limits()).unwrap().rows;
    let mut rows: Vec<String> = serde_json::to_value(rows).unwrap().as_array().unwrap().iter().map(row_text).collect();
    rows.sort();
    rows
}

fn assert_refused(project: &Project, args: Json, categories: &[&str]) {
    let env = serde_json::to_value(tools::call(project, "get_metric", &args, Execution::DryRun)).unwrap();
    assert_eq!(env["status"], "refused", "{args}: {env:#}");
    assert_eq!(env["error"]["kind"], "pii_blocked", "{args}: {env:#}");
    assert_eq!(env["error"]["pii_categories"], json!(categories), "{args}: {env:#}");
    // A refusal runs no SQL and shows none.
    assert!(env["data"]["sql"].is_null(), "{args}: {env:#}");
}

/// A blocked category, and the floor, are refused in every use: grouped,
/// filtered (by `filters` and by a where string), inside a computed
/// column grouped or presence-tested, counted distinct, MIN/MAX.
#[test]
fn blocked_categories_are_refused_in_every_use() {
    let p = demo("blocked", "");
    let contact = &["contact"][..];
    let credential = &["credential"][..];
    for (args, cats) in [
        (json!({"name": "customer_count", "group_by": ["customer.email"]}), contact),
        (json!({"name": "revenue", "group_by": ["customer.full_name"]}), contact),
        (json!({"name": "customer_count", "filters": [{"column": "customer.phone", "op": "eq", "value": "+1-555-0000001"}]}), contact),
        (json!({"name": "customer_count", "filters": [{"column": "customer.email", "op": "like", "value": "%@example.com"}]}), contact),
        (json!({"name": "customer_count", "where": ["{{ Dimension('customer__email') }} LIKE 'ada%'"]}), contact),
        (json!({"name": "customer_count", "group_by": ["customer.mail_domain"]}), contact),
        (json!({"name": "customer_count", "filters": [{"column": "customer.mail_domain", "op": "eq", "value": "example.com"}]}), contact),
        // A presence test on a computed column tests its value.
        (json!({"name": "customer_count", "filters": [{"column": "customer.phone_or_none", "op": "not_null"}]}), contact),
        (json!({"name": "customer_count", "group_by": ["customer.phone_or_none"]}), contact),
        (json!({"name": "distinct_emails"}), contact),
        (json!({"name": "latest_email"}), contact),
        // The floor, which no policy unblocks.
        (json!({"name": "customer_count", "group_by": ["customer.password_hash"]}), credential),
        (json!({"name": "customer_count", "filters": [{"column": "customer.password_hash", "op": "eq", "value": "x"}]}), credential),
        (json!({"name": "customer_count", "filters": [{"column": "customer.secret_set", "op": "is_null"}]}), credential),
        (json!({"name": "customer_count", "group_by": ["customer.secret_set"]}), credential),
    ] {
        assert_refused(&p, args, cats);
    }
    // MIN/MAX of an unblocked personal column: one person's raw value.
    let env = serde_json::to_value(tools::call(&p, "get_metric", &json!({"name": "latest_birth"}), Execution::DryRun)).unwrap();
    assert_eq!(env["error"]["kind"], "pii_blocked", "{env:#}");
    assert_eq!(env["error"]["pii_categories"], json!(["demographic_protected"]), "{env:#}");
    assert!(env["error"]["message"].as_str().unwrap().contains("raw value"), "{env:#}");
}

/// An unblocked personal column may be filtered on (the cohort:
/// born in or after 1990), and a result filtered on it withholds every row
/// computed over fewer than k people: the default k, or the policy's own.
#[test]
fn unblocked_personal_columns_are_filtered_with_the_minimum_group_size() {
    let p = demo("filtered", "");
    // The case, ungrouped.
    let env = run(&p, json!({"name": "customer_count", "filters": [{"column": "customer.date_of_birth", "op": "gte", "value": "1990-01-01"}]}));
    let want = by_hand("SELECT count(DISTINCT id) FROM main.customers WHERE date_of_birth >= DATE '1990-01-01'");
    assert_eq!(answer_rows(&env), want, "{env:#}");
    assert!(env["data"]["sql"].as_str().unwrap().contains("HAVING"), "the floor is in the SQL: {env:#}");
    // A narrow cohort by segment: small segments are withheld, by the
    // default k (5) and by a policy's own (10).
    let cohort = json!({"name": "customer_count", "group_by": ["customer.segment"], "filters": [
        {"column": "customer.date_of_birth", "op": "gte", "value": "1990-01-01"},
        {"column": "customer.date_of_birth", "op": "lt", "value": "1990-01-26"}]});
    let hand = |k: usize| {
        by_hand(&format!(
            "SELECT segment, count(DISTINCT id) FROM main.customers WHERE date_of_birth >= DATE '1990-01-01' AND date_of_birth < DATE '1990-01-26' GROUP BY 1 HAVING count(DISTINCT id) >= {k}"
        ))
    };
    let all = hand(1);
    assert_eq!(all.len(), 3, "every segment holds someone: {all:?}");
    let (k5, k10) = (hand(5), hand(10));
    assert!(!k10.is_empty() && k5.len() < all.len() && k10.len() < k5.len(), "the data holds segments on both sides of each k: {all:?}");
    let env = run(&p, cohort.clone());
    assert_eq!(answer_rows(&env), k5, "{env:#}");
    assert!(env.to_string().contains("min_group_size is 5"), "the answer says rows were left out: {env:#}");
    let p10 = demo("filtered-k10", "min_group_size: 10\n");
    assert_eq!(answer_rows(&run(&p10, cohort)), k10);
    // Through a computed column reading the birth date, in a where string.
    let env = run(&p, json!({"name": "customer_count", "group_by": ["customer.segment"], "where": ["{{ Dimension('customer__birth_year') }} = 1990"]}));
    let want = by_hand("SELECT segment, count(DISTINCT id) FROM main.customers WHERE year(date_of_birth) = 1990 GROUP BY 1 HAVING count(DISTINCT id) >= 5");
    assert_eq!(answer_rows(&env), want, "{env:#}");
}

/// Bucketing and grouping by a personal column apply the minimum group
/// size: birth weeks of 1990 hold a handful of customers each.
#[test]
fn a_bucketed_personal_column_withholds_small_groups() {
    let p = demo("bucketed", "");
    let hand = |k: usize| {
        by_hand(&format!(
            "SELECT date_trunc('week', date_of_birth) AS w, count(DISTINCT id) FROM main.customers
             WHERE date_of_birth >= DATE '1990-01-01' AND date_of_birth < DATE '1991-01-01' GROUP BY 1 HAVING count(DISTINCT id) >= {k}"
        ))
    };
    let (all, kept) = (hand(1), hand(5));
    assert!(!kept.is_empty() && kept.len() < all.len(), "weeks on both sides of k: {} of {}", kept.len(), all.len());
    let env = run(
        &p,
        json!({"name": "customers_total", "time_dimension": "customer.date_of_birth", "time_grain": "week", "limit": 1000, "filters": [
            {"column": "customer.date_of_birth", "op": "gte", "value": "1990-01-01"},
            {"column": "customer.date_of_birth", "op": "lt", "value": "1991-01-01"}]}),
    );
    assert_eq!(answer_rows(&env), kept, "{env:#}");
    // Grouped by the computed birth year and the segment.
    let env = run(&p, json!({"name": "customer_count", "group_by": ["customer.birth_year", "customer.segment"], "limit": 1000}));
    let want = by_hand("SELECT year(date_of_birth), segment, count(DISTINCT id) FROM main.customers GROUP BY 1, 2 HAVING count(DISTINCT id) >= 5");
    assert_eq!(answer_rows(&env), want, "{env:#}");
}

/// A presence test reveals no value and is allowed on any column, blocked
/// and floor ones included, as `COUNT(col)` is: as a filter, in a where
/// string, and as a computed dimension. Nothing is withheld for it.
#[test]
fn presence_tests_are_allowed_on_any_column() {
    let p = demo("presence", "");
    let cases = [
        (
            json!({"name": "customer_count", "group_by": ["customer.segment"], "filters": [{"column": "customer.phone", "op": "not_null"}]}),
            "SELECT segment, count(DISTINCT id) FROM main.customers WHERE phone IS NOT NULL GROUP BY 1",
        ),
        (
            json!({"name": "customer_count", "filters": [{"column": "customer.email", "op": "is_null"}]}),
            "SELECT count(DISTINCT id) FROM main.customers WHERE email IS NULL",
        ),
        (
            json!({"name": "customer_count", "group_by": ["customer.country"], "filters": [{"column": "customer.password_hash", "op": "not_null"}], "limit": 1000}),
            "SELECT country, count(DISTINCT id) FROM main.customers WHERE password_hash IS NOT NULL GROUP BY 1",
        ),
        (
            json!({"name": "customer_count", "group_by": ["customer.segment"], "where": ["{{ Dimension('customer__phone') }} IS NOT NULL"]}),
            "SELECT segment, count(DISTINCT id) FROM main.customers WHERE phone IS NOT NULL GROUP BY 1",
        ),
        (
            json!({"name": "customer_count", "group_by": ["customer.has_phone"]}),
            "SELECT phone IS NOT NULL, count(DISTINCT id) FROM main.customers GROUP BY 1",
        ),
        (
            json!({"name": "revenue", "group_by": ["customer.contact_kind"]}),
            "SELECT CASE WHEN c.phone IS NULL THEN 'none' WHEN c.email IS NULL THEN 'phone only' ELSE 'both' END, sum(o.amount)
             FROM main.orders o LEFT JOIN main.customers c ON c.id = o.customer_id
             WHERE o.status NOT IN ('cancelled') GROUP BY 1",
        ),
        (json!({"name": "email_count"}), "SELECT count(email) FROM main.customers"),
    ];
    for (args, sql) in cases {
        let env = run(&p, args.clone());
        assert_eq!(answer_rows(&env), by_hand(sql), "{args}: {env:#}");
        assert!(!env["data"]["sql"].as_str().unwrap_or_default().contains("HAVING"), "{args}: nothing withheld for a presence test: {env:#}");
    }
    // `email IS NULL` selects nobody here, so it is not the filter left out.
    assert_eq!(by_hand("SELECT count(*) FROM main.customers WHERE email IS NULL"), ["0"]);
}
