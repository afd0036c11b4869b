//! `schemabrain index` and `schemabrain graph`: the front ends of
//! `crate::index` and of the model's join graph. Progress goes to stderr
//! (hidden when stderr is not a terminal, or with --json); the summary to
//! stdout.

use std::io::IsTerminal as _;
use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::json;

use crate::engine::{self, Limits};
use crate::index::{self, write, FileChanges};
use crate::project::Project;

/// Per-query limits of an index run: statistics scan whole tables.
const INDEX_LIMITS: Limits = Limits { max_rows: 1_000, timeout: Duration::from_secs(600) };

/// Sources written into the project absolutely, so the project works from
/// any directory.
fn absolute_source(source: &str) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    engine::resolve_source(source, &cwd)
}

fn project_name(out: &Path) -> String {
    let raw = out.file_name().and_then(|s| s.to_str()).unwrap_or("indexed");
    let name: String = raw.chars().map(|c| if c.is_ascii_alphanumeric() || c == '_' { c.to_ascii_lowercase() } else { '_' }).collect();
    match name.chars().next() {
        Some(c) if c.is_ascii_alphabetic() || c == '_' => name,
        _ => format!("p_{name}"),
    }
}

pub fn index(source: &str, out: &Path, schemas: &[String], json_out: bool) -> ExitCode {
    let source = absolute_source(source);
    let engine = match engine::open(&source) {
        Ok(e) => e,
        Err(e) => return super::operational(&e.to_string(), json_out),
    };
    let bar = if json_out || !std::io::stderr().is_terminal() {
        indicatif::ProgressBar::hidden()
    } else {
        let b = indicatif::ProgressBar::new(0);
        b.set_style(
            indicatif::ProgressStyle::with_template("{spinner} indexing [{bar:30}] {pos}/{len} tables {msg}")
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        b
    };
    let year: i32 = chrono::Datelike::year(&chrono::Utc::now());
    let indexed = index::run(engine.as_ref(), schemas, INDEX_LIMITS, year, &mut |p| {
        bar.set_length(p.total as u64);
        bar.set_position(p.done as u64);
        bar.set_message(p.what.to_string());
    });
    bar.finish_and_clear();
    let indexed = match indexed {
        Ok(i) => i,
        Err(e) => return super::operational(&e.to_string(), json_out),
    };
    let dialect = engine.dialect().name;
    let (files, mut notes) = write::render(&indexed.draft, &project_name(out), &source, dialect);
    notes.extend(indexed.draft.notes.iter().cloned());
    let changes = match write::write_project(out, &files) {
        Ok(c) => c,
        Err(e) => return super::operational(&e.to_string(), json_out),
    };
    if let Err(e) = indexed.catalog.save_snapshot(out) {
        return super::operational(&format!("{}: {e}", out.display()), json_out);
    }
    // The draft must be a project the rest of the tool opens.
    let loads = Project::open(out).map(|_| ()).map_err(|d| d.to_string());
    let d = &indexed.draft;
    if json_out {
        let doc = json!({
            "ok": loads.is_ok(),
            "out": out.display().to_string(),
            "source": source,
            "engine": indexed.catalog.engine,
            "tables": indexed.catalog.tables.len(),
            "entities": d.entities.len(),
            "joins": d.joins.len(),
            "metrics": d.metrics.len(),
            "pii_columns": d.pii.len(),
            "files": changes,
            "notes": notes,
            "problems": loads.as_ref().err(),
        });
        out!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        out!(
            "indexed {} ({} tables) into {}: {} entities, {} joins, {} metrics, {} PII columns tagged",
            source,
            indexed.catalog.tables.len(),
            out.display(),
            d.entities.len(),
            d.joins.len(),
            d.metrics.len(),
            d.pii.len()
        );
        print_changes(&changes);
        for n in &notes {
            out!("note: {n}");
        }
        match &loads {
            Ok(()) => out!("next: review the files (origin: suggested), then `schemabrain check --project {}`", out.display()),
            Err(e) => out!("the written project does not load:\n{e}"),
        }
    }
    ExitCode::from(if loads.is_ok() { 0 } else { 1 })
}

fn print_changes(c: &FileChanges) {
    for (mark, files) in [("+", &c.added), ("~", &c.updated), ("-", &c.removed)] {
        for f in files {
            out!("  {mark} {f}");
        }
    }
    for f in &c.kept {
        out!("  = {f} (edited by hand: kept)");
    }
    for f in &c.skipped {
        out!("  x {f} (deleted by hand: not written again)");
    }
    if !c.unchanged.is_empty() {
        out!("  {} files unchanged", c.unchanged.len());
    }
}

/// `schemabrain import dbt PATH --out DIR`: exit 0 when everything mapped,
/// 1 with the item-by-item list when something did not (or nothing was
/// found at all), 2 when the project or the warehouse cannot be read.
pub fn import_dbt(path: &Path, out: &Path, schema: Option<&str>, source: Option<&str>, json_out: bool) -> ExitCode {
    let (file, read) = match read_dbt(path, schema) {
        Ok(r) => r,
        Err(e) => return super::operational(&e, json_out),
    };
    let imported = crate::dbt::import_semantic_manifest(&read.manifest, "semantic_manifest.json");
    let name = project_name(out);
    // Plain models and sources, measured on the warehouse when one is named.
    let given = source.is_some();
    let source = source.map(absolute_source).or_else(|| read.source.clone());
    let mut warehouse_notes = Vec::new();
    let taken: std::collections::BTreeSet<String> = imported.files.keys().filter_map(|k| k.strip_prefix("entities/")?.strip_suffix(".yaml").map(str::to_string)).collect();
    let bound = imported.relations.clone();
    let wanted = crate::dbt::plain::map::any_plain(&crate::dbt::plain::map::select(&read.plain, &bound, &taken, &mut Vec::new()));
    let engine = match (&source, wanted) {
        (Some(url), true) => match engine::open(url) {
            Ok(e) => Some(e),
            Err(e) if given => return super::operational(&format!("{url}: {e}"), json_out),
            // The profile's warehouse may not be built yet: import from the YAML alone.
            Err(e) => {
                warehouse_notes.push(format!("the profile's warehouse {url} did not open ({e}): plain models imported from their YAML alone, unmeasured"));
                None
            }
        },
        _ => None,
    };
    let year: i32 = chrono::Datelike::year(&chrono::Utc::now());
    let plain = match crate::dbt::plain::import(&read.plain, &bound, &taken, engine.as_deref(), year) {
        Ok(p) => p,
        Err(e) => return super::operational(&e.to_string(), json_out),
    };
    // A semantic model's foreign entity may be a plain model's entity: imported again, joined to it.
    let outside: std::collections::BTreeMap<String, String> = plain
        .draft
        .entities
        .iter()
        .filter_map(|e| match e.identity.as_slice() {
            [key] => Some((e.name.clone(), key.clone())),
            _ => None,
        })
        .collect();
    let imported = if outside.is_empty() { imported } else { crate::dbt::import_semantic_manifest_with(&read.manifest, "semantic_manifest.json", &outside) };
    let mut files = imported.files.clone();
    let dialect = read.dialect.clone().or_else(|| engine.as_ref().map(|e| e.dialect().name.to_string())).unwrap_or_else(|| "duckdb".into());
    let (plain_files, mut notes) = write::render(&plain.draft, &name, source.as_deref().unwrap_or(""), &dialect);
    notes.extend(plain.draft.notes.iter().cloned());
    notes.extend(warehouse_notes);
    // No plain entity: nothing of the plain draft is written (not even its policy).
    let plain_files = if plain.draft.entities.is_empty() { Default::default() } else { plain_files };
    for (rel, text) in plain_files {
        if rel == "schemabrain.yaml" {
            continue;
        }
        if files.contains_key(&rel) {
            notes.push(format!("{rel}: the semantic models' definition is kept over the plain model's"));
            continue;
        }
        files.insert(rel, text);
    }
    let d = &plain.draft;
    let (entities, joins, metrics) = (imported.entities + d.entities.len(), imported.joins + d.joins.len(), imported.metrics + d.metrics.len());
    // Without a profile the dialect is the engine's (`compile` previews DuckDB's).
    let mut settings = format!("version: 1\nname: {name}\n");
    if let Some(dialect) = &read.dialect {
        settings.push_str(&format!("dialect: {dialect}\n"));
    }
    if let Some(source) = &source {
        settings.push_str(&format!("source: {}\n", crate::model::yaml_quoted(source)));
    }
    if let Some(line) = imported.time_spine_setting() {
        settings.push_str(&line);
    }
    files.insert("schemabrain.yaml".into(), settings);
    let nothing = entities == 0 && metrics == 0 && imported.queries == 0;
    if nothing {
        let message = format!(
            "{}: no semantic model, and no model or source to import (models need YAML, a test or a ref; ephemeral ones are skipped); nothing written",
            file.display()
        );
        if json_out {
            let doc = json!({"ok": false, "out": out.display().to_string(), "entities": 0, "joins": 0, "metrics": 0, "notes": notes, "problems": message});
            out!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
        } else {
            out!("{message}");
            for n in read.notes.iter().chain(&notes) {
                out!("note: {n}");
            }
        }
        return ExitCode::from(1);
    }
    let changes = match write::write_project(out, &files) {
        Ok(c) => c,
        Err(e) => return super::operational(&e.to_string(), json_out),
    };
    if let Some(catalog) = &plain.catalog {
        if let Err(e) = catalog.save_snapshot(out) {
            return super::operational(&format!("{}: {e}", out.display()), json_out);
        }
    }
    let loads = Project::open(out).map(|_| ()).map_err(|d| d.to_string());
    let ok = loads.is_ok() && imported.unmapped.is_empty();
    if json_out {
        let doc = json!({
            "ok": ok,
            "out": out.display().to_string(),
            "entities": entities,
            "joins": joins,
            "metrics": metrics,
            "saved_queries": imported.queries,
            "plain": {"entities": d.entities.len(), "joins": d.joins.len(), "metrics": d.metrics.len(), "pii_columns": d.pii_declared.len() + d.pii.values().filter(|t| !t.categories.is_empty()).count()},
            "unmapped": imported.unmapped,
            "dbt_names": imported.names,
            "notes": read.notes.iter().chain(&notes).collect::<Vec<_>>(),
            "files": changes,
            "problems": loads.as_ref().err(),
        });
        out!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        out!(
            "imported {} into {}: {} entities, {} joins, {} metrics, {} saved queries ({} entities from plain models and sources)",
            file.display(),
            out.display(),
            entities,
            joins,
            metrics,
            imported.queries,
            d.entities.len()
        );
        print_changes(&changes);
        for n in read.notes.iter().chain(&notes) {
            out!("note: {n}");
        }
        for u in &imported.unmapped {
            out!("not mapped: {}: {}", u.item, u.reason);
        }
        if let Err(e) = &loads {
            out!("the written project does not load:\n{e}");
        }
    }
    ExitCode::from(if ok { 0 } else { 1 })
}

/// The dbt project at `path`: a directory read as YAML (no dbt needed), a
/// `manifest.json` (models, sources, tests), or a semantic manifest.
fn read_dbt(path: &Path, schema: Option<&str>) -> Result<(std::path::PathBuf, crate::dbt::project::ProjectRead), String> {
    if path.is_dir() {
        return crate::dbt::project::read_project(path, schema).map(|r| (path.join("dbt_project.yml"), r));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut manifest: serde_json::Value = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    // dbt's full manifest: its nodes are the plain project (its semantic
    // models are keyed by id there, not the semantic manifest's list).
    if manifest.get("nodes").is_some_and(|n| n.is_object()) {
        let file = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
        let mut plain = crate::dbt::plain::read::from_manifest(&manifest, &file);
        if let Some(forced) = schema {
            for n in plain.iter_mut().filter(|n| !n.is_source()) {
                n.schema = forced.to_string();
            }
        }
        let empty = json!({"semantic_models": [], "metrics": [], "saved_queries": []});
        return Ok((path.to_path_buf(), crate::dbt::project::ProjectRead { manifest: empty, dialect: None, source: None, notes: Vec::new(), plain }));
    }
    if let (Some(schema), Some(models)) = (schema, manifest.get_mut("semantic_models").and_then(|m| m.as_array_mut())) {
        for sm in models {
            crate::json::set_in(sm, "node_relation", "schema_name", json!(schema));
        }
    }
    // The time spine is a relation of the same project.
    let spines = manifest.get_mut("project_configuration").and_then(|c| c.get_mut("time_spines")).and_then(|t| t.as_array_mut());
    if let (Some(schema), Some(spines)) = (schema, spines) {
        for spine in spines {
            crate::json::set_in(spine, "node_relation", "schema_name", json!(schema));
        }
    }
    Ok((path.to_path_buf(), crate::dbt::project::ProjectRead { manifest, dialect: None, source: None, notes: Vec::new(), plain: Vec::new() }))
}

/// Mermaid or dot text of the join graph: one node per entity, one edge per
/// join labelled with its name and cardinality.
pub fn graph_text(project: &Project, format: &str) -> String {
    let m = &project.model;
    let card = |c: Option<crate::model::Cardinality>| c.map(|c| c.as_str()).unwrap_or("unknown");
    let mut s = String::new();
    if format == "dot" {
        s.push_str("digraph joins {\n  rankdir=LR;\n  node [shape=box];\n");
        for e in m.entities.keys() {
            s.push_str(&format!("  \"{e}\";\n"));
        }
        for j in m.joins.values() {
            s.push_str(&format!("  \"{}\" -> \"{}\" [label=\"{} ({})\"];\n", j.source_entity, j.target_entity, j.name, card(j.cardinality)));
        }
        s.push_str("}\n");
    } else {
        s.push_str("graph LR\n");
        for e in m.entities.keys() {
            s.push_str(&format!("  {e}[{e}]\n"));
        }
        for j in m.joins.values() {
            s.push_str(&format!("  {} -->|\"{} ({})\"| {}\n", j.source_entity, j.name, card(j.cardinality), j.target_entity));
        }
    }
    s
}

pub fn graph(dir: &Path, format: &str) -> ExitCode {
    match Project::open(dir) {
        Ok(p) => {
            out!("{}", graph_text(&p, format).trim_end());
            ExitCode::SUCCESS
        }
        Err(d) => super::project_failure(&d, false),
    }
}
