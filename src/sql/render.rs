//! SQL text from sqlparser's AST in one pass: the same bytes as sqlparser's
//! pretty `Display` (`{:#}`), written straight into one String.
//!
//! sqlparser indents by wrapping the writer in one `Indent` adapter per
//! nesting level, and most nodes go through `write!`, so every piece of text
//! at depth d crosses d dynamic writers and a `fmt::Arguments` per node:
//! that was ~40% of a whole compile. Here the nodes our lowering builds
//! (queries, SELECTs, joins, identifiers, calls, CASE, comparisons…) are
//! written directly, and any other node (a computed column's own SQL, a
//! dialect template's INTERVAL…) goes to sqlparser's `Display` through
//! [`Pretty`], which indents exactly as sqlparser's adapters do: INDENT per
//! open level after every `"\n"` written on its own. Each function below is
//! a port of the `Display` impl it names, with `pretty` standing for the
//! formatter's alternate flag; a node in a shape the port does not cover is
//! handed to sqlparser whole, so the text cannot differ. Checked against
//! sqlparser's own text for every golden case, every dbt corpus request
//! and every oracle-fuzz request, each in every dialect
//! (`golden::check_written_as_sqlparser_writes`).
//!
//! Depends on sqlparser's AST only.

use std::fmt::{self, Display, Write as _};

use sqlparser::ast::{
    BinaryOperator, CastKind, DataType, Distinct, DuplicateTreatment, Expr, Fetch, Function, FunctionArg, FunctionArgExpr,
    FunctionArguments, GroupByExpr, Ident, Join, JoinConstraint, JoinOperator, LimitClause, ObjectName, ObjectNamePart,
    OrderBy, OrderByExpr, OrderByKind, Query, Select, SelectFlavor, SelectItem, SetExpr, SetOperator, SetQuantifier,
    TableAlias, TableFactor, TableWithJoins, Top, TopQuantity, UnaryOperator, Value, WindowType, With,
};

const INDENT: &str = "  ";

/// `query` as `format!("{query:#}")` writes it.
pub fn pretty_query(query: &Query, capacity: usize) -> String {
    let mut p = Pretty { out: String::with_capacity(capacity), depth: 0 };
    p.query(query, true);
    p.out
}

/// The output with sqlparser's indentation: `depth` is how many of its
/// `Indent` adapters are open, each adding INDENT after a lone `"\n"`.
struct Pretty {
    out: String,
    depth: usize,
}

impl fmt::Write for Pretty {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        self.out.push_str(s);
        if s == "\n" {
            for _ in 0..self.depth {
                self.out.push_str(INDENT);
            }
        }
        Ok(())
    }
}

impl Pretty {
    /// Text that can be exactly `"\n"` (names, numbers: data), written as
    /// one piece as sqlparser writes it.
    fn text(&mut self, s: &str) {
        let _ = self.write_str(s);
    }

    /// Our own keywords and punctuation: never a lone newline.
    fn raw(&mut self, s: &str) {
        self.out.push_str(s);
    }

    /// A node sqlparser writes itself, in the formatter mode it would get.
    fn fallback(&mut self, node: &impl Display, pretty: bool) {
        // Writing into a String fails only when a Display impl does, and
        // sqlparser's do not.
        let _ = if pretty { write!(self, "{node:#}") } else { write!(self, "{node}") };
    }

    /// `SpaceOrNewline`.
    fn space_or_newline(&mut self, pretty: bool) {
        if pretty {
            self.text("\n");
        } else {
            self.raw(" ");
        }
    }

    /// `NewLine`.
    fn newline(&mut self, pretty: bool) {
        if pretty {
            self.text("\n");
        }
    }

    /// `Indent(x).fmt(f)`: in pretty mode INDENT, then `x` one level in.
    fn indented(&mut self, pretty: bool, body: impl FnOnce(&mut Self)) {
        if pretty {
            self.raw(INDENT);
            self.depth += 1;
            body(self);
            self.depth -= 1;
        } else {
            body(self);
        }
    }

