//! Reading a plain dbt project's models and sources: their relations,
//! descriptions (docs blocks rendered), columns, data tests (`unique`,
//! `not_null`, `relationships`, `accepted_values`,
//! `dbt_utils.unique_combination_of_columns`), `primary_key` constraints,
//! PII declarations in `meta` or `tags`, materializations (ephemeral
//! models have no relation) and which nodes other models' SQL reads
//! (`ref`, `source`). From the project's YAML, SQL and Markdown, or from
//! `target/manifest.json` (`manifest`), into one shape.
//!
//! Architecture invariant: reads the texts it is given; knows dbt's
//! shapes, not our grammar (`map` decides).

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value as Json;

use super::super::{arr, s};

/// A model or a source table.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Node {
    /// The model's name, or the source table's name.
    pub name: String,
    /// For a source table, its source's name.
    pub source: Option<String>,
    pub schema: String,
    pub table: String,
    pub description: Option<String>,
    /// `file:line` of its YAML entry (or its SQL file, or the manifest).
    pub at: String,
    /// Ephemeral (a CTE inlined into its readers: no relation to bind).
    pub ephemeral: bool,
    /// Declared in YAML (described, tested) rather than only found as SQL.
    pub declared: bool,
    /// Read by another model's SQL (`ref` or `source`).
    pub referenced: bool,
    /// The project's time spine (`time_spine:` on the model, or dbt's
    /// `metricflow_time_spine`): a calendar, not an entity.
    pub time_spine: bool,
    pub columns: Vec<NodeColumn>,
    /// `dbt_utils.unique_combination_of_columns` tests, with where they are.
    pub unique_combinations: Vec<(Vec<String>, String)>,
    /// A model-level `primary_key` constraint's columns, with where it is.
    pub primary_key: Option<(Vec<String>, String)>,
}

impl Node {
    pub fn is_source(&self) -> bool {
        self.source.is_some()
    }

    /// What a `relationships` test names to point at this node:
    /// `source('jaffle', 'raw_orders')` or `ref('customers')`.
    pub fn target(&self) -> Target {
        match &self.source {
            Some(src) => Target::Source(src.clone(), self.name.clone()),
            None => Target::Model(self.name.clone()),
        }
    }

    /// `model customers` or `source jaffle.raw_orders`.
    pub fn label(&self) -> String {
        match &self.source {
            Some(src) => format!("source {src}.{}", self.name),
            None => format!("model {}", self.name),
        }
    }
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct NodeColumn {
    pub name: String,
    pub description: Option<String>,
    /// `data_type` when the YAML or the manifest declares one.
    pub data_type: Option<String>,
    pub at: String,
    pub unique: bool,
    pub not_null: bool,
    /// A `primary_key` constraint on the column.
    pub primary_key: bool,
    pub relationships: Vec<Relationship>,
    /// `accepted_values` of the column, in the test's order.
    pub accepted_values: Vec<String>,
    /// The project says the column is personal data (`meta: {contains_pii:
    /// true}`, `meta: {pii: true}`, `tags: [pii]`, or "PII" in its
    /// description), with the words that said so.
    pub pii: Option<String>,
}

/// A `relationships` test: the column's values are found in `field` of `to`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relationship {
    pub to: Target,
    pub field: String,
    pub at: String,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Target {
    Model(String),
    Source(String, String),
}

impl std::fmt::Display for Target {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Model(m) => write!(f, "ref('{m}')"),
            Target::Source(s, t) => write!(f, "source('{s}', '{t}')"),
        }
    }
}

impl Target {
    /// `ref('customers')`, `source('jaffle', 'raw_orders')`.
    pub fn parse(text: &str) -> Option<Target> {
        let t = text.trim();
        let t = t.strip_prefix("{{").and_then(|x| x.strip_suffix("}}")).map(str::trim).unwrap_or(t);
        let (func, rest) = t.split_once('(')?;
        let args: Vec<String> = rest
            .trim_end()
            .strip_suffix(')')?
            .split(',')
            .map(|a| a.trim().trim_matches(|c| c == '\'' || c == '"').to_string())
            .filter(|a| !a.is_empty() && !a.contains('='))
            .collect();
        match (func.trim(), args.as_slice()) {
            // `ref('package', 'model')`: the model is the last argument.
            ("ref", [.., model]) => Some(Target::Model(model.clone())),
            ("source", [src, table]) => Some(Target::Source(src.clone(), table.clone())),
            _ => None,
        }
    }
}

