//! The path-choice pass: which joins take a component from its anchor to
//! an entity it reads (docs/grammar.md, "Which path a request takes").
//!
//! Paths over declared to-one joins are *roles* the entity plays for the
//! anchor: a line item's supplier's nation and its order's customer's
//! nation are two nations, whatever the paths' lengths. So the shortest
//! path does not win by being short: a direct to-one join (the anchor's
//! own customer) wins; otherwise one role is taken, and several are
//! `ambiguous_path` until `via` names the joins of one, on a path of any
//! length. Across a to-many join (no role) the shortest path is taken.
//!
//! Pure: reads the model's join graph only.

use crate::ir::Issue;
use crate::model::graph::{Hop, JoinGraph};

/// The join names of a path, taking the alphabetically first join on hops
/// with parallel joins (how paths are shown to the agent).
fn path_join_names(graph: &JoinGraph, path: &[&str]) -> Vec<String> {
    path.iter().zip(path.iter().skip(1)).filter_map(|(a, b)| graph.hops_between(a, b).first().map(|h| h.join.name.clone())).collect()
}

/// The path from `anchor` to `target` (docs/grammar.md, "Which path a
/// request takes"):
/// - Paths over declared to-one joins are *roles* the target plays for the
///   anchor (a line item's supplier's nation, its order's customer's
///   nation); when there are any, only they are candidates. Otherwise every
///   path is (across a to-many join), and without `via` the shortest wins.
/// - `via` first: the candidates using the most `via` joins, and of those
///   the shortest, whatever its length beside the others.
/// - Without `via` (or when no candidate uses one), a direct to-one join is
///   the anchor's own (an order's customer) and wins; one role is taken;
///   several roles are `ambiguous_path`, listing them: they mean different
///   things, so the caller chooses with `via`.
pub(super) fn choose_path<'g>(graph: &'g JoinGraph, anchor: &str, target: &str, via: &[String]) -> Result<Vec<&'g str>, Issue> {
    let roles = graph.to_one_paths(anchor, target);
    let has_roles = !roles.is_empty();
    let candidates = match (has_roles, via.is_empty()) {
        (true, _) => roles,
        (false, true) => graph.shortest_paths(anchor, target),
        (false, false) => graph.simple_paths(anchor, target),
    };
    if candidates.is_empty() {
        return Err(Issue::Unreachable { anchor: anchor.to_string(), target: target.to_string() });
    }
    let score = |p: &Vec<&str>| {
        p.iter().zip(p.iter().skip(1)).map(|(a, b)| graph.hops_between(a, b).iter().filter(|h| via.contains(&h.join.name)).count()).sum::<usize>()
    };
    let best = candidates.iter().map(score).max().unwrap_or(0);
    let chosen: Vec<&Vec<&str>> = if best > 0 {
        let scored: Vec<&Vec<&str>> = candidates.iter().filter(|p| score(p) == best).collect();
        let shortest = scored.iter().map(|p| p.len()).min().unwrap_or(0);
        scored.into_iter().filter(|p| p.len() == shortest).collect()
    } else if has_roles {
        match candidates.iter().find(|p| p.len() == 2) {
            Some(direct) => vec![direct],
            None => distinct_roles(graph, &candidates, via),
        }
    } else {
        let shortest = candidates.iter().map(Vec::len).min().unwrap_or(0);
        candidates.iter().filter(|p| p.len() == shortest).collect()
    };
    if let [only] = chosen.as_slice() {
        return Ok((*only).clone());
    }
    Err(Issue::AmbiguousPath {
        anchor: anchor.to_string(),
        target: target.to_string(),
        paths: chosen.iter().map(|p| path_join_names(graph, p)).collect(),
    })
}

/// The paths that arrive at different rows, shortest first: two paths
/// whose join keys trace back to the same values are one role (a line
/// item's supplier, and the supplier of its part-supplier pair on the same
/// supplier key), and only the first is kept.
fn distinct_roles<'p, 'g>(graph: &JoinGraph, paths: &'p [Vec<&'g str>], via: &[String]) -> Vec<&'p Vec<&'g str>> {
    let mut seen: Vec<String> = Vec::new();
    let mut out = Vec::new();
    for p in paths {
        match arrival(graph, p, via) {
            Some(signature) if seen.contains(&signature) => {}
            Some(signature) => {
                seen.push(signature);
                out.push(p);
            }
            None => out.push(p),
        }
    }
    out
}

/// Which row of the last entity a path arrives at, as text: its key
/// columns, each traced back through the joins to the value it equals
/// (`supplier[s_suppkey=.l_suppkey]`: the supplier whose key is the
/// anchor's `l_suppkey`). Unknown where a hop has several joins `via` does
/// not settle.
fn arrival(graph: &JoinGraph, path: &[&str], via: &[String]) -> Option<String> {
    let mut traced: std::collections::BTreeMap<String, String> = std::collections::BTreeMap::new();
    // The row arrived at so far: the anchor's is "".
    let mut row = String::new();
    for (a, b) in path.iter().zip(path.iter().skip(1)) {
        let hops = graph.hops_between(a, b);
        let hop = match hops.as_slice() {
            [only] => only,
            many => {
                let named: Vec<&Hop> = many.iter().filter(|h| via.contains(&h.join.name)).collect();
                match named.as_slice() {
                    [only] => *only,
                    _ => return None,
                }
            }
        };
        let next: std::collections::BTreeMap<String, String> =
            hop.on_pairs().into_iter().map(|(from, to)| (to.to_string(), traced.get(from).cloned().unwrap_or_else(|| format!("{row}.{from}")))).collect();
        row = format!("{b}[{}]", next.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>().join(","));
        traced = next;
    }
    Some(row)
}

