//! The MCP server through rmcp's own client, in-process over a duplex pipe,
//! in both protocol eras: every tool listed and linted, every tool called,
//! every structured result validated against the tool's outputSchema with
//! the `jsonschema` crate and checked against its text mirror.

use std::sync::Arc;

use rmcp::model::{CallToolRequestParams, CallToolResult, ClientConfig, ProtocolVersion, Tool};
use rmcp::service::RunningService;
use rmcp::{ClientLifecycleMode, ClientServiceExt, RoleClient, ServiceExt};
use serde_json::{json, Value as Json};

use schemabrain::envelope::Envelope;
use schemabrain::mcp::SchemaBrainServer;
use schemabrain::tools::{Session, SessionOptions};
use schemabrain::project::Project;

use crate::common;

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Era {
    Legacy,
    Modern,
}

pub const ERAS: [Era; 2] = [Era::Legacy, Era::Modern];

/// A fresh server (its own retry tracker) on the demo project with its
/// warehouse's catalog and an engine; no audit (it would write into the
/// repository).
/// A session as `serve` opens one: a source that fails to open leaves it compiling only.
pub fn session(project: schemabrain::project::Project, source: Option<&str>, audit: bool) -> Session {
    let options = SessionOptions { source: source.map(str::to_string), audit, ..SessionOptions::default() };
    Session::open(project, options).expect("serve's session opens whatever the source")
}

pub fn demo_shared() -> Arc<Session> {
    let w = common::demo_warehouse();
    let project = common::demo_project_with_catalog().clone();
    Arc::new(session(project, Some(&format!("duckdb:{}", w.display())), false))
}

/// The demo project as declared: no snapshot, no source.
fn bare_shared() -> Arc<Session> {
    let project: Project = common::demo_project().clone();
    assert!(project.catalog.is_none());
    let mut project = project;
    project.model.settings_mut().source = None;
    Arc::new(session(project, None, false))
}

pub async fn connect(shared: Arc<Session>, era: Era) -> RunningService<RoleClient, ClientConfig> {
    let (srv, cli) = tokio::io::duplex(1 << 20);
    let server = SchemaBrainServer::new(shared);
    tokio::spawn(async move {
        if let Ok(running) = server.serve(srv).await {
            let _ = running.waiting().await;
        }
    });
    let client = match era {
        Era::Legacy => ClientConfig::default().serve(cli).await.expect("legacy handshake"),
        Era::Modern => ClientConfig::default()
            .serve_with_lifecycle(cli, ClientLifecycleMode::Discover { preferred_versions: vec![ProtocolVersion::V_2026_07_28] })
            .await
            .expect("2026 discover"),
    };
    let expected = match era {
        Era::Legacy => ProtocolVersion::V_2025_11_25,
        Era::Modern => ProtocolVersion::V_2026_07_28,
    };
    assert_eq!(client.peer_info().map(|i| i.protocol_version.clone()), Some(expected), "negotiated era");
    client
}

/// Validates a result against the tool's outputSchema and its text mirror,
/// and returns the envelope (re-read through its checked deserializer).
pub fn check_result(tool: &Tool, res: &CallToolResult) -> Json {
    let structured = res.structured_content.clone().unwrap_or_else(|| panic!("{}: no structuredContent", tool.name));
    let schema = Json::Object(tool.output_schema.as_deref().cloned().expect("outputSchema"));
    let validator = jsonschema::validator_for(&schema).expect("outputSchema compiles");
    let errors: Vec<String> = validator.iter_errors(&structured).map(|e| format!("{e} at {}", e.instance_path())).collect();
    assert!(errors.is_empty(), "{}: result violates outputSchema: {errors:?}\n{structured}", tool.name);
    let text = res.content.first().and_then(|c| c.as_text()).map(|t| t.text.clone()).expect("text mirror");
    let mirrored: Json = serde_json::from_str(&text).expect("text mirror is JSON");
    assert_eq!(mirrored, structured, "{}: text mirror differs", tool.name);
    let env: Envelope = serde_json::from_value(structured.clone()).expect("a valid envelope");
    let failed = matches!(env.status().as_str(), "error" | "refused");
    assert_eq!(res.is_error, Some(failed), "{}: isError must follow status {}", tool.name, env.status().as_str());
    structured
}

