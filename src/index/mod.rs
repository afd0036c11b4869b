//! `schemabrain index`: a draft semantic model inferred from a live source
//! (DuckDB, Postgres, MySQL/MariaDB, Parquet or CSV directories), written as
//! an ordinary project a person reviews: the catalog snapshot with measured
//! statistics, an entity per table, joins from keys or from names verified
//! on the data, default metrics, and PII tags from names and values.
//!
//! `infer` decides (pure), `profile` measures (SQL through `Engine`),
//! `write` lays the project out and keeps hand edits across re-indexing.
//!
//! Architecture invariant: reads the source through `Engine` only, never
//! writes to it; the project directory is the only thing written.

pub mod infer;
pub mod profile;
pub mod write;

use std::collections::BTreeMap;

use crate::catalog::Catalog;
use crate::engine::{Engine, EngineError, Limits};

pub use infer::Draft;
pub use write::{FileChanges, WriteError};

/// What an index run found.
pub struct Indexed {
    /// The introspected catalog with statistics and row counts.
    pub catalog: Catalog,
    pub draft: Draft,
}

/// One step of a long run, for a progress bar.
pub struct Progress<'a> {
    pub done: usize,
    pub total: usize,
    pub what: &'a str,
}

/// Introspects, profiles every table, verifies join candidates and infers
/// the draft. `progress` is told of each table and each check.
pub fn run(
    engine: &dyn Engine,
    schemas: &[String],
    limits: Limits,
    current_year: i32,
    progress: &mut dyn FnMut(Progress<'_>),
) -> Result<Indexed, EngineError> {
    let mut catalog = engine.introspect()?;
    if !schemas.is_empty() {
        catalog.tables.retain(|_, t| schemas.contains(&t.schema));
    }
    let keys: Vec<String> = catalog.tables.keys().cloned().collect();
    let mut samples: BTreeMap<String, BTreeMap<String, Vec<String>>> = BTreeMap::new();
    let total = keys.len();
    for (i, key) in keys.iter().enumerate() {
        progress(Progress { done: i, total, what: key });
        let t = catalog.tables.get_mut(key).expect("listed");
        profile::table_stats(engine, t, limits)?;
        samples.insert(key.clone(), profile::text_samples(engine, t, limits)?);
    }
    let names = infer::entity_names(&catalog);
    let mut identities: BTreeMap<String, (Vec<String>, &'static str, String)> =
        catalog.tables.iter().filter_map(|(k, t)| infer::identity(t, &names[k]).map(|id| (k.clone(), id))).collect();
    for (k, t) in &catalog.tables {
        let Some(rows) = t.row_count.filter(|n| *n > 0 && !identities.contains_key(k)) else { continue };
        for cols in infer::composite_candidates(t) {
            if profile::distinct_combinations(engine, t, &cols, limits)? == rows {
                let evidence = format!("({}): {rows} distinct non-null combinations in {rows} rows", cols.join(", "));
                identities.insert(k.clone(), (cols, "data_profile", evidence));
                break;
            }
        }
    }
    let identity_columns: BTreeMap<String, Vec<String>> = identities.iter().map(|(k, (cols, _, _))| (k.clone(), cols.clone())).collect();
    let candidates = infer::join_candidates(&catalog, &names, &identity_columns);
    progress(Progress { done: total, total, what: &format!("checking {} joins", candidates.len()) });
    let checks: Vec<profile::InclusionCheck<'_>> = candidates
        .iter()
        .map(|c| profile::InclusionCheck {
            from: &catalog.tables[&c.from_table],
            from_cols: &c.from_columns,
            to: &catalog.tables[&c.to_table],
            to_cols: &c.to_columns,
        })
        .collect();
    let orphans = profile::orphans(engine, &checks, limits)?;
    let mut verified = Vec::with_capacity(candidates.len());
    for (c, orphans) in candidates.iter().zip(orphans) {
        // A comparison the engine refused is no join.
        let Some(orphans) = orphans else { continue };
        let from = &catalog.tables[&c.from_table];
        let source_unique = match c.from_columns.as_slice() {
            [one] => from.columns.iter().find(|x| &x.name == one).and_then(|x| x.stats.as_ref()).is_some_and(|s| s.non_null_count > 0 && s.distinct_count == s.non_null_count),
            _ => false,
        };
        verified.push((c.clone(), infer::JoinEvidence { orphans, source_unique }));
    }
    progress(Progress { done: total, total, what: "done" });
    let draft = infer::draft(&catalog, &names, &identities, &verified, &samples, current_year);
    Ok(Indexed { catalog, draft })
}
