//! PII on free SQL (seed 003, issue 17): which catalog tables and columns a
//! statement that passed the guard can reach, and whether the policy lets
//! it. The same decision every other tool reads (`pii::decide`) is applied
//! to every column reference, wherever it stands: select list, `*` and
//! `t.*` (with EXCLUDE/EXCEPT/REPLACE), whole-row references (`SELECT c
//! FROM customers c`, `to_json(c)`), WHERE, JOIN ... ON and USING, NATURAL
//! joins, GROUP BY, HAVING, QUALIFY, window clauses, CTEs, subqueries,
//! UNION branches, lateral joins and function arguments.
//!
//! The analysis over-approximates on purpose: a bare name is taken to mean
//! every read table's column of that name, an alias used in several scopes
//! every relation it names, a table also shadowed by a CTE both. A false
//! refusal costs the agent a rewrite (qualify the column); a false pass
//! would be a side door. Columns of derived tables and CTEs need no check
//! of their own: each is an expression over references that were checked.
//!
//! The rule, as in get_metric: a column with a blocked category (the
//! policy's `block` plus the catastrophic floor) may not be referenced at
//! all; any other PII column only as the plain argument of `COUNT(col)` or
//! `COUNT(DISTINCT col)`, which reveals no value. Grouping, filtering,
//! joining, MIN/MAX/ANY_VALUE/string_agg on it are refused. Tables must be
//! in the catalog: system catalogs (`pg_stats`, `information_schema`,
//! `duckdb_*`) and table functions other than `range`/`generate_series`/
//! `unnest` are refused, so no statistics view leaks values.
//!
//! Architecture invariant: depends on sqlparser, the catalog and `pii`
//! only; no engine, no IO.

use std::collections::{BTreeMap, BTreeSet, HashSet};
use std::ops::ControlFlow;

use sqlparser::ast::{
    Expr, FunctionArg, FunctionArgExpr, FunctionArguments, Ident, JoinConstraint, JoinOperator, ObjectName, Query, Select, SelectItem,
    SelectItemQualifiedWildcardKind, Statement, TableFactor, TableWithJoins, Visit, Visitor, WildcardAdditionalOptions,
};

use super::guard::{unsupported_body, Refusal};
use crate::catalog::Catalog;
use crate::model::{MaskMethod, PiiPolicy, TableRef};
use crate::pii::{decide, Decision};

/// Table functions that generate rows from their arguments only.
const ROW_GENERATORS: [&str; 3] = ["range", "generate_series", "unnest"];

/// Aggregates that count without revealing a value.
const COUNTING: [&str; 1] = ["count"];

/// What an admitted statement reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Reads {
    /// Catalog keys (`schema.table`) of every table the statement may read.
    pub tables: BTreeSet<String>,
    /// Per read table, its columns the policy masks (catalog spelling) and
    /// how: admitted like clean columns, they must be read through
    /// `views::read_through`, never raw.
    pub masked: BTreeMap<String, Vec<Masked>>,
}

/// A column of a read table that the policy masks.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Masked {
    /// As the catalog spells it.
    pub column: String,
    pub method: MaskMethod,
    /// As outputs may name it (a catastrophic column's name is never shown).
    pub shown: String,
}

/// One sensitive column of a read table.
#[derive(Clone, Debug)]
struct Sensitive {
    table: String,
    column: String,
    decision: Decision,
}

impl Sensitive {
    /// Blocked outright (policy or floor), even under COUNT.
    fn blocked(&self) -> bool {
        self.decision.redacted()
    }

    /// The reference as a message may name it: a catastrophic column's name
    /// is never shown.
    fn shown(&self) -> String {
        if self.decision.catastrophic {
            format!("a column of {}", self.table)
        } else {
            format!("{}.{}", self.table, self.column)
        }
    }
}

/// The relations one statement names, over all its scopes.
#[derive(Default)]
struct Names {
    /// CTE names, lowercase.
    ctes: HashSet<String>,
    /// Alias or bare table name (lowercase) → the catalog keys it may stand
    /// for; an alias of a derived table or CTE adds nothing.
    qualifiers: BTreeMap<String, BTreeSet<String>>,
    /// Aliases of derived tables, lowercase (their columns are clean).
    derived: HashSet<String>,
    /// Catalog keys read under an alias that renames their columns
    /// (`customers AS c(a, b, e)`).
    renamed: BTreeSet<String>,
    /// Catalog keys read.
    tables: BTreeSet<String>,
    /// Set when a relation is not admitted (unknown table, table function).
    refusal: Option<Refusal>,
}

