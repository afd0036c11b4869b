//! Reading a project directory into a `SemanticModel`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use super::yaml::{parse_documents, Field, Mapping, Node, Reader};
use super::*;

const ENTITY_KEYS: &[&str] = &["version", "name", "description", "binding", "identity", "origin", "provenance", "group", "columns", "column_aliases"];
const JOIN_KEYS: &[&str] =
    &["version", "name", "description", "source_entity", "target_entity", "on", "cardinality", "every_row_matches", "valid_between", "origin", "provenance"];
const METRIC_KEYS: &[&str] = &[
    "version",
    "name",
    "description",
    "type",
    "entity",
    "measure",
    "time_dimension",
    "time_grains",
    "filter",
    "non_additive",
    "fill_nulls_with",
    "join_to_timespine",
    "origin",
    "provenance",
];
const RATIO_KEYS: &[&str] = &["version", "name", "description", "type", "numerator", "denominator", "origin", "provenance"];
const DERIVED_KEYS: &[&str] = &["version", "name", "description", "type", "expression", "metrics", "periods", "origin", "provenance"];
const CUMULATIVE_KEYS: &[&str] =
    &["version", "name", "description", "type", "metric", "window", "grain_to_date", "period_agg", "origin", "provenance"];
const CONVERSION_KEYS: &[&str] =
    &["version", "name", "description", "type", "base", "conversion", "entity", "window", "calculation", "counts", "origin", "provenance"];
const METRIC_TYPES: &[&str] = &["simple", "ratio", "derived", "cumulative", "conversion"];
const POLICY_KEYS: &[&str] = &["version", "description", "block", "column_overrides", "inferred", "min_group_size", "quasi_identifiers", "masking"];
const SETTINGS_KEYS: &[&str] = &["version", "name", "source", "dialect", "default_limit", "max_rows", "timeout_ms", "time_spine"];

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

/// Loads a project into a checked model: every problem of every file at
/// once, or the model the planner accepts.
pub fn load_checked(dir: &Path) -> Result<CheckedModel, Diagnostics> {
    let (model, diags) = load_project(dir);
    if !diags.is_empty() {
        return Err(diags);
    }
    CheckedModel::new(model)
}

/// `load_checked` from files held in memory (tests, the embedded demo).
pub fn load_checked_from_files(files: &[(FileKind, PathBuf, String)]) -> Result<CheckedModel, Diagnostics> {
    let (model, diags) = load_project_from_files(files);
    if !diags.is_empty() {
        return Err(diags);
    }
    CheckedModel::new(model)
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
    for (kind, sub) in [(FileKind::Entity, "entities"), (FileKind::Join, "joins"), (FileKind::Metric, "metrics"), (FileKind::Query, "queries")] {
        for path in yaml_files(&dir.join(sub), &mut diags) {
            files.push((kind, path));
        }
    }
    report_misnamed_entries(&dir, &mut diags);
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
    Query,
    Policy,
    Settings,
}

impl FileKind {
    /// The kind of a file at `rel`, a path relative to the project
    /// directory, as `load_project` finds it there (`entities/x.yaml`,
    /// `pii_policy.yaml`, ...); `None` for a file the loader does not read.
    /// Importers that check their files in memory name them by it.
    pub fn of_project_path(rel: &str) -> Option<FileKind> {
        Some(match rel.split('/').next()? {
            "entities" => FileKind::Entity,
            "joins" => FileKind::Join,
            "metrics" => FileKind::Metric,
            "queries" => FileKind::Query,
            "pii_policy.yaml" => FileKind::Policy,
            "schemabrain.yaml" => FileKind::Settings,
            _ => return None,
        })
    }
}

/// Loads a project from file contents already in memory (used by `load_project`
/// and by tests and benches that build models without touching the disk).
pub fn load_project_from_files(files: &[(FileKind, PathBuf, String)]) -> (SemanticModel, Diagnostics) {
    let mut diags = Diagnostics::default();
    let mut model = SemanticModel::default();
    // Names whose definition failed to load: references to them are not
    // reported again as unknown (the first error is the one to fix).
    let mut broken: Vec<String> = Vec::new();
    // schemabrain.yaml first: a metric's `time_grains` may name the time
    // spine's custom grains (diagnostics are sorted at the end anyway).
    let settings_first = files.iter().filter(|f| f.0 == FileKind::Settings).chain(files.iter().filter(|f| f.0 != FileKind::Settings));
    for (kind, path, text) in settings_first {
        let errors_before = diags.len();
        let docs = parse_documents(path, text, &mut diags);
        if docs.is_empty() && diags.len() == errors_before {
            // An empty pii_policy.yaml would silently block only the floor.
            diags.push(Diagnostic::new(path, 1, "", "the file holds no YAML document"));
        }
        if docs.is_empty() {
            // Unreadable: its definition is probably named like the file.
            if let Some(stem) = path.file_stem().and_then(|s| s.to_str()) {
                broken.push(stem.to_string());
            }
        }
        let mut r = Reader { file: path.clone(), diags: &mut diags, key_lines: BTreeMap::new() };
        for doc in &docs {
            r.key_lines.clear();
            let inserted = match kind {
                FileKind::Entity => read_entity(&mut r, doc)
                    .map(|e| insert_unique(&mut r, &mut model.entities, e.name.clone(), e, "entity", |e| &e.defined_at)),
                FileKind::Join => read_join(&mut r, doc)
                    .map(|j| insert_unique(&mut r, &mut model.joins, j.name.clone(), j, "join", |j| &j.defined_at)),
                FileKind::Metric => match metric_type(&mut r, doc).as_deref() {
                    Some(t @ ("ratio" | "derived" | "cumulative" | "conversion")) => read_derived(&mut r, doc, t)
                        .map(|m| insert_unique(&mut r, &mut model.derived, m.name.clone(), m, "metric", |m| &m.defined_at)),
                    Some(_) => read_metric(&mut r, doc, &model.grains())
                        .map(|m| insert_unique(&mut r, &mut model.metrics, m.name.clone(), m, "metric", |m| &m.defined_at)),
                    // An unknown type is reported; the rest is still read for its own errors.
                    None => read_metric(&mut r, doc, &model.grains()).and(None),
                },
                FileKind::Query => read_query(&mut r, doc)
                    .map(|q| insert_unique(&mut r, &mut model.queries, q.name.clone(), q, "saved query", |q| &q.defined_at)),
                FileKind::Policy => read_policy(&mut r, doc).map(|p| model.pii_policy = p),
                FileKind::Settings => read_settings(&mut r, doc).map(|s| model.settings = s),
            };
            if inserted.is_none() {
                if let Some(name) = document_name(doc) {
                    broken.push(name);
                }
            }
        }
    }
    validate::check_skipping(&model, &broken, &mut diags);
    diags.sort();
    (model, diags)
}

