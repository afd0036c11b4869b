//! The dbt importer on arbitrary input: the bytes as a semantic manifest
//! (when they are JSON) and as a MetricFlow where string. An import or a
//! clear list of unmapped items, a filter list or an error; never a panic.
//!
//! The body of `fuzz_targets/dbt_import.rs`; `tests/it/fuzz_regressions.rs`
//! compiles it too and replays the seeds and regressions through it on
//! stable, so a target that stops compiling fails `cargo test`.

use std::collections::BTreeMap;

use schemabrain::dbt::{import_semantic_manifest, where_filter};

pub fn run(data: &[u8]) {
    if let Ok(json) = serde_json::from_slice::<serde_json::Value>(data) {
        let _ = import_semantic_manifest(&json, "fuzz.json");
    }
    if let Ok(text) = std::str::from_utf8(data) {
        let names: BTreeMap<String, String> = [("customer__country".to_string(), "customer.country".to_string())].into();
        let ids = BTreeMap::new();
        let _ = where_filter::parse(text, &where_filter::resolver(&names, &ids, Some("order.ordered_at")));
    }
}