/// Checks a statement the guard admitted against the catalog and policy.
pub fn check(statement: &Statement, catalog: &Catalog, policy: &PiiPolicy) -> Result<Reads, Refusal> {
    let mut names = Names::default();
    collect_ctes(statement, &mut names);
    let _ = statement.visit(&mut RelationCollector { names: &mut names, catalog });
    if let Some(r) = names.refusal {
        return Err(r);
    }
    let mut sensitive: BTreeMap<String, Vec<Sensitive>> = BTreeMap::new();
    let mut masked: BTreeMap<String, Vec<Masked>> = BTreeMap::new();
    for key in &names.tables {
        let Some(t) = catalog.tables.get(key) else { continue };
        let table = TableRef { schema: t.schema.clone(), table: t.name.clone() };
        for c in &t.columns {
            let decision = decide(policy, &table, &c.name);
            if let Some(m) = decision.mask {
                let shown = if decision.catastrophic { format!("a column of {key}") } else { format!("{key}.{}", c.name) };
                masked.entry(key.clone()).or_default().push(Masked { column: c.name.clone(), method: m, shown });
            } else if decision.redacted() || decision.guarded() {
                sensitive.entry(key.clone()).or_default().push(Sensitive { table: key.clone(), column: c.name.to_lowercase(), decision });
            }
        }
    }
    let mut checker = Checker { names: &names, sensitive: &sensitive, counted: HashSet::new(), refusal: None };
    let _ = statement.visit(&mut checker);
    match checker.refusal {
        Some(r) => Err(r),
        None => Ok(Reads { tables: names.tables, masked }),
    }
}

/// The catalog keys of the tables a statement reads, whether or not the
/// policy lets it (the access policy's entity allowlist asks this first);
/// a relation that is not admitted adds nothing.
pub fn tables_read(statement: &Statement, catalog: &Catalog) -> BTreeSet<String> {
    let mut names = Names::default();
    collect_ctes(statement, &mut names);
    let _ = statement.visit(&mut RelationCollector { names: &mut names, catalog });
    names.tables
}

fn lower(i: &Ident) -> String {
    i.value.to_lowercase()
}

pub(super) fn parts(name: &ObjectName) -> Vec<String> {
    name.0.iter().map(|p| p.as_ident().map(lower).unwrap_or_else(|| p.to_string().to_lowercase())).collect()
}

/// The names (lowercase) of every CTE in the statement, in any scope.
pub(super) fn cte_names(statement: &Statement) -> HashSet<String> {
    let mut names = Names::default();
    collect_ctes(statement, &mut names);
    names.ctes
}

fn collect_ctes(statement: &Statement, names: &mut Names) {
    struct Ctes<'a>(&'a mut HashSet<String>);
    impl Visitor for Ctes<'_> {
        type Break = ();
        fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
            if let Some(with) = &q.with {
                self.0.extend(with.cte_tables.iter().map(|c| lower(&c.alias.name)));
            }
            ControlFlow::Continue(())
        }
    }
    let _ = statement.visit(&mut Ctes(&mut names.ctes));
}

/// Catalog keys a table name may mean: `schema.table` exactly, or a bare
/// (or catalog-qualified) name under any schema, case-insensitively.
pub(super) fn catalog_keys(catalog: &Catalog, name: &[String]) -> Vec<String> {
    let (schema, table) = match name {
        [.., s, t] => (Some(s.as_str()), t.as_str()),
        [t] => (None, t.as_str()),
        [] => return Vec::new(),
    };
    catalog
        .tables
        .iter()
        .filter(|(_, t)| t.name.to_lowercase() == table && schema.is_none_or(|s| t.schema.to_lowercase() == s))
        .map(|(k, _)| k.clone())
        .collect()
}

struct RelationCollector<'a> {
    names: &'a mut Names,
    catalog: &'a Catalog,
}

