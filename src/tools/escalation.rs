//! Retry escalation (seed 004, "Retry escalation"): the first failures of a
//! call get the tool's own deterministic recovery; once the *same* call has
//! failed [`ESCALATE_AFTER`] times in a row, the recovery changes instead of
//! repeating itself: it points at a discovery tool that answers, and the
//! message says to stop retrying and re-plan (or ask the user).
//!
//! A [`RetryTracker`] is per server (one session on stdio); it forgets a call
//! once it succeeds and holds a bounded number of entries.
//!
//! Architecture invariant: rewrites only `error.message` and
//! `error.recovery`; the envelope is re-read through its checked
//! deserializer, so escalation never breaks the charter's invariants.

use std::collections::HashMap;
use std::sync::Mutex;

use serde_json::{json, Value as Json};

use crate::envelope::{Envelope, Status};

/// Identical failing calls before the recovery changes.
pub const ESCALATE_AFTER: u32 = 3;

/// Distinct failing calls remembered at most; the map is cleared beyond.
const MAX_TRACKED: usize = 4096;

#[derive(Default)]
pub struct RetryTracker {
    failures: Mutex<HashMap<String, u32>>,
}

impl RetryTracker {
    pub fn new() -> Self {
        Self::default()
    }

    /// Records the outcome of `tool(args)` and escalates the recovery of a
    /// call that keeps failing the same way.
    pub fn observe(&self, tool: &str, args: &Json, env: Envelope) -> Envelope {
        // serde_json with preserve_order keeps key order; canonical enough
        // for "the same call" since agents resend the same JSON.
        let key = format!("{tool}\u{0}{args}");
        let failed = matches!(env.status(), Status::Error);
        let count = {
            let mut map = self.failures.lock().unwrap_or_else(|p| p.into_inner());
            if !failed {
                map.remove(&key);
                return env;
            }
            if map.len() >= MAX_TRACKED && !map.contains_key(&key) {
                map.clear();
            }
            let c = map.entry(key).or_insert(0);
            *c += 1;
            *c
        };
        if count < ESCALATE_AFTER {
            return env;
        }
        escalate(tool, args, env, count)
    }
}

/// The discovery call that answers without the failing arguments.
fn broader_call(tool: &str, args: &Json) -> (&'static str, Json) {
    let words = |k: &str| args.get(k).and_then(Json::as_str).map(str::to_string);
    match tool {
        "get_metric" | "list_metrics" => ("list_metrics", json!({})),
        "describe_entity" | "resolve_join" | "list_entities" | "list_joins" => ("list_entities", json!({})),
        _ => {
            let q = words("query").or_else(|| words("qualified_name")).unwrap_or_else(|| "*".into());
            let q = if q.trim().is_empty() || q.len() > 200 { "*".to_string() } else { q.replace('.', " ") };
            ("find_relevant_entities", json!({"query": q}))
        }
    }
}

fn escalate(tool: &str, args: &Json, env: Envelope, count: u32) -> Envelope {
    let Ok(mut wire) = serde_json::to_value(&env) else { return env };
    let Some(err) = wire.get_mut("error").and_then(Json::as_object_mut) else { return env };
    let (next, next_args) = broader_call(tool, args);
    let old = err.get("message").and_then(Json::as_str).unwrap_or_default().to_string();
    err.insert(
        "message".into(),
        format!(
            "{old} This exact {tool} call has now failed {count} times; do not repeat it. Re-plan from {next} (or ask the user) instead."
        )
        .into(),
    );
    if let Some(rec) = err.get_mut("recovery").and_then(Json::as_object_mut) {
        rec.insert("suggested_tool".into(), next.into());
        rec.insert("suggested_args".into(), next_args);
    }
    serde_json::from_value(wire).unwrap_or(env)
}
