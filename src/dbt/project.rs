//! Reading a dbt project directory without dbt: `dbt_project.yml`, the
//! profile (`profiles.yml` in the project, `$DBT_PROFILES_DIR` or
//! `~/.dbt`, with `{{ env_var('NAME', 'default') }}` rendered), and every
//! YAML file under the model paths, turned into the JSON `dbt parse` would
//! write to `target/semantic_manifest.json`, so that one importer
//! (`import_semantic_manifest`) serves both. Both spec styles are read:
//! legacy (`semantic_models:` with measures, metrics with `type_params`) and
//! the latest (`semantic_model: true` on a model, entities and dimensions
//! on its columns, simple metrics with `agg` under the model, other metrics
//! with `input_metric(s)`). Each item carries `__source` (`file:line`).
//!
//! Relations follow dbt's defaults: the model's `alias` (from its YAML
//! `config:` or its SQL `{{ config(alias=...) }}`) or its name, in the
//! target schema, or `<target schema>_<custom>` for a custom `schema`
//! (dbt's `generate_schema_name`); `--schema` overrides both.
//!
//! Architecture invariant: reads files only; knows dbt's YAML shapes, not
//! our grammar (the importer maps).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value as Json};

use super::{arr, s};
use crate::json::set;
use crate::model::yaml_documents_as_json;

/// What the project directory gave.
#[derive(Debug)]
pub struct ProjectRead {
    /// In the shape of `semantic_manifest.json` (the fields the importer reads).
    pub manifest: Json,
    /// The profile target's adapter type when we have a dialect of that name.
    pub dialect: Option<String>,
    /// `duckdb:PATH` for a DuckDB target (no other target's URL is written:
    /// it would carry credentials).
    pub source: Option<String>,
    /// Where the relations' schema came from, and anything not read.
    pub notes: Vec<String>,
    /// The project's models and sources (`super::plain`), from
    /// `target/manifest.json` when there is one, else from the files.
    pub plain: Vec<super::plain::read::Node>,
}

/// The documents of one YAML file, or an error naming it and the line.
fn read_yaml(path: &Path, render_env: bool) -> Result<Vec<Json>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let text = if render_env { render_env_vars(&text)? } else { text };
    yaml_documents_as_json(&text).map_err(|(line, m)| format!("{}:{line}: {m}", path.display()))
}

/// Renders `{{ env_var('NAME') }}` and `{{ env_var('NAME', 'default') }}`,
/// the Jinja dbt allows in profiles; a variable that is unset and has no
/// default is an error, as in dbt.
pub fn render_env_vars(text: &str) -> Result<String, String> {
    render_calls(text, "env_var", |args| {
        let name = args.first().cloned().unwrap_or_default();
        match (std::env::var(&name), args.get(1)) {
            (Ok(v), _) => Ok(Some(v)),
            (Err(_), Some(default)) => Ok(Some(default.clone())),
            (Err(_), None) => Err(format!("env_var('{name}') is not set and has no default")),
        }
    })
}

/// `text` with each `{{ function(args) }}` replaced by what `render` makes
/// of its arguments (split on commas, quotes trimmed); a call `render`
/// leaves (`None`), or any other `{{ ... }}`, stays as written.
pub fn render_calls(text: &str, function: &str, mut render: impl FnMut(&[String]) -> Result<Option<String>, String>) -> Result<String, String> {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find("{{") {
        let Some(end) = rest[start..].find("}}").map(|e| start + e) else { break };
        out.push_str(&rest[..start]);
        let inner = rest[start + 2..end].trim();
        let args = inner.strip_prefix(function).map(str::trim_start).and_then(|x| x.strip_prefix('(')).and_then(|x| x.trim_end().strip_suffix(')'));
        let rendered = match args {
            Some(args) => render(&args.split(',').map(|a| a.trim().trim_matches(|c| c == '\'' || c == '"').to_string()).collect::<Vec<_>>())?,
            None => None,
        };
        match rendered {
            Some(r) => out.push_str(&r),
            None => out.push_str(&rest[start..end + 2]),
        }
        rest = &rest[end + 2..];
    }
    out.push_str(rest);
    Ok(out)
}

