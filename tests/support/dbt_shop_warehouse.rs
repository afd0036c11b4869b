//! The dbt_shop fixture's warehouse, built without dbt as
//! tests/fixtures/dbt_shop/README.md says: `main.<model>` for every
//! `raw_<model>` seed, loaded with dbt_project.yml's column types (the time
//! spine seed becomes `main.metricflow_time_spine`). Shared by
//! tests/it/dbt_import.rs and benches/dbt.rs (each includes it by `#[path]`).

use std::path::Path;

use serde_json::Value as Json;

/// Creates the DuckDB database at `path` (which must not exist yet).
pub fn create(path: &Path) {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(repo.join("tests/fixtures/dbt_shop/dbt_project.yml")).unwrap();
    let project = schemabrain::model::yaml_documents_as_json(&text).unwrap().into_iter().next().unwrap();
    // The loader's JSON form of YAML marks each mapping's line as `__line`.
    let entries = |v: &Json| -> Vec<(String, Json)> { v.as_object().unwrap().iter().filter(|(k, _)| !k.starts_with("__")).map(|(k, v)| (k.clone(), v.clone())).collect() };
    let c = duckdb::Connection::open(path).unwrap();
    for (seed, cfg) in entries(&project["seeds"]["dbt_shop"]) {
        let types: Vec<String> = entries(&cfg["+column_types"]).iter().map(|(col, ty)| format!("'{col}': '{}'", ty.as_str().unwrap())).collect();
        let model = if seed == "raw_time_spine" { "metricflow_time_spine".to_string() } else { seed.trim_start_matches("raw_").to_string() };
        let csv = repo.join(format!("tests/fixtures/dbt_shop/seeds/{seed}.csv"));
        c.execute_batch(&format!("CREATE TABLE main.{model} AS SELECT * FROM read_csv('{}', header = true, types = {{{}}})", csv.display(), types.join(", ")))
            .unwrap_or_else(|e| panic!("{seed}: {e}"));
    }
}
