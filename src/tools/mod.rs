//! The tools: one function per tool, `(&Project, typed args) → Envelope`.
//! All behaviour an agent or a CLI user sees lives here; `cli` (and later
//! `mcp`) only parse arguments and print.
//!
//! Owns the mapping from planner issues and engine failures to the charter's
//! error kinds, each with a recovery that leads somewhere.
//!
//! Architecture invariant: no clap, no rmcp, no printing.

mod args;
mod browse;
pub mod escalation;
mod get_metric;
mod inspect;
mod notes;
mod paging;
pub mod prompts;
pub mod provider;
pub mod resources;
pub mod physical;
mod recovery;
pub mod search;
mod session;
pub mod shape;
pub mod spec;
pub mod surface;
mod next;
mod trust;

pub use args::{FilterArgs, GetMetricArgs, NameArgs, OrderByArgs, ResolveJoinArgs};
pub use browse::{describe_entity, list_entities, list_joins, list_metrics, resolve_join};
pub use get_metric::{get_metric, request_plan, Execution};
pub use paging::Pager;
pub use session::{Introspect, Session, SessionError, SessionOptions, LOCAL_CLIENT};
pub use surface::Toolsets;

use serde::de::DeserializeOwned;
use serde_json::Value as Json;

use crate::envelope::{Envelope, FailureKind, Recovery, ToolError};
use crate::project::Project;

/// Names of the tools `call` knows.
pub const TOOL_NAMES: [&str; 12] = [
    "get_metric", "list_metrics", "list_entities", "describe_entity", "list_joins", "resolve_join",
    "find_relevant_tables", "describe_table", "describe_column", "suggest_joins", "get_example_queries", "find_relevant_entities",
];

/// Calls a tool by name with JSON arguments, as an agent would. Unknown
/// tools and arguments that do not fit the tool's schema (unknown fields
/// included) are `malformed_name` errors naming what is wrong.
pub fn call(project: &Project, tool: &str, args: &Json, execution: Execution<'_>) -> Envelope {
    match tool {
        "get_metric" => with_args(tool, args, |a: GetMetricArgs| {
            // dry_run never executes; validating (which executes nothing) stays validating.
            let execution = match execution {
                Execution::Run { .. } if a.dry_run => Execution::DryRun,
                other => other,
            };
            get_metric(project, &a, execution)
        }),
        "list_metrics" => with_args(tool, args, |_: NoArgs| list_metrics(project)),
        "list_entities" => with_args(tool, args, |_: NoArgs| list_entities(project)),
        "describe_entity" => with_args(tool, args, |a: NameArgs| describe_entity(project, &a)),
        "list_joins" => with_args(tool, args, |_: NoArgs| list_joins(project)),
        "resolve_join" => with_args(tool, args, |a: ResolveJoinArgs| resolve_join(project, &a)),
        "find_relevant_tables" => with_args(tool, args, |a: search::SearchArgs| search::find_relevant_tables(project, &a)),
        "find_relevant_entities" => with_args(tool, args, |a: search::SearchArgs| search::find_relevant_entities(project, &a)),
        "describe_table" => with_args(tool, args, |a: physical::TableNameArgs| physical::describe_table(project, &a.qualified_name)),
        "describe_column" => with_args(tool, args, |a: physical::ColumnNameArgs| physical::describe_column(project, &a.qualified_name)),
        "suggest_joins" => with_args(tool, args, |a: physical::SuggestJoinsArgs| physical::suggest_joins(project, &a)),
        "get_example_queries" => with_args(tool, args, |a: physical::TableNameArgs| physical::get_example_queries(project, &a.qualified_name)),
        other => Envelope::error(ToolError::new(FailureKind::MalformedName,
            format!("unknown tool `{}`; tools: {}", crate::ir::echo_name(other), TOOL_NAMES.join(", ")),
            Recovery::none().with_fuzzy_matches(crate::model::close_matches(other, TOOL_NAMES)),
        )),
    }
}

/// An engine failure as the error an agent acts on: a timeout or a
/// cancellation is TIMEOUT (a timeout saying what to narrow), anything else
/// QUERY_FAILED; each with `recovery`.
fn engine_failure(e: crate::engine::EngineError, narrow: &str, recovery: Recovery) -> ToolError {
    use crate::engine::EngineError;
    let error = match e {
        EngineError::Cancelled => ToolError::timeout(format!("{e}; nothing was answered")),
        EngineError::Timeout(_) => ToolError::timeout(format!("{e}; {narrow}")),
        _ => ToolError::query_failed(e.to_string()),
    };
    error.with_recovery(recovery)
}

/// Tools without arguments accept `{}` (or null) and nothing else.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct NoArgs {}

fn with_args<A: DeserializeOwned>(tool: &str, args: &Json, f: impl FnOnce(A) -> Envelope) -> Envelope {
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