/// `{count, granularity}` from `7 days` (or the object already).
fn interval(v: &Json) -> Json {
    let Some(text) = v.as_str() else { return v.clone() };
    let mut words = text.split_whitespace();
    match (words.next().and_then(|n| n.parse::<i64>().ok()), words.next()) {
        (Some(count), Some(unit)) => {
            let unit = unit.to_ascii_lowercase();
            let unit = unit.strip_suffix('s').unwrap_or(&unit).to_string();
            json!({"count": count, "granularity": unit})
        }
        _ => v.clone(),
    }
}

/// A `filter:` (one where string or a list of them) as `{where_filters: [...]}`.
fn filter(v: Option<&Json>) -> Json {
    let texts: Vec<&str> = match v {
        Some(Json::String(t)) => vec![t.as_str()],
        Some(Json::Array(items)) => items.iter().filter_map(Json::as_str).collect(),
        Some(Json::Object(o)) if o.contains_key("where_filters") => return Json::Object(o.clone()),
        _ => return Json::Null,
    };
    json!({"where_filters": texts.iter().map(|t| json!({"where_sql_template": t.trim()})).collect::<Vec<_>>()})
}

/// A metric input (`name` or `{name, filter, alias, offset_window, ...}`) in manifest form.
fn input(v: &Json) -> Json {
    match v {
        Json::String(name) => json!({"name": name}),
        Json::Object(o) => {
            let mut m = o.clone();
            m.remove("__line");
            if let Some(f) = o.get("filter") {
                m.insert("filter".into(), filter(Some(f)));
            }
            if let Some(w) = o.get("offset_window") {
                m.insert("offset_window".into(), interval(w));
            }
            Json::Object(m)
        }
        other => other.clone(),
    }
}

/// A scalar `expr` (dbt allows `expr: 1` or `expr: true`) as text.
fn text_of(v: &Json) -> Json {
    match v {
        Json::Number(n) => Json::String(n.to_string()),
        Json::Bool(b) => Json::String(b.to_string()),
        other => other.clone(),
    }
}

/// Where a model's relation is, by dbt's defaults.
struct Relations {
    target_schema: String,
    /// The project-wide `+schema`.
    project_schema: Option<String>,
    /// `--schema`: every relation there.
    forced: Option<String>,
    /// Per model: `(alias, custom schema)` from its YAML config or SQL config.
    configs: BTreeMap<String, (Option<String>, Option<String>)>,
}

impl Relations {
    fn of(&self, model: &str) -> Json {
        let (alias, custom) = self.configs.get(model).cloned().unwrap_or_default();
        let schema = match (&self.forced, custom.or_else(|| self.project_schema.clone())) {
            (Some(forced), _) => forced.clone(),
            (None, Some(custom)) => format!("{}_{custom}", self.target_schema),
            (None, None) => self.target_schema.clone(),
        };
        json!({"alias": alias.unwrap_or_else(|| model.to_string()), "schema_name": schema})
    }
}

/// `ref('orders')` → `orders`.
fn ref_name(v: &str) -> Option<String> {
    let inner = v.trim().strip_prefix("ref")?.trim_start().strip_prefix('(')?.trim_end().strip_suffix(')')?;
    let last = inner.split(',').next_back()?.trim().trim_matches(|c| c == '\'' || c == '"');
    Some(last.to_string())
}

/// `alias` and `schema` of a SQL model's `{{ config(...) }}`.
fn sql_config(text: &str) -> (Option<String>, Option<String>) {
    let Some(start) = text.find("config(") else { return (None, None) };
    let body = &text[start + 7..];
    let body = &body[..body.find(")").unwrap_or(body.len())];
    let get = |key: &str| {
        body.split(',').find_map(|kv| {
            let (k, v) = kv.split_once('=')?;
            (k.trim() == key).then(|| v.trim().trim_matches(|c| c == '\'' || c == '"').to_string())
        })
    };
    (get("alias"), get("schema"))
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut entries: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            files_under(&p, out);
        } else {
            out.push(p);
        }
    }
}

