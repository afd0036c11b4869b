//! The audit log: every kind of tampering is detected, a torn write is
//! reported and then repaired by the next writer, concurrent writers keep
//! one chain, and a server killed mid-stream leaves a log that either
//! verifies or says exactly why, and can always be appended to.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::json;

use schemabrain::audit::{verify, AuditLog, LOG_PATH};

fn fresh(tag: &str) -> PathBuf {
    let d = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("audit-{tag}-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&d).expect("mkdir");
    d
}

fn write_records(dir: &Path, n: usize) {
    let log = AuditLog::new(dir);
    for i in 0..n {
        let status = if i % 3 == 0 { "error" } else { "success" };
        let kind = (status == "error").then_some("unknown_metric");
        log.append("get_metric", status, kind, &json!({"name": format!("m{i}")}), &format!("trace{i}")).expect("append");
    }
}

fn lines(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join(LOG_PATH)).expect("log").lines().map(str::to_string).collect()
}

fn set_lines(dir: &Path, lines: &[String]) {
    std::fs::write(dir.join(LOG_PATH), lines.iter().map(|l| format!("{l}\n")).collect::<String>()).expect("write");
}

fn problems(dir: &Path) -> Vec<String> {
    verify(dir).expect("readable").problems
}

#[test]
fn an_untouched_log_verifies_and_counts_every_record() {
    let d = fresh("ok");
    write_records(&d, 10);
    let v = verify(&d).unwrap();
    assert!(v.intact(), "{:?}", v.problems);
    assert_eq!(v.records, 10);
    // A second writer (a restarted server) continues the same chain.
    write_records(&d, 5);
    let v = verify(&d).unwrap();
    assert!(v.intact(), "{:?}", v.problems);
    assert_eq!(v.records, 15);
    assert!(!std::fs::read_to_string(d.join(LOG_PATH)).unwrap().contains("m3\""), "argument values are not stored");
}

#[test]
fn edits_deletions_insertions_and_reorders_are_detected() {
    let d = fresh("tamper");
    write_records(&d, 8);
    let orig = lines(&d);

    let mut edited = orig.clone();
    edited[3] = edited[3].replace("\"status\":\"success\"", "\"status\":\"refused\"").replace("\"status\":\"error\"", "\"status\":\"success\"");
    assert_ne!(edited[3], orig[3]);
    set_lines(&d, &edited);
    assert!(problems(&d).iter().any(|p| p.contains("edited")), "{:?}", problems(&d));

    let mut deleted = orig.clone();
    deleted.remove(4);
    set_lines(&d, &deleted);
    assert!(!problems(&d).is_empty(), "a deleted record is detected");

    let mut inserted = orig.clone();
    inserted.insert(2, orig[2].clone());
    set_lines(&d, &inserted);
    assert!(!problems(&d).is_empty(), "an inserted record is detected");

    let mut reordered = orig.clone();
    reordered.swap(5, 6);
    set_lines(&d, &reordered);
    assert!(!problems(&d).is_empty(), "reordered records are detected");

    let mut cut = orig.clone();
    cut.pop();
    set_lines(&d, &cut);
    assert!(problems(&d).iter().any(|p| p.contains("head")), "deleting the last record is detected: {:?}", problems(&d));

    set_lines(&d, &[]);
    assert!(!problems(&d).is_empty(), "emptying the log is detected");

    set_lines(&d, &orig);
    assert!(problems(&d).is_empty(), "the original verifies again");
}

#[test]
fn a_torn_write_is_reported_then_repaired_by_the_next_append() {
    let d = fresh("torn");
    write_records(&d, 4);
    let full = lines(&d);
    // A writer killed mid-write: half a record, no newline, head not moved.
    let mut text = std::fs::read_to_string(d.join(LOG_PATH)).unwrap();
    let half = &full[3][..full[3].len() / 2];
    text.push_str(half);
    std::fs::write(d.join(LOG_PATH), &text).unwrap();
    let v = verify(&d).unwrap();
    assert!(!v.intact() && v.problems.iter().any(|p| p.contains("torn")), "{:?}", v.problems);
    // The next writer cuts the uncommitted bytes and appends.
    write_records(&d, 1);
    let v = verify(&d).unwrap();
    assert!(v.intact(), "{:?}", v.problems);
    assert_eq!(v.records, 5);
}

