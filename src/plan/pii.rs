//! The PII check of one component, before any SQL exists: every column it
//! reads counts (measure operands, group-by, filters, the time dimension,
//! join keys on every hop, conversion keys), checked on the entity each
//! join step names. Columns whose values the answer would reveal (group-by,
//! time bucket, filter, MIN/MAX operand) must carry no PII category at all,
//! unless the policy's minimum group size admits them: then the component
//! gets a `GroupFloor` naming whose people to count, or the request is
//! refused when they cannot be counted exactly.

use super::{ComponentPlan, GroupFloor, JoinStep, PlanNote};
use crate::ir::{Issue, MetricQuery, Transform};
use crate::model::{Aggregation, Metric, SemanticModel};

/// Every `(entity, column)` a component reads anywhere: measure operands,
/// time dimension, group-by, filters, join keys on every hop, conversion
/// keys, time and filters, and the credited conversion measure. The PII
/// check counts them all; the planner adds only these computed columns
/// to their relations.
pub(super) fn columns_read<'a>(model: &'a SemanticModel, metric: &'a Metric, plan: &'a ComponentPlan, q: &'a MetricQuery) -> Vec<(&'a str, &'a str)> {
    let anchor = metric.entity.as_str();
    let mut all: Vec<(&str, &str)> = metric.measure.columns().into_iter().map(|c| (anchor, c)).collect();
    all.extend(plan.time.iter().map(|t| (t.dimension.entity.as_str(), t.dimension.column.as_str())));
    all.extend(q.group_by.iter().map(|g| (g.column.entity.as_str(), g.column.column.as_str())));
    let filters = q.filters.iter().chain(q.any_of.iter().flat_map(crate::ir::Condition::atoms));
    all.extend(filters.map(|f| (f.column.entity.as_str(), f.column.column.as_str())));
    let steps: Vec<&JoinStep> = plan.joins.iter().chain(plan.semi_joins.iter().flat_map(|s| s.steps.iter())).collect();
    for j in steps {
        for (a, b) in &j.on {
            all.push((j.from_entity.as_str(), a.as_str()));
            all.push((j.to.entity.as_str(), b.as_str()));
        }
        // A versioned join reads its window and the metric's time.
        if let Some(v) = &j.versions {
            let (versioned, other) = (j.to.entity.as_str(), j.from_entity.as_str());
            all.extend([(versioned, v.from.as_str()), (versioned, v.to.as_str()), (other, v.time.as_str())]);
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
        // Credited conversion rows aggregate the conversion metric's own measure.
        if let (crate::model::ConversionCounts::ConversionRows, Some(conv)) = (t.counts, model.metric(&t.metric)) {
            all.extend(conv.measure.columns().into_iter().map(|c| (t.entity.as_str(), c)));
        }
    }
    all
}

/// `all` is `columns_read` of the same component (the planner needs it
/// too, so it is listed once).
pub(super) fn check<'a>(
    model: &'a SemanticModel,
    metric: &'a Metric,
    plan: &'a ComponentPlan,
    q: &'a MetricQuery,
    all: Vec<(&'a str, &'a str)>,
) -> Result<Option<(GroupFloor, PlanNote)>, Issue> {
    // Rebound with a lifetime local to this call: the computed columns'
    // inputs, owned here, are added to it below.
    let mut all: Vec<(&str, &str)> = all;
    let anchor = metric.entity.as_str();
    let measure: Vec<(&str, &str)> = metric.measure.columns().into_iter().map(|c| (anchor, c)).collect();
    let group_by: Vec<(&str, &str)> = q.group_by.iter().map(|g| (g.column.entity.as_str(), g.column.column.as_str())).collect();
    let filters: Vec<&crate::ir::Filter> = q.filters.iter().chain(q.any_of.iter().flat_map(crate::ir::Condition::atoms)).collect();
    use crate::pii::Role;
    let mut revealing: Vec<(Role, &str, &str)> = group_by.iter().map(|(e, c)| (Role::GroupBy, *e, *c)).collect();
    revealing.extend(plan.time.iter().map(|t| (Role::TimeDimension, t.dimension.entity.as_str(), t.dimension.column.as_str())));
    revealing.extend(filters.iter().map(|f| (Role::Filter, f.column.entity.as_str(), f.column.column.as_str())));
    if let Transform::Converted(t) = &q.transform {
        revealing.extend(t.filters.iter().map(|f| (Role::Filter, f.column.entity.as_str(), f.column.column.as_str())));
        // Credited conversion rows aggregate the conversion metric's own measure.
        if let (crate::model::ConversionCounts::ConversionRows, Some(conv)) = (t.counts, model.metric(&t.metric)) {
            let columns: Vec<(&str, &str)> = conv.measure.columns().into_iter().map(|c| (t.entity.as_str(), c)).collect();
            if matches!(conv.measure.agg, Aggregation::Min | Aggregation::Max) {
                revealing.extend(columns.iter().map(|(e, c)| (Role::MinMax, *e, *c)));
            }
        }
    }
    if matches!(metric.measure.agg, Aggregation::Min | Aggregation::Max) {
        revealing.extend(measure.iter().map(|(e, c)| (Role::MinMax, *e, *c)));
    }
    // A computed column reveals what it reads.
    let all_inputs = inputs(model, all.iter().map(|(e, c)| ((), *e, *c)));
    let revealing_inputs = inputs(model, revealing.iter().copied());
    all.extend(all_inputs.iter().map(|((), e, w)| (*e, w.as_str())));
    revealing.extend(revealing_inputs.iter().map(|(role, e, w)| (*role, *e, w.as_str())));
    let touched = crate::pii::Touched { all, revealing };
    let admitted = crate::pii::check(model, &touched).map_err(|r| {
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
    })?;
    floor(model, plan, &admitted)
}

