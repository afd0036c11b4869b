//! Reading catalog tables through views (issue 17): the masking policy and
//! query_sql's `time_range` both change what a table shows, not what the
//! statement says. A statement that passed `guard` and `columns` is
//! rewritten so that every read of a table with a view becomes a derived
//! table, `(SELECT a, <mask of b> AS b, ... FROM t WHERE <period>) AS t`,
//! under the name the statement used for it. Column order and names are
//! the catalog's, so `*`, aliases with column lists, joins and whole-row
//! references keep their meaning; a masked column can only ever be seen
//! masked, and a restricted table only within its period.
//!
//! Where the rewrite cannot know which table a name reads, it refuses
//! instead of guessing: a bare name several schemas have, or a CTE named
//! like a table with a view (the CTE may shadow it in one scope and not in
//! another).
//!
//! Also here: the SQL of each mask method per dialect, which preview_masked
//! reuses, so what it shows is what query_sql returns.
//!
//! Architecture invariant: pure functions over sqlparser ASTs, the catalog
//! and the policy's mask methods; no engine, no IO.

use std::collections::{BTreeMap, HashSet};
use std::ops::ControlFlow;

use sqlparser::ast::{Ident, Query, Statement, TableAlias, TableFactor, VisitMut, VisitorMut};
use sqlparser::parser::Parser;

use super::columns::{catalog_keys, cte_names, parts};
use super::guard::{parser_dialect, Refusal};
use crate::catalog::Catalog;
use crate::model::MaskMethod;

/// How one catalog table is read: its select list (every column, masked
/// ones through their mask) and the condition of a period, if any.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TableView {
    /// SQL items, one per catalog column, in catalog order.
    pub items: Vec<String>,
    /// A condition on the table's own columns (unqualified).
    pub filter: Option<String>,
}

/// The SQL of `method` over the column `column` (already quoted) in
/// `dialect`. `salt` is hex, so it is safe inside a literal. NULL stays NULL.
pub fn mask_sql(method: MaskMethod, column: &str, dialect: &str, salt: &str) -> String {
    let mysql = dialect == "mysql";
    // concat(x, '') is text in every engine, whatever x's type.
    let text = format!("concat({column}, '')");
    let shown = match method {
        MaskMethod::Redact => "'***'".to_string(),
        MaskMethod::Hash => format!("md5(concat('{salt}', {text}))"),
        MaskMethod::Last4 => {
            let length = if mysql { "char_length" } else { "length" };
            format!("CASE WHEN {length}({text}) > 8 THEN concat('***', right({text}, 4)) ELSE '***' END")
        }
        MaskMethod::EmailDomain => {
            let at = if mysql { format!("instr({text}, '@')") } else { format!("strpos({text}, '@')") };
            format!("CASE WHEN {at} > 0 THEN concat('***', substr({text}, {at})) ELSE '***' END")
        }
    };
    format!("CASE WHEN {column} IS NULL THEN NULL ELSE {shown} END")
}

/// A select item showing `column` (quoted) through `method`, under its own name.
pub fn masked_item(method: MaskMethod, column: &str, dialect: &str, salt: &str) -> String {
    format!("{} AS {column}", mask_sql(method, column, dialect, salt))
}

/// Rewrites every read of a table in `views` (keyed by catalog key,
/// `schema.table`) into its view.
pub fn read_through(statement: &mut Statement, catalog: &Catalog, views: &BTreeMap<String, TableView>, dialect: &str) -> Result<(), Refusal> {
    if views.is_empty() {
        return Ok(());
    }
    let ctes = cte_names(statement);
    for cte in &ctes {
        if catalog_keys(catalog, std::slice::from_ref(cte)).iter().any(|k| views.contains_key(k)) {
            return Err(refuse(format!(
                "the CTE `{}` has the name of a table the policy masks or the time range restricts; rename the CTE",
                crate::model::echo(cte)
            )));
        }
    }
    let mut rewriter = Rewriter { catalog, views, dialect, ctes, refusal: None };
    let _ = statement.visit(&mut rewriter);
    match rewriter.refusal {
        Some(r) => Err(r),
        None => Ok(()),
    }
}

