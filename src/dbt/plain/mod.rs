//! Plain dbt projects: models, sources, their data tests, descriptions and
//! docs blocks (no semantic models needed) imported as a schemabrain
//! project. `read` turns the project's files (or `target/manifest.json`)
//! into nodes; `map` decides what they declare (entities, identities,
//! joins, PII) into `index`'s draft, which `index::write` lays out, so a
//! re-import keeps a person's edits as a re-index does; `check` measures
//! the warehouse when one is named (types, statistics, samples, each
//! `relationships` test's orphans and cardinality).
//!
//! Architecture invariant: `read` is pure text; `map` is pure over the
//! nodes and the measured facts; only `check` talks to an engine, and only
//! to read. This module (with `app`) is the one part of `dbt` that uses
//! `index` and `engine`: plain projects are drafted as an index run is.

pub mod read;

#[cfg(feature = "app")]
pub mod check;
#[cfg(feature = "app")]
pub mod map;

#[cfg(feature = "app")]
pub use app::{import, Plain};

#[cfg(feature = "app")]
mod app {
    use std::collections::{BTreeMap, BTreeSet};
    use std::time::Duration;

    use super::read::Node;
    use super::{check, map};
    use crate::catalog::Catalog;
    use crate::engine::{Engine, EngineError, Limits};
    use crate::index::infer::Draft;

    /// Per-query limits of the warehouse checks: statistics scan whole tables.
    const LIMITS: Limits = Limits { max_rows: 1_000, timeout: Duration::from_secs(600) };

    /// A plain project's import.
    pub struct Plain {
        pub draft: Draft,
        /// The warehouse's catalog, when one was read (saved as the snapshot).
        pub catalog: Option<Catalog>,
    }

    /// Drafts the project from its nodes; `bound` holds the relations
    /// (`schema.table`) semantic models already import (with the entity
    /// each becomes, which a `relationships` test may join), `taken` the
    /// entity names they use.
    pub fn import(
        nodes: &[Node],
        bound: &map::Bound,
        taken: &BTreeSet<String>,
        warehouse: Option<&dyn Engine>,
        current_year: i32,
    ) -> Result<Plain, EngineError> {
        let mut notes = Vec::new();
        let mut selected = map::select(nodes, bound, taken, &mut notes);
        let (catalog, tables, samples, links, measured) = match warehouse {
            Some(engine) => {
                let found = check::tables(engine, &mut selected, LIMITS, &mut notes)?;
                let links = map::links(&selected, &mut notes);
                let measured = check::links(engine, &found.catalog, &selected, &links, LIMITS)?;
                let tables: BTreeMap<String, crate::catalog::TableInfo> =
                    selected.iter().filter_map(|s| Some((s.key.clone(), found.catalog.tables.get(&s.key)?.clone()))).collect();
                (Some(found.catalog), tables, found.samples, links, measured)
            }
            None => {
                let mut tables: BTreeMap<String, crate::catalog::TableInfo> = selected.iter().map(|s| (s.key.clone(), map::declared_table(&s.node))).collect();
                let links = map::links(&selected, &mut notes);
                // A relationships test names both columns: they exist, even where the YAML lists neither.
                for l in &links {
                    for (at, col) in [(l.from, &l.column), (l.to, &l.field)] {
                        if let Some(t) = selected.get(at).and_then(|s| tables.get_mut(&s.key)) {
                            map::add_column(&mut t.columns, col);
                        }
                    }
                }
                let measured = vec![None; links.len()];
                (None, tables, BTreeMap::new(), links, measured)
            }
        };
        let evidence = map::Evidence { tables: &tables, measured: &measured, samples: &samples, current_year };
        let mut draft = map::draft(&selected, &links, &evidence);
        notes.append(&mut draft.notes);
        draft.notes = notes;
        Ok(Plain { draft, catalog })
    }
}
