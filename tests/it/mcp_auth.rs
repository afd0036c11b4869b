//! Authenticated HTTP (issue 37): schemabrain as an OAuth 2.1 resource
//! server. Tokens are minted here with a key pair of the test's own
//! (Ed25519, ring); the server reads the public half as a JWKS file.
//! In process: 401 with the metadata URL, the metadata itself, every bad
//! token refused, a valid token and an API key served in both eras, a
//! session bound to its principal, the audit naming who called and holding
//! no credential. As a process: the Python `mcp` SDK with a bearer token in
//! both eras, the server's stderr free of credentials, and `--http 0.0.0.0`
//! refused without authentication.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use ring::signature::{Ed25519KeyPair, KeyPair};
use serde_json::{json, Value as Json};

use schemabrain::auth::jwt::testing::{assemble, b64url, ed25519_jwks};
use schemabrain::auth::jwt::{JwtSettings, JwtValidator};
use schemabrain::auth::keys::ApiKeys;
use schemabrain::auth::Authenticator;
use schemabrain::mcp::gate::Gate;
use schemabrain::mcp::transport::http_router_with;
use schemabrain::project::Project;

use crate::mcp_http::{envelope_of, modern_call, Conn, Reply};
use crate::{common, mcp_stdio};

const ISS: &str = "https://idp.test.example/";

struct KeyPairPkcs8 {
    pkcs8: Vec<u8>,
    public: Vec<u8>,
}

fn key_pair() -> KeyPairPkcs8 {
    let rng = ring::rand::SystemRandom::new();
    let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).unwrap().as_ref().to_vec();
    let public = Ed25519KeyPair::from_pkcs8(&pkcs8).unwrap().public_key().as_ref().to_vec();
    KeyPairPkcs8 { pkcs8, public }
}

fn now() -> u64 {
    schemabrain::auth::now()
}

fn sign(key: &KeyPairPkcs8, claims: &Json) -> String {
    let mut header = Header::new(Algorithm::EdDSA);
    header.kid = Some("k1".into());
    jsonwebtoken::encode(&header, claims, &EncodingKey::from_ed_der(&key.pkcs8)).unwrap()
}

fn claims(resource: &str, sub: &str) -> Json {
    json!({"iss": ISS, "aud": resource, "sub": sub, "exp": now() + 600, "nbf": now() - 5, "roles": ["analyst"]})
}

/// The nine tokens of the proof, the first valid: (what, token).
fn token_matrix(key: &KeyPairPkcs8, resource: &str) -> Vec<(&'static str, String)> {
    let with = |field: &str, value: Json| {
        let mut c = claims(resource, "alice");
        c[field] = value;
        c
    };
    let valid = sign(key, &claims(resource, "alice"));
    let parts: Vec<&str> = valid.split('.').collect();
    let tampered = format!("{}.{}.{}", parts[0], b64url(with("sub", json!("mallory")).to_string().as_bytes()), parts[2]);
    let hs_input = format!("{}.{}", b64url(json!({"alg": "HS256", "typ": "JWT", "kid": "k1"}).to_string().as_bytes()), b64url(claims(resource, "alice").to_string().as_bytes()));
    let tag = ring::hmac::sign(&ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &key.public), hs_input.as_bytes());
    vec![
        ("valid", valid.clone()),
        ("expired", sign(key, &with("exp", json!(now() - 3600)))),
        ("not yet valid", sign(key, &with("nbf", json!(now() + 3600)))),
        ("wrong issuer", sign(key, &with("iss", json!("https://other-idp.example/")))),
        ("wrong audience", sign(key, &with("aud", json!("https://another-resource.example/mcp")))),
        ("signed by another key", sign(&key_pair(), &claims(resource, "alice"))),
        ("alg none", assemble(&json!({"alg": "none", "typ": "JWT"}), &claims(resource, "alice"), b"")),
        ("HS256 with the public key", format!("{hs_input}.{}", b64url(tag.as_ref()))),
        ("tampered payload", tampered),
    ]
}

struct Server {
    addr: SocketAddr,
    resource: String,
    dir: PathBuf,
    api_key: String,
}

