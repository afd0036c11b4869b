//! Planning: a resolved request becomes a `RequestPlan`: the answer's keys,
//! order and limit held once; one `ComponentPlan` per simple metric it needs
//! (which entities are joined and how, which rows the filters keep, how the
//! measure is aggregated, which time dimension buckets the rows); and how
//! the components combine into the answer (`Combine`: which give the keys,
//! how each is aligned, what a missing value means). `sql::emit` lowers a
//! plan without deciding anything.
//!
//! How the plan is written is chosen by passes, each a module of its own
//! with its tests, each shown in the plan's printed form (`display`), in
//! the manner of DataFusion's optimizer rules:
//! 1. `paths` (while a component's joins are built): which joins reach
//!    each entity: roles over to-one joins, `via` on a path of any length.
//! 2. `join_type`: LEFT, or INNER where every row is known to match.
//! 3. `fan_out`: how a component whose to-many joins repeat its anchor's
//!    rows is aggregated exactly (over the repeated rows, or deduplicated).
//! 4. `semi_join`: `IN (SELECT …)` or `EXISTS` for a filter across a
//!    to-many join.
//! 5. `counts`: `count(*)` (or a count without DISTINCT) where every row is
//!    one anchor row and the column counted is never NULL (or its identity).
//! 6. `scans` (per request): which components share one scan of their
//!    anchor.
//!
//! Architecture invariant: pure. Never opens a connection, never names a SQL
//! dialect, never builds SQL text or user-facing prose (`PlanNote`s are
//! facts; `tools` words them); `dry_run` needs no engine because of this.

mod component;
mod counts;
mod display;
mod fan_out;
mod join_type;
mod note;
mod paths;
mod pii;
#[cfg(test)]
mod properties;
pub mod scans;
mod semi_join;
mod tree;

pub use crate::model::graph::{Hop, JoinGraph, MAX_HOPS};
pub use note::PlanNote;

/// What the path-choice pass decides for a request anchored at `anchor`
/// that reads `target` without `via` (so describe_entity tells an agent
/// exactly what get_metric will do).
#[derive(Debug, Clone, PartialEq)]
pub enum PathChoice {
    /// One path: its join names, in order.
    One(Vec<String>),
    /// Several roles or paths, each its join names: `via` must choose.
    Ambiguous(Vec<Vec<String>>),
    /// No path within `MAX_HOPS`.
    Unreachable,
}

/// The path-choice pass's decision from `anchor` to `target` without `via`.
pub fn path_choice(graph: &JoinGraph, anchor: &str, target: &str) -> PathChoice {
    match paths::choose_path(graph, anchor, target, &[]) {
        Ok(path) => PathChoice::One(path.iter().zip(path.iter().skip(1)).filter_map(|(a, b)| graph.hops_between(a, b).first().map(|h| h.join.name.clone())).collect()),
        Err(crate::ir::Issue::AmbiguousPath { paths, .. }) => PathChoice::Ambiguous(paths),
        Err(_) => PathChoice::Unreachable,
    }
}

use crate::ir::{time_bucket_name, Issue, MetricQuery, OrderKey, OutputExpr, OutputMetric, OutputRef, ResolvedRequest, Transform};
use crate::model::{Cardinality, CheckedModel, ColumnRef, Grain, Interval, Measure, TableRef, TypeClass, WindowChoice};

/// An entity in the FROM clause: the anchor or a joined one. The alias is
/// the entity name.
#[derive(Clone, Debug, PartialEq)]
pub struct Relation {
    pub alias: String,
    /// The entity the alias stands for (semi-joins alias entities anew).
    pub entity: String,
    pub table: TableRef,
    /// The entity's computed columns the component reads, `(name, SQL
    /// expression)`: the relation is then the table with these added.
    pub computed: Vec<(String, String)>,
}

/// How a join step is written (the join-type pass, `join_type`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinKind {
    /// Every row joined from is kept; one without a match groups under NULL
    /// (DESIGN, "Join type").
    Left,
    /// Every row joined from finds its row, for the reason given: the same
    /// rows as the LEFT JOIN, which engines run faster.
    Inner(crate::model::MatchEvidence),
}

