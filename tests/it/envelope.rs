use schemabrain::envelope::*;
use serde_json::{json, Value};

/// The 26 kinds as listed in the charter's registry (seed 001), in its order.
const SEED_KINDS: [&str; 26] = [
    "unknown_name",
    "malformed_name",
    "missing_credential",
    "index_not_ready",
    "schema_drift",
    "cost_cap_exceeded",
    "internal_error",
    "pii_blocked",
    "policy_blocked",
    "allowlist_violation",
    "no_canonical_join",
    "ambiguous_join",
    "unknown_join_name",
    "join_name_mismatch",
    "unknown_metric",
    "unreachable_entity",
    "ambiguous_path",
    "unknown_via_join",
    "unknown_order_by_column",
    "unknown_group_by_column",
    "unknown_filter_column",
    "unknown_measure_column",
    "invalid_time_grain",
    "grain_mismatch",
    "ambiguous_time_dimension",
    "invalid_argument",
];

fn to_json(envelope: &Envelope) -> Value {
    serde_json::to_value(envelope).expect("envelopes always serialize")
}

fn parse(document: Value) -> Result<Envelope, String> {
    serde_json::from_value(document).map_err(|e| e.to_string())
}

/// A well-formed document with every field present; tests break one rule at a time.
fn document(status: &str, data: Value, error: Value) -> Value {
    json!({
        "status": status,
        "data": data,
        "error": error,
        "confidence": null,
        "provenance": null,
        "follow_up_hints": null,
        "degradation_reason": null,
        "charter_version": "1.2",
        "trace_id": "t-1",
    })
}

fn error_object(kind: &str, code: &str) -> Value {
    json!({
        "kind": kind,
        "code": code,
        "message": "m",
        "recovery": {
            "suggested_tool": null,
            "suggested_args": null,
            "fuzzy_matches": [],
            "suggested_rewrite": null,
            "widening_hint": null,
        },
        "pii_categories": [],
    })
}

fn assert_rejected(document: Value, needle: &str) {
    let message = parse(document).expect_err("document must be rejected");
    assert!(
        message.contains(needle),
        "{message:?} should mention {needle:?}"
    );
}

#[test]
fn every_kind_has_its_code() {
    use ErrorCode::*;
    use ErrorKind::*;
    let table = [
        (UnknownName, NotFound),
        (UnknownMetric, NotFound),
        (UnknownJoinName, NotFound),
        (UnknownViaJoin, NotFound),
        (UnknownOrderByColumn, NotFound),
        (UnknownGroupByColumn, NotFound),
        (UnknownFilterColumn, NotFound),
        (UnknownMeasureColumn, NotFound),
        (NoCanonicalJoin, NotFound),
        (UnreachableEntity, NotFound),
        (IndexNotReady, NotFound),
        (MalformedName, InvalidInput),
        (AmbiguousJoin, InvalidInput),
        (AmbiguousPath, InvalidInput),
        (JoinNameMismatch, InvalidInput),
        (InvalidTimeGrain, InvalidInput),
        (GrainMismatch, InvalidInput),
        (AmbiguousTimeDimension, InvalidInput),
        (InvalidArgument, InvalidInput),
        (MissingCredential, Unauthorized),
        (PiiBlocked, Unauthorized),
        (PolicyBlocked, Unauthorized),
        (AllowlistViolation, Unauthorized),
        (SchemaDrift, QueryFailed),
        (CostCapExceeded, RateLimited),
        (InternalError, Internal),
    ];
    assert_eq!(table.len(), ErrorKind::ALL.len());
    for kind in ErrorKind::ALL {
        let (_, code) = table
            .iter()
            .find(|(k, _)| *k == kind)
            .expect("kind in table");
        assert_eq!(kind.code(), *code, "{}", kind.as_str());
    }
}

#[test]
fn kinds_serialize_to_their_snake_case_name_and_round_trip() {
    for kind in ErrorKind::ALL {
        let value = serde_json::to_value(kind).unwrap();
        assert_eq!(value, json!(kind.as_str()));
        assert_eq!(serde_json::from_value::<ErrorKind>(value).unwrap(), kind);
    }
    assert!(serde_json::from_value::<ErrorKind>(json!("UnknownName")).is_err());
}

#[test]
fn kind_names_are_the_seed_registry() {
    let names: Vec<&str> = ErrorKind::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(names, SEED_KINDS);
}

