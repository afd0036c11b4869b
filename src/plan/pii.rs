//! The PII check of one component, before any SQL exists: every column it
//! reads counts (measure operands, group-by, filters, the time dimension,
//! join keys on every hop, conversion keys), checked on the entity each
//! join step names. Columns whose values the answer would reveal (group-by,
//! time bucket, filter, MIN/MAX operand) must carry no PII category at all.

use super::{ComponentPlan, JoinStep};
use crate::ir::{Issue, MetricQuery, Transform};
use crate::model::{Aggregation, Metric, SemanticModel};

pub(super) fn check(model: &SemanticModel, metric: &Metric, plan: &ComponentPlan, q: &MetricQuery) -> Result<(), Issue> {
    let anchor = metric.entity.as_str();
    let measure: Vec<(&str, &str)> = metric.measure.columns().into_iter().map(|c| (anchor, c)).collect();
    let mut all = measure.clone();
    all.extend(plan.time.iter().map(|t| (t.dimension.entity.as_str(), t.dimension.column.as_str())));
    let group_by: Vec<(&str, &str)> = q.group_by.iter().map(|c| (c.entity.as_str(), c.column.as_str())).collect();
    all.extend(group_by.iter().copied());
    all.extend(q.filters.iter().map(|f| (f.column.entity.as_str(), f.column.column.as_str())));
    let steps: Vec<&JoinStep> = plan.joins.iter().chain(plan.semi_joins.iter().flat_map(|s| s.steps.iter())).collect();
    for j in steps {
        for (a, b) in &j.on {
            all.push((j.from_entity.as_str(), a.as_str()));
            all.push((j.to.entity.as_str(), b.as_str()));
        }
    }
    if let Some(na) = &metric.non_additive {
        all.extend(na.per.iter().map(|p| (anchor, p.column.as_str())));
    }
    if let Transform::Converted(t) = &q.transform {
        for (a, b) in &t.keys {
            all.push((anchor, a.as_str()));
            all.push((t.entity.as_str(), b.as_str()));
        }
        all.push((t.entity.as_str(), t.time.as_str()));
        all.extend(t.filters.iter().map(|f| (f.column.entity.as_str(), f.column.column.as_str())));
        if let Some(td) = &metric.time_dimension {
            all.push((td.entity.as_str(), td.column.as_str()));
        }
    }
    use crate::pii::Role;
    let mut revealing: Vec<(Role, &str, &str)> = group_by.iter().map(|(e, c)| (Role::GroupBy, *e, *c)).collect();
    revealing.extend(plan.time.iter().map(|t| (Role::TimeDimension, t.dimension.entity.as_str(), t.dimension.column.as_str())));
    revealing.extend(q.filters.iter().map(|f| (Role::Filter, f.column.entity.as_str(), f.column.column.as_str())));
    if let Transform::Converted(t) = &q.transform {
        revealing.extend(t.filters.iter().map(|f| (Role::Filter, f.column.entity.as_str(), f.column.column.as_str())));
    }
    if matches!(metric.measure.agg, Aggregation::Min | Aggregation::Max) {
        revealing.extend(measure.iter().map(|(e, c)| (Role::MinMax, *e, *c)));
    }
    let touched = crate::pii::Touched { all, revealing };
    crate::pii::check(model, &touched).map_err(|r| {
        let cats = r.categories.join(", ");
        let message = match &r.reason {
            crate::pii::RefusalReason::Blocked => format!(
                "Refused before any SQL ran: the request reads columns whose PII categories the policy blocks ({cats})."
            ),
            crate::pii::RefusalReason::Guarded { role: Role::GroupBy, column } => format!(
                "Refused before any SQL ran: grouping by `{column}` would list personal data ({cats}); group by a column that is not personal data."
            ),
            crate::pii::RefusalReason::Guarded { role: Role::TimeDimension, column } => format!(
                "Refused before any SQL ran: bucketing by `{column}` groups by personal data ({cats}); use the metric's own time dimension or no time_grain."
            ),
            crate::pii::RefusalReason::Guarded { role: Role::Filter, column } => format!(
                "Refused before any SQL ran: filtering on `{column}` singles out people by personal data ({cats}); filter on a column that is not personal data."
            ),
            crate::pii::RefusalReason::Guarded { role: Role::MinMax, column } => format!(
                "Refused before any SQL ran: {} over `{column}` would return a raw personal value ({cats}).",
                metric.measure.agg.as_str()
            ),
        };
        Issue::PiiBlocked { categories: r.categories, message }
    })
}
