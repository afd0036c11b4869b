//! Reading a project directory into a `SemanticModel`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::yaml::{parse_documents, Field, Mapping, Node, Reader};
use super::*;

const ENTITY_KEYS: &[&str] = &["version", "name", "description", "binding", "identity", "origin", "group", "columns"];
const JOIN_KEYS: &[&str] =
    &["version", "name", "description", "source_entity", "target_entity", "on", "cardinality", "origin"];
const METRIC_KEYS: &[&str] =
    &["version", "name", "description", "entity", "measure", "time_dimension", "time_grains", "filter", "origin"];
const POLICY_KEYS: &[&str] = &["version", "description", "block", "column_overrides"];
const SETTINGS_KEYS: &[&str] = &["version", "name", "source", "dialect", "default_limit", "max_rows", "timeout_ms"];

/// The directory that holds the definitions: `dir` itself, or `dir/schemabrain`
/// for a SchemaBrain project laid out as `./schemabrain/{entities,…}`.
pub fn resolve_project_dir(dir: &Path) -> PathBuf {
    let nested = dir.join("schemabrain");
    if !dir.join("entities").is_dir() && nested.join("entities").is_dir() {
        nested
    } else {
        dir.to_path_buf()
    }
}

/// Loads and checks a project. Returns the model built from everything that
/// could be read, plus every problem found; the model is only safe to plan
/// against when the diagnostics are empty.
pub fn load_project(dir: &Path) -> (SemanticModel, Diagnostics) {
    load_project_with(dir, &[])
}

/// Loads a project plus one more metric file that may live outside it (for
/// `schemabrain compile FILE.yaml`). A file already inside the project is
/// read once.
pub fn load_project_with_extra(dir: &Path, metric_files: &[&Path]) -> (SemanticModel, Diagnostics) {
    load_project_with(dir, metric_files)
}

fn load_project_with(dir: &Path, extra_metrics: &[&Path]) -> (SemanticModel, Diagnostics) {
    let dir = resolve_project_dir(dir);
    let mut files = Vec::new();
    let mut diags = Diagnostics::default();
    if !dir.is_dir() {
        diags.push(Diagnostic::new(&dir, 0, "", "project directory not found"));
        return (SemanticModel::default(), diags);
    }
    for (kind, sub) in [(FileKind::Entity, "entities"), (FileKind::Join, "joins"), (FileKind::Metric, "metrics")] {
        for path in yaml_files(&dir.join(sub), &mut diags) {
            files.push((kind, path));
        }
    }
    for (kind, name) in [(FileKind::Policy, "pii_policy.yaml"), (FileKind::Settings, "schemabrain.yaml")] {
        let path = dir.join(name);
        if path.is_file() {
            files.push((kind, path));
        }
    }
    let canonical = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    for extra in extra_metrics {
        if !files.iter().any(|(_, p)| canonical(p) == canonical(extra)) {
            files.push((FileKind::Metric, extra.to_path_buf()));
        }
    }
    let mut texts = Vec::new();
    for (kind, path) in files {
        match std::fs::read_to_string(&path) {
            Ok(text) => texts.push((kind, path, text)),
            Err(e) => diags.push(Diagnostic::new(&path, 0, "", format!("cannot read file: {e}"))),
        }
    }
    let (model, more) = load_project_from_files(&texts);
    diags.0.extend(more.0);
    diags.sort();
    (model, diags)
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FileKind {
    Entity,
    Join,
    Metric,
    Policy,
    Settings,
}

/// Loads a project from file contents already in memory (used by `load_project`
/// and by tests and benches that build models without touching the disk).
pub fn load_project_from_files(files: &[(FileKind, PathBuf, String)]) -> (SemanticModel, Diagnostics) {
    let mut diags = Diagnostics::default();
    let mut model = SemanticModel::default();
    for (kind, path, text) in files {
        let docs = parse_documents(path, text, &mut diags);
        if docs.is_empty() && matches!(kind, FileKind::Entity | FileKind::Join | FileKind::Metric) {
            diags.push(Diagnostic::new(path, 1, "", "the file holds no YAML document"));
        }
        let mut r = Reader { file: path.clone(), diags: &mut diags, key_lines: BTreeMap::new() };
        for doc in &docs {
            r.key_lines.clear();
            match kind {
                FileKind::Entity => {
                    if let Some(e) = read_entity(&mut r, doc) {
                        insert_unique(&mut r, &mut model.entities, e.name.clone(), e, "entity", |e| &e.defined_at);
                    }
                }
                FileKind::Join => {
                    if let Some(j) = read_join(&mut r, doc) {
                        insert_unique(&mut r, &mut model.joins, j.name.clone(), j, "join", |j| &j.defined_at);
                    }
                }
                FileKind::Metric => {
                    if let Some(m) = read_metric(&mut r, doc) {
                        insert_unique(&mut r, &mut model.metrics, m.name.clone(), m, "metric", |m| &m.defined_at);
                    }
                }
                FileKind::Policy => {
                    if let Some(p) = read_policy(&mut r, doc) {
                        model.pii_policy = p;
                    }
                }
                FileKind::Settings => {
                    if let Some(s) = read_settings(&mut r, doc) {
                        model.settings = s;
                    }
                }
            }
        }
    }
    validate::check(&model, &mut diags);
    diags.sort();
    (model, diags)
}

fn yaml_files(dir: &Path, diags: &mut Diagnostics) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries {
        match entry {
            Ok(e) => {
                let p = e.path();
                if p.is_file() && matches!(p.extension().and_then(|x| x.to_str()), Some("yaml" | "yml")) {
                    out.push(p);
                }
            }
            Err(e) => diags.push(Diagnostic::new(dir, 0, "", format!("cannot list directory: {e}"))),
        }
    }
    out.sort();
    out
}