#[test]
fn exactly_the_three_refusal_kinds_are_refusals() {
    let refusals: Vec<&str> = ErrorKind::ALL
        .iter()
        .filter(|k| k.is_refusal())
        .map(|k| k.as_str())
        .collect();
    assert_eq!(
        refusals,
        ["pii_blocked", "policy_blocked", "allowlist_violation"]
    );
    for kind in [
        RefusalKind::PiiBlocked,
        RefusalKind::PolicyBlocked,
        RefusalKind::AllowlistViolation,
    ] {
        assert!(ErrorKind::from(kind).is_refusal());
    }
    assert!(!ErrorKind::from(FailureKind::UnknownName).is_refusal());
}

#[test]
fn codes_serialize_screaming_snake_case() {
    for (code, name) in [
        (ErrorCode::QueryFailed, "QUERY_FAILED"),
        (ErrorCode::Timeout, "TIMEOUT"),
        (ErrorCode::Unauthorized, "UNAUTHORIZED"),
        (ErrorCode::InvalidInput, "INVALID_INPUT"),
        (ErrorCode::ResultTruncated, "RESULT_TRUNCATED"),
        (ErrorCode::NotFound, "NOT_FOUND"),
        (ErrorCode::RateLimited, "RATE_LIMITED"),
        (ErrorCode::Internal, "INTERNAL"),
    ] {
        assert_eq!(serde_json::to_value(code).unwrap(), json!(name));
        assert_eq!(code.as_str(), name);
    }
}

#[test]
fn timeout_and_engine_failure_override_the_code() {
    let timeout = ToolError::timeout("query ran past 30s");
    assert_eq!(
        (timeout.kind(), timeout.code()),
        (ErrorKind::CostCapExceeded, ErrorCode::Timeout)
    );
    let failed = ToolError::query_failed("duckdb rejected the query");
    assert_eq!(
        (failed.kind(), failed.code()),
        (ErrorKind::InternalError, ErrorCode::QueryFailed)
    );

    // Both survive a round trip; any other mismatched code does not.
    for error in [timeout, failed] {
        let envelope = Envelope::error(error);
        assert_eq!(parse(to_json(&envelope)).unwrap(), envelope);
    }
    assert_rejected(
        document(
            "error",
            Value::Null,
            error_object("unknown_name", "TIMEOUT"),
        ),
        "TIMEOUT",
    );
}

#[test]
fn new_sets_code_from_kind() {
    let error = ToolError::new(
        FailureKind::CostCapExceeded,
        "over budget",
        Recovery::none(),
    );
    assert_eq!(error.code(), ErrorCode::RateLimited);
    assert!(error.pii_categories().is_empty());
}

#[test]
fn error_envelope_matches_the_charter_example() {
    let recovery = Recovery::call("find_relevant_tables", json!({"query": "user"}))
        .with_fuzzy_matches(["users", "user_profiles", "auth.users"]);
    let envelope = Envelope::error(ToolError::new(
        FailureKind::UnknownName,
        "Table 'user' not found in the indexed schema.",
        recovery,
    ))
    .with_trace_id("abc");
    assert_eq!(
        to_json(&envelope),
        json!({
            "status": "error",
            "data": null,
            "error": {
                "kind": "unknown_name",
                "code": "NOT_FOUND",
                "message": "Table 'user' not found in the indexed schema.",
                "recovery": {
                    "suggested_tool": "find_relevant_tables",
                    "suggested_args": {"query": "user"},
                    "fuzzy_matches": ["users", "user_profiles", "auth.users"],
                    "suggested_rewrite": null,
                    "widening_hint": null,
                },
                "pii_categories": [],
            },
            "confidence": null,
            "provenance": null,
            "follow_up_hints": null,
            "degradation_reason": null,
            "charter_version": "1.2",
            "trace_id": "abc",
        })
    );
}

#[test]
fn fields_serialize_in_charter_order_with_nulls() {
    let keys: Vec<String> = match to_json(&Envelope::success(json!([1]))) {
        Value::Object(map) => map.keys().cloned().collect(),
        other => panic!("envelope serialized to {other}"),
    };
    assert_eq!(
        keys,
        [
            "status",
            "data",
            "error",
            "confidence",
            "provenance",
            "follow_up_hints",
            "degradation_reason",
            "charter_version",
            "trace_id",
        ]
    );
}