fn refuse(message: String) -> Refusal {
    Refusal { code: "invalid_input", message, categories: Vec::new() }
}

struct Rewriter<'a> {
    catalog: &'a Catalog,
    views: &'a BTreeMap<String, TableView>,
    dialect: &'a str,
    ctes: HashSet<String>,
    refusal: Option<Refusal>,
}

impl Rewriter<'_> {
    /// The derived table replacing `factor`, when it reads a table with a view.
    fn replacement(&self, factor: &TableFactor) -> Result<Option<TableFactor>, Refusal> {
        let TableFactor::Table { name, alias, args: None, with_hints, version, with_ordinality, partitions, json_path, sample, index_hints } = factor else {
            return Ok(None);
        };
        let lowered = parts(name);
        if lowered.len() == 1 && lowered.first().is_some_and(|n| self.ctes.contains(n)) {
            return Ok(None);
        }
        let keys = catalog_keys(self.catalog, &lowered);
        if !keys.iter().any(|k| self.views.contains_key(k)) {
            return Ok(None);
        }
        let shown = crate::model::echo(&name.to_string());
        let [key] = keys.as_slice() else {
            return Err(refuse(format!("`{shown}` names a table in several schemas ({}); qualify it with its schema", keys.join(", "))));
        };
        let modified = !with_hints.is_empty() || version.is_some() || *with_ordinality || !partitions.is_empty() || json_path.is_some() || sample.is_some() || !index_hints.is_empty();
        if modified {
            return Err(refuse(format!("`{shown}` is read with a modifier (hints, sample, time travel, partitions) that cannot apply to a masked or restricted table; drop it")));
        }
        let Some(view) = self.views.get(key) else { return Ok(None) };
        let filter = view.filter.as_ref().map(|f| format!(" WHERE {f}")).unwrap_or_default();
        let sql = format!("SELECT {} FROM {name}{filter}", view.items.join(", "));
        let subquery = parse_query(&sql, self.dialect)?;
        let alias = match alias {
            Some(a) => a.clone(),
            None => TableAlias { explicit: true, name: table_ident(name), columns: Vec::new(), at: None },
        };
        Ok(Some(TableFactor::Derived { lateral: false, subquery: Box::new(subquery), alias: Some(alias), sample: None }))
    }
}

/// The last part of a table name, quoted as written.
fn table_ident(name: &sqlparser::ast::ObjectName) -> Ident {
    name.0.last().and_then(|p| p.as_ident()).cloned().unwrap_or_else(|| Ident::new(name.to_string()))
}

fn parse_query(sql: &str, dialect: &str) -> Result<Query, Refusal> {
    let Some(d) = parser_dialect(dialect) else {
        return Err(refuse(format!("dialect `{}` is not supported", crate::model::echo(dialect))));
    };
    let fail = || refuse("the view of a masked or restricted table does not parse (an internal fault; please report it)".to_string());
    let mut statements = Parser::parse_sql(d.as_ref(), sql).map_err(|_| fail())?;
    match (statements.pop(), statements.is_empty()) {
        (Some(Statement::Query(q)), true) => Ok(*q),
        _ => Err(fail()),
    }
}