const QUERY_KEYS: &[&str] =
    &["version", "name", "description", "metrics", "group_by", "time_grain", "filter", "where", "order_by", "limit", "origin", "provenance"];

fn strings(r: &mut Reader<'_>, map: &Mapping<'_>, key: &str) -> Vec<String> {
    let Some(f) = map.get(key) else { return Vec::new() };
    r.list(f, key).unwrap_or_default().into_iter().filter_map(|(p, item)| r.string(item, &p)).collect()
}

fn read_query(r: &mut Reader<'_>, doc: &Node) -> Option<SavedQuery> {
    let map = r.mapping(doc, "", QUERY_KEYS, &["version", "name", "metrics"])?;
    r.version(&map);
    let name = map.get("name").and_then(|f| r.identifier(f, "name"));
    let metrics: Vec<String> = match map.get("metrics") {
        Some(f) => r.list(f, "metrics").unwrap_or_default().into_iter().filter_map(|(p, item)| r.identifier(item, &p)).collect(),
        None => Vec::new(),
    };
    if metrics.is_empty() {
        r.error(map.line, "metrics", "a saved query names at least one metric");
    }
    let limit = map.get("limit").and_then(|f| {
        let n = r.integer(f, "limit")?;
        if (1..=10_000).contains(&n) {
            Some(n)
        } else {
            r.error(f.line, "limit", format!("`limit` must be between 1 and 10000, found {n}"));
            None
        }
    });
    let time_grain = map.get("time_grain").and_then(|f| r.one_of(f, "time_grain", &Grain::ALL.map(|g| g.as_str())));
    let filters = map.get("filter").and_then(|f| read_filters(r, f)).unwrap_or_default();
    Some(SavedQuery {
        name: name?,
        description: optional_string(r, &map, "description"),
        group_by: strings(r, &map, "group_by"),
        where_strings: strings(r, &map, "where"),
        order_by: strings(r, &map, "order_by"),
        metrics,
        time_grain,
        filters,
        limit,
        origin: read_origin(r, &map),
        provenance: read_provenance(r, &map),
        defined_at: origin_at(r, &map),
    })
}

/// A directory or file beside the definitions whose name is close to one we
/// read (`metric/`, `pii-policy.yaml`) is almost certainly a typo: say so,
/// rather than silently reading nothing.
fn report_misnamed_entries(dir: &Path, diags: &mut Diagnostics) {
    const KNOWN: [&str; 7] = ["entities", "joins", "metrics", "queries", "pii_policy.yaml", "schemabrain.yaml", "access_policy.yaml"];
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    let mut names: Vec<String> = entries.filter_map(|e| e.ok()).filter_map(|e| e.file_name().into_string().ok()).collect();
    names.sort();
    for name in names {
        if KNOWN.contains(&name.as_str()) || name.starts_with('.') {
            continue;
        }
        let stem = name.trim_end_matches(".yml").trim_end_matches(".yaml");
        let near: Vec<String> = close_matches(stem, KNOWN.map(|k| k.trim_end_matches(".yaml")))
            .into_iter()
            .filter(|k| strsim::levenshtein(stem, k) <= 2)
            .collect();
        if let Some(k) = near.first() {
            let want = KNOWN.iter().find(|x| x.starts_with(k.as_str())).copied().unwrap_or(k);
            diags.push(Diagnostic::new(dir.join(&name), 0, "", format!("`{name}` is not read; did you mean `{want}`?")));
        }
    }
}

/// The `name` of a document, if it has a readable one.
fn document_name(doc: &Node) -> Option<String> {
    let saphyr::YamlDataOwned::Mapping(map) = &doc.data else { return None };
    map.iter().find(|(k, _)| k.data.as_str() == Some("name")).and_then(|(_, v)| v.data.as_str().map(str::to_string))
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
                let is_yaml = matches!(p.extension().and_then(|x| x.to_str()), Some("yaml" | "yml"));
                let hidden = p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.starts_with('.'));
                if p.is_file() && is_yaml {
                    out.push(p);
                } else if p.is_file() && !hidden {
                    diags.push(Diagnostic::new(&p, 0, "", "this file is not read: definitions are `.yaml` or `.yml` files"));
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
    if f.node.data.as_str() == Some("dbt_import") {
        // Written by `schemabrain import dbt`, which always says where the
        // definition came from; a hand-written file cannot claim it bare.
        if imported_from_dbt(map) {
            return DefinitionOrigin::DbtImport;
        }
        r.error(
            f.line,
            "origin",
            "`origin: dbt_import` is reserved for `schemabrain import dbt` (with `provenance: {inference_method: dbt_import, source: ...}`); use manual",
        );
        return DefinitionOrigin::Manual;
    }
    match r.one_of(f, "origin", &["manual", "suggested"]).as_deref() {
        Some("suggested") => DefinitionOrigin::Suggested,
        _ => DefinitionOrigin::Manual,
    }
}

