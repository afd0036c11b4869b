//! Every error kind the planner can raise, on the demo model: the kind and
//! code are right, and the suggested call — made exactly as given — answers
//! (success or empty) or at least narrows the problem (a different error).
//! Every recovery keeps the question (`assert_recovery_keeps_question`): a
//! suggested get_metric keeps every part of the request but the faulty one,
//! and each `must_obey` correction, followed on the demo warehouse, answers
//! what SQL written by hand answers for the question meant.

use serde_json::{json, Value as Json};

use schemabrain::envelope::{Envelope, Status};
use schemabrain::tools::{self, Execution};

use crate::common::demo_project;

fn dry(args: Json) -> Envelope {
    let mut a = args;
    a["dry_run"] = true.into();
    let env = schemabrain::tools::surface::invoke(demo_project(), "get_metric", &a, Execution::DryRun);
    assert_recovery_keeps_question(&a, &env);
    env
}

/// The parts of a get_metric request, each in a form where equal means the
/// same question: metrics as a list, filters as a set of canonical
/// conditions (identical filters are one), the rest as given.
fn parts(args: &Json) -> Vec<(&'static str, Json)> {
    let list = |k: &str| args.get(k).cloned().filter(|v| !v.is_null()).unwrap_or(json!([]));
    let scalar = |k: &str| args.get(k).cloned().unwrap_or(Json::Null);
    let mut metrics: Vec<Json> = args.get("name").filter(|n| !n.is_null()).cloned().into_iter().collect();
    metrics.extend(list("names").as_array().cloned().unwrap_or_default());
    let mut filters: Vec<String> = list("filters").as_array().cloned().unwrap_or_default().iter().map(|f| f.to_string()).collect();
    filters.sort();
    filters.dedup();
    vec![
        ("metrics", Json::Array(metrics)),
        ("group_by", list("group_by")),
        ("filters", json!(filters)),
        ("where", list("where")),
        ("time_grain", scalar("time_grain")),
        ("time_dimension", scalar("time_dimension")),
        ("order_by", list("order_by")),
        ("limit", scalar("limit")),
        ("via", list("via")),
        ("query", scalar("query")),
    ]
}

/// Asserts that `suggested`, a get_metric call a recovery offers for the
/// failed `original`, keeps the question: every part (metrics, group_by,
/// filters, where, grain, time dimension, order, limit, via, saved query)
/// is kept as it was, except at most one part, which is changed but not
/// dropped: a list keeps its length (via may only grow, filters may be
/// merged into fewer but never to none), a scalar that was given stays
/// given. Returns the changed part, if any.
pub fn assert_keeps_question(original: &Json, suggested: &Json) -> Option<&'static str> {
    let (before, after) = (parts(original), parts(suggested));
    let mut changed = Vec::new();
    for ((part, a), (_, b)) in before.iter().zip(after.iter()) {
        if a == b {
            continue;
        }
        changed.push(*part);
        match (a, b) {
            (Json::Array(x), Json::Array(y)) => match *part {
                "via" => assert!(x.iter().all(|v| y.contains(v)), "{part} dropped a join: {a} → {b}"),
                "filters" => assert!(x.is_empty() || !y.is_empty(), "filters dropped: {a} → {b}"),
                _ => assert_eq!(x.len(), y.len(), "{part} dropped an item: {a} → {b}\noriginal {original}\nsuggested {suggested}"),
            },
            (x, y) => assert!(x.is_null() || !y.is_null(), "{part} dropped: {x} → null\noriginal {original}\nsuggested {suggested}"),
        }
    }
    assert!(changed.len() <= 1, "a recovery changes only the faulty part, not {changed:?}\noriginal {original}\nsuggested {suggested}");
    changed.first().copied()
}

/// For an answer to get_metric(`original`): when its recovery suggests
/// get_metric, the suggestion keeps the question; when it is a correction
/// (`must_obey`), it changes something; a look-up is never `must_obey`.
/// No suggested or next-action value repeats more than 256 characters.
pub fn assert_recovery_keeps_question(original: &Json, env: &Envelope) {
    let Some(err) = env.tool_error() else { return };
    let r = err.recovery();
    let next = env.next_action().expect("every answer has a next_action");
    if let Some(args) = r.suggested_args() {
        assert!(!has_long_string(&Json::Object(args.clone())), "suggested_args echo a long value");
    }
    if let Some(args) = &next.arguments {
        assert!(!has_long_string(&Json::Object(args.clone())), "next_action.arguments echo a long value");
    }
    let suggested = Json::Object(r.suggested_args().cloned().unwrap_or_default());
    if r.suggested_tool() == Some("get_metric") && renames_arguments(original, &suggested) {
        // An unknown argument renamed to the name it means (`grain` ->
        // `time_grain`): every value is kept, under its right name.
        assert!(next.must_obey, "a rename is a correction");
    } else if r.suggested_tool() == Some("get_metric") {
        let changed = assert_keeps_question(original, &suggested);
        if next.must_obey {
            assert!(changed.is_some() || suggested != *original, "a correction changes the faulty part: {suggested}");
        }
    } else {
        assert!(!next.must_obey, "a look-up ({:?}) is not must_obey", r.suggested_tool());
    }
}

/// `suggested` is `original` with some arguments renamed, each to a name
/// `original` does not give, every value kept: the keys both have carry
/// equal values, and the values of the keys dropped are the values of the
/// keys added.
fn renames_arguments(original: &Json, suggested: &Json) -> bool {
    let (Some(o), Some(s)) = (original.as_object(), suggested.as_object()) else { return false };
    let mut dropped: Vec<String> = o.iter().filter(|(k, _)| !s.contains_key(*k)).map(|(_, v)| v.to_string()).collect();
    let mut added: Vec<String> = s.iter().filter(|(k, _)| !o.contains_key(*k)).map(|(_, v)| v.to_string()).collect();
    dropped.sort();
    added.sort();
    !dropped.is_empty() && dropped == added && o.iter().all(|(k, v)| s.get(k).is_none_or(|w| w == v))
}