/// One join from an already-joined relation to a new one.
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
    /// LEFT, or INNER where every row finds its match.
    pub kind: JoinKind,
    /// Why every row of `from` finds its row here, if anything says so
    /// (whether or not `kind` could use it where the step stands).
    pub matches: Option<crate::model::MatchEvidence>,
    /// For an INNER step from a relation that was LEFT joined: the alias of
    /// that LEFT join's relation, whose join it is written inside
    /// (`LEFT JOIN (line JOIN part ON …) ON …`), so the LEFT join's missing
    /// rows stay and the inner join applies only to rows that exist.
    pub within: Option<String>,
    /// A versioned join (walked towards its versions, always the `to`
    /// side): the version whose window holds the metric's time.
    pub versions: Option<Versions>,
}

/// `from.time >= to.from AND (from.time < to.to OR to.to IS NULL)` added
/// to a join's ON: the version valid when the metric's row happened.
#[derive(Clone, Debug, PartialEq)]
pub struct Versions {
    /// The window's columns, on the step's `to` side.
    pub from: String,
    pub to: String,
    /// The metric's time column, on the step's `from` side.
    pub time: String,
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
    /// The only temporal column of the anchor and the entities it reaches over to-one joins.
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

/// How one component buckets its rows in time.
#[derive(Clone, Debug, PartialEq)]
pub struct TimeBucket {
    pub dimension: ColumnRef,
    pub grain: Grain,
    pub class: TypeClass,
    /// Rows are moved later by this much before bucketing (a derived
    /// metric's `offset_window`).
    pub shift: Option<Interval>,
}

/// The answer's time column.
#[derive(Clone, Debug, PartialEq)]
pub struct OutputTime {
    /// `<entity>.<column>__<grain>`, or `metric_time__<grain>` when the
    /// components bucket different columns.
    pub name: String,
    pub grain: Grain,
    /// Components bucket DATE and TIMESTAMP columns into this one column:
    /// the DATE buckets are written as timestamps (their midnight), so every
    /// engine compares them with the others.
    pub dates_widened: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct GroupKey {
    pub column: ColumnRef,
    /// A part or a bucket of the (date) column, instead of its value.
    pub derived: Option<crate::ir::Derived>,
    /// The column's type class (a bucket of a DATE stays a DATE).
    pub class: crate::model::TypeClass,
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
    /// A metric filter: the plan of the metric grouped by the column (one
    /// key, one output); the filter keeps the column values whose metric
    /// value compares as `op` and `values` say.
    pub by_metric: Option<Box<RequestPlan>>,
    /// Declared by the metric (its definition), not asked by the request.
    pub from_metric: bool,
    /// The filter compares the period the column falls in at this grain
    /// (the column's type class beside it), not the column.
    pub bucket: Option<(Grain, TypeClass)>,
    /// The type class of the column read (a time filter copied onto the
    /// time spine reads the spine's DATE with the time's values).
    pub class: TypeClass,
}

impl PlannedFilter {
    fn on(model: &CheckedModel, alias: &str, f: &crate::ir::Filter) -> Result<Self, Issue> {
        let by_metric = match &f.by_metric {
            Some(resolved) => Some(Box::new(plan_request(model, resolved)?)),
            None => None,
        };
        Ok(PlannedFilter {
            alias: alias.to_string(),
            column: f.column.column.clone(),
            op: f.op,
            values: f.values.clone(),
            shift: None,
            by_metric,
            from_metric: f.from_metric,
            bucket: f.bucket.map(|g| (g, model.class_of(&f.column))),
            class: model.class_of(&f.column),
        })
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
    /// The conversion entity's computed columns (see `Relation`).
    pub computed: Vec<(String, String)>,
    /// `(anchor column, conversion column)`.
    pub keys: Vec<(String, String)>,
    /// The anchor's time column, and its type class.
    pub base_time: String,
    pub base_class: TypeClass,
    pub time: String,
    pub window: Option<Interval>,
    pub filters: Vec<PlannedFilter>,
    /// `Some` when conversion rows are credited (MetricFlow's conversions):
    /// then no EXISTS; each conversion row (its identity) is credited to
    /// the latest base row by day within the window, and the component's
    /// measure (the conversion metric's) aggregates the credited rows.
    pub credit: Option<Credit>,
}

/// The conversion anchor as credited rows are read from it.
#[derive(Clone, Debug, PartialEq)]
pub struct Credit {
    /// The conversion anchor's identity: one credit per conversion row.
    pub identity: Vec<String>,
    /// The type class of the conversion time column.
    pub class: TypeClass,
}

/// The anchor rows with at least one related row that passes `filters`:
/// the first step joins from `correlate_from`, an alias of the main query.
#[derive(Clone, Debug, PartialEq)]
pub struct SemiJoin {
    pub correlate_from: String,
    pub steps: Vec<JoinStep>,
    pub filters: Vec<PlannedFilter>,
    pub form: SemiJoinForm,
}

/// How a semi-join is written (the semi-join-form pass).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SemiJoinForm {
    /// `key IN (SELECT related key FROM steps… WHERE filters)`: one key
    /// column, uncorrelated, which every engine runs as a semi-join (SQLite
    /// runs a correlated EXISTS once per outer row).
    In,
    /// `EXISTS (SELECT 1 FROM steps… WHERE correlation AND filters)`: for a
    /// composite key (a row value IN is not written everywhere) or a
    /// versioned first step.
    Exists,
}


/// How a count is written (the count pass, `counts`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum CountForm {
    /// As the measure says.
    #[default]
    AsDeclared,
    /// `count(column)`: a count distinct of the anchor's identity over rows
    /// that are each one anchor row (every value is distinct already).
    Values,
    /// `count(*)`: the column counted is never NULL and every row is one
    /// anchor row (the rows themselves are counted).
    Rows,
}

/// How the measure is aggregated (the fan-out pass, `fan_out`).
#[derive(Clone, Debug, PartialEq)]
pub enum AggregationStrategy {
    /// Every joined row is one anchor row: aggregate directly.
    Direct,
    /// A to-many join repeats anchor rows, and the aggregate cannot tell:
    /// a count distinct, a min or a max is the same over the repeated rows,
    /// and a count of the anchor's one-column identity is written as a count
    /// distinct of it (`count_identity`). Aggregated directly over the
    /// joined rows: exact, with no deduplicating subquery.
    RepeatInsensitive { count_identity: bool },
    /// A to-many join repeats anchor rows: first reduce to one row per
    /// (anchor identity, group key), then aggregate. Exact for every aggregation.
    Deduplicated { identity: Vec<String> },
    /// The one to-many join (`joins[step]`) and the to-one joins beyond it
    /// (its branch) are read first, reduced to their distinct keys (join
    /// columns, and the columns the keys and filters read), and then joined
    /// to the anchor's rows: each anchor row once per distinct key of its
    /// branch, exactly as deduplicating the joined rows, over fewer and
    /// narrower rows (what an expert writes).
    DistinctBranch { step: usize },
}

impl AggregationStrategy {
    /// The anchor identity rows are first reduced on, if any.
    pub fn identity(&self) -> Option<&[String]> {
        match self {
            AggregationStrategy::Deduplicated { identity } => Some(identity),
            AggregationStrategy::Direct | AggregationStrategy::RepeatInsensitive { .. } | AggregationStrategy::DistinctBranch { .. } => None,
        }
    }

