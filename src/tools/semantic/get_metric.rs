//! `get_metric`: resolve, plan, compile and (unless `dry_run`) execute one
//! metric, answering in one envelope. `schemabrain compile` and `query` are
//! this same function.

use serde_json::{json, Value as Json};

use super::args::{distinct, distinct_filters, FilterArgs, GetMetricArgs};
use super::recovery::issue_envelope;
use crate::tools::contract::args::engine_failure;
use crate::tools::contract::paging::Pager;
use crate::tools::contract::{shape, trust};
use crate::engine::{Cancel, Engine, EngineError, Limits, ResultSet};
use crate::envelope::{DegradationReason, Envelope, FailureKind, Recovery, ToolError};
use crate::ir::{self, FilterArg, FilterValue, MetricRequest, OrderArg};
use crate::model::{Aggregation, Literal, MeasureOperand};
use crate::plan::{Degradation, RequestPlan};
use crate::project::Project;
use crate::sql::{self, CompiledSql, Dialect};

/// Where (and whether) to run the compiled SQL.
#[derive(Clone)]
pub enum Execution<'e> {
    /// Compile only (`compile`, `dry_run`).
    DryRun,
    /// Compile, then have DuckDB prepare the request's DuckDB SQL and
    /// DataFusion plan its DataFusion SQL, each against empty tables shaped
    /// like the model (`compile --validate`): names and types are bound, no
    /// data is read, no warehouse is needed.
    Validate,
    /// Run on `engine`; `cancel` interrupts the query in the engine;
    /// `pages` makes and checks page tokens (a session's, for its client).
    Run { engine: &'e dyn Engine, limits: Limits, cancel: Cancel, pages: Option<Pages<'e>> },
}

/// What paging needs: the server's token key and the client it pages for.
#[derive(Clone, Copy)]
pub struct Pages<'e> {
    pub pager: &'e Pager,
    pub client: &'e str,
}

impl<'e> Execution<'e> {
    /// Runs on `engine` with nothing to cancel it but its timeout.
    pub fn run(engine: &'e dyn Engine, limits: Limits) -> Self {
        Execution::Run { engine, limits, cancel: Cancel::never(), pages: None }
    }
}

