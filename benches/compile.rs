//! Compile latency: request → resolve → plan → SQL text, no engine.
//! Run with `cargo bench`; figures and method go in docs/performance.md.

use std::path::Path;

use criterion::{criterion_group, criterion_main, Criterion};
use schemabrain::project::Project;
use schemabrain::tools::{get_metric, Execution, GetMetricArgs};

fn demo() -> Project {
    Project::open(&Path::new(env!("CARGO_MANIFEST_DIR")).join("semantics/demo")).expect("demo loads")
}

fn bench_compile(c: &mut Criterion) {
    let project = demo();
    let cases = [
        ("demo/ungrouped", GetMetricArgs::metric("order_count")),
        (
            "demo/two_hop_grouped",
            GetMetricArgs {
                name: Some("revenue".into()),
                group_by: vec!["region.name".into()],
                via: vec!["order_store".into()],
                time_grain: Some("month".into()),
                ..Default::default()
            },
        ),
    ];
    for (name, args) in cases {
        let env = get_metric(&project, &args, Execution::DryRun);
        assert!(env.data().is_some(), "{name} must compile");
        c.bench_function(name, |b| b.iter(|| get_metric(&project, std::hint::black_box(&args), Execution::DryRun)));
    }
    c.bench_function("demo/load_project", |b| b.iter(demo));
}

criterion_group!(benches, bench_compile);
criterion_main!(benches);
