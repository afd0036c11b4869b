//! get_metric requests as JSON (what an agent sends), against the demo
//! model: every request plans or fails with an `Issue`, and every plan
//! renders for every dialect or says `Unsupported`. Never a panic.
//!
//! The body of `fuzz_targets/request_json.rs`; `tests/it/fuzz_regressions.rs`
//! compiles it too and replays the seeds and regressions through it on
//! stable, so a target that stops compiling fails `cargo test`.

use std::path::Path;
use std::sync::OnceLock;

use schemabrain::ir::{FilterArg, FilterValue, MetricRequest, OrderArg};
use schemabrain::model::{load_checked, CheckedModel, Literal};
use schemabrain::sql::Dialect;
use serde_json::Value;

fn demo() -> &'static CheckedModel {
    static MODEL: OnceLock<CheckedModel> = OnceLock::new();
    // The fuzz crate lives in `fuzz/`, the replay test at the repository root.
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let dir = [root.join("semantics/demo"), root.join("../semantics/demo")].into_iter().find(|d| d.is_dir()).unwrap_or_default();
    MODEL.get_or_init(|| load_checked(&dir).expect("the demo model loads"))
}

fn strings(v: &Value) -> Vec<String> {
    match v {
        Value::String(s) => vec![s.clone()],
        Value::Array(a) => a.iter().filter_map(|x| x.as_str().map(str::to_string)).collect(),
        _ => Vec::new(),
    }
}

fn literal(v: &Value) -> Option<Literal> {
    Some(match v {
        Value::Bool(b) => Literal::Bool(*b),
        Value::Number(n) => n.as_i64().map(Literal::Int).unwrap_or_else(|| Literal::Float(n.as_f64().unwrap_or(0.0))),
        Value::String(s) => Literal::Text(s.clone()),
        _ => return None,
    })
}

/// The JSON as the tool layer would read it, loosely: whatever fits a field.
fn request(v: &Value) -> MetricRequest {
    let filters = v["filters"].as_array().map(|fs| {
        fs.iter()
            .map(|f| FilterArg {
                column: f["column"].as_str().unwrap_or_default().to_string(),
                op: f["op"].as_str().unwrap_or_default().to_string(),
                value: match &f["value"] {
                    Value::Null => FilterValue::None,
                    Value::Array(a) => FilterValue::List(a.iter().filter_map(literal).collect()),
                    other => literal(other).map(FilterValue::Scalar).unwrap_or(FilterValue::None),
                },
                metric: f["metric"].as_str().map(str::to_string),
            })
            .collect()
    });
    let order_by = v["order_by"].as_array().map(|os| {
        os.iter()
            .map(|o| OrderArg { column: o["column"].as_str().unwrap_or_default().to_string(), direction: o["direction"].as_str().map(str::to_string) })
            .collect()
    });
    MetricRequest {
        names: strings(&v["name"]).into_iter().chain(strings(&v["names"])).collect(),
        group_by: strings(&v["group_by"]),
        filters: filters.unwrap_or_default(),
        time_grain: v["time_grain"].as_str().map(str::to_string),
        time_dimension: v["time_dimension"].as_str().map(str::to_string),
        order_by: order_by.unwrap_or_default(),
        limit: v["limit"].as_i64(),
        via: strings(&v["via"]),
        where_strings: strings(&v["where"]),
        ..MetricRequest::default()
    }
}

pub fn run(data: &[u8]) {
    let Ok(v) = serde_json::from_slice::<Value>(data) else { return };
    let req = request(&v);
    let model = demo();
    if let Ok(plan) = schemabrain::plan(model, &req) {
        let _ = plan.to_string();
        for name in Dialect::supported() {
            match schemabrain::compile(model, &req, name) {
                Ok(_) | Err(schemabrain::CompileError::Unsupported(_)) => {}
                Err(other) => panic!("planned, then failed to compile for {name}: {other:?}"),
            }
        }
    }
}