pub fn get_metric(project: &Project, args: &GetMetricArgs, execution: Execution<'_>) -> Envelope {
    // What runs is written for the engine it runs on: the project's
    // `dialect` setting is for previews without one (DuckDB SQL sent to
    // Postgres could fail, or worse, mean something else there).
    let dialect_name = match &execution {
        Execution::Run { engine, .. } => args.dialect.clone().unwrap_or_else(|| engine.dialect().name.into()),
        _ => args.dialect.clone().or_else(|| project.model.settings.dialect.clone()).unwrap_or_else(|| Dialect::duckdb().name.into()),
    };
    let dialect = match Dialect::from_name(&dialect_name) {
        Ok(d) => d,
        Err(message) => {
            // The unique close match is a correction (same rows, the SQL in
            // the dialect meant); otherwise DuckDB's is a suggestion.
            let near = crate::model::close_matches(&dialect_name, Dialect::supported());
            let mut fixed = args.clone();
            let recovery = match near.as_slice() {
                [one] => {
                    fixed.dialect = Some(one.clone());
                    Recovery::correction("get_metric", fixed.to_json())
                }
                _ => {
                    fixed.dialect = Some("duckdb".into());
                    Recovery::call("get_metric", fixed.to_json())
                }
            }
            .with_fuzzy_matches(near);
            return Envelope::error(ToolError::new(FailureKind::MalformedName, message, recovery));
        }
    };
    if args.name.is_some() && !args.names.is_empty() {
        let mut fixed = args.clone();
        fixed.names.insert(0, fixed.name.take().unwrap_or_default());
        return Envelope::error(ToolError::new(
            FailureKind::MalformedName,
            "give `name` for one metric or `names` for several, not both",
            Recovery::correction("get_metric", fixed.to_json()),
        ));
    }
    let request = match request_of(&project.model, args) {
        Ok(r) => r,
        Err(issue) => return issue_envelope(project, args, &issue),
    };
    let plan = match crate::plan(&project.model, &request) {
        Ok(p) => p,
        Err(issue) => return issue_envelope(project, args, &issue),
    };
    // The caller's row filters stand on every table the SQL reads.
    let rows = project.rows.as_deref().map(|r| r as &dyn sql::TableFilters);
    let lowered = match sql::lower_filtered(&plan, dialect, rows) {
        Ok(l) => l,
        Err(sql::Unsupported { model_expression: Some(column), dialect, feature }) => {
            // The model's own SQL is at fault: no dialect of the request fixes it.
            return Envelope::error(ToolError::new(
                FailureKind::InternalError,
                format!(
                    "the model's computed column `{column}` cannot be read as {dialect} SQL ({feature}); its definition must be fixed (`schemabrain check` names the file); meanwhile ask without that column"
                ),
                Recovery::call("describe_entity", json!({"name": column.entity})),
            ));
        }
        Err(unsupported) => {
            // The same request in DuckDB's dialect, which has every exact aggregate.
            let mut fixed = args.clone();
            fixed.dialect = Some("duckdb".into());
            fixed.dry_run = true;
            return Envelope::error(ToolError::new(
                FailureKind::MalformedName,
                format!("{unsupported}, so this request cannot be written for it without changing its meaning; compile it for another dialect"),
                Recovery::call("get_metric", fixed.to_json()),
            ));
        }
    };
    let compiled = lowered.compiled();
    let mut limit_cut = false;
    let mut paged: Option<Json> = None;
    let mut validation: Option<Json> = None;
    let mut notes: Vec<String> = plan.notes().into_iter().map(super::notes::sentence).collect();
    let result = match execution {
        Execution::DryRun | Execution::Validate => {
            if project.catalog.is_none() {
                notes.push("Compiled offline without a catalog snapshot: column types are the model's declared ones.".into());
            }
            if matches!(execution, Execution::Validate) {
                match validate(project, &plan, &compiled) {
                    Ok(v) => validation = Some(v),
                    Err(e) => return Envelope::error(e),
                }
            }
            None
        }
        Execution::Run { engine, limits, cancel, pages } => {
            // The engine runs the query with one row more than asked, to learn
            // whether the limit cut groups off; that extra row is never returned.
            let limit = plan.limit as usize;
            let probe_sql = lowered.with_limit(plan.limit.saturating_add(1));
            // The probe's extra row must not trip the row cap by itself.
            let probe_limits = Limits { max_rows: limits.max_rows.max(limit + 1), ..limits };
            match engine.execute(&probe_sql, probe_limits, &cancel) {
                Ok(mut rs) => {
                    if rs.rows.len() > limit {
                        rs.rows.truncate(limit);
                        limit_cut = true;
                    }
                    if rs.rows.len() > limits.max_rows {
                        rs.rows.truncate(limits.max_rows);
                        rs.truncated = true;
                    }
                    if args.page_size.is_some() || args.page_token.is_some() {
                        match page(args, &compiled, pages, rs) {
                            Ok((rs, p)) => {
                                paged = Some(p);
                                Some(rs)
                            }
                            Err(e) => return e,
                        }
                    } else {
                        Some(rs)
                    }
                }
                Err(e) => return Envelope::error(engine_error(args, e)),
            }
        }
    };
    let unordered_cut = limit_cut && request.order_by.is_empty();
    if limit_cut {
        notes.push(format!(
            "The limit of {} cut off further rows{}.",
            plan.limit,
            if unordered_cut { "; without order_by they are cut in key order, which is not a ranking: pass order_by to say what the top rows are" } else { "" }
        ));
    }
    let mut env_data_extra = Vec::new();
    if let Some(applied) = project.rows.as_ref().and_then(|r| r.applied(sql::tables_read(&plan))) {
        env_data_extra.push(("policy_applied", json!({"row_filters": applied})));
    }
    if let Some(v) = validation {
        env_data_extra.push(("validation", v));
    }
    if let Some(p) = paged {
        env_data_extra.push(("page", p));
    }
    answer(project, &plan, &compiled, result, notes, limit_cut, unordered_cut, env_data_extra)
}

/// The plan of a get_metric call, for `compile --plan` and the plan
/// snapshots: the request's problems come back as the envelope a call
/// would get.
pub fn request_plan(project: &Project, args: &GetMetricArgs) -> Result<RequestPlan, Envelope> {
    let request = request_of(&project.model, args).map_err(|issue| issue_envelope(project, args, &issue))?;
    crate::plan(&project.model, &request).map_err(|issue| issue_envelope(project, args, &issue))
}

