//! The typed request: a `MetricRequest` (names as an agent or a user wrote
//! them) resolved against the model into a `MetricQuery` where every name is
//! known and every filter value has its column's type.
//!
//! Owns the `Issue` vocabulary shared with the planner: one variant per way a
//! request can be wrong, carrying what a recovery needs (close matches,
//! allowed values, candidates).
//!
//! Architecture invariant: depends on `model` (and `pii`, which hides
//! redacted columns from suggestions) only. No join graph (that is
//! `plan`), no SQL, no envelope: `tools` maps issues to error kinds.

mod dbt_names;
mod issue;
mod resolve;
mod value;

pub use crate::model::Condition;
use crate::model::{ColumnRef, ConversionCounts, DatePart, CumulativeWindow, FilterOp, Grain, Interval, Literal, PeriodAgg};

pub use issue::{ColumnRole, Issue};
pub use resolve::{echo as echo_name, resolve};
pub use value::{parse_cli_value, Value};

/// Smallest and largest `limit`, and the default when the model sets none.
pub const MIN_LIMIT: i64 = 1;
pub const MAX_LIMIT: i64 = 10_000;

/// Bounds on a request's lists and names. A request over one is refused as
/// malformed, naming the argument and the bound, before any lookup: an agent
/// that sends 100,000 `in` values has a bug, and answering it would cost the
/// database and the context window. Documented in docs/mcp.md ("Limits").
pub const MAX_NAMES: usize = 20;
pub const MAX_GROUP_BY: usize = 20;
pub const MAX_FILTERS: usize = 50;
pub const MAX_IN_VALUES: usize = 1_000;
pub const MAX_ORDER_BY: usize = 20;
pub const MAX_VIA: usize = 10;
/// Longest name (metric, `entity.column`, join) or text value, in characters.
pub const MAX_NAME_CHARS: usize = 256;
pub const MAX_VALUE_CHARS: usize = 4_096;

/// A request as it arrives, before any name is checked. Field names are
/// `get_metric`'s arguments.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MetricRequest {
    /// One or more metric names; several are answered side by side.
    pub names: Vec<String>,
    pub group_by: Vec<String>,
    pub filters: Vec<FilterArg>,
    pub time_grain: Option<String>,
    pub time_dimension: Option<String>,
    pub order_by: Vec<OrderArg>,
    pub limit: Option<i64>,
    pub via: Vec<String>,
    /// MetricFlow where strings (`{{ Dimension('customer__country') }} =
    /// 'US'`), ANDed with `filters`.
    pub where_strings: Vec<String>,
    /// Disjunctions ANDed with `filters` (where strings with OR): each holds
    /// when one of its branches does.
    pub any_of: Vec<Condition<FilterArg>>,
}

#[derive(Clone, Debug, PartialEq, Default)]
pub struct FilterArg {
    pub column: String,
    pub op: String,
    pub value: FilterValue,
    /// A metric filter: the rows whose `column` value has this metric
    /// (grouped by that column) compare as `op` and `value` say
    /// (MetricFlow's `{{ Metric('order_count', group_by=['customer']) }} >= 5`).
    pub metric: Option<String>,
}

/// A filter value as given: nothing (for is_null / not_null), one scalar, or a list.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum FilterValue {
    #[default]
    None,
    Scalar(Literal),
    List(Vec<Literal>),
}

#[derive(Clone, Debug, PartialEq)]
pub struct OrderArg {
    pub column: String,
    /// `asc` or `desc`; `None` is ascending.
    pub direction: Option<String>,
}

/// A resolved request for one metric. Group-by columns keep request order
/// (duplicates dropped); filters are the metric's own followed by the
/// request's. A request for several metrics resolves to one `MetricQuery`
/// each, sharing everything but the metric and its own filters.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricQuery {
    pub metric: String,
    pub anchor: String,
    pub group_by: Vec<GroupColumn>,
    pub time_grain: Option<Grain>,
    /// The caller's choice of time dimension, if any; the planner decides
    /// which one is used (the metric's own wins).
    pub time_dimension: Option<ColumnRef>,
    pub filters: Vec<Filter>,
    /// Disjunctions ANDed with `filters` (see `Condition`).
    pub any_of: Vec<Condition<Filter>>,
    pub order_by: Vec<OrderKey>,
    pub limit: u32,
    pub via: Vec<String>,
    /// How the metric's rows become values: as they are, moved in time,
    /// accumulated, or counted as conversions.
    pub transform: Transform,
}

/// What a component computes from its simple metric.
#[derive(Clone, Debug, PartialEq)]
pub enum Transform {
    Plain,
    /// Rows moved later by the interval before bucketing (and before time
    /// filters), so each bucket shows the value of the interval before it.
    Offset(Interval),
    /// As `Offset`, and its moved buckets are answer keys like those of the
    /// unmoved inputs (a derived metric with `periods: any_input`).
    OffsetKeys(Interval),
    /// Computed as usual; each output bucket takes the value of the first
    /// bucket of its period at this grain.
    ToGrain(Grain),
    /// As `ToGrain`, and its keys are every bucket of the time spine whose
    /// period starts with a bucket it has rows for (a derived metric with
    /// `periods: any_input`: MetricFlow's `offset_to_grain`).
    ToGrainKeys(Grain),
    /// Accumulated over the window ending with each bucket of a time spine.
    Cumulative(CumulativeWindow),
    /// Accumulated over the window ending with each day of the project's
    /// time spine, then one value per bucket by `PeriodAgg` (MetricFlow's
    /// cumulative metrics); the time filters choose days, not rows.
    DailyCumulative(CumulativeWindow, PeriodAgg),
    /// The number of base rows (the denominator of a conversion rate).
    ConversionBase,
    /// The number of base rows that reach a conversion row.
    Converted(ConversionTarget),
    /// Not a value: the rows of a moved input as they are, unmoved, whose
    /// last bucket is the end of the data. When every input is moved, the
    /// answer's buckets are the moved ones up to that end.
    DataEnd,
}