pub(super) fn choose_join<'g>(graph: &'g JoinGraph, from: &str, to: &str, via: &[String]) -> Result<Hop<'g>, Issue> {
    let mut hops = graph.hops_between(from, to);
    if hops.len() == 1 {
        return Ok(hops.remove(0));
    }
    let mut chosen: Vec<Hop<'g>> = hops.iter().filter(|h| via.contains(&h.join.name)).cloned().collect();
    if chosen.len() == 1 {
        return Ok(chosen.remove(0));
    }
    let candidates = if chosen.is_empty() { hops } else { chosen };
    Err(Issue::AmbiguousJoin {
        from: from.to_string(),
        to: to.to_string(),
        candidates: candidates.iter().map(|h| h.join.name.clone()).collect(),
    })
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::sync::OnceLock;

    use super::*;
    use crate::model::{load_checked, CheckedModel};

    /// `line` reaches `nation` through `supplier` (2 hops) and through
    /// `order` and `customer` (3); `order` reaches `shipment` only across a
    /// to-many join (tests/fixtures/paths).
    fn model() -> &'static CheckedModel {
        static MODEL: OnceLock<CheckedModel> = OnceLock::new();
        MODEL.get_or_init(|| load_checked(&Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/paths")).expect("the fixture loads"))
    }

    fn path(anchor: &str, target: &str, via: &[&str]) -> Result<Vec<String>, Issue> {
        let via: Vec<String> = via.iter().map(|v| v.to_string()).collect();
        choose_path(model().graph(), anchor, target, &via).map(|p| p.into_iter().map(String::from).collect())
    }

    #[test]
    fn roles_of_unequal_length_are_ambiguous_without_via() {
        match path("line", "nation", &[]) {
            Err(Issue::AmbiguousPath { paths, .. }) => {
                assert_eq!(paths, vec![vec!["line_supplier", "supplier_nation"], vec!["line_order", "order_customer", "customer_nation"]]);
            }
            other => panic!("expected ambiguous_path, got {other:?}"),
        }
        // Every entity beyond the ambiguity is ambiguous too.
        assert!(matches!(path("line", "region", &[]), Err(Issue::AmbiguousPath { .. })));
    }

    #[test]
    fn via_picks_the_longer_role() {
        assert_eq!(path("line", "nation", &["customer_nation"]).unwrap(), ["line", "order", "customer", "nation"]);
        assert_eq!(path("line", "nation", &["order_customer"]).unwrap(), ["line", "order", "customer", "nation"]);
        assert_eq!(path("line", "nation", &["supplier_nation"]).unwrap(), ["line", "supplier", "nation"]);
        assert_eq!(path("line", "region", &["customer_nation"]).unwrap(), ["line", "order", "customer", "nation", "region"]);
    }

    #[test]
    fn a_direct_join_is_the_anchors_own() {
        // `line` joins `order` directly; no other role reaches it.
        assert_eq!(path("line", "order", &[]).unwrap(), ["line", "order"]);
        assert_eq!(path("order", "nation", &[]).unwrap(), ["order", "customer", "nation"]);
    }

    #[test]
    fn via_that_no_role_uses_changes_nothing() {
        // `supplier_nation` is on no path from line to customer.
        assert_eq!(path("line", "customer", &["supplier_nation"]).unwrap(), ["line", "order", "customer"]);
    }

    #[test]
    fn across_a_to_many_join_the_shortest_path_is_taken() {
        assert_eq!(path("order", "shipment", &[]).unwrap(), ["order", "shipment"]);
        assert_eq!(path("customer", "shipment", &[]).unwrap(), ["customer", "order", "shipment"]);
        // `via` may name a join on a longer path there too.
        assert_eq!(path("supplier", "order", &["supplier_nation", "customer_nation"]).unwrap(), ["supplier", "nation", "customer", "order"]);
        assert_eq!(path("supplier", "order", &[]).unwrap(), ["supplier", "line", "order"]);
    }

    #[test]
    fn paths_that_arrive_at_the_same_row_are_one_role() {
        // line -> supplier_pair -> supplier matches the supplier on the
        // line's own supplier key: the same supplier as line -> supplier.
        let roles = model().graph().to_one_paths("line", "nation");
        assert_eq!(roles.len(), 3, "{roles:?}");
        match path("line", "nation", &[]) {
            Err(Issue::AmbiguousPath { paths, .. }) => assert_eq!(paths.len(), 2, "{paths:?}"),
            other => panic!("expected ambiguous_path, got {other:?}"),
        }
        assert_eq!(path("line", "supplier", &[]).unwrap(), ["line", "supplier"]);
        // `via` still takes the longer path it names.
        assert_eq!(path("line", "supplier", &["supplier_pair_supplier"]).unwrap(), ["line", "supplier_pair", "supplier"]);
    }

    #[test]
    fn unreachable_entities_are_reported() {
        assert!(matches!(path("line", "nowhere", &[]), Err(Issue::Unreachable { .. })));
    }
}
