//! The response envelope, its invariant-keeping constructors, its checked
//! deserialization and its JSON Schema.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde::de::{Deserializer, Error as _};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::error::{RawToolError, Refusal, ToolError};
use super::kinds::{DegradationReason, Status};
use super::next_action::NextAction;
use super::trust::{Confidence, Provenance};

/// The charter version every envelope announces.
pub const CHARTER_VERSION: &str = "1.2";

/// Most follow-up hints an envelope carries (charter: one to three tool names).
const MAX_FOLLOW_UP_HINTS: usize = 3;

/// The response every SchemaBrain MCP tool returns (charter v1.2). Invariants: status error or refused carries an error and null data; success carries non-null data; every other status carries a null error; degradation_reason is set exactly when status is degraded; status refused goes with error kinds pii_blocked, policy_blocked and allowlist_violation, status error with every other kind.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
// Mirrors the strictness of the raw wire type that deserializes it.
#[schemars(deny_unknown_fields)]
pub struct Envelope {
    /// Outcome of the call; decides which other fields are set.
    status: Status,
    /// Tool-specific payload: always set on success, null on error and refused, optional otherwise.
    data: Option<Value>,
    /// What failed and what to try next; set exactly when status is error or refused.
    error: Option<ToolError>,
    /// Trust bucket for the payload; null when confidence does not apply.
    confidence: Option<Confidence>,
    /// Where inferred or generated payload content came from.
    provenance: Option<Provenance>,
    /// One to three tool names worth calling next.
    #[schemars(length(min = 1, max = 3))]
    follow_up_hints: Option<Vec<String>>,
    /// Why the response is degraded; set exactly when status is degraded.
    degradation_reason: Option<DegradationReason>,
    /// Version of the charter this envelope follows.
    #[schemars(extend("const" = CHARTER_VERSION))]
    charter_version: &'static str,
    /// Identifier of this call, for logs and the audit trail.
    trace_id: String,
    /// Seed 004: the one step to take next (a call to copy, or a URI), and whether it must be followed.
    // Additive to the charter's nine fields: absent rather than null when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    next_action: Option<NextAction>,
    /// Server-made id of this answer's audit record; echo it exactly (`schemabrain audit show FINGERPRINT`). Absent when the call was not audited.
    #[serde(skip_serializing_if = "Option::is_none")]
    fingerprint: Option<String>,
}

impl Envelope {
    fn new(status: Status, data: Option<Value>, error: Option<ToolError>) -> Self {
        Self {
            status,
            data,
            error,
            confidence: None,
            provenance: None,
            follow_up_hints: None,
            degradation_reason: None,
            charter_version: CHARTER_VERSION,
            trace_id: new_trace_id(),
            next_action: None,
            fingerprint: None,
        }
    }

    /// The requested data. `success` must carry data, so a JSON `null` payload
    /// yields an `empty` envelope instead.
    pub fn success(data: Value) -> Self {
        match non_null(data) {
            Some(data) => Self::new(Status::Success, Some(data), None),
            None => Self::empty(None),
        }
    }

    /// No matches: not an error. The payload (e.g. `[]`) is optional.
    pub fn empty(data: Option<Value>) -> Self {
        Self::new(Status::Empty, data.and_then(non_null), None)
    }

    /// Some data, with caveats (a JSON `null` payload means none).
    pub fn partial(data: Value) -> Self {
        Self::new(Status::Partial, non_null(data), None)
    }

    /// Data from a fallback path; the reason is what makes it degraded.
    pub fn degraded(data: Value, reason: DegradationReason) -> Self {
        let mut envelope = Self::new(Status::Degraded, non_null(data), None);
        envelope.degradation_reason = Some(reason);
        envelope
    }

    /// The tool could not process the call. [`ToolError::new`] only takes
    /// non-refusal kinds, so this is status `error`; the one way to hold a
    /// refusal-kind `ToolError` here is to clone it out of a refused envelope,
    /// and re-wrapping it keeps status `refused` rather than break the
    /// kind/status invariant.
    pub fn error(error: ToolError) -> Self {
        let status = if error.kind().is_refusal() {
            Status::Refused
        } else {
            Status::Error
        };
        Self::new(status, None, Some(error))
    }

    /// The tool ran and chose to refuse.
    pub fn refused(refusal: Refusal) -> Self {
        Self::new(Status::Refused, None, Some(refusal.0))
    }

    pub fn with_confidence(mut self, confidence: Confidence) -> Self {
        self.confidence = Some(confidence);
        self
    }

    pub fn with_provenance(mut self, provenance: Provenance) -> Self {
        self.provenance = Some(provenance);
        self
    }

    /// Suggests tools to call next. The charter allows one to three names:
    /// names past the third are dropped, and an empty slice clears the hints.
    pub fn with_follow_up_hints(mut self, tools: &[&str]) -> Self {
        self.follow_up_hints = (!tools.is_empty()).then(|| {
            tools
                .iter()
                .take(MAX_FOLLOW_UP_HINTS)
                .map(|tool| tool.to_string())
                .collect()
        });
        self
    }