    /// `DisplayCommaSeparated` in the caller's mode.
    fn comma_separated<T>(&mut self, items: &[T], pretty: bool, mut each: impl FnMut(&mut Self, &T)) {
        for (i, item) in items.iter().enumerate() {
            if i > 0 {
                self.raw(",");
                self.space_or_newline(pretty);
            }
            each(self, item);
        }
    }

    /// `indented_list`.
    fn indented_list<T>(&mut self, items: &[T], pretty: bool, each: impl FnMut(&mut Self, &T)) {
        self.space_or_newline(pretty);
        self.indented(pretty, |p| p.comma_separated(items, pretty, each));
    }

    /// `display_comma_separated` (`DisplaySeparated`): always `", "`, the
    /// items in the caller's mode (each given `pretty` by `each`).
    fn comma_list<T>(&mut self, items: &[T], each: impl FnMut(&mut Self, &T)) {
        // `DisplayCommaSeparated` in non-pretty mode writes the same `", "`.
        self.comma_separated(items, false, each);
    }

    fn query(&mut self, q: &Query, pretty: bool) {
        if q.settings.is_some() || !q.locks.is_empty() || q.for_clause.is_some() || q.format_clause.is_some() || !q.pipe_operators.is_empty() {
            return self.fallback(q, pretty);
        }
        if let Some(with) = &q.with {
            self.with(with, pretty);
            self.space_or_newline(pretty);
        }
        self.set_expr(&q.body, pretty);
        if let Some(order_by) = &q.order_by {
            self.raw(" ");
            self.order_by(order_by);
        }
        if let Some(limit) = &q.limit_clause {
            self.limit_clause(limit);
        }
        if let Some(fetch) = &q.fetch {
            self.raw(" ");
            self.fetch(fetch);
        }
    }

    fn with(&mut self, with: &With, pretty: bool) {
        self.raw("WITH ");
        if with.recursive {
            self.raw("RECURSIVE ");
        }
        self.comma_list(&with.cte_tables, |p, cte| {
            if cte.materialized.is_some() || cte.from.is_some() {
                return p.fallback(cte, pretty);
            }
            p.table_alias(&cte.alias);
            p.raw(" AS (");
            p.newline(pretty);
            p.indented(pretty, |p| p.query(&cte.query, pretty));
            p.newline(pretty);
            p.raw(")");
        });
    }

    /// `TableAlias`, always inside a `write!`.
    fn table_alias(&mut self, alias: &TableAlias) {
        if alias.at.is_some() || alias.columns.iter().any(|c| c.data_type.is_some()) {
            return self.fallback(alias, false);
        }
        if alias.explicit {
            self.raw("AS ");
        }
        self.ident(&alias.name);
        if !alias.columns.is_empty() {
            self.raw(" (");
            self.comma_list(&alias.columns, |p, c| p.ident(&c.name));
            self.raw(")");
        }
    }

    fn set_expr(&mut self, body: &SetExpr, pretty: bool) {
        match body {
            SetExpr::Select(select) => self.select(select, pretty),
            SetExpr::Query(q) => {
                self.raw("(");
                self.query(q, pretty);
                self.raw(")");
            }
            SetExpr::SetOperation { left, op, set_quantifier, right } => {
                let quantifier = match set_quantifier {
                    SetQuantifier::None => "",
                    SetQuantifier::All => " ALL",
                    SetQuantifier::Distinct => " DISTINCT",
                    _ => return self.fallback(body, pretty),
                };
                self.set_expr(left, pretty);
                self.space_or_newline(pretty);
                self.raw(match op {
                    SetOperator::Union => "UNION",
                    SetOperator::Except => "EXCEPT",
                    SetOperator::Intersect => "INTERSECT",
                    SetOperator::Minus => "MINUS",
                });
                self.raw(quantifier);
                self.space_or_newline(pretty);
                self.set_expr(right, pretty);
            }
            _ => self.fallback(body, pretty),
        }
    }