impl RelationCollector<'_> {
    fn refuse(&mut self, r: Refusal) -> ControlFlow<()> {
        self.names.refusal = Some(r);
        ControlFlow::Break(())
    }
}

impl Visitor for RelationCollector<'_> {
    type Break = ();

    fn pre_visit_table_factor(&mut self, t: &TableFactor) -> ControlFlow<()> {
        match t {
            TableFactor::Table { name, alias, args: None, .. } => {
                let name = parts(name);
                let keys = catalog_keys(self.catalog, &name);
                let cte = name.len() == 1 && name.first().is_some_and(|n| self.names.ctes.contains(n));
                if keys.is_empty() && !cte {
                    let shown = crate::model::echo(&name.join("."));
                    return self.refuse(Refusal {
                        categories: Vec::new(),
                        code: "invalid_input",
                        message: format!("`{shown}` is not a table of the catalog (system catalogs are not readable through query_sql); list_tables shows what is"),
                    });
                }
                self.names.tables.extend(keys.iter().cloned());
                if alias.as_ref().is_some_and(|a| !a.columns.is_empty()) {
                    self.names.renamed.extend(keys.iter().cloned());
                }
                let mut qualifiers = vec![name.last().cloned().unwrap_or_default()];
                if let Some(a) = alias {
                    qualifiers = vec![lower(&a.name)];
                }
                for q in qualifiers {
                    self.names.qualifiers.entry(q).or_default().extend(keys.iter().cloned());
                }
                ControlFlow::Continue(())
            }
            TableFactor::Table { name, args: Some(_), .. } | TableFactor::Function { name, .. } => {
                let last = parts(name).pop().unwrap_or_default();
                if ROW_GENERATORS.contains(&last.as_str()) {
                    ControlFlow::Continue(())
                } else {
                    self.refuse(Refusal {
                        categories: Vec::new(),
                        code: "policy_blocked",
                        message: format!("table function `{}` is not allowed in query_sql (only {})", crate::model::echo(&last), ROW_GENERATORS.join(", ")),
                    })
                }
            }
            TableFactor::Derived { alias, .. } => {
                self.names.derived.extend(alias.as_ref().map(|a| lower(&a.name)));
                ControlFlow::Continue(())
            }
            TableFactor::NestedJoin { .. } | TableFactor::UNNEST { .. } => ControlFlow::Continue(()),
            other => {
                let text = other.to_string();
                let word = text.split_whitespace().next().unwrap_or("this").to_string();
                self.refuse(Refusal {
                    categories: Vec::new(),
                    code: "policy_blocked",
                    message: format!("{} relations (PIVOT, UNPIVOT, MATCH_RECOGNIZE, JSON/XML tables) are not supported by query_sql", crate::model::echo(&word)),
                })
            }
        }
    }
}

/// Walks every expression and select list of the statement.
struct Checker<'a> {
    names: &'a Names,
    sensitive: &'a BTreeMap<String, Vec<Sensitive>>,
    /// Addresses of expressions that are the plain argument of a counting
    /// aggregate: a guarded column may stand there.
    counted: HashSet<usize>,
    refusal: Option<Refusal>,
}

fn addr(e: &Expr) -> usize {
    e as *const Expr as usize
}

impl<'a> Checker<'a> {
    /// The catalog keys a qualifier may stand for: the base tables it
    /// names; nothing for a CTE or derived alias only (their columns are
    /// expressions checked where they are defined); every read table when
    /// it names nothing known (a struct column, a stale table name).
    fn qualified(&self, q: &str) -> Vec<String> {
        match self.names.qualifiers.get(q) {
            Some(keys) => keys.iter().cloned().collect(),
            None if self.names.ctes.contains(q) || self.names.derived.contains(q) => Vec::new(),
            None => self.sensitive.keys().cloned().collect(),
        }
    }

