//! Row filters per role (issue 37, item 2): `row_filters` in
//! `access_policy.yaml`, checked against the model, and the restriction a
//! caller's roles put on each table a query may read.
//!
//! ```yaml
//! roles:
//!   eu_analyst:
//!     row_filters:
//!       - {entity: store, where: "region_id = 1"}
//! ```
//!
//! `where` is a condition on the entity's own (physical, unqualified)
//! columns. It restricts the entity's table and every table that reaches
//! the entity over the join graph's many-to-one steps (a fact joined to it,
//! and a fact joined to such a fact: `order_item -> order -> store`): such a
//! row is read only when the entity row it leads to passes, as
//! `fk IN (SELECT key FROM parent WHERE ...)`, nested along the path. The
//! restriction stands on each table read, before any join, so it is exact
//! whatever fans out, and no filter or group-by of the caller can drop it.
//!
//! Semantics, chosen to fail closed:
//! - A row whose key is NULL (an online order with no store) leads to no
//!   entity row, so it does not pass.
//! - A table reaching the entity along several paths must pass along each.
//! - A role's filters all apply (AND). A caller with several roles sees the
//!   rows any one of them allows (OR), like its other grants; a role with no
//!   filter reaching a table sees all of that table.
//! - A versioned join is followed on its keys (some version passes).
//!
//! Architecture invariant: decisions over the model and SQL text only; no
//! engine, no envelope, no tool behaviour.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use serde_json::{json, Value as Json};
use sqlparser::ast::{Expr, Ident};

use crate::model::{Cardinality, Diagnostic, Diagnostics, SemanticModel, TableRef};

/// A row filter as `access_policy.yaml` states it, with where it stands.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowFilterDecl {
    pub role: String,
    pub entity: String,
    /// The condition, as written.
    pub condition: String,
    /// The lines of `entity` and of `where`.
    pub line: usize,
    pub where_line: usize,
    /// The key path, `roles.<role>.row_filters[i]`.
    pub key: String,
}

/// Checks every row filter against the model: the entity exists, the
/// condition parses and names only the entity's physical columns.
pub fn check(file: &Path, decls: &[RowFilterDecl], model: &SemanticModel) -> Result<(), Diagnostics> {
    let mut diags = Diagnostics::default();
    for d in decls {
        let Some(entity) = model.entities.get(&d.entity) else {
            let near = crate::model::close_matches(&d.entity, model.entities.keys().map(String::as_str));
            diags.push(Diagnostic::new(file, d.line, format!("{}.entity", d.key), format!("unknown entity `{}`", crate::model::echo(&d.entity))).suggest(near));
            continue;
        };
        let key = format!("{}.where", d.key);
        let expr = match parse_condition(&d.condition) {
            Ok(e) => e,
            Err(why) => {
                diags.push(Diagnostic::new(file, d.where_line, &key, format!("the condition does not parse: {why}")));
                continue;
            }
        };
        let physical: Vec<&str> = entity.columns.iter().filter(|c| c.expr.is_none()).map(|c| c.name.as_str()).collect();
        for problem in names_outside(&expr, &physical) {
            let near = match &problem {
                Outside::Column(c) => crate::model::close_matches(c, physical.iter().copied()),
                _ => Vec::new(),
            };
            let message = match problem {
                Outside::Column(c) => format!("`{}` is not a column of entity `{}`", crate::model::echo(&c), d.entity),
                Outside::Qualified(c) => format!("`{}` is qualified; name the columns of `{}` unqualified", crate::model::echo(&c), d.entity),
                Outside::Subquery => "a row filter is a condition on the entity's own columns; it may not hold a subquery".to_string(),
            };
            diags.push(Diagnostic::new(file, d.where_line, &key, message).suggest(near));
        }
    }
    if diags.is_empty() {
        Ok(())
    } else {
        Err(diags)
    }
}

fn parse_condition(sql: &str) -> Result<Expr, String> {
    let dialect = sqlparser::dialect::GenericDialect {};
    let mut parser = sqlparser::parser::Parser::new(&dialect).try_with_sql(sql).map_err(|e| e.to_string())?;
    let e = parser.parse_expr().map_err(|e| e.to_string())?;
    match parser.peek_token().token {
        sqlparser::tokenizer::Token::EOF => Ok(e),
        other => Err(format!("unexpected `{other}` after the condition")),
    }
}

enum Outside {
    Column(String),
    Qualified(String),
    Subquery,
}

