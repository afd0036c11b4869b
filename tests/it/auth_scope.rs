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

/// Rows of a hand-written query on the demo warehouse, every column cast
/// to text by the query itself, sorted.
fn oracle(sql: &str, columns: usize) -> Vec<Vec<String>> {
    let c = duckdb::Connection::open_with_flags(common::demo_warehouse(), duckdb::Config::default().access_mode(duckdb::AccessMode::ReadOnly).unwrap()).unwrap();
    let mut stmt = c.prepare(sql).unwrap();
    let mut out: Vec<Vec<String>> = stmt
        .query_map([], |r| (0..columns).map(|i| r.get::<_, Option<String>>(i).map(|v| v.unwrap_or_else(|| "null".into()))).collect())
        .unwrap()
        .map(Result::unwrap)
        .collect();
    out.sort();
    out
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
    assert_eq!(answer_rows(&by_store), oracle("select s.name, count(*)::varchar from main.orders o left join main.stores s on s.id = o.store_id group by 1", 2));

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
    assert_eq!(answer_rows(&ok), oracle("select count(*)::varchar from main.orders", 1), "{ok}");
    let table = call(&s, &sal, "describe_table", json!({"qualified_name": "main.customers"}));
    assert_eq!(table["error"]["kind"], "allowlist_violation", "{table}");

    // MCP resources read the caller's cut too: a disallowed entity's table is not there.
    use schemabrain::tools::provider::resources;
    let never = schemabrain::engine::Cancel::never();
    let read = |p: &Principal, uri: &str| s.with_provider_as("c", Some(p), &never, |ctx| resources::read(ctx, uri));
    assert!(read(&sal, "res://table/default/main/orders").is_ok());
    assert!(matches!(read(&sal, "res://table/default/main/customers"), Err(resources::ReadError::NotFound(_))));
    assert!(read(&all, "res://table/default/main/customers").is_ok());
    let tables = read(&sal, "res://tables/default/main").unwrap();
    assert!(tables.contains("\"main.orders\"") && !tables.contains("\"main.customers\"") && !tables.contains("\"main.addresses\""), "{tables}");

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
    // Grouped by and filtered on e-mail addresses.
    let grouped = json!({"name": "order_count", "group_by": ["customer.email"], "filters": [{"column": "customer.email", "op": "like", "value": "alex.becker%"}]});
    let refused = call(&s, &ann, "get_metric", grouped.clone());
    assert_eq!(refused["error"]["kind"], "pii_blocked", "{refused}");
    let widened = call(&s, &sup, "get_metric", grouped);
    assert_eq!(widened["status"], "success", "{widened}");
    assert!(answer_rows(&widened).len() > 1, "several addresses: {widened}");
    assert_eq!(answer_rows(&widened), oracle("select c.email, count(*)::varchar from main.orders o join main.customers c on c.id = o.customer_id where c.email like 'alex.becker%' group by 1", 2));
    let applied = &widened["data"]["policy_applied"]["pii_widened"];
    assert_eq!(applied["categories"], json!(["contact"]), "{widened}");
    assert!(applied["columns"].as_array().unwrap().contains(&json!("customer.email")), "{applied}");

    // Free SQL likewise.
    let sql = json!({"sql": "select email, phone from customers where email like 'alex.b%'"});
    assert!(call(&s, &ann, "query_sql", sql.clone())["error"].is_object(), "the analyst's free SQL is refused");
    let rows = call(&s, &sup, "query_sql", sql);
    assert!(answer_rows(&rows).len() > 5, "{rows}");
    assert_eq!(answer_rows(&rows), oracle("select email, phone from main.customers where email like 'alex.b%'", 2), "{rows}");
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

/// A real HTTP peer on loopback: serves `routes` (path → body, swappable
/// while it runs) and counts the requests to each path.
struct JwksServer {
    base: String,
    routes: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, String>>>,
    hits: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, usize>>>,
}

impl JwksServer {
    fn start() -> JwksServer {
        use std::io::{BufRead, BufReader, Write};
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let routes: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, String>>> = Default::default();
        let hits: std::sync::Arc<std::sync::Mutex<std::collections::HashMap<String, usize>>> = Default::default();
        let (r, h) = (routes.clone(), hits.clone());
        // Detached: it ends with the test process.
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut line = String::new();
                if reader.read_line(&mut line).is_err() {
                    continue;
                }
                let path = line.split_whitespace().nth(1).unwrap_or("/").to_string();
                loop {
                    let mut header = String::new();
                    if reader.read_line(&mut header).map_or(true, |n| n == 0) || header == "\r\n" {
                        break;
                    }
                }
                *h.lock().unwrap().entry(path.clone()).or_default() += 1;
                let body = r.lock().unwrap().get(&path).cloned();
                let response = match body {
                    Some(b) => format!("HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{b}", b.len()),
                    None => "HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_string(),
                };
                let _ = stream.write_all(response.as_bytes());
            }
        });
        JwksServer { base, routes, hits }
    }

    fn serve(&self, path: &str, body: String) {
        self.routes.lock().unwrap().insert(path.to_string(), body);
    }

    fn hits(&self, path: &str) -> usize {
        self.hits.lock().unwrap().get(path).copied().unwrap_or(0)
    }
}

