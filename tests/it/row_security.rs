//! Row-level security per role (issue 37, item 2): `row_filters` in
//! `access_policy.yaml`. Two roles on one server of the demo project
//! (DuckDB): one sees a subset of metrics, one reads only the rows of
//! European stores. Every answer of the filtered role, through get_metric
//! (a fact joined to the store directly, and one reaching it through the
//! order) and through query_sql, equals SQL written here by hand with the
//! filter as a join; the unfiltered role sees more; the caller's own
//! filters, group-bys, subqueries and CTEs do not lift the filter; a bad
//! policy names its file, line and key.

use std::collections::BTreeMap;

use serde_json::{json, Value as Json};

use schemabrain::auth::Principal;
use schemabrain::engine::{Cancel, Engine};
use schemabrain::project::Project;
use schemabrain::sql::CompiledSql;
use schemabrain::tools::{Session, SessionOptions, Toolsets};

use crate::common::{demo_engine, limits};
use crate::mcp_stdio;

const ISS: &str = "https://idp.test.example/";

/// European stores: regions 2 (British Isles) to 7 (Benelux).
const EU: &str = "region_id BETWEEN 2 AND 7";

const POLICY: &str = "version: 1
roles:
  analyst:
    tools: [list_metrics, get_metric]
    metrics: [order_count, revenue]
  eu_sales:
    row_filters:
      - entity: store
        where: \"region_id BETWEEN 2 AND 7\"
  asia_sales:
    row_filters: [{entity: store, where: \"region_id = 8\"}]
  finance: {}
";

fn session(tag: &str, policy: &str) -> (Session, std::path::PathBuf) {
    let dir = mcp_stdio::demo_copy(tag);
    std::fs::write(dir.join("access_policy.yaml"), policy).unwrap();
    let options = SessionOptions { source: Some(mcp_stdio::source()), audit: false, toolsets: Toolsets { provider: true, writes: false }, ..SessionOptions::default() };
    (Session::open(Project::open(&dir).unwrap(), options).unwrap(), dir)
}

fn who(sub: &str, roles: &[&str]) -> Principal {
    Principal { issuer: ISS.into(), subject: sub.into(), roles: roles.iter().map(|r| r.to_string()).collect() }
}

fn call(s: &Session, p: &Principal, tool: &str, args: Json) -> Json {
    s.call_by("c", Some(p), tool, &args, &Cancel::never()).into_json()
}

/// The rows of a successful answer.
fn rows(env: &Json) -> Vec<Vec<Json>> {
    assert_eq!(env["status"], "success", "{env}");
    serde_json::from_value(env["data"]["rows"].clone()).unwrap()
}

/// Rows by hand, on the warehouse directly.
fn hand(sql: &str) -> Vec<Vec<Json>> {
    let rows = demo_engine().run(&CompiledSql { sql: sql.to_string(), params: Vec::new(), dialect: "duckdb" }, limits()).unwrap_or_else(|e| panic!("hand SQL fails: {e}\n{sql}")).rows;
    assert!(!rows.is_empty(), "the hand-written SQL returns no rows, so it proves nothing:\n{sql}");
    rows
}

/// Numbers compared as numbers (a sum may come back as a float or a decimal).
fn num(v: &Json) -> f64 {
    match v {
        Json::Number(n) => n.as_f64().unwrap(),
        Json::String(s) => s.parse().unwrap_or_else(|_| panic!("not a number: {s}")),
        other => panic!("not a number: {other}"),
    }
}

/// `key → value` of two-column rows (key as text), values as numbers.
fn keyed(rows: &[Vec<Json>]) -> BTreeMap<String, f64> {
    rows.iter().map(|r| (r[0].to_string(), num(&r[1]))).collect()
}

fn assert_same(ours: &BTreeMap<String, f64>, theirs: &BTreeMap<String, f64>, what: &str) {
    assert_eq!(ours.keys().collect::<Vec<_>>(), theirs.keys().collect::<Vec<_>>(), "{what}: keys differ");
    for (k, v) in ours {
        let t = theirs[k];
        assert!((v - t).abs() <= 1e-6 * v.abs().max(t.abs()).max(1.0), "{what}: {k}: {v} by the tool, {t} by hand");
    }
}

fn scalar(env: &Json) -> f64 {
    let r = rows(env);
    assert_eq!(r.len(), 1, "{env}");
    num(&r[0][0])
}

#[test]
fn get_metric_answers_under_a_row_filter_equal_sql_written_by_hand() {
    let (s, dir) = session("rowsec-get", POLICY);
    let (eu, fin) = (who("eve", &["eu_sales"]), who("fin", &["finance"]));

    // A fact joined to the store directly: orders per status.
    let args = json!({"name": "order_count", "group_by": ["order.status"]});
    let env = call(&s, &eu, "get_metric", args.clone());
    let ours = keyed(&rows(&env));
    let theirs = keyed(&hand(&format!(
        "SELECT o.status, count(*) FROM main.orders o JOIN main.stores st ON st.id = o.store_id WHERE st.{EU} GROUP BY 1"
    )));
    assert_same(&ours, &theirs, "order_count by status, EU");
    // It says so: the filter, its role and the tables it restricted.
    let applied = &env["data"]["policy_applied"]["row_filters"];
    assert_eq!(applied[0]["role"], "eu_sales", "{env}");
    assert_eq!(applied[0]["entity"], "store");
    assert_eq!(applied[0]["where"], EU);
    assert_eq!(applied[0]["tables"], json!(["main.orders"]), "{env}");
    // The unfiltered role sees every order (online ones too), so more.
    let all = keyed(&rows(&call(&s, &fin, "get_metric", args)));
    assert_same(&all, &keyed(&hand("SELECT status, count(*) FROM main.orders GROUP BY 1")), "order_count by status, all");
    assert!(all.values().sum::<f64>() > ours.values().sum::<f64>() + 100.0, "{all:?} vs {ours:?}");

    // A fact reaching the store through the order: line revenue per product
    // category (a join to an unfiltered entity on the way).
    let env = call(&s, &eu, "get_metric", json!({"name": "item_revenue", "group_by": ["product.category"]}));
    let theirs = keyed(&hand(&format!(
        "SELECT p.category, sum(oi.quantity * oi.unit_price) FROM main.order_items oi JOIN main.orders o ON o.id = oi.order_id \
         JOIN main.stores st ON st.id = o.store_id JOIN main.products p ON p.id = oi.product_id WHERE st.{EU} GROUP BY 1"
    )));
    assert_same(&keyed(&rows(&env)), &theirs, "item_revenue by category, EU");
    let tables = &env["data"]["policy_applied"]["row_filters"][0]["tables"];
    assert_eq!(tables, &json!(["main.order_items"]), "{env}");

    // Grouped by the store's own column (revenue leaves cancelled orders
    // out): only European regions appear.
    let env = call(&s, &eu, "get_metric", json!({"name": "revenue", "group_by": ["store.region_id"]}));
    let theirs = keyed(&hand(&format!(
        "SELECT st.region_id, sum(o.amount) FROM main.orders o JOIN main.stores st ON st.id = o.store_id WHERE st.{EU} AND o.status <> 'cancelled' GROUP BY 1"
    )));
    assert_same(&keyed(&rows(&env)), &theirs, &format!("revenue by region, EU: {}", env["data"]["sql"]));

    // A to-many join (orders counted per product category): exact, no fan-out.
    let env = call(&s, &eu, "get_metric", json!({"name": "order_count", "group_by": ["product.category"]}));
    let theirs = keyed(&hand(&format!(
        "SELECT p.category, count(DISTINCT o.id) FROM main.orders o JOIN main.order_items oi ON oi.order_id = o.id \
         JOIN main.products p ON p.id = oi.product_id JOIN main.stores st ON st.id = o.store_id WHERE st.{EU} GROUP BY 1"
    )));
    assert_same(&keyed(&rows(&env)), &theirs, &format!("order_count by category, EU: {}", env["data"]["sql"]));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_caller_cannot_lift_the_row_filter_with_its_own_filters() {
    let (s, dir) = session("rowsec-escape", POLICY);
    let eu = who("eve", &["eu_sales"]);
    let eu_total = hand(&format!("SELECT count(*) FROM main.orders o JOIN main.stores st ON st.id = o.store_id WHERE st.{EU}"));
    let eu_total = num(&eu_total[0][0]);
    // Asking for another region's stores: nothing of theirs comes back.
    let env = call(&s, &eu, "get_metric", json!({"name": "order_count", "filters": [{"column": "store.region_id", "op": "eq", "value": 8}]}));
    let asia = rows(&env);
    assert!(asia.is_empty() || asia[0][0].is_null() || num(&asia[0][0]) == 0.0, "{env}");
    // A where string reaching for other regions or for online orders (no
    // store): it narrows the European rows, it never widens them.
    let w = "{{ Dimension('store__region_id') }} = 8 OR {{ Dimension('order__store_id') }} IS NULL OR {{ Dimension('order__status') }} <> 'cancelled'";
    let env = call(&s, &eu, "get_metric", json!({"name": "order_count", "where": [w]}));
    let theirs = hand(&format!(
        "SELECT count(*) FROM main.orders o JOIN main.stores st ON st.id = o.store_id WHERE st.{EU} AND (st.region_id = 8 OR o.store_id IS NULL OR o.status <> 'cancelled')"
    ));
    assert_eq!(scalar(&env), num(&theirs[0][0]), "{env}");
    assert!(scalar(&env) < eu_total, "the where string narrows the European rows: {env}");
    // The plain total is the European total.
    assert_eq!(scalar(&call(&s, &eu, "get_metric", json!({"name": "order_count"}))), eu_total);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn query_sql_reads_every_table_that_reaches_the_store_through_the_filter() {
    let (s, dir) = session("rowsec-sql", POLICY);
    let (eu, fin) = (who("eve", &["eu_sales"]), who("fin", &["finance"]));
    let q = |p: &Principal, sql: &str| call(&s, p, "query_sql", json!({"sql": sql, "page_size": 1000}));
    let eu_orders = format!("SELECT o.* FROM main.orders o JOIN main.stores st ON st.id = o.store_id WHERE st.{EU}");

    // The entity itself, a fact joined to it, a fact reaching it through another.
    let cases = [
        ("SELECT count(*) FROM main.stores".to_string(), format!("SELECT count(*) FROM main.stores WHERE {EU}")),
        ("SELECT count(*), sum(amount) FROM orders".to_string(), format!("SELECT count(*), sum(amount) FROM ({eu_orders})")),
        (
            "SELECT sum(quantity * unit_price) FROM main.order_items".to_string(),
            format!("SELECT sum(oi.quantity * oi.unit_price) FROM main.order_items oi JOIN ({eu_orders}) o ON o.id = oi.order_id"),
        ),
        // The caller's own escapes: a subquery, a CTE, a join of its own, an OR.
        ("SELECT count(*) FROM (SELECT * FROM main.orders) x".to_string(), format!("SELECT count(*) FROM ({eu_orders})")),
        ("WITH x AS (SELECT * FROM main.orders WHERE store_id IS NULL OR 1 = 1) SELECT count(*) FROM x".to_string(), format!("SELECT count(*) FROM ({eu_orders})")),
        (
            "SELECT count(*) FROM main.orders o LEFT JOIN main.stores s ON s.id = o.store_id WHERE s.region_id = 8 OR o.store_id IS NULL".to_string(),
            "SELECT 0".to_string(),
        ),
    ];
    for (sql, by_hand) in &cases {
        let env = q(&eu, sql);
        let ours = rows(&env);
        let theirs = hand(by_hand);
        assert_eq!(ours.len(), 1, "{sql}: {env}");
        for (a, b) in ours[0].iter().zip(&theirs[0]) {
            assert!((num(a) - num(b)).abs() < 1e-6, "{sql}: {a} by query_sql, {b} by hand\n{env}");
        }
        assert!(env["data"]["policy_applied"]["row_filters"][0]["where"] == EU, "{sql}: {env}");
    }
    // With a time range: the period and the filter both hold.
    let env = call(&s, &eu, "query_sql", json!({"sql": "SELECT count(*) FROM main.orders", "time_range": {"start": "2024-01-01", "end": "2024-07-01", "column": "orders.ordered_at"}}));
    let theirs = hand(&format!("SELECT count(*) FROM ({eu_orders}) WHERE ordered_at >= TIMESTAMP '2024-01-01' AND ordered_at < TIMESTAMP '2024-07-01'"));
    assert_eq!(scalar(&env), num(&theirs[0][0]), "{env}");
    assert!(scalar(&env) < scalar(&q(&eu, "SELECT count(*) FROM main.orders")), "the period narrows: {env}");
    // The store rows shown are only European ones.
    let env = q(&eu, "SELECT DISTINCT region_id FROM main.stores ORDER BY 1");
    assert_eq!(rows(&env).iter().map(|r| num(&r[0]) as i64).collect::<Vec<_>>(), vec![2, 3, 4, 5, 6, 7], "{env}");
    // A table that does not reach the store is read whole, and not named.
    let env = q(&eu, "SELECT count(*) FROM main.regions");
    assert_eq!(scalar(&env), 8.0);
    assert!(env["data"]["policy_applied"].is_null(), "{env}");
    // The unfiltered role reads every order.
    let all = scalar(&q(&fin, "SELECT count(*) FROM main.orders"));
    assert_eq!(all, num(&hand("SELECT count(*) FROM main.orders")[0][0]));
    assert!(all > scalar(&q(&eu, "SELECT count(*) FROM main.orders")));
    // The catalog's whole-table statistics are not shown for a restricted table.
    let row_count = |p: &Principal, table: &str| {
        let env = call(&s, p, "list_tables", json!({"schema": "main"}));
        env["data"]["items"].as_array().unwrap().iter().find(|t| t["qualified_name"] == table).unwrap()["row_count"].clone()
    };
    assert!(row_count(&fin, "main.orders").is_number(), "the catalog has row counts");
    assert!(row_count(&eu, "main.orders").is_null() && row_count(&eu, "main.products").is_number());
    // Tools that read whole tables are refused to the filtered role.
    assert!(!s.tool_allowed(Some(&eu), "sample_table") && s.tool_allowed(Some(&eu), "query_sql") && s.tool_allowed(Some(&fin), "sample_table"));
    let env = call(&s, &eu, "sample_table", json!({"qualified_name": "main.orders"}));
    assert_eq!(env["error"]["kind"], "allowlist_violation", "{env}");
    assert!(env["error"]["recovery"]["widening_hint"].as_str().unwrap().contains("row filters"), "{env}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn roles_are_a_union_and_the_local_user_is_not_filtered() {
    let (s, dir) = session("rowsec-union", POLICY);
    let q = |p: &Principal, sql: &str| scalar(&call(&s, p, "query_sql", json!({"sql": sql})));
    let count = |p: &Principal| scalar(&call(&s, p, "get_metric", json!({"name": "order_count"})));
    let by_hand = |cond: &str| num(&hand(&format!("SELECT count(*) FROM main.orders o JOIN main.stores st ON st.id = o.store_id WHERE {cond}"))[0][0]);
    // Two filtered roles: the rows either allows.
    let both = who("bea", &["eu_sales", "asia_sales"]);
    assert_eq!(count(&both), by_hand("st.region_id BETWEEN 2 AND 8"));
    assert_eq!(q(&both, "SELECT count(*) FROM main.orders"), by_hand("st.region_id BETWEEN 2 AND 8"));
    // A filtered role with an unfiltered one: everything.
    let all = num(&hand("SELECT count(*) FROM main.orders")[0][0]);
    assert_eq!(count(&who("max", &["eu_sales", "finance"])), all);
    // The local user (stdio) and an unrestricted session see every row.
    assert_eq!(count(&Principal::local()), all);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn two_roles_on_one_server_a_metric_subset_and_a_row_filter() {
    let (s, dir) = session("rowsec-two", POLICY);
    let (ann, eu) = (who("ann", &["analyst"]), who("eve", &["eu_sales"]));
    let names = |env: &Json| -> Vec<String> { env["data"]["items"].as_array().unwrap().iter().map(|i| i["name"].as_str().unwrap().to_string()).collect() };
    let mine = names(&call(&s, &ann, "list_metrics", json!({})));
    let hers = names(&call(&s, &eu, "list_metrics", json!({})));
    assert!(mine.contains(&"revenue".to_string()) && !mine.contains(&"item_revenue".to_string()), "{mine:?}");
    assert!(hers.contains(&"item_revenue".to_string()) && hers.len() > mine.len(), "{hers:?}");
    assert_eq!(call(&s, &ann, "get_metric", json!({"name": "item_revenue"}))["error"]["kind"], "allowlist_violation");
    // The analyst has no row filter: all orders, and no policy_applied.
    let env = call(&s, &ann, "get_metric", json!({"name": "order_count"}));
    assert_eq!(scalar(&env), num(&hand("SELECT count(*) FROM main.orders")[0][0]));
    assert!(env["data"]["policy_applied"].is_null(), "{env}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_bad_row_filter_names_its_file_line_and_key() {
    let cases = [
        ("      - {entity: stor, where: \"region_id = 1\"}\n", "roles.r.row_filters[0].entity", "unknown entity `stor`", Some("store")),
        ("      - {entity: store, where: \"region = 'EU'\"}\n", "roles.r.row_filters[0].where", "`region` is not a column of entity `store`", Some("region_id")),
        ("      - {entity: store, where: \"st.region_id = 1\"}\n", "roles.r.row_filters[0].where", "unqualified", None),
        ("      - {entity: store, where: \"id IN (SELECT store_id FROM main.orders)\"}\n", "roles.r.row_filters[0].where", "subquery", None),
        ("      - {entity: store, where: \"region_id = = 1\"}\n", "roles.r.row_filters[0].where", "does not parse", None),
        ("      - {entity: store, wher: \"region_id = 1\"}\n", "roles.r.row_filters[0].wher", "unknown key", None),
    ];
    for (i, (item, key, message, suggestion)) in cases.iter().enumerate() {
        let dir = mcp_stdio::demo_copy(&format!("rowsec-bad-{i}"));
        std::fs::write(dir.join("access_policy.yaml"), format!("version: 1\nroles:\n  r:\n    row_filters:\n{item}")).unwrap();
        let opened = Session::open(Project::open(&dir).unwrap(), SessionOptions { source: Some(mcp_stdio::source()), audit: false, ..SessionOptions::default() });
        let err = opened.err().unwrap_or_else(|| panic!("{item}: accepted")).to_string();
        assert!(err.contains("access_policy.yaml:5") && err.contains(key) && err.contains(message), "{item}: {err}");
        if let Some(s) = suggestion {
            assert!(err.contains(s), "{item}: no suggestion {s}: {err}");
        }
        std::fs::remove_dir_all(&dir).ok();
    }
}

/// Over HTTP with two API keys: each key's principal gets its role's rows,
/// and the filtered one's listing shows only the tools it may use.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn over_http_two_api_keys_read_their_own_rows() {
    use schemabrain::auth::keys::ApiKeys;
    use schemabrain::auth::Authenticator;
    use schemabrain::mcp::gate::Gate;
    use schemabrain::mcp::transport::http_router_with;
    use std::sync::Arc;

    let dir = mcp_stdio::demo_copy("rowsec-http");
    std::fs::write(dir.join("access_policy.yaml"), POLICY).unwrap();
    let shared = Arc::new(crate::mcp::session(Project::open(&dir).unwrap(), Some(&mcp_stdio::source()), false));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let (eu_key, eu_hash) = schemabrain::auth::keys::new_key();
    let (fin_key, fin_hash) = schemabrain::auth::keys::new_key();
    let keys_file = dir.join("api_keys.yaml");
    std::fs::write(
        &keys_file,
        format!("version: 1\nkeys:\n  - principal: eve\n    roles: [eu_sales]\n    sha256: {eu_hash}\n  - principal: fin\n    roles: [finance]\n    sha256: {fin_hash}\n"),
    )
    .unwrap();
    let keys = ApiKeys::load(&keys_file).unwrap();
    let gate = Arc::new(Gate::new(Authenticator::new(format!("http://{addr}/mcp"), Some(keys), None).unwrap()).unwrap());
    let router = http_router_with(shared, vec!["127.0.0.1".to_string(), addr.to_string()], Some(gate));
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });

    let mut c = crate::mcp_http::Conn::open(addr).await;
    let eu = http_order_count(&mut c, &eu_key, 1).await;
    let fin = http_order_count(&mut c, &fin_key, 2).await;
    let eu_hand = hand(&format!("SELECT count(*) FROM main.orders o JOIN main.stores st ON st.id = o.store_id WHERE st.{EU}"));
    assert_eq!(scalar(&eu), num(&eu_hand[0][0]), "{eu}");
    assert_eq!(eu["data"]["policy_applied"]["row_filters"][0]["role"], "eu_sales", "{eu}");
    assert_eq!(scalar(&fin), num(&hand("SELECT count(*) FROM main.orders")[0][0]), "{fin}");
    assert!(fin["data"]["policy_applied"].is_null(), "{fin}");
    std::fs::remove_dir_all(&dir).ok();
}

/// get_metric `order_count` over the 2026 era, with an API key.
async fn http_order_count(c: &mut crate::mcp_http::Conn, key: &str, id: u64) -> Json {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {"name": "get_metric", "arguments": {"name": "order_count"}, "_meta": crate::mcp_http::modern_meta()}});
    let auth = format!("Bearer {key}");
    let r = c.post(&[("Authorization", auth.as_str()), ("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"), ("Mcp-Name", "get_metric")], &body).await;
    crate::mcp_http::envelope_of(&r)
}