    /// Whether a to-many join repeats the anchor's rows.
    pub fn over_repeated_rows(&self) -> bool {
        !matches!(self, AggregationStrategy::Direct)
    }
}

/// The policy's minimum group size at work: answer rows computed over fewer
/// than `k` distinct people are withheld, never shown as 0 or NULL.
#[derive(Clone, Debug, PartialEq)]
pub struct GroupFloor {
    pub k: u32,
    /// Whose people are counted: `(alias, identity column)` of each entity
    /// holding a quasi-identifier the request reveals, an alias of the main
    /// query reached from the anchor over to-one joins only (so one anchor
    /// row has one of each, and counting them changes no aggregate).
    pub owners: Vec<(String, String)>,
}

/// One simple metric of a request, at the request's keys.
#[derive(Clone, Debug, PartialEq)]
pub struct ComponentPlan {
    pub metric: String,
    pub measure: Measure,
    pub anchor: Relation,
    pub joins: Vec<JoinStep>,
    pub semi_joins: Vec<SemiJoin>,
    pub aggregation: AggregationStrategy,
    pub time: Option<TimeBucket>,
    pub time_resolution: Option<TimeResolution>,
    /// Filters on the main query (rows the keys join, and to-one columns).
    pub filters: Vec<PlannedFilter>,
    /// Disjunctions on the main query, ANDed with `filters`.
    pub any_of: Vec<crate::ir::Condition<PlannedFilter>>,
    pub degradations: Vec<Degradation>,
    pub notes: Vec<PlanNote>,
    pub transform: Transform,
    pub non_additive: Option<NonAdditiveWindow>,
    pub conversion: Option<ConversionCheck>,
    /// What the component is where it has no value: 0 for our counts, the
    /// metric's `fill_nulls_with`, else NULL (dbt's rule, kept for imported
    /// counts).
    pub missing: Missing,
    /// The component's keys are the time spine's periods (its
    /// `join_to_timespine`), with the groups its rows have in each.
    pub spine: Option<SpineKeys>,
    /// Small groups withheld (quasi-identifiers under `min_group_size`).
    pub group_floor: Option<GroupFloor>,
    /// How a count is written (`counts`).
    pub count: CountForm,
}

impl ComponentPlan {
    /// The indices of `joins` that belong to the branch of `joins[step]`:
    /// that step and every step joined from an alias of the branch.
    pub fn branch_of(&self, step: usize) -> Vec<usize> {
        let mut aliases: Vec<&str> = Vec::new();
        let mut out = Vec::new();
        for (i, j) in self.joins.iter().enumerate() {
            if i == step || (i > step && aliases.contains(&j.from_alias.as_str())) {
                aliases.push(&j.to.alias);
                out.push(i);
            }
        }
        out
    }

