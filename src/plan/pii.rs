//! The PII check of one component, before any SQL exists: every column it
//! reads for its value counts (measure operands, group-by, filters, the
//! time dimension, join keys on every hop, conversion keys), checked on the
//! entity each join step names; a blocked category anywhere is refused.
//! Presence tests read no value and are not counted: an `is_null` /
//! `not_null` filter, `COUNT(col)` of a plain column, a computed column's
//! bare `col IS [NOT] NULL`. A personal column whose value the answer
//! would reveal (group-by, time bucket, filter) gets the policy's minimum
//! group size: the component gets a `GroupFloor` naming whose people to
//! count, or the request is refused when they cannot be counted exactly;
//! MIN/MAX of a personal column is refused.

use super::{ComponentPlan, GroupFloor, JoinStep, PlanNote};
use crate::ir::{Filter, Issue, MetricQuery, Transform};
use crate::model::{Aggregation, FilterOp, Measure, MeasureOperand, Metric, SemanticModel};

/// Every `(entity, column)` a component reads anywhere: measure operands,
/// time dimension, group-by, filters, join keys on every hop, conversion
/// keys, time and filters, and the credited conversion measure. The PII
/// check counts them all; the planner adds only these computed columns
/// to their relations.
pub(super) fn columns_read<'a>(model: &'a SemanticModel, metric: &'a Metric, plan: &'a ComponentPlan, q: &'a MetricQuery) -> Vec<(&'a str, &'a str)> {
    reads(model, metric, plan, q, Reads::All)
}

/// Which reads `reads` lists.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Reads {
    /// Every column the SQL reads (what the relations must carry).
    All,
    /// Only columns read for their value (what the PII check judges):
    /// presence tests left out.
    Values,
}

/// A filter that only asks whether a plain column's value is there. Not
/// on a computed column: `case when phone = '…' then 1 end IS NOT NULL`
/// tests a value (its inputs are judged through its expression).
fn is_presence(model: &SemanticModel, f: &Filter) -> bool {
    matches!(f.op, FilterOp::IsNull | FilterOp::NotNull) && f.by_metric.is_none() && !is_computed(model, &f.column.entity, &f.column.column)
}

/// The columns of `entity` a measure reads for their value: none for
/// `COUNT(col)` of a plain column (it counts the values that are there);
/// a computed column's inputs are judged through its expression.
fn measure_values<'m>(model: &SemanticModel, entity: &str, measure: &'m Measure) -> Vec<&'m str> {
    match &measure.operand {
        MeasureOperand::Column(c) if measure.agg == Aggregation::Count && !is_computed(model, entity, c) => Vec::new(),
        _ => measure.columns(),
    }
}

fn is_computed(model: &SemanticModel, entity: &str, column: &str) -> bool {
    model.entity(entity).and_then(|e| e.column(column)).is_some_and(|c| c.expr.is_some())
}

fn reads<'a>(model: &'a SemanticModel, metric: &'a Metric, plan: &'a ComponentPlan, q: &'a MetricQuery, which: Reads) -> Vec<(&'a str, &'a str)> {
    let values = which == Reads::Values;
    let anchor = metric.entity.as_str();
    let measure = if values { measure_values(model, anchor, &metric.measure) } else { metric.measure.columns() };
    let mut all: Vec<(&str, &str)> = measure.into_iter().map(|c| (anchor, c)).collect();
    all.extend(plan.time.iter().map(|t| (t.dimension.entity.as_str(), t.dimension.column.as_str())));
    all.extend(q.group_by.iter().map(|g| (g.column.entity.as_str(), g.column.column.as_str())));
    let filters = q.filters.iter().chain(q.any_of.iter().flat_map(crate::ir::Condition::atoms)).filter(|f| !(values && is_presence(model, f)));
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
        all.extend(t.filters.iter().filter(|f| !(values && is_presence(model, f))).map(|f| (f.column.entity.as_str(), f.column.column.as_str())));
        if let Some(td) = &metric.time_dimension {
            all.push((td.entity.as_str(), td.column.as_str()));
        }
        // Credited conversion rows aggregate the conversion metric's own measure.
        if let (crate::model::ConversionCounts::ConversionRows, Some(conv)) = (t.counts, model.metric(&t.metric)) {
            let measure = if values { measure_values(model, &t.entity, &conv.measure) } else { conv.measure.columns() };
            all.extend(measure.into_iter().map(|c| (t.entity.as_str(), c)));
        }
    }
    all
}

