//! Inference: a draft semantic model from a profiled catalog, deterministic
//! and explainable. An entity per table (singular name), its identity from
//! the primary key or a column the data shows unique and non-null, joins
//! from declared foreign keys or from column names verified on the data,
//! time dimensions, default metrics, and PII tags from names and values.
//!
//! Everything carries origin `suggested` with its inference method,
//! validation state `draft`, a confidence, and the evidence.
//!
//! Architecture invariant: pure over the catalog, the measured facts and
//! the samples; the queries that gather them live in `profile`.

use std::collections::{BTreeMap, BTreeSet};

use crate::catalog::{Catalog, TableInfo};
use crate::model::{ColumnTag, TypeClass};
use crate::pii::identifier_words as words;

/// A join the names or the keys propose, before the data confirms it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JoinCandidate {
    /// `schema.table` keys of the catalog.
    pub from_table: String,
    pub from_columns: Vec<String>,
    pub to_table: String,
    pub to_columns: Vec<String>,
    /// `fk_constraint` or `name_match`.
    pub method: &'static str,
    /// The column's stem (`billing_address` of `billing_address_id`), for the join's name.
    pub stem: String,
}

/// `from.cols → to.cols`, as notes name a join.
fn join_label(c: &JoinCandidate) -> String {
    format!("{}.{} → {}.{}", c.from_table, c.from_columns.join(","), c.to_table, c.to_columns.join(","))
}

