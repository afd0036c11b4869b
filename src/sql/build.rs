//! Small builders over sqlparser's AST, for the oracle (`sql::oracle`
//! builds sqlparser's tree of every statement we write, to compare texts),
//! and the parsing our own AST needs: dialect templates and computed
//! columns, each parsed once. With the oracle, the only file that builds
//! sqlparser's large structs.
//!
//! The big structs (`Query`, `Select`, a table factor, a function call) have
//! many dialect-specific fields and no `Default`; we take each from a parsed
//! template once and fill in only what we use.

use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use sqlparser::ast::{
    BinaryOperator, CastKind, DataType, DuplicateTreatment, Expr, Function, FunctionArg, FunctionArgExpr,
    FunctionArgumentList, FunctionArguments, GroupByExpr, Ident, Join, JoinConstraint, JoinOperator, ObjectName,
    ObjectNamePart, OrderBy, OrderByExpr, OrderByKind, OrderByOptions, Query, Select, SelectItem, SetExpr, Statement,
    TableFactor, TableWithJoins, Value, WindowSpec, WindowType,
};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;

struct Templates {
    query: Query,
    table: TableFactor,
    function: Function,
    with: sqlparser::ast::With,
    case: Expr,
}

// Parses our own constant SQL, never input; every golden test runs it.
#[allow(clippy::expect_used, clippy::indexing_slicing)]
fn templates() -> &'static Templates {
    static T: OnceLock<Templates> = OnceLock::new();
    T.get_or_init(|| {
        let stmt = Parser::parse_sql(&GenericDialect {}, "SELECT f(x) FROM s.t AS a")
            .expect("template parses")
            .remove(0);
        let Statement::Query(query) = stmt else { unreachable!("template is a query") };
        let SetExpr::Select(select) = query.body.as_ref() else { unreachable!("template is a select") };
        let table = select.from[0].relation.clone();
        let SelectItem::UnnamedExpr(Expr::Function(function)) = &select.projection[0] else {
            unreachable!("template projects a function")
        };
        let function = function.clone();
        // Kept blank: `query` clones it for every SELECT it builds.
        let mut query = *query;
        if let SetExpr::Select(select) = query.body.as_mut() {
            select.projection.clear();
            select.from.clear();
        }
        let with_stmt = Parser::parse_sql(&GenericDialect {}, "WITH c AS (SELECT 1) SELECT 1").expect("template parses").remove(0);
        let Statement::Query(with_query) = with_stmt else { unreachable!("template is a query") };
        let with = with_query.with.clone().expect("template has a WITH");
        let case = Parser::new(&GenericDialect {})
            .try_with_sql("CASE WHEN a THEN 1 END")
            .and_then(|mut p| p.parse_expr())
            .expect("template parses");
        Templates { query, table, function, with, case }
    })
}

/// A quoted identifier.
pub fn ident(quote: char, name: &str) -> Ident {
    Ident::with_quote(quote, name)
}

/// `"alias"."column"`.
pub fn column(quote: char, alias: &str, column: &str) -> Expr {
    Expr::CompoundIdentifier(vec![ident(quote, alias), ident(quote, column)])
}

pub fn number(text: &str) -> Expr {
    Expr::value(Value::Number(text.to_string(), false))
}

pub fn placeholder(text: String) -> Expr {
    Expr::value(Value::Placeholder(text))
}

pub fn binary(left: Expr, op: BinaryOperator, right: Expr) -> Expr {
    Expr::BinaryOp { left: Box::new(left), op, right: Box::new(right) }
}

pub fn nested(e: Expr) -> Expr {
    Expr::Nested(Box::new(e))
}

pub fn cast(e: Expr, data_type: DataType) -> Expr {
    Expr::Cast { kind: CastKind::Cast, expr: Box::new(e), data_type, array: false, format: None }
}

/// A type by its engine name (`DOUBLE PRECISION`, `FLOAT64`, `DATETIME2`).
pub fn named_type(name: &str) -> DataType {
    DataType::Custom(ObjectName(vec![ObjectNamePart::Identifier(Ident::new(name))]), Vec::new())
}

