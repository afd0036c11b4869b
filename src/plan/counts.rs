//! The count pass: how a count over rows that are each one anchor row is
//! written. Over such rows (no join repeats them) a count distinct of the
//! anchor's one-column identity counts each row's identity once, as a
//! count of it does (an identity is unique); and a count of an anchor
//! column the catalog says is NOT NULL counts every row, as `count(*)`
//! does. Engines count rows without reading a column, and a count
//! distinct builds a hash set: an expert writes `count(*)` here (TPC-H:
//! customers by nation, 5× faster).
//!
//! Only a plain component aggregated directly: a moved, accumulated or
//! converted one, a non-additive window or one on a time spine reads its
//! rows in shapes of its own, and repeated rows need the distinct.
//!
//! Pure: reads the component and its anchor entity's columns.

use super::{AggregationStrategy, ComponentPlan, CountForm};
use crate::ir::Transform;
use crate::model::{Aggregation, Entity, MeasureOperand};

pub(super) fn run(plan: &mut ComponentPlan, anchor: &Entity) {
    plan.count = form(plan, anchor);
}

fn form(plan: &ComponentPlan, anchor: &Entity) -> CountForm {
    let plain = plan.aggregation == AggregationStrategy::Direct
        && plan.transform == Transform::Plain
        && plan.non_additive.is_none()
        && plan.conversion.is_none()
        && plan.spine.is_none();
    let MeasureOperand::Column(counted) = &plan.measure.operand else { return CountForm::AsDeclared };
    if !plain || plan.anchor.computed.iter().any(|(name, _)| name == counted) {
        return CountForm::AsDeclared;
    }
    let is_identity = matches!(anchor.identity.as_slice(), [id] if id == counted);
    let not_null = anchor.column(counted).is_some_and(|c| c.expr.is_none() && c.nullable == Some(false));
    match plan.measure.agg {
        Aggregation::Count | Aggregation::CountDistinct if not_null && (is_identity || plan.measure.agg == Aggregation::Count) => CountForm::Rows,
        Aggregation::CountDistinct if is_identity => CountForm::Values,
        _ => CountForm::AsDeclared,
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::model::{load_project, CheckedModel};

    /// The demo model; `not_null` columns marked as a catalog snapshot would.
    fn demo(not_null: &[(&str, &str)]) -> CheckedModel {
        let (mut model, diags) = load_project(&Path::new(env!("CARGO_MANIFEST_DIR")).join("semantics/demo"));
        assert!(diags.is_empty(), "{diags}");
        for &(entity, column) in not_null {
            let e = model.entities.get_mut(entity).expect("demo entity");
            match e.columns.iter_mut().find(|c| c.name == column) {
                Some(c) => c.nullable = Some(false),
                None => e.columns.push(crate::model::Column { name: column.into(), data_type: None, description: None, nullable: Some(false), expr: None }),
            }
        }
        CheckedModel::new(model).expect("checks")
    }

    fn forms(model: &CheckedModel, metric: &str, group_by: &[&str]) -> Vec<CountForm> {
        let request = crate::ir::MetricRequest { names: vec![metric.into()], group_by: group_by.iter().map(|g| g.to_string()).collect(), ..Default::default() };
        let resolved = crate::ir::resolve(model, &request).expect("resolves");
        crate::plan::plan_request(model, &resolved).expect("plans").components.iter().map(|c| c.count).collect()
    }

    #[test]
    fn a_distinct_count_of_the_identity_over_unrepeated_rows_counts_rows() {
        let model = demo(&[]);
        assert_eq!(forms(&model, "customer_count", &["customer.country"]), vec![CountForm::Values]);
        let model = demo(&[("customer", "id")]);
        assert_eq!(forms(&model, "customer_count", &["customer.country"]), vec![CountForm::Rows]);
    }

    #[test]
    fn repeated_rows_keep_the_declared_count() {
        // Orders repeat a customer: the distinct is what counts each once.
        let model = demo(&[("customer", "id")]);
        assert_eq!(forms(&model, "customer_count", &["order.status"]), vec![CountForm::AsDeclared]);
    }
}
