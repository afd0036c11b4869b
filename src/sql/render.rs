//! SQL text from our AST (`sql::ast`) in one pass: the same bytes as
//! sqlparser's pretty `Display` (`{:#}`) of the same statement, written
//! straight into one String.
//!
//! sqlparser indents by wrapping the writer in one `Indent` adapter per
//! nesting level; here `depth` counts those levels, and each function below
//! is a port of the `Display` impl it names, with `pretty` standing for the
//! formatter's alternate flag (most expression nodes write through
//! `write!`, which drops it: their parts are never pretty). sqlparser's own
//! nodes in our tree (a computed column's SQL, a dialect template's text)
//! are written by sqlparser's `Display` through [`Pretty`], which indents
//! exactly as its adapters do: INDENT per open level after every `"\n"`
//! written on its own. Checked against sqlparser's own text of the tree
//! `sql::oracle` converts, for every golden case, every dbt corpus request
//! and every oracle-fuzz request, each in every dialect
//! (`golden::check_written_as_sqlparser_writes`).
//!
//! Depends on `sql::ast` and sqlparser's `Display` only.

use std::fmt::{self, Display, Write as _};

use super::ast::{Body, Expr, Function, Item, Join, JoinKind, Limit, Name, OrderKey, Query, Relation, Select, Type, With};

const INDENT: &str = "  ";

/// `query` as sqlparser's `format!("{query:#}")` writes it, identifiers
/// in `quote`s.
pub fn pretty_query(query: &Query, quote: char, capacity: usize) -> String {
    let mut p = Pretty { out: String::with_capacity(capacity), depth: 0, quote };
    p.query(query, true);
    p.out
}