/// Whether the definition's provenance says `inference_method: dbt_import`
/// and names its source.
fn imported_from_dbt(map: &Mapping<'_>) -> bool {
    let Some(p) = map.get("provenance") else { return false };
    let saphyr::YamlDataOwned::Mapping(entries) = &p.node.data else { return false };
    let value = |key: &str| entries.iter().find(|(k, _)| k.data.as_str() == Some(key)).and_then(|(_, v)| v.data.as_str().map(str::to_string));
    value("inference_method").as_deref() == Some("dbt_import") && value("source").is_some_and(|s| !s.is_empty())
}

/// The optional `provenance` block: how a definition was derived, how far
/// it was checked, and why.
fn read_provenance(r: &mut Reader<'_>, map: &Mapping<'_>) -> Option<Provenance> {
    let field = map.get("provenance")?;
    let keys = ["inference_method", "validation_state", "confidence", "source", "evidence"];
    let p = r.mapping(field.node, "provenance", &keys, &[])?;
    let evidence = match p.get("evidence") {
        None => Vec::new(),
        Some(f) if f.node.data.as_str().is_some() => r.string(f, "provenance.evidence").into_iter().collect(),
        Some(f) => r
            .list(f, "provenance.evidence")
            .unwrap_or_default()
            .into_iter()
            .filter_map(|(path, item)| r.string(item, &path))
            .collect(),
    };
    Some(Provenance {
        inference_method: p.get("inference_method").and_then(|f| r.one_of(f, "provenance.inference_method", &INFERENCE_METHODS)),
        validation_state: p.get("validation_state").and_then(|f| r.one_of(f, "provenance.validation_state", &VALIDATION_STATES)),
        confidence: p.get("confidence").and_then(|f| r.one_of(f, "provenance.confidence", &CONFIDENCE_LEVELS)),
        source: p.get("source").and_then(|f| r.string(f, "provenance.source")),
        evidence,
    })
}

fn read_entity(r: &mut Reader<'_>, doc: &Node) -> Option<Entity> {
    let map = r.mapping(doc, "", ENTITY_KEYS, &["version", "name", "binding", "identity"])?;
    r.version(&map);
    let name = map.get("name").and_then(|f| r.identifier(f, "name"));
    let table = map.get("binding").and_then(|f| read_binding(r, f));
    let identity = map.get("identity").and_then(|f| read_identity(r, f));
    let origin = read_origin(r, &map);
    let provenance = read_provenance(r, &map);
    let description = optional_string(r, &map, "description");
    let group = optional_string(r, &map, "group");
    let (columns, accepted_values) = map.get("columns").map(|f| read_columns(r, f)).unwrap_or_default();
    let column_aliases = map.get("column_aliases").map(|f| read_column_aliases(r, f, &columns)).unwrap_or_default();
    Some(Entity {
        name: name?,
        description,
        table: table?,
        identity: identity?,
        origin,
        provenance: provenance.clone(),
        group,
        columns,
        columns_from_catalog: false,
        column_aliases,
        accepted_values,
        defined_at: origin_at(r, &map),
    })
}

/// `column_aliases: {alias: column}`: identifiers both; an alias may not be
/// a declared column's own name, and must name a declared column when the
/// entity declares any (the catalog checks the rest).
fn read_column_aliases(r: &mut Reader<'_>, f: Field<'_>, columns: &[Column]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let saphyr::YamlDataOwned::Mapping(entries) = &f.node.data else {
        r.error(f.line, "column_aliases", "expected a mapping of alias to column, e.g. `{customer_segment: segment}`");
        return out;
    };
    for (k, v) in entries.iter() {
        let key = Field { node: k, line: super::yaml::line_of(k) };
        let value = Field { node: v, line: super::yaml::line_of(v) };
        let (Some(alias), Some(column)) = (r.identifier(key, "column_aliases"), r.identifier(value, "column_aliases")) else { continue };
        let path = format!("column_aliases.{alias}");
        if columns.iter().any(|c| c.name == alias) {
            r.error(key.line, &path, format!("`{alias}` is a column of the entity; an alias names another column"));
        } else if columns.iter().any(|c| c.expr.is_none()) && !columns.iter().any(|c| c.name == column) {
            // (Computed columns alone say nothing of the table's columns.)
            r.error(value.line, &path, format!("`{column}` is not a declared column"));
        } else {
            out.insert(alias, column);
        }
    }
    out
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
        // `identity: []`: rows without a declared identity (a snapshot or
        // log table): a request that would fan its measures out is answered
        // `degraded/fan_out_join`, never deduplicated by a guessed key.
        let items = r.list(field, "identity")?;
        let cols: Vec<Option<String>> = items.into_iter().map(|(p, f)| r.identifier(f, &p)).collect();
        return cols.into_iter().collect();
    }
    if field.node.data.as_str().is_none() {
        r.error(field.line, "identity", "expected a column name, or a list of column names for a composite identity");
        return None;
    }
    r.identifier(field, "identity").map(|c| vec![c])
}

