//! The provider toolset's table tools (seed 003): sample_table, get_stats,
//! profile_table and detect_pii. Each reads one catalog table through the
//! engine with statements built here (never caller text), under the same
//! PII decision as every other tool: blocked columns are never read (nor
//! named, when catastrophic), other PII columns are only counted, and
//! detect_pii reads values server-side to classify them but returns no
//! value, only categories and shares.
//!
//! Architecture invariant: no rmcp, no printing; engines only through the
//! `Engine` trait.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};
use sqlparser::ast::Ident;

use super::context::{ProviderContext, POLICY_ID};
use crate::tools::contract::args::engine_failure;
use crate::tools::semantic::physical;
use crate::catalog::{ColumnInfo, TableInfo};
use crate::engine::{Engine, EngineError, Limits, ResultSet};
use crate::envelope::{Envelope, FailureKind, Recovery, ToolError};
use crate::model::{TableRef, TypeClass};
use crate::pii::Decision;
use crate::sql::CompiledSql;

/// Rows sample_table returns at most.
pub const MAX_SAMPLE_ROWS: u32 = 100;
/// Values per text column detect_pii classifies at most.
pub const MAX_PII_SAMPLES: u32 = 1000;
/// Columns profile_table lists top values for at most, and the values each.
const TOP_VALUE_COLUMNS: usize = 20;
const TOP_VALUES: usize = 5;
/// Distinct values above which a column gets no top-values list.
const TOP_VALUES_MAX_DISTINCT: u64 = 50;

/// Rows of a period, through the table's time dimension.
#[derive(Clone, Debug, Default, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TimeRange {
    /// First instant included: `YYYY-MM-DD` or `YYYY-MM-DD HH:MM[:SS]`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start: Option<String>,
    /// First instant excluded, same forms.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end: Option<String>,
    /// The date or timestamp column; default the table's time dimension (its
    /// entity's metrics' time dimension, else its only non-PII date/timestamp column). In query_sql,
    /// `table.column` restricts that table only; without it exactly one table read may have a time dimension.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<String>,
}

/// Arguments of `sample_table`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SampleArgs {
    /// The table as `schema.table` (list_tables names them).
    pub qualified_name: String,
    /// Rows, 1..100; default 10.
    #[serde(default)]
    #[schemars(range(min = 1, max = 100))]
    pub rows: Option<u32>,
    /// Only rows of this period.
    #[serde(default)]
    pub time_range: Option<TimeRange>,
}

/// Arguments of `get_stats` and `profile_table`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TableStatsArgs {
    /// The table as `schema.table` (list_tables names them).
    pub qualified_name: String,
    /// Only rows of this period.
    #[serde(default)]
    pub time_range: Option<TimeRange>,
}

/// Arguments of `detect_pii`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DetectPiiArgs {
    /// The table as `schema.table`.
    pub qualified_name: String,
    /// Non-null values sampled per text column, 10..1000; default 200.
    #[serde(default)]
    #[schemars(range(min = 10, max = 1000))]
    pub sample_rows: Option<u32>,
}

/// One column of a table as the policy sees it.
struct Col<'t> {
    info: &'t ColumnInfo,
    decision: Decision,
    /// Its name as tools may show it (a placeholder when catastrophic).
    shown: String,
}

impl Col<'_> {
    fn blocked(&self) -> bool {
        self.decision.redacted()
    }
    fn pii(&self) -> bool {
        self.decision.guarded() || self.blocked()
    }
}

struct Table<'p> {
    info: &'p TableInfo,
    columns: Vec<Col<'p>>,
    engine: &'p dyn Engine,
    quote: char,
    /// ` WHERE ...` of a time range (empty for all rows), and its description.
    filter: String,
    range: Option<Json>,
}

