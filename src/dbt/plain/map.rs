//! From a plain dbt project's nodes to a draft (`index::infer`'s types,
//! written by `index::write`): which nodes become entities, their names,
//! identities and joins, and the PII the project declares. Only what the
//! project declares, or the warehouse shows, is written:
//!
//! - an entity per model or source table that is declared in YAML, read by
//!   another model, or pointed at by a `relationships` test; ephemeral
//!   models are skipped (no relation), and so are relations a semantic
//!   model already binds (a `relationships` test pointing at one joins the
//!   semantic model's entity, on its key);
//! - identities from a `primary_key` constraint, a
//!   `dbt_utils.unique_combination_of_columns` test, or `unique` and
//!   `not_null` on one column; else the column the data shows unique and
//!   never null (when measured); else none (`identity: []`);
//! - a many-to-one join per `relationships` test (one-to-one when the
//!   column is unique), named `<source>_<target>`, or after the column
//!   when one node points at another twice;
//! - descriptions (docs blocks rendered) and accepted values on columns;
//! - PII declared in `meta`, tags or the description as reviewed overrides
//!   whose categories the policy blocks; a card-number name whose sampled
//!   values are amounts, none Luhn-valid, as clean.
//!
//! Architecture invariant: pure over the nodes, the catalog (measured or
//! built from the YAML) and the measured evidence; measuring is `check`'s.

use std::collections::{BTreeMap, BTreeSet};

use super::read::{Node, Target};
use crate::catalog::{Catalog, ColumnInfo, TableInfo};
use crate::index::infer::{self, Draft, DraftEntity, DraftJoin, DraftMetric, DraftOrigin, JoinEvidence};
use crate::model::{is_identifier, ColumnTag, TypeClass};

/// A node that becomes an entity, or (`semantic`) a semantic model's
/// relation a plain model's `relationships` test points at: a join target
/// only, imported as the semantic model's entity.
#[derive(Clone, Debug)]
pub struct Selected {
    pub node: Node,
    /// `schema.table`.
    pub key: String,
    pub entity: String,
    /// The semantic model's entity key, for a relation a semantic model binds.
    pub semantic: Option<String>,
}

impl Selected {
    fn is_plain(&self) -> bool {
        self.semantic.is_none()
    }
}

/// Relations (`schema.table`) semantic models bind, with the entity each is
/// imported as (`None` when it has no one-column primary entity): the
/// semantic import's `Imported::relations`.
pub type Bound = BTreeMap<String, Option<crate::dbt::SemanticEntity>>;

/// The nodes that become entities, with their names; notes say what was left out.
/// `taken` holds entity names already used (the semantic models' entities).
pub fn select(nodes: &[Node], bound_by_semantic_models: &Bound, taken: &BTreeSet<String>, notes: &mut Vec<String>) -> Vec<Selected> {
    let pointed_at: BTreeSet<Target> = nodes.iter().flat_map(|n| n.columns.iter().flat_map(|c| c.relationships.iter().map(|r| r.to.clone()))).collect();
    let mut chosen: Vec<&Node> = Vec::new();
    for n in nodes {
        let target = n.target();
        let key = format!("{}.{}", n.schema, n.table);
        if n.ephemeral {
            notes.push(format!("{} skipped: ephemeral (no relation in the warehouse)", n.label()));
        } else if bound_by_semantic_models.contains_key(&key) || n.time_spine {
            // Its semantic model is imported instead; a time spine is a calendar.
        } else if !(n.declared || n.referenced || pointed_at.contains(&target)) {
            notes.push(format!("{} skipped: no YAML, no test and no model reads it", n.label()));
        } else if ![&n.schema, &n.table].iter().all(|x| is_identifier(x)) {
            notes.push(format!("{} skipped: its relation `{key}` is not a plain identifier", n.label()));
        } else {
            chosen.push(n);
        }
    }
    // Singular names, as `index` gives; a source table whose name a model
    // already takes is prefixed with its source.
    let mut taken = taken.clone();
    let mut out = Vec::new();
    let mut order: Vec<&Node> = chosen.iter().filter(|n| !n.is_source()).copied().collect();
    order.extend(chosen.iter().filter(|n| n.is_source()).copied());
    for n in order {
        let base = infer::singular(&n.name);
        let mut entity = match &n.source {
            Some(src) if taken.contains(&base) => format!("{}_{base}", infer::singular(src)),
            _ => base,
        };
        let stem = entity.clone();
        let mut k = 2;
        while !taken.insert(entity.clone()) {
            entity = format!("{stem}_{k}");
            k += 1;
        }
        out.push(Selected { key: format!("{}.{}", n.schema, n.table), entity, node: n.clone(), semantic: None });
    }
    // The semantic models' relations the chosen nodes point at: join targets.
    let pointed_from_plain: BTreeSet<&Target> = chosen.iter().flat_map(|n| n.columns.iter().flat_map(|c| c.relationships.iter().map(|r| &r.to))).collect();
    for n in nodes {
        let target = n.target();
        let key = format!("{}.{}", n.schema, n.table);
        if let (true, Some(Some(se))) = (pointed_from_plain.contains(&target), bound_by_semantic_models.get(&key)) {
            out.push(Selected { key, entity: se.entity.clone(), node: n.clone(), semantic: Some(se.key.clone()) });
        }
    }
    out
}

