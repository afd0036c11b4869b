//! Our AST (`sql::ast`) as sqlparser's: the oracle `sql::render` is checked
//! against. sqlparser's pretty `Display` of the converted tree must give the
//! very bytes `render` writes (`Lowered::sqlparser_text`, compared by the
//! golden tests for every case, dbt request and fuzz request in every
//! dialect). Never on the path of a compile.
//!
//! Depends on `sql::ast` and `sql::build` only.

use sqlparser::ast as sp;

use super::ast::{Body, Expr, Item, Join, JoinKind, Limit, Name, Op, OrderKey, Query, Relation, Type};
use super::build;

/// sqlparser's tree of `q`, identifiers in `quote`s.
pub fn query(q: &Query, quote: char) -> sp::Query {
    Convert { quote }.query(q)
}

struct Convert {
    quote: char,
}

impl Convert {
    fn name(&self, n: Name) -> String {
        n.to_string()
    }

    fn query(&self, q: &Query) -> sp::Query {
        let mut out = match &q.body {
            Body::Select(s) => build::query(build::SelectParts {
                distinct: s.distinct,
                projection: s.projection.iter().map(|i| self.item(i)).collect(),
                from: self.relation(&s.from),
                joins: s.joins.iter().map(|j| self.join(j)).collect(),
                selection: s.selection.as_ref().map(|e| self.expr(e)),
                group_by: s.group_by.iter().map(|e| self.expr(e)).collect(),
                having: s.having.as_ref().map(|e| self.expr(e)),
                order_by: Vec::new(),
                limit: None,
            }),
            Body::Union { .. } => self.union(&q.body),
        };
        if !q.order_by.is_empty() {
            out.order_by = Some(sp::OrderBy {
                kind: sp::OrderByKind::Expressions(q.order_by.iter().map(|o| self.order_key(o)).collect()),
                interpolate: None,
            });
        }
        if let Some(limit) = q.limit {
            build::set_limit(
                &mut out,
                match limit {
                    Limit::Limit(n) => build::Limit::Limit(n),
                    Limit::Top(n) => build::Limit::Top(n),
                    Limit::FetchFirst(n) => build::Limit::FetchFirst(n),
                },
            );
        }
        match &q.with {
            Some(with) => {
                let ctes = with
                    .ctes
                    .iter()
                    .map(|c| build::Cte {
                        name: self.name(c.name),
                        columns: c.columns.iter().map(|n| self.name(*n)).collect(),
                        query: self.query(&c.query),
                    })
                    .collect();
                build::with_recursive_ctes(ctes, with.recursive, self.quote, out)
            }
            None => out,
        }
    }

    /// A UNION as a query whose body is the set operation.
    fn union(&self, body: &Body) -> sp::Query {
        let single = |b: &Body| self.query(&Query { with: None, body: b.clone(), order_by: Vec::new(), limit: None });
        match body {
            Body::Union { left, right, all } => {
                let (left, right) = (single(left), single(right));
                if *all {
                    build::union_all(left, right)
                } else {
                    build::union(left, right)
                }
            }
            Body::Select(_) => single(body),
        }
    }

    fn item(&self, item: &Item) -> sp::SelectItem {
        match item {
            Item::Expr(e) => sp::SelectItem::UnnamedExpr(self.expr(e)),
            Item::Aliased(e, alias) => build::aliased(self.expr(e), self.quote, &self.name(*alias)),
            Item::Wildcard(name) => build::qualified_wildcard(self.quote, &self.name(*name)),
        }
    }

    fn relation(&self, r: &Relation) -> sp::TableFactor {
        match r {
            Relation::Table { schema, table, alias } => build::table(self.quote, schema, table, &self.name(*alias)),
            Relation::Cte(name) => build::table_ref(self.quote, &self.name(*name)),
            Relation::Derived(q, alias) => build::derived(self.query(q), self.quote, &self.name(*alias)),
            Relation::Nested(first, joins) => build::nested_join(self.relation(first), joins.iter().map(|j| self.join(j)).collect()),
        }
    }

    fn join(&self, j: &Join) -> sp::Join {
        let relation = self.relation(&j.relation);
        let on = || j.on.as_ref().map_or_else(|| build::number("1"), |e| self.expr(e));
        match j.kind {
            JoinKind::Inner => build::inner_join(relation, on()),
            JoinKind::Left => build::left_join(relation, on()),
            JoinKind::Cross => build::cross_join(relation),
        }
    }

