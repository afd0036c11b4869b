//! Everything that can be wrong with a request, from name resolution and
//! from planning, with the facts a recovery needs.

use crate::model::Grain;

/// Which argument a column came from; picks the error kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ColumnRole {
    GroupBy,
    Filter,
    OrderBy,
    TimeDimension,
    Measure,
}

impl ColumnRole {
    pub fn argument(self) -> &'static str {
        match self {
            ColumnRole::GroupBy => "group_by",
            ColumnRole::Filter => "filters",
            ColumnRole::OrderBy => "order_by",
            ColumnRole::TimeDimension => "time_dimension",
            ColumnRole::Measure => "measure",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum Issue {
    UnknownMetric {
        name: String,
        fuzzy: Vec<String>,
    },
    /// A name or value of the wrong shape: `argument` names where it was.
    Malformed {
        argument: String,
        message: String,
    },
    UnknownEntity {
        role: ColumnRole,
        name: String,
        fuzzy: Vec<String>,
    },
    UnknownColumn {
        role: ColumnRole,
        entity: String,
        column: String,
        allowed: Vec<String>,
        fuzzy: Vec<String>,
    },
    /// An ORDER BY on something that is not an output column.
    UnknownOrderBy {
        column: String,
        allowed: Vec<String>,
        fuzzy: Vec<String>,
    },
    InvalidTimeGrain {
        grain: String,
        allowed: Vec<Grain>,
    },
    /// A grain finer than the time dimension can carry (hour on a DATE).
    GrainMismatch {
        dimension: String,
        grain: Grain,
        allowed: Vec<Grain>,
    },
    UnknownViaJoin {
        name: String,
        fuzzy: Vec<String>,
        available: Vec<String>,
    },
    Unreachable {
        anchor: String,
        target: String,
    },
    /// Several shortest paths; each is a list of join names.
    AmbiguousPath {
        anchor: String,
        target: String,
        paths: Vec<Vec<String>>,
    },
    /// Several joins between two entities on the chosen path.
    AmbiguousJoin {
        from: String,
        to: String,
        candidates: Vec<String>,
    },
    AmbiguousTimeDimension {
        candidates: Vec<String>,
    },
    /// Several metrics asked for one grain, and some have no time dimension.
    MetricsCannotAlign {
        grain: Grain,
        without_time: Vec<String>,
    },
    /// A metric that moves or accumulates along time was asked without a grain.
    TimeGrainRequired {
        metric: String,
        allowed: Vec<Grain>,
    },
    /// A grain the metric's period (offset_to_grain, grain_to_date) does not
    /// divide evenly.
    GrainNotNested {
        metric: String,
        grain: Grain,
        period: Grain,
        allowed: Vec<Grain>,
    },
    /// A filter value outside the values the column is declared to take
    /// (dbt's `accepted_values`): the filter would silently match no row
    /// (`eq`, `in`) or every row (`ne`, `not_in`).
    UnacceptedValue {
        column: String,
        value: String,
        accepted: Vec<String>,
        fuzzy: Vec<String>,
    },
    /// The plan touches PII the policy refuses; `message` says why without
    /// naming more than `categories`.
    PiiBlocked {
        categories: Vec<String>,
        message: String,
    },
}