#[test]
fn cutting_a_committed_record_in_half_stays_detected_after_more_appends() {
    let d = fresh("cut");
    write_records(&d, 4);
    let text = std::fs::read_to_string(d.join(LOG_PATH)).unwrap();
    // Remove the second half of the last (committed) record.
    std::fs::write(d.join(LOG_PATH), &text[..text.len() - 40]).unwrap();
    assert!(!verify(&d).unwrap().intact());
    write_records(&d, 2);
    let v = verify(&d).unwrap();
    assert!(!v.intact(), "tampering is not repaired away");
    assert!(v.records >= 5, "but the log can still be appended to: {}", v.records);
}

#[test]
fn concurrent_writers_keep_one_chain() {
    let d = fresh("concurrent");
    let threads: Vec<_> = (0..4)
        .map(|t| {
            let d = d.clone();
            std::thread::spawn(move || {
                // Each thread is its own writer, as separate server processes are.
                let log = AuditLog::new(&d);
                for i in 0..150 {
                    log.append("list_metrics", "success", None, &json!({"t": t, "i": i}), "x").expect("append");
                }
            })
        })
        .collect();
    for t in threads {
        t.join().expect("writer");
    }
    let v = verify(&d).unwrap();
    assert!(v.intact(), "{:?}", &v.problems[..v.problems.len().min(5)]);
    assert_eq!(v.records, 600);
}

