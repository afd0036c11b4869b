//! Lays a draft out as a project directory and keeps a person's edits
//! across re-indexing. Every file the index writes is recorded with the
//! hash of what was written (`.schemabrain/index.json`); on the next run a
//! file whose content no longer matches was edited by hand and is kept, a
//! file the person deleted stays deleted, and a file the new draft no
//! longer proposes is removed only if nobody touched it.
//!
//! Architecture invariant: writes inside the project directory only, each
//! file atomically (temporary file, then rename).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use super::infer::{Draft, DraftEntity, DraftJoin, DraftMetric, DraftOrigin};
use crate::model::is_identifier;
use crate::model::yaml_quoted as q;

pub const MANIFEST_PATH: &str = ".schemabrain/index.json";

#[derive(Debug, thiserror::Error)]
#[error("{path}: {source}")]
pub struct WriteError {
    pub path: String,
    #[source]
    pub source: std::io::Error,
}

/// What re-indexing did to each file, by relative path.
#[derive(Clone, Debug, Default, PartialEq, Serialize)]
pub struct FileChanges {
    pub added: Vec<String>,
    pub updated: Vec<String>,
    pub unchanged: Vec<String>,
    pub removed: Vec<String>,
    /// Edited by hand since the index wrote them: left as they are.
    pub kept: Vec<String>,
    /// Deleted by hand since the index wrote them: not written again.
    pub skipped: Vec<String>,
}

#[derive(Default, Serialize, Deserialize)]
struct Manifest {
    /// Relative path → sha256 of the content the index wrote.
    files: BTreeMap<String, String>,
}

fn hash(text: &str) -> String {
    Sha256::digest(text.as_bytes()).iter().map(|b| format!("{b:02x}")).collect()
}

fn list(items: &[String]) -> String {
    format!("[{}]", items.join(", "))
}

/// The origin and provenance block. A dbt import's definitions are the
/// project's own declarations (`origin: dbt_import`, applied); how each
/// was found (a test, a constraint, the data) stays in the evidence.
fn provenance(origin: DraftOrigin, method: &str, confidence: &str, source: &str, evidence: &[String]) -> String {
    let ev: Vec<String> = evidence.iter().map(|e| q(e)).collect();
    let (origin, method, state) = match origin {
        DraftOrigin::Index => ("suggested", method, "draft"),
        DraftOrigin::DbtImport => ("dbt_import", "dbt_import", "applied"),
    };
    format!(
        "origin: {origin}\nprovenance:\n  inference_method: {method}\n  validation_state: {state}\n  confidence: {confidence}\n  source: {}\n  evidence: {}\n",
        q(source),
        list(&ev)
    )
}

fn entity_yaml(e: &DraftEntity, origin: DraftOrigin) -> String {
    let identity = match e.identity.as_slice() {
        [one] => one.clone(),
        many => list(many),
    };
    let mut s = format!(
        "version: 1\nname: {}\ndescription: {}\nbinding: {{single_table: {}.{}}}\nidentity: {identity}\n",
        e.name,
        q(&e.description),
        e.schema,
        e.table
    );
    let source = e.source.as_deref().unwrap_or(&e.table_key);
    s.push_str(&provenance(origin, e.identity_method, e.confidence, source, std::slice::from_ref(&e.identity_evidence)));
    if e.columns.is_empty() {
        return s;
    }
    s.push_str("columns:\n");
    for c in &e.columns {
        let mut line = format!("  - {{name: {}", c.name);
        if !c.data_type.is_empty() {
            line.push_str(&format!(", type: {}", q(&c.data_type)));
        }
        if !c.nullable {
            line.push_str(", nullable: false");
        }
        if let Some(d) = &c.description {
            line.push_str(&format!(", description: {}", q(d)));
        }
        if !c.accepted_values.is_empty() {
            let values: Vec<String> = c.accepted_values.iter().map(|v| q(v)).collect();
            line.push_str(&format!(", accepted_values: [{}]", values.join(", ")));
        }
        s.push_str(&line);
        s.push_str("}\n");
    }
    s
}

