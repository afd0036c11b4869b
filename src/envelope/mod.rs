//! The charter v1.2 wire contract: the response envelope every MCP tool
//! returns, with its closed vocabularies (status, the 26 error kinds and their
//! transport codes, degradation reasons, confidence, provenance), the recovery
//! block, and the JSON Schema that publishes all of it.
//!
//! Constructors make invariant-breaking envelopes unrepresentable, and
//! deserialization re-checks the same invariants, so an `Envelope` value is
//! always a valid charter response.
//!
//! This module is a leaf: it must not depend on any other module of the crate
//! (no model, plan, sql or engine). Tools translate their own failures into
//! these types, never the other way round.

mod compact;
mod error;
mod kinds;
mod next_action;
mod response;
mod trust;

pub use compact::compact_envelope_schema;
pub use error::{Recovery, Refusal, ToolError};
pub use next_action::NextAction;
pub use kinds::{DegradationReason, ErrorCode, ErrorKind, FailureKind, RefusalKind, Status};
pub use response::{envelope_json_schema, Envelope, CHARTER_VERSION};
pub use trust::{
    derive_confidence, Confidence, InferenceMethod, Provenance, ProvenanceSource, ValidationState,
};
