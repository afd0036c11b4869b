//! get_metric's confidence and provenance follow the definitions the plan
//! used: a suggested, unreviewed join lowers them; confirming it raises
//! them again; a degraded plan is at most MEDIUM.

use std::path::{Path, PathBuf};

use serde_json::json;

use schemabrain::envelope::{Confidence, Envelope};
use schemabrain::project::Project;
use schemabrain::tools::{self, Execution};

use crate::common::demo_project;

/// The demo model with `order_customer` rewritten to carry `provenance`.
fn with_join_provenance(tag: &str, provenance: &str) -> Project {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("trust-{tag}"));
    let _ = std::fs::remove_dir_all(&dir);
    schemabrain::demo::materialize(&dir).expect("materialize");
    let join: PathBuf = dir.join("joins/order_customer.yaml");
    let text = std::fs::read_to_string(&join).unwrap().replace("origin: manual\n", &format!("origin: suggested\nprovenance:\n{provenance}"));
    std::fs::write(&join, text).unwrap();
    Project::open(&dir).unwrap_or_else(|d| panic!("{d}"))
}

fn revenue_by_country(project: &Project) -> Envelope {
    let args = json!({"name": "revenue", "group_by": ["customer.country"], "dry_run": true});
    tools::call(project, "get_metric", &args, Execution::DryRun)
}

#[test]
fn confidence_and_provenance_move_with_the_definitions_used() {
    // Hand-written definitions throughout: HIGH, provenance manual.
    let env = revenue_by_country(demo_project());
    assert_eq!(env.confidence(), Some(Confidence::High));
    let p = serde_json::to_value(env.provenance().unwrap()).unwrap();
    assert_eq!(p["inference_method"], "manually_authored");
    let defs = env.data().unwrap()["definitions"].as_array().unwrap().clone();
    let names: Vec<(String, String)> = defs.iter().map(|d| (d["kind"].as_str().unwrap().into(), d["name"].as_str().unwrap().into())).collect();
    for want in [("metric", "revenue"), ("join", "order_customer"), ("entity", "order"), ("entity", "customer")] {
        assert!(names.contains(&(want.0.into(), want.1.into())), "{want:?} in {names:?}");
    }

    // The join becomes a draft guessed from column names: LOW, and the
    // provenance names it.
    let draft = with_join_provenance("draft", "  inference_method: name_match\n  validation_state: draft\n");
    let env = revenue_by_country(&draft);
    assert_eq!(env.confidence(), Some(Confidence::Low), "{}", serde_json::to_string(&env).unwrap());
    let p = serde_json::to_value(env.provenance().unwrap()).unwrap();
    assert_eq!(p["source"], "inferred");
    assert_eq!(p["validation_state"], "draft");
    assert!(p["observed_in"].as_str().unwrap().contains("order_customer"), "{p}");
    // A request that does not walk the join keeps HIGH.
    let env = tools::call(&draft, "get_metric", &json!({"name": "revenue", "dry_run": true}), Execution::DryRun);
    assert_eq!(env.confidence(), Some(Confidence::High));

    // A declared foreign key, still a draft: MEDIUM. Confirmed by a person: HIGH.
    let fk = with_join_provenance("fk", "  inference_method: fk_constraint\n  validation_state: draft\n");
    assert_eq!(revenue_by_country(&fk).confidence(), Some(Confidence::Medium));
    let confirmed = with_join_provenance("confirmed", "  inference_method: name_match\n  validation_state: confirmed\n");
    assert_eq!(revenue_by_country(&confirmed).confidence(), Some(Confidence::High));

    // A degraded plan (a grain with no reachable time dimension) is at most
    // MEDIUM even on hand-written definitions.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("trust-degraded");
    let _ = std::fs::remove_dir_all(&dir);
    schemabrain::demo::materialize(&dir).expect("materialize");
    std::fs::write(dir.join("metrics/product_count.yaml"), "version: 1\nname: product_count\nentity: product\nmeasure: {agg: count, column: id}\n").unwrap();
    let project = Project::open(&dir).unwrap_or_else(|d| panic!("{d}"));
    let env = tools::call(&project, "get_metric", &json!({"name": "product_count", "time_grain": "month", "dry_run": true}), Execution::DryRun);
    assert_eq!(env.status().as_str(), "degraded", "{}", serde_json::to_string(&env).unwrap());
    assert_eq!(env.confidence(), Some(Confidence::Medium));
}

