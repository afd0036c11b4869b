//! Our own small SQL AST: exactly the shapes the lowering writes, and
//! nothing else. Names are borrowed from the plan (`Name`), so building a
//! statement copies no identifier; the few names we make up (`sb_m3`) are
//! a prefix and a number, written only when the text is.
//!
//! sqlparser's AST stays the oracle for the text: `sql::oracle` converts
//! this tree into sqlparser's, and the tests compare `sql::render`'s bytes
//! with sqlparser's pretty `Display` of the converted tree for every golden
//! case, dbt corpus request and oracle-fuzz request in every dialect. What
//! we cannot write ourselves is held as sqlparser's own node and written by
//! it: a computed column's parsed SQL (`Expr::Foreign`), a dialect template
//! around our expression (`Expr::Template`).
//!
//! Depends on nothing but sqlparser's `Expr` (for those two) and the
//! dialect's template parser.

use std::borrow::Cow;
use std::sync::Arc;

/// An identifier, written quoted in the dialect's quotes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Name<'a> {
    Str(&'a str),
    /// `prefix` followed by the number: `sb_k0`, `sb_m3`.
    Indexed(&'static str, usize),
}

impl<'a> From<&'a str> for Name<'a> {
    fn from(s: &'a str) -> Self {
        Name::Str(s)
    }
}

impl<'a> From<&'a String> for Name<'a> {
    fn from(s: &'a String) -> Self {
        Name::Str(s)
    }
}

impl<'a> From<(&'static str, usize)> for Name<'a> {
    fn from((prefix, i): (&'static str, usize)) -> Self {
        Name::Indexed(prefix, i)
    }
}

impl std::fmt::Display for Name<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Name::Str(s) => f.write_str(s),
            Name::Indexed(prefix, i) => write!(f, "{prefix}{i}"),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    Plus,
    Minus,
    Multiply,
    Divide,
    Gt,
    Lt,
    GtEq,
    LtEq,
    Eq,
    NotEq,
    And,
    Or,
    /// MySQL's NULL-safe equality `<=>`.
    Spaceship,
}

impl Op {
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Plus => "+",
            Op::Minus => "-",
            Op::Multiply => "*",
            Op::Divide => "/",
            Op::Gt => ">",
            Op::Lt => "<",
            Op::GtEq => ">=",
            Op::LtEq => "<=",
            Op::Eq => "=",
            Op::NotEq => "<>",
            Op::And => "AND",
            Op::Or => "OR",
            Op::Spaceship => "<=>",
        }
    }
}

/// A type a value is cast to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Type {
    /// By its engine name (`DOUBLE PRECISION`, `FLOAT64`, `DATETIME2`).
    Named(&'static str),
    /// `BINARY` (MySQL compares LIKE case-sensitively on bytes).
    Binary,
}

