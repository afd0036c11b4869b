//! The joins of one component: a tree rooted at the anchor with one alias
//! per entity, paths chosen among the shortest with `via`, and the to-many
//! branches only filters reach, grouped into semi-joins.

use std::collections::BTreeMap;

use crate::ir::Issue;
use crate::model::graph::{Hop, JoinGraph};
use crate::model::Cardinality;

/// A join step as the tree records it.
#[derive(Clone, Debug)]
pub(super) struct TreeStep {
    pub join: String,
    pub from: String,
    pub to: String,
    pub on: Vec<(String, String)>,
    pub cardinality: Cardinality,
    pub declared: bool,
    /// A versioned join's window, with whether the versions are the `to`
    /// side (walked from source to target).
    pub versions: Option<(crate::model::Validity, bool)>,
}

/// The joined entities: a tree rooted at the anchor, one alias per entity.
pub(super) struct JoinTree {
    pub anchor: String,
    pub steps: Vec<TreeStep>,
    /// entity → index of the step that joined it.
    reached: BTreeMap<String, usize>,
}

impl JoinTree {
    pub fn new(anchor: &str) -> Self {
        JoinTree { anchor: anchor.to_string(), steps: Vec::new(), reached: BTreeMap::new() }
    }

    pub fn contains(&self, entity: &str) -> bool {
        entity == self.anchor || self.reached.contains_key(entity)
    }

    /// The steps from the anchor to `target`, choosing among shortest paths
    /// with `via`. Nothing is added yet.
    pub fn path_steps(&self, graph: &JoinGraph, target: &str, via: &[String]) -> Result<Vec<TreeStep>, Issue> {
        if target == self.anchor {
            return Ok(Vec::new());
        }
        let paths = graph.shortest_paths(&self.anchor, target);
        if paths.is_empty() {
            return Err(Issue::Unreachable { anchor: self.anchor.clone(), target: target.to_string() });
        }
        let path = choose_path(graph, &self.anchor, target, paths, via)?;
        path.iter()
            .zip(path.iter().skip(1))
            .map(|(&from, &to)| {
                let hop = choose_join(graph, from, to, via)?;
                Ok(TreeStep {
                    join: hop.join.name.clone(),
                    from: from.to_string(),
                    to: to.to_string(),
                    on: hop.on_pairs().into_iter().map(|(a, b)| (a.to_string(), b.to_string())).collect(),
                    cardinality: hop.cardinality(),
                    declared: hop.join.cardinality.is_some(),
                    versions: hop.join.valid_between.clone().map(|v| (v, !hop.reversed)),
                })
            })
            .collect()
    }

    /// Adds steps to the tree; an entity already joined is reused, and one
    /// joined by another route is an ambiguity (one alias per entity).
    pub fn add(&mut self, steps: Vec<TreeStep>, target: &str) -> Result<(), Issue> {
        for step in steps {
            if let Some(known) = self.reached.get(&step.to).and_then(|&i| self.steps.get(i)) {
                if known.join != step.join || known.from != step.from {
                    return Err(Issue::AmbiguousPath {
                        anchor: self.anchor.clone(),
                        target: target.to_string(),
                        paths: vec![vec![known.join.clone()], vec![step.join.clone()]],
                    });
                }
                continue;
            }
            self.reached.insert(step.to.clone(), self.steps.len());
            self.steps.push(step);
        }
        Ok(())
    }
}

/// Collects the to-many part of filter paths that share their first to-many
/// join: all their conditions go into one EXISTS, so "an item of brand X in
/// category Y" means one item with both.
pub(super) struct SemiJoinBuilder {
    /// (entity the EXISTS correlates to, first to-many join).
    pub key: (String, String),
    pub steps: Vec<TreeStep>,
}

impl SemiJoinBuilder {
    /// Adds steps (sharing those already there).
    pub fn add(&mut self, steps: &[TreeStep]) -> Result<(), Issue> {
        for s in steps {
            match self.steps.iter().find(|t| t.to == s.to) {
                Some(t) if t.join == s.join && t.from == s.from => {}
                Some(t) => {
                    return Err(Issue::AmbiguousPath {
                        anchor: self.key.0.clone(),
                        target: s.to.clone(),
                        paths: vec![vec![t.join.clone()], vec![s.join.clone()]],
                    })
                }
                None => self.steps.push(s.clone()),
            }
        }
        Ok(())
    }
}

/// The join names of a path, taking the alphabetically first join on hops
/// with parallel joins (how paths are shown to the agent).
fn path_join_names(graph: &JoinGraph, path: &[&str]) -> Vec<String> {
    path.iter().zip(path.iter().skip(1)).filter_map(|(a, b)| graph.hops_between(a, b).first().map(|h| h.join.name.clone())).collect()
}

fn choose_path<'g>(
    graph: &'g JoinGraph,
    anchor: &str,
    target: &str,
    mut paths: Vec<Vec<&'g str>>,
    via: &[String],
) -> Result<Vec<&'g str>, Issue> {
    if paths.len() == 1 {
        return Ok(paths.remove(0));
    }
    // Prefer the paths that use the most `via` joins; a unique winner is chosen.
    let score = |p: &Vec<&str>| {
        p.iter().zip(p.iter().skip(1)).map(|(a, b)| graph.hops_between(a, b).iter().filter(|h| via.contains(&h.join.name)).count()).sum::<usize>()
    };
    let best = paths.iter().map(score).max().unwrap_or(0);
    let winners: Vec<&Vec<&str>> = paths.iter().filter(|p| score(p) == best).collect();
    if let [only] = winners.as_slice() {
        if best > 0 {
            return Ok((*only).clone());
        }
    }
    Err(Issue::AmbiguousPath {
        anchor: anchor.to_string(),
        target: target.to_string(),
        paths: winners.iter().map(|p| path_join_names(graph, p)).collect(),
    })
}

fn choose_join<'g>(graph: &'g JoinGraph, from: &str, to: &str, via: &[String]) -> Result<Hop<'g>, Issue> {
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