impl VisitorMut for Rewriter<'_> {
    type Break = ();

    // After the children: the derived table put in place is not visited again.
    fn post_visit_table_factor(&mut self, factor: &mut TableFactor) -> ControlFlow<()> {
        match self.replacement(factor) {
            Ok(Some(derived)) => {
                *factor = derived;
                ControlFlow::Continue(())
            }
            Ok(None) => ControlFlow::Continue(()),
            Err(r) => {
                self.refusal = Some(r);
                ControlFlow::Break(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::{ColumnInfo, TableInfo};

    fn catalog() -> Catalog {
        let mut c = Catalog::default();
        for (schema, name, cols) in [("main", "customers", &["id", "email", "signed_up"][..]), ("main", "orders", &["id", "customer_id", "amount"][..])] {
            let columns = cols.iter().map(|n| ColumnInfo { name: n.to_string(), data_type: "VARCHAR".into(), ..Default::default() }).collect();
            c.tables.insert(format!("{schema}.{name}"), TableInfo { schema: schema.into(), name: name.into(), columns, ..Default::default() });
        }
        c
    }

    fn views() -> BTreeMap<String, TableView> {
        let items = vec!["\"id\"".to_string(), format!("{} AS \"email\"", mask_sql(MaskMethod::Redact, "\"email\"", "duckdb", "ab")), "\"signed_up\"".to_string()];
        BTreeMap::from([("main.customers".to_string(), TableView { items, filter: Some("\"signed_up\" >= CAST('2024-01-01' AS TIMESTAMP)".into()) })])
    }

    fn rewrite(sql: &str) -> Result<String, Refusal> {
        let mut s = crate::provider::guard::check(sql, "duckdb").map_err(|r| refuse(r.message))?;
        read_through(&mut s, &catalog(), &views(), "duckdb")?;
        Ok(s.to_string())
    }

    #[test]
    fn every_read_of_a_table_with_a_view_goes_through_it() {
        let out = rewrite("SELECT c.email, o.amount FROM customers c JOIN orders o ON o.customer_id = c.id WHERE c.id IN (SELECT id FROM main.customers)").unwrap();
        assert_eq!(out.matches("FROM customers WHERE \"signed_up\"").count() + out.matches("FROM main.customers WHERE").count(), 2, "{out}");
        assert!(out.contains(") c JOIN orders o ON"), "the alias is kept, other tables untouched: {out}");
        assert!(out.contains("AS customers)"), "an unaliased read keeps the table's name: {out}");
        assert!(!out.contains("c.email, o.amount FROM customers c"), "{out}");
    }

    #[test]
    fn a_cte_named_like_a_viewed_table_is_refused() {
        let e = rewrite("WITH customers AS (SELECT 1 AS id) SELECT * FROM customers").unwrap_err();
        assert!(e.message.contains("rename the CTE"), "{}", e.message);
        // A CTE with another name is read as it is.
        let out = rewrite("WITH x AS (SELECT id FROM customers) SELECT * FROM x").unwrap();
        assert!(out.contains("FROM (SELECT \"id\""), "{out}");
        assert!(out.contains("SELECT * FROM x"), "{out}");
    }

    #[test]
    fn a_name_in_several_schemas_must_be_qualified() {
        let mut c = catalog();
        let t = c.tables.get("main.customers").cloned().unwrap();
        c.tables.insert("other.customers".into(), TableInfo { schema: "other".into(), ..t });
        let mut s = crate::provider::guard::check("SELECT id FROM customers", "duckdb").unwrap();
        let e = read_through(&mut s, &c, &views(), "duckdb").unwrap_err();
        assert!(e.message.contains("qualify it with its schema"), "{}", e.message);
    }

    #[test]
    fn masks_keep_null_and_show_only_their_part() {
        for d in ["duckdb", "postgres", "mysql", "datafusion"] {
            for m in [MaskMethod::Redact, MaskMethod::Hash, MaskMethod::Last4, MaskMethod::EmailDomain] {
                let sql = mask_sql(m, "\"c\"", d, "00ff");
                assert!(sql.starts_with("CASE WHEN \"c\" IS NULL THEN NULL ELSE "), "{sql}");
                let parsed = crate::provider::guard::check(&format!("SELECT {sql} FROM t"), if d == "datafusion" { "duckdb" } else { d });
                assert!(parsed.is_ok(), "{d} {m:?}: {sql}");
            }
        }
    }
}
