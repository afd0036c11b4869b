//! The tools: one function per tool, `(&Project, typed args) → Envelope`.
//! All behaviour an agent or a CLI user sees lives here; `cli` and `mcp`
//! only parse arguments and print.
//!
//! Four rooms, each depending only on the rooms listed before it:
//! - [`contract`]: the agent contract every tool answers under, knowing no
//!   tool: response size (`shape`), `next_action` (`next`), retry
//!   escalation and the breaker (`escalation`), page tokens (`paging`),
//!   trust signals (`trust`), and the argument plumbing and bounded echoes
//!   (`args`).
//! - [`semantic`]: the twelve SchemaBrain tools over the semantic model
//!   and the catalog snapshot (get_metric and its recoveries, browsing,
//!   search, the physical-schema tools).
//! - [`provider`]: seed 003's toolset (catalog, free SQL, table
//!   inspection) with its MCP resources and prompts; it reads the catalog
//!   through the semantic room's physical tools.
//! - [`surface`]: what transports call: the published tool specs,
//!   `invoke` (argument checks, shaping) and the `Session` (source,
//!   snapshot and drift, escalation per client, audit).
//!
//! Architecture invariant: no clap, no rmcp, no printing; no room imports
//! from a room listed after it.

pub mod contract;
pub mod provider;
pub mod semantic;
pub mod surface;

pub use contract::paging::Pager;
pub use semantic::{
    call, describe_entity, get_metric, list_entities, list_joins, list_metrics, request_plan, resolve_join, Execution, FilterArgs, GetMetricArgs,
    NameArgs, OrderByArgs, ResolveJoinArgs, TOOL_NAMES,
};
pub use surface::session::{Introspect, Session, SessionError, SessionOptions, LOCAL_CLIENT};
pub use surface::Toolsets;
