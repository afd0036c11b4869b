//! Substrait plans (seed 003's `query_plan`): a Substrait `Plan` in its
//! protobuf-JSON form turned into SQL for one of our dialects, and the
//! other way, DataFusion SQL turned into a plan.
//!
//! Owns the reading of a plan's JSON (`substrait::proto::Plan` through
//! pbjson), the resolution of the tables it reads against the catalog (its
//! `namedTable` names, case-insensitively, rewritten to the catalog's
//! `schema.table` so that the SQL names every table as the free-SQL checks
//! and the engines resolve it), and the choice of DataFusion's unparser
//! dialect for a dialect name. DataFusion does the rest: its Substrait
//! consumer builds a logical plan over empty tables shaped like the catalog,
//! its unparser writes the SQL; the producer makes a plan of a SELECT.
//! Between consumer and unparser, `sql_shaped` moves the consumer's
//! projections, limits and filters to where DataFusion's SQL planner puts
//! them: DataFusion 54's unparser writes other shapes as unaliased derived
//! tables whose columns it names by the inner tables (SQL only DataFusion
//! reads) and, for a limit over a sort that fetched, the wrong LIMIT.
//! What still translates to DataFusion SQL only, or not at all, is listed by
//! the tests (`filtered_semi_joins_do_not_translate`).
//!
//! What the SQL may then do (the read-only guard, PII checks, limits) is the
//! caller's business: the SQL is checked like any free SQL.
//!
//! Architecture invariant: knows the catalog, Substrait and DataFusion's
//! planner, never tools, envelopes or rmcp; never reads data (its tables
//! are empty) and never opens an engine. Failures are `SubstraitError`s.

use std::collections::{BTreeSet, HashMap};
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use datafusion::arrow::datatypes::Field;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::common::{Column, JoinType};
use datafusion::execution::context::SessionContext;
use datafusion::execution::session_state::SessionState;
use datafusion::logical_expr::{
    build_join_schema, Aggregate, Expr, FetchType, Filter, Join, Limit, LogicalPlan, LogicalPlanBuilder, Projection, SkipType, Sort, SortExpr,
};
use datafusion::optimizer::optimize_projections::OptimizeProjections;
use datafusion::optimizer::push_down_limit::PushDownLimit;
use datafusion::optimizer::{Optimizer, OptimizerRule};
use datafusion::sql::unparser::dialect::{
    BigQueryDialect, DefaultDialect, Dialect as UnparserDialect, DuckDBDialect, MySqlDialect, PostgreSqlDialect, SqliteDialect,
};
use datafusion::sql::unparser::Unparser;
use datafusion_substrait::logical_plan::consumer::from_substrait_plan;
use datafusion_substrait::logical_plan::producer::to_substrait_plan;
use datafusion_substrait::substrait::proto::{plan_rel, Plan};
use serde_json::Value;

use super::datafusion::{arrow_type, new_context, read_only, register_empty};
use crate::catalog::{Catalog, ColumnInfo, TableInfo};
use crate::model::close_matches;

/// Passes of `sql_shaped` at most (each moves a node one level).
const RESHAPE_PASSES: usize = 16;

/// Characters of a parser's message kept in an error.
const MESSAGE_CHARS: usize = 200;

/// Why a plan could not be turned into SQL (or SQL into a plan). Each
/// message says what to change.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SubstraitError {
    /// The JSON is not the protobuf-JSON form of a `substrait.Plan`.
    #[error("not a Substrait plan: {0}; expected the protobuf JSON of substrait.Plan, {{\"relations\": [{{\"root\": {{\"input\": {{...}}, \"names\": [...]}}}}]}}")]
    NotAPlan(String),
    /// A read names a table the catalog does not have.
    #[error("the plan reads `{name}`, which is not a table of the catalog{}", did_you_mean(.close))]
    UnknownTable { name: String, close: Vec<String> },
    /// A read names a bare table that several schemas have.
    #[error("the plan reads `{name}`, which names {}; give its schema too (namedTable.names [schema, table])", .candidates.join(", "))]
    AmbiguousTable { name: String, candidates: Vec<String> },
    /// A read's base schema names a column the table does not have.
    #[error("the plan reads column `{column}` of `{table}`, which the catalog does not have{}", did_you_mean(.close))]
    UnknownColumn { table: String, column: String, close: Vec<String> },
    /// A read's base schema names a column whose catalog type DataFusion
    /// has no Arrow type for.
    #[error("the plan reads column `{column}` of `{table}`, whose type `{data_type}` cannot be planned through Substrait; leave it out of the read")]
    UnsupportedColumn { table: String, column: String, data_type: String },
    /// DataFusion cannot consume the plan (a relation, function or type it
    /// does not support, or a malformed plan); its message.
    #[error("the plan cannot be translated: {0}")]
    Unsupported(String),
    /// The consumed plan has no SQL form in the dialect.
    #[error("the plan cannot be written as {dialect} SQL: {message}")]
    Unparse { dialect: String, message: String },
    /// `sql_to_plan`: DataFusion cannot plan the SQL, or produce a plan of it.
    #[error("the SQL cannot be turned into a Substrait plan: {0}")]
    Sql(String),
}

fn did_you_mean(close: &[String]) -> String {
    match close {
        [] => String::new(),
        names => format!(" (did you mean {}?)", names.iter().map(|n| format!("`{n}`")).collect::<Vec<_>>().join(", ")),
    }
}