    pub fn fan_out_joins(&self) -> Vec<String> {
        self.joins.iter().filter(|j| j.fans_out()).map(|j| j.join.clone()).collect()
    }

    /// Every filter the component applies, wherever it stands: the main
    /// query, its disjunctions, its semi-joins, the conversion rows and
    /// the time spine.
    pub fn all_filters(&self) -> impl Iterator<Item = &PlannedFilter> {
        self.filters
            .iter()
            .chain(self.any_of.iter().flat_map(crate::ir::Condition::atoms))
            .chain(self.semi_joins.iter().flat_map(|s| &s.filters))
            .chain(self.conversion.iter().flat_map(|c| &c.filters))
            .chain(self.spine.iter().flat_map(|s| &s.filters))
    }

}

/// How a component's value is looked up for a row of the answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Align {
    /// At equal keys (NULL-safe).
    SameKeys,
    /// At the first bucket of the row's period (`offset_to_grain`).
    PeriodStart(Grain),
}

/// What a component is when it has no row for a key of the answer, or
/// its aggregate is NULL.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Missing {
    Null,
    /// A count with no row (DESIGN "Empty groups of counts are 0").
    Zero,
    /// The metric's `fill_nulls_with`.
    Fill(i64),
}

impl Missing {
    /// The value that stands for no value, if any.
    pub fn value(self) -> Option<i64> {
        match self {
            Missing::Null => None,
            Missing::Zero => Some(0),
            Missing::Fill(v) => Some(v),
        }
    }
}

/// `SELECT DISTINCT bucket(spine.column) FROM spine WHERE time filters`:
/// the periods a `join_to_timespine` component answers for, bucketed as
/// its own time dimension is. The request's filters on that dimension
/// select periods here too.
#[derive(Clone, Debug, PartialEq)]
pub struct SpineKeys {
    pub table: TableRef,
    pub column: String,
    /// Filters on the spine column (alias `sb_spine`).
    pub filters: Vec<PlannedFilter>,
}

/// One component as the combined answer reads it.
#[derive(Clone, Debug, PartialEq)]
pub struct Read {
    pub component: usize,
    pub align: Align,
    pub missing: Missing,
}