fn insert_unique<T>(
    r: &mut Reader<'_>,
    map: &mut BTreeMap<String, T>,
    name: String,
    value: T,
    what: &str,
    origin: impl Fn(&T) -> &Origin,
) {
    if let Some(first) = map.get(&name) {
        let line = origin(&value).line_of("name");
        r.error(line, "name", format!("duplicate {what} `{name}`: already defined at {}", origin(first)));
        return;
    }
    map.insert(name, value);
}

fn origin_at(r: &Reader<'_>, map: &Mapping<'_>) -> Origin {
    Origin { file: r.file.clone(), line: map.line, key_lines: r.key_lines.clone() }
}

fn optional_string(r: &mut Reader<'_>, map: &Mapping<'_>, key: &str) -> Option<String> {
    map.get(key).and_then(|f| r.string(f, key))
}

fn read_origin(r: &mut Reader<'_>, map: &Mapping<'_>) -> DefinitionOrigin {
    let Some(f) = map.get("origin") else {
        return DefinitionOrigin::Manual;
    };
    match r.one_of(f, "origin", &["manual", "suggested", "dbt_import"]).as_deref() {
        Some("suggested") => DefinitionOrigin::Suggested,
        Some("dbt_import") => {
            r.error(f.line, "origin", "`origin: dbt_import` is reserved for `schemabrain import dbt`; use manual");
            DefinitionOrigin::Manual
        }
        _ => DefinitionOrigin::Manual,
    }
}

fn read_entity(r: &mut Reader<'_>, doc: &Node) -> Option<Entity> {
    let map = r.mapping(doc, "", ENTITY_KEYS, &["version", "name", "binding", "identity"])?;
    r.version(&map);
    let name = map.get("name").and_then(|f| r.identifier(f, "name"));
    let table = map.get("binding").and_then(|f| read_binding(r, f));
    let identity = map.get("identity").and_then(|f| read_identity(r, f));
    let origin = read_origin(r, &map);
    let description = optional_string(r, &map, "description");
    let group = optional_string(r, &map, "group");
    let columns = map.get("columns").map(|f| read_columns(r, f)).unwrap_or_default();
    Some(Entity {
        name: name?,
        description,
        table: table?,
        identity: identity?,
        origin,
        group,
        columns,
        columns_from_catalog: false,
        defined_at: origin_at(r, &map),
    })
}

fn read_binding(r: &mut Reader<'_>, field: Field<'_>) -> Option<TableRef> {
    let map = r.mapping(field.node, "binding", &["single_table", "multi_table"], &[])?;
    if let Some(f) = map.get("multi_table") {
        r.error(f.line, "binding.multi_table", "multi-table entities are not supported; bind one table with single_table");
        return None;
    }
    let Some(f) = map.get("single_table") else {
        r.error(map.line, "binding.single_table", "missing required key `single_table`");
        return None;
    };
    let s = r.string(f, "binding.single_table")?;
    let parts: Vec<&str> = s.split('.').collect();
    match parts.as_slice() {
        [schema, table] if is_identifier(schema) && is_identifier(table) => {
            Some(TableRef { schema: schema.to_string(), table: table.to_string() })
        }
        _ => {
            r.error(f.line, "binding.single_table", format!("`{s}` must be `schema.table`, e.g. `main.orders`"));
            None
        }
    }
}

