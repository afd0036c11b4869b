//! Lowering a `QueryPlan` to one SELECT.
//!
//! Direct aggregation:
//! ```text
//! SELECT [bucket AS "e.col__grain",] group cols AS "e.col", agg(measure) AS "metric"
//! FROM anchor LEFT JOIN … ON …
//! WHERE filters [AND EXISTS (semi-join)]  GROUP BY …  ORDER BY … NULLS LAST  LIMIT n
//! ```
//! Deduplicated aggregation (a to-many join repeats anchor rows): the same
//! FROM/WHERE first reduced to one row per (anchor identity, keys), then
//! aggregated:
//! ```text
//! SELECT "__rows"."__k0" AS "p.category", agg("__rows"."__m") AS "metric"
//! FROM (SELECT DISTINCT anchor.id AS "__id0", key AS "__k0", measure AS "__m" FROM … WHERE …) AS "__rows"
//! GROUP BY "__rows"."__k0" ORDER BY … LIMIT n
//! ```

use sqlparser::ast::{BinaryOperator, Expr, Join, OrderByExpr, SelectItem, UnaryOperator};

use super::build::{self, SelectParts};
use super::{CompiledSql, DateTrunc, Dialect, Percentile};
use crate::ir::{OutputExpr, OutputMetric, OutputRef, Value};
use crate::model::{Aggregation, ArithOp, FilterOp, MeasureExpr, MeasureOperand, TypeClass};
use crate::plan::{AggregationStrategy, JoinStep, PlannedFilter, QueryPlan, SemiJoin, TimeBucket};

const ROWS: &str = "__rows";

/// Renders one simple metric's `plan` for `dialect`.
pub fn emit(plan: &QueryPlan, dialect: &'static Dialect) -> CompiledSql {
    let output = OutputMetric { name: plan.metric.clone(), expr: OutputExpr::Component(0) };
    emit_all(std::slice::from_ref(plan), &[output], dialect)
}

/// Renders the plans of one request: one metric as a single query; several
/// as one CTE each (`"__m0"`, …, keys `"__k<i>"`, value `"__v"`), joined on
/// their keys with FULL OUTER JOIN … IS NOT DISTINCT FROM (so the NULL group
/// is one row) and keys coalesced; ungrouped metrics are single rows, cross
/// joined.
pub fn emit_all(plans: &[QueryPlan], outputs: &[OutputMetric], dialect: &'static Dialect) -> CompiledSql {
    let mut e = Emitter { dialect, params: Vec::new(), outputs: outputs.iter().map(|o| o.name.clone()).collect() };
    let query = match (plans, outputs) {
        ([plan], [OutputMetric { expr: OutputExpr::Component(0), .. }]) => select(&mut e, plan, Naming::Output),
        _ => combined(&mut e, plans, outputs),
    };
    CompiledSql { sql: format!("{query:#}"), params: e.params, dialect: dialect.name }
}

/// How a SELECT names its columns.
#[derive(Clone, Copy, PartialEq)]
enum Naming {
    /// The output names, with ORDER BY and LIMIT: a whole answer.
    Output,
    /// `__k<i>` and `__v`, unordered: one metric of several.
    Internal,
}

fn combined(e: &mut Emitter, plans: &[QueryPlan], outputs: &[OutputMetric]) -> sqlparser::ast::Query {
    let q = e.dialect.quote;
    let first = &plans[0];
    let ctes: Vec<(String, sqlparser::ast::Query)> =
        plans.iter().enumerate().map(|(i, p)| (format!("__m{i}"), select(e, p, Naming::Internal))).collect();
    let n_keys = first.output_names().len() - 1;
    let key = |m: usize, k: usize| build::column(q, &format!("__m{m}"), &format!("__k{k}"));
    // The key of the rows joined so far: COALESCE over the CTEs before `upto`.
    let merged = |upto: usize, k: usize| {
        if upto == 1 {
            key(0, k)
        } else {
            build::function("coalesce", (0..upto).map(|m| key(m, k)).collect(), false)
        }
    };
    let mut joins = Vec::new();
    for m in 1..plans.len() {
        let relation = build::table_ref(q, &format!("__m{m}"));
        if n_keys == 0 {
            joins.push(build::cross_join(relation));
        } else {
            let on = (0..n_keys).map(|k| Expr::IsNotDistinctFrom(Box::new(merged(m, k)), Box::new(key(m, k)))).collect();
            joins.push(build::full_join(relation, build::and_all(on).expect("keys")));
        }
    }
    let names = first.output_names();
    let mut projection: Vec<SelectItem> = (0..n_keys).map(|k| build::aliased(merged(plans.len(), k), q, &names[k])).collect();
    projection.extend(outputs.iter().map(|o| build::aliased(e.output(&o.expr), q, &o.name)));
    let outer = build::query(SelectParts {
        distinct: false,
        projection,
        from: build::table_ref(q, "__m0"),
        joins,
        selection: None,
        group_by: Vec::new(),
        order_by: e.order_by(first),
        limit: Some(build::number(&first.limit.to_string())),
    });
    build::with_ctes(ctes, q, outer)
}

