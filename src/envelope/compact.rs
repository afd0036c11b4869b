//! The compact JSON Schema of the envelope that MCP publishes as each tool's
//! `outputSchema`. The full schema (`envelope_json_schema`, 7.7 KB with every
//! description and closed vocabulary) repeated on twelve tools was 92 KB of a
//! 109 KB `tools/list`, about 23,000 tokens in every agent's context on every
//! turn. This one keeps what a client validates (the required keys, the
//! status and confidence vocabularies, the charter version) and lets each
//! tool type its own `data`; the full schema stays the reference (docs,
//! `tests/it/envelope.rs`).
//!
//! Leaf module like the rest of `envelope`: the caller passes `data`'s schema.

use serde_json::{json, Value};

use super::{Confidence, Status, CHARTER_VERSION};

/// The envelope with `data` typed by `data` (its non-null form; null is
/// always allowed, as on error). Every key is required; only the ones whose
/// values a client branches on are typed, to stay small.
pub fn compact_envelope_schema(data: Value) -> Value {
    let statuses: Vec<&str> = [Status::Success, Status::Empty, Status::Partial, Status::Degraded, Status::Error, Status::Refused]
        .iter()
        .map(|s| s.as_str())
        .collect();
    let mut confidences: Vec<Value> = [Confidence::High, Confidence::Medium, Confidence::Low]
        .iter()
        .map(|c| serde_json::to_value(c).unwrap_or(Value::Null))
        .collect();
    confidences.push(Value::Null);
    json!({
        "type": "object",
        "required": ["status", "data", "error", "confidence", "provenance", "follow_up_hints", "degradation_reason", "charter_version", "trace_id"],
        "properties": {
            "status": {"enum": statuses},
            "data": {"anyOf": [data, {"type": "null"}]},
            "error": {"type": ["object", "null"]},
            "confidence": {"enum": confidences},
            "charter_version": {"const": CHARTER_VERSION}
        }
    })
}