impl Transform {
    /// Whether the output keys come from this component: moved components
    /// only fill in values for the keys of the others.
    pub fn anchors_keys(&self) -> bool {
        !matches!(self, Transform::Offset(_) | Transform::ToGrain(_) | Transform::DataEnd)
    }

    pub fn needs_grain(&self) -> bool {
        matches!(
            self,
            Transform::Offset(_) | Transform::OffsetKeys(_) | Transform::ToGrain(_) | Transform::ToGrainKeys(_) | Transform::Cumulative(_) | Transform::DailyCumulative(..)
        )
    }

    /// The period whose first bucket gives every bucket its value.
    pub fn period_start(&self) -> Option<Grain> {
        match self {
            Transform::ToGrain(g) | Transform::ToGrainKeys(g) => Some(*g),
            _ => None,
        }
    }
}

/// Where conversion events are read: the conversion metric's anchor, paired
/// with the base anchor on key columns, with the conversion metric's filters.
#[derive(Clone, Debug, PartialEq)]
pub struct ConversionTarget {
    pub metric: String,
    pub entity: String,
    /// `(base anchor column, conversion anchor column)`.
    pub keys: Vec<(String, String)>,
    /// The conversion anchor's time column.
    pub time: String,
    pub window: Option<Interval>,
    pub filters: Vec<Filter>,
    pub counts: ConversionCounts,
}

#[derive(Clone, Debug, PartialEq)]
pub struct Filter {
    pub column: ColumnRef,
    pub op: FilterOp,
    pub values: Vec<Value>,
    /// True for filters the metric declares (they define what it counts).
    pub from_metric: bool,
    /// A metric filter: the metric grouped by `column`, resolved; the
    /// filter compares its value, not the column's.
    pub by_metric: Option<Box<ResolvedRequest>>,
    /// The filter compares the period `column` falls in at this grain
    /// (`order.ordered_at__fiscal_year`), not the column itself.
    pub bucket: Option<Grain>,
}

/// A request resolved: the simple-metric queries to run (components) and
/// the metrics to output, each an expression over components.
#[derive(Clone, Debug, PartialEq)]
pub struct ResolvedRequest {
    pub components: Vec<MetricQuery>,
    pub outputs: Vec<OutputMetric>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct OutputMetric {
    pub name: String,
    pub expr: OutputExpr,
}

/// Arithmetic over component values. Division never fails: it is
/// floating-point and NULL when the divisor is 0.
#[derive(Clone, Debug, PartialEq)]
pub enum OutputExpr {
    Component(usize),
    Number(String),
    Neg(Box<OutputExpr>),
    Binary(crate::model::ArithOp, Box<OutputExpr>, Box<OutputExpr>),
}

impl OutputExpr {
    /// The components the expression reads, in reading order.
    pub fn components(&self) -> Vec<usize> {
        match self {
            OutputExpr::Component(i) => vec![*i],
            OutputExpr::Number(_) => Vec::new(),
            OutputExpr::Neg(inner) => inner.components(),
            OutputExpr::Binary(_, l, r) => {
                let mut v = l.components();
                v.extend(r.components());
                v
            }
        }
    }

    /// Maps a derived metric's expression over input aliases to components;
    /// `None` when it names an alias that is not an input.
    pub fn from_measure(e: &crate::model::MeasureExpr, by_alias: &[(&str, usize)]) -> Option<OutputExpr> {
        use crate::model::MeasureExpr as M;
        Some(match e {
            M::Column(alias) => OutputExpr::Component(by_alias.iter().find(|(a, _)| a == alias).map(|(_, i)| *i)?),
            M::Number(n) => OutputExpr::Number(n.clone()),
            M::Neg(inner) => OutputExpr::Neg(Box::new(OutputExpr::from_measure(inner, by_alias)?)),
            M::Binary(op, l, r) => OutputExpr::Binary(
                *op,
                Box::new(OutputExpr::from_measure(l, by_alias)?),
                Box::new(OutputExpr::from_measure(r, by_alias)?),
            ),
        })
    }
}

/// An output column an ORDER BY can name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OutputRef {
    Time,
    GroupBy(usize),
    /// The i-th output metric of the request.
    Metric(usize),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OrderKey {
    pub target: OutputRef,
    pub descending: bool,
}

/// A group-by key: a column, a part of a date column
/// (`<entity>.<column>__extract_<part>`, MetricFlow's suffix) or a date
/// column at a grain that is not the request's time bucket
/// (`<entity>.<column>__<grain>`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GroupColumn {
    pub column: ColumnRef,
    pub derived: Option<Derived>,
}

/// What a group-by key takes of a date column instead of its value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Derived {
    Part(DatePart),
    Bucket(Grain),
}

impl GroupColumn {
    pub fn plain(column: ColumnRef) -> Self {
        GroupColumn { column, derived: None }
    }
}

impl std::fmt::Display for GroupColumn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.derived {
            None => write!(f, "{}", self.column),
            Some(Derived::Part(p)) => write!(f, "{}__extract_{}", self.column, p.as_str()),
            Some(Derived::Bucket(g)) => write!(f, "{}__{}", self.column, g.as_str()),
        }
    }
}

/// The output name of a time bucket: `<entity>.<column>__<grain>`.
pub fn time_bucket_name(dimension: &ColumnRef, grain: Grain) -> String {
    format!("{}__{}", dimension, grain.as_str())
}
