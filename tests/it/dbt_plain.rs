//! `schemabrain import dbt` on plain dbt projects (issue 36, items 1 and
//! 3): models, sources, their data tests, descriptions and docs blocks,
//! without semantic models. The classic jaffle_shop (vendored under
//! tests/dbt/plain/jaffle_shop) is built in DuckDB from its seeds and its
//! compiled SQL, imported, and asked questions whose answers are checked
//! against SQL written by hand; small fixtures of our own check each rule.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value as Json};

use schemabrain::project::Project;
use schemabrain::tools::{Introspect, Session, SessionOptions};

use crate::common::repo;

fn temp(tag: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(crate::engines_servers::unique_name(tag));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// jaffle_shop's warehouse: the seeds as `main.raw_*`, the models built
/// from their compiled SQL (staging as views, the marts as tables, as its
/// dbt_project.yml says).
fn jaffle_warehouse(dir: &Path) -> PathBuf {
    let path = dir.join("jaffle.duckdb");
    let c = duckdb::Connection::open(&path).unwrap();
    let fixture = repo("tests/dbt/plain/jaffle_shop");
    for seed in ["raw_customers", "raw_orders", "raw_payments"] {
        let csv = fixture.join(format!("seeds/{seed}.csv"));
        c.execute_batch(&format!("CREATE TABLE main.{seed} AS SELECT * FROM read_csv('{}', header = true)", csv.display())).unwrap();
    }
    for model in ["stg_customers", "stg_orders", "stg_payments", "customers", "orders"] {
        let sql = std::fs::read_to_string(repo(&format!("tests/dbt/plain/jaffle_shop_build/{model}.sql"))).unwrap();
        c.execute_batch(&sql).unwrap_or_else(|e| panic!("{model}: {e}"));
    }
    path
}

/// Runs `schemabrain import dbt DIR --out OUT --json` with `extra` flags;
/// the JSON summary and the exit code.
fn import(dir: &Path, out: &Path, extra: &[&str]) -> (Json, Option<i32>) {
    let run = Command::new(env!("CARGO_BIN_EXE_schemabrain"))
        .env_remove("DBT_PROFILES_DIR")
        .env("HOME", out.parent().unwrap())
        .args(["import", "dbt", dir.to_str().unwrap(), "--out", out.to_str().unwrap(), "--json"])
        .args(extra)
        .output()
        .unwrap();
    let doc: Json = serde_json::from_slice(&run.stdout).unwrap_or_else(|e| panic!("one JSON document ({e}): {}", String::from_utf8_lossy(&run.stdout)));
    (doc, run.status.code())
}

/// Rows of hand-written SQL on the warehouse, as `key → value` text.
fn by_hand(db: &Path, sql: &str) -> BTreeMap<String, String> {
    let c = duckdb::Connection::open_with_flags(db, duckdb::Config::default().access_mode(duckdb::AccessMode::ReadOnly).unwrap()).unwrap();
    let mut stmt = c.prepare(sql).unwrap();
    let rows = stmt
        .query_map([], |r| {
            let k: Option<String> = r.get(0)?;
            let v: f64 = r.get(1)?;
            Ok((k.unwrap_or_else(|| "null".into()), format!("{v:.6}")))
        })
        .unwrap();
    rows.map(Result::unwrap).collect()
}

/// An answer's rows (one key, one metric) as `key → value` text.
fn answered(env: &Json) -> BTreeMap<String, String> {
    assert_eq!(env["status"], "success", "{env:#}");
    env["data"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            let k = match &r[0] {
                Json::Null => "null".to_string(),
                Json::String(s) => s.clone(),
                other => other.to_string(),
            };
            let v = match &r[1] {
                Json::String(s) => s.parse::<f64>().unwrap(),
                other => other.as_f64().unwrap(),
            };
            (k, format!("{v:.6}"))
        })
        .collect()
}

fn session(out: &Path, db: &Path) -> Session {
    let options = SessionOptions {
        source: Some(format!("duckdb:{}", db.display())),
        audit: false,
        introspect: Introspect::Always,
        require_engine: true,
        ..SessionOptions::default()
    };
    Session::open(Project::open(out).unwrap(), options).expect("the imported project opens on the warehouse")
}

