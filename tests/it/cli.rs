//! The binary as a user runs it: exit codes 0/1/2, `--json` prints exactly
//! one JSON document (a valid envelope) in every case, results on stdout.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use schemabrain::envelope::{Envelope, Status};

use crate::common::{demo_warehouse, entries, repo};

fn run(args: &[&str], cwd: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schemabrain")).args(args).current_dir(cwd).output().expect("binary runs")
}

fn envelope_of(out: &Output) -> Envelope {
    let stdout = String::from_utf8_lossy(&out.stdout);
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("stdout is not one envelope ({e}):\n{stdout}\nstderr:\n{}", String::from_utf8_lossy(&out.stderr)))
}

/// A scratch copy of the demo model (no warehouse), so tests that write a
/// catalog snapshot never touch the clone.
fn scratch_demo(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&dir);
    schemabrain::demo::materialize(&dir).expect("materialize");
    dir
}

#[test]
fn compile_prints_sql_for_a_metric_file() {
    let out = run(&["compile", "semantics/demo/metrics/revenue.yaml", "--project", "semantics/demo", "--group-by", "customer.country", "--grain", "month", "--filter", "order.amount >= 10"], &repo(""));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.starts_with("SELECT"), "{stdout}");
    assert!(stdout.contains("date_trunc('month', \"order\".\"ordered_at\")"), "{stdout}");
    assert!(stdout.contains("\"order\".\"amount\" >= $2"), "{stdout}");
    assert!(stdout.contains("-- $1 = \"cancelled\"") && stdout.contains("-- $2 = 10.0"), "{stdout}");
}

#[test]
fn compile_a_new_metric_file_from_outside_the_project() {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("outside-metric");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("big_orders.yaml");
    std::fs::write(&file, "version: 1\nname: big_order_count\nentity: order\nmeasure: {agg: count, column: id}\nfilter:\n  - {column: order.amount, op: gt, value: 500}\n").unwrap();
    let out = run(&["compile", file.to_str().unwrap(), "--project", "semantics/demo", "--json"], &repo(""));
    assert_eq!(out.status.code(), Some(0));
    let env = envelope_of(&out);
    assert_eq!(env.status(), Status::Success);
    let data = env.data().unwrap();
    // count(id), or count(*) once a catalog snapshot (written by any run on
    // the demo source) says the identity is never NULL: the same rows.
    let sql = data["sql"].as_str().unwrap();
    assert!(sql.contains("count(\"order\".\"id\") AS \"big_order_count\"") || sql.contains("count(*) AS \"big_order_count\""), "{sql}");
    assert!(sql.contains("\"order\".\"amount\" > $1"), "{sql}");
    assert!(data.get("rows").is_none(), "compile has no rows");
}

#[test]
fn refused_or_invalid_requests_exit_1_with_one_json_document() {
    let out = run(&["compile", "revenu", "--project", "semantics/demo", "--json"], &repo(""));
    assert_eq!(out.status.code(), Some(1));
    let env = envelope_of(&out);
    assert_eq!(env.tool_error().unwrap().kind().as_str(), "unknown_metric");
    let out = run(&["compile", "revenue", "--project", "semantics/demo", "--filter", "order.status"], &repo(""));
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty(), "nothing on stdout for a usage error");
    assert!(String::from_utf8_lossy(&out.stderr).contains("entity.column OP value"));
}

#[test]
fn operational_failures_exit_2_with_one_json_document() {
    let out = run(&["query", "revenue", "--project", "semantics/demo", "--source", "duckdb:/nonexistent/x.duckdb", "--json"], &repo(""));
    assert_eq!(out.status.code(), Some(2));
    let env = envelope_of(&out);
    // A source that cannot be opened answers as a server without its source:
    // missing_credential, saying why, with the same request as a dry run.
    let err = env.tool_error().unwrap();
    assert_eq!((err.kind().as_str(), err.code().as_str()), ("missing_credential", "UNAUTHORIZED"));
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(json["error"]["message"].as_str().unwrap_or("").contains("/nonexistent/x.duckdb"), "{json}");
    let suggested = &json["error"]["recovery"]["suggested_args"];
    let asked = suggested["names"] == serde_json::json!(["revenue"]) || suggested["name"] == "revenue";
    assert!(asked && suggested["dry_run"] == true, "{json}");
    let bad = entries(&repo("tests/bad_projects"), "").into_iter().find(|p| p.is_dir()).expect("a bad project");
    let out = run(&["compile", "anything", "--project", bad.to_str().unwrap(), "--json"], &repo(""));
    assert_eq!(out.status.code(), Some(2));
    envelope_of(&out);
    let out = run(&["check", "--project", bad.to_str().unwrap()], &repo(""));
    assert_eq!(out.status.code(), Some(2));
    assert!(!out.stderr.is_empty());
}