fn has_long_string(v: &Json) -> bool {
    match v {
        Json::String(s) => s.chars().count() > 256,
        Json::Array(a) => a.iter().any(has_long_string),
        Json::Object(m) => m.iter().any(|(k, v)| k.chars().count() > 256 || has_long_string(v)),
        _ => false,
    }
}

/// Asserts the kind, then follows the recovery and returns what it answered.
fn fails_then_recovers(args: Json, kind: &str) -> Envelope {
    let env = dry(args.clone());
    let err = env.tool_error().unwrap_or_else(|| panic!("{args} should fail with {kind}, got {}", serde_json::to_string(&env).unwrap()));
    assert_eq!(err.kind().as_str(), kind, "{args}: {}", err.message());
    assert_eq!(env.status(), Status::Error);
    assert!(env.data().is_none());
    let r = err.recovery();
    let Some(tool) = r.suggested_tool() else {
        // No call fits (an order direction): the message and fuzzy matches say what to write.
        assert!(!r.fuzzy_matches().is_empty(), "{kind}: neither a call nor a choice");
        assert!(!env.next_action().unwrap().must_obey);
        return env;
    };
    let mut next_args = Json::Object(r.suggested_args().cloned().unwrap_or_default());
    if tool == "get_metric" {
        next_args["dry_run"] = true.into();
    }
    let next = tools::call(demo_project(), tool, &next_args, Execution::DryRun);
    match next.tool_error() {
        None => assert!(matches!(next.status(), Status::Success | Status::Empty | Status::Degraded), "{kind} → {tool}: {:?}", next.status()),
        Some(e) => assert_ne!(e.kind().as_str(), kind, "{kind}: the recovery {tool} {next_args} repeats the same error"),
    }
    next
}

#[test]
fn unknown_metric_suggests_list_metrics_with_close_matches() {
    let env = dry(json!({"name": "revenu"}));
    let err = env.tool_error().unwrap();
    assert_eq!(err.recovery().fuzzy_matches()[0], "revenue");
    assert_eq!(err.code().as_str(), "NOT_FOUND");
    let next = fails_then_recovers(json!({"name": "revenu"}), "unknown_metric");
    let names: Vec<&str> = next.data().unwrap()["items"].as_array().unwrap().iter().map(|m| m["name"].as_str().unwrap()).collect();
    assert!(names.contains(&"revenue"));
}

#[test]
fn huge_names_are_echoed_bounded() {
    let name = "x".repeat(100_000);
    let env = dry(json!({"name": name}));
    let msg = env.tool_error().unwrap().message();
    assert!(msg.len() < 2_000, "message of {} chars", msg.len());
    assert!(msg.contains(&format!("{}...", "x".repeat(200))));
    // The browsing tools too (describe_entity echoed a valid but unknown name whole).
    for tool in ["describe_entity", "describe_metric"] {
        let env = tools::call(demo_project(), tool, &json!({"name": name}), Execution::DryRun);
        let msg = env.tool_error().unwrap_or_else(|| panic!("{tool} refuses")).message();
        assert!(msg.len() < 2_000, "{tool}: message of {} chars", msg.len());
    }
}

#[test]
fn malformed_names_and_values() {
    fails_then_recovers(json!({"name": "revenue", "group_by": ["country"]}), "malformed_name");
    fails_then_recovers(json!({"name": "revenue", "group_by": ["customer.coun try"]}), "malformed_name");
    fails_then_recovers(json!({"name": "revenue", "limit": 0}), "malformed_name");
    fails_then_recovers(json!({"name": "revenue", "limit": 10001}), "malformed_name");
    fails_then_recovers(json!({"name": "revenue", "filters": [{"column": "order.amount", "op": "gt", "value": "lots"}]}), "malformed_name");
    fails_then_recovers(json!({"name": "revenue", "filters": [{"column": "order.ordered_at", "op": "gt", "value": "2024-13-45"}]}), "malformed_name");
    fails_then_recovers(json!({"name": "revenue", "filters": [{"column": "order.status", "op": "ilike", "value": "x"}]}), "malformed_name");
    fails_then_recovers(json!({"name": "revenue", "filters": [{"column": "order.status", "op": "is_null", "value": "x"}]}), "malformed_name");
    fails_then_recovers(json!({"name": "revenue", "filters": [{"column": "order.status", "op": "in", "value": []}]}), "malformed_name");
    fails_then_recovers(json!({"name": "revenue", "order_by": [{"column": "revenue", "direction": "up"}]}), "malformed_name");
    // The message names the column, its type and an example.
    let env = dry(json!({"name": "revenue", "filters": [{"column": "order.amount", "op": "gt", "value": "lots"}]}));
    let msg = env.tool_error().unwrap().message().to_string();
    assert!(msg.contains("order.amount") && msg.contains("decimal") && msg.contains("19.99"), "{msg}");
}

#[test]
fn unknown_entity_is_unknown_name() {
    let next = fails_then_recovers(json!({"name": "revenue", "group_by": ["custmer.country"]}), "unknown_name");
    assert_eq!(next.status(), Status::Success);
    let env = dry(json!({"name": "revenue", "group_by": ["custmer.country"]}));
    assert_eq!(env.tool_error().unwrap().recovery().fuzzy_matches()[0], "customer");
}