fn read_identity(r: &mut Reader<'_>, field: Field<'_>) -> Option<Vec<String>> {
    if matches!(field.node.data, saphyr::YamlDataOwned::Sequence(_)) {
        let items = r.list(field, "identity")?;
        if items.is_empty() {
            r.error(field.line, "identity", "a composite identity needs at least one column");
            return None;
        }
        let cols: Vec<Option<String>> = items.into_iter().map(|(p, f)| r.identifier(f, &p)).collect();
        return cols.into_iter().collect();
    }
    r.identifier(field, "identity").map(|c| vec![c])
}

fn read_columns(r: &mut Reader<'_>, field: Field<'_>) -> Vec<Column> {
    let mut out: Vec<Column> = Vec::new();
    for (path, item) in r.list(field, "columns").unwrap_or_default() {
        let Some(map) = r.mapping(item.node, &path, &["name", "type", "description"], &["name"]) else {
            continue;
        };
        let Some(name) = map.get("name").and_then(|f| r.identifier(f, &map.key_path("name"))) else {
            continue;
        };
        if out.iter().any(|c| c.name == name) {
            r.error(map.line, &map.key_path("name"), format!("column `{name}` is declared twice"));
            continue;
        }
        let data_type = map.get("type").and_then(|f| r.string(f, &map.key_path("type")));
        let description = map.get("description").and_then(|f| r.string(f, &map.key_path("description")));
        out.push(Column { name, data_type, description, nullable: None });
    }
    out
}

fn read_join(r: &mut Reader<'_>, doc: &Node) -> Option<Join> {
    let map = r.mapping(doc, "", JOIN_KEYS, &["version", "name", "source_entity", "target_entity", "on"])?;
    r.version(&map);
    let name = map.get("name").and_then(|f| r.identifier(f, "name"));
    let source = map.get("source_entity").and_then(|f| r.identifier(f, "source_entity"));
    let target = map.get("target_entity").and_then(|f| r.identifier(f, "target_entity"));
    let on = map.get("on").and_then(|f| read_on(r, f));
    let cardinality = map
        .get("cardinality")
        .and_then(|f| r.one_of(f, "cardinality", &Cardinality::ALL))
        .and_then(|s| Cardinality::parse(&s));
    let origin = read_origin(r, &map);
    let description = optional_string(r, &map, "description");
    let (name, source_entity, target_entity) = (name?, source?, target?);
    if source_entity == target_entity {
        r.error(
            map.line,
            "target_entity",
            format!("self-joins are not supported (`{source_entity}` to itself); define a second entity on the same table"),
        );
        return None;
    }
    Some(Join {
        name,
        description,
        source_entity,
        target_entity,
        on: on?,
        cardinality,
        origin,
        defined_at: origin_at(r, &map),
    })
}

fn read_on(r: &mut Reader<'_>, field: Field<'_>) -> Option<Vec<JoinKey>> {
    let items = r.list(field, "on")?;
    if items.is_empty() {
        r.error(field.line, "on", "`on` needs at least one {source, target} pair");
        return None;
    }
    let mut keys = Vec::new();
    let mut ok = true;
    for (path, item) in items {
        let Some(m) = r.mapping(item.node, &path, &["source", "target"], &["source", "target"]) else {
            ok = false;
            continue;
        };
        let s = m.get("source").and_then(|f| r.identifier(f, &m.key_path("source")));
        let t = m.get("target").and_then(|f| r.identifier(f, &m.key_path("target")));
        match (s, t) {
            (Some(source), Some(target)) => keys.push(JoinKey { source, target }),
            _ => ok = false,
        }
    }
    ok.then_some(keys)
}