/// Issue 36's proof on jaffle_shop: entities for the marts and the staging
/// models with their keys, the orders → customers join, descriptions with
/// the docs block rendered and the accepted values, the two name columns
/// declared "PII." tagged and refused, `credit_card_amount` settled as an
/// amount by its values, and answers equal to SQL written by hand.
#[test]
fn jaffle_shop_imports_and_answers_as_sql_by_hand() {
    let dir = temp("jaffle");
    let db = jaffle_warehouse(&dir);
    let out = dir.join("project");
    let fixture = repo("tests/dbt/plain/jaffle_shop");
    let source = format!("duckdb:{}", db.display());
    let (doc, code) = import(&fixture, &out, &["--source", &source]);
    assert_eq!(code, Some(0), "{doc:#}");
    assert!(doc["problems"].is_null(), "the imported project loads: {doc:#}");
    let p = Project::open(&out).unwrap();
    let m = &p.model;
    let identity = |e: &str| m.entity(e).unwrap_or_else(|| panic!("entity {e}: {:?}", m.entities.keys().collect::<Vec<_>>())).identity.clone();
    assert_eq!(identity("customer"), vec!["customer_id".to_string()]);
    assert_eq!(identity("order"), vec!["order_id".to_string()]);
    assert_eq!(identity("stg_customer"), vec!["customer_id".to_string()]);
    assert_eq!(identity("stg_order"), vec!["order_id".to_string()]);
    assert_eq!(identity("stg_payment"), vec!["payment_id".to_string()]);
    assert_eq!(m.entities.len(), 5, "{:?}", m.entities.keys().collect::<Vec<_>>());
    for e in m.entities.values() {
        assert_eq!(e.origin.as_str(), "dbt_import", "{}", e.name);
        let source = e.provenance.as_ref().and_then(|p| p.source.clone()).unwrap_or_default();
        assert!(source.starts_with("models/") && source.contains(".yml:"), "{}: provenance names the YAML file and line: {source}", e.name);
    }
    // The relationships test is the join, measured on the warehouse.
    let join = m.joins.get("order_customer").unwrap_or_else(|| panic!("{:?}", m.joins.keys().collect::<Vec<_>>()));
    assert_eq!((join.source_entity.as_str(), join.target_entity.as_str()), ("order", "customer"));
    assert_eq!(join.cardinality.map(|c| c.as_str()), Some("many_to_one"));
    assert_eq!(join.origin.as_str(), "dbt_import");
    // Descriptions: the model's, the column's, the docs block rendered, the accepted values.
    let order = m.entity("order").unwrap();
    assert!(order.description.as_deref().unwrap().starts_with("This table has basic information about orders"), "{order:?}");
    let status = order.column("status").unwrap().description.clone().unwrap();
    assert!(status.contains("Orders can be one of the following statuses") && !status.contains("{{"), "{status}");
    assert!(status.contains("Accepted values: placed, shipped, completed, return_pending, returned."), "{status}");
    let statuses: Vec<String> = ["placed", "shipped", "completed", "return_pending", "returned"].map(String::from).to_vec();
    assert_eq!(order.accepted_values_of("status"), Some(statuses.as_slice()), "the accepted values are the column's known values");
    assert_eq!(m.entity("customer").unwrap().column("first_name").unwrap().description.as_deref(), Some("Customer's first name. PII."));
    // The two name columns the project calls PII are tagged and blocked;
    // an amount paid by card is not a card number.
    for col in ["first_name", "last_name"] {
        let d = schemabrain::pii::decide_entity(m, "customer", col);
        assert!(d.tag.is_tagged() && d.redacted(), "{col}: {d:?}");
    }
    let card = schemabrain::pii::decide_entity(m, "order", "credit_card_amount");
    assert!(!card.tag.is_tagged(), "{card:?}");
    assert!(m.metrics.contains_key("order_credit_card_amount_sum"), "{:?}", m.metrics.keys().collect::<Vec<_>>());

    // Written by hand (the connection closed before the session opens).
    let counts_by_hand = by_hand(&db, "select cast(c.number_of_orders as varchar), cast(count(*) as double) from main.orders o left join main.customers c on o.customer_id = c.customer_id group by 1");
    let amounts_by_hand = by_hand(&db, "select status, cast(sum(amount) as double) from main.orders group by 1");
    assert!(counts_by_hand.len() > 3 && amounts_by_hand.len() == 5, "{counts_by_hand:?} {amounts_by_hand:?}");
    let s = session(&out, &db);
    // Order counts by a customer column.
    let env = serde_json::to_value(s.call("get_metric", &json!({"name": "order_count", "group_by": ["customer.number_of_orders"], "limit": 1000}))).unwrap();
    assert_eq!(answered(&env), counts_by_hand);
    // Amounts by status.
    let env = serde_json::to_value(s.call("get_metric", &json!({"name": "order_amount_sum", "group_by": ["order.status"], "limit": 1000}))).unwrap();
    assert_eq!(answered(&env), amounts_by_hand);
    // describe_entity shows the known values.
    let env = serde_json::to_value(s.call("describe_entity", &json!({"name": "order"}))).unwrap();
    let col = env["data"]["columns"].as_array().unwrap().iter().find(|c| c["name"] == "status").cloned().unwrap();
    assert_eq!(col["accepted_values"], json!(statuses), "{col:#}");
    // A filter value the column never takes is caught, not answered empty:
    // a typo is corrected (must_obey), and the correction answers what the
    // SQL by hand with the value meant answers; a value with no plain
    // meaning leads to the known values, never to a dropped filter.
    let shipped_by_hand = by_hand(&db, "select status, cast(sum(amount) as double) from main.orders where status in ('shipped', 'returned') group by 1");
    let typo = json!({"name": "order_amount_sum", "group_by": ["order.status"], "filters": [{"column": "order.status", "op": "in", "value": ["shiped", "Returned"]}], "limit": 1000});
    let env = s.call("get_metric", &typo);
    let err = env.tool_error().unwrap_or_else(|| panic!("{}", serde_json::to_string(&env).unwrap()));
    assert_eq!(err.kind().as_str(), "invalid_argument", "{}", err.message());
    assert!(err.message().contains("shiped") && err.message().contains("`return_pending`"), "{}", err.message());
    assert!(env.next_action().unwrap().must_obey);
    crate::recovery::assert_recovery_keeps_question(&typo, &env);
    let fixed = Json::Object(err.recovery().suggested_args().cloned().unwrap());
    assert_eq!(fixed["filters"][0]["value"], json!(["shipped", "returned"]), "{fixed}");
    assert_eq!(answered(&serde_json::to_value(s.call("get_metric", &fixed)).unwrap()), shipped_by_hand);
    let lost = json!({"name": "order_count", "filters": [{"column": "order.status", "op": "ne", "value": "lost"}]});
    let env = s.call("get_metric", &lost);
    let err = env.tool_error().unwrap();
    assert_eq!(err.kind().as_str(), "invalid_argument");
    assert!(!env.next_action().unwrap().must_obey);
    assert_eq!(err.recovery().suggested_tool(), Some("describe_entity"));
    assert_eq!(err.recovery().fuzzy_matches(), statuses.as_slice());
    // A value it takes is answered.
    let env = s.call("get_metric", &json!({"name": "order_count", "filters": [{"column": "order.status", "op": "eq", "value": "placed"}]}));
    assert!(env.tool_error().is_none(), "{}", serde_json::to_string(&env).unwrap());
    // A group-by on a name is refused.
    let env = serde_json::to_value(s.call("get_metric", &json!({"name": "order_count", "group_by": ["customer.first_name"]}))).unwrap();
    assert_eq!(env["status"], "refused", "{env:#}");
    assert_eq!(env["error"]["kind"], "pii_blocked", "{env:#}");
    drop(s);

    // Re-importing keeps a person's edit and changes nothing else.
    let customer_file = out.join("entities/customer.yaml");
    let edited = std::fs::read_to_string(&customer_file).unwrap().replace("This table has basic information about a customer", "Our customers");
    std::fs::write(&customer_file, &edited).unwrap();
    let (again, code) = import(&fixture, &out, &["--source", &source]);
    assert_eq!(code, Some(0), "{again:#}");
    assert_eq!(again["files"]["kept"], json!(["entities/customer.yaml"]), "{again:#}");
    assert_eq!(again["files"]["updated"], json!([]), "{again:#}");
    assert_eq!(std::fs::read_to_string(&customer_file).unwrap(), edited);
}

