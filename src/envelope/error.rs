//! The error object: what failed (kind, code, message), what to try next
//! (recovery) and, for refusals only, which PII categories were blocked.
//!
//! Refusal-only content (`suggested_rewrite`, `widening_hint`,
//! `pii_categories`) can only be set through [`Refusal`], which only
//! [`ToolError::refusal`] builds, so a non-refusal error carrying it cannot be
//! constructed. Deserialization goes through private raw types and re-checks
//! the same rules.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::kinds::{ErrorCode, ErrorKind, FailureKind, RefusalKind};

/// What the agent should try next.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
// Mirrors the strictness of the raw wire type that deserializes it.
#[schemars(deny_unknown_fields)]
pub struct Recovery {
    /// Name of the tool to call next, or null.
    suggested_tool: Option<String>,
    /// Ready-to-pass arguments for suggested_tool, or null.
    suggested_args: Option<Map<String, Value>>,
    /// Plausible alternatives to the name that failed, best first.
    fuzzy_matches: Vec<String>,
    /// Refusals only: a safe version of the refused request.
    suggested_rewrite: Option<String>,
    /// Refusals only: the scope that would unblock the call.
    widening_hint: Option<String>,
    /// The suggested call is the original request with only its faulty part
    /// corrected (same meaning): `next_action.must_obey` is true only then.
    /// Not on the wire: `next_action` carries it.
    #[serde(skip)]
    #[schemars(skip)]
    correction: bool,
}

impl Recovery {
    /// No suggestion at all.
    pub fn none() -> Self {
        Self {
            suggested_tool: None,
            suggested_args: None,
            fuzzy_matches: Vec::new(),
            suggested_rewrite: None,
            widening_hint: None,
            correction: false,
        }
    }

    /// Suggests `tool` with `args` that are the caller's own request with
    /// only the faulty part corrected, so the answer is the one asked for.
    pub fn correction(tool: impl Into<String>, args: Value) -> Self {
        Self { correction: true, ..Self::call(tool, args) }
    }

    /// Whether the suggested call is a correction that keeps the meaning.
    pub fn is_correction(&self) -> bool {
        self.correction && self.suggested_tool.is_some()
    }

    /// Suggests calling `tool` with `args`, a JSON object such as
    /// `json!({"query": "user"})`. Tool arguments on the wire are always an
    /// object, so any other value (`null` included) means "no arguments".
    pub fn call(tool: impl Into<String>, args: Value) -> Self {
        let suggested_args = match args {
            Value::Object(map) => Some(map),
            _ => None,
        };
        Self {
            suggested_tool: Some(tool.into()),
            suggested_args,
            ..Self::none()
        }
    }

    /// Adds plausible alternatives, best first.
    pub fn with_fuzzy_matches<I, S>(mut self, matches: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.fuzzy_matches
            .extend(matches.into_iter().map(Into::into));
        self
    }

    pub fn suggested_tool(&self) -> Option<&str> {
        self.suggested_tool.as_deref()
    }

    pub fn suggested_args(&self) -> Option<&Map<String, Value>> {
        self.suggested_args.as_ref()
    }

    pub fn fuzzy_matches(&self) -> &[String] {
        &self.fuzzy_matches
    }

    pub fn suggested_rewrite(&self) -> Option<&str> {
        self.suggested_rewrite.as_deref()
    }

    pub fn widening_hint(&self) -> Option<&str> {
        self.widening_hint.as_deref()
    }
}

/// The only `(kind, code)` pairs whose code differs from `kind.code()`: the
/// ones [`ToolError::timeout`] and [`ToolError::query_failed`] build.
const CODE_OVERRIDES: [(ErrorKind, ErrorCode); 2] = [
    (ErrorKind::CostCapExceeded, ErrorCode::Timeout),
    (ErrorKind::InternalError, ErrorCode::QueryFailed),
];

/// What failed, why, and what to try next.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
// Mirrors the strictness of the raw wire type that deserializes it.
#[schemars(deny_unknown_fields)]
pub struct ToolError {
    /// What failed, as a registry kind to switch on.
    kind: ErrorKind,
    /// Coarse transport code. It follows kind, except TIMEOUT on a cost_cap_exceeded caused by a query timeout and QUERY_FAILED on an internal_error raised by the query engine.
    code: ErrorCode,
    /// One human-readable sentence.
    message: String,
    /// What to try next.
    recovery: Recovery,
    /// Refusals only: the PII categories that caused the block (only the blocked ones).
    pii_categories: Vec<String>,
}

impl ToolError {
    /// An error of a non-refusal kind; its code is `kind.code()`.
    pub fn new(kind: FailureKind, message: impl Into<String>, recovery: Recovery) -> Self {
        let kind = ErrorKind::from(kind);
        Self::with_code(kind, kind.code(), message.into(), recovery)
    }

    /// A query that ran out of time: kind `cost_cap_exceeded`, code `TIMEOUT`.
    ///
    /// The charter has no timeout kind; a time limit is a cost cap, so the kind
    /// is `cost_cap_exceeded`. That kind's default code, `RATE_LIMITED`, would
    /// tell transport clients to back off and retry the same call, while a
    /// timeout needs a cheaper call, hence the distinct code.
    pub fn timeout(message: impl Into<String>) -> Self {
        Self::with_code(
            ErrorKind::CostCapExceeded,
            ErrorCode::Timeout,
            message.into(),
            Recovery::none(),
        )
    }