fn read_metric(r: &mut Reader<'_>, doc: &Node) -> Option<Metric> {
    let map = r.mapping(doc, "", METRIC_KEYS, &["version", "name", "entity", "measure"])?;
    r.version(&map);
    let name = map.get("name").and_then(|f| r.identifier(f, "name"));
    let entity = map.get("entity").and_then(|f| r.identifier(f, "entity"));
    let measure = map.get("measure").and_then(|f| read_measure(r, f));
    let time_dimension = match map.get("time_dimension") {
        Some(f) => Some(read_column_ref(r, f, "time_dimension")?),
        None => None,
    };
    let time_grains = match map.get("time_grains") {
        Some(f) => read_grains(r, f)?,
        None => Vec::new(),
    };
    if time_dimension.is_some() != map.has("time_grains") {
        let key = if time_dimension.is_some() { "time_grains" } else { "time_dimension" };
        r.error(map.line, key, "set `time_dimension` and `time_grains` together, or neither");
    }
    let filters = match map.get("filter") {
        Some(f) => read_filters(r, f)?,
        None => Vec::new(),
    };
    let origin = read_origin(r, &map);
    let description = optional_string(r, &map, "description");
    Some(Metric {
        name: name?,
        description,
        entity: entity?,
        measure: measure?,
        time_dimension,
        time_grains,
        filters,
        origin,
        defined_at: origin_at(r, &map),
    })
}

fn read_measure(r: &mut Reader<'_>, field: Field<'_>) -> Option<Measure> {
    let map = r.mapping(field.node, "measure", &["agg", "column", "expression"], &["agg"])?;
    let agg = map
        .get("agg")
        .and_then(|f| r.one_of(f, "measure.agg", &Aggregation::ALL))
        .and_then(|s| Aggregation::parse(&s));
    let operand = match (map.get("column"), map.get("expression")) {
        (Some(f), None) => r.identifier(f, "measure.column").map(MeasureOperand::Column),
        (None, Some(f)) => {
            let text = r.string(f, "measure.expression")?;
            match MeasureExpr::parse(&text) {
                Ok(e) => Some(MeasureOperand::Expression(e)),
                Err(msg) => {
                    r.error(f.line, "measure.expression", format!("invalid expression `{text}`: {msg}"));
                    None
                }
            }
        }
        (Some(_), Some(f)) => {
            r.error(f.line, "measure", "give `column` or `expression`, not both");
            None
        }
        (None, None) => {
            r.error(map.line, "measure.column", "a measure needs `column` or `expression`");
            None
        }
    };
    Some(Measure { agg: agg?, operand: operand? })
}

fn read_column_ref(r: &mut Reader<'_>, field: Field<'_>, path: &str) -> Option<ColumnRef> {
    let s = r.string(field, path)?;
    let parsed = ColumnRef::parse(&s);
    if parsed.is_none() {
        r.error(field.line, path, format!("`{s}` must be `entity.column`, e.g. `order.ordered_at`"));
    }
    parsed
}

fn read_grains(r: &mut Reader<'_>, field: Field<'_>) -> Option<Vec<Grain>> {
    let items = r.list(field, "time_grains")?;
    let names = Grain::names();
    let mut grains = Vec::new();
    let mut ok = true;
    for (path, item) in items {
        match r.one_of(item, &path, &names).and_then(|s| Grain::parse(&s)) {
            Some(g) if grains.contains(&g) => {
                r.error(item.line, &path, format!("grain `{}` is listed twice", g.as_str()));
                ok = false;
            }
            Some(g) => grains.push(g),
            None => ok = false,
        }
    }
    if ok && grains.is_empty() {
        r.error(field.line, "time_grains", "list at least one grain");
        ok = false;
    }
    grains.sort();
    ok.then_some(grains)
}

fn read_filters(r: &mut Reader<'_>, field: Field<'_>) -> Option<Vec<FilterSpec>> {
    let mut out = Vec::new();
    let mut ok = true;
    for (path, item) in r.list(field, "filter")? {
        match read_filter(r, item, &path) {
            Some(f) => out.push(f),
            None => ok = false,
        }
    }
    ok.then_some(out)
}

