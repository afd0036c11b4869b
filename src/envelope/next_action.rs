//! Seed 004's `next_action`: the one step the agent should take next, as a
//! call it can copy (a tool with its arguments) or a URI, with an
//! instruction, and `must_obey`: true when the step is the deterministic
//! correction or continuation, false when the agent should choose (after
//! repeated failures, or when the answer is complete).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

/// The next step: a tool call (`tool` + `arguments`) or a `uri`, with an instruction.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NextAction {
    /// Tool to call next, with exactly `arguments`; null when the step is not a call.
    pub tool: Option<String>,
    /// Ready-to-pass arguments for `tool`.
    pub arguments: Option<Map<String, Value>>,
    /// A resource or command to use instead of a tool call, copied exactly.
    pub uri: Option<String>,
    /// What to do, in one sentence.
    pub instruction: String,
    /// True: follow this step. False: one option among others; choose.
    pub must_obey: bool,
}

impl NextAction {
    /// Call `tool` with `arguments`.
    pub fn call(tool: &str, arguments: Value, instruction: impl Into<String>, must_obey: bool) -> Self {
        let arguments = match arguments {
            Value::Object(m) => m,
            _ => Map::new(),
        };
        Self { tool: Some(tool.to_string()), arguments: Some(arguments), uri: None, instruction: instruction.into(), must_obey }
    }

    /// No call: an instruction (and optionally a URI) only.
    pub fn instruct(instruction: impl Into<String>, uri: Option<String>, must_obey: bool) -> Self {
        Self { tool: None, arguments: None, uri, instruction: instruction.into(), must_obey }
    }
}
