//! get_metric's confidence and provenance follow the definitions the plan
//! used: a suggested, unreviewed join lowers them; confirming it raises
//! them again; a degraded plan is at most MEDIUM.

use std::path::{Path, PathBuf};

use serde_json::json;

use schemabrain::envelope::{Confidence, Envelope};
use schemabrain::project::Project;
use schemabrain::tools::{self, Execution};

use crate::common::demo_project;

/// The demo model with `order_customer` rewritten to carry `provenance`.
fn with_join_provenance(tag: &str, provenance: &str) -> Project {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("trust-{tag}"));
    let _ = std::fs::remove_dir_all(&dir);
    schemabrain::demo::materialize(&dir).expect("materialize");
    let join: PathBuf = dir.join("joins/order_customer.yaml");
    let text = std::fs::read_to_string(&join).unwrap().replace("origin: manual\n", &format!("origin: suggested\nprovenance:\n{provenance}"));
    std::fs::write(&join, text).unwrap();
    Project::open(&dir).unwrap_or_else(|d| panic!("{d}"))
}

fn revenue_by_country(project: &Project) -> Envelope {
    let args = json!({"name": "revenue", "group_by": ["customer.country"], "dry_run": true});
    tools::call(project, "get_metric", &args, Execution::DryRun)
}

#[test]
fn confidence_and_provenance_move_with_the_definitions_used() {
    // Hand-written definitions throughout: HIGH, provenance manual.
    let env = revenue_by_country(demo_project());
    assert_eq!(env.confidence(), Some(Confidence::High));
    let p = serde_json::to_value(env.provenance().unwrap()).unwrap();
    assert_eq!(p["inference_method"], "manually_authored");
    let defs = env.data().unwrap()["definitions"].as_array().unwrap().clone();
    let names: Vec<(String, String)> = defs.iter().map(|d| (d["kind"].as_str().unwrap().into(), d["name"].as_str().unwrap().into())).collect();
    for want in [("metric", "revenue"), ("join", "order_customer"), ("entity", "order"), ("entity", "customer")] {
        assert!(names.contains(&(want.0.into(), want.1.into())), "{want:?} in {names:?}");
    }

    // The join becomes a draft guessed from column names: LOW, and the
    // provenance names it.
    let draft = with_join_provenance("draft", "  inference_method: name_match\n  validation_state: draft\n");
    let env = revenue_by_country(&draft);
    assert_eq!(env.confidence(), Some(Confidence::Low), "{}", serde_json::to_string(&env).unwrap());
    let p = serde_json::to_value(env.provenance().unwrap()).unwrap();
    assert_eq!(p["source"], "inferred");
    assert_eq!(p["validation_state"], "draft");
    assert!(p["observed_in"].as_str().unwrap().contains("order_customer"), "{p}");
    // A request that does not walk the join keeps HIGH.
    let env = tools::call(&draft, "get_metric", &json!({"name": "revenue", "dry_run": true}), Execution::DryRun);
    assert_eq!(env.confidence(), Some(Confidence::High));

    // A declared foreign key, still a draft: MEDIUM. Confirmed by a person: HIGH.
    let fk = with_join_provenance("fk", "  inference_method: fk_constraint\n  validation_state: draft\n");
    assert_eq!(revenue_by_country(&fk).confidence(), Some(Confidence::Medium));
    let confirmed = with_join_provenance("confirmed", "  inference_method: name_match\n  validation_state: confirmed\n");
    assert_eq!(revenue_by_country(&confirmed).confidence(), Some(Confidence::High));

    // A degraded plan (a grain with no reachable time dimension) is at most
    // MEDIUM even on hand-written definitions.
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("trust-degraded");
    let _ = std::fs::remove_dir_all(&dir);
    schemabrain::demo::materialize(&dir).expect("materialize");
    std::fs::write(dir.join("metrics/product_count.yaml"), "version: 1\nname: product_count\nentity: product\nmeasure: {agg: count, column: id}\n").unwrap();
    let project = Project::open(&dir).unwrap_or_else(|d| panic!("{d}"));
    let env = tools::call(&project, "get_metric", &json!({"name": "product_count", "time_grain": "month", "dry_run": true}), Execution::DryRun);
    assert_eq!(env.status().as_str(), "degraded", "{}", serde_json::to_string(&env).unwrap());
    assert_eq!(env.confidence(), Some(Confidence::Medium));
}

