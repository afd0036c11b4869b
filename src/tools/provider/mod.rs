//! The `provider` toolset (seed 003): the catalog (list_schemas,
//! list_tables, get_table_schema), free SQL (query_sql, explain_sql) and
//! the table tools of `inspect` (sample_table, get_stats, profile_table,
//! detect_pii), for numbers the semantic layer does not define. Offered only when the server is
//! started with `--toolsets semantic,provider` (or `all`).
//!
//! query_sql runs a statement only after `provider::guard` (one read-only
//! query reaching nothing outside the database) and `provider::columns`
//! (every column reference resolved against the catalog, PII refused as in
//! get_metric). What runs is the parsed statement rendered again, never the
//! caller's text, so comments and quoting cannot hide anything from the
//! checks. Results are paged: a default and a hard row cap, a byte cap per
//! page, `has_more`, and a `page_token` (`paging`) bound to the statement
//! and the client session. Pages follow the statement's ORDER BY with every
//! output column as tie-breaker (all output columns without one), so a
//! round trip returns every row exactly once.
//!
//! Architecture invariant: no rmcp, no printing; engines only through the
//! `Engine` trait.

use std::collections::BTreeMap;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{json, Value as Json};
use sqlparser::ast::{OrderByKind, Statement};

mod context;
pub mod inspect;
pub mod prompts;
pub mod resources;

pub use context::{ProviderContext, POLICY_ID};

use inspect::TimeRange;
use crate::tools::contract::args::{engine_failure, with_args, NoArgs};
use crate::tools::contract::paging::{Pager, TokenError};
use crate::tools::semantic::physical;
use crate::engine::{EngineError, Limits, ResultSet};
use crate::envelope::{Envelope, FailureKind, Recovery, RefusalKind, ToolError};
use crate::project::Project;
use crate::provider::{columns, guard, views};
use crate::sql::CompiledSql;

/// Rows per page unless the call asks for fewer or more.
pub const DEFAULT_PAGE_ROWS: usize = 100;
/// Rows per page at most, whatever the call asks.
pub const MAX_PAGE_ROWS: usize = 1000;
/// Bytes of row JSON per page at most: a page stops early rather than
/// flood the agent's context (and stays under the envelope's token cap, so
/// shaping never cuts a page); `has_more` and the token continue it.
pub const MAX_PAGE_BYTES: usize = 60 * 1024;

/// The provider tools that write (listed only with `--allow-writes`).
pub const WRITE_TOOLS: [&str; 2] = ["create_view", "materialize_sql"];

/// Names of the provider tools.
pub const PROVIDER_TOOLS: [&str; 13] = [
    "create_view", "detect_pii", "explain_sql", "get_stats", "get_table_schema", "list_schemas", "list_tables", "materialize_sql", "preview_masked",
    "profile_table", "query_plan", "query_sql", "sample_table",
];

/// Arguments of `list_tables`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListTablesArgs {
    /// Only the tables of this schema (list_schemas names them); all when omitted.
    #[serde(default)]
    pub schema: Option<String>,
}

/// Arguments of `query_sql`.
#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QuerySqlArgs {
    /// Exactly one read-only SELECT (WITH, joins, subqueries, UNION and window functions are fine).
    /// Tables must be in the catalog (list_tables); PII columns may only be counted.
    pub sql: String,
    /// The SQL dialect; defaults to the source's own and must equal it (duckdb, postgres, mysql or datafusion).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dialect: Option<String>,
    /// Rows per page, 1..1000; default 100. A page also stops at 60 KiB of rows.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 1000))]
    pub page_size: Option<u32>,
    /// The `page_token` of the previous page, with the same sql and dialect, for the next page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub page_token: Option<String>,
    /// Only rows of this period: every table read that has the `column` (default: its time dimension) is
    /// restricted to it before the statement sees it; the answer says which tables were and were not.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_range: Option<TimeRange>,
    /// Check the statement (guard, tables, PII) without running it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
}

/// Arguments of `explain_sql`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExplainSqlArgs {
    /// One read-only SELECT, checked as query_sql checks it.
    pub sql: String,
    /// The SQL dialect; defaults to the source's own and must equal it.
    #[serde(default)]
    pub dialect: Option<String>,
}