/// How components become the answer.
#[derive(Clone, Debug, PartialEq)]
pub enum Combine {
    /// The one component is the answer.
    Single,
    /// Every component shares one scan (`RequestPlan::scans` holds them all
    /// in one group): one SELECT, each output computed from their
    /// aggregates, each aggregate over the rows its own filters keep.
    OneScan,
    /// Each component is aggregated on its own and read at the answer's keys.
    Joined {
        /// Components whose keys, together, are the answer's rows.
        key_sources: Vec<usize>,
        /// When every input is moved: the component whose last bucket ends
        /// the keys (an input moved past the data adds no row).
        keys_end: Option<usize>,
        /// The components the outputs read, in component order.
        reads: Vec<Read>,
    },
}

/// A request planned.
#[derive(Clone, Debug, PartialEq)]
pub struct RequestPlan {
    pub time: Option<OutputTime>,
    pub group_by: Vec<GroupKey>,
    pub components: Vec<ComponentPlan>,
    pub outputs: Vec<OutputMetric>,
    /// Full ORDER BY, tie-breaks included.
    pub order_by: Vec<OrderKey>,
    pub limit: u32,
    pub combine: Combine,
    /// Groups of components aggregated in one scan (the scan-sharing pass,
    /// `scans`), the first of each its host; a component in none has a scan
    /// of its own.
    pub scans: Vec<Vec<usize>>,
}

impl RequestPlan {
    /// Output column names in output order: time bucket, group-bys, metrics.
    pub fn output_names(&self) -> Vec<String> {
        self.key_names().chain(self.outputs.iter().map(|o| o.name.as_str())).map(str::to_string).collect()
    }

    /// The key columns' output names: the time bucket's, then the group-bys'.
    pub fn key_names(&self) -> impl Iterator<Item = &str> {
        self.time.iter().map(|t| t.name.as_str()).chain(self.group_by.iter().map(|g| g.output_name.as_str()))
    }

    /// Key columns (time bucket, group-bys) of the answer.
    pub fn key_count(&self) -> usize {
        usize::from(self.time.is_some()) + self.group_by.len()
    }

    pub fn degradations(&self) -> impl Iterator<Item = &Degradation> {
        self.components.iter().flat_map(|c| c.degradations.iter())
    }

    /// The host of the scan `component` is aggregated in: itself, unless
    /// it shares another's.
    pub fn scan_host(&self, component: usize) -> usize {
        self.scans.iter().find(|g| g.contains(&component)).and_then(|g| g.first().copied()).unwrap_or(component)
    }

    /// The components sharing the scan hosted by `host` (itself alone when
    /// it shares none).
    pub fn scan_members(&self, host: usize) -> Vec<usize> {
        self.scans.iter().find(|g| g.first() == Some(&host)).cloned().unwrap_or_else(|| vec![host])
    }

    /// Every note of every component, each once, in order.
    pub fn notes(&self) -> Vec<&PlanNote> {
        let mut out: Vec<&PlanNote> = Vec::new();
        for n in self.components.iter().flat_map(|c| c.notes.iter()) {
            if !out.contains(&n) {
                out.push(n);
            }
        }
        out
    }

    /// The same plan with another limit (the engine asks for one row more
    /// than the caller, to learn whether the limit cut rows off).
    pub fn with_limit(&self, limit: u32) -> RequestPlan {
        RequestPlan { limit, ..self.clone() }
    }
}