/// A gated server on 127.0.0.1 (JWTs from `key`, and one API key for bob).
async fn start_gated(key: &KeyPairPkcs8) -> Server {
    let dir = mcp_stdio::demo_copy("auth");
    let project = Project::open(&dir).unwrap();
    let shared = Arc::new(crate::mcp::session(project, Some(&mcp_stdio::source()), true));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let resource = format!("http://{addr}/mcp");
    let jwks = dir.join("jwks.json");
    std::fs::write(&jwks, ed25519_jwks("k1", &key.public).to_string()).unwrap();
    let jwt = JwtValidator::new(JwtSettings { issuer: ISS.into(), audience: resource.clone(), jwks: jwks.into(), roles_claim: "roles".into(), leeway_secs: 30 }).unwrap();
    let (api_key, hash) = schemabrain::auth::keys::new_key();
    let keys_file = dir.join("api_keys.yaml");
    std::fs::write(&keys_file, format!("version: 1\nkeys:\n  - principal: bob\n    roles: [finance]\n    sha256: {hash}\n")).unwrap();
    let keys = ApiKeys::load(&keys_file).unwrap();
    let gate = Arc::new(Gate::new(Authenticator::new(resource.clone(), Some(keys), Some(jwt)).unwrap()).unwrap());
    let hosts = vec!["127.0.0.1".to_string(), addr.to_string()];
    let router = http_router_with(shared, hosts, Some(gate));
    tokio::spawn(async move {
        let _ = axum::serve(listener, router).await;
    });
    Server { addr, resource, dir, api_key }
}

fn bearer(token: &str) -> String {
    format!("Bearer {token}")
}

async fn legacy_init(c: &mut Conn, auth: &str) -> Reply {
    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    c.post(&[("Authorization", auth)], &init).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn only_a_valid_bearer_credential_is_served_and_the_audit_names_who() {
    let key = key_pair();
    let s = start_gated(&key).await;
    let metadata_url = format!("http://{}/.well-known/oauth-protected-resource/mcp", s.addr);

    // No credential: 401, the challenge names the metadata, which is public.
    let mut c = Conn::open(s.addr).await;
    let r = legacy_init(&mut c, "").await;
    assert_eq!(r.status, 401, "{}", r.body);
    let challenge = r.headers.get("www-authenticate").cloned().unwrap_or_default();
    assert!(challenge.starts_with("Bearer ") && challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")), "{challenge}");
    assert!(!challenge.contains("invalid_token"), "no token, no invalid_token: {challenge}");
    for path in ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"] {
        let r = c.request("GET", path, &[], "").await;
        assert_eq!(r.status, 200, "{path}: {}", r.body);
        let doc: Json = serde_json::from_str(&r.body).unwrap();
        assert_eq!(doc["resource"], s.resource.as_str(), "{doc}");
        assert_eq!(doc["authorization_servers"], json!([ISS]), "{doc}");
        assert_eq!(doc["bearer_methods_supported"], json!(["header"]), "{doc}");
    }

    // Every bad token: 401 invalid_token, and nothing of the token in the answer.
    let matrix = token_matrix(&key, &s.resource);
    for (what, token) in matrix.iter().skip(1) {
        let auth = bearer(token);
        let r = legacy_init(&mut c, &auth).await;
        assert_eq!(r.status, 401, "{what}: {}", r.body);
        let challenge = r.headers.get("www-authenticate").cloned().unwrap_or_default();
        assert!(challenge.contains("error=\"invalid_token\"") && challenge.contains(&metadata_url), "{what}: {challenge}");
        for part in token.split('.').filter(|p| p.len() > 3) {
            assert!(!r.body.contains(part) && !challenge.contains(part), "{what}: the answer quotes the token");
        }
        // A tools/call in the 2026 era is refused alike (every request is checked).
        let body = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "list_metrics", "arguments": {}, "_meta": crate::mcp_http::modern_meta()}});
        let r = c.post(&[("Authorization", auth.as_str()), ("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"), ("Mcp-Name", "list_metrics")], &body).await;
        assert_eq!(r.status, 401, "{what} (2026): {}", r.body);
    }
    // Garbage and the wrong scheme.
    for auth in ["Bearer sbk_0000", "Bearer not-a-credential", "Basic YWxpY2U6cHc="] {
        assert_eq!(legacy_init(&mut c, auth).await.status, 401, "{auth}");
    }

    // The valid token: a legacy session and a call.
    let valid = &matrix[0].1;
    let r = legacy_init(&mut c, &bearer(valid)).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let session = r.headers.get("mcp-session-id").cloned().expect("legacy session id");
    let alice = bearer(valid);
    let h = [("Authorization", alice.as_str()), ("Mcp-Session-Id", session.as_str()), ("MCP-Protocol-Version", "2025-11-25")];
    assert_eq!(c.post(&h, &json!({"jsonrpc": "2.0", "method": "notifications/initialized"})).await.status, 202);
    let r = c.post(&h, &json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "get_metric", "arguments": {"name": "order_count"}}})).await;
    assert_eq!(envelope_of(&r)["status"], "success");
    // The session is alice's: the same id without a credential is 401, with bob's key 404.
    let r = c.post(&[("Mcp-Session-Id", session.as_str()), ("MCP-Protocol-Version", "2025-11-25")], &json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"})).await;
    assert_eq!(r.status, 401);
    let bob = bearer(&s.api_key);
    let r = c.post(&[("Authorization", bob.as_str()), ("Mcp-Session-Id", session.as_str()), ("MCP-Protocol-Version", "2025-11-25")], &json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list"})).await;
    assert_eq!(r.status, 404, "another principal cannot use alice's session: {}", r.body);

    // The API key, stateless 2026 era.
    let mut m = Conn::open(s.addr).await;
    let body = json!({"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": "list_metrics", "arguments": {}, "_meta": crate::mcp_http::modern_meta()}});
    let r = m.post(&[("Authorization", bob.as_str()), ("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/call"), ("Mcp-Name", "list_metrics")], &body).await;
    assert_eq!(envelope_of(&r)["status"], "success");
    // And without it, the stateless call is 401 too.
    assert_eq!(modern_call(&mut m, 7, "list_metrics", json!({})).await.status, 401);

    // The audit: one record per served call, each naming its principal, no credential anywhere.
    let v = schemabrain::audit::verify(&s.dir).unwrap();
    assert!(v.intact(), "{:?}", v.problems);
    assert_eq!(v.records, 2, "refused requests never reach a tool");
    let log = std::fs::read_to_string(s.dir.join(schemabrain::audit::LOG_PATH)).unwrap();
    let records: Vec<Json> = log.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    assert_eq!(records[0]["principal"], json!({"issuer": ISS, "subject": "alice"}), "{}", records[0]);
    assert_eq!(records[1]["principal"], json!({"issuer": "api_key", "subject": "bob"}), "{}", records[1]);
    assert_no_credential(&log, &matrix, &s.api_key);
    std::fs::remove_dir_all(&s.dir).ok();
}