/// Arguments of `query_plan`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct QueryPlanArgs {
    /// A Substrait plan in its protobuf JSON form, `{"relations": [{"root": {"input": {...}, "names": [...]}}], "extensions": [...]}`,
    /// reading catalog tables by `namedTable` names (`[schema, table]`). It runs as the SQL it stands for, checked as query_sql checks SQL.
    #[schemars(with = "serde_json::Map<String, Json>")]
    pub substrait: Json,
    /// Rows per page, 1..1000; default 100. A page also stops at 60 KiB of rows.
    #[serde(default)]
    #[schemars(range(min = 1, max = 1000))]
    pub page_size: Option<u32>,
    /// The `page_token` of the previous page, with the same plan, for the next page.
    #[serde(default)]
    pub page_token: Option<String>,
    /// Only rows of this period, as in query_sql.
    #[serde(default)]
    pub time_range: Option<TimeRange>,
    /// Translate and check the plan without running it (the answer shows its SQL).
    #[serde(default)]
    pub dry_run: bool,
}

/// How a write treats an existing table or view.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum WriteMode {
    /// Fails when it exists.
    #[default]
    Create,
    /// Drops what exists and writes anew.
    Replace,
    /// Adds the rows to an existing table (materialize_sql only).
    Append,
}

/// Arguments of `materialize_sql`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MaterializeArgs {
    /// One read-only SELECT, checked as query_sql checks it; its rows are stored.
    pub sql: String,
    /// The table to write: `name` or `SCHEMA.name` with the schema the server allows.
    pub table: String,
    /// create (default; fails if the table exists), replace or append.
    #[serde(default)]
    pub mode: WriteMode,
    /// The SQL dialect; defaults to the source's own and must equal it.
    #[serde(default)]
    pub dialect: Option<String>,
}

/// Arguments of `create_view`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateViewArgs {
    /// One read-only SELECT, checked as query_sql checks it.
    pub sql: String,
    /// The view: `name` or `SCHEMA.name` with the schema the server allows.
    pub view: String,
    /// create (default; fails if the view exists) or replace.
    #[serde(default)]
    pub mode: WriteMode,
    /// The SQL dialect; defaults to the source's own and must equal it.
    #[serde(default)]
    pub dialect: Option<String>,
}

/// Calls a provider tool with JSON arguments.
pub fn call(ctx: &ProviderContext<'_>, tool: &str, args: &Json) -> Envelope {
    match tool {
        "list_schemas" => with_args(tool, args, |_: NoArgs| list_schemas(ctx.project)),
        "list_tables" => with_args(tool, args, |a: ListTablesArgs| list_tables(ctx.project, &a)),
        "get_table_schema" => with_args(tool, args, |a: physical::TableNameArgs| physical::describe_table(ctx.project, &a.qualified_name)),
        "query_sql" => with_args(tool, args, |a: QuerySqlArgs| query_sql(ctx, &a)),
        "explain_sql" => with_args(tool, args, |a: ExplainSqlArgs| explain_sql(ctx, &a)),
        "query_plan" => with_args(tool, args, |a: QueryPlanArgs| query_plan(ctx, &a)),
        "sample_table" => with_args(tool, args, |a: inspect::SampleArgs| inspect::sample_table(ctx, &a)),
        "get_stats" => with_args(tool, args, |a: inspect::TableStatsArgs| inspect::get_stats(ctx, &a)),
        "profile_table" => with_args(tool, args, |a: inspect::TableStatsArgs| inspect::profile_table(ctx, &a)),
        "detect_pii" => with_args(tool, args, |a: inspect::DetectPiiArgs| inspect::detect_pii(ctx, &a)),
        "preview_masked" => with_args(tool, args, |a: inspect::PreviewMaskedArgs| inspect::preview_masked(ctx, &a)),
        "materialize_sql" => with_args(tool, args, |a: MaterializeArgs| {
            let call = json!({"sql": a.sql, "table": a.table, "dialect": a.dialect});
            write(ctx, "materialize_sql", &a.sql, a.dialect.as_deref(), &a.table, a.mode, false, call)
        }),
        "create_view" => with_args(tool, args, |a: CreateViewArgs| {
            let call = json!({"sql": a.sql, "view": a.view, "dialect": a.dialect});
            write(ctx, "create_view", &a.sql, a.dialect.as_deref(), &a.view, a.mode, true, call)
        }),
        other => Envelope::error(ToolError::new(
            FailureKind::MalformedName,
            format!("unknown provider tool `{}`; provider tools: {}", crate::ir::echo_name(other), PROVIDER_TOOLS.join(", ")),
            Recovery::none().with_fuzzy_matches(crate::model::close_matches(other, PROVIDER_TOOLS)),
        )),
    }
}