/// The profile's target output, where the profile was found, and notes.
fn profile_output(dir: &Path, profile: &str) -> Result<Option<(Json, PathBuf)>, String> {
    let mut candidates = vec![dir.join("profiles.yml")];
    if let Ok(d) = std::env::var("DBT_PROFILES_DIR") {
        candidates.push(Path::new(&d).join("profiles.yml"));
    }
    if let Ok(home) = std::env::var("HOME") {
        candidates.push(Path::new(&home).join(".dbt/profiles.yml"));
    }
    let Some(path) = candidates.into_iter().find(|p| p.is_file()) else { return Ok(None) };
    let docs = read_yaml(&path, true)?;
    let Some(p) = docs.first().and_then(|d| d.get(profile)) else { return Ok(None) };
    let target = std::env::var("DBT_TARGET").ok().or_else(|| s(p, "target").map(str::to_string)).unwrap_or_else(|| "dev".into());
    Ok(p.get("outputs").and_then(|o| o.get(&target)).cloned().map(|o| (o, path)))
}

/// Reads the dbt project in `dir`; `schema` overrides every relation's schema.
pub fn read_project(dir: &Path, schema: Option<&str>) -> Result<ProjectRead, String> {
    let project_file = dir.join("dbt_project.yml");
    let project = read_yaml(&project_file, true)?.into_iter().next().unwrap_or(Json::Null);
    let name = s(&project, "name").unwrap_or("").to_string();
    let profile = s(&project, "profile").unwrap_or(&name).to_string();
    let model_paths: Vec<String> = match project.get("model-paths").and_then(Json::as_array) {
        Some(paths) => paths.iter().filter_map(Json::as_str).map(str::to_string).collect(),
        None => vec!["models".into()],
    };
    let project_config = project.get("models").and_then(|m| m.get(&name));
    let project_schema = project_config.and_then(|c| s(c, "+schema").or(s(c, "schema"))).map(str::to_string);
    let mut notes = Vec::new();
    let (mut dialect, mut source, mut target_schema) = (None, None, "main".to_string());
    match profile_output(dir, &profile)? {
        Some((out, path)) => {
            let kind = s(&out, "type").unwrap_or("").to_ascii_lowercase();
            target_schema = s(&out, "schema").or(s(&out, "dataset")).unwrap_or("main").to_string();
            if crate::sql::Dialect::from_name(&kind).is_ok() {
                dialect = Some(kind.clone());
            }
            if kind == "duckdb" {
                let db = s(&out, "path").unwrap_or(":memory:");
                let p = Path::new(db);
                // Relative to the dbt project, written absolute: the imported project lives elsewhere.
                let p = if p.is_relative() { std::path::absolute(dir).unwrap_or_else(|_| dir.to_path_buf()).join(p) } else { p.to_path_buf() };
                source = Some(format!("duckdb:{}", p.display()));
            }
            notes.push(format!("relations in schema `{target_schema}` (profile `{profile}`, {})", path.display()));
        }
        None => notes.push(format!("no profile `{profile}` found (profiles.yml in the project, $DBT_PROFILES_DIR or ~/.dbt): relations in schema `main`; pass --schema")),
    }
    let mut relations = Relations { target_schema, project_schema, forced: schema.map(str::to_string), configs: BTreeMap::new() };

    // Every file under the model paths: SQL configs first, then the YAML.
    let mut yaml: Vec<(String, Json)> = Vec::new();
    let mut sql_files: Vec<super::plain::read::SqlFile> = Vec::new();
    let mut markdown: Vec<(String, String)> = Vec::new();
    for mp in &model_paths {
        let mut files = Vec::new();
        files_under(&dir.join(mp), &mut files);
        for f in files {
            let rel = f.strip_prefix(dir).unwrap_or(&f).display().to_string();
            match f.extension().and_then(|e| e.to_str()) {
                Some("sql") => {
                    let text = std::fs::read_to_string(&f).map_err(|e| format!("{rel}: {e}"))?;
                    let model = f.file_stem().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
                    let (alias, custom) = sql_config(&text);
                    if alias.is_some() || custom.is_some() {
                        relations.configs.insert(model.clone(), (alias, custom));
                    }
                    sql_files.push(super::plain::read::SqlFile { name: model, rel: rel.clone(), text });
                }
                Some("md") => {
                    let text = std::fs::read_to_string(&f).map_err(|e| format!("{rel}: {e}"))?;
                    markdown.push((rel.clone(), text));
                }
                Some("yml") | Some("yaml") => {
                    for doc in read_yaml(&f, false)? {
                        yaml.push((rel.clone(), doc));
                    }
                }
                _ => {}
            }
        }
    }
    let mut time_spines = Vec::new();
    for (_, doc) in &yaml {
        for m in arr(doc, "models") {
            // `time_spine: {standard_granularity_column: date_day}` on a model.
            // Its `custom_granularities` (`{name, column_name}`, the column
            // defaulting to the name) as the manifest lists them.
            if let (Some(model), Some(column)) = (s(m, "name"), m.get("time_spine").and_then(|t| s(t, "standard_granularity_column"))) {
                let custom: Vec<Json> = m
                    .get("time_spine")
                    .map(|t| arr(t, "custom_granularities"))
                    .unwrap_or(&[])
                    .iter()
                    .filter_map(|g| {
                        let name = s(g, "name")?;
                        Some(json!({"name": name, "column_name": s(g, "column_name").unwrap_or(name)}))
                    })
                    .collect();
                time_spines.push((model.to_string(), column.to_string(), custom));
            }
            let (Some(model), Some(config)) = (s(m, "name"), m.get("config")) else { continue };
            let entry = relations.configs.entry(model.to_string()).or_default();
            if let Some(a) = s(config, "alias") {
                entry.0 = Some(a.to_string());
            }
            if let Some(c) = s(config, "schema") {
                entry.1 = Some(c.to_string());
            }
        }
    }

    let mut semantic_models = Vec::new();
    let mut metrics = Vec::new();
    let mut saved_queries = Vec::new();
    for (rel, doc) in &yaml {
        let at = |v: &Json| format!("{rel}:{}", v.get("__line").and_then(Json::as_u64).unwrap_or(1));
        for sm in arr(doc, "semantic_models") {
            let (model, created) = legacy_semantic_model(sm, &relations, &at(sm));
            semantic_models.push(model);
            for c in created {
                metrics.push(c);
            }
        }
        for m in arr(doc, "models") {
            let enabled = match m.get("semantic_model") {
                Some(Json::Bool(b)) => *b,
                Some(Json::Object(o)) => o.get("enabled").and_then(Json::as_bool).unwrap_or(true),
                _ => false,
            };
            if enabled {
                let (model, model_metrics) = latest_semantic_model(m, &relations, &at);
                semantic_models.push(model);
                metrics.extend(model_metrics);
            }
        }
        for m in arr(doc, "metrics") {
            metrics.push(metric(m, &at(m)));
        }
        for q in arr(doc, "saved_queries") {
            let p = q.get("query_params").cloned().unwrap_or(Json::Null);
            let mut params = json!({
                "metrics": p.get("metrics").cloned().unwrap_or(json!([])),
                "group_by": p.get("group_by").cloned().unwrap_or(json!([])),
                "order_by": p.get("order_by").cloned().unwrap_or(json!([])),
                "limit": p.get("limit").cloned().unwrap_or(Json::Null),
                "where": filter(p.get("where")),
            });
            if let Some(obj) = params.as_object_mut() {
                obj.remove("__line");
            }
            saved_queries.push(json!({"name": s(q, "name").unwrap_or("?"), "description": q.get("description"), "query_params": params, "__source": at(q)}));
        }
    }
    let time_spines: Vec<Json> = time_spines
        .iter()
        .map(|(model, column, custom)| {
            json!({"node_relation": relations.of(model), "primary_column": {"name": column, "time_granularity": "day"}, "custom_granularities": custom})
        })
        .collect();
    let manifest = json!({
        "semantic_models": semantic_models,
        "metrics": metrics,
        "saved_queries": saved_queries,
        "project_configuration": {"time_spines": time_spines},
    });
    let plain = plain_nodes(dir, &yaml, &sql_files, &markdown, &relations, project_config, &model_paths, schema, &mut notes)?;
    Ok(ProjectRead { manifest, dialect, source, notes, plain })
}