    pub fn with_next_action(mut self, next: NextAction) -> Self {
        self.next_action = Some(next);
        self
    }

    /// Edits the next action in place (retry escalation); no-op without one.
    pub fn map_next_action(mut self, edit: impl FnOnce(&mut NextAction)) -> Self {
        if let Some(next) = self.next_action.as_mut() {
            edit(next);
        }
        self
    }

    pub fn next_action(&self) -> Option<&NextAction> {
        self.next_action.as_ref()
    }

    /// Links the answer to its audit record.
    pub fn with_fingerprint(mut self, fingerprint: impl Into<String>) -> Self {
        self.fingerprint = Some(fingerprint.into());
        self
    }

    pub fn fingerprint(&self) -> Option<&str> {
        self.fingerprint.as_deref()
    }

    /// Replaces the generated trace id, e.g. with the caller's request id.
    pub fn with_trace_id(mut self, trace_id: impl Into<String>) -> Self {
        self.trace_id = trace_id.into();
        self
    }

    /// Edits an object payload in place (shaping: trimming lists, adding
    /// notes). Status and error stay as they are, so no edit can break the
    /// envelope's invariants; a payload that is not an object is left alone.
    pub fn map_data_object(mut self, edit: impl FnOnce(&mut serde_json::Map<String, Value>)) -> Self {
        if let Some(Value::Object(map)) = self.data.as_mut() {
            edit(map);
        }
        self
    }

    /// A successful answer whose data was cut (size cap) becomes `partial`;
    /// any other status is kept (a degraded answer stays degraded, with its
    /// reason, and says in its notes what was cut).
    pub fn mark_partial(mut self) -> Self {
        if self.status == Status::Success && self.data.is_some() {
            self.status = Status::Partial;
        }
        self
    }

    /// Edits the error in place (retry escalation); no-op without one.
    pub fn map_error(mut self, edit: impl FnOnce(&mut ToolError)) -> Self {
        if let Some(error) = self.error.as_mut() {
            edit(error);
        }
        self
    }

    pub fn status(&self) -> Status {
        self.status
    }

    /// The envelope as JSON (what it serialises to), its payload moved in
    /// rather than copied value by value through a serializer.
    pub fn into_json(mut self) -> Value {
        let data = self.data.take();
        let mut json = serde_json::to_value(&self).unwrap_or(Value::Null);
        if let (Some(data), Value::Object(fields)) = (data, &mut json) {
            // Replaces `"data": null` where it stands: the field order is kept.
            fields.insert("data".to_string(), data);
        }
        json
    }

    pub fn data(&self) -> Option<&Value> {
        self.data.as_ref()
    }

    /// The error object (named apart from the [`Envelope::error`] constructor).
    pub fn tool_error(&self) -> Option<&ToolError> {
        self.error.as_ref()
    }

    pub fn confidence(&self) -> Option<Confidence> {
        self.confidence
    }

    pub fn provenance(&self) -> Option<&Provenance> {
        self.provenance.as_ref()
    }

    pub fn follow_up_hints(&self) -> Option<&[String]> {
        self.follow_up_hints.as_deref()
    }

    pub fn degradation_reason(&self) -> Option<DegradationReason> {
        self.degradation_reason
    }

    pub fn charter_version(&self) -> &'static str {
        self.charter_version
    }

    pub fn trace_id(&self) -> &str {
        &self.trace_id
    }

    /// Rebuilds an envelope read from the wire, enforcing every invariant the
    /// constructors guarantee.
    fn from_raw(raw: RawEnvelope) -> Result<Self, String> {
        let RawEnvelope {
            status,
            data,
            error,
            confidence,
            provenance,
            follow_up_hints,
            degradation_reason,
            charter_version,
            trace_id,
            next_action,
            fingerprint,
        } = raw;
        if charter_version != CHARTER_VERSION {
            return Err(format!(
                "charter_version {charter_version:?} is not supported, expected {CHARTER_VERSION:?}"
            ));
        }
        let error = error.map(ToolError::from_raw).transpose()?;
        let name = status.as_str();
        match (status, &error) {
            (Status::Error | Status::Refused, None) => {
                return Err(format!("status {name} requires an error object"));
            }
            (Status::Error | Status::Refused, Some(error)) => {
                if data.is_some() {
                    return Err(format!("status {name} requires data to be null"));
                }
                if error.kind().is_refusal() != (status == Status::Refused) {
                    return Err(format!(
                        "status {name} cannot carry error kind {}: refused goes with exactly \
                         pii_blocked, policy_blocked and allowlist_violation",
                        error.kind().as_str()
                    ));
                }
            }
            (_, Some(_)) => {
                return Err(format!(
                    "status {name} requires error to be null; only error and refused carry one"
                ));
            }
            (Status::Success, None) if data.is_none() => {
                return Err(
                    "status success requires non-null data; use status empty for no data".into(),
                );
            }
            _ => {}
        }
        if (status == Status::Degraded) != degradation_reason.is_some() {
            return Err(if status == Status::Degraded {
                "status degraded requires a degradation_reason".into()
            } else {
                format!("degradation_reason is only allowed with status degraded, not {name}")
            });
        }
        if let Some(hints) = &follow_up_hints {
            if hints.is_empty() || hints.len() > MAX_FOLLOW_UP_HINTS {
                return Err(format!(
                    "follow_up_hints must list 1 to {MAX_FOLLOW_UP_HINTS} tool names, got {}",
                    hints.len()
                ));
            }
        }
        Ok(Self {
            status,
            data,
            error,
            confidence,
            provenance,
            follow_up_hints,
            degradation_reason,
            charter_version: CHARTER_VERSION,
            trace_id,
            next_action,
            fingerprint,
        })
    }
}