pub fn list_schemas(project: &Project) -> Envelope {
    let catalog = match physical::catalog_of(project) {
        Ok(c) => c,
        Err(e) => return Envelope::error(e),
    };
    let mut schemas: std::collections::BTreeMap<&str, usize> = Default::default();
    for t in catalog.tables.values() {
        *schemas.entry(t.schema.as_str()).or_default() += 1;
    }
    let items: Vec<Json> = schemas.iter().map(|(s, n)| json!({"name": s, "table_count": n})).collect();
    Envelope::success(json!({"count": items.len(), "items": items})).with_follow_up_hints(&["list_tables"])
}

pub fn list_tables(project: &Project, args: &ListTablesArgs) -> Envelope {
    let catalog = match physical::catalog_of(project) {
        Ok(c) => c,
        Err(e) => return Envelope::error(e),
    };
    let wanted = args.schema.as_deref();
    if let Some(s) = wanted {
        let known: Vec<&str> = catalog.tables.values().map(|t| t.schema.as_str()).collect();
        if !known.contains(&s) {
            return Envelope::error(ToolError::new(
                FailureKind::UnknownName,
                format!("no schema `{}` in the catalog", crate::model::echo(s)),
                Recovery::call("list_schemas", json!({})).with_fuzzy_matches(crate::model::close_matches(s, known)),
            ));
        }
    }
    let items: Vec<Json> = catalog
        .tables
        .values()
        .filter(|t| wanted.is_none_or(|s| t.schema == s))
        .map(|t| {
            json!({
                "qualified_name": format!("{}.{}", t.schema, t.name),
                "column_count": t.columns.len(),
                "row_count": t.row_count,
                "description": t.comment,
            })
        })
        .collect();
    Envelope::success(json!({"count": items.len(), "items": items})).with_follow_up_hints(&["get_table_schema", "query_sql"])
}

/// The same call with `dry_run`, the recovery of a failure the statement
/// itself did not cause.
fn as_dry_run(args: &QuerySqlArgs) -> Json {
    json!({"sql": args.sql, "dialect": args.dialect, "dry_run": true})
}

fn refusal(r: guard::Refusal) -> Envelope {
    let recovery = Recovery::call("list_tables", json!({}));
    match r.code {
        "pii_blocked" => Envelope::refused(ToolError::refusal(RefusalKind::PiiBlocked, r.message, Recovery::call("list_metrics", json!({})), r.categories)),
        "policy_blocked" => Envelope::refused(ToolError::refusal(RefusalKind::PolicyBlocked, r.message, recovery, Vec::new())),
        _ => Envelope::error(ToolError::new(FailureKind::InvalidArgument, r.message, recovery)),
    }
}

/// A statement that passed every check, and what it reads.
struct Checked {
    statement: Statement,
    /// The statement rendered from its parse: what the caller is shown
    /// (what runs is `Viewed::sql`).
    sql: String,
    dialect: String,
    tables: Vec<String>,
    /// Masked columns of the tables read.
    masked: BTreeMap<String, Vec<columns::Masked>>,
}

impl Checked {
    /// The masked columns of the tables read, table by table.
    fn masks(&self) -> impl Iterator<Item = &columns::Masked> {
        self.tables.iter().flat_map(|t| self.masked.get(t).into_iter().flatten())
    }
}

/// A checked statement as it runs: each masked or time-restricted table
/// read through its view (`provider::views`).
struct Viewed {
    statement: Statement,
    sql: String,
    /// `policy_applied` of the answer: the masked columns of the tables read.
    policy_applied: Option<Json>,
    /// `time_range` of the answer: which tables it restricted, on which column.
    time_range: Option<Json>,
}


