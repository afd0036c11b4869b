//! Compile latency: request → resolve → plan → SQL text, no engine.
//! On the demo model, and on synthetic models of 10, 100 and 1,000 entities
//! (a tree of many-to-one joins, each entity with a few columns) where the
//! request is a metric grouped by a column two hops away.
//! `large/*`: issue 16's 1,000-entity × 10,000-metric model, written to
//! disk as a user's project would be (12,000 YAML files) and opened from
//! there; its per-call median and p99 over 2,000 different requests are
//! printed as JSON beside criterion's figures.
//! Run with `cargo bench`; figures and method go in docs/performance.md.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

// The binary's allocator, so these figures are the binary's (src/main.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use schemabrain::model::{load_project_from_files, FileKind};
use schemabrain::project::Project;
use schemabrain::tools::{get_metric, Execution, GetMetricArgs};

fn demo() -> Project {
    Project::open(&Path::new(env!("CARGO_MANIFEST_DIR")).join("semantics/demo")).expect("demo loads")
}

/// `n` entities e0..e{n-1}; e_i joins its parent e_{(i-1)/2} (a binary tree).
fn synthetic(n: usize) -> Project {
    let (model, diags) = load_project_from_files(&synthetic_files(n, 1));
    assert!(diags.is_empty(), "{diags}");
    Project::from_parts(".".into(), model, None).expect("synthetic project")
}

/// The files of a synthetic project: `n` entities in a binary tree of
/// many-to-one joins, and `metrics` metrics m0.. spread over the entities
/// (metric k on entity e_{3 + k mod (n-3)}, so every one is two hops or
/// more from e0), cycling through the aggregations.
fn synthetic_files(n: usize, metrics: usize) -> Vec<(FileKind, PathBuf, String)> {
    let mut files = Vec::new();
    for i in 0..n {
        files.push((
            FileKind::Entity,
            PathBuf::from(format!("entities/e{i}.yaml")),
            format!(
                "version: 1\nname: e{i}\nbinding: {{single_table: main.t{i}}}\nidentity: id\ncolumns: [{{name: id, type: integer}}, {{name: parent_id, type: integer}}, {{name: label, type: varchar}}, {{name: amount, type: \"decimal(12,2)\"}}, {{name: created_at, type: timestamp}}]\n"
            ),
        ));
        if i > 0 {
            let p = (i - 1) / 2;
            files.push((
                FileKind::Join,
                PathBuf::from(format!("joins/j{i}.yaml")),
                format!("version: 1\nname: j{i}\nsource_entity: e{i}\ntarget_entity: e{p}\n\"on\": [{{source: parent_id, target: id}}]\ncardinality: many_to_one\n"),
            ));
        }
    }
    if metrics == 1 {
        files.push((
            FileKind::Metric,
            PathBuf::from("metrics/m.yaml"),
            "version: 1\nname: m\nentity: e3\nmeasure: {agg: sum, column: amount}\ntime_dimension: e3.created_at\ntime_grains: [day, month]\n".into(),
        ));
        return files;
    }
    let measures = ["{agg: sum, column: amount}", "{agg: count, column: id}", "{agg: avg, column: amount}", "{agg: count_distinct, column: parent_id}", "{agg: max, column: amount}"];
    for k in 0..metrics {
        let e = 3 + k % (n - 3);
        let measure = measures[k % measures.len()];
        files.push((
            FileKind::Metric,
            PathBuf::from(format!("metrics/m{k}.yaml")),
            format!("version: 1\nname: m{k}\nentity: e{e}\nmeasure: {measure}\ntime_dimension: e{e}.created_at\ntime_grains: [day, month]\n"),
        ));
    }
    files
}

/// Writes `files` under a fresh directory, as a project on disk.
fn write_project(files: &[(FileKind, PathBuf, String)], tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("schemabrain-bench-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    for (_, path, text) in files {
        let path = dir.join(path);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
    dir
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let i = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[i.min(sorted.len() - 1)]
}

fn micros(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e7).round() / 10.0
}

/// Issue 16's large model: 1,000 entities, 10,000 metrics, opened from disk,
/// and the 2,000 requests timed against it.
struct Large {
    dir: PathBuf,
    project: Project,
    requests: Vec<GetMetricArgs>,
}