fn join_yaml(j: &DraftJoin, origin: DraftOrigin) -> String {
    let on: Vec<String> = j.on.iter().map(|(a, b)| format!("{{source: {a}, target: {b}}}")).collect();
    let mut s = format!(
        "version: 1\nname: {}\nsource_entity: {}\ntarget_entity: {}\n\"on\": {}\ncardinality: {}\n",
        j.name,
        j.source_entity,
        j.target_entity,
        list(&on),
        j.cardinality
    );
    if j.every_row_matches {
        s.push_str("every_row_matches: true\n");
    }
    let source = j.source.clone().unwrap_or_else(|| format!("{} → {}", j.source_entity, j.target_entity));
    s.push_str(&provenance(origin, j.method, j.confidence, &source, &j.evidence));
    s
}

const GRAINS: &str = "[day, week, month, quarter, year]";

fn metric_yaml(m: &DraftMetric, origin: DraftOrigin) -> String {
    let mut s = format!(
        "version: 1\nname: {}\ndescription: {}\nentity: {}\nmeasure: {{agg: {}, column: {}}}\n",
        m.name,
        q(&m.description),
        m.entity,
        m.agg,
        m.column
    );
    if let Some(t) = &m.time_dimension {
        s.push_str(&format!("time_dimension: {t}\ntime_grains: {GRAINS}\n"));
    }
    if let Some(na) = &m.non_additive {
        s.push_str(&format!("non_additive:\n  dimension: {}\n  window: last\n  per: {}\n", na.dimension, list(&na.per)));
    }
    let evidence = vec![format!("default metric of entity `{}`", m.entity)];
    let source = m.source.clone().unwrap_or_else(|| format!("{}.{}", m.entity, m.column));
    s.push_str(&provenance(origin, "data_profile", "medium", &source, &evidence));
    s
}

fn tags_yaml(s: &mut String, key: &str, tags: &BTreeMap<String, crate::model::ColumnTag>) {
    if tags.is_empty() {
        return;
    }
    s.push_str(&format!("{key}:\n"));
    for (col, tag) in tags {
        let mut line = format!("  {col}: {{sensitivity: {}, categories: {}", tag.sensitivity, list(&tag.categories));
        if let Some(e) = &tag.evidence {
            line.push_str(&format!(", evidence: {}", q(e)));
        }
        line.push_str("}\n");
        s.push_str(&line);
    }
}

fn policy_yaml(d: &Draft) -> String {
    let who = match d.origin {
        DraftOrigin::Index => "schemabrain index from column names and sampled values",
        DraftOrigin::DbtImport => "schemabrain import dbt: overrides from the dbt project's PII declarations, the rest from column names and sampled values",
    };
    let mut s = format!(
        "version: 1\ndescription: \"PII tags inferred by {who}. Review them: move a tag to column_overrides to confirm or correct it, add categories to block.\"\n"
    );
    if !d.block.is_empty() {
        s.push_str(&format!("block: {}\n", list(&d.block)));
    }
    tags_yaml(&mut s, "column_overrides", &d.pii_declared);
    tags_yaml(&mut s, "inferred", &d.pii);
    s
}

fn settings_yaml(name: &str, source: &str, dialect: &str) -> String {
    format!("version: 1\nname: {name}\nsource: {}\ndialect: {dialect}\n", q(source))
}

/// Every file of the draft, by relative path. Definitions whose names are
/// not identifiers (a table called `my table`) are left out with a note.
pub fn render(d: &Draft, project_name: &str, source: &str, dialect: &str) -> (BTreeMap<String, String>, Vec<String>) {
    let mut files = BTreeMap::new();
    let mut notes = Vec::new();
    files.insert("schemabrain.yaml".to_string(), settings_yaml(project_name, source, dialect));
    files.insert("pii_policy.yaml".to_string(), policy_yaml(d));
    let mut skipped_entities = Vec::new();
    for e in &d.entities {
        let names_ok = [&e.name, &e.schema, &e.table].iter().all(|n| is_identifier(n))
            && e.columns.iter().all(|c| is_identifier(&c.name));
        if !names_ok {
            notes.push(format!("`{}` left out: a table or column name is not an identifier (letters, digits, `_`)", e.table_key));
            skipped_entities.push(e.name.clone());
            continue;
        }
        files.insert(format!("entities/{}.yaml", e.name), entity_yaml(e, d.origin));
    }
    for j in d.joins.iter().filter(|j| !skipped_entities.contains(&j.source_entity) && !skipped_entities.contains(&j.target_entity)) {
        files.insert(format!("joins/{}.yaml", j.name), join_yaml(j, d.origin));
    }
    for m in d.metrics.iter().filter(|m| !skipped_entities.contains(&m.entity)) {
        files.insert(format!("metrics/{}.yaml", m.name), metric_yaml(m, d.origin));
    }
    (files, notes)
}