struct SigningKey {
    pkcs8: Vec<u8>,
    public: Vec<u8>,
}

fn signing_key() -> SigningKey {
    use ring::signature::{Ed25519KeyPair, KeyPair};
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).unwrap().as_ref().to_vec();
    let public = Ed25519KeyPair::from_pkcs8(&pkcs8).unwrap().public_key().as_ref().to_vec();
    SigningKey { pkcs8, public }
}

fn jwk(kid: &str, key: &SigningKey) -> Json {
    schemabrain::auth::jwt::testing::ed25519_jwks(kid, &key.public)["keys"][0].clone()
}

const AUD: &str = "http://127.0.0.1:1/mcp";

fn token(kid: &str, key: &SigningKey, now: u64) -> String {
    let mut header = jsonwebtoken::Header::new(jsonwebtoken::Algorithm::EdDSA);
    header.kid = Some(kid.into());
    let claims = json!({"iss": ISS, "aud": AUD, "sub": "alice", "exp": now + 600, "roles": ["analyst"]});
    jsonwebtoken::encode(&header, &claims, &jsonwebtoken::EncodingKey::from_ed_der(&key.pkcs8)).unwrap()
}

#[test]
fn a_jwks_fetched_from_its_uri_follows_a_rotation_without_a_fetch_storm() {
    use schemabrain::auth::jwt::{JwksSource, JwtSettings, JwtValidator};
    use std::time::Duration;
    let server = JwksServer::start();
    let (k1, k2) = (signing_key(), signing_key());
    server.serve("/jwks", json!({"keys": [jwk("k1", &k1)]}).to_string());
    let settings = JwtSettings { issuer: ISS.into(), audience: AUD.into(), jwks: JwksSource::Url(format!("{}/jwks", server.base)), roles_claim: "roles".into(), leeway_secs: 30 };
    let v = JwtValidator::new(settings.clone()).unwrap().with_refetch_limits(Duration::from_millis(800), Duration::from_secs(3600));
    let now = schemabrain::auth::now();
    assert_eq!(v.validate(&token("k1", &k1, now), now).unwrap().subject, "alice");
    assert_eq!(server.hits("/jwks"), 1, "fetched once at startup");

    // The issuer rotates: k2 appears. A token signed with it names an unknown kid: the keys are fetched again.
    server.serve("/jwks", json!({"keys": [jwk("k1", &k1), jwk("k2", &k2)]}).to_string());
    std::thread::sleep(Duration::from_millis(900));
    assert_eq!(v.validate(&token("k2", &k2, now), now).unwrap().subject, "alice", "accepted after the refresh");
    assert_eq!(server.hits("/jwks"), 2);

    // Made-up key ids: refused, and at most one fetch per interval however many arrive.
    let forger = signing_key();
    for i in 0..200 {
        assert!(v.validate(&token(&format!("bogus{i}"), &forger, now), now).is_err());
    }
    assert!(server.hits("/jwks") <= 3, "{} fetches for 200 unknown kids", server.hits("/jwks"));
    assert_eq!(server.hits("/jwks"), v.fetches(), "the validator counts what the server saw");

    // After the max age the keys are fetched again: a key the issuer withdrew stops working.
    let aged = JwtValidator::new(settings).unwrap().with_refetch_limits(Duration::from_secs(3600), Duration::from_millis(300));
    assert!(aged.validate(&token("k1", &k1, now), now).is_ok());
    server.serve("/jwks", json!({"keys": [jwk("k2", &k2)]}).to_string());
    std::thread::sleep(Duration::from_millis(400));
    assert!(aged.validate(&token("k1", &k1, now), now).is_err(), "k1 was withdrawn");
    assert!(aged.validate(&token("k2", &k2, now), now).is_ok());
    // A JWKS that stops answering keeps the keys there are.
    server.routes.lock().unwrap().remove("/jwks");
    std::thread::sleep(Duration::from_millis(400));
    assert!(aged.validate(&token("k2", &k2, now), now).is_ok(), "kept through a failed refresh");
}