/// One metric's SELECT.
fn select(e: &mut Emitter, plan: &QueryPlan, naming: Naming) -> sqlparser::ast::Query {
    let q = e.dialect.quote;
    let anchor = &plan.anchor.alias;

    // Output keys in output order: time bucket, then group-bys.
    let mut keys: Vec<(Expr, String)> = Vec::new();
    if let Some(t) = &plan.time {
        keys.push((e.time_bucket(t), t.output_name.clone()));
    }
    for g in &plan.group_by {
        keys.push((build::column(q, &g.column.entity, &g.column.column), g.output_name.clone()));
    }
    let metric_name = match naming {
        Naming::Output => plan.metric.clone(),
        Naming::Internal => {
            for (i, k) in keys.iter_mut().enumerate() {
                k.1 = format!("__k{i}");
            }
            "__v".to_string()
        }
    };
    let operand = e.measure_operand(plan, anchor);
    let from = build::table(q, &plan.anchor.table.schema, &plan.anchor.table.table, anchor);
    let joins: Vec<Join> = plan.joins.iter().map(|j| build::left_join(e.relation(j), e.on(j))).collect();
    let mut predicates: Vec<Expr> = plan.filters.iter().map(|f| e.filter(f)).collect();
    predicates.extend(plan.semi_joins.iter().map(|s| e.semi_join(s)));
    let selection = build::and_all(predicates);
    let (order_by, limit) = match naming {
        Naming::Output => (e.order_by(plan), Some(build::number(&plan.limit.to_string()))),
        Naming::Internal => (Vec::new(), None),
    };

    match &plan.aggregation {
        AggregationStrategy::Direct => {
            let mut projection: Vec<SelectItem> = keys.iter().map(|(k, name)| build::aliased(k.clone(), q, name)).collect();
            projection.push(build::aliased(e.aggregate(plan, operand), q, &metric_name));
            build::query(SelectParts {
                distinct: false,
                projection,
                from,
                joins,
                selection,
                group_by: keys.into_iter().map(|(k, _)| k).collect(),
                order_by,
                limit,
            })
        }
        AggregationStrategy::Deduplicated { identity } => {
            let mut inner: Vec<SelectItem> =
                identity.iter().enumerate().map(|(i, c)| build::aliased(build::column(q, anchor, c), q, &format!("__id{i}"))).collect();
            inner.extend(keys.iter().enumerate().map(|(i, (k, _))| build::aliased(k.clone(), q, &format!("__k{i}"))));
            inner.push(build::aliased(operand, q, "__m"));
            let rows = build::query(SelectParts {
                distinct: true,
                projection: inner,
                from,
                joins,
                selection,
                group_by: Vec::new(),
                order_by: Vec::new(),
                limit: None,
            });
            let outer_keys: Vec<Expr> = (0..keys.len()).map(|i| build::column(q, ROWS, &format!("__k{i}"))).collect();
            let mut projection: Vec<SelectItem> =
                outer_keys.iter().zip(&keys).map(|(k, (_, name))| build::aliased(k.clone(), q, name)).collect();
            projection.push(build::aliased(e.aggregate(plan, build::column(q, ROWS, "__m")), q, &metric_name));
            build::query(SelectParts {
                distinct: false,
                projection,
                from: build::derived(rows, q, ROWS),
                joins: Vec::new(),
                selection: None,
                group_by: outer_keys,
                order_by,
                limit,
            })
        }
    }
}

