//! Our SQL against SQL written by hand, on TPC-H (issue 34): for every
//! request of `tests/tpch/requests/`, the time of the SQL schemabrain
//! writes over the time of the SQL an expert wrote for it, in the same
//! engine process.
//!
//! The warehouse (`tests/support/tpch_warehouse.rs`) is generated at the
//! scale factor `SCHEMABRAIN_TPCH_SF` (default 1) and cached under the
//! cargo target's tmp dir (DuckDB) and in the Postgres schema
//! `sb_tpch_sf<SF>` (its comment records what it holds; drop it to free
//! the space). Each request is compiled by `schemabrain::tools::get_metric`
//! (a dry run, the project opened with the warehouse's catalog, so keys and
//! types are known); then both queries run once unmeasured (warm), then
//! `SCHEMABRAIN_TPCH_ROUNDS` rounds (default 7), each running both, the
//! order alternating from round to round. A request's figure is the median
//! of its rounds' ratios ours/hand; the summary is their geometric mean and
//! the worst. Both answers are compared on the warm run: a request whose
//! answer differs is reported as wrong and kept out of the summary (the
//! time of a wrong answer means nothing). Then the same on Postgres
//! (`SCHEMABRAIN_TEST_POSTGRES`, default `postgres://postgres@127.0.0.1:5432/test`),
//! skipped with a printed line when the server is unreachable.
//!
//! `SCHEMABRAIN_TPCH_ENGINES` (default `duckdb,postgres`) picks the engines.
//!
//! The output is a markdown table per engine, for `docs/performance.md`.
//!
//! Two ways to run it:
//! - Figures: `cargo bench --profile tpch --bench tpch`. The `tpch` profile
//!   (Cargo.toml) builds DuckDB's C++ optimised; the plain bench profile
//!   builds it at opt-level 0, which slows every query and distorts the
//!   ratios. Its first build compiles DuckDB at -O3 (~30 min on 2 cores).
//!   Measure on an idle machine.
//! - Development: `SCHEMABRAIN_TPCH_SF=0.01 cargo bench --bench tpch`
//!   (seconds; the ratios mean little there) or `cargo check --benches`.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

// The binary's allocator, so these figures are the binary's (src/main.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::Path;
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::Value as Json;

use schemabrain::engine::{DuckDbEngine, Engine, Limits, PostgresEngine};
use schemabrain::project::Project;
use schemabrain::sql::{CompiledSql, Dialect};
use schemabrain::tools::{self, Execution, GetMetricArgs};

#[path = "../tests/support/tpch_warehouse.rs"]
mod warehouse;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    match std::env::var(name) {
        Ok(v) => v.parse().unwrap_or_else(|_| panic!("{name}={v} is not a valid value")),
        Err(_) => default,
    }
}

fn limits() -> Limits {
    Limits { max_rows: 100_000, timeout: Duration::from_secs(3_600) }
}

/// What one request measured.
enum Outcome {
    /// Median times of ours and the hand SQL, and the median ratio.
    Timed { ours: Duration, hand: Duration, ratio: f64 },
    /// get_metric refused or failed: the error.
    NotCompiled(String),
    /// Our answer differs from the hand-written SQL's.
    Wrong(String),
    /// One of the two failed on the engine.
    Failed(String),
}

/// Our SQL for `case` on `dialect`: compiled by get_metric (dry run) and
/// the same plan emitted with its parameters typed (get_metric's JSON
/// parameters lose the difference between a date and a text).
fn compile(project: &Project, case: &warehouse::Case, dialect: &'static Dialect) -> Result<CompiledSql, String> {
    let mut request = case.request.clone();
    request["dialect"] = dialect.name.into();
    let args = GetMetricArgs::deserialize(&request).map_err(|e| e.to_string())?;
    let env = tools::get_metric(project, &args, Execution::DryRun);
    let Some(data) = env.data() else {
        return Err(env.tool_error().map(|e| format!("{}: {}", e.kind().as_str(), e.message())).unwrap_or_else(|| format!("{:?}", env.status())));
    };
    let plan = tools::request_plan(project, &args).map_err(|e| format!("{:?}", e.status()))?;
    let compiled = schemabrain::sql::emit(&plan, dialect).map_err(|e| format!("{e:?}"))?;
    if data["sql"].as_str() != Some(compiled.sql.as_str()) {
        return Err("get_metric's data.sql is not the SQL its plan emits".into());
    }
    Ok(compiled)
}

