//! The scan-sharing pass: components that read the same rows are
//! aggregated in one scan of their anchor, each with its own filters as a
//! condition on its aggregate (DESIGN, "Several metrics": metrics on one
//! anchor share one aggregation). Five metrics of `lineitem` side by side,
//! or a ratio's numerator and denominator, then read the table once, as an
//! expert writes them, instead of once each and joined after.
//!
//! Components read the same rows when they have the same anchor, the same
//! time bucket, the same request filters (and semi-joins), and joins that
//! agree where they meet; each must be plain (not moved, accumulated,
//! converted, non-additive or on a time spine), aggregated directly (no
//! to-many join: another component's joins then add no row), and without
//! a minimum group size. Anything else keeps a scan of its own.
//!
//! Pure: reads the component plans only.

use super::{AggregationStrategy, ComponentPlan, JoinStep, PlannedFilter};
use crate::ir::{Condition, Transform};

/// Groups of at least two components (indices in order, the first the
/// group's host) that share one scan.
pub(super) fn share(components: &[ComponentPlan]) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (i, c) in components.iter().enumerate() {
        if !shareable(c) {
            continue;
        }
        let joined = groups.iter_mut().find(|g| g.iter().all(|&m| components.get(m).is_some_and(|o| same_rows(o, c))));
        match joined {
            Some(g) => g.push(i),
            None => groups.push(vec![i]),
        }
    }
    groups.retain(|g| g.len() > 1);
    groups
}

/// Gives each group's host every relation its members read: their joins
/// (each entity once, joined as they agree) and, on each relation, the union
/// of the computed columns they read. The host's scan is then every
/// member's.
pub(super) fn merge_into_hosts(components: &mut [ComponentPlan], groups: &[Vec<usize>]) {
    for group in groups {
        let Some((&host, members)) = group.split_first() else { continue };
        let taken: Vec<(Computed, Vec<JoinStep>)> =
            members.iter().filter_map(|&m| components.get(m)).map(|c| (c.anchor.computed.clone(), c.joins.clone())).collect();
        let Some(h) = components.get_mut(host) else { continue };
        for (computed, joins) in taken {
            add_computed(&mut h.anchor.computed, computed);
            for j in joins {
                match h.joins.iter_mut().find(|x| x.to.alias == j.to.alias) {
                    Some(x) => add_computed(&mut x.to.computed, j.to.computed),
                    None => h.joins.push(j),
                }
            }
        }
    }
}

/// A relation's computed columns, `(name, SQL expression)`.
type Computed = Vec<(String, String)>;

fn add_computed(into: &mut Computed, more: Computed) {
    for c in more {
        if !into.contains(&c) {
            into.push(c);
        }
    }
}

fn shareable(c: &ComponentPlan) -> bool {
    c.transform == Transform::Plain
        && c.spine.is_none()
        && c.conversion.is_none()
        && c.non_additive.is_none()
        && c.group_floor.is_none()
        && c.aggregation == AggregationStrategy::Direct
        && c.semi_joins.iter().all(|s| s.filters.iter().all(|f| !f.from_metric))
}

/// Whether two components read the same rows before their own filters.
fn same_rows(a: &ComponentPlan, b: &ComponentPlan) -> bool {
    a.anchor.entity == b.anchor.entity
        && a.anchor.table == b.anchor.table
        && a.time == b.time
        && a.semi_joins == b.semi_joins
        && shared_filters(a).eq(shared_filters(b))
        && shared_conditions(a).eq(shared_conditions(b))
        && joins_agree(&a.joins, &b.joins)
}

/// The filters the request gave (the same for every component it asks).
pub fn shared_filters(c: &ComponentPlan) -> impl Iterator<Item = &PlannedFilter> {
    c.filters.iter().filter(|f| !f.from_metric)
}

/// The request's disjunctions.
pub fn shared_conditions(c: &ComponentPlan) -> impl Iterator<Item = &Condition<PlannedFilter>> {
    c.any_of.iter().filter(|c| !is_own(c))
}

/// The metric's own filters: what it counts, a condition on its aggregate
/// in a shared scan.
pub fn own_filters(c: &ComponentPlan) -> impl Iterator<Item = &PlannedFilter> {
    c.filters.iter().filter(|f| f.from_metric)
}

/// The metric's own disjunctions.
pub fn own_conditions(c: &ComponentPlan) -> impl Iterator<Item = &Condition<PlannedFilter>> {
    c.any_of.iter().filter(|c| is_own(c))
}

fn is_own(c: &Condition<PlannedFilter>) -> bool {
    c.atoms().iter().any(|f| f.from_metric)
}

/// Joins agree when every entity both join is joined the same way (its
/// relation's computed columns aside: each component lists those it reads).
fn joins_agree(a: &[JoinStep], b: &[JoinStep]) -> bool {
    a.iter().all(|x| {
        b.iter().find(|y| y.to.alias == x.to.alias).is_none_or(|y| {
            x.join == y.join && x.from_alias == y.from_alias && x.to.entity == y.to.entity && x.to.table == y.to.table && x.on == y.on && x.kind == y.kind && x.versions == y.versions
        })
    })
}