struct Emitter {
    dialect: &'static Dialect,
    params: Vec<Value>,
    /// Output metric names, for ORDER BY.
    outputs: Vec<String>,
}

impl Emitter {
    /// An output metric's value in the combined query: components are
    /// `"__m<i>"."__v"`; division is floating-point and NULL on a zero divisor.
    fn output(&self, e: &OutputExpr) -> Expr {
        let q = self.dialect.quote;
        match e {
            OutputExpr::Component(i) => build::column(q, &format!("__m{i}"), "__v"),
            OutputExpr::Number(n) => build::number(n),
            OutputExpr::Neg(inner) => Expr::UnaryOp { op: UnaryOperator::Minus, expr: Box::new(self.output(inner)) },
            OutputExpr::Binary(ArithOp::Div, l, r) => build::nested(build::binary(
                build::cast(self.output(l), build::double_type()),
                BinaryOperator::Divide,
                build::null_if_zero(self.output(r)),
            )),
            OutputExpr::Binary(op, l, r) => {
                let op = match op {
                    ArithOp::Add => BinaryOperator::Plus,
                    ArithOp::Sub => BinaryOperator::Minus,
                    _ => BinaryOperator::Multiply,
                };
                build::nested(build::binary(self.output(l), op, self.output(r)))
            }
        }
    }

    /// Binds a value and returns its placeholder, cast where the engine would
    /// otherwise compare a string with a date.
    fn bind(&mut self, v: &Value) -> Expr {
        self.params.push(v.clone());
        let p = build::placeholder(self.dialect.placeholder(self.params.len()));
        match v {
            Value::Date(_) => build::cast(p, build::date_type()),
            Value::Timestamp(_) => build::cast(p, build::timestamp_type()),
            _ => p,
        }
    }

    fn relation(&self, j: &JoinStep) -> sqlparser::ast::TableFactor {
        build::table(self.dialect.quote, &j.to.table.schema, &j.to.table.table, &j.to.alias)
    }

    fn on(&self, j: &JoinStep) -> Expr {
        let q = self.dialect.quote;
        let eqs = j
            .on
            .iter()
            .map(|(a, b)| build::binary(build::column(q, &j.from_alias, a), BinaryOperator::Eq, build::column(q, &j.to.alias, b)))
            .collect();
        build::and_all(eqs).expect("a join has at least one key")
    }

    fn time_bucket(&self, t: &TimeBucket) -> Expr {
        let q = self.dialect.quote;
        let col = build::column(q, &t.dimension.entity, &t.dimension.column);
        match self.dialect.date_trunc {
            DateTrunc::DateTruncFunction => {
                let trunc = build::function("date_trunc", vec![build::string(t.grain.as_str()), col], false);
                if t.class == TypeClass::Date && self.dialect.date_trunc_widens_dates {
                    build::cast(trunc, build::date_type())
                } else {
                    trunc
                }
            }
        }
    }

    /// The value the measure aggregates, per anchor row.
    fn measure_operand(&self, plan: &QueryPlan, anchor: &str) -> Expr {
        match &plan.measure.operand {
            MeasureOperand::Column(c) => build::column(self.dialect.quote, anchor, c),
            // The aggregate's own parentheses enclose the outermost operation.
            MeasureOperand::Expression(e) => match self.arith(e, anchor) {
                Expr::Nested(inner) => *inner,
                other => other,
            },
        }
    }

    fn aggregate(&self, plan: &QueryPlan, operand: Expr) -> Expr {
        let plain = |name: &str, operand: Expr| build::function(name, vec![operand], false);
        match plan.measure.agg {
            Aggregation::Sum => plain("sum", operand),
            Aggregation::Count => plain("count", operand),
            Aggregation::CountDistinct => build::function("count", vec![operand], true),
            Aggregation::Avg => plain("avg", operand),
            Aggregation::Min => plain("min", operand),
            Aggregation::Max => plain("max", operand),
            Aggregation::Median => self.percentile(operand, "0.5"),
            Aggregation::Percentile => {
                let p = plan.measure.percentile.expect("the loader requires a percentile").to_string();
                self.percentile(operand, &p)
            }
            // Counting the true values gives 0 (not NULL) on no rows, as a count should.
            Aggregation::SumBoolean => plain("count", build::case_when(operand, build::number("1"))),
        }
    }