/// Whether any selected node becomes an entity of its own.
pub fn any_plain(selected: &[Selected]) -> bool {
    selected.iter().any(Selected::is_plain)
}

/// A table of the catalog built from the YAML alone (no warehouse): the
/// declared columns, typed where `data_type` says.
/// Columns a key names but the YAML does not list are added, untyped.
pub fn declared_table(n: &Node) -> TableInfo {
    let mut columns: Vec<ColumnInfo> = n
        .columns
        .iter()
        .map(|c| ColumnInfo { name: c.name.clone(), data_type: c.data_type.clone().unwrap_or_default(), nullable: !c.not_null, comment: None, stats: None })
        .collect();
    let keys = n.unique_combinations.iter().map(|(cols, _)| cols).chain(n.primary_key.as_ref().map(|(cols, _)| cols)).flatten();
    for k in keys {
        add_column(&mut columns, k);
    }
    TableInfo { schema: n.schema.clone(), name: n.table.clone(), columns, ..TableInfo::default() }
}

/// Adds an untyped column to a table built from the YAML, unless it is there.
pub fn add_column(columns: &mut Vec<ColumnInfo>, name: &str) {
    if !columns.iter().any(|c| c.name == name) {
        columns.push(ColumnInfo { name: name.to_string(), nullable: true, ..ColumnInfo::default() });
    }
}

/// The identity the project declares for a node, or the data shows.
pub fn identity(s: &Selected, table: &TableInfo) -> Option<(Vec<String>, &'static str, String)> {
    let n = &s.node;
    let has = |c: &str| table.columns.iter().any(|x| x.name == c);
    if let Some((cols, at)) = &n.primary_key {
        if cols.iter().all(|c| has(c)) {
            return Some((cols.clone(), "dbt_import", format!("primary_key constraint on ({}) at {at}", cols.join(", "))));
        }
    }
    if let Some(c) = n.columns.iter().find(|c| c.primary_key && has(&c.name)) {
        return Some((vec![c.name.clone()], "dbt_import", format!("primary_key constraint on `{}` at {}", c.name, c.at)));
    }
    if let Some(c) = n.columns.iter().find(|c| c.unique && c.not_null && has(&c.name)) {
        return Some((vec![c.name.clone()], "dbt_import", format!("tests unique and not_null on `{}` at {}", c.name, c.at)));
    }
    if let Some((cols, at)) = n.unique_combinations.iter().find(|(cols, _)| cols.iter().all(|c| has(c))) {
        return Some((cols.clone(), "dbt_import", format!("dbt_utils.unique_combination_of_columns ({}) at {at}", cols.join(", "))));
    }
    // Nothing declared: what the data shows, when it was measured.
    infer::identity(table, &s.entity).map(|(cols, method, evidence)| (cols, method, format!("{evidence} (no key declared in dbt)")))
}