/// A source that drifted under the model (a column dropped, another's type
/// changed): requests that read the drift answer `schema_drift` with what
/// changed, before the engine; requests that do not still answer.
#[test]
fn a_drifted_source_answers_schema_drift_for_what_it_touches() {
    use schemabrain::tools::{Introspect, Session, SessionOptions};
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("drift");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let warehouse = dir.join("drifted.duckdb");
    copy_without_constraints(&warehouse, true);
    let options = SessionOptions {
        source: Some(format!("duckdb:{}", warehouse.display())),
        audit: false,
        introspect: Introspect::Always,
        require_engine: false,
        ..SessionOptions::default()
    };
    // A scratch copy of the project: opening a source writes its snapshot.
    let project_dir = dir.join("project");
    schemabrain::demo::materialize(&project_dir).expect("materialize");
    let project = Project::open(&project_dir).unwrap_or_else(|d| panic!("{d}"));
    let session = Session::open(project, options).expect("serve opens a drifted source");
    let drifted = session.call("get_metric", &json!({"name": "revenue", "group_by": ["customer.country"]}));
    let err = drifted.tool_error().unwrap_or_else(|| panic!("{}", serde_json::to_string(&drifted).unwrap()));
    assert_eq!(err.kind().as_str(), "schema_drift", "{}", err.message());
    assert!(err.message().contains("customers.country") && err.message().contains("gone"), "{}", err.message());
    let typed = session.call("get_metric", &json!({"name": "order_count", "group_by": ["store.name"]}));
    assert_eq!(typed.tool_error().map(|e| e.kind().as_str()), Some("schema_drift"), "{}", serde_json::to_string(&typed).unwrap());
    assert!(typed.tool_error().unwrap().message().contains("changed type"));
    // Untouched by the drift: answered as before.
    let fine = session.call("get_metric", &json!({"name": "revenue", "group_by": ["order.status"], "order_by": [{"column": "revenue", "direction": "desc"}]}));
    assert_eq!(fine.status().as_str(), "success", "{}", serde_json::to_string(&fine).unwrap());
    // A dry run compiles whatever the source says.
    let dry = session.call("get_metric", &json!({"name": "revenue", "group_by": ["customer.country"], "dry_run": true}));
    assert!(dry.tool_error().is_none());
}

/// The demo warehouse copied to `to` without constraints (DuckDB refuses to
/// alter a table other tables reference); with `drifted`, `customers` lacks
/// `country` and `stores.name` is an INTEGER.
fn copy_without_constraints(to: &Path, drifted: bool) {
    let _ = std::fs::remove_file(to);
    let c = duckdb::Connection::open(to).unwrap();
    c.execute_batch(&format!("ATTACH '{}' AS src (READ_ONLY)", crate::common::demo_warehouse().display())).unwrap();
    let mut stmt = c.prepare("SELECT table_name FROM information_schema.tables WHERE table_catalog = 'src' AND table_schema = 'main'").unwrap();
    let tables: Vec<String> = stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
    assert!(tables.contains(&"customers".to_string()), "{tables:?}");
    for t in tables {
        let select = match t.as_str() {
            "customers" if drifted => "SELECT * EXCLUDE (country) FROM src.main.customers".to_string(),
            "stores" if drifted => "SELECT * REPLACE (length(name)::INTEGER AS name) FROM src.main.stores".to_string(),
            _ => format!("SELECT * FROM src.main.\"{t}\""),
        };
        c.execute_batch(&format!("CREATE TABLE main.\"{t}\" AS {select}")).unwrap();
    }
    c.execute_batch("DETACH src").unwrap();
}