impl Table<'_> {
    fn ident(&self, name: &str) -> String {
        Ident::with_quote(self.quote, name).to_string()
    }

    /// The table, restricted to the time range when there is one.
    fn from(&self) -> String {
        format!("{}.{}{}", self.ident(&self.info.schema), self.ident(&self.info.name), self.filter)
    }

    /// `FROM` text with a further condition.
    fn relation_where(&self, condition: &str) -> String {
        let joiner = if self.filter.is_empty() { " WHERE " } else { " AND " };
        format!("{}{joiner}{condition}", self.from())
    }

    /// Restricts the table to `range`, through its time dimension.
    fn restrict(&mut self, project: &crate::project::Project, range: Option<&TimeRange>) -> Result<(), ToolError> {
        let Some(range) = range else { return Ok(()) };
        let column = match &range.column {
            Some(c) => c.clone(),
            None => time_dimension(project, self.info)?,
        };
        let conditions = range_condition(project, self.info, &column, range, self.engine.dialect())?;
        self.filter = format!(" WHERE {conditions}");
        self.range = Some(json!({"column": column, "start": range.start, "end": range.end}));
        Ok(())
    }

    /// The first `n` rows of `items` (SQL select items), ordered by the
    /// primary key so they are the same on every call; none without items.
    fn first_rows(&self, ctx: &ProviderContext<'_>, items: &[String], n: usize) -> Result<Vec<Json>, ToolError> {
        if items.is_empty() {
            return Ok(Vec::new());
        }
        let keys: Vec<String> = self.info.primary_key.iter().map(|k| self.ident(k)).collect();
        let order = if keys.is_empty() { String::new() } else { format!(" ORDER BY {}", keys.join(", ")) };
        let r = self.run(ctx, format!("SELECT {} FROM {}{order} LIMIT {n}", items.join(", "), self.from()), n)?;
        Ok(r.rows.into_iter().map(Json::from).collect())
    }

    fn run(&self, ctx: &ProviderContext<'_>, sql: String, max_rows: usize) -> Result<ResultSet, ToolError> {
        let compiled = CompiledSql { sql, params: Vec::new(), dialect: self.engine.dialect().name };
        self.engine.execute(&compiled, Limits { max_rows, timeout: ctx.limits.timeout }, &ctx.cancel).map_err(engine_error)
    }
}

fn engine_error(e: EngineError) -> ToolError {
    engine_failure(e, "narrow the rows with a time_range", Recovery::none())
}

/// The table, its reads limited to `range` when one is given: what every
/// tool that reads rows (sample, stats, profile, preview) starts from.
fn open_in_range<'p>(ctx: &'p ProviderContext<'p>, qualified_name: &str, range: Option<&TimeRange>) -> Result<Table<'p>, ToolError> {
    let mut t = open(ctx, qualified_name)?;
    t.restrict(ctx.project, range)?;
    Ok(t)
}

/// The table, its columns under the policy, and the engine to read it.
fn open<'p>(ctx: &'p ProviderContext<'p>, qualified_name: &str) -> Result<Table<'p>, ToolError> {
    let info = physical::table_arg(ctx.project, qualified_name)?;
    let Some(engine) = ctx.engine else {
        return Err(ToolError::new(
            FailureKind::MissingCredential,
            "No source database is configured (schemabrain.yaml `source`, or `serve --source`), so the table cannot be read; get_table_schema answers from the catalog.",
            Recovery::call("get_table_schema", json!({"qualified_name": qualified_name})),
        ));
    };
    let policy = &ctx.project.model.pii_policy;
    let tref = TableRef { schema: info.schema.clone(), table: info.name.clone() };
    let listed = crate::pii::decide_listing(policy, &tref, info.columns.iter().map(|c| c.name.as_str()));
    let columns = info.columns.iter().zip(listed).map(|(c, l)| Col { info: c, decision: l.decision, shown: l.shown }).collect();
    Ok(Table { info, columns, engine, quote: engine.dialect().quote, filter: String::new(), range: None })
}

/// `YYYY-MM-DD`, optionally ` HH:MM` or ` HH:MM:SS` (or with `T`): the only
/// text that reaches the SQL of a time range.
fn is_instant(v: &str) -> bool {
    let b = v.as_bytes();
    let digits = |r: std::ops::Range<usize>| r.clone().all(|i| b.get(i).is_some_and(u8::is_ascii_digit));
    let date = b.len() >= 10 && digits(0..4) && b.get(4) == Some(&b'-') && digits(5..7) && b.get(7) == Some(&b'-') && digits(8..10);
    let time = match b.len() {
        10 => true,
        16 | 19 => matches!(b.get(10), Some(b' ' | b'T')) && digits(11..13) && b.get(13) == Some(&b':') && digits(14..16) && (b.len() == 16 || b.get(16) == Some(&b':') && digits(17..19)),
        _ => false,
    };
    date && time
}