/// Two engines check the request against empty tables built from the
/// model's columns, each in its own dialect: DuckDB prepares the DuckDB SQL
/// (the SQL asked for when it is DuckDB's or Postgres's, which DuckDB reads),
/// DataFusion plans the DataFusion SQL (and runs it on no rows, which costs
/// nothing and reaches the checks aggregates make when they start). Two
/// engines, because a definition one engine tolerates the other may not. A
/// dialect that cannot write the request at all is reported as not checked
/// there; a rejection by either engine is an error naming the engine.
fn validate(project: &Project, plan: &RequestPlan, compiled: &CompiledSql) -> Result<Json, ToolError> {
    let render = |name: &str| -> Result<CompiledSql, String> {
        if compiled.dialect == name {
            return Ok(compiled.clone());
        }
        let dialect = Dialect::from_name(name).map_err(|e| e.to_string())?;
        sql::emit_filtered(plan, dialect, project.rows.as_deref().map(|r| r as &dyn sql::TableFilters)).map_err(|u| u.to_string())
    };
    let mut checks = Vec::new();
    let mut rejected = Vec::new();
    let duck_sql = if matches!(compiled.dialect, "duckdb" | "postgres") { Ok(compiled.clone()) } else { render("duckdb") };
    match duck_sql {
        Ok(sql) => {
            let engine = crate::engine::DuckDbEngine::empty_like(&project.model)
                .map_err(|e| ToolError::query_failed(format!("could not build DuckDB's validation tables: {e}")))?;
            match engine.validate(&sql.sql) {
                Ok(()) => checks.push(json!({"engine": "duckdb", "dialect": sql.dialect, "ok": true})),
                Err(e) => rejected.push(format!("DuckDB rejects the {} SQL: {e}", sql.dialect)),
            }
        }
        Err(reason) => checks.push(json!({"engine": "duckdb", "dialect": "duckdb", "ok": null, "reason": reason})),
    }
    match render("datafusion") {
        Ok(sql) => match crate::engine::DataFusionEngine::empty_like(&project.model) {
            Ok(engine) => match engine.validate(&sql) {
                Ok(()) => checks.push(json!({"engine": "datafusion", "dialect": "datafusion", "ok": true})),
                Err(e) => rejected.push(format!("DataFusion rejects the datafusion SQL: {e}")),
            },
            // A column type DataFusion has no Arrow type for: that engine
            // cannot judge this model, which is not the model's fault.
            Err(e) => checks.push(json!({"engine": "datafusion", "dialect": "datafusion", "ok": null, "reason": e.to_string()})),
        },
        Err(reason) => checks.push(json!({"engine": "datafusion", "dialect": "datafusion", "ok": null, "reason": reason})),
    }
    if !rejected.is_empty() {
        return Err(ToolError::query_failed(format!(
            "{}; so the definitions disagree with the tables they name",
            rejected.join("; ")
        )));
    }
    let checked: Vec<&str> = checks.iter().filter(|c| c["ok"] == true).filter_map(|c| c["dialect"].as_str()).collect();
    let ok = if checked.is_empty() { Json::Null } else { Json::Bool(true) };
    Ok(json!({"ok": ok, "sql_checked": checked.contains(&compiled.dialect), "engines": checks}))
}

/// The plan `args` would get, or the issue it fails with (a recovery checks
/// its correction with it).
pub(super) fn check_request(project: &Project, args: &GetMetricArgs) -> Result<RequestPlan, ir::Issue> {
    let request = request_of(&project.model, args)?;
    crate::plan(&project.model, &request)
}

