//! Planning: a resolved `MetricQuery` becomes a `QueryPlan` — which entities
//! are joined and how, which time dimension buckets the rows, what is
//! grouped, filtered and ordered, and what the answer must warn about.
//!
//! Owns the join graph (petgraph), path choice with `via`, cardinality in the
//! walking direction, fan-out detection, time-dimension choice and grain
//! checks.
//!
//! Architecture invariant: pure. Never opens a connection, never names a SQL
//! dialect, never builds SQL text; `dry_run` needs no engine because of this.

mod graph;

use std::collections::BTreeMap;

pub use graph::{Hop, JoinGraph, MAX_HOPS};

use crate::ir::{time_bucket_name, Filter, Issue, MetricQuery, OrderKey, OutputRef, Transform};
use crate::model::{
    Aggregation, Cardinality, ColumnRef, Grain, Interval, Measure, MeasureOperand, SemanticModel, TableRef, TypeClass,
    WindowChoice,
};

/// An entity in the FROM clause: the anchor or a joined one. The alias is
/// the entity name.
#[derive(Clone, Debug, PartialEq)]
pub struct Relation {
    pub alias: String,
    /// The entity the alias stands for (semi-joins alias entities anew).
    pub entity: String,
    pub table: TableRef,
}

/// One LEFT JOIN from an already-joined relation to a new one.
#[derive(Clone, Debug, PartialEq)]
pub struct JoinStep {
    pub join: String,
    pub from_alias: String,
    /// The entity `from_alias` stands for.
    pub from_entity: String,
    pub to: Relation,
    /// `(from column, to column)` equalities.
    pub on: Vec<(String, String)>,
    /// Cardinality in the walking direction.
    pub cardinality: Cardinality,
    /// Whether the declared cardinality was missing (treated as many_to_many).
    pub cardinality_declared: bool,
}

impl JoinStep {
    pub fn fans_out(&self) -> bool {
        self.cardinality.fans_out()
    }
}

/// How the time dimension was chosen, reported to the agent.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeResolution {
    /// The metric's own time dimension.
    Local,
    /// The caller named it.
    Requested,
    /// The one temporal column reachable over to-one joins.
    Inherited,
    /// A grain was asked for but no time dimension exists: unbucketed.
    Unavailable,
}