/// A `relationships` test between two selected nodes.
#[derive(Clone, Debug, PartialEq)]
pub struct Link {
    /// Indexes into the selected nodes.
    pub from: usize,
    pub column: String,
    pub to: usize,
    pub field: String,
    pub at: String,
}

/// Every `relationships` test whose both ends are selected; notes say which were not.
pub fn links(selected: &[Selected], notes: &mut Vec<String>) -> Vec<Link> {
    let by_target: BTreeMap<Target, usize> = selected
        .iter()
        .enumerate()
        .map(|(i, s)| (s.node.target(), i))
        .collect();
    let mut out = Vec::new();
    for (i, s) in selected.iter().enumerate().filter(|(_, s)| s.is_plain()) {
        for c in &s.node.columns {
            for r in &c.relationships {
                match by_target.get(&r.to) {
                    Some(&to) if to == i => notes.push(format!(
                        "relationships test at {} left out: `{}` points at its own table; define a second entity on it and join to that",
                        r.at, c.name
                    )),
                    Some(&to) => out.push(Link { from: i, column: c.name.clone(), to, field: r.field.clone(), at: r.at.clone() }),
                    None => notes.push(format!("relationships test at {} left out: {} is not imported", r.at, r.to)),
                }
            }
        }
    }
    out
}

/// What the warehouse measured of a link.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Measured {
    pub evidence: JoinEvidence,
    /// The target's field is unique (each key finds at most one row).
    pub target_unique: bool,
    /// The source column is never NULL.
    pub never_null: bool,
}

/// The description of a column: dbt's, with its accepted values.
fn column_description(c: &super::read::NodeColumn) -> Option<String> {
    let values = (!c.accepted_values.is_empty()).then(|| format!("Accepted values: {}.", c.accepted_values.join(", ")));
    match (&c.description, values) {
        (Some(d), Some(v)) => Some(format!("{d}\n{v}")),
        (d, v) => d.clone().or(v),
    }
}

/// Everything `map` needs, gathered by the caller.
pub struct Evidence<'a> {
    /// Every selected node's table, by `schema.table`: measured, or built from the YAML.
    pub tables: &'a BTreeMap<String, TableInfo>,
    /// Per link, in `links` order; `None` when not measured.
    pub measured: &'a [Option<Measured>],
    /// Sampled values by table and column (text columns, and numeric
    /// columns a name calls card numbers).
    pub samples: &'a BTreeMap<String, BTreeMap<String, Vec<String>>>,
    pub current_year: i32,
}

