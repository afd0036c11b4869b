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
use std::sync::mpsc;

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
    let total = catalog.tables.len();
    let samples = profile_tables(engine, &mut catalog, limits, progress)?;
    let names = infer::entity_names(&catalog);
    let mut identities: BTreeMap<String, (Vec<String>, &'static str, String)> =
        catalog.tables.iter().filter_map(|(k, t)| infer::identity(t, names.get(k)?).map(|id| (k.clone(), id))).collect();
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
    let (candidates, checks): (Vec<&infer::JoinCandidate>, Vec<profile::InclusionCheck<'_>>) = candidates
        .iter()
        .filter_map(|c| {
            let check = profile::InclusionCheck {
                from: catalog.tables.get(&c.from_table)?,
                from_cols: &c.from_columns,
                to: catalog.tables.get(&c.to_table)?,
                to_cols: &c.to_columns,
            };
            Some((c, check))
        })
        .unzip();
    // Checks in batches (one statement each), the batches side by side.
    let batches: Vec<&[profile::InclusionCheck<'_>]> = checks.chunks(profile::CHECKS_PER_QUERY).collect();
    let mut orphans = vec![None; checks.len()];
    parallel(&batches, |b| profile::orphans(engine, b, limits), |n, found| {
        for (k, o) in found.into_iter().enumerate() {
            if let Some(slot) = orphans.get_mut(n * profile::CHECKS_PER_QUERY + k) {
                *slot = o;
            }
        }
    })?;
    let mut verified = Vec::with_capacity(candidates.len());
    for (c, orphans) in candidates.iter().zip(orphans) {
        // A comparison the engine refused is no join.
        let Some(orphans) = orphans else { continue };
        let Some(from) = catalog.tables.get(&c.from_table) else { continue };
        let source_unique = match c.from_columns.as_slice() {
            [one] => from.columns.iter().find(|x| &x.name == one).and_then(|x| x.stats.as_ref()).is_some_and(|s| s.non_null_count > 0 && s.distinct_count == s.non_null_count),
            _ => false,
        };
        verified.push(((*c).clone(), infer::JoinEvidence { orphans, source_unique }));
    }
    progress(Progress { done: total, total, what: "done" });
    let draft = infer::draft(&catalog, &names, &identities, &verified, &samples, current_year);
    Ok(Indexed { catalog, draft })
}

/// Work items run side by side. Each statement on a small table is mostly
/// the engine's fixed cost per statement, on one core; a few workers (each
/// on a connection of its own: DuckDB clones one per call, Postgres and
/// MySQL take one from their pool) keep the cores busy.
const MAX_WORKERS: usize = 4;

/// Runs `work` on every item with up to `MAX_WORKERS` threads and hands
/// each result to `done` on the calling thread, as items finish (in any
/// order, with the item's index). The first error stops handing out items
/// and is returned once the running ones end.
fn parallel<T: Sync, R: Send>(
    items: &[T],
    work: impl Fn(&T) -> Result<R, EngineError> + Sync,
    mut done: impl FnMut(usize, R),
) -> Result<(), EngineError> {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get()).clamp(1, MAX_WORKERS).min(items.len().max(1));
    let next = AtomicUsize::new(0);
    let (send, receive) = mpsc::channel();
    std::thread::scope(|scope| {
        for _ in 0..workers {
            let send = send.clone();
            let (next, work) = (&next, &work);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { return };
                let result = work(item);
                let failed = result.is_err();
                if send.send((i, result)).is_err() || failed {
                    next.store(items.len(), Ordering::Relaxed);
                    return;
                }
            });
        }
        drop(send);
        // Owned here: an early return drops it, and the workers' next send fails.
        let receive = receive;
        for (i, result) in receive.iter() {
            done(i, result?);
        }
        Ok(())
    })
}

type Samples = BTreeMap<String, BTreeMap<String, Vec<String>>>;

/// Statistics and text samples of every table; progress is told as tables finish.
fn profile_tables(engine: &dyn Engine, catalog: &mut Catalog, limits: Limits, progress: &mut dyn FnMut(Progress<'_>)) -> Result<Samples, EngineError> {
    let total = catalog.tables.len();
    let tables: Vec<(&String, &crate::catalog::TableInfo)> = catalog.tables.iter().collect();
    let mut measured = Vec::with_capacity(total);
    parallel(
        &tables,
        |(_, t)| Ok((profile::table_stats(engine, t, limits)?, profile::text_samples(engine, t, limits)?)),
        |i, r| {
            if let Some((key, _)) = tables.get(i) {
                progress(Progress { done: measured.len(), total, what: key });
                measured.push(((*key).clone(), r));
            }
        },
    )?;
    let mut samples = Samples::new();
    for (key, (stats, table_samples)) in measured {
        if let Some(t) = catalog.tables.get_mut(&key) {
            stats.apply(t);
        }
        samples.insert(key, table_samples);
    }
    Ok(samples)
}