/// The plain models and sources: from `target/manifest.json` when dbt has
/// written one (everything resolved there), else from the files.
#[allow(clippy::too_many_arguments)]
fn plain_nodes(
    dir: &Path,
    yaml: &[(String, Json)],
    sql: &[super::plain::read::SqlFile],
    markdown: &[(String, String)],
    relations: &Relations,
    project_config: Option<&Json>,
    model_paths: &[String],
    schema: Option<&str>,
    notes: &mut Vec<String>,
) -> Result<Vec<super::plain::read::Node>, String> {
    use super::plain::read;
    let manifest_path = dir.join("target/manifest.json");
    if manifest_path.is_file() {
        let text = std::fs::read_to_string(&manifest_path).map_err(|e| format!("{}: {e}", manifest_path.display()))?;
        let manifest: Json = serde_json::from_str(&text).map_err(|e| format!("{}: not JSON ({e})", manifest_path.display()))?;
        notes.push("models and sources read from target/manifest.json (delete it, or run dbt again, if it is older than the YAML)".into());
        let mut nodes = read::from_manifest(&manifest, "target/manifest.json");
        if let Some(forced) = schema {
            for n in nodes.iter_mut().filter(|n| !n.is_source()) {
                n.schema = forced.to_string();
            }
        }
        return Ok(nodes);
    }
    let relation = |model: &str| {
        let r = relations.of(model);
        (s(&r, "schema_name").unwrap_or("main").to_string(), s(&r, "alias").unwrap_or(model).to_string())
    };
    let materialized = |rel: &str| folder_materialized(project_config, model_paths, rel);
    Ok(read::from_files(&read::Files { yaml, sql, markdown, relation: &relation, materialized: &materialized }))
}

