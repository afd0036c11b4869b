//! Seed 004's `next_action` on every answer: on an error, the recovery as a
//! call to copy (`must_obey: true` only when it is a correction: the same
//! request with only its faulty part fixed, so the answer is the one asked
//! for; a look-up or a choice among meanings is `must_obey: false`);
//! on an answer, the natural next call of the workflow, built from the
//! answer's own data (`must_obey: false`: a suggestion; the agent decides
//! whether it has what it needs). Retry escalation (`escalation`) turns an
//! error's step into `must_obey: false` with a broader call.
//!
//! Architecture invariant: reads the envelope and the call only; no model.

use serde_json::{json, Value as Json};

use crate::envelope::{Envelope, NextAction, Status};

/// The longest caller text an answer may echo in a suggested call, in
/// characters (a name's limit): a longer value is never repeated back.
pub const MAX_ECHOED_CHARS: usize = crate::ir::MAX_NAME_CHARS;

/// Whether `v` holds a string (or key) longer than [`MAX_ECHOED_CHARS`].
pub fn oversized(v: &Json) -> bool {
    let long = |s: &str| s.len() > MAX_ECHOED_CHARS && s.chars().count() > MAX_ECHOED_CHARS;
    match v {
        Json::String(s) => long(s),
        Json::Array(items) => items.iter().any(oversized),
        Json::Object(m) => m.iter().any(|(k, v)| long(k) || oversized(v)),
        _ => false,
    }
}

fn oversized_map(m: &serde_json::Map<String, Json>) -> bool {
    m.iter().any(|(k, v)| k.chars().count() > MAX_ECHOED_CHARS || oversized(v))
}

/// Attaches the next action to `env`, the answer of `tool(args)`.
pub fn attach(tool: &str, args: &Json, env: Envelope) -> Envelope {
    let env = bound_recovery(env);
    let next = match env.tool_error() {
        Some(err) => match err.recovery().suggested_tool() {
            Some(t) if err.recovery().is_correction() => NextAction::call(
                t,
                Json::Object(err.recovery().suggested_args().cloned().unwrap_or_default()),
                format!("Call {t} with exactly these arguments: it is your request with only the faulty part corrected."),
                true,
            ),
            Some(t) => NextAction::call(
                t,
                Json::Object(err.recovery().suggested_args().cloned().unwrap_or_default()),
                format!("Call {t} to see what to choose (or consider this call: it changes the request, so check it is the question asked), then call again with only the faulty part changed."),
                false,
            ),
            None => NextAction::instruct("Change the faulty part as error.message says and keep the rest of the request, then call again; the same call fails the same way.", None, false),
        },
        None => answered(tool, args, &env),
    };
    let next = if next.arguments.as_ref().is_some_and(oversized_map) {
        NextAction::instruct(format!("{} (The arguments are not repeated here: a value is over {MAX_ECHOED_CHARS} characters.)", next.instruction), None, false)
    } else {
        next
    };
    env.with_next_action(next)
}

/// A recovery never repeats a caller's value over [`MAX_ECHOED_CHARS`]: such
/// a suggested call becomes a look-up of the same tool's vocabulary
/// (list_metrics for get_metric), or no call, keeping the fuzzy matches.
fn bound_recovery(env: Envelope) -> Envelope {
    let too_long = env.tool_error().and_then(|e| e.recovery().suggested_args()).is_some_and(oversized_map);
    if !too_long {
        return env;
    }
    env.map_error(|e| {
        let fuzzy: Vec<String> = e.recovery().fuzzy_matches().iter().map(|f| crate::model::echo(f)).collect();
        let look_up = match e.recovery().suggested_tool() {
            Some("get_metric") => crate::envelope::Recovery::call("list_metrics", json!({})),
            _ => crate::envelope::Recovery::none(),
        };
        *e = e.clone().with_recovery(look_up.with_fuzzy_matches(fuzzy));
    })
}

fn first<'a>(data: &'a Json, list: &str) -> Option<&'a Json> {
    data.get(list).and_then(Json::as_array).and_then(|a| a.first())
}

fn text<'a>(v: Option<&'a Json>, key: &str) -> Option<&'a str> {
    v.and_then(|x| x.get(key)).and_then(Json::as_str)
}