fn io(path: &Path, source: std::io::Error) -> WriteError {
    WriteError { path: path.display().to_string(), source }
}

fn write_atomic(path: &Path, text: &str) -> Result<(), WriteError> {
    if let Some(parent) = path.parent() {
        std::fs::create_dir_all(parent).map_err(|e| io(parent, e))?;
    }
    let tmp: PathBuf = path.with_extension(format!("{}.tmp", uuid::Uuid::new_v4().simple()));
    std::fs::write(&tmp, text).and_then(|_| std::fs::rename(&tmp, path)).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        io(path, e)
    })
}

/// Removes the temporary files a killed run left behind (`<name>.<32 hex
/// digits>.tmp`, the names `write_atomic` makes) in the directories this
/// run writes to; nothing else is touched.
fn sweep_temporaries(dir: &Path, files: &BTreeMap<String, String>) {
    let mut dirs: std::collections::BTreeSet<PathBuf> = files.keys().filter_map(|rel| dir.join(rel).parent().map(Path::to_path_buf)).collect();
    dirs.insert(dir.to_path_buf());
    for d in dirs {
        let Ok(entries) = std::fs::read_dir(&d) else { continue };
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            let ours = name.strip_suffix(".tmp").and_then(|n| n.rsplit_once('.')).is_some_and(|(_, id)| id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()));
            if ours {
                let _ = std::fs::remove_file(entry.path());
            }
        }
    }
}

/// Writes `files` into `dir`, keeping hand edits (see the module doc).
pub fn write_project(dir: &Path, files: &BTreeMap<String, String>) -> Result<FileChanges, WriteError> {
    sweep_temporaries(dir, files);
    let manifest_path = dir.join(MANIFEST_PATH);
    let old: Manifest = std::fs::read_to_string(&manifest_path).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default();
    let mut new = Manifest::default();
    let mut changes = FileChanges::default();
    for (rel, text) in files {
        let path = dir.join(rel);
        let current = std::fs::read_to_string(&path).ok();
        let recorded = old.files.get(rel);
        match (current, recorded) {
            (None, Some(h)) => {
                changes.skipped.push(rel.clone());
                new.files.insert(rel.clone(), h.clone());
            }
            // Already what this run would write: ours from now on. Checked
            // before the hand-edit rule so that a run killed between its
            // files and its manifest converges on the next run instead of
            // taking its own files for a person's.
            (Some(cur), _) if cur == *text => {
                changes.unchanged.push(rel.clone());
                new.files.insert(rel.clone(), hash(text));
            }
            (Some(cur), recorded) if recorded != Some(&hash(&cur)) => {
                // Written by a person (or edited since the index wrote it).
                changes.kept.push(rel.clone());
                if let Some(h) = recorded {
                    new.files.insert(rel.clone(), h.clone());
                }
            }
            (current, _) => {
                write_atomic(&path, text)?;
                if current.is_some() { &mut changes.updated } else { &mut changes.added }.push(rel.clone());
                new.files.insert(rel.clone(), hash(text));
            }
        }
    }
    for (rel, h) in &old.files {
        if files.contains_key(rel) {
            continue;
        }
        let path = dir.join(rel);
        match std::fs::read_to_string(&path) {
            Ok(cur) if hash(&cur) == *h => {
                std::fs::remove_file(&path).map_err(|e| io(&path, e))?;
                changes.removed.push(rel.clone());
            }
            Ok(_) => changes.kept.push(rel.clone()),
            Err(_) => {}
        }
    }
    let text = serde_json::to_string_pretty(&new).map_err(|e| io(&manifest_path, std::io::Error::other(e)))?;
    write_atomic(&manifest_path, &text)?;
    Ok(changes)
}