#[test]
fn query_runs_on_the_warehouse_and_writes_the_catalog_snapshot() {
    let dir = scratch_demo("query-demo");
    let source = format!("duckdb:{}", demo_warehouse().display());
    let out = run(&["query", "order_count", "--project", dir.to_str().unwrap(), "--source", &source, "--group-by", "order.status", "--json"], &repo(""));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let env = envelope_of(&out);
    let data = env.data().unwrap();
    let total: i64 = data["rows"].as_array().unwrap().iter().map(|r| r[1].as_i64().unwrap()).sum();
    assert_eq!(total, 120_000, "every order counted once across statuses");
    let snapshot = dir.join(".schemabrain/catalog.json");
    assert!(snapshot.is_file());
    // compile now type-checks against the snapshot, offline.
    let out = run(&["compile", "order_count", "--project", dir.to_str().unwrap(), "--filter", "order.amount gt abc"], &repo(""));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("decimal(12,2)"));
}

#[test]
fn check_reports_a_clean_demo() {
    let out = run(&["check", "--project", "semantics/demo"], &repo(""));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(String::from_utf8_lossy(&out.stdout).contains("9 entities"));
}

#[test]
fn the_embedded_demo_matches_semantics_demo() {
    let dir = repo("semantics/demo");
    let mut on_disk = Vec::new();
    for sub in ["entities", "joins", "metrics"] {
        for f in entries(&dir.join(sub), ".yaml") {
            on_disk.push(format!("{sub}/{}", f.file_name().unwrap().to_string_lossy()));
        }
    }
    for f in ["pii_policy.yaml", "schemabrain.yaml"] {
        on_disk.push(f.to_string());
    }
    on_disk.sort();
    let mut embedded: Vec<String> = schemabrain::demo::PROJECT_FILES.iter().map(|(p, _)| p.to_string()).collect();
    embedded.sort();
    assert_eq!(embedded, on_disk, "update PROJECT_FILES in src/demo.rs");
    for (rel, text) in schemabrain::demo::PROJECT_FILES {
        assert_eq!(&std::fs::read_to_string(dir.join(rel)).unwrap(), text, "{rel}");
    }
}

#[test]
fn compile_validate_prepares_the_sql_against_the_model_tables() {
    let out = run(&["compile", "revenue", "--project", "semantics/demo", "--group-by", "product.category", "--validate"], &repo(""));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(stderr.contains("validated: DuckDB prepares this SQL"), "{stderr}");
    assert!(stderr.contains("validated: DataFusion plans the datafusion SQL of this request"), "{stderr}");
    // Each engine checks its own dialect's SQL; asked for DataFusion's, DataFusion checks that very SQL.
    let out = run(&["compile", "revenue", "--project", "semantics/demo", "--grain", "week", "--dialect", "datafusion", "--validate", "--json"], &repo(""));
    let env = envelope_of(&out);
    let v = &env.data().expect("validated")["validation"];
    assert_eq!(v["ok"], true, "{v}");
    assert_eq!(v["sql_checked"], true, "{v}");
    let engines: Vec<(&str, &str)> = v["engines"].as_array().unwrap().iter().map(|c| (c["engine"].as_str().unwrap(), c["dialect"].as_str().unwrap())).collect();
    assert_eq!(engines, [("duckdb", "duckdb"), ("datafusion", "datafusion")]);
    // A definition DuckDB cannot bind (a sum of text) is caught before any warehouse sees it.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("validate-metric");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("status_sum.yaml");
    std::fs::write(&file, "version: 1\nname: status_sum\nentity: order\nmeasure: {agg: sum, column: status}\n").unwrap();
    let out = run(&["compile", file.to_str().unwrap(), "--project", "semantics/demo", "--validate", "--json"], &repo(""));
    let env = envelope_of(&out);
    let err = env.tool_error().expect("validation fails");
    assert!(err.message().contains("DuckDB rejects the duckdb SQL"), "{}", err.message());
    assert!(err.message().contains("DataFusion rejects the datafusion SQL"), "{}", err.message());
    // Without --validate it compiles: only the engine knows sum(varchar) is wrong.
    let out = run(&["compile", file.to_str().unwrap(), "--project", "semantics/demo"], &repo(""));
    assert_eq!(out.status.code(), Some(0));
}