/// Reads `c`'s masked tables through their masks and, with `range`, each
/// table that has its column (default its time dimension) through the period.
fn viewed(ctx: &ProviderContext<'_>, c: &Checked, range: Option<&TimeRange>) -> Result<Viewed, Envelope> {
    let catalog = physical::catalog_of(ctx.project).map_err(Envelope::error)?;
    let dialect = crate::sql::Dialect::from_name(&c.dialect)
        .map_err(|m| Envelope::error(ToolError::new(FailureKind::InvalidArgument, m, Recovery::none())))?;
    let quote = |n: &str| sqlparser::ast::Ident::with_quote(dialect.quote, n).to_string();
    let salt = ctx.pager.mask_salt();
    let targets = match range {
        Some(r) => range_targets(ctx, catalog, c, r).map_err(Envelope::error)?,
        None => Vec::new(),
    };
    if ctx.project.rows.is_some() {
        // A table no entity binds (a view, a copy) may hold restricted rows
        // the filters cannot see: a caller under row filters reads the
        // model's tables only.
        let bound = |k: &String| ctx.project.model.entities.values().any(|e| e.table.to_string().eq_ignore_ascii_case(k));
        if let Some(other) = c.tables.iter().find(|k| !bound(k)) {
            return Err(Envelope::refused(ToolError::refusal(
                RefusalKind::AllowlistViolation,
                format!("`{other}` is not a table of the semantic model, and the caller's row filters can only restrict the model's tables; read the model's tables (list_entities names them)"),
                Recovery::call("list_entities", json!({})),
                Vec::new(),
            )
            .with_widening_hint("a role without row filters (access_policy.yaml) reads every table: ask an operator for one".to_string())));
        }
    }
    let mut views: BTreeMap<String, views::TableView> = BTreeMap::new();
    for key in &c.tables {
        let Some(info) = catalog.tables.get(key) else { continue };
        let masks = c.masked.get(key).map(Vec::as_slice).unwrap_or_default();
        let period = match (range, targets.iter().find(|(k, _)| k == key)) {
            (Some(r), Some((_, col))) => Some(inspect::range_condition(ctx.project, info, col, r, dialect).map_err(Envelope::error)?),
            _ => None,
        };
        // The caller's row filter (row-level security) holds with the period.
        let rows = row_table(ctx, key).and_then(|(r, t)| r.condition(t, dialect.quote));
        let filter = match (period, rows) {
            (Some(p), Some(r)) => Some(format!("({p}) AND ({r})")),
            (p, r) => p.or(r),
        };
        if masks.is_empty() && filter.is_none() {
            continue;
        }
        let items = info
            .columns
            .iter()
            .map(|col| match masks.iter().find(|m| m.column == col.name) {
                Some(m) => views::masked_item(m.method, &quote(&col.name), dialect.name, &salt),
                None => quote(&col.name),
            })
            .collect();
        views.insert(key.clone(), views::TableView { items, filter });
    }
    let time_range = range.map(|r| {
        let restricted: Vec<Json> = targets.iter().map(|(t, col)| json!({"table": t, "column": col})).collect();
        let whole: Vec<&String> = c.tables.iter().filter(|t| !targets.iter().any(|(k, _)| k == *t)).collect();
        json!({"start": r.start, "end": r.end, "restricted": restricted, "unrestricted": whole})
    });
    let masked: Vec<Json> = c
        .masks()
        .map(|m| json!({"column": m.shown, "method": m.method.as_str()}))
        .collect();
    let mut policy_applied = (!masked.is_empty()).then(|| json!({"policy_id": POLICY_ID, "masked": masked}));
    let restricted = c.tables.iter().filter_map(|k| row_table(ctx, k).map(|(_, t)| t));
    if let Some(applied) = ctx.project.rows.as_ref().and_then(|r| r.applied(restricted)) {
        let mut p = policy_applied.unwrap_or_else(|| json!({}));
        crate::json::set(&mut p, "row_filters", applied);
        policy_applied = Some(p);
    }
    let mut statement = c.statement.clone();
    views::read_through(&mut statement, catalog, &views, &c.dialect).map_err(refusal)?;
    let sql = statement.to_string();
    Ok(Viewed { statement, sql, policy_applied, time_range })
}

/// The caller's row restriction and the restricted table whose catalog key
/// is `key`, when that table is restricted.
fn row_table<'c>(ctx: &'c ProviderContext<'_>, key: &str) -> Option<(&'c crate::auth::row_filter::RowRestriction, &'c crate::model::TableRef)> {
    let r = ctx.project.rows.as_deref()?;
    r.table_by_key(key).map(|t| (r, t))
}