/// A model's SQL file: its name, its path relative to the project and its text.
pub struct SqlFile {
    pub name: String,
    pub rel: String,
    pub text: String,
}

/// What a project's files give; `relation` says where a model lives
/// (`project::Relations`), `materialized` its folder's materialization
/// from `dbt_project.yml`.
pub struct Files<'a> {
    pub yaml: &'a [(String, Json)],
    pub sql: &'a [SqlFile],
    pub markdown: &'a [(String, String)],
    pub relation: &'a dyn Fn(&str) -> (String, String),
    pub materialized: &'a dyn Fn(&str) -> Option<String>,
}

/// `{% docs name %} ... {% enddocs %}` blocks of Markdown files.
pub fn docs_blocks(markdown: &[(String, String)]) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    for (_, text) in markdown {
        // The open block's name and where its text starts.
        let mut open: Option<(String, usize)> = None;
        let mut at = 0;
        while let Some(start) = text.get(at..).and_then(|r| r.find("{%")).map(|i| at + i) {
            let Some(close) = text.get(start..).and_then(|r| r.find("%}")).map(|e| start + e) else { break };
            let tag = text.get(start + 2..close).unwrap_or("").trim_matches(|c: char| c == '-' || c.is_whitespace());
            if let Some(name) = tag.strip_prefix("docs ").map(str::trim) {
                open = Some((name.to_string(), close + 2));
            } else if tag == "enddocs" {
                if let Some((name, from)) = open.take() {
                    out.insert(name, text.get(from..start).unwrap_or("").trim().to_string());
                }
            }
            at = close + 2;
        }
    }
    out
}

/// A description with its `{{ doc('name') }}` references replaced by the
/// docs blocks; an unknown block stays as written.
pub fn render_docs(text: &str, docs: &BTreeMap<String, String>) -> String {
    // `doc('name')` or `doc('package', 'name')`: the block is the last argument.
    let rendered = crate::dbt::project::render_calls(text, "doc", |args| Ok(args.last().and_then(|n| docs.get(n)).cloned()));
    rendered.unwrap_or_else(|_| text.to_string()).trim().to_string()
}

/// A test's name and its arguments: `unique`, `{relationships: {to,
/// field}}`, dbt 1.10's `{relationships: {arguments: {to, field}}}`, or
/// `{test_name: ..., ...}` forms; `None` for a shape we do not read.
fn test_parts(t: &Json) -> Option<(String, Json)> {
    match t {
        Json::String(name) => Some((name.clone(), Json::Null)),
        Json::Object(o) => {
            if let Some(name) = o.get("test_name").and_then(Json::as_str) {
                return Some((name.to_string(), t.clone()));
            }
            let (name, body) = o.iter().find(|(k, _)| k.as_str() != "__line")?;
            let args = body.get("arguments").cloned().unwrap_or_else(|| body.clone());
            Some((name.clone(), args))
        }
        _ => None,
    }
}

/// The values of an `accepted_values` test, as text.
fn values_of(args: &Json) -> Vec<String> {
    arr(args, "values")
        .iter()
        .map(|v| match v {
            Json::String(s) => s.clone(),
            other => other.to_string(),
        })
        .collect()
}

fn is_true(v: Option<&Json>) -> bool {
    match v {
        Some(Json::Bool(b)) => *b,
        Some(Json::String(s)) => matches!(s.to_ascii_lowercase().as_str(), "true" | "yes"),
        _ => false,
    }
}

/// Whether a description says "PII" as a word.
fn says_pii(description: &str) -> bool {
    description.split(|c: char| !c.is_ascii_alphanumeric()).any(|w| w == "PII")
}