/// What the data says about a candidate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct JoinEvidence {
    /// Rows whose non-null key finds no row on the other side.
    pub orphans: u64,
    /// The key is unique on the source side (one-to-one).
    pub source_unique: bool,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DraftEntity {
    pub name: String,
    pub table_key: String,
    pub schema: String,
    pub table: String,
    pub identity: Vec<String>,
    pub identity_method: &'static str,
    pub identity_evidence: String,
    pub confidence: &'static str,
    pub columns: Vec<DraftColumn>,
    pub description: String,
    /// Where the entity came from, for its provenance (`models/schema.yml:4`);
    /// `None`: the table.
    pub source: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DraftColumn {
    pub name: String,
    /// Empty when nothing says (a dbt column without `data_type` and no warehouse).
    pub data_type: String,
    pub nullable: bool,
    pub description: Option<String>,
    /// The values the column takes, as a dbt `accepted_values` test says.
    pub accepted_values: Vec<String>,
}

impl DraftColumn {
    /// A catalog column as drafted: its type, nullability and comment.
    pub fn of(c: &crate::catalog::ColumnInfo) -> DraftColumn {
        DraftColumn { name: c.name.clone(), data_type: c.data_type.clone(), nullable: c.nullable, description: c.comment.clone(), accepted_values: Vec::new() }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct DraftJoin {
    pub name: String,
    pub source_entity: String,
    pub target_entity: String,
    pub on: Vec<(String, String)>,
    pub cardinality: &'static str,
    pub method: &'static str,
    pub confidence: &'static str,
    pub evidence: Vec<String>,
    /// Measured: no source row has a NULL key, and none an orphan.
    pub every_row_matches: bool,
    /// Where the join came from, for its provenance; `None`: `source → target`.
    pub source: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct DraftMetric {
    pub name: String,
    pub entity: String,
    pub agg: &'static str,
    pub column: String,
    pub time_dimension: Option<String>,
    pub description: String,
    /// A balance (a snapshot table's quantity): not summed over time.
    pub non_additive: Option<NonAdditive>,
    /// Where the metric came from, for its provenance; `None`: `entity.column`.
    pub source: Option<String>,
}

#[derive(Clone, Debug, PartialEq)]
pub struct NonAdditive {
    pub dimension: String,
    pub per: Vec<String>,
}

/// Who proposes a draft: `schemabrain index` (origin `suggested`) or
/// `schemabrain import dbt` (origin `dbt_import`, the project's own
/// declarations).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DraftOrigin {
    #[default]
    Index,
    DbtImport,
}

/// The whole draft.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Draft {
    pub origin: DraftOrigin,
    pub entities: Vec<DraftEntity>,
    pub joins: Vec<DraftJoin>,
    pub metrics: Vec<DraftMetric>,
    /// `schema.table.column` → inferred tag (with evidence).
    pub pii: BTreeMap<String, ColumnTag>,
    /// Things a reviewer should know (tables left without identity, joins the data refuted).
    pub notes: Vec<String>,
    /// `schema.table.column` → a tag the project declares (dbt `meta`):
    /// written as a reviewed override.
    pub pii_declared: BTreeMap<String, ColumnTag>,
    /// Categories the policy blocks.
    pub block: Vec<String>,
}

/// The singular of a table name, on its last word: `order_items` →
/// `order_item`, `addresses` → `address`, `categories` → `category`.
pub fn singular(table: &str) -> String {
    let lower: String = table.chars().map(|c| if c.is_ascii_alphanumeric() { c.to_ascii_lowercase() } else { '_' }).collect();
    let (head, last) = match lower.rsplit_once('_') {
        Some((h, l)) => (format!("{h}_"), l.to_string()),
        None => (String::new(), lower.clone()),
    };
    let irregular = [("people", "person"), ("children", "child"), ("men", "man"), ("women", "woman"), ("data", "data"), ("media", "media")];
    let one = if let Some((_, s)) = irregular.iter().find(|(p, _)| *p == last) {
        s.to_string()
    } else if last.len() > 4 && last.ends_with("ies") {
        format!("{}y", &last[..last.len() - 3])
    } else if ["sses", "shes", "ches", "xes", "zzes"].iter().any(|e| last.ends_with(e)) || (last.ends_with("uses") && last.len() > 5) {
        last[..last.len() - 2].to_string()
    } else if last.ends_with("ss") || last.ends_with("us") || last.ends_with("is") || last.ends_with("news") || last.ends_with("series") {
        last.clone()
    } else if let Some(s) = last.strip_suffix('s').filter(|s| !s.is_empty()) {
        s.to_string()
    } else {
        last.clone()
    };
    let name = format!("{head}{one}");
    match name.chars().next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => name,
        _ => format!("t_{name}"),
    }
}

/// The stem of a key-looking column: `customer_id` → `customer`,
/// `homeDepartmentId` → `home_department`; `None` for other columns.
pub fn key_stem(column: &str) -> Option<String> {
    let words = words(column);
    match words.split_last() {
        Some((last, stem)) if last == "id" && !stem.is_empty() => Some(stem.join("_")),
        _ => None,
    }
}


/// Entity names per table key, unique: the singular, or `schema_singular`
/// when two schemas hold tables of one name.
pub fn entity_names(catalog: &Catalog) -> BTreeMap<String, String> {
    let mut count: BTreeMap<String, usize> = BTreeMap::new();
    for t in catalog.tables.values() {
        *count.entry(singular(&t.name)).or_default() += 1;
    }
    catalog
        .tables
        .iter()
        .map(|(k, t)| {
            let s = singular(&t.name);
            let name = if count.get(&s).is_some_and(|n| *n > 1) { format!("{}_{s}", singular(&t.schema)) } else { s };
            (k.clone(), name)
        })
        .collect()
}

/// The identity of a table: its primary key, else the first column the data
/// shows unique and never null (an `id` or `<entity>_id` first).
pub fn identity(t: &TableInfo, entity: &str) -> Option<(Vec<String>, &'static str, String)> {
    if !t.primary_key.is_empty() {
        return Some((t.primary_key.clone(), "fk_constraint", "declared primary key".to_string()));
    }
    let rows = t.row_count?;
    if rows == 0 {
        return None;
    }
    let unique = |c: &&crate::catalog::ColumnInfo| {
        let class = TypeClass::of(&c.data_type);
        matches!(class, TypeClass::Integer | TypeClass::Text)
            && c.stats.as_ref().is_some_and(|s| s.null_fraction == 0.0 && s.distinct_count == rows)
    };
    let preferred = ["id".to_string(), format!("{entity}_id")];
    let pick = t
        .columns
        .iter()
        .filter(unique)
        .min_by_key(|c| (!preferred.contains(&c.name.to_ascii_lowercase()), key_stem(&c.name).is_some()))?;
    Some((vec![pick.name.clone()], "data_profile", format!("`{}`: {rows} distinct non-null values in {rows} rows", pick.name)))
}

/// Pairs that may identify a row of a table with no single unique column:
/// a key-looking column and a date or timestamp (a snapshot per store and
/// day), or two keys (a junction table), never null. Checked on the data by
/// the caller.
pub fn composite_candidates(t: &TableInfo) -> Vec<Vec<String>> {
    let never_null = |c: &&crate::catalog::ColumnInfo| c.stats.as_ref().is_some_and(|s| s.null_fraction == 0.0);
    let keys: Vec<&str> = t.columns.iter().filter(never_null).filter(|c| key_stem(&c.name).is_some()).map(|c| c.name.as_str()).collect();
    let times: Vec<&str> =
        t.columns.iter().filter(never_null).filter(|c| TypeClass::of(&c.data_type).is_temporal()).map(|c| c.name.as_str()).collect();
    let key_and_time = keys.iter().flat_map(|k| times.iter().map(move |t| vec![k.to_string(), t.to_string()]));
    // Two keys: a junction table (account_tags: account_id, tag_id).
    let two_keys = keys.iter().enumerate().flat_map(|(i, a)| keys.iter().skip(i + 1).map(move |b| vec![a.to_string(), b.to_string()]));
    key_and_time.chain(two_keys).take(8).collect()
}

/// Join candidates: declared foreign keys, then key-looking columns whose
/// stem (or its last words) names another table's entity with a one-column
/// identity of a compatible type.
pub fn join_candidates(catalog: &Catalog, names: &BTreeMap<String, String>, identities: &BTreeMap<String, Vec<String>>) -> Vec<JoinCandidate> {
    let by_entity: BTreeMap<&str, &str> = names.iter().map(|(k, n)| (n.as_str(), k.as_str())).collect();
    let mut out = Vec::new();
    for (key, t) in &catalog.tables {
        let mut covered: BTreeSet<String> = BTreeSet::new();
        for fk in &t.foreign_keys {
            let to = format!("{}.{}", fk.ref_schema, fk.ref_table);
            if !catalog.tables.contains_key(&to) {
                continue;
            }
            covered.extend(fk.columns.iter().cloned());
            let stem = match fk.columns.as_slice() {
                [one] => key_stem(one).unwrap_or_else(|| one.to_ascii_lowercase()),
                _ => names.get(&to).cloned().unwrap_or_default(),
            };
            out.push(JoinCandidate {
                from_table: key.clone(),
                from_columns: fk.columns.clone(),
                to_table: to,
                to_columns: fk.ref_columns.clone(),
                method: "fk_constraint",
                stem,
            });
        }
        let own = identities.get(key).cloned().unwrap_or_default();
        for c in &t.columns {
            if covered.contains(&c.name) || own == [c.name.clone()] {
                continue;
            }
            let Some(stem) = key_stem(&c.name) else { continue };
            let parts: Vec<&str> = stem.split('_').collect();
            // The whole stem first, then shorter endings: home_department → department.
            let target = (0..parts.len()).filter_map(|i| parts.get(i..)).map(|p| p.join("_")).find_map(|cand| by_entity.get(cand.as_str()).copied());
            let Some(to) = target else { continue };
            if to == key {
                continue;
            }
            let Some([to_col]) = identities.get(to).map(Vec::as_slice) else { continue };
            let from_class = TypeClass::of(&c.data_type);
            let to_class = catalog.tables.get(to).and_then(|t| t.columns.iter().find(|x| &x.name == to_col)).map(|x| TypeClass::of(&x.data_type));
            if to_class != Some(from_class) || !matches!(from_class, TypeClass::Integer | TypeClass::Text) {
                continue;
            }
            out.push(JoinCandidate {
                from_table: key.clone(),
                from_columns: vec![c.name.clone()],
                to_table: to.to_string(),
                to_columns: vec![to_col.clone()],
                method: "name_match",
                stem,
            });
        }
    }
    out
}

/// Words that make an integer column a quantity worth adding up.
const QUANTITY_WORDS: &[&str] = &[
    "quantity", "qty", "units", "unit", "count", "amount", "total", "cost", "price", "revenue", "value", "hours", "minutes",
    "seconds", "duration", "weight", "points", "score", "hand", "sales", "spend", "fee", "tax", "balance", "items",
];
/// Words of measures that are averaged, not summed.
const AVERAGE_WORDS: &[&str] =
    &["price", "rate", "ratio", "pct", "percent", "percentage", "score", "rating", "age", "temperature", "avg", "average"];
/// Words of numbers that are not measures.
const NOT_MEASURE_WORDS: &[&str] =
    &["id", "key", "code", "number", "no", "num", "year", "month", "day", "week", "zip", "lat", "lon", "lng", "latitude", "longitude", "version", "rank", "order", "position", "index", "sequence", "seq"];

/// `sum` or `avg` for a column worth aggregating by its name and type; `None` otherwise.
pub fn is_measure_like(column: &str, class: TypeClass) -> Option<&'static str> {
    let w = words(column);
    if w.iter().any(|x| NOT_MEASURE_WORDS.contains(&x.as_str())) || key_stem(column).is_some() {
        return None;
    }
    let quantity = w.iter().any(|x| QUANTITY_WORDS.contains(&x.as_str()));
    let averaged = w.iter().any(|x| AVERAGE_WORDS.contains(&x.as_str()));
    match class {
        TypeClass::Decimal | TypeClass::Float => Some(if averaged { "avg" } else { "sum" }),
        TypeClass::Integer if quantity => Some(if averaged { "avg" } else { "sum" }),
        _ => None,
    }
}

