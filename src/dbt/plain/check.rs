//! The warehouse's word on a plain dbt project, when the profile (or
//! `--source`) names one: the tables the models built (types, row counts,
//! statistics), samples for the value classifiers, and each
//! `relationships` test measured as `index` measures a join (orphans,
//! uniqueness of both ends, NULL keys).
//!
//! Architecture invariant: reads the warehouse through `Engine` and
//! `index::profile` only, never writes to it; decides nothing (`map` does).

use std::collections::BTreeMap;

use super::map::{Link, Measured, Selected};
use crate::catalog::{Catalog, TableInfo};
use crate::engine::{Engine, EngineError, Limits};
use crate::index::infer::JoinEvidence;
use crate::index::profile;
use crate::model::TypeClass;
use crate::sql::CompiledSql;

/// What the warehouse holds of the selected nodes.
pub struct Found {
    /// The whole catalog (saved as the project's snapshot), the selected
    /// tables measured.
    pub catalog: Catalog,
    /// Sampled values by `schema.table` and column.
    pub samples: BTreeMap<String, BTreeMap<String, Vec<String>>>,
}

/// Introspects the warehouse, drops the selected nodes it has no table
/// for (a note each), and measures the others. A relation is matched
/// exactly, else ignoring case (DuckDB and Postgres fold unquoted names).
pub fn tables(engine: &dyn Engine, selected: &mut Vec<Selected>, limits: Limits, notes: &mut Vec<String>) -> Result<Found, EngineError> {
    let mut catalog = engine.introspect()?;
    let mut samples = BTreeMap::new();
    let mut kept = Vec::with_capacity(selected.len());
    for mut s in std::mem::take(selected) {
        let key = if catalog.tables.contains_key(&s.key) {
            Some(s.key.clone())
        } else {
            catalog.tables.keys().find(|k| k.eq_ignore_ascii_case(&s.key)).cloned()
        };
        let Some(key) = key else {
            notes.push(format!("{} skipped: table `{}` is not in the warehouse (not built yet? run `dbt build`)", s.node.label(), s.key));
            continue;
        };
        if let Some(t) = catalog.tables.get_mut(&key) {
            s.node.schema = t.schema.clone();
            s.node.table = t.name.clone();
            s.key = key.clone();
            for c in &s.node.columns {
                if !t.columns.iter().any(|x| x.name == c.name) {
                    notes.push(format!("{}: column `{}` ({}) is not in table `{key}`; left out", s.node.label(), c.name, c.at));
                }
            }
            // A semantic model's relation is only a join target: not profiled.
            if s.semantic.is_some() {
                kept.push(s);
                continue;
            }
            profile::table_stats(engine, t, limits)?.apply(t);
            let mut found = profile::text_samples(engine, t, limits)?;
            found.extend(card_named_samples(engine, t, limits)?);
            samples.insert(key, found);
        }
        kept.push(s);
    }
    *selected = kept;
    Ok(Found { catalog, samples })
}

/// Samples of the numeric columns whose name reads like a card number
/// (`credit_card_amount`), as text: the value classifier settles them.
fn card_named_samples(engine: &dyn Engine, t: &TableInfo, limits: Limits) -> Result<BTreeMap<String, Vec<String>>, EngineError> {
    let mut out = BTreeMap::new();
    let d = engine.dialect();
    for c in &t.columns {
        let numeric = matches!(TypeClass::of(&c.data_type), TypeClass::Decimal | TypeClass::Float | TypeClass::Integer);
        if !numeric || !crate::pii::classify_name(&c.name).contains(&"payment_card") {
            continue;
        }
        let col = profile::quote(d, &c.name);
        let sql = format!("SELECT {col} FROM {} WHERE {col} IS NOT NULL LIMIT {}", profile::relation(d, t), profile::SAMPLE_ROWS);
        let compiled = CompiledSql { sql, params: Vec::new(), dialect: d.name };
        let rows = engine.run(&compiled, Limits { max_rows: profile::SAMPLE_ROWS, ..limits })?.rows;
        let values: Vec<String> = rows
            .into_iter()
            .filter_map(|r| r.into_iter().next())
            .map(|v| match v {
                serde_json::Value::String(s) => s,
                other => other.to_string(),
            })
            .collect();
        out.insert(c.name.clone(), values);
    }
    Ok(out)
}

/// Each link measured: orphans (non-null keys that find no row), whether
/// the key is unique on either side, whether it is ever NULL. `None`
/// where the engine could not compare the columns.
pub fn links(engine: &dyn Engine, catalog: &Catalog, selected: &[Selected], links: &[Link], limits: Limits) -> Result<Vec<Option<Measured>>, EngineError> {
    let stats = |key: &str, col: &str| catalog.tables.get(key).and_then(|t| t.columns.iter().find(|c| c.name == col)).and_then(|c| c.stats.clone());
    let mut cols: Vec<(Vec<String>, Vec<String>)> = Vec::new();
    let mut tables: Vec<(&TableInfo, &TableInfo)> = Vec::new();
    let mut index = Vec::new();
    for (k, l) in links.iter().enumerate() {
        let (Some(src), Some(tgt)) = (selected.get(l.from), selected.get(l.to)) else { continue };
        let (Some(a), Some(b)) = (catalog.tables.get(&src.key), catalog.tables.get(&tgt.key)) else { continue };
        cols.push((vec![l.column.clone()], vec![l.field.clone()]));
        tables.push((a, b));
        index.push(k);
    }
    let checks: Vec<profile::InclusionCheck<'_>> =
        tables.iter().zip(&cols).map(|(&(a, b), (x, y))| profile::InclusionCheck { from: a, from_cols: x, to: b, to_cols: y }).collect();
    let orphans = profile::orphans(engine, &checks, limits)?;
    let mut out = vec![None; links.len()];
    for (n, k) in index.into_iter().enumerate() {
        let (Some(l), Some(Some(orphans))) = (links.get(k), orphans.get(n)) else { continue };
        let (Some(src), Some(tgt)) = (selected.get(l.from), selected.get(l.to)) else { continue };
        let from = stats(&src.key, &l.column);
        let to = stats(&tgt.key, &l.field);
        let unique = |s: &Option<crate::catalog::ColumnStats>| s.as_ref().is_some_and(|s| s.non_null_count > 0 && s.distinct_count == s.non_null_count);
        let measured = Measured {
            evidence: JoinEvidence { orphans: *orphans, source_unique: unique(&from) },
            target_unique: unique(&to),
            never_null: from.as_ref().is_some_and(|s| s.null_fraction == 0.0),
        };
        if let Some(slot) = out.get_mut(k) {
            *slot = Some(measured);
        }
    }
    Ok(out)
}