    /// Every sensitive column called `column` in the tables `qualifier`
    /// may stand for (every read table when unqualified).
    fn resolve(&self, qualifier: Option<&str>, column: &str) -> Vec<&'a Sensitive> {
        let sensitive: &'a BTreeMap<String, Vec<Sensitive>> = self.sensitive;
        let tables = match qualifier {
            Some(q) => self.qualified(q),
            None => self.sensitive.keys().cloned().collect(),
        };
        tables.iter().filter_map(|t| sensitive.get(t)).flatten().filter(|s| s.column == column).collect()
    }

    /// The sensitive columns a wildcard over `qualifier` (every relation in
    /// the select when None) exposes, less the excluded names.
    fn wildcard(&self, tables: &[String], options: Option<&WildcardAdditionalOptions>) -> Vec<&'a Sensitive> {
        let sensitive: &'a BTreeMap<String, Vec<Sensitive>> = self.sensitive;
        let mut excluded: HashSet<String> = HashSet::new();
        if let Some(o) = options {
            if let Some(ex) = &o.opt_exclude {
                match ex {
                    sqlparser::ast::ExcludeSelectItem::Single(n) => excluded.extend(parts(n).pop()),
                    sqlparser::ast::ExcludeSelectItem::Multiple(ns) => excluded.extend(ns.iter().filter_map(|n| parts(n).pop())),
                }
            }
            if let Some(ex) = &o.opt_except {
                excluded.insert(lower(&ex.first_element));
                excluded.extend(ex.additional_elements.iter().map(lower));
            }
            if let Some(r) = &o.opt_replace {
                excluded.extend(r.items.iter().map(|i| lower(&i.column_name)));
            }
        }
        tables
            .iter()
            .filter_map(|t| sensitive.get(t))
            .flatten()
            .filter(|s| !excluded.contains(&s.column))
            .collect()
    }

    fn refuse(&mut self, hits: &[&Sensitive], how: &str) -> ControlFlow<()> {
        let Some(first) = hits.iter().find(|s| s.blocked()).or(hits.first()) else { return ControlFlow::Continue(()) };
        let mut categories: Vec<String> = hits.iter().flat_map(|s| s.decision.shown_categories()).collect();
        categories.sort();
        categories.dedup();
        let message = if first.blocked() {
            format!(
                "{} {how} carries {} data, which the PII policy blocks: it cannot be read through query_sql in any form",
                first.shown(),
                first.decision.blocked_categories.join(", ")
            )
        } else {
            format!(
                "{} {how} carries PII ({}): free SQL may only count it (COUNT(col), COUNT(DISTINCT col)); list or group it through get_metric, which enforces the policy. If the name meant another table's column, qualify it with that table's alias",
                first.shown(),
                categories.join(", ")
            )
        };
        let categories = if first.blocked() { first.decision.blocked_categories.clone() } else { categories };
        self.refusal = Some(Refusal { code: "pii_blocked", message, categories });
        ControlFlow::Break(())
    }

    /// Base tables (catalog keys) a select reads directly in its FROM.
    fn tables_in_from(&self, from: &[TableWithJoins]) -> Vec<String> {
        let mut out = Vec::new();
        for twj in from {
            self.factor_tables(&twj.relation, &mut out);
            for j in &twj.joins {
                self.factor_tables(&j.relation, &mut out);
            }
        }
        out
    }

    fn factor_tables(&self, t: &TableFactor, out: &mut Vec<String>) {
        match t {
            TableFactor::Table { name, alias, args: None, .. } => {
                let q = alias.as_ref().map(|a| lower(&a.name)).or_else(|| parts(name).pop()).unwrap_or_default();
                out.extend(self.names.qualifiers.get(&q).into_iter().flatten().cloned());
            }
            TableFactor::NestedJoin { table_with_joins, .. } => {
                out.extend(self.tables_in_from(std::slice::from_ref(table_with_joins.as_ref())));
            }
            _ => {}
        }
    }

    fn check_select(&mut self, s: &Select) -> ControlFlow<()> {
        let direct = self.tables_in_from(&s.from);
        let renamed: Vec<String> = direct.iter().filter(|t| self.names.renamed.contains(*t)).cloned().collect();
        let hits = self.wildcard(&renamed, None);
        if !hits.is_empty() {
            return self.refuse(&hits, "(renamed by a column alias list)");
        }
        // DuckDB's `FROM t` without SELECT means `SELECT *`.
        if s.projection.is_empty() {
            let hits = self.wildcard(&direct, None);
            if !hits.is_empty() {
                return self.refuse(&hits, "(through an implicit `*`)");
            }
        }
        for item in &s.projection {
            let hits = match item {
                SelectItem::Wildcard(o) => self.wildcard(&direct, Some(o)),
                SelectItem::QualifiedWildcard(SelectItemQualifiedWildcardKind::ObjectName(n), o) => {
                    let tables = self.qualified(&parts(n).pop().unwrap_or_default());
                    self.wildcard(&tables, Some(o))
                }
                // `(expr).*`: the expression is checked on its own.
                _ => Vec::new(),
            };
            if !hits.is_empty() {
                return self.refuse(&hits, "(through `*`)");
            }
        }
        for twj in &s.from {
            for j in &twj.joins {
                let constraint = match &j.join_operator {
                    JoinOperator::Join(c)
                    | JoinOperator::Inner(c)
                    | JoinOperator::Left(c)
                    | JoinOperator::LeftOuter(c)
                    | JoinOperator::Right(c)
                    | JoinOperator::RightOuter(c)
                    | JoinOperator::FullOuter(c)
                    | JoinOperator::CrossJoin(c)
                    | JoinOperator::Semi(c)
                    | JoinOperator::LeftSemi(c)
                    | JoinOperator::RightSemi(c)
                    | JoinOperator::Anti(c)
                    | JoinOperator::LeftAnti(c)
                    | JoinOperator::RightAnti(c)
                    | JoinOperator::StraightJoin(c) => Some(c),
                    JoinOperator::AsOf { constraint, .. } => Some(constraint),
                    _ => None,
                };
                match constraint {
                    Some(JoinConstraint::Using(cols)) => {
                        for c in cols {
                            let column = parts(c).pop().unwrap_or_default();
                            let hits = self.wildcard(&direct, None);
                            let hits: Vec<&Sensitive> = hits.into_iter().filter(|s| s.column == column).collect();
                            if !hits.is_empty() {
                                return self.refuse(&hits, "(joined on with USING)");
                            }
                        }
                    }
                    Some(JoinConstraint::Natural) => {
                        let hits = self.wildcard(&direct, None);
                        if !hits.is_empty() {
                            return self.refuse(&hits, "(a NATURAL join may match on it)");
                        }
                    }
                    _ => {}
                }
            }
        }
        ControlFlow::Continue(())
    }

    fn check_reference(&mut self, e: &Expr) -> ControlFlow<()> {
        let counted = self.counted.contains(&addr(e));
        let ids: Vec<String> = match e {
            Expr::Identifier(i) => vec![lower(i)],
            Expr::CompoundIdentifier(ids) => ids.iter().map(lower).collect(),
            _ => return ControlFlow::Continue(()),
        };
        let mut hits: Vec<&Sensitive> = Vec::new();
        match ids.as_slice() {
            [name] => {
                // A whole-row reference: the name is a base-table relation
                // (`SELECT c FROM customers c`, `to_json(c)`); counting rows is fine.
                if let (Some(keys), false) = (self.names.qualifiers.get(name), counted) {
                    let keys: Vec<String> = keys.iter().cloned().collect();
                    let rows = self.wildcard(&keys, None);
                    if !rows.is_empty() {
                        return self.refuse(&rows, "(through a whole-row reference)");
                    }
                }
                hits.extend(self.resolve(None, name));
            }
            // `a.b.c` may be table.column.field or schema.table.column:
            // every adjacent pair is taken as qualifier and column.
            many => {
                for pair in many.windows(2) {
                    if let [q, c] = pair {
                        hits.extend(self.resolve(Some(q), c));
                    }
                }
            }
        }
        let hits: Vec<&Sensitive> = hits.into_iter().filter(|s| s.blocked() || !counted).collect();
        if hits.is_empty() {
            return ControlFlow::Continue(());
        }
        self.refuse(&hits, "")
    }

    fn check_function(&mut self, f: &sqlparser::ast::Function) -> ControlFlow<()> {
        let name = parts(&f.name).pop().unwrap_or_default();
        let FunctionArguments::List(list) = &f.args else { return ControlFlow::Continue(()) };
        if name == "columns" {
            // DuckDB's COLUMNS(*) / COLUMNS('regex') / COLUMNS(lambda): a
            // wildcard whose filter is not evaluated here.
            let all: Vec<String> = self.sensitive.keys().cloned().collect();
            let hits = self.wildcard(&all, None);
            if !hits.is_empty() {
                return self.refuse(&hits, "(through COLUMNS(...))");
            }
        }
        let counting = COUNTING.contains(&name.as_str());
        for arg in &list.args {
            let a = match arg {
                FunctionArg::Named { arg, .. } | FunctionArg::ExprNamed { arg, .. } | FunctionArg::Unnamed(arg) => arg,
            };
            match a {
                FunctionArgExpr::Expr(e @ (Expr::Identifier(_) | Expr::CompoundIdentifier(_))) if counting => {
                    self.counted.insert(addr(e));
                }
                FunctionArgExpr::Wildcard if counting => {}
                FunctionArgExpr::QualifiedWildcard(_) if counting => {}
                FunctionArgExpr::Wildcard | FunctionArgExpr::WildcardWithOptions(_) => {
                    let all: Vec<String> = self.sensitive.keys().cloned().collect();
                    let hits = self.wildcard(&all, if let FunctionArgExpr::WildcardWithOptions(o) = a { Some(o) } else { None });
                    if !hits.is_empty() {
                        return self.refuse(&hits, &format!("(through `*` in {name}(...))"));
                    }
                }
                FunctionArgExpr::QualifiedWildcard(n) => {
                    let q = parts(n).pop().unwrap_or_default();
                    let hits = self.wildcard(&self.qualified(&q), None);
                    if !hits.is_empty() {
                        return self.refuse(&hits, &format!("(through `{q}.*` in {name}(...))"));
                    }
                }
                FunctionArgExpr::Expr(_) => {}
            }
        }
        ControlFlow::Continue(())
    }
}

