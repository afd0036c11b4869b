//! The join-type pass: each join step is a LEFT JOIN (DESIGN, "Join
//! type": every anchor row counts, a missing dimension row groups under
//! NULL) unless every row it joins from is known to find its row, when an
//! INNER JOIN gives the same rows and engines run it several times faster.
//! Known means: walked from the join's source towards a declared to-one
//! target, not versioned, and backed by evidence (`MatchEvidence`: a
//! foreign key on NOT NULL columns in the catalog snapshot, or
//! `every_row_matches: true` on the join).
//!
//! A step with evidence from a relation that was itself LEFT joined is
//! INNER inside that LEFT join (`LEFT JOIN (line JOIN part ON …) ON …`,
//! `within`): the relation's rows that exist each find their row, and the
//! missing ones stay missing, as two LEFT joins would leave them.
//!
//! Pure: reads the model's join graph only.

use super::{ComponentPlan, JoinKind};
use crate::model::CheckedModel;

/// Sets the kind of every join step of the main query (semi-join steps are
/// inner joins by nature). A step from a relation that was itself LEFT
/// joined stays LEFT: that relation's NULL row (an order without a store)
/// has no key to match, and an INNER JOIN beyond it would drop the order.
pub(super) fn run(model: &CheckedModel, plan: &mut ComponentPlan) {
    let graph = model.graph();
    // Relations with one row for every anchor row: the anchor, then each
    // one INNER joined from such a relation.
    let mut whole: Vec<String> = vec![plan.anchor.alias.clone()];
    // Each alias of a LEFT join's group: (alias, the LEFT-joined alias).
    let mut groups: Vec<(String, String)> = Vec::new();
    for step in &mut plan.joins {
        let evidence = graph.hops_between(&step.from_entity, &step.to.entity).iter().find(|h| h.join.name == step.join).and_then(|h| h.every_row_matches());
        step.matches = evidence;
        let group = groups.iter().find(|(alias, _)| *alias == step.from_alias).map(|(_, leader)| leader.clone());
        step.within = None;
        step.kind = match (evidence, group) {
            (Some(e), _) if whole.contains(&step.from_alias) => {
                whole.push(step.to.alias.clone());
                JoinKind::Inner(e)
            }
            (Some(e), Some(leader)) => {
                groups.push((step.to.alias.clone(), leader.clone()));
                step.within = Some(leader);
                JoinKind::Inner(e)
            }
            _ => {
                groups.push((step.to.alias.clone(), step.to.alias.clone()));
                JoinKind::Left
            }
        };
    }
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::model::{load_project, MatchEvidence};

    /// The demo model, its joins given evidence as a catalog snapshot would
    /// (`order_customer`, `customer_region`, `store_region`) or as the project
    /// may declare (`order_store`).
    fn demo_with_evidence(evidence: &[(&str, MatchEvidence)]) -> CheckedModel {
        let (mut model, diags) = load_project(&Path::new(env!("CARGO_MANIFEST_DIR")).join("semantics/demo"));
        assert!(diags.is_empty(), "{diags}");
        for &(name, evidence) in evidence {
            model.joins.get_mut(name).expect("demo join").every_row_matches = Some(evidence);
        }
        CheckedModel::new(model).expect("checks")
    }

    fn kinds(model: &CheckedModel, metric: &str, group_by: &[&str]) -> Vec<(String, JoinKind)> {
        let request = crate::ir::MetricRequest {
            names: vec![metric.into()],
            group_by: group_by.iter().map(|g| g.to_string()).collect(),
            ..Default::default()
        };
        let resolved = crate::ir::resolve(model, &request).expect("resolves");
        let plan = crate::plan::plan_request(model, &resolved).expect("plans");
        plan.components.iter().flat_map(|c| c.joins.iter().map(|j| (j.join.clone(), j.kind))).collect()
    }

    const ALL: [(&str, MatchEvidence); 4] = [
        ("order_customer", MatchEvidence::ForeignKey),
        ("customer_region", MatchEvidence::ForeignKey),
        ("store_region", MatchEvidence::ForeignKey),
        ("order_store", MatchEvidence::Declared),
    ];

    #[test]
    fn joins_with_evidence_walked_to_one_are_inner() {
        let model = demo_with_evidence(&ALL);
        assert_eq!(kinds(&model, "revenue", &["customer.country"]), vec![("order_customer".into(), JoinKind::Inner(MatchEvidence::ForeignKey))]);
        assert_eq!(kinds(&model, "revenue", &["store.name"]), vec![("order_store".into(), JoinKind::Inner(MatchEvidence::Declared))]);
    }

    #[test]
    fn joins_without_evidence_stay_left() {
        let model = demo_with_evidence(&ALL[..2]);
        let got = kinds(&model, "store_count", &["region.name"]);
        assert_eq!(got, vec![("store_region".into(), JoinKind::Left)]);
        // The same join walked from its target (one_to_many) keeps every row.
        let got = kinds(&model, "customer_count", &["order.status"]);
        assert_eq!(got, vec![("order_customer".into(), JoinKind::Left)]);
    }

    #[test]
    fn a_join_beyond_a_left_join_is_inner_inside_it() {
        // An order without a store has no region to match: store_region's
        // evidence holds for stores, so it joins inside the store's LEFT
        // join, where only stores that exist are joined.
        let model = demo_with_evidence(&ALL[1..3]);
        let request = crate::ir::MetricRequest {
            names: vec!["revenue".into()],
            group_by: vec!["region.name".into()],
            via: vec!["order_store".into()],
            ..Default::default()
        };
        let steps = |model: &CheckedModel| -> Vec<(String, JoinKind, Option<String>)> {
            let plan = crate::plan::plan_request(model, &crate::ir::resolve(model, &request).expect("resolves")).expect("plans");
            plan.components.iter().flat_map(|c| c.joins.iter().map(|j| (j.join.clone(), j.kind, j.within.clone()))).collect()
        };
        assert_eq!(
            steps(&model),
            vec![("order_store".into(), JoinKind::Left, None), ("store_region".into(), JoinKind::Inner(MatchEvidence::ForeignKey), Some("store".into()))]
        );
        // Without evidence for store_region, both stay LEFT.
        let model = demo_with_evidence(&ALL[..1]);
        assert_eq!(steps(&model), vec![("order_store".into(), JoinKind::Left, None), ("store_region".into(), JoinKind::Left, None)]);
        let model = demo_with_evidence(&ALL);
        let got: Vec<JoinKind> = steps(&model).into_iter().map(|(_, k, _)| k).collect();
        assert_eq!(got, vec![JoinKind::Inner(MatchEvidence::Declared), JoinKind::Inner(MatchEvidence::ForeignKey)]);
    }
}
