//! The joins of one component: a tree rooted at the anchor with one alias
//! per entity, each path chosen by the path-choice pass (`paths`), and the
//! to-many branches only filters reach, grouped into semi-joins.

use std::collections::BTreeMap;

use super::paths::{choose_join, choose_path};
use crate::ir::Issue;
use crate::model::graph::JoinGraph;
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

    /// The steps from the anchor to `target` on the path `choose_path`
    /// picks. Nothing is added yet.
    pub fn path_steps(&self, graph: &JoinGraph, target: &str, via: &[String]) -> Result<Vec<TreeStep>, Issue> {
        if target == self.anchor {
            return Ok(Vec::new());
        }
        let path = choose_path(graph, &self.anchor, target, via)?;
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