/// `range` on `column` of `info`, as one SQL condition in `dialect`: the
/// column must be a date or timestamp without PII, the bounds instants.
pub(super) fn range_condition(project: &crate::project::Project, info: &TableInfo, column: &str, range: &TimeRange, dialect: &crate::sql::Dialect) -> Result<String, ToolError> {
    let bad = |m: String| ToolError::new(FailureKind::InvalidArgument, m, Recovery::none());
    let Some(col) = info.columns.iter().find(|c| c.name == column) else {
        let names = info.columns.iter().map(|c| c.name.as_str());
        return Err(ToolError::new(
            FailureKind::InvalidArgument,
            format!("`{}` is not a column of {}.{}", crate::model::echo(column), info.schema, info.name),
            Recovery::none().with_fuzzy_matches(crate::model::close_matches(column, names)),
        ));
    };
    let decision = crate::pii::decide(&project.model.pii_policy, &TableRef { schema: info.schema.clone(), table: info.name.clone() }, &col.name);
    if decision.guarded() || decision.redacted() {
        // Filtering on a PII column is revealing, as in get_metric.
        let shown = crate::pii::shown_table_column(&project.model.pii_policy, &TableRef { schema: info.schema.clone(), table: info.name.clone() }, &col.name);
        return Err(bad(format!("{shown} carries PII ({}): a time range cannot filter on it", decision.shown_categories().join(", "))));
    }
    if !TypeClass::of(&col.data_type).is_temporal() {
        return Err(bad(format!("`{column}` is {}, not a date or timestamp", col.data_type)));
    }
    let cast = if dialect.name == "mysql" { "DATETIME" } else { "TIMESTAMP" };
    let ident = Ident::with_quote(dialect.quote, column).to_string();
    let mut conditions = Vec::new();
    for (bound, op) in [(&range.start, ">="), (&range.end, "<")] {
        if let Some(v) = bound {
            if !is_instant(v) {
                return Err(bad(format!("time_range bound `{}` is not YYYY-MM-DD or YYYY-MM-DD HH:MM[:SS]", crate::model::echo(v))));
            }
            conditions.push(format!("{ident} {op} CAST('{v}' AS {cast})"));
        }
    }
    if conditions.is_empty() {
        return Err(bad("time_range needs a start, an end or both".into()));
    }
    Ok(conditions.join(" AND "))
}


/// Candidates for the table's time dimension: the one its entity's metrics
/// agree on, else its non-PII date/timestamp columns.
pub(super) fn time_candidates(project: &crate::project::Project, info: &TableInfo) -> Vec<String> {
    let model = &project.model;
    if let Some(e) = model.entity_on(&info.schema, &info.name) {
        let mut dims: Vec<&str> = model
            .metrics
            .values()
            .filter_map(|m| m.time_dimension.as_ref())
            .filter(|d| d.entity == e.name)
            .map(|d| d.column.as_str())
            .collect();
        dims.sort();
        dims.dedup();
        if let [one] = dims.as_slice() {
            return vec![one.to_string()];
        }
    }
    let table = TableRef { schema: info.schema.clone(), table: info.name.clone() };
    let clean = |c: &ColumnInfo| {
        let d = crate::pii::decide(&model.pii_policy, &table, &c.name);
        !d.guarded() && !d.redacted()
    };
    info.columns.iter().filter(|c| clean(c) && TypeClass::of(&c.data_type).is_temporal()).map(|c| c.name.clone()).collect()
}

/// Several candidates: the caller names one.
pub(super) fn several_time_columns(info: &TableInfo, many: &[String]) -> ToolError {
    ToolError::new(
        FailureKind::InvalidArgument,
        format!("{}.{} has several time columns ({}): name one in time_range.column", info.schema, info.name, many.join(", ")),
        Recovery::none().with_fuzzy_matches(many.iter().map(String::as_str)),
    )
}

