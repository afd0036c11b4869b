//! The real binary over real stdio: raw JSON-RPC lines (stdout carries
//! nothing else), and the independent Python `mcp` SDK client running the
//! charter's workflows in every protocol mode (tests/mcp_client/).
//!
//! The Python client lives in a venv this test creates (`SCHEMABRAIN_VENV`,
//! default `~/.cache/schemabrain-venv`) with `pip install mcp==2.3.0`. A venv
//! that cannot be created fails the test, unless `SCHEMABRAIN_SKIP_SERVERS=1`
//! asks for skipping (not under `CI=true`): see `common::unavailable`.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common;

const MCP_VERSION: &str = "2.3.0";

/// A fresh copy of the demo project (its audit log and snapshot are the test's own).
pub fn demo_copy(tag: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("mcp-{tag}-{}", uuid::Uuid::new_v4().simple()));
    common::copy_project(&common::repo("semantics/demo"), &dir);
    dir
}

/// A private copy of the binary, taken once: clones that share one
/// CARGO_TARGET_DIR overwrite `target/debug/schemabrain` with their own
/// build, and a test must not run another branch's binary halfway through.
pub fn binary() -> &'static Path {
    static B: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    B.get_or_init(|| {
        let copy = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("schemabrain-{}", std::process::id()));
        std::fs::copy(env!("CARGO_BIN_EXE_schemabrain"), &copy).expect("copy the binary");
        let help = Command::new(&copy).args(["serve", "--help"]).output().expect("binary runs");
        assert!(
            help.status.success(),
            "{} has no `serve`: another clone sharing CARGO_TARGET_DIR rebuilt it; re-run the tests",
            env!("CARGO_BIN_EXE_schemabrain")
        );
        copy
    })
}

pub fn source() -> String {
    format!("duckdb:{}", common::demo_warehouse().display())
}

/// Runs a command to completion within `limit`, killing it past that.
pub fn run_bounded(cmd: &mut Command, limit: Duration) -> (bool, String, String) {
    let child = cmd.stdout(Stdio::piped()).stderr(Stdio::piped()).spawn().expect("spawns");
    let id = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(Ok(out)) => (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into()),
        Ok(Err(e)) => (false, String::new(), e.to_string()),
        Err(_) => {
            // SAFETY-free kill of the child we spawned, by its pid.
            let _ = Command::new("kill").arg("-9").arg(id.to_string()).status();
            (false, String::new(), format!("timed out after {limit:?}"))
        }
    }
}

#[test]
fn stdout_carries_only_json_rpc_and_logs_go_to_stderr() {
    let project = demo_copy("raw");
    let lines = [
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"get_metric","arguments":{"name":"revenue","group_by":["customer.country"],"limit":3}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"nope","arguments":{}}}"#,
    ];
    let mut child = Command::new(binary())
        .args(["serve", "--project"])
        .arg(&project)
        .args(["--source", &source()])
        .env("SCHEMABRAIN_LOG", "debug")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("serve starts");
    {
        let mut stdin = child.stdin.take().expect("stdin");
        for l in lines {
            writeln!(stdin, "{l}").expect("write");
        }
        stdin.flush().expect("flush");
        // Give the server time to answer before EOF ends the session.
        std::thread::sleep(Duration::from_secs(3));
    }
    let start = Instant::now();
    let out = child.wait_with_output().expect("exits on EOF");
    assert!(start.elapsed() < Duration::from_secs(20), "exits promptly on EOF");
    let stdout = String::from_utf8(out.stdout).expect("utf-8");
    let mut ids = Vec::new();
    for line in stdout.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("non-JSON on stdout ({e}): {line}"));
        assert_eq!(v["jsonrpc"], "2.0", "{line}");
        ids.push(v["id"].as_i64().expect("responses only"));
    }
    ids.sort();
    assert_eq!(ids, vec![1, 2, 3, 4], "every request answered, nothing else\nstderr: {}", String::from_utf8_lossy(&out.stderr));
    assert!(!out.stderr.is_empty(), "logs went to stderr");
    let v = schemabrain::audit::verify(&project).expect("audit readable");
    assert!(v.intact(), "{:?}", v.problems);
    assert_eq!(v.records, 2, "one record per tool call, the unknown tool included");
}

