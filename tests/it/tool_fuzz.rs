//! Structured fuzzing of every tool: arbitrary JSON arguments (the tool's
//! own argument names with values of every JSON type, unknown names, junk,
//! hostile sizes) into each of the twelve tools. Every call ends in an
//! envelope that validates against the tool's published outputSchema, with
//! error messages that stay short and no long caller value echoed back;
//! every get_metric recovery keeps the question
//! (`recovery::assert_recovery_keeps_question`). Never a panic.

use proptest::prelude::*;
use proptest::test_runner::{Config, FileFailurePersistence, TestRunner};
use serde_json::{json, Map, Value as Json};

use schemabrain::tools::surface::{invoke, published};
use schemabrain::tools::Execution;

use crate::common::demo_project_with_catalog;

/// Values a caller might put in any argument.
fn value() -> impl Strategy<Value = Json> {
    let leaf = prop_oneof![
        Just(Json::Null),
        any::<bool>().prop_map(Json::Bool),
        any::<i64>().prop_map(|n| json!(n)),
        prop_oneof![Just(0.5), Just(-1e300), Just(1e-9)].prop_map(|f| json!(f)),
        prop_oneof![
            Just("revenue".to_string()),
            Just("order.status".to_string()),
            Just("customer.country".to_string()),
            Just("main.orders".to_string()),
            Just("main.orders.amount".to_string()),
            Just("order".to_string()),
            Just("month".to_string()),
            Just("desc".to_string()),
            Just("in".to_string()),
            Just("*".to_string()),
            Just("x".repeat(20_000)),
            "\\PC{0,16}",
        ]
        .prop_map(Json::String),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Json::Array),
            prop::collection::btree_map(prop_oneof![Just("column".to_string()), Just("op".to_string()), Just("value".to_string()), Just("direction".to_string()), "[a-z]{1,6}"], inner, 0..4)
                .prop_map(|m| Json::Object(m.into_iter().collect())),
        ]
    })
}

#[test]
fn every_tool_answers_arbitrary_arguments_with_a_valid_envelope() {
    let project = demo_project_with_catalog();
    for p in published() {
        let tool = p.spec.name;
        let schema = p.spec.output_schema();
        let validator = jsonschema::validator_for(&schema).expect("outputSchema compiles");
        let mut names: Vec<String> = p.allowed.clone();
        names.push("bogus".into());
        let args = prop::collection::vec((prop::sample::select(names), value()), 0..5).prop_map(|kv| Json::Object(kv.into_iter().collect::<Map<_, _>>()));
        let args = prop_oneof![9 => args, 1 => value()];
        // A failing case is kept and replayed first on every run.
        let persisted = FileFailurePersistence::Direct(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/regressions/tool_fuzz.txt"));
        let mut runner = TestRunner::new(Config { cases: 150, failure_persistence: Some(Box::new(persisted)), ..Config::default() });
        runner
            .run(&args, |mut a| {
                // Nothing executes: the fuzz is about arguments, not the warehouse.
                if let Some(m) = a.as_object_mut() {
                    if tool == "get_metric" {
                        m.insert("dry_run".into(), true.into());
                    }
                }
                let env = invoke(project, tool, &a, Execution::DryRun);
                let wire = serde_json::to_value(&env).expect("serializes");
                let errors: Vec<String> = validator.iter_errors(&wire).map(|e| e.to_string()).collect();
                prop_assert!(errors.is_empty(), "{tool}: answer violates its outputSchema: {errors:?}");
                prop_assert!(env.next_action().is_some(), "{tool}: every answer has a next_action");
                if let Some(e) = env.tool_error() {
                    prop_assert!(e.message().len() < 2_000, "{tool}: error message of {} bytes", e.message().len());
                    // The 20,000-character values are never repeated, whatever failed.
                    prop_assert!(wire.to_string().len() < 64_000, "{tool}: error answer of {} bytes", wire.to_string().len());
                    if tool == "get_metric" {
                        crate::recovery::assert_recovery_keeps_question(&a, &env);
                    }
                }
                Ok(())
            })
            .unwrap_or_else(|e| panic!("{tool}: {e}"));
    }
}