    fn select(&mut self, s: &Select, pretty: bool) {
        let plain = s.flavor == SelectFlavor::Standard
            && s.optimizer_hints.is_empty()
            && s.value_table_mode.is_none()
            && s.select_modifiers.is_none()
            && s.exclude.is_none()
            && s.into.is_none()
            && s.lateral_views.is_empty()
            && s.prewhere.is_none()
            && s.connect_by.is_empty()
            && s.cluster_by.is_empty()
            && s.distribute_by.is_empty()
            && s.sort_by.is_empty()
            && s.named_window.is_empty()
            && s.qualify.is_none()
            && matches!(&s.group_by, GroupByExpr::Expressions(_, modifiers) if modifiers.is_empty())
            && !matches!(s.distinct, Some(Distinct::On(_)));
        if !plain {
            return self.fallback(s, pretty);
        }
        self.raw("SELECT");
        if let (Some(top), true) = (&s.top, s.top_before_distinct) {
            self.raw(" ");
            self.top(top);
        }
        match s.distinct {
            Some(Distinct::Distinct) => self.raw(" DISTINCT"),
            Some(Distinct::All) => self.raw(" ALL"),
            _ => {}
        }
        if let (Some(top), false) = (&s.top, s.top_before_distinct) {
            self.raw(" ");
            self.top(top);
        }
        if !s.projection.is_empty() {
            self.indented_list(&s.projection, pretty, |p, item| p.select_item(item, pretty));
        }
        if !s.from.is_empty() {
            self.space_or_newline(pretty);
            self.raw("FROM");
            self.indented_list(&s.from, pretty, |p, t| p.table_with_joins(t, pretty));
        }
        if let Some(selection) = &s.selection {
            self.space_or_newline(pretty);
            self.raw("WHERE");
            self.space_or_newline(pretty);
            self.indented(pretty, |p| p.expr(selection, pretty));
        }
        if let GroupByExpr::Expressions(exprs, _) = &s.group_by {
            if !exprs.is_empty() {
                self.space_or_newline(pretty);
                self.raw("GROUP BY");
                self.space_or_newline(pretty);
                self.indented(pretty, |p| p.comma_list(exprs, |p, e| p.expr(e, pretty)));
            }
        }
        if let Some(having) = &s.having {
            self.space_or_newline(pretty);
            self.raw("HAVING");
            self.space_or_newline(pretty);
            self.indented(pretty, |p| p.expr(having, pretty));
        }
    }

    fn top(&mut self, top: &Top) {
        match &top.quantity {
            Some(TopQuantity::Expr(quantity)) => {
                self.raw("TOP (");
                self.expr(quantity, false);
                self.raw(")");
                if top.percent {
                    self.raw(" PERCENT");
                }
                if top.with_ties {
                    self.raw(" WITH TIES");
                }
            }
            _ => self.fallback(top, false),
        }
    }

    fn select_item(&mut self, item: &SelectItem, pretty: bool) {
        match item {
            SelectItem::UnnamedExpr(e) => self.expr(e, pretty),
            SelectItem::ExprWithAlias { expr, alias } => {
                self.expr(expr, pretty);
                self.raw(" AS ");
                self.ident(alias);
            }
            _ => self.fallback(item, pretty),
        }
    }

    fn table_with_joins(&mut self, t: &TableWithJoins, pretty: bool) {
        self.table_factor(&t.relation, pretty);
        for join in &t.joins {
            self.space_or_newline(pretty);
            self.join(join);
        }
    }