/// The table's time dimension (`time_candidates`), when there is exactly one.
fn time_dimension(project: &crate::project::Project, info: &TableInfo) -> Result<String, ToolError> {
    match time_candidates(project, info).as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(ToolError::new(FailureKind::InvalidArgument, format!("{}.{} has no date or timestamp column a time range could use", info.schema, info.name), Recovery::none())),
        many => Err(several_time_columns(info, many)),
    }
}

fn failed(e: ToolError) -> Envelope {
    Envelope::error(e)
}

/// Numbers, dates and times: min/max are reported for these only.
fn ordered_type(data_type: &str) -> bool {
    let class = TypeClass::of(data_type);
    class.is_numeric() || class.is_temporal() || class == TypeClass::Time
}

pub fn sample_table(ctx: &ProviderContext<'_>, args: &SampleArgs) -> Envelope {
    let t = match open_in_range(ctx, &args.qualified_name, args.time_range.as_ref()) {
        Ok(t) => t,
        Err(e) => return failed(e),
    };
    let n = args.rows.unwrap_or(10).clamp(1, MAX_SAMPLE_ROWS) as usize;
    let shown: Vec<&Col> = t.columns.iter().filter(|c| !c.pii()).collect();
    let masked: Vec<Json> = t
        .columns
        .iter()
        .filter(|c| c.pii())
        .map(|c| json!({"name": c.shown, "pii_categories": c.decision.shown_categories(), "blocked": c.blocked()}))
        .collect();
    let list: Vec<String> = shown.iter().map(|c| t.ident(&c.info.name)).collect();
    let rows = match t.first_rows(ctx, &list, n) {
        Ok(rows) => rows,
        Err(e) => return failed(e),
    };
    let columns: Vec<Json> = shown.iter().map(|c| json!({"name": c.info.name, "type": c.info.data_type})).collect();
    Envelope::success(json!({
        "qualified_name": format!("{}.{}", t.info.schema, t.info.name),
        "columns": columns,
        "rows": rows,
        "row_count": rows.len(),
        "masked_columns": masked,
        "time_range": t.range,
    }))
    .with_follow_up_hints(&["query_sql", "profile_table"])
}

/// Per-column counts (and min/max of clean ordered columns) in one statement.
fn stats(ctx: &ProviderContext<'_>, t: &Table<'_>) -> Result<(u64, Vec<Json>), ToolError> {
    let mut items = vec!["count(*)".to_string()];
    let readable: Vec<&Col> = t.columns.iter().filter(|c| !c.blocked()).collect();
    for c in &readable {
        let col = t.ident(&c.info.name);
        items.push(format!("count({col})"));
        items.push(format!("count(DISTINCT {col})"));
        if !c.pii() && ordered_type(&c.info.data_type) {
            items.push(format!("min({col})"));
            items.push(format!("max({col})"));
        }
    }
    let r = t.run(ctx, format!("SELECT {} FROM {}", items.join(", "), t.from()), 1)?;
    let row = r.rows.into_iter().next().unwrap_or_default();
    let mut values = row.into_iter();
    let int = |v: Option<Json>| v.and_then(|v| v.as_u64().or_else(|| v.as_str().and_then(|s| s.parse().ok()))).unwrap_or(0);
    let total = int(values.next());
    let mut out = Vec::new();
    for c in &t.columns {
        if c.blocked() {
            out.push(json!({"name": c.shown, "redacted": true, "pii_categories": c.decision.shown_categories()}));
            continue;
        }
        let non_null = int(values.next());
        let distinct = int(values.next());
        let null_fraction = if total == 0 { 0.0 } else { (total - non_null.min(total)) as f64 / total as f64 };
        let mut item = json!({
            "name": c.info.name,
            "type": c.info.data_type,
            "null_fraction": null_fraction,
            "distinct_count": distinct,
        });
        if !c.pii() && ordered_type(&c.info.data_type) {
            crate::json::set(&mut item, "min", values.next().unwrap_or(Json::Null));
            crate::json::set(&mut item, "max", values.next().unwrap_or(Json::Null));
        }
        if c.pii() {
            crate::json::set(&mut item, "pii_categories", json!(c.decision.shown_categories()));
        }
        out.push(item);
    }
    Ok((total, out))
}