#[test]
fn a_project_nested_100000_levels_deep_is_an_error_not_a_crash() {
    // Each used to overflow the stack and abort `schemabrain check` (signal 6).
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("deep-project");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("entities")).unwrap();
    std::fs::create_dir_all(dir.join("metrics")).unwrap();
    std::fs::write(
        dir.join("entities/order.yaml"),
        "version: 1\nname: order\nbinding: {single_table: main.orders}\nidentity: id\ncolumns: [{name: id, type: integer}, {name: amount, type: decimal}]\n",
    )
    .unwrap();
    let n = 100_000;
    let parens = format!("{}amount{}", "(".repeat(n), ")".repeat(n));
    let chain = vec!["amount"; n].join("+");
    let signs = format!("{}amount", "-".repeat(n));
    for (name, expr) in [("parens", parens), ("chain", chain), ("signs", signs)] {
        std::fs::write(dir.join(format!("metrics/{name}.yaml")), format!("version: 1\nname: {name}\nentity: order\nmeasure: {{agg: sum, expression: \"{expr}\"}}\n")).unwrap();
    }
    std::fs::write(dir.join("metrics/brackets.yaml"), format!("version: 1\nname: brackets\nentity: order\nmeasure: {{agg: count, column: id}}\ndescription: {}1{}\n", "[".repeat(n), "]".repeat(n))).unwrap();
    let out = run(&["check", "--project", dir.to_str().unwrap(), "--json"], &repo(""));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(2), "died or misreported: {:?}\n{stdout}", out.status);
    for file in ["parens", "chain", "signs", "brackets"] {
        assert!(stdout.contains(&format!("metrics/{file}.yaml")), "{file} not reported: {}", &stdout[..stdout.len().min(2000)]);
    }
    // Messages quote at most a few hundred characters of the expression.
    assert!(stdout.len() < 20_000, "the report echoes the input: {} bytes", stdout.len());
}

#[test]
fn query_json_prints_exactly_what_get_metric_returns_over_mcp() {
    // The CLI and the MCP server run one Session: same tool, shaping,
    // escalation, so the same request gives the same envelope (its trace id aside).
    let dir = scratch_demo("query-json-vs-mcp");
    let source = format!("duckdb:{}", crate::common::demo_warehouse().display());
    let requests: Vec<(Vec<&str>, serde_json::Value)> = vec![
        (
            vec!["revenue", "--group-by", "customer.country", "--grain", "year", "--order-by", "revenue desc", "--limit", "5"],
            serde_json::json!({"name": "revenue", "group_by": ["customer.country"], "time_grain": "year", "order_by": [{"column": "revenue", "direction": "desc"}], "limit": 5}),
        ),
        (
            vec!["revenue", "--group-by", "region.name"],
            serde_json::json!({"name": "revenue", "group_by": ["region.name"]}),
        ),
        (
            vec!["order_count", "cancellation_rate", "--group-by", "store.name", "--filter", "store.name in Store 1,Store 2", "--response-format", "concise"],
            serde_json::json!({"names": ["order_count", "cancellation_rate"], "group_by": ["store.name"], "filters": [{"column": "store.name", "op": "in", "value": ["Store 1", "Store 2"]}], "response_format": "concise"}),
        ),
    ];
    let rt = tokio::runtime::Runtime::new().unwrap();
    let session = crate::mcp::demo_shared();
    let client = rt.block_on(crate::mcp::connect(session, crate::mcp::Era::Modern));
    let tools = rt.block_on(client.list_all_tools()).expect("tools/list");
    for (flags, mut call) in requests {
        let mut args = vec!["query"];
        args.extend(&flags);
        args.extend(["--project", dir.to_str().unwrap(), "--source", &source, "--json"]);
        let out = run(&args, &repo(""));
        let stdout = String::from_utf8_lossy(&out.stdout);
        let mut cli: serde_json::Value = serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"));
        if call.get("response_format").is_none() {
            call["response_format"] = "detailed".into(); // the CLI's default
        }
        let mut mcp = rt.block_on(crate::mcp::call(&client, &tools, "get_metric", call.clone()));
        // Per-call ids: the trace, and the audit record (the CLI audits, this server does not).
        assert!(cli["fingerprint"].is_string(), "query --json is audited");
        for env in [&mut cli, &mut mcp] {
            env.as_object_mut().unwrap().remove("trace_id");
            env.as_object_mut().unwrap().remove("fingerprint");
        }
        assert_eq!(cli, mcp, "query {flags:?} --json differs from get_metric {call}");
    }
    rt.block_on(client.cancel()).expect("cancel");
}