/// The PII declaration of a column, from its `meta` (or `config.meta`),
/// its tags, or its description.
fn pii_of(c: &Json, description: Option<&str>) -> Option<String> {
    let meta = c.get("meta").or_else(|| c.get("config").and_then(|x| x.get("meta")));
    for key in ["contains_pii", "pii", "is_pii", "sensitive"] {
        if is_true(meta.and_then(|m| m.get(key))) {
            return Some(format!("meta `{key}: true`"));
        }
    }
    let tags = c.get("tags").or_else(|| c.get("config").and_then(|x| x.get("tags")));
    if tags.and_then(Json::as_array).is_some_and(|t| t.iter().any(|x| x.as_str().is_some_and(|x| x.eq_ignore_ascii_case("pii")))) {
        return Some("tag `pii`".into());
    }
    description.filter(|d| says_pii(d)).map(|_| "its description says PII".to_string())
}

/// Applies one column-level test to `col`.
fn column_test(col: &mut NodeColumn, test: &Json, at: &str) {
    let Some((name, args)) = test_parts(test) else { return };
    let short = name.rsplit('.').next().unwrap_or(&name);
    match short {
        "unique" => col.unique = true,
        "not_null" => col.not_null = true,
        "accepted_values" => col.accepted_values = values_of(&args),
        "relationships" => {
            let to = s(&args, "to").and_then(Target::parse);
            if let (Some(to), Some(field)) = (to, s(&args, "field")) {
                col.relationships.push(Relationship { to, field: field.to_string(), at: at.to_string() });
            }
        }
        _ => {}
    }
}

fn tests_of(v: &Json) -> impl Iterator<Item = &Json> {
    arr(v, "tests").iter().chain(arr(v, "data_tests"))
}

fn columns_of(v: &Json, file: &str, docs: &BTreeMap<String, String>) -> Vec<NodeColumn> {
    arr(v, "columns")
        .iter()
        .filter_map(|c| {
            let name = s(c, "name")?.to_string();
            let at = format!("{file}:{}", c.get("__line").and_then(Json::as_u64).unwrap_or(1));
            let description = s(c, "description").map(|d| render_docs(d, docs)).filter(|d| !d.is_empty());
            let mut col = NodeColumn {
                pii: pii_of(c, description.as_deref()),
                name,
                description,
                data_type: s(c, "data_type").map(str::to_string),
                at: at.clone(),
                ..NodeColumn::default()
            };
            for t in tests_of(c) {
                column_test(&mut col, t, &at);
            }
            apply_constraints(&mut col, c);
            Some(col)
        })
        .collect()
}

/// A column's own `constraints` (YAML or manifest, the same shape): keys
/// and not-null it declares.
fn apply_constraints(col: &mut NodeColumn, c: &Json) {
    for k in arr(c, "constraints") {
        match s(k, "type") {
            Some("primary_key") => col.primary_key = true,
            Some("unique") => col.unique = true,
            Some("not_null") => col.not_null = true,
            _ => {}
        }
    }
}

/// Model-level tests and constraints: composite keys.
fn model_keys(v: &Json, node: &mut Node, at: &str) {
    for t in tests_of(v) {
        let Some((name, args)) = test_parts(t) else { continue };
        if name.rsplit('.').next() == Some("unique_combination_of_columns") {
            let cols: Vec<String> = arr(&args, "combination_of_columns").iter().filter_map(Json::as_str).map(str::to_string).collect();
            if !cols.is_empty() {
                node.unique_combinations.push((cols, at.to_string()));
            }
        }
    }
    for k in arr(v, "constraints") {
        if s(k, "type") == Some("primary_key") {
            let cols: Vec<String> = arr(k, "columns").iter().filter_map(Json::as_str).map(str::to_string).collect();
            if !cols.is_empty() {
                node.primary_key = Some((cols, at.to_string()));
            }
        }
    }
}

/// `materialized` in a SQL file's `{{ config(...) }}`.
fn sql_materialized(text: &str) -> Option<String> {
    let start = text.find("config(")?;
    let body = &text[start + 7..];
    let body = &body[..body.find(')').unwrap_or(body.len())];
    body.split(',').find_map(|kv| {
        let (k, v) = kv.split_once('=')?;
        (k.trim() == "materialized").then(|| v.trim().trim_matches(|c| c == '\'' || c == '"').to_string())
    })
}

