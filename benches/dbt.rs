//! Compile latency on the dbt oracle corpus (issue 12), beside
//! MetricFlow's own figures on the same requests (`tests/dbt/metricflow_timings.json`,
//! recorded by `tests/dbt/time_explain.py`).
//!
//! The dbt_shop manifest is imported (`schemabrain import dbt`), the warehouse rebuilt from
//! the seeds (as `tests/it/dbt_import.rs` does) and introspected once, so
//! compiling sees the same catalog a user's project would. Then:
//! - in process, as MetricFlow's script measures `explain()`: per case one
//!   cold and 20 warm `get_metric` dry runs (arguments parsed, dbt names
//!   and where strings read, resolved, planned, SQL rendered), pooled over
//!   the answered cases into a median and a p99, printed as JSON;
//! - criterion: the whole answered corpus compiled once per iteration;
//! - whole process: the five `mf query --explain` commands MetricFlow's
//!   script timed, run as `schemabrain compile` with the same arguments
//!   (5 runs each, median), the binary as this bench profile builds it.
//!
//! Run with `cargo bench --bench dbt`; figures go in docs/performance.md.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

// The binary's allocator, so these figures are the binary's (src/main.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, Criterion};
use serde_json::{json, Value as Json};

use schemabrain::project::Project;
use schemabrain::tools::{self, Execution, GetMetricArgs, Introspect, Session, SessionOptions};

fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn yaml(path: &Path) -> Json {
    let text = std::fs::read_to_string(path).unwrap();
    schemabrain::model::yaml_documents_as_json(&text).unwrap().into_iter().next().unwrap()
}

#[path = "../tests/support/dbt_shop_warehouse.rs"]
mod warehouse;

