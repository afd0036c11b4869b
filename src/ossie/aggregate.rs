//! An Ossie metric's SQL aggregate expression read with sqlparser into
//! what our metrics say: aggregates of one dataset's fields (`SUM(x)`,
//! `COUNT(DISTINCT x)`, `AVG(a * b)`, `PERCENTILE_CONT(0.9) WITHIN GROUP
//! (ORDER BY x)`), combined by numbers and `+ - * /` (a ratio, a derived
//! metric). Anything else is refused with the reason; nothing is guessed.
//! Owns no model types: the importer turns terms into metric files.

use std::collections::BTreeMap;
use std::ops::ControlFlow;

use sqlparser::ast::{
    BinaryOperator, CastKind, DuplicateTreatment, Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Ident, UnaryOperator, Value,
};
use sqlparser::dialect::GenericDialect;
use sqlparser::parser::Parser;

use crate::model::{computed_expr_problem, is_identifier, MeasureExpr};

/// A field as the entity holds it: `column` is the entity's column (the
/// table column, or the computed column named after the field); a
/// computed field's `sql` is read inline where an expression uses it.
#[derive(Clone, Debug)]
pub struct FieldSql {
    pub column: String,
    pub computed: bool,
    pub sql: String,
}

/// Dataset (entity) name → field name → how it reads.
pub type Fields = BTreeMap<String, BTreeMap<String, FieldSql>>;

/// What an aggregate reads, as an anchor column, an arithmetic measure
/// expression, or SQL that needs a computed column of its own.
#[derive(Clone, Debug, PartialEq)]
pub enum Operand {
    Column(String),
    Expr(String),
    Computed(String),
}

/// One aggregate of the expression: a simple metric.
#[derive(Clone, Debug, PartialEq)]
pub struct Term {
    pub dataset: String,
    /// Our aggregation name (`sum`, `count_distinct`, ...).
    pub agg: &'static str,
    pub operand: Operand,
    pub percentile: Option<f64>,
    pub discrete: bool,
}

impl Term {
    /// A key equal for equal aggregates: a compound metric reuses a simple
    /// metric that is exactly one of its terms.
    pub fn key(&self) -> String {
        format!("{}|{}|{:?}|{:?}|{}", self.dataset, self.agg, self.operand, self.percentile, self.discrete)
    }
}

/// The expression over its terms.
#[derive(Clone, Debug, PartialEq)]
pub enum Formula {
    Term(usize),
    Number(String),
    Neg(Box<Formula>),
    Op(Box<Formula>, char, Box<Formula>),
}

impl Formula {
    /// The formula in our derived-metric grammar, each term by `names[i]`.
    pub fn render(&self, names: &[String]) -> String {
        match self {
            Formula::Term(i) => names.get(*i).cloned().unwrap_or_default(),
            Formula::Number(n) => n.clone(),
            Formula::Neg(f) => format!("(0 - {})", f.render(names)),
            Formula::Op(a, op, b) => format!("({} {op} {})", a.render(names), b.render(names)),
        }
    }
}

fn parse_expr(text: &str) -> Result<Expr, String> {
    let mut parser = Parser::new(&GenericDialect {}).try_with_sql(text).map_err(|e| format!("it does not parse as SQL ({e})"))?;
    let e = parser.parse_expr().map_err(|e| format!("it does not parse as SQL ({e})"))?;
    match parser.peek_token().token {
        sqlparser::tokenizer::Token::EOF => Ok(e),
        t => Err(format!("it does not parse as one SQL expression (`{t}` after it)")),
    }
}

/// Reads `text` against the datasets' fields.
pub fn parse(text: &str, fields: &Fields) -> Result<(Formula, Vec<Term>), String> {
    let e = parse_expr(text)?;
    let mut terms = Vec::new();
    let f = formula(&e, fields, &mut terms, false)?;
    if terms.is_empty() {
        return Err("it holds no aggregate".into());
    }
    Ok((f, terms))
}