/// The output with sqlparser's indentation: `depth` is how many of its
/// `Indent` adapters are open, each adding INDENT after a lone `"\n"`.
struct Pretty {
    out: String,
    depth: usize,
    quote: char,
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
        if let Some(with) = &q.with {
            self.with(with, pretty);
            self.space_or_newline(pretty);
        }
        let top = match (q.limit, &q.body) {
            (Some(Limit::Top(n)), Body::Select(_)) => Some(n),
            _ => None,
        };
        self.body(&q.body, top, pretty);
        if !q.order_by.is_empty() {
            self.raw(" ORDER BY ");
            self.comma_list(&q.order_by, |p, o| p.order_key(o));
        }
        match q.limit {
            Some(Limit::Limit(n)) => {
                self.raw(" LIMIT ");
                self.number(n);
            }
            Some(Limit::FetchFirst(n)) => {
                self.raw(" FETCH FIRST ");
                self.number(n);
                self.raw(" ROWS ONLY");
            }
            Some(Limit::Top(_)) | None => {}
        }
    }

    fn number(&mut self, n: u64) {
        let _ = write!(self.out, "{n}");
    }

    fn with(&mut self, with: &With, pretty: bool) {
        self.raw("WITH ");
        if with.recursive {
            self.raw("RECURSIVE ");
        }
        self.comma_list(&with.ctes, |p, cte| {
            // `TableAlias`: `name (columns)`, not explicit.
            p.name(cte.name);
            if !cte.columns.is_empty() {
                p.raw(" (");
                p.comma_list(&cte.columns, |p, c| p.name(*c));
                p.raw(")");
            }
            p.raw(" AS (");
            p.newline(pretty);
            p.indented(pretty, |p| p.query(&cte.query, pretty));
            p.newline(pretty);
            p.raw(")");
        });
    }

    /// `SetExpr`; `top` is the query's TOP, written in its SELECT.
    fn body(&mut self, body: &Body, top: Option<u64>, pretty: bool) {
        match body {
            Body::Select(select) => self.select(select, top, pretty),
            Body::Union { left, right, all } => {
                self.body(left, None, pretty);
                self.space_or_newline(pretty);
                self.raw(if *all { "UNION ALL" } else { "UNION" });
                self.space_or_newline(pretty);
                self.body(right, None, pretty);
            }
        }
    }

    fn select(&mut self, s: &Select, top: Option<u64>, pretty: bool) {
        self.raw("SELECT");
        if s.distinct {
            self.raw(" DISTINCT");
        }
        if let Some(n) = top {
            self.raw(" TOP (");
            self.number(n);
            self.raw(")");
        }
        if !s.projection.is_empty() {
            self.indented_list(&s.projection, pretty, |p, item| p.item(item, pretty));
        }
        self.space_or_newline(pretty);
        self.raw("FROM");
        self.space_or_newline(pretty);
        self.indented(pretty, |p| {
            p.relation(&s.from, pretty);
            for join in &s.joins {
                p.space_or_newline(pretty);
                p.join(join);
            }
        });
        if let Some(selection) = &s.selection {
            self.space_or_newline(pretty);
            self.raw("WHERE");
            self.space_or_newline(pretty);
            self.indented(pretty, |p| p.expr(selection, pretty));
        }
        if !s.group_by.is_empty() {
            self.space_or_newline(pretty);
            self.raw("GROUP BY");
            self.space_or_newline(pretty);
            self.indented(pretty, |p| p.comma_list(&s.group_by, |p, e| p.expr(e, pretty)));
        }
        if let Some(having) = &s.having {
            self.space_or_newline(pretty);
            self.raw("HAVING");
            self.space_or_newline(pretty);
            self.indented(pretty, |p| p.expr(having, pretty));
        }
    }

    fn item(&mut self, item: &Item, pretty: bool) {
        match item {
            Item::Expr(e) => self.expr(e, pretty),
            Item::Aliased(e, alias) => {
                self.expr(e, pretty);
                self.raw(" AS ");
                self.name(*alias);
            }
            Item::Wildcard(name) => {
                self.name(*name);
                self.raw(".*");
            }
        }
    }

    fn join(&mut self, join: &Join) {
        self.raw(match join.kind {
            JoinKind::Inner => "JOIN ",
            JoinKind::Left => "LEFT JOIN ",
            JoinKind::Cross => "CROSS JOIN ",
        });
        self.relation(&join.relation, false);
        if let Some(on) = &join.on {
            self.raw(" ON ");
            self.expr(on, false);
        }
    }

    fn relation(&mut self, r: &Relation, pretty: bool) {
        match r {
            Relation::Table { schema, table, alias } => {
                self.name(Name::Str(schema));
                self.raw(".");
                self.name(Name::Str(table));
                self.raw(" AS ");
                self.name(*alias);
            }
            Relation::Cte(name) => self.name(*name),
            // sqlparser's NestedJoin: its joins one line whatever the mode.
            Relation::Nested(first, joins) => {
                self.raw("(");
                self.relation(first, false);
                for join in joins {
                    self.raw(" ");
                    self.join(join);
                }
                self.raw(")");
            }
            Relation::Derived(subquery, alias) => {
                self.raw("(");
                self.newline(pretty);
                self.indented(pretty, |p| p.query(subquery, pretty));
                self.newline(pretty);
                self.raw(") AS ");
                self.name(*alias);
            }
        }
    }

    fn order_key(&mut self, o: &OrderKey) {
        self.expr(&o.expr, false);
        self.raw(if o.descending { " DESC" } else { " ASC" });
        match o.nulls_last {
            Some(true) => self.raw(" NULLS LAST"),
            Some(false) => self.raw(" NULLS FIRST"),
            None => {}
        }
    }

    /// `Ident` in the dialect's quotes.
    fn name(&mut self, name: Name) {
        let q = self.quote;
        let (open, close) = match q {
            '[' => ("[", "]"),
            '"' => ("\"", "\""),
            '`' => ("`", "`"),
            _ => ("'", "'"),
        };
        match name {
            // sqlparser escapes a quote inside the name in its own way
            // (already-doubled quotes kept): its Display writes those.
            Name::Str(s) if q != '[' && s.contains(q) => self.fallback(&sqlparser::ast::Ident::with_quote(q, s), false),
            Name::Str(s) => {
                self.raw(open);
                self.text(s);
                self.raw(close);
            }
            Name::Indexed(prefix, i) => {
                self.raw(open);
                self.raw(prefix);
                let _ = write!(self.out, "{i}");
                self.raw(close);
            }
        }
    }

    /// `Expr`'s Display. Most variants write through `write!`, which drops
    /// the alternate flag: their parts are never pretty. CASE and function
    /// calls pass it on.
    fn expr(&mut self, e: &Expr, pretty: bool) {
        match e {
            Expr::Column(alias, column) => {
                self.name(*alias);
                self.raw(".");
                self.name(*column);
            }
            Expr::Ident(name) => self.name(*name),
            Expr::Number(n) => self.text(n),
            Expr::Placeholder(p) => self.text(p),
            Expr::Binary(left, op, right) => {
                self.expr(left, false);
                self.raw(" ");
                self.raw(op.as_str());
                self.raw(" ");
                self.expr(right, false);
            }
            Expr::Nested(inner) => {
                self.raw("(");
                self.expr(inner, false);
                self.raw(")");
            }
            Expr::Neg(inner) => {
                self.raw("-");
                self.expr(inner, false);
            }
            Expr::IsNull(inner) => {
                self.expr(inner, false);
                self.raw(" IS NULL");
            }
            Expr::IsNotNull(inner) => {
                self.expr(inner, false);
                self.raw(" IS NOT NULL");
            }
            Expr::IsNotDistinctFrom(a, b) => {
                self.expr(a, false);
                self.raw(" IS NOT DISTINCT FROM ");
                self.expr(b, false);
            }
            Expr::InList { expr, list, negated } => {
                self.expr(expr, false);
                self.raw(if *negated { " NOT IN (" } else { " IN (" });
                self.comma_list(list, |p, x| p.expr(x, false));
                self.raw(")");
            }
            Expr::InSubquery(expr, subquery) => {
                self.expr(expr, false);
                self.raw(" IN (");
                self.query(subquery, false);
                self.raw(")");
            }
            Expr::Exists(subquery) => {
                self.raw("EXISTS (");
                self.query(subquery, false);
                self.raw(")");
            }
            Expr::Subquery(subquery) => {
                self.raw("(");
                self.query(subquery, false);
                self.raw(")");
            }
            Expr::Like { expr, pattern, negated } => {
                self.expr(expr, false);
                self.raw(if *negated { " NOT LIKE " } else { " LIKE " });
                self.expr(pattern, false);
            }
            Expr::Cast(expr, to) => {
                self.raw("CAST(");
                self.expr(expr, false);
                self.raw(" AS ");
                match to {
                    Type::Named(name) => self.text(name),
                    Type::Binary => self.raw("BINARY"),
                }
                self.raw(")");
            }
            Expr::Function(f) => self.function(f, pretty),
            Expr::CountRows => self.raw("count(*)"),
            Expr::Case(case) => {
                self.raw("CASE");
                self.space_or_newline(pretty);
                self.indented(pretty, |p| {
                    p.raw("WHEN ");
                    p.expr(&case.condition, pretty);
                    p.raw(" THEN");
                    p.space_or_newline(pretty);
                    p.indented(pretty, |p| p.expr(&case.result, pretty));
                });
                if let Some(otherwise) = &case.otherwise {
                    self.space_or_newline(pretty);
                    self.indented(pretty, |p| p.raw("ELSE"));
                    self.space_or_newline(pretty);
                    self.indented(pretty, |p| p.indented(pretty, |p| p.expr(otherwise, pretty)));
                }
                self.space_or_newline(pretty);
                self.raw("END");
            }
            Expr::Template(template, x) if template.is_identity() => self.expr(x, pretty),
            Expr::Template(template, x) => {
                for (i, piece) in template.pieces.iter().enumerate() {
                    if i > 0 {
                        self.expr(x, false);
                    }
                    self.text(piece);
                }
            }
            Expr::Foreign(e) => self.fallback(&**e, pretty),
        }
    }

    /// `Function`'s Display: the name and arguments inside `write!`, OVER in
    /// the caller's mode.
    fn function(&mut self, f: &Function, pretty: bool) {
        self.raw(f.name);
        self.raw("(");
        if f.distinct {
            self.raw("DISTINCT ");
        }
        self.comma_list(&f.args, |p, arg| p.expr(arg, false));
        self.raw(")");
        if let Some(order) = &f.within_group {
            self.raw(" WITHIN GROUP (ORDER BY ");
            self.expr(order, false);
            self.raw(" ASC)");
        }
        if let Some(spec) = &f.over {
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
                    p.comma_list(&spec.order_by, |p, o| p.order_key(o));
                }
            });
            self.newline(pretty);
            self.raw(")");
        }
    }
}