pub async fn call(client: &RunningService<RoleClient, ClientConfig>, tools: &[Tool], name: &str, args: Json) -> Json {
    let tool = tools.iter().find(|t| t.name == name).unwrap_or_else(|| panic!("tool {name} listed"));
    let map = match args {
        Json::Object(m) => m,
        Json::Null => Default::default(),
        other => panic!("args are an object, not {other}"),
    };
    let res = client
        .call_tool(CallToolRequestParams::new(name.to_string()).with_arguments(map))
        .await
        .unwrap_or_else(|e| panic!("{name}: {e}"));
    check_result(tool, &res)
}

/// One call per tool that should answer, and one that should fail.
fn cases() -> Vec<(&'static str, Json, &'static str)> {
    vec![
        ("find_relevant_tables", json!({"query": "orders by customer country"}), "success"),
        ("find_relevant_tables", json!({"query": "   "}), "error"),
        ("describe_table", json!({"qualified_name": "main.orders"}), "success"),
        ("describe_table", json!({"qualified_name": "main.ordres"}), "error"),
        ("describe_column", json!({"qualified_name": "main.orders.customer_id"}), "success"),
        ("describe_column", json!({"qualified_name": "orders"}), "error"),
        ("suggest_joins", json!({"tables": ["main.order_items", "main.regions"]}), "success"),
        ("suggest_joins", json!({"tables": ["main.orders"]}), "error"),
        ("get_example_queries", json!({"qualified_name": "main.orders"}), "success"),
        ("get_example_queries", json!({"qualified_name": "main.nope"}), "error"),
        ("find_relevant_entities", json!({"query": "marketing spend"}), "success"),
        ("find_relevant_entities", json!({"query": "zzzqqq"}), "empty"),
        ("list_entities", json!({}), "success"),
        ("list_entities", json!({"verbose": true}), "error"),
        ("describe_entity", json!({"name": "customer"}), "success"),
        ("describe_entity", json!({"name": "custmer"}), "error"),
        ("list_metrics", json!({}), "success"),
        ("list_joins", json!({}), "success"),
        ("resolve_join", json!({"entity_a": "order", "entity_b": "customer"}), "success"),
        ("resolve_join", json!({"entity_a": "order", "entity_b": "region"}), "error"),
        ("get_metric", json!({"name": "revenue", "group_by": ["customer.country"], "limit": 5, "order_by": [{"column": "revenue", "direction": "desc"}]}), "success"),
        ("get_metric", json!({"name": "revenue", "group_by": ["customer.country"], "limit": 5}), "degraded"),
        ("get_metric", json!({"name": "revenue", "time_grain": "month", "dry_run": true}), "success"),
        ("get_metric", json!({"names": ["revenue", "order_count"], "group_by": ["customer.country"], "dry_run": true}), "success"),
        ("get_metric", json!({"name": "revenue", "group_by": ["region.name"]}), "error"),
        ("get_metric", json!({"name": "revenue", "grain": "month"}), "error"),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_answers_in_both_eras_and_matches_its_output_schema() {
    for era in ERAS {
        let client = connect(demo_shared(), era).await;
        let tools = client.list_all_tools().await.expect("tools/list");
        assert_eq!(tools.len(), 12, "{era:?}: twelve tools");
        let mut called = std::collections::BTreeSet::new();
        for (name, args, status) in cases() {
            let env = call(&client, &tools, name, args.clone()).await;
            assert_eq!(env["status"], status, "{era:?} {name}({args}): {env:#}");
            called.insert(name);
        }
        assert_eq!(called.len(), 12, "every tool is exercised");
        client.cancel().await.expect("cancel");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_passes_the_charter_lint() {
    for era in ERAS {
        let client = connect(demo_shared(), era).await;
        let tools = client.list_all_tools().await.expect("tools/list");
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        let mut sorted = names.clone();
        sorted.sort();
        assert_eq!(names, sorted, "deterministic order");
        for t in &tools {
            lint_tool(t);
        }
        client.cancel().await.expect("cancel");
    }
}

/// Issue 33 item 7: every tool the server can offer (`--toolsets all` with
/// `--allow-writes`: the provider tools and the write tools too) passes the
/// same lint, in both eras.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_tool_of_toolsets_all_passes_the_charter_lint() {
    let mut project: Project = common::demo_project().clone();
    project.model.settings_mut().source = None;
    let options = SessionOptions {
        source: None,
        audit: false,
        toolsets: schemabrain::tools::Toolsets::parse("all").expect("all"),
        allow_writes: Some("scratch".into()),
        ..SessionOptions::default()
    };
    let shared = Arc::new(Session::open(project, options).expect("opens"));
    for era in ERAS {
        let client = connect(shared.clone(), era).await;
        let tools = client.list_all_tools().await.expect("tools/list");
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        for want in ["get_metric", "query_sql", "get_table_schema", "sample_table", "materialize_sql", "create_view"] {
            assert!(names.contains(&want), "{want} offered: {names:?}");
        }
        assert_eq!(tools.len(), 12 + 11 + 2, "{names:?}");
        for t in &tools {
            lint_tool(t);
        }
        client.cancel().await.expect("cancel");
    }
}

fn lint_tool(t: &Tool) {
    let name = t.name.as_ref();
    assert!(!name.is_empty() && name.len() <= 64 && name.chars().all(|c| c.is_ascii_alphanumeric() || "_-.".contains(c)), "{name}");
    let d = t.description.as_deref().expect("description");
    assert!(d.starts_with("Use this when"), "{name}: description must lead with 'Use this when': {d}");
    assert!(d.contains(" instead when") || d.contains("Don't use when"), "{name}: names the neighbour tool");
    assert!(d.contains("Compositions:") && d.contains('→'), "{name}: names a composition");
    assert!(d.chars().count() < 500, "{name}: description is {} chars", d.chars().count());
    assert!(t.title.as_deref().is_some_and(|s| !s.is_empty()), "{name}: title");
    let a = t.annotations.as_ref().expect("annotations");
    assert!(a.title.is_some(), "{name}: annotations.title");
    let meta = &t.meta.as_ref().expect("_meta").0;
    // Only the write tools (listed with --allow-writes) write, and say so.
    let writes = meta.get("side_effects").and_then(Json::as_str) == Some("write");
    assert_eq!(writes, ["materialize_sql", "create_view"].contains(&name), "{name}: side_effects");
    assert_eq!(a.read_only_hint, Some(!writes), "{name}: read-only");
    assert_eq!(a.destructive_hint, Some(writes), "{name}: destructive");
    assert!(a.idempotent_hint.is_some() && a.open_world_hint.is_some(), "{name}: all hints set");
    for key in ["cost_hint", "latency_hint", "idempotent", "side_effects", "charter_version"] {
        assert!(meta.contains_key(key), "{name}: _meta.{key}");
    }
    assert_eq!(meta["charter_version"], "1.2");
    assert!(["fast", "moderate", "slow"].contains(&meta["latency_hint"].as_str().unwrap()), "{name}");
    assert!(["none", "read", "write"].contains(&meta["side_effects"].as_str().unwrap()), "{name}");
    assert!(meta["cost_hint"]["tokens_estimate"].as_u64().is_some_and(|n| n > 0), "{name}");
    let out = t.output_schema.as_ref().expect("outputSchema");
    assert_eq!(out.get("type"), Some(&json!("object")), "{name}: object-rooted outputSchema");
    let input = Json::Object((*t.input_schema).clone());
    assert_eq!(input["type"], "object", "{name}: object-rooted inputSchema");
    assert_eq!(input["additionalProperties"], false, "{name}: unknown arguments are rejected");
    for key in ["anyOf", "oneOf", "allOf", "$ref"] {
        assert!(input.get(key).is_none(), "{name}: no {key} at the input root");
    }
    assert!(!input.to_string().contains("\"$ref\""), "{name}: inlined input schema");
    every_property_described(name, &input);
}

fn every_property_described(tool: &str, schema: &Json) {
    if let Some(props) = schema.get("properties").and_then(Json::as_object) {
        for (k, v) in props {
            assert!(v.get("description").and_then(Json::as_str).is_some_and(|s| !s.is_empty()), "{tool}: property `{k}` has no description");
            every_property_described(tool, v);
        }
    }
    if let Some(items) = schema.get("items") {
        every_property_described(tool, items);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn unknown_arguments_are_rejected_in_band_with_the_allowed_ones_named() {
    let client = connect(demo_shared(), Era::Modern).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let env = call(&client, &tools, "get_metric", json!({"name": "revenue", "grain": "month"})).await;
    let msg = env["error"]["message"].as_str().unwrap();
    assert!(msg.contains("`grain`") && msg.contains("time_grain"), "{msg}");
    // The repair renames the argument to the one it plainly means, so the
    // question (revenue per month) is kept, and is a correction to obey.
    assert_eq!(env["error"]["recovery"]["suggested_tool"], "get_metric");
    assert_eq!(env["error"]["recovery"]["suggested_args"], json!({"name": "revenue", "time_grain": "month"}));
    assert_eq!(env["next_action"]["must_obey"], true, "{env:#}");
    let next = call(&client, &tools, "get_metric", env["error"]["recovery"]["suggested_args"].clone()).await;
    assert_eq!(next["status"], "success", "{next:#}");
    assert!(next["data"]["columns"].to_string().contains("month") || next["data"].to_string().contains("month"), "answered per month: {next:#}");
    // An argument that means nothing here is never dropped from a suggested
    // call (it might have been a filter): the allowed names, and no call.
    let env = call(&client, &tools, "get_metric", json!({"name": "revenue", "wibble": {"country": "FR"}})).await;
    assert!(env["error"]["message"].as_str().unwrap().contains("`wibble`"), "{env:#}");
    assert!(env["error"]["recovery"]["suggested_tool"].is_null(), "{env:#}");
    assert_eq!(env["next_action"]["must_obey"], false, "{env:#}");
    // An unknown tool is a protocol error, not an envelope.
    let err = client.call_tool(CallToolRequestParams::new("drop_table")).await.expect_err("unknown tool");
    assert!(err.to_string().contains("tool not found"), "{err}");
    client.cancel().await.expect("cancel");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn identical_failing_calls_escalate_to_a_different_recovery_that_answers() {
    // A fresh server: the retry tracker is per server.
    let w = common::demo_warehouse();
    let shared = Arc::new(session(common::demo_project_with_catalog().clone(), Some(&format!("duckdb:{}", w.display())), false));
    let client = connect(shared, Era::Legacy).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let bad = json!({"name": "revenue", "group_by": ["customer.colour"]});
    let mut recoveries = Vec::new();
    for _ in 0..4 {
        let env = call(&client, &tools, "get_metric", bad.clone()).await;
        assert_eq!(env["status"], "error");
        recoveries.push(env["error"]["recovery"].clone());
    }
    assert_eq!(recoveries[0], recoveries[1], "the first retries get the same deterministic recovery");
    assert_ne!(recoveries[1]["suggested_tool"], recoveries[2]["suggested_tool"], "the third identical failure escalates");
    assert_eq!(recoveries[2]["suggested_tool"], "list_metrics");
    let next = call(&client, &tools, "list_metrics", recoveries[2]["suggested_args"].clone()).await;
    assert_eq!(next["status"], "success");
    // Success forgets the failures: a fixed call then a bad one starts over.
    call(&client, &tools, "get_metric", json!({"name": "revenue", "group_by": ["customer.country"], "dry_run": true})).await;
    let other = call(&client, &tools, "get_metric", json!({"name": "revenue", "group_by": ["customer.colour"], "limit": 3})).await;
    assert_ne!(other["error"]["recovery"]["suggested_tool"], "list_metrics", "a different call is not escalated");
    client.cancel().await.expect("cancel");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn response_format_and_token_estimate() {
    let client = connect(demo_shared(), Era::Modern).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let args = json!({"name": "order_count", "time_grain": "day", "limit": 400});
    let concise = call(&client, &tools, "get_metric", args.clone()).await;
    let mut detailed_args = args.clone();
    detailed_args["response_format"] = json!("detailed");
    let detailed = call(&client, &tools, "get_metric", detailed_args).await;
    let rows = |e: &Json| e["data"]["rows"].as_array().map_or(0, Vec::len);
    assert_eq!(rows(&concise), 100, "concise keeps 100 rows");
    assert_eq!(concise["data"]["truncated"], true);
    assert_eq!(rows(&detailed), 400, "detailed keeps all");
    for e in [&concise, &detailed] {
        let est = e["data"]["token_estimate"].as_u64().expect("token_estimate");
        assert!(est > 0 && est <= 20_000, "{est}");
    }
    assert!(detailed["data"]["token_estimate"].as_u64() > concise["data"]["token_estimate"].as_u64());
    let bad = call(&client, &tools, "get_metric", json!({"name": "revenue", "response_format": "verbose"})).await;
    assert_eq!(bad["status"], "error");
    assert_eq!(bad["error"]["recovery"]["suggested_args"]["response_format"], "concise");
    // The hard cap: ten thousand daily rows would be far over 20k tokens.
    let huge = call(&client, &tools, "get_metric", json!({"name": "order_count", "time_grain": "day", "group_by": ["customer.country"], "limit": 10000, "order_by": [{"column": "order_count", "direction": "desc"}], "response_format": "detailed"})).await;
    assert_eq!(huge["status"], "partial", "an answer cut to the cap is partial: {}", huge["error"]);
    assert!(huge["data"]["notes"].to_string().contains("20000 tokens"), "{}", huge["data"]["notes"]);
    assert_eq!(huge["data"]["truncated"], true, "cut to the cap");
    assert!(huge["data"]["token_estimate"].as_u64().unwrap() <= 20_000);
    assert!(huge.to_string().len() / 4 < 25_000, "whole envelope stays under 25k tokens");
    client.cancel().await.expect("cancel");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_a_snapshot_physical_tools_say_index_not_ready_and_the_recovery_answers() {
    for era in ERAS {
        let client = connect(bare_shared(), era).await;
        let tools = client.list_all_tools().await.expect("tools/list");
        for (name, args) in [
            ("find_relevant_tables", json!({"query": "orders"})),
            ("describe_table", json!({"qualified_name": "main.orders"})),
            ("describe_column", json!({"qualified_name": "main.orders.amount"})),
            ("suggest_joins", json!({"tables": ["main.orders", "main.regions"]})),
            ("get_example_queries", json!({"qualified_name": "main.orders"})),
        ] {
            let env = call(&client, &tools, name, args).await;
            assert_eq!(env["error"]["kind"], "index_not_ready", "{name}: {env:#}");
            let rec = &env["error"]["recovery"];
            let next = call(&client, &tools, rec["suggested_tool"].as_str().unwrap(), rec["suggested_args"].clone()).await;
            assert_eq!(next["status"], "success", "{name}: the recovery answers");
        }
        // The semantic search works without a snapshot.
        let env = call(&client, &tools, "find_relevant_entities", json!({"query": "stores"})).await;
        assert_eq!(env["data"]["hits"][0]["name"], "store");
        // No source: get_metric says so, and its recovery (a dry run) answers.
        let env = call(&client, &tools, "get_metric", json!({"name": "revenue"})).await;
        assert_eq!(env["error"]["kind"], "missing_credential", "{env:#}");
        let next = call(&client, &tools, "get_metric", env["error"]["recovery"]["suggested_args"].clone()).await;
        assert_eq!(next["status"], "success");
        assert!(next["data"]["sql"].as_str().unwrap().contains("SELECT"));
        client.cancel().await.expect("cancel");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_error_recovery_names_a_listed_tool_with_valid_arguments() {
    let client = connect(demo_shared(), Era::Legacy).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    for (name, args, status) in cases() {
        if status != "error" {
            continue;
        }
        let env = call(&client, &tools, name, args).await;
        let rec = &env["error"]["recovery"];
        if let Some(next) = rec["suggested_tool"].as_str() {
            let follow = call(&client, &tools, next, rec["suggested_args"].clone()).await;
            assert!(
                ["success", "empty"].contains(&follow["status"].as_str().unwrap()),
                "{name} → {next}({}) did not answer: {follow:#}",
                rec["suggested_args"]
            );
        }
    }
    client.cancel().await.expect("cancel");
}

#[test]
fn pii_never_leaks_through_the_physical_tools() {
    let shared = demo_shared();
    let env = serde_json::to_value(shared.call("describe_table", &json!({"qualified_name": "main.customers", "response_format": "detailed"}))).unwrap();
    let text = env.to_string();
    assert!(!text.contains("password_hash"), "catastrophic column name hidden: {text}");
    let cols = env["data"]["columns"].as_array().unwrap();
    let email = cols.iter().find(|c| c["name"] == "email").expect("email listed (blocked, not catastrophic)");
    assert_eq!(email["redacted"], true);
    assert!(email["description"].is_null());
    let search = serde_json::to_value(shared.call("find_relevant_tables", &json!({"query": "password hash email", "response_format": "detailed"}))).unwrap();
    let s = search["data"]["hits"].to_string();
    assert!(!s.contains("password"), "search never reveals catastrophic columns: {s}");
    for hit in search["data"]["hits"].as_array().unwrap() {
        assert_ne!(hit["best_column"], "email", "blocked columns are not indexed: {s}");
        assert_ne!(hit["qualified_name"], "main.customers", "customers has no unblocked column matching: {s}");
    }
}

/// `serve` runs get_metric on any engine `engine::open` knows: here
/// DataFusion over the demo exported to Parquet, answering as DuckDB does.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serve_executes_on_a_parquet_source_with_datafusion() {
    let source = crate::engines_datafusion::demo_files("parquet");
    // No dialect named anywhere: the engine's own (datafusion) is used.
    let mut project = common::demo_project_with_catalog().clone();
    project.model.settings_mut().dialect = None;
    let on_parquet = Arc::new(session(project, Some(&source), false));
    let client = connect(on_parquet, Era::Modern).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let args = json!({"name": "revenue", "group_by": ["customer.segment"]});
    let env = call(&client, &tools, "get_metric", args.clone()).await;
    assert_eq!(env["status"], "success", "{env}");
    assert_eq!(env["data"]["dialect"], "datafusion", "the engine's dialect when none is named");
    let on_duckdb = demo_shared().call("get_metric", &json!({"name": "revenue", "group_by": ["customer.segment"]}));
    let duck = serde_json::to_value(on_duckdb).unwrap();
    assert!(
        crate::cross_engine::same_rows(
            &serde_json::from_value::<Vec<Vec<Json>>>(env["data"]["rows"].clone()).unwrap(),
            &serde_json::from_value::<Vec<Vec<Json>>>(duck["data"]["rows"].clone()).unwrap()
        ),
        "parquet: {}\nduckdb: {}",
        env["data"]["rows"],
        duck["data"]["rows"]
    );
    client.cancel().await.expect("cancel");
}

/// The default surface fits an agent's context (issues 14 and 33: at most
/// 24,000 bytes, 6,000 tokens at 4 bytes each), and every tool still
/// publishes an outputSchema.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_list_fits_the_token_budget() {
    let client = connect(demo_shared(), Era::Legacy).await;
    let tools = client.list_all_tools().await.expect("tools/list");
    let bytes = serde_json::to_string(&json!({"tools": tools})).unwrap().len();
    eprintln!("tools/list: {bytes} bytes, about {} tokens", bytes / 4);
    assert!(bytes <= 24_000, "tools/list is {bytes} bytes, about {} tokens, over the 24,000-byte budget", bytes / 4);
    assert!(tools.iter().all(|t| t.output_schema.is_some()), "every tool publishes an outputSchema");
    client.cancel().await.expect("cancel");
}

/// Closed vocabularies are published as enums, and the enums are exactly
/// what get_metric accepts: every listed value passes the argument check,
/// a value outside is refused naming the allowed ones.
#[test]
fn get_metric_publishes_its_vocabularies_as_enums_that_match_what_it_accepts() {
    use schemabrain::tools::{self, Execution};
    let schema = &schemabrain::tools::surface::find("get_metric").unwrap().input_schema;
    let props = &schema["properties"];
    let list = |v: &Json| -> Vec<String> { v.as_array().unwrap_or_else(|| panic!("enum missing: {v}")).iter().map(|x| x.as_str().unwrap().to_string()).collect() };
    let ops = list(&props["filters"]["items"]["properties"]["op"]["enum"]);
    let grains = list(&props["time_grain"]["enum"]);
    let dialects = list(&props["dialect"]["enum"]);
    assert_eq!(list(&props["order_by"]["items"]["properties"]["direction"]["enum"]), ["asc", "desc"]);
    assert_eq!(ops.len(), 12);
    let dry = |args: Json| {
        let mut a = args;
        a["dry_run"] = true.into();
        tools::call(crate::common::demo_project(), "get_metric", &a, Execution::DryRun)
    };
    for op in &ops {
        let value = match op.as_str() {
            "in" | "not_in" => json!(["placed"]),
            "is_null" | "not_null" => Json::Null,
            _ => json!("placed"),
        };
        let mut f = json!({"column": "order.status", "op": op});
        if !value.is_null() {
            f["value"] = value;
        }
        let env = dry(json!({"name": "order_count", "filters": [f]}));
        assert!(env.tool_error().is_none(), "op {op}: {}", serde_json::to_string(&env).unwrap());
    }
    // Each published grain is answered for a metric that declares them all
    // (metrics may narrow their own grains), and an unpublished one is not.
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("every-grain");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("every_grain.yaml");
    std::fs::write(&file, format!("version: 1\nname: every_grain\nentity: order\nmeasure: {{agg: count, column: id}}\ntime_dimension: order.ordered_at\ntime_grains: [{}]\n", grains.join(", "))).unwrap();
    let (model, diags) = schemabrain::model::load_project_with_extra(&crate::common::repo("semantics/demo"), &[file.as_path()]);
    assert!(diags.is_empty(), "{diags}");
    let project = schemabrain::project::Project::from_parts(crate::common::repo("semantics/demo"), model, None).unwrap();
    let grain_call = |grain: &str| tools::call(&project, "get_metric", &json!({"name": "every_grain", "time_grain": grain, "dry_run": true}), Execution::DryRun);
    for grain in &grains {
        let env = grain_call(grain);
        assert!(env.tool_error().is_none(), "time_grain {grain}: {}", serde_json::to_string(&env).unwrap());
    }
    assert_eq!(grain_call("fortnight").tool_error().unwrap().kind().as_str(), "invalid_time_grain");
    for d in &dialects {
        let env = dry(json!({"name": "order_count", "dialect": d}));
        assert!(env.tool_error().is_none(), "dialect {d}: {}", serde_json::to_string(&env).unwrap());
    }
    let env = dry(json!({"name": "order_count", "filters": [{"column": "order.status", "op": "ilike", "value": "x"}]}));
    assert!(env.tool_error().unwrap().message().contains("not_in"));
}

/// get_example_queries offers working calls: on every table of the demo
/// warehouse, each example runs on the warehouse and answers with rows.
#[test]
fn example_queries_run_and_answer_on_the_warehouse() {
    use schemabrain::tools::surface::invoke;
    use schemabrain::tools::Execution;
    use crate::common::{demo_engine, demo_project_with_catalog, limits};
    let project = demo_project_with_catalog();
    let engine = demo_engine();
    let tables: Vec<String> = project.catalog.as_ref().unwrap().tables.values().map(|t| format!("{}.{}", t.schema, t.name)).collect();
    let mut offered = 0;
    for t in &tables {
        let env = invoke(project, "get_example_queries", &json!({"qualified_name": t}), Execution::DryRun);
        let queries = env.data().unwrap()["queries"].as_array().unwrap().clone();
        for q in queries {
            assert_eq!(q["tool"], "get_metric");
            let answer = invoke(project, "get_metric", &q["arguments"], Execution::run(&engine, limits()));
            assert!(matches!(answer.status().as_str(), "success" | "degraded"), "{t}: {q} answered {}", serde_json::to_string(&answer).unwrap());
            assert!(!answer.data().unwrap()["rows"].as_array().unwrap().is_empty(), "{t}: {q} has no rows");
            offered += 1;
        }
    }
    assert!(offered >= tables.len(), "only {offered} examples for {} tables", tables.len());
}