/// The SQL a Substrait plan (protobuf JSON) stands for, in `dialect`
/// (`duckdb`, `postgres`, `mysql`/`mariadb`, `sqlite`, `bigquery`; any
/// other name, `datafusion` included, gets DataFusion's own SQL). Tables
/// are named `schema.table` as the catalog spells them.
pub fn plan_to_sql(plan: &Value, catalog: &Catalog, dialect: &str) -> Result<String, SubstraitError> {
    let (plan, keys) = read_plan(plan, catalog)?;
    let ctx = empty_tables(catalog, &keys, Nulls::Any)?;
    let state = ctx.state();
    guarded(|| {
        let logical = block_on(from_substrait_plan(&state, &plan))?.map_err(|e| SubstraitError::Unsupported(e.to_string()))?;
        // A plan the reshaping fails on is written as consumed (SQL
        // DataFusion reads, other engines may not).
        let logical = sql_shaped(logical.clone(), &state).unwrap_or(logical);
        let target = unparser_dialect(dialect);
        // Not `with_pretty`: it drops parentheses by DataFusion's precedence
        // rules, which other engines need not share.
        let unparsed = Unparser::new(target.as_ref()).plan_to_sql(&logical);
        unparsed
            .map(|statement| statement.to_string())
            .map_err(|e| SubstraitError::Unparse { dialect: dialect.to_string(), message: e.to_string() })
    })?
}

/// The catalog keys (`schema.table`) of the tables a plan reads, resolved as
/// `plan_to_sql` resolves them.
pub fn plan_tables(plan: &Value, catalog: &Catalog) -> Result<BTreeSet<String>, SubstraitError> {
    read_plan(plan, catalog).map(|(_, keys)| keys)
}

/// The Substrait plan (protobuf JSON) of a DataFusion SELECT over the
/// catalog's tables, optimised as DataFusion plans it. Bare table names
/// resolve in schema `main`, or in the catalog's only schema; the plan
/// names every table `[schema, table]`.
pub fn sql_to_plan(sql: &str, catalog: &Catalog) -> Result<Value, SubstraitError> {
    let keys = catalog.tables.keys().cloned().collect();
    let ctx = empty_tables(catalog, &keys, Nulls::AsCatalog)?;
    if let Some(schema) = default_schema(catalog) {
        ctx.state_ref().write().config_mut().options_mut().catalog.default_schema = schema.to_string();
    }
    let sql_err = |e: datafusion::error::DataFusionError| SubstraitError::Sql(e.to_string());
    let plan = guarded(|| {
        let logical = block_on(async { ctx.sql_with_options(sql, read_only()).await?.into_optimized_plan() })?.map_err(sql_err)?;
        to_substrait_plan(&logical, &ctx.state()).map_err(sql_err)
    })??;
    let mut json = serde_json::to_value(plan.as_ref()).map_err(|e| SubstraitError::Sql(e.to_string()))?;
    qualify(&mut json, catalog)?;
    Ok(json)
}

/// Reshapes a consumed plan into the shapes DataFusion's SQL planner makes,
/// which its unparser writes as one SELECT per query block. Left as the
/// consumer builds it (a renaming projection on top, projections stacked on
/// projections, a sort's fetch beside a limit), the unparser nests unaliased
/// derived tables whose outer references name inner tables (SQL only
/// DataFusion accepts), and writes `LIMIT 3 OFFSET 1` over a sort that
/// fetched 4 as `LIMIT 4 OFFSET 1` (wrong rows).
fn sql_shaped(plan: LogicalPlan, state: &SessionState) -> datafusion::error::Result<LogicalPlan> {
    let rules: Vec<Arc<dyn OptimizerRule + Send + Sync>> = vec![Arc::new(OptimizeProjections::new()), Arc::new(PushDownLimit::new())];
    let mut plan = Optimizer::with_rules(rules).optimize(plan, state, |_, _| {})?;
    // A step can make a shape another step takes at the node above it, which
    // one pass has visited already; a plan is reshaped in a few passes.
    for _ in 0..RESHAPE_PASSES {
        let pass = plan.transform_up(reshape)?;
        plan = pass.data;
        if !pass.transformed {
            break;
        }
    }
    Ok(plan)
}

