//! A bounded soak of the real server (issue 18, proof): `schemabrain serve
//! --http` as its own process on loopback, driven in rounds by 8 keep-alive
//! connections with a mix an agent sends all day (metadata calls, an
//! executed get_metric, a call that errs, one refused for PII), audit on.
//! Every call must come back as an HTTP 200 with a valid envelope of the
//! expected status (0 errors), and the server's resident memory must stay
//! flat over the second half of the run (its slope): the allocator's per-thread arenas
//! and DuckDB's caches grow for the first few thousand calls (a 16-round
//! run levelled off at round 6 and stayed within 3 MiB to the end), after
//! which growth would be a leak: the slope of RSS over the second half of
//! the rounds is bounded. The
//! figures per round (p50/p99, RSS, peak RSS) are printed and written to
//! `$CARGO_TARGET_TMPDIR/soak.txt` for docs/performance.md.

use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use crate::mcp_http::{modern_call, Conn};
use crate::mcp_stdio;

const ROUNDS: usize = 10;
const CALLS_PER_ROUND: usize = 600;
const CONNS: usize = 8;

/// The calls of the mix, with the status each must answer with.
fn mix(i: usize) -> (&'static str, Json, &'static str) {
    match i % 6 {
        0 => ("describe_entity", json!({"name": "order"}), "success"),
        1 => ("list_metrics", json!({}), "success"),
        2 => ("get_metric", json!({"name": "store_count", "group_by": ["region.name"], "limit": 100}), "success"),
        3 => ("find_relevant_tables", json!({"query": "orders by customer"}), "success"),
        4 => ("get_metric", json!({"name": "no_such_metric"}), "error"),
        _ => ("get_metric", json!({"name": "order_count", "group_by": ["customer.email"]}), "refused"),
    }
}

/// The least-squares slope of `ys` against their round numbers.
fn slope_per_round(ys: &[u64]) -> f64 {
    let n = ys.len() as f64;
    let mean_x = (n - 1.0) / 2.0;
    let mean_y = ys.iter().map(|&y| y as f64).sum::<f64>() / n;
    let (mut num, mut den) = (0.0, 0.0);
    for (x, &y) in ys.iter().enumerate() {
        num += (x as f64 - mean_x) * (y as f64 - mean_y);
        den += (x as f64 - mean_x).powi(2);
    }
    num / den
}

fn report_slope(slope: f64, warm: u64, rss: &[u64]) {
    eprintln!("soak: RSS slope after warm-up {slope:.0} KiB per round (bound {:.0}); RSS per round {rss:?}", warm as f64 / 50.0);
}

#[test]
fn the_slope_of_a_growing_series_is_its_growth() {
    assert!((slope_per_round(&[100, 110, 120, 130]) - 10.0).abs() < 1e-9);
    assert!(slope_per_round(&[100, 90, 110, 100, 100]).abs() < 5.0);
}