    fn join(&mut self, join: &Join) {
        let (keyword, constraint) = match &join.join_operator {
            JoinOperator::Join(c) => ("JOIN ", c),
            JoinOperator::Inner(c) => ("INNER JOIN ", c),
            JoinOperator::Left(c) => ("LEFT JOIN ", c),
            JoinOperator::LeftOuter(c) => ("LEFT OUTER JOIN ", c),
            JoinOperator::CrossJoin(c) => ("CROSS JOIN ", c),
            _ => return self.fallback(join, false),
        };
        if join.global || matches!(constraint, JoinConstraint::Natural | JoinConstraint::Using(_)) {
            return self.fallback(join, false);
        }
        self.raw(keyword);
        self.table_factor(&join.relation, false);
        if let JoinConstraint::On(on) = constraint {
            self.raw(" ON ");
            self.expr(on, false);
        }
    }

    fn table_factor(&mut self, t: &TableFactor, pretty: bool) {
        match t {
            TableFactor::Table {
                name,
                alias,
                args: None,
                with_hints,
                version: None,
                partitions,
                with_ordinality: false,
                json_path: None,
                sample: None,
                index_hints,
            } if with_hints.is_empty() && partitions.is_empty() && index_hints.is_empty() => {
                self.object_name(name);
                if let Some(alias) = alias {
                    self.raw(" ");
                    self.table_alias(alias);
                }
            }
            TableFactor::Derived { lateral, subquery, alias, sample: None } => {
                if *lateral {
                    self.raw("LATERAL ");
                }
                self.raw("(");
                self.newline(pretty);
                self.indented(pretty, |p| p.query(subquery, pretty));
                self.newline(pretty);
                self.raw(")");
                if let Some(alias) = alias {
                    self.raw(" ");
                    self.table_alias(alias);
                }
            }
            _ => self.fallback(t, pretty),
        }
    }

    fn order_by(&mut self, order_by: &OrderBy) {
        match (&order_by.kind, &order_by.interpolate) {
            (OrderByKind::Expressions(exprs), None) => {
                self.raw("ORDER BY ");
                self.comma_list(exprs, |p, e| p.order_by_expr(e));
            }
            _ => self.fallback(order_by, false),
        }
    }

    fn order_by_expr(&mut self, o: &OrderByExpr) {
        if o.with_fill.is_some() {
            return self.fallback(o, false);
        }
        self.expr(&o.expr, false);
        match o.options.asc {
            Some(true) => self.raw(" ASC"),
            Some(false) => self.raw(" DESC"),
            None => {}
        }
        match o.options.nulls_first {
            Some(true) => self.raw(" NULLS FIRST"),
            Some(false) => self.raw(" NULLS LAST"),
            None => {}
        }
    }

    fn limit_clause(&mut self, limit: &LimitClause) {
        match limit {
            LimitClause::LimitOffset { limit, offset: None, limit_by } if limit_by.is_empty() => {
                if let Some(limit) = limit {
                    self.raw(" LIMIT ");
                    self.expr(limit, false);
                }
            }
            _ => self.fallback(limit, false),
        }
    }

    fn fetch(&mut self, fetch: &Fetch) {
        match &fetch.quantity {
            Some(quantity) => {
                self.raw("FETCH FIRST ");
                self.expr(quantity, false);
                if fetch.percent {
                    self.raw(" PERCENT");
                }
                self.raw(if fetch.with_ties { " ROWS WITH TIES" } else { " ROWS ONLY" });
            }
            None => self.fallback(fetch, false),
        }
    }

    fn ident(&mut self, ident: &Ident) {
        match ident.quote_style {
            // sqlparser escapes a quote inside the name in its own way
            // (already-doubled quotes kept): its Display writes those.
            Some(q @ ('"' | '\'' | '`')) if !ident.value.contains(q) => {
                let mut quote = [0u8; 4];
                let quote: &str = q.encode_utf8(&mut quote);
                self.raw(quote);
                self.text(&ident.value);
                self.raw(quote);
            }
            Some('[') => {
                self.raw("[");
                self.text(&ident.value);
                self.raw("]");
            }
            None => self.text(&ident.value),
            _ => self.fallback(ident, false),
        }
    }

