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
        let tmp = path.with_extension("json.tmp");
        let text = serde_json::to_string_pretty(self).map_err(std::io::Error::other)?;
        std::fs::write(&tmp, text + "\n")?;
        std::fs::rename(&tmp, &path)?;
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
            });
        }
        for declared in &entity.columns {
            if !table.columns.iter().any(|c| c.name == declared.name) {
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
    crate::model::check_references(model, &mut diags);
    diags.sort();
    diags
}