/// The imported project, introspected on the warehouse (its snapshot written).
fn imported() -> (PathBuf, Project) {
    let dir = std::env::temp_dir().join(format!("schemabrain-bench-dbt-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    // Imported as a user imports it (the settings file with the time spine included).
    let project_dir = dir.join("project");
    let manifest = repo("tests/fixtures/dbt_shop_target/semantic_manifest.json");
    let import = std::process::Command::new(env!("CARGO_BIN_EXE_schemabrain"))
        .args(["import", "dbt", manifest.to_str().unwrap(), "--out", project_dir.to_str().unwrap(), "--json"])
        .output()
        .unwrap();
    // Exit 1 lists what is not mapped (the spine's custom granularity); the rest is written.
    assert!(matches!(import.status.code(), Some(0 | 1)), "{}", String::from_utf8_lossy(&import.stdout));
    let db = dir.join("dbt_shop.duckdb");
    warehouse::create(&db);
    let options = SessionOptions {
        source: Some(format!("duckdb:{}", db.display())),
        audit: false,
        introspect: Introspect::Always,
        require_engine: true,
        ..SessionOptions::default()
    };
    let session = Session::open(Project::open(&project_dir).unwrap(), options).expect("the imported project opens");
    (project_dir, (*session.project()).clone())
}

/// A case as get_metric arguments, in MetricFlow's names (as the oracle test sends it).
fn request(case: &Json) -> Option<Json> {
    let strings = |key: &str| -> Vec<String> { case[key].as_array().cloned().unwrap_or_default().iter().filter_map(|v| v.as_str().map(str::to_string)).collect() };
    let mut args = match case.get("saved_query") {
        Some(saved) => json!({"query": saved}),
        None => {
            let metrics = strings("metrics");
            let order_by: Vec<Json> = strings("order_by")
                .iter()
                .map(|o| match o.strip_prefix('-') {
                    Some(n) => json!({"column": n, "direction": "desc"}),
                    None => json!({"column": o}),
                })
                .collect();
            let mut args = json!({"names": metrics, "group_by": strings("group_by")});
            if !order_by.is_empty() {
                args["order_by"] = json!(order_by);
            }
            args
        }
    };
    if !strings("where").is_empty() {
        args["where"] = json!(strings("where"));
    }
    args["limit"] = case.get("limit").cloned().unwrap_or(json!(10000));
    args["dry_run"] = json!(true);
    Some(args)
}

fn compile(project: &Project, args: &Json) -> bool {
    tools::call(project, "get_metric", args, Execution::DryRun).data().is_some()
}

/// What MetricFlow's `explain()` returns, and no more: the arguments read,
/// the request resolved and planned, its DuckDB SQL rendered. No envelope,
/// no trust metadata, no next action (the agent's answer, timed above).
fn compile_sql(project: &Project, args: &Json) -> bool {
    use serde::Deserialize;
    let Ok(parsed) = GetMetricArgs::deserialize(args) else { return false };
    let Ok(plan) = tools::request_plan(project, &parsed) else { return false };
    schemabrain::sql::emit(&plan, schemabrain::sql::Dialect::duckdb()).is_ok()
}

/// Timed calls pooled over the cases answered, samples sorted.
struct Pooled {
    cold: Vec<Duration>,
    warm: Vec<Duration>,
    answered: Vec<(String, Json)>,
}

/// Per case one cold and 20 warm calls of `f`, as MetricFlow's script times
/// `explain()`, pooled over the cases `f` answers.
fn pooled(cases: &[(String, Json)], mut f: impl FnMut(&Json) -> bool) -> Pooled {
    let mut p = Pooled { cold: Vec::new(), warm: Vec::new(), answered: Vec::new() };
    for (name, args) in cases {
        let mut samples = Vec::new();
        let mut ok = false;
        for _ in 0..21 {
            let s = Instant::now();
            ok = f(std::hint::black_box(args));
            samples.push(s.elapsed());
        }
        if ok {
            p.cold.push(samples[0]);
            p.warm.extend_from_slice(&samples[1..]);
            p.answered.push((name.clone(), args.clone()));
        }
    }
    p.cold.sort();
    p.warm.sort();
    p
}

impl Pooled {
    fn summary(&self, of_cases: usize) -> Json {
        json!({
            "answered_cases": self.answered.len(),
            "of_cases": of_cases,
            "cold_median_ms": ms(percentile(&self.cold, 50.0)),
            "cold_p99_ms": ms(percentile(&self.cold, 99.0)),
            "warm_median_ms": ms(percentile(&self.warm, 50.0)),
            "warm_p99_ms": ms(percentile(&self.warm, 99.0)),
        })
    }
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn bench_dbt(c: &mut Criterion) {
    let (project_dir, project) = imported();
    let mut cases: Vec<(String, Json)> = Vec::new();
    let mut dir: Vec<PathBuf> = std::fs::read_dir(repo("tests/dbt/cases")).unwrap().map(|e| e.unwrap().path()).collect();
    dir.sort();
    for path in dir.iter().filter(|p| p.extension().is_some_and(|e| e == "yaml")) {
        if let Some(args) = request(&yaml(path)) {
            cases.push((path.file_stem().unwrap().to_str().unwrap().to_string(), args));
        }
    }
    // In process, as MetricFlow's script times explain(): the agent's whole
    // answer, then compile only (what explain() returns: the SQL).
    let answer = pooled(&cases, |args| compile(&project, args));
    println!("dbt corpus in process: {}", answer.summary(cases.len()));
    let answered = answer.answered;
    let sql = pooled(&answered, |args| compile_sql(&project, args));
    println!("dbt corpus in process, compile only (request to SQL): {}", sql.summary(answered.len()));

    c.bench_function("dbt/answered_corpus_once", |b| {
        b.iter(|| {
            for (_, args) in &answered {
                compile(&project, std::hint::black_box(args));
            }
        })
    });

    c.bench_function("dbt/answered_corpus_once_compile_only", |b| {
        b.iter(|| {
            for (_, args) in &answered {
                compile_sql(&project, std::hint::black_box(args));
            }
        })
    });

    // Whole process: the commands MetricFlow's script ran as `mf query --explain`.
    let timings: Json = serde_json::from_str(&std::fs::read_to_string(repo("tests/dbt/metricflow_timings.json")).unwrap()).unwrap();
    let mut whole = serde_json::Map::new();
    for (case, t) in timings["whole_process"]["cases"].as_object().unwrap() {
        let mf = t["command"].as_str().unwrap();
        let mut ours: Vec<String> = vec!["compile".into(), "--project".into(), project_dir.display().to_string()];
        let mut words = mf.split_whitespace().skip(2);
        while let Some(w) = words.next() {
            match w {
                "--metrics" => ours.extend(words.next().unwrap().split(',').map(str::to_string)),
                "--group-by" => ours.extend(["--group-by".to_string(), words.next().unwrap().to_string()]),
                "--order" => ours.extend(["--order-by".to_string(), words.next().unwrap().to_string()]),
                _ => {}
            }
        }
        let mut runs = Vec::new();
        for _ in 0..5 {
            let s = Instant::now();
            let out = std::process::Command::new(env!("CARGO_BIN_EXE_schemabrain")).args(&ours).output().unwrap();
            runs.push(s.elapsed());
            assert!(out.status.success(), "{ours:?}: {}", String::from_utf8_lossy(&out.stdout));
        }
        runs.sort();
        let median = ms(runs[2]);
        let theirs = t["median_ms"].as_f64().unwrap();
        whole.insert(case.clone(), json!({"schemabrain compile": ours[3..].join(" "), "median_ms": median, "metricflow_median_ms": theirs, "ratio": (theirs / median).round()}));
    }
    println!("dbt whole process: {}", serde_json::to_string_pretty(&Json::Object(whole)).unwrap());
    if let Some(dir) = project_dir.parent() {
        let _ = std::fs::remove_dir_all(dir);
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = bench_dbt
}
criterion_main!(benches);