/// Plans a resolved request. Several metrics must share the time grain:
/// either all are bucketed or the request has no grain they can align on.
/// When their time dimensions differ, the bucket column is named
/// `metric_time__<grain>`.
pub fn plan_request(model: &CheckedModel, resolved: &ResolvedRequest) -> Result<RequestPlan, Issue> {
    let queries = &resolved.components;
    let Some(first) = queries.first() else {
        return Err(Issue::Malformed { argument: "name".into(), message: "the request names no metric".into() });
    };
    let mut components = queries.iter().map(|q| component::plan_component(model, q)).collect::<Result<Vec<_>, _>>()?;
    let time = output_time(first, &mut components)?;
    // When every component is moved, the keys are the moved buckets; an
    // input moved past the end of the data adds no row, so they stop at the
    // last bucket of the first moved input as it is, unmoved: a component
    // appended for that end only, which no output reads.
    if !components.iter().any(|c| c.transform.anchors_keys()) {
        if let Some(moved) = queries.iter().find(|q| matches!(q.transform, Transform::Offset(_))) {
            let unmoved = MetricQuery { transform: Transform::DataEnd, ..moved.clone() };
            components.push(component::plan_component(model, &unmoved)?);
        }
    }
    let group_by: Vec<GroupKey> =
        first.group_by.iter().map(|g| GroupKey { column: g.column.clone(), derived: g.derived, class: model.class_of(&g.column), output_name: g.to_string() }).collect();
    let order_by = full_order(&first.order_by, time.is_some(), group_by.len());
    let scans = scans::share(&components);
    scans::merge_into_hosts(&mut components, &scans);
    let combine = match combine(&components, &resolved.outputs) {
        Combine::Joined { .. } if matches!(scans.as_slice(), [all] if all.len() == components.len()) => Combine::OneScan,
        other => other,
    };
    Ok(RequestPlan { time, group_by, components, outputs: resolved.outputs.clone(), order_by, limit: first.limit, combine, scans })
}

/// The answer's time column, and the alignment check of several metrics.
fn output_time(first: &MetricQuery, components: &mut [ComponentPlan]) -> Result<Option<OutputTime>, Issue> {
    let Some(grain) = first.time_grain else { return Ok(None) };
    if components.len() > 1 {
        let without: Vec<String> = components.iter().filter(|c| c.time.is_none()).map(|c| c.metric.clone()).collect();
        if !without.is_empty() {
            return Err(Issue::MetricsCannotAlign { grain, without_time: without });
        }
    }
    let mut dimensions = components.iter().filter_map(|c| c.time.as_ref().map(|t| &t.dimension));
    let Some(dimension) = dimensions.next() else { return Ok(None) };
    if dimensions.all(|d| d == dimension) {
        return Ok(Some(OutputTime { name: time_bucket_name(dimension, grain), grain, dates_widened: false }));
    }
    for c in components.iter_mut() {
        c.degradations.retain(|d| *d != Degradation::TimeDimensionUnavailable);
    }
    let classes = || components.iter().filter_map(|c| c.time.as_ref().map(|t| t.class));
    let dates_widened = classes().any(|c| c == TypeClass::Date) && classes().any(|c| c == TypeClass::Timestamp);
    Ok(Some(OutputTime { name: format!("metric_time__{}", grain.as_str()), grain, dates_widened }))
}

/// One component output as it is in one SELECT; anything else (several
/// metrics, ratios, derived, a cumulative over its time spine) joins
/// components at the answer's keys.
fn combine(components: &[ComponentPlan], outputs: &[OutputMetric]) -> Combine {
    if let ([c], [OutputMetric { expr: OutputExpr::Component(0), .. }]) = (components, outputs) {
        if !matches!(c.transform, Transform::Cumulative(_)) && c.spine.is_none() {
            return Combine::Single;
        }
    }
    // Moved components (offsets) fill in values for the buckets of the
    // others; when all are moved, their own buckets are the keys.
    let anchoring: Vec<usize> = components.iter().enumerate().filter(|(_, c)| c.transform.anchors_keys()).map(|(i, _)| i).collect();
    let key_sources = if anchoring.is_empty() {
        components.iter().enumerate().filter(|(_, c)| matches!(c.transform, Transform::Offset(_))).map(|(i, _)| i).collect()
    } else {
        anchoring
    };
    let keys_end = components.iter().position(|c| c.transform == Transform::DataEnd);
    let mut read: Vec<usize> = outputs.iter().flat_map(|o| o.expr.components()).collect();
    read.sort_unstable();
    read.dedup();
    let reads = read
        .into_iter()
        .filter_map(|i| {
            let c = components.get(i)?;
            let align = c.transform.period_start().map_or(Align::SameKeys, Align::PeriodStart);
            Some(Read { component: i, align, missing: c.missing })
        })
        .collect();
    Combine::Joined { key_sources, keys_end, reads }
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