/// Whether a table holds balances taken at points in time (sums of its
/// quantities over time are wrong).
fn is_snapshot_table(t: &TableInfo) -> bool {
    let w = words(&t.name);
    w.iter().any(|x| ["snapshot", "snapshots", "balance", "balances", "inventory", "inventories", "levels", "stock"].contains(&x.as_str()))
}

/// The PII tag of one column from its name, its sampled values and (for
/// dates) its range; `None` when nothing says personal data.
pub fn pii_tag(column: &crate::catalog::ColumnInfo, samples: Option<&Vec<String>>, current_year: i32) -> Option<ColumnTag> {
    let mut categories: Vec<String> = crate::pii::classify_name(&column.name).into_iter().map(str::to_string).collect();
    let mut evidence: Vec<String> = Vec::new();
    if !categories.is_empty() {
        evidence.push(format!("name `{}`", column.name));
    }
    if let Some(m) = samples.and_then(|s| crate::pii::classify_values(s)) {
        if !categories.iter().any(|c| c == m.category) {
            categories.push(m.category.to_string());
        }
        evidence.push(m.evidence());
    }
    if TypeClass::of(&column.data_type) == TypeClass::Date && !categories.iter().any(|c| c == "demographic_protected") {
        let year = |v: &Option<serde_json::Value>| v.as_ref().and_then(|v| v.as_str()).and_then(|s| s.get(..4)).and_then(|y| y.parse::<i32>().ok());
        if let Some(s) = &column.stats {
            if let (Some(lo), Some(hi)) = (year(&s.min), year(&s.max)) {
                if crate::pii::looks_like_birth_dates(lo, hi, current_year) {
                    categories.push("demographic_protected".into());
                    evidence.push(format!("values: dates from {lo} to {hi}, none recent (birth dates)"));
                }
            }
        }
    }
    if categories.is_empty() {
        return None;
    }
    categories.sort();
    Some(ColumnTag { sensitivity: "pii".into(), categories, evidence: Some(evidence.join("; ")) })
}