/// Search knows what dbt knows (item 3): a docs block's words and an
/// accepted value find the entity that holds them.
#[test]
fn search_finds_dbt_descriptions_docs_blocks_and_accepted_values() {
    let dir = temp("jaffle-search");
    let db = jaffle_warehouse(&dir);
    let out = dir.join("project");
    let source = format!("duckdb:{}", db.display());
    let (doc, code) = import(&repo("tests/dbt/plain/jaffle_shop"), &out, &["--source", &source]);
    assert_eq!(code, Some(0), "{doc:#}");
    let s = session(&out, &db);
    let names = |query: &str| -> Vec<String> {
        let env = serde_json::to_value(s.call("find_relevant_entities", &json!({"query": query, "response_format": "detailed"}))).unwrap();
        env["data"]["hits"].as_array().unwrap_or_else(|| panic!("{query}: {env:#}")).iter().map(|h| h["name"].as_str().unwrap().to_string()).collect()
    };
    // Words only the docs block of `orders.status` holds.
    assert_eq!(names("received at the warehouse").first().map(String::as_str), Some("order"));
    // stg_orders has no description at all: only its accepted values say `return_pending`.
    assert!(names("return_pending").contains(&"stg_order".to_string()));
    assert!(names("bank_transfer").contains(&"stg_payment".to_string()));
}

