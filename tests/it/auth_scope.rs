//! What a caller may see beyond its tools and metrics (issue 37): entity
//! allowlists per role (calls refused with `allowlist_violation` naming
//! the role that would allow them; listings without what is outside),
//! per-role PII widening (never the catastrophic floor), and the JWKS
//! fetched from the issuer's `jwks_uri` over a real local HTTP peer.
//!
//! Answers are compared with SQL written here by hand and run on the demo
//! warehouse through DuckDB directly, never with the planner's output.

use std::collections::BTreeSet;

use serde_json::{json, Value as Json};

use schemabrain::auth::Principal;
use schemabrain::project::Project;
use schemabrain::tools::{Session, SessionOptions, Toolsets};

use crate::{common, mcp_stdio};

const ISS: &str = "https://idp.test.example/";

fn session_with_policy(tag: &str, policy: &str) -> (std::path::PathBuf, Session) {
    let dir = mcp_stdio::demo_copy(tag);
    std::fs::write(dir.join("access_policy.yaml"), policy).unwrap();
    let options = SessionOptions { source: Some(mcp_stdio::source()), audit: false, toolsets: Toolsets { provider: true, writes: false }, ..SessionOptions::default() };
    let s = Session::open(Project::open(&dir).unwrap(), options).unwrap();
    (dir, s)
}

fn who(sub: &str, roles: &[&str]) -> Principal {
    Principal { issuer: ISS.into(), subject: sub.into(), roles: roles.iter().map(|r| r.to_string()).collect() }
}

fn call(s: &Session, p: &Principal, tool: &str, args: Json) -> Json {
    s.call_by("c", Some(p), tool, &args, &schemabrain::engine::Cancel::never()).into_json()
}

fn names(env: &Json, key: &str) -> BTreeSet<String> {
    env["data"][key].as_array().unwrap_or_else(|| panic!("no {key}: {env}")).iter().map(|i| i["name"].as_str().unwrap().to_string()).collect()
}

/// Rows of a hand-written query on the demo warehouse, as strings.
fn oracle(sql: &str) -> Vec<Vec<String>> {
    let c = duckdb::Connection::open_with_flags(common::demo_warehouse(), duckdb::Config::default().access_mode(duckdb::AccessMode::ReadOnly).unwrap()).unwrap();
    let mut stmt = c.prepare(sql).unwrap();
    let mut rows = stmt.query([]).unwrap();
    let mut out = Vec::new();
    while let Some(r) = rows.next().unwrap() {
        let n = r.as_ref().column_count();
        out.push((0..n).map(|i| cell(r.get::<_, duckdb::types::Value>(i).unwrap())).collect());
    }
    out.sort();
    out
}

fn cell(v: duckdb::types::Value) -> String {
    use duckdb::types::Value as V;
    match v {
        V::Null => "null".into(),
        V::Text(s) => s,
        V::BigInt(i) => i.to_string(),
        V::Int(i) => i.to_string(),
        V::HugeInt(i) => i.to_string(),
        V::UBigInt(i) => i.to_string(),
        other => format!("{other:?}"),
    }
}

/// An answer's rows, as strings, sorted.
fn answer_rows(env: &Json) -> Vec<Vec<String>> {
    let mut out: Vec<Vec<String>> = env["data"]["rows"]
        .as_array()
        .unwrap_or_else(|| panic!("no rows: {env}"))
        .iter()
        .map(|r| {
            r.as_array()
                .unwrap()
                .iter()
                .map(|v| match v {
                    Json::Null => "null".to_string(),
                    Json::String(s) => s.clone(),
                    other => other.to_string(),
                })
                .collect()
        })
        .collect();
    out.sort();
    out
}

const ENTITY_POLICY: &str = "version: 1
roles:
  sales:
    entities: [order, store, region, order_item, product]
  people:
    entities: [customer, region]
  all: {}
";