    fn percentile(&self, operand: Expr, fraction: &str) -> Expr {
        match self.dialect.percentile {
            Percentile::QuantileCont => build::function("quantile_cont", vec![operand, build::number(fraction)], false),
            Percentile::WithinGroup => build::function_within_group("percentile_cont", vec![build::number(fraction)], operand),
        }
    }

    fn arith(&self, e: &MeasureExpr, anchor: &str) -> Expr {
        match e {
            MeasureExpr::Column(c) => build::column(self.dialect.quote, anchor, c),
            MeasureExpr::Number(n) => build::number(n),
            MeasureExpr::Neg(inner) => Expr::UnaryOp { op: UnaryOperator::Minus, expr: Box::new(self.arith(inner, anchor)) },
            MeasureExpr::Binary(op, l, r) => {
                let op = match op {
                    ArithOp::Add => BinaryOperator::Plus,
                    ArithOp::Sub => BinaryOperator::Minus,
                    ArithOp::Mul => BinaryOperator::Multiply,
                    ArithOp::Div => BinaryOperator::Divide,
                };
                // Parenthesise every operation: the text then reads exactly as
                // the tree, whatever each engine's precedence rules.
                build::nested(build::binary(self.arith(l, anchor), op, self.arith(r, anchor)))
            }
        }
    }

    fn filter(&mut self, f: &PlannedFilter) -> Expr {
        let col = build::column(self.dialect.quote, &f.alias, &f.column);
        let op = match f.op {
            FilterOp::Eq => BinaryOperator::Eq,
            FilterOp::Ne => BinaryOperator::NotEq,
            FilterOp::Lt => BinaryOperator::Lt,
            FilterOp::Lte => BinaryOperator::LtEq,
            FilterOp::Gt => BinaryOperator::Gt,
            FilterOp::Gte => BinaryOperator::GtEq,
            FilterOp::In | FilterOp::NotIn => {
                let list = f.values.iter().map(|v| self.bind(v)).collect();
                return Expr::InList { expr: Box::new(col), list, negated: f.op == FilterOp::NotIn };
            }
            FilterOp::IsNull => return Expr::IsNull(Box::new(col)),
            FilterOp::NotNull => return Expr::IsNotNull(Box::new(col)),
        };
        let value = self.bind(&f.values[0]);
        build::binary(col, op, value)
    }

    /// `EXISTS (SELECT 1 FROM first INNER JOIN … WHERE correlation AND filters)`.
    fn semi_join(&mut self, s: &SemiJoin) -> Expr {
        let (first, rest) = s.steps.split_first().expect("a semi-join has steps");
        let joins = rest.iter().map(|j| build::inner_join(self.relation(j), self.on(j))).collect();
        let mut predicates = vec![self.on(first)];
        predicates.extend(s.filters.iter().map(|f| self.filter(f)));
        let sub = build::query(SelectParts {
            distinct: false,
            projection: vec![SelectItem::UnnamedExpr(build::number("1"))],
            from: self.relation(first),
            joins,
            selection: build::and_all(predicates),
            group_by: Vec::new(),
            order_by: Vec::new(),
            limit: None,
        });
        build::exists(sub)
    }

    /// ORDER BY over output names.
    fn order_by(&self, plan: &QueryPlan) -> Vec<OrderByExpr> {
        let q = self.dialect.quote;
        let names = plan.output_names();
        let n_time = usize::from(plan.time.is_some());
        plan.order_by
            .iter()
            .map(|k| {
                let name = match k.target {
                    OutputRef::Time => &names[0],
                    OutputRef::GroupBy(i) => &names[n_time + i],
                    OutputRef::Metric(i) => self.outputs.get(i).unwrap_or(&plan.metric),
                };
                let nulls_last = self.dialect.explicit_nulls_last.then_some(true);
                build::order_key(Expr::Identifier(build::ident(q, name)), k.descending, nulls_last)
            })
            .collect()
    }
}
