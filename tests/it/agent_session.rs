//! Seed 004 over MCP, as an agent meets it: every answer carries a
//! `next_action`; a failing call's next action is its fix (`must_obey`);
//! repeating the same failing call escalates (autonomy, a broader call) and
//! then trips the circuit breaker (not run, `cost_cap_exceeded`); following
//! the next action recovers. Every answer's `fingerprint` names its audit
//! record, which `schemabrain audit show` prints.

use std::path::Path;
use std::process::Command;
use std::sync::Arc;

use serde_json::{json, Value as Json};

use crate::common;
use crate::mcp::{call, connect, session, Era};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_agent_follows_next_actions_trips_the_breaker_and_recovers() {
    // A scratch copy of the demo with auditing on, so fingerprints are real.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("agent-session");
    let _ = std::fs::remove_dir_all(&dir);
    schemabrain::demo::materialize(&dir).expect("materialize");
    let project = schemabrain::project::Project::open(&dir).unwrap_or_else(|d| panic!("{d}"));
    let w = common::demo_warehouse();
    let shared = Arc::new(session(project, Some(&format!("duckdb:{}", w.display())), true));
    let client = connect(shared, Era::Legacy).await;
    let tools = client.list_all_tools().await.expect("tools/list");

    // An answer: a next action to consider, not to obey.
    let env = call(&client, &tools, "list_metrics", json!({})).await;
    assert_eq!(env["next_action"]["tool"], "get_metric", "{}", env["next_action"]);
    assert_eq!(env["next_action"]["must_obey"], false);
    assert!(env["next_action"]["arguments"]["name"].is_string());

    // The same failing call, again and again.
    let bad = json!({"name": "revenue", "group_by": ["custmer.country"]});
    let mut seen = Vec::new();
    for _ in 0..8 {
        let env = call(&client, &tools, "get_metric", bad.clone()).await;
        seen.push(env);
    }
    let kind = |e: &Json| e["error"]["kind"].as_str().unwrap_or_default().to_string();
    // 1-2: the deterministic fix, to be obeyed, and it is the recovery.
    for e in &seen[..2] {
        assert_eq!(kind(e), "unknown_name");
        assert_eq!(e["next_action"]["must_obey"], true);
        assert_eq!(e["next_action"]["tool"], e["error"]["recovery"]["suggested_tool"]);
        let suggested = match &e["error"]["recovery"]["suggested_args"] {
            Json::Null => json!({}),
            a => a.clone(),
        };
        assert_eq!(e["next_action"]["arguments"], suggested);
    }
    // 3-6: escalated: autonomy and a broader call.
    for e in &seen[2..6] {
        assert_eq!(kind(e), "unknown_name");
        assert_eq!(e["next_action"]["must_obey"], false, "{}", e["next_action"]);
        assert!(e["error"]["message"].as_str().unwrap().contains("do not repeat it"));
    }
    // 7+: the breaker: not run, said so, with a way out.
    for e in &seen[6..] {
        assert_eq!(kind(e), "cost_cap_exceeded", "{e}");
        assert_eq!(e["error"]["code"], "RATE_LIMITED");
        assert!(e["error"]["message"].as_str().unwrap().contains("Circuit open"));
    }
    // Following the breaker's next action answers.
    let next = &seen[7]["next_action"];
    let env = call(&client, &tools, next["tool"].as_str().unwrap(), next["arguments"].clone()).await;
    assert_eq!(env["status"], "success", "{env}");
    // A corrected call answers, and clears nothing else: the broken one stays open.
    let env = call(&client, &tools, "get_metric", json!({"name": "revenue", "group_by": ["customer.country"], "order_by": [{"column": "revenue", "direction": "desc"}], "limit": 3})).await;
    assert_eq!(env["status"], "success", "{env}");
    assert!(env["next_action"]["instruction"].as_str().unwrap().contains("data.rows"));

    // Every answer is fingerprinted with its audit record.
    let fp = env["fingerprint"].as_str().expect("fingerprint").to_string();
    let out = Command::new(env!("CARGO_BIN_EXE_schemabrain")).args(["audit", "show", &fp, "--project"]).arg(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", String::from_utf8_lossy(&out.stderr));
    let rec: Json = serde_json::from_slice(&out.stdout).expect("one JSON record");
    assert_eq!(rec["trace_id"], env["trace_id"]);
    assert_eq!(rec["tool"], "get_metric");
    assert_eq!(rec["hash"], fp.as_str());
    let breaker_fp = seen[7]["fingerprint"].as_str().expect("refused calls are audited too");
    assert_ne!(breaker_fp, fp);
    let out = Command::new(env!("CARGO_BIN_EXE_schemabrain")).args(["audit", "show", "0000", "--project"]).arg(&dir).output().unwrap();
    assert_eq!(out.status.code(), Some(1));
    client.cancel().await.expect("cancel");
}