impl TimeResolution {
    pub fn as_str(self) -> &'static str {
        match self {
            TimeResolution::Local => "local",
            TimeResolution::Requested => "requested",
            TimeResolution::Inherited => "inherited",
            TimeResolution::Unavailable => "unavailable",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct TimeBucket {
    pub dimension: ColumnRef,
    pub grain: Grain,
    pub class: TypeClass,
    pub output_name: String,
    /// Rows are moved later by this much before bucketing (a derived
    /// metric's `offset_window`).
    pub shift: Option<Interval>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct GroupKey {
    pub column: ColumnRef,
    pub output_name: String,
}

/// Why an answer is degraded, in planner terms.
#[derive(Clone, Debug, PartialEq)]
pub enum Degradation {
    /// Rows of the anchor are multiplied by these joins; the aggregate may be inflated.
    FanOut { joins: Vec<String> },
    TimeDimensionUnavailable,
}

/// A filter bound to the alias it reads (an entity name, or a semi-join alias).
#[derive(Clone, Debug, PartialEq)]
pub struct PlannedFilter {
    pub alias: String,
    pub column: String,
    pub op: crate::model::FilterOp,
    pub values: Vec<crate::ir::Value>,
    /// The column is the time dimension (of this type class) of a moved
    /// component: the filter reads the moved time, so it selects output
    /// buckets, not source rows.
    pub shift: Option<(Interval, TypeClass)>,
}

impl PlannedFilter {
    fn on(alias: &str, f: &Filter) -> Self {
        PlannedFilter {
            alias: alias.to_string(),
            column: f.column.column.clone(),
            op: f.op,
            values: f.values.clone(),
            shift: None,
        }
    }
}

/// Keeps only rows at the last (or first) value of a column within each
/// time bucket and each value of `per` (a non-additive metric).
#[derive(Clone, Debug, PartialEq)]
pub struct NonAdditiveWindow {
    /// Anchor column.
    pub column: String,
    pub window: WindowChoice,
    /// Anchor columns.
    pub per: Vec<String>,
}

/// `EXISTS (SELECT 1 FROM table AS alias WHERE keys match AND alias.time
/// BETWEEN anchor.base_time AND anchor.base_time + window AND filters)`.
#[derive(Clone, Debug, PartialEq)]
pub struct ConversionCheck {
    pub alias: String,
    pub entity: String,
    pub table: TableRef,
    /// `(anchor column, conversion column)`.
    pub keys: Vec<(String, String)>,
    /// The anchor's time column, and its type class.
    pub base_time: String,
    pub base_class: TypeClass,
    pub time: String,
    pub window: Option<Interval>,
    pub filters: Vec<PlannedFilter>,
}

/// `EXISTS (SELECT 1 FROM steps… WHERE correlation AND filters)`: the first
/// step joins from `correlate_from`, an alias of the main query.
#[derive(Clone, Debug, PartialEq)]
pub struct SemiJoin {
    pub correlate_from: String,
    pub steps: Vec<JoinStep>,
    pub filters: Vec<PlannedFilter>,
}

/// How the measure is aggregated.
#[derive(Clone, Debug, PartialEq)]
pub enum AggregationStrategy {
    /// Every joined row is one anchor row: aggregate directly.
    Direct,
    /// A to-many join repeats anchor rows: first reduce to one row per
    /// (anchor identity, group key), then aggregate. Exact for every aggregation.
    Deduplicated { identity: Vec<String> },
}

impl AggregationStrategy {
    /// The anchor identity rows are first reduced on, if any.
    pub fn identity(&self) -> Option<&[String]> {
        match self {
            AggregationStrategy::Deduplicated { identity } => Some(identity),
            AggregationStrategy::Direct => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct QueryPlan {
    pub metric: String,
    pub measure: Measure,
    pub anchor: Relation,
    pub joins: Vec<JoinStep>,
    pub semi_joins: Vec<SemiJoin>,
    pub aggregation: AggregationStrategy,
    pub time: Option<TimeBucket>,
    pub time_resolution: Option<TimeResolution>,
    pub group_by: Vec<GroupKey>,
    /// Filters on the main query (anchor and to-one joined columns).
    pub filters: Vec<PlannedFilter>,
    /// Full ORDER BY, tie-breaks included.
    pub order_by: Vec<OrderKey>,
    pub limit: u32,
    pub degradations: Vec<Degradation>,
    /// One sentence each, for `data.notes`.
    pub notes: Vec<String>,
    pub transform: Transform,
    pub non_additive: Option<NonAdditiveWindow>,
    pub conversion: Option<ConversionCheck>,
    /// A group this component has no row for counts 0, not NULL, when
    /// components are combined (count-like aggregations: DESIGN "Empty
    /// groups of counts are 0").
    pub zero_fill: bool,
}

impl QueryPlan {
    /// Output column names in output order: time bucket, group-bys, metric.
    pub fn output_names(&self) -> Vec<String> {
        let mut v: Vec<String> = self.time.iter().map(|t| t.output_name.clone()).collect();
        v.extend(self.group_by.iter().map(|g| g.output_name.clone()));
        v.push(self.metric.clone());
        v
    }

    pub fn fan_out_joins(&self) -> Vec<String> {
        self.joins.iter().filter(|j| j.fans_out()).map(|j| j.join.clone()).collect()
    }
}

/// Plans the queries of one request (one per metric). Several metrics must
/// share the time grain: either all are bucketed or the request has no grain
/// they can align on. When their time dimensions differ, the bucket column is
/// named `metric_time__<grain>`.
pub fn plan_all(model: &SemanticModel, queries: &[MetricQuery]) -> Result<Vec<QueryPlan>, Issue> {
    // One graph for every component of the request.
    let graph = JoinGraph::new(model);
    let mut plans = queries.iter().map(|q| plan_on(model, &graph, q)).collect::<Result<Vec<_>, _>>()?;
    if plans.len() > 1 {
        if let Some(grain) = queries[0].time_grain {
            let without: Vec<String> = plans.iter().filter(|p| p.time.is_none()).map(|p| p.metric.clone()).collect();
            if !without.is_empty() {
                return Err(Issue::MetricsCannotAlign { grain, without_time: without });
            }
            let names: Vec<&str> = plans.iter().filter_map(|p| p.time.as_ref().map(|t| t.output_name.as_str())).collect();
            if names.windows(2).any(|w| w[0] != w[1]) {
                let shared = format!("metric_time__{}", grain.as_str());
                for p in &mut plans {
                    if let Some(t) = &mut p.time {
                        t.output_name = shared.clone();
                    }
                    p.degradations.retain(|d| *d != Degradation::TimeDimensionUnavailable);
                }
            }
        }
    }
    // When every component is moved, the keys are the moved buckets; an
    // input moved past the end of the data adds no row, so they stop at the
    // last bucket of the first moved input as it is, unmoved: a plan appended
    // for that end only, which no output reads.
    if !plans.iter().any(|p| p.transform.anchors_keys()) {
        if let Some(moved) = queries.iter().find(|q| matches!(q.transform, Transform::Offset(_))) {
            let unmoved = MetricQuery { transform: Transform::DataEnd, ..moved.clone() };
            plans.push(plan_on(model, &graph, &unmoved)?);
        }
    }
    Ok(plans)
}

/// Plans a resolved query against the model.
pub fn plan(model: &SemanticModel, q: &MetricQuery) -> Result<QueryPlan, Issue> {
    plan_on(model, &JoinGraph::new(model), q)
}

fn plan_on(model: &SemanticModel, graph: &JoinGraph<'_>, q: &MetricQuery) -> Result<QueryPlan, Issue> {
    let metric = model.metric(&q.metric).expect("resolved queries name a known metric");
    let anchor_entity = &model.entities[&q.anchor];
    let mut tree = JoinTree::new(&q.anchor);
    let mut notes = Vec::new();

    let (time, time_resolution) = choose_time(model, graph, q, &mut notes)?;
    if let Some(t) = &time {
        let steps = tree.path_steps(graph, &t.dimension.entity, &q.via)?;
        tree.add(steps, &t.dimension.entity)?;
    }
    for g in &q.group_by {
        let steps = tree.path_steps(graph, &g.entity, &q.via)?;
        tree.add(steps, &g.entity)?;
    }
    // A filter restricts the joined rows of the entities the keys already
    // join (and of those reached from them over to-one joins): a category
    // filter on a category group-by keeps only those categories. Only a
    // to-many join that no key needs becomes a semi-join (EXISTS), which
    // keeps the rows with at least one matching related row and never
    // multiplies them (docs/grammar.md, "Filters across to-many joins").
    let mut semi: Vec<SemiJoinBuilder> = Vec::new();
    let mut filters: Vec<PlannedFilter> = Vec::new();
    for f in &q.filters {
        let steps = tree.path_steps(graph, &f.column.entity, &q.via)?;
        let split = steps.iter().position(|s| s.cardinality.fans_out() && !tree.reached.contains_key(&s.to)).unwrap_or(steps.len());
        let (joined, beyond) = steps.split_at(split);
        tree.add(joined.to_vec(), &f.column.entity)?;
        if beyond.is_empty() {
            filters.push(PlannedFilter::on(&f.column.entity, f));
            continue;
        }
        let key = (beyond[0].from.clone(), beyond[0].join.clone());
        let i = match semi.iter().position(|b| b.key == key) {
            Some(i) => i,
            None => {
                semi.push(SemiJoinBuilder { key, steps: Vec::new(), filters: Vec::new() });
                semi.len() - 1
            }
        };
        let alias = semi[i].add(beyond, i)?;
        semi[i].filters.push(PlannedFilter::on(&alias, f));
    }
    let mut used: Vec<&str> = tree.steps.iter().map(|s| s.join.as_str()).collect();
    used.extend(semi.iter().flat_map(|b| b.steps.iter().map(|s| s.join.as_str())));
    let unused: Vec<&String> = q.via.iter().filter(|v| !used.contains(&v.as_str())).collect();
    if !unused.is_empty() {
        notes.push(format!(
            "via {} was not needed: no column of this request is reached through it.",
            unused.iter().map(|s| format!("`{s}`")).collect::<Vec<_>>().join(", ")
        ));
    }

    let to_step = |s: &TreeStep, alias: &str, from_alias: &str| JoinStep {
        join: s.join.clone(),
        from_alias: from_alias.to_string(),
        from_entity: s.from.clone(),
        to: Relation { alias: alias.to_string(), entity: s.to.clone(), table: model.entities[&s.to].table.clone() },
        on: s.on.clone(),
        cardinality: s.cardinality,
        cardinality_declared: s.declared,
    };
    let joins: Vec<JoinStep> = tree.steps.iter().map(|s| to_step(s, &s.to, &s.from)).collect();
    let semi_joins: Vec<SemiJoin> = semi
        .iter()
        .enumerate()
        .map(|(i, b)| SemiJoin {
            correlate_from: b.key.0.clone(),
            steps: b
                .steps
                .iter()
                .enumerate()
                .map(|(k, s)| to_step(s, &semi_alias(&s.to, i), &if k == 0 { s.from.clone() } else { semi_alias(&s.from, i) }))
                .collect(),
            filters: b.filters.clone(),
        })
        .collect();

    let mut degradations = Vec::new();
    let fan: Vec<&JoinStep> = joins.iter().filter(|j| j.fans_out()).collect();
    let aggregation = if fan.is_empty() {
        AggregationStrategy::Direct
    } else if anchor_entity.identity.is_empty() {
        for j in &fan {
            notes.push(format!(
                "Join `{}` can repeat each `{}` row once per matching `{}` row and `{}` has no identity to deduplicate on, so `{}` may be inflated.",
                j.join, q.anchor, j.to.alias, q.anchor, q.metric
            ));
        }
        degradations.push(Degradation::FanOut { joins: fan.iter().map(|j| j.join.clone()).collect() });
        AggregationStrategy::Direct
    } else {
        for j in &fan {
            notes.push(fan_out_note(q, j));
        }
        AggregationStrategy::Deduplicated { identity: anchor_entity.identity.clone() }
    };
    for s in &semi_joins {
        notes.push(format!(
            "Filters on columns reached over the to-many join `{}` keep each `{}` row that has at least one matching related row; it is counted once.",
            s.steps[0].join, s.correlate_from
        ));
    }
    if time_resolution == Some(TimeResolution::Unavailable) {
        degradations.push(Degradation::TimeDimensionUnavailable);
    }

    let mut time = time;
    if let (Transform::Offset(shift), Some(t)) = (&q.transform, &mut time) {
        t.shift = Some(*shift);
        for f in filters.iter_mut().filter(|f| f.alias == t.dimension.entity && f.column == t.dimension.column) {
            f.shift = Some((*shift, t.class));
        }
    }
    let (measure, non_additive) = match &q.transform {
        // A conversion counts base rows: one per anchor identity.
        Transform::ConversionBase | Transform::Converted(_) => {
            let id = anchor_entity.identity.first().cloned().unwrap_or_else(|| metric.measure.columns()[0].to_string());
            (Measure { agg: Aggregation::Count, operand: MeasureOperand::Column(id), percentile: None }, None)
        }
        _ => (
            metric.measure.clone(),
            metric.non_additive.as_ref().map(|na| NonAdditiveWindow {
                column: na.dimension.column.clone(),
                window: na.window,
                per: na.per.iter().map(|p| p.column.clone()).collect(),
            }),
        ),
    };
    if let Some(na) = &non_additive {
        let which = if na.window == WindowChoice::Last { "last" } else { "first" };
        let within = if time.is_some() { "each time bucket" } else { "the whole range" };
        let per = if na.per.is_empty() { String::new() } else { format!(" and each {}", na.per.join(", ")) };
        notes.push(format!(
            "`{}` does not add up over `{}`: only rows at its {which} value within {within}{per} are aggregated.",
            q.metric, na.column
        ));
    }
    let conversion = match &q.transform {
        Transform::Converted(target) => {
            let base_time = metric.time_dimension.as_ref().expect("validated: conversion inputs have a time dimension");
            let alias = "sb_conv".to_string();
            let window = target.window.map_or("at or after its time".to_string(), |w| format!("at most {w} after it"));
            notes.push(format!(
                "A `{}` row converts when a row of `{}` counted by `{}` has {} and comes {window}; it converts once however many follow.",
                q.anchor,
                target.entity,
                target.metric,
                target.keys.iter().map(|(a, b)| format!("`{b}` equal to its `{a}`")).collect::<Vec<_>>().join(" and ")
            ));
            Some(ConversionCheck {
                table: model.entities[&target.entity].table.clone(),
                entity: target.entity.clone(),
                keys: target.keys.clone(),
                base_time: base_time.column.clone(),
                base_class: anchor_entity.column(&base_time.column).map_or(TypeClass::Timestamp, |c| c.type_class()),
                time: target.time.clone(),
                window: target.window,
                filters: target.filters.iter().map(|f| PlannedFilter::on(&alias, f)).collect(),
                alias,
            })
        }
        _ => None,
    };
    if let Transform::Cumulative(w) = &q.transform {
        let what = match w {
            crate::model::CumulativeWindow::AllTime => "everything up to the end of the bucket".to_string(),
            crate::model::CumulativeWindow::Rolling(i) => format!("the {i} ending with the bucket"),
            crate::model::CumulativeWindow::GrainToDate(g) => format!("the {} so far, up to the end of the bucket", g.as_str()),
        };
        notes.push(format!("Each bucket of `{}` accumulates {what}; buckets without rows are filled from a generated time spine.", q.metric));
    }

    let all_steps: Vec<&JoinStep> = joins.iter().chain(semi_joins.iter().flat_map(|s| s.steps.iter())).collect();
    check_pii(model, metric, &all_steps, &time, q)?;

    let group_by: Vec<GroupKey> =
        q.group_by.iter().map(|c| GroupKey { column: c.clone(), output_name: c.to_string() }).collect();
    let order_by = full_order(&q.order_by, time.is_some(), group_by.len());
    Ok(QueryPlan {
        metric: metric.name.clone(),
        anchor: Relation {
            alias: anchor_entity.name.clone(),
            entity: anchor_entity.name.clone(),
            table: anchor_entity.table.clone(),
        },
        joins,
        semi_joins,
        aggregation,
        time,
        time_resolution,
        group_by,
        filters,
        order_by,
        limit: q.limit,
        degradations,
        notes,
        transform: q.transform.clone(),
        zero_fill: matches!(measure.agg, Aggregation::Count | Aggregation::CountDistinct | Aggregation::SumBoolean),
        measure,
        non_additive,
        conversion,
    })
}

/// One sentence an agent can relay: what a row means across a to-many join.
fn fan_out_note(q: &MetricQuery, j: &JoinStep) -> String {
    let how = if j.cardinality_declared { j.cardinality.as_str() } else { "undeclared, so treated as many_to_many" };
    format!(
        "Join `{}` ({how}) can match one `{}` to several `{}` rows: `{}` counts each `{}` once per group it falls in, so a `{}` spread over two groups counts in both and the groups add up to more than the total.",
        j.join, q.anchor, j.to.alias, q.metric, q.anchor, q.anchor
    )
}

/// The alias of `entity` inside the `i`-th semi-join.
fn semi_alias(entity: &str, i: usize) -> String {
    format!("{entity}__s{}", i + 1)
}

/// Collects the to-many part of filter paths that share their first to-many
/// join: all their conditions go into one EXISTS, so "an item of brand X in
/// category Y" means one item with both.
struct SemiJoinBuilder {
    /// (entity the EXISTS correlates to, first to-many join).
    key: (String, String),
    steps: Vec<TreeStep>,
    filters: Vec<PlannedFilter>,
}

impl SemiJoinBuilder {
    /// Adds steps (sharing those already there) and returns the alias of the
    /// last entity.
    fn add(&mut self, steps: &[TreeStep], index: usize) -> Result<String, Issue> {
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
        Ok(semi_alias(&steps.last().expect("a semi-join has steps").to, index))
    }
}

/// Refuses, before any SQL exists, a plan whose columns the PII policy
/// blocks: every column read, join keys on every hop included.
fn check_pii(
    model: &SemanticModel,
    metric: &crate::model::Metric,
    joins: &[&JoinStep],
    time: &Option<TimeBucket>,
    q: &MetricQuery,
) -> Result<(), Issue> {
    use crate::model::Aggregation;
    let anchor = metric.entity.as_str();
    let measure: Vec<(&str, &str)> = metric.measure.columns().into_iter().map(|c| (anchor, c)).collect();
    let mut all = measure.clone();
    all.extend(time.iter().map(|t| (t.dimension.entity.as_str(), t.dimension.column.as_str())));
    let group_by: Vec<(&str, &str)> = q.group_by.iter().map(|c| (c.entity.as_str(), c.column.as_str())).collect();
    all.extend(group_by.iter().copied());
    all.extend(q.filters.iter().map(|f| (f.column.entity.as_str(), f.column.column.as_str())));
    for j in joins {
        for (a, b) in &j.on {
            all.push((j.from_entity.as_str(), a.as_str()));
            all.push((j.to.entity.as_str(), b.as_str()));
        }
    }
    if let Some(na) = &metric.non_additive {
        all.extend(na.per.iter().map(|p| (anchor, p.column.as_str())));
    }
    if let Transform::Converted(t) = &q.transform {
        for (a, b) in &t.keys {
            all.push((anchor, a.as_str()));
            all.push((t.entity.as_str(), b.as_str()));
        }
        all.push((t.entity.as_str(), t.time.as_str()));
        all.extend(t.filters.iter().map(|f| (f.column.entity.as_str(), f.column.column.as_str())));
        if let Some(td) = &metric.time_dimension {
            all.push((td.entity.as_str(), td.column.as_str()));
        }
    }
    let min_max_operands = if matches!(metric.measure.agg, Aggregation::Min | Aggregation::Max) { measure } else { Vec::new() };
    let touched = crate::pii::Touched { all, group_by, min_max_operands };
    crate::pii::check(model, &touched).map_err(|r| {
        let cats = r.categories.join(", ");
        let message = match &r.reason {
            crate::pii::RefusalReason::Blocked => format!(
                "Refused before any SQL ran: the request reads columns whose PII categories the policy blocks ({cats})."
            ),
            crate::pii::RefusalReason::GroupByGuard { column } => format!(
                "Refused before any SQL ran: grouping by `{column}` would list personal data ({cats}); group by a column that is not personal data."
            ),
            crate::pii::RefusalReason::MinMaxGuard { column } => format!(
                "Refused before any SQL ran: {} over `{column}` would return a raw personal value ({cats}).",
                metric.measure.agg.as_str()
            ),
        };
        Issue::PiiBlocked { categories: r.categories, message }
    })
}

/// The requested order followed by every output key not yet ordered (time
/// first, then group-bys in request order), so results are deterministic.
fn full_order(requested: &[OrderKey], has_time: bool, n_group: usize) -> Vec<OrderKey> {
    let mut keys = requested.to_vec();
    let defaults = has_time.then_some(OutputRef::Time).into_iter().chain((0..n_group).map(OutputRef::GroupBy));
    for target in defaults {
        if !keys.iter().any(|k| k.target == target) {
            keys.push(OrderKey { target, descending: false });
        }
    }
    keys
}

fn choose_time(
    model: &SemanticModel,
    graph: &JoinGraph<'_>,
    q: &MetricQuery,
    notes: &mut Vec<String>,
) -> Result<(Option<TimeBucket>, Option<TimeResolution>), Issue> {
    let metric = &model.metrics[&q.metric];
    let Some(grain) = q.time_grain else {
        if q.time_dimension.is_some() {
            notes.push("time_dimension was ignored because no time_grain was given.".into());
        }
        return Ok((None, None));
    };
    let (dimension, resolution) = if let Some(own) = &metric.time_dimension {
        if q.time_dimension.as_ref().is_some_and(|td| td != own) {
            notes.push(format!("time_dimension was ignored: metric `{}` always uses its own, `{own}`.", metric.name));
        }
        (own.clone(), TimeResolution::Local)
    } else if let Some(td) = &q.time_dimension {
        (td.clone(), TimeResolution::Requested)
    } else {
        // The anchor's own temporal columns, then those over to-one joins.
        let mut candidates: Vec<ColumnRef> = Vec::new();
        let reachable = graph.to_one_reachable(&q.anchor).into_iter().map(|(e, _)| e);
        for entity in std::iter::once(q.anchor.as_str()).chain(reachable) {
            for c in &model.entities[entity].columns {
                if c.type_class().is_temporal() {
                    candidates.push(ColumnRef::new(entity, &c.name));
                }
            }
        }
        match candidates.len() {
            0 => {
                notes.push(format!(
                    "No time dimension is reachable from `{}`, so the answer is not bucketed by {}.",
                    q.anchor,
                    grain.as_str()
                ));
                return Ok((None, Some(TimeResolution::Unavailable)));
            }
            1 => {
                let c = candidates.remove(0);
                if c.entity == q.anchor {
                    notes.push(format!("Time dimension `{c}` is the only date or time column of `{}` and the entities it reaches over to-one joins.", q.anchor));
                } else {
                    notes.push(format!("Time dimension `{c}` was inherited over to-one joins."));
                }
                (c, TimeResolution::Inherited)
            }
            _ => {
                return Err(Issue::AmbiguousTimeDimension {
                    candidates: candidates.iter().map(ToString::to_string).collect(),
                })
            }
        }
    };
    let class = model.entities[&dimension.entity].column(&dimension.column).map_or(TypeClass::Unknown, |c| c.type_class());
    let allowed_by_metric: Vec<Grain> =
        if resolution == TimeResolution::Local { metric.time_grains.clone() } else { Grain::ALL.to_vec() };
    if class == TypeClass::Date && grain < Grain::Day {
        return Err(Issue::GrainMismatch {
            dimension: dimension.to_string(),
            grain,
            allowed: allowed_by_metric.into_iter().filter(|g| *g >= Grain::Day).collect(),
        });
    }
    if !allowed_by_metric.contains(&grain) {
        return Err(Issue::InvalidTimeGrain { grain: grain.as_str().into(), allowed: allowed_by_metric });
    }
    let output_name = time_bucket_name(&dimension, grain);
    Ok((Some(TimeBucket { dimension, grain, class, output_name, shift: None }), Some(resolution)))
}

/// A join step as the tree records it.
#[derive(Clone)]
struct TreeStep {
    join: String,
    from: String,
    to: String,
    on: Vec<(String, String)>,
    cardinality: Cardinality,
    declared: bool,
}

/// The joined entities: a tree rooted at the anchor, one alias per entity.
struct JoinTree {
    anchor: String,
    steps: Vec<TreeStep>,
    /// entity → index of the step that joined it.
    reached: BTreeMap<String, usize>,
}

impl JoinTree {
    fn new(anchor: &str) -> Self {
        JoinTree { anchor: anchor.to_string(), steps: Vec::new(), reached: BTreeMap::new() }
    }

    /// The steps from the anchor to `target`, choosing among shortest paths
    /// with `via`. Nothing is added yet.
    fn path_steps(&self, graph: &JoinGraph<'_>, target: &str, via: &[String]) -> Result<Vec<TreeStep>, Issue> {
        if target == self.anchor {
            return Ok(Vec::new());
        }
        let paths = graph.shortest_paths(&self.anchor, target);
        if paths.is_empty() {
            return Err(Issue::Unreachable { anchor: self.anchor.clone(), target: target.to_string() });
        }
        let path = choose_path(graph, &self.anchor, target, paths, via)?;
        path.windows(2)
            .map(|pair| {
                let hop = choose_join(graph, pair[0], pair[1], via)?;
                Ok(TreeStep {
                    join: hop.join.name.clone(),
                    from: pair[0].to_string(),
                    to: pair[1].to_string(),
                    on: hop.on_pairs().into_iter().map(|(a, b)| (a.to_string(), b.to_string())).collect(),
                    cardinality: hop.cardinality(),
                    declared: hop.join.cardinality.is_some(),
                })
            })
            .collect()
    }

    /// Adds steps to the tree; an entity already joined is reused, and one
    /// joined by another route is an ambiguity (one alias per entity).
    fn add(&mut self, steps: Vec<TreeStep>, target: &str) -> Result<(), Issue> {
        for step in steps {
            if let Some(&i) = self.reached.get(&step.to) {
                if self.steps[i].join != step.join || self.steps[i].from != step.from {
                    return Err(Issue::AmbiguousPath {
                        anchor: self.anchor.clone(),
                        target: target.to_string(),
                        paths: vec![vec![self.steps[i].join.clone()], vec![step.join.clone()]],
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

/// The join names of a path, taking the alphabetically first join on hops
/// with parallel joins (how paths are shown to the agent).
fn path_join_names(graph: &JoinGraph<'_>, path: &[&str]) -> Vec<String> {
    path.windows(2)
        .filter_map(|p| graph.hops_between(p[0], p[1]).first().map(|h| h.join.name.clone()))
        .collect()
}

fn choose_path<'m>(
    graph: &JoinGraph<'m>,
    anchor: &str,
    target: &str,
    mut paths: Vec<Vec<&'m str>>,
    via: &[String],
) -> Result<Vec<&'m str>, Issue> {
    if paths.len() == 1 {
        return Ok(paths.remove(0));
    }
    // Prefer the paths that use the most `via` joins; a unique winner is chosen.
    let score = |p: &Vec<&str>| {
        p.windows(2)
            .map(|w| graph.hops_between(w[0], w[1]).iter().filter(|h| via.contains(&h.join.name)).count())
            .sum::<usize>()
    };
    let best = paths.iter().map(score).max().unwrap_or(0);
    let winners: Vec<&Vec<&str>> = paths.iter().filter(|p| score(p) == best).collect();
    if best > 0 && winners.len() == 1 {
        return Ok(winners[0].clone());
    }
    Err(Issue::AmbiguousPath {
        anchor: anchor.to_string(),
        target: target.to_string(),
        paths: winners.iter().map(|p| path_join_names(graph, p)).collect(),
    })
}

fn choose_join<'m>(graph: &JoinGraph<'m>, from: &str, to: &str, via: &[String]) -> Result<Hop<'m>, Issue> {
    let mut hops = graph.hops_between(from, to);
    if hops.len() == 1 {
        return Ok(hops.remove(0));
    }
    let chosen: Vec<Hop<'m>> = hops.iter().filter(|h| via.contains(&h.join.name)).cloned().collect();
    if chosen.len() == 1 {
        return Ok(chosen.into_iter().next().expect("one element"));
    }
    let candidates = if chosen.is_empty() { hops } else { chosen };
    Err(Issue::AmbiguousJoin {
        from: from.to_string(),
        to: to.to_string(),
        candidates: candidates.iter().map(|h| h.join.name.clone()).collect(),
    })
}