/// What in `expr` is not one of `columns`.
fn names_outside(expr: &Expr, columns: &[&str]) -> Vec<Outside> {
    let mut out = Vec::new();
    let _ = sqlparser::ast::visit_expressions(expr, |e| {
        match e {
            Expr::Identifier(id) if !columns.contains(&id.value.as_str()) => out.push(Outside::Column(id.value.clone())),
            Expr::CompoundIdentifier(parts) => out.push(Outside::Qualified(parts.iter().map(|p| p.value.as_str()).collect::<Vec<_>>().join("."))),
            Expr::Subquery(_) | Expr::Exists { .. } | Expr::InSubquery { .. } => out.push(Outside::Subquery),
            _ => {}
        }
        std::ops::ControlFlow::<()>::Continue(())
    });
    out
}

/// One many-to-one step: this table's `from` columns lead to `to`'s.
#[derive(Clone, Debug, PartialEq, Eq)]
struct Step {
    /// SQL over the stepping table's own columns (a name, or a computed
    /// column's expression), one per key.
    from: Vec<Key>,
    to_entity: String,
    to_table: TableRef,
    to: Vec<Key>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Key {
    Column(String),
    Computed(String),
}

/// One path to one filter's entity.
#[derive(Clone, Debug, PartialEq, Eq)]
struct PathCond {
    steps: Vec<Step>,
    /// Index into `RowRestriction::filters`.
    filter: usize,
}

/// One entity's alternatives (one per role; any may pass), each a
/// conjunction of paths (all must pass).
type Alternatives = Vec<Vec<PathCond>>;

/// The rows a set of roles may read, per table.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RowRestriction {
    /// Per restricted table: every entity bound to it must pass (AND); per
    /// entity, any role's alternative may pass (OR); per alternative, every
    /// path must pass (AND).
    tables: BTreeMap<TableRef, Vec<Alternatives>>,
    /// The filters of the roles, in the policy's order.
    filters: Vec<RowFilterDecl>,
}

/// Bounds the walk of the join graph (a model is small; a cycle is cut by
/// the visited set, this keeps a dense graph from exploding).
const MAX_PATH_STEPS: usize = 8;
const MAX_PATHS: usize = 64;

impl RowRestriction {
    /// The restriction of `roles` (the policy's roles among them; others grant
    /// nothing). `None` when they read every row: a role without row filters
    /// sees everything, and so does a caller holding it.
    pub fn of(decls: &[RowFilterDecl], policy_roles: &BTreeSet<String>, roles: &[String], model: &SemanticModel) -> Option<RowRestriction> {
        let held: BTreeSet<&String> = roles.iter().filter(|r| policy_roles.contains(*r)).collect();
        if held.is_empty() || held.iter().any(|r| !decls.iter().any(|d| d.role == **r)) {
            return None;
        }
        let filters: Vec<RowFilterDecl> = decls.iter().filter(|d| held.contains(&d.role)).cloned().collect();
        let mut tables: BTreeMap<TableRef, Vec<Alternatives>> = BTreeMap::new();
        for (name, entity) in &model.entities {
            let mut alternatives = Vec::new();
            let mut open = false;
            for role in &held {
                let mut conj = Vec::new();
                for (i, f) in filters.iter().enumerate().filter(|(_, f)| f.role == **role) {
                    for steps in paths(model, name, &f.entity) {
                        conj.push(PathCond { steps, filter: i });
                    }
                }
                if conj.is_empty() {
                    // This role reads the whole table: so does the caller.
                    open = true;
                    break;
                }
                alternatives.push(conj);
            }
            if !open {
                tables.entry(entity.table.clone()).or_default().push(alternatives);
            }
        }
        Some(RowRestriction { tables, filters })
    }

    /// The condition restricting `table` to the rows the roles may read, over
    /// the table's own columns unqualified, identifiers quoted with `quote`;
    /// `None` when every row may be read.
    pub fn condition(&self, table: &TableRef, quote: char) -> Option<String> {
        let entities = self.tables.get(table)?;
        let q = |n: &str| Ident::with_quote(quote, n).to_string();
        let per_entity: Vec<String> = entities
            .iter()
            .map(|alternatives| {
                let ors: Vec<String> = alternatives
                    .iter()
                    .map(|conj| {
                        let ands: Vec<String> = conj.iter().map(|p| self.path_sql(&p.steps, p.filter, &q)).collect();
                        format!("({})", ands.join(" AND "))
                    })
                    .collect();
                format!("({})", ors.join(" OR "))
            })
            .collect();
        Some(per_entity.join(" AND "))
    }

