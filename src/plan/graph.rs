//! The join graph: entities as nodes, canonical joins as undirected edges.
//! Walking an edge against its declared direction flips its cardinality.

use std::collections::{BTreeMap, VecDeque};

use petgraph::graph::{NodeIndex, UnGraph};

use crate::model::{Cardinality, Join, SemanticModel};

/// Paths longer than this are not searched (as SchemaBrain).
pub const MAX_HOPS: usize = 6;
/// At most this many equal shortest paths are enumerated for a message.
const MAX_PATHS: usize = 16;

/// One join walked in a given direction.
#[derive(Clone, Debug)]
pub struct Hop<'m> {
    pub join: &'m Join,
    pub from: &'m str,
    pub to: &'m str,
    /// True when walked from the join's target to its source.
    pub reversed: bool,
}

impl Hop<'_> {
    /// Cardinality as seen from `from` to `to`; unknown is the worst case.
    pub fn cardinality(&self) -> Cardinality {
        let declared = self.join.cardinality.unwrap_or(Cardinality::ManyToMany);
        if self.reversed {
            declared.reversed()
        } else {
            declared
        }
    }

    /// `(from column, to column)` pairs of the ON clause in walking order.
    pub fn on_pairs(&self) -> Vec<(&str, &str)> {
        self.join
            .on
            .iter()
            .map(|k| if self.reversed { (k.target.as_str(), k.source.as_str()) } else { (k.source.as_str(), k.target.as_str()) })
            .collect()
    }
}

pub struct JoinGraph<'m> {
    graph: UnGraph<&'m str, &'m Join>,
    nodes: BTreeMap<&'m str, NodeIndex>,
}

impl<'m> JoinGraph<'m> {
    pub fn new(model: &'m SemanticModel) -> Self {
        let mut graph = UnGraph::new_undirected();
        let mut nodes = BTreeMap::new();
        for name in model.entities.keys() {
            nodes.insert(name.as_str(), graph.add_node(name.as_str()));
        }
        for j in model.joins.values() {
            if let (Some(&a), Some(&b)) = (nodes.get(j.source_entity.as_str()), nodes.get(j.target_entity.as_str())) {
                graph.add_edge(a, b, j);
            }
        }
        JoinGraph { graph, nodes }
    }

    /// Joins between two entities, by name, each oriented `from → to`.
    pub fn hops_between(&self, from: &str, to: &str) -> Vec<Hop<'m>> {
        let (Some(&a), Some(&b)) = (self.nodes.get(from), self.nodes.get(to)) else {
            return Vec::new();
        };
        let mut hops: Vec<Hop<'m>> = self
            .graph
            .edges_connecting(a, b)
            .map(|e| {
                let j: &'m Join = e.weight();
                Hop { join: j, from: self.graph[a], to: self.graph[b], reversed: j.source_entity != from }
            })
            .collect();
        hops.sort_by(|x, y| x.join.name.cmp(&y.join.name));
        hops
    }

    /// Neighbours of an entity, sorted by name so searches are deterministic.
    fn neighbours(&self, n: NodeIndex) -> Vec<NodeIndex> {
        let mut v: Vec<NodeIndex> = self.graph.neighbors(n).collect();
        v.sort_by_key(|&i| self.graph[i]);
        v.dedup();
        v
    }

    /// Every shortest entity path from `from` to `to` of at most `MAX_HOPS`
    /// hops (parallel joins collapsed), each as the list of entities walked.
    pub fn shortest_paths(&self, from: &str, to: &str) -> Vec<Vec<&'m str>> {
        let (Some(&start), Some(&goal)) = (self.nodes.get(from), self.nodes.get(to)) else {
            return Vec::new();
        };
        if start == goal {
            return vec![vec![self.graph[start]]];
        }
        let mut dist: BTreeMap<NodeIndex, usize> = BTreeMap::from([(start, 0)]);
        let mut preds: BTreeMap<NodeIndex, Vec<NodeIndex>> = BTreeMap::new();
        let mut queue = VecDeque::from([start]);
        while let Some(n) = queue.pop_front() {
            let d = dist[&n];
            if d >= MAX_HOPS || dist.get(&goal).is_some_and(|&g| d >= g) {
                continue;
            }
            for m in self.neighbours(n) {
                match dist.get(&m) {
                    None => {
                        dist.insert(m, d + 1);
                        preds.insert(m, vec![n]);
                        queue.push_back(m);
                    }
                    Some(&dm) if dm == d + 1 => preds.entry(m).or_default().push(n),
                    Some(_) => {}
                }
            }
        }
        if !dist.contains_key(&goal) {
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut stack = vec![goal];
        self.unwind(&preds, start, &mut stack, &mut out);
        out.sort();
        out
    }

    fn unwind(
        &self,
        preds: &BTreeMap<NodeIndex, Vec<NodeIndex>>,
        start: NodeIndex,
        stack: &mut Vec<NodeIndex>,
        out: &mut Vec<Vec<&'m str>>,
    ) {
        if out.len() >= MAX_PATHS {
            return;
        }
        let last = *stack.last().expect("stack starts with the goal");
        if last == start {
            out.push(stack.iter().rev().map(|&i| self.graph[i]).collect());
            return;
        }
        for &p in preds.get(&last).map(Vec::as_slice).unwrap_or_default() {
            stack.push(p);
            self.unwind(preds, start, stack, out);
            stack.pop();
        }
    }

    /// Entities reachable from `from` walking only to-one hops (many_to_one or
    /// one_to_one as seen from the walker), nearest first, with the path of
    /// entities to each. Used to inherit a time dimension.
    pub fn to_one_reachable(&self, from: &str) -> Vec<(&'m str, Vec<&'m str>)> {
        let Some(&start) = self.nodes.get(from) else {
            return Vec::new();
        };
        let mut seen: BTreeMap<NodeIndex, Vec<&'m str>> = BTreeMap::from([(start, vec![self.graph[start]])]);
        let mut order = Vec::new();
        let mut queue = VecDeque::from([start]);
        while let Some(n) = queue.pop_front() {
            let path = seen[&n].clone();
            if path.len() > MAX_HOPS {
                continue;
            }
            for m in self.neighbours(n) {
                if seen.contains_key(&m) {
                    continue;
                }
                let to_one = self
                    .hops_between(self.graph[n], self.graph[m])
                    .iter()
                    .any(|h| matches!(h.join.cardinality.map(|_| h.cardinality()), Some(Cardinality::ManyToOne | Cardinality::OneToOne)));
                if to_one {
                    let mut p = path.clone();
                    p.push(self.graph[m]);
                    seen.insert(m, p.clone());
                    order.push((self.graph[m], p));
                    queue.push_back(m);
                }
            }
        }
        order
    }
}