/// The tables a query_sql `time_range` restricts, with their column.
/// `column` as `table.column` (or `schema.table.column`) picks one table;
/// a bare `column`, every table read that has it; none, the one table read
/// with a time dimension. Never a guess: when several tables have a time
/// dimension (a fact and its customers' signup date, say), the caller names
/// one, since restricting a dimension table by its own date changes the
/// question.
fn range_targets(ctx: &ProviderContext<'_>, catalog: &crate::catalog::Catalog, c: &Checked, r: &TimeRange) -> Result<Vec<(String, String)>, ToolError> {
    let read = || c.tables.iter().filter_map(|k| catalog.tables.get(k).map(|t| (k, t)));
    let targets: Vec<(String, String)> = match r.column.as_deref().map(|s| s.rsplit_once('.')) {
        Some(Some((table, column))) => read()
            .filter(|(k, t)| k.eq_ignore_ascii_case(table) || t.name.eq_ignore_ascii_case(table))
            .map(|(k, _)| (k.clone(), column.to_string()))
            .collect(),
        Some(None) => read()
            .filter_map(|(k, t)| t.columns.iter().find(|x| Some(x.name.as_str()) == r.column.as_deref()).map(|x| (k.clone(), x.name.clone())))
            .collect(),
        None => {
            let with: Vec<(String, String)> = read()
                .filter_map(|(k, t)| match inspect::time_candidates(ctx.project, t).as_slice() {
                    [one] => Some((k.clone(), one.clone())),
                    _ => None,
                })
                .collect();
            if with.len() > 1 {
                let named: Vec<String> = with.iter().map(|(k, col)| format!("{k}.{col}")).collect();
                return Err(ToolError::new(
                    FailureKind::InvalidArgument,
                    format!("time_range could restrict several tables ({}); name the one the period is about in time_range.column as `table.column`", named.join(", ")),
                    Recovery::none().with_fuzzy_matches(named.iter().map(String::as_str)),
                ));
            }
            with
        }
    };
    if targets.is_empty() {
        let which = r.column.as_ref().map(|col| format!("a column `{}`", crate::model::echo(col))).unwrap_or_else(|| "a single time dimension (a date or timestamp column)".into());
        return Err(ToolError::new(
            FailureKind::InvalidArgument,
            format!("time_range applies to no table: none of {} has {which}; name one in time_range.column, or filter in the SQL", c.tables.join(", ")),
            Recovery::none(),
        ));
    }
    Ok(targets)
}

/// The dialect, guard and column checks query_sql and explain_sql share.
fn check_statement(ctx: &ProviderContext<'_>, tool: &str, sql: &str, asked: Option<&str>, call: Json) -> Result<Checked, Envelope> {
    let catalog = physical::catalog_of(ctx.project).map_err(Envelope::error)?;
    let source_dialect = ctx.engine.map(|e| e.dialect().name);
    let dialect = match (asked, source_dialect) {
        (Some(asked), Some(runs)) if asked != runs => {
            let mut fixed = call;
            if let Some(m) = fixed.as_object_mut() {
                m.insert("dialect".into(), json!(runs));
            }
            return Err(Envelope::error(ToolError::new(
                FailureKind::InvalidArgument,
                format!("the source runs {runs}, so {tool} takes {runs} SQL, not `{}` (dialects known: {})", crate::model::echo(asked), guard::DIALECTS.join(", ")),
                Recovery::call(tool, fixed),
            )));
        }
        (Some(asked), _) => asked.to_string(),
        (None, Some(runs)) => runs.to_string(),
        (None, None) => "duckdb".to_string(),
    };
    let statement = guard::check(sql, &dialect).map_err(refusal)?;
    let reads = columns::check(&statement, catalog, &ctx.project.model.pii_policy).map_err(refusal)?;
    let sql = statement.to_string();
    Ok(Checked { statement, sql, dialect, tables: reads.tables.into_iter().collect(), masked: reads.masked })
}