#[test]
fn constructors_set_status_data_and_reason() {
    let success = Envelope::success(json!({"rows": []}));
    assert_eq!(success.status(), Status::Success);
    assert_eq!(success.data(), Some(&json!({"rows": []})));

    // `success` must carry data, so a null payload is an empty result.
    let null_success = Envelope::success(Value::Null);
    assert_eq!(
        (null_success.status(), null_success.data()),
        (Status::Empty, None)
    );

    let empty = Envelope::empty(Some(json!([])));
    assert_eq!(
        (empty.status(), empty.data()),
        (Status::Empty, Some(&json!([])))
    );
    assert_eq!(Envelope::empty(Some(Value::Null)).data(), None);

    assert_eq!(Envelope::partial(json!([1])).status(), Status::Partial);

    let degraded = Envelope::degraded(json!({"rows": [1]}), DegradationReason::FanOutJoin);
    assert_eq!(degraded.status(), Status::Degraded);
    assert_eq!(
        degraded.degradation_reason(),
        Some(DegradationReason::FanOutJoin)
    );
    assert_eq!(success.degradation_reason(), None);

    let error = Envelope::error(ToolError::new(
        FailureKind::UnknownMetric,
        "no",
        Recovery::none(),
    ));
    assert_eq!((error.status(), error.data()), (Status::Error, None));
    assert_eq!(
        error.tool_error().map(ToolError::kind),
        Some(ErrorKind::UnknownMetric)
    );
}

#[test]
fn refused_carries_a_refusal_kind_and_refusal_only_content() {
    let refusal = ToolError::refusal(
        RefusalKind::PiiBlocked,
        "The metric would expose email addresses.",
        Recovery::call("describe_entity", json!({"name": "customer"})),
        vec!["email".into()],
    )
    .with_suggested_rewrite("drop customer.email from group_by")
    .with_widening_hint("allow customer.email");
    let envelope = Envelope::refused(refusal);
    assert_eq!(
        (envelope.status(), envelope.data()),
        (Status::Refused, None)
    );

    let error = envelope.tool_error().expect("refused carries an error");
    assert_eq!(
        (error.kind(), error.code()),
        (ErrorKind::PiiBlocked, ErrorCode::Unauthorized)
    );
    assert_eq!(error.pii_categories(), ["email"]);
    assert_eq!(error.recovery().suggested_tool(), Some("describe_entity"));
    assert_eq!(
        error.recovery().suggested_args(),
        json!({"name": "customer"}).as_object()
    );
    assert_eq!(
        error.recovery().suggested_rewrite(),
        Some("drop customer.email from group_by")
    );
    assert_eq!(
        error.recovery().widening_hint(),
        Some("allow customer.email")
    );

    assert_eq!(parse(to_json(&envelope)).unwrap(), envelope);

    // Re-wrapping a refusal taken from a refused envelope keeps it refused.
    assert_eq!(Envelope::error(error.clone()).status(), Status::Refused);
}

#[test]
fn recovery_call_keeps_only_object_arguments() {
    let recovery = Recovery::call("list_entities", Value::Null);
    assert_eq!(recovery.suggested_tool(), Some("list_entities"));
    assert_eq!(recovery.suggested_args(), None);
    assert!(Recovery::call("list_entities", json!([1]))
        .suggested_args()
        .is_none());
    let none = Recovery::none();
    assert_eq!(
        (none.suggested_tool(), none.fuzzy_matches().len()),
        (None, 0)
    );
}

#[test]
fn round_trips_every_status() {
    let provenance = Provenance {
        model: Some("claude-haiku-4-5".into()),
        inference_method: Some(InferenceMethod::LlmSuggested),
        validation_state: Some(ValidationState::Applied),
        ..Provenance::new(ProvenanceSource::Llm)
    };
    let envelopes = [
        Envelope::success(json!({"entities": ["order"]}))
            .with_confidence(Confidence::Medium)
            .with_provenance(provenance)
            .with_follow_up_hints(&["describe_entity", "suggest_joins"]),
        Envelope::empty(None).with_follow_up_hints(&["list_indexed_schemas"]),
        Envelope::empty(Some(json!([]))),
        Envelope::partial(json!([1, 2])),
        Envelope::degraded(
            json!({"rows": []}),
            DegradationReason::TimeDimensionUnavailable,
        ),
        Envelope::error(ToolError::new(
            FailureKind::InvalidTimeGrain,
            "bad grain",
            Recovery::none(),
        )),
    ];
    for envelope in envelopes {
        assert_eq!(parse(to_json(&envelope)).unwrap(), envelope);
    }
}