fn formula(e: &Expr, fields: &Fields, terms: &mut Vec<Term>, divisor: bool) -> Result<Formula, String> {
    match e {
        Expr::Nested(inner) => formula(inner, fields, terms, divisor),
        Expr::Value(v) => match &v.value {
            Value::Number(n, _) => Ok(Formula::Number(n.clone())),
            other => Err(format!("the literal `{other}` is not a number")),
        },
        Expr::UnaryOp { op: UnaryOperator::Minus, expr } => Ok(Formula::Neg(Box::new(formula(expr, fields, terms, divisor)?))),
        Expr::UnaryOp { op: UnaryOperator::Plus, expr } => formula(expr, fields, terms, divisor),
        // A numeric cast of a result changes nothing here: our division is
        // floating-point already.
        Expr::Cast { kind: CastKind::Cast | CastKind::DoubleColon, expr, data_type, .. } if numeric(&data_type.to_string()) => formula(expr, fields, terms, divisor),
        Expr::BinaryOp { left, op, right } => {
            let op = match op {
                BinaryOperator::Plus => '+',
                BinaryOperator::Minus => '-',
                BinaryOperator::Multiply => '*',
                BinaryOperator::Divide => '/',
                other => return Err(format!("the operator `{other}` between aggregates has no equivalent (only + - * /)")),
            };
            let l = formula(left, fields, terms, false)?;
            let r = formula(right, fields, terms, op == '/')?;
            Ok(Formula::Op(Box::new(l), op, Box::new(r)))
        }
        Expr::Function(f) => {
            let name = f.name.to_string().to_ascii_uppercase();
            // NULLIF(x, 0) as a divisor: our division of x by 0 is NULL already.
            if name == "NULLIF" {
                let args = plain_args(f)?;
                return match args.as_slice() {
                    [x, Expr::Value(z)] if divisor && matches!(&z.value, Value::Number(n, _) if n.parse::<f64>() == Ok(0.0)) => formula(x, fields, terms, divisor),
                    _ => Err("NULLIF is read only as `x / NULLIF(y, 0)` (a division by zero is NULL anyway)".into()),
                };
            }
            let term = aggregate(&name, f, fields)?;
            terms.push(term);
            Ok(Formula::Term(terms.len() - 1))
        }
        other => Err(format!("`{other}` is not an aggregate, a number or arithmetic over them")),
    }
}

fn numeric(ty: &str) -> bool {
    let t = ty.to_ascii_uppercase();
    ["DECIMAL", "NUMERIC", "DOUBLE", "FLOAT", "REAL", "NUMBER", "INT", "BIGINT"].iter().any(|n| t.starts_with(n))
}

fn plain_args(f: &sqlparser::ast::Function) -> Result<Vec<Expr>, String> {
    let FunctionArguments::List(list) = &f.args else {
        return Err(format!("`{}` has no argument list", f.name));
    };
    list.args
        .iter()
        .map(|a| match a {
            FunctionArg::Unnamed(FunctionArgExpr::Expr(e)) => Ok(e.clone()),
            other => Err(format!("the argument `{other}` of `{}` is not read", f.name)),
        })
        .collect()
}