/// materialize_sql and create_view: the statement checked as query_sql
/// checks it (so no PII can be stored), the target inside the allowed
/// schema, then one transaction on a writer connection.
#[allow(clippy::too_many_arguments)]
fn write(ctx: &ProviderContext<'_>, tool: &str, sql: &str, dialect: Option<&str>, target: &str, mode: WriteMode, view: bool, call: Json) -> Envelope {
    let blocked = |message: String| Envelope::refused(ToolError::refusal(RefusalKind::PolicyBlocked, message, Recovery::call("query_sql", json!({"sql": sql, "dry_run": true})), Vec::new()));
    let Some(schema) = ctx.allow_writes else {
        return blocked(format!("writes are off: {tool} works only on a server started with `--allow-writes SCHEMA`, and then only into that schema"));
    };
    let name = match target.split('.').collect::<Vec<_>>().as_slice() {
        [name] => name.to_string(),
        [s, name] if *s == schema => name.to_string(),
        [s, _] => return blocked(format!("writes go only into schema `{schema}`, not `{}`", crate::model::echo(s))),
        _ => return blocked(format!("`{}` is not `name` or `{schema}.name`", crate::model::echo(target))),
    };
    if !crate::model::is_identifier(&name) || name.len() > 63 {
        return Envelope::error(ToolError::new(
            FailureKind::InvalidArgument,
            format!("`{}` is not a plain name (letters, digits and _, starting with a letter or _, at most 63 characters)", crate::model::echo(&name)),
            Recovery::none(),
        ));
    }
    if view && mode == WriteMode::Append {
        return Envelope::error(ToolError::new(FailureKind::InvalidArgument, "a view cannot be appended to; use mode create or replace", Recovery::none()));
    }
    let c = match check_statement(ctx, tool, sql, dialect, call) {
        Ok(c) => c,
        Err(e) => return e,
    };
    // What is stored is what query_sql would show: masked columns masked.
    let v = match viewed(ctx, &c, None) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let hashed = c.masks().find(|m| m.method == crate::model::MaskMethod::Hash);
    if let (true, Some(m)) = (view, hashed) {
        return blocked(format!(
            "{} is masked by hash, whose salt is this server's secret; a view reading its table would store the salt in its definition, where whoever reads the view's schema could read it. Store the rows with materialize_sql instead",
            m.shown
        ));
    }
    let Some(engine) = ctx.engine else {
        return Envelope::error(ToolError::new(FailureKind::MissingCredential, "No source database is configured, so there is nothing to write into.", Recovery::none()));
    };
    let d = engine.dialect();
    let quote = |n: &str| sqlparser::ast::Ident::with_quote(d.quote, n).to_string();
    let qualified = format!("{}.{}", quote(schema), quote(&name));
    let kind = if view { "VIEW" } else { "TABLE" };
    let mut statements = vec![format!("CREATE SCHEMA IF NOT EXISTS {}", quote(schema))];
    match mode {
        WriteMode::Create => statements.push(format!("CREATE {kind} {qualified} AS {}", v.sql)),
        WriteMode::Replace => {
            statements.push(format!("DROP {kind} IF EXISTS {qualified}"));
            statements.push(format!("CREATE {kind} {qualified} AS {}", v.sql));
        }
        WriteMode::Append => statements.push(format!("INSERT INTO {qualified} {}", v.sql)),
    }
    if let Err(e) = engine.write(&statements, ctx.limits.timeout, &ctx.cancel) {
        let narrow = "write fewer rows (filters, aggregation), or check the statement with query_sql dry_run";
        return Envelope::error(engine_failure(e, narrow, Recovery::call("query_sql", json!({"sql": sql, "dry_run": true}))));
    }
    let mode_name = match mode {
        WriteMode::Create => "create",
        WriteMode::Replace => "replace",
        WriteMode::Append => "append",
    };
    let mut data = json!({
        "qualified_name": format!("{schema}.{name}"),
        "kind": kind.to_lowercase(),
        "mode": mode_name,
        "sql": c.sql,
        "tables_read": c.tables,
    });
    Shown { dialect: &c.dialect, tables: &c.tables, sql: &c.sql, viewed: &v }.annotate(&mut data);
    Envelope::success(data).with_follow_up_hints(&["query_sql"])
}

pub fn explain_sql(ctx: &ProviderContext<'_>, args: &ExplainSqlArgs) -> Envelope {
    let call = json!({"sql": args.sql, "dialect": args.dialect});
    let c = match check_statement(ctx, "explain_sql", &args.sql, args.dialect.as_deref(), call) {
        Ok(c) => c,
        Err(e) => return e,
    };
    let Some(engine) = ctx.engine else {
        return Envelope::error(ToolError::new(
            FailureKind::MissingCredential,
            "No source database is configured, so there is no engine to plan the statement; query_sql with dry_run checks it.",
            Recovery::call("query_sql", json!({"sql": args.sql, "dry_run": true})),
        ));
    };
    // The statement as written, not through its views: a plan shows the
    // views' expressions, and the hash mask's salt must not be shown.
    let compiled = CompiledSql { sql: format!("EXPLAIN {}", c.sql), params: Vec::new(), dialect: engine.dialect().name };
    let result = match engine.execute(&compiled, Limits { max_rows: 1000, timeout: ctx.limits.timeout }, &ctx.cancel) {
        Ok(r) => r,
        Err(e) => {
            let recovery = Recovery::call("query_sql", json!({"sql": args.sql, "dry_run": true}));
            return Envelope::error(engine_failure(e, "check the statement with query_sql dry_run", recovery));
        }
    };
    // Every engine answers EXPLAIN with rows of text; the plan is their lines.
    let plan: Vec<String> = result
        .rows
        .iter()
        .flat_map(|row| row.iter().filter_map(Json::as_str).flat_map(str::lines).map(str::to_string).collect::<Vec<_>>())
        .collect();
    Envelope::success(json!({"sql": c.sql, "dialect": c.dialect, "tables_read": c.tables, "plan": plan}))
        .with_follow_up_hints(&["query_sql"])
}