    fn object_name(&mut self, name: &ObjectName) {
        for (i, part) in name.0.iter().enumerate() {
            if i > 0 {
                self.raw(".");
            }
            match part {
                ObjectNamePart::Identifier(ident) => self.ident(ident),
                ObjectNamePart::Function(_) => self.fallback(part, false),
            }
        }
    }

    /// `Expr`'s Display. Most variants write through `write!`, which drops
    /// the alternate flag: their parts are never pretty. CASE and function
    /// calls pass it on.
    fn expr(&mut self, e: &Expr, pretty: bool) {
        match e {
            Expr::Identifier(ident) => self.ident(ident),
            Expr::CompoundIdentifier(parts) => {
                for (i, ident) in parts.iter().enumerate() {
                    if i > 0 {
                        self.raw(".");
                    }
                    self.ident(ident);
                }
            }
            Expr::Value(v) => match &v.value {
                Value::Number(n, false) => self.text(n),
                Value::Placeholder(text) => self.text(text),
                Value::Null => self.raw("NULL"),
                _ => self.fallback(e, false),
            },
            Expr::BinaryOp { left, op, right } => {
                let op = match op {
                    BinaryOperator::Plus => "+",
                    BinaryOperator::Minus => "-",
                    BinaryOperator::Multiply => "*",
                    BinaryOperator::Divide => "/",
                    BinaryOperator::Modulo => "%",
                    BinaryOperator::Gt => ">",
                    BinaryOperator::Lt => "<",
                    BinaryOperator::GtEq => ">=",
                    BinaryOperator::LtEq => "<=",
                    BinaryOperator::Eq => "=",
                    BinaryOperator::NotEq => "<>",
                    BinaryOperator::And => "AND",
                    BinaryOperator::Or => "OR",
                    _ => return self.fallback(e, false),
                };
                self.expr(left, false);
                self.raw(" ");
                self.raw(op);
                self.raw(" ");
                self.expr(right, false);
            }
            Expr::Nested(inner) => {
                self.raw("(");
                self.expr(inner, false);
                self.raw(")");
            }
            Expr::IsNull(inner) => {
                self.expr(inner, false);
                self.raw(" IS NULL");
            }
            Expr::IsNotNull(inner) => {
                self.expr(inner, false);
                self.raw(" IS NOT NULL");
            }
            Expr::IsDistinctFrom(a, b) | Expr::IsNotDistinctFrom(a, b) => {
                self.expr(a, false);
                self.raw(if matches!(e, Expr::IsDistinctFrom(..)) { " IS DISTINCT FROM " } else { " IS NOT DISTINCT FROM " });
                self.expr(b, false);
            }
            Expr::InList { expr, list, negated } => {
                self.expr(expr, false);
                self.raw(if *negated { " NOT IN (" } else { " IN (" });
                self.comma_list(list, |p, x| p.expr(x, false));
                self.raw(")");
            }
            Expr::InSubquery { expr, subquery, negated } => {
                self.expr(expr, false);
                self.raw(if *negated { " NOT IN (" } else { " IN (" });
                self.query(subquery, false);
                self.raw(")");
            }
            Expr::Exists { subquery, negated } => {
                self.raw(if *negated { "NOT EXISTS (" } else { "EXISTS (" });
                self.query(subquery, false);
                self.raw(")");
            }
            Expr::Subquery(q) => {
                self.raw("(");
                self.query(q, false);
                self.raw(")");
            }
            Expr::UnaryOp { op: UnaryOperator::Not, expr } => {
                self.raw("NOT ");
                self.expr(expr, false);
            }
            Expr::UnaryOp { op: UnaryOperator::Minus, expr } => {
                self.raw("-");
                self.expr(expr, false);
            }
            Expr::Like { negated, any, expr, pattern, escape_char: None } => {
                self.expr(expr, false);
                self.raw(if *negated { " NOT LIKE " } else { " LIKE " });
                if *any {
                    self.raw("ANY ");
                }
                self.expr(pattern, false);
            }
            Expr::Cast { kind: CastKind::Cast, expr, data_type, array: false, format: None } => {
                self.raw("CAST(");
                self.expr(expr, false);
                self.raw(" AS ");
                self.data_type(data_type);
                self.raw(")");
            }
            Expr::Function(f) => self.function(f, pretty),
            Expr::Case { operand, conditions, else_result, .. } => {
                self.raw("CASE");
                if let Some(operand) = operand {
                    self.raw(" ");
                    self.expr(operand, pretty);
                }
                for when in conditions {
                    self.space_or_newline(pretty);
                    self.indented(pretty, |p| {
                        p.raw("WHEN ");
                        p.expr(&when.condition, pretty);
                        p.raw(" THEN");
                        p.space_or_newline(pretty);
                        p.indented(pretty, |p| p.expr(&when.result, pretty));
                    });
                }
                if let Some(else_result) = else_result {
                    self.space_or_newline(pretty);
                    self.indented(pretty, |p| p.raw("ELSE"));
                    self.space_or_newline(pretty);
                    self.indented(pretty, |p| p.indented(pretty, |p| p.expr(else_result, pretty)));
                }
                self.space_or_newline(pretty);
                self.raw("END");
            }
            _ => self.fallback(e, pretty),
        }
    }

