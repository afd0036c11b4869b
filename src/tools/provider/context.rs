//! What a provider call runs against: the project, the engine, the limits,
//! the pager and the client session, and the masking policy's name.

use crate::engine::{Cancel, Engine, Limits};
use crate::project::Project;
use crate::tools::contract::paging::Pager;

/// What a provider call runs against.
pub struct ProviderContext<'a> {
    pub project: &'a Project,
    pub engine: Option<&'a dyn Engine>,
    pub limits: Limits,
    pub cancel: Cancel,
    pub pager: &'a Pager,
    /// The client session page tokens are bound to.
    pub client: &'a str,
    /// The one schema writes may go into (`serve --allow-writes`).
    pub allow_writes: Option<&'a str>,
}

/// The policy's name in `policy_applied` and preview_masked's `policy_id`.
pub const POLICY_ID: &str = "pii_policy";