pub fn query_sql(ctx: &ProviderContext<'_>, args: &QuerySqlArgs) -> Envelope {
    let call = serde_json::to_value(args).unwrap_or(Json::Null);
    let checked = match check_statement(ctx, "query_sql", &args.sql, args.dialect.as_deref(), call) {
        Ok(c) => c,
        Err(e) => return e,
    };
    let viewed = match viewed(ctx, &checked, args.time_range.as_ref()) {
        Ok(v) => v,
        Err(e) => return e,
    };
    let shown = Shown { dialect: &checked.dialect, tables: &checked.tables, sql: &checked.sql, viewed: &viewed };
    if args.dry_run {
        let mut data = json!({"sql": checked.sql, "dialect": checked.dialect, "tables_read": checked.tables, "valid": true});
        shown.annotate(&mut data);
        return Envelope::success(data).with_follow_up_hints(&["query_sql"]);
    }
    let Some(engine) = ctx.engine else {
        return Envelope::error(ToolError::new(
            FailureKind::MissingCredential,
            "No source database is configured (schemabrain.yaml `source`, or `serve --source`), so query_sql can only check: pass dry_run=true.",
            Recovery::call("query_sql", as_dry_run(args)),
        ));
    };
    // The token binds what runs: the statement with its masks and period.
    let statement_id = Pager::statement_id(&checked.dialect, &viewed.sql);
    let offset = match args.page_token.as_deref() {
        None => 0,
        Some(t) => match ctx.pager.open(t, &statement_id, ctx.client) {
            Ok(o) => o,
            Err(e) => return token_error(e, args),
        },
    };
    let page = args.page_size.map(|n| n as usize).unwrap_or(DEFAULT_PAGE_ROWS).clamp(1, MAX_PAGE_ROWS.min(ctx.limits.max_rows.max(1)));
    let run = |sql: String, rows: usize| {
        let compiled = CompiledSql { sql, params: Vec::new(), dialect: engine.dialect().name };
        engine.execute(&compiled, Limits { max_rows: rows, timeout: ctx.limits.timeout }, &ctx.cancel)
    };
    // The output width, for the positional tie-breakers.
    let width = match run(format!("SELECT * FROM ({}) AS sb_page LIMIT 0", viewed.sql), 1) {
        Ok(r) => r.columns.len(),
        Err(e) => return engine_error(e, args),
    };
    let (ordered, unordered) = paged_sql(&viewed.statement, &viewed.sql, width, page + 1, offset);
    let (result, stable) = match run(ordered, page + 1) {
        Ok(r) => (r, true),
        // Columns the engine cannot sort (Postgres json, say): the engine's order.
        Err(EngineError::Query(_)) => match run(unordered, page + 1) {
            Ok(r) => (r, false),
            Err(e) => return engine_error(e, args),
        },
        Err(e) => return engine_error(e, args),
    };
    answer(ctx, result, page, offset, stable, &statement_id, &shown)
}

/// What an answer says about the statement besides its rows.
struct Shown<'a> {
    dialect: &'a str,
    tables: &'a [String],
    /// The checked statement as the caller wrote it (before views).
    sql: &'a str,
    viewed: &'a Viewed,
}

impl Shown<'_> {
    /// Adds `policy_applied` and `time_range` when there are any.
    fn annotate(&self, data: &mut Json) {
        if let Some(p) = &self.viewed.policy_applied {
            crate::json::set(data, "policy_applied", p.clone());
        }
        if let Some(t) = &self.viewed.time_range {
            crate::json::set(data, "time_range", t.clone());
        }
    }
}