/// One step of `sql_shaped`, on a node whose inputs are reshaped. A step
/// whose result has another schema than the node is not taken.
fn reshape(plan: LogicalPlan) -> datafusion::error::Result<Transformed<LogicalPlan>> {
    let reshaped = match &plan {
        // A sort's fetch is the block's LIMIT to the unparser, whatever
        // Limit stands above it: make it a Limit of its own.
        LogicalPlan::Sort(Sort { expr, input, fetch: Some(n) }) => {
            let sort = LogicalPlan::Sort(Sort { expr: expr.clone(), input: Arc::clone(input), fetch: None });
            Some(LogicalPlanBuilder::from(sort).limit(0, Some(*n))?.build()?)
        }
        // Two limits are one: skip s2 then take f2, skip s1 of those then take f1.
        LogicalPlan::Limit(outer) => match (literal_limit(outer), outer.input.as_ref()) {
            (Some((s1, f1)), LogicalPlan::Limit(inner)) => match literal_limit(inner) {
                Some((s2, f2)) => {
                    let left = f2.map(|f2| f2.saturating_sub(s1));
                    let fetch = match (f1, left) {
                        (Some(a), Some(b)) => Some(a.min(b)),
                        (a, b) => a.or(b),
                    };
                    Some(LogicalPlanBuilder::from(inner.input.as_ref().clone()).limit(s1 + s2, fetch)?.build()?)
                }
                None => None,
            },
            _ => None,
        },
        LogicalPlan::Projection(p) => match p.input.as_ref() {
            // Above a limit: below it (a limit keeps rows whatever their columns).
            LogicalPlan::Limit(limit) => {
                let projection = LogicalPlan::Projection(Projection::try_new(p.expr.clone(), Arc::clone(&limit.input))?);
                Some(LogicalPlan::Limit(Limit { skip: limit.skip.clone(), fetch: limit.fetch.clone(), input: Arc::new(projection) }))
            }
            // Above a projection: one projection.
            LogicalPlan::Projection(inner) if substitutable(&p.expr) && substitutable(&inner.expr) => {
                let outputs = outputs(inner);
                let exprs = p.expr.iter().map(|e| substitute_keeping_name(e, &outputs)).collect::<datafusion::error::Result<Vec<_>>>()?;
                Some(LogicalPlan::Projection(Projection::try_new(exprs, Arc::clone(&inner.input))?))
            }
            // Above a sort on what it outputs: below the sort, where the
            // SQL planner puts it (the unparser nests a sort under a projection).
            LogicalPlan::Sort(sort) if sort.fetch.is_none() && substitutable(&p.expr) => {
                let outputs: Vec<(Expr, Column)> =
                    p.expr.iter().zip(p.schema.columns()).map(|(e, c)| (e.clone().unalias(), c)).collect();
                let by_output = sort
                    .expr
                    .iter()
                    .map(|s| {
                        let found = outputs.iter().find(|(e, _)| *e == s.expr).map(|(_, c)| Expr::Column(c.clone()));
                        found.map(|expr| SortExpr { expr, asc: s.asc, nulls_first: s.nulls_first })
                    })
                    .collect::<Option<Vec<_>>>();
                match by_output {
                    Some(by) => {
                        let projection = LogicalPlan::Projection(Projection::try_new(p.expr.clone(), Arc::clone(&sort.input))?);
                        Some(LogicalPlan::Sort(Sort { expr: by, input: Arc::new(projection), fetch: None }))
                    }
                    None if !matches!(sort.input.as_ref(), LogicalPlan::Projection(_)) => sort_on_unprojected(p, sort)?,
                    None => None,
                }
            }
            _ => None,
        },
        // An inner join of inputs that only pick columns joins their inputs
        // (their filters become the block's WHERE), under a projection that
        // picks the same columns: the unparser nests such an input as a
        // derived table whose columns the join names by the inner table.
        LogicalPlan::Join(join) if join.join_type == JoinType::Inner && (picks_columns(&join.left) || picks_columns(&join.right)) => {
            let unpicked = |side: &Arc<LogicalPlan>| match side.as_ref() {
                LogicalPlan::Projection(p) if picks_columns(side) => Arc::clone(&p.input),
                _ => Arc::clone(side),
            };
            let (left, right) = (unpicked(&join.left), unpicked(&join.right));
            let schema = Arc::new(build_join_schema(left.schema(), right.schema(), &join.join_type)?);
            let wider = LogicalPlan::Join(Join { left, right, schema, ..join.clone() });
            let columns = join.schema.columns().into_iter().map(Expr::Column).collect();
            Some(LogicalPlan::Projection(Projection::try_new(columns, Arc::new(wider))?))
        }
        // Above a projection that only picks columns: on its input (an
        // aggregate's output does not depend on the columns it does not read).
        LogicalPlan::Aggregate(agg) => match agg.input.as_ref() {
            LogicalPlan::Projection(inner) if inner.expr.iter().all(|e| matches!(e, Expr::Column(_))) => Some(LogicalPlan::Aggregate(
                Aggregate::try_new(Arc::clone(&inner.input), agg.group_expr.clone(), agg.aggr_expr.clone())?,
            )),
            _ => None,
        },
        // Above a projection: below it, the predicate rewritten over its input.
        LogicalPlan::Filter(filter) => match filter.input.as_ref() {
            LogicalPlan::Projection(inner) if substitutable(&inner.expr) && substitutable(std::slice::from_ref(&filter.predicate)) => {
                let predicate = substitute(filter.predicate.clone(), &outputs(inner))?;
                let below = LogicalPlan::Filter(Filter::try_new(predicate, Arc::clone(&inner.input))?);
                Some(LogicalPlan::Projection(Projection::try_new(inner.expr.clone(), Arc::new(below))?))
            }
            _ => None,
        },
        _ => None,
    };
    Ok(match reshaped {
        Some(new) if new.schema().as_ref() == plan.schema().as_ref() => Transformed::yes(new),
        _ => Transformed::no(plan),
    })
}

/// A projection that only picks columns of its input.
fn picks_columns(plan: &LogicalPlan) -> bool {
    matches!(plan, LogicalPlan::Projection(p) if p.expr.iter().all(|e| matches!(e, Expr::Column(_))))
}

/// Projection `p` over a sort by columns it does not output, in the shape
/// the SQL planner gives `SELECT a FROM t ORDER BY b` and the unparser
/// writes as one block: the projection, the sort, and below the sort a
/// projection of `p`'s expressions and the sort's columns.
fn sort_on_unprojected(p: &Projection, sort: &Sort) -> datafusion::error::Result<Option<LogicalPlan>> {
    let mut wider = p.expr.clone();
    for s in &sort.expr {
        let Expr::Column(c) = &s.expr else { return Ok(None) };
        let output = p.expr.iter().any(|e| e.clone().unalias() == s.expr);
        if !output && !wider.contains(&s.expr) {
            wider.push(Expr::Column(c.clone()));
        }
    }
    let below = Projection::try_new(wider, Arc::clone(&sort.input))?;
    let columns = below.schema.columns();
    let by = sort
        .expr
        .iter()
        .map(|s| {
            let at = p.expr.iter().position(|e| e.clone().unalias() == s.expr);
            let expr = at.and_then(|i| columns.get(i).cloned()).map_or_else(|| s.expr.clone(), Expr::Column);
            SortExpr { expr, asc: s.asc, nulls_first: s.nulls_first }
        })
        .collect();
    let outputs = columns.into_iter().take(p.expr.len()).map(Expr::Column).collect();
    let sorted = LogicalPlan::Sort(Sort { expr: by, input: Arc::new(LogicalPlan::Projection(below)), fetch: None });
    Ok(Some(LogicalPlan::Projection(Projection::try_new(outputs, Arc::new(sorted))?)))
}

/// Expressions that may be moved across a projection: no subquery (whose
/// outer references a substitution would not reach) and nothing volatile
/// (which a substitution could evaluate twice).
fn substitutable(exprs: &[Expr]) -> bool {
    !exprs.iter().any(|e| {
        e.is_volatile() || e.exists(|x| Ok(matches!(x, Expr::ScalarSubquery(_) | Expr::Exists(_) | Expr::InSubquery(_)))).unwrap_or(true)
    })
}

