//! The provider toolset (issue 17): the adversarial corpus
//! (`tests/provider/corpus.sql`) through query_sql on DuckDB and on
//! PostgreSQL with zero escapes (every case's outcome as written, no
//! answered row holding a PII value read independently from the warehouse,
//! the warehouse unchanged afterwards), paging round trips returning every
//! row exactly once against a direct read, page tokens refused when
//! forged, foreign or for another statement, and the toolset over MCP.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use serde_json::{json, Value as Json};

use schemabrain::engine::{self, Engine, PostgresEngine};
use schemabrain::envelope::Envelope;
use schemabrain::sql::CompiledSql;
use schemabrain::tools::{Session, SessionOptions, Toolsets};

use crate::common::{demo_engine, demo_project_with_catalog, demo_warehouse, limits, repo};
use crate::engines_servers::PgSchema;

pub(crate) struct Case {
    pub expect: String,
    pub only: Option<String>,
    pub sql: String,
    pub line: usize,
}

pub(crate) fn corpus() -> Vec<Case> {
    let text = std::fs::read_to_string(repo("tests/provider/corpus.sql")).unwrap();
    let mut cases: Vec<Case> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if let Some(head) = line.strip_prefix("-- case:") {
            let head = head.split(" : ").next().unwrap_or("");
            let mut words = head.split_whitespace();
            let expect = words.next().expect("an expectation").to_string();
            assert!(["ok", "pii", "policy", "invalid", "fails"].contains(&expect.as_str()), "line {}: {expect}", i + 1);
            cases.push(Case { expect, only: words.next().map(str::to_string), sql: String::new(), line: i + 1 });
        } else if let Some(c) = cases.last_mut() {
            c.sql.push_str(line);
            c.sql.push('\n');
        }
    }
    // Text between cases (section comments) belongs to the case before:
    // comments do not change what a case asks.
    cases
}

pub(crate) fn session(project: schemabrain::project::Project, source: &str, provider: bool) -> Session {
    let options = SessionOptions {
        source: Some(source.to_string()),
        audit: false,
        toolsets: Toolsets { provider, writes: false },
        ..SessionOptions::default()
    };
    Session::open(project, options).expect("session opens")
}

/// What a case got, in the corpus' words.
pub(crate) fn outcome(env: &Envelope) -> String {
    match (env.status().as_str(), env.tool_error()) {
        ("success" | "empty", _) => "ok".into(),
        (_, Some(e)) => match (e.kind().as_str(), e.code().as_str()) {
            ("pii_blocked", _) => "pii".into(),
            ("policy_blocked", _) => "policy".into(),
            (_, "INVALID_INPUT") => "invalid".into(),
            (_, "QUERY_FAILED") => "fails".into(),
            (kind, code) => format!("{kind}/{code}"),
        },
        (status, None) => status.to_string(),
    }
}

/// Every string cell of every answered row.
fn cells(env: &Envelope) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(rows) = env.data().and_then(|d| d.get("rows")) {
        strings(rows, &mut out);
    }
    out
}

/// Runs the corpus on one engine; returns how many cases ran.
fn run_corpus(label: &str, session: &Session, schema: &str, pii_values: &BTreeSet<String>) -> usize {
    let mut wrong = Vec::new();
    let mut ran = 0;
    for case in corpus() {
        if case.only.as_deref().is_some_and(|o| o != label) {
            continue;
        }
        ran += 1;
        let sql = case.sql.replace("{s}", schema);
        let env = session.call("query_sql", &json!({"sql": sql, "page_size": 50}));
        let got = outcome(&env);
        if got != case.expect {
            let message = env.tool_error().map(|e| e.message().to_string()).unwrap_or_default();
            wrong.push(format!("line {}: expected {}, got {got} ({message})\n  {}", case.line, case.expect, sql.trim()));
        }
        for cell in cells(&env) {
            let leak = crate::common::pii_leak(&cell, pii_values);
            assert!(leak.is_none(), "{label} line {}: an answered row's {cell:?} shows the PII value {leak:?}\n  {}", case.line, sql.trim());
        }
        // A refusal names the categories that caused it, never a catastrophic column.
        if let Some(e) = env.tool_error() {
            assert!(!e.message().contains("password_hash"), "line {}: {}", case.line, e.message());
        }
    }
    assert!(wrong.is_empty(), "{label}: {} of {ran} cases differ:\n{}", wrong.len(), wrong.join("\n"));
    ran
}

/// Values of the demo's PII columns, read directly from the warehouse.
pub(crate) fn pii_values(engine: &dyn Engine, schema: &str, dialect: &'static str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (table, column) in [("customers", "email"), ("customers", "phone"), ("customers", "full_name"), ("customers", "password_hash"), ("addresses", "street")] {
        let sql = CompiledSql { sql: format!("SELECT {column} FROM {schema}.{table}"), params: Vec::new(), dialect };
        let r = engine.run(&sql, schemabrain::engine::Limits { max_rows: 1_000_000, ..limits() }).expect("reads PII for the check");
        out.extend(r.rows.iter().filter_map(|row| row.first().and_then(Json::as_str).map(str::to_string)));
    }
    assert!(out.len() > 1000, "PII values read: {}", out.len());
    out
}

fn file_hash(path: &std::path::Path) -> Vec<u8> {
    use sha2::Digest;
    sha2::Sha256::digest(std::fs::read(path).unwrap()).to_vec()
}

#[test]
fn the_corpus_has_no_escape_on_duckdb() {
    let cases = corpus();
    assert!(cases.len() >= 150, "the corpus has {} cases", cases.len());
    let w = demo_warehouse();
    let before = file_hash(w);
    let s = session(demo_project_with_catalog().clone(), &format!("duckdb:{}", w.display()), true);
    let values = pii_values(&demo_engine(), "main", "duckdb");
    let ran = run_corpus("duckdb", &s, "main", &values);
    assert!(ran >= 150, "{ran} cases ran");
    drop(s);
    assert_eq!(file_hash(w), before, "the warehouse file changed");
}