/// For each `(tag, entity, column)` that is a computed column, the names
/// its expression may read (see `Column::reads`), with the same tag.
fn inputs<'m, T: Copy>(model: &SemanticModel, uses: impl IntoIterator<Item = (T, &'m str, &'m str)>) -> Vec<(T, &'m str, String)> {
    let mut out = Vec::new();
    for (tag, e, c) in uses {
        let Some(computed) = model.entity(e).and_then(|entity| entity.column(c)).filter(|col| col.expr.is_some()) else { continue };
        out.extend(computed.reads().into_iter().filter(|w| w != c).map(|w| (tag, e, w)));
    }
    out
}

/// The group floor for the admitted uses: each column's entity must be an
/// alias of the main query reached over to-one joins, with a one-column
/// identity, and a filter must be on the main query (not inside a
/// semi-join or a conversion check), or the people cannot be counted
/// alongside the aggregate and the request is refused as before.
fn floor(model: &SemanticModel, plan: &ComponentPlan, admitted: &[crate::pii::Admitted<'_>]) -> Result<Option<(GroupFloor, PlanNote)>, Issue> {
    let Some(k) = admitted.iter().map(|a| a.k).max() else { return Ok(None) };
    let mut owners: Vec<(String, String)> = Vec::new();
    let mut columns: Vec<String> = Vec::new();
    for a in admitted {
        let refuse = |why: &str| {
            let role = match a.role {
                crate::pii::Role::GroupBy => "grouping by",
                crate::pii::Role::TimeDimension => "bucketing by",
                crate::pii::Role::Filter => "filtering on",
                crate::pii::Role::MinMax => "MIN/MAX over",
            };
            Issue::PiiBlocked {
                categories: a.categories.clone(),
                message: format!(
                    "Refused before any SQL ran: {role} `{}.{}` is allowed only with small groups withheld (min_group_size {}), and {why}.",
                    a.entity, a.column, a.k
                ),
            }
        };
        let on_main_query = match a.role {
            crate::pii::Role::Filter => plan
                .filters
                .iter()
                .chain(plan.any_of.iter().flat_map(crate::ir::Condition::atoms))
                .any(|f| f.alias == a.entity && f.column == a.column),
            _ => true,
        };
        if !on_main_query {
            return Err(refuse("the filter applies to related rows (a semi-join or conversion check), whose people cannot be counted with the answer"));
        }
        if !reached_to_one(plan, a.entity) {
            return Err(refuse(&format!("`{}` is reached over a to-many join, so its people cannot be counted without changing the aggregate", a.entity)));
        }
        let identity = match model.entity(a.entity).map(|e| e.identity.as_slice()) {
            Some([one]) => one.clone(),
            _ => return Err(refuse(&format!("`{}` has no one-column identity to count its people by", a.entity))),
        };
        let owner = (a.entity.to_string(), identity);
        if !owners.contains(&owner) {
            owners.push(owner);
        }
        let name = format!("{}.{}", a.entity, a.column);
        if !columns.contains(&name) {
            columns.push(name);
        }
    }
    let people = owners.iter().map(|(e, _)| e.clone()).collect();
    Ok(Some((GroupFloor { k, owners }, PlanNote::SmallGroupsWithheld { k, columns, people })))
}

/// Whether `alias` is the anchor or joined to it over to-one steps only.
fn reached_to_one(plan: &ComponentPlan, alias: &str) -> bool {
    let mut at = alias;
    for _ in 0..=plan.joins.len() {
        if at == plan.anchor.alias {
            return true;
        }
        match plan.joins.iter().find(|j| j.to.alias == at) {
            Some(j) if !j.fans_out() => at = &j.from_alias,
            _ => return false,
        }
    }
    false
}
