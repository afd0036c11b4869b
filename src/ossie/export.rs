//! A project → one Ossie `0.2.0.dev0` document (JSON). Ossie's own
//! constructs say what they can (datasets, keys, fields, relationships
//! with the many side first, one SQL aggregate per metric); the
//! `SCHEMABRAIN` extension of each item holds our definition's keys, so
//! `import` of the export restores the project exactly. Metrics Ossie's
//! SQL cannot say (time offsets, cumulative windows, conversions) get the
//! nearest aggregate and a note saying so; their extension is the truth.

use std::collections::BTreeMap;
use std::fmt;
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value as Json};
use sqlparser::ast::Expr;

use super::aggregate::qualify;
use super::{Extensions, EXPORT_VERSION, EXTENSIONS_FILE, VENDOR};
use crate::model::{Aggregation, Condition, DerivedKind, Diagnostics, FilterOp, FilterSpec, Literal, Metric, MeasureOperand, SemanticModel};

#[derive(Debug)]
pub enum ExportError {
    /// The project does not load: every problem.
    Load(Diagnostics),
    Read(String),
}

impl fmt::Display for ExportError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ExportError::Load(d) => write!(f, "the project does not load:\n{d}"),
            ExportError::Read(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for ExportError {}

/// Every document of the project's files of one kind, by name, as written
/// (without the reader's `__line`).
fn documents(dir: &Path, sub: &str) -> Result<BTreeMap<String, Map<String, Json>>, ExportError> {
    let mut out = BTreeMap::new();
    let Ok(entries) = std::fs::read_dir(dir.join(sub)) else { return Ok(out) };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for p in paths.iter().filter(|p| matches!(p.extension().and_then(|e| e.to_str()), Some("yaml" | "yml"))) {
        for d in single_file(p)? {
            if let Some(n) = d.get("name").and_then(Json::as_str) {
                out.insert(n.to_string(), d);
            }
        }
    }
    Ok(out)
}

fn single_file(p: &Path) -> Result<Vec<Map<String, Json>>, ExportError> {
    let text = std::fs::read_to_string(p).map_err(|e| ExportError::Read(format!("{}: {e}", p.display())))?;
    let docs = crate::model::yaml_documents_as_json(&text).map_err(|(l, m)| ExportError::Read(format!("{}:{l}: {m}", p.display())))?;
    Ok(docs.into_iter().filter_map(|d| match strip(d) {
        Json::Object(o) => Some(o),
        _ => None,
    }).collect())
}

fn strip(v: Json) -> Json {
    match v {
        Json::Object(o) => Json::Object(o.into_iter().filter(|(k, _)| k != "__line").map(|(k, v)| (k, strip(v))).collect()),
        Json::Array(a) => Json::Array(a.into_iter().map(strip).collect()),
        other => other,
    }
}

fn ours(data: Json) -> Json {
    json!({"vendor_name": VENDOR, "data": data.to_string()})
}

/// `doc` without the keys Ossie says natively.
fn without(doc: &Map<String, Json>, keys: &[&str]) -> Map<String, Json> {
    doc.iter().filter(|(k, _)| !keys.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect()
}

/// An engine type name as Ossie's portable data type.
fn datatype(ty: &str) -> &'static str {
    let t = ty.to_ascii_lowercase();
    let starts = |ps: &[&str]| ps.iter().any(|p| t.starts_with(p));
    if starts(&["timestamptz", "timestamp with time zone"]) {
        "DateTimeTz"
    } else if starts(&["timestamp", "datetime"]) {
        "DateTime"
    } else if starts(&["date"]) {
        "Date"
    } else if starts(&["time"]) {
        "Time"
    } else if starts(&["varchar", "text", "char", "string", "bpchar"]) {
        "String"
    } else if starts(&["decimal", "numeric"]) {
        "Decimal"
    } else if starts(&["double", "float", "real"]) {
        "Float"
    } else if starts(&["bool"]) {
        "Boolean"
    } else if starts(&["int", "bigint", "smallint", "tinyint", "hugeint", "ubigint", "uinteger", "usmallint", "utinyint"]) {
        "Integer"
    } else {
        "Opaque"
    }
}

fn expression(sql: &str) -> Json {
    json!({"dialects": [{"dialect": "ANSI_SQL", "expression": sql}]})
}

/// Writes the project in `dir` as an Ossie document.
pub fn export_project(dir: &Path) -> Result<Json, ExportError> {
    let dir = crate::model::resolve_project_dir(dir);
    let (mut model, diags) = crate::model::load_project(&dir);
    if !diags.is_empty() {
        return Err(ExportError::Load(diags));
    }
    if let Some(c) = crate::catalog::Catalog::load_snapshot(&dir).map_err(ExportError::Read)? {
        let d = crate::catalog::overlay(&mut model, &c);
        if !d.is_empty() {
            return Err(ExportError::Load(d));
        }
    }
    let kept: Extensions = std::fs::read_to_string(dir.join(EXTENSIONS_FILE)).ok().and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_default();
    let extra = |item: &str| -> Vec<Json> { kept.get(item).cloned().unwrap_or_default() };
    let entity_docs = documents(&dir, "entities")?;
    let join_docs = documents(&dir, "joins")?;
    let metric_docs = documents(&dir, "metrics")?;
    let query_docs = documents(&dir, "queries")?;
    let keys = KeyFields::plan(&model);
    let mut datasets = Vec::new();
    for (name, e) in &model.entities {
        let mut fields = Vec::new();
        for c in &e.columns {
            let mut f = Map::new();
            f.insert("name".into(), json!(c.name));
            f.insert("expression".into(), expression(c.expr.as_deref().unwrap_or(&c.name)));
            if let Some(t) = &c.data_type {
                let dt = datatype(t);
                f.insert("datatype".into(), json!(dt));
                f.insert("dimension".into(), json!({"is_time": matches!(dt, "Date" | "DateTime" | "DateTimeTz")}));
            }
            if let Some(d) = &c.description {
                f.insert("description".into(), json!(d));
            }
            let more = extra(&format!("field {name}.{}", c.name));
            if !more.is_empty() {
                f.insert("custom_extensions".into(), Json::Array(more));
            }
            fields.push(Json::Object(f));
        }
        // Another name for a column is a field reading that column.
        for (alias, real) in &e.column_aliases {
            fields.push(json!({"name": alias, "expression": expression(real), "description": format!("Another name for `{real}`.")}));
        }
        // Key fields last, so the import meets each real column first.
        for (field, column) in keys.fields.get(name.as_str()).into_iter().flatten() {
            fields.push(json!({
                "name": field,
                "expression": expression(column),
                "description": format!("The key `{column}` under the entity name `{field}`, so tools that name entities after key fields (dbt's) link the datasets."),
                "custom_extensions": [ours(json!({"key_field_of": column}))],
            }));
        }
        let mut d = Map::new();
        d.insert("name".into(), json!(name));
        d.insert("source".into(), json!(e.table.to_string()));
        if let Some(own) = keys.primary.get(name.as_str()) {
            d.insert("primary_key".into(), json!([own]));
        } else if !e.identity.is_empty() {
            d.insert("primary_key".into(), json!(e.identity));
        }
        if let Some(desc) = &e.description {
            d.insert("description".into(), json!(desc));
        }
        d.insert("fields".into(), Json::Array(fields));
        let mut exts = extra(&format!("dataset {name}"));
        if let Some(doc) = entity_docs.get(name) {
            exts.push(ours(json!({"definition": without(doc, &["version", "name", "description", "binding", "identity"])})));
        }
        d.insert("custom_extensions".into(), Json::Array(exts));
        datasets.push(Json::Object(d));
    }
    let mut relationships = Vec::new();
    for (name, j) in &model.joins {
        use crate::model::Cardinality as C;
        // Ossie's `from` is the many side: a one_to_many join is written the other way round.
        let flip = j.cardinality == Some(C::OneToMany);
        let (from, to) = if flip { (&j.target_entity, &j.source_entity) } else { (&j.source_entity, &j.target_entity) };
        let (fc, tc): (Vec<&str>, Vec<&str>) = match keys.relationships.get(name.as_str()) {
            Some(field) => (vec![field.as_str()], vec![field.as_str()]),
            None => (
                j.on.iter().map(|k| if flip { k.target.as_str() } else { k.source.as_str() }).collect(),
                j.on.iter().map(|k| if flip { k.source.as_str() } else { k.target.as_str() }).collect(),
            ),
        };
        let note = match j.cardinality {
            Some(C::ManyToOne | C::OneToMany) => format!("Each `{from}` row has at most one `{to}` row; walked from `{to}` to `{from}` rows repeat, and schemabrain aggregates each row once (deduplicated by identity), never inflated."),
            Some(C::OneToOne) => "One to one: no side repeats.".to_string(),
            Some(C::ManyToMany) | None => format!("Many to many{}: Ossie's from/to do not hold; both directions repeat rows, and schemabrain deduplicates by identity or reports the fan-out.", if j.cardinality.is_none() { " (undeclared)" } else { "" }),
        };
        let mut r = Map::new();
        r.insert("name".into(), json!(name));
        r.insert("from".into(), json!(from));
        r.insert("to".into(), json!(to));
        r.insert("from_columns".into(), json!(fc));
        r.insert("to_columns".into(), json!(tc));
        if let Some(desc) = &j.description {
            r.insert("ai_context".into(), json!({"instructions": desc}));
        }
        let mut exts = extra(&format!("relationship {name}"));
        if let Some(doc) = join_docs.get(name) {
            exts.push(ours(json!({"definition": without(doc, &["version", "name"]), "fan_out": note})));
        }
        r.insert("custom_extensions".into(), Json::Array(exts));
        relationships.push(Json::Object(r));
    }
    let mut metrics = Vec::new();
    for name in model.metric_names() {
        let (sql, exact) = metric_sql(&model, name);
        let mut m = Map::new();
        m.insert("name".into(), json!(name));
        m.insert("expression".into(), expression(&sql));
        let desc = model.metrics.get(name).and_then(|x| x.description.clone()).or_else(|| model.derived.get(name).and_then(|x| x.description.clone()));
        if let Some(d) = desc {
            m.insert("description".into(), json!(d));
        }
        let mut exts = extra(&format!("metric {name}"));
        if let Some(doc) = metric_docs.get(name) {
            let mut data = Map::new();
            data.insert("definition".into(), Json::Object(without(doc, &["version", "name", "description"])));
            if !exact {
                data.insert("note".into(), json!("The ANSI_SQL expression is the nearest aggregate (a filter as a CASE keeps the groups it empties, as NULL; a time offset, window or conversion is not said); the definition is what schemabrain answers."));
            }
            exts.push(ours(Json::Object(data)));
        }
        m.insert("custom_extensions".into(), Json::Array(exts));
        metrics.push(Json::Object(m));
    }
    // The project: settings (not the source, which is the reader's
    // connection), the PII policy, saved queries.
    let mut data = Map::new();
    if let Some(set) = single_file(&dir.join("schemabrain.yaml")).ok().and_then(|d| d.into_iter().next()) {
        data.insert("settings".into(), Json::Object(without(&set, &["version", "name", "source"])));
    }
    if let Some(p) = single_file(&dir.join("pii_policy.yaml")).ok().and_then(|d| d.into_iter().next()) {
        data.insert("pii_policy".into(), Json::Object(p));
    }
    if !query_docs.is_empty() {
        data.insert("queries".into(), Json::Array(query_docs.into_values().map(Json::Object).collect()));
    }
    let mut exts = extra("model");
    exts.push(ours(Json::Object(data)));
    let name = model.settings.name.clone().unwrap_or_else(|| dir.file_name().and_then(|n| n.to_str()).unwrap_or("schemabrain").to_string());
    let mut sm = Map::new();
    sm.insert("name".into(), json!(name));
    sm.insert("description".into(), json!(format!("Exported by schemabrain from project `{name}`.")));
    sm.insert("datasets".into(), Json::Array(datasets));
    sm.insert("relationships".into(), Json::Array(relationships));
    sm.insert("metrics".into(), Json::Array(metrics));
    sm.insert("custom_extensions".into(), Json::Array(exts));
    Ok(json!({"version": EXPORT_VERSION, "semantic_model": [Json::Object(sm)]}))
}

/// Key fields named per dataset. Ossie's dbt converter names each entity
/// after the key field: with every primary key the column `id`, every
/// dataset would be the entity `id` and no foreign key (`customer_id`)
/// would meet its primary one. So a dataset with a one-column identity
/// gets a field named after the dataset reading that column, listed as
/// its primary key, and the many side of each one-column relationship to
/// it gets a field of the same name reading its foreign column. Where a
/// name is taken (a column of that name, two relationships to one
/// dataset, a self join) the plain columns stay. Each such field carries
/// `key_field_of` in our extension, so `import ossie` reads the column
/// and adds no alias.
#[derive(Default)]
struct KeyFields {
    /// dataset → its primary key field's name.
    primary: BTreeMap<String, String>,
    /// dataset → (field, column) to add.
    fields: BTreeMap<String, Vec<(String, String)>>,
    /// relationship → the field both its sides name.
    relationships: BTreeMap<String, String>,
}

impl KeyFields {
    fn plan(model: &SemanticModel) -> KeyFields {
        let mut k = KeyFields::default();
        let taken = |ds: &str, field: &str| -> bool {
            model.entities.get(ds).is_none_or(|e| e.column(field).is_some() || e.column_aliases.contains_key(field))
        };
        for (name, e) in &model.entities {
            if let [id] = e.identity.as_slice() {
                if !taken(name, name) {
                    k.primary.insert(name.clone(), name.clone());
                    k.fields.entry(name.clone()).or_default().push((name.clone(), id.clone()));
                }
            }
        }
        for (name, j) in &model.joins {
            let flip = j.cardinality == Some(crate::model::Cardinality::OneToMany);
            let (from, to) = if flip { (&j.target_entity, &j.source_entity) } else { (&j.source_entity, &j.target_entity) };
            let [key] = j.on.as_slice() else { continue };
            let (fc, tc) = if flip { (&key.target, &key.source) } else { (&key.source, &key.target) };
            let Some(field) = k.primary.get(to.as_str()).cloned() else { continue };
            let to_identity = model.entities.get(to.as_str()).map(|e| e.identity.as_slice());
            if from == to || to_identity != Some(std::slice::from_ref(tc)) || taken(from, &field) {
                continue;
            }
            let here = k.fields.entry(from.clone()).or_default();
            match here.iter().find(|(f, _)| *f == field) {
                Some((_, c)) if c == fc => {}
                Some(_) => continue,
                None => here.push((field.clone(), fc.clone())),
            }
            k.relationships.insert(name.clone(), field);
        }
        k
    }
}

fn literal(l: &Literal) -> String {
    match l {
        Literal::Text(t) => format!("'{}'", t.replace('\'', "''")),
        other => other.to_string(),
    }
}

fn filter_sql(f: &FilterSpec) -> String {
    let col = f.column.to_string();
    let one = f.values.first().map(literal).unwrap_or_default();
    let list = f.values.iter().map(literal).collect::<Vec<_>>().join(", ");
    match f.op {
        FilterOp::Eq => format!("{col} = {one}"),
        FilterOp::Ne => format!("{col} <> {one}"),
        FilterOp::Lt => format!("{col} < {one}"),
        FilterOp::Lte => format!("{col} <= {one}"),
        FilterOp::Gt => format!("{col} > {one}"),
        FilterOp::Gte => format!("{col} >= {one}"),
        FilterOp::In => format!("{col} IN ({list})"),
        FilterOp::NotIn => format!("{col} NOT IN ({list})"),
        FilterOp::IsNull => format!("{col} IS NULL"),
        FilterOp::NotNull => format!("{col} IS NOT NULL"),
        FilterOp::Like => format!("{col} LIKE {one}"),
        FilterOp::NotLike => format!("{col} NOT LIKE {one}"),
    }
}

fn condition_sql(c: &Condition<FilterSpec>) -> String {
    match c {
        Condition::Atom(f) => filter_sql(f),
        Condition::All(cs) => format!("({})", cs.iter().map(condition_sql).collect::<Vec<_>>().join(" AND ")),
        Condition::Any(cs) => format!("({})", cs.iter().map(condition_sql).collect::<Vec<_>>().join(" OR ")),
    }
}

/// A simple metric as one SQL aggregate over `entity.column`s, its own
/// filters (and `extra`) as a CASE inside it.
fn simple_sql(m: &Metric, extra: &[FilterSpec]) -> String {
    let e = &m.entity;
    let mut x = match &m.measure.operand {
        MeasureOperand::Column(c) => format!("{e}.{c}"),
        MeasureOperand::Expression(_) => {
            let cols = m.measure.columns();
            // The expression's text: its columns qualified.
            let text = measure_text(m).unwrap_or_else(|| cols.join(" + "));
            qualify(&text, e)
        }
    };
    if m.measure.agg == Aggregation::SumBoolean {
        x = format!("CASE WHEN {x} THEN 1 ELSE 0 END");
    }
    let mut conds: Vec<String> = m.filters.iter().chain(extra).map(filter_sql).collect();
    conds.extend(m.any_of.iter().map(condition_sql));
    if !conds.is_empty() {
        x = format!("CASE WHEN {} THEN {x} END", conds.join(" AND "));
    }
    let within = |f: &str, p: f64| format!("{f}({p}) WITHIN GROUP (ORDER BY {x})");
    match m.measure.agg {
        Aggregation::Sum | Aggregation::SumBoolean => format!("SUM({x})"),
        Aggregation::Count => format!("COUNT({x})"),
        Aggregation::CountDistinct => format!("COUNT(DISTINCT {x})"),
        Aggregation::Avg => format!("AVG({x})"),
        Aggregation::Min => format!("MIN({x})"),
        Aggregation::Max => format!("MAX({x})"),
        Aggregation::Median => within("PERCENTILE_CONT", 0.5),
        Aggregation::Percentile => within(if m.measure.discrete { "PERCENTILE_DISC" } else { "PERCENTILE_CONT" }, m.measure.percentile.unwrap_or(0.5)),
    }
}

/// A measure expression's text as written (the model keeps its tree).
fn measure_text(m: &Metric) -> Option<String> {
    let text = std::fs::read_to_string(&m.defined_at.file).ok()?;
    let docs = crate::model::yaml_documents_as_json(&text).ok()?;
    let doc = docs.into_iter().find(|d| d.get("name").and_then(Json::as_str) == Some(m.name.as_str()))?;
    doc.get("measure")?.get("expression")?.as_str().map(str::to_string)
}

/// A metric's SQL aggregate, and whether it says exactly what the metric is.
fn metric_sql(model: &SemanticModel, name: &str) -> (String, bool) {
    if let Some(m) = model.metrics.get(name) {
        // A time-spine fill or a non-additive window is beyond one aggregate.
        // A filter written as a CASE keeps the groups it empties (NULL),
        // where ours drops them: the values agree, the rows may not.
        let filtered = !m.filters.is_empty() || !m.any_of.is_empty();
        let exact = m.non_additive.is_none() && !m.join_to_timespine && m.fill_nulls_with.is_none() && !filtered;
        return (simple_sql(m, &[]), exact);
    }
    let Some(d) = model.derived.get(name) else { return ("NULL".into(), false) };
    let inputs_exact = d.inputs.iter().all(|i| i.filters.is_empty() && metric_sql(model, &i.metric).1);
    let input_sql = |i: &crate::model::MetricInput| -> String {
        match model.metrics.get(&i.metric) {
            Some(m) => simple_sql(m, &i.filters),
            None => metric_sql(model, &i.metric).0,
        }
    };
    match d.kind {
        DerivedKind::Ratio => match d.inputs.as_slice() {
            [n, den] => (format!("{} / NULLIF({}, 0)", input_sql(n), input_sql(den)), inputs_exact),
            _ => ("NULL".into(), false),
        },
        DerivedKind::Derived => {
            let by_alias: BTreeMap<&str, String> = d.inputs.iter().map(|i| (i.alias.as_str(), input_sql(i))).collect();
            let exact = inputs_exact && d.inputs.iter().all(|i| i.offset.is_none());
            let text = derived_text(d).unwrap_or_default();
            (substitute(&text, &by_alias), exact)
        }
        // Cumulative and conversion metrics: the input's (the base's) aggregate.
        DerivedKind::Cumulative | DerivedKind::Conversion => (d.inputs.first().map(input_sql).unwrap_or_else(|| "NULL".into()), false),
    }
}

fn derived_text(d: &crate::model::DerivedMetric) -> Option<String> {
    let text = std::fs::read_to_string(&d.defined_at.file).ok()?;
    let docs = crate::model::yaml_documents_as_json(&text).ok()?;
    let doc = docs.into_iter().find(|x| x.get("name").and_then(Json::as_str) == Some(d.name.as_str()))?;
    doc.get("expression")?.as_str().map(str::to_string)
}

/// `expr` with each alias replaced by its input's SQL, parenthesized.
fn substitute(expr: &str, by_alias: &BTreeMap<&str, String>) -> String {
    use sqlparser::dialect::GenericDialect;
    use sqlparser::parser::Parser;
    let parse = |t: &str| Parser::new(&GenericDialect {}).try_with_sql(t).and_then(|mut p| p.parse_expr()).ok();
    let Some(mut e) = parse(expr) else { return expr.to_string() };
    let _ = sqlparser::ast::visit_expressions_mut(&mut e, |node| {
        if let Expr::Identifier(id) = node {
            if let Some(inner) = by_alias.get(id.value.as_str()).and_then(|s| parse(s)) {
                *node = Expr::Nested(Box::new(inner));
            }
        }
        ControlFlow::<()>::Continue(())
    });
    // Division by zero is NULL in our derived metrics, as NULLIF makes it in SQL.
    let _ = sqlparser::ast::visit_expressions_mut(&mut e, |node| {
        if let Expr::BinaryOp { op: sqlparser::ast::BinaryOperator::Divide, right, .. } = node {
            let den = right.to_string();
            if let Some(nullif) = parse(&format!("NULLIF({den}, 0)")) {
                **right = nullif;
            }
        }
        ControlFlow::<()>::Continue(())
    });
    e.to_string()
}