fn median<T: Copy + PartialOrd>(mut v: Vec<T>) -> T {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn measure(project: &Project, engine: &dyn Engine, case: &warehouse::Case, rounds: usize) -> Outcome {
    let ours = match compile(project, case, engine.dialect()) {
        Ok(sql) => sql,
        Err(e) => return Outcome::NotCompiled(e),
    };
    let hand = CompiledSql { sql: case.sql_for(engine.dialect().name).to_string(), params: Vec::new(), dialect: engine.dialect().name };
    let run = |sql: &CompiledSql| -> Result<(Duration, Vec<Vec<Json>>), String> {
        let started = Instant::now();
        let rows = engine.run(sql, limits()).map_err(|e| e.to_string())?.rows;
        Ok((started.elapsed(), rows))
    };
    // Warm: one unmeasured run each, whose answers are compared.
    let (warm_ours, warm_hand) = match (run(&ours), run(&hand)) {
        (Ok((_, a)), Ok((_, b))) => (a, b),
        (Err(e), _) => return Outcome::Failed(format!("ours: {e}")),
        (_, Err(e)) => return Outcome::Failed(format!("hand: {e}")),
    };
    if !warehouse::same_answer(&warm_ours, &warm_hand, case.ordered) {
        return Outcome::Wrong(format!("{} rows from ours, {} by hand", warm_ours.len(), warm_hand.len()));
    }
    let (mut ours_times, mut hand_times, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let (o, h) = if round % 2 == 0 {
            let o = run(&ours);
            (o, run(&hand))
        } else {
            let h = run(&hand);
            (run(&ours), h)
        };
        let (Ok((o, _)), Ok((h, _))) = (o, h) else { return Outcome::Failed("a timed run failed after the warm run passed".into()) };
        ours_times.push(o);
        hand_times.push(h);
        ratios.push(o.as_secs_f64() / h.as_secs_f64());
    }
    Outcome::Timed { ours: median(ours_times), hand: median(hand_times), ratio: median(ratios) }
}

/// Measures every case on `engine` and prints the markdown table.
fn report(label: &str, project: &Project, engine: &dyn Engine, scale_factor: f64, rounds: usize) {
    let cases = warehouse::cases();
    println!("\n### {label}, TPC-H SF {scale_factor}: {rounds} interleaved rounds, warm\n");
    println!("| request | ours (ms) | hand (ms) | ours / hand |");
    println!("|---|---:|---:|---:|");
    let mut timed: Vec<(String, f64)> = Vec::new();
    for case in &cases {
        let name = case.name.trim_end_matches(".yaml");
        match measure(project, engine, case, rounds) {
            Outcome::Timed { ours, hand, ratio } => {
                println!("| {name} | {:.1} | {:.1} | {ratio:.2}× |", ours.as_secs_f64() * 1e3, hand.as_secs_f64() * 1e3);
                timed.push((name.to_string(), ratio));
            }
            Outcome::NotCompiled(e) => println!("| {name} | not compiled: {e} | | |"),
            Outcome::Wrong(e) => println!("| {name} | **wrong answer**: {e} | | |"),
            Outcome::Failed(e) => println!("| {name} | failed: {e} | | |"),
        }
    }
    let Some((worst_name, worst)) = timed.iter().max_by(|a, b| a.1.total_cmp(&b.1)).cloned() else {
        println!("\nno request was timed");
        return;
    };
    let geomean = (timed.iter().map(|(_, r)| r.ln()).sum::<f64>() / timed.len() as f64).exp();
    println!(
        "\n{label}: geometric mean {geomean:.2}×, worst {worst:.2}× ({worst_name}), over {} of {} requests",
        timed.len(),
        cases.len()
    );
}

fn main() {
    let scale_factor: f64 = env_or("SCHEMABRAIN_TPCH_SF", 1.0);
    let rounds: usize = env_or("SCHEMABRAIN_TPCH_ROUNDS", 7);
    assert!(scale_factor > 0.0 && rounds > 0, "SCHEMABRAIN_TPCH_SF and SCHEMABRAIN_TPCH_ROUNDS must be positive");
    let engines: String = env_or("SCHEMABRAIN_TPCH_ENGINES", "duckdb,postgres".to_string());
    let engines: Vec<&str> = engines.split(',').map(str::trim).collect();
    if let Some(unknown) = engines.iter().find(|e| !matches!(**e, "duckdb" | "postgres")) {
        panic!("SCHEMABRAIN_TPCH_ENGINES names `{unknown}`; the engines are duckdb and postgres");
    }
    let cache = Path::new(env!("CARGO_TARGET_TMPDIR")).join("tpch");

    if engines.contains(&"duckdb") {
        let started = Instant::now();
        let file = warehouse::ensure_duckdb(&cache, scale_factor);
        eprintln!("DuckDB warehouse {} ready in {:.1?}", file.display(), started.elapsed());
        let duck = DuckDbEngine::open_read_only(&file, &format!("duckdb:{}", file.display())).expect("the warehouse opens");
        let declared = Project::open_declared(&Path::new(env!("CARGO_MANIFEST_DIR")).join("semantics/tpch")).unwrap_or_else(|d| panic!("{d}"));
        let project = declared.with_catalog(duck.introspect().expect("introspects")).unwrap_or_else(|d| panic!("{d}"));
        report("DuckDB", &project, &duck, scale_factor, rounds);
    }
    if !engines.contains(&"postgres") {
        return;
    }

    let url = std::env::var("SCHEMABRAIN_TEST_POSTGRES").unwrap_or_else(|_| "postgres://postgres@127.0.0.1:5432/test".to_string());
    let schema = format!("sb_tpch_sf{}", scale_factor.to_string().replace('.', "_"));
    let started = Instant::now();
    match warehouse::ensure_postgres(&url, &schema, scale_factor) {
        Err(e) => println!("\nPostgres (SCHEMABRAIN_TEST_POSTGRES or the default local server): skipped, {e}"),
        Ok(loaded) => {
            eprintln!("Postgres schema {schema} {} in {:.1?}", if loaded { "loaded" } else { "already loaded" }, started.elapsed());
            let pg = PostgresEngine::connect(&warehouse::url_with_search_path(&url, &schema)).expect("connects");
            let dir = std::env::temp_dir().join(format!("schemabrain-bench-tpch-{}", std::process::id()));
            warehouse::write_project_in_schema(&schema, &dir);
            let declared = Project::open_declared(&dir).unwrap_or_else(|d| panic!("{d}"));
            let project = declared.with_catalog(pg.introspect().expect("introspects")).unwrap_or_else(|d| panic!("{d}"));
            report("Postgres", &project, &pg, scale_factor, rounds);
            let _ = std::fs::remove_dir_all(&dir);
        }
    }
}
