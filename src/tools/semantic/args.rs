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
    /// in/not_in take a list, is_null/not_null no value, like a `%` pattern.
    pub op: String,
    /// A scalar, or a list for in/not_in; dates as ISO strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub value: Option<serde_json::Value>,
    /// Compare this metric per `column` value instead (`order_count` by `customer.id` gte 5: customers with 5+ orders).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metric: Option<String>,
}

/// One ORDER BY key.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct OrderByArgs {
    /// The metric, a group_by column or `metric_time`.
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
    /// Several metrics side by side on the same group-bys and grain. Give `name` or `names`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub names: Vec<String>,
    /// Columns to group by, as `entity.column`, in output order; a date column at a grain as `entity.column__month`, a date part as `entity.column__extract_dow` (year, quarter, month, day, dow, doy).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub group_by: Vec<String>,
    /// Row filters, all must hold; identical ones count once.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub filters: Vec<FilterArgs>,
    /// MetricFlow where strings, ANDed with filters: `{{ Dimension('customer__country') }} = 'US'`.
    #[serde(default, rename = "where", skip_serializing_if = "Vec::is_empty")]
    pub where_strings: Vec<String>,
    /// Bucket the metric by time (week: ISO, from Monday), or by a custom
    /// grain of the project's time spine the metric lists (`time_grains` in list_metrics).
    /// Required for cumulative metrics and metrics with time offsets
    /// (`requires_time_grain` in list_metrics).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_grain: Option<String>,
    /// The time column to bucket by (`entity.column`) when the metric has none of its own.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_dimension: Option<String>,
    /// Ordering; the other output keys break ties, ascending.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub order_by: Vec<OrderByArgs>,
    /// Rows at most, 1..10000; default 1000.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit: Option<i64>,
    /// Join names that choose among ambiguous paths or parallel joins.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub via: Vec<String>,
    /// SQL dialect of `data.sql`; default the engine's (dry runs: the project's, else duckdb).
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

/// A filter's canonical form, for telling identical conditions apart from
/// distinct ones: the op as written in lower case, and the values of
/// `in`/`not_in` as a set (order and repeats do not change the condition).
fn canonical(f: &FilterArgs) -> (String, String, String, Option<String>) {
    let value = match (&f.value, f.op.trim().to_ascii_lowercase().as_str()) {
        (Some(serde_json::Value::Array(items)), "in" | "not_in") => {
            let mut vs: Vec<String> = items.iter().map(|v| v.to_string()).collect();
            vs.sort();
            vs.dedup();
            vs.join("\u{1f}")
        }
        (Some(v), _) => v.to_string(),
        (None, _) => String::new(),
    };
    (f.column.trim().to_string(), f.op.trim().to_ascii_lowercase(), value, f.metric.clone())
}

/// The filters with identical conditions kept once (the first of each), in
/// order: identical filters are one filter, before any limit is counted.
pub fn distinct_filters(filters: &[FilterArgs]) -> Vec<FilterArgs> {
    let mut seen = std::collections::HashSet::new();
    filters.iter().filter(|f| seen.insert(canonical(f))).cloned().collect()
}

/// The strings with repeats kept once, in order.
pub fn distinct(items: &[String]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    items.iter().filter(|s| seen.insert(s.as_str())).cloned().collect()
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