/// The venv's python, creating the venv when needed; `Err` says why not.
pub fn python_with_mcp() -> Result<PathBuf, String> {
    let venv = std::env::var_os("SCHEMABRAIN_VENV")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache/schemabrain-venv")))
        .ok_or("no HOME and no SCHEMABRAIN_VENV")?;
    let python = venv.join("bin/python");
    let has_mcp = |p: &Path| {
        Command::new(p)
            .args(["-c", &format!("import importlib.metadata as m, sys; sys.exit(m.version('mcp') != '{MCP_VERSION}')")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    if python.is_file() && has_mcp(&python) {
        return Ok(python);
    }
    let (ok, _, err) = run_bounded(Command::new("python3").args(["-m", "venv"]).arg(&venv), Duration::from_secs(120));
    if !ok {
        return Err(format!("python3 -m venv failed: {err}"));
    }
    let (ok, _, err) = run_bounded(
        Command::new(venv.join("bin/pip")).args(["install", "--quiet", &format!("mcp=={MCP_VERSION}")]),
        Duration::from_secs(600),
    );
    if !ok || !has_mcp(&python) {
        return Err(format!("pip install mcp=={MCP_VERSION} failed: {err}"));
    }
    Ok(python)
}

#[test]
fn python_mcp_sdk_runs_the_charter_workflows_over_stdio_in_every_mode() {
    let python = match python_with_mcp() {
        Ok(p) => p,
        Err(why) => {
            common::unavailable::<()>("the Python mcp client", &why);
            return;
        }
    };
    let project = demo_copy("python");
    // The provider toolset writes (--allow-writes scratch) into a copy of its own.
    let writable = project.join("writable.duckdb");
    std::fs::copy(common::demo_warehouse(), &writable).unwrap();
    // query_plan's input: the Substrait plan of a SELECT, from DataFusion's producer.
    let catalog = common::demo_project_with_catalog().catalog.clone().unwrap();
    let plan = schemabrain::engine::substrait::sql_to_plan("SELECT status, count(*) AS n FROM main.orders GROUP BY status ORDER BY status", &catalog).unwrap();
    std::fs::write(project.join("plan.json"), serde_json::to_string(&plan).unwrap()).unwrap();
    let (ok, stdout, stderr) = run_bounded(
        Command::new(&python)
            .arg(common::repo("tests/mcp_client/workflows.py"))
            .arg(binary())
            .arg(&project)
            .arg(source())
            .arg(format!("duckdb:{}", writable.display())),
        Duration::from_secs(300),
    );
    assert!(ok && stdout.contains("ALL OK"), "python client failed\nstdout:\n{stdout}\nstderr:\n{stderr}");
    for mode in ["\"legacy\"", "\"2026-07-28\"", "\"auto\""] {
        assert!(stdout.contains(&format!("\"mode\": {mode}")), "{mode} ran: {stdout}");
    }
    // Every call of the three sessions, all in one chain.
    let calls: u64 = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter_map(|v| v["calls"].as_u64())
        .sum();
    assert!(calls >= 3 * 19, "{stdout}");
    // The provider toolset (`serve --toolsets all`) ran in every mode too.
    assert_eq!(stdout.matches("\"toolsets\": \"all\"").count(), 3, "{stdout}");
    let v = schemabrain::audit::verify(&project).expect("audit readable");
    assert!(v.intact(), "{:?}", v.problems);
    // Reads that are not tool calls are audited too: per mode the client
    // reads 4 resources, gets 1 prompt and asks 1 completion.
    let log = std::fs::read_to_string(project.join(schemabrain::audit::LOG_PATH)).expect("log");
    let count = |method: &str| log.lines().filter_map(|l| serde_json::from_str::<schemabrain::audit::Record>(l).ok()).filter(|r| r.tool == method).count() as u64;
    let (resources, prompts, completions) = (count("resources/read"), count("prompts/get"), count("completion/complete"));
    assert_eq!((resources, prompts, completions), (3 * 4, 3, 3));
    assert_eq!(v.records, calls + resources + prompts + completions);
}

#[test]
fn serve_help_shows_the_client_setup() {
    let out = Command::new(binary()).args(["serve", "--help"]).output().expect("runs");
    assert!(out.status.success());
    let help = String::from_utf8_lossy(&out.stdout);
    for client in ["Claude Desktop", "Claude Code", "Cursor", "VS Code", "claude mcp add", "/mcp", "--http"] {
        assert!(help.contains(client), "serve --help mentions {client}");
    }
    let docs = std::fs::read_to_string(common::repo("docs/mcp.md")).expect("docs/mcp.md");
    for client in ["Claude Desktop", "Claude Code", "Cursor", "VS Code"] {
        assert!(docs.contains(client), "docs/mcp.md shows {client}");
    }
}