#[test]
fn unknown_columns_by_role() {
    // The unique close match is the correction: the same request with it.
    let next = fails_then_recovers(json!({"name": "revenue", "group_by": ["customer.contry"]}), "unknown_group_by_column");
    assert_eq!(next.status(), Status::Success);
    let env = dry(json!({"name": "revenue", "group_by": ["customer.contry"]}));
    assert_eq!(env.tool_error().unwrap().recovery().fuzzy_matches()[0], "customer.country");
    assert_eq!(env.tool_error().unwrap().recovery().suggested_args().unwrap()["group_by"], json!(["customer.country"]));
    assert!(env.next_action().unwrap().must_obey);
    // No close match: a look-up of the entity's columns, not a request without the group-by.
    let env = dry(json!({"name": "revenue", "group_by": ["customer.zzzz"]}));
    let r = env.tool_error().unwrap().recovery();
    assert_eq!((r.suggested_tool(), r.suggested_args().unwrap()["name"].as_str()), (Some("describe_entity"), Some("customer")));
    assert!(!env.next_action().unwrap().must_obey);
    fails_then_recovers(json!({"name": "revenue", "filters": [{"column": "order.stat", "op": "eq", "value": "x"}]}), "unknown_filter_column");
    fails_then_recovers(json!({"name": "revenue", "group_by": ["customer.country"], "order_by": [{"column": "customer.segment"}]}), "unknown_order_by_column");
}

#[test]
fn invalid_time_grain_lists_the_allowed_ones() {
    fails_then_recovers(json!({"name": "revenue", "time_grain": "fortnight"}), "invalid_time_grain");
    // A real grain the metric does not declare (revenue has no hour).
    let env = dry(json!({"name": "revenue", "time_grain": "hour"}));
    let err = env.tool_error().unwrap();
    assert_eq!(err.kind().as_str(), "invalid_time_grain");
    assert!(err.message().contains("day") && err.message().contains("year"), "{}", err.message());
    fails_then_recovers(json!({"name": "revenue", "time_grain": "hour"}), "invalid_time_grain");
}

#[test]
fn grain_finer_than_a_date_is_grain_mismatch() {
    // customer_count buckets customer.signup_date, a DATE: no hours in it.
    let next = fails_then_recovers(json!({"name": "customer_count", "time_grain": "hour"}), "grain_mismatch");
    assert_eq!(next.status(), Status::Success);
}

#[test]
fn metrics_over_time_need_a_grain_and_the_recovery_adds_one() {
    for name in ["cumulative_revenue", "revenue_rolling_3_months", "revenue_growth_mom", "revenue_vs_quarter_start"] {
        let next = fails_then_recovers(json!({"name": name}), "invalid_time_grain");
        assert_eq!(next.status(), Status::Success, "{name}");
        assert!(next.data().unwrap()["sql"].as_str().unwrap().contains("__month"), "{name}: the recovery asks for months");
    }
    // A conversion rate or a balance needs no grain.
    for name in ["signup_order_conversion", "units_on_hand"] {
        assert_eq!(dry(json!({"name": name})).status(), Status::Success, "{name}");
    }
}

#[test]
fn a_grain_that_does_not_fit_the_period_is_grain_mismatch() {
    // A week can straddle two months: month-to-date has no meaning per week.
    let next = fails_then_recovers(json!({"name": "revenue_month_to_date", "time_grain": "week"}), "grain_mismatch");
    assert_eq!(next.status(), Status::Success);
    let next = fails_then_recovers(json!({"name": "revenue_vs_quarter_start", "time_grain": "year"}), "grain_mismatch");
    assert_eq!(next.status(), Status::Success);
}

#[test]
fn unknown_via_join_suggests_list_joins() {
    let next = fails_then_recovers(json!({"name": "revenue", "group_by": ["region.name"], "via": ["order_stores"]}), "unknown_via_join");
    assert_eq!(next.status(), Status::Success);
    let env = dry(json!({"name": "revenue", "via": ["order_stores"]}));
    assert_eq!(env.tool_error().unwrap().recovery().fuzzy_matches()[0], "order_store");
}

#[test]
fn unreachable_entity_suggests_describing_the_anchor() {
    let next = fails_then_recovers(json!({"name": "revenue", "group_by": ["campaign_spend.channel"]}), "unreachable_entity");
    let reachable: Vec<&str> = next.data().unwrap()["reachable_entities"].as_array().unwrap().iter().map(|r| r["entity"].as_str().unwrap()).collect();
    assert!(reachable.contains(&"customer") && !reachable.contains(&"campaign_spend"), "{reachable:?}");
}

#[test]
fn ambiguous_path_recovery_picks_one_path() {
    let env = dry(json!({"name": "revenue", "group_by": ["region.name"]}));
    let msg = env.tool_error().unwrap().message().to_string();
    assert!(msg.contains("order_store → store_region") && msg.contains("order_customer → customer_region"), "{msg}");
    let next = fails_then_recovers(json!({"name": "revenue", "group_by": ["region.name"]}), "ambiguous_path");
    assert_eq!(next.status(), Status::Success);
}

#[test]
fn ambiguous_join_recovery_picks_one_join() {
    let next = fails_then_recovers(json!({"name": "revenue", "group_by": ["address.city"]}), "ambiguous_join");
    assert_eq!(next.status(), Status::Success);
    let joins = &next.data().unwrap()["joins"];
    assert_eq!(joins[0]["name"], "order_billing_address");
}

#[test]
fn ambiguous_time_dimension_recovery_names_one() {
    let env = dry(json!({"name": "units_sold", "time_grain": "month"}));
    let msg = env.tool_error().unwrap().message().to_string();
    assert!(msg.contains("order.ordered_at") && msg.contains("customer.signup_date"), "{msg}");
    let next = fails_then_recovers(json!({"name": "units_sold", "time_grain": "month"}), "ambiguous_time_dimension");
    assert_eq!(next.status(), Status::Success);
}