/// Drops `customers.country` and turns `stores.name` into an INTEGER in a
/// warehouse no server has open.
fn drift_in_place(warehouse: &Path) {
    let c = duckdb::Connection::open(warehouse).unwrap();
    c.execute_batch("ALTER TABLE customers DROP COLUMN country; ALTER TABLE stores ALTER COLUMN name TYPE INTEGER USING length(name)").unwrap();
}

const BY_COUNTRY: &str = r#"{"name": "revenue", "group_by": ["customer.country"], "order_by": [{"column": "revenue", "direction": "desc"}]}"#;
const BY_STORE: &str = r#"{"name": "order_count", "group_by": ["store.name"], "order_by": [{"column": "order_count", "direction": "desc"}]}"#;
const BY_STATUS: &str = r#"{"name": "order_count", "group_by": ["order.status"]}"#;

/// `serve` over stdio: initialises, sends one tools/call per argument set
/// and returns the envelopes in order.
fn serve_stdio(project: &Path, source: &str, calls: &[&str]) -> Vec<serde_json::Value> {
    use std::io::{BufRead, Write};
    use std::process::{Command, Stdio};
    let mut child = Command::new(crate::mcp_stdio::binary())
        .args(["serve", "--project"])
        .arg(project)
        .args(["--source", source])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut out = std::io::BufReader::new(child.stdout.take().expect("stdout"));
    let mut send = |line: String| {
        writeln!(stdin, "{line}").expect("write");
        stdin.flush().expect("flush");
    };
    send(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"drift","version":"1"}}}"#.into());
    send(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.into());
    for (i, args) in calls.iter().enumerate() {
        send(format!(r#"{{"jsonrpc":"2.0","id":{},"method":"tools/call","params":{{"name":"get_metric","arguments":{args}}}}}"#, i + 1));
    }
    let mut answers = vec![serde_json::Value::Null; calls.len()];
    let mut line = String::new();
    let mut left = calls.len() + 1;
    while left > 0 {
        line.clear();
        assert!(out.read_line(&mut line).expect("read") > 0, "the server closed stdout early");
        let v: serde_json::Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("not JSON-RPC ({e}): {line}"));
        let id = v["id"].as_u64().expect("responses only") as usize;
        if id > 0 {
            answers[id - 1] = v["result"]["structuredContent"].clone();
        }
        left -= 1;
    }
    drop(stdin);
    let _ = child.wait();
    answers
}

/// `serve --http` on a free loopback port: one 2026-era tools/call per
/// argument set; the envelopes in order.
fn serve_http(project: &Path, source: &str, calls: &[&str]) -> Vec<serde_json::Value> {
    use std::process::Command;
    let mut cmd = Command::new(crate::mcp_stdio::binary());
    cmd.args(["serve", "--project"]).arg(project).args(["--source", source]);
    let (_server, addr) = crate::soak::serve_on_a_free_port(cmd);
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    rt.block_on(async {
        let mut c = crate::mcp_http::Conn::open(addr).await;
        let mut out = Vec::new();
        for (i, args) in calls.iter().enumerate() {
            let args: serde_json::Value = serde_json::from_str(args).unwrap();
            let reply = crate::mcp_http::modern_call(&mut c, i as u64 + 1, "get_metric", args).await;
            assert_eq!(reply.status, 200, "{}", reply.body);
            out.push(reply.json()["result"]["structuredContent"].clone());
        }
        out
    })
}

