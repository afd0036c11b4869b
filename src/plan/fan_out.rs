//! The fan-out pass: how a component whose to-many joins repeat its
//! anchor's rows is aggregated exactly, at the least cost. A count
//! distinct, a min or a max cannot tell a repeated row, so it runs over the
//! joined rows as they are (a count of the anchor's identity becomes a count
//! distinct of it). Every other aggregate needs each anchor row once per
//! key: where one to-many join (and to-one joins beyond it) is all that
//! repeats rows, its side is reduced to its distinct keys first and joined
//! to the anchor's rows after (the narrowest rows to deduplicate); else the
//! joined rows are reduced to one per (anchor identity, keys).
//!
//! Pure, like the whole planner: reads the component's measure and shape,
//! nothing else.

use super::{AggregationStrategy, ComponentPlan};
use crate::ir::Transform;
use crate::model::{Aggregation, FilterOp, Measure, MeasureOperand};

/// Chooses the strategy of `plan`, planned deduplicated wherever a to-many
/// join repeats rows of an anchor with an identity.
pub(super) fn run(plan: &mut ComponentPlan, identity: &[String]) {
    let planned = std::mem::replace(&mut plan.aggregation, AggregationStrategy::Direct);
    plan.aggregation = strategy(planned, &plan.measure, &plan.transform, plan.non_additive.is_some(), plan.spine.is_some(), identity);
    if matches!(plan.aggregation, AggregationStrategy::Deduplicated { .. }) && plan.transform == Transform::Plain {
        if let Some(step) = reducible_branch(plan) {
            plan.aggregation = AggregationStrategy::DistinctBranch { step };
        }
    }
}

/// The one to-many step whose side can be reduced to its distinct keys
/// before it is joined: the only step that fans out, to-one beyond it
/// (so its side holds no other repeat), not versioned, the time bucketed
/// outside it, and no disjunction, semi-join, metric filter, conversion,
/// non-additive window or group floor reading it. Its filters are applied
/// to its rows before they are reduced, and an anchor row with none left
/// is dropped (an INNER join), as its filter drops it when the rows are
/// joined first; that holds for every filter a NULL fails, so a branch
/// filtered `is_null` (which an anchor row without related rows passes)
/// keeps the rows' deduplication.
fn reducible_branch(plan: &ComponentPlan) -> Option<usize> {
    let fanning: Vec<usize> = plan.joins.iter().enumerate().filter(|(_, j)| j.fans_out()).map(|(i, _)| i).collect();
    let [step] = fanning.as_slice() else { return None };
    let branch = plan.branch_of(*step);
    let steps = || branch.iter().filter_map(|&i| plan.joins.get(i));
    let aliases: Vec<&str> = steps().map(|j| j.to.alias.as_str()).collect();
    let reads_branch = |alias: &str| aliases.contains(&alias);
    let simple = steps().all(|j| j.versions.is_none())
        && plan.non_additive.is_none()
        && plan.conversion.is_none()
        && plan.spine.is_none()
        && plan.group_floor.is_none()
        && !plan.time.as_ref().is_some_and(|t| reads_branch(&t.dimension.entity))
        && !plan.any_of.iter().flat_map(crate::ir::Condition::atoms).any(|f| reads_branch(&f.alias))
        && !plan.semi_joins.iter().any(|s| reads_branch(&s.correlate_from))
        && !plan.filters.iter().any(|f| reads_branch(&f.alias) && (f.by_metric.is_some() || f.shift.is_some() || f.op == FilterOp::IsNull));
    simple.then_some(*step)
}