/// The check of one component: `Some` floor when a personal column is
/// grouped, bucketed or filtered on.
pub(super) fn check<'a>(model: &'a SemanticModel, metric: &'a Metric, plan: &'a ComponentPlan, q: &'a MetricQuery) -> Result<Option<(GroupFloor, PlanNote)>, Issue> {
    // Local lifetimes: the computed columns' inputs, owned here, are added below.
    let mut all: Vec<(&str, &str)> = reads(model, metric, plan, q, Reads::Values);
    let anchor = metric.entity.as_str();
    let measure: Vec<(&str, &str)> = metric.measure.columns().into_iter().map(|c| (anchor, c)).collect();
    let group_by: Vec<(&str, &str)> = q.group_by.iter().map(|g| (g.column.entity.as_str(), g.column.column.as_str())).collect();
    let filters: Vec<&Filter> = q.filters.iter().chain(q.any_of.iter().flat_map(crate::ir::Condition::atoms)).filter(|f| !is_presence(model, f)).collect();
    use crate::pii::Role;
    let mut revealing: Vec<(Role, &str, &str)> = group_by.iter().map(|(e, c)| (Role::GroupBy, *e, *c)).collect();
    revealing.extend(plan.time.iter().map(|t| (Role::TimeDimension, t.dimension.entity.as_str(), t.dimension.column.as_str())));
    revealing.extend(filters.iter().map(|f| (Role::Filter, f.column.entity.as_str(), f.column.column.as_str())));
    if let Transform::Converted(t) = &q.transform {
        revealing.extend(t.filters.iter().filter(|f| !is_presence(model, f)).map(|f| (Role::Filter, f.column.entity.as_str(), f.column.column.as_str())));
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
                "Refused before any SQL ran: the request reads columns whose PII categories the policy blocks ({cats}). Only a presence test (is_null / not_null, or a count of the column) may touch them."
            ),
            crate::pii::RefusalReason::RawValue { column } => format!(
                "Refused before any SQL ran: {} over `{column}` would return one person's raw value ({cats}); group or filter on it instead, or count it.",
                metric.measure.agg.as_str()
            ),
        };
        Issue::PiiBlocked { categories: r.categories, message }
    })?;
    floor(model, plan, &admitted)
}

/// For each `(tag, entity, column)` that is a computed column, the names
/// its expression may read for their value (`pii::value_words`: a bare
/// `col IS [NOT] NULL` reads none), with the same tag.
fn inputs<'m, T: Copy>(model: &SemanticModel, uses: impl IntoIterator<Item = (T, &'m str, &'m str)>) -> Vec<(T, &'m str, String)> {
    let mut out = Vec::new();
    for (tag, e, c) in uses {
        let Some(expr) = model.entity(e).and_then(|entity| entity.column(c)).and_then(|col| col.expr.as_deref()) else { continue };
        out.extend(crate::pii::value_words(expr).into_iter().filter(|w| w != c).map(|w| (tag, e, w)));
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
                .any(|f| f.alias == a.entity && (f.column == a.column || computed_reads(model, a.entity, &f.column, a.column))),
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

/// Whether `column` of `entity` is computed and reads `input` for its value.
fn computed_reads(model: &SemanticModel, entity: &str, column: &str, input: &str) -> bool {
    let expr = model.entity(entity).and_then(|e| e.column(column)).and_then(|c| c.expr.as_deref());
    expr.is_some_and(|x| crate::pii::value_words(x).iter().any(|w| w == input))
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