/// Issue 33 item 3: a project served once (its snapshot written), its
/// source drifted (a column dropped, another's type changed), served again:
/// over stdio and over HTTP the requests that read the drift answer
/// `schema_drift` naming the change, the others still answer, and the
/// snapshot on disk now holds the live source. A third serve, on that
/// refreshed snapshot, still answers `schema_drift`.
#[test]
fn serving_again_after_the_source_drifted_answers_schema_drift_over_stdio_and_http() {
    type Serve = fn(&Path, &str, &[&str]) -> Vec<serde_json::Value>;
    for (name, serve) in [("stdio", serve_stdio as Serve), ("http", serve_http as Serve)] {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("drift-serve-{name}-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        let warehouse = dir.join("warehouse.duckdb");
        copy_without_constraints(&warehouse, false);
        let source = format!("duckdb:{}", warehouse.display());
        let project = crate::mcp_stdio::demo_copy(&format!("drift-{name}"));
        let before = serve(&project, &source, &[BY_COUNTRY, BY_STORE]);
        for env in &before {
            assert_eq!(env["status"], "success", "{name}: {env}");
        }
        let snapshot = schemabrain::catalog::Catalog::load_snapshot(&project).unwrap().expect("the first serve wrote the snapshot");
        let customers = &snapshot.tables["main.customers"];
        assert!(customers.columns.iter().any(|c| c.name == "country"), "{name}");

        drift_in_place(&warehouse);
        for round in ["second", "third"] {
            let after = serve(&project, &source, &[BY_COUNTRY, BY_STORE, BY_STATUS]);
            let (country, store, status) = (&after[0], &after[1], &after[2]);
            assert_eq!(country["error"]["kind"], "schema_drift", "{name} {round}: {country}");
            let message = country["error"]["message"].as_str().unwrap();
            assert!(message.contains("main.customers.country") && message.contains("gone"), "{name} {round}: {message}");
            assert_eq!(country["error"]["recovery"]["suggested_tool"], "describe_entity", "{name} {round}");
            assert!(country["next_action"]["uri"].as_str().unwrap_or_default().contains("schemabrain check"), "{name} {round}: {country}");
            assert_eq!(store["error"]["kind"], "schema_drift", "{name} {round}: {store}");
            assert!(store["error"]["message"].as_str().unwrap().contains("changed type"), "{name} {round}: {store}");
            // Untouched by the drift: answered.
            assert_eq!(status["status"], "success", "{name} {round}: {status}");
            assert_eq!(status, &before_status(&warehouse, status), "{name} {round}");
            // The snapshot holds the live source.
            let snapshot = schemabrain::catalog::Catalog::load_snapshot(&project).unwrap().expect("snapshot");
            assert!(!snapshot.tables["main.customers"].columns.iter().any(|c| c.name == "country"), "{name} {round}: refreshed");
            let name_type = &snapshot.tables["main.stores"].columns.iter().find(|c| c.name == "name").unwrap().data_type;
            assert_eq!(name_type, "integer", "{name} {round}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The rows of order_count by order status, checked (as a set) against
/// SQL written by hand on the warehouse; returns the envelope unchanged
/// when they agree.
fn before_status(warehouse: &Path, env: &serde_json::Value) -> serde_json::Value {
    let c = duckdb::Connection::open(warehouse).unwrap();
    let mut stmt = c.prepare("SELECT status, count(id) FROM main.orders GROUP BY status").unwrap();
    let mut want: Vec<(Option<String>, i64)> = stmt.query_map([], |r| Ok((r.get(0)?, r.get(1)?))).unwrap().map(Result::unwrap).collect();
    want.sort();
    let mut got: Vec<(Option<String>, i64)> = env["data"]["rows"]
        .as_array()
        .expect("rows")
        .iter()
        .map(|row| (row[0].as_str().map(str::to_string), row[1].as_i64().or_else(|| row[1].as_str().and_then(|s| s.parse().ok())).expect("a count")))
        .collect();
    got.sort();
    assert_eq!(got, want, "{env}");
    env.clone()
}

/// An engine that cannot be reached and a query that runs out of time get
/// their documented kinds (missing_credential; cost_cap_exceeded with code
/// TIMEOUT), never internal_error.
#[test]
fn an_unreachable_engine_and_a_timeout_get_their_documented_kinds() {
    use schemabrain::tools::{Session, SessionOptions, Toolsets};
    // Nothing listens on port 1.
    let project = crate::common::demo_project().clone();
    let options = SessionOptions { source: Some("postgres://postgres@127.0.0.1:1/test".into()), audit: false, ..SessionOptions::default() };
    let session = Session::open(project, options).expect("serve's session opens whatever the source");
    let env = session.call("get_metric", &json!({"name": "revenue"}));
    let err = env.tool_error().unwrap_or_else(|| panic!("{}", serde_json::to_string(&env).unwrap()));
    assert_eq!(err.kind().as_str(), "missing_credential", "{}", err.message());
    assert_eq!(err.code().as_str(), "UNAUTHORIZED");
    assert!(err.message().contains("could not be reached"), "{}", err.message());
    // The recovery compiles the same request.
    assert_eq!(err.recovery().suggested_tool(), Some("get_metric"));
    let args = serde_json::Value::Object(err.recovery().suggested_args().unwrap().clone());
    assert_eq!(args["dry_run"], true);
    assert_eq!(session.call("get_metric", &args).status().as_str(), "success");

    // A query the engine cannot finish within the server's timeout.
    let options = SessionOptions {
        source: Some(format!("duckdb:{}", crate::common::demo_warehouse().display())),
        audit: false,
        timeout: Some(std::time::Duration::from_millis(300)),
        toolsets: Toolsets { provider: true, writes: false },
        ..SessionOptions::default()
    };
    let session = Session::open(crate::common::demo_project_with_catalog().clone(), options).expect("opens");
    let env = session.call("query_sql", &json!({"sql": "SELECT count(*) FROM range(1000000000000) a WHERE a.range % 7 = 3"}));
    let err = env.tool_error().unwrap_or_else(|| panic!("{}", serde_json::to_string(&env).unwrap()));
    assert_eq!(err.kind().as_str(), "cost_cap_exceeded", "{}", err.message());
    assert_eq!(err.code().as_str(), "TIMEOUT", "{}", err.message());
}

/// Issue 33 item 3, the other way in: a source that drifts while the
/// server runs. The engine rejects the request; the session reads the
/// live catalog again, answers `schema_drift` naming the change, and
/// refreshes the snapshot; what the drift does not touch still answers
/// (checked against SQL written by hand).
#[test]
fn a_source_that_drifts_while_serving_is_rechecked_after_the_engine_fails() {
    use schemabrain::tools::{Session, SessionOptions};
    let Some(schema) = crate::engines_servers::PgSchema::create("drift_live") else { return };
    let s = &schema.name;
    schema.exec(&format!(
        "CREATE TABLE \"{s}\".items (id integer PRIMARY KEY, kind varchar, qty integer NOT NULL); \
         INSERT INTO \"{s}\".items VALUES (1, 'a', 2), (2, 'b', 3), (3, 'a', 5), (4, NULL, 7);"
    ));
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("drift-live-{}", uuid::Uuid::new_v4().simple()));
    for (file, text) in [
        ("schemabrain.yaml", "version: 1\nname: live\ndialect: postgres\n".to_string()),
        (
            "entities/item.yaml",
            format!("version: 1\nname: item\nbinding: {{single_table: {s}.items}}\nidentity: id\ncolumns:\n  - {{name: id, type: integer}}\n  - {{name: kind, type: varchar}}\n  - {{name: qty, type: integer}}\n"),
        ),
        ("metrics/units.yaml", "version: 1\nname: units\nentity: item\nmeasure: {agg: sum, column: qty}\n".to_string()),
        (
            "pii_policy.yaml",
            format!("version: 1\ncolumn_overrides:\n  {s}.items.id: {{sensitivity: public, categories: []}}\n  {s}.items.kind: {{sensitivity: public, categories: []}}\n  {s}.items.qty: {{sensitivity: public, categories: []}}\n"),
        ),
    ] {
        let path = dir.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    let project = Project::open(&dir).unwrap_or_else(|d| panic!("{d}"));
    let options = SessionOptions { source: Some(schema.url.clone()), audit: false, ..SessionOptions::default() };
    let session = Session::open(project, options).expect("opens");
    let by_kind = json!({"name": "units", "group_by": ["item.kind"]});
    let before = session.call("get_metric", &by_kind);
    assert_eq!(before.status().as_str(), "success", "{}", serde_json::to_string(&before).unwrap());
    assert!(session.drift().is_empty());

    schema.exec(&format!("ALTER TABLE \"{s}\".items DROP COLUMN kind"));
    let after = session.call("get_metric", &by_kind);
    let err = after.tool_error().unwrap_or_else(|| panic!("{}", serde_json::to_string(&after).unwrap()));
    assert_eq!(err.kind().as_str(), "schema_drift", "{}", err.message());
    assert!(err.message().contains(&format!("{s}.items.kind")) && err.message().contains("gone"), "{}", err.message());
    assert_eq!(err.recovery().suggested_tool(), Some("describe_entity"));
    assert!(session.drift().iter().any(|d| d.column.as_deref() == Some("kind")));
    let snapshot = schemabrain::catalog::Catalog::load_snapshot(&dir).unwrap().expect("snapshot");
    let items = &snapshot.tables[&format!("{s}.items")];
    assert!(!items.columns.iter().any(|c| c.name == "kind"), "the snapshot holds the live source: {items:?}");
    // The next identical call is answered from the drift, before the engine.
    let again = session.call("get_metric", &by_kind);
    assert_eq!(again.tool_error().map(|e| e.kind().as_str()), Some("schema_drift"));
    // Untouched by the drift: 2 + 3 + 5 + 7.
    let total = session.call("get_metric", &json!({"name": "units"}));
    assert_eq!(total.status().as_str(), "success", "{}", serde_json::to_string(&total).unwrap());
    let rows = &total.data().unwrap()["rows"];
    let got = rows[0][0].as_f64().or_else(|| rows[0][0].as_str().and_then(|v| v.parse().ok())).expect("a number");
    assert_eq!(got, 17.0, "{rows}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Issue 33 item 4: the model tools rate every item by get_metric's rules
/// (per item `confidence` and `provenance`, the answer as its weakest
/// item), and a `suggested` definition with no provenance block is not
/// said to come from an llm.
#[test]
fn every_model_tool_rates_its_items_as_get_metric_does() {
    use schemabrain::envelope::Confidence;
    let draft = with_join_provenance("items", "  inference_method: name_match\n  validation_state: draft\n  evidence: [\"orders.customer_id matches customers.id by name\"]\n");
    // The customer entity becomes a suggestion that says nothing of how.
    let entity = draft.dir.join("entities/customer.yaml");
    let text = std::fs::read_to_string(&entity).unwrap().replace("origin: manual\n", "origin: suggested\n");
    std::fs::write(&entity, text).unwrap();
    let project = Project::open(&draft.dir).unwrap_or_else(|d| panic!("{d}"));
    let run = |tool: &str, args: serde_json::Value| tools::call(&project, tool, &args, Execution::DryRun);
    let item = |env: &Envelope, name: &str| -> serde_json::Value {
        env.data().unwrap()["items"].as_array().unwrap().iter().find(|i| i["name"] == name).cloned().unwrap_or_else(|| panic!("{name}"))
    };

    let joins = run("list_joins", json!({}));
    let guessed = item(&joins, "order_customer");
    assert_eq!(guessed["confidence"], "LOW", "{guessed}");
    assert_eq!(guessed["provenance"]["source"], "inferred");
    assert_eq!(guessed["provenance"]["validation_state"], "draft");
    let said = guessed["provenance"]["observed_in"].as_str().unwrap();
    assert!(said.contains("name_match") && said.contains("matches customers.id by name"), "{said}");
    let declared = item(&joins, "order_store");
    assert_eq!(declared["confidence"], "HIGH");
    assert_eq!(declared["provenance"]["inference_method"], "manually_authored");
    assert_eq!(joins.confidence(), Some(Confidence::Low), "a listing is as trustworthy as its weakest item");

    let resolved = run("resolve_join", json!({"entity_a": "order", "entity_b": "customer"}));
    assert_eq!(resolved.confidence(), Some(Confidence::Low));
    assert_eq!(resolved.data().unwrap()["confidence"], "LOW");
    let resolved = run("resolve_join", json!({"entity_a": "order", "entity_b": "store"}));
    assert_eq!(resolved.confidence(), Some(Confidence::High));

    let entities = run("list_entities", json!({}));
    let suggested = item(&entities, "customer");
    assert_eq!(suggested["confidence"], "LOW", "{suggested}");
    assert_eq!(suggested["provenance"]["source"], "inferred", "no llm where no model runs: {suggested}");
    assert!(suggested["provenance"]["inference_method"].is_null());
    assert!(suggested["provenance"]["observed_in"].as_str().unwrap().contains("suggested_method_unrecorded"));
    assert_eq!(item(&entities, "order")["confidence"], "HIGH");
    assert_eq!(entities.confidence(), Some(Confidence::Low));
    let described = run("describe_entity", json!({"name": "customer"}));
    assert_eq!(described.confidence(), Some(Confidence::Low));
    assert_eq!(serde_json::to_value(described.provenance().unwrap()).unwrap()["source"], "inferred");
    assert_eq!(run("describe_entity", json!({"name": "order"})).confidence(), Some(Confidence::High));
    // get_metric agrees: revenue by country walks the guessed join and reads the suggested entity.
    assert_eq!(revenue_by_country(&project).confidence(), Some(Confidence::Low));

    let metrics = run("list_metrics", json!({}));
    for m in metrics.data().unwrap()["items"].as_array().unwrap() {
        assert_eq!(m["confidence"], "HIGH", "hand-written metrics: {m}");
    }
    assert_eq!(metrics.confidence(), Some(Confidence::High));

    // suggest_joins: each edge rated, each path as its weakest edge, the answer as its weakest path.
    let catalog = crate::common::demo_project_with_catalog().catalog.clone().expect("catalog");
    let project = project.with_catalog(catalog).unwrap_or_else(|d| panic!("{d}"));
    let env = tools::call(&project, "suggest_joins", &json!({"tables": ["main.orders", "main.customers", "main.stores"]}), Execution::DryRun);
    let paths = env.data().unwrap()["paths"].as_array().unwrap().clone();
    assert!(!paths.is_empty(), "{}", serde_json::to_string(&env).unwrap());
    let rank = |c: &serde_json::Value| ["LOW", "MEDIUM", "HIGH"].iter().position(|x| c == x).expect("a bucket");
    let mut weakest_path = 2;
    for p in &paths {
        let mut weakest_edge = 2;
        for e in p["edges"].as_array().unwrap() {
            let want = match e["via"].as_str().unwrap() {
                "foreign_key" => "HIGH",
                _ if e["name"] == "order_customer" => "LOW",
                _ => "HIGH",
            };
            assert_eq!(e["confidence"], want, "{e}");
            weakest_edge = weakest_edge.min(rank(&e["confidence"]));
        }
        assert_eq!(rank(&p["confidence"]), weakest_edge, "{p}");
        weakest_path = weakest_path.min(weakest_edge);
    }
    let answer = serde_json::to_value(env.confidence().unwrap()).unwrap();
    assert_eq!(rank(&answer), weakest_path);
}