/// The materialization `dbt_project.yml` gives the folder of a model file
/// (`models: {project: {staging: {+materialized: view}}}`): the deepest
/// folder that sets one wins.
fn folder_materialized(project_config: Option<&Json>, model_paths: &[String], rel: &str) -> Option<String> {
    let path = model_paths.iter().find_map(|mp| rel.strip_prefix(mp.trim_end_matches('/')).map(|r| r.trim_start_matches('/'))).unwrap_or(rel);
    let mut config = project_config?;
    let get = |c: &Json| s(c, "+materialized").or(s(c, "materialized")).map(str::to_string);
    let mut found = get(config);
    let folders: Vec<&str> = path.split('/').collect();
    for folder in folders.iter().take(folders.len().saturating_sub(1)) {
        match config.get(*folder) {
            Some(c) => {
                config = c;
                found = get(c).or(found);
            }
            None => break,
        }
    }
    found
}

/// A legacy `semantic_models:` item, and the metrics its `create_metric: true` measures make.
fn legacy_semantic_model(sm: &Json, relations: &Relations, source: &str) -> (Json, Vec<Json>) {
    let mut m = sm.as_object().cloned().unwrap_or_default();
    m.remove("__line");
    let name = s(sm, "name").unwrap_or("?").to_string();
    let model = s(sm, "model").and_then(ref_name).unwrap_or_else(|| name.clone());
    m.insert("node_relation".into(), relations.of(&model));
    m.insert("__source".into(), Json::String(source.to_string()));
    let mut created = Vec::new();
    let measures: Vec<Json> = arr(sm, "measures")
        .iter()
        .map(|x| {
            let mut x = x.as_object().cloned().unwrap_or_default();
            if let Some(e) = x.get("expr").map(text_of) {
                x.insert("expr".into(), e);
            }
            if x.get("create_metric").and_then(Json::as_bool) == Some(true) {
                let mname = x.get("name").cloned().unwrap_or(Json::Null);
                let mut metric = json!({"name": mname, "type": "simple", "type_params": {"measure": {"name": mname}}, "__source": source});
                // dbt's own wording when the measure has none.
                set(&mut metric, "description", match x.get("description").and_then(Json::as_str) {
                    Some(d) => json!(d),
                    None => json!(format!("Metric created from measure {}", mname.as_str().unwrap_or("?"))),
                });
                created.push(metric);
            }
            Json::Object(x)
        })
        .collect();
    m.insert("measures".into(), Json::Array(measures));
    (Json::Object(m), created)
}

/// A column's `entity:` or `dimension:` (its type alone, or `{name, type}`)
/// as a manifest item; `expr` is the column when the item is named apart.
fn column_item(v: &Json, col: &str, default_type: &str) -> Json {
    let (name, kind) = match v {
        Json::String(kind) => (col.to_string(), kind.clone()),
        other => (s(other, "name").unwrap_or(col).to_string(), s(other, "type").unwrap_or(default_type).to_string()),
    };
    let mut item = json!({"name": name, "type": kind});
    if name != col {
        set(&mut item, "expr", json!(col));
    }
    item
}