/// What each output column of a projection stands for.
fn outputs(p: &Projection) -> HashMap<Column, Expr> {
    p.schema.columns().into_iter().zip(&p.expr).map(|(c, e)| (c, e.clone().unalias())).collect()
}

/// `expr` with the columns of `outputs` replaced by what they stand for
/// (bottom-up, so a replacement is not replaced again).
fn substitute(expr: Expr, outputs: &HashMap<Column, Expr>) -> datafusion::error::Result<Expr> {
    expr.transform_up(|e| match e {
        Expr::Column(c) => match outputs.get(&c) {
            Some(with) => Ok(Transformed::yes(with.clone())),
            None => Ok(Transformed::no(Expr::Column(c))),
        },
        other => Ok(Transformed::no(other)),
    })
    .map(|t| t.data)
}

/// `substitute` keeping the output name of a projection expression.
fn substitute_keeping_name(expr: &Expr, outputs: &HashMap<Column, Expr>) -> datafusion::error::Result<Expr> {
    let replaced = substitute(expr.clone(), outputs)?;
    Ok(match expr {
        Expr::Alias(_) => replaced,
        Expr::Column(_) if replaced == *expr => replaced,
        Expr::Column(c) => replaced.alias_qualified(c.relation.clone(), c.name.clone()),
        _ => replaced.alias_if_changed(expr.schema_name().to_string())?,
    })
}

/// A limit's skip and fetch when both are literals.
fn literal_limit(limit: &Limit) -> Option<(usize, Option<usize>)> {
    match (limit.get_skip_type().ok()?, limit.get_fetch_type().ok()?) {
        (SkipType::Literal(skip), FetchType::Literal(fetch)) => Some((skip, fetch)),
        _ => None,
    }
}

/// Parses a plan and qualifies its reads: the plan to consume and the
/// catalog keys it reads.
fn read_plan(plan: &Value, catalog: &Catalog) -> Result<(Plan, BTreeSet<String>), SubstraitError> {
    let parsed = parse(plan)?;
    // The canonical JSON (camelCase names, whichever spelling came in) is
    // what `qualify` walks.
    let mut json = serde_json::to_value(&parsed).map_err(|e| SubstraitError::NotAPlan(cut(&e.to_string())))?;
    let keys = qualify(&mut json, catalog)?;
    let parsed = parse(&json)?;
    check_shape(&parsed)?;
    Ok((parsed, keys))
}

fn parse(plan: &Value) -> Result<Plan, SubstraitError> {
    serde_json::from_value::<Plan>(plan.clone()).map_err(|e| SubstraitError::NotAPlan(cut(&e.to_string())))
}

/// One relation tree with a root input: pbjson ignores unknown fields, so
/// any JSON object parses, and DataFusion's consumer panics on a root
/// without an input.
fn check_shape(plan: &Plan) -> Result<(), SubstraitError> {
    let [relation] = plan.relations.as_slice() else {
        return match plan.relations.len() {
            0 => Err(SubstraitError::NotAPlan("it has no relations".into())),
            n => Err(SubstraitError::Unsupported(format!("the plan has {n} relation trees; only one is supported"))),
        };
    };
    match &relation.rel_type {
        Some(plan_rel::RelType::Root(root)) if root.input.is_none() => Err(SubstraitError::NotAPlan("its root has no input".into())),
        Some(_) => Ok(()),
        None => Err(SubstraitError::NotAPlan("its relation has neither root nor rel".into())),
    }
}

/// Rewrites every `namedTable` of a plan's canonical JSON to the catalog's
/// `[schema, table]` and every base-schema column name to the catalog's
/// spelling, and returns the catalog keys read. Refuses reads of files and
/// of extension or Iceberg tables: only catalog tables are read.
fn qualify(plan: &mut Value, catalog: &Catalog) -> Result<BTreeSet<String>, SubstraitError> {
    let mut keys = BTreeSet::new();
    // An explicit stack: a plan is as deep as its JSON, which the caller parsed.
    let mut stack = vec![plan];
    while let Some(node) = stack.pop() {
        match node {
            Value::Object(map) => {
                if let Some(kind) = ["localFiles", "extensionTable", "icebergTable"].into_iter().find(|k| map.contains_key(*k)) {
                    return Err(SubstraitError::Unsupported(format!(
                        "a read of `{kind}`; only catalog tables (namedTable) and virtual tables are read"
                    )));
                }
                if let Some(named) = map.get_mut("namedTable") {
                    let table = resolve(catalog, named)?;
                    *named = serde_json::json!({ "names": [table.schema, table.name] });
                    if let Some(Value::Array(names)) = map.get_mut("baseSchema").and_then(|s| s.get_mut("names")) {
                        for name in names.iter_mut() {
                            let column = catalog_column(table, name.as_str().unwrap_or_default())?;
                            *name = Value::String(column.name.clone());
                        }
                    }
                    keys.insert(format!("{}.{}", table.schema, table.name));
                }
                stack.extend(map.values_mut());
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            _ => {}
        }
    }
    Ok(keys)
}

/// The catalog table a `namedTable` names: `[table]`, `[schema, table]` or
/// `[catalog, schema, table]`, exactly or else case-insensitively.
fn resolve<'a>(catalog: &'a Catalog, named: &Value) -> Result<&'a TableInfo, SubstraitError> {
    let names: Vec<&str> = named.get("names").and_then(Value::as_array).map(|n| n.iter().filter_map(Value::as_str).collect()).unwrap_or_default();
    let shown = names.join(".");
    let (schema, table) = match names.as_slice() {
        [.., s, t] => (Some(*s), *t),
        [t] => (None, *t),
        [] => return Err(SubstraitError::NotAPlan("a namedTable has no names".into())),
    };
    let matching = |exact: bool| -> Vec<&'a TableInfo> {
        let same = |a: &str, b: &str| if exact { a == b } else { a.eq_ignore_ascii_case(b) };
        catalog.tables.values().filter(|t| same(&t.name, table) && schema.is_none_or(|s| same(&t.schema, s))).collect()
    };
    let found = match matching(true) {
        exact if !exact.is_empty() => exact,
        _ => matching(false),
    };
    match found.as_slice() {
        [one] => Ok(one),
        [] => Err(SubstraitError::UnknownTable { name: shown, close: close_matches(table, catalog.tables.keys().map(String::as_str)) }),
        many => Err(SubstraitError::AmbiguousTable { name: shown, candidates: many.iter().map(|t| format!("{}.{}", t.schema, t.name)).collect() }),
    }
}