/// Without a warehouse the YAML alone is imported: keys and joins from the
/// tests, no types, nothing measured; the project loads.
#[test]
fn jaffle_shop_imports_from_its_yaml_alone() {
    let dir = temp("jaffle-yaml");
    let out = dir.join("project");
    let (doc, code) = import(&repo("tests/dbt/plain/jaffle_shop"), &out, &[]);
    assert_eq!(code, Some(0), "{doc:#}");
    assert!(doc["problems"].is_null(), "{doc:#}");
    let p = Project::open(&out).unwrap();
    assert_eq!(p.model.entity("order").unwrap().identity, vec!["order_id".to_string()]);
    assert_eq!(p.model.joins.get("order_customer").and_then(|j| j.cardinality).map(|c| c.as_str()), Some("many_to_one"));
    assert!(p.model.metrics.contains_key("order_count"));
}

/// A dbt project with nothing to import says so and exits 1.
#[test]
fn a_project_with_nothing_to_import_says_so() {
    let dir = temp("dbt-empty");
    let project = dir.join("empty");
    std::fs::create_dir_all(project.join("models")).unwrap();
    std::fs::write(project.join("dbt_project.yml"), "name: empty\nprofile: empty\n").unwrap();
    std::fs::write(project.join("models/eph.sql"), "{{ config(materialized='ephemeral') }}\nselect 1 as x\n").unwrap();
    let out = dir.join("out");
    let (doc, code) = import(&project, &out, &[]);
    assert_eq!(code, Some(1), "{doc:#}");
    assert!(doc["problems"].as_str().unwrap().contains("nothing written"), "{doc:#}");
    assert!(!out.join("schemabrain.yaml").exists());
}

/// The rules fixture's warehouse (tests/dbt/plain/rules): each model's
/// table with data that shows what its test is about.
fn rules_warehouse(dir: &Path) -> PathBuf {
    let path = dir.join("rules.duckdb");
    let c = duckdb::Connection::open(&path).unwrap();
    c.execute_batch(
        "CREATE SCHEMA raw;
         CREATE TABLE raw.raw_accounts (id INTEGER, name VARCHAR);
         INSERT INTO raw.raw_accounts VALUES (1, 'a'), (2, 'b'), (3, 'c');
         CREATE TABLE main.accounts (account_id INTEGER, owner_email VARCHAR, tier VARCHAR);
         INSERT INTO main.accounts VALUES (1, 'ann@example.com', 'basic'), (2, 'bob@example.com', 'gold'), (3, 'cy@example.com', 'gold');
         CREATE TABLE main.account_days (account_id INTEGER, day DATE, balance DECIMAL(12,2));
         INSERT INTO main.account_days VALUES (1, '2024-01-01', 10), (1, '2024-01-02', 12), (2, '2024-01-01', 5), (2, '2024-01-02', 7);
         CREATE TABLE main.transfers (transfer_id INTEGER, from_account_id INTEGER, to_account_id INTEGER, amount DECIMAL(12,2));
         INSERT INTO main.transfers VALUES (1, 1, 2, 10.5), (2, 2, 3, 4), (3, 1, 3, 1);
         CREATE TABLE main.payments (payment_id INTEGER, account_id INTEGER, amount DECIMAL(12,2));
         INSERT INTO main.payments VALUES (1, 1, 3), (2, 9, 4), (3, 8, 5), (4, NULL, 1), (5, 1, 2);
         CREATE TABLE main.events (account_id INTEGER, kind VARCHAR);
         INSERT INTO main.events VALUES (1, 'click'), (1, 'click'), (2, 'view');",
    )
    .unwrap();
    path
}

