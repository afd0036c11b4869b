//! Retry escalation (seed 004, "Retry escalation"): the first failures of a
//! call get the tool's own deterministic recovery; once the *same* call has
//! failed [`ESCALATE_AFTER`] times in a row, the recovery changes instead of
//! repeating itself: it points at a discovery tool that answers, and the
//! message says to stop retrying and re-plan (or ask the user).
//!
//! A [`RetryTracker`] keeps one state per client session (the HTTP
//! `Mcp-Session-Id`; stdio and the CLI are one client), so one client's
//! failures never trip another's breaker. A call is keyed on its canonical
//! arguments (object keys sorted at every level, no whitespace), so
//! reordering keys does not make a new call. It forgets a call once it
//! succeeds and holds a bounded number of entries.
//!
//! Architecture invariant: rewrites only `error.message` and
//! `error.recovery`, in place (`Envelope::map_error`), so escalation never
//! breaks the charter's invariants.

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
    /// Calls that timed out, and when.
    timeouts: Mutex<HashMap<String, std::time::Instant>>,
}

/// The key of one client's call: client, tool and canonical arguments.
fn key_of(client: &str, tool: &str, args: &Json) -> String {
    let mut key = String::with_capacity(64);
    key.push_str(client);
    key.push('\u{0}');
    key.push_str(tool);
    key.push('\u{0}');
    canonical(args, &mut key);
    key
}

/// `value` as compact JSON with every object's keys sorted, so two
/// spellings of the same arguments give the same text.
pub fn canonical(value: &Json, out: &mut String) {
    match value {
        Json::Object(m) => {
            let mut keys: Vec<&String> = m.keys().collect();
            keys.sort_unstable();
            out.push('{');
            for (i, k) in keys.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Json::String(k.clone()).to_string());
                out.push(':');
                if let Some(v) = m.get(k) {
                    canonical(v, out);
                }
            }
            out.push('}');
        }
        Json::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

impl RetryTracker {
    pub fn new() -> Self {
        Self::default()
    }

    /// The circuit breaker, asked before a call runs: the same call that has
    /// failed [`BREAK_AFTER`] times in a row, or a query that timed out less
    /// than [`TIMEOUT_COOLDOWN`] ago, is refused without running, saying why
    /// and when it may run again.
    pub fn breaker(&self, client: &str, tool: &str, args: &Json) -> Option<Envelope> {
        use crate::envelope::{FailureKind, Recovery, ToolError};
        let key = key_of(client, tool, args);
        let (next, next_args) = broader_call(tool, args);
        if let Some(at) = self.timeouts.lock().unwrap_or_else(|p| p.into_inner()).get(&key).copied() {
            let since = at.elapsed();
            if since < TIMEOUT_COOLDOWN {
                let wait = (TIMEOUT_COOLDOWN - since).as_secs().max(1);
                let message = format!(
                    "This exact {tool} call timed out {}s ago and would again; it is not run. Narrow it (filters, a coarser grain, a smaller limit), or retry the same call after {wait}s.",
                    since.as_secs()
                );
                let env = Envelope::error(ToolError::new(FailureKind::CostCapExceeded, message, Recovery::call(next, next_args.clone())));
                return Some(env.with_next_action(crate::envelope::NextAction::instruct(
                    format!("Narrow the request, or wait {wait}s before sending this exact call again."),
                    None,
                    false,
                )));
            }
        }
        let count = self.failures.lock().unwrap_or_else(|p| p.into_inner()).get(&key).copied().unwrap_or(0);
        if count >= BREAK_AFTER {
            let message = format!(
                "Circuit open: this exact {tool} call failed {count} times in a row and is no longer run. Change the arguments, re-plan from {next}, or ask the user."
            );
            let env = Envelope::error(ToolError::new(FailureKind::CostCapExceeded, message, Recovery::call(next, next_args.clone())));
            return Some(env.with_next_action(crate::envelope::NextAction::call(next, next_args, "Re-plan from here, or ask the user, or abort.", false)));
        }
        None
    }

    /// Records the outcome of `tool(args)` and escalates the recovery of a
    /// call that keeps failing the same way.
    pub fn observe(&self, client: &str, tool: &str, args: &Json, env: Envelope) -> Envelope {
        let key = key_of(client, tool, args);
        // A client's cancellation also reads TIMEOUT; only a real time-out cools down.
        if env.tool_error().is_some_and(|e| e.code() == crate::envelope::ErrorCode::Timeout && !e.message().contains("cancel")) {
            let mut t = self.timeouts.lock().unwrap_or_else(|p| p.into_inner());
            if t.len() >= MAX_TRACKED {
                t.clear();
            }
            t.insert(key.clone(), std::time::Instant::now());
        }
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
    let (next, next_args) = broader_call(tool, args);
    let redirected = next_args.clone();
    env.map_error(|err| {
        err.append_message(&format!(
            "This exact {tool} call has now failed {count} times; do not repeat it. Re-plan from {next} (or ask the user) instead."
        ));
        err.redirect(next, next_args);
    })
    // Seed 004: after the retries, autonomy: the broader call is one option.
    .map_next_action(|n| {
        n.tool = Some(next.to_string());
        n.arguments = redirected.as_object().cloned();
        n.instruction = format!("Stop repeating this call. Re-plan: {next} shows what exists, or ask the user, or abort.");
        n.must_obey = false;
    })
}

/// Identical failing calls after which the call is no longer run at all.
pub const BREAK_AFTER: u32 = 6;

/// How long an identical query that just timed out is refused.
pub const TIMEOUT_COOLDOWN: std::time::Duration = std::time::Duration::from_secs(60);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canonical_ignores_key_order_and_keeps_values_apart() {
        let text = |v: &Json| {
            let mut s = String::new();
            canonical(v, &mut s);
            s
        };
        let a: Json = serde_json::from_str(r#"{"name": "m", "filters": [{"op": "eq", "column": "c", "value": 1}]}"#).unwrap_or_default();
        let b: Json = serde_json::from_str(r#"{"filters":[{"value":1,"column":"c","op":"eq"}],"name":"m"}"#).unwrap_or_default();
        assert_eq!(text(&a), text(&b));
        let c: Json = serde_json::from_str(r#"{"filters":[{"value":2,"column":"c","op":"eq"}],"name":"m"}"#).unwrap_or_default();
        assert_ne!(text(&a), text(&c));
        // Array order is meaning (group_by order), kept.
        assert_ne!(text(&serde_json::json!([1, 2])), text(&serde_json::json!([2, 1])));
        // Keys that look alike once quoted stay apart.
        assert_ne!(text(&serde_json::json!({"a\"": 1})), text(&serde_json::json!({"a": 1})));
    }

    #[test]
    fn one_client_s_failures_leave_another_alone() {
        use crate::envelope::{FailureKind, Recovery, ToolError};
        let t = RetryTracker::new();
        let args = serde_json::json!({"name": "x"});
        let failing = || Envelope::error(ToolError::new(FailureKind::UnknownMetric, "no", Recovery::none()));
        for _ in 0..BREAK_AFTER {
            let _ = t.observe("a", "get_metric", &args, failing());
        }
        assert!(t.breaker("a", "get_metric", &args).is_some());
        assert!(t.breaker("b", "get_metric", &args).is_none());
    }
}