/// The catalog column a base-schema name stands for, exactly or else
/// case-insensitively, if DataFusion can type it.
fn catalog_column<'a>(table: &'a TableInfo, name: &str) -> Result<&'a ColumnInfo, SubstraitError> {
    let column = table.columns.iter().find(|c| c.name == name).or_else(|| table.columns.iter().find(|c| c.name.eq_ignore_ascii_case(name)));
    let shown = || format!("{}.{}", table.schema, table.name);
    let Some(column) = column else {
        return Err(SubstraitError::UnknownColumn {
            table: shown(),
            column: name.to_string(),
            close: close_matches(name, table.columns.iter().map(|c| c.name.as_str())),
        });
    };
    match arrow_type(&column.data_type) {
        Some(_) => Ok(column),
        None => Err(SubstraitError::UnsupportedColumn { table: shown(), column: column.name.clone(), data_type: column.data_type.clone() }),
    }
}

/// Which nullability the empty tables declare.
#[derive(Clone, Copy)]
enum Nulls {
    /// The catalog's: a plan made of them says which columns are NOT NULL.
    AsCatalog,
    /// NOT NULL everywhere, so that the consumer accepts a plan whatever
    /// nullability it declares (it refuses a NOT NULL read of a nullable
    /// column); the SQL does not depend on it.
    Any,
}

/// A DataFusion session holding the catalog tables `keys` as empty tables,
/// each under its schema; columns without an Arrow type are left out.
fn empty_tables(catalog: &Catalog, keys: &BTreeSet<String>, nulls: Nulls) -> Result<SessionContext, SubstraitError> {
    let ctx = new_context();
    for table in keys.iter().filter_map(|k| catalog.tables.get(k)) {
        let fields = table
            .columns
            .iter()
            .filter_map(|c| arrow_type(&c.data_type).map(|t| Field::new(&c.name, t, matches!(nulls, Nulls::AsCatalog) && c.nullable)))
            .collect();
        register_empty(&ctx, &table.schema, &table.name, fields).map_err(|e| SubstraitError::Unsupported(e.to_string()))?;
    }
    Ok(ctx)
}

/// The schema bare table names resolve in: `main` when the catalog has it
/// (DataFusion's default), else the catalog's only schema.
fn default_schema(catalog: &Catalog) -> Option<&str> {
    let schemas: BTreeSet<&str> = catalog.tables.values().map(|t| t.schema.as_str()).collect();
    match schemas.into_iter().collect::<Vec<_>>().as_slice() {
        [only] if *only != "main" => Some(only),
        _ => None,
    }
}

/// DataFusion's unparser dialect for one of our dialect names.
fn unparser_dialect(name: &str) -> Box<dyn UnparserDialect> {
    let canonical = crate::sql::Dialect::from_name(name).map_or(name, |d| d.name);
    match canonical {
        "duckdb" => Box::new(DuckDBDialect::new()),
        "postgres" => Box::new(PostgreSqlDialect {}),
        "mysql" => Box::new(MySqlDialect {}),
        "sqlite" => Box::new(SqliteDialect {}),
        "bigquery" => Box::new(BigQueryDialect {}),
        _ => Box::new(DefaultDialect {}),
    }
}

/// Runs a future to completion on a runtime of its own (DataFusion's
/// consumer and SQL planner are async, though over empty in-memory tables
/// they never wait).
fn block_on<F>(fut: F) -> Result<F::Output, SubstraitError>
where
    F: Future + Send,
    F::Output: Send,
{
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .map_err(|e| SubstraitError::Unsupported(format!("cannot start the async runtime: {e}")))?;
    let out = super::runtime::block_on(&rt, fut);
    // Dropping a runtime inside another one (an async MCP handler) panics.
    rt.shutdown_background();
    Ok(out)
}

/// Runs `f`, turning a panic into an error: DataFusion's consumer unwraps
/// parts of a plan that protobuf leaves optional (a join without its left
/// input, say), and a plan is input.
fn guarded<T>(f: impl FnOnce() -> T) -> Result<T, SubstraitError> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|panic| {
        let what = panic.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| panic.downcast_ref::<String>().cloned());
        SubstraitError::Unsupported(format!("the plan is malformed ({})", cut(what.as_deref().unwrap_or("DataFusion's consumer failed"))))
    })
}

