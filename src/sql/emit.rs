//! Lowering a `RequestPlan` to one SELECT, asking the dialect profile at
//! each choice. Nothing is decided here: the plan says which components
//! give the keys, how each is read and what a missing value is.
//!
//! Direct aggregation (`Combine::Single`, no to-many join):
//! ```text
//! SELECT [bucket AS "e.col__grain",] group cols AS "e.col", agg(measure) AS "metric"
//! FROM anchor LEFT JOIN … ON …
//! WHERE filters [AND EXISTS (semi-join)]  GROUP BY …  ORDER BY …  LIMIT n
//! ```
//! Deduplicated aggregation (a to-many join repeats anchor rows): the same
//! FROM/WHERE first reduced to one row per (anchor identity, keys), then
//! aggregated:
//! ```text
//! SELECT "sb_rows"."sb_k0" AS "p.category", agg("sb_rows"."sb_m") AS "metric"
//! FROM (SELECT DISTINCT anchor.id AS "sb_id0", key AS "sb_k0", measure AS "sb_m" FROM … WHERE …) AS "sb_rows"
//! GROUP BY "sb_rows"."sb_k0" ORDER BY … LIMIT n
//! ```
//! `Combine::Joined`: one CTE per component (`sb_m<i>`: keys `sb_k<j>`,
//! value `sb_v`); the union of the key sources' keys LEFT JOINs each read
//! component NULL-safely, and the output metrics are expressions over the
//! `sb_v`s. (No FULL JOIN: MySQL has none, and the key union reads the same
//! everywhere.)

use std::collections::HashMap;

use std::sync::Arc;

use super::ast::{self, Cte, Expr, Item, Join, Limit, Name, Op, OrderKey, Query, Relation, Select, Type};
use super::dialect::{BooleanTest, Like, LimitStyle, Median, NullSafeEq, NullsLast, RecursiveCte};
use super::{CompiledSql, Dialect, Percentile};
use crate::ir::{Condition, Derived, OutputExpr, OutputRef, Transform, Value};
use crate::model::{Aggregation, ArithOp, CumulativeWindow, FilterOp, Grain, Interval, MeasureExpr, MeasureOperand, PeriodAgg, TypeClass, WindowChoice};
use crate::plan::{scans, AggregationStrategy, Align, Combine, ComponentPlan, ConversionCheck, CountForm, JoinKind, JoinStep, Missing, PlannedFilter, Read, RequestPlan, SemiJoin, SemiJoinForm, SpineKeys, TimeBucket};

const ROWS: &str = "sb_rows";

/// A feature the target engine has no exact form of.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Unsupported {
    pub dialect: &'static str,
    pub feature: String,
    /// The computed column whose SQL the dialect's parser cannot read: the
    /// model's expression is at fault, not the request.
    pub model_expression: Option<crate::model::ColumnRef>,
}

impl Unsupported {
    pub fn new(dialect: &'static str, feature: impl Into<String>) -> Self {
        Unsupported { dialect, feature: feature.into(), model_expression: None }
    }
}

impl std::fmt::Display for Unsupported {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} has no exact {}", self.dialect, self.feature)
    }
}

/// A plan lowered to its AST and parameters once; the text is rendered per
/// limit (the engine runs one row more than the answer shows, to learn
/// whether the limit cut rows off).
#[derive(Clone, Debug)]
pub struct Lowered<'p> {
    query: Query<'p>,
    params: Vec<Value>,
    dialect: &'static Dialect,
    limit: u32,
}

impl Lowered<'_> {
    /// The text's buffer, sized up front: formatting into an empty String
    /// doubles it a dozen times for a statement of a few kilobytes.
    const CAPACITY: usize = 4096;

    /// The SQL text with the plan's own limit.
    pub fn compiled(&self) -> CompiledSql {
        self.with_limit(self.limit)
    }

    /// The SQL text with another limit; nothing else differs.
    pub fn with_limit(&self, limit: u32) -> CompiledSql {
        let sql = if limit == self.limit {
            super::render::pretty_query(&self.query, self.dialect.quote, Self::CAPACITY)
        } else {
            let mut q = self.query.clone();
            q.limit = Some(limit_of(self.dialect, limit));
            super::render::pretty_query(&q, self.dialect.quote, Self::CAPACITY)
        };
        CompiledSql { sql, params: self.params.clone(), dialect: self.dialect.name }
    }

    /// [`Lowered::compiled`], keeping the parameters rather than copying them.
    pub fn into_compiled(self) -> CompiledSql {
        let sql = super::render::pretty_query(&self.query, self.dialect.quote, Self::CAPACITY);
        CompiledSql { sql, params: self.params, dialect: self.dialect.name }
    }

    /// The same text as [`Lowered::compiled`], written by sqlparser's own
    /// pretty `Display` of the same statement as sqlparser's AST
    /// (`sql::oracle`): the oracle `render` is tested against.
    #[doc(hidden)]
    pub fn sqlparser_text(&self) -> String {
        format!("{:#}", super::oracle::query(&self.query, self.dialect.quote))
    }
}

/// Lowers and renders `plan` for `dialect`.
pub fn emit(plan: &RequestPlan, dialect: &'static Dialect) -> Result<CompiledSql, Unsupported> {
    lower(plan, dialect).map(Lowered::into_compiled)
}

/// [`emit`], each table read through `filters`.
pub fn emit_filtered(plan: &RequestPlan, dialect: &'static Dialect, filters: Option<&dyn super::TableFilters>) -> Result<CompiledSql, Unsupported> {
    lower_filtered(plan, dialect, filters).map(Lowered::into_compiled)
}

/// Lowers `plan` for `dialect` to an AST with its bound parameters.
pub fn lower<'p>(plan: &'p RequestPlan, dialect: &'static Dialect) -> Result<Lowered<'p>, Unsupported> {
    lower_filtered(plan, dialect, None)
}

/// Every table `plan` reads (its metric filters' plans too), the time
/// spine aside (a calendar, not data anyone's rows are in).
pub fn tables_read(plan: &RequestPlan) -> Vec<&crate::model::TableRef> {
    let mut out: Vec<&crate::model::TableRef> = Vec::new();
    for c in &plan.components {
        let relations = std::iter::once(&c.anchor).chain(c.joins.iter().map(|j| &j.to)).chain(c.semi_joins.iter().flat_map(|s| s.steps.iter().map(|j| &j.to)));
        out.extend(relations.map(|r| &r.table).chain(c.conversion.iter().map(|k| &k.table)));
        for inner in c.all_filters().filter_map(|f| f.by_metric.as_deref()) {
            out.extend(tables_read(inner));
        }
    }
    out.sort();
    out.dedup();
    out
}

/// Row filters by table, parsed for the dialect.
type RowFilters = HashMap<crate::model::TableRef, Arc<sqlparser::ast::Expr>>;

/// The row filters of the tables `plan` reads, parsed for `dialect`.
fn parse_rows(plan: &RequestPlan, dialect: &'static Dialect, filters: Option<&dyn super::TableFilters>) -> Result<Arc<RowFilters>, Unsupported> {
    let mut rows = HashMap::new();
    let Some(filters) = filters else { return Ok(Arc::new(rows)) };
    for t in tables_read(plan) {
        let Some(sql) = filters.condition(t, dialect.quote) else { continue };
        let e = super::build::parse_expression(&sql, dialect)
            .map_err(|why| Unsupported::new(dialect.name, format!("reading of `{t}` under its row filter (the filter is not one {} expression: {why})", dialect.name)))?;
        rows.insert(t.clone(), e);
    }
    Ok(Arc::new(rows))
}

/// [`lower`], each table read through `filters`.
pub fn lower_filtered<'p>(plan: &'p RequestPlan, dialect: &'static Dialect, filters: Option<&dyn super::TableFilters>) -> Result<Lowered<'p>, Unsupported> {
    if dialect.like == Like::Unsupported && plan.components.iter().flat_map(ComponentPlan::all_filters).any(|f| matches!(f.op, FilterOp::Like | FilterOp::NotLike)) {
        return Err(Unsupported::new(dialect.name, "case-sensitive LIKE"));
    }
    // A metric filter's plan is written inside a filter, which cannot
    // fail: what it needs is checked here first.
    for inner in plan.components.iter().flat_map(ComponentPlan::all_filters).filter_map(|f| f.by_metric.as_deref()) {
        // The inner answer stands inside the filter's subquery: its WITH too.
        if lower(inner, dialect)?.query.with.is_some() && !dialect.with_in_subquery {
            return Err(Unsupported::new(dialect.name, "metric filter on a metric answered in parts (its CTEs would stand inside a subquery, where a WITH cannot)"));
        }
    }
    let rows = parse_rows(plan, dialect, filters)?;
    let mut e = Emitter { dialect, params: Vec::new(), plan, computed: parse_computed(plan, dialect)?, rows, spine_columns: spine_columns(plan) };
    let query = answer(&mut e)?;
    Ok(Lowered { query, params: e.params, dialect, limit: plan.limit })
}

/// The whole answer of `e.plan`, ordered and limited.
fn answer<'p>(e: &mut Emitter<'p>) -> Result<Query<'p>, Unsupported> {
    let plan = e.plan;
    Ok(match &plan.combine {
        Combine::Single => match plan.components.first() {
            Some(c) => select(e, c, Naming::Output)?,
            None => return Err(Unsupported::new(e.dialect.name, "request without a metric")),
        },
        Combine::OneScan => shared_select(e, &plan.scan_members(0), Naming::Output)?,
        Combine::Joined { key_sources, keys_end, reads } => combined(e, key_sources, *keys_end, reads)?,
    })
}

fn limit_of(dialect: &Dialect, n: u32) -> Limit {
    match dialect.limit {
        LimitStyle::Limit => Limit::Limit(u64::from(n)),
        LimitStyle::Top => Limit::Top(u64::from(n)),
        LimitStyle::FetchFirst => Limit::FetchFirst(u64::from(n)),
    }
}

/// How a SELECT names its columns.
#[derive(Clone, Copy, PartialEq)]
enum Naming {
    /// The output names, with ORDER BY and LIMIT: a whole answer.
    Output,
    /// `sb_k<i>` and `sb_v`, unordered: one component of several.
    Internal,
}