#[test]
fn argument_errors_with_json_are_one_envelope_too() {
    for args in [
        &["query", "revenue", "--project", "semantics/demo", "--limit", "abc", "--json"][..],
        &["compile", "revenue", "--json", "--no-such-flag"][..],
        &["--json", "query"][..],
    ] {
        let out = run(args, &repo(""));
        assert_eq!(out.status.code(), Some(1), "{args:?}: {}", String::from_utf8_lossy(&out.stderr));
        let env = envelope_of(&out);
        assert_eq!(env.status(), Status::Error, "{args:?}");
        assert!(env.tool_error().unwrap().message().contains("--help"), "{args:?}");
    }
    // Without --json, clap's own message goes to stderr and stdout stays empty.
    let out = run(&["query", "revenue", "--limit", "abc"], &repo(""));
    assert_eq!(out.status.code(), Some(1));
    assert!(out.stdout.is_empty());
    assert!(String::from_utf8_lossy(&out.stderr).contains("abc"));
    // --help is not an error.
    let out = run(&["query", "--help"], &repo(""));
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("--group-by"));
}

#[test]
fn a_closed_stdout_ends_the_output_quietly() {
    use std::process::Stdio;
    for args in [&["audit", "verify", "--project", "semantics/demo"][..], &["compile", "revenue", "--project", "semantics/demo"][..]] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_schemabrain"))
            .args(args)
            .current_dir(repo(""))
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("binary runs");
        // The reader goes away before the first line is written, as `| head -0` would.
        drop(child.stdout.take());
        let out = child.wait_with_output().expect("waits");
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(out.status.code().is_some_and(|c| c <= 2), "{args:?}: {:?} {stderr}", out.status);
    }
}

/// Issue 33 item 8: `query` (detailed, the CLI's default) prints every row
/// up to --limit, however many tokens they are: 10,000 asked, all of the
/// month × store groups returned, as many as SQL written by hand counts.
/// The same call over the agents' surface keeps the token cap.
#[test]
fn query_prints_every_row_up_to_the_limit_beyond_the_agents_token_cap() {
    use schemabrain::engine::{Cancel, Engine};
    let dir = scratch_demo("query-all-rows");
    let source = format!("duckdb:{}", demo_warehouse().display());
    let args = ["query", "cancellation_rate", "--grain", "month", "--group-by", "store.name", "--limit", "10000", "--project", dir.to_str().unwrap(), "--source", &source, "--json"];
    let out = run(&args, &repo(""));
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let env = envelope_of(&out);
    assert_eq!(env.status(), Status::Success);
    let rows = env.data().unwrap()["rows"].as_array().unwrap().len();
    let hand = schemabrain::sql::CompiledSql {
        sql: "SELECT count(*) FROM (SELECT DISTINCT date_trunc('month', o.ordered_at), s.name FROM main.orders o LEFT JOIN main.stores s ON s.id = o.store_id)".into(),
        params: Vec::new(),
        dialect: "duckdb",
    };
    let groups = crate::common::demo_engine().execute(&hand, crate::common::limits(), &Cancel::never()).expect("hand SQL").rows[0][0].as_i64().unwrap();
    assert!(groups > 1_000, "enough groups to pass the token cap: {groups}");
    assert_eq!(rows as i64, groups, "every group printed");
    assert!(env.data().unwrap()["token_estimate"].as_u64().unwrap() > schemabrain::tools::contract::shape::MAX_TOKENS as u64, "over the agents' cap");
    // An agent asking the same gets the cap.
    let engine = crate::common::demo_engine();
    let call = serde_json::json!({"name": "cancellation_rate", "time_grain": "month", "group_by": ["store.name"], "limit": 10000, "response_format": "detailed"});
    let agent = schemabrain::tools::surface::invoke(crate::common::demo_project_with_catalog(), "get_metric", &call, schemabrain::tools::Execution::run(&engine, crate::common::limits()));
    assert_eq!(agent.status(), Status::Partial);
    assert!(agent.data().unwrap()["rows"].as_array().unwrap().len() < rows);
}
