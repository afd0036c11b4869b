//! The physical catalog: tables, columns, types, keys and row counts as an
//! engine reported them, and its on-disk snapshot
//! (`.schemabrain/catalog.json`) that lets `compile` type-check offline.
//!
//! Owns the overlay of catalog columns onto a model's entities and the
//! diagnostics for entities whose table or columns are missing.
//!
//! Architecture invariant: never talks to an engine; engines produce a
//! `Catalog`, this module only reads, writes and compares them.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::model::{close_matches, Column, Diagnostic, Diagnostics, SemanticModel, TableRef};

pub const SNAPSHOT_PATH: &str = ".schemabrain/catalog.json";

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Catalog {
    /// The source it was read from (`duckdb:…`), for the record.
    pub source: String,
    /// The engine that reported it (`duckdb 1.5.0`).
    pub engine: String,
    /// Keyed by `schema.table`.
    pub tables: BTreeMap<String, TableInfo>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct TableInfo {
    pub schema: String,
    pub name: String,
    pub columns: Vec<ColumnInfo>,
    #[serde(default)]
    pub primary_key: Vec<String>,
    #[serde(default)]
    pub foreign_keys: Vec<ForeignKey>,
    #[serde(default)]
    pub row_count: Option<u64>,
    #[serde(default)]
    pub comment: Option<String>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ColumnInfo {
    pub name: String,
    pub data_type: String,
    pub nullable: bool,
    #[serde(default)]
    pub comment: Option<String>,
    /// Measured by `schemabrain index`; absent from a plain introspection.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stats: Option<ColumnStats>,
}

/// What `schemabrain index` measured of one column (no values of PII
/// columns: min and max are kept for numbers and dates only).
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ColumnStats {
    /// Share of rows where the column is NULL, 0..=1.
    pub null_fraction: f64,
    pub non_null_count: u64,
    pub distinct_count: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min: Option<serde_json::Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max: Option<serde_json::Value>,
}

#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct ForeignKey {
    pub columns: Vec<String>,
    pub ref_schema: String,
    pub ref_table: String,
    pub ref_columns: Vec<String>,
}

impl Catalog {
    pub fn table(&self, t: &TableRef) -> Option<&TableInfo> {
        self.tables.get(&format!("{}.{}", t.schema, t.table))
    }

    /// Reads the snapshot of a project, if there is one.
    pub fn load_snapshot(project_dir: &Path) -> Result<Option<Catalog>, String> {
        let path = project_dir.join(SNAPSHOT_PATH);
        if !path.is_file() {
            return Ok(None);
        }
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
        serde_json::from_str(&text)
            .map(Some)
            .map_err(|e| format!("{}: not a catalog snapshot ({e}); delete it and run `schemabrain query` to rebuild it", path.display()))
    }

    /// Writes the snapshot atomically (a temp file renamed into place), so a
    /// crash never leaves half a snapshot behind.
    pub fn save_snapshot(&self, project_dir: &Path) -> std::io::Result<PathBuf> {
        let path = project_dir.join(SNAPSHOT_PATH);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        // Written beside it under a unique name, synced, then renamed over it:
        // a crash leaves the old snapshot or the new one, never a torn file,
        // and two sessions refreshing at once never share a temporary file.
        let tmp = path.with_extension(format!("json.{}.tmp", uuid::Uuid::new_v4().simple()));
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        let written = (|| {
            use std::io::Write as _;
            let mut f = std::fs::File::create(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.write_all(b"\n")?;
            f.sync_all()?;
            std::fs::rename(&tmp, &path)
        })();
        if written.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        written?;
        Ok(path)
    }
}

/// Replaces each entity's columns by its table's columns from the catalog
/// (keeping declared descriptions, checking declared types), then re-runs the
/// model's reference checks against the real columns. A missing table or a
/// declared column the table lacks is a diagnostic.
pub fn overlay(model: &mut SemanticModel, catalog: &Catalog) -> Diagnostics {
    let mut diags = Diagnostics::default();
    let table_names: Vec<String> = catalog.tables.keys().cloned().collect();
    for entity in model.entities.values_mut() {
        let at = &entity.defined_at;
        let Some(table) = catalog.table(&entity.table) else {
            diags.push(
                Diagnostic::new(
                    &at.file,
                    at.line_of("binding.single_table"),
                    "binding.single_table",
                    format!("table `{}` of entity `{}` is not in the catalog ({})", entity.table, entity.name, catalog.source),
                )
                .suggest(close_matches(&entity.table.to_string(), table_names.iter().map(String::as_str))),
            );
            continue;
        };
        let mut columns = Vec::with_capacity(table.columns.len());
        for c in &table.columns {
            let declared = entity.column(&c.name);
            columns.push(Column {
                name: c.name.clone(),
                data_type: Some(c.data_type.clone()),
                description: declared.and_then(|d| d.description.clone()).or_else(|| c.comment.clone()),
                nullable: Some(c.nullable),
                expr: None,
            });
        }
        for declared in &entity.columns {
            let in_table = table.columns.iter().any(|c| c.name == declared.name);
            if declared.expr.is_some() {
                // Computed: not in the table, and must not shadow a column that is.
                if in_table {
                    diags.push(Diagnostic::new(
                        &at.file,
                        at.line_of("columns"),
                        "columns",
                        format!("computed column `{}` has the name of a column of table `{}`; name it apart", declared.name, entity.table),
                    ));
                } else {
                    columns.push(declared.clone());
                }
                continue;
            }
            if !in_table {
                let names = table.columns.iter().map(|c| c.name.as_str());
                diags.push(
                    Diagnostic::new(
                        &at.file,
                        at.line_of("columns"),
                        "columns",
                        format!("declared column `{}` is not in table `{}`", declared.name, entity.table),
                    )
                    .suggest(close_matches(&declared.name, names)),
                );
            }
        }
        entity.columns = columns;
        entity.columns_from_catalog = true;
    }
    mark_foreign_keys(model, catalog);
    crate::model::check_references(model, &mut diags);
    diags.sort();
    diags
}

/// Gives `MatchEvidence::ForeignKey` to each to-one join the catalog backs
/// with a foreign key from exactly its source columns to its target
/// columns, every source column NOT NULL: then every source row finds its
/// target row, and the planner may INNER JOIN. (Engines that enforce
/// foreign keys guarantee it; on those that only record them, such as
/// Snowflake and BigQuery, the declaration is trusted.) A join declared
/// `every_row_matches` keeps that.
fn mark_foreign_keys(model: &mut crate::model::SemanticModel, catalog: &Catalog) {
    use crate::model::{Cardinality, MatchEvidence};
    let tables: std::collections::HashMap<String, TableRef> = model.entities.values().map(|e| (e.name.clone(), e.table.clone())).collect();
    for join in model.joins.values_mut() {
        let to_one = matches!(join.cardinality, Some(Cardinality::ManyToOne | Cardinality::OneToOne));
        if join.every_row_matches.is_some() || !to_one || join.valid_between.is_some() {
            continue;
        }
        let (Some(source), Some(target)) = (tables.get(&join.source_entity), tables.get(&join.target_entity)) else { continue };
        let Some(table) = catalog.table(source) else { continue };
        let not_null = join.on.iter().all(|k| table.columns.iter().any(|c| c.name == k.source && !c.nullable));
        let mut wanted: Vec<(&str, &str)> = join.on.iter().map(|k| (k.source.as_str(), k.target.as_str())).collect();
        wanted.sort_unstable();
        let backed = table.foreign_keys.iter().any(|fk| {
            let mut pairs: Vec<(&str, &str)> = fk.columns.iter().map(String::as_str).zip(fk.ref_columns.iter().map(String::as_str)).collect();
            pairs.sort_unstable();
            fk.ref_schema == target.schema && fk.ref_table == target.table && pairs == wanted
        });
        if not_null && backed {
            join.every_row_matches = Some(MatchEvidence::ForeignKey);
        }
    }
}

/// One way the live source no longer matches what the model reads.
#[derive(Clone, Debug, PartialEq)]
pub struct Drift {
    /// Stable code, for CI scripts: `table_missing`, `identity_column_missing`,
    /// `measure_column_missing`, `time_dimension_missing`, `join_column_missing`,
    /// `column_missing`, `type_changed`, `nullability_changed`.
    pub code: &'static str,
    pub entity: String,
    /// The entity's table.
    pub table: String,
    /// The column that drifted; `None` when the whole table is gone.
    pub column: Option<String>,
    /// One sentence: what changed.
    pub what: String,
}

/// What the model reads a column for, most load-bearing first: the code of
/// a missing column says what breaks.
fn missing_code(model: &SemanticModel, entity: &crate::model::Entity, column: &str) -> &'static str {
    let is = |e: &str, c: &str| e == entity.name && c == column;
    if entity.identity.iter().any(|c| c == column) {
        "identity_column_missing"
    } else if model.joins.values().any(|j| j.on.iter().any(|k| is(&j.source_entity, &k.source) || is(&j.target_entity, &k.target))) {
        "join_column_missing"
    } else if model.metrics.values().any(|m| m.entity == entity.name && m.measure.columns().contains(&column)) {
        "measure_column_missing"
    } else if model.metrics.values().any(|m| m.time_dimension.as_ref().is_some_and(|t| is(&t.entity, &t.column))) {
        "time_dimension_missing"
    } else {
        "column_missing"
    }
}

/// Where `live` disagrees with the model (as loaded, columns included):
/// missing tables, missing columns (coded by what reads them), columns
/// whose type family changed, and columns declared NOT NULL that became
/// nullable. Besides the entity's columns, every column the model reads
/// by name (identity, join keys, measures, time dimensions) is looked up,
/// so a model loaded without a catalog (its columns only as declared)
/// still has its drift found.
pub fn drift(model: &SemanticModel, live: &Catalog) -> Vec<Drift> {
    let mut out = Vec::new();
    for entity in model.entities.values() {
        let table = entity.table.to_string();
        let Some(t) = live.table(&entity.table) else {
            out.push(Drift { code: "table_missing", entity: entity.name.clone(), table: table.clone(), column: None, what: format!("table `{table}` is gone") });
            continue;
        };
        let at = |code: &'static str, column: &str, what: String| Drift { code, entity: entity.name.clone(), table: table.clone(), column: Some(column.to_string()), what };
        // Computed columns are not in the table; what they read is.
        for c in entity.columns.iter().filter(|c| c.expr.is_none()) {
            match t.columns.iter().find(|x| x.name == c.name) {
                None => out.push(at(missing_code(model, entity, &c.name), &c.name, format!("column `{table}.{}` is gone", c.name))),
                Some(x) => {
                    // Families, not exact classes: engines spell the same
                    // column differently (DECIMAL vs numeric, tinyint(1) vs boolean).
                    let (was, now) = (family(c.type_class()), family(crate::model::TypeClass::of(&x.data_type)));
                    if was.is_some() && now.is_some() && was != now {
                        out.push(at(
                            "type_changed",
                            &c.name,
                            format!("column `{table}.{}` changed type from {} to {}", c.name, c.data_type.as_deref().unwrap_or("?"), x.data_type),
                        ));
                    } else if c.nullable == Some(false) && x.nullable {
                        out.push(at("nullability_changed", &c.name, format!("column `{table}.{}` was NOT NULL and now accepts NULL", c.name)));
                    }
                }
            }
        }
        let mut read: Vec<&str> = read_columns(model, entity);
        read.sort_unstable();
        read.dedup();
        for c in read {
            if entity.column(c).is_none() && !t.columns.iter().any(|x| x.name == c) {
                out.push(at(missing_code(model, entity, c), c, format!("column `{table}.{c}` is gone")));
            }
        }
    }
    out
}

/// The columns of `entity` the model reads by name: identity, join keys,
/// measure columns and time dimensions.
fn read_columns<'m>(model: &'m SemanticModel, entity: &'m crate::model::Entity) -> Vec<&'m str> {
    let mut read: Vec<&str> = entity.identity.iter().map(String::as_str).collect();
    for j in model.joins.values() {
        for k in &j.on {
            if j.source_entity == entity.name {
                read.push(&k.source);
            }
            if j.target_entity == entity.name {
                read.push(&k.target);
            }
        }
    }
    for m in model.metrics.values() {
        if m.entity == entity.name {
            read.extend(m.measure.columns());
        }
        if let Some(t) = m.time_dimension.as_ref().filter(|t| t.entity == entity.name) {
            read.push(&t.column);
        }
    }
    read
}

/// `live` with the statistics of `previous` (an index run's) kept for
/// every column whose type is unchanged: a plain introspection measures
/// nothing, and must not erase what the index measured.
pub fn keep_stats(previous: Option<&Catalog>, mut live: Catalog) -> Catalog {
    let Some(prev) = previous else { return live };
    for (key, t) in live.tables.iter_mut() {
        let Some(old) = prev.tables.get(key) else { continue };
        for c in t.columns.iter_mut().filter(|c| c.stats.is_none()) {
            if let Some(o) = old.columns.iter().find(|o| o.name == c.name && o.data_type == c.data_type) {
                c.stats = o.stats.clone();
            }
        }
    }
    live
}

fn family(t: crate::model::TypeClass) -> Option<&'static str> {
    use crate::model::TypeClass::*;
    match t {
        Integer | Decimal | Float | Boolean => Some("number"),
        Text => Some("text"),
        Date | Timestamp | Time => Some("time"),
        Other | Unknown => None,
    }
}