fn aggregate(name: &str, f: &sqlparser::ast::Function, fields: &Fields) -> Result<Term, String> {
    if f.over.is_some() {
        return Err(format!("`{f}` is a window function, not an aggregate"));
    }
    if f.filter.is_some() {
        return Err(format!("`{f}`: an aggregate's FILTER clause is not read (write the condition in a CASE inside it)"));
    }
    let FunctionArguments::List(list) = &f.args else {
        return Err(format!("`{f}` is not an aggregate of a field"));
    };
    let distinct = matches!(list.duplicate_treatment, Some(DuplicateTreatment::Distinct));
    if name == "COUNT" && matches!(list.args.as_slice(), [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)]) {
        return Err("COUNT(*) names no dataset (write COUNT(dataset.key))".into());
    }
    let (agg, percentile, discrete, arg) = match (name, distinct) {
        ("PERCENTILE_CONT" | "PERCENTILE_DISC", false) => {
            let p = match plain_args(f)?.as_slice() {
                [Expr::Value(v)] => match &v.value {
                    Value::Number(n, _) => n.parse::<f64>().ok(),
                    _ => None,
                },
                _ => None,
            };
            let p = p.filter(|p| *p > 0.0 && *p < 1.0).ok_or_else(|| format!("`{f}`: the fraction must be a number strictly between 0 and 1"))?;
            let [order] = f.within_group.as_slice() else {
                return Err(format!("`{f}` needs WITHIN GROUP (ORDER BY one field)"));
            };
            if order.options.asc == Some(false) {
                return Err(format!("`{f}`: a descending percentile is not read (use 1 - p)"));
            }
            ("percentile", Some(p), name == "PERCENTILE_DISC", order.expr.clone())
        }
        (_, _) if !f.within_group.is_empty() => return Err(format!("`{f}`: WITHIN GROUP is read only for PERCENTILE_CONT and PERCENTILE_DISC")),
        (agg, distinct) => {
            let ours = match (agg, distinct) {
                ("SUM", false) => "sum",
                ("COUNT", false) => "count",
                ("COUNT", true) => "count_distinct",
                ("AVG", false) => "avg",
                ("MIN" | "MAX", _) => {
                    if agg == "MIN" {
                        "min"
                    } else {
                        "max"
                    }
                }
                ("MEDIAN", false) => "median",
                (a, true) => return Err(format!("{a}(DISTINCT ...) has no equivalent (only COUNT(DISTINCT ...))")),
                (a, false) => return Err(format!("`{a}` is not an aggregate read here (SUM, COUNT, COUNT(DISTINCT), AVG, MIN, MAX, MEDIAN, PERCENTILE_CONT, PERCENTILE_DISC)")),
            };
            let args = plain_args(f)?;
            let [arg] = args.as_slice() else {
                return Err(format!("`{f}` must aggregate one expression"));
            };
            (ours, None, false, arg.clone())
        }
    };
    let (dataset, operand) = operand(&arg, fields).map_err(|e| format!("in `{f}`: {e}"))?;
    Ok(Term { dataset, agg, operand, percentile, discrete })
}

fn unnested(e: &Expr) -> &Expr {
    match e {
        Expr::Nested(inner) => unnested(inner),
        other => other,
    }
}

/// The (dataset, field) an identifier names: `dataset.field`, or `field`
/// when exactly one dataset has it.
fn resolve(parts: &[Ident], fields: &Fields) -> Result<(String, String), String> {
    match parts {
        [ds, f] => {
            let of = fields.get(&ds.value).ok_or_else(|| format!("`{}` is not a mapped dataset", ds.value))?;
            if of.contains_key(&f.value) {
                Ok((ds.value.clone(), f.value.clone()))
            } else {
                Err(format!("`{}` is not a field of dataset `{}`", f.value, ds.value))
            }
        }
        [f] => {
            let holders: Vec<&String> = fields.iter().filter(|(_, fs)| fs.contains_key(&f.value)).map(|(d, _)| d).collect();
            match holders.as_slice() {
                [d] => Ok(((*d).clone(), f.value.clone())),
                [] => Err(format!("`{}` is not a field of any mapped dataset", f.value)),
                many => Err(format!("`{}` is a field of several datasets ({}); qualify it", f.value, many.iter().map(|d| d.as_str()).collect::<Vec<_>>().join(", "))),
            }
        }
        _ => Err(format!("`{}` is not `dataset.field`", parts.iter().map(|p| p.value.as_str()).collect::<Vec<_>>().join("."))),
    }
}