/// One rule of issue 36 item 1 per model of the rules fixture: a composite
/// key, a primary_key constraint, a model pointing at another twice, a
/// relationships test the data refutes, a source table, an ephemeral model
/// skipped, a model without any key, PII declared in `meta`.
#[test]
fn each_rule_of_the_plain_import() {
    let dir = temp("dbt-rules");
    let db = rules_warehouse(&dir);
    let out = dir.join("project");
    let (doc, code) = import(&repo("tests/dbt/plain/rules"), &out, &["--source", &format!("duckdb:{}", db.display())]);
    assert_eq!(code, Some(0), "{doc:#}");
    assert!(doc["problems"].is_null(), "{doc:#}");
    let notes = doc["notes"].to_string();
    let p = Project::open(&out).unwrap();
    let m = &p.model;
    let entity = |n: &str| m.entity(n).unwrap_or_else(|| panic!("entity {n}: {:?}", m.entities.keys().collect::<Vec<_>>()));
    // Keys: unique + not_null, a composite test, a constraint, none.
    assert_eq!(entity("account").identity, vec!["account_id".to_string()]);
    assert_eq!(entity("account_day").identity, vec!["account_id".to_string(), "day".into()]);
    assert_eq!(entity("transfer").identity, vec!["transfer_id".to_string()]);
    assert_eq!(entity("event").identity, Vec::<String>::new(), "no key declared and none in the data");
    assert!(notes.contains("model events has no key declared"), "{notes}");
    // The docs block renders into the model's description.
    assert_eq!(entity("account").description.as_deref(), Some("Customer accounts of the bank, one per contract."));
    // A source table is an entity bound to its schema and identifier.
    let raw = entity("raw_account");
    assert_eq!(raw.table.to_string(), "raw.raw_accounts");
    assert_eq!(raw.identity, vec!["id".to_string()]);
    assert_eq!(raw.description.as_deref(), Some("Accounts as the bank's system exports them."));
    // Ephemeral: skipped, and said so.
    assert!(m.entity("eph_helper").is_none());
    assert!(notes.contains("model eph_helper skipped: ephemeral"), "{notes}");
    // A model pointing at another twice: joins named after the columns.
    for (name, col) in [("transfer_from_account", "from_account_id"), ("transfer_to_account", "to_account_id")] {
        let j = m.joins.get(name).unwrap_or_else(|| panic!("{name}: {:?}", m.joins.keys().collect::<Vec<_>>()));
        assert_eq!((j.target_entity.as_str(), j.on[0].source.as_str(), j.on[0].target.as_str()), ("account", col, "account_id"));
        assert_eq!(j.cardinality.map(|c| c.as_str()), Some("many_to_one"));
    }
    let day = m.joins.get("account_day_account").expect("composite-keyed model joined by its test");
    assert_eq!(day.cardinality.map(|c| c.as_str()), Some("many_to_one"));
    // A relationships test the data refutes: kept (the project declares
    // it), with the orphans reported and low confidence, never INNER.
    let pay = m.joins.get("payment_account").expect("declared join kept");
    assert_eq!(pay.provenance.as_ref().and_then(|p| p.confidence.clone()).as_deref(), Some("low"));
    assert!(pay.provenance.as_ref().unwrap().evidence.iter().any(|e| e.contains("2 rows")), "{pay:?}");
    assert!(pay.every_row_matches.is_none(), "{pay:?}");
    assert_eq!(pay.cardinality.map(|c| c.as_str()), Some("many_to_one"));
    assert!(notes.contains("join `payment_account`") && notes.contains("2 rows of `main.payments`"), "{notes}");
    // Every row of transfers finds its account: the join may be INNER.
    assert!(m.joins["transfer_from_account"].every_row_matches.is_some());
    // PII declared in meta: a reviewed tag, its category blocked.
    let email = schemabrain::pii::decide_entity(m, "account", "owner_email");
    assert!(email.redacted() && email.tag.source == "policy", "{email:?}");
    // Accepted values (dbt 1.10's `arguments:` form) reach the description.
    assert!(entity("account").column("tier").unwrap().description.as_deref().unwrap().contains("basic, gold"));
    // Counts: distinct identities, and rows of a keyless model by a column.
    assert!(m.metrics.contains_key("account_count") && m.metrics.contains_key("transfer_amount_sum"), "{:?}", m.metrics.keys().collect::<Vec<_>>());
}

