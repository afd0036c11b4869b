//! Lowering a `QueryPlan` to one SELECT:
//!
//! ```text
//! SELECT [bucket AS "e.col__grain",] group cols AS "e.col", agg(measure) AS "metric"
//! FROM anchor LEFT JOIN … ON …
//! WHERE filters  GROUP BY …  ORDER BY … NULLS LAST  LIMIT n
//! ```

use sqlparser::ast::{BinaryOperator, Expr, UnaryOperator};

use super::build::{self, SelectParts};
use super::{CompiledSql, DateTrunc, Dialect};
use crate::ir::{Filter, OutputRef, Value};
use crate::model::{Aggregation, ArithOp, FilterOp, MeasureExpr, MeasureOperand, TypeClass};
use crate::plan::{QueryPlan, TimeBucket};

/// Renders `plan` for `dialect`.
pub fn emit(plan: &QueryPlan, dialect: &'static Dialect) -> CompiledSql {
    let mut e = Emitter { dialect, params: Vec::new() };
    let q = dialect.quote;
    let anchor = &plan.anchor.alias;

    let mut projection = Vec::new();
    let mut keys: Vec<Expr> = Vec::new();
    if let Some(t) = &plan.time {
        let bucket = e.time_bucket(t);
        projection.push(build::aliased(bucket.clone(), q, &t.output_name));
        keys.push(bucket);
    }
    for g in &plan.group_by {
        let col = build::column(q, &g.column.entity, &g.column.column);
        projection.push(build::aliased(col.clone(), q, &g.output_name));
        keys.push(col);
    }
    projection.push(build::aliased(e.measure(plan, anchor), q, &plan.metric));

    let joins = plan
        .joins
        .iter()
        .map(|j| {
            let on = j
                .on
                .iter()
                .map(|(a, b)| {
                    build::binary(build::column(q, &j.from_alias, a), BinaryOperator::Eq, build::column(q, &j.to.alias, b))
                })
                .collect();
            build::left_join(
                build::table(q, &j.to.table.schema, &j.to.table.table, &j.to.alias),
                build::and_all(on).expect("a join has at least one key"),
            )
        })
        .collect();

    let predicates: Vec<Expr> = plan.filters.iter().map(|f| e.filter(f)).collect();
    let selection = build::and_all(predicates);

    let output_names = plan.output_names();
    let n_time = usize::from(plan.time.is_some());
    let order_by = plan
        .order_by
        .iter()
        .map(|k| {
            let name = match k.target {
                OutputRef::Time => &output_names[0],
                OutputRef::GroupBy(i) => &output_names[n_time + i],
                OutputRef::Metric => &plan.metric,
            };
            let nulls_last = dialect.explicit_nulls_last.then_some(true);
            build::order_key(Expr::Identifier(build::ident(q, name)), k.descending, nulls_last)
        })
        .collect();

    let query = build::query(SelectParts {
        projection,
        from: build::table(q, &plan.anchor.table.schema, &plan.anchor.table.table, anchor),
        joins,
        selection,
        group_by: keys,
        order_by,
        limit: Some(build::number(&plan.limit.to_string())),
    });
    CompiledSql { sql: format!("{query:#}"), params: e.params, dialect: dialect.name }
}

struct Emitter {
    dialect: &'static Dialect,
    params: Vec<Value>,
}

impl Emitter {
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

    fn measure(&self, plan: &QueryPlan, anchor: &str) -> Expr {
        let q = self.dialect.quote;
        let operand = match &plan.measure.operand {
            MeasureOperand::Column(c) => build::column(q, anchor, c),
            // The aggregate's own parentheses enclose the outermost operation.
            MeasureOperand::Expression(e) => match self.arith(e, anchor) {
                Expr::Nested(inner) => *inner,
                other => other,
            },
        };
        let (name, distinct) = match plan.measure.agg {
            Aggregation::Sum => ("sum", false),
            Aggregation::Count => ("count", false),
            Aggregation::CountDistinct => ("count", true),
            Aggregation::Avg => ("avg", false),
            Aggregation::Min => ("min", false),
            Aggregation::Max => ("max", false),
        };
        build::function(name, vec![operand], distinct)
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

    fn filter(&mut self, f: &Filter) -> Expr {
        let col = build::column(self.dialect.quote, &f.column.entity, &f.column.column);
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
}