fn combined<'p>(e: &mut Emitter<'p>, key_sources: &[usize], keys_end: Option<usize>, reads: &'p [Read]) -> Result<Query<'p>, Unsupported> {
    let plan = e.plan;
    // A component writes at most four CTEs; sized once, as each holds a
    // whole query by value.
    let mut ctes: Vec<Cte> = Vec::with_capacity(4 * plan.components.len());
    let mut recursive = false;
    for (i, c) in plan.components.iter().enumerate() {
        match &c.transform {
            Transform::Cumulative(window) => {
                recursive = true;
                ctes.extend(cumulative(e, c, *window, i)?);
            }
            Transform::DailyCumulative(window, period_agg) => ctes.extend(daily_cumulative(e, c, *window, *period_agg, i)?),
            Transform::Converted(_) if c.conversion.as_ref().is_some_and(|x| x.credit.is_some()) => ctes.extend(credited_conversions(e, c, i)?),
            // A component sharing another's scan is read from that scan's CTE.
            _ if plan.scan_host(i) != i => {}
            _ if plan.scan_members(i).len() > 1 => {
                ctes.push(Cte { name: Name::Indexed("sb_m", i), columns: Vec::new(), query: shared_select(e, &plan.scan_members(i), Naming::Internal)? })
            }
            _ => ctes.push(Cte { name: Name::Indexed("sb_m", i), columns: Vec::new(), query: select(e, c, Naming::Internal)? }),
        }
    }
    // Each scan is read once, through its host.
    let hosts = |indices: &mut dyn Iterator<Item = usize>| {
        let mut out: Vec<usize> = Vec::new();
        for h in indices.map(|i| plan.scan_host(i)) {
            if !out.contains(&h) {
                out.push(h);
            }
        }
        out
    };
    let key_sources = hosts(&mut key_sources.iter().copied());
    let read_scans = hosts(&mut reads.iter().map(|r| r.component));
    let n_keys = plan.key_count();
    let key_cols: Vec<Name> = (0..n_keys).map(|k| Name::Indexed("sb_k", k)).collect();
    let (from, joins, key_exprs): (Relation, Vec<Join>, Vec<Expr>) = if n_keys == 0 {
        // Ungrouped: every component is one row.
        let mut read = read_scans.iter().map(|&h| Name::Indexed("sb_m", h));
        let first = read.next().unwrap_or(Name::Indexed("sb_m", 0));
        let joins = read.map(|name| ast::cross_join(ast::cte_ref(name))).collect();
        (ast::cte_ref(first), joins, Vec::new())
    } else {
        let key_select = |e: &mut Emitter<'p>, m: usize| {
            let component = Name::Indexed("sb_m", m);
            let on_spine = plan.components.get(m).and_then(|c| Some((&c.transform, c.spine.as_ref()?, c.time.as_ref()?)));
            match on_spine {
                Some((Transform::Plain, spine, time)) => spine_keys(e, spine, time, None, component, &key_cols),
                Some((Transform::ToGrainKeys(period), spine, time)) => spine_keys(e, spine, time, Some(*period), component, &key_cols),
                _ => ast::query(Select {
                    projection: key_cols.iter().map(|&k| Item::Expr(ast::column(component, k))).collect(),
                    ..Select::from(ast::cte_ref(component))
                }),
            }
        };
        let sources: Vec<Query> = key_sources.iter().map(|&m| key_select(e, m)).collect();
        let mut sources = sources.into_iter();
        let Some(first) = sources.next() else {
            return Err(Unsupported::new(e.dialect.name, "answer without keys"));
        };
        let keys = sources.fold(first, ast::union);
        let keys = match keys_end {
            None => keys,
            Some(end) => keys_up_to_end(&key_cols, keys, end),
        };
        let joins = read_scans
            .iter()
            .map(|&h| {
                let component = Name::Indexed("sb_m", h);
                let class = plan.components.get(h).and_then(|c| c.time.as_ref()).map_or(TypeClass::Unknown, |t| t.class);
                // A shared scan holds plain components only, read at the same keys.
                let align = reads.iter().find(|r| r.component == h).map_or(Align::SameKeys, |r| r.align);
                let on = key_cols
                    .iter()
                    .enumerate()
                    .map(|(k, &col)| match align {
                        // The value of the period's first bucket: match the key truncated to the period.
                        Align::PeriodStart(period) if k == 0 => ast::binary(
                            ast::column(component, col),
                            Op::Eq,
                            e.bucket_expr(ast::column("sb_keys", col), period, class),
                        ),
                        _ => e.null_safe_eq(ast::column("sb_keys", col), ast::column(component, col)),
                    })
                    .collect();
                ast::left_join(ast::cte_ref(component), ast::and_all(on).unwrap_or_else(|| ast::number("1")))
            })
            .collect();
        let exprs = key_cols.iter().map(|&k| ast::column("sb_keys", k)).collect();
        (ast::derived(keys, "sb_keys"), joins, exprs)
    };
    let mut columns: Vec<(Expr, Name)> = key_exprs.into_iter().zip(plan.key_names().map(Name::Str)).collect();
    columns.extend(plan.outputs.iter().map(|o| (e.output(&o.expr, reads), Name::Str(&o.name))));
    let order_by = e.order_by(&columns);
    // A row some read component computed over fewer than k people is
    // withheld whole; a component with no row there (NULL) counted nobody.
    let floors = reads.iter().filter_map(|r| Some((r.component, plan.components.get(r.component)?.group_floor.as_ref()?)));
    let small_groups_out = floors
        .flat_map(|(i, f)| {
            (0..f.owners.len()).map(move |j| {
                let n = ast::column(("sb_m", i), ("sb_n", j));
                ast::nested(ast::binary(ast::is_null(n.clone()), Op::Or, at_least(n, f.k)))
            })
        })
        .collect();
    let outer = ast::ordered(
        Select {
            projection: columns.into_iter().map(|(x, name)| ast::aliased(x, name)).collect(),
            joins,
            selection: ast::and_all(small_groups_out),
            ..Select::from(from)
        },
        order_by,
        Some(limit_of(e.dialect, plan.limit)),
    );
    if recursive {
        match e.dialect.recursive_cte {
            RecursiveCte::Unsupported => {
                return Err(Unsupported::new(e.dialect.name, "time spine (recursive query without a depth limit)"))
            }
            RecursiveCte::WithoutColumns => ctes.iter_mut().for_each(|c| c.columns.clear()),
            RecursiveCte::WithColumns => {}
        }
    }
    Ok(ast::with_ctes(ctes, recursive, outer))
}

/// `COALESCE(value, v)`.
fn coalesce(value: Expr<'_>, v: i64) -> Expr<'_> {
    ast::function("coalesce", vec![value, ast::number(v.to_string())], false)
}

/// A time-spine component's keys: the spine's buckets (as the request's
/// time filters leave them) with the groups the component has rows for in
/// each. `join_to_timespine` (`start: None`): every bucket, one without rows
/// a key whose groups are NULL. `offset_to_grain` under `periods:
/// any_input` (`start: Some(period)`): the buckets whose period starts with
/// a bucket the component has rows for, as MetricFlow joins its spine.
fn spine_keys<'p>(e: &mut Emitter<'p>, spine: &'p SpineKeys, time: &TimeBucket, start: Option<Grain>, component: Name<'p>, key_cols: &[Name<'p>]) -> Query<'p> {
    let periods = spine_select(e, spine, |e, day| e.bucket_expr(day, time.grain, time.class), "sb_k0");
    let mut projection = vec![Item::Expr(ast::column("sb_periods", "sb_k0"))];
    projection.extend(key_cols.iter().skip(1).map(|&k| Item::Expr(ast::column(component, k))));
    let bucket = ast::column("sb_periods", "sb_k0");
    let join = match start {
        None => ast::left_join(ast::cte_ref(component), ast::binary(bucket, Op::Eq, ast::column(component, "sb_k0"))),
        Some(period) => {
            let start = e.bucket_expr(bucket, period, time.class);
            ast::inner_join(ast::cte_ref(component), ast::binary(ast::column(component, "sb_k0"), Op::Eq, start))
        }
    };
    ast::query(Select { projection, joins: vec![join], ..Select::from(ast::derived(periods, "sb_periods")) })
}

/// The moved keys that do not lie past the end of the data: a bucket is
/// kept when the unmoved rows (`sb_m<end>`) have one at or after it; the
/// NULL bucket stays.
fn keys_up_to_end<'p>(key_cols: &[Name<'p>], keys: Query<'p>, end: usize) -> Query<'p> {
    let time = ast::column("sb_moved", "sb_k0");
    let end_table = Name::Indexed("sb_m", end);
    let not_past = ast::exists(ast::query(Select {
        projection: vec![Item::Expr(ast::number("1"))],
        selection: Some(ast::binary(ast::column(end_table, "sb_k0"), Op::GtEq, time.clone())),
        ..Select::from(ast::cte_ref(end_table))
    }));
    ast::query(Select {
        projection: key_cols.iter().map(|&k| Item::Expr(ast::column("sb_moved", k))).collect(),
        selection: Some(ast::binary(ast::is_null(time), Op::Or, not_past)),
        ..Select::from(ast::derived(keys, "sb_moved"))
    })
}

/// A cumulative component as three CTEs: its rows (`sb_r<i>`: group keys
/// `sb_g<j>`, value `sb_m`, time `sb_t`), a recursive time spine of every
/// bucket from the first row's to the last's (`sb_s<i>`: `sb_b`), and the
/// aggregate of the rows inside each bucket's window (`sb_m<i>`).
fn cumulative<'p>(e: &mut Emitter<'p>, c: &'p ComponentPlan, window: CumulativeWindow, i: usize) -> Result<Vec<Cte<'p>>, Unsupported> {
    let Some(t) = c.time.as_ref() else {
        return Err(Unsupported::new(e.dialect.name, "cumulative metric without a time grain"));
    };
    let (r, s) = (Name::Indexed("sb_r", i), Name::Indexed("sb_s", i));
    let owners = owners_of(c);
    let rows = window_rows(e, c, t);

    let row_time = ast::column(r, "sb_t");
    let one_bucket = Interval { count: 1, unit: t.grain };
    let first = ast::query(Select {
        projection: vec![
            ast::aliased(e.bucket_expr(ast::function("min", vec![row_time.clone()], false), t.grain, t.class), "sb_b"),
            ast::aliased(ast::function("max", vec![row_time.clone()], false), "sb_end"),
        ],
        ..Select::from(ast::cte_ref(r))
    });
    let next = e.as_bucket_type(e.add_interval(ast::column(s, "sb_b"), one_bucket, 1, t.class), t.class);
    let step = ast::query(Select {
        projection: vec![ast::aliased(next.clone(), "sb_b"), ast::aliased(ast::column(s, "sb_end"), "sb_end")],
        selection: Some(ast::binary(next, Op::LtEq, ast::column(s, "sb_end"))),
        ..Select::from(ast::cte_ref(s))
    });
    let spine = ast::union_all(first, step);

    let bucket = ast::column(s, "sb_b");
    let end = e.add_interval(bucket.clone(), one_bucket, 1, t.class);
    let mut window_conditions = vec![ast::binary(row_time.clone(), Op::Lt, end.clone())];
    match window {
        CumulativeWindow::AllTime => {}
        CumulativeWindow::Rolling(w) => {
            window_conditions.push(ast::binary(row_time, Op::GtEq, e.add_interval(end, w, -1, t.class)))
        }
        CumulativeWindow::GrainToDate(g) => {
            window_conditions.push(ast::binary(row_time, Op::GtEq, e.bucket_expr(bucket.clone(), g, t.class)))
        }
    }
    let mut columns = vec![ast::aliased(bucket.clone(), "sb_k0")];
    let mut group_by = vec![bucket];
    for j in 0..e.plan.group_by.len() {
        let g = ast::column(r, ("sb_g", j));
        columns.push(ast::aliased(g.clone(), ("sb_k", j + 1)));
        group_by.push(g);
    }
    columns.push(ast::aliased(e.aggregate(c, ast::column(r, "sb_m"))?, "sb_v"));
    // The people inside each bucket's window.
    columns.extend(people_counts(r, owners.len()).into_iter().enumerate().map(|(j, n)| ast::aliased(n, ("sb_n", j))));
    let window_join = ast::and_all(window_conditions).unwrap_or_else(|| ast::number("1"));
    let aggregate = ast::query(Select {
        projection: columns,
        joins: vec![ast::inner_join(ast::cte_ref(r), window_join)],
        group_by,
        ..Select::from(ast::cte_ref(s))
    });
    Ok(vec![
        Cte { name: r, columns: Vec::new(), query: rows },
        Cte { name: s, columns: vec![Name::Str("sb_b"), Name::Str("sb_end")], query: spine },
        Cte { name: Name::Indexed("sb_m", i), columns: Vec::new(), query: aggregate },
    ])
}

/// The rows a cumulative component accumulates: group keys `sb_g<j>`,
/// value `sb_m`, time `sb_t` (and the people counted, under a group floor),
/// one per anchor identity and keys when a to-many join repeats rows.
fn window_rows<'p>(e: &mut Emitter<'p>, c: &'p ComponentPlan, t: &'p TimeBucket) -> Query<'p> {
    let operand = e.measure_operand(c, &c.anchor.alias);
    let (from, joins, selection) = e.row_source(c);
    let mut projection = e.identity_items(c);
    projection.extend(e.plan.group_by.iter().enumerate().map(|(j, g)| {
        ast::aliased(ast::column(&g.column.entity, &g.column.column), ("sb_g", j))
    }));
    projection.push(ast::aliased(operand, "sb_m"));
    projection.push(ast::aliased(ast::column(&t.dimension.entity, &t.dimension.column), "sb_t"));
    projection.extend(owner_items(owners_of(c)));
    ast::query(Select { distinct: c.aggregation.identity().is_some(), projection, joins, selection, ..Select::from(from) })
}

