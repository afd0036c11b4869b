//! The canonical join graph of a model: entities as nodes, joins as
//! undirected edges. Walking an edge against its declared direction flips
//! its cardinality. Built once per checked model (`CheckedModel`), owned by
//! it, so planning a request never rebuilds it.
//!
//! Searches are deterministic: neighbours and parallel joins are visited in
//! name order, precomputed at construction.

use std::collections::{BTreeMap, HashMap, VecDeque};

use petgraph::graph::{EdgeIndex, NodeIndex, UnGraph};

use super::{Cardinality, SemanticModel};

/// Paths longer than this are not searched (as SchemaBrain).
pub const MAX_HOPS: usize = 6;
/// At most this many equal shortest paths are enumerated for a message.
const MAX_PATHS: usize = 16;

/// A canonical join as the graph keeps it.
#[derive(Clone, Debug)]
pub struct JoinEdge {
    pub name: String,
    pub source: String,
    pub target: String,
    /// `(source column, target column)` equalities.
    pub on: Vec<(String, String)>,
    /// `None` when undeclared: walked as the worst case (many_to_many).
    pub cardinality: Option<Cardinality>,
    /// The target's validity window, for a versioned join.
    pub valid_between: Option<super::Validity>,
}

/// One join walked in a given direction.
#[derive(Clone, Debug)]
pub struct Hop<'g> {
    pub join: &'g JoinEdge,
    pub from: &'g str,
    pub to: &'g str,
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
            .map(|(s, t)| if self.reversed { (t.as_str(), s.as_str()) } else { (s.as_str(), t.as_str()) })
            .collect()
    }

    /// Declared many_to_one or one_to_one in the walking direction.
    fn is_declared_to_one(&self) -> bool {
        self.join.cardinality.is_some() && matches!(self.cardinality(), Cardinality::ManyToOne | Cardinality::OneToOne)
    }
}

#[derive(Clone, Debug, Default)]
pub struct JoinGraph {
    graph: UnGraph<String, JoinEdge>,
    nodes: HashMap<String, NodeIndex>,
    /// Neighbours of each node, sorted by name, without repeats.
    neighbours: Vec<Vec<NodeIndex>>,
    /// Joins between two nodes (smaller index first), sorted by join name.
    parallel: HashMap<(NodeIndex, NodeIndex), Vec<EdgeIndex>>,
}

impl JoinGraph {
    pub fn new(model: &SemanticModel) -> Self {
        let mut graph = UnGraph::new_undirected();
        let mut nodes = HashMap::new();
        for name in model.entities.keys() {
            nodes.insert(name.clone(), graph.add_node(name.clone()));
        }
        for j in model.joins.values() {
            if let (Some(&a), Some(&b)) = (nodes.get(&j.source_entity), nodes.get(&j.target_entity)) {
                let edge = JoinEdge {
                    name: j.name.clone(),
                    source: j.source_entity.clone(),
                    target: j.target_entity.clone(),
                    on: j.on.iter().map(|k| (k.source.clone(), k.target.clone())).collect(),
                    cardinality: j.cardinality,
                    valid_between: j.valid_between.clone(),
                };
                graph.add_edge(a, b, edge);
            }
        }
        let mut neighbours: Vec<Vec<NodeIndex>> = Vec::with_capacity(graph.node_count());
        for n in graph.node_indices() {
            let mut v: Vec<NodeIndex> = graph.neighbors(n).collect();
            v.sort_by(|x, y| graph[*x].cmp(&graph[*y]));
            v.dedup();
            neighbours.push(v);
        }
        let mut parallel: HashMap<(NodeIndex, NodeIndex), Vec<EdgeIndex>> = HashMap::new();
        for e in graph.edge_indices() {
            if let Some((a, b)) = graph.edge_endpoints(e) {
                parallel.entry(ordered(a, b)).or_default().push(e);
            }
        }
        for v in parallel.values_mut() {
            v.sort_by(|x, y| graph[*x].name.cmp(&graph[*y].name));
        }
        JoinGraph { graph, nodes, neighbours, parallel }
    }

    fn name(&self, n: NodeIndex) -> &str {
        &self.graph[n]
    }