/// The dataset an aggregate's argument reads, and the operand over its columns.
fn operand(arg: &Expr, fields: &Fields) -> Result<(String, Operand), String> {
    // One field alone: its column (a computed field's computed column).
    let bare = match arg {
        Expr::Identifier(id) => Some(vec![id.clone()]),
        Expr::CompoundIdentifier(ids) => Some(ids.clone()),
        _ => None,
    };
    if let Some(parts) = bare {
        let (ds, f) = resolve(&parts, fields)?;
        let column = fields.get(&ds).and_then(|fs| fs.get(&f)).map(|x| x.column.clone()).unwrap_or(f);
        return Ok((ds, Operand::Column(column)));
    }
    // SQL that is exactly one dataset's computed field (written out, not
    // named): that field. Ossie's dbt converter locates an unqualified
    // aggregate's dataset this way, and our export writes such fields.
    let text = unnested(arg).to_string();
    let mut same: Vec<(&String, &FieldSql)> = Vec::new();
    for (d, fs) in fields {
        for f in fs.values() {
            if f.computed && parse_expr(&f.sql).is_ok_and(|e| unnested(&e).to_string() == text) {
                same.push((d, f));
            }
        }
    }
    if let [(d, f)] = same.as_slice() {
        return Ok(((*d).clone(), Operand::Column(f.column.clone())));
    }
    let mut refs: Vec<(String, String)> = Vec::new();
    let mut problem = None;
    let mut e = arg.clone();
    // Each field named becomes what the entity reads: its column, or its
    // SQL (parenthesized) for a computed field, without the dataset.
    let _ = sqlparser::ast::visit_expressions_mut(&mut e, |node| {
        let parts = match node {
            Expr::Identifier(id) => vec![id.clone()],
            Expr::CompoundIdentifier(ids) => ids.clone(),
            _ => return ControlFlow::<()>::Continue(()),
        };
        match resolve(&parts, fields) {
            Ok((ds, f)) => {
                let sql = fields.get(&ds).and_then(|fs| fs.get(&f)).cloned();
                refs.push((ds, f));
                match sql {
                    Some(FieldSql { computed: true, sql, .. }) => match parse_expr(&sql) {
                        Ok(inner) => *node = Expr::Nested(Box::new(inner)),
                        Err(e) => problem = Some(e),
                    },
                    Some(FieldSql { column, .. }) => *node = Expr::Identifier(Ident::new(column)),
                    None => {}
                }
            }
            Err(e) => problem = Some(e),
        }
        ControlFlow::Continue(())
    });
    if let Some(p) = problem {
        return Err(p);
    }
    let mut datasets: Vec<&str> = refs.iter().map(|(d, _)| d.as_str()).collect();
    datasets.sort_unstable();
    datasets.dedup();
    let dataset = match datasets.as_slice() {
        [one] => one.to_string(),
        [] => return Err("it reads no field".into()),
        many => {
            return Err(format!(
                "it reads fields of {} datasets ({}): a row-level expression across a relationship is not a measure of one dataset",
                many.len(),
                many.join(", ")
            ))
        }
    };
    let text = e.to_string();
    if let Expr::Identifier(id) = &e {
        if is_identifier(&id.value) {
            return Ok((dataset, Operand::Column(id.value.clone())));
        }
    }
    if MeasureExpr::parse(&text).is_ok() {
        return Ok((dataset, Operand::Expr(text)));
    }
    if let Some(p) = computed_expr_problem(&text) {
        return Err(format!("the expression {p}"));
    }
    Ok((dataset, Operand::Computed(text)))
}

/// An operand's SQL over `entity`'s qualified columns, for export: the
/// columns of `expr` (a column, or arithmetic) prefixed with the dataset.
pub fn qualify(expr: &str, dataset: &str) -> String {
    let Ok(mut e) = parse_expr(expr) else { return expr.to_string() };
    let _ = sqlparser::ast::visit_expressions_mut(&mut e, |node| {
        if let Expr::Identifier(id) = node {
            *node = Expr::CompoundIdentifier(vec![Ident::new(dataset), id.clone()]);
        }
        ControlFlow::<()>::Continue(())
    });
    e.to_string()
}

/// Whether a field's SQL is a plain column (possibly quoted or qualified
/// by its own dataset): the column's name.
pub fn plain_column(sql: &str, dataset: &str) -> Option<String> {
    let e = parse_expr(sql).ok()?;
    let id = match e {
        Expr::Identifier(id) => id,
        Expr::CompoundIdentifier(ids) => match ids.as_slice() {
            [d, c] if d.value == dataset => c.clone(),
            _ => return None,
        },
        _ => return None,
    };
    is_identifier(&id.value).then_some(id.value)
}

/// The identifiers `sql` reads (for a computed field named like a column it reads).
pub fn idents(sql: &str) -> Vec<String> {
    let Ok(mut e) = parse_expr(sql) else { return Vec::new() };
    let mut out = Vec::new();
    let _ = sqlparser::ast::visit_expressions_mut(&mut e, |node| {
        match node {
            Expr::Identifier(id) => out.push(id.value.clone()),
            Expr::CompoundIdentifier(ids) => {
                if let Some(last) = ids.last() {
                    out.push(last.value.clone());
                }
            }
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
    out
}