/// A cumulative computed per day of the time spine (MetricFlow's way) as
/// five CTEs: its rows (`sb_r<i>`, as `window_rows`); the spine's days the
/// time filters keep (`sb_s<i>`: `sb_b`); the value of each day whose window
/// holds rows (`sb_d<i>`: `sb_b`, group keys `sb_g<j>`, `sb_v`: an INNER
/// join, so a day with an empty window has no value); and one value per
/// bucket and keys (`sb_m<i>`), the average of its days' values or the value
/// of its first or last day (`sb_p<i>` picks that day). Windows compare
/// whole days: a row's day is in the window of day `d` when it is at most
/// `d` and, for a rolling window, after `d` minus the window.
fn daily_cumulative<'p>(e: &mut Emitter<'p>, c: &'p ComponentPlan, window: CumulativeWindow, period_agg: PeriodAgg, i: usize) -> Result<Vec<Cte<'p>>, Unsupported> {
    let (Some(t), Some(spine)) = (c.time.as_ref(), c.spine.as_ref()) else {
        return Err(Unsupported::new(e.dialect.name, "cumulative metric per day without a time grain and a time spine"));
    };
    if c.group_floor.is_some() {
        return Err(Unsupported::new(e.dialect.name, "cumulative metric per day over quasi-identifiers under min_group_size"));
    }
    let (r, s, d, p, m) = (Name::Indexed("sb_r", i), Name::Indexed("sb_s", i), Name::Indexed("sb_d", i), Name::Indexed("sb_p", i), Name::Indexed("sb_m", i));
    let rows = window_rows(e, c, t);
    let days = spine_select(e, spine, |_, day| day, "sb_b");

    let day = ast::column(s, "sb_b");
    // The spine's days are DATEs: where dates compare as text, each row's
    // day is written as a DATE too.
    let row_day_class = if e.dialect.dates_as_text { TypeClass::Date } else { t.class };
    let row_day = e.bucket_expr(ast::column(r, "sb_t"), Grain::Day, row_day_class);
    let mut in_window = vec![ast::binary(row_day.clone(), Op::LtEq, day.clone())];
    match window {
        CumulativeWindow::AllTime => {}
        CumulativeWindow::Rolling(w) => {
            in_window.push(ast::binary(row_day, Op::Gt, e.add_interval(day.clone(), w, -1, TypeClass::Date)))
        }
        CumulativeWindow::GrainToDate(g) => in_window.push(ast::binary(row_day, Op::GtEq, e.bucket_expr(day.clone(), g, TypeClass::Date))),
    }
    let n_groups = e.plan.group_by.len();
    let groups = |table: Name<'p>| (0..n_groups).map(|j| ast::column(table, ("sb_g", j))).collect::<Vec<_>>();
    let mut projection = vec![ast::aliased(day.clone(), "sb_b")];
    projection.extend(groups(r).into_iter().enumerate().map(|(j, g)| ast::aliased(g, ("sb_g", j))));
    projection.push(ast::aliased(e.aggregate(c, ast::column(r, "sb_m"))?, "sb_v"));
    let daily = ast::query(Select {
        projection,
        joins: vec![ast::inner_join(ast::cte_ref(r), ast::and_all(in_window).unwrap_or_else(|| ast::number("1")))],
        group_by: std::iter::once(day).chain(groups(r)).collect(),
        ..Select::from(ast::cte_ref(s))
    });

    // Each day's bucket, typed as the component's time dimension is.
    let bucket = |e: &Emitter<'p>, table: Name<'p>| e.bucket_expr(ast::column(table, "sb_b"), t.grain, t.class);
    let keys = |e: &Emitter<'p>, table: Name<'p>| {
        let mut k = vec![ast::aliased(bucket(e, table), "sb_k0")];
        k.extend(groups(table).into_iter().enumerate().map(|(j, g)| ast::aliased(g, ("sb_k", j + 1))));
        k
    };
    let group_by = |e: &Emitter<'p>, table: Name<'p>| std::iter::once(bucket(e, table)).chain(groups(table)).collect::<Vec<_>>();
    let mut ctes = vec![
        Cte { name: r, columns: Vec::new(), query: rows },
        Cte { name: s, columns: Vec::new(), query: days },
        Cte { name: d, columns: Vec::new(), query: daily },
    ];
    let per_bucket = match period_agg {
        PeriodAgg::Average => {
            let value = ast::column(d, "sb_v");
            let value = if e.dialect.avg_as_double { ast::cast(value, Type::Named(e.dialect.double_type)) } else { value };
            let mut projection = keys(e, d);
            projection.push(ast::aliased(ast::function("avg", vec![value], false), "sb_v"));
            ast::query(Select { projection, group_by: group_by(e, d), ..Select::from(ast::cte_ref(d)) })
        }
        PeriodAgg::First | PeriodAgg::Last => {
            let pick = if period_agg == PeriodAgg::First { "min" } else { "max" };
            let mut projection = keys(e, d);
            projection.push(ast::aliased(ast::function(pick, vec![ast::column(d, "sb_b")], false), "sb_pick"));
            let picked = ast::query(Select { projection, group_by: group_by(e, d), ..Select::from(ast::cte_ref(d)) });
            ctes.push(Cte { name: p, columns: Vec::new(), query: picked });
            let mut on = vec![ast::binary(ast::column(d, "sb_b"), Op::Eq, ast::column(p, "sb_pick"))];
            on.extend((0..n_groups).map(|j| e.null_safe_eq(ast::column(d, ("sb_g", j)), ast::column(p, ("sb_k", j + 1)))));
            let mut projection: Vec<Item> =
                (0..=n_groups).map(|k| Item::Expr(ast::column(p, ("sb_k", k)))).collect();
            projection.push(ast::aliased(ast::column(d, "sb_v"), "sb_v"));
            ast::query(Select {
                projection,
                joins: vec![ast::inner_join(ast::cte_ref(d), ast::and_all(on).unwrap_or_else(|| ast::number("1")))],
                ..Select::from(ast::cte_ref(p))
            })
        }
    };
    ctes.push(Cte { name: m, columns: Vec::new(), query: per_bucket });
    Ok(ctes)
}