pub fn get_stats(ctx: &ProviderContext<'_>, args: &TableStatsArgs) -> Envelope {
    let t = match open_in_range(ctx, &args.qualified_name, args.time_range.as_ref()) {
        Ok(t) => t,
        Err(e) => return failed(e),
    };
    match stats(ctx, &t) {
        Ok((rows, columns)) => Envelope::success(json!({
            "qualified_name": format!("{}.{}", t.info.schema, t.info.name),
            "row_count": rows,
            "columns": columns,
            "time_range": t.range,
        }))
        .with_follow_up_hints(&["profile_table", "query_sql"]),
        Err(e) => failed(e),
    }
}

pub fn profile_table(ctx: &ProviderContext<'_>, args: &TableStatsArgs) -> Envelope {
    let t = match open_in_range(ctx, &args.qualified_name, args.time_range.as_ref()) {
        Ok(t) => t,
        Err(e) => return failed(e),
    };
    let (rows, mut columns) = match stats(ctx, &t) {
        Ok(s) => s,
        Err(e) => return failed(e),
    };
    // Top values of clean, low-cardinality columns.
    let mut listed = 0;
    for (c, item) in t.columns.iter().zip(columns.iter_mut()) {
        let distinct = item.get("distinct_count").and_then(Json::as_u64).unwrap_or(u64::MAX);
        if c.pii() || distinct > TOP_VALUES_MAX_DISTINCT || listed == TOP_VALUE_COLUMNS {
            continue;
        }
        listed += 1;
        let col = t.ident(&c.info.name);
        let sql = format!("SELECT {col}, count(*) FROM {} GROUP BY {col} ORDER BY 2 DESC, 1 LIMIT {TOP_VALUES}", t.from());
        match t.run(ctx, sql, TOP_VALUES) {
            Ok(r) => {
                let top: Vec<Json> = r.rows.into_iter().map(|row| json!({"value": row.first().cloned().unwrap_or(Json::Null), "count": row.get(1).cloned().unwrap_or(Json::Null)})).collect();
                item["top_values"] = json!(top);
            }
            Err(e) => return failed(e),
        }
    }
    Envelope::success(json!({
        "qualified_name": format!("{}.{}", t.info.schema, t.info.name),
        "row_count": rows,
        "columns": columns,
        "time_range": t.range,
    }))
    .with_follow_up_hints(&["query_sql", "sample_table"])
}

/// Arguments of `preview_masked`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct PreviewMaskedArgs {
    /// The table as `schema.table` (list_tables names them).
    pub qualified_name: String,
    /// The masking policy; the project has one, `pii_policy` (the default).
    #[serde(default)]
    pub policy_id: Option<String>,
    /// Rows, 1..50; default 10.
    #[serde(default)]
    #[schemars(range(min = 1, max = 50))]
    pub rows: Option<u32>,
    /// Only rows of this period.
    #[serde(default)]
    pub time_range: Option<TimeRange>,
}

/// Rows preview_masked returns at most.
pub const MAX_PREVIEW_ROWS: u32 = 50;