/// The draft from the profiled catalog, the candidates' evidence and the samples.
pub fn draft(
    catalog: &Catalog,
    names: &BTreeMap<String, String>,
    identities: &BTreeMap<String, (Vec<String>, &'static str, String)>,
    joins: &[(JoinCandidate, JoinEvidence)],
    samples: &BTreeMap<String, BTreeMap<String, Vec<String>>>,
    current_year: i32,
) -> Draft {
    let mut d = Draft::default();
    for (key, t) in &catalog.tables {
        for c in &t.columns {
            if let Some(tag) = pii_tag(c, samples.get(key).and_then(|s| s.get(&c.name)), current_year) {
                d.pii.insert(format!("{key}.{}", c.name), tag);
            }
        }
    }
    let pii_columns: BTreeSet<String> = d.pii.keys().cloned().collect();
    let is_pii = |key: &str, col: &str| pii_columns.contains(&format!("{key}.{col}"));
    for (key, t) in &catalog.tables {
        let name = names[key].clone();
        let Some((identity, method, evidence)) = identities.get(key).cloned() else {
            d.notes.push(format!("`{key}` has no primary key and no column the data shows unique: no entity (declare a key, or write one by hand)"));
            continue;
        };
        let confidence = if method == "fk_constraint" { "high" } else { "medium" };
        let rows = t.row_count.map(|n| format!("{n} rows")).unwrap_or_else(|| "row count unknown".into());
        d.entities.push(DraftEntity {
            description: t.comment.clone().unwrap_or_else(|| format!("Rows of `{key}` ({rows}), inferred by schemabrain index.")),
            name,
            table_key: key.clone(),
            schema: t.schema.clone(),
            table: t.name.clone(),
            identity,
            identity_method: method,
            identity_evidence: evidence,
            confidence,
            columns: t
                .columns
                .iter()
                .map(DraftColumn::of)
                .collect(),
            source: None,
        });
    }
    let entity_of: BTreeMap<&str, &str> = d.entities.iter().map(|e| (e.table_key.as_str(), e.name.as_str())).collect();
    let mut used_names: BTreeSet<String> = BTreeSet::new();
    let mut key_columns: BTreeSet<(String, String)> = BTreeSet::new();
    for (c, ev) in joins {
        let (Some(src), Some(tgt)) = (entity_of.get(c.from_table.as_str()), entity_of.get(c.to_table.as_str())) else { continue };
        // A key of a table to itself (an employee's manager): the loader
        // refuses self-joins, so writing one would leave a project that
        // does not open. The note says how to model it by hand.
        if src == tgt {
            d.notes.push(format!(
                "join {} left out: a table joined to itself is not supported; define a second entity on `{}` (e.g. `{src}_parent`) and join to it",
                join_label(c),
                c.to_table
            ));
            continue;
        }
        if ev.orphans > 0 {
            let verb = if c.method == "fk_constraint" { "declared" } else { "guessed from names" };
            d.notes.push(format!("join {} ({verb}) left out: {} rows point at no row", join_label(c), ev.orphans));
            continue;
        }
        let base = if c.stem == *tgt { format!("{src}_{tgt}") } else { format!("{src}_{}", c.stem) };
        let mut name = base.clone();
        let mut n = 2;
        while !used_names.insert(name.clone()) {
            name = format!("{base}_{n}");
            n += 1;
        }
        let mut evidence = vec![match c.method {
            "fk_constraint" => "declared foreign key".to_string(),
            _ => format!("column name `{}` names entity `{tgt}`; every non-null value found in `{}`", c.from_columns.join(","), c.to_table),
        }];
        evidence.push(if ev.source_unique { "key values are unique: one-to-one".into() } else { "key values repeat: many-to-one".into() });
        // No orphan (or the join would be left out above); with no NULL key
        // either, every source row finds its row: the planner may INNER JOIN.
        let never_null = catalog.tables.get(&c.from_table).is_some_and(|t| {
            c.from_columns.iter().all(|col| t.columns.iter().any(|x| &x.name == col && (!x.nullable || x.stats.as_ref().is_some_and(|s| s.null_fraction == 0.0))))
        });
        if never_null {
            evidence.push("no key is NULL and every key finds its row: every row matches".into());
        }
        for col in &c.from_columns {
            key_columns.insert((c.from_table.clone(), col.clone()));
        }
        d.joins.push(DraftJoin {
            name,
            source_entity: src.to_string(),
            target_entity: tgt.to_string(),
            on: c.from_columns.iter().cloned().zip(c.to_columns.iter().cloned()).collect(),
            cardinality: if ev.source_unique { "one_to_one" } else { "many_to_one" },
            method: c.method,
            confidence: if c.method == "fk_constraint" { "high" } else { "medium" },
            evidence,
            every_row_matches: never_null,
            source: None,
        });
    }
    mark_bridges(&mut d, catalog);
    for e in &d.entities {
        let (Some(t), Some(first_key)) = (catalog.tables.get(&e.table_key), e.identity.first()) else { continue };
        let time = t
            .columns
            .iter()
            .filter(|c| TypeClass::of(&c.data_type).is_temporal() && !is_pii(&e.table_key, &c.name))
            .min_by_key(|c| c.nullable)
            .map(|c| c.name.clone());
        let time_dimension = time.as_ref().map(|c| format!("{}.{c}", e.name));
        d.metrics.push(DraftMetric {
            name: format!("{}_count", e.name),
            entity: e.name.clone(),
            agg: if e.identity.len() == 1 { "count_distinct" } else { "count" },
            column: first_key.clone(),
            time_dimension: time_dimension.clone(),
            description: format!("Number of {} rows.", e.name),
            non_additive: None,
            source: None,
        });
        let snapshot = is_snapshot_table(t);
        for c in &t.columns {
            let class = TypeClass::of(&c.data_type);
            if e.identity.contains(&c.name) || key_columns.contains(&(e.table_key.clone(), c.name.clone())) || is_pii(&e.table_key, &c.name) {
                continue;
            }
            let Some(agg) = is_measure_like(&c.name, class) else { continue };
            let non_additive = match (&time, snapshot, agg) {
                (Some(tc), true, "sum") => Some(NonAdditive {
                    dimension: format!("{}.{tc}", e.name),
                    per: e.identity.iter().filter(|i| *i != tc).map(|i| format!("{}.{i}", e.name)).collect(),
                }),
                _ => None,
            };
            let what = if agg == "avg" { "Average" } else { "Total" };
            d.metrics.push(DraftMetric {
                name: format!("{}_{}_{}", e.name, c.name.to_ascii_lowercase(), agg),
                entity: e.name.clone(),
                agg,
                column: c.name.clone(),
                time_dimension: time_dimension.clone(),
                description: match &non_additive {
                    Some(_) => format!("{what} `{}` of the latest snapshot in each period (a balance: not added up over time).", c.name),
                    None => format!("{what} of `{}`.", c.name),
                },
                non_additive,
                source: None,
            });
        }
    }
    d.metrics.retain(|m| crate::model::is_identifier(&m.name));
    d
}

/// Junction tables: an entity whose own columns are only its keys (and
/// perhaps a date and an id), joined many-to-one to two other entities. It
/// stays an entity with its two joins, which is how the planner crosses a
/// many-to-many relation exactly; its description and the notes say so.
fn mark_bridges(d: &mut Draft, catalog: &Catalog) {
    for e in d.entities.iter_mut() {
        let out: Vec<&DraftJoin> = d.joins.iter().filter(|j| j.source_entity == e.name && j.cardinality == "many_to_one").collect();
        let targets: BTreeSet<&str> = out.iter().map(|j| j.target_entity.as_str()).collect();
        if out.len() != 2 || targets.len() != 2 {
            continue;
        }
        let keys: BTreeSet<&str> = out.iter().flat_map(|j| j.on.iter().map(|(a, _)| a.as_str())).collect();
        let Some(t) = catalog.tables.get(&e.table_key) else { continue };
        let payload = t
            .columns
            .iter()
            .filter(|c| !keys.contains(c.name.as_str()) && !e.identity.contains(&c.name) && !TypeClass::of(&c.data_type).is_temporal())
            .count();
        if payload > 0 {
            continue;
        }
        let pair: Vec<&str> = targets.into_iter().collect();
        let [a, b] = pair.as_slice() else { continue };
        e.description = format!("Bridge between `{a}` and `{b}` (many-to-many through this table), inferred by schemabrain index.");
        d.notes.push(format!("`{}` is a junction table: `{a}` and `{b}` are many-to-many through entity `{}`", e.table_key, e.name));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn singular_names() {
        for (p, s) in [
            ("customers", "customer"),
            ("order_items", "order_item"),
            ("addresses", "address"),
            ("categories", "category"),
            ("campaign_spend", "campaign_spend"),
            ("inventory_snapshots", "inventory_snapshot"),
            ("statuses", "status"),
            ("boxes", "box"),
            ("people", "person"),
            ("Orders", "order"),
            ("analysis", "analysis"),
        ] {
            assert_eq!(singular(p), s, "{p}");
        }
    }

    #[test]
    fn key_stems() {
        assert_eq!(key_stem("customer_id").as_deref(), Some("customer"));
        assert_eq!(key_stem("homeDepartmentId").as_deref(), Some("home_department"));
        assert_eq!(key_stem("id"), None);
        assert_eq!(key_stem("paid"), None);
    }

    #[test]
    fn measures_are_quantities_not_keys() {
        assert_eq!(is_measure_like("amount", TypeClass::Decimal), Some("sum"));
        assert_eq!(is_measure_like("list_price", TypeClass::Decimal), Some("avg"));
        assert_eq!(is_measure_like("quantity", TypeClass::Integer), Some("sum"));
        assert_eq!(is_measure_like("zip_code", TypeClass::Integer), None);
        assert_eq!(is_measure_like("store_id", TypeClass::Integer), None);
        assert_eq!(is_measure_like("latitude", TypeClass::Float), None);
        assert_eq!(is_measure_like("floor", TypeClass::Integer), None);
    }
}