/// Credited conversions (MetricFlow's conversion metrics) as four CTEs:
/// the base rows (`sb_r<i>`: answer keys `sb_k<j>`, conversion key columns
/// `sb_e<j>`, day `sb_bd`, time `sb_bt`); the conversion rows (`sb_c<i>`: identity
/// `sb_id<j>`, key columns `sb_e<j>`, day `sb_cd`, measure operand `sb_m`);
/// each conversion row beside every base row it may be credited to (equal
/// keys, a base day on or before its day and, with a window, after its day
/// minus the window), ranked latest base day first, then earliest base time
/// (`sb_j<i>`); and the
/// measure over the credited (first-ranked) rows per answer keys (`sb_m<i>`).
fn credited_conversions<'p>(e: &mut Emitter<'p>, c: &'p ComponentPlan, i: usize) -> Result<Vec<Cte<'p>>, Unsupported> {
    let Some((conv, credit)) = c.conversion.as_ref().and_then(|x| Some((x, x.credit.as_ref()?))) else {
        return Err(Unsupported::new(e.dialect.name, "credited conversions without a conversion"));
    };
    if c.group_floor.is_some() {
        return Err(Unsupported::new(e.dialect.name, "credited conversions over quasi-identifiers under min_group_size"));
    }
    let (r, cv, j, m) = (Name::Indexed("sb_r", i), Name::Indexed("sb_c", i), Name::Indexed("sb_j", i), Name::Indexed("sb_m", i));
    let anchor = c.anchor.alias.as_str();

    let keys = answer_keys(e, c);
    let n_keys = keys.len();
    let (from, joins, selection) = e.row_source(c);
    let mut projection: Vec<Item> = keys.into_iter().enumerate().map(|(k, (x, _))| ast::aliased(x, ("sb_k", k))).collect();
    projection.extend(conv.keys.iter().enumerate().map(|(k, (base, _))| ast::aliased(ast::column(anchor, base), ("sb_e", k))));
    let base_day = e.bucket_expr(ast::column(anchor, &conv.base_time), Grain::Day, conv.base_class);
    projection.push(ast::aliased(base_day, "sb_bd"));
    projection.push(ast::aliased(ast::column(anchor, &conv.base_time), "sb_bt"));
    let base_rows = ast::query(Select { projection, joins, selection, ..Select::from(from) });

    let mut projection: Vec<Item> =
        credit.identity.iter().enumerate().map(|(k, col)| ast::aliased(ast::column(&conv.alias, col), ("sb_id", k))).collect();
    projection.extend(conv.keys.iter().enumerate().map(|(k, (_, col))| ast::aliased(ast::column(&conv.alias, col), ("sb_e", k))));
    projection.push(ast::aliased(e.bucket_expr(ast::column(&conv.alias, &conv.time), Grain::Day, credit.class), "sb_cd"));
    projection.push(ast::aliased(e.measure_operand(c, &conv.alias), "sb_m"));
    let selection = ast::and_all(conv.filters.iter().map(|f| e.filter(f)).collect());
    let conversion_rows =
        ast::query(Select { projection, selection, ..Select::from(e.table(&conv.table, &conv.alias, &conv.computed)) });

    let (base_day, conv_day) = (ast::column(r, "sb_bd"), ast::column(cv, "sb_cd"));
    let mut on: Vec<Expr> = (0..conv.keys.len())
        .map(|k| ast::binary(ast::column(r, ("sb_e", k)), Op::Eq, ast::column(cv, ("sb_e", k))))
        .collect();
    on.push(ast::binary(base_day.clone(), Op::LtEq, conv_day.clone()));
    if let Some(w) = conv.window {
        on.push(ast::binary(base_day.clone(), Op::Gt, e.add_interval(conv_day, w, -1, credit.class)));
    }
    let answer_keys = |table: Name<'p>| (0..n_keys).map(|k| ast::column(table, ("sb_k", k))).collect::<Vec<_>>();
    // The latest base day; within it, the earliest base row (MetricFlow
    // leaves that tie to the engine's sort, which keeps the rows' order).
    let mut order = vec![ast::order_key(base_day, true, None), ast::order_key(ast::column(r, "sb_bt"), false, None)];
    order.extend(answer_keys(r).into_iter().map(|k| ast::order_key(k, false, None)));
    let partition = (0..credit.identity.len()).map(|k| ast::column(cv, ("sb_id", k))).collect();
    let mut projection: Vec<Item> =
        answer_keys(r).into_iter().enumerate().map(|(k, x)| ast::aliased(x, ("sb_k", k))).collect();
    projection.push(ast::aliased(ast::column(cv, "sb_m"), "sb_m"));
    projection.push(ast::aliased(ast::row_number(partition, order), "sb_rank"));
    let pairs = ast::query(Select {
        projection,
        joins: vec![ast::inner_join(ast::cte_ref(r), ast::and_all(on).unwrap_or_else(|| ast::number("1")))],
        ..Select::from(ast::cte_ref(cv))
    });

    let mut projection: Vec<Item> =
        answer_keys(j).into_iter().enumerate().map(|(k, x)| ast::aliased(x, ("sb_k", k))).collect();
    projection.push(ast::aliased(e.aggregate(c, ast::column(j, "sb_m"))?, "sb_v"));
    let credited = ast::query(Select {
        projection,
        selection: Some(ast::binary(ast::column(j, "sb_rank"), Op::Eq, ast::number("1"))),
        group_by: answer_keys(j),
        ..Select::from(ast::cte_ref(j))
    });
    Ok(vec![
        Cte { name: r, columns: Vec::new(), query: base_rows },
        Cte { name: cv, columns: Vec::new(), query: conversion_rows },
        Cte { name: j, columns: Vec::new(), query: pairs },
        Cte { name: m, columns: Vec::new(), query: credited },
    ])
}

/// A component's answer keys over its rows, with their output names, in
/// output order: the time bucket, then the group-bys.
fn answer_keys<'p>(e: &Emitter<'p>, c: &'p ComponentPlan) -> Vec<(Expr<'p>, Name<'p>)> {
    let plan = e.plan;
    let mut keys: Vec<(Expr, Name)> = Vec::new();
    if let (Some(t), Some(out)) = (&c.time, &plan.time) {
        let bucket = e.time_bucket(t);
        let bucket = match (out.dates_widened, t.class) {
            (true, TypeClass::Date) => ast::from_template(e.dialect.timestamp_of, e.dialect, bucket),
            _ => bucket,
        };
        keys.push((bucket, Name::Str(&out.name)));
    }
    for g in &plan.group_by {
        let column = ast::column(&g.column.entity, &g.column.column);
        let key = match g.derived {
            Some(Derived::Part(part)) => ast::from_template((e.dialect.date_part)(part), e.dialect, column),
            Some(Derived::Bucket(grain)) => e.bucket_expr(column, grain, g.class),
            None => column,
        };
        keys.push((key, Name::Str(&g.output_name)));
    }
    keys
}

/// `SELECT DISTINCT day_to(spine.column) AS alias FROM spine WHERE the
/// request's time filters`: the spine's days, or its periods.
fn spine_select<'p>(e: &mut Emitter<'p>, spine: &'p SpineKeys, day_to: impl FnOnce(&Emitter<'p>, Expr<'p>) -> Expr<'p>, alias: &'static str) -> Query<'p> {
    let selection = ast::and_all(spine.filters.iter().map(|f| e.filter(f)).collect());
    let day = day_to(e, ast::column("sb_spine", &spine.column));
    ast::query(Select {
        distinct: true,
        projection: vec![ast::aliased(day, alias)],
        selection,
        ..Select::from(ast::table(&spine.table.schema, &spine.table.table, "sb_spine"))
    })
}

/// One component's SELECT.
fn select<'p>(e: &mut Emitter<'p>, c: &'p ComponentPlan, naming: Naming) -> Result<Query<'p>, Unsupported> {
    let plan = e.plan;
    let anchor = &c.anchor.alias;

    let mut keys = answer_keys(e, c);
    let metric_name = match naming {
        Naming::Output => Name::Str(plan.outputs.first().map_or(&c.metric, |o| &o.name)),
        Naming::Internal => {
            for (i, k) in keys.iter_mut().enumerate() {
                k.1 = Name::Indexed("sb_k", i);
            }
            Name::Str("sb_v")
        }
    };
    if let AggregationStrategy::DistinctBranch { step } = c.aggregation {
        return branch_select(e, c, step, keys, metric_name, naming);
    }
    let operand = e.measure_operand(c, anchor);
    let (from, joins, selection) = e.row_source(c);
    let deduplicated = c.aggregation.identity().is_some();

    let owners = owners_of(c);
    let (outer_keys, aggregate, people, from, joins, selection): (_, _, Vec<Expr>, _, _, _) = if !deduplicated && c.non_additive.is_none() {
        let aggregate = e.aggregate(c, operand)?;
        let people = owners.iter().map(|(alias, id)| ast::function("count", vec![ast::column(alias, id)], true)).collect();
        (keys, aggregate, people, from, joins, selection)
    } else {
        // Rows first (one per anchor identity and keys when a to-many join
        // repeats them; each with its window's last time when non-additive),
        // aggregated after.
        let mut inner = e.identity_items(c);
        inner.extend(keys.iter().enumerate().map(|(i, (k, _))| ast::aliased(k.clone(), ("sb_k", i))));
        inner.push(ast::aliased(operand, "sb_m"));
        // Each owner is reached over to-one joins: one per anchor row, so
        // carrying it adds no row to the deduplicated set.
        inner.extend(owner_items(owners));
        let mut kept = None;
        if let Some(na) = &c.non_additive {
            let time = ast::column(anchor, &na.column);
            let mut partition: Vec<Expr> = c.time.iter().filter_map(|_| keys.first().map(|k| k.0.clone())).collect();
            partition.extend(na.per.iter().map(|p| ast::column(anchor, p)));
            let pick = if na.window == WindowChoice::Last { "max" } else { "min" };
            inner.push(ast::aliased(time.clone(), "sb_t"));
            inner.push(ast::aliased(ast::window_function(pick, time, partition), "sb_w"));
            kept = Some(ast::binary(ast::column(ROWS, "sb_t"), Op::Eq, ast::column(ROWS, "sb_w")));
        }
        let rows = ast::query(Select { distinct: deduplicated, projection: inner, joins, selection, ..Select::from(from) });
        let outer_keys: Vec<(Expr, Name)> = keys.iter().enumerate().map(|(i, &(_, name))| (ast::column(ROWS, ("sb_k", i)), name)).collect();
        let aggregate = e.aggregate(c, ast::column(ROWS, "sb_m"))?;
        let people = people_counts(Name::Str(ROWS), owners.len());
        (outer_keys, aggregate, people, ast::derived(rows, ROWS), Vec::new(), kept)
    };
    let mut columns = outer_keys.clone();
    columns.push((aggregate, metric_name));
    let mut having = None;
    if let Some(floor) = &c.group_floor {
        match naming {
            Naming::Output => having = ast::and_all(people.into_iter().map(|n| at_least(n, floor.k)).collect()),
            // The combined answer drops the row (never reads it as 0 or NULL).
            Naming::Internal => columns.extend(people.into_iter().enumerate().map(|(j, n)| (n, Name::Indexed("sb_n", j)))),
        }
    }
    let group_by = outer_keys.into_iter().map(|(k, _)| k).collect();
    Ok(finish(e, naming, columns, Select { joins, selection, group_by, having, ..Select::from(from) }))
}

