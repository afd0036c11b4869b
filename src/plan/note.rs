//! What a plan tells the caller about itself, as facts. Sentences are the
//! tools' business (`tools::notes`): the planner names what happened, never
//! how to say it.

use crate::model::{Cardinality, ColumnRef, CumulativeWindow, Grain, Interval, PeriodAgg, TableRef, WindowChoice};

#[derive(Clone, Debug, PartialEq)]
pub enum PlanNote {
    /// A to-many join repeats anchor rows; the answer counts each anchor
    /// row once per group (deduplicated on its identity).
    FanOutDeduplicated { metric: String, anchor: String, join: String, to: String, cardinality: Cardinality, declared: bool },
    /// A to-many join repeats anchor rows and the anchor has no identity to
    /// deduplicate on: the value may be inflated.
    FanOutInflated { metric: String, anchor: String, join: String, to: String },
    /// Filters on an entity only they reach over a to-many join: rows of
    /// `correlated` with at least one matching related row are kept, once.
    SemiJoin { join: String, correlated: String },
    /// A versioned join: of `versions`' rows with the keys, the one whose
    /// window (`from`, `to`) holds the metric's `time` on `other`.
    VersionedJoin { join: String, versions: String, other: String, time: String, from: String, to: String },
    /// `via` joins no column of the request needed.
    ViaUnused { joins: Vec<String> },
    /// The only temporal column reachable over to-one joins.
    TimeInherited { column: ColumnRef },
    /// The anchor's own (and only) temporal column among the candidates.
    TimeOwnColumn { column: ColumnRef, anchor: String },
    /// A grain was asked for and no temporal column is reachable.
    TimeUnavailable { anchor: String, grain: Grain },
    /// `time_dimension` came without `time_grain`.
    TimeDimensionWithoutGrain,
    /// The metric's own time dimension overrides the request's.
    TimeDimensionOverridden { metric: String, own: ColumnRef },
    NonAdditive { metric: String, column: String, window: WindowChoice, bucketed: bool, per: Vec<String> },
    /// `credited`: conversion rows credited to the latest base row (MetricFlow's), else base rows that convert.
    Conversion { anchor: String, entity: String, metric: String, keys: Vec<(String, String)>, window: Option<Interval>, credited: bool },
    Cumulative { metric: String, window: CumulativeWindow },
    /// Computed per day of the time spine, then one value per bucket.
    DailyCumulative { metric: String, window: CumulativeWindow, period_agg: PeriodAgg, spine: TableRef },
    /// Every period of the time spine is a row (`join_to_timespine`).
    TimeSpine { metric: String, spine: TableRef, fill: Option<i64> },
    /// Quasi-identifiers revealed under the policy's minimum group size:
    /// rows over fewer than `k` distinct `people` are withheld.
    SmallGroupsWithheld { k: u32, columns: Vec<String>, people: Vec<String> },
}
