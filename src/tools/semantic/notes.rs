//! The plan's notes in words: one sentence each, for `data.notes`. The
//! planner states facts (`PlanNote`); how an agent reads them is decided
//! here.

use crate::model::{CumulativeWindow, PeriodAgg};
use crate::plan::PlanNote;

pub fn sentence(note: &PlanNote) -> String {
    match note {
        PlanNote::FanOutDeduplicated { metric, anchor, join, to, cardinality, declared } => {
            let how = if *declared { cardinality.as_str() } else { "undeclared, so treated as many_to_many" };
            format!(
                "Join `{join}` ({how}) can match one `{anchor}` to several `{to}` rows: `{metric}` counts each `{anchor}` once per group it falls in, so a `{anchor}` spread over two groups counts in both and the groups add up to more than the total."
            )
        }
        PlanNote::FanOutInflated { metric, anchor, join, to } => format!(
            "Join `{join}` can repeat each `{anchor}` row once per matching `{to}` row and `{anchor}` has no identity to deduplicate on, so `{metric}` may be inflated."
        ),
        PlanNote::VersionedJoin { join, versions, other, time, from, to } => format!(
            "Join `{join}` reads the `{versions}` row valid when each `{other}` row happened: `{other}.{time}` at or after `{from}` and before `{to}` (or `{to}` still empty)."
        ),
        PlanNote::SemiJoin { join, correlated } => format!(
            "Filters on columns reached over the to-many join `{join}` keep each `{correlated}` row that has at least one matching related row; it is counted once."
        ),
        PlanNote::ViaUnused { joins } => format!(
            "via {} was not needed: no column of this request is reached through it.",
            joins.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
        ),
        PlanNote::TimeInherited { column } => format!("Time dimension `{column}` was inherited over to-one joins."),
        PlanNote::TimeOwnColumn { column, anchor } => format!(
            "Time dimension `{column}` is the only date or time column of `{anchor}` and the entities it reaches over to-one joins."
        ),
        PlanNote::TimeUnavailable { anchor, grain } => {
            format!("No time dimension is reachable from `{anchor}`, so the answer is not bucketed by {}.", grain.as_str())
        }
        PlanNote::TimeDimensionWithoutGrain => "time_dimension was ignored because no time_grain was given.".into(),
        PlanNote::TimeDimensionOverridden { metric, own } => {
            format!("time_dimension was ignored: metric `{metric}` always uses its own, `{own}`.")
        }
        PlanNote::NonAdditive { metric, column, window, bucketed, per } => {
            let which = if *window == crate::model::WindowChoice::Last { "last" } else { "first" };
            let within = if *bucketed { "each time bucket" } else { "the whole range" };
            let per = if per.is_empty() { String::new() } else { format!(" and each {}", per.join(", ")) };
            format!("`{metric}` does not add up over `{column}`: only rows at its {which} value within {within}{per} are aggregated.")
        }
        PlanNote::Conversion { anchor, entity, metric, keys, window, credited: false } => {
            let window = window.map_or("at or after its time".to_string(), |w| format!("at most {w} after it"));
            let keys = keys.iter().map(|(a, b)| format!("`{b}` equal to its `{a}`")).collect::<Vec<_>>().join(" and ");
            format!(
                "A `{anchor}` row converts when a row of `{entity}` counted by `{metric}` has {keys} and comes {window}; it converts once however many follow."
            )
        }
        PlanNote::Conversion { anchor, entity, metric, keys, window, credited: true } => {
            let window = window.map_or("on or before its day".to_string(), |w| format!("on its day or in the {w} before it"));
            let keys = keys.iter().map(|(a, b)| format!("`{a}` equal to its `{b}`")).collect::<Vec<_>>().join(" and ");
            format!(
                "Each `{entity}` row counted by `{metric}` is credited to the latest `{anchor}` row (by day) with {keys} {window}, and `{metric}` is computed over the credited rows in that `{anchor}` row's group (MetricFlow's conversions)."
            )
        }
        PlanNote::Cumulative { metric, window } => {
            let what = match window {
                CumulativeWindow::AllTime => "everything up to the end of the bucket".to_string(),
                CumulativeWindow::Rolling(i) => format!("the {i} ending with the bucket"),
                CumulativeWindow::GrainToDate(g) => format!("the {} so far, up to the end of the bucket", g.as_str()),
            };
            format!("Each bucket of `{metric}` accumulates {what}; buckets without rows are filled from a generated time spine.")
        }
        PlanNote::DailyCumulative { metric, window, period_agg, spine } => {
            let what = match window {
                CumulativeWindow::AllTime => "everything up to that day".to_string(),
                CumulativeWindow::Rolling(i) => format!("the {i} ending with that day"),
                CumulativeWindow::GrainToDate(g) => format!("the {} so far, up to that day", g.as_str()),
            };
            let per_bucket = match period_agg {
                PeriodAgg::First => "the value of its first day that has one",
                PeriodAgg::Last => "the value of its last day that has one",
                PeriodAgg::Average => "the average over its days that have one",
            };
            format!(
                "`{metric}` is computed for every day of the time spine `{spine}` from {what} (a day with no row in its window has no value, and time filters choose days, not rows); each bucket shows {per_bucket}."
            )
        }
        PlanNote::TimeSpine { metric, spine, fill } => {
            let empty = fill.map_or("NULL".to_string(), |v| v.to_string());
            format!("`{metric}` answers for every period of the time spine `{spine}`: a period without rows is {empty}, and periods outside the spine's range are not answered.")
        }
        PlanNote::SmallGroupsWithheld { k, columns, people } => {
            let columns = columns.iter().map(|c| format!("`{c}`")).collect::<Vec<_>>().join(", ");
            let people = people.iter().map(|p| format!("`{p}`")).collect::<Vec<_>>().join(" and ");
            format!(
                "{columns} may identify people: the PII policy's min_group_size is {k}, so every row computed over fewer than {k} distinct {people} is left out of the answer (not shown as 0)."
            )
        }
    }
}
