//! Issues → error kinds with a recovery whose suggested call is valid as
//! given and leads somewhere: it answers, or it narrows the problem.

use serde_json::{json, Value as Json};

use super::args::GetMetricArgs;
use crate::envelope::{Envelope, FailureKind, Recovery, RefusalKind, ToolError};
use crate::ir::{ColumnRole, Issue};
use crate::project::Project;

/// A `get_metric` call with the same arguments after `change`.
fn retry(args: &GetMetricArgs, change: impl FnOnce(&mut GetMetricArgs)) -> Recovery {
    let mut fixed = args.clone();
    change(&mut fixed);
    Recovery::call("get_metric", fixed.to_json())
}

fn list(items: &[String], max: usize) -> String {
    let shown: Vec<String> = items.iter().take(max).map(|s| format!("`{s}`")).collect();
    let more = items.len().saturating_sub(max);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// The envelope for an issue: `refused` for PII, `error` for everything else.
pub fn issue_envelope(project: &Project, args: &GetMetricArgs, issue: &Issue) -> Envelope {
    let first_metric = args.metric_names().into_iter().next().unwrap_or_default();
    let anchor = project.model.metric(&first_metric).map(|m| m.entity.clone());
    let describe_anchor = || match &anchor {
        Some(a) => Recovery::call("describe_entity", json!({"name": a})),
        None => Recovery::call("list_entities", Json::Null),
    };
    let error = match issue {
        Issue::PiiBlocked { categories, message } => {
            // Refusals lead to the anchor's description, which marks the
            // columns that cannot be used.
            let recovery = match &anchor {
                Some(a) => Recovery::call("describe_entity", json!({"name": a})),
                None => Recovery::call("list_entities", Json::Null),
            };
            return Envelope::refused(ToolError::refusal(RefusalKind::PiiBlocked, message.clone(), recovery, categories.clone()));
        }
        Issue::MetricsCannotAlign { grain, without_time } => ToolError::new(
            FailureKind::GrainMismatch,
            format!(
                "The metrics cannot share the {} grain: {} ha{} no time dimension; ask without time_grain or leave {} out.",
                grain.as_str(),
                list(without_time, 10),
                if without_time.len() == 1 { "s" } else { "ve" },
                if without_time.len() == 1 { "it" } else { "them" }
            ),
            retry(args, |a| a.time_grain = None),
        ),
        Issue::TimeGrainRequired { metric, allowed } => {
            let names: Vec<String> = allowed.iter().map(|g| g.as_str().to_string()).collect();
            let pick = if names.iter().any(|n| n == "month") { Some("month".to_string()) } else { names.first().cloned() };
            ToolError::new(
                FailureKind::InvalidTimeGrain,
                format!("`{metric}` is a series over time: give time_grain, one of {}.", list(&names, 10)),
                retry(args, |a| a.time_grain = pick).with_fuzzy_matches(names),
            )
        }
        Issue::GrainNotNested { metric, grain, period, allowed } => {
            let mut names: Vec<String> = allowed.iter().map(|g| g.as_str().to_string()).collect();
            if names.is_empty() {
                names.push(period.as_str().to_string());
            }
            let first = names.first().cloned();
            ToolError::new(
                FailureKind::GrainMismatch,
                format!(
                    "`{metric}` works per {}, which a {} bucket does not fit inside; use {}.",
                    period.as_str(),
                    grain.as_str(),
                    list(&names, 10)
                ),
                retry(args, |a| a.time_grain = first).with_fuzzy_matches(names),
            )
        }
        Issue::UnknownMetric { name, fuzzy } => ToolError::new(FailureKind::UnknownMetric,
            format!("Metric `{name}` is not defined; list_metrics shows the metrics there are."),
            Recovery::call("list_metrics", Json::Null).with_fuzzy_matches(fuzzy.clone()),
        ),
        Issue::Malformed { argument, message } => {
            let argument = argument.clone();
            let recovery = retry(args, |a| match argument.as_str() {
                "limit" => a.limit = None,
                "group_by" => a.group_by.clear(),
                "filters" => a.filters.clear(),
                "order_by" => a.order_by.clear(),
                "time_dimension" => a.time_dimension = None,
                _ => {}
            });
            ToolError::new(FailureKind::MalformedName, format!("{message}."), recovery)
        }
        Issue::UnknownEntity { role, name, fuzzy } => ToolError::new(FailureKind::UnknownName,
            format!("Entity `{name}` (in {}) is not defined; list_entities shows the entities there are.", role.argument()),
            Recovery::call("list_entities", Json::Null).with_fuzzy_matches(fuzzy.clone()),
        ),
        Issue::UnknownColumn { role, entity, column, allowed, fuzzy } => {
            let kind = match role {
                ColumnRole::GroupBy => FailureKind::UnknownGroupByColumn,
                ColumnRole::Filter => FailureKind::UnknownFilterColumn,
                ColumnRole::OrderBy => FailureKind::UnknownOrderByColumn,
                ColumnRole::Measure => FailureKind::UnknownMeasureColumn,
                ColumnRole::TimeDimension => FailureKind::UnknownName,
            };
            ToolError::new(
                kind,
                format!("Entity `{entity}` has no column `{column}` (in {}); its columns are {}.", role.argument(), list(allowed, 20)),
                Recovery::call("describe_entity", json!({"name": entity}))
                    .with_fuzzy_matches(fuzzy.iter().map(|c| format!("{entity}.{c}"))),
            )
        }
        Issue::UnknownOrderBy { column, allowed, fuzzy } => ToolError::new(FailureKind::UnknownOrderByColumn,
            format!("Cannot order by `{column}`: order_by may name {}.", list(allowed, 20)),
            retry(args, |a| a.order_by.clear()).with_fuzzy_matches(fuzzy.clone()),
        ),
        Issue::InvalidTimeGrain { grain, allowed } => {
            let names: Vec<String> = allowed.iter().map(|g| g.as_str().to_string()).collect();
            let first = names.first().cloned();
            ToolError::new(FailureKind::InvalidTimeGrain,
                format!("Time grain `{grain}` is not allowed here; allowed: {}.", list(&names, 10)),
                retry(args, |a| a.time_grain = first).with_fuzzy_matches(names),
            )
        }
        Issue::GrainMismatch { dimension, grain, allowed } => {
            let names: Vec<String> = allowed.iter().map(|g| g.as_str().to_string()).collect();
            let first = names.first().cloned();
            ToolError::new(FailureKind::GrainMismatch,
                format!(
                    "Grain `{}` is finer than `{dimension}` can carry (it has no time of day); use {}.",
                    grain.as_str(),
                    list(&names, 10)
                ),
                retry(args, |a| a.time_grain = first).with_fuzzy_matches(names),
            )
        }
        Issue::UnknownViaJoin { name, fuzzy, available } => ToolError::new(FailureKind::UnknownViaJoin,
            format!("`{name}` in via is not a join; joins are {}.", list(available, 20)),
            Recovery::call("list_joins", Json::Null).with_fuzzy_matches(fuzzy.clone()),
        ),
        Issue::Unreachable { anchor, target } => ToolError::new(FailureKind::UnreachableEntity,
            format!(
                "No chain of joins of at most {} hops connects `{anchor}` to `{target}`; describe_entity of `{anchor}` lists what it reaches.",
                crate::plan::MAX_HOPS
            ),
            describe_anchor(),
        ),
        Issue::AmbiguousPath { anchor, target, paths } => {
            let rendered: Vec<String> = paths.iter().map(|p| p.join(" → ")).collect();
            let first = paths.first().cloned().unwrap_or_default();
            ToolError::new(FailureKind::AmbiguousPath,
                format!(
                    "`{anchor}` reaches `{target}` by {} paths that can mean different things: {}; pass via with the joins of the one you mean.",
                    paths.len(),
                    list(&rendered, 4)
                ),
                retry(args, |a| extend_via(&mut a.via, &first)).with_fuzzy_matches(rendered),
            )
        }
        Issue::AmbiguousJoin { from, to, candidates } => {
            let first = candidates.first().cloned().into_iter().collect::<Vec<_>>();
            ToolError::new(FailureKind::AmbiguousJoin,
                format!("`{from}` joins `{to}` in {} ways: {}; pass via with one.", candidates.len(), list(candidates, 10)),
                retry(args, |a| extend_via(&mut a.via, &first)).with_fuzzy_matches(candidates.clone()),
            )
        }
        Issue::AmbiguousTimeDimension { candidates } => {
            let first = candidates.first().cloned();
            ToolError::new(FailureKind::AmbiguousTimeDimension,
                format!(
                    "Metric `{first_metric}` has no time dimension of its own and several are reachable: {}; pass time_dimension.",
                    list(candidates, 10)
                ),
                retry(args, |a| a.time_dimension = first).with_fuzzy_matches(candidates.clone()),
            )
        }
    };
    Envelope::error(error)
}

fn extend_via(via: &mut Vec<String>, joins: &[String]) {
    for j in joins {
        if !via.contains(j) {
            via.push(j.clone());
        }
    }
}