/// The declared columns, and the accepted values of those that list them.
fn read_columns(r: &mut Reader<'_>, field: Field<'_>) -> (Vec<Column>, BTreeMap<String, Vec<String>>) {
    let mut out: Vec<Column> = Vec::new();
    let mut accepted = BTreeMap::new();
    for (path, item) in r.list(field, "columns").unwrap_or_default() {
        let Some(map) = r.mapping(item.node, &path, &["name", "type", "description", "nullable", "expr", "accepted_values"], &["name"]) else {
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
        let nullable = map.get("nullable").and_then(|f| r.boolean(f, &map.key_path("nullable")));
        let expr = map.get("expr").and_then(|f| r.string(f, &map.key_path("expr")));
        if let Some(problem) = expr.as_deref().and_then(super::computed_expr_problem) {
            r.error(map.line, &map.key_path("expr"), format!("the expression of computed column `{name}` {problem}"));
            continue;
        }
        if let Some(f) = map.get("accepted_values") {
            let key = map.key_path("accepted_values");
            let items = r.list(f, &key).unwrap_or_default();
            if items.is_empty() && matches!(f.node.data, saphyr::YamlDataOwned::Sequence(_)) {
                r.error(f.line, &key, "expected a non-empty list of the values the column takes, e.g. `[placed, shipped]`");
            }
            let values: Vec<String> = items
                .into_iter()
                .filter_map(|(p, v)| r.literal(v, &p))
                .map(|l| match l {
                    Literal::Text(s) => s,
                    other => other.to_string(),
                })
                .collect();
            if !values.is_empty() {
                accepted.insert(name.clone(), values);
            }
        }
        out.push(Column { name, data_type, description, nullable, expr });
    }
    (out, accepted)
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
    let provenance = read_provenance(r, &map);
    let description = optional_string(r, &map, "description");
    let valid_between = map.get("valid_between").map(|f| read_validity(r, f));
    let every_row_matches = match map.get("every_row_matches").and_then(|f| r.boolean(f, "every_row_matches")) {
        Some(true) => Some(MatchEvidence::Declared),
        _ => None,
    };
    let (name, source_entity, target_entity, valid_between) = (name?, source?, target?, valid_between.map_or(Some(None), |v| v.map(Some))?);
    if source_entity == target_entity {
        r.error(
            map.get("target_entity").map_or(map.line, |f| f.line),
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
        every_row_matches,
        valid_between,
        origin,
        provenance: provenance.clone(),
        defined_at: origin_at(r, &map),
    })
}

/// `valid_between: {from: valid_from, to: valid_to}`: columns of the target.
fn read_validity(r: &mut Reader<'_>, field: Field<'_>) -> Option<Validity> {
    let m = r.mapping(field.node, "valid_between", &["from", "to"], &["from", "to"])?;
    let from = m.get("from").and_then(|f| r.identifier(f, "valid_between.from"));
    let to = m.get("to").and_then(|f| r.identifier(f, "valid_between.to"));
    Some(Validity { from: from?, to: to? })
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

/// The `type` of a metric document (`simple` when absent); `None` when it is
/// not one of the known types (already reported).
fn metric_type(r: &mut Reader<'_>, doc: &Node) -> Option<String> {
    let saphyr::YamlDataOwned::Mapping(map) = &doc.data else {
        return Some("simple".into());
    };
    for (k, v) in map.iter() {
        if k.data.as_str() == Some("type") {
            let field = Field { node: v, line: super::yaml::line_of(v) };
            return r.one_of(field, "type", METRIC_TYPES);
        }
    }
    Some("simple".into())
}

fn read_derived(r: &mut Reader<'_>, doc: &Node, kind: &str) -> Option<DerivedMetric> {
    let is_ratio = kind == "ratio";
    let (keys, required): (&[&str], &[&str]) = match kind {
        "ratio" => (RATIO_KEYS, &["version", "name", "type", "numerator", "denominator"]),
        "cumulative" => (CUMULATIVE_KEYS, &["version", "name", "type", "metric"]),
        "conversion" => (CONVERSION_KEYS, &["version", "name", "type", "base", "conversion", "entity"]),
        _ => (DERIVED_KEYS, &["version", "name", "type", "expression", "metrics"]),
    };
    let map = r.mapping(doc, "", keys, required)?;
    r.version(&map);
    let name = map.get("name").and_then(|f| r.identifier(f, "name"));
    let origin = read_origin(r, &map);
    let provenance = read_provenance(r, &map);
    let description = optional_string(r, &map, "description");
    if kind == "cumulative" {
        let input = map.get("metric").and_then(|f| read_input(r, f, "metric", Some("metric")));
        let window = read_cumulative_window(r, &map);
        let choices = [("first", Some(PeriodAgg::First)), ("last", Some(PeriodAgg::Last)), ("average", Some(PeriodAgg::Average))];
        let period_agg = read_choice(r, &map, "period_agg", &choices, None);
        return Some(DerivedMetric {
            period_agg: period_agg?,
            name: name?,
            description,
            kind: DerivedKind::Cumulative,
            inputs: vec![input?],
            expression: MeasureExpr::Column("metric".into()),
            cumulative: Some(window?),
            periods: Periods::default(),
            conversion: None,
            origin,
            provenance: provenance.clone(),
            defined_at: origin_at(r, &map),
        });
    }
    if kind == "conversion" {
        let base = map.get("base").and_then(|f| read_input(r, f, "base", Some("base")));
        let conversion = map.get("conversion").and_then(|f| read_input(r, f, "conversion", Some("conversion")));
        let spec = read_conversion(r, &map);
        return Some(DerivedMetric {
            name: name?,
            description,
            kind: DerivedKind::Conversion,
            inputs: vec![base?, conversion?],
            expression: MeasureExpr::Column("conversion".into()),
            cumulative: None,
            period_agg: None,
            periods: Periods::default(),
            conversion: Some(spec?),
            origin,
            provenance: provenance.clone(),
            defined_at: origin_at(r, &map),
        });
    }
    let periods =
        read_choice(r, &map, "periods", &[("unmoved_inputs", Periods::UnmovedInputs), ("any_input", Periods::AnyInput)], Periods::UnmovedInputs)?;
    let any_input = periods == Periods::AnyInput;
    let (kind, inputs, expression) = if is_ratio {
        let num = map.get("numerator").and_then(|f| read_input(r, f, "numerator", Some("numerator")));
        let den = map.get("denominator").and_then(|f| read_input(r, f, "denominator", Some("denominator")));
        let expr = MeasureExpr::Binary(
            ArithOp::Div,
            Box::new(MeasureExpr::Column("numerator".into())),
            Box::new(MeasureExpr::Column("denominator".into())),
        );
        (DerivedKind::Ratio, vec![num?, den?], expr)
    } else {
        let mut inputs = Vec::new();
        let mut ok = true;
        for (path, item) in map.get("metrics").and_then(|f| r.list(f, "metrics")).unwrap_or_default() {
            match read_input(r, item, &path, None) {
                Some(i) if inputs.iter().any(|x: &MetricInput| x.alias == i.alias) => {
                    r.error(item.line, &path, format!("alias `{}` is used twice; give each input its own `alias`", i.alias));
                    ok = false;
                }
                Some(i) => inputs.push(i),
                None => ok = false,
            }
        }
        let f = map.get("expression")?;
        let text = r.string(f, "expression")?;
        let expr = match MeasureExpr::parse(&text) {
            Ok(e) => e,
            Err(msg) => {
                r.error(f.line, "expression", format!("invalid expression `{}`: {msg}", super::echo(&text)));
                return None;
            }
        };
        let aliases: Vec<&str> = inputs.iter().map(|i| i.alias.as_str()).collect();
        for c in expr.columns() {
            if ok && !aliases.contains(&c) {
                let d = r
                    .diag(f.line, "expression", format!("`{c}` is not one of the inputs listed under `metrics`"))
                    .allowed(aliases.iter().copied())
                    .suggest(close_matches(c, aliases.iter().copied()));
                r.push(d);
                ok = false;
            }
        }
        if ok && !inputs.is_empty() && inputs.iter().all(|i| matches!(i.offset, Some(TimeOffset::ToGrain(_)))) && !any_input {
            r.error(
                map.get("metrics").map_or(map.line, |f| f.line),
                "metrics",
                "every input has `offset_to_grain`: keep at least one input without it, whose buckets the answer shows, or set `periods: any_input` (the time spine's buckets)",
            );
            ok = false;
        }
        if !ok {
            return None;
        }
        (DerivedKind::Derived, inputs, expr)
    };
    Some(DerivedMetric {
        name: name?,
        description,
        kind,
        inputs,
        expression,
        cumulative: None,
        period_agg: None,
        periods,
        conversion: None,
        origin,
        provenance: provenance.clone(),
        defined_at: origin_at(r, &map),
    })
}

/// `window: 7 days` (rolling), `grain_to_date: month`, or neither (all time).
fn read_cumulative_window(r: &mut Reader<'_>, map: &Mapping<'_>) -> Option<CumulativeWindow> {
    match (map.get("window"), map.get("grain_to_date")) {
        (Some(_), Some(f)) => {
            r.error(f.line, "grain_to_date", "give `window` (rolling) or `grain_to_date`, not both");
            None
        }
        (Some(f), None) => read_interval(r, f, "window").map(CumulativeWindow::Rolling),
        (None, Some(f)) => {
            r.one_of(f, "grain_to_date", &Grain::names()).and_then(|g| Grain::parse(&g)).map(CumulativeWindow::GrainToDate)
        }
        (None, None) => Some(CumulativeWindow::AllTime),
    }
}

fn read_interval(r: &mut Reader<'_>, field: Field<'_>, path: &str) -> Option<Interval> {
    let text = r.string(field, path)?;
    match Interval::parse(&text) {
        Ok(i) => Some(i),
        Err(msg) => {
            r.error(field.line, path, msg);
            None
        }
    }
}

/// `entity: {base: col | [cols], conversion: col | [cols]}`, `window`, `calculation`.
fn read_conversion(r: &mut Reader<'_>, map: &Mapping<'_>) -> Option<ConversionSpec> {
    let keys = map.get("entity").and_then(|f| {
        let m = r.mapping(f.node, "entity", &["base", "conversion"], &["base", "conversion"])?;
        let base = m.get("base").and_then(|f| read_column_list(r, f, "entity.base"));
        let conversion = m.get("conversion").and_then(|f| read_column_list(r, f, "entity.conversion"));
        let (base, conversion) = (base?, conversion?);
        if base.len() != conversion.len() {
            r.error(f.line, "entity", format!("`base` has {} columns and `conversion` {}: pair them one to one", base.len(), conversion.len()));
            return None;
        }
        Some((base, conversion))
    });
    let window = match map.get("window") {
        Some(f) => Some(read_interval(r, f, "window")?),
        None => None,
    };
    use ConversionCalculation::{ConversionRate, Conversions};
    let calculation = read_choice(r, map, "calculation", &[("conversion_rate", ConversionRate), ("conversions", Conversions)], ConversionRate)?;
    use ConversionCounts::{BaseRows, ConversionRows};
    let counts = read_choice(r, map, "counts", &[("base_rows", BaseRows), ("conversion_rows", ConversionRows)], BaseRows)?;
    let (base_key, conversion_key) = keys?;
    Some(ConversionSpec { base_key, conversion_key, window, calculation, counts })
}

/// `key: <one of the names>` as its value, `default` when the key is absent;
/// `None` (reported, with the names) when it is not one of them.
fn read_choice<T: Copy>(r: &mut Reader<'_>, map: &Mapping<'_>, key: &str, choices: &[(&str, T)], default: T) -> Option<T> {
    let Some(f) = map.get(key) else { return Some(default) };
    let names: Vec<&str> = choices.iter().map(|(n, _)| *n).collect();
    let chosen = r.one_of(f, key, &names)?;
    choices.iter().find(|(n, _)| *n == chosen).map(|(_, v)| *v)
}

/// A column name or a non-empty list of them.
fn read_column_list(r: &mut Reader<'_>, field: Field<'_>, path: &str) -> Option<Vec<String>> {
    if field.node.data.as_str().is_some() {
        return r.identifier(field, path).map(|c| vec![c]);
    }
    let items = r.list(field, path)?;
    if items.is_empty() {
        r.error(field.line, path, "list at least one column");
        return None;
    }
    // Read every item (each bad one is reported) before any failure counts.
    let read: Vec<Option<String>> = items.into_iter().map(|(p, f)| r.identifier(f, &p)).collect();
    read.into_iter().collect()
}

/// An input: a metric name, or `{metric|name, alias, filter}`.
fn read_input(r: &mut Reader<'_>, field: Field<'_>, path: &str, fixed_alias: Option<&str>) -> Option<MetricInput> {
    if let Some(name) = field.node.data.as_str() {
        let metric = r.identifier(field, path)?;
        debug_assert_eq!(metric, name);
        let alias = fixed_alias.map_or_else(|| metric.clone(), str::to_string);
        return Some(MetricInput { metric, alias, filters: Vec::new(), offset: None });
    }
    let map = r.mapping(field.node, path, &["metric", "name", "alias", "filter", "offset_window", "offset_to_grain"], &[])?;
    let metric = match (map.get("metric"), map.get("name")) {
        (Some(f), None) => r.identifier(f, &map.key_path("metric"))?,
        (None, Some(f)) => r.identifier(f, &map.key_path("name"))?,
        _ => {
            r.error(map.line, path, "give the input's metric as `metric` (or `name`), once");
            return None;
        }
    };
    let alias = match (fixed_alias, map.get("alias")) {
        (Some(a), None) => a.to_string(),
        (Some(_), Some(f)) => {
            r.error(f.line, &map.key_path("alias"), "a ratio's inputs are always `numerator` and `denominator`");
            return None;
        }
        (None, Some(f)) => r.identifier(f, &map.key_path("alias"))?,
        (None, None) => metric.clone(),
    };
    let filters = match map.get("filter") {
        Some(f) => read_filters(r, f)?,
        None => Vec::new(),
    };
    let offset = match (map.get("offset_window"), map.get("offset_to_grain")) {
        (None, None) => None,
        (Some(f), _) | (None, Some(f)) if fixed_alias.is_some() => {
            r.error(f.line, path, "time offsets go on the inputs of a `type: derived` metric");
            return None;
        }
        (Some(_), Some(f)) => {
            r.error(f.line, &map.key_path("offset_to_grain"), "give `offset_window` or `offset_to_grain`, not both");
            return None;
        }
        (Some(f), None) => Some(TimeOffset::Window(read_interval(r, f, &map.key_path("offset_window"))?)),
        (None, Some(f)) => {
            let g = r.one_of(f, &map.key_path("offset_to_grain"), &Grain::names())?;
            Grain::parse(&g).map(TimeOffset::ToGrain)
        }
    };
    Some(MetricInput { metric, alias, filters, offset })
}

/// `grains`: every grain a metric may list (the calendar ones and the
/// project's custom ones).
fn read_metric(r: &mut Reader<'_>, doc: &Node, grains: &[Grain]) -> Option<Metric> {
    let map = r.mapping(doc, "", METRIC_KEYS, &["version", "name", "entity", "measure"])?;
    r.version(&map);
    let name = map.get("name").and_then(|f| r.identifier(f, "name"));
    let entity = map.get("entity").and_then(|f| r.identifier(f, "entity"));
    let measure = map.get("measure").and_then(|f| read_measure(r, f));
    // Every part is read (and its errors reported) before any failure counts.
    let time_dimension = map.get("time_dimension").map(|f| read_column_ref(r, f, "time_dimension"));
    let time_grains = map.get("time_grains").map(|f| read_grains(r, f, grains));
    if map.has("time_dimension") != map.has("time_grains") {
        let (present, missing) = if map.has("time_dimension") { ("time_dimension", "time_grains") } else { ("time_grains", "time_dimension") };
        let line = map.get(present).map_or(map.line, |f| f.line);
        r.error(line, present, format!("`{present}` needs `{missing}` beside it: set both, or neither"));
    }
    let filters = map.get("filter").map(|f| read_conditions(r, f));
    let non_additive = map.get("non_additive").map(|f| read_non_additive(r, f));
    let fill_nulls_with = map.get("fill_nulls_with").map(|f| r.integer(f, "fill_nulls_with"));
    let join_to_timespine = map.get("join_to_timespine").map(|f| r.boolean(f, "join_to_timespine"));
    let origin = read_origin(r, &map);
    let provenance = read_provenance(r, &map);
    let description = optional_string(r, &map, "description");
    let (filters, any_of) = filters.unwrap_or_else(|| Some(Default::default()))?;
    Some(Metric {
        non_additive: non_additive.map_or(Some(None), |n| n.map(Some))?,
        name: name?,
        description,
        entity: entity?,
        measure: measure?,
        time_dimension: time_dimension.map_or(Some(None), |t| t.map(Some))?,
        time_grains: time_grains.map_or(Some(Vec::new()), |g| g)?,
        filters,
        any_of,
        fill_nulls_with: fill_nulls_with.map_or(Some(None), |f| f.map(Some))?,
        join_to_timespine: join_to_timespine.unwrap_or(Some(false))?,
        origin,
        provenance: provenance.clone(),
        defined_at: origin_at(r, &map),
    })
}

/// `non_additive: {dimension: entity.column, window: last | first, per: [entity.column]}`.
fn read_non_additive(r: &mut Reader<'_>, field: Field<'_>) -> Option<NonAdditive> {
    let m = r.mapping(field.node, "non_additive", &["dimension", "window", "per"], &["dimension"])?;
    let dimension = m.get("dimension").and_then(|f| read_column_ref(r, f, "non_additive.dimension"));
    let window = match m.get("window") {
        Some(f) => match r.one_of(f, "non_additive.window", &["last", "first"])?.as_str() {
            "first" => WindowChoice::First,
            _ => WindowChoice::Last,
        },
        None => WindowChoice::Last,
    };
    let mut per = Vec::new();
    if let Some(f) = m.get("per") {
        for (p, item) in r.list(f, "non_additive.per")? {
            per.push(read_column_ref(r, item, &p)?);
        }
    }
    // Both are checked against the anchor by `validate`.
    Some(NonAdditive { dimension: dimension?, window, per })
}

fn read_measure(r: &mut Reader<'_>, field: Field<'_>) -> Option<Measure> {
    let map = r.mapping(field.node, "measure", &["agg", "column", "expression", "percentile", "discrete"], &["agg"])?;
    let agg = map
        .get("agg")
        .and_then(|f| r.one_of(f, "measure.agg", &Aggregation::ALL))
        .and_then(|s| Aggregation::parse(&s));
    let operand = match (map.get("column"), map.get("expression")) {
        (Some(f), None) => match f.node.data.as_str() {
            Some(text) if text.contains(['+', '-', '*', '/', '(']) => {
                r.error(f.line, "measure.column", format!("`{text}` is arithmetic, not a column: write it as `expression: {text}`"));
                None
            }
            _ => r.identifier(f, "measure.column").map(MeasureOperand::Column),
        },
        (None, Some(f)) => {
            let text = r.string(f, "measure.expression")?;
            match MeasureExpr::parse(&text) {
                Ok(e) => Some(MeasureOperand::Expression(e)),
                Err(msg) => {
                    r.error(f.line, "measure.expression", format!("invalid expression `{}`: {msg}", super::echo(&text)));
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
    let agg = agg?;
    let percentile = match (agg, map.get("percentile")) {
        (Aggregation::Percentile, Some(f)) => {
            let p = match f.node.data.as_floating_point().or_else(|| f.node.data.as_integer().map(|i| i as f64)) {
                Some(p) => p,
                None => {
                    r.error(f.line, "measure.percentile", "expected a number between 0 and 1, e.g. 0.9");
                    return None;
                }
            };
            if !(p > 0.0 && p < 1.0) {
                r.error(f.line, "measure.percentile", format!("percentile must be strictly between 0 and 1, found {p}"));
                return None;
            }
            Some(p)
        }
        (Aggregation::Percentile, None) => {
            r.error(map.line, "measure.percentile", "`agg: percentile` needs `percentile`, e.g. 0.9");
            return None;
        }
        (_, Some(f)) => {
            r.error(f.line, "measure.percentile", "`percentile` goes with `agg: percentile` only");
            return None;
        }
        (_, None) => None,
    };
    let discrete = match map.get("discrete") {
        Some(f) if agg == Aggregation::Percentile => r.boolean(f, "measure.discrete")?,
        Some(f) => {
            r.error(f.line, "measure.discrete", "`discrete` goes with `agg: percentile` only");
            return None;
        }
        None => false,
    };
    Some(Measure { agg, operand: operand?, percentile, discrete })
}

fn read_column_ref(r: &mut Reader<'_>, field: Field<'_>, path: &str) -> Option<ColumnRef> {
    let s = r.string(field, path)?;
    let parsed = ColumnRef::parse(&s);
    if parsed.is_none() {
        r.error(field.line, path, format!("`{s}` must be `entity.column`, e.g. `customer.country`"));
    }
    parsed
}

fn read_grains(r: &mut Reader<'_>, field: Field<'_>, known: &[Grain]) -> Option<Vec<Grain>> {
    let items = r.list(field, "time_grains")?;
    let names: Vec<&str> = known.iter().map(|g| g.as_str()).collect();
    let mut grains = Vec::new();
    let mut ok = true;
    for (path, item) in items {
        match r.one_of(item, &path, &names).and_then(|s| known.iter().copied().find(|g| g.as_str() == s)) {
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

/// A metric's `filter`: filters ANDed, and among them `{any_of: [...]}` and
/// `{all_of: [...]}` items nesting filters (MetricFlow's OR).
fn read_conditions(r: &mut Reader<'_>, field: Field<'_>) -> Option<(Vec<FilterSpec>, Vec<Condition<FilterSpec>>)> {
    let (mut filters, mut any_of) = (Vec::new(), Vec::new());
    let mut ok = true;
    for (path, item) in r.list(field, "filter")? {
        match read_condition(r, item, &path) {
            Some(Condition::Atom(f)) => filters.push(f),
            Some(c) => any_of.push(c),
            None => ok = false,
        }
    }
    ok.then_some((filters, any_of))
}

fn read_condition(r: &mut Reader<'_>, item: Field<'_>, path: &str) -> Option<Condition<FilterSpec>> {
    let nested = match &item.node.data {
        saphyr::YamlDataOwned::Mapping(m) => m.keys().find_map(|k| k.data.as_str().filter(|k| *k == "any_of" || *k == "all_of").map(str::to_string)),
        _ => None,
    };
    let Some(kind) = nested else {
        return read_filter(r, item, path).map(Condition::Atom);
    };
    let m = r.mapping(item.node, path, &[kind.as_str()], &[kind.as_str()])?;
    let f = m.get(&kind)?;
    let items = r.list(f, &m.key_path(&kind))?;
    if items.len() < 2 {
        r.error(f.line, &m.key_path(&kind), format!("`{kind}` needs at least two filters"));
        return None;
    }
    let parts: Option<Vec<Condition<FilterSpec>>> = items.into_iter().map(|(p, f)| read_condition(r, f, &p)).collect();
    Some(if kind == "any_of" { Condition::Any(parts?) } else { Condition::All(parts?) })
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
        (OpArity::Scalar, Some(f)) if f.node.data.is_null() => {
            r.error(f.line, &value_path, format!("`{}` with a null value matches nothing; use `op: is_null` (or `not_null`)", op.as_str()));
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
    Some(FilterSpec { column: column?, op, values, at: path.to_string() })
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
    let column_overrides = map.get("column_overrides").map(|f| read_column_tags(r, f, "column_overrides")).unwrap_or_default();
    let inferred = map.get("inferred").map(|f| read_column_tags(r, f, "inferred")).unwrap_or_default();
    let min_group_size = map.get("min_group_size").and_then(|f| {
        let k = r.integer(f, "min_group_size")?;
        if (2..=1_000_000).contains(&k) {
            Some(k as u32)
        } else {
            r.error(f.line, "min_group_size", format!("`min_group_size` must be between 2 and 1000000, found {k}"));
            None
        }
    });
    // Every category the policy does not block may now be grouped and
    // filtered under the minimum group size: a list of the admitted ones
    // would silently admit more than its author meant, so it is an error
    // that says what to write instead.
    if let Some(f) = map.get("quasi_identifiers") {
        r.error(
            f.line,
            "quasi_identifiers",
            "`quasi_identifiers` is no longer read: every category the policy does not `block` may be grouped by or filtered on, with groups of fewer than `min_group_size` people withheld; add the categories to refuse to `block` and remove `quasi_identifiers`".to_string(),
        );
    }
    let masking = map.get("masking").map(|f| read_masking(r, f)).unwrap_or_default();
    Some(PiiPolicy { description, block, column_overrides, inferred, min_group_size, masking, defined_at: Some(origin_at(r, &map)), widened: Vec::new() })
}

/// `masking`: a mapping of a category or `schema.table.column` to a method.
fn read_masking(r: &mut Reader<'_>, f: Field<'_>) -> BTreeMap<String, MaskMethod> {
    let mut out = BTreeMap::new();
    let saphyr::YamlDataOwned::Mapping(entries) = &f.node.data else {
        r.error(f.line, "masking", format!("expected a mapping of a PII category or `schema.table.column` to one of {}", MaskMethod::ALL.join(", ")));
        return out;
    };
    for (k, v) in entries.iter() {
        let key_field = Field { node: k, line: super::yaml::line_of(k) };
        let Some(key) = r.string(key_field, "masking") else { continue };
        let path = format!("masking.{key}");
        let parts: Vec<&str> = key.split('.').collect();
        let column = parts.len() == 3 && parts.iter().all(|p| is_identifier(p));
        if !column && !PII_CATEGORIES.contains(&key.as_str()) {
            let near = crate::model::close_matches(&key, PII_CATEGORIES);
            let hint = near.first().map(|n| format!(" (did you mean `{n}`?)")).unwrap_or_default();
            r.error(key_field.line, &path, format!("`{}` is neither a PII category nor `schema.table.column`{hint}", echo(&key)));
            continue;
        }
        let value = Field { node: v, line: super::yaml::line_of(v) };
        let Some(method) = r.one_of(value, &path, &MaskMethod::ALL).and_then(|m| MaskMethod::parse(&m)) else { continue };
        if key == "credential" && method.shows_part() {
            r.error(value.line, &path, format!("a credential may only be masked by redact or hash; `{}` would show part of it", method.as_str()));
            continue;
        }
        out.insert(key, method);
    }
    out
}

/// A mapping of `schema.table.column` to `{sensitivity, categories, evidence}`.
fn read_column_tags(r: &mut Reader<'_>, f: Field<'_>, key: &str) -> BTreeMap<String, ColumnTag> {
    let mut out = BTreeMap::new();
    let saphyr::YamlDataOwned::Mapping(entries) = &f.node.data else {
        r.error(f.line, key, format!("expected a mapping of `schema.table.column` to {{sensitivity, categories}} under `{key}`"));
        return out;
    };
    for (k, v) in entries.iter() {
        let key_field = Field { node: k, line: super::yaml::line_of(k) };
        let Some(col) = r.string(key_field, key) else { continue };
        let path = format!("{key}.{col}");
        let parts: Vec<&str> = col.split('.').collect();
        if parts.len() != 3 || !parts.iter().all(|p| is_identifier(p)) {
            r.error(key_field.line, &path, format!("`{col}` must be `schema.table.column`"));
            continue;
        }
        let Some(m) = r.mapping(v, &path, &["sensitivity", "categories", "evidence"], &["sensitivity"]) else {
            continue;
        };
        let sensitivity = m.get("sensitivity").and_then(|f| r.one_of(f, &m.key_path("sensitivity"), &SENSITIVITIES));
        let categories = match m.get("categories") {
            Some(f) => read_categories(r, f, &m.key_path("categories")),
            None => Some(Vec::new()),
        };
        let evidence = m.get("evidence").and_then(|f| r.string(f, &m.key_path("evidence")));
        if let (Some(sensitivity), Some(categories)) = (sensitivity, categories) {
            out.insert(col, ColumnTag { sensitivity, categories, evidence });
        }
    }
    out
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
    s.time_spine = map.get("time_spine").and_then(|f| read_time_spine(r, f));
    Some(s)
}

/// `time_spine: {table: schema.table, column: date_day, custom_grains:
/// [{name: fiscal_year, column: fiscal_year}]}`.
fn read_time_spine(r: &mut Reader<'_>, field: Field<'_>) -> Option<TimeSpine> {
    let m = r.mapping(field.node, "time_spine", &["table", "column", "custom_grains"], &["table", "column"])?;
    let table = m.get("table").and_then(|f| {
        let text = r.string(f, "time_spine.table")?;
        match text.split('.').collect::<Vec<_>>().as_slice() {
            [schema, table] if is_identifier(schema) && is_identifier(table) => Some(TableRef { schema: schema.to_string(), table: table.to_string() }),
            _ => {
                r.error(f.line, "time_spine.table", format!("`{text}` must be `schema.table`, e.g. `main.metricflow_time_spine`"));
                None
            }
        }
    });
    let column = m.get("column").and_then(|f| r.identifier(f, "time_spine.column"));
    let (table, column) = (table?, column?);
    let mut custom_grains: Vec<&'static crate::model::CustomGrain> = Vec::new();
    let items = m.get("custom_grains").and_then(|f| r.list(f, "time_spine.custom_grains")).unwrap_or_default();
    for (path, item) in items {
        let Some(g) = r.mapping(item.node, &path, &["name", "column"], &["name"]) else { continue };
        let Some(name_field) = g.get("name") else { continue };
        let Some(name) = r.identifier(name_field, &format!("{path}.name")) else { continue };
        // Nor may it repeat another custom grain's.
        let clash = crate::model::CustomGrain::name_clash(&name).or_else(|| custom_grains.iter().any(|c| c.name == name).then_some("another custom grain has that name"));
        if let Some(why) = clash {
            r.error(name_field.line, &format!("{path}.name"), format!("`{name}` cannot name a custom grain: {why}"));
            continue;
        }
        // `column` defaults to the name, as dbt's `column_name` does.
        let col = match g.get("column") {
            Some(f) => match r.identifier(f, &format!("{path}.column")) {
                Some(c) => c,
                None => continue,
            },
            None => name.clone(),
        };
        custom_grains.push(crate::model::CustomGrain::intern(crate::model::CustomGrain { name, table: table.clone(), day: column.clone(), column: col }));
    }
    Some(TimeSpine { table, column, custom_grains })
}