/// Parses an expression template written for `dialect` (once per dialect
/// and template: parsed trees are kept) and puts `x` where the template
/// says `sb_x`. Templates are our own constant SQL, each parsed by a test
/// for every dialect; `x` is an AST, so nothing from a request is ever
/// parsed here.
pub fn from_template(template: &str, dialect: &'static super::Dialect, x: &Expr) -> Expr {
    let mut e = Expr::clone(&parse_template(template, dialect));
    let _ = sqlparser::ast::visit_expressions_mut(&mut e, |node| {
        if matches!(node, Expr::Identifier(id) if id.value == "sb_x") {
            *node = x.clone();
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    e
}

fn parse_template(template: &str, dialect: &'static super::Dialect) -> Arc<Expr> {
    cached_parse(template, dialect, |text| {
        Parser::new(dialect.parser_dialect())
            .try_with_sql(text)
            .and_then(|mut p| p.parse_expr())
            .map_err(|e| e.to_string())
    })
    .unwrap_or_else(|err| panic!("dialect template `{template}` does not parse: {err}"))
}

/// A dialect template as our AST holds it: sqlparser's text of the parsed
/// template, cut where `sb_x` stands (once per dialect and template).
pub fn template(text: &str, dialect: &'static super::Dialect) -> Arc<super::ast::Template> {
    static CUT: TextCache<super::ast::Template> = OnceLock::new();
    let cut = cached(&CUT, text, dialect, |text| {
        let parsed = parse_template(text, dialect);
        let pieces = parsed.to_string().split("sb_x").map(Box::from).collect();
        let operation = matches!(*parsed, Expr::BinaryOp { .. });
        Ok(super::ast::Template { source: text.to_string(), dialect, pieces, operation })
    });
    // Never an error: a template that does not parse panics in `parse_template`.
    cut.unwrap_or_else(|err| panic!("dialect template `{text}` cannot be cut: {err}"))
}

/// Values made from texts, by dialect and text.
type TextCache<T> = OnceLock<RwLock<HashMap<&'static str, HashMap<String, Arc<T>>>>>;

/// `make(text)` for `dialect`, made once and kept in `cache`: our templates
/// and the model's computed columns are each parsed once rather than on
/// every request (parsing cost more than the rest of a compile). Bounded:
/// past `MAX_PARSED` texts per dialect (a server whose model is reloaded
/// many times) the map starts over.
fn cached<T>(cache: &'static TextCache<T>, text: &str, dialect: &'static super::Dialect, make: impl FnOnce(&str) -> Result<T, String>) -> Result<Arc<T>, String> {
    const MAX_PARSED: usize = 4096;
    let cache = cache.get_or_init(Default::default);
    if let Some(v) = cache.read().unwrap_or_else(|p| p.into_inner()).get(dialect.name).and_then(|m| m.get(text)) {
        return Ok(Arc::clone(v));
    }
    let made = Arc::new(make(text)?);
    let mut cache = cache.write().unwrap_or_else(|p| p.into_inner());
    let texts = cache.entry(dialect.name).or_default();
    if texts.len() >= MAX_PARSED {
        texts.clear();
    }
    texts.insert(text.to_string(), Arc::clone(&made));
    Ok(made)
}

/// Parsed expressions by dialect and text: our templates and the model's
/// computed columns (`parse_expression`).
fn cached_parse(text: &str, dialect: &'static super::Dialect, parse: impl FnOnce(&str) -> Result<Expr, String>) -> Result<Arc<Expr>, String> {
    static PARSED: TextCache<Expr> = OnceLock::new();
    cached(&PARSED, text, dialect, parse)
}

/// Parses one whole expression written for `dialect` (a computed column's,
/// from the model); the error says why it is not one.
pub fn parse_expression(sql: &str, dialect: &'static super::Dialect) -> Result<Arc<Expr>, String> {
    cached_parse(sql, dialect, |sql| {
        let mut parser = Parser::new(dialect.parser_dialect()).try_with_sql(sql).map_err(|e| e.to_string())?;
        let e = parser.parse_expr().map_err(|e| e.to_string())?;
        match parser.peek_token().token {
            sqlparser::tokenizer::Token::EOF => Ok(e),
            other => Err(format!("unexpected `{other}` after the expression")),
        }
    })
}

/// `"name".*`.
pub fn qualified_wildcard(quote: char, name: &str) -> SelectItem {
    SelectItem::QualifiedWildcard(
        sqlparser::ast::SelectItemQualifiedWildcardKind::ObjectName(ObjectName(vec![ObjectNamePart::Identifier(ident(quote, name))])),
        sqlparser::ast::WildcardAdditionalOptions::default(),
    )
}

/// `SELECT a UNION SELECT b` (distinct), as a query body.
pub fn union(left: Query, right: Query) -> Query {
    set_operation(left, right, sqlparser::ast::SetQuantifier::None)
}

/// `SELECT a UNION ALL SELECT b`.
pub fn union_all(left: Query, right: Query) -> Query {
    set_operation(left, right, sqlparser::ast::SetQuantifier::All)
}

fn set_operation(left: Query, right: Query, set_quantifier: sqlparser::ast::SetQuantifier) -> Query {
    let mut q = templates().query.clone();
    q.body = Box::new(SetExpr::SetOperation {
        left: left.body,
        op: sqlparser::ast::SetOperator::Union,
        set_quantifier,
        right: right.body,
    });
    q
}

/// `name(arg) OVER (PARTITION BY partition…)`.
pub fn window_function(name: &str, arg: Expr, partition_by: Vec<Expr>) -> Expr {
    let Expr::Function(mut f) = function(name, vec![arg], false) else { unreachable!("function builds a function") };
    f.over = Some(sqlparser::ast::WindowType::WindowSpec(sqlparser::ast::WindowSpec {
        window_name: None,
        partition_by,
        order_by: Vec::new(),
        window_frame: None,
    }));
    Expr::Function(f)
}

/// `name(args…)`, or `name(DISTINCT args…)`.
pub fn function(name: &str, args: Vec<Expr>, distinct: bool) -> Expr {
    let mut f = templates().function.clone();
    f.name = ObjectName(vec![ObjectNamePart::Identifier(Ident::new(name))]);
    f.args = FunctionArguments::List(FunctionArgumentList {
        duplicate_treatment: distinct.then_some(DuplicateTreatment::Distinct),
        args: args.into_iter().map(|a| FunctionArg::Unnamed(FunctionArgExpr::Expr(a))).collect(),
        clauses: Vec::new(),
    });
    Expr::Function(f)
}

/// `count(*)`.
pub fn count_rows() -> Expr {
    let Expr::Function(mut f) = function("count", Vec::new(), false) else { unreachable!("function builds a function") };
    f.args = FunctionArguments::List(FunctionArgumentList { duplicate_treatment: None, args: vec![FunctionArg::Unnamed(FunctionArgExpr::Wildcard)], clauses: Vec::new() });
    Expr::Function(f)
}

/// `name(args…) WITHIN GROUP (ORDER BY order)`.
pub fn function_within_group(name: &str, args: Vec<Expr>, order: Expr) -> Expr {
    let Expr::Function(mut f) = function(name, args, false) else { unreachable!("function builds a function") };
    f.within_group = vec![order_key(order, false, None)];
    Expr::Function(f)
}

/// `ROW_NUMBER() OVER (PARTITION BY partition ORDER BY order)`.
pub fn row_number(partition: Vec<Expr>, order: Vec<OrderByExpr>) -> Expr {
    let Expr::Function(mut f) = function("row_number", Vec::new(), false) else { unreachable!("function builds a function") };
    f.over = Some(WindowType::WindowSpec(WindowSpec { window_name: None, partition_by: partition, order_by: order, window_frame: None }));
    Expr::Function(f)
}

/// `CASE WHEN condition THEN result END`.
pub fn case_when(condition: Expr, result: Expr) -> Expr {
    let Expr::Case { case_token, end_token, .. } = templates().case.clone() else { unreachable!("template is a CASE") };
    Expr::Case {
        case_token,
        end_token,
        operand: None,
        conditions: vec![sqlparser::ast::CaseWhen { condition, result }],
        else_result: None,
    }
}

/// `CASE WHEN condition THEN result ELSE otherwise END`.
pub fn case_when_else(condition: Expr, result: Expr, otherwise: Expr) -> Expr {
    let Expr::Case { case_token, end_token, operand, conditions, .. } = case_when(condition, result) else {
        unreachable!("case_when builds a CASE")
    };
    Expr::Case { case_token, end_token, operand, conditions, else_result: Some(Box::new(otherwise)) }
}

/// `"schema"."table" AS "alias"`.
pub fn table(quote: char, schema: &str, table: &str, alias: &str) -> TableFactor {
    let mut t = templates().table.clone();
    if let TableFactor::Table { name, alias: a, .. } = &mut t {
        *name = ObjectName(vec![
            ObjectNamePart::Identifier(ident(quote, schema)),
            ObjectNamePart::Identifier(ident(quote, table)),
        ]);
        // The template's alias is `AS a`; only its name changes.
        if let Some(a) = a {
            a.name = ident(quote, alias);
        }
    }
    t
}

pub fn left_join(relation: TableFactor, on: Expr) -> Join {
    Join { relation, global: false, join_operator: JoinOperator::Left(JoinConstraint::On(on)) }
}

pub fn inner_join(relation: TableFactor, on: Expr) -> Join {
    Join { relation, global: false, join_operator: JoinOperator::Join(JoinConstraint::On(on)) }
}

pub fn cross_join(relation: TableFactor) -> Join {
    Join { relation, global: false, join_operator: JoinOperator::CrossJoin(JoinConstraint::None) }
}

/// `(first joins…)`: a parenthesized join, without an alias.
pub fn nested_join(first: TableFactor, joins: Vec<Join>) -> TableFactor {
    TableFactor::NestedJoin { table_with_joins: Box::new(TableWithJoins { relation: first, joins }), alias: None }
}

/// A reference to a CTE by name: `"name"`.
pub fn table_ref(quote: char, name: &str) -> TableFactor {
    let mut t = templates().table.clone();
    if let TableFactor::Table { name: n, alias, .. } = &mut t {
        *n = ObjectName(vec![ObjectNamePart::Identifier(ident(quote, name))]);
        *alias = None;
    }
    t
}

/// A common table expression, with its column list when it has one.
pub struct Cte {
    pub name: String,
    pub columns: Vec<String>,
    pub query: Query,
}

/// `WITH [RECURSIVE] name [(columns)] AS (query), … outer`.
pub fn with_recursive_ctes(ctes: Vec<Cte>, recursive: bool, quote: char, mut outer: Query) -> Query {
    let mut with = templates().with.clone();
    with.recursive = recursive;
    let Some(template) = with.cte_tables.first().cloned() else { unreachable!("the template has one CTE") };
    with.cte_tables = ctes
        .into_iter()
        .map(|c| {
            let mut cte = template.clone();
            cte.alias.name = ident(quote, &c.name);
            cte.alias.columns =
                c.columns.iter().map(|n| sqlparser::ast::TableAliasColumnDef { name: ident(quote, n), data_type: None }).collect();
            cte.query = Box::new(c.query);
            cte
        })
        .collect();
    outer.with = Some(with);
    outer
}

/// `(query) AS "alias"`.
pub fn derived(query: Query, quote: char, alias: &str) -> TableFactor {
    let mut a = match &templates().table {
        TableFactor::Table { alias: Some(a), .. } => a.clone(),
        _ => unreachable!("the template table has an alias"),
    };
    a.name = ident(quote, alias);
    TableFactor::Derived { lateral: false, subquery: Box::new(query), alias: Some(a), sample: None }
}

/// `expr IN (query)`.
pub fn in_subquery(expr: Expr, query: Query) -> Expr {
    Expr::InSubquery { expr: Box::new(expr), subquery: Box::new(query), negated: false }
}

/// `expr [NOT] LIKE pattern`, with the engine's own escape rules.
pub fn like(expr: Expr, pattern: Expr, negated: bool) -> Expr {
    Expr::Like { negated, any: false, expr: Box::new(expr), pattern: Box::new(pattern), escape_char: None }
}

/// `EXISTS (query)`.
pub fn exists(query: Query) -> Expr {
    Expr::Exists { subquery: Box::new(query), negated: false }
}

pub fn aliased(e: Expr, quote: char, alias: &str) -> SelectItem {
    SelectItem::ExprWithAlias { expr: e, alias: ident(quote, alias) }
}

pub fn order_key(e: Expr, descending: bool, nulls_last: Option<bool>) -> OrderByExpr {
    OrderByExpr {
        expr: e,
        options: OrderByOptions { asc: Some(!descending), nulls_first: nulls_last.map(|l| !l) },
        with_fill: None,
    }
}

/// The parts of a single-SELECT query.
pub struct SelectParts {
    pub distinct: bool,
    pub projection: Vec<SelectItem>,
    pub from: TableFactor,
    pub joins: Vec<Join>,
    pub selection: Option<Expr>,
    pub group_by: Vec<Expr>,
    pub having: Option<Expr>,
    pub order_by: Vec<OrderByExpr>,
    pub limit: Option<Limit>,
}

/// A row limit in one of the three spellings.
#[allow(clippy::enum_variant_names)] // each variant is the SQL keyword it writes
pub enum Limit {
    Limit(u64),
    Top(u64),
    FetchFirst(u64),
}

impl From<TableFactor> for SelectParts {
    /// `SELECT … FROM from`, with nothing else yet.
    fn from(from: TableFactor) -> Self {
        SelectParts {
            distinct: false,
            projection: Vec::new(),
            from,
            joins: Vec::new(),
            selection: None,
            group_by: Vec::new(),
            having: None,
            order_by: Vec::new(),
            limit: None,
        }
    }
}

pub fn query(parts: SelectParts) -> Query {
    let mut q = templates().query.clone();
    let SetExpr::Select(select) = q.body.as_mut() else { unreachable!("template is a select") };
    let select: &mut Select = select;
    select.distinct = parts.distinct.then_some(sqlparser::ast::Distinct::Distinct);
    select.projection = parts.projection;
    select.from = vec![TableWithJoins { relation: parts.from, joins: parts.joins }];
    select.selection = parts.selection;
    select.group_by = GroupByExpr::Expressions(parts.group_by, Vec::new());
    select.having = parts.having;
    q.order_by = (!parts.order_by.is_empty())
        .then_some(OrderBy { kind: OrderByKind::Expressions(parts.order_by), interpolate: None });
    if let Some(limit) = parts.limit {
        set_limit(&mut q, limit);
    }
    q
}

/// Sets (or replaces) the row limit of a query in its dialect's spelling.
pub fn set_limit(q: &mut Query, limit: Limit) {
    match limit {
        Limit::Limit(n) => {
            q.limit_clause = Some(sqlparser::ast::LimitClause::LimitOffset {
                limit: Some(number(&n.to_string())),
                offset: None,
                limit_by: Vec::new(),
            })
        }
        Limit::Top(n) => {
            if let SetExpr::Select(select) = q.body.as_mut() {
                select.top = Some(sqlparser::ast::Top {
                    with_ties: false,
                    percent: false,
                    quantity: Some(sqlparser::ast::TopQuantity::Expr(number(&n.to_string()))),
                });
            }
        }
        Limit::FetchFirst(n) => {
            q.fetch = Some(sqlparser::ast::Fetch { with_ties: false, percent: false, quantity: Some(number(&n.to_string())) })
        }
    }
}
