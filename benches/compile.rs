//! Compile latency: request → resolve → plan → SQL text, no engine.
//! On the demo model, and on synthetic models of 10, 100 and 1,000 entities
//! (a tree of many-to-one joins, each entity with a few columns) where the
//! request is a metric grouped by a column two hops away.
//! Run with `cargo bench`; figures and method go in docs/performance.md.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion};
use schemabrain::model::{load_project_from_files, FileKind};
use schemabrain::project::Project;
use schemabrain::tools::{get_metric, Execution, GetMetricArgs};

fn demo() -> Project {
    Project::open(&Path::new(env!("CARGO_MANIFEST_DIR")).join("semantics/demo")).expect("demo loads")
}

/// `n` entities e0..e{n-1}; e_i joins its parent e_{(i-1)/2} (a binary tree).
fn synthetic(n: usize) -> Project {
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
    files.push((
        FileKind::Metric,
        PathBuf::from("metrics/m.yaml"),
        "version: 1\nname: m\nentity: e3\nmeasure: {agg: sum, column: amount}\ntime_dimension: e3.created_at\ntime_grains: [day, month]\n".into(),
    ));
    let (model, diags) = load_project_from_files(&files);
    assert!(diags.is_empty(), "{diags}");
    Project::from_parts(".".into(), model, None).expect("synthetic project")
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

criterion_group!(benches, bench_compile);
criterion_main!(benches);