impl Visitor for Checker<'_> {
    type Break = ();

    fn pre_visit_select(&mut self, s: &Select) -> ControlFlow<()> {
        self.check_select(s)
    }

    fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
        // Data-modifying CTEs and bodies never pass (the guard refuses them
        // too; this keeps the analysis total on its own).
        if let Some(message) = unsupported_body(&q.body) {
            self.refusal = Some(Refusal { code: "policy_blocked", message: message.into(), categories: Vec::new() });
            return ControlFlow::Break(());
        }
        if !q.pipe_operators.is_empty() {
            self.refusal = Some(Refusal { code: "policy_blocked", message: "pipe syntax (|>) is not supported by query_sql".into(), categories: Vec::new() });
            return ControlFlow::Break(());
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        match e {
            Expr::Identifier(_) | Expr::CompoundIdentifier(_) => self.check_reference(e),
            Expr::Function(f) => self.check_function(f),
            Expr::Wildcard(_) => {
                let all: Vec<String> = self.sensitive.keys().cloned().collect();
                let hits = self.wildcard(&all, None);
                if hits.is_empty() { ControlFlow::Continue(()) } else { self.refuse(&hits, "(through `*`)") }
            }
            Expr::QualifiedWildcard(n, _) => {
                let q = parts(n).pop().unwrap_or_default();
                let hits = self.wildcard(&self.qualified(&q), None);
                if hits.is_empty() { ControlFlow::Continue(()) } else { self.refuse(&hits, &format!("(through `{q}.*`)")) }
            }
            _ => ControlFlow::Continue(()),
        }
    }
}