/// A model with `semantic_model: true` (latest spec): its columns' entities
/// and dimensions, its derived semantics, and its simple metrics.
fn latest_semantic_model(m: &Json, relations: &Relations, at: &dyn Fn(&Json) -> String) -> (Json, Vec<Json>) {
    let model = s(m, "name").unwrap_or("?").to_string();
    let name = m.get("semantic_model").and_then(|x| s(x, "name")).unwrap_or(&model).to_string();
    let agg_time = s(m, "agg_time_dimension").map(str::to_string);
    let mut entities = Vec::new();
    let mut dimensions = Vec::new();
    for c in arr(m, "columns") {
        let col = s(c, "name").unwrap_or("?");
        if let Some(e) = c.get("entity") {
            entities.push(column_item(e, col, ""));
        }
        if let Some(d) = c.get("dimension") {
            let mut item = column_item(d, col, "categorical");
            if s(&item, "type") == Some("time") {
                set(&mut item, "type_params", json!({"time_granularity": s(c, "granularity").unwrap_or("day")}));
            }
            dimensions.push(item);
        }
    }
    if let Some(derived) = m.get("derived_semantics") {
        for e in arr(derived, "entities") {
            entities.push(e.clone());
        }
        for d in arr(derived, "dimensions") {
            dimensions.push(d.clone());
        }
    }
    let mut sm = json!({
        "name": name,
        "description": s(m, "description").unwrap_or(""),
        "node_relation": relations.of(&model),
        "entities": entities,
        "dimensions": dimensions,
        "measures": [],
        "__source": at(m),
    });
    if let Some(t) = &agg_time {
        set(&mut sm, "defaults", json!({"agg_time_dimension": t}));
    }
    let metrics = arr(m, "metrics")
        .iter()
        .map(|x| {
            let mut params = json!({"semantic_model": name, "agg": s(x, "agg").unwrap_or("")});
            let mut agg_params = json!({"use_discrete_percentile": s(x, "percentile_type") == Some("discrete")});
            if let Some(p) = x.get("percentile") {
                set(&mut agg_params, "percentile", p.clone());
            }
            set(&mut params, "agg_params", agg_params);
            if let Some(t) = s(x, "agg_time_dimension").map(str::to_string).or_else(|| agg_time.clone()) {
                set(&mut params, "agg_time_dimension", json!(t));
            }
            if let Some(na) = x.get("non_additive_dimension") {
                set(&mut params, "non_additive_dimension", json!({
                    "name": s(na, "name"),
                    "window_choice": s(na, "window_agg").or(s(na, "window_choice")),
                    "window_groupings": na.get("group_by").or(na.get("window_groupings")).cloned().unwrap_or(json!([])),
                }));
            }
            let mut tp = json!({"expr": x.get("expr").map(text_of), "metric_aggregation_params": params});
            // dbt-core 1.12 keeps a model metric's `join_to_timespine` but
            // drops its `fill_nulls_with` (MetricFlow answers NULL); read as
            // dbt reads it, so the YAML and the manifest import alike.
            if let Some(v) = x.get("join_to_timespine") {
                set(&mut tp, "join_to_timespine", v.clone());
            }
            let mut metric = json!({"name": s(x, "name"), "type": "simple", "type_params": tp, "filter": filter(x.get("filter")), "__source": at(x)});
            if let Some(d) = x.get("description") {
                set(&mut metric, "description", d.clone());
            }
            metric
        })
        .collect();
    (sm, metrics)
}

