//! The semi-join-form pass: a filter across a to-many join keeps the rows
//! with at least one related row that passes it (DESIGN, "Filters across
//! a to-many hop"). Written `key IN (SELECT related key …)` wherever the
//! correlation is one column: every engine runs that as a semi-join, while
//! SQLite runs a correlated EXISTS once per outer row (seconds against
//! milliseconds). A composite key (a row value IN is not written in every
//! dialect) or a versioned first step keeps EXISTS.
//!
//! Pure.

use super::{ComponentPlan, SemiJoinForm};

pub(super) fn run(plan: &mut ComponentPlan) {
    for s in &mut plan.semi_joins {
        s.form = match s.steps.first() {
            Some(first) if first.on.len() == 1 && first.versions.is_none() => SemiJoinForm::In,
            _ => SemiJoinForm::Exists,
        };
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::model::load_checked;

    #[test]
    fn one_column_correlations_are_written_in() {
        let model = load_checked(&Path::new(env!("CARGO_MANIFEST_DIR")).join("semantics/demo")).expect("demo");
        let request = crate::ir::MetricRequest {
            names: vec!["revenue".into()],
            filters: vec![crate::ir::FilterArg {
                column: "product.category".into(),
                op: "eq".into(),
                value: crate::ir::FilterValue::Scalar(crate::model::Literal::Text("books".into())),
                metric: None,
            }],
            ..Default::default()
        };
        let resolved = crate::ir::resolve(&model, &request).expect("resolves");
        let mut plan = crate::plan::plan_request(&model, &resolved).expect("plans");
        let c = plan.components.first_mut().expect("one component");
        assert_eq!(c.semi_joins.iter().map(|s| s.form).collect::<Vec<_>>(), vec![SemiJoinForm::In]);
        // A composite correlation keeps EXISTS.
        if let Some(first) = c.semi_joins.first_mut().and_then(|s| s.steps.first_mut()) {
            first.on.push(("id".into(), "order_id".into()));
        }
        run(c);
        assert_eq!(c.semi_joins.iter().map(|s| s.form).collect::<Vec<_>>(), vec![SemiJoinForm::Exists]);
    }
}