/// A component whose one to-many join is reduced first
/// (`AggregationStrategy::DistinctBranch`): the branch's distinct rows of
/// join columns (`sb_j<k>`) and branch keys (`sb_bk<j>`) among those its
/// filters keep, as `sb_fan`, LEFT joined to the anchor's rows (INNER when
/// the branch is filtered); the keys read it there, and the measure is
/// aggregated directly.
/// ```text
/// SELECT sb_fan.sb_bk0 AS "p.container", sum(o.total) FROM orders o
/// LEFT JOIN (SELECT DISTINCT l.orderkey AS sb_j0, p.container AS sb_bk0
///            FROM lineitem l JOIN part p ON …) AS sb_fan ON o.orderkey = sb_fan.sb_j0
/// GROUP BY sb_fan.sb_bk0
/// ```
fn branch_select<'p>(
    e: &mut Emitter<'p>,
    c: &'p ComponentPlan,
    step: usize,
    mut keys: Vec<(Expr<'p>, Name<'p>)>,
    metric_name: Name<'p>,
    naming: Naming,
) -> Result<Query<'p>, Unsupported> {
    const FAN: &str = "sb_fan";
    let plan = e.plan;
    let Some(first) = c.joins.get(step) else {
        return Err(Unsupported::new(e.dialect.name, "reduced branch without its join"));
    };
    let branch = c.branch_of(step);
    let in_branch = |alias: &str| branch.iter().any(|&i| c.joins.get(i).is_some_and(|j| j.to.alias == alias));
    // The branch's distinct rows: join columns, then keys, then filter columns.
    let mut items: Vec<Item> = first.on.iter().enumerate().map(|(k, (_, to))| ast::aliased(ast::column(&first.to.alias, to), ("sb_j", k))).collect();
    let n_time = usize::from(c.time.is_some() && plan.time.is_some());
    for (j, g) in plan.group_by.iter().enumerate() {
        if let Some(key) = keys.get_mut(n_time + j).filter(|_| in_branch(&g.column.entity)) {
            let inner = std::mem::replace(&mut key.0, ast::column(FAN, ("sb_bk", j)));
            items.push(ast::aliased(inner, ("sb_bk", j)));
        }
    }
    // Inside, the branch starts from real rows: a step with evidence is
    // INNER when it joins from a relation with a row for every branch row.
    let mut whole: Vec<&str> = vec![&first.to.alias];
    let mut inner_joins = Vec::new();
    for j in branch.iter().skip(1).filter_map(|&i| c.joins.get(i)) {
        let inner = j.matches.is_some() && whole.contains(&j.from_alias.as_str());
        if inner {
            whole.push(&j.to.alias);
        }
        inner_joins.push(if inner { ast::inner_join(e.relation(j), e.on(j)) } else { ast::left_join(e.relation(j), e.on(j)) });
    }
    // The branch's filters keep its rows before they are reduced (the plan
    // allows only filters a NULL fails, so an anchor row left without any
    // is dropped by the INNER join, as the filter drops it after a join).
    let branch_filters: Vec<Expr> = c.filters.iter().filter(|f| in_branch(&f.alias)).map(|f| e.filter(f)).collect();
    let filtered = !branch_filters.is_empty();
    let reduced = ast::query(Select {
        distinct: true,
        projection: items,
        joins: inner_joins,
        selection: ast::and_all(branch_filters),
        ..Select::from(e.relation(first))
    });

    let (from, mut joins) = {
        let from = e.table(&c.anchor.table, &c.anchor.alias, &c.anchor.computed);
        let outside: Vec<&JoinStep> = c.joins.iter().enumerate().filter(|(i, _)| !branch.contains(i)).map(|(_, j)| j).collect();
        (from, e.joins_of(&outside))
    };
    let on = first.on.iter().enumerate().map(|(k, (from_col, _))| ast::binary(ast::column(&first.from_alias, from_col), Op::Eq, ast::column(FAN, ("sb_j", k)))).collect();
    let on = ast::and_all(on).unwrap_or_else(|| constant(false));
    joins.push(if filtered { ast::inner_join(ast::derived(reduced, FAN), on) } else { ast::left_join(ast::derived(reduced, FAN), on) });
    let mut predicates: Vec<Expr> = c.filters.iter().filter(|f| !in_branch(&f.alias)).map(|f| e.filter(f)).collect();
    predicates.extend(c.any_of.iter().map(|x| e.condition(x)));
    predicates.extend(c.semi_joins.iter().map(|s| e.semi_join(s)));
    let aggregate = e.aggregate(c, e.measure_operand(c, &c.anchor.alias))?;
    let group_by = keys.iter().map(|(k, _)| k.clone()).collect();
    let mut columns = keys;
    columns.push((aggregate, metric_name));
    Ok(finish(e, naming, columns, Select { joins, selection: ast::and_all(predicates), group_by, ..Select::from(from) }))
}

/// `select` with `columns` (expression, name) as its projection, ordered
/// and limited as the whole answer under `Naming::Output`.
fn finish<'p>(e: &Emitter<'p>, naming: Naming, columns: Vec<(Expr<'p>, Name<'p>)>, select: Select<'p>) -> Query<'p> {
    let (order_by, limit) = match naming {
        Naming::Output => (e.order_by(&columns), Some(limit_of(e.dialect, e.plan.limit))),
        Naming::Internal => (Vec::new(), None),
    };
    // ORDER BY is built: the columns move into the projection.
    let projection = columns.into_iter().map(|(x, name)| ast::aliased(x, name)).collect();
    ast::ordered(Select { projection, ..select }, order_by, limit)
}

/// Components sharing one scan (`members`, the host first) as one SELECT:
/// the keys, then each one's aggregate over the rows its own filters keep
/// (`Naming::Internal`: `sb_v<i>` for component `i`) or the answer's
/// outputs computed from those aggregates (`Naming::Output`, ordered and
/// limited). The WHERE keeps the request's filters and, when every member
/// has filters of its own, the rows one of them keeps, so a key appears
/// only where some member has rows, as when each is aggregated apart.
fn shared_select<'p>(e: &mut Emitter<'p>, members: &[usize], naming: Naming) -> Result<Query<'p>, Unsupported> {
    let plan = e.plan;
    let parts: Vec<(usize, &'p ComponentPlan)> = members.iter().filter_map(|&i| Some((i, plan.components.get(i)?))).collect();
    let Some(&(_, host)) = parts.first() else {
        return Err(Unsupported::new(e.dialect.name, "shared scan without a component"));
    };
    let mut keys = answer_keys(e, host);
    if naming == Naming::Internal {
        for (i, k) in keys.iter_mut().enumerate() {
            k.1 = Name::Indexed("sb_k", i);
        }
    }
    // Written in text order, so positional placeholders bind in order: the
    // aggregates (with their own filters) before the WHERE.
    let mut columns = keys.clone();
    match naming {
        Naming::Internal => {
            for &(i, c) in &parts {
                columns.push((e.scan_aggregate(c)?, Name::Indexed("sb_v", i)));
            }
        }
        Naming::Output => {
            for o in &plan.outputs {
                let leaf = &mut |e: &mut Emitter<'p>, i: usize| match plan.components.get(i) {
                    Some(c) => e.scan_aggregate(c),
                    None => Err(Unsupported::new(e.dialect.name, "output of a component the plan lacks")),
                };
                columns.push((e.arithmetic(&o.expr, leaf)?, Name::Str(&o.name)));
            }
        }
    }
    let (from, joins) = e.relations_of(host);
    let mut predicates = e.shared_predicates(host);
    if parts.iter().all(|(_, c)| scans::own_filters(c).next().is_some() || scans::own_conditions(c).next().is_some()) {
        let kept: Vec<Expr> = parts.iter().filter_map(|(_, c)| e.own_condition(c).map(ast::nested)).collect();
        let mut kept = kept.into_iter();
        if let Some(first) = kept.next() {
            predicates.push(ast::nested(kept.fold(first, |acc, x| ast::binary(acc, Op::Or, x))));
        }
    }
    let group_by = keys.into_iter().map(|(k, _)| k).collect();
    Ok(finish(e, naming, columns, Select { joins, selection: ast::and_all(predicates), group_by, ..Select::from(from) }))
}

/// The column holding component `i`'s value in its scan's CTE.
fn value_name(plan: &RequestPlan, i: usize) -> Name<'static> {
    if plan.scan_members(plan.scan_host(i)).len() > 1 {
        Name::Indexed("sb_v", i)
    } else {
        Name::Str("sb_v")
    }
}

/// The operator of a comparison op (`eq` … `gte`); the others are no
/// comparison and never reach here (`=` stands in).
fn comparison(op: FilterOp) -> Op {
    match op {
        FilterOp::Ne => Op::NotEq,
        FilterOp::Lt => Op::Lt,
        FilterOp::Lte => Op::LtEq,
        FilterOp::Gt => Op::Gt,
        FilterOp::Gte => Op::GtEq,
        _ => Op::Eq,
    }
}

/// `1 = 1` or `1 = 0`: what a predicate with nothing to compare keeps.
fn constant(keep: bool) -> Expr<'static> {
    ast::binary(ast::number("1"), Op::Eq, ast::number(if keep { "1" } else { "0" }))
}

/// The `(alias, identity)` of each entity whose people a component counts
/// (its group floor), none without one.
fn owners_of(c: &ComponentPlan) -> &[(String, String)] {
    c.group_floor.as_ref().map_or(&[], |f| f.owners.as_slice())
}

/// `alias.identity AS sb_o<j>` per owner: the people carried through a row set.
fn owner_items(owners: &[(String, String)]) -> impl Iterator<Item = Item<'_>> + '_ {
    owners.iter().enumerate().map(move |(j, (alias, id))| ast::aliased(ast::column(alias, id), ("sb_o", j)))
}

/// `COUNT(DISTINCT rows.sb_o<j>)` per owner: the people in each group.
fn people_counts<'p>(rows: Name<'p>, owners: usize) -> Vec<Expr<'p>> {
    (0..owners).map(|j| ast::function("count", vec![ast::column(rows, ("sb_o", j))], true)).collect()
}

/// `n >= k`: a group of at least the policy's minimum size.
fn at_least(n: Expr<'_>, k: u32) -> Expr<'_> {
    ast::binary(n, Op::GtEq, ast::number(k.to_string()))
}

struct Emitter<'p> {
    dialect: &'static Dialect,
    params: Vec<Value>,
    plan: &'p RequestPlan,
    /// Computed columns' expressions by their SQL text, parsed for the dialect.
    computed: HashMap<&'p str, Arc<sqlparser::ast::Expr>>,
    /// Row filters by table (`TableFilters`), parsed for the dialect; a
    /// table without one is read whole.
    rows: Arc<RowFilters>,
    /// The custom-grain periods of columns the plan reads (`spine_columns`):
    /// each relation under the alias carries the `k`-th as `sb_cg<k>`.
    spine_columns: Vec<SpineColumn<'p>>,
}

/// A column read at a custom grain: `alias.column`'s period, looked up in
/// the time spine by a LEFT JOIN where the relation is read.
#[derive(Clone, Copy, PartialEq)]
struct SpineColumn<'p> {
    alias: &'p str,
    column: &'p str,
    class: TypeClass,
    grain: &'static crate::model::CustomGrain,
}

/// Every unmoved column the plan buckets at a custom grain: time buckets,
/// group keys and filters. Each becomes a column of its relation, joined
/// from the spine as MetricFlow joins it (`LEFT JOIN spine ON spine.day =
/// CAST(t AS DATE)`), so engines group by a plain column and hash-join the
/// spine once.
fn spine_columns(plan: &RequestPlan) -> Vec<SpineColumn<'_>> {
    let mut out: Vec<SpineColumn> = Vec::new();
    for c in &plan.components {
        if let Some(t) = c.time.as_ref().filter(|t| t.shift.is_none()) {
            if let Grain::Custom(grain) = t.grain {
                out.push(SpineColumn { alias: &t.dimension.entity, column: &t.dimension.column, class: t.class, grain });
            }
        }
        for f in c.all_filters().filter(|f| f.shift.is_none()) {
            if let Some((Grain::Custom(grain), class)) = f.bucket {
                out.push(SpineColumn { alias: &f.alias, column: &f.column, class, grain });
            }
        }
    }
    for g in &plan.group_by {
        if let Some(Derived::Bucket(Grain::Custom(grain))) = g.derived {
            out.push(SpineColumn { alias: &g.column.entity, column: &g.column.column, class: g.class, grain });
        }
    }
    let mut unique: Vec<SpineColumn> = Vec::new();
    for c in out {
        if !unique.contains(&c) {
            unique.push(c);
        }
    }
    unique
}