/// The tool's JSON arguments as the resolver's request. Only value shapes
/// can fail here (a filter value that is an object, say). Identical
/// filters, group-bys and where strings are one each, before any limit
/// counts them.
fn request_of(model: &crate::model::SemanticModel, args: &GetMetricArgs) -> Result<MetricRequest, ir::Issue> {
    let args = &GetMetricArgs {
        filters: distinct_filters(&args.filters),
        group_by: distinct(&args.group_by),
        where_strings: distinct(&args.where_strings),
        ..args.clone()
    };
    let filters = args.filters.iter().map(filter_of).collect::<Result<Vec<_>, _>>()?;
    if let Some(name) = &args.query {
        return saved_request(model, name, args, filters);
    }
    Ok(MetricRequest {
        names: args.metric_names(),
        group_by: args.group_by.clone(),
        filters,
        time_grain: args.time_grain.clone(),
        time_dimension: args.time_dimension.clone(),
        order_by: order_of(args),
        limit: args.limit,
        via: args.via.clone(),
        where_strings: args.where_strings.clone(),
        any_of: Vec::new(),
    })
}

fn order_of(args: &GetMetricArgs) -> Vec<OrderArg> {
    args.order_by.iter().map(|o| OrderArg { column: o.column.clone(), direction: o.direction.clone() }).collect()
}

/// A saved query as the request, narrowed by the call's filters, where
/// strings, order and limit; the call may not also name metrics, group-bys
/// or a grain (the saved query fixes them).
fn saved_request(model: &crate::model::SemanticModel, name: &str, args: &GetMetricArgs, mut filters: Vec<FilterArg>) -> Result<MetricRequest, ir::Issue> {
    let Some(q) = model.queries.get(name) else {
        let known: Vec<&str> = model.queries.keys().map(String::as_str).collect();
        let near = crate::model::close_matches(name, known.iter().copied());
        let hint = match (near.first(), known.is_empty()) {
            (Some(n), _) => format!("; did you mean `{n}`?"),
            (None, true) => "; the project has none".to_string(),
            (None, false) => format!("; saved queries: {}", known.join(", ")),
        };
        return Err(ir::Issue::Malformed { argument: "query".into(), message: format!("no saved query `{}`{hint}", crate::model::echo(name)) });
    };
    if args.name.is_some() || !args.names.is_empty() || !args.group_by.is_empty() || args.time_grain.is_some() || args.time_dimension.is_some() {
        return Err(ir::Issue::Malformed {
            argument: "query".into(),
            message: format!("saved query `{name}` fixes its metrics, group-bys and grain; add only filters, where, order_by or limit"),
        });
    }
    let mut all = q
        .filters
        .iter()
        .map(|f| {
            let value = match (f.op.arity(), f.values.as_slice()) {
                (crate::model::OpArity::None, _) => FilterValue::None,
                (crate::model::OpArity::List, v) => FilterValue::List(v.to_vec()),
                (crate::model::OpArity::Scalar, [v, ..]) => FilterValue::Scalar(v.clone()),
                (crate::model::OpArity::Scalar, []) => FilterValue::None,
            };
            FilterArg { column: f.column.to_string(), op: f.op.as_str().to_string(), value, metric: None }
        })
        .collect::<Vec<_>>();
    all.append(&mut filters);
    // The saved order as written (`-revenue`): the resolver reads MetricFlow's `-` as descending.
    let order_by = if args.order_by.is_empty() {
        q.order_by.iter().map(|o| OrderArg { column: o.clone(), direction: None }).collect()
    } else {
        order_of(args)
    };
    Ok(MetricRequest {
        names: q.metrics.clone(),
        group_by: q.group_by.clone(),
        filters: all,
        time_grain: q.time_grain.clone(),
        time_dimension: None,
        order_by,
        limit: args.limit.or(q.limit),
        via: args.via.clone(),
        where_strings: q.where_strings.iter().chain(&args.where_strings).cloned().collect(),
        any_of: Vec::new(),
    })
}

fn filter_of(f: &FilterArgs) -> Result<FilterArg, ir::Issue> {
    let bad = |what: &str| ir::Issue::Malformed {
        argument: "filters".into(),
        message: format!("filter on `{}`: {what}", f.column),
    };
    let literal = |v: &Json| -> Result<Literal, ir::Issue> {
        match v {
            Json::Bool(b) => Ok(Literal::Bool(*b)),
            Json::Number(n) => Ok(n.as_i64().map(Literal::Int).unwrap_or_else(|| Literal::Float(n.as_f64().unwrap_or(f64::NAN)))),
            Json::String(s) => Ok(Literal::Text(s.clone())),
            _ => Err(bad("values must be strings, numbers or booleans")),
        }
    };
    let value = match &f.value {
        None | Some(Json::Null) => FilterValue::None,
        Some(Json::Array(items)) => FilterValue::List(items.iter().map(literal).collect::<Result<_, _>>()?),
        Some(v) => FilterValue::Scalar(literal(v)?),
    };
    Ok(FilterArg { column: f.column.clone(), op: f.op.clone(), value, metric: f.metric.clone() })
}