fn answer(ctx: &ProviderContext<'_>, result: ResultSet, page: usize, offset: u64, stable: bool, statement_id: &str, shown: &Shown<'_>) -> Envelope {
    // The engine was asked for one row past the page: its presence is `has_more`.
    let fetched = result.rows.len();
    let mut rows = Vec::new();
    let mut bytes = 0usize;
    let mut cut_by_bytes = false;
    for row in result.rows.into_iter().take(page) {
        let size = serde_json::to_string(&row).map(|s| s.len()).unwrap_or(0);
        if !rows.is_empty() && bytes + size > MAX_PAGE_BYTES {
            cut_by_bytes = true;
            break;
        }
        bytes += size;
        rows.push(row);
    }
    let delivered = rows.len();
    let has_more = cut_by_bytes || fetched > page;
    let next = offset + delivered as u64;
    let columns: Vec<Json> = result.columns.iter().map(|c| json!({"name": c.name, "type": c.data_type})).collect();
    let mut data = json!({
        "columns": columns,
        "rows": rows,
        "row_count": delivered,
        "offset": offset,
        "has_more": has_more,
        "dialect": shown.dialect,
        "tables_read": shown.tables,
        "sql": shown.sql,
        "order": if stable { "stable" } else { "engine" },
    });
    shown.annotate(&mut data);
    if has_more {
        if let Some(m) = data.as_object_mut() {
            m.insert("page_token".into(), json!(ctx.pager.issue(statement_id, ctx.client, next)));
            m.insert("page_bytes_capped".into(), json!(cut_by_bytes));
        }
    }
    let env = if delivered == 0 { Envelope::empty(Some(data)) } else { Envelope::success(data) };
    env.with_follow_up_hints(if has_more { &["query_sql"] } else { &["list_metrics"] })
}

/// A Substrait plan, run as the SQL it stands for: DataFusion's consumer
/// reads it over empty tables shaped like the catalog and its unparser
/// writes it in the source's dialect (`engine::substrait`); that SQL then
/// goes through query_sql whole (guard, columns and PII, masking, time
/// range, paging), so a plan is no side door either.
pub fn query_plan(ctx: &ProviderContext<'_>, args: &QueryPlanArgs) -> Envelope {
    let catalog = match physical::catalog_of(ctx.project) {
        Ok(c) => c,
        Err(e) => return Envelope::error(e),
    };
    let dialect = ctx.engine.map(|e| e.dialect().name).unwrap_or("duckdb");
    let sql = match crate::engine::substrait::plan_to_sql(&args.substrait, catalog, dialect) {
        Ok(sql) => sql,
        Err(e) => {
            let recovery = Recovery::call("list_tables", json!({}));
            return Envelope::error(ToolError::new(FailureKind::InvalidArgument, e.to_string(), recovery));
        }
    };
    let as_sql = QuerySqlArgs { sql, dialect: None, page_size: args.page_size, page_token: args.page_token.clone(), time_range: args.time_range.clone(), dry_run: args.dry_run };
    query_sql(ctx, &as_sql).map_data_object(|data| {
        data.insert("from".into(), json!("substrait"));
    })
}

/// The statement with this page's LIMIT/OFFSET, ordered by its own ORDER BY
/// plus every output position as tie-breaker (by every position without
/// one); and the same page in the engine's order, for a result it cannot sort.
fn paged_sql(statement: &Statement, checked: &str, width: usize, rows: usize, offset: u64) -> (String, String) {
    let positions: Vec<String> = (1..=width.max(1)).map(|i| i.to_string()).collect();
    let positions = positions.join(", ");
    let unordered = format!("SELECT * FROM ({checked}) AS sb_page LIMIT {rows} OFFSET {offset}");
    let own_order = match statement {
        Statement::Query(q)
            if q.limit_clause.is_none() && q.fetch.is_none() && q.settings.is_none() && q.format_clause.is_none() && q.for_clause.is_none() =>
        {
            q.order_by.as_ref().filter(|o| o.interpolate.is_none() && matches!(o.kind, OrderByKind::Expressions(ref e) if !e.is_empty()))
        }
        _ => None,
    };
    let ordered = match own_order {
        // The rendered statement ends with its ORDER BY list.
        Some(_) => format!("{checked}, {positions} LIMIT {rows} OFFSET {offset}"),
        None => format!("SELECT * FROM ({checked}) AS sb_page ORDER BY {positions} LIMIT {rows} OFFSET {offset}"),
    };
    (ordered, unordered)
}

fn token_error(e: TokenError, args: &QuerySqlArgs) -> Envelope {
    let mut fresh = serde_json::to_value(args).unwrap_or(Json::Null);
    if let Some(m) = fresh.as_object_mut() {
        m.remove("page_token");
    }
    Envelope::error(ToolError::new(FailureKind::InvalidArgument, e.message(), Recovery::call("query_sql", fresh)))
}

fn engine_error(e: EngineError, args: &QuerySqlArgs) -> Envelope {
    let narrow = "add filters or aggregate more, or check the statement with dry_run";
    Envelope::error(engine_failure(e, narrow, Recovery::call("query_sql", as_dry_run(args))))
}