/// The table's rows as free SQL would show them under the masking policy:
/// clean columns as they are, masked columns through their mask (the SQL
/// query_sql runs), PII columns without a mask withheld and listed.
pub fn preview_masked(ctx: &ProviderContext<'_>, args: &PreviewMaskedArgs) -> Envelope {
    let policy_id = POLICY_ID;
    if let Some(asked) = args.policy_id.as_deref().filter(|p| *p != policy_id) {
        return failed(ToolError::new(
            FailureKind::InvalidArgument,
            format!("no masking policy `{}`; the project has one: {policy_id} (its pii_policy.yaml `masking`)", crate::model::echo(asked)),
            Recovery::call("preview_masked", json!({"qualified_name": args.qualified_name, "policy_id": policy_id})),
        ));
    }
    let t = match open_in_range(ctx, &args.qualified_name, args.time_range.as_ref()) {
        Ok(t) => t,
        Err(e) => return failed(e),
    };
    let n = args.rows.unwrap_or(10).clamp(1, MAX_PREVIEW_ROWS) as usize;
    let salt = ctx.pager.mask_salt();
    let dialect = t.engine.dialect().name;
    let mut items = Vec::new();
    let mut columns = Vec::new();
    let mut masked = Vec::new();
    let mut withheld = Vec::new();
    for c in &t.columns {
        let ident = t.ident(&c.info.name);
        match (c.pii(), c.decision.mask) {
            (false, _) => {
                items.push(ident);
                columns.push(json!({"name": c.info.name, "type": c.info.data_type, "masking": null}));
            }
            (true, Some(m)) => {
                items.push(crate::provider::views::masked_item(m, &ident, dialect, &salt));
                columns.push(json!({"name": c.shown, "type": "text", "masking": m.as_str()}));
                masked.push(json!({"column": c.shown, "method": m.as_str(), "pii_categories": c.decision.shown_categories()}));
            }
            (true, None) => withheld.push(json!({"name": c.shown, "pii_categories": c.decision.shown_categories(), "blocked": c.blocked()})),
        }
    }
    let rows = match t.first_rows(ctx, &items, n) {
        Ok(rows) => rows,
        Err(e) => return failed(e),
    };
    Envelope::success(json!({
        "qualified_name": format!("{}.{}", t.info.schema, t.info.name),
        "columns": columns,
        "rows": rows,
        "row_count": rows.len(),
        "policy_applied": {"policy_id": policy_id, "masked": masked, "withheld": withheld},
        "time_range": t.range,
    }))
    .with_follow_up_hints(&["query_sql"])
}

pub fn detect_pii(ctx: &ProviderContext<'_>, args: &DetectPiiArgs) -> Envelope {
    let t = match open(ctx, &args.qualified_name) {
        Ok(t) => t,
        Err(e) => return failed(e),
    };
    let n = args.sample_rows.unwrap_or(200).clamp(10, MAX_PII_SAMPLES) as usize;
    let mut out = Vec::new();
    for c in &t.columns {
        let by_name: Vec<&str> = crate::pii::classify_name(&c.info.name);
        let by_values = if TypeClass::of(&c.info.data_type) == TypeClass::Text {
            let col = t.ident(&c.info.name);
            let sql = format!("SELECT {col} FROM {} LIMIT {n}", t.relation_where(&format!("{col} IS NOT NULL")));
            match t.run(ctx, sql, n) {
                Ok(r) => {
                    let samples: Vec<String> = r.rows.iter().filter_map(|row| row.first().and_then(Json::as_str).map(str::to_string)).collect();
                    crate::pii::classify_values(&samples).map(|m| json!({"category": m.category, "kind": m.kind, "share": m.share}))
                }
                Err(e) => return failed(e),
            }
        } else {
            None
        };
        // A blocked column shows only its blocked categories (naming the
        // rest would let an agent probe for PII), as in every other tool.
        let blocked = &c.decision.blocked_categories;
        let (by_name, by_values) = if c.blocked() {
            let values = by_values.filter(|m| m.get("category").and_then(Json::as_str).is_some_and(|k| blocked.iter().any(|b| b == k)));
            (by_name.into_iter().filter(|k| blocked.iter().any(|b| b == k)).collect(), values)
        } else {
            (by_name, by_values)
        };
        out.push(json!({
            "name": c.shown,
            "type": c.info.data_type,
            "name_categories": by_name,
            "value_match": by_values,
            "policy": {
                "categories": c.decision.shown_categories(),
                "source": c.decision.tag.source,
                "blocked": c.blocked(),
            },
        }));
    }
    Envelope::success(json!({
        "qualified_name": format!("{}.{}", t.info.schema, t.info.name),
        "columns": out,
        "note": "Values were read on the server to classify them; none is returned. `schemabrain index` writes reviewed tags into the project.",
    }))
    .with_follow_up_hints(&["get_table_schema"])
}