/// A project with a semantic model and plain models imports both; the
/// model the semantic model binds is imported once, from it, and its
/// foreign entity joins the plain model's entity of that name.
#[test]
fn semantic_and_plain_models_import_together() {
    let dir = temp("dbt-mixed");
    let out = dir.join("project");
    let (doc, code) = import(&repo("tests/dbt/plain/mixed"), &out, &[]);
    assert_eq!(code, Some(0), "{doc:#}");
    assert!(doc["problems"].is_null(), "{doc:#}");
    let p = Project::open(&out).unwrap();
    let names: Vec<&String> = p.model.entities.keys().collect();
    assert_eq!(names, ["customer", "order", "refund"], "{doc:#}");
    assert_eq!(p.model.entity("order").unwrap().description.as_deref(), Some("Orders, as the semantic layer sees them."));
    assert_eq!(p.model.entity("customer").unwrap().identity, vec!["customer_id".to_string()]);
    assert!(p.model.metrics.contains_key("order_total") && p.model.metrics.contains_key("customer_count"));
    assert_eq!(doc["plain"]["entities"], 2, "{doc:#}");
    let join = p.model.joins.get("order_customer").expect("the foreign entity joins the plain entity");
    assert_eq!((join.target_entity.as_str(), join.on[0].source.as_str(), join.on[0].target.as_str()), ("customer", "customer_id", "customer_id"));
    // A plain model's relationships test to the semantic model's relation joins its entity.
    let join = p.model.joins.get("refund_order").unwrap_or_else(|| panic!("the plain model joins the semantic model's entity: {doc:#}"));
    assert_eq!((join.source_entity.as_str(), join.target_entity.as_str()), ("refund", "order"));
    assert_eq!((join.on[0].source.as_str(), join.on[0].target.as_str()), ("order_id", "order_id"));
}

/// The same project on a warehouse: the refund → order join (to the
/// semantic model's entity) measured, its orphan reported, and refunds
/// counted by the country of the order's customer (two joins, one from
/// each kind of model) equal to SQL written by hand.
#[test]
fn a_plain_model_joins_a_semantic_models_entity_and_answers_by_hand() {
    let dir = temp("dbt-mixed-warehouse");
    let db = dir.join("mixed.duckdb");
    duckdb::Connection::open(&db)
        .unwrap()
        .execute_batch(
            "CREATE TABLE main.customers (customer_id INTEGER, country VARCHAR);
             INSERT INTO main.customers VALUES (1, 'NZ'), (2, 'FR'), (3, 'NZ');
             CREATE TABLE main.orders (order_id INTEGER, customer_id INTEGER, amount DECIMAL(10,2), ordered_at DATE);
             INSERT INTO main.orders VALUES (1, 1, 10, '2024-01-01'), (2, 2, 20, '2024-01-02'), (3, 3, 5, '2024-01-03'), (4, 1, 7, '2024-01-04');
             CREATE TABLE main.refunds (refund_id INTEGER, order_id INTEGER, amount DECIMAL(10,2));
             INSERT INTO main.refunds VALUES (1, 1, 2), (2, 1, 3), (3, 2, 4), (4, 3, 1), (5, 99, 6);",
        )
        .unwrap();
    let out = dir.join("project");
    let (doc, code) = import(&repo("tests/dbt/plain/mixed"), &out, &["--source", &format!("duckdb:{}", db.display())]);
    assert_eq!(code, Some(0), "{doc:#}");
    let p = Project::open(&out).unwrap();
    let join = p.model.joins.get("refund_order").unwrap_or_else(|| panic!("{doc:#}"));
    assert_eq!(join.target_entity, "order");
    let notes = doc["notes"].to_string();
    assert!(notes.contains("refund_order") && notes.contains("1 rows of `main.refunds`"), "the orphan refund is reported: {notes}");
    let metric = p.model.metrics.keys().find(|m| m.starts_with("refund") && m.ends_with("count")).cloned().unwrap_or_else(|| panic!("a count of refunds: {doc:#}"));
    let s = session(&out, &db);
    let env = serde_json::to_value(s.call("get_metric", &json!({"name": metric, "group_by": ["customer.country"]}))).unwrap();
    let expected = by_hand(
        &db,
        "SELECT c.country, count(*) FROM main.refunds r LEFT JOIN main.orders o ON o.order_id = r.order_id LEFT JOIN main.customers c ON c.customer_id = o.customer_id GROUP BY 1",
    );
    assert_eq!(answered(&env), expected, "{env:#}");
}