    fn path_sql(&self, steps: &[Step], filter: usize, q: &dyn Fn(&str) -> String) -> String {
        let Some((step, rest)) = steps.split_first() else {
            // Parsed and checked at load; a filter index out of range cannot
            // happen, and would read nothing rather than everything.
            return match self.filters.get(filter) {
                Some(f) => format!("({})", f.condition),
                None => "(1 = 0)".to_string(),
            };
        };
        let keys = |ks: &[Key]| {
            let items: Vec<String> = ks
                .iter()
                .map(|k| match k {
                    Key::Column(c) => q(c),
                    Key::Computed(sql) => format!("({sql})"),
                })
                .collect();
            match items.as_slice() {
                [one] => one.clone(),
                _ => format!("({})", items.join(", ")),
            }
        };
        let select: Vec<String> = step
            .to
            .iter()
            .map(|k| match k {
                Key::Column(c) => q(c),
                Key::Computed(sql) => format!("({sql})"),
            })
            .collect();
        format!(
            "{} IN (SELECT {} FROM {}.{} WHERE {})",
            keys(&step.from),
            select.join(", "),
            q(&step.to_table.schema),
            q(&step.to_table.table),
            self.path_sql(rest, filter, q)
        )
    }

    /// Whether `table` is restricted.
    pub fn restricts(&self, table: &TableRef) -> bool {
        self.tables.contains_key(table)
    }

    /// The restricted table whose catalog key (`schema.table`) is `key`.
    pub fn table_by_key(&self, key: &str) -> Option<&TableRef> {
        self.tables.keys().find(|t| format!("{}.{}", t.schema, t.table).eq_ignore_ascii_case(key))
    }

    /// `policy_applied.row_filters`: each filter that restricted one of
    /// `read`, with the tables it restricted (none restricted: `None`).
    pub fn applied<'t>(&self, read: impl IntoIterator<Item = &'t TableRef>) -> Option<Json> {
        let mut by_filter: BTreeMap<usize, BTreeSet<String>> = BTreeMap::new();
        for t in read {
            for p in self.tables.get(t).into_iter().flatten().flatten().flatten() {
                by_filter.entry(p.filter).or_default().insert(t.to_string());
            }
        }
        if by_filter.is_empty() {
            return None;
        }
        let list: Vec<Json> = by_filter
            .into_iter()
            .filter_map(|(i, tables)| self.filters.get(i).map(|f| json!({"role": f.role, "entity": f.entity, "where": f.condition, "tables": tables})))
            .collect();
        Some(Json::Array(list))
    }
}

impl crate::sql::TableFilters for RowRestriction {
    fn condition(&self, table: &TableRef, quote: char) -> Option<String> {
        RowRestriction::condition(self, table, quote)
    }
}

/// Every simple path of many-to-one steps from `from` to `to` (the empty
/// path when they are the same entity).
fn paths(model: &SemanticModel, from: &str, to: &str) -> Vec<Vec<Step>> {
    let mut out = Vec::new();
    let mut visited = vec![from.to_string()];
    walk(model, from, to, &mut Vec::new(), &mut visited, &mut out);
    out
}

fn walk(model: &SemanticModel, at: &str, to: &str, path: &mut Vec<Step>, visited: &mut Vec<String>, out: &mut Vec<Vec<Step>>) {
    if at == to {
        out.push(path.clone());
        return;
    }
    if path.len() >= MAX_PATH_STEPS || out.len() >= MAX_PATHS {
        return;
    }
    for step in steps_from(model, at) {
        if visited.contains(&step.to_entity) {
            continue;
        }
        let next = step.to_entity.clone();
        visited.push(next.clone());
        path.push(step);
        walk(model, &next, to, path, visited, out);
        path.pop();
        visited.pop();
    }
}