/// Rows per page at most.
const MAX_PAGE_ROWS: usize = 1000;

/// One page of the answer, and `data.page`: offset, has_more, the token to
/// continue. The answer's order is total (the plan appends every output key
/// as a tie-break), so re-running the request and slicing it returns every
/// row exactly once over the pages.
fn page(args: &GetMetricArgs, compiled: &CompiledSql, pages: Option<Pages<'_>>, mut rs: ResultSet) -> Result<(ResultSet, Json), Envelope> {
    let mut fresh = args.clone();
    fresh.page_token = None;
    let Some(p) = pages else {
        return Err(Envelope::error(ToolError::new(
            FailureKind::InvalidArgument,
            "paging needs a server session (schemabrain serve, or tools::Session): call without page_size and page_token here",
            Recovery::correction("get_metric", (GetMetricArgs { page_size: None, ..fresh }).to_json()),
        )));
    };
    let params: Vec<Json> = compiled.params.iter().map(ir::Value::to_json).collect();
    let statement = Pager::statement_id(compiled.dialect, &format!("{}\n{}", compiled.sql, Json::Array(params)));
    let offset = match &args.page_token {
        None => 0,
        Some(t) => match p.pager.open(t, &statement, p.client) {
            Ok(o) => o as usize,
            Err(e) => return Err(Envelope::error(ToolError::new(FailureKind::InvalidArgument, e.message(), Recovery::correction("get_metric", fresh.to_json())))),
        },
    };
    let size = args.page_size.map(|n| n as usize).unwrap_or(shape::CONCISE_ROWS).clamp(1, MAX_PAGE_ROWS);
    let total = rs.rows.len();
    let end = offset.saturating_add(size).min(total);
    rs.rows = rs.rows.drain(offset.min(total)..end).collect();
    let has_more = end < total;
    let mut info = json!({"offset": offset, "page_size": size, "has_more": has_more});
    if has_more {
        crate::json::set(&mut info, "page_token", json!(p.pager.issue(&statement, p.client, end as u64)));
    }
    Ok((rs, info))
}

fn engine_error(args: &GetMetricArgs, e: EngineError) -> ToolError {
    let mut dry = args.clone();
    dry.dry_run = true;
    let narrow = "narrow the request (filters, a coarser grain, a smaller limit) or inspect the SQL with dry_run";
    engine_failure(e, narrow, Recovery::call("get_metric", dry.to_json()))
}

