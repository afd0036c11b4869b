//! Tool arguments as agents send them: serde types with generated JSON
//! Schema, unknown fields rejected.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// One filter: `{column, op, value}`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FilterArgs {
    /// The filtered column as `entity.column`, e.g. `order.status`.
    pub column: String,
    /// The comparison (`in`/`not_in` take a list, `is_null`/`not_null` no value, `like` a `%` pattern).
    pub op: String,
    /// A scalar for comparisons, a list for in/not_in, omitted for is_null/not_null.
    /// Dates and timestamps are ISO strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<serde_json::Value>,
    /// Compare this metric's value per `column` value instead (e.g. `order_count` by `customer.id` gte 5: customers with at least 5 orders).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
}

/// One ORDER BY key.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderByArgs {
    /// The metric's name, a group_by column (`entity.column`) or the time
    /// bucket (`metric_time`).
    pub column: String,
    /// Ascending unless `desc`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub direction: Option<String>,
}

/// Arguments of `get_metric` (and of `schemabrain compile` / `query`).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetMetricArgs {
    /// The metric's name, from list_metrics. Give `name` or `names`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// Several metrics answered side by side on the same group-bys and grain,
    /// each aggregated at its own source. Give `name` or `names`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
    /// Columns to group by, as `entity.column`, in output order; a date column at a grain as `entity.column__month`, a date part as `entity.column__extract_dow` (year, quarter, month, day, dow, doy).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub group_by: Vec<String>,
    /// Row filters, all of which must hold.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<FilterArgs>,
    /// MetricFlow where strings, ANDed with filters: `{{ Dimension('customer__country') }} = 'US'`.
    #[serde(default, rename = "where", skip_serializing_if = "Vec::is_empty")]
    pub where_strings: Vec<String>,
    /// Bucket the metric by time (week: ISO, from Monday).
    /// Required for cumulative metrics and metrics with time offsets
    /// (`requires_time_grain` in list_metrics).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_grain: Option<String>,
    /// The time column to bucket by (`entity.column`) when the metric has none of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_dimension: Option<String>,
    /// Ordering; the remaining output keys are appended ascending as tie-breaks.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub order_by: Vec<OrderByArgs>,
    /// Rows at most, 1..10000; default 1000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// Join names that choose among ambiguous paths or parallel joins.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub via: Vec<String>,
    /// SQL dialect of `data.sql`; default the project's, else the executing engine's (duckdb for dry runs).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialect: Option<String>,
    /// Plan and compile only; nothing is executed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    /// A saved query's name instead of name/group_by/time_grain (list_metrics lists them with type saved_query); filters, where, order_by and limit may narrow it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub query: Option<String>,
    /// Page through the answer this many rows at a time (1..1000); data.page_token continues it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_size: Option<u32>,
    /// The previous page's data.page_token, with the same arguments otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_token: Option<String>,
}

impl GetMetricArgs {
    /// Arguments for one metric by name.
    pub fn metric(name: &str) -> Self {
        GetMetricArgs { name: Some(name.to_string()), ..Default::default() }
    }

    /// The arguments as a JSON object, for a recovery's `suggested_args`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }

    /// The metric names asked for, `name` first.
    pub fn metric_names(&self) -> Vec<String> {
        self.name.iter().chain(self.names.iter()).cloned().collect()
    }
}

/// Arguments of tools that take one name.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NameArgs {
    /// The entity's name, from list_entities.
    pub name: String,
}

/// Arguments of `resolve_join`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ResolveJoinArgs {
    /// One entity (order does not matter).
    pub entity_a: String,
    /// The other entity.
    pub entity_b: String,
    /// A join name, when several joins connect the two.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}
