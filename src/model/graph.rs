//! The canonical join graph of a model: entities as nodes, joins as
//! undirected edges. Walking an edge against its declared direction flips
//! its cardinality. Built once per checked model (`CheckedModel`), owned by
//! it, so planning a request never rebuilds it.
//!
//! Searches are deterministic: neighbours and parallel joins are visited in
//! name order, precomputed at construction.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::OnceLock;

use petgraph::graph::{EdgeIndex, NodeIndex, UnGraph};

use super::{Cardinality, SemanticModel};

/// Paths longer than this are not searched (as SchemaBrain).
pub const MAX_HOPS: usize = 6;
/// At most this many paths to one entity are enumerated (for a choice or a message).
const MAX_PATHS: usize = 16;
/// Path extensions a search of simple paths may make before it stops: a
/// dense graph of hundreds of entities must not make one request slow.
const SEARCH_BUDGET: usize = 4096;

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
    /// Why every source row finds its target row, if anything says so.
    pub every_row_matches: Option<super::MatchEvidence>,
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

    /// Why every row walked from finds its row on the other side: the join's
    /// evidence, walked from its source to a declared to-one target (and
    /// not versioned, where a row may fall outside every window).
    pub fn every_row_matches(&self) -> Option<super::MatchEvidence> {
        let walks_evidence = !self.reversed && self.is_declared_to_one() && self.join.valid_between.is_none();
        self.join.every_row_matches.filter(|_| walks_evidence)
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
    /// Per node, once asked: every to-one path from it to each entity it
    /// reaches over declared to-one hops (`to_one_paths`).
    to_one: Vec<OnceLock<ToOnePaths>>,
}

/// The to-one paths from one entity, by the entity they reach; each path
/// lists the nodes walked, the start included.
type ToOnePaths = HashMap<NodeIndex, Vec<Vec<NodeIndex>>>;

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
                    every_row_matches: j.every_row_matches,
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
        let to_one = (0..graph.node_count()).map(|_| OnceLock::new()).collect();
        JoinGraph { graph, nodes, neighbours, parallel, to_one }
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

    /// Every path from `from` to `to` walking declared to-one hops only
    /// (many_to_one or one_to_one as seen from the walker), each a *role*
    /// the target plays for `from` (a line item's supplier's nation, its
    /// order's customer's nation), shortest first, then by name; at most
    /// `MAX_PATHS`. Computed once per starting entity.
    pub fn to_one_paths(&self, from: &str, to: &str) -> Vec<Vec<&str>> {
        let (Some(&start), Some(&goal)) = (self.nodes.get(from), self.nodes.get(to)) else {
            return Vec::new();
        };
        let Some(cell) = self.to_one.get(start.index()) else { return Vec::new() };
        let all = cell.get_or_init(|| self.search_to_one(start));
        all.get(&goal).map(|paths| paths.iter().map(|p| p.iter().map(|&n| self.name(n)).collect()).collect()).unwrap_or_default()
    }

    /// Depth-first over declared to-one hops from `start`, in name order,
    /// within `MAX_HOPS` and the search budget.
    fn search_to_one(&self, start: NodeIndex) -> ToOnePaths {
        let mut found: ToOnePaths = HashMap::new();
        let mut budget = SEARCH_BUDGET;
        let mut path = vec![start];
        self.extend_paths(&mut path, &mut budget, &mut |n, m| self.hops_between_nodes(n, m).iter().any(Hop::is_declared_to_one), &mut |p| {
            if let Some(&last) = p.last() {
                let paths = found.entry(last).or_default();
                if paths.len() < MAX_PATHS {
                    paths.push(p.to_vec());
                }
            }
        });
        for paths in found.values_mut() {
            paths.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| self.names_of(a).cmp(&self.names_of(b))));
        }
        found
    }

    /// Every simple path from `from` to `to` of at most `MAX_HOPS` hops,
    /// over any joins, shortest first, then by name; at most `MAX_PATHS`,
    /// within the search budget. For `via`, which may name a join on a
    /// longer path.
    pub fn simple_paths(&self, from: &str, to: &str) -> Vec<Vec<&str>> {
        let (Some(&start), Some(&goal)) = (self.nodes.get(from), self.nodes.get(to)) else {
            return Vec::new();
        };
        if start == goal {
            return vec![vec![self.name(start)]];
        }
        let mut out: Vec<Vec<NodeIndex>> = Vec::new();
        let mut budget = SEARCH_BUDGET;
        let mut path = vec![start];
        // A path ends at the goal: no simple path passes through it and comes back.
        self.extend_paths(&mut path, &mut budget, &mut |n, _| n != goal, &mut |p| {
            if p.last() == Some(&goal) && out.len() < MAX_PATHS * 4 {
                out.push(p.to_vec());
            }
        });
        out.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| self.names_of(a).cmp(&self.names_of(b))));
        out.truncate(MAX_PATHS);
        out.iter().map(|p| p.iter().map(|&n| self.name(n)).collect()).collect()
    }

    fn names_of(&self, path: &[NodeIndex]) -> Vec<&str> {
        path.iter().map(|&n| self.name(n)).collect()
    }

    /// Extends `path` by every hop `walk` allows to a node not on it yet,
    /// reporting each path reached to `found`, depth first in name order.
    fn extend_paths(
        &self,
        path: &mut Vec<NodeIndex>,
        budget: &mut usize,
        walk: &mut dyn FnMut(NodeIndex, NodeIndex) -> bool,
        found: &mut dyn FnMut(&[NodeIndex]),
    ) {
        let Some(&last) = path.last() else { return };
        if path.len() > MAX_HOPS {
            return;
        }
        for &m in self.neighbours.get(last.index()).into_iter().flatten() {
            if *budget == 0 {
                return;
            }
            if path.contains(&m) || !walk(last, m) {
                continue;
            }
            *budget -= 1;
            path.push(m);
            found(path);
            self.extend_paths(path, budget, walk, found);
            path.pop();
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