/// The strategy for a component planned with `planned` (deduplicated when
/// a to-many join repeats anchor rows and the anchor has an identity).
/// Only a plain component is aggregated over repeated rows: a moved,
/// accumulated or converted one, a non-additive one and one on a time
/// spine read their rows in shapes of their own.
pub(super) fn strategy(
    planned: AggregationStrategy,
    measure: &Measure,
    transform: &Transform,
    non_additive: bool,
    on_spine: bool,
    identity: &[String],
) -> AggregationStrategy {
    let AggregationStrategy::Deduplicated { .. } = planned else { return planned };
    if *transform != Transform::Plain || non_additive || on_spine {
        return planned;
    }
    let counts_identity = match (&measure.operand, identity) {
        (MeasureOperand::Column(c), [id]) => measure.agg == Aggregation::Count && c == id,
        _ => false,
    };
    match measure.agg {
        Aggregation::CountDistinct | Aggregation::Min | Aggregation::Max => AggregationStrategy::RepeatInsensitive { count_identity: false },
        Aggregation::Count if counts_identity => AggregationStrategy::RepeatInsensitive { count_identity: true },
        _ => planned,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn measure(agg: Aggregation, column: &str) -> Measure {
        Measure { agg, operand: MeasureOperand::Column(column.into()), percentile: None, discrete: false }
    }

    fn dedup() -> AggregationStrategy {
        AggregationStrategy::Deduplicated { identity: vec!["id".into()] }
    }

    #[test]
    fn repeat_blind_aggregates_run_over_the_joined_rows() {
        let id = ["id".to_string()];
        for agg in [Aggregation::CountDistinct, Aggregation::Min, Aggregation::Max] {
            let got = strategy(dedup(), &measure(agg, "amount"), &Transform::Plain, false, false, &id);
            assert_eq!(got, AggregationStrategy::RepeatInsensitive { count_identity: false }, "{agg:?}");
        }
        let got = strategy(dedup(), &measure(Aggregation::Count, "id"), &Transform::Plain, false, false, &id);
        assert_eq!(got, AggregationStrategy::RepeatInsensitive { count_identity: true });
    }

    #[test]
    fn repeat_sensitive_aggregates_stay_deduplicated() {
        let id = ["id".to_string()];
        for agg in [Aggregation::Sum, Aggregation::Avg, Aggregation::Median, Aggregation::SumBoolean] {
            assert_eq!(strategy(dedup(), &measure(agg, "amount"), &Transform::Plain, false, false, &id), dedup(), "{agg:?}");
        }
        // A count of another column counts repeated rows.
        assert_eq!(strategy(dedup(), &measure(Aggregation::Count, "amount"), &Transform::Plain, false, false, &id), dedup());
        // A composite identity is no one column to count distinct.
        let pair = ["a".to_string(), "b".to_string()];
        assert_eq!(strategy(dedup(), &measure(Aggregation::Count, "a"), &Transform::Plain, false, false, &pair), dedup());
    }

    fn planned(metric: &str, group_by: &[&str], filter: Option<(&str, &str, crate::ir::FilterValue)>) -> AggregationStrategy {
        let model = crate::model::load_checked(&std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("semantics/demo")).expect("demo");
        let request = crate::ir::MetricRequest {
            names: vec![metric.into()],
            group_by: group_by.iter().map(|g| g.to_string()).collect(),
            filters: filter.into_iter().map(|(column, op, value)| crate::ir::FilterArg { column: column.into(), op: op.into(), value, metric: None }).collect(),
            ..Default::default()
        };
        let resolved = crate::ir::resolve(&model, &request).expect("resolves");
        let plan = crate::plan::plan_request(&model, &resolved).expect("plans");
        plan.components.first().expect("a component").aggregation.clone()
    }

    #[test]
    fn one_to_many_branch_is_reduced_before_it_is_joined() {
        use crate::ir::FilterValue;
        use crate::model::Literal;
        // order -> order_item (to-many) -> product: the branch's distinct
        // (order_id, category) pairs, joined to the orders.
        assert_eq!(planned("revenue", &["product.category"], None), AggregationStrategy::DistinctBranch { step: 0 });
        let books = Some(("product.category", "eq", FilterValue::Scalar(Literal::Text("books".into()))));
        assert_eq!(planned("revenue", &["product.category"], books), AggregationStrategy::DistinctBranch { step: 0 });
        // An order without items passes `is_null`: the rows are deduplicated after the join.
        let none = Some(("product.category", "is_null", FilterValue::None));
        assert!(matches!(planned("revenue", &["product.category"], none), AggregationStrategy::Deduplicated { .. }));
        // A count of the anchor's identity needs no deduplication at all.
        assert_eq!(planned("order_count", &["product.category"], None), AggregationStrategy::RepeatInsensitive { count_identity: true });
    }

    #[test]
    fn only_plain_components_change() {
        let id = ["id".to_string()];
        let m = measure(Aggregation::Max, "amount");
        assert_eq!(strategy(dedup(), &m, &Transform::ConversionBase, false, false, &id), dedup());
        assert_eq!(strategy(dedup(), &m, &Transform::Plain, true, false, &id), dedup());
        assert_eq!(strategy(dedup(), &m, &Transform::Plain, false, true, &id), dedup());
        assert_eq!(strategy(AggregationStrategy::Direct, &m, &Transform::Plain, false, false, &id), AggregationStrategy::Direct);
    }
}
