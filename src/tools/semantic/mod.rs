//! The twelve SchemaBrain tools (the default toolset): get_metric over the
//! semantic model, the browsing tools, search, and the physical-schema
//! tools over the catalog snapshot. `call` dispatches them by name.
//!
//! Owns the mapping from planner issues to the charter's error kinds, each
//! with a recovery that keeps the question (`recovery`).
//!
//! Architecture invariant: depends on `tools::contract` only among the
//! tool rooms; never on `provider` or `surface`.

mod args;
mod browse;
mod get_metric;
mod notes;
pub mod physical;
mod recovery;
pub mod search;

pub use args::{FilterArgs, GetMetricArgs, NameArgs, OrderByArgs, ResolveJoinArgs};
pub use browse::{describe_entity, list_entities, list_joins, list_metrics, resolve_join};
pub use get_metric::{get_metric, request_plan, Execution, Pages};

use serde_json::Value as Json;

use super::contract::args::{with_args, NoArgs};
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