/// The draft of a plain dbt project.
pub fn draft(selected: &[Selected], links: &[Link], ev: &Evidence<'_>) -> Draft {
    // The catalog `infer::draft` reads: the selected tables, described by dbt.
    let mut catalog = Catalog::default();
    let mut names = BTreeMap::new();
    let mut identities = BTreeMap::new();
    for s in selected.iter().filter(|s| s.is_plain()) {
        let Some(mut t) = ev.tables.get(&s.key).cloned() else { continue };
        t.comment = Some(s.node.description.clone().unwrap_or_else(|| format!("dbt {} (no description).", s.node.label())));
        for c in t.columns.iter_mut() {
            if let Some(declared) = s.node.columns.iter().find(|d| d.name == c.name) {
                c.comment = column_description(declared);
            }
        }
        if let Some(id) = identity(s, &t) {
            identities.insert(s.key.clone(), id);
        }
        names.insert(s.key.clone(), s.entity.clone());
        catalog.tables.insert(s.key.clone(), t);
    }
    let mut d = infer::draft(&catalog, &names, &identities, &[], ev.samples, ev.current_year);
    d.origin = DraftOrigin::DbtImport;
    // `infer` leaves tables without an identity out; dbt models are entities all the same.
    d.notes.retain(|n| !n.contains("has no primary key and no column the data shows unique"));
    for s in selected.iter().filter(|s| s.is_plain()) {
        let Some(t) = catalog.tables.get(&s.key) else { continue };
        if identities.contains_key(&s.key) {
            continue;
        }
        d.notes.push(format!("{} has no key declared (unique + not_null, unique_combination_of_columns or a primary_key constraint) and none the data shows: entity `{}` without identity", s.node.label(), s.entity));
        d.entities.push(DraftEntity {
            name: s.entity.clone(),
            table_key: s.key.clone(),
            schema: t.schema.clone(),
            table: t.name.clone(),
            identity: Vec::new(),
            identity_method: "none",
            identity_evidence: "no key declared, none in the data".into(),
            confidence: "medium",
            columns: t
                .columns
                .iter()
                .map(infer::DraftColumn::of)
                .collect(),
            description: t.comment.clone().unwrap_or_default(),
            source: None,
        });
        // Rows counted by a column the project (or the data) says is never NULL.
        let never_null = s.node.columns.iter().find(|c| c.not_null).map(|c| c.name.clone()).or_else(|| {
            t.columns.iter().find(|c| c.stats.as_ref().is_some_and(|x| x.null_fraction == 0.0 && x.non_null_count > 0)).map(|c| c.name.clone())
        });
        if let Some(col) = never_null.filter(|c| t.columns.iter().any(|x| &x.name == c)) {
            d.metrics.push(DraftMetric {
                name: format!("{}_count", s.entity),
                entity: s.entity.clone(),
                agg: "count",
                column: col,
                time_dimension: None,
                description: format!("Number of {} rows.", s.entity),
                non_additive: None,
                source: None,
            });
        }
    }
    let at_of: BTreeMap<&str, &str> = selected.iter().filter(|s| s.is_plain()).map(|s| (s.entity.as_str(), s.node.at.as_str())).collect();
    let node_of: BTreeMap<&str, &Node> = selected.iter().filter(|s| s.is_plain()).map(|s| (s.entity.as_str(), &s.node)).collect();
    for e in d.entities.iter_mut() {
        e.source = at_of.get(e.name.as_str()).map(|a| a.to_string());
        // `accepted_values` tests: the values filters are checked against.
        if let Some(node) = node_of.get(e.name.as_str()) {
            for c in e.columns.iter_mut() {
                if let Some(declared) = node.columns.iter().find(|d| d.name == c.name) {
                    c.accepted_values = declared.accepted_values.clone();
                }
            }
        }
        // Declared keys are the project's word; a key the data shows, or none, is less.
        e.confidence = if e.identity_method == "dbt_import" { "high" } else { "medium" };
    }
    for m in d.metrics.iter_mut() {
        m.source = at_of.get(m.entity.as_str()).map(|a| format!("{a} (default metric of the model)"));
    }
    d.joins = joins(selected, links, ev, &identities, &mut d.notes);
    declared_pii(selected, &catalog, &mut d);
    for (key, column) in settle_card_names(&catalog, ev.samples, &mut d) {
        add_measure(&catalog, &key, &column, &mut d);
    }
    d
}

/// The default measure `infer` would have written for a column it took for
/// personal data.
fn add_measure(catalog: &Catalog, key: &str, column: &str, d: &mut Draft) {
    let (Some(t), Some(e)) = (catalog.tables.get(key), d.entities.iter().find(|e| e.table_key == key)) else { return };
    let Some(c) = t.columns.iter().find(|c| c.name == column) else { return };
    if e.identity.iter().any(|i| i == column) {
        return;
    }
    let Some(agg) = infer::is_measure_like(column, TypeClass::of(&c.data_type)) else { return };
    let name = format!("{}_{}_{agg}", e.name, column.to_ascii_lowercase());
    if !is_identifier(&name) || d.metrics.iter().any(|m| m.name == name) {
        return;
    }
    let sibling = d.metrics.iter().find(|m| m.entity == e.name);
    let metric = DraftMetric {
        name,
        entity: e.name.clone(),
        agg,
        column: column.to_string(),
        time_dimension: sibling.and_then(|m| m.time_dimension.clone()),
        description: format!("{} of `{column}`.", if agg == "avg" { "Average" } else { "Total" }),
        non_additive: None,
        source: sibling.and_then(|m| m.source.clone()),
    };
    d.metrics.push(metric);
}