#[test]
fn a_server_killed_mid_stream_leaves_a_log_that_is_honest_and_appendable() {
    let bin = crate::mcp_stdio::binary();
    let project = crate::mcp_stdio::demo_copy("kill");
    for round in 0..4u64 {
        let mut child = Command::new(bin)
            .args(["serve", "--project"])
            .arg(&project)
            .args(["--source", &crate::mcp_stdio::source()])
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("serve");
        {
            use std::io::Write;
            let mut stdin = child.stdin.take().unwrap();
            let _ = writeln!(stdin, r#"{{"jsonrpc":"2.0","id":0,"method":"initialize","params":{{"protocolVersion":"2025-11-25","capabilities":{{}},"clientInfo":{{"name":"k","version":"1"}}}}}}"#);
            let _ = writeln!(stdin, r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#);
            for i in 1..400 {
                let _ = writeln!(stdin, r#"{{"jsonrpc":"2.0","id":{i},"method":"tools/call","params":{{"name":"list_entities","arguments":{{}}}}}}"#);
            }
            let _ = stdin.flush();
            // Kill at a different moment each round, mid-stream.
            std::thread::sleep(Duration::from_millis(150 + 170 * round));
            let _ = child.kill();
            let _ = child.wait();
        }
        let v = verify(&project).expect("readable");
        // Either intact, or torn at the end and saying so; never silently wrong.
        assert!(v.intact() || v.problems.iter().all(|p| p.contains("torn")), "round {round}: {:?}", v.problems);
        let before = v.records;
        AuditLog::new(&project).append("list_entities", "success", None, &json!({}), "after-kill").expect("appendable after a kill");
        let v = verify(&project).unwrap();
        assert!(v.intact(), "round {round}: {:?}", v.problems);
        assert!(v.records > before || before == 0);
    }
}

#[test]
fn audit_verify_command_exit_codes() {
    let d = fresh("cli");
    write_records(&d, 3);
    let run = || Command::new(crate::mcp_stdio::binary()).args(["audit", "verify", "--project"]).arg(&d).output().expect("runs");
    let ok = run();
    assert_eq!(ok.status.code(), Some(0), "{}", String::from_utf8_lossy(&ok.stdout));
    assert!(String::from_utf8_lossy(&ok.stdout).contains("3 records"));
    let mut l = lines(&d);
    l[1] = l[1].replace("get_metric", "list_metrics");
    set_lines(&d, &l);
    let bad = run();
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stdout).contains("edited"));
}

/// Issue 33 item 6: every call that reads data or the model leaves a
/// record: a resource read (samples are rows), a prompt, a completion, and
/// a refusal whose record holds its blocked categories and the recovery
/// the answer gave (its tool, its arguments hashed).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resources_prompts_completions_and_refusals_are_audited() {
    use rmcp::model::{CallToolRequestParams, GetPromptRequestParams, ReadResourceRequestParams};
    use schemabrain::audit::{sha256_hex, Record};
    use schemabrain::tools::{Session, SessionOptions, Toolsets};
    use std::sync::Arc;
    let dir = crate::mcp_stdio::demo_copy("audit-reads");
    let project = schemabrain::project::Project::open(&dir).expect("copy loads");
    let options = SessionOptions {
        source: Some(crate::mcp_stdio::source()),
        audit: true,
        toolsets: Toolsets { provider: true, writes: false },
        ..SessionOptions::default()
    };
    let shared = Arc::new(Session::open(project, options).expect("opens"));
    let client = crate::mcp::connect(shared, crate::mcp::Era::Legacy).await;

    let uri = "res://samples/default/main/customers";
    client.read_resource(ReadResourceRequestParams::new(uri)).await.expect("a sample resource");
    assert!(client.read_resource(ReadResourceRequestParams::new("res://table/default/main/nope")).await.is_err());
    let mut p = GetPromptRequestParams::new("ask_for_time_window");
    if let serde_json::Value::Object(m) = json!({"metric": "revenue"}) {
        p = p.with_arguments(m);
    }
    client.get_prompt(p).await.expect("a prompt");
    client.complete_prompt_simple("ask_for_time_window", "metric", "rev").await.expect("a completion");
    let refused_args = json!({"name": "customer_count", "group_by": ["customer.email"]});
    let mut call = CallToolRequestParams::new("get_metric");
    if let serde_json::Value::Object(m) = refused_args.clone() {
        call = call.with_arguments(m);
    }
    let refused = client.call_tool(call).await.expect("a tool result");
    let refused = refused.structured_content.expect("structured");
    assert_eq!(refused["status"], "refused", "{refused}");
    client.cancel().await.ok();

    let v = schemabrain::audit::verify(&dir).expect("audit");
    assert!(v.intact(), "{:?}", v.problems);
    let records: Vec<Record> = std::fs::read_to_string(dir.join(LOG_PATH))
        .expect("log")
        .lines()
        .map(|l| serde_json::from_str(l).expect("a record"))
        .collect();
    let find = |tool: &str, status: &str| records.iter().find(|r| r.tool == tool && r.status == status).unwrap_or_else(|| panic!("no {tool} {status} record in {records:?}"));
    let read = find("resources/read", "success");
    assert_eq!(read.args_sha256, sha256_hex(json!({"uri": uri}).to_string().as_bytes()));
    let missing = find("resources/read", "error");
    assert_eq!(missing.error_kind.as_deref(), Some("unknown_name"));
    find("prompts/get", "success");
    find("completion/complete", "success");
    let refusal = find("get_metric", "refused");
    assert_eq!(refusal.error_kind.as_deref(), Some("pii_blocked"));
    assert_eq!(refusal.args_sha256, sha256_hex(refused_args.to_string().as_bytes()));
    let shown: Vec<String> = serde_json::from_value(refused["error"]["pii_categories"].clone()).expect("categories");
    assert!(!shown.is_empty());
    assert_eq!(refusal.pii_categories, shown, "the record holds the refusal's categories");
    let recovery = refusal.recovery.as_ref().expect("the recovery given");
    assert_eq!(recovery.suggested_tool.as_deref(), refused["error"]["recovery"]["suggested_tool"].as_str());
    let given = &refused["error"]["recovery"]["suggested_args"];
    assert_eq!(recovery.suggested_args_sha256.clone(), (!given.is_null()).then(|| sha256_hex(given.to_string().as_bytes())));
    // No value of the request is stored: the e-mail column's name is in the hash only.
    assert!(!std::fs::read_to_string(dir.join(LOG_PATH)).unwrap().contains("customer.email"));
}