    /// Joins between two entities, by name, each oriented `from → to`.
    pub fn hops_between(&self, from: &str, to: &str) -> Vec<Hop<'_>> {
        let (Some(&a), Some(&b)) = (self.nodes.get(from), self.nodes.get(to)) else {
            return Vec::new();
        };
        self.hops_between_nodes(a, b)
    }

    fn hops_between_nodes(&self, a: NodeIndex, b: NodeIndex) -> Vec<Hop<'_>> {
        let Some(edges) = self.parallel.get(&ordered(a, b)) else {
            return Vec::new();
        };
        edges
            .iter()
            .map(|&e| {
                let j = &self.graph[e];
                Hop { join: j, from: self.name(a), to: self.name(b), reversed: j.source != self.graph[a] }
            })
            .collect()
    }

    /// Every shortest entity path from `from` to `to` of at most `MAX_HOPS`
    /// hops (parallel joins collapsed), each as the list of entities walked.
    // `dist`, `preds` and `neighbours` hold one entry per node of the graph
    // and are indexed only by its own `NodeIndex`es.
    #[allow(clippy::indexing_slicing)]
    pub fn shortest_paths(&self, from: &str, to: &str) -> Vec<Vec<&str>> {
        let (Some(&start), Some(&goal)) = (self.nodes.get(from), self.nodes.get(to)) else {
            return Vec::new();
        };
        if start == goal {
            return vec![vec![self.name(start)]];
        }
        let n = self.graph.node_count();
        let mut dist: Vec<usize> = vec![usize::MAX; n];
        let mut preds: Vec<Vec<NodeIndex>> = vec![Vec::new(); n];
        dist[start.index()] = 0;
        let mut queue = VecDeque::from([start]);
        while let Some(node) = queue.pop_front() {
            let d = dist[node.index()];
            if d >= MAX_HOPS || dist[goal.index()] <= d {
                continue;
            }
            for &m in &self.neighbours[node.index()] {
                let dm = dist[m.index()];
                if dm == usize::MAX {
                    dist[m.index()] = d + 1;
                    preds[m.index()].push(node);
                    queue.push_back(m);
                } else if dm == d + 1 {
                    preds[m.index()].push(node);
                }
            }
        }
        if dist[goal.index()] == usize::MAX {
            return Vec::new();
        }
        let mut out = Vec::new();
        let mut stack = vec![goal];
        self.unwind(&preds, start, &mut stack, &mut out);
        out.sort();
        out
    }

    #[allow(clippy::indexing_slicing)] // `preds` has one entry per node (see shortest_paths)
    fn unwind<'g>(&'g self, preds: &[Vec<NodeIndex>], start: NodeIndex, stack: &mut Vec<NodeIndex>, out: &mut Vec<Vec<&'g str>>) {
        if out.len() >= MAX_PATHS {
            return;
        }
        let Some(&last) = stack.last() else { return };
        if last == start {
            out.push(stack.iter().rev().map(|&i| self.name(i)).collect());
            return;
        }
        for &p in &preds[last.index()] {
            stack.push(p);
            self.unwind(preds, start, stack, out);
            stack.pop();
        }
    }

    /// Entities reachable from `from` walking only declared to-one hops
    /// (many_to_one or one_to_one as seen from the walker), nearest first,
    /// with the path of entities to each. Used to inherit a time dimension.
    pub fn to_one_reachable(&self, from: &str) -> Vec<(&str, Vec<&str>)> {
        let Some(&start) = self.nodes.get(from) else {
            return Vec::new();
        };
        let mut seen: BTreeMap<NodeIndex, Vec<&str>> = BTreeMap::from([(start, vec![self.name(start)])]);
        let mut order = Vec::new();
        let mut queue = VecDeque::from([start]);
        while let Some(n) = queue.pop_front() {
            let Some(path) = seen.get(&n).cloned() else { continue };
            if path.len() > MAX_HOPS {
                continue;
            }
            for &m in self.neighbours.get(n.index()).into_iter().flatten() {
                if seen.contains_key(&m) {
                    continue;
                }
                if self.hops_between_nodes(n, m).iter().any(Hop::is_declared_to_one) {
                    let mut p = path.clone();
                    p.push(self.name(m));
                    seen.insert(m, p.clone());
                    order.push((self.name(m), p));
                    queue.push_back(m);
                }
            }
        }
        order
    }
}

fn ordered(a: NodeIndex, b: NodeIndex) -> (NodeIndex, NodeIndex) {
    if a <= b {
        (a, b)
    } else {
        (b, a)
    }
}