fn joins(
    selected: &[Selected],
    links: &[Link],
    ev: &Evidence<'_>,
    identities: &BTreeMap<String, (Vec<String>, &'static str, String)>,
    notes: &mut Vec<String>,
) -> Vec<DraftJoin> {
    // How often each node points at each other: twice or more, joins are named after the column.
    let mut pairs: BTreeMap<(usize, usize), usize> = BTreeMap::new();
    for l in links {
        *pairs.entry((l.from, l.to)).or_default() += 1;
    }
    let mut used: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::new();
    for (k, l) in links.iter().enumerate() {
        let (Some(src), Some(tgt)) = (selected.get(l.from), selected.get(l.to)) else { continue };
        let has = |s: &Selected, c: &str| ev.tables.get(&s.key).is_some_and(|t| t.columns.iter().any(|x| x.name == c));
        if !has(src, &l.column) || !has(tgt, &l.field) {
            notes.push(format!("relationships test at {} left out: `{}.{}` or `{}.{}` is not a column of the table", l.at, src.key, l.column, tgt.key, l.field));
            continue;
        }
        let twice = pairs.get(&(l.from, l.to)).is_some_and(|n| *n > 1);
        let base = if twice {
            format!("{}_{}", src.entity, infer::key_stem(&l.column).unwrap_or_else(|| l.column.to_ascii_lowercase()))
        } else {
            format!("{}_{}", src.entity, tgt.entity)
        };
        let mut name = base.clone();
        let mut n = 2;
        while !used.insert(name.clone()) {
            name = format!("{base}_{n}");
            n += 1;
        }
        let declared_unique = src.node.columns.iter().any(|c| c.name == l.column && (c.unique || c.primary_key))
            || identities.get(&src.key).is_some_and(|(cols, _, _)| cols.as_slice() == [l.column.clone()]);
        let target_is_identity = match &tgt.semantic {
            Some(key) => *key == l.field,
            None => identities.get(&tgt.key).is_some_and(|(cols, _, _)| cols.as_slice() == [l.field.clone()]),
        };
        if let Some(key) = tgt.semantic.as_ref().filter(|k| **k != l.field) {
            notes.push(format!(
                "join `{name}` ({}): `{}.{}` is not the key `{key}` of the semantic model's entity `{}`",
                l.at, tgt.node.name, l.field, tgt.entity
            ));
        }
        let mut evidence = vec![format!("dbt relationships test: `{}.{}` values are found in `{}.{}`", src.node.name, l.column, tgt.node.name, l.field)];
        let mut confidence = "high";
        let mut every_row_matches = false;
        let measured = ev.measured.get(k).copied().flatten();
        let one_to_one = match measured {
            Some(m) => {
                if m.evidence.orphans > 0 {
                    confidence = "low";
                    let what = format!("{} rows of `{}` have a `{}` that finds no row in `{}`: the relationships test fails on the data", m.evidence.orphans, src.key, l.column, tgt.key);
                    notes.push(format!("join `{name}` ({}): {what}; unmatched rows group under NULL", l.at));
                    evidence.push(format!("measured: {what}"));
                } else {
                    evidence.push("measured: every non-null key finds its row".into());
                    every_row_matches = m.never_null;
                }
                if !m.target_unique {
                    confidence = "low";
                    notes.push(format!("join `{name}` ({}): `{}.{}` repeats values in the warehouse, so a row may find several; written many_to_many", l.at, tgt.key, l.field));
                }
                evidence.push(if m.evidence.source_unique { "measured: key values are unique: one-to-one".into() } else { "measured: key values repeat: many-to-one".to_string() });
                m.evidence.source_unique
            }
            None => declared_unique,
        };
        let target_unique = measured.map_or(target_is_identity || tgt.node.columns.iter().any(|c| c.name == l.field && c.unique), |m| m.target_unique);
        let cardinality = match (target_unique, one_to_one) {
            (false, _) => "many_to_many",
            (true, true) => "one_to_one",
            (true, false) => "many_to_one",
        };
        if measured.is_none() && !target_unique {
            notes.push(format!("join `{name}` ({}): `{}.{}` is not declared unique (unique test or key): written many_to_many; declare it, or import with a warehouse", l.at, tgt.node.name, l.field));
        }
        if every_row_matches {
            evidence.push("measured: no key is NULL and every key finds its row: every row matches".into());
        }
        out.push(DraftJoin {
            name,
            source_entity: src.entity.clone(),
            target_entity: tgt.entity.clone(),
            on: vec![(l.column.clone(), l.field.clone())],
            cardinality,
            method: "dbt_import",
            confidence,
            evidence,
            every_row_matches,
            source: Some(l.at.clone()),
        });
    }
    out
}

/// Columns the project says are personal: reviewed overrides, their
/// categories blocked. The categories are those the name or the values
/// show, else `contact` (a name, an address: what "PII" most often means).
fn declared_pii(selected: &[Selected], catalog: &Catalog, d: &mut Draft) {
    let mut block: BTreeSet<String> = d.block.iter().cloned().collect();
    for s in selected.iter().filter(|s| s.is_plain()) {
        let Some(t) = catalog.tables.get(&s.key) else { continue };
        for c in &s.node.columns {
            let Some(why) = &c.pii else { continue };
            if !t.columns.iter().any(|x| x.name == c.name) {
                continue;
            }
            let key = format!("{}.{}", s.key, c.name);
            let inferred = d.pii.remove(&key);
            let mut categories: Vec<String> = inferred.as_ref().map(|t| t.categories.clone()).unwrap_or_default();
            if categories.is_empty() {
                categories.push("contact".into());
            }
            block.extend(categories.iter().cloned());
            let evidence = format!("dbt: {why} ({}){}", c.at, inferred.and_then(|t| t.evidence).map(|e| format!("; {e}")).unwrap_or_default());
            d.pii_declared.insert(key, ColumnTag { sensitivity: "pii".into(), categories, evidence: Some(evidence) });
        }
    }
    d.block = block.into_iter().collect();
}

/// A column whose name alone calls it a card number (`credit_card_amount`)
/// but whose sampled values are numbers none of which is a card number
/// (amounts): the values settle it, and the column is written clean.
fn settle_card_names(catalog: &Catalog, samples: &BTreeMap<String, BTreeMap<String, Vec<String>>>, d: &mut Draft) -> Vec<(String, String)> {
    let mut settled = Vec::new();
    for (key, t) in &catalog.tables {
        for c in &t.columns {
            let col = format!("{key}.{}", c.name);
            if d.pii_declared.contains_key(&col) || !crate::pii::classify_name(&c.name).contains(&"payment_card") {
                continue;
            }
            let Some(values) = samples.get(key).and_then(|s| s.get(&c.name)).filter(|v| v.len() >= 3) else { continue };
            let numeric = matches!(TypeClass::of(&c.data_type), TypeClass::Decimal | TypeClass::Float | TypeClass::Integer);
            if !numeric || values.iter().any(|v| crate::pii::is_card_number(v)) {
                continue;
            }
            let only_name = d.pii.get(&col).is_none_or(|tag| tag.categories.iter().all(|x| x == "payment_card"));
            if only_name {
                d.pii.insert(
                    col,
                    ColumnTag {
                        sensitivity: "public".into(),
                        categories: Vec::new(),
                        evidence: Some(format!(
                            "name `{}` reads like a card number, but {} sampled values are {} numbers, none a card number (13-19 digits, Luhn)",
                            c.name,
                            values.len(),
                            c.data_type
                        )),
                    },
                );
                settled.push((key.clone(), c.name.clone()));
            }
        }
    }
    settled
}