    fn order_key(&self, o: &OrderKey) -> sp::OrderByExpr {
        build::order_key(self.expr(&o.expr), o.descending, o.nulls_last)
    }

    fn op(op: Op) -> sp::BinaryOperator {
        match op {
            Op::Plus => sp::BinaryOperator::Plus,
            Op::Minus => sp::BinaryOperator::Minus,
            Op::Multiply => sp::BinaryOperator::Multiply,
            Op::Divide => sp::BinaryOperator::Divide,
            Op::Gt => sp::BinaryOperator::Gt,
            Op::Lt => sp::BinaryOperator::Lt,
            Op::GtEq => sp::BinaryOperator::GtEq,
            Op::LtEq => sp::BinaryOperator::LtEq,
            Op::Eq => sp::BinaryOperator::Eq,
            Op::NotEq => sp::BinaryOperator::NotEq,
            Op::And => sp::BinaryOperator::And,
            Op::Or => sp::BinaryOperator::Or,
            Op::Spaceship => sp::BinaryOperator::Spaceship,
        }
    }

    fn expr(&self, e: &Expr) -> sp::Expr {
        let q = self.quote;
        let boxed = |e: &Expr| Box::new(self.expr(e));
        match e {
            Expr::Column(alias, column) => build::column(q, &self.name(*alias), &self.name(*column)),
            Expr::Ident(name) => sp::Expr::Identifier(build::ident(q, &self.name(*name))),
            Expr::Number(n) => build::number(n),
            Expr::Placeholder(p) => build::placeholder(p.clone()),
            Expr::Binary(l, op, r) => build::binary(self.expr(l), Self::op(*op), self.expr(r)),
            Expr::Nested(inner) => build::nested(self.expr(inner)),
            Expr::Neg(inner) => sp::Expr::UnaryOp { op: sp::UnaryOperator::Minus, expr: boxed(inner) },
            Expr::IsNull(inner) => sp::Expr::IsNull(boxed(inner)),
            Expr::IsNotNull(inner) => sp::Expr::IsNotNull(boxed(inner)),
            Expr::IsNotDistinctFrom(a, b) => sp::Expr::IsNotDistinctFrom(boxed(a), boxed(b)),
            Expr::InList { expr, list, negated } => {
                sp::Expr::InList { expr: boxed(expr), list: list.iter().map(|x| self.expr(x)).collect(), negated: *negated }
            }
            Expr::InSubquery(expr, sub) => build::in_subquery(self.expr(expr), self.query(sub)),
            Expr::Exists(sub) => build::exists(self.query(sub)),
            Expr::Subquery(sub) => sp::Expr::Subquery(Box::new(self.query(sub))),
            Expr::Like { expr, pattern, negated } => build::like(self.expr(expr), self.expr(pattern), *negated),
            Expr::Cast(expr, to) => build::cast(
                self.expr(expr),
                match to {
                    Type::Named(name) => build::named_type(name),
                    Type::Binary => sp::DataType::Binary(None),
                },
            ),
            Expr::Function(f) => {
                let args = f.args.iter().map(|a| self.expr(a)).collect();
                match (&f.within_group, &f.over) {
                    (Some(order), _) => build::function_within_group(f.name, args, self.expr(order)),
                    (None, Some(w)) if f.name == "row_number" => build::row_number(
                        w.partition_by.iter().map(|x| self.expr(x)).collect(),
                        w.order_by.iter().map(|o| self.order_key(o)).collect(),
                    ),
                    (None, Some(w)) => {
                        let mut args: Vec<sp::Expr> = args;
                        let arg = if args.is_empty() { build::number("1") } else { args.remove(0) };
                        build::window_function(f.name, arg, w.partition_by.iter().map(|x| self.expr(x)).collect())
                    }
                    (None, None) => build::function(f.name, args, f.distinct),
                }
            }
            Expr::CountRows => build::count_rows(),
            Expr::Case(c) => match &c.otherwise {
                None => build::case_when(self.expr(&c.condition), self.expr(&c.result)),
                Some(o) => build::case_when_else(self.expr(&c.condition), self.expr(&c.result), self.expr(o)),
            },
            Expr::Template(t, x) => build::from_template(&t.source, t.dialect, &self.expr(x)),
            Expr::Foreign(e) => sp::Expr::clone(e),
        }
    }
}