/// Parses every computed column the plan reads, for `dialect`: one that
/// does not parse fails the whole statement, naming the column.
fn parse_computed<'p>(plan: &'p RequestPlan, dialect: &'static Dialect) -> Result<HashMap<&'p str, Arc<sqlparser::ast::Expr>>, Unsupported> {
    let mut parsed = HashMap::new();
    for c in &plan.components {
        let relations = std::iter::once(&c.anchor).chain(c.joins.iter().map(|j| &j.to)).chain(c.semi_joins.iter().flat_map(|s| s.steps.iter().map(|j| &j.to)));
        let lists = relations.map(|r| (r.entity.as_str(), &r.computed)).chain(c.conversion.iter().map(|k| (k.entity.as_str(), &k.computed)));
        for (entity, list) in lists {
            for (name, sql) in list {
                if parsed.contains_key(sql.as_str()) {
                    continue;
                }
                let e = super::build::parse_expression(sql, dialect).map_err(|why| Unsupported {
                    dialect: dialect.name,
                    feature: format!("reading of computed column `{entity}.{name}` (its expr is not one {} expression: {why})", dialect.name),
                    model_expression: Some(crate::model::ColumnRef { entity: entity.to_string(), column: name.clone() }),
                })?;
                parsed.insert(sql.as_str(), e);
            }
        }
    }
    Ok(parsed)
}