#[test]
fn refused_requires_a_refusal_kind_and_error_rejects_one() {
    assert_rejected(
        document(
            "refused",
            Value::Null,
            error_object("unknown_name", "NOT_FOUND"),
        ),
        "cannot carry error kind unknown_name",
    );
    assert_rejected(
        document(
            "error",
            Value::Null,
            error_object("pii_blocked", "UNAUTHORIZED"),
        ),
        "cannot carry error kind pii_blocked",
    );
    assert!(parse(document(
        "refused",
        Value::Null,
        error_object("pii_blocked", "UNAUTHORIZED")
    ))
    .is_ok());
}

#[test]
fn success_with_null_data_is_rejected() {
    assert_rejected(
        document("success", Value::Null, Value::Null),
        "requires non-null data",
    );
    let mut missing = document("success", Value::Null, Value::Null);
    missing.as_object_mut().unwrap().remove("data");
    assert_rejected(missing, "requires non-null data");
}

#[test]
fn error_with_data_is_rejected() {
    assert_rejected(
        document(
            "error",
            json!([1]),
            error_object("unknown_name", "NOT_FOUND"),
        ),
        "requires data to be null",
    );
    assert_rejected(
        document("error", Value::Null, Value::Null),
        "requires an error object",
    );
    assert_rejected(
        document(
            "empty",
            Value::Null,
            error_object("unknown_name", "NOT_FOUND"),
        ),
        "requires error to be null",
    );
}

#[test]
fn degradation_reason_is_set_iff_degraded() {
    assert_rejected(
        document("degraded", json!([1]), Value::Null),
        "requires a degradation_reason",
    );
    let mut stray = document("success", json!([1]), Value::Null);
    stray["degradation_reason"] = json!("fan_out_join");
    assert_rejected(stray, "only allowed with status degraded");
    let mut degraded = document("degraded", json!([1]), Value::Null);
    degraded["degradation_reason"] = json!("missing_order_by_with_limit");
    assert_eq!(
        parse(degraded).unwrap().degradation_reason(),
        Some(DegradationReason::MissingOrderByWithLimit)
    );
}

#[test]
fn refusal_only_content_is_rejected_on_other_kinds() {
    let mut rewrite = error_object("unknown_name", "NOT_FOUND");
    rewrite["recovery"]["suggested_rewrite"] = json!("select 1");
    assert_rejected(
        document("error", Value::Null, rewrite),
        "recovery.suggested_rewrite",
    );

    let mut hint = error_object("unknown_name", "NOT_FOUND");
    hint["recovery"]["widening_hint"] = json!("allow x");
    assert_rejected(
        document("error", Value::Null, hint),
        "recovery.widening_hint",
    );

    let mut categories = error_object("unknown_name", "NOT_FOUND");
    categories["pii_categories"] = json!(["email"]);
    assert_rejected(document("error", Value::Null, categories), "pii_categories");
}

#[test]
fn other_bad_documents_are_rejected() {
    let mut version = document("success", json!(1), Value::Null);
    version["charter_version"] = json!("1.1");
    assert_rejected(version, "charter_version");

    let mut hints = document("success", json!(1), Value::Null);
    hints["follow_up_hints"] = json!(["a", "b", "c", "d"]);
    assert_rejected(hints, "follow_up_hints");

    let mut unknown = document("success", json!(1), Value::Null);
    unknown["extra"] = json!(true);
    assert_rejected(unknown, "extra");

    let mut no_trace = document("success", json!(1), Value::Null);
    no_trace.as_object_mut().unwrap().remove("trace_id");
    assert_rejected(no_trace, "trace_id");

    assert_rejected(document("ok", json!(1), Value::Null), "ok");
}

#[test]
fn follow_up_hints_keep_at_most_three() {
    let envelope = Envelope::success(json!(1)).with_follow_up_hints(&["a", "b", "c", "d"]);
    assert_eq!(envelope.follow_up_hints().unwrap(), ["a", "b", "c"]);
    assert_eq!(
        Envelope::success(json!(1))
            .with_follow_up_hints(&[])
            .follow_up_hints(),
        None
    );
}