/// `text` cut to `MESSAGE_CHARS` characters.
fn cut(text: &str) -> String {
    match text.char_indices().nth(MESSAGE_CHARS) {
        Some((at, _)) => format!("{}…", text.get(..at).unwrap_or(text)),
        None => text.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use datafusion::arrow::array::RecordBatch;
    use datafusion::arrow::util::display::array_value_to_string;
    use serde_json::json;

    use super::*;

    fn column(name: &str, data_type: &str, nullable: bool) -> ColumnInfo {
        ColumnInfo { name: name.into(), data_type: data_type.into(), nullable, comment: None, stats: None }
    }

    fn table(schema: &str, name: &str, columns: Vec<ColumnInfo>) -> (String, TableInfo) {
        (format!("{schema}.{name}"), TableInfo { schema: schema.into(), name: name.into(), columns, ..TableInfo::default() })
    }

    /// Two tables of the demo's shape.
    fn catalog() -> Catalog {
        let tables = [
            table("main", "customers", vec![column("id", "INTEGER", false), column("name", "VARCHAR", true), column("country", "VARCHAR", true)]),
            table(
                "main",
                "orders",
                vec![
                    column("id", "INTEGER", false),
                    column("customer_id", "INTEGER", true),
                    column("amount", "DECIMAL(10,2)", true),
                    column("status", "VARCHAR", true),
                    column("ordered_at", "DATE", true),
                ],
            ),
        ];
        Catalog { source: "test".into(), engine: "test".into(), tables: tables.into_iter().collect() }
    }

    const CUSTOMERS: &str = "CREATE TABLE main.customers (id INTEGER NOT NULL, name VARCHAR, country VARCHAR);
        INSERT INTO main.customers VALUES (1, 'Ann', 'FR'), (2, 'Bob', 'DE'), (3, 'Cid', 'FR'), (4, 'Dee', NULL);";
    const ORDERS: &str = "CREATE TABLE main.orders (id INTEGER NOT NULL, customer_id INTEGER, amount DECIMAL(10,2), status VARCHAR, ordered_at DATE);
        INSERT INTO main.orders VALUES (10, 1, 100.50, 'paid', '2024-01-05'), (11, 1, 20.00, 'open', '2024-01-20'),
        (12, 2, 70.25, 'paid', '2024-02-01'), (13, 3, 15.00, 'paid', '2024-02-11'), (14, 3, NULL, 'paid', '2024-03-01'),
        (15, 4, 5.00, 'paid', NULL), (16, 99, 1.00, 'paid', '2024-03-02');";

    /// A DataFusion session holding the rows of `CUSTOMERS` and `ORDERS`.
    fn loaded() -> SessionContext {
        let ctx = new_context();
        for statement in format!("{CUSTOMERS}{ORDERS}").split(';').map(str::trim).filter(|s| !s.is_empty()) {
            block_on(async { ctx.sql(statement).await.unwrap().collect().await.unwrap() }).unwrap();
        }
        ctx
    }

    fn text_rows(batches: &[RecordBatch]) -> Vec<Vec<String>> {
        let mut rows = Vec::new();
        for b in batches {
            for i in 0..b.num_rows() {
                rows.push(b.columns().iter().map(|c| array_value_to_string(c, i).unwrap()).collect());
            }
        }
        rows
    }

    fn datafusion_rows(ctx: &SessionContext, sql: &str) -> Vec<Vec<String>> {
        let batches = block_on(async { ctx.sql(sql).await?.collect().await }).unwrap().unwrap_or_else(|e| panic!("{sql}\n{e}"));
        text_rows(&batches)
    }

    fn duckdb_rows(sql: &str) -> Vec<Vec<String>> {
        let conn = duckdb::Connection::open_in_memory().unwrap();
        conn.execute_batch(&format!("{CUSTOMERS}{ORDERS}")).unwrap();
        let mut statement = conn.prepare(sql).unwrap_or_else(|e| panic!("{sql}\n{e}"));
        let batches: Vec<RecordBatch> = statement.query_arrow([]).unwrap().collect();
        text_rows(&batches)
    }

    /// Cell texts equal, or equal numbers (DataFusion and DuckDB give a
    /// decimal quotient different scales).
    fn same_rows(a: &[Vec<String>], b: &[Vec<String>]) -> bool {
        let cell = |x: &String, y: &String| x == y || matches!((x.parse::<f64>(), y.parse::<f64>()), (Ok(p), Ok(q)) if (p - q).abs() < 1e-9);
        a.len() == b.len() && a.iter().zip(b).all(|(r, s)| r.len() == s.len() && r.iter().zip(s).all(|(x, y)| cell(x, y)))
    }

    fn sorted(mut rows: Vec<Vec<String>>, ordered: bool) -> Vec<Vec<String>> {
        if !ordered {
            rows.sort();
        }
        rows
    }

    fn parses(sql: &str, dialect: &dyn sqlparser::dialect::Dialect) -> bool {
        sqlparser::parser::Parser::parse_sql(dialect, sql).is_ok()
    }

    /// SQL → plan → SQL answers as the SQL does: the DataFusion form in
    /// DataFusion, the DuckDB form in DuckDB (same rows as DataFusion gives
    /// the original); the DuckDB, Postgres and MySQL forms parse in their
    /// dialects. `true` marks an ORDER BY whose order is compared.
    #[test]
    fn round_trips_answer_as_the_sql_does() {
        let cases = [
            ("SELECT c.country, SUM(o.amount) AS revenue, COUNT(*) AS n FROM main.orders o JOIN main.customers c ON o.customer_id = c.id \
              WHERE o.status = 'paid' GROUP BY c.country ORDER BY revenue DESC NULLS LAST LIMIT 2", true),
            ("SELECT o.id, COALESCE(c.name, 'none') AS name, CASE WHEN o.amount > 50 THEN 'big' ELSE 'small' END AS size \
              FROM orders o LEFT JOIN customers c ON o.customer_id = c.id", false),
            ("SELECT id FROM orders WHERE status IN ('paid', 'x') AND amount BETWEEN 10 AND 80 AND status LIKE 'p%'", false),
            ("SELECT customer_id, COUNT(DISTINCT status) AS k FROM orders GROUP BY customer_id HAVING COUNT(*) > 1", false),
            ("SELECT id FROM customers UNION ALL SELECT customer_id FROM orders", false),
            ("SELECT id FROM customers UNION SELECT customer_id FROM orders", false),
            ("SELECT id, ROW_NUMBER() OVER (PARTITION BY customer_id ORDER BY amount DESC, id) AS rn FROM orders", false),
            ("SELECT id, SUM(amount) OVER (PARTITION BY customer_id) AS total FROM orders", false),
            ("WITH paid AS (SELECT * FROM orders WHERE status = 'paid') SELECT customer_id, MAX(amount) AS m FROM paid GROUP BY customer_id", false),
            ("SELECT id, amount / 2 AS half, id / 4 AS quarter, CAST(amount AS DOUBLE) / 4 AS q, amount * 2 - 1 AS x FROM orders", false),
            ("SELECT date_trunc('month', ordered_at) AS month, SUM(amount) AS revenue FROM orders GROUP BY 1", false),
            ("SELECT EXTRACT(YEAR FROM ordered_at) AS y, MIN(amount) AS lo, AVG(amount) AS mean FROM orders GROUP BY 1", false),
            ("SELECT id FROM orders WHERE ordered_at >= DATE '2024-02-01' AND ordered_at < DATE '2024-03-01'", false),
            ("SELECT upper(name) AS u, length(name) AS l, substr(name, 1, 2) AS s, name || '!' AS e FROM customers", false),
            ("SELECT id FROM orders WHERE amount IS NULL OR ordered_at IS NULL", false),
            ("SELECT CAST(amount AS DOUBLE) AS d, CAST(id AS VARCHAR) AS v FROM orders", false),
            ("SELECT c.country, COUNT(o.id) AS n FROM customers c CROSS JOIN orders o GROUP BY c.country", false),
            ("SELECT o.id FROM orders o FULL OUTER JOIN customers c ON o.customer_id = c.id WHERE c.id IS NULL", false),
            ("SELECT id FROM customers c WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id)", false),
            ("SELECT id, (SELECT MAX(amount) FROM orders) AS top FROM customers", false),
            ("SELECT DISTINCT status FROM orders", false),
            ("SELECT id FROM orders ORDER BY amount DESC NULLS LAST, id LIMIT 3 OFFSET 1", true),
            ("SELECT customer_id, SUM(amount) AS s FROM orders GROUP BY customer_id ORDER BY s DESC NULLS LAST, customer_id LIMIT 2", true),
        ];
        let ctx = loaded();
        for (sql, ordered) in cases {
            let plan = sql_to_plan(sql, &catalog()).unwrap_or_else(|e| panic!("{sql}\n{e}"));
            let want = sorted(datafusion_rows(&ctx, sql), ordered);
            let back = plan_to_sql(&plan, &catalog(), "datafusion").unwrap_or_else(|e| panic!("{sql}\n{e}"));
            assert!(same_rows(&sorted(datafusion_rows(&ctx, &back), ordered), &want), "{sql}\n→ {back}");
            let duck = plan_to_sql(&plan, &catalog(), "duckdb").unwrap_or_else(|e| panic!("{sql}\n{e}"));
            assert!(same_rows(&sorted(duckdb_rows(&duck), ordered), &want), "{sql}\n→ {duck}");
            assert!(parses(&duck, &sqlparser::dialect::DuckDbDialect {}), "{duck}");
            let postgres = plan_to_sql(&plan, &catalog(), "postgres").unwrap_or_else(|e| panic!("{sql}\n{e}"));
            assert!(parses(&postgres, &sqlparser::dialect::PostgreSqlDialect {}), "{postgres}");
            let mysql = plan_to_sql(&plan, &catalog(), "mariadb").unwrap_or_else(|e| panic!("{sql}\n{e}"));
            assert!(parses(&mysql, &sqlparser::dialect::MySqlDialect {}) && mysql.contains("`main`.`"), "{mysql}");
        }
    }

    /// FIXME: DataFusion 54's unparser. A semi join whose right input is
    /// filtered (`IN (SELECT … WHERE …)`) is written as EXISTS over an
    /// unaliased derived table whose columns it names by the inner table,
    /// which DuckDB rejects; one whose right input is a filtered scan
    /// (`EXISTS (… AND o.status = 'open')`) gets the filter hoisted out of
    /// the EXISTS, which every engine rejects (apache/datafusion#24808 and
    /// later fix the first in DataFusion 55). Both fail loudly, never with
    /// other rows.
    #[test]
    fn filtered_semi_joins_do_not_translate() {
        let ctx = loaded();
        let in_subquery = "SELECT id FROM orders WHERE customer_id IN (SELECT id FROM customers WHERE country = 'FR')";
        let duck = plan_to_sql(&sql_to_plan(in_subquery, &catalog()).unwrap(), &catalog(), "duckdb").unwrap();
        let conn = duckdb::Connection::open_in_memory().unwrap();
        conn.execute_batch(&format!("{CUSTOMERS}{ORDERS}")).unwrap();
        assert!(conn.prepare(&duck).is_err(), "{duck}");
        let exists = "SELECT c.id FROM customers c WHERE EXISTS (SELECT 1 FROM orders o WHERE o.customer_id = c.id AND o.status = 'open')";
        let back = plan_to_sql(&sql_to_plan(exists, &catalog()).unwrap(), &catalog(), "datafusion").unwrap();
        assert!(block_on(async { ctx.sql(&back).await.map(|_| ()) }).unwrap().is_err(), "{back}");
    }

    /// Every `namedTable` of a plan's JSON, for tests to rewrite.
    fn named_tables(plan: &mut Value, f: &mut dyn FnMut(&mut serde_json::Map<String, Value>)) {
        match plan {
            Value::Object(map) => {
                if map.contains_key("namedTable") {
                    f(map);
                }
                map.values_mut().for_each(|v| named_tables(v, f));
            }
            Value::Array(items) => items.iter_mut().for_each(|v| named_tables(v, f)),
            _ => {}
        }
    }

    #[test]
    fn plans_name_tables_by_schema_and_table() {
        let plan = sql_to_plan("SELECT id FROM orders WHERE amount > 10", &catalog()).unwrap();
        assert!(plan.to_string().contains(r#""namedTable":{"names":["main","orders"]}"#), "{plan}");
        assert_eq!(plan_tables(&plan, &catalog()).unwrap(), BTreeSet::from(["main.orders".to_string()]));
        // A catalog of one other schema: bare names resolve there.
        let mut shop = catalog();
        shop.tables = shop.tables.into_values().map(|t| table("shop", &t.name, t.columns)).collect();
        let plan = sql_to_plan("SELECT id FROM orders", &shop).unwrap();
        assert_eq!(plan_to_sql(&plan, &shop, "postgres").unwrap(), r#"SELECT "orders"."id" FROM "shop"."orders""#);
    }

    /// A producer that spells names otherwise (Isthmus writes them upper
    /// case, bare): tables and columns resolve case-insensitively, and the
    /// SQL spells them as the catalog does.
    #[test]
    fn names_resolve_case_insensitively() {
        let mut plan = sql_to_plan("SELECT status, COUNT(*) AS n FROM orders GROUP BY status", &catalog()).unwrap();
        named_tables(&mut plan, &mut |read| {
            read.insert("namedTable".into(), json!({ "names": ["ORDERS"] }));
            if let Some(Value::Array(names)) = read.get_mut("baseSchema").and_then(|b| b.get_mut("names")) {
                names.iter_mut().for_each(|n| *n = json!(n.as_str().unwrap().to_uppercase()));
            }
        });
        assert!(plan.to_string().contains(r#"["ORDERS"]"#) && plan.to_string().contains("STATUS"), "{plan}");
        let sql = plan_to_sql(&plan, &catalog(), "duckdb").unwrap();
        assert_eq!(sql, r#"SELECT "orders"."status", count(1) AS "n" FROM "main"."orders" GROUP BY "orders"."status""#);
    }

    #[test]
    fn reads_outside_the_catalog_are_refused_by_name() {
        let plan = sql_to_plan("SELECT id FROM orders", &catalog()).unwrap();
        let rename = |names: Value| {
            let mut p = plan.clone();
            named_tables(&mut p, &mut |read| {
                read.insert("namedTable".into(), json!({ "names": names.clone() }));
            });
            p
        };
        let err = plan_to_sql(&rename(json!(["main", "order"])), &catalog(), "duckdb").unwrap_err();
        assert_eq!(err, SubstraitError::UnknownTable { name: "main.order".into(), close: vec!["main.orders".into()] });
        assert_eq!(err.to_string(), "the plan reads `main.order`, which is not a table of the catalog (did you mean `main.orders`?)");
        let err = plan_to_sql(&rename(json!(["pg_catalog", "pg_stats"])), &catalog(), "postgres").unwrap_err();
        assert!(matches!(err, SubstraitError::UnknownTable { .. }), "{err}");
        // A bare name two schemas have.
        let mut two = catalog();
        two.tables.extend([table("archive", "orders", vec![column("id", "INTEGER", false)])]);
        let err = plan_to_sql(&rename(json!(["orders"])), &two, "duckdb").unwrap_err();
        assert_eq!(err, SubstraitError::AmbiguousTable { name: "orders".into(), candidates: vec!["archive.orders".into(), "main.orders".into()] });
        // A column the table does not have, or of a type DataFusion has no counterpart for.
        let mut p = plan.clone();
        named_tables(&mut p, &mut |read| read["baseSchema"]["names"][0] = json!("idd"));
        let err = plan_to_sql(&p, &catalog(), "duckdb").unwrap_err();
        assert_eq!(err.to_string(), "the plan reads column `idd` of `main.orders`, which the catalog does not have (did you mean `id`?)");
        let mut odd = catalog();
        if let Some(t) = odd.tables.get_mut("main.orders") {
            t.columns[0].data_type = "GEOMETRY".into();
        }
        assert!(matches!(plan_to_sql(&plan, &odd, "duckdb"), Err(SubstraitError::UnsupportedColumn { .. })));
        // Files are not read.
        let mut files = plan.clone();
        named_tables(&mut files, &mut |read| {
            read.remove("namedTable");
            read.insert("localFiles".into(), json!({ "items": [{ "uriFile": "file:///etc/passwd" }] }));
        });
        let err = plan_to_sql(&files, &catalog(), "duckdb").unwrap_err();
        assert!(matches!(err, SubstraitError::Unsupported(_)) && err.to_string().contains("localFiles"), "{err}");
    }

    #[test]
    fn other_json_is_not_a_plan() {
        for garbage in [json!("SELECT 1"), json!([1, 2]), json!({ "relations": "x" }), json!({ "relations": [{ "root": { "input": 7 } }] })] {
            let err = plan_to_sql(&garbage, &catalog(), "duckdb").unwrap_err();
            assert!(matches!(err, SubstraitError::NotAPlan(_)), "{garbage}: {err}");
            assert!(err.to_string().len() < 450, "{err}");
        }
        // pbjson ignores unknown fields: any object parses, as a plan of nothing.
        let err = plan_to_sql(&json!({ "select": "*" }), &catalog(), "duckdb").unwrap_err();
        assert_eq!(err, SubstraitError::NotAPlan("it has no relations".into()));
        let err = plan_to_sql(&json!({ "relations": [{ "root": { "names": ["a"] } }] }), &catalog(), "duckdb").unwrap_err();
        assert_eq!(err, SubstraitError::NotAPlan("its root has no input".into()));
    }

    /// DataFusion's consumer unwraps a join's inputs: a plan without one is
    /// an error, not a panic.
    #[test]
    fn a_malformed_plan_is_an_error() {
        fn drop_left(v: &mut Value) {
            match v {
                Value::Object(map) => match map.get_mut("join").and_then(Value::as_object_mut) {
                    Some(join) => {
                        join.remove("left");
                    }
                    None => map.values_mut().for_each(drop_left),
                },
                Value::Array(items) => items.iter_mut().for_each(drop_left),
                _ => {}
            }
        }
        let mut plan = sql_to_plan("SELECT o.id FROM orders o JOIN customers c ON o.customer_id = c.id", &catalog()).unwrap();
        drop_left(&mut plan);
        let err = plan_to_sql(&plan, &catalog(), "duckdb").unwrap_err();
        assert!(matches!(err, SubstraitError::Unsupported(_)), "{err}");
    }

    #[test]
    fn sql_that_is_not_a_query_is_refused() {
        for sql in ["COPY (SELECT 1) TO '/tmp/x.csv'", "CREATE TABLE t (a INT)", "SELECT nope FROM orders", "SELEC 1"] {
            assert!(matches!(sql_to_plan(sql, &catalog()), Err(SubstraitError::Sql(_))), "{sql}");
        }
    }
}