fn read_filter(r: &mut Reader<'_>, item: Field<'_>, path: &str) -> Option<FilterSpec> {
    let m = r.mapping(item.node, path, &["column", "op", "value"], &["column", "op"])?;
    let column = m.get("column").and_then(|f| read_column_ref(r, f, &m.key_path("column")));
    let op = m.get("op").and_then(|f| r.one_of(f, &m.key_path("op"), &FilterOp::ALL)).and_then(|s| FilterOp::parse(&s))?;
    let value_path = m.key_path("value");
    let values = match (op.arity(), m.get("value")) {
        (OpArity::None, None) => Vec::new(),
        (OpArity::None, Some(f)) => {
            r.error(f.line, &value_path, format!("`{}` takes no value", op.as_str()));
            return None;
        }
        (_, None) => {
            r.error(m.line, &value_path, format!("`{}` needs a value", op.as_str()));
            return None;
        }
        (OpArity::Scalar, Some(f)) => vec![r.literal(f, &value_path)?],
        (OpArity::List, Some(f)) => {
            let items = r.list(f, &value_path)?;
            if items.is_empty() {
                r.error(f.line, &value_path, format!("`{}` needs a non-empty list", op.as_str()));
                return None;
            }
            let vals: Option<Vec<Literal>> = items.into_iter().map(|(p, f)| r.literal(f, &p)).collect();
            vals?
        }
    };
    Some(FilterSpec { column: column?, op, values })
}

fn read_categories(r: &mut Reader<'_>, field: Field<'_>, path: &str) -> Option<Vec<String>> {
    let items = r.list(field, path)?;
    let cats: Option<Vec<String>> = items.into_iter().map(|(p, f)| r.one_of(f, &p, &PII_CATEGORIES)).collect();
    cats
}

fn read_policy(r: &mut Reader<'_>, doc: &Node) -> Option<PiiPolicy> {
    let map = r.mapping(doc, "", POLICY_KEYS, &["version"])?;
    r.version(&map);
    let description = optional_string(r, &map, "description");
    let block = map.get("block").and_then(|f| read_categories(r, f, "block")).unwrap_or_default();
    let mut column_overrides = BTreeMap::new();
    if let Some(f) = map.get("column_overrides") {
        if let saphyr::YamlDataOwned::Mapping(entries) = &f.node.data {
            for (k, v) in entries.iter() {
                let key_field = Field { node: k, line: super::yaml::line_of(k) };
                let Some(col) = r.string(key_field, "column_overrides") else { continue };
                let path = format!("column_overrides.{col}");
                let parts: Vec<&str> = col.split('.').collect();
                if parts.len() != 3 || !parts.iter().all(|p| is_identifier(p)) {
                    r.error(key_field.line, &path, format!("`{col}` must be `schema.table.column`"));
                    continue;
                }
                let Some(m) = r.mapping(v, &path, &["sensitivity", "categories"], &["sensitivity"]) else {
                    continue;
                };
                let sensitivity = m.get("sensitivity").and_then(|f| r.one_of(f, &m.key_path("sensitivity"), &SENSITIVITIES));
                let categories = match m.get("categories") {
                    Some(f) => read_categories(r, f, &m.key_path("categories")),
                    None => Some(Vec::new()),
                };
                if let (Some(sensitivity), Some(categories)) = (sensitivity, categories) {
                    column_overrides.insert(col, ColumnTag { sensitivity, categories });
                }
            }
        } else {
            r.error(f.line, "column_overrides", "expected a mapping of `schema.table.column` to {sensitivity, categories}");
        }
    }
    Some(PiiPolicy { description, block, column_overrides, defined_at: Some(origin_at(r, &map)) })
}

fn read_settings(r: &mut Reader<'_>, doc: &Node) -> Option<Settings> {
    let map = r.mapping(doc, "", SETTINGS_KEYS, &["version"])?;
    r.version(&map);
    let mut s = Settings {
        name: map.get("name").and_then(|f| r.identifier(f, "name")),
        source: optional_string(r, &map, "source"),
        dialect: optional_string(r, &map, "dialect"),
        ..Settings::default()
    };
    let mut bounded = |key: &str, lo: i64, hi: i64| -> Option<i64> {
        let f = map.get(key)?;
        let v = r.integer(f, key)?;
        if (lo..=hi).contains(&v) {
            Some(v)
        } else {
            r.error(f.line, key, format!("`{key}` must be between {lo} and {hi}, found {v}"));
            None
        }
    };
    if let Some(v) = bounded("default_limit", 1, 10_000) {
        s.default_limit = v as u32;
    }
    if let Some(v) = bounded("max_rows", 1, 1_000_000) {
        s.max_rows = v as u32;
    }
    if let Some(v) = bounded("timeout_ms", 1, 3_600_000) {
        s.timeout_ms = v as u64;
    }
    Some(s)
}