#[derive(Clone, Debug)]
pub enum Expr<'a> {
    /// `"alias"."column"`.
    Column(Name<'a>, Name<'a>),
    /// A bare quoted identifier: an output column's alias.
    Ident(Name<'a>),
    /// A number as written.
    Number(Cow<'a, str>),
    /// A bound parameter's placeholder (`$1`, `?`, `@p1`).
    Placeholder(String),
    Binary(Box<Expr<'a>>, Op, Box<Expr<'a>>),
    /// `(e)`.
    Nested(Box<Expr<'a>>),
    /// `-e`.
    Neg(Box<Expr<'a>>),
    IsNull(Box<Expr<'a>>),
    IsNotNull(Box<Expr<'a>>),
    IsNotDistinctFrom(Box<Expr<'a>>, Box<Expr<'a>>),
    InList { expr: Box<Expr<'a>>, list: Vec<Expr<'a>>, negated: bool },
    InSubquery(Box<Expr<'a>>, Box<Query<'a>>),
    Exists(Box<Query<'a>>),
    /// `(query)`: a scalar subquery, one column and at most one row.
    Subquery(Box<Query<'a>>),
    Like { expr: Box<Expr<'a>>, pattern: Box<Expr<'a>>, negated: bool },
    Cast(Box<Expr<'a>>, Type),
    Function(Box<Function<'a>>),
    /// `count(*)`.
    CountRows,
    /// `CASE WHEN condition THEN result [ELSE otherwise] END`.
    Case(Box<Case<'a>>),
    /// A dialect template with our expression where it says `sb_x`.
    Template(Arc<Template>, Box<Expr<'a>>),
    /// A computed column's own SQL, parsed for the dialect.
    Foreign(Arc<sqlparser::ast::Expr>),
}

#[derive(Clone, Debug)]
pub struct Function<'a> {
    /// Written as it is, unquoted.
    pub name: &'static str,
    pub args: Vec<Expr<'a>>,
    pub distinct: bool,
    /// `WITHIN GROUP (ORDER BY e ASC)`.
    pub within_group: Option<Expr<'a>>,
    /// `OVER (PARTITION BY … ORDER BY …)`.
    pub over: Option<Window<'a>>,
}

#[derive(Clone, Debug)]
pub struct Window<'a> {
    pub partition_by: Vec<Expr<'a>>,
    pub order_by: Vec<OrderKey<'a>>,
}

#[derive(Clone, Debug)]
pub struct Case<'a> {
    pub condition: Expr<'a>,
    pub result: Expr<'a>,
    pub otherwise: Option<Expr<'a>>,
}

/// A dialect template (`date_trunc('month', sb_x)`), parsed once: its text
/// as sqlparser writes it, cut where `sb_x` stands.
#[derive(Debug)]
pub struct Template {
    /// The template's own text, for the oracle to parse again.
    pub source: String,
    pub dialect: &'static super::Dialect,
    /// The text around each `sb_x`: one more piece than places.
    pub pieces: Vec<Box<str>>,
    /// Whether the template is an operation at its top (`sb_x + INTERVAL …`).
    pub operation: bool,
}

impl Template {
    /// Whether the template is `sb_x` itself: its expression stands in its place.
    pub fn is_identity(&self) -> bool {
        matches!(self.pieces.as_slice(), [before, after] if before.is_empty() && after.is_empty())
    }
}

impl Expr<'_> {
    /// Whether the text is an operation at its top, which an operator
    /// written after it would bind into.
    pub fn is_operation(&self) -> bool {
        match self {
            Expr::Binary(..) => true,
            Expr::Template(t, x) if t.is_identity() => x.is_operation(),
            Expr::Template(t, _) => t.operation,
            _ => false,
        }
    }
}

#[derive(Clone, Debug)]
pub struct OrderKey<'a> {
    pub expr: Expr<'a>,
    pub descending: bool,
    /// `Some(true)`: NULLS LAST; `Some(false)`: NULLS FIRST; `None`: unsaid.
    pub nulls_last: Option<bool>,
}

#[derive(Clone, Debug)]
pub struct Query<'a> {
    pub with: Option<With<'a>>,
    pub body: Body<'a>,
    pub order_by: Vec<OrderKey<'a>>,
    pub limit: Option<Limit>,
}

/// A row limit in one of the three spellings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[allow(clippy::enum_variant_names)] // each variant is the SQL keyword it writes
pub enum Limit {
    Limit(u64),
    /// `SELECT TOP (n)`: written only on a single SELECT.
    Top(u64),
    FetchFirst(u64),
}

#[derive(Clone, Debug)]
pub enum Body<'a> {
    Select(Box<Select<'a>>),
    Union { left: Box<Body<'a>>, right: Box<Body<'a>>, all: bool },
}

#[derive(Clone, Debug)]
pub struct Select<'a> {
    pub distinct: bool,
    pub projection: Vec<Item<'a>>,
    pub from: Relation<'a>,
    pub joins: Vec<Join<'a>>,
    pub selection: Option<Expr<'a>>,
    pub group_by: Vec<Expr<'a>>,
    pub having: Option<Expr<'a>>,
}

#[derive(Clone, Debug)]
pub enum Item<'a> {
    Expr(Expr<'a>),
    Aliased(Expr<'a>, Name<'a>),
    /// `"alias".*`.
    Wildcard(Name<'a>),
}

#[derive(Clone, Debug)]
pub enum Relation<'a> {
    /// `"schema"."table" AS "alias"`.
    Table { schema: &'a str, table: &'a str, alias: Name<'a> },
    /// A CTE by its name.
    Cte(Name<'a>),
    /// `(query) AS "alias"`.
    Derived(Box<Query<'a>>, Name<'a>),
    /// `(first JOIN … ON …)`: joins written inside parentheses, joined to
    /// the rest as one relation (their aliases stay visible outside).
    Nested(Box<Relation<'a>>, Vec<Join<'a>>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JoinKind {
    /// `JOIN` (inner).
    Inner,
    Left,
    Cross,
}

#[derive(Clone, Debug)]
pub struct Join<'a> {
    pub kind: JoinKind,
    pub relation: Relation<'a>,
    /// `None` only for a cross join.
    pub on: Option<Expr<'a>>,
}

#[derive(Clone, Debug)]
pub struct With<'a> {
    pub recursive: bool,
    pub ctes: Vec<Cte<'a>>,
}

/// A common table expression, with its column list when it has one.
#[derive(Clone, Debug)]
pub struct Cte<'a> {
    pub name: Name<'a>,
    pub columns: Vec<Name<'a>>,
    pub query: Query<'a>,
}

// ---- builders: what the lowering calls ----

/// `"alias"."column"`.
pub fn column<'a>(alias: impl Into<Name<'a>>, column: impl Into<Name<'a>>) -> Expr<'a> {
    Expr::Column(alias.into(), column.into())
}

pub fn number<'a>(text: impl Into<Cow<'a, str>>) -> Expr<'a> {
    Expr::Number(text.into())
}

pub fn binary<'a>(left: Expr<'a>, op: Op, right: Expr<'a>) -> Expr<'a> {
    Expr::Binary(Box::new(left), op, Box::new(right))
}

pub fn nested(e: Expr<'_>) -> Expr<'_> {
    Expr::Nested(Box::new(e))
}

pub fn is_null(e: Expr<'_>) -> Expr<'_> {
    Expr::IsNull(Box::new(e))
}

/// `a AND b AND …`, left to right; `None` for no expressions.
pub fn and_all(exprs: Vec<Expr<'_>>) -> Option<Expr<'_>> {
    let mut exprs = exprs.into_iter();
    let first = exprs.next()?;
    Some(exprs.fold(first, |acc, e| binary(acc, Op::And, e)))
}

pub fn cast(e: Expr<'_>, to: Type) -> Expr<'_> {
    Expr::Cast(Box::new(e), to)
}

/// `name(args…)`, or `name(DISTINCT args…)`.
pub fn function<'a>(name: &'static str, args: Vec<Expr<'a>>, distinct: bool) -> Expr<'a> {
    Expr::Function(Box::new(Function { name, args, distinct, within_group: None, over: None }))
}

/// `count(*)`: the rows, whatever their values.
pub fn count_rows<'a>() -> Expr<'a> {
    Expr::CountRows
}

/// `name(args…) WITHIN GROUP (ORDER BY order)`.
pub fn function_within_group<'a>(name: &'static str, args: Vec<Expr<'a>>, order: Expr<'a>) -> Expr<'a> {
    Expr::Function(Box::new(Function { name, args, distinct: false, within_group: Some(order), over: None }))
}

/// `name(arg) OVER (PARTITION BY partition…)`.
pub fn window_function<'a>(name: &'static str, arg: Expr<'a>, partition_by: Vec<Expr<'a>>) -> Expr<'a> {
    let over = Some(Window { partition_by, order_by: Vec::new() });
    Expr::Function(Box::new(Function { name, args: vec![arg], distinct: false, within_group: None, over }))
}

/// `ROW_NUMBER() OVER (PARTITION BY partition ORDER BY order)`.
pub fn row_number<'a>(partition_by: Vec<Expr<'a>>, order_by: Vec<OrderKey<'a>>) -> Expr<'a> {
    let over = Some(Window { partition_by, order_by });
    Expr::Function(Box::new(Function { name: "row_number", args: Vec::new(), distinct: false, within_group: None, over }))
}

/// `CASE WHEN condition THEN result END`.
pub fn case_when<'a>(condition: Expr<'a>, result: Expr<'a>) -> Expr<'a> {
    Expr::Case(Box::new(Case { condition, result, otherwise: None }))
}

/// `CASE WHEN condition THEN result ELSE otherwise END`.
pub fn case_when_else<'a>(condition: Expr<'a>, result: Expr<'a>, otherwise: Expr<'a>) -> Expr<'a> {
    Expr::Case(Box::new(Case { condition, result, otherwise: Some(otherwise) }))
}

/// `NULLIF(e, 0)`.
pub fn null_if_zero(e: Expr<'_>) -> Expr<'_> {
    function("nullif", vec![e, number("0")], false)
}

/// `expr IN (query)`.
pub fn in_subquery<'a>(expr: Expr<'a>, query: Query<'a>) -> Expr<'a> {
    Expr::InSubquery(Box::new(expr), Box::new(query))
}

/// `EXISTS (query)`.
pub fn exists(query: Query<'_>) -> Expr<'_> {
    Expr::Exists(Box::new(query))
}

/// `(query)`, a scalar subquery.
pub fn subquery(query: Query<'_>) -> Expr<'_> {
    Expr::Subquery(Box::new(query))
}

/// `expr [NOT] LIKE pattern`, with the engine's own escape rules.
pub fn like<'a>(expr: Expr<'a>, pattern: Expr<'a>, negated: bool) -> Expr<'a> {
    Expr::Like { expr: Box::new(expr), pattern: Box::new(pattern), negated }
}

pub fn aliased<'a>(e: Expr<'a>, alias: impl Into<Name<'a>>) -> Item<'a> {
    Item::Aliased(e, alias.into())
}

pub fn order_key(expr: Expr<'_>, descending: bool, nulls_last: Option<bool>) -> OrderKey<'_> {
    OrderKey { expr, descending, nulls_last }
}

/// `"schema"."table" AS "alias"`.
pub fn table<'a>(schema: &'a str, table: &'a str, alias: impl Into<Name<'a>>) -> Relation<'a> {
    Relation::Table { schema, table, alias: alias.into() }
}

/// A reference to a CTE by name: `"name"`.
pub fn cte_ref<'a>(name: impl Into<Name<'a>>) -> Relation<'a> {
    Relation::Cte(name.into())
}

/// `(query) AS "alias"`.
pub fn derived<'a>(query: Query<'a>, alias: impl Into<Name<'a>>) -> Relation<'a> {
    Relation::Derived(Box::new(query), alias.into())
}

/// `(SELECT t.*, e1 AS c1, … FROM schema.table AS t [WHERE filter]) AS
/// alias`: a table with computed columns added, each expression reading the
/// table's own columns unqualified, and only the rows `filter` (over the same
/// columns) keeps.
pub fn table_with_columns<'a>(schema: &'a str, table: &'a str, alias: &'a str, computed: impl Iterator<Item = (Expr<'a>, &'a str)>, filter: Option<Expr<'a>>) -> Relation<'a> {
    const INNER: &str = "sb_c";
    let mut projection = vec![Item::Wildcard(Name::Str(INNER))];
    projection.extend(computed.map(|(e, name)| aliased(e, name)));
    let q = query(Select { projection, selection: filter, ..Select::from(self::table(schema, table, INNER)) });
    derived(q, alias)
}

pub fn left_join<'a>(relation: Relation<'a>, on: Expr<'a>) -> Join<'a> {
    Join { kind: JoinKind::Left, relation, on: Some(on) }
}

pub fn inner_join<'a>(relation: Relation<'a>, on: Expr<'a>) -> Join<'a> {
    Join { kind: JoinKind::Inner, relation, on: Some(on) }
}

/// `(first joins…)`.
pub fn nested_join<'a>(first: Relation<'a>, joins: Vec<Join<'a>>) -> Relation<'a> {
    Relation::Nested(Box::new(first), joins)
}

pub fn cross_join(relation: Relation<'_>) -> Join<'_> {
    Join { kind: JoinKind::Cross, relation, on: None }
}

/// `SELECT a UNION SELECT b` (distinct), as a query body.
pub fn union<'a>(left: Query<'a>, right: Query<'a>) -> Query<'a> {
    set_operation(left, right, false)
}

/// `SELECT a UNION ALL SELECT b`.
pub fn union_all<'a>(left: Query<'a>, right: Query<'a>) -> Query<'a> {
    set_operation(left, right, true)
}

fn set_operation<'a>(left: Query<'a>, right: Query<'a>, all: bool) -> Query<'a> {
    let body = Body::Union { left: Box::new(left.body), right: Box::new(right.body), all };
    Query { with: None, body, order_by: Vec::new(), limit: None }
}

/// `WITH [RECURSIVE] name [(columns)] AS (query), … outer`.
pub fn with_ctes<'a>(ctes: Vec<Cte<'a>>, recursive: bool, mut outer: Query<'a>) -> Query<'a> {
    outer.with = Some(With { recursive, ctes });
    outer
}

/// The query without ORDER BY and without any limit: a whole answer used
/// as a relation.
pub fn clear_order_and_limit(q: &mut Query<'_>) {
    q.order_by.clear();
    q.limit = None;
}

impl<'a> From<Relation<'a>> for Select<'a> {
    /// `SELECT … FROM from`, with nothing else yet.
    fn from(from: Relation<'a>) -> Self {
        Select { distinct: false, projection: Vec::new(), from, joins: Vec::new(), selection: None, group_by: Vec::new(), having: None }
    }
}

/// The query of one SELECT, unordered and unlimited.
pub fn query(select: Select<'_>) -> Query<'_> {
    Query { with: None, body: Body::Select(Box::new(select)), order_by: Vec::new(), limit: None }
}

/// The query of one SELECT, ordered and limited.
pub fn ordered<'a>(select: Select<'a>, order_by: Vec<OrderKey<'a>>, limit: Option<Limit>) -> Query<'a> {
    Query { order_by, limit, ..query(select) }
}

/// A dialect template (our own constant SQL, parsed once per dialect and
/// text) with `x` where it says `sb_x`.
pub fn from_template<'a>(template: &str, dialect: &'static super::Dialect, x: Expr<'a>) -> Expr<'a> {
    Expr::Template(super::build::template(template, dialect), Box::new(x))
}