#[test]
fn the_jwks_uri_is_discovered_from_the_issuers_metadata_when_it_names_itself() {
    use schemabrain::auth::jwt::discover_jwks_uri;
    let server = JwksServer::start();
    let issuer = format!("{}/tenant", server.base);
    // RFC 8414's path-inserted form is not served: discovery falls back to OpenID's.
    server.serve("/tenant/.well-known/openid-configuration", json!({"issuer": issuer, "jwks_uri": format!("{}/keys", server.base)}).to_string());
    assert_eq!(discover_jwks_uri(&issuer).unwrap(), format!("{}/keys", server.base));
    assert_eq!(server.hits("/.well-known/oauth-authorization-server/tenant"), 1, "RFC 8414 first");
    // A metadata document naming another issuer is not believed.
    server.serve("/.well-known/oauth-authorization-server/tenant", json!({"issuer": "https://evil.example/tenant", "jwks_uri": "https://evil.example/keys"}).to_string());
    server.serve("/tenant/.well-known/openid-configuration", json!({"issuer": "https://evil.example/tenant", "jwks_uri": "https://evil.example/keys"}).to_string());
    let e = discover_jwks_uri(&issuer).unwrap_err();
    assert!(e.contains("is not") && !e.contains("evil.example/keys"), "{e}");
    // Plain HTTP to a host other than loopback is never fetched.
    assert!(discover_jwks_uri("http://idp.example/").unwrap_err().contains("https"));
}

/// A resource is a tool's answer: a role whose tools leave out
/// `sample_table` (or `get_table_schema`) reads no samples (or table
/// resource) either, whatever its entities; the catalog overview stays
/// open; a role granting the tool reads it.
#[test]
fn a_resource_needs_the_tool_it_mirrors() {
    let policy = "version: 1\nroles:\n  viewer:\n    tools: [list_tables, get_table_schema]\n  sampler:\n    tools: [sample_table, list_tables]\n";
    let (dir, s) = session_with_policy("scope-resources", policy);
    use schemabrain::tools::provider::resources::ReadError;
    let (viewer, sampler) = (who("vi", &["viewer"]), who("sa", &["sampler"]));
    let samples = "res://samples/default/main/orders";
    let table = "res://table/default/main/orders";
    assert!(matches!(s.read_resource("c", Some(&viewer), samples), Err(ReadError::Denied(m)) if m.contains("sample_table")));
    assert!(s.read_resource("c", Some(&viewer), table).is_ok());
    assert!(s.read_resource("c", Some(&viewer), "res://catalogs").is_ok());
    let rows = s.read_resource("c", Some(&sampler), samples).unwrap();
    assert!(rows.contains("rows"), "{rows}");
    assert!(matches!(s.read_resource("c", Some(&sampler), table), Err(ReadError::Denied(m)) if m.contains("get_table_schema")));
    // The local user (stdio) is not under the policy.
    let local = Principal::local();
    assert!(s.read_resource("c", Some(&local), samples).is_ok());
    std::fs::remove_dir_all(&dir).ok();
}
