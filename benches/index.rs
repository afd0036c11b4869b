//! Index time (`schemabrain index` minus writing files): introspection,
//! one statistics scan and one sample per table, join checks, inference.
//! On the demo warehouse, and on a synthetic DuckDB schema of 1,000 small
//! tables where table i holds `t{(i-1)/2}_id` pointing at its parent (so
//! 999 joins are found by name and verified on the data).
//! Run with `cargo bench --bench index`; figures go in docs/performance.md.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use schemabrain::engine::{DuckDbEngine, Limits};

const LIMITS: Limits = Limits { max_rows: 1000, timeout: Duration::from_secs(600) };

fn synthetic(n: usize) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("schemabrain-bench-index-{n}"));
    let path = dir.join("synthetic.duckdb");
    if path.exists() {
        return path;
    }
    std::fs::create_dir_all(&dir).unwrap();
    let c = duckdb::Connection::open(&path).unwrap();
    let mut sql = String::new();
    for i in 0..n {
        let parent = if i == 0 { String::new() } else { format!(", t{}_id INTEGER", (i - 1) / 2) };
        sql.push_str(&format!("CREATE TABLE t{i}s (id INTEGER PRIMARY KEY, label VARCHAR, amount DECIMAL(12,2), created_at TIMESTAMP{parent});\n"));
        let parent_value = if i == 0 { String::new() } else { ", (r % 10) + 1".to_string() };
        sql.push_str(&format!(
            "INSERT INTO t{i}s SELECT r, 'x' || r, r * 1.5, TIMESTAMP '2024-01-01' + INTERVAL (r) HOUR{parent_value} FROM range(1, 11) t(r);\n"
        ));
    }
    c.execute_batch(&sql).unwrap();
    path
}

fn bench(c: &mut Criterion) {
    let mut g = c.benchmark_group("index");
    g.sample_size(10);
    let demo_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("bench-demo");
    schemabrain::demo::ensure_warehouse(&demo_dir).expect("demo warehouse");
    let demo = demo_dir.join(schemabrain::demo::WAREHOUSE_FILE);
    let engine = DuckDbEngine::open_read_only(&demo, &format!("duckdb:{}", demo.display())).unwrap();
    g.bench_function("demo", |b| b.iter(|| schemabrain::index::run(&engine, &[], LIMITS, 2026, &mut |_| {}).unwrap()));
    let big = synthetic(1000);
    let engine = DuckDbEngine::open_read_only(&big, &format!("duckdb:{}", big.display())).unwrap();
    g.measurement_time(Duration::from_secs(60));
    g.bench_function("synthetic_1000_tables", |b| {
        b.iter(|| {
            let indexed = schemabrain::index::run(&engine, &[], LIMITS, 2026, &mut |_| {}).unwrap();
            assert_eq!(indexed.draft.joins.len(), 999);
        })
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
