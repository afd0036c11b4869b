//! `schemabrain import ossie` and `schemabrain export ossie`: the front
//! ends of `crate::ossie`. The one thing done here beyond printing is
//! what needs an engine: with `--source`, the catalog is snapshotted and
//! each relationship's `to` columns are checked unique on the data (an
//! Ossie relationship says many-to-one without proof).

use std::path::Path;
use std::process::ExitCode;
use std::time::Duration;

use serde_json::json;

use crate::engine::{self, Engine, Limits};
use crate::index::write;
use crate::ossie::{self, Imported, Unmapped};
use crate::project::Project;
use crate::sql::CompiledSql;

const CHECK_LIMITS: Limits = Limits { max_rows: 10, timeout: Duration::from_secs(600) };

/// How many key values of the `to` side occur on more than one row.
fn duplicated_keys(engine: &dyn Engine, rel: &ossie::Relationship) -> Result<i64, String> {
    let cols = rel.to_columns.join(", ");
    let not_null = rel.to_columns.iter().map(|c| format!("{c} IS NOT NULL")).collect::<Vec<_>>().join(" AND ");
    let sql = format!("SELECT COUNT(*) FROM (SELECT {cols} FROM {} WHERE {not_null} GROUP BY {cols} HAVING COUNT(*) > 1) d", rel.to_table);
    let rs = engine.run(&CompiledSql { sql, params: Vec::new(), dialect: engine.dialect().name }, CHECK_LIMITS).map_err(|e| e.to_string())?;
    rs.rows.first().and_then(|r| r.first()).and_then(|v| v.as_i64().or_else(|| v.as_str().and_then(|s| s.parse().ok()))).ok_or_else(|| "no count".to_string())
}

/// Measures every relationship on the data: a `to` side whose key is not
/// unique makes the join many_to_many (still exact: the planner
/// deduplicates), and the import lists it as not mapped as declared.
fn check_relationships(engine: &dyn Engine, imported: &mut Imported, notes: &mut Vec<String>) {
    for rel in imported.relationships.clone() {
        let path = format!("joins/{}.yaml", rel.join);
        match duplicated_keys(engine, &rel) {
            Ok(0) => notes.push(format!("relationship {}: {}({}) is unique on the data: many_to_one holds", rel.join, rel.to_table, rel.to_columns.join(", "))),
            Ok(n) => {
                if let Some(text) = imported.files.get_mut(&path) {
                    *text = text.replace("cardinality: \"many_to_one\"", "cardinality: \"many_to_many\"");
                }
                imported.unmapped.push(Unmapped {
                    item: format!("relationship {}", rel.join),
                    reason: format!(
                        "its `to` side is not unique on the data ({n} values of {}({}) occur on several rows): written as many_to_many, not the many_to_one Ossie declares",
                        rel.to_table,
                        rel.to_columns.join(", ")
                    ),
                });
            }
            Err(e) => notes.push(format!("relationship {}: not checked on the data ({e})", rel.join)),
        }
    }
}

pub fn import(file: &Path, out: &Path, source: Option<&str>, dialect: Option<&str>, json_out: bool) -> ExitCode {
    let text = match std::fs::read_to_string(file) {
        Ok(t) => t,
        Err(e) => return super::operational(&format!("{}: {e}", file.display()), json_out),
    };
    let cwd = std::env::current_dir().unwrap_or_default();
    let source = source.map(|s| engine::resolve_source(s, &cwd));
    let engine = match &source {
        Some(url) => match engine::open(url) {
            Ok(e) => Some(e),
            Err(e) => return super::operational(&format!("{url}: {e}"), json_out),
        },
        None => None,
    };
    let dialect = dialect.map(str::to_string).or_else(|| engine.as_ref().map(|e| e.dialect().name.to_string()));
    let options = ossie::Options { dialect, source: source.clone(), name: None };
    let mut imported = match ossie::import(&text, &file.display().to_string(), &options) {
        Ok(i) => i,
        Err(e) => {
            if json_out {
                let doc = json!({"ok": false, "file": e.file, "line": e.line, "key": e.key, "error": e.message});
                out!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
            } else {
                eprintln!("error: {e}");
            }
            return ExitCode::from(1);
        }
    };
    let mut notes = imported.notes.clone();
    if let Some(engine) = &engine {
        check_relationships(engine.as_ref(), &mut imported, &mut notes);
    }
    let mut files = imported.files.clone();
    if !imported.extensions.is_empty() {
        files.insert(ossie::EXTENSIONS_FILE.into(), serde_json::to_string_pretty(&imported.extensions).unwrap_or_default());
    }
    let changes = match write::write_project(out, &files) {
        Ok(c) => c,
        Err(e) => return super::operational(&e.to_string(), json_out),
    };
    if let Some(engine) = &engine {
        match engine.introspect() {
            Ok(catalog) => {
                if let Err(e) = catalog.save_snapshot(out) {
                    return super::operational(&format!("{}: {e}", out.display()), json_out);
                }
            }
            Err(e) => notes.push(format!("the catalog was not read ({e}): columns are the declared fields")),
        }
    }
    let loads = Project::open(out).map(|_| ()).map_err(|d| d.to_string());
    let ok = loads.is_ok() && imported.unmapped.is_empty();
    if json_out {
        let doc = json!({
            "ok": ok,
            "version": imported.version,
            "out": out.display().to_string(),
            "entities": imported.entities,
            "joins": imported.joins,
            "metrics": imported.metrics,
            "unmapped": imported.unmapped,
            "notes": notes,
            "files": changes,
            "problems": loads.as_ref().err(),
        });
        out!("{}", serde_json::to_string_pretty(&doc).unwrap_or_default());
    } else {
        out!(
            "imported {} (Ossie {}) into {}: {} entities, {} joins, {} metrics",
            file.display(),
            imported.version,
            out.display(),
            imported.entities,
            imported.joins,
            imported.metrics
        );
        for n in &notes {
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

pub fn export(project: &Path, out: Option<&Path>) -> ExitCode {
    let doc = match ossie::export_project(project) {
        Ok(d) => d,
        Err(ossie::ExportError::Load(d)) => {
            eprintln!("{d}");
            return ExitCode::from(2);
        }
        Err(e) => return super::operational(&e.to_string(), false),
    };
    let json_file = out.is_some_and(|p| p.extension().and_then(|e| e.to_str()) == Some("json"));
    let text = if json_file { serde_json::to_string_pretty(&doc).unwrap_or_default() + "\n" } else { ossie::to_yaml(&doc) };
    match out {
        None => {
            out!("{}", text.trim_end());
            ExitCode::SUCCESS
        }
        Some(path) => match std::fs::write(path, text) {
            Ok(()) => {
                let model = doc.get("semantic_model").and_then(|m| m.get(0));
                let count = |k: &str| model.and_then(|m| m.get(k)).and_then(|x| x.as_array()).map_or(0, Vec::len);
                eprintln!("wrote {} (Ossie {}): {} datasets, {} relationships, {} metrics", path.display(), ossie::EXPORT_VERSION, count("datasets"), count("relationships"), count("metrics"));
                ExitCode::SUCCESS
            }
            Err(e) => super::operational(&format!("{}: {e}", path.display()), false),
        },
    }
}