/// dbt's own `manifest.json` (what any dbt run writes to `target/`):
/// models, sources and tests as nodes, descriptions resolved, imported
/// from the file alone.
#[test]
fn a_dbt_manifest_imports_like_the_yaml() {
    let dir = temp("dbt-manifest");
    let test = |id: &str, name: &str, attached: &str, column: &str, kwargs: Json| {
        (id.to_string(), json!({"resource_type": "test", "attached_node": attached, "column_name": column, "test_metadata": {"name": name, "kwargs": kwargs}}))
    };
    let mut nodes = serde_json::Map::new();
    nodes.insert("model.shop.customers".into(), json!({
        "resource_type": "model", "name": "customers", "schema": "analytics", "alias": "customers",
        "description": "People who order.", "patch_path": "shop://models/schema.yml",
        "config": {"materialized": "table"},
        "columns": {"customer_id": {"name": "customer_id", "description": "The key."}, "email": {"name": "email", "description": "", "meta": {"contains_pii": true}}},
        "depends_on": {"nodes": []}
    }));
    nodes.insert("model.shop.orders".into(), json!({
        "resource_type": "model", "name": "orders", "schema": "analytics", "alias": "orders",
        "description": "Orders: {{ doc('orders') }}", "patch_path": "shop://models/schema.yml",
        "config": {"materialized": "table"},
        "columns": {"order_id": {"name": "order_id"}, "customer_id": {"name": "customer_id"}, "status": {"name": "status", "description": "Where it is."}},
        "depends_on": {"nodes": ["model.shop.customers"]}
    }));
    nodes.insert("model.shop.helper".into(), json!({"resource_type": "model", "name": "helper", "schema": "analytics", "config": {"materialized": "ephemeral"}, "columns": {}}));
    for (id, t) in [
        test("test.shop.u1", "unique", "model.shop.customers", "customer_id", json!({"column_name": "customer_id"})),
        test("test.shop.n1", "not_null", "model.shop.customers", "customer_id", json!({"column_name": "customer_id"})),
        test("test.shop.u2", "unique", "model.shop.orders", "order_id", json!({"column_name": "order_id"})),
        test("test.shop.n2", "not_null", "model.shop.orders", "order_id", json!({"column_name": "order_id"})),
        test("test.shop.r1", "relationships", "model.shop.orders", "customer_id", json!({"column_name": "customer_id", "to": "ref('customers')", "field": "customer_id"})),
        test("test.shop.a1", "accepted_values", "model.shop.orders", "status", json!({"column_name": "status", "values": ["open", "shipped"]})),
    ] {
        nodes.insert(id, t);
    }
    let manifest = json!({
        "nodes": nodes,
        "sources": {},
        "docs": {"doc.shop.orders": {"name": "orders", "block_contents": "one row per order."}},
    });
    let path = dir.join("manifest.json");
    std::fs::write(&path, serde_json::to_string(&manifest).unwrap()).unwrap();
    let out = dir.join("out");
    let (doc, code) = import(&path, &out, &[]);
    assert_eq!(code, Some(0), "{doc:#}");
    assert!(doc["problems"].is_null(), "{doc:#}");
    let p = Project::open(&out).unwrap();
    let m = &p.model;
    assert_eq!(m.entities.keys().collect::<Vec<_>>(), ["customer", "order"]);
    assert_eq!(m.entity("order").unwrap().table.to_string(), "analytics.orders");
    assert_eq!(m.entity("order").unwrap().identity, vec!["order_id".to_string()]);
    assert_eq!(m.entity("order").unwrap().description.as_deref(), Some("Orders: one row per order."));
    let status = m.entity("order").unwrap().column("status").unwrap().description.clone().unwrap();
    assert!(status.contains("Where it is.") && status.contains("open, shipped"), "{status}");
    assert_eq!(m.joins.get("order_customer").map(|j| j.target_entity.as_str()), Some("customer"));
    assert!(schemabrain::pii::decide_entity(m, "customer", "email").redacted());
    let source = m.entity("customer").unwrap().provenance.as_ref().and_then(|p| p.source.clone()).unwrap();
    assert!(source.starts_with("models/schema.yml (manifest.json: model.shop.customers)"), "{source}");
}