/// The step after an answer.
fn answered(tool: &str, args: &Json, env: &Envelope) -> NextAction {
    let empty = Json::Null;
    let data = env.data().unwrap_or(&empty);
    let choose = |t: &str, a: Json, why: &str| NextAction::call(t, a, why.to_string(), false);
    let step = match tool {
        "list_metrics" => text(first(data, "items"), "name").map(|n| choose("get_metric", json!({"name": n}), "Ask for a metric by name from items; add group_by, filters or time_grain as the question needs.")),
        "list_entities" => text(first(data, "items"), "name").map(|n| choose("describe_entity", json!({"name": n}), "Describe the entity the question is about (its columns, metrics and joins).")),
        "list_joins" => {
            let j = first(data, "items");
            text(j, "source_entity").zip(text(j, "target_entity")).map(|(a, b)| choose("resolve_join", json!({"entity_a": a, "entity_b": b}), "Resolve the join between the two entities the question spans."))
        }
        "describe_entity" => match data.get("metrics").and_then(Json::as_array).and_then(|m| m.first()).and_then(|m| m.as_str().or_else(|| m.get("name").and_then(Json::as_str))) {
            Some(m) => Some(choose("get_metric", json!({"name": m}), "Ask for one of this entity's metrics, grouped by its columns as needed.")),
            None => Some(choose("list_metrics", json!({}), "This entity anchors no metric; find one that reaches it.")),
        },
        "find_relevant_entities" => text(first(data, "hits"), "name").map(|n| choose("describe_entity", json!({"name": n}), "Describe the best hit to see its columns and metrics.")),
        "find_relevant_tables" => text(first(data, "hits"), "qualified_name").map(|q| choose("describe_table", json!({"qualified_name": q}), "Describe the best hit to see its columns.")),
        "describe_table" => match data.get("entity").and_then(Json::as_str) {
            Some(e) => Some(choose("describe_entity", json!({"name": e}), "This table is a modelled entity: use its metrics rather than the raw table.")),
            None => text(Some(data), "qualified_name").map(|q| choose("get_example_queries", json!({"qualified_name": q}), "See what can be asked about this table.")),
        },
        "describe_column" => text(Some(data), "table").map(|t| choose("describe_table", json!({"qualified_name": t}), "Describe the column's table.")),
        "get_example_queries" => first(data, "queries").and_then(|q| {
            let t = q.get("tool").and_then(Json::as_str)?;
            Some(choose(t, q.get("arguments").cloned().unwrap_or(Json::Null), "Run the example closest to the question, adapting its arguments."))
        }),
        "suggest_joins" | "resolve_join" => Some(choose("list_metrics", json!({}), "Ask a metric grouped across these entities; get_metric walks the join itself.")),
        "get_metric" => Some(metric_step(args, env, data)),
        "list_schemas" => text(first(data, "items"), "name").map(|n| choose("list_tables", json!({"schema": n}), "List the tables of the schema the question is about.")),
        "list_tables" => text(first(data, "items"), "qualified_name").map(|q| choose("get_table_schema", json!({"qualified_name": q}), "See the table's columns before writing SQL against it.")),
        "get_table_schema" => text(Some(data), "qualified_name").map(|q| {
            choose("query_sql", json!({"sql": format!("SELECT count(*) FROM {q}"), "dry_run": true}), "Write one SELECT over the columns shown (PII columns may only be counted); check it with dry_run first.")
        }),
        "materialize_sql" | "create_view" => text(Some(data), "qualified_name").map(|q| {
            choose("query_sql", json!({"sql": format!("SELECT * FROM {q} LIMIT 10")}), "Read back what was written.")
        }),
        "sample_table" | "get_stats" | "profile_table" | "detect_pii" | "explain_sql" | "preview_masked" => {
            let q = text(Some(data), "qualified_name").map(str::to_string);
            let sql = match q {
                Some(q) => format!("SELECT count(*) FROM {q}"),
                None => text(Some(data), "sql").unwrap_or("SELECT 1").to_string(),
            };
            Some(choose("query_sql", json!({"sql": sql, "dry_run": true}), "Write one SELECT for the question over what this showed (PII columns may only be counted); check it with dry_run first."))
        }
        // A plan pages and runs as the SQL it became: the same call again.
        "query_sql" | "query_plan" => Some(match data.get("page_token").and_then(Json::as_str) {
            Some(t) => {
                let mut more = args.clone();
                if let Some(m) = more.as_object_mut() {
                    m.insert("page_token".into(), json!(t));
                }
                NextAction::call(tool, more, "More rows: call again with this page_token and the same statement, or answer from the rows so far if they suffice.", false)
            }
            None if data.get("valid").is_some() => {
                let mut run = args.clone();
                if let Some(m) = run.as_object_mut() {
                    m.remove("dry_run");
                }
                NextAction::call(tool, run, "The statement passed every check: run it.", false)
            }
            None => NextAction::instruct("Answer from data.rows (columns in data.columns); these are all the rows. Say the number came from free SQL, not a governed metric.", None, false),
        }),
        _ => None,
    };
    step.unwrap_or_else(|| match env.follow_up_hints().and_then(|h| h.first()) {
        Some(t) => NextAction::call(t, json!({}), format!("Nothing matched; {t} lists what there is."), false),
        None => NextAction::instruct("Nothing more to do for this call.", None, false),
    })
}

fn metric_step(args: &Json, env: &Envelope, data: &Json) -> NextAction {
    // `truncated` alone may be the caller's own limit; `partial` is a cut answer.
    if let Some(t) = data.get("page").and_then(|p| p.get("page_token")).and_then(Json::as_str) {
        let mut more = args.clone();
        if let Some(m) = more.as_object_mut() {
            m.insert("page_token".into(), json!(t));
        }
        return NextAction::call("get_metric", more, "More rows: call again with this page_token and the same arguments, or answer from the rows so far if they suffice.", false);
    }
    match env.status() {
        Status::Partial => {
            let mut more = args.clone();
            if let Some(m) = more.as_object_mut() {
                m.insert("response_format".into(), json!("detailed"));
            }
            NextAction::call(
                "get_metric",
                more,
                "The answer was cut (data.notes says what): narrow the request (filters, a coarser grain, a limit) or ask for response_format=detailed.",
                false,
            )
        }
        Status::Empty => NextAction::instruct("No rows match: the answer is empty, not an error. Check the filters' values with describe_entity before concluding.", None, false),
        Status::Degraded => NextAction::instruct("Answer with data.rows, and tell the user what data.notes says about this answer's limits.", None, true),
        _ => NextAction::instruct("Answer the user from data.rows (columns in data.columns); the numbers are final.", None, false),
    }
}