/// A source that drifted under the model (a column dropped, another's type
/// changed): requests that read the drift answer `schema_drift` with what
/// changed, before the engine; requests that do not still answer.
#[test]
fn a_drifted_source_answers_schema_drift_for_what_it_touches() {
    use schemabrain::tools::{Introspect, Session, SessionOptions};
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("drift");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let warehouse = dir.join("drifted.duckdb");
    {
        // The demo's tables copied without constraints (DuckDB refuses to
        // alter a table other tables reference), two of them drifted.
        let c = duckdb::Connection::open(&warehouse).unwrap();
        c.execute_batch(&format!("ATTACH '{}' AS src (READ_ONLY)", crate::common::demo_warehouse().display())).unwrap();
        let mut stmt = c.prepare("SELECT table_name FROM information_schema.tables WHERE table_catalog = 'src' AND table_schema = 'main'").unwrap();
        let tables: Vec<String> = stmt.query_map([], |r| r.get(0)).unwrap().map(Result::unwrap).collect();
        assert!(tables.contains(&"customers".to_string()), "{tables:?}");
        for t in tables {
            let select = match t.as_str() {
                "customers" => "SELECT * EXCLUDE (country) FROM src.main.customers".to_string(),
                "stores" => "SELECT * REPLACE (length(name)::INTEGER AS name) FROM src.main.stores".to_string(),
                _ => format!("SELECT * FROM src.main.\"{t}\""),
            };
            c.execute_batch(&format!("CREATE TABLE main.\"{t}\" AS {select}")).unwrap();
        }
        c.execute_batch("DETACH src").unwrap();
    }
    let options = SessionOptions {
        source: Some(format!("duckdb:{}", warehouse.display())),
        audit: false,
        introspect: Introspect::Always,
        require_engine: false,
        ..SessionOptions::default()
    };
    // A scratch copy of the project: opening a source writes its snapshot.
    let project_dir = dir.join("project");
    schemabrain::demo::materialize(&project_dir).expect("materialize");
    let project = Project::open(&project_dir).unwrap_or_else(|d| panic!("{d}"));
    let session = Session::open(project, options).expect("serve opens a drifted source");
    let drifted = session.call("get_metric", &json!({"name": "revenue", "group_by": ["customer.country"]}));
    let err = drifted.tool_error().unwrap_or_else(|| panic!("{}", serde_json::to_string(&drifted).unwrap()));
    assert_eq!(err.kind().as_str(), "schema_drift", "{}", err.message());
    assert!(err.message().contains("customers.country") && err.message().contains("gone"), "{}", err.message());
    let typed = session.call("get_metric", &json!({"name": "order_count", "group_by": ["store.name"]}));
    assert_eq!(typed.tool_error().map(|e| e.kind().as_str()), Some("schema_drift"), "{}", serde_json::to_string(&typed).unwrap());
    assert!(typed.tool_error().unwrap().message().contains("changed type"));
    // Untouched by the drift: answered as before.
    let fine = session.call("get_metric", &json!({"name": "revenue", "group_by": ["order.status"], "order_by": [{"column": "revenue", "direction": "desc"}]}));
    assert_eq!(fine.status().as_str(), "success", "{}", serde_json::to_string(&fine).unwrap());
    // A dry run compiles whatever the source says.
    let dry = session.call("get_metric", &json!({"name": "revenue", "group_by": ["customer.country"], "dry_run": true}));
    assert!(dry.tool_error().is_none());
}