/// A hash of every row of every catalog table on Postgres, by table.
fn table_hashes(pg: &PostgresEngine, catalog: &schemabrain::catalog::Catalog) -> BTreeMap<String, Json> {
    catalog
        .tables
        .keys()
        .map(|t| {
            let sql = CompiledSql { sql: format!("SELECT md5(string_agg(x::text, '|' ORDER BY x::text)) FROM {t} x"), params: Vec::new(), dialect: "postgres" };
            (t.clone(), pg.run(&sql, limits()).unwrap().rows[0][0].clone())
        })
        .collect()
}

#[test]
fn the_corpus_has_no_escape_on_postgres() {
    let Some(schema) = PgSchema::create("provider") else { return };
    let duck = demo_engine();
    let target = engine::export::Target::parse(&schema.url, Some(&schema.name)).unwrap();
    engine::export::export(&duck, "main", &target).expect("export to Postgres");
    let pg = PostgresEngine::connect(&schema.url).expect("connects");
    let catalog = pg.introspect().expect("introspects");
    let before = table_hashes(&pg, &catalog);
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(&schema.name);
    let project = crate::cross_engine::demo_project_in(&schema.name, &dir).with_catalog(catalog.clone()).unwrap_or_else(|d| panic!("{d}"));
    let s = session(project, &schema.url, true);
    let values = pii_values(&pg, &schema.name, "postgres");
    let ran = run_corpus("postgres", &s, &schema.name, &values);
    assert!(ran >= 150, "{ran} cases ran");
    // The table tools build their own statements: they run on Postgres too,
    // and show no PII value.
    let customers = format!("{}.customers", schema.name);
    for (tool, args) in [
        ("sample_table", json!({"qualified_name": customers, "rows": 5})),
        ("get_stats", json!({"qualified_name": customers})),
        ("profile_table", json!({"qualified_name": customers})),
        ("detect_pii", json!({"qualified_name": customers})),
        ("explain_sql", json!({"sql": format!("SELECT segment, count(*) FROM {customers} GROUP BY 1")})),
    ] {
        let env = s.call(tool, &args);
        assert_eq!(env.status().as_str(), "success", "{tool}: {}", serde_json::to_string(&env).unwrap());
        let mut all = Vec::new();
        strings(&serde_json::to_value(&env).unwrap(), &mut all);
        assert!(all.iter().all(|v| !values.contains(v)), "{tool} shows a PII value");
    }
    assert_eq!(table_hashes(&pg, &catalog), before, "a table changed");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Follows page tokens to the end; the rows in order and how many pages.
pub(crate) fn all_pages(s: &Session, client: &str, args: Json) -> (Vec<Vec<Json>>, usize, bool) {
    let mut rows = Vec::new();
    let mut pages = 0;
    let mut byte_capped = false;
    let mut call = args.clone();
    loop {
        let env = s.call_as(client, "query_sql", &call, &schemabrain::engine::Cancel::never());
        let data = env.data().unwrap_or_else(|| panic!("{}", serde_json::to_string(&env).unwrap())).clone();
        pages += 1;
        assert_eq!(data["order"], "stable");
        for r in data["rows"].as_array().unwrap() {
            rows.push(r.as_array().unwrap().clone());
        }
        byte_capped |= data.get("page_bytes_capped") == Some(&json!(true));
        match data.get("page_token").and_then(Json::as_str) {
            Some(t) => {
                assert_eq!(data["has_more"], true);
                call = args.clone();
                call["page_token"] = json!(t);
            }
            None => {
                assert_eq!(data["has_more"], false);
                return (rows, pages, byte_capped);
            }
        }
        assert!(pages < 1000, "paging does not end");
    }
}

pub(crate) fn direct(sql: &str) -> Vec<Vec<Json>> {
    let c = CompiledSql { sql: sql.to_string(), params: Vec::new(), dialect: "duckdb" };
    demo_engine().run(&c, schemabrain::engine::Limits { max_rows: 1_000_000, ..limits() }).unwrap().rows
}

pub(crate) fn as_multiset(rows: &[Vec<Json>]) -> BTreeMap<String, usize> {
    let mut m = BTreeMap::new();
    for r in rows {
        *m.entry(serde_json::to_string(r).unwrap()).or_insert(0) += 1;
    }
    m
}

#[test]
fn paging_returns_every_row_exactly_once() {
    let w = demo_warehouse();
    let s = session(demo_project_with_catalog().clone(), &format!("duckdb:{}", w.display()), true);
    // No ORDER BY, duplicate rows (status alone repeats): every row once.
    let sql = "SELECT status, is_gift FROM main.orders WHERE id <= 2345";
    let (rows, pages, _) = all_pages(&s, "a", json!({"sql": sql, "page_size": 1000}));
    assert_eq!(pages, 3);
    assert_eq!(as_multiset(&rows), as_multiset(&direct(sql)));
    // The statement's own order, with ties, is kept across pages.
    let sql = "SELECT id, amount FROM main.orders WHERE id <= 1000 ORDER BY amount DESC";
    let (rows, pages, _) = all_pages(&s, "a", json!({"sql": sql, "page_size": 70}));
    assert_eq!(pages, 15);
    assert_eq!(as_multiset(&rows), as_multiset(&direct(sql)));
    let amounts: Vec<f64> = rows.iter().map(|r| r[1].as_f64().or_else(|| r[1].as_str().and_then(|s| s.parse().ok())).unwrap()).collect();
    assert!(amounts.windows(2).all(|p| p[0] >= p[1]), "pages break the statement's order");
    // Wide rows: the byte cap cuts pages before the row cap.
    let sql = "SELECT id, repeat('x', 900) AS pad FROM main.orders WHERE id <= 300";
    let (rows, pages, capped) = all_pages(&s, "a", json!({"sql": sql, "page_size": 1000}));
    assert!(capped && pages >= 4, "{pages} pages, capped {capped}");
    assert_eq!(as_multiset(&rows), as_multiset(&direct(sql)));
}

#[test]
fn page_tokens_are_bound_to_their_statement_and_client() {
    let w = demo_warehouse();
    let s = session(demo_project_with_catalog().clone(), &format!("duckdb:{}", w.display()), true);
    let cancel = schemabrain::engine::Cancel::never();
    let sql = "SELECT id FROM main.orders WHERE id <= 30";
    let first = s.call_as("alice", "query_sql", &json!({"sql": sql, "page_size": 10}), &cancel);
    let token = first.data().unwrap()["page_token"].as_str().unwrap().to_string();
    let refused = |client: &str, args: Json, words: &str| {
        let env = s.call_as(client, "query_sql", &args, &cancel);
        let e = env.tool_error().unwrap_or_else(|| panic!("{args} answered"));
        assert_eq!(e.code().as_str(), "INVALID_INPUT");
        assert!(e.message().contains(words), "{}", e.message());
        // The recovery is the same call without the token.
        assert_eq!(e.recovery().suggested_tool(), Some("query_sql"));
        assert!(!e.recovery().suggested_args().unwrap().contains_key("page_token"));
    };
    refused("mallory", json!({"sql": sql, "page_size": 10, "page_token": token}), "another client");
    refused("alice", json!({"sql": "SELECT id FROM main.orders WHERE id <= 31", "page_size": 10, "page_token": token}), "another statement");
    let mut forged = token.clone();
    forged.replace_range(..2, if token.starts_with("7b") { "7c" } else { "7b" });
    refused("alice", json!({"sql": sql, "page_size": 10, "page_token": forged}), "not issued by this server");
    refused("alice", json!({"sql": sql, "page_token": "not-a-token"}), "not issued by this server");
    // Another server (a restart) does not know the token.
    let other = session(demo_project_with_catalog().clone(), &format!("duckdb:{}", w.display()), true);
    let env = other.call_as("alice", "query_sql", &json!({"sql": sql, "page_size": 10, "page_token": token}), &cancel);
    assert!(env.tool_error().unwrap().message().contains("not issued by this server"));
    // The owner continues.
    let next = s.call_as("alice", "query_sql", &json!({"sql": sql, "page_size": 10, "page_token": token}), &cancel);
    assert_eq!(next.data().unwrap()["offset"], 10);
}

#[test]
fn the_provider_tools_are_offered_only_when_asked_for() {
    let w = demo_warehouse();
    let off = session(demo_project_with_catalog().clone(), &format!("duckdb:{}", w.display()), false);
    let env = off.call("query_sql", &json!({"sql": "SELECT 1"}));
    let e = env.tool_error().expect("refused without the toolset");
    assert!(e.message().contains("--toolsets"), "{}", e.message());
    assert_eq!(e.recovery().suggested_tool(), Some("list_metrics"));
    assert_eq!(Toolsets::parse("semantic").unwrap(), Toolsets::default());
    assert!(Toolsets::parse("semantic,provider").unwrap().provider && Toolsets::parse("all").unwrap().provider);
    assert!(Toolsets::parse("everything").unwrap_err().contains("semantic, provider, all"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_provider_toolset_over_mcp_in_both_eras() {
    let w = demo_warehouse();
    let source = format!("duckdb:{}", w.display());
    for era in crate::mcp::ERAS {
        let shared = Arc::new(session(demo_project_with_catalog().clone(), &source, true));
        let client = crate::mcp::connect(shared, era).await;
        let tools = client.list_all_tools().await.expect("tools/list");
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_ref()).collect();
        for t in ["list_schemas", "list_tables", "get_table_schema", "query_sql", "explain_sql", "sample_table", "get_stats", "profile_table", "detect_pii", "get_metric"] {
            assert!(names.contains(&t), "{era:?}: {t} not listed in {names:?}");
        }
        let query_sql = tools.iter().find(|t| t.name == "query_sql").unwrap();
        assert_eq!(query_sql.annotations.as_ref().and_then(|a| a.read_only_hint), Some(true));
        let schemas = crate::mcp::call(&client, &tools, "list_schemas", json!({})).await;
        assert_eq!(schemas["data"]["items"][0]["name"], "main");
        let tables = crate::mcp::call(&client, &tools, "list_tables", json!({"schema": "main"})).await;
        assert_eq!(tables["data"]["count"], 9);
        let schema = crate::mcp::call(&client, &tools, "get_table_schema", json!({"qualified_name": "main.customers"})).await;
        assert!(schema["data"]["columns"].as_array().unwrap().iter().any(|c| c["redacted"] == true));
        let answer = crate::mcp::call(&client, &tools, "query_sql", json!({"sql": "SELECT segment, count(*) AS n FROM main.customers GROUP BY 1 ORDER BY 1"})).await;
        assert_eq!(answer["status"], "success");
        let direct = direct("SELECT segment, count(*) AS n FROM main.customers GROUP BY 1 ORDER BY 1");
        assert_eq!(answer["data"]["rows"].as_array().unwrap().len(), direct.len());
        let refused = crate::mcp::call(&client, &tools, "query_sql", json!({"sql": "SELECT email FROM main.customers"})).await;
        assert_eq!(refused["status"], "refused");
        assert_eq!(refused["error"]["pii_categories"], json!(["contact"]));
        let dry = crate::mcp::call(&client, &tools, "query_sql", json!({"sql": "SELECT count(*) FROM main.orders", "dry_run": true})).await;
        assert_eq!(dry["data"]["tables_read"], json!(["main.orders"]));
        assert_eq!(dry["next_action"]["tool"], "query_sql");
        for (tool, args) in [
            ("sample_table", json!({"qualified_name": "main.orders", "rows": 3})),
            ("get_stats", json!({"qualified_name": "main.regions"})),
            ("profile_table", json!({"qualified_name": "main.regions"})),
            ("detect_pii", json!({"qualified_name": "main.stores", "sample_rows": 10})),
            ("explain_sql", json!({"sql": "SELECT count(*) FROM main.orders"})),
        ] {
            let answer = crate::mcp::call(&client, &tools, tool, args).await;
            assert_eq!(answer["status"], "success", "{tool}: {answer}");
        }
        client.cancel().await.ok();
    }
}

/// Every string anywhere in a JSON value.
pub(crate) fn strings(v: &Json, out: &mut Vec<String>) {
    match v {
        Json::String(s) => out.push(s.clone()),
        Json::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Json::Object(m) => m.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

pub(crate) fn number(v: &Json) -> f64 {
    v.as_f64().or_else(|| v.as_str().and_then(|s| s.parse().ok())).unwrap_or_else(|| panic!("not a number: {v}"))
}

#[test]
fn the_table_tools_agree_with_direct_reads_and_show_no_pii() {
    let w = demo_warehouse();
    let s = session(demo_project_with_catalog().clone(), &format!("duckdb:{}", w.display()), true);
    let values = pii_values(&demo_engine(), "main", "duckdb");
    let no_pii = |env: &Envelope| {
        let mut all = Vec::new();
        strings(&serde_json::to_value(env).unwrap(), &mut all);
        for v in all {
            assert!(!values.contains(&v), "a PII value in the answer: {}", serde_json::to_string(env).unwrap());
            assert!(!v.contains("password_hash"), "a catastrophic column named");
        }
    };

    // sample_table: the clean columns of the first rows by key; PII listed as masked.
    let env = s.call("sample_table", &json!({"qualified_name": "main.customers", "rows": 7}));
    no_pii(&env);
    let data = env.data().unwrap();
    let cols: Vec<&str> = data["columns"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(cols, ["id", "country", "segment", "signup_date", "region_id"]);
    let masked: Vec<&str> = data["masked_columns"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap()).collect();
    assert_eq!(masked, ["full_name", "email", "phone", "date_of_birth", "<redacted_column_1>"]);
    let expected = direct("SELECT id, country, segment, signup_date, region_id FROM main.customers ORDER BY id LIMIT 7");
    let got: Vec<Vec<Json>> = data["rows"].as_array().unwrap().iter().map(|r| r.as_array().unwrap().clone()).collect();
    assert_eq!(got, expected);

    // get_stats: counts and bounds equal direct aggregates; blocked columns left out.
    let env = s.call("get_stats", &json!({"qualified_name": "main.orders"}));
    let data = env.data().unwrap();
    let truth = direct("SELECT count(*), count(DISTINCT status), count(store_id), min(amount), max(amount) FROM main.orders");
    assert_eq!(number(&data["row_count"]), number(&truth[0][0]));
    let col = |name: &str| data["columns"].as_array().unwrap().iter().find(|c| c["name"] == name).unwrap().clone();
    assert_eq!(number(&col("status")["distinct_count"]), number(&truth[0][1]));
    let null_fraction = 1.0 - number(&truth[0][2]) / number(&truth[0][0]);
    assert!((number(&col("store_id")["null_fraction"]) - null_fraction).abs() < 1e-9);
    assert_eq!(number(&col("amount")["min"]), number(&truth[0][3]));
    assert_eq!(number(&col("amount")["max"]), number(&truth[0][4]));
    let env = s.call("get_stats", &json!({"qualified_name": "main.customers"}));
    no_pii(&env);
    let data = env.data().unwrap();
    let col = |name: &str| data["columns"].as_array().unwrap().iter().find(|c| c["name"] == name).unwrap().clone();
    assert_eq!(col("email")["redacted"], true);
    assert!(col("email").get("distinct_count").is_none());
    let dob = col("date_of_birth");
    assert_eq!(number(&dob["distinct_count"]), number(&direct("SELECT count(DISTINCT date_of_birth) FROM main.customers")[0][0]));
    assert!(dob.get("min").is_none() && dob.get("max").is_none(), "bounds of a PII column: {dob}");

    // profile_table: top values of small clean columns equal a direct GROUP BY.
    let env = s.call("profile_table", &json!({"qualified_name": "main.orders"}));
    let data = env.data().unwrap();
    let status = data["columns"].as_array().unwrap().iter().find(|c| c["name"] == "status").unwrap();
    let top: Vec<(String, f64)> = status["top_values"].as_array().unwrap().iter().map(|t| (t["value"].as_str().unwrap().to_string(), number(&t["count"]))).collect();
    let truth: Vec<(String, f64)> = direct("SELECT status, count(*) FROM main.orders GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 5").iter().map(|r| (r[0].as_str().unwrap().to_string(), number(&r[1]))).collect();
    assert_eq!(top, truth);
    assert!(data["columns"].as_array().unwrap().iter().find(|c| c["name"] == "id").unwrap().get("top_values").is_none());

    // detect_pii: the value classifier finds the emails; no value comes back.
    let env = s.call("detect_pii", &json!({"qualified_name": "main.customers"}));
    no_pii(&env);
    let data = env.data().unwrap();
    let email = data["columns"].as_array().unwrap().iter().find(|c| c["name"] == "email").unwrap();
    assert_eq!(email["value_match"]["category"], "contact", "{email}");
    assert_eq!(email["policy"]["blocked"], true);
    let segment = data["columns"].as_array().unwrap().iter().find(|c| c["name"] == "segment").unwrap();
    assert_eq!(segment["value_match"], Json::Null);

    // explain_sql: a plan for what query_sql would run; PII refused the same way.
    let env = s.call("explain_sql", &json!({"sql": "SELECT status, count(*) FROM main.orders GROUP BY 1"}));
    assert!(!env.data().unwrap()["plan"].as_array().unwrap().is_empty(), "{}", serde_json::to_string(&env).unwrap());
    let env = s.call("explain_sql", &json!({"sql": "SELECT email FROM main.customers"}));
    assert_eq!(env.status().as_str(), "refused");
    // Unknown tables get the describe_table error and its recovery.
    let env = s.call("sample_table", &json!({"qualified_name": "main.custmers"}));
    assert_eq!(env.tool_error().unwrap().recovery().fuzzy_matches().first().map(String::as_str), Some("main.customers"));
}

fn resource_text(r: &rmcp::model::ReadResourceResult) -> Json {
    match r.contents.first() {
        Some(rmcp::model::ResourceContents::TextResourceContents { text, mime_type, .. }) => {
            assert_eq!(mime_type.as_deref(), Some("application/json"));
            serde_json::from_str(text).expect("resource text is JSON")
        }
        other => panic!("not a text resource: {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_prompts_and_completion_over_mcp_in_both_eras() {
    use rmcp::model::{GetPromptRequestParams, ReadResourceRequestParams};
    let w = demo_warehouse();
    let source = format!("duckdb:{}", w.display());
    let values = pii_values(&demo_engine(), "main", "duckdb");
    for era in crate::mcp::ERAS {
        let shared = Arc::new(session(demo_project_with_catalog().clone(), &source, true));
        let client = crate::mcp::connect(shared, era).await;
        let caps = client.peer_info().map(|i| i.capabilities.clone()).unwrap();
        assert!(caps.resources.is_some() && caps.prompts.is_some() && caps.completions.is_some(), "{era:?}: {caps:?}");

        let listed: Vec<String> = client.list_all_resources().await.unwrap().iter().map(|r| r.uri.clone()).collect();
        assert_eq!(listed, ["res://catalogs", "res://capabilities"]);
        let templates: Vec<String> = client.list_all_resource_templates().await.unwrap().iter().map(|t| t.uri_template.clone()).collect();
        assert_eq!(templates.len(), 5, "{templates:?}");
        let read = |uri: &str| client.read_resource(ReadResourceRequestParams::new(uri));
        let catalogs = resource_text(&read("res://catalogs").await.unwrap());
        assert_eq!(catalogs["catalogs"][0]["name"], "default");
        let caps = resource_text(&read("res://capabilities").await.unwrap());
        assert_eq!(caps["query_sql"]["dialects_accepted"], json!(["duckdb"]));
        // Which dialects ran on their engine here, and which are parse-checked only.
        let executed: Vec<&str> = caps["dialects"]["executed_on_their_engine"].as_array().unwrap().iter().map(|d| d["dialect"].as_str().unwrap()).collect();
        assert_eq!(executed, ["duckdb", "postgres", "mysql", "datafusion", "databricks", "sqlite"]);
        assert_eq!(caps["dialects"]["parse_checked_only"], json!(["snowflake", "bigquery", "trino", "mssql", "ansi"]));
        let tables = resource_text(&read("res://tables/default/main").await.unwrap());
        assert_eq!(tables["count"], 9);
        // The same content reads to the same etag; different content to another.
        let a = resource_text(&read("res://table/default/main/orders").await.unwrap());
        let b = resource_text(&read("res://table/default/main/orders").await.unwrap());
        let c = resource_text(&read("res://table/default/main/customers").await.unwrap());
        assert_eq!(a["etag"], b["etag"]);
        assert_ne!(a["etag"], c["etag"]);
        let samples = resource_text(&read("res://samples/default/main/customers").await.unwrap());
        assert_eq!(samples["rows"].as_array().unwrap().len(), 10);
        let lineage = resource_text(&read("res://lineage/default/main/customers").await.unwrap());
        let referenced_by: Vec<&str> = lineage["referenced_by"].as_array().unwrap().iter().map(|r| r["qualified_name"].as_str().unwrap()).collect();
        assert!(referenced_by.contains(&"main.orders") && referenced_by.contains(&"main.addresses"), "{lineage}");
        assert_eq!(lineage["model"]["entity"], "customer");
        for doc in [&samples, &c, &lineage] {
            let mut all = Vec::new();
            strings(doc, &mut all);
            assert!(all.iter().all(|v| !values.contains(v) && !v.contains("password_hash")), "PII in a resource: {doc}");
        }
        // Unknown resources are errors, never empty contents.
        for bad in ["res://nope", "res://table/other/main/orders", "res://table/default/main/nope", "file:///etc/passwd"] {
            assert!(read(bad).await.is_err(), "{bad} read");
        }

        let prompts: Vec<String> = client.list_all_prompts().await.unwrap().iter().map(|p| p.name.clone()).collect();
        assert_eq!(prompts.len(), 4, "{prompts:?}");
        let get = |name: &str, args: Json| {
            let mut p = GetPromptRequestParams::new(name);
            if let Json::Object(m) = args {
                p = p.with_arguments(m);
            }
            client.get_prompt(p)
        };
        let text = |r: &rmcp::model::GetPromptResult| serde_json::to_value(&r.messages[0].content).unwrap()["text"].as_str().unwrap().to_string();
        let ack = get("ask_for_sensitive_columns_ack", json!({"table": "main.customers"})).await.unwrap();
        let ack = text(&ack);
        assert!(ack.contains("email (contact)") && ack.contains("date_of_birth") && ack.contains("<redacted_column_1>") && !ack.contains("password_hash"), "{ack}");
        let window = text(&get("ask_for_time_window", json!({"metric": "revenue"})).await.unwrap());
        assert!(window.contains("order.ordered_at") && window.contains("month"), "{window}");
        let joins = text(&get("ask_for_missing_keys_or_joins", json!({"tables": "main.orders, main.campaign_spend"})).await.unwrap());
        assert!(joins.contains("campaign_spend"), "{joins}");
        let which = text(&get("ask_for_disambiguation", json!({"question": "sales last month", "options": "revenue|order_count"})).await.unwrap());
        assert!(which.contains("1. revenue") && which.contains("2. order_count"), "{which}");
        assert!(get("ask_for_sensitive_columns_ack", json!({})).await.is_err(), "a missing required argument");
        assert!(get("no_such_prompt", json!({})).await.is_err());

        let tables = client.complete_prompt_simple("ask_for_sensitive_columns_ack", "table", "main.cu").await.unwrap();
        assert_eq!(tables, ["main.customers"]);
        let tables = client.complete_prompt_simple("ask_for_missing_keys_or_joins", "tables", "main.orders, main.re").await.unwrap();
        assert_eq!(tables, ["main.orders, main.regions"]);
        let metrics = client.complete_prompt_simple("ask_for_time_window", "metric", "rev").await.unwrap();
        assert!(metrics.iter().all(|m| m.starts_with("rev")) && metrics.contains(&"revenue".to_string()), "{metrics:?}");
        client.cancel().await.ok();
    }
    // Without the provider toolset there are no resources or prompts.
    let shared = Arc::new(session(demo_project_with_catalog().clone(), &source, false));
    let client = crate::mcp::connect(shared, crate::mcp::Era::Legacy).await;
    let caps = client.peer_info().map(|i| i.capabilities.clone()).unwrap();
    assert!(caps.resources.is_none() && caps.prompts.is_none());
    let names: Vec<String> = client.list_all_tools().await.unwrap().iter().map(|t| t.name.to_string()).collect();
    assert!(!names.contains(&"query_sql".to_string()) && names.len() == 12, "{names:?}");
    client.cancel().await.ok();
}

pub(crate) fn writer(project: schemabrain::project::Project, source: &str, schema: Option<&str>) -> Session {
    let options = SessionOptions {
        source: Some(source.to_string()),
        audit: false,
        toolsets: Toolsets { provider: true, writes: false },
        allow_writes: schema.map(str::to_string),
        ..SessionOptions::default()
    };
    Session::open(project, options).expect("session opens")
}

/// The write tools on one engine: only into the allowed schema, only
/// checked statements, the rest of the warehouse untouched.
fn exercise_writes(s: &Session, scratch: &str, data_schema: &str, count: &dyn Fn(&str) -> f64) {
    let names: Vec<&str> = s.toolsets().tools().map(|p| p.spec.name).collect();
    assert!(names.contains(&"materialize_sql") && names.contains(&"create_view"), "{names:?}");
    // Published as writes: not read-only, destructive (a replace drops what was there).
    for p in schemabrain::tools::surface::published_writes() {
        let a = schemabrain::mcp::mcp_tool(p).annotations.unwrap();
        assert_eq!((a.read_only_hint, a.destructive_hint), (Some(false), Some(true)), "{}", p.spec.name);
    }
    let by_status = format!("SELECT status, count(*) AS n FROM {data_schema}.orders GROUP BY status");
    let ok = |tool: &str, args: Json| {
        let env = s.call(tool, &args);
        assert_eq!(env.status().as_str(), "success", "{tool} {args}: {}", serde_json::to_string(&env).unwrap());
        env
    };
    let env = ok("materialize_sql", json!({"sql": by_status, "table": "by_status"}));
    assert_eq!(env.data().unwrap()["qualified_name"], format!("{scratch}.by_status"));
    // Readable at once through query_sql (the catalog was refreshed).
    let back = ok("query_sql", json!({"sql": format!("SELECT sum(n) FROM {scratch}.by_status")}));
    let total = count(&format!("SELECT count(*) FROM {data_schema}.orders"));
    assert_eq!(number(&back.data().unwrap()["rows"][0][0]), total);
    ok("materialize_sql", json!({"sql": by_status, "table": format!("{scratch}.by_status"), "mode": "append"}));
    assert_eq!(count(&format!("SELECT sum(n) FROM {scratch}.by_status")), 2.0 * total);
    ok("materialize_sql", json!({"sql": by_status, "table": "by_status", "mode": "replace"}));
    assert_eq!(count(&format!("SELECT sum(n) FROM {scratch}.by_status")), total);
    // Create on an existing table fails, and changes nothing.
    let env = s.call("materialize_sql", &json!({"sql": "SELECT 1 AS x", "table": "by_status"}));
    assert_eq!(env.tool_error().map(|e| e.code().as_str()), Some("QUERY_FAILED"), "{}", serde_json::to_string(&env).unwrap());
    assert_eq!(count(&format!("SELECT sum(n) FROM {scratch}.by_status")), total);
    ok("create_view", json!({"sql": format!("SELECT segment, count(*) AS n FROM {data_schema}.customers GROUP BY segment"), "view": "segments"}));
    let view = ok("query_sql", json!({"sql": format!("SELECT sum(n) FROM {scratch}.segments")}));
    assert_eq!(number(&view.data().unwrap()["rows"][0][0]), count(&format!("SELECT count(*) FROM {data_schema}.customers")));
    // Refused: outside the schema, odd names, PII, anything but a query.
    for (tool, args, code) in [
        ("materialize_sql", json!({"sql": "SELECT 1 AS x", "table": format!("{data_schema}.evil")}), "policy_blocked"),
        ("materialize_sql", json!({"sql": "SELECT 1 AS x", "table": "other.evil"}), "policy_blocked"),
        ("materialize_sql", json!({"sql": "SELECT 1 AS x", "table": format!("{scratch}.a.b")}), "policy_blocked"),
        ("materialize_sql", json!({"sql": "SELECT 1 AS x", "table": "x; DROP TABLE orders"}), "invalid_argument"),
        ("materialize_sql", json!({"sql": "SELECT 1 AS x", "table": "\"orders\""}), "invalid_argument"),
        ("materialize_sql", json!({"sql": "SELECT 1 AS x", "table": "orders--"}), "invalid_argument"),
        ("materialize_sql", json!({"sql": format!("SELECT email FROM {data_schema}.customers"), "table": "leak"}), "pii_blocked"),
        ("materialize_sql", json!({"sql": format!("SELECT * FROM {data_schema}.customers"), "table": "leak"}), "pii_blocked"),
        ("materialize_sql", json!({"sql": format!("DELETE FROM {data_schema}.orders"), "table": "x"}), "policy_blocked"),
        ("materialize_sql", json!({"sql": format!("SELECT 1; DROP TABLE {data_schema}.orders"), "table": "x"}), "invalid_argument"),
        ("create_view", json!({"sql": format!("SELECT phone FROM {data_schema}.customers"), "view": "leak"}), "pii_blocked"),
        ("create_view", json!({"sql": "SELECT 1 AS x", "view": format!("{data_schema}.v")}), "policy_blocked"),
        ("create_view", json!({"sql": "SELECT 1 AS x", "view": "v", "mode": "append"}), "invalid_argument"),
    ] {
        let env = s.call(tool, &args);
        let kind = env.tool_error().map(|e| e.kind().as_str().to_string()).unwrap_or_else(|| env.status().as_str().to_string());
        assert_eq!(kind, code, "{tool} {args}: {}", serde_json::to_string(&env).unwrap());
    }
    let leaked = s.call("query_sql", &json!({"sql": format!("SELECT * FROM {scratch}.leak")}));
    assert_eq!(leaked.tool_error().map(|e| e.code().as_str()), Some("INVALID_INPUT"), "a refused write left a table");
}

#[test]
fn writes_go_only_into_the_allowed_schema_on_duckdb() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("writes-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("warehouse.duckdb");
    std::fs::copy(demo_warehouse(), &db).unwrap();
    let source = format!("duckdb:{}", db.display());
    // Off unless asked for: not listed, and refused if called.
    let off = writer(demo_project_with_catalog().clone(), &source, None);
    assert!(!off.toolsets().tools().any(|p| p.spec.name == "materialize_sql"));
    let env = off.call("materialize_sql", &json!({"sql": "SELECT 1 AS x", "table": "t"}));
    assert_eq!(env.tool_error().unwrap().kind().as_str(), "policy_blocked");
    assert!(env.tool_error().unwrap().message().contains("--allow-writes"));
    drop(off);
    let hashes = |s: &Session| -> Vec<Json> {
        ["orders", "customers", "order_items", "regions"]
            .iter()
            .map(|t| s.call("query_sql", &json!({"sql": format!("SELECT md5(string_agg(CAST(id AS VARCHAR), ',' ORDER BY id)), count(*) FROM main.{t}")})).data().unwrap()["rows"].clone())
            .collect()
    };
    let s = writer(demo_project_with_catalog().clone(), &source, Some("scratch"));
    let before = hashes(&s);
    let count = |sql: &str| -> f64 {
        let env = s.call("query_sql", &json!({"sql": sql}));
        number(&env.data().unwrap_or_else(|| panic!("{sql}: {}", serde_json::to_string(&env).unwrap()))["rows"][0][0])
    };
    exercise_writes(&s, "scratch", "main", &count);
    assert_eq!(hashes(&s), before, "tables outside the allowed schema changed");
    drop(s);
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn writes_go_only_into_the_allowed_schema_on_postgres() {
    let Some(schema) = PgSchema::create("writes") else { return };
    let duck = demo_engine();
    let target = engine::export::Target::parse(&schema.url, Some(&schema.name)).unwrap();
    engine::export::export(&duck, "main", &target).expect("export to Postgres");
    let scratch = format!("{}_scratch", schema.name);
    let pg = PostgresEngine::connect(&schema.url).expect("connects");
    let catalog = pg.introspect().expect("introspects");
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(&schema.name);
    let project = crate::cross_engine::demo_project_in(&schema.name, &dir).with_catalog(catalog.clone()).unwrap_or_else(|d| panic!("{d}"));
    let before = table_hashes(&pg, &catalog);
    let s = writer(project, &schema.url, Some(&scratch));
    let count = |sql: &str| -> f64 {
        let c = CompiledSql { sql: sql.to_string(), params: Vec::new(), dialect: "postgres" };
        number(&pg.run(&c, limits()).unwrap().rows[0][0])
    };
    exercise_writes(&s, &scratch, &schema.name, &count);
    // Reads stay read-only: the pool's sessions refuse a write the guard would miss.
    let ro = CompiledSql { sql: format!("CREATE TABLE \"{scratch}\".sneaky (x int)"), params: Vec::new(), dialect: "postgres" };
    assert!(s.engine().unwrap().run(&ro, limits()).is_err(), "a read session wrote");
    assert_eq!(table_hashes(&pg, &catalog), before, "tables outside the allowed schema changed");
    schema.exec(&format!("DROP SCHEMA IF EXISTS \"{scratch}\" CASCADE"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn time_ranges_go_through_the_tables_time_dimension() {
    let w = demo_warehouse();
    let s = session(demo_project_with_catalog().clone(), &format!("duckdb:{}", w.display()), true);
    let range = json!({"start": "2024-03-01", "end": "2024-04-01 00:00"});
    let env = s.call("get_stats", &json!({"qualified_name": "main.orders", "time_range": range}));
    let data = env.data().unwrap_or_else(|| panic!("{}", serde_json::to_string(&env).unwrap()));
    assert_eq!(data["time_range"]["column"], "ordered_at");
    let truth = direct("SELECT count(*) FROM main.orders WHERE ordered_at >= TIMESTAMP '2024-03-01' AND ordered_at < TIMESTAMP '2024-04-01'");
    assert_eq!(number(&data["row_count"]), number(&truth[0][0]));
    assert!(number(&data["row_count"]) > 0.0);
    // customers: date_of_birth is PII, so its time dimension is signup_date.
    let env = s.call("sample_table", &json!({"qualified_name": "main.customers", "rows": 100, "time_range": {"start": "2023-06-01", "end": "2023-07-01"}}));
    let data = env.data().unwrap_or_else(|| panic!("{}", serde_json::to_string(&env).unwrap()));
    assert_eq!(data["time_range"]["column"], "signup_date");
    let at = data["columns"].as_array().unwrap().iter().position(|c| c["name"] == "signup_date").unwrap();
    let rows = data["rows"].as_array().unwrap();
    assert!(!rows.is_empty());
    assert!(rows.iter().all(|r| r[at].as_str().unwrap().starts_with("2023-06")), "{rows:?}");
    let env = s.call("profile_table", &json!({"qualified_name": "main.orders", "time_range": {"end": "2023-01-01"}}));
    let truth = direct("SELECT count(*) FROM main.orders WHERE ordered_at < TIMESTAMP '2023-01-01'");
    assert_eq!(number(&env.data().unwrap()["row_count"]), number(&truth[0][0]));
    for bad in [
        json!({"start": "2024-01-01'; DROP TABLE main.orders; --"}),
        json!({"start": "yesterday"}),
        json!({"start": "2024-01-01", "column": "date_of_birth"}),
        json!({"start": "2024-01-01", "column": "segment"}),
        json!({}),
    ] {
        let env = s.call("get_stats", &json!({"qualified_name": "main.customers", "time_range": bad}));
        assert_eq!(env.tool_error().map(|e| e.code().as_str()), Some("INVALID_INPUT"), "{bad}: {}", serde_json::to_string(&env).unwrap());
    }
}

#[test]
fn get_metric_pages_every_row_exactly_once() {
    let w = demo_warehouse();
    let s = session(demo_project_with_catalog().clone(), &format!("duckdb:{}", w.display()), false);
    let cancel = schemabrain::engine::Cancel::never();
    let request = json!({"name": "order_count", "group_by": ["store.name"], "time_grain": "month", "response_format": "detailed"});
    let whole = s.call("get_metric", &request);
    let all: Vec<Json> = whole.data().unwrap()["rows"].as_array().unwrap().clone();
    assert!(all.len() > 200, "{} rows", all.len());
    let mut rows = Vec::new();
    let mut args = request.clone();
    args["page_size"] = json!(75);
    let mut pages = 0;
    loop {
        let env = s.call_as("pager", "get_metric", &args, &cancel);
        let data = env.data().unwrap_or_else(|| panic!("{}", serde_json::to_string(&env).unwrap())).clone();
        pages += 1;
        assert!(data["rows"].as_array().unwrap().len() <= 75);
        rows.extend(data["rows"].as_array().unwrap().iter().cloned());
        match data["page"]["page_token"].as_str() {
            Some(t) => {
                assert_eq!(env.next_action().and_then(|n| n.tool.clone()).as_deref(), Some("get_metric"));
                if pages == 1 {
                    // Another client cannot continue it; a changed request cannot either.
                    let mut foreign = args.clone();
                    foreign["page_token"] = json!(t);
                    let e = s.call_as("intruder", "get_metric", &foreign, &cancel);
                    assert!(e.tool_error().unwrap().message().contains("another client"));
                    foreign["group_by"] = json!(["customer.country"]);
                    let e = s.call_as("pager", "get_metric", &foreign, &cancel);
                    assert!(e.tool_error().unwrap().message().contains("another statement"));
                }
                args["page_token"] = json!(t);
            }
            None => break,
        }
    }
    assert_eq!(pages, all.len().div_ceil(75));
    assert_eq!(rows, all, "the pages are not the answer, in order");
}

/// Crash safety of writes (issue 18, item 5): the real server killed
/// (SIGKILL) at random points during a materialize_sql leaves the written
/// table either absent or whole, never torn, and every other table as it
/// was; the audit chain stays verifiable.
#[test]
fn a_server_killed_during_a_write_leaves_the_table_whole_or_absent() {
    use crate::soak::serve_on_a_free_port;
    use std::process::Command;
    use std::time::Duration;
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("write-kill-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    let db = dir.join("warehouse.duckdb");
    std::fs::copy(demo_warehouse(), &db).unwrap();
    let project = crate::mcp_stdio::demo_copy("write-kill");
    let orders = number(&direct("SELECT count(*) FROM main.orders")[0][0]);
    let fingerprint = "SELECT md5(string_agg(CAST(id AS VARCHAR) || ':' || CAST(amount AS VARCHAR), ',' ORDER BY id)) FROM main.orders";
    let expected_fingerprint = direct(fingerprint)[0][0].clone();
    // What the file holds once no server has it open (opening read-write replays the WAL).
    let inspect = || -> (Option<f64>, Json) {
        let e = schemabrain::engine::DuckDbEngine::open_read_write(&db, "duckdb:kill").expect("the file opens after a kill");
        let run = |sql: &str| e.run(&CompiledSql { sql: sql.into(), params: Vec::new(), dialect: "duckdb" }, limits());
        let exists = run("SELECT count(*) FROM information_schema.tables WHERE table_schema = 'scratch' AND table_name = 'big'").unwrap().rows[0][0].as_i64() == Some(1);
        let rows = exists.then(|| number(&run("SELECT count(*) FROM scratch.big").unwrap().rows[0][0]));
        (rows, run(fingerprint).unwrap().rows[0][0].clone())
    };
    let sql = "SELECT o.id, o.status, o.amount, r.range AS copy FROM main.orders o, range(6) r";
    let (mut landed, mut absent) = (0, 0);
    for round in 0..6u64 {
        let mut cmd = Command::new(crate::mcp_stdio::binary());
        cmd.args(["serve", "--project"])
            .arg(&project)
            .args(["--source", &format!("duckdb:{}", db.display()), "--toolsets", "all", "--allow-writes", "scratch"]);
        let (mut server, addr) = serve_on_a_free_port(cmd);
        let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
        rt.block_on(async {
            let call = tokio::spawn(async move {
                let mut c = crate::mcp_http::Conn::open(addr).await;
                crate::mcp_http::modern_call(&mut c, 1, "materialize_sql", json!({"sql": sql, "table": "big", "mode": "replace"})).await
            });
            // A different point of the write each round, the last one not killed.
            if round < 5 {
                tokio::time::sleep(Duration::from_millis(150 + round * 250)).await;
                let _ = server.0.kill();
            }
            let reply = call.await;
            if round == 5 {
                let env = reply.expect("the last write answers").json();
                assert_eq!(env["result"]["structuredContent"]["status"], "success", "{env}");
            }
        });
        // The last round was answered: stop its server the same way.
        let _ = server.0.kill();
        let _ = server.0.wait();
        drop(server);
        let (rows, orders_now) = inspect();
        match rows {
            Some(n) => {
                assert_eq!(n, orders * 6.0, "round {round}: a torn table ({n} rows)");
                landed += 1;
            }
            None => absent += 1,
        }
        assert_eq!(orders_now, expected_fingerprint, "round {round}: main.orders changed");
    }
    assert!(landed >= 1, "the last, unkilled write must leave the table");
    assert!(absent >= 1, "no kill landed before a write committed: the test checked nothing");
    let v = schemabrain::audit::verify(&project).expect("audit readable");
    assert!(v.intact(), "{:?}", v.problems);
    let _ = std::fs::remove_dir_all(&dir);
}