fn assert_no_credential(text: &str, matrix: &[(&str, String)], api_key: &str) {
    assert!(!text.contains(api_key), "the API key leaked");
    for (what, token) in matrix {
        for part in token.split('.').filter(|p| p.len() > 3) {
            assert!(!text.contains(part), "{what}: the token leaked");
        }
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// Waits until `serve --http` says, on its stderr (`stderr_path`), that it
/// listens on `addr` (bounded). A port that accepts connections is not
/// proof: between `free_port` and the server's bind another process of a
/// parallel test (Spark's JVM binds ports at random) may take the port, and
/// the client would talk to it. `false` when the server exited first (the
/// port was taken): the caller tries another port.
fn wait_listening(addr: &str, child: &mut std::process::Child, stderr_path: &std::path::Path) -> bool {
    let line = format!("listening on http://{addr}/mcp");
    for _ in 0..600 {
        if std::fs::read_to_string(stderr_path).unwrap_or_default().contains(&line) {
            return true;
        }
        if let Ok(Some(_)) = child.try_wait() {
            return false;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("serve did not listen on {addr} within 60 s: {}", std::fs::read_to_string(stderr_path).unwrap_or_default());
}

#[test]
fn python_mcp_sdk_connects_with_a_bearer_token_in_both_eras() {
    let python = match mcp_stdio::python_with_mcp() {
        Ok(p) => p,
        Err(why) => {
            common::unavailable::<()>("the Python mcp client", &why);
            return;
        }
    };
    let key = key_pair();
    let dir = mcp_stdio::demo_copy("auth-py");
    let jwks = dir.join("jwks.json");
    std::fs::write(&jwks, ed25519_jwks("k1", &key.public).to_string()).unwrap();
    let (api_key, hash) = schemabrain::auth::keys::new_key();
    let keys_file = dir.join("api_keys.yaml");
    std::fs::write(&keys_file, format!("version: 1\nkeys:\n  - principal: bob\n    sha256: {hash}\n")).unwrap();
    let stderr_path = dir.join("serve.stderr");
    let (addr, mut child) = (0..5)
        .find_map(|_| {
            let addr = format!("127.0.0.1:{}", free_port());
            let mut child = Command::new(mcp_stdio::binary())
                .args(["serve", "--project"])
                .arg(&dir)
                .args(["--source", &mcp_stdio::source(), "--http", &addr, "--oauth-issuer", ISS, "--oauth-jwks"])
                .arg(&jwks)
                .arg("--api-keys")
                .arg(&keys_file)
                .args(["--resource", &format!("http://{addr}/mcp")])
                .env("SCHEMABRAIN_LOG", "debug")
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(std::fs::File::create(&stderr_path).unwrap())
                .spawn()
                .unwrap();
            wait_listening(&addr, &mut child, &stderr_path).then_some((addr, child))
        })
        .unwrap_or_else(|| panic!("serve exited before listening, five ports in a row: {}", std::fs::read_to_string(&stderr_path).unwrap_or_default()));
    let resource = format!("http://{addr}/mcp");
    let matrix = token_matrix(&key, &resource);
    let bad: Vec<String> = matrix.iter().skip(1).map(|(_, t)| t.clone()).collect();
    let (ok, stdout, stderr) = mcp_stdio::run_bounded(
        Command::new(&python).arg(common::repo("tests/mcp_client/auth_http.py")).arg(&resource).arg(&matrix[0].1).arg(&api_key).args(&bad),
        Duration::from_secs(180),
    );
    let _ = child.kill();
    let _ = child.wait();
    let server_log = std::fs::read_to_string(&stderr_path).unwrap_or_default();
    assert!(ok && stdout.contains("ALL OK"), "python client failed\nstdout:\n{stdout}\nstderr:\n{stderr}\nserver:\n{server_log}");
    for mode in ["legacy", "2026-07-28"] {
        assert!(stdout.contains(&format!("\"mode\": \"{mode}\"")), "{mode} ran: {stdout}");
    }
    // The refusals were logged (by reason), the credentials never.
    assert!(server_log.contains("refused"), "{server_log}");
    assert_no_credential(&server_log, &matrix, &api_key);
    let log = std::fs::read_to_string(dir.join(schemabrain::audit::LOG_PATH)).unwrap();
    assert_no_credential(&log, &matrix, &api_key);
    let subjects: std::collections::BTreeSet<String> =
        log.lines().filter_map(|l| serde_json::from_str::<Json>(l).ok()).filter_map(|r| r["principal"]["subject"].as_str().map(str::to_string)).collect();
    assert_eq!(subjects.into_iter().collect::<Vec<_>>(), vec!["alice", "bob"], "{log}");
    // `audit show` prints who made a call.
    let last: Json = serde_json::from_str(log.lines().last().unwrap()).unwrap();
    let shown = Command::new(mcp_stdio::binary()).args(["audit", "show", last["hash"].as_str().unwrap(), "--project"]).arg(&dir).output().unwrap();
    let shown: Json = serde_json::from_slice(&shown.stdout).unwrap();
    assert!(shown["principal"]["subject"].is_string() && shown["principal"]["issuer"].is_string(), "{shown}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn http_on_a_non_loopback_address_refuses_to_start_without_authentication() {
    let dir = mcp_stdio::demo_copy("auth-open");
    for addr in ["0.0.0.0:0", "[::]:0"] {
        let (ok, _, stderr) = mcp_stdio::run_bounded(
            Command::new(mcp_stdio::binary()).args(["serve", "--project"]).arg(&dir).args(["--source", &mcp_stdio::source(), "--http", addr]).stdin(Stdio::null()),
            Duration::from_secs(60),
        );
        assert!(!ok, "{addr}: served without authentication");
        assert!(stderr.contains("not a loopback address") && stderr.contains("--api-keys"), "{addr}: {stderr}");
        assert!(!stderr.contains("listening"), "{addr}: {stderr}");
    }
    // With authentication but no --resource, 0.0.0.0 cannot name itself: refused, saying so.
    let (_, hash) = schemabrain::auth::keys::new_key();
    let keys_file = dir.join("api_keys.yaml");
    std::fs::write(&keys_file, format!("version: 1\nkeys:\n  - principal: bob\n    sha256: {hash}\n")).unwrap();
    let (ok, _, stderr) = mcp_stdio::run_bounded(
        Command::new(mcp_stdio::binary()).args(["serve", "--project"]).arg(&dir).args(["--source", &mcp_stdio::source(), "--http", "0.0.0.0:0", "--api-keys"]).arg(&keys_file).stdin(Stdio::null()),
        Duration::from_secs(60),
    );
    assert!(!ok && stderr.contains("--resource"), "{stderr}");
    // A key file with a mistake names its line and key.
    std::fs::write(&keys_file, "version: 1\nkeys:\n  - principal: bob\n    sha: abc\n").unwrap();
    let (ok, _, stderr) = mcp_stdio::run_bounded(
        Command::new(mcp_stdio::binary())
            .args(["serve", "--project"])
            .arg(&dir)
            .args(["--source", &mcp_stdio::source(), "--http", "127.0.0.1:0", "--resource", "http://127.0.0.1:1/mcp", "--api-keys"])
            .arg(&keys_file)
            .stdin(Stdio::null()),
        Duration::from_secs(60),
    );
    assert!(!ok && stderr.contains("api_keys.yaml:4") && stderr.contains("keys[0].sha"), "{stderr}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn auth_new_key_prints_a_key_whose_hash_is_the_entry() {
    let out = Command::new(mcp_stdio::binary()).args(["auth", "new-key", "--principal", "carol", "--role", "analyst"]).output().unwrap();
    assert!(out.status.success());
    let key = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let entry = String::from_utf8_lossy(&out.stderr).to_string();
    let yaml = format!("version: 1\nkeys:\n{}", entry.lines().skip_while(|l| !l.trim_start().starts_with("- principal")).collect::<Vec<_>>().join("\n"));
    let keys = ApiKeys::parse(Path::new("new.yaml"), &yaml).unwrap_or_else(|d| panic!("{d}\n{yaml}"));
    let p = keys.lookup(&key).expect("the printed key matches its entry");
    assert_eq!((p.subject.as_str(), p.roles.clone()), ("carol", vec!["analyst".to_string()]));
    assert!(!entry.contains(&key), "the entry holds the hash, not the key");
}

#[test]
fn a_principal_over_its_rate_limit_is_told_when_to_retry_and_another_is_served() {
    use schemabrain::auth::Principal;
    use schemabrain::tools::contract::rate::RateLimits;
    use schemabrain::tools::{Session, SessionOptions};
    let dir = mcp_stdio::demo_copy("auth-rate");
    let options = SessionOptions {
        source: Some(mcp_stdio::source()),
        audit: true,
        rate_limits: RateLimits { per_minute: Some(2), concurrent: None },
        ..SessionOptions::default()
    };
    let s = Session::open(Project::open(&dir).unwrap(), options).unwrap();
    let who = |sub: &str| Principal { issuer: ISS.into(), subject: sub.into(), roles: Vec::new() };
    let (alice, bob) = (who("alice"), who("bob"));
    let never = schemabrain::engine::Cancel::never();
    for _ in 0..2 {
        assert_eq!(s.call_by("a", Some(&alice), "list_metrics", &json!({}), &never).into_json()["status"], "success");
    }
    let limited = s.call_by("a", Some(&alice), "get_metric", &json!({"name": "order_count"}), &never).into_json();
    assert_eq!(limited["status"], "error", "{limited}");
    assert_eq!(limited["error"]["kind"], "cost_cap_exceeded");
    assert_eq!(limited["error"]["code"], "RATE_LIMITED");
    let message = limited["error"]["message"].as_str().unwrap();
    let wait: u64 = message.split("Retry after ").nth(1).and_then(|t| t.trim_end_matches(['s', '.']).parse().ok()).unwrap_or_else(|| panic!("{message}"));
    assert!((1..=60).contains(&wait), "{message}");
    assert!(message.contains(&format!("{ISS} alice")), "names the principal: {message}");
    assert_eq!(s.call_by("b", Some(&bob), "get_metric", &json!({"name": "order_count"}), &never).into_json()["status"], "success", "bob has his own minute");
    // The audit names each caller, the refused call included.
    let log = std::fs::read_to_string(dir.join(schemabrain::audit::LOG_PATH)).unwrap();
    let records: Vec<Json> = log.lines().map(|l| serde_json::from_str(l).unwrap()).collect();
    let who_did: Vec<(&str, &str)> = records.iter().map(|r| (r["principal"]["subject"].as_str().unwrap(), r["status"].as_str().unwrap())).collect();
    assert_eq!(who_did, vec![("alice", "success"), ("alice", "success"), ("alice", "error"), ("bob", "success")]);
    assert_eq!(records[2]["error_kind"], "cost_cap_exceeded");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn two_roles_on_one_server_see_what_their_policy_grants() {
    use schemabrain::auth::Principal;
    use schemabrain::tools::{Session, SessionOptions};
    let dir = mcp_stdio::demo_copy("auth-policy");
    std::fs::write(
        dir.join("access_policy.yaml"),
        "version: 1\nroles:\n  analyst:\n    tools: [list_metrics, describe_entity, get_metric]\n    metrics: [order_count, revenue, revenue_per_order]\n  finance: {}\n",
    )
    .unwrap();
    let s = Session::open(Project::open(&dir).unwrap(), SessionOptions { source: Some(mcp_stdio::source()), audit: true, ..SessionOptions::default() }).unwrap();
    let who = |sub: &str, role: &str| Principal { issuer: ISS.into(), subject: sub.into(), roles: vec![role.to_string()] };
    let (ann, fin) = (who("ann", "analyst"), who("fin", "finance"));
    let never = schemabrain::engine::Cancel::never();
    let call = |p: &Principal, tool: &str, args: Json| s.call_by("c", Some(p), tool, &args, &never).into_json();
    let names = |env: &Json| -> Vec<String> { env["data"]["items"].as_array().unwrap().iter().map(|i| i["name"].as_str().unwrap().to_string()).collect() };

    // Listings: the analyst sees its three metrics (and none other); finance sees the whole model.
    let all = names(&call(&fin, "list_metrics", json!({})));
    let mine = names(&call(&ann, "list_metrics", json!({})));
    assert!(all.len() > 10 && all.contains(&"largest_order".to_string()), "{all:?}");
    for m in ["order_count", "revenue", "revenue_per_order"] {
        assert!(mine.contains(&m.to_string()), "{m} listed: {mine:?}");
    }
    assert!(!mine.contains(&"largest_order".to_string()) && mine.len() < all.len(), "{mine:?}");
    // Calls: a granted metric (a derived one included) runs; another is refused with the role that would grant it.
    assert_eq!(call(&ann, "get_metric", json!({"name": "revenue_per_order"}))["status"], "success");
    let refused = call(&ann, "get_metric", json!({"name": "largest_order"}));
    assert_eq!(refused["status"], "refused", "{refused}");
    assert_eq!(refused["error"]["kind"], "allowlist_violation");
    assert_eq!(refused["error"]["code"], "UNAUTHORIZED");
    assert!(refused["error"]["recovery"]["widening_hint"].as_str().unwrap().contains("role `finance`"), "{refused}");
    assert_eq!(refused["error"]["recovery"]["suggested_tool"], "list_metrics");
    assert_eq!(call(&fin, "get_metric", json!({"name": "largest_order"}))["status"], "success");
    // A tool outside the grant: refused; MCP's listing leaves it out (tool_allowed).
    let refused = call(&ann, "list_joins", json!({}));
    assert_eq!(refused["error"]["kind"], "allowlist_violation", "{refused}");
    assert!(!s.tool_allowed(Some(&ann), "list_joins") && s.tool_allowed(Some(&fin), "list_joins"));
    // A principal with no role of the policy may use nothing; the local user everything.
    let stranger = who("eve", "intern");
    assert_eq!(call(&stranger, "list_metrics", json!({}))["error"]["kind"], "allowlist_violation");
    let local = Principal::local();
    assert_eq!(call(&local, "get_metric", json!({"name": "largest_order"}))["status"], "success");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn a_policy_with_a_mistake_stops_the_session_naming_its_line() {
    use schemabrain::tools::{Session, SessionOptions};
    let dir = mcp_stdio::demo_copy("auth-policy-bad");
    std::fs::write(dir.join("access_policy.yaml"), "version: 1\nroles:\n  analyst:\n    metrics: [revnue]\n").unwrap();
    let err = Session::open(Project::open(&dir).unwrap(), SessionOptions { source: Some(mcp_stdio::source()), audit: false, ..SessionOptions::default() }).err().unwrap().to_string();
    assert!(err.contains("access_policy.yaml:4") && err.contains("roles.analyst.metrics[0]") && err.contains("revenue"), "{err}");
    std::fs::remove_dir_all(&dir).ok();
}