impl<'p> Emitter<'p> {
    fn null_safe_eq(&self, a: Expr<'p>, b: Expr<'p>) -> Expr<'p> {
        match self.dialect.null_safe_eq {
            // Parenthesised: sqlparser (and so DataFusion) reads the right side
            // of IS NOT DISTINCT FROM up to a following AND (`b AND c …`).
            NullSafeEq::IsNotDistinctFrom => ast::nested(Expr::IsNotDistinctFrom(Box::new(a), Box::new(b))),
            NullSafeEq::Spaceship => ast::binary(a, Op::Spaceship, b),
        }
    }

    /// An output metric's value in the combined query: a component is its
    /// scan's value column (`"sb_m<host>"."sb_v"`, or `"sb_v<i>"` in a shared
    /// scan), 0 where the plan says a missing value is 0.
    fn output(&mut self, e: &'p OutputExpr, reads: &[Read]) -> Expr<'p> {
        let plan = self.plan;
        let leaf = &mut |_: &mut Self, i: usize| {
            let host = plan.scan_host(i);
            let value = ast::column(("sb_m", host), value_name(plan, i));
            Ok(match reads.iter().find(|r| r.component == i).and_then(|r| r.missing.value()) {
                Some(v) => coalesce(value, v),
                None => value,
            })
        };
        // The leaf above cannot fail.
        self.arithmetic(e, leaf).unwrap_or_else(|_| constant(false))
    }

    /// An output expression over components, each read by `leaf`: division
    /// is floating-point and NULL on a zero divisor.
    fn arithmetic(&mut self, e: &'p OutputExpr, leaf: &mut dyn FnMut(&mut Self, usize) -> Result<Expr<'p>, Unsupported>) -> Result<Expr<'p>, Unsupported> {
        Ok(match e {
            OutputExpr::Component(i) => leaf(self, *i)?,
            OutputExpr::Number(n) => ast::number(n.as_str()),
            OutputExpr::Neg(inner) => Expr::Neg(Box::new(self.arithmetic(inner, leaf)?)),
            OutputExpr::Binary(ArithOp::Div, l, r) => {
                let l = self.arithmetic(l, leaf)?;
                let r = self.arithmetic(r, leaf)?;
                ast::nested(ast::binary(ast::cast(l, Type::Named(self.dialect.double_type)), Op::Divide, ast::null_if_zero(r)))
            }
            OutputExpr::Binary(op, l, r) => {
                let op = match op {
                    ArithOp::Add => Op::Plus,
                    ArithOp::Sub => Op::Minus,
                    _ => Op::Multiply,
                };
                let l = self.arithmetic(l, leaf)?;
                let r = self.arithmetic(r, leaf)?;
                ast::nested(ast::binary(l, op, r))
            }
        })
    }

    /// Binds a value and returns its placeholder, cast where the engine would
    /// otherwise compare a string with a date.
    fn bind(&mut self, v: &Value) -> Expr<'p> {
        self.params.push(v.clone());
        let p = Expr::Placeholder(self.dialect.placeholder(self.params.len()));
        match (v, self.dialect.date_param_types) {
            (Value::Date(_), Some((date, _))) => ast::cast(p, Type::Named(date)),
            (Value::Timestamp(_), Some((_, ts))) => ast::cast(p, Type::Named(ts)),
            _ => p,
        }
    }

    fn relation(&self, j: &'p JoinStep) -> Relation<'p> {
        self.table(&j.to.table, &j.to.alias, &j.to.computed)
    }

    /// The table under `alias`, with its computed columns when it has some.
    /// A row-filtered table is read through its filter (`TableFilters`).
    /// Columns read at a custom grain add their periods (`spine_columns`).
    fn table(&self, t: &'p crate::model::TableRef, alias: &'p str, computed: &'p [(String, String)]) -> Relation<'p> {
        let periods: Vec<(usize, &SpineColumn<'p>)> = self.spine_columns.iter().enumerate().filter(|(_, s)| s.alias == alias).collect();
        // The table itself is `sb_c` inside when periods are joined to it.
        let inner = if periods.is_empty() { alias } else { "sb_c" };
        let filter = self.rows.get(t).map(|e| Expr::Foreign(Arc::clone(e)));
        let base = if computed.is_empty() && filter.is_none() {
            ast::table(&t.schema, &t.table, inner)
        } else {
            // Every expression was parsed up front (`parse_computed`).
            let columns = computed.iter().filter_map(|(name, sql)| self.computed.get(sql.as_str()).map(|e| (Expr::Foreign(Arc::clone(e)), name.as_str())));
            ast::table_with_columns(&t.schema, &t.table, inner, columns, filter)
        };
        if periods.is_empty() {
            return base;
        }
        // `(SELECT sb_c.*, sb_s0.period AS sb_cg0, … FROM table AS sb_c
        // LEFT JOIN spine AS sb_s0 ON sb_s0.day = CAST(sb_c.time AS DATE) …) AS alias`.
        let mut projection = vec![Item::Wildcard(Name::Str(inner))];
        let mut joins = Vec::new();
        for (k, s) in periods {
            let spine = Name::Indexed("sb_s", k);
            projection.push(ast::aliased(ast::column(spine, s.grain.column.as_str()), ("sb_cg", k)));
            let time = ast::column(inner, s.column);
            let day = match s.class {
                TypeClass::Date => time,
                _ => ast::from_template(self.dialect.date_of, self.dialect, time),
            };
            let on = ast::binary(ast::column(spine, s.grain.day.as_str()), Op::Eq, day);
            joins.push(ast::left_join(ast::table(s.grain.table.schema.as_str(), s.grain.table.table.as_str(), spine), on));
        }
        ast::derived(ast::query(Select { projection, joins, ..Select::from(base) }), alias)
    }

    fn on(&self, j: &'p JoinStep) -> Expr<'p> {
        let eqs = j
            .on
            .iter()
            .map(|(a, b)| ast::binary(ast::column(&j.from_alias, a), Op::Eq, ast::column(&j.to.alias, b)))
            .chain(j.versions.iter().map(|v| {
                let time = ast::column(&j.from_alias, &v.time);
                let started = ast::binary(time.clone(), Op::GtEq, ast::column(&j.to.alias, &v.from));
                let ended = ast::column(&j.to.alias, &v.to);
                let current = ast::binary(ast::binary(time, Op::Lt, ended.clone()), Op::Or, ast::is_null(ended));
                ast::binary(started, Op::And, ast::nested(current))
            }))
            .collect();
        // A join without keys (only a hand-built plan has one) joins no row,
        // rather than every row.
        ast::and_all(eqs).unwrap_or_else(|| constant(false))
    }

    fn time_bucket(&self, t: &'p TimeBucket) -> Expr<'p> {
        let col = ast::column(&t.dimension.entity, &t.dimension.column);
        let col = match t.shift {
            Some(shift) => self.add_interval(col, shift, 1, t.class),
            None => col,
        };
        self.bucket_expr(col, t.grain, t.class)
    }

    /// The bucket of `x` at `grain`, typed like the dimension (a DATE stays a DATE).
    fn bucket_expr(&self, x: Expr<'p>, grain: Grain, class: TypeClass) -> Expr<'p> {
        if let Grain::Custom(g) = grain {
            // The relation's own column where it carries the period.
            if let Expr::Column(Name::Str(alias), Name::Str(column)) = &x {
                if let Some(k) = self.spine_columns.iter().position(|s| s.alias == *alias && s.column == *column && std::ptr::eq(s.grain, g)) {
                    return ast::column(*alias, ("sb_cg", k));
                }
            }
            return self.custom_bucket(x, g, class);
        }
        let bucket = ast::from_template(&self.dialect.bucket_template(grain, class), self.dialect, x);
        self.as_bucket_type(bucket, class)
    }

    /// A custom grain's period of `x` where no relation carries it (a moved
    /// time, a spine's day): the time spine's column on the row for `x`'s day, `(SELECT max(sb_cg.period) FROM spine AS sb_cg WHERE
    /// sb_cg.day = date(x))`; NULL where the spine has no such day, as
    /// MetricFlow's LEFT JOIN of the spine gives. A scalar subquery rather
    /// than a join of the spine, so that it stands wherever a bucket does
    /// (keys, filters, windows of every plan shape); `max` keeps it one row
    /// should the spine repeat a day. Engines with decorrelation (DuckDB,
    /// Spark, DataFusion) run it as a join.
    fn custom_bucket(&self, x: Expr<'p>, g: &'static crate::model::CustomGrain, class: TypeClass) -> Expr<'p> {
        const SPINE: &str = "sb_cg";
        let day = match class {
            TypeClass::Date => x,
            _ => ast::from_template(self.dialect.date_of, self.dialect, x),
        };
        let select = Select {
            projection: vec![Item::Expr(ast::function("max", vec![ast::column(SPINE, g.column.as_str())], false))],
            selection: Some(ast::binary(ast::column(SPINE, g.day.as_str()), Op::Eq, day)),
            ..Select::from(ast::table(g.table.schema.as_str(), g.table.table.as_str(), SPINE))
        };
        ast::subquery(ast::query(select))
    }

    /// Date arithmetic and truncation widen a DATE to a timestamp in some
    /// engines; a bucket of a DATE column is cast back.
    fn as_bucket_type(&self, x: Expr<'p>, class: TypeClass) -> Expr<'p> {
        if class == TypeClass::Date && self.dialect.buckets_widen_dates {
            ast::from_template(self.dialect.date_of, self.dialect, x)
        } else {
            x
        }
    }

    /// `x` moved by `sign` (1 or -1) times `interval`.
    fn add_interval(&self, x: Expr<'p>, interval: Interval, sign: i64, class: TypeClass) -> Expr<'p> {
        let (n, unit) = interval.in_base_units();
        // The template's operator must not bind into an operation of `x`.
        let x = if x.is_operation() { ast::nested(x) } else { x };
        ast::from_template(&self.dialect.add_template(sign * n, unit, class), self.dialect, x)
    }

    /// `anchor.id AS "sb_id0", …` when the plan deduplicates on the anchor
    /// identity; nothing otherwise.
    fn identity_items(&self, plan: &'p ComponentPlan) -> Vec<Item<'p>> {
        let identity = plan.aggregation.identity().unwrap_or_default();
        identity
            .iter()
            .enumerate()
            .map(|(i, c)| ast::aliased(ast::column(&plan.anchor.alias, c), ("sb_id", i)))
            .collect()
    }

    /// The FROM and joins every row of `plan` comes from.
    fn relations_of(&self, plan: &'p ComponentPlan) -> (Relation<'p>, Vec<Join<'p>>) {
        let from = self.table(&plan.anchor.table, &plan.anchor.alias, &plan.anchor.computed);
        let steps: Vec<&JoinStep> = plan.joins.iter().collect();
        (from, self.joins_of(&steps))
    }

    /// `steps` as joins, in order: a step written inside a LEFT join
    /// (`within`) goes into that join's parentheses,
    /// `LEFT JOIN (line JOIN part ON …) ON …`.
    fn joins_of(&self, steps: &[&'p JoinStep]) -> Vec<Join<'p>> {
        steps
            .iter()
            .filter(|j| j.within.is_none())
            .map(|j| match j.kind {
                JoinKind::Left => {
                    let inside: Vec<Join> = steps
                        .iter()
                        .filter(|m| m.within.as_deref() == Some(j.to.alias.as_str()))
                        .map(|m| ast::inner_join(self.relation(m), self.on(m)))
                        .collect();
                    let relation = if inside.is_empty() { self.relation(j) } else { ast::nested_join(self.relation(j), inside) };
                    ast::left_join(relation, self.on(j))
                }
                JoinKind::Inner(_) => ast::inner_join(self.relation(j), self.on(j)),
            })
            .collect()
    }

    /// The request's conditions on a shared scan's rows: its filters, its
    /// disjunctions and its semi-joins (the members' own filters are
    /// conditions on their aggregates).
    fn shared_predicates(&mut self, host: &'p ComponentPlan) -> Vec<Expr<'p>> {
        let mut predicates: Vec<Expr> = scans::shared_filters(host).map(|f| self.filter(f)).collect();
        predicates.extend(scans::shared_conditions(host).map(|c| self.condition(c)));
        predicates.extend(host.semi_joins.iter().map(|s| self.semi_join(s)));
        predicates
    }

    /// The conjunction of a component's own filters, if it has any.
    fn own_condition(&mut self, c: &'p ComponentPlan) -> Option<Expr<'p>> {
        let mut parts: Vec<Expr> = scans::own_filters(c).map(|f| self.filter(f)).collect();
        parts.extend(scans::own_conditions(c).map(|x| self.condition(x)));
        ast::and_all(parts)
    }

    /// A component's aggregate in a shared scan: over the rows its own
    /// filters keep (each condition written, and bound, where it stands).
    fn scan_aggregate(&mut self, c: &'p ComponentPlan) -> Result<Expr<'p>, Unsupported> {
        let counts = matches!(c.measure.agg, Aggregation::Count | Aggregation::CountDistinct | Aggregation::SumBoolean);
        // dbt's rule for imported counts (see `aggregate`), over the kept rows.
        let any_row = if counts && c.missing != Missing::Zero {
            let one = match self.own_condition(c) {
                Some(k) => ast::case_when(k, ast::number("1")),
                None => ast::number("1"),
            };
            Some(ast::binary(ast::function("count", vec![one], false), Op::Gt, ast::number("0")))
        } else {
            None
        };
        let operand = self.measure_operand(c, &c.anchor.alias);
        let own = self.own_condition(c);
        let value = self.aggregate_value_where(c, operand, own)?;
        let value = match any_row {
            Some(test) => ast::case_when(test, value),
            None => value,
        };
        Ok(match c.missing {
            Missing::Fill(v) => coalesce(value, v),
            Missing::Zero | Missing::Null => value,
        })
    }

    /// The FROM, joins and WHERE every row of `plan` comes from.
    fn row_source(&mut self, plan: &'p ComponentPlan) -> (Relation<'p>, Vec<Join<'p>>, Option<Expr<'p>>) {
        let (from, joins) = self.relations_of(plan);
        let mut predicates: Vec<Expr> = plan.filters.iter().map(|f| self.filter(f)).collect();
        predicates.extend(plan.any_of.iter().map(|c| self.condition(c)));
        predicates.extend(plan.semi_joins.iter().map(|s| self.semi_join(s)));
        // In WHERE (not in a CASE) so that engines run it as a semi-join.
        // (Credited conversions read the conversion rows themselves.)
        if let Some(c) = plan.conversion.as_ref().filter(|c| c.credit.is_none()) {
            let exists = self.conversion_exists(&plan.anchor.alias, c);
            predicates.push(exists);
        }
        (from, joins, ast::and_all(predicates))
    }

    /// `EXISTS (SELECT 1 FROM conversion table WHERE same keys AND a time
    /// from the base row's to the end of the window AND its filters)`.
    fn conversion_exists(&mut self, anchor: &'p str, c: &'p ConversionCheck) -> Expr<'p> {
        let mut predicates: Vec<Expr> = c
            .keys
            .iter()
            .map(|(base, conv)| ast::binary(ast::column(&c.alias, conv), Op::Eq, ast::column(anchor, base)))
            .collect();
        let (conv_time, base_time) = (ast::column(&c.alias, &c.time), ast::column(anchor, &c.base_time));
        predicates.push(ast::binary(conv_time.clone(), Op::GtEq, base_time.clone()));
        if let Some(w) = c.window {
            let end = self.add_interval(base_time, w, 1, c.base_class);
            predicates.push(ast::binary(conv_time, Op::LtEq, end));
        }
        predicates.extend(c.filters.iter().map(|f| self.filter(f)));
        let sub = ast::query(Select {
            distinct: false,
            projection: vec![Item::Expr(ast::number("1"))],
            from: self.table(&c.table, &c.alias, &c.computed),
            joins: Vec::new(),
            selection: ast::and_all(predicates),
            group_by: Vec::new(),
            having: None,
        });
        ast::exists(sub)
    }

    /// The value the measure aggregates, per anchor row.
    fn measure_operand(&self, plan: &'p ComponentPlan, anchor: &'p str) -> Expr<'p> {
        match &plan.measure.operand {
            MeasureOperand::Column(c) => ast::column(anchor, c),
            // The aggregate's own parentheses enclose the outermost operation.
            MeasureOperand::Expression(e) => match self.arith(e, anchor) {
                Expr::Nested(inner) => *inner,
                other => other,
            },
        }
    }

    fn aggregate(&self, plan: &ComponentPlan, operand: Expr<'p>) -> Result<Expr<'p>, Unsupported> {
        let value = self.aggregate_value(plan, operand)?;
        let counts = matches!(plan.measure.agg, Aggregation::Count | Aggregation::CountDistinct | Aggregation::SumBoolean);
        let value = if counts && plan.missing != Missing::Zero {
            // dbt's rule for imported counts: no row at all is NULL, not 0
            // (only an ungrouped query over no rows can tell the difference).
            let any_row = ast::binary(ast::function("count", vec![ast::number("1")], false), Op::Gt, ast::number("0"));
            ast::case_when(any_row, value)
        } else {
            value
        };
        // `fill_nulls_with` stands for a NULL aggregate too (our counts are
        // never NULL over rows, so Zero needs nothing here).
        Ok(match plan.missing {
            Missing::Fill(v) => coalesce(value, v),
            Missing::Zero | Missing::Null => value,
        })
    }

    fn aggregate_value(&self, plan: &ComponentPlan, operand: Expr<'p>) -> Result<Expr<'p>, Unsupported> {
        self.aggregate_value_where(plan, operand, None)
    }

    /// The aggregate over the rows where `only` holds (every row without
    /// it): the operand is NULL elsewhere, which every aggregate skips.
    fn aggregate_value_where(&self, plan: &ComponentPlan, operand: Expr<'p>, only: Option<Expr<'p>>) -> Result<Expr<'p>, Unsupported> {
        let plain = |name: &'static str, operand: Expr<'p>| ast::function(name, vec![operand], false);
        // Counting the true values: the condition joins the test instead.
        if plan.measure.agg == Aggregation::SumBoolean {
            let test = match self.dialect.boolean_test {
                BooleanTest::Bare => operand,
                BooleanTest::EqualsOne => ast::binary(operand, Op::Eq, ast::number("1")),
            };
            let test = match only {
                Some(k) => ast::binary(ast::nested(k), Op::And, test),
                None => test,
            };
            return Ok(plain("count", ast::case_when(test, ast::number("1"))));
        }
        let counting = matches!(plan.measure.agg, Aggregation::Count | Aggregation::CountDistinct);
        // Every row is one anchor row and the column is never NULL: the rows
        // are counted (`count(*)`, or the rows `only` keeps).
        if counting && matches!(plan.count, CountForm::Rows) {
            return Ok(match only {
                Some(k) => plain("count", ast::case_when(k, ast::number("1"))),
                None => ast::count_rows(),
            });
        }
        let operand = match only {
            Some(k) => ast::case_when(k, operand),
            None => operand,
        };
        // Every identity is distinct already: counted without DISTINCT.
        if counting && matches!(plan.count, CountForm::Values) {
            return Ok(plain("count", operand));
        }
        Ok(match plan.measure.agg {
            Aggregation::Sum => plain("sum", operand),
            // A to-many join repeats the anchor's rows: its identity is counted once.
            Aggregation::Count if matches!(plan.aggregation, AggregationStrategy::RepeatInsensitive { count_identity: true }) => {
                ast::function("count", vec![operand], true)
            }
            Aggregation::Count => plain("count", operand),
            Aggregation::CountDistinct => ast::function("count", vec![operand], true),
            Aggregation::Avg if self.dialect.avg_as_double => {
                plain("avg", ast::cast(operand, Type::Named(self.dialect.double_type)))
            }
            Aggregation::Avg => plain("avg", operand),
            Aggregation::Min => plain("min", operand),
            Aggregation::Max => plain("max", operand),
            // Interpolating between two DECIMALs must not round to their scale
            // (DuckDB would): percentiles are computed on DOUBLE PRECISION.
            Aggregation::Median if self.dialect.median == Median::Function => {
                plain("median", ast::cast(operand, Type::Named(self.dialect.double_type)))
            }
            Aggregation::Median => self.percentile(operand, "0.5", "median")?,
            Aggregation::Percentile => {
                let Some(p) = plan.measure.percentile else {
                    return Err(Unsupported::new(self.dialect.name, "percentile without a fraction"));
                };
                if plan.measure.discrete {
                    self.percentile_discrete(operand, p.to_string())?
                } else {
                    self.percentile(operand, p.to_string(), "percentile")?
                }
            }
            // Counting the true values gives 0 (not NULL) on no rows, as a
            // count should (written above).
            Aggregation::SumBoolean => plain("count", ast::case_when(operand, ast::number("1"))),
        })
    }

    fn percentile(&self, operand: Expr<'p>, fraction: impl Into<std::borrow::Cow<'p, str>>, feature: &str) -> Result<Expr<'p>, Unsupported> {
        Ok(match self.dialect.percentile {
            Percentile::QuantileCont => ast::function(
                "quantile_cont",
                vec![ast::cast(operand, Type::Named(self.dialect.double_type)), ast::number(fraction)],
                false,
            ),
            Percentile::WithinGroup => ast::function_within_group("percentile_cont", vec![ast::number(fraction)], operand),
            Percentile::PercentileFn => ast::function("percentile", vec![operand, ast::number(fraction)], false),
            Percentile::Unsupported => {
                return Err(Unsupported::new(self.dialect.name, format!("{feature} aggregate")))
            }
        })
    }

    /// The discrete percentile: a value of the column, the first whose
    /// cumulative share reaches the fraction.
    fn percentile_discrete(&self, operand: Expr<'p>, fraction: impl Into<std::borrow::Cow<'p, str>>) -> Result<Expr<'p>, Unsupported> {
        Ok(match self.dialect.percentile {
            Percentile::QuantileCont => ast::function("quantile_disc", vec![operand, ast::number(fraction)], false),
            // Spark (Databricks) writes the discrete one as the SQL standard does.
            Percentile::WithinGroup | Percentile::PercentileFn => {
                ast::function_within_group("percentile_disc", vec![ast::number(fraction)], operand)
            }
            Percentile::Unsupported => {
                return Err(Unsupported::new(self.dialect.name, "discrete percentile aggregate"))
            }
        })
    }

    fn arith(&self, e: &'p MeasureExpr, anchor: &'p str) -> Expr<'p> {
        match e {
            MeasureExpr::Column(c) => ast::column(anchor, c),
            MeasureExpr::Number(n) => ast::number(n.as_str()),
            MeasureExpr::Neg(inner) => Expr::Neg(Box::new(self.arith(inner, anchor))),
            MeasureExpr::Binary(op, l, r) => {
                let op = match op {
                    ArithOp::Add => Op::Plus,
                    ArithOp::Sub => Op::Minus,
                    ArithOp::Mul => Op::Multiply,
                    ArithOp::Div => Op::Divide,
                };
                // Parenthesise every operation: the text then reads exactly as
                // the tree, whatever each engine's precedence rules.
                ast::nested(ast::binary(self.arith(l, anchor), op, self.arith(r, anchor)))
            }
        }
    }

    /// A disjunction (or conjunction) of filters, parenthesised.
    fn condition(&mut self, c: &'p Condition<PlannedFilter>) -> Expr<'p> {
        let (parts, op) = match c {
            Condition::Atom(f) => return self.filter(f),
            Condition::All(cs) => (cs, Op::And),
            Condition::Any(cs) => (cs, Op::Or),
        };
        let exprs: Vec<Expr<'p>> = parts.iter().map(|c| self.condition(c)).collect();
        let mut exprs = exprs.into_iter();
        // An empty branch list (only a hand-built plan has one): AND of
        // nothing keeps every row, OR of nothing none.
        let Some(first) = exprs.next() else { return constant(op == Op::And) };
        ast::nested(exprs.fold(first, |acc, e| ast::binary(acc, op, e)))
    }

    /// `column IN (SELECT key FROM (the metric by column) WHERE value op v)`:
    /// the column values whose metric value compares as the filter says.
    /// The inner answer binds its parameters before the comparison's, as
    /// they are written.
    fn metric_filter(&mut self, col: Expr<'p>, f: &'p PlannedFilter, inner: &'p RequestPlan) -> Expr<'p> {
        const MF: &str = "sb_mf";
        let (Some(key), Some(value)) = (inner.group_by.first(), inner.outputs.first()) else { return constant(false) };
        // (`lower` wrote the inner plan once already: these succeed.)
        let computed = parse_computed(inner, self.dialect).unwrap_or_default();
        let mut e = Emitter { dialect: self.dialect, params: std::mem::take(&mut self.params), plan: inner, computed, rows: Arc::clone(&self.rows), spine_columns: spine_columns(inner) };
        let body = answer(&mut e);
        self.params = e.params;
        let Ok(mut body) = body else { return constant(false) };
        ast::clear_order_and_limit(&mut body);
        let metric_value = ast::column(MF, &value.name);
        let compare = match f.op {
            FilterOp::In | FilterOp::NotIn => {
                let list = f.values.iter().map(|v| self.bind(v)).collect();
                Expr::InList { expr: Box::new(metric_value), list, negated: f.op == FilterOp::NotIn }
            }
            op => {
                let Some(v) = f.values.first() else { return constant(false) };
                let bound = self.bind(v);
                ast::binary(metric_value, comparison(op), bound)
            }
        };
        let keys = ast::query(Select {
            projection: vec![Item::Expr(ast::column(MF, &key.output_name))],
            selection: Some(compare),
            ..Select::from(ast::derived(body, MF))
        });
        ast::in_subquery(col, keys)
    }

    fn filter(&mut self, f: &'p PlannedFilter) -> Expr<'p> {
        let col = ast::column(&f.alias, &f.column);
        if let Some(inner) = &f.by_metric {
            return self.metric_filter(col, f, inner);
        }
        let col = match f.shift {
            Some((shift, class)) => ast::nested(self.add_interval(col, shift, 1, class)),
            None => col,
        };
        // The period the (moved) time falls in, where the filter names one.
        let col = match f.bucket {
            Some((grain, class)) => self.bucket_expr(col, grain, class),
            None => col,
        };
        // A DATE compared with timestamps (the time spine's day filtered by
        // the metric time's values): where dates compare as text, its
        // midnight is compared.
        let widen = f.class == TypeClass::Date && f.bucket.is_none() && self.dialect.dates_as_text;
        let col = if widen && f.values.iter().any(|v| matches!(v, crate::ir::Value::Timestamp(_))) {
            ast::from_template(self.dialect.timestamp_of, self.dialect, col)
        } else {
            col
        };
        let op = match f.op {
            FilterOp::Eq | FilterOp::Ne | FilterOp::Lt | FilterOp::Lte | FilterOp::Gt | FilterOp::Gte => comparison(f.op),
            // An empty list (only a hand-built plan has one; requests are
            // checked): IN () keeps no row, NOT IN () every row.
            FilterOp::In | FilterOp::NotIn if f.values.is_empty() => return constant(f.op == FilterOp::NotIn),
            FilterOp::In | FilterOp::NotIn => {
                let list = f.values.iter().map(|v| self.bind(v)).collect();
                return Expr::InList { expr: Box::new(col), list, negated: f.op == FilterOp::NotIn };
            }
            FilterOp::IsNull => return ast::is_null(col),
            FilterOp::NotNull => return Expr::IsNotNull(Box::new(col)),
            FilterOp::Like | FilterOp::NotLike => {
                let Some(v) = f.values.first() else { return constant(false) };
                let pattern = self.bind(v);
                let col = match self.dialect.like {
                    Like::BinaryOperand => ast::cast(col, Type::Binary),
                    Like::Plain | Like::Unsupported => col,
                };
                return ast::like(col, pattern, f.op == FilterOp::NotLike);
            }
        };
        // A comparison without a value (only a hand-built plan) keeps no row.
        let Some(v) = f.values.first() else { return constant(false) };
        let value = self.bind(v);
        ast::binary(col, op, value)
    }

    /// `key IN (SELECT first.key FROM first INNER JOIN … WHERE filters)`, or
    /// `EXISTS (SELECT 1 FROM first INNER JOIN … WHERE correlation AND
    /// filters)`, as the plan's form says.
    fn semi_join(&mut self, s: &'p SemiJoin) -> Expr<'p> {
        // A semi-join without steps (only a hand-built plan has one) keeps no row.
        let Some((first, rest)) = s.steps.split_first() else { return constant(false) };
        let joins = rest.iter().map(|j| ast::inner_join(self.relation(j), self.on(j))).collect();
        let key = match (s.form, first.on.as_slice()) {
            (SemiJoinForm::In, [(from, to)]) if first.versions.is_none() => Some((from, to)),
            _ => None,
        };
        let (projection, mut predicates) = match key {
            Some((_, to)) => (vec![Item::Expr(ast::column(&first.to.alias, to))], Vec::new()),
            None => (vec![Item::Expr(ast::number("1"))], vec![self.on(first)]),
        };
        predicates.extend(s.filters.iter().map(|f| self.filter(f)));
        let sub = ast::query(Select {
            distinct: false,
            projection,
            from: self.relation(first),
            joins,
            selection: ast::and_all(predicates),
            group_by: Vec::new(),
            having: None,
        });
        match key {
            Some((from, _)) => ast::in_subquery(ast::column(&first.from_alias, from), sub),
            None => ast::exists(sub),
        }
    }

    /// ORDER BY the output columns (`columns`: expression and name, in output
    /// order), NULLs last in every engine.
    fn order_by(&self, columns: &[(Expr<'p>, Name<'p>)]) -> Vec<OrderKey<'p>> {
        let plan = self.plan;
        let n_time = usize::from(plan.time.is_some());
        let n_keys = n_time + plan.group_by.len();
        let mut out = Vec::new();
        for k in &plan.order_by {
            let index = match k.target {
                OutputRef::Time => 0,
                OutputRef::GroupBy(i) => n_time + i,
                OutputRef::Metric(i) => n_keys + i.min(plan.outputs.len().saturating_sub(1)),
            };
            let Some((expr, name)) = columns.get(index) else { continue };
            let alias = Expr::Ident(*name);
            match self.dialect.nulls_last {
                NullsLast::Explicit => out.push(ast::order_key(alias, k.descending, Some(true))),
                // MySQL and SQL Server accept an alias alone in ORDER BY, not
                // inside an expression (MySQL refuses a reference to an
                // aggregate's alias there): the NULL test reads the expression itself.
                NullsLast::IsNullKey => {
                    out.push(ast::order_key(ast::is_null(expr.clone()), false, None));
                    out.push(ast::order_key(alias, k.descending, None));
                }
                NullsLast::CaseKey => {
                    out.push(ast::order_key(
                        ast::case_when_else(ast::is_null(expr.clone()), ast::number("1"), ast::number("0")),
                        false,
                        None,
                    ));
                    out.push(ast::order_key(alias, k.descending, None));
                }
            }
        }
        out
    }
}