#[test]
fn derive_confidence_covers_all_fifteen_combinations() {
    use Confidence::{High, Low, Medium};
    use InferenceMethod::*;
    use ValidationState::*;
    let table = [
        (ManuallyAuthored, Draft, Medium),
        (ManuallyAuthored, Applied, High),
        (ManuallyAuthored, Confirmed, High),
        (FkConstraint, Draft, Medium),
        (FkConstraint, Applied, High),
        (FkConstraint, Confirmed, High),
        (DbtImport, Draft, Medium),
        (DbtImport, Applied, High),
        (DbtImport, Confirmed, High),
        (LlmSuggested, Draft, Low),
        (LlmSuggested, Applied, Medium),
        (LlmSuggested, Confirmed, High),
        (ObservedInQueryLog, Draft, Low),
        (ObservedInQueryLog, Applied, Medium),
        (ObservedInQueryLog, Confirmed, High),
    ];
    for (method, state, expected) in table {
        assert_eq!(
            derive_confidence(method, state),
            expected,
            "{method:?} x {state:?}"
        );
    }
}

#[test]
fn confidence_wire_form_order_and_buckets() {
    assert_eq!(
        serde_json::to_value(Confidence::High).unwrap(),
        json!("HIGH")
    );
    assert_eq!(
        serde_json::to_value(Confidence::Medium).unwrap(),
        json!("MEDIUM")
    );
    assert_eq!(serde_json::to_value(Confidence::Low).unwrap(), json!("LOW"));
    assert_eq!(Confidence::High.min(Confidence::Low), Confidence::Low);
    assert_eq!(Confidence::from_score(0.8), Confidence::High);
    assert_eq!(Confidence::from_score(0.5), Confidence::Medium);
    assert_eq!(Confidence::from_score(0.49), Confidence::Low);
    assert_eq!(Confidence::from_score(f64::NAN), Confidence::Low);
}

#[test]
fn charter_version_is_1_2() {
    let envelope = Envelope::empty(None);
    assert_eq!(envelope.charter_version(), "1.2");
    assert_eq!(CHARTER_VERSION, "1.2");
    assert_eq!(to_json(&envelope)["charter_version"], json!("1.2"));
}

#[test]
fn trace_ids_are_fresh_and_overridable() {
    let (a, b) = (Envelope::empty(None), Envelope::empty(None));
    assert!(!a.trace_id().is_empty());
    assert_ne!(a.trace_id(), b.trace_id());
    assert_eq!(a.with_trace_id("req-7").trace_id(), "req-7");
}

fn enum_names(schema: &Value, definition: &str) -> Vec<String> {
    schema["$defs"][definition]["enum"]
        .as_array()
        .unwrap_or_else(|| panic!("{definition} is a plain enum"))
        .iter()
        .map(|v| v.as_str().expect("string enum value").to_owned())
        .collect()
}

#[test]
fn schema_describes_the_envelope_and_its_enums() {
    let schema = envelope_json_schema();
    assert_eq!(schema["type"], json!("object"));
    assert_eq!(
        enum_names(&schema, "Status"),
        ["success", "empty", "partial", "degraded", "error", "refused"]
    );
    assert_eq!(enum_names(&schema, "ErrorKind"), SEED_KINDS);
    assert_eq!(
        enum_names(&schema, "ErrorCode"),
        [
            "QUERY_FAILED",
            "TIMEOUT",
            "UNAUTHORIZED",
            "INVALID_INPUT",
            "RESULT_TRUNCATED",
            "NOT_FOUND",
            "RATE_LIMITED",
            "INTERNAL",
        ]
    );
    assert_eq!(
        schema["properties"]["charter_version"]["const"],
        json!("1.2")
    );
    assert_eq!(schema["required"].as_array().map(Vec::len), Some(9));
}

#[test]
fn every_schema_property_has_a_description() {
    fn check(schema: &Value, path: &str) {
        match schema {
            Value::Object(map) => {
                if let Some(Value::Object(properties)) = map.get("properties") {
                    for (name, property) in properties {
                        assert!(
                            property.get("description").is_some(),
                            "{path}.{name} lacks a description"
                        );
                    }
                }
                for (key, child) in map {
                    check(child, &format!("{path}/{key}"));
                }
            }
            Value::Array(items) => items.iter().for_each(|item| check(item, path)),
            _ => {}
        }
    }
    check(&envelope_json_schema(), "#");
}