#[test]
fn fan_out_is_answered_exactly_and_explained() {
    let env = dry(json!({"name": "order_count", "group_by": ["product.category"]}));
    assert_eq!(env.status(), Status::Success);
    let data = env.data().unwrap();
    assert!(data["joins"].as_array().unwrap().iter().any(|j| j["name"] == "order_item_order" && j["fans_out"] == true));
    let notes: Vec<&str> = data["notes"].as_array().unwrap().iter().map(|n| n.as_str().unwrap()).collect();
    assert!(notes.iter().any(|n| n.contains("order_item_order") && n.contains("more than the total")), "{notes:?}");
    // A count of the anchor's identity is blind to repeated rows once counted distinct.
    let sql = data["sql"].as_str().unwrap();
    assert!(sql.contains(r#"count(DISTINCT "order"."id")"#) && !sql.contains("SELECT DISTINCT"), "{sql}");
    // A sum is not: rows are reduced to one per (order, category) first.
    let env = dry(json!({"name": "revenue", "group_by": ["product.category"]}));
    assert!(env.data().unwrap()["sql"].as_str().unwrap().contains("SELECT DISTINCT"), "deduplicates before aggregating");
    // A filter across the to-many hop is a semi-join, written IN (SELECT …).
    let env = dry(json!({"name": "revenue", "filters": [{"column": "product.category", "op": "eq", "value": "home"}]}));
    assert_eq!(env.status(), Status::Success);
    let sql = env.data().unwrap()["sql"].as_str().unwrap().to_string();
    assert!(sql.contains(r#""order"."id" IN (SELECT"#) && !sql.contains("EXISTS"), "{sql}");
}

#[test]
fn unknown_arguments_are_rejected_by_name() {
    let env = dry(json!({"name": "revenue", "grain": "month"}));
    let err = env.tool_error().unwrap();
    assert_eq!(err.kind().as_str(), "malformed_name");
    assert!(err.message().contains("grain"), "{}", err.message());
    // Each unknown name is renamed to the allowed one it plainly means; the
    // rest of the question is kept, and following the correction answers.
    for (original, renamed) in [
        (json!({"name": "revenue", "grain": "month", "dry_run": true}), json!({"name": "revenue", "time_grain": "month", "dry_run": true})),
        (
            json!({"name": "revenue", "filter": [{"column": "customer.country", "op": "eq", "value": "FR"}], "dry_run": true}),
            json!({"name": "revenue", "filters": [{"column": "customer.country", "op": "eq", "value": "FR"}], "dry_run": true}),
        ),
    ] {
        let env = dry(original.clone());
        let r = env.tool_error().unwrap().recovery().clone();
        assert!(env.next_action().unwrap().must_obey, "a rename keeps the meaning: {original}");
        let args = Json::Object(r.suggested_args().cloned().unwrap());
        assert_eq!(args, renamed);
        let next = tools::call(demo_project(), "get_metric", &args, Execution::DryRun);
        assert_eq!(next.status(), Status::Success);
        let sql = next.data().unwrap()["sql"].as_str().unwrap().to_string();
        assert!(sql.contains("month") || sql.contains("country"), "{sql}");
    }
    // A name already given is not overwritten, and a name with no plain
    // meaning is not dropped: no call is suggested, the message lists the names.
    // A short name means nothing plainly (the fuzz found `op`, which
    // Jaro-Winkler puts close to `group_by`, renamed into a group-by).
    for args in [
        json!({"name": "revenue", "grain": "month", "time_grain": "day"}),
        json!({"name": "revenue", "zzqx": 1}),
        json!({"name": "revenue", "op": [null]}),
        json!({"name": "revenue", "by": ["customer.country"]}),
    ] {
        let env = dry(args.clone());
        let err = env.tool_error().unwrap();
        assert_eq!(err.recovery().suggested_tool(), None, "{args}");
        assert!(!env.next_action().unwrap().must_obey, "{args}");
        assert!(err.message().contains("time_grain"), "{}", err.message());
    }
}

#[test]
fn resolve_join_kinds() {
    let call = |args: Json| tools::call(demo_project(), "resolve_join", &args, Execution::DryRun);
    let ok = call(json!({"entity_a": "customer", "entity_b": "order"}));
    assert_eq!(ok.status(), Status::Success);
    assert!(ok.data().unwrap()["sql_skeleton"].as_str().unwrap().contains("JOIN \"main\".\"customers\""));
    for (args, kind) in [
        (json!({"entity_a": "order", "entity_b": "address"}), "ambiguous_join"),
        (json!({"entity_a": "order", "entity_b": "product"}), "no_canonical_join"),
        (json!({"entity_a": "order", "entity_b": "address", "name": "order_adress"}), "unknown_join_name"),
        (json!({"entity_a": "order", "entity_b": "address", "name": "order_store"}), "join_name_mismatch"),
        (json!({"entity_a": "ordr", "entity_b": "address"}), "unknown_name"),
    ] {
        let env = call(args.clone());
        let err = env.tool_error().unwrap_or_else(|| panic!("{args}"));
        assert_eq!(err.kind().as_str(), kind, "{args}");
        let r = err.recovery();
        let next = tools::call(demo_project(), r.suggested_tool().unwrap(), &Json::Object(r.suggested_args().cloned().unwrap_or_default()), Execution::DryRun);
        assert!(matches!(next.status(), Status::Success | Status::Empty), "{kind} recovery: {}", serde_json::to_string(&next).unwrap());
    }
}

fn refused(args: Json) -> (Vec<String>, String, Envelope) {
    let env = dry(args.clone());
    assert_eq!(env.status(), Status::Refused, "{args}: {}", serde_json::to_string(&env).unwrap());
    assert!(env.data().is_none(), "a refusal carries no SQL");
    let err = env.tool_error().unwrap();
    assert_eq!(err.kind().as_str(), "pii_blocked");
    assert_eq!(err.code().as_str(), "UNAUTHORIZED");
    let r = err.recovery();
    let next = tools::call(demo_project(), r.suggested_tool().unwrap(), &Json::Object(r.suggested_args().cloned().unwrap_or_default()), Execution::DryRun);
    assert_eq!(next.status(), Status::Success, "the refusal's recovery answers");
    (err.pii_categories().to_vec(), err.message().to_string(), next)
}

#[test]
fn pii_blocked_by_policy_names_only_blocked_categories() {
    // contact is blocked by the demo policy: as a group-by, a filter or via a join.
    let (cats, msg, next) = refused(json!({"name": "revenue", "group_by": ["customer.email"]}));
    assert_eq!(cats, vec!["contact"]);
    assert!(!msg.contains("location"), "{msg}");
    // The recovery describes the anchor, whose joined customer columns are listed as reachable.
    assert_eq!(next.data().unwrap()["name"], "order");
    let (cats, _, _) = refused(json!({"name": "order_count", "filters": [{"column": "customer.phone", "op": "eq", "value": "1"}]}));
    assert_eq!(cats, vec!["contact"]);
}

#[test]
fn the_catastrophic_floor_is_always_blocked() {
    let (cats, _, _) = refused(json!({"name": "order_count", "filters": [{"column": "customer.password_hash", "op": "eq", "value": "x"}]}));
    assert_eq!(cats, vec!["credential"]);
    // A presence test reveals no value: allowed on any column (issue 33, item 9).
    let env = dry(json!({"name": "order_count", "filters": [{"column": "customer.password_hash", "op": "is_null"}]}));
    assert_eq!(env.status(), Status::Success, "{}", serde_json::to_string(&env).unwrap());
}

#[test]
fn grouping_or_filtering_by_unblocked_pii_withholds_small_groups() {
    // The policy decides (issue 33, item 9): demographic_protected is not
    // blocked by the demo policy, so grouping and filtering on the birth
    // date answer, with groups of fewer than 5 customers withheld.
    for args in [
        json!({"name": "order_count", "group_by": ["customer.date_of_birth"]}),
        json!({"name": "order_count", "filters": [{"column": "customer.date_of_birth", "op": "lt", "value": "1970-01-01"}]}),
    ] {
        let env = dry(args.clone());
        assert_eq!(env.status(), Status::Success, "{args}");
        let sql = env.data().unwrap()["sql"].as_str().unwrap().to_string();
        assert!(sql.contains("HAVING") && sql.contains("count(DISTINCT \"customer\".\"id\") >= 5"), "{args}: {sql}");
    }
    // Reading the table that holds PII, without revealing it, answers.
    let env = dry(json!({"name": "order_count", "group_by": ["customer.segment"]}));
    assert_eq!(env.status(), Status::Success);
}

#[test]
fn min_max_over_tagged_columns_is_refused() {
    use schemabrain::model::{load_project_from_files, FileKind};
    use schemabrain::project::Project;
    let files = vec![
        (FileKind::Entity, "entities/e.yaml".into(), "version: 1\nname: employee\nbinding: {single_table: hr.employees}\nidentity: id\ncolumns: [{name: id, type: integer}, {name: salary, type: \"decimal(10,2)\"}, {name: team, type: varchar}]\n".to_string()),
        (FileKind::Metric, "metrics/top.yaml".into(), "version: 1\nname: top_salary\nentity: employee\nmeasure: {agg: max, column: salary}\n".to_string()),
        (FileKind::Metric, "metrics/total.yaml".into(), "version: 1\nname: payroll\nentity: employee\nmeasure: {agg: sum, column: salary}\n".to_string()),
    ];
    let (model, diags) = load_project_from_files(&files);
    assert!(diags.is_empty(), "{diags}");
    let project = Project::from_parts(".".into(), model, None).unwrap();
    let top = tools::call(&project, "get_metric", &json!({"name": "top_salary", "dry_run": true}), Execution::DryRun);
    assert_eq!(top.status(), Status::Refused);
    assert_eq!(top.tool_error().unwrap().pii_categories(), ["financial".to_string()]);
    // Summing the same column is an aggregate, not a raw value: it answers.
    let total = tools::call(&project, "get_metric", &json!({"name": "payroll", "group_by": ["employee.team"], "dry_run": true}), Execution::DryRun);
    assert_eq!(total.status(), Status::Success);
}

fn fixture(files: &[(&str, &str)]) -> schemabrain::project::Project {
    use schemabrain::model::{load_project_from_files, FileKind};
    let files: Vec<(FileKind, std::path::PathBuf, String)> = files
        .iter()
        .map(|(path, text)| {
            let kind = if path.starts_with("entities") { FileKind::Entity } else if path.starts_with("joins") { FileKind::Join } else { FileKind::Metric };
            (kind, path.into(), text.to_string())
        })
        .collect();
    let (model, diags) = load_project_from_files(&files);
    assert!(diags.is_empty(), "{diags}");
    schemabrain::project::Project::from_parts(".".into(), model, None).unwrap()
}

#[test]
fn a_grain_without_any_time_dimension_is_degraded_and_unbucketed() {
    let p = fixture(&[
        ("entities/t.yaml", "version: 1\nname: ticket\nbinding: {single_table: s.t}\nidentity: id\ncolumns: [{name: id, type: integer}, {name: minutes, type: integer}]\n"),
        ("metrics/m.yaml", "version: 1\nname: minutes\nentity: ticket\nmeasure: {agg: sum, column: minutes}\n"),
    ]);
    let env = tools::call(&p, "get_metric", &json!({"name": "minutes", "time_grain": "month", "dry_run": true}), Execution::DryRun);
    assert_eq!(env.status(), Status::Degraded);
    assert_eq!(env.degradation_reason().unwrap().as_str(), "time_dimension_unavailable");
    let data = env.data().unwrap();
    assert_eq!(data["columns"].as_array().unwrap().len(), 1, "no bucket column");
    assert_eq!(data["time_dimension_resolution"], "unavailable");
}

#[test]
fn metrics_that_cannot_share_a_grain_are_grain_mismatch() {
    let p = fixture(&[
        ("entities/t.yaml", "version: 1\nname: ticket\nbinding: {single_table: s.t}\nidentity: id\ncolumns: [{name: id, type: integer}, {name: minutes, type: integer}, {name: opened_at, type: timestamp}]\n"),
        ("entities/u.yaml", "version: 1\nname: agent\nbinding: {single_table: s.a}\nidentity: id\ncolumns: [{name: id, type: integer}, {name: team, type: varchar}]\n"),
        ("metrics/m.yaml", "version: 1\nname: minutes\nentity: ticket\nmeasure: {agg: sum, column: minutes}\ntime_dimension: ticket.opened_at\ntime_grains: [day, month]\n"),
        ("metrics/n.yaml", "version: 1\nname: agents\nentity: agent\nmeasure: {agg: count, column: id}\n"),
    ]);
    let args = json!({"names": ["minutes", "agents"], "time_grain": "month", "dry_run": true});
    let env = tools::call(&p, "get_metric", &args, Execution::DryRun);
    let err = env.tool_error().expect("error");
    assert_eq!(err.kind().as_str(), "grain_mismatch");
    assert!(err.message().contains("agents"), "{}", err.message());
    let r = err.recovery();
    let next = tools::call(&p, r.suggested_tool().unwrap(), &Json::Object(r.suggested_args().cloned().unwrap()), Execution::DryRun);
    assert_eq!(next.status(), Status::Success);
}

#[test]
fn name_and_names_together_are_refused_with_a_fix() {
    let env = dry(json!({"name": "revenue", "names": ["order_count"]}));
    let err = env.tool_error().unwrap();
    assert_eq!(err.kind().as_str(), "malformed_name");
    let r = err.recovery();
    let mut next_args = Json::Object(r.suggested_args().cloned().unwrap());
    next_args["dry_run"] = true.into();
    let next = tools::call(demo_project(), "get_metric", &next_args, Execution::DryRun);
    assert_eq!(next.status(), Status::Success);
    assert_eq!(next.data().unwrap()["columns"].as_array().unwrap().len(), 2);
}

#[test]
fn join_keys_are_checked_on_their_own_entity_whatever_its_name() {
    // An entity whose name contains `__s` (the semi-join alias suffix) once had
    // its join keys' PII checked on another entity; the override here would
    // then have been missed.
    use schemabrain::model::{load_project_from_files, FileKind};
    let files = vec![
        (FileKind::Entity, "entities/p.yaml".into(), "version: 1\nname: profile\nbinding: {single_table: main.profiles}\nidentity: id\ncolumns: [{name: id, type: integer}, {name: ref_code, type: varchar}, {name: score, type: integer}]\n".to_string()),
        (FileKind::Entity, "entities/s.yaml".into(), "version: 1\nname: profile__sensitive\nbinding: {single_table: main.sensitive}\nidentity: id\ncolumns: [{name: id, type: integer}, {name: ref_code, type: varchar}, {name: tier, type: varchar}]\n".to_string()),
        (FileKind::Join, "joins/j.yaml".into(), "version: 1\nname: j\nsource_entity: profile\ntarget_entity: profile__sensitive\n\"on\": [{source: ref_code, target: ref_code}]\ncardinality: many_to_one\n".to_string()),
        (FileKind::Metric, "metrics/m.yaml".into(), "version: 1\nname: total_score\nentity: profile\nmeasure: {agg: sum, column: score}\n".to_string()),
        (FileKind::Policy, "pii_policy.yaml".into(), "version: 1\ncolumn_overrides:\n  main.sensitive.ref_code: {sensitivity: pii, categories: [credential]}\n".to_string()),
    ];
    let (model, diags) = load_project_from_files(&files);
    assert!(diags.is_empty(), "{diags}");
    let p = schemabrain::project::Project::from_parts(".".into(), model, None).unwrap();
    let env = tools::call(&p, "get_metric", &json!({"name": "total_score", "group_by": ["profile__sensitive.tier"], "dry_run": true}), Execution::DryRun);
    assert_eq!(env.status(), Status::Refused, "{}", serde_json::to_string(&env).unwrap());
    assert_eq!(env.tool_error().unwrap().pii_categories(), ["credential".to_string()]);
}

#[test]
fn oversized_lists_and_names_are_refused_naming_the_limit() {
    use schemabrain::ir::{MAX_FILTERS, MAX_GROUP_BY, MAX_IN_VALUES, MAX_NAME_CHARS};
    let filter = json!({"column": "order.status", "op": "eq", "value": "placed"});
    let values: Vec<String> = (0..=MAX_IN_VALUES).map(|i| format!("v{i}")).collect();
    // Distinct conditions (identical ones count once), on a decimal column: no merge fits.
    let distinct: Vec<Json> = (0..=MAX_FILTERS).map(|i| json!({"column": "order.amount", "op": "ne", "value": i})).collect();
    let group_bys: Vec<String> = (0..=MAX_GROUP_BY).map(|i| format!("customer.c{i}")).collect();
    let cases = [
        (json!({"name": "revenue", "filters": distinct}), "filters", MAX_FILTERS),
        (json!({"name": "revenue", "group_by": group_bys}), "group_by", MAX_GROUP_BY),
        (json!({"name": "revenue", "filters": [{"column": "order.status", "op": "in", "value": values}]}), "filters", MAX_IN_VALUES),
        (json!({"name": "revenue", "group_by": [format!("customer.{}", "c".repeat(MAX_NAME_CHARS))]}), "group_by", MAX_NAME_CHARS),
    ];
    for (args, argument, limit) in cases {
        let env = dry(args);
        let err = env.tool_error().unwrap_or_else(|| panic!("{argument}: answered"));
        assert_eq!(err.kind().as_str(), "malformed_name");
        let msg = err.message();
        assert!(msg.contains(&limit.to_string()) && msg.len() < 1_000, "{argument}: {msg}");
    }
    // At the bound, identical filters are one filter: the SQL has one predicate.
    let env = dry(json!({"name": "revenue", "filters": vec![filter; MAX_FILTERS]}));
    assert_eq!(env.status(), Status::Success, "{}", serde_json::to_string(&env).unwrap());
    let sql = env.data().unwrap()["sql"].as_str().unwrap().to_string();
    assert_eq!(sql.matches("\"status\" =").count(), 1, "{sql}");
}

/// A request whose SQL is far over the token cap (50 distinct `in` lists of
/// 1,000 ids each): the answer keeps its rows and drops the SQL text and
/// parameters, is `partial`, and says what was cut. The rows equal those of
/// the same request with one list (every list admits the same ids).
#[test]
fn over_the_token_cap_the_bulk_is_cut_before_the_answer() {
    use schemabrain::ir::{MAX_FILTERS, MAX_IN_VALUES};
    use schemabrain::tools::surface::invoke;
    use crate::common::{demo_engine, demo_project_with_catalog, limits};
    let engine = demo_engine();
    let ids: Vec<i64> = (1..MAX_IN_VALUES as i64).collect();
    // Distinct filters that all admit the same ids: each list adds one id
    // that no order has.
    let filters: Vec<Json> = (0..MAX_FILTERS)
        .map(|i| {
            let mut values = ids.clone();
            values.push(-1 - i as i64);
            json!({"column": "order.id", "op": "in", "value": values})
        })
        .collect();
    let args = json!({"name": "order_count", "group_by": ["order.status"], "filters": filters, "order_by": [{"column": "order.status"}]});
    // Not a test of speed: 50,000 parameters in a debug DuckDB on a busy
    // machine can pass the usual minute.
    let limits = || schemabrain::engine::Limits { timeout: std::time::Duration::from_secs(900), ..limits() };
    let env = invoke(demo_project_with_catalog(), "get_metric", &args, Execution::run(&engine, limits()));
    assert_eq!(env.status(), Status::Partial, "{}", serde_json::to_string(&env).unwrap().chars().take(2_000).collect::<String>());
    let data = env.data().unwrap();
    assert!(data.get("sql").is_none() && data.get("params").is_none(), "the bulk is cut");
    assert!(data["token_estimate"].as_u64().unwrap() <= 20_000);
    let notes = data["notes"].to_string();
    assert!(notes.contains("SQL text"), "{notes}");
    let one = json!({"name": "order_count", "group_by": ["order.status"], "filters": [{"column": "order.id", "op": "in", "value": ids}], "order_by": [{"column": "order.status"}]});
    let small = invoke(demo_project_with_catalog(), "get_metric", &one, Execution::run(&engine, limits()));
    assert_eq!(small.status(), Status::Success);
    assert_eq!(data["rows"], small.data().unwrap()["rows"], "the rows are the answer, kept whole");
    assert!(!data["rows"].as_array().unwrap().is_empty());
}

/// SQL written by hand, run on the demo warehouse, rows sorted.
fn hand(sql: &str) -> Vec<Vec<Json>> {
    use schemabrain::engine::{Cancel, Engine};
    let hand = schemabrain::sql::CompiledSql { sql: sql.to_string(), params: Vec::new(), dialect: "duckdb" };
    let mut rows = crate::common::demo_engine().execute(&hand, crate::common::limits(), &Cancel::never()).unwrap_or_else(|e| panic!("{sql}: {e}")).rows;
    rows.sort_by_key(|r| Json::Array(r.clone()).to_string());
    rows
}

/// Fails `bad` with `kind`, checks its recovery is a `must_obey`
/// correction, follows it on the demo warehouse and returns the answer's
/// rows (sorted) and the arguments followed.
fn follow_correction(bad: Json, kind: &str) -> (Vec<Vec<Json>>, Json) {
    use crate::common::{demo_engine, demo_project_with_catalog, limits};
    let env = dry(bad.clone());
    let err = env.tool_error().unwrap_or_else(|| panic!("{bad} should fail"));
    assert_eq!(err.kind().as_str(), kind, "{}", err.message());
    let next = env.next_action().unwrap();
    assert!(next.must_obey, "{kind}: the recovery is a correction: {}", serde_json::to_string(&env).unwrap());
    assert_eq!(next.tool.as_deref(), Some("get_metric"));
    let mut args = Json::Object(next.arguments.clone().unwrap());
    args.as_object_mut().unwrap().remove("dry_run");
    args["response_format"] = "detailed".into();
    let engine = demo_engine();
    let answer = schemabrain::tools::surface::invoke(demo_project_with_catalog(), "get_metric", &args, Execution::run(&engine, limits()));
    assert_eq!(answer.status(), Status::Success, "{}", serde_json::to_string(&answer).unwrap());
    let mut rows: Vec<Vec<Json>> = answer.data().unwrap()["rows"].as_array().unwrap().iter().map(|r| r.as_array().unwrap().clone()).collect();
    rows.sort_by_key(|r| Json::Array(r.clone()).to_string());
    (rows, args)
}

/// Issue 33: `group_by: ["segment"]` without its entity, where only
/// `customer.segment` fits, is corrected to it with the filter, order and
/// limit kept; the answer is the hand-written one.
#[test]
fn a_bare_group_by_is_corrected_to_its_only_column_keeping_the_rest() {
    let bad = json!({"name": "order_count", "group_by": ["segment"], "filters": [{"column": "order.is_gift", "op": "eq", "value": true}],
        "order_by": [{"column": "order_count", "direction": "desc"}], "limit": 100});
    let (rows, args) = follow_correction(bad, "malformed_name");
    assert_eq!(args["group_by"], json!(["customer.segment"]));
    assert_eq!(args["filters"], json!([{"column": "order.is_gift", "op": "eq", "value": true}]));
    assert_eq!((args["limit"].as_i64(), &args["order_by"]), (Some(100), &json!([{"column": "order_count", "direction": "desc"}])));
    let expected = hand("SELECT c.segment, count(o.id) FROM main.orders o JOIN main.customers c ON c.id = o.customer_id WHERE o.is_gift GROUP BY 1");
    assert!(!expected.is_empty());
    assert_eq!(rows, expected);
    // Two columns of that name (customer.country, address.country): no safe
    // correction, so a look-up; never the metric without its group-by.
    let env = dry(json!({"name": "order_count", "group_by": ["country"]}));
    let r = env.tool_error().unwrap().recovery();
    assert_eq!(r.suggested_tool(), Some("describe_entity"));
    assert!(!env.next_action().unwrap().must_obey);
}

/// A misspelt column and a misspelt entity are corrected to the unique
/// close match; the answer is the hand-written one.
#[test]
fn close_matches_are_corrections_whose_answers_are_the_question_asked() {
    let expected = hand("SELECT c.country, count(o.id) FROM main.orders o JOIN main.customers c ON c.id = o.customer_id WHERE o.status = 'shipped' GROUP BY 1");
    for (bad, kind) in [
        (json!({"name": "order_count", "group_by": ["customer.contry"], "filters": [{"column": "order.status", "op": "eq", "value": "shipped"}]}), "unknown_group_by_column"),
        (json!({"name": "order_count", "group_by": ["custmer.country"], "filters": [{"column": "order.status", "op": "eq", "value": "shipped"}]}), "unknown_name"),
        (json!({"name": "order_count", "group_by": ["customer.country"], "filters": [{"column": "order.statsu", "op": "eq", "value": "shipped"}]}), "unknown_filter_column"),
        (json!({"name": "order_count", "group_by": ["customer.country"], "filters": [{"column": "order.status", "op": "equals", "value": "shipped"}]}), "malformed_name"),
    ] {
        let (rows, _) = follow_correction(bad, kind);
        assert_eq!(rows, expected, "{kind}");
    }
}

/// Issue 33: a filter value that is not a date gets a look-up of the
/// column's entity (its type and examples), not the metric with no filter.
#[test]
fn a_value_that_is_not_a_date_leads_to_a_look_up_not_a_dropped_filter() {
    let env = dry(json!({"name": "revenue", "group_by": ["customer.segment"], "filters": [{"column": "order.ordered_at", "op": "gte", "value": "not-a-date"}]}));
    let err = env.tool_error().unwrap();
    assert_eq!(err.kind().as_str(), "malformed_name");
    assert_eq!(err.recovery().suggested_tool(), Some("describe_entity"));
    assert_eq!(err.recovery().suggested_args().unwrap()["name"], "order");
    let next = env.next_action().unwrap();
    assert!(!next.must_obey);
    assert!(!serde_json::to_string(&env).unwrap().contains("\"get_metric\""), "no get_metric is suggested");
}

/// Issue 33 item 2: 10,000 identical filters are one condition; 60
/// distinct ones over the limit of 50 are refused with a correction that
/// writes them as one `in` per column (the values every filter admits) and
/// one `not_in` (every excluded value); followed, it answers what the
/// hand-written SQL of all 60 answers.
#[test]
fn identical_filters_are_one_and_distinct_ones_over_the_limit_merge_per_column() {
    let same = vec![json!({"column": "order.status", "op": "eq", "value": "placed"}); 10_000];
    let env = dry(json!({"name": "order_count", "filters": same}));
    assert_eq!(env.status(), Status::Success, "{}", env.tool_error().map(|e| e.message().to_string()).unwrap_or_default());
    let mut filters: Vec<Json> = (0..30).map(|i| json!({"column": "order.status", "op": "in", "value": ["shipped", "placed", format!("nothing_{i}")]})).collect();
    filters.extend((1..=30).map(|i| json!({"column": "order.id", "op": "ne", "value": i})));
    let bad = json!({"name": "order_count", "group_by": ["order.status"], "filters": filters});
    let (rows, args) = follow_correction(bad, "malformed_name");
    let merged = args["filters"].as_array().unwrap();
    assert_eq!(merged.len(), 2, "{}", args["filters"]);
    let expected = hand("SELECT status, count(id) FROM main.orders WHERE status IN ('shipped', 'placed') AND id NOT IN (SELECT * FROM range(1, 31)) GROUP BY 1");
    assert_eq!(rows, expected);
    // Nothing merges (distinct bounds on a decimal): a look-up, never fewer filters.
    let bounds: Vec<Json> = (0..60).map(|i| json!({"column": "order.amount", "op": "ne", "value": i})).collect();
    let env = dry(json!({"name": "order_count", "filters": bounds}));
    assert_ne!(env.tool_error().unwrap().recovery().suggested_tool(), Some("get_metric"));
    assert!(!env.next_action().unwrap().must_obey);
}

/// Issue 33: a 2 MB metric name is not echoed back: the message quotes 200
/// characters, no suggested call or next action repeats it, and the whole
/// answer (text mirror included, which is this JSON) stays small.
#[test]
fn a_two_megabyte_name_is_answered_in_a_few_kilobytes() {
    use schemabrain::tools::surface::invoke;
    let name = "m".repeat(2 << 20);
    for args in [json!({"name": name}), json!({"name": "revenue", "group_by": [name]}), json!({"name": "revenue", "filters": [{"column": "order.status", "op": "eq", "value": name}]})] {
        let env = invoke(demo_project(), "get_metric", &args, Execution::DryRun);
        assert!(env.tool_error().is_some());
        assert_recovery_keeps_question(&args, &env);
        let wire = serde_json::to_string(&env).unwrap();
        assert!(wire.len() < 4_000, "answer of {} bytes", wire.len());
        assert!(!wire.contains(&"m".repeat(300)), "the name is not repeated");
    }
}

/// The ambiguous-path recovery keeps the whole request and adds the via;
/// it is a choice among meanings, so not `must_obey`.
#[test]
fn the_ambiguous_path_recovery_keeps_the_request_and_adds_the_via() {
    let bad = json!({"name": "revenue", "group_by": ["region.name", "customer.segment"], "filters": [{"column": "order.status", "op": "eq", "value": "shipped"}],
        "time_grain": "year", "order_by": [{"column": "revenue", "direction": "desc"}], "limit": 7});
    let env = dry(bad.clone());
    let r = env.tool_error().unwrap().recovery();
    let suggested = Json::Object(r.suggested_args().cloned().unwrap());
    assert_eq!(assert_keeps_question(&bad, &suggested), Some("via"));
    assert!(!env.next_action().unwrap().must_obey);
}