/// A top-level `metrics:` item, legacy (`type_params`) or latest, in manifest form.
fn metric(m: &Json, source: &str) -> Json {
    let kind = s(m, "type").unwrap_or("").to_ascii_lowercase();
    let mut out: Map<String, Json> = Map::new();
    for key in ["name", "description", "label"] {
        if let Some(v) = m.get(key) {
            out.insert(key.into(), v.clone());
        }
    }
    out.insert("type".into(), json!(kind));
    out.insert("filter".into(), filter(m.get("filter")));
    out.insert("__source".into(), json!(source));
    let mut tp: Map<String, Json> = m.get("type_params").and_then(Json::as_object).cloned().unwrap_or_default();
    tp.remove("__line");
    // Latest spec: the parameters sit on the metric itself.
    for key in ["numerator", "denominator", "expr", "window", "grain_to_date", "period_agg", "entity", "calculation", "join_to_timespine", "fill_nulls_with"] {
        if let (Some(v), false) = (m.get(key), tp.contains_key(key)) {
            tp.insert(key.into(), v.clone());
        }
    }
    if let Some(inputs) = m.get("input_metrics") {
        tp.insert("metrics".into(), inputs.clone());
    }
    if let Some(measure) = tp.get("measure").cloned() {
        tp.insert("measure".into(), input(&measure));
    }
    for key in ["numerator", "denominator"] {
        if let Some(v) = tp.get(key).cloned() {
            tp.insert(key.into(), input(&v));
        }
    }
    if let Some(list) = tp.get("metrics").and_then(Json::as_array).cloned() {
        tp.insert("metrics".into(), Json::Array(list.iter().map(input).collect()));
    }
    if kind == "cumulative" {
        let mut cum: Map<String, Json> = tp.get("cumulative_type_params").and_then(Json::as_object).cloned().unwrap_or_default();
        cum.remove("__line");
        for key in ["window", "grain_to_date", "period_agg"] {
            if let Some(v) = tp.remove(key) {
                cum.entry(key).or_insert(v);
            }
        }
        if let Some(w) = cum.get("window").cloned() {
            cum.insert("window".into(), interval(&w));
        }
        if let Some(i) = m.get("input_metric") {
            cum.insert("metric".into(), input(i));
        }
        cum.entry("period_agg").or_insert(json!("first"));
        tp.insert("cumulative_type_params".into(), Json::Object(cum));
    }
    if kind == "conversion" {
        let mut conv: Map<String, Json> = tp.get("conversion_type_params").and_then(Json::as_object).cloned().unwrap_or_default();
        conv.remove("__line");
        for key in ["entity", "calculation", "window", "base_metric", "conversion_metric", "constant_properties"] {
            if let Some(v) = tp.remove(key).or_else(|| m.get(key).cloned()) {
                conv.insert(key.into(), v);
            }
        }
        // As dbt writes them: inputs as `{name: …}`, the window as `{count, granularity}`.
        for key in ["base_measure", "conversion_measure", "base_metric", "conversion_metric"] {
            if let Some(v) = conv.get(key).cloned() {
                conv.insert(key.into(), input(&v));
            }
        }
        if let Some(w) = conv.get("window").cloned() {
            conv.insert("window".into(), interval(&w));
        }
        tp.insert("conversion_type_params".into(), Json::Object(conv));
    }
    out.insert("type_params".into(), Json::Object(tp));
    Json::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_vars_render_with_defaults_and_fail_without() {
        std::env::set_var("SB_DBT_TEST_SET", "warehouse.duckdb");
        assert_eq!(render_env_vars("path: \"{{ env_var('SB_DBT_TEST_SET', 'x') }}\"").unwrap(), "path: \"warehouse.duckdb\"");
        assert_eq!(render_env_vars("path: {{ env_var(\"SB_DBT_TEST_UNSET\", \"d.duckdb\") }}").unwrap(), "path: d.duckdb");
        assert!(render_env_vars("{{ env_var('SB_DBT_TEST_UNSET') }}").unwrap_err().contains("SB_DBT_TEST_UNSET"));
        assert_eq!(render_env_vars("{{ other() }} stays").unwrap(), "{{ other() }} stays");
    }

    #[test]
    fn intervals_refs_and_sql_configs() {
        assert_eq!(interval(&json!("7 days")), json!({"count": 7, "granularity": "day"}));
        assert_eq!(interval(&json!("1 month")), json!({"count": 1, "granularity": "month"}));
        assert_eq!(ref_name("ref('orders')").as_deref(), Some("orders"));
        assert_eq!(ref_name("ref( \"pkg\", 'orders' )").as_deref(), Some("orders"));
        assert_eq!(sql_config("{{ config(materialized='table', alias='fct_orders', schema='marts') }} select 1"), (Some("fct_orders".into()), Some("marts".into())));
        let r = Relations { target_schema: "analytics".into(), project_schema: None, forced: None, configs: [("orders".to_string(), (Some("fct_orders".into()), Some("marts".into())))].into() };
        assert_eq!(r.of("orders"), json!({"alias": "fct_orders", "schema_name": "analytics_marts"}));
        assert_eq!(r.of("customers"), json!({"alias": "customers", "schema_name": "analytics"}));
    }
}