    fn data_type(&mut self, t: &DataType) {
        match t {
            DataType::Custom(name, modifiers) if modifiers.is_empty() => self.object_name(name),
            _ => self.fallback(t, false),
        }
    }

    /// `Function`'s Display: the name and arguments inside `write!`, OVER in
    /// the caller's mode.
    fn function(&mut self, f: &Function, pretty: bool) {
        let FunctionArguments::List(list) = &f.args else { return self.fallback(f, pretty) };
        let window = match &f.over {
            None => None,
            Some(WindowType::WindowSpec(spec)) if spec.window_name.is_none() && spec.window_frame.is_none() => Some(spec),
            Some(_) => return self.fallback(f, pretty),
        };
        if f.uses_odbc_syntax || !matches!(f.parameters, FunctionArguments::None) || !list.clauses.is_empty() || f.null_treatment.is_some() {
            return self.fallback(f, pretty);
        }
        self.object_name(&f.name);
        self.raw("(");
        match list.duplicate_treatment {
            Some(DuplicateTreatment::Distinct) => self.raw("DISTINCT "),
            Some(DuplicateTreatment::All) => self.raw("ALL "),
            None => {}
        }
        self.comma_list(&list.args, |p, arg| match arg {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => p.expr(e, false),
            FunctionArg::Unnamed(FunctionArgExpr::Wildcard) => p.raw("*"),
            _ => p.fallback(arg, false),
        });
        self.raw(")");
        if !f.within_group.is_empty() {
            self.raw(" WITHIN GROUP (ORDER BY ");
            self.comma_list(&f.within_group, |p, o| p.order_by_expr(o));
            self.raw(")");
        }
        if let Some(filter) = &f.filter {
            self.raw(" FILTER (WHERE ");
            self.expr(filter, false);
            self.raw(")");
        }
        if let Some(spec) = window {
            self.raw(" OVER (");
            self.newline(pretty);
            self.indented(pretty, |p| {
                let mut first = true;
                if !spec.partition_by.is_empty() {
                    first = false;
                    p.raw("PARTITION BY ");
                    p.comma_list(&spec.partition_by, |p, e| p.expr(e, false));
                }
                if !spec.order_by.is_empty() {
                    if !first {
                        p.space_or_newline(pretty);
                    }
                    p.raw("ORDER BY ");
                    p.comma_list(&spec.order_by, |p, o| p.order_by_expr(o));
                }
            });
            self.newline(pretty);
            self.raw(")");
        }
    }
}