/// A JSON `null` payload is no payload: `data` is then absent, never `Some(Null)`.
fn non_null(data: Value) -> Option<Value> {
    (!data.is_null()).then_some(data)
}

/// Wire form of [`Envelope`], checked by [`Envelope::from_raw`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawEnvelope {
    status: Status,
    data: Option<Value>,
    error: Option<RawToolError>,
    confidence: Option<Confidence>,
    provenance: Option<Provenance>,
    follow_up_hints: Option<Vec<String>>,
    degradation_reason: Option<DegradationReason>,
    charter_version: String,
    trace_id: String,
    // Seed 004 additions: absent on envelopes written before them.
    #[serde(default)]
    next_action: Option<NextAction>,
    #[serde(default)]
    fingerprint: Option<String>,
}

// Hand-written instead of `#[serde(try_from = "RawEnvelope")]`: schemars honours
// `try_from` and would then describe the raw struct rather than the envelope.
impl<'de> Deserialize<'de> for Envelope {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = RawEnvelope::deserialize(deserializer)?;
        Self::from_raw(raw).map_err(D::Error::custom)
    }
}

/// JSON Schema (draft 2020-12) of the envelope as emitted: every property is
/// present on the wire, so every property is required (nullable ones may be
/// null).
pub fn envelope_json_schema() -> Value {
    SchemaSettings::draft2020_12()
        .for_serialize()
        .into_generator()
        .into_root_schema_for::<Envelope>()
        .to_value()
}

/// A fresh trace id: 32 hex digits, as a v4 UUID's simple form. A random
/// UUID per envelope costs a `getrandom` system call, a tenth of a whole
/// compile; instead each thread draws 64 random bits once and numbers its
/// envelopes, the number mixed by splitmix64 (a bijection, so a thread
/// never repeats an id; threads and processes differ in their random half).
fn new_trace_id() -> String {
    use std::cell::Cell;
    thread_local! {
        static STATE: (u64, Cell<u64>) = {
            let random = uuid::Uuid::new_v4().as_u64_pair();
            (random.0, Cell::new(random.1))
        };
    }
    STATE.with(|(prefix, counter)| {
        let n = counter.get().wrapping_add(0x9E37_79B9_7F4A_7C15);
        counter.set(n);
        let mut z = n;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        format!("{prefix:016x}{z:016x}")
    })
}

#[cfg(test)]
mod trace_id_tests {
    #[test]
    fn trace_ids_are_32_hex_digits_and_never_repeat_across_threads() {
        let ids = |n: usize| (0..n).map(|_| super::new_trace_id()).collect::<Vec<_>>();
        let other = std::thread::spawn(move || ids(20_000));
        let mut all = ids(20_000);
        all.extend(other.join().unwrap_or_default());
        assert_eq!(all.len(), 40_000);
        assert!(all.iter().all(|id| id.len() == 32 && id.chars().all(|c| c.is_ascii_hexdigit())));
        let distinct: std::collections::HashSet<&String> = all.iter().collect();
        assert_eq!(distinct.len(), all.len());
    }
}

#[cfg(test)]
mod into_json_tests {
    use super::Envelope;
    use crate::envelope::{FailureKind, Recovery, ToolError};

    /// `into_json` moves the payload in; the JSON must be byte for byte what
    /// serialising the envelope gives, field order included.
    #[test]
    fn into_json_is_the_serialised_envelope() {
        let success = Envelope::success(serde_json::json!({"b": [1, {"x": null}], "a": "text"})).with_follow_up_hints(&["list_metrics"]);
        let error = Envelope::error(ToolError::new(FailureKind::MalformedName, "no such metric", Recovery::call("list_metrics", serde_json::json!({}))));
        for env in [success, error] {
            let expected = serde_json::to_string(&env).unwrap_or_default();
            assert!(expected.contains("\"data\""), "{expected}");
            assert_eq!(serde_json::to_string(&env.into_json()).unwrap_or_default(), expected);
        }
    }
}