#[allow(clippy::too_many_arguments)]
fn answer(
    project: &Project,
    plan: &RequestPlan,
    compiled: &CompiledSql,
    result: Option<ResultSet>,
    notes: Vec<String>,
    limit_cut: bool,
    unordered_cut: bool,
    extra: Vec<(&str, Json)>,
) -> Envelope {
    let columns = output_columns(project, plan, result.as_ref());
    let time_resolution = plan.components.first().and_then(|c| c.time_resolution).map(|t| t.as_str());
    let joins = plan.components.iter().flat_map(|p| p.joins.iter().map(|j| {
        let valid_between = j.versions.as_ref().map_or(Json::Null, |v| {
            crate::json::object([("from", v.from.clone().into()), ("to", v.to.clone().into()), ("time", format!("{}.{}", j.from_alias, v.time).into())])
        });
        crate::json::object([
            ("metric", p.metric.clone().into()),
            ("name", j.join.clone().into()),
            ("from", j.from_alias.clone().into()),
            ("to", j.to.alias.clone().into()),
            ("cardinality", j.cardinality.as_str().into()),
            ("fans_out", j.fans_out().into()),
            ("valid_between", valid_between),
        ])
    }));
    // Built by moving values in: `json!` would serialise every list again.
    let mut data = crate::json::object([
        ("columns", Json::Array(columns)),
        ("sql", compiled.sql.clone().into()),
        ("dialect", compiled.dialect.into()),
        ("params", Json::Array(compiled.params.iter().map(ir::Value::to_json).collect())),
        ("joins", Json::Array(joins.collect())),
        ("time_dimension_resolution", time_resolution.into()),
        ("notes", Json::Array(notes.into_iter().map(Json::String).collect())),
    ]);
    if let Json::Object(m) = &mut data {
        for (k, v) in extra {
            m.insert(k.to_string(), v);
        }
    }
    let rows_empty = result.as_ref().is_some_and(|r| r.rows.is_empty());
    let truncated = result.as_ref().is_some_and(|r| r.truncated);
    if let (Some(rs), Json::Object(m)) = (result, &mut data) {
        m.insert("row_count".into(), rs.rows.len().into());
        // More rows exist than were returned: cut by the row cap or by the limit.
        m.insert("truncated".into(), (rs.truncated || limit_cut).into());
        m.insert("rows".into(), Json::Array(rs.rows.into_iter().map(Json::Array).collect()));
    }
    let degradation = plan
        .degradations()
        .map(|d| match d {
            Degradation::FanOut { .. } => DegradationReason::FanOutJoin,
            Degradation::TimeDimensionUnavailable => DegradationReason::TimeDimensionUnavailable,
        })
        .next()
        .or(unordered_cut.then_some(DegradationReason::MissingOrderByWithLimit));
    // Trust from the plan: the weakest definition used, lower when degraded.
    let used = trust::definitions_used(&project.model, plan);
    let confidence = trust::confidence(&used, degradation.is_some());
    if let Json::Object(m) = &mut data {
        m.insert("definitions".into(), Json::Array(used.iter().map(trust::Used::to_json).collect()));
    }
    let envelope = match degradation {
        Some(reason) => Envelope::degraded(data, reason),
        None if rows_empty => Envelope::empty(Some(data)),
        None if truncated => Envelope::partial(data),
        None => Envelope::success(data),
    }
    .with_confidence(confidence);
    let envelope = match trust::provenance(&used) {
        Some(p) => envelope.with_provenance(p),
        None => envelope,
    };
    envelope.with_follow_up_hints(&["describe_entity", "list_metrics"])
}

/// `data.columns`: time bucket, group-bys, metric, each with a type and a role.
/// Types come from the result when there is one, else from the model.
fn output_columns(project: &Project, plan: &RequestPlan, result: Option<&ResultSet>) -> Vec<Json> {
    let model = &project.model;
    let declared = |c: &crate::model::ColumnRef| {
        model.entity(&c.entity).and_then(|e| e.column(&c.column)).and_then(|c| c.data_type.clone())
    };
    let mut cols: Vec<(String, Option<String>, &str)> = Vec::new();
    if let Some(t) = &plan.time {
        let dimension = plan.components.iter().find_map(|c| c.time.as_ref()).map(|t| &t.dimension);
        cols.push((t.name.clone(), dimension.and_then(declared), "time"));
    }
    for g in &plan.group_by {
        let ty = match g.derived {
            Some(ir::Derived::Part(_)) => Some("integer".to_string()),
            _ => declared(&g.column),
        };
        cols.push((g.output_name.clone(), ty, "dimension"));
    }
    for o in &plan.outputs {
        let metric_type = match &o.expr {
            ir::OutputExpr::Component(i) => plan.components.get(*i).and_then(|p| match (&p.measure.agg, &p.measure.operand) {
                (Aggregation::Count | Aggregation::CountDistinct | Aggregation::SumBoolean, _) => Some("bigint".to_string()),
                (Aggregation::Avg | Aggregation::Median | Aggregation::Percentile, _) => Some("double".to_string()),
                (_, MeasureOperand::Column(c)) => {
                    model.entity(&p.anchor.entity).and_then(|e| e.column(c)).and_then(|c| c.data_type.clone())
                }
                _ => None,
            }),
            _ => Some("double".to_string()),
        };
        cols.push((o.name.clone(), metric_type, "metric"));
    }
    cols.into_iter()
        .enumerate()
        .map(|(i, (name, ty, role))| {
            let ty = result.and_then(|r| r.columns.get(i)).map(|c| c.data_type.to_ascii_lowercase()).or(ty);
            crate::json::object([("name", name.into()), ("type", ty.into()), ("role", role.into())])
        })
        .collect()
}