    /// The engine failed to run a query we built: kind `internal_error`, code
    /// `QUERY_FAILED`.
    ///
    /// The charter files executor failures under `internal_error` (the agent
    /// cannot fix them by changing its arguments), but transport clients must
    /// be able to tell a failing warehouse query (`QUERY_FAILED`) from a bug in
    /// SchemaBrain itself (`INTERNAL`).
    pub fn query_failed(message: impl Into<String>) -> Self {
        Self::with_code(
            ErrorKind::InternalError,
            ErrorCode::QueryFailed,
            message.into(),
            Recovery::none(),
        )
    }

    /// A refusal: the only error [`Envelope::refused`](super::Envelope::refused)
    /// accepts. Pass only the *blocked* PII categories in `pii_categories`:
    /// listing every category the request touched would let an agent probe
    /// which PII exists.
    pub fn refusal(
        kind: RefusalKind,
        message: impl Into<String>,
        recovery: Recovery,
        pii_categories: Vec<String>,
    ) -> Refusal {
        let kind = ErrorKind::from(kind);
        let mut error = Self::with_code(kind, kind.code(), message.into(), recovery);
        error.pii_categories = pii_categories;
        Refusal(error)
    }

    /// Replaces the recovery (e.g. of a timeout, whose constructor has none).
    pub fn with_recovery(mut self, recovery: Recovery) -> Self {
        self.recovery = recovery;
        self
    }

    /// Appends a sentence to the message.
    pub fn append_message(&mut self, sentence: &str) {
        self.message.push(' ');
        self.message.push_str(sentence);
    }

    /// Points the recovery at another call, keeping its fuzzy matches and hints.
    pub fn redirect(&mut self, tool: impl Into<String>, args: Value) {
        let call = Recovery::call(tool, args);
        self.recovery.suggested_tool = call.suggested_tool;
        self.recovery.suggested_args = call.suggested_args;
        self.recovery.correction = false;
    }

    fn with_code(kind: ErrorKind, code: ErrorCode, message: String, recovery: Recovery) -> Self {
        Self {
            kind,
            code,
            message,
            recovery,
            pii_categories: Vec::new(),
        }
    }

    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    pub fn code(&self) -> ErrorCode {
        self.code
    }

    pub fn message(&self) -> &str {
        &self.message
    }

    pub fn recovery(&self) -> &Recovery {
        &self.recovery
    }

    pub fn pii_categories(&self) -> &[String] {
        &self.pii_categories
    }

    /// Rebuilds an error read from the wire, enforcing what the constructors
    /// guarantee: a code that fits the kind, and refusal-only content only on
    /// refusal kinds.
    pub(super) fn from_raw(raw: RawToolError) -> Result<Self, String> {
        let RawToolError {
            kind,
            code,
            message,
            recovery,
            pii_categories,
        } = raw;
        if code != kind.code() && !CODE_OVERRIDES.contains(&(kind, code)) {
            return Err(format!(
                "error code {} does not fit kind {} (expected {})",
                code.as_str(),
                kind.as_str(),
                kind.code().as_str()
            ));
        }
        if !kind.is_refusal() {
            let refusal_only = [
                (
                    "recovery.suggested_rewrite",
                    recovery.suggested_rewrite.is_some(),
                ),
                ("recovery.widening_hint", recovery.widening_hint.is_some()),
                ("pii_categories", !pii_categories.is_empty()),
            ];
            if let Some((field, _)) = refusal_only.iter().find(|(_, set)| *set) {
                return Err(format!(
                    "{field} is only allowed on refusal kinds \
                     (pii_blocked, policy_blocked, allowlist_violation), not on {}",
                    kind.as_str()
                ));
            }
        }
        let recovery = Recovery {
            suggested_tool: recovery.suggested_tool,
            suggested_args: recovery.suggested_args,
            fuzzy_matches: recovery.fuzzy_matches,
            suggested_rewrite: recovery.suggested_rewrite,
            widening_hint: recovery.widening_hint,
            correction: false,
        };
        Ok(Self {
            kind,
            code,
            message,
            recovery,
            pii_categories,
        })
    }
}

/// A [`ToolError`] of a refusal kind. Only a refusal may carry a suggested
/// rewrite, a widening hint or PII categories.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal(pub(super) ToolError);

impl Refusal {
    /// A safe version of the refused request.
    pub fn with_suggested_rewrite(mut self, rewrite: impl Into<String>) -> Self {
        self.0.recovery.suggested_rewrite = Some(rewrite.into());
        self
    }

    /// The scope that would unblock the call (for `allowlist_violation`).
    pub fn with_widening_hint(mut self, hint: impl Into<String>) -> Self {
        self.0.recovery.widening_hint = Some(hint.into());
        self
    }
}

/// Wire form of [`Recovery`], checked by [`ToolError::from_raw`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawRecovery {
    suggested_tool: Option<String>,
    suggested_args: Option<Map<String, Value>>,
    #[serde(default)]
    fuzzy_matches: Vec<String>,
    suggested_rewrite: Option<String>,
    widening_hint: Option<String>,
}

/// Wire form of [`ToolError`], checked by [`ToolError::from_raw`].
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RawToolError {
    kind: ErrorKind,
    code: ErrorCode,
    message: String,
    recovery: RawRecovery,
    #[serde(default)]
    pii_categories: Vec<String>,
}