impl Large {
    /// Writes the project, opens it, and prints the first load and the
    /// compile median / p99 / max over 2,000 requests × 5 calls.
    fn build() -> Large {
        let (n, metrics) = (1000, 10_000);
        let dir = write_project(&synthetic_files(n, metrics), "large");
        let started = Instant::now();
        let project = Project::open(&dir).expect("the large project loads");
        let first_load = started.elapsed();
        // 2,000 different requests: metric 5k grouped by the label of its
        // entity's grandparent (two many-to-one hops), by month.
        let requests: Vec<GetMetricArgs> = (0..2000)
            .map(|k| {
                let m = k * (metrics / 2000);
                let e = 3 + m % (n - 3);
                let grandparent = ((e - 1) / 2 - 1) / 2;
                GetMetricArgs {
                    group_by: vec![format!("e{grandparent}.label")],
                    time_grain: Some("month".into()),
                    ..GetMetricArgs::metric(&format!("m{m}"))
                }
            })
            .collect();
        let mut samples = Vec::with_capacity(requests.len() * 5);
        for args in &requests {
            assert!(get_metric(&project, args, Execution::DryRun).data().is_some(), "{} must compile", args.name.as_deref().unwrap_or(""));
            for _ in 0..5 {
                let s = Instant::now();
                std::hint::black_box(get_metric(&project, std::hint::black_box(args), Execution::DryRun));
                samples.push(s.elapsed());
            }
        }
        samples.sort();
        println!(
            "large model ({n} entities, {metrics} metrics): {}",
            serde_json::json!({
                "first_load_ms": micros(first_load) / 1000.0,
                "requests": requests.len(),
                "samples": samples.len(),
                "compile_median_us": micros(percentile(&samples, 50.0)),
                "compile_p99_us": micros(percentile(&samples, 99.0)),
                "compile_max_us": micros(percentile(&samples, 100.0)),
            })
        );
        Large { dir, project, requests }
    }
}

impl Drop for Large {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

fn bench_large(c: &mut Criterion) {
    // Built on first use: criterion runs a closure only when its name passes
    // the filter, so `cargo bench --bench compile -- demo/` writes none of
    // the 12,000 files.
    let large: std::cell::OnceCell<Large> = std::cell::OnceCell::new();
    let mut group = c.benchmark_group("large");
    group.sample_size(10);
    group.bench_function("load_project_1000x10000", |b| {
        let l = large.get_or_init(Large::build);
        b.iter(|| Project::open(std::hint::black_box(&l.dir)).expect("loads"))
    });
    group.finish();
    c.bench_function("large/two_hop_grouped_1000x10000", |b| {
        let l = large.get_or_init(Large::build);
        let args = &l.requests[l.requests.len() / 2];
        b.iter(|| get_metric(&l.project, std::hint::black_box(args), Execution::DryRun))
    });
}

fn two_hop_request() -> GetMetricArgs {
    // e3 → e1 → e0: two many-to-one hops.
    GetMetricArgs { group_by: vec!["e0.label".into()], time_grain: Some("month".into()), ..GetMetricArgs::metric("m") }
}

fn bench_compile(c: &mut Criterion) {
    let project = demo();
    let cases = [
        ("demo/ungrouped", GetMetricArgs::metric("order_count")),
        (
            "demo/two_hop_grouped",
            GetMetricArgs {
                group_by: vec!["region.name".into()],
                via: vec!["order_store".into()],
                time_grain: Some("month".into()),
                ..GetMetricArgs::metric("revenue")
            },
        ),
        (
            "demo/fan_out_exact",
            GetMetricArgs { group_by: vec!["product.category".into()], ..GetMetricArgs::metric("order_count") },
        ),
        // Three CTEs and a recursive time spine.
        (
            "demo/cumulative_rolling_grouped",
            GetMetricArgs {
                group_by: vec!["customer.segment".into()],
                time_grain: Some("month".into()),
                ..GetMetricArgs::metric("revenue_rolling_3_months")
            },
        ),
        // Two components (converted and base) joined on their keys.
        (
            "demo/conversion_rate",
            GetMetricArgs {
                group_by: vec!["customer.segment".into()],
                time_grain: Some("quarter".into()),
                ..GetMetricArgs::metric("signup_order_conversion")
            },
        ),
    ];
    for (name, args) in cases {
        let env = get_metric(&project, &args, Execution::DryRun);
        assert!(env.data().is_some(), "{name} must compile");
        c.bench_function(name, |b| b.iter(|| get_metric(&project, std::hint::black_box(&args), Execution::DryRun)));
    }
    let mut group = c.benchmark_group("synthetic/two_hop_grouped");
    for n in [10, 100, 1000] {
        let project = synthetic(n);
        let args = two_hop_request();
        assert!(get_metric(&project, &args, Execution::DryRun).data().is_some());
        group.bench_with_input(BenchmarkId::from_parameter(n), &n, |b, _| {
            b.iter(|| get_metric(&project, std::hint::black_box(&args), Execution::DryRun))
        });
    }
    group.finish();
    c.bench_function("demo/load_project", |b| b.iter(demo));
}

criterion_group!(benches, bench_compile, bench_large);
criterion_main!(benches);