/// The many-to-one steps out of `entity`: a many-to-one or one-to-one join
/// from it, a one-to-many or one-to-one join into it.
fn steps_from(model: &SemanticModel, entity: &str) -> Vec<Step> {
    let key = |e: &str, c: &str| match model.entities.get(e).and_then(|en| en.column(c)).and_then(|col| col.expr.clone()) {
        Some(sql) => Key::Computed(sql),
        None => Key::Column(c.to_string()),
    };
    let mut out = Vec::new();
    for j in model.joins.values() {
        let forward = matches!(j.cardinality, Some(Cardinality::ManyToOne | Cardinality::OneToOne)) && j.source_entity == entity;
        let backward = matches!(j.cardinality, Some(Cardinality::OneToMany | Cardinality::OneToOne)) && j.target_entity == entity;
        let (other, pairs): (&str, Vec<(&str, &str)>) = if forward {
            (&j.target_entity, j.on.iter().map(|k| (k.source.as_str(), k.target.as_str())).collect())
        } else if backward {
            (&j.source_entity, j.on.iter().map(|k| (k.target.as_str(), k.source.as_str())).collect())
        } else {
            continue;
        };
        let Some(target) = model.entities.get(other) else { continue };
        if pairs.is_empty() {
            continue;
        }
        out.push(Step {
            from: pairs.iter().map(|(a, _)| key(entity, a)).collect(),
            to_entity: other.to_string(),
            to_table: target.table.clone(),
            to: pairs.iter().map(|(_, b)| key(other, b)).collect(),
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_condition_names_only_its_entitys_columns() {
        let e = parse_condition("region_id = 1 AND lower(city) <> 'x'").unwrap();
        assert!(names_outside(&e, &["region_id", "city"]).is_empty());
        let e = parse_condition("region = 'EU' OR s.city = 'x' OR id IN (SELECT 1)").unwrap();
        let out = names_outside(&e, &["id", "city"]);
        assert!(out.iter().any(|o| matches!(o, Outside::Column(c) if c == "region")));
        assert!(out.iter().any(|o| matches!(o, Outside::Qualified(c) if c == "s.city")));
        assert!(out.iter().any(|o| matches!(o, Outside::Subquery)));
        assert!(parse_condition("region_id = 1 )").is_err());
    }

    fn demo() -> SemanticModel {
        let (model, diags) = crate::model::load_project(&Path::new(env!("CARGO_MANIFEST_DIR")).join("semantics/demo"));
        assert!(diags.is_empty(), "{diags}");
        model
    }

    fn decl(role: &str, entity: &str, condition: &str) -> RowFilterDecl {
        RowFilterDecl { role: role.into(), entity: entity.into(), condition: condition.into(), line: 1, where_line: 1, key: "k".into() }
    }

    fn main(table: &str) -> TableRef {
        TableRef { schema: "main".into(), table: table.into() }
    }

    #[test]
    fn every_table_reaching_the_entity_is_restricted_and_roles_are_a_union() {
        let model = demo();
        let decls = vec![decl("eu", "store", "region_id = 3"), decl("ap", "region", "code = 'AP'")];
        let roles: BTreeSet<String> = ["eu", "ap", "all"].iter().map(|r| r.to_string()).collect();
        let of = |held: &[&str]| RowRestriction::of(&decls, &roles, &held.iter().map(|r| r.to_string()).collect::<Vec<_>>(), &model);
        let eu = of(&["eu"]).unwrap();
        assert_eq!(eu.condition(&main("stores"), '"').unwrap(), "(((region_id = 3)))");
        assert_eq!(
            eu.condition(&main("order_items"), '"').unwrap(),
            r#"(("order_id" IN (SELECT "id" FROM "main"."orders" WHERE "store_id" IN (SELECT "id" FROM "main"."stores" WHERE (region_id = 3)))))"#
        );
        // Quoted for the dialect (MySQL's backticks).
        assert!(eu.condition(&main("orders"), '`').unwrap().starts_with("((`store_id` IN (SELECT `id` FROM `main`.`stores`"));
        // Tables that do not reach the store are read whole.
        for t in ["products", "customers", "regions"] {
            assert!(eu.condition(&main(t), '"').is_none(), "{t}");
        }
        // Orders reach regions through their store and their customer (and
        // the customer of each address): they must pass along each.
        let ap = of(&["ap"]).unwrap();
        let orders = ap.condition(&main("orders"), '"').unwrap();
        assert!(orders.contains(r#""store_id" IN"#) && orders.contains(r#""customer_id" IN"#) && orders.contains(" AND "), "{orders}");
        // Several roles: the rows either allows; a table one of them reads whole is read whole.
        let both = of(&["eu", "ap"]).unwrap();
        assert!(both.condition(&main("stores"), '"').unwrap().contains(") OR ("));
        assert!(both.condition(&main("customers"), '"').is_none());
        // A role without row filters reads everything, and so does its holder;
        // roles the policy does not list add nothing.
        assert!(of(&["eu", "all"]).is_none());
        assert_eq!(of(&["eu", "intern"]), Some(eu.clone()));
        // policy_applied names the filters behind the tables read.
        let applied = eu.applied([&main("order_items"), &main("products")]).unwrap();
        assert_eq!(applied, json!([{"role": "eu", "entity": "store", "where": "region_id = 3", "tables": ["main.order_items"]}]));
        assert!(eu.applied([&main("products")]).is_none());
    }
}