/// `VmRSS` and `VmHWM` of a process, in KiB.
fn memory_kib(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status.lines().find_map(|l| l.strip_prefix(name)).and_then(|v| v.split_whitespace().next()).and_then(|n| n.parse().ok()).unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

pub struct Server(pub Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `serve` (the arguments of `cmd`, without `--http`) on a port the
/// kernel picks (`--http 127.0.0.1:0`) and returns it with the address the
/// server says it listens on. No race: a port picked first and bound later
/// may be taken in between by a parallel test (Spark's JVM binds ports at
/// random), and the client would talk to that process instead.
pub fn serve_on_a_free_port(mut cmd: Command) -> (Server, SocketAddr) {
    use std::io::BufRead;
    let mut child = cmd.args(["--http", "127.0.0.1:0"]).stdin(Stdio::null()).stdout(Stdio::null()).stderr(Stdio::piped()).spawn().expect("serve starts");
    let mut lines = std::io::BufReader::new(child.stderr.take().expect("stderr is piped"));
    let mut seen = String::new();
    let addr = loop {
        let mut line = String::new();
        if lines.read_line(&mut line).unwrap_or(0) == 0 {
            let _ = child.kill();
            panic!("serve exited before listening:\n{seen}");
        }
        if let Some(rest) = line.split("listening on http://").nth(1) {
            let addr = rest.split('/').next().unwrap_or_default();
            break addr.parse::<SocketAddr>().unwrap_or_else(|_| panic!("not an address in {line:?}"));
        }
        seen.push_str(&line);
    };
    // The rest of stderr is drained, so the server never blocks writing logs.
    std::thread::spawn(move || std::io::copy(&mut lines, &mut std::io::sink()));
    (Server(child), addr)
}

#[test]
fn soak_rounds_answer_every_call_with_flat_memory() {
    let project = mcp_stdio::demo_copy("soak");
    let mut cmd = Command::new(mcp_stdio::binary());
    cmd.args(["serve", "--project"]).arg(&project).args(["--source", &mcp_stdio::source()]);
    let (server, addr) = serve_on_a_free_port(cmd);
    let pid = server.0.id();
    let rt = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap();
    let mut report = vec![format!(
        "soak: {ROUNDS} rounds x {CALLS_PER_ROUND} tools/call over {CONNS} keep-alive connections to `schemabrain serve --http` (own process, audit on, demo DuckDB; profile {})",
        if cfg!(debug_assertions) { "debug" } else { "release" }
    )];
    let mut rss_after = Vec::new();
    for round in 0..ROUNDS {
        let started = Instant::now();
        let (mut lat, errors) = rt.block_on(async {
            let mut tasks = Vec::new();
            for c in 0..CONNS {
                tasks.push(tokio::spawn(async move {
                    let mut conn = Conn::open(addr).await;
                    let mut lat = Vec::new();
                    let mut errors = Vec::new();
                    let mut i = c;
                    while i < CALLS_PER_ROUND {
                        let (tool, args, want) = mix(i);
                        let t = Instant::now();
                        let reply = modern_call(&mut conn, (round * CALLS_PER_ROUND + i) as u64, tool, args.clone()).await;
                        lat.push(t.elapsed());
                        let status = (reply.status == 200).then(|| reply.json()["result"]["structuredContent"]["status"].clone());
                        if status.as_ref().and_then(|s| s.as_str()) != Some(want) {
                            errors.push(format!("{tool} {args}: HTTP {} {}", reply.status, reply.body.chars().take(300).collect::<String>()));
                        }
                        i += CONNS;
                    }
                    (lat, errors)
                }));
            }
            let mut lat: Vec<Duration> = Vec::new();
            let mut errors: Vec<String> = Vec::new();
            for t in tasks {
                let (l, e) = tokio::time::timeout(Duration::from_secs(600), t).await.expect("round bounded").expect("client task");
                lat.extend(l);
                errors.extend(e);
            }
            (lat, errors)
        });
        assert!(errors.is_empty(), "round {round}: {} of {CALLS_PER_ROUND} calls failed, first: {:?}", errors.len(), errors.first());
        lat.sort();
        let p = |q: f64| lat[((lat.len() as f64 * q) as usize).min(lat.len() - 1)].as_secs_f64() * 1e3;
        let (rss, hwm) = memory_kib(pid);
        rss_after.push(rss);
        report.push(format!(
            "round {}: {:.1} s, {:.0} req/s, p50 {:.2} ms, p99 {:.2} ms, errors 0, RSS {:.1} MiB, peak RSS {:.1} MiB",
            round + 1,
            started.elapsed().as_secs_f64(),
            CALLS_PER_ROUND as f64 / started.elapsed().as_secs_f64(),
            p(0.50),
            p(0.99),
            rss as f64 / 1024.0,
            hwm as f64 / 1024.0
        ));
    }
    let text = report.join("\n");
    eprintln!("{text}");
    let _ = std::fs::write(std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("soak.txt"), &text);
    // Flat: judged by the slope of resident memory over the rounds after
    // warm-up (a least-squares line through them, so one noisy round does
    // not decide): a leak grows it every round, allocator noise does not.
    // At most 2% of the warm RSS per round: a leak of about 3 KiB per call
    // on a 100 MiB server fails.
    let late = &rss_after[ROUNDS / 2..];
    let warm = late[0];
    assert!(warm > 0, "RSS readable from /proc");
    let slope = slope_per_round(late);
    report_slope(slope, warm, &rss_after);
    assert!(slope <= warm as f64 / 50.0, "resident memory grows by {slope:.0} KiB per round after warm-up (KiB per round: {rss_after:?})\n{text}");
    drop(server);
    // Every call was audited in one unbroken chain.
    let v = schemabrain::audit::verify(&project).expect("audit");
    assert!(v.intact(), "{:?}", v.problems);
    assert_eq!(v.records, (ROUNDS * CALLS_PER_ROUND) as u64);
}