/// Every `ref(...)` and `source(...)` in a model's SQL.
fn reads_of(sql: &str) -> Vec<Target> {
    let mut out = Vec::new();
    for func in ["ref", "source"] {
        let mut rest = sql;
        while let Some(i) = rest.find(func) {
            let after = &rest[i..];
            let boundary = i == 0 || !rest[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
            if let (true, Some(close)) = (boundary, after.find(')')) {
                if let Some(t) = Target::parse(&after[..=close]) {
                    out.push(t);
                }
            }
            rest = &rest[i + func.len()..];
        }
    }
    out
}

/// The models and sources of a project read from its files.
pub fn from_files(files: &Files<'_>) -> Vec<Node> {
    let docs = docs_blocks(files.markdown);
    let mut nodes: Vec<Node> = Vec::new();
    let mut index: BTreeMap<Target, usize> = BTreeMap::new();
    for f in files.sql {
        let (schema, table) = (files.relation)(&f.name);
        let materialized = sql_materialized(&f.text).or_else(|| (files.materialized)(&f.rel));
        index.insert(Target::Model(f.name.clone()), nodes.len());
        nodes.push(Node {
            time_spine: f.name == "metricflow_time_spine",
            name: f.name.clone(),
            schema,
            table,
            at: format!("{}:1", f.rel),
            ephemeral: materialized.as_deref() == Some("ephemeral"),
            ..Node::default()
        });
    }
    for (file, doc) in files.yaml {
        let at = |v: &Json| format!("{file}:{}", v.get("__line").and_then(Json::as_u64).unwrap_or(1));
        for m in arr(doc, "models") {
            let Some(name) = s(m, "name") else { continue };
            let key = Target::Model(name.to_string());
            let i = match index.get(&key) {
                Some(i) => *i,
                // Described but without SQL here (a model of a package): still a relation.
                None => {
                    let (schema, table) = (files.relation)(name);
                    index.insert(key, nodes.len());
                    nodes.push(Node { name: name.to_string(), schema, table, at: at(m), ..Node::default() });
                    nodes.len() - 1
                }
            };
            let Some(node) = nodes.get_mut(i) else { continue };
            node.declared = true;
            node.at = at(m);
            node.description = s(m, "description").map(|d| render_docs(d, &docs)).filter(|d| !d.is_empty());
            if m.get("config").and_then(|c| s(c, "materialized")) == Some("ephemeral") {
                node.ephemeral = true;
            }
            node.columns = columns_of(m, file, &docs);
            node.time_spine = m.get("time_spine").is_some() || name == "metricflow_time_spine";
            model_keys(m, node, &at(m));
        }
        for src in arr(doc, "sources") {
            let Some(src_name) = s(src, "name") else { continue };
            let schema = s(src, "schema").unwrap_or(src_name).to_string();
            for t in arr(src, "tables") {
                let Some(name) = s(t, "name") else { continue };
                let mut node = Node {
                    name: name.to_string(),
                    source: Some(src_name.to_string()),
                    schema: schema.clone(),
                    table: s(t, "identifier").unwrap_or(name).to_string(),
                    description: s(t, "description").map(|d| render_docs(d, &docs)).filter(|d| !d.is_empty()),
                    at: at(t),
                    declared: true,
                    columns: columns_of(t, file, &docs),
                    ..Node::default()
                };
                model_keys(t, &mut node, &at(t));
                index.insert(Target::Source(src_name.to_string(), name.to_string()), nodes.len());
                nodes.push(node);
            }
        }
    }
    let read: BTreeSet<Target> = files.sql.iter().flat_map(|f| reads_of(&f.text)).collect();
    for t in &read {
        if let Some(node) = index.get(t).and_then(|i| nodes.get_mut(*i)) {
            node.referenced = true;
        }
    }
    nodes
}

/// The models and sources of a `target/manifest.json` (`dbt parse` or any
/// run writes it): relations, descriptions and docs resolved, tests as
/// nodes of their own attached to their model. Items name the YAML file
/// that declared them (`patch_path`), without a line.
pub fn from_manifest(manifest: &Json, manifest_file: &str) -> Vec<Node> {
    let docs: BTreeMap<String, String> = manifest
        .get("docs")
        .and_then(Json::as_object)
        .map(|d| d.values().filter_map(|b| Some((s(b, "name")?.to_string(), s(b, "block_contents")?.trim().to_string()))).collect())
        .unwrap_or_default();
    let empty = serde_json::Map::new();
    let nodes_of = |key: &str| manifest.get(key).and_then(Json::as_object).unwrap_or(&empty);
    let mut nodes: Vec<Node> = Vec::new();
    let mut by_id: BTreeMap<String, usize> = BTreeMap::new();
    let mut by_target: BTreeMap<Target, String> = BTreeMap::new();
    let at_of = |n: &Json, id: &str| match s(n, "patch_path").or(s(n, "original_file_path")) {
        Some(p) => format!("{} ({manifest_file}: {id})", p.split_once("://").map_or(p, |(_, f)| f)),
        None => format!("{manifest_file}: {id}"),
    };
    let columns = |n: &Json, at: &str| -> Vec<NodeColumn> {
        let mut cols: Vec<NodeColumn> = n
            .get("columns")
            .and_then(Json::as_object)
            .map(|c| c.values().collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .filter_map(|c| {
                let description = s(c, "description").map(|d| render_docs(d, &docs)).filter(|d| !d.is_empty());
                let mut col = NodeColumn {
                    name: s(c, "name")?.to_string(),
                    pii: pii_of(c, description.as_deref()),
                    description,
                    data_type: s(c, "data_type").map(str::to_string),
                    at: at.to_string(),
                    ..NodeColumn::default()
                };
                apply_constraints(&mut col, c);
                Some(col)
            })
            .collect();
        cols.sort_by_key(|c| c.name.clone());
        cols
    };
    for (id, n) in nodes_of("nodes") {
        if s(n, "resource_type") != Some("model") {
            continue;
        }
        let name = s(n, "name").unwrap_or("?").to_string();
        let at = at_of(n, id);
        let mut node = Node {
            schema: s(n, "schema").unwrap_or("main").to_string(),
            table: s(n, "alias").unwrap_or(&name).to_string(),
            description: s(n, "description").map(|d| render_docs(d, &docs)).filter(|d| !d.is_empty()),
            ephemeral: n.get("config").and_then(|c| s(c, "materialized")) == Some("ephemeral"),
            declared: s(n, "patch_path").is_some(),
            time_spine: n.get("time_spine").is_some_and(|t| !t.is_null()) || name == "metricflow_time_spine",
            columns: columns(n, &at),
            at: at.clone(),
            name: name.clone(),
            ..Node::default()
        };
        model_keys(n, &mut node, &at);
        by_target.insert(Target::Model(name), id.clone());
        by_id.insert(id.clone(), nodes.len());
        nodes.push(node);
    }
    for (id, n) in nodes_of("sources") {
        let (Some(name), Some(src)) = (s(n, "name"), s(n, "source_name")) else { continue };
        let at = at_of(n, id);
        let node = Node {
            name: name.to_string(),
            source: Some(src.to_string()),
            schema: s(n, "schema").unwrap_or(src).to_string(),
            table: s(n, "identifier").unwrap_or(name).to_string(),
            description: s(n, "description").map(|d| render_docs(d, &docs)).filter(|d| !d.is_empty()),
            declared: true,
            columns: columns(n, &at),
            at,
            ..Node::default()
        };
        by_target.insert(Target::Source(src.to_string(), name.to_string()), id.clone());
        by_id.insert(id.clone(), nodes.len());
        nodes.push(node);
    }
    // Which nodes models read.
    for n in nodes_of("nodes").values().filter(|n| s(n, "resource_type") == Some("model")) {
        for dep in n.get("depends_on").map(|d| arr(d, "nodes")).unwrap_or(&[]).iter().filter_map(Json::as_str) {
            if let Some(node) = by_id.get(dep).and_then(|i| nodes.get_mut(*i)) {
                node.referenced = true;
            }
        }
    }
    // Tests, attached to their node (and column).
    for (id, t) in nodes_of("nodes") {
        let Some(meta) = t.get("test_metadata").filter(|_| s(t, "resource_type") == Some("test")) else { continue };
        let attached = s(t, "attached_node").map(str::to_string).or_else(|| {
            let kwargs = meta.get("kwargs")?;
            let model = s(kwargs, "model")?.replace("get_where_subquery(", "");
            let target = Target::parse(model.trim_end_matches([')', ' ', '}']).trim_start_matches(['{', ' ']))?;
            by_target.get(&target).cloned()
        });
        let Some(node) = attached.and_then(|a| by_id.get(&a)).and_then(|i| nodes.get_mut(*i)) else { continue };
        let name = s(meta, "name").unwrap_or("");
        let kwargs = meta.get("kwargs").cloned().unwrap_or(Json::Null);
        let at = format!("{} ({manifest_file}: {id})", node.at.split(" (").next().unwrap_or(""));
        if name == "unique_combination_of_columns" {
            let cols: Vec<String> = arr(&kwargs, "combination_of_columns").iter().filter_map(Json::as_str).map(str::to_string).collect();
            if !cols.is_empty() {
                node.unique_combinations.push((cols, at));
            }
            continue;
        }
        let Some(column) = s(t, "column_name").or(s(&kwargs, "column_name")) else { continue };
        let Some(col) = node.columns.iter_mut().find(|c| c.name == column) else { continue };
        let mut test = serde_json::Map::new();
        test.insert(name.to_string(), kwargs);
        let test = Json::Object(test);
        column_test(col, &test, &at);
    }
    nodes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn docs_blocks_render_by_their_last_argument_and_unknown_ones_stay() {
        let docs: BTreeMap<String, String> = [("orders".to_string(), "One row per order.".to_string())].into_iter().collect();
        assert_eq!(render_docs(" {{ doc('orders') }} ", &docs), "One row per order.");
        assert_eq!(render_docs("A: {{ doc(\"shop\", 'orders') }}.", &docs), "A: One row per order..");
        assert_eq!(render_docs("{{ doc('nope') }} and {{ ref('x') }}", &docs), "{{ doc('nope') }} and {{ ref('x') }}");
    }

    #[test]
    fn targets() {
        assert_eq!(Target::parse("ref('customers')"), Some(Target::Model("customers".into())));
        assert_eq!(Target::parse("{{ ref(\"pkg\", 'customers') }}"), Some(Target::Model("customers".into())));
        assert_eq!(Target::parse("source('jaffle', 'raw_orders')"), Some(Target::Source("jaffle".into(), "raw_orders".into())));
        assert_eq!(Target::parse("customers"), None);
    }

    #[test]
    fn docs_blocks_render() {
        let md = vec![("docs.md".to_string(), "{% docs orders_status %}\nOne of:\n| a |\n{% enddocs %}\n{% docs x %}y{% enddocs %}".to_string())];
        let docs = docs_blocks(&md);
        assert_eq!(docs.get("orders_status").map(String::as_str), Some("One of:\n| a |"));
        assert_eq!(render_docs("{{ doc(\"orders_status\") }}", &docs), "One of:\n| a |");
        assert_eq!(render_docs("See {{ doc('x') }}.", &docs), "See y.");
        assert_eq!(render_docs("{{ doc('missing') }}", &docs), "{{ doc('missing') }}");
    }

    #[test]
    fn reads_refs_and_sources() {
        let sql = "with a as (select * from {{ ref('stg_orders') }}), b as (select * from {{ source('raw', 'payments') }}) select * from a -- preferred";
        assert_eq!(reads_of(sql), vec![Target::Model("stg_orders".into()), Target::Source("raw".into(), "payments".into())]);
    }

    #[test]
    fn pii_declarations() {
        assert!(says_pii("Customer's first name. PII."));
        assert!(!says_pii("Pii-free, happily"));
        let c = serde_json::json!({"name": "email", "meta": {"contains_pii": true}});
        assert_eq!(pii_of(&c, None).as_deref(), Some("meta `contains_pii: true`"));
    }
}
