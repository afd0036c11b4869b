//! How every tool reads its JSON arguments (serde types, unknown fields
//! rejected, bounded echoes of what was wrong) and how an engine failure
//! becomes the error an agent acts on.

use serde::de::DeserializeOwned;
use serde_json::Value as Json;

use crate::envelope::{Envelope, FailureKind, Recovery, ToolError};

/// Tools without arguments accept `{}` (or null) and nothing else.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NoArgs {}

/// Reads `args` as `A` and runs `f`, or answers `malformed_name` naming
/// what did not fit.
pub fn with_args<A: DeserializeOwned>(tool: &str, args: &Json, f: impl FnOnce(A) -> Envelope) -> Envelope {
    let args = if args.is_null() { Json::Object(Default::default()) } else { args.clone() };
    match serde_json::from_value::<A>(args) {
        Ok(a) => f(a),
        Err(e) => Envelope::error(ToolError::new(FailureKind::MalformedName,
            // serde quotes the offending value: bounded like any echo.
            format!("invalid arguments for {tool}: {}", crate::model::echo(&e.to_string())),
            Recovery::none(),
        )),
    }
}

/// An engine failure as the error an agent acts on: a timeout or a
/// cancellation is TIMEOUT (a timeout saying what to narrow), anything else
/// QUERY_FAILED; each with `recovery`.
pub fn engine_failure(e: crate::engine::EngineError, narrow: &str, recovery: Recovery) -> ToolError {
    use crate::engine::EngineError;
    let error = match e {
        EngineError::Cancelled => ToolError::timeout(format!("{e}; nothing was answered")),
        EngineError::Timeout(_) => ToolError::timeout(format!("{e}; {narrow}")),
        _ => ToolError::query_failed(e.to_string()),
    };
    error.with_recovery(recovery)
}