#[test]
fn an_entity_allowlist_refuses_what_a_plan_reads_outside_it() {
    let (dir, s) = session_with_policy("scope-entities", ENTITY_POLICY);
    let (sal, all) = (who("sal", &["sales"]), who("root", &["all"]));

    // Inside: runs, and equals SQL written by hand.
    let by_store = call(&s, &sal, "get_metric", json!({"name": "order_count", "group_by": ["store.name"]}));
    assert_eq!(by_store["status"], "success", "{by_store}");
    assert_eq!(answer_rows(&by_store), oracle("select s.name, count(*) from main.orders o join main.stores s on s.id = o.store_id group by 1"));

    // A group-by on an entity outside: refused, naming the role that allows it.
    let refused = call(&s, &sal, "get_metric", json!({"name": "order_count", "group_by": ["customer.segment"]}));
    assert_eq!(refused["status"], "refused", "{refused}");
    assert_eq!(refused["error"]["kind"], "allowlist_violation");
    let hint = refused["error"]["recovery"]["widening_hint"].as_str().unwrap();
    assert!(hint.contains("entity `customer`") && hint.contains("`people`") && hint.contains("`all`"), "{hint}");
    // A filter reaching it over a join, and the metric built on it: refused too.
    let filtered = call(&s, &sal, "get_metric", json!({"name": "order_count", "filters": [{"column": "customer.segment", "op": "eq", "value": "consumer"}]}));
    assert_eq!(filtered["error"]["kind"], "allowlist_violation", "{filtered}");
    let anchored = call(&s, &sal, "get_metric", json!({"name": "customer_count"}));
    assert_eq!(anchored["error"]["kind"], "allowlist_violation", "{anchored}");
    // The role that allows everything runs both.
    assert_eq!(call(&s, &all, "get_metric", json!({"name": "order_count", "group_by": ["customer.segment"]}))["status"], "success");

    // Listings show only what the caller may use.
    let entities = names(&call(&s, &sal, "list_entities", json!({})), "items");
    assert!(entities.contains("order") && entities.contains("store"), "{entities:?}");
    assert!(!entities.contains("customer") && !entities.contains("address"), "{entities:?}");
    let metrics = names(&call(&s, &sal, "list_metrics", json!({})), "items");
    let every = names(&call(&s, &all, "list_metrics", json!({})), "items");
    assert!(metrics.contains("order_count") && metrics.contains("revenue"), "{metrics:?}");
    assert!(every.contains("customer_count") && !metrics.contains("customer_count"), "a metric on customer is not listed: {metrics:?}");
    let described = call(&s, &sal, "describe_entity", json!({"name": "customer"}));
    assert_eq!(described["error"]["kind"], "allowlist_violation", "{described}");
    assert_eq!(call(&s, &sal, "describe_entity", json!({"name": "store"}))["status"], "success");
    let found = call(&s, &sal, "find_relevant_entities", json!({"query": "customer email segment"})).to_string();
    assert!(!found.contains("\"customer\""), "search shows no disallowed entity: {found}");

    // Free SQL over a table of an entity outside: refused, also through a join.
    let sql = call(&s, &sal, "query_sql", json!({"sql": "select count(*) from orders o join customers c on c.id = o.customer_id"}));
    assert_eq!(sql["error"]["kind"], "allowlist_violation", "{sql}");
    assert!(sql["error"]["recovery"]["widening_hint"].as_str().unwrap().contains("entity `customer`"), "{sql}");
    let ok = call(&s, &sal, "query_sql", json!({"sql": "select count(*) from orders"}));
    assert_eq!(answer_rows(&ok), oracle("select count(*) from main.orders"), "{ok}");
    let table = call(&s, &sal, "describe_table", json!({"qualified_name": "main.customers"}));
    assert_eq!(table["error"]["kind"], "allowlist_violation", "{table}");

    // Two roles: the union of their entities.
    let both = who("bo", &["sales", "people"]);
    assert_eq!(call(&s, &both, "get_metric", json!({"name": "order_count", "group_by": ["customer.segment"]}))["status"], "success");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_role_widened_to_contact_sees_what_the_project_blocks_and_never_the_floor() {
    let policy = "version: 1\nroles:\n  support:\n    pii_allowed: [contact]\n  analyst: {}\n";
    let (dir, s) = session_with_policy("scope-pii", policy);
    let (sup, ann) = (who("sue", &["support"]), who("ann", &["analyst"]));

    // The project blocks contact: the analyst is refused, support answered.
    let grouped = json!({"name": "order_count", "group_by": ["customer.email"]});
    let refused = call(&s, &ann, "get_metric", grouped.clone());
    assert_eq!(refused["error"]["kind"], "pii_blocked", "{refused}");
    let widened = call(&s, &sup, "get_metric", grouped);
    assert_eq!(widened["status"], "success", "{widened}");
    assert_eq!(answer_rows(&widened), oracle("select c.email, count(*) from main.orders o join main.customers c on c.id = o.customer_id group by 1"));
    let applied = &widened["data"]["policy_applied"]["pii_widened"];
    assert_eq!(applied["categories"], json!(["contact"]), "{widened}");
    assert!(applied["columns"].as_array().unwrap().contains(&json!("customer.email")), "{applied}");

    // Free SQL likewise.
    let sql = json!({"sql": "select email, phone from customers where country = 'DE'"});
    assert!(call(&s, &ann, "query_sql", sql.clone())["error"].is_object(), "the analyst's free SQL is refused");
    let rows = call(&s, &sup, "query_sql", sql);
    assert_eq!(answer_rows(&rows), oracle("select email, phone from main.customers where country = 'DE'"), "{rows}");
    assert!(rows["data"]["policy_applied"]["pii_widened"]["columns"].as_array().unwrap().contains(&json!("customer.phone")), "{rows}");

    // The floor stays: a credential is refused for support too.
    let secret = call(&s, &sup, "query_sql", json!({"sql": "select password_hash from customers"}));
    assert!(secret["error"].is_object(), "{secret}");
    assert!(!secret.to_string().contains("password_hash"), "a catastrophic column is never named: {secret}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_policy_widening_the_floor_or_naming_an_unknown_entity_does_not_load() {
    let dir = mcp_stdio::demo_copy("scope-bad");
    std::fs::write(dir.join("access_policy.yaml"), "version: 1\nroles:\n  support:\n    pii_allowed: [contact, government_id]\n    entities: [custmer]\n").unwrap();
    let err = Session::open(Project::open(&dir).unwrap(), SessionOptions { source: Some(mcp_stdio::source()), audit: false, ..SessionOptions::default() }).err().unwrap().to_string();
    assert!(err.contains("access_policy.yaml:4") && err.contains("roles.support.pii_allowed[1]") && err.contains("catastrophic"), "{err}");
    assert!(err.contains("access_policy.yaml:5") && err.contains("unknown entity `custmer`") && err.contains("customer"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