#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{ColumnInfo, TableInfo};

    fn table(schema: &str, name: &str, columns: &[&str]) -> (String, TableInfo) {
        let columns = columns.iter().map(|c| ColumnInfo { name: c.to_string(), data_type: "VARCHAR".into(), nullable: true, comment: None, stats: None }).collect();
        (format!("{schema}.{name}"), TableInfo { schema: schema.into(), name: name.into(), columns, ..Default::default() })
    }

    /// customers.ssn is government_id (catastrophic, blocked); email is
    /// contact (PII, not blocked by default); the rest is clean.
    fn catalog() -> Catalog {
        Catalog {
            tables: [
                table("main", "customers", &["id", "country", "email", "ssn", "segment"]),
                table("main", "orders", &["id", "customer_id", "amount", "status"]),
            ]
            .into_iter()
            .collect(),
            ..Default::default()
        }
    }

    fn verdict(sql: &str) -> Result<Reads, Refusal> {
        let statement = super::super::guard::check(sql, "duckdb")?;
        check(&statement, &catalog(), &PiiPolicy::default())
    }

    #[test]
    fn clean_columns_and_counts_of_pii_pass() {
        for sql in [
            "SELECT country, count(*) FROM customers GROUP BY 1",
            "SELECT c.country, sum(o.amount) FROM main.orders o JOIN customers c ON o.customer_id = c.id GROUP BY ALL",
            "SELECT count(DISTINCT email) AS emails FROM customers",
            "SELECT count(c.email) FROM customers c",
            "WITH t AS (SELECT country, count(*) AS n FROM customers GROUP BY country) SELECT * FROM t ORDER BY n DESC",
            "SELECT * FROM orders",
            "SELECT * EXCLUDE (email, ssn) FROM customers",
            "SELECT x.* FROM (SELECT country FROM customers) x",
            "SELECT status FROM orders UNION ALL SELECT country FROM customers",
            "SELECT * FROM range(3)",
        ] {
            assert!(verdict(sql).is_ok(), "{sql}: {:?}", verdict(sql));
        }
        assert_eq!(verdict("SELECT 1 FROM orders o JOIN customers c ON c.id = o.customer_id").map(|r| r.tables.len()), Ok(2));
    }

    #[test]
    fn pii_is_refused_through_every_construct() {
        for sql in [
            "SELECT email FROM customers",
            "SELECT * FROM customers",
            "SELECT c.* FROM customers c",
            "SELECT * EXCLUDE (ssn) FROM customers",
            "SELECT c FROM customers c",
            "SELECT to_json(c) FROM customers c",
            "SELECT count(ssn) FROM customers",
            "SELECT country FROM customers WHERE email LIKE 'a%'",
            "SELECT country, count(*) FROM customers GROUP BY country, email",
            "SELECT min(email) FROM customers",
            "SELECT string_agg(email, ',') FROM customers",
            "SELECT count(*) FROM customers HAVING max(email) > 'a'",
            "WITH t AS (SELECT email AS e FROM customers) SELECT e FROM t",
            "SELECT e FROM (SELECT lower(email) AS e FROM customers) s",
            "SELECT status FROM orders UNION SELECT email FROM customers",
            "SELECT row_number() OVER (PARTITION BY email) FROM customers",
            "SELECT count(email) FILTER (WHERE email = 'x@y.z') FROM customers",
            "SELECT o.id FROM orders o JOIN customers c USING (id) WHERE c.email IS NULL",
            "SELECT 1 FROM customers a JOIN customers b USING (email)",
            "SELECT 1 FROM customers NATURAL JOIN orders",
            "SELECT e FROM customers AS c(i, k, e)",
            "SELECT (SELECT max(ssn) FROM customers) AS x",
            "SELECT * FROM orders o, LATERAL (SELECT email FROM customers c WHERE c.id = o.customer_id) l",
            "SELECT COLUMNS('.*') FROM customers",
            "FROM customers",
            "SELECT main.customers.email FROM main.customers",
            "WITH customers AS (SELECT 1 AS x) SELECT * FROM main.customers",
            "SELECT * FROM customers WHERE EXISTS (WITH customers AS (SELECT 1 AS y) SELECT 1 FROM customers)",
            "SELECT struct_pack(*) FROM customers",
        ] {
            match verdict(sql) {
                Ok(_) => panic!("{sql} passed"),
                Err(r) => assert!(["pii_blocked", "policy_blocked"].contains(&r.code), "{sql}: {} {}", r.code, r.message),
            }
        }
    }

    #[test]
    fn a_catastrophic_column_is_never_named() {
        let r = verdict("SELECT ssn FROM customers").unwrap_err();
        assert!(!r.message.contains("ssn") && r.message.contains("government_id"), "{}", r.message);
        let r = verdict("SELECT email FROM customers").unwrap_err();
        assert!(r.message.contains("main.customers.email") && r.message.contains("COUNT"), "{}", r.message);
    }

    #[test]
    fn only_catalog_tables_and_row_generators_are_read() {
        for sql in ["SELECT * FROM pg_stats", "SELECT * FROM information_schema.columns", "SELECT * FROM duckdb_settings()", "SELECT * FROM nope"] {
            assert!(verdict(sql).is_err(), "{sql} passed");
        }
    }
}
