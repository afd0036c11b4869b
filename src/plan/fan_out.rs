//! The fan-out pass: how a component whose to-many joins repeat its
//! anchor's rows is aggregated exactly, at the least cost. A count
//! distinct, a min or a max cannot tell a repeated row, so it runs over the
//! joined rows as they are (a count of the anchor's identity becomes a count
//! distinct of it); every other aggregate first reduces the rows to one per
//! (anchor identity, keys).
//!
//! Pure, like the whole planner: reads the component's measure and shape,
//! nothing else.

use super::{AggregationStrategy, ComponentPlan};
use crate::ir::Transform;
use crate::model::{Aggregation, Measure, MeasureOperand};

/// Chooses the strategy of `plan`, planned deduplicated wherever a to-many
/// join repeats rows of an anchor with an identity.
pub(super) fn run(plan: &mut ComponentPlan, identity: &[String]) {
    let planned = std::mem::replace(&mut plan.aggregation, AggregationStrategy::Direct);
    plan.aggregation = strategy(planned, &plan.measure, &plan.transform, plan.non_additive.is_some(), plan.spine.is_some(), identity);
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
