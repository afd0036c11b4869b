//! A project → one Ossie `0.2.0.dev0` document (JSON). Ossie's own
//! constructs say what they can (datasets, keys, fields, relationships
//! with the many side first, one SQL aggregate per metric); the
//! `SCHEMABRAIN` extension of each item holds our definition's keys, so
//! `import` of the export restores the project exactly. The SQL is written
//! so that Ossie's own dbt converter reads it right too: an aggregate over
//! more than one column reads unqualified row SQL that is also a field of
//! its dataset (`RowFields`), a ratio is `A / B`. Metrics no SQL aggregate
//! says (time offsets, cumulative windows, conversions, balances, time
//! spine fills) are not among Ossie's metrics at all, since any nearest
//! aggregate would be another number; the model's extension carries them.

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
    // Metrics first: the row SQL they aggregate becomes fields of the datasets.
    let mut rows = RowFields::default();
    let mut metrics = Vec::new();
    let mut beyond = Vec::new();
    for name in model.metric_names() {
        let said = metric_sql(&model, name, name, &mut rows);
        let desc = model.metrics.get(name).and_then(|x| x.description.clone()).or_else(|| model.derived.get(name).and_then(|x| x.description.clone()));
        let definition = metric_docs.get(name).map(|doc| without(doc, &["version", "name", "description"]));
        let (sql, exact) = match said {
            Said::Exact(sql) => (sql, true),
            Said::Approximate(sql) => (sql, false),
            Said::Beyond(why) => {
                // Not among Ossie's metrics: the nearest aggregate would be
                // another number for whoever reads it. Our import reads it back.
                let mut b = Map::new();
                b.insert("name".into(), json!(name));
                if let Some(d) = &desc {
                    b.insert("description".into(), json!(d));
                }
                b.insert("definition".into(), Json::Object(definition.unwrap_or_default()));
                b.insert("why".into(), json!(why));
                beyond.push(Json::Object(b));
                continue;
            }
        };
        let mut m = Map::new();
        m.insert("name".into(), json!(name));
        m.insert("expression".into(), expression(&sql));
        if let Some(d) = desc {
            m.insert("description".into(), json!(d));
        }
        let mut exts = extra(&format!("metric {name}"));
        if let Some(def) = definition {
            let mut data = Map::new();
            data.insert("definition".into(), Json::Object(def));
            if !exact {
                data.insert("note".into(), json!("A filter written as a CASE inside the aggregate: the values agree, but grouped by the filter's column the CASE keeps the group the filter empties (as NULL), which schemabrain drops; the definition is what schemabrain answers."));
            }
            exts.push(ours(Json::Object(data)));
        }
        m.insert("custom_extensions".into(), Json::Array(exts));
        metrics.push(Json::Object(m));
    }
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
        // The row SQL metrics aggregate (see `RowFields`): not columns of
        // ours, so `import ossie` of our export skips them.
        for (field, sql, by) in rows.by_dataset.get(name.as_str()).into_iter().flatten() {
            fields.push(json!({
                "name": field,
                "expression": expression(sql),
                "description": format!("The row value {} aggregate{}.", by.iter().map(|m| format!("`{m}`")).collect::<Vec<_>>().join(", "), if by.len() == 1 { "s" } else { "" }),
                "custom_extensions": [ours(json!({"aggregated_by": by}))],
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
    if !beyond.is_empty() {
        data.insert("metrics".into(), Json::Array(beyond));
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

/// A filter as SQL, its column written by `col`. `NOT x IN (...)` and `NOT
/// x IS NULL` are the forms sqlglot (which Ossie's dbt converter parses
/// with) renders back unchanged, so the text stays a fixed point there.
fn filter_sql_with(f: &FilterSpec, col: &str) -> String {
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
        FilterOp::NotIn => format!("NOT {col} IN ({list})"),
        FilterOp::IsNull => format!("{col} IS NULL"),
        FilterOp::NotNull => format!("NOT {col} IS NULL"),
        FilterOp::Like => format!("{col} LIKE {one}"),
        FilterOp::NotLike => format!("{col} NOT LIKE {one}"),
    }
}

fn condition_sql_with(c: &Condition<FilterSpec>, col: &dyn Fn(&FilterSpec) -> String) -> String {
    match c {
        Condition::Atom(f) => filter_sql_with(f, &col(f)),
        Condition::All(cs) => format!("({})", cs.iter().map(|c| condition_sql_with(c, col)).collect::<Vec<_>>().join(" AND ")),
        Condition::Any(cs) => format!("({})", cs.iter().map(|c| condition_sql_with(c, col)).collect::<Vec<_>>().join(" OR ")),
    }
}

/// The row-level SQL each aggregate beyond one plain column reads, kept
/// as a field of its dataset (`<owner>_value`, its expression that SQL,
/// parenthesized) while the metric aggregates the same SQL unqualified:
/// `SUM((quantity * unit_price))`. Ossie's dbt converter copies the text
/// of a non-column argument into dbt's `expr` (raw SQL over the model's
/// table, which MetricFlow runs as written) and, the argument naming no
/// dataset, finds its semantic model as the dataset with a field of that
/// very expression. Qualified (`order_item.quantity * …`) it keeps only
/// the text after the last dot, and a CASE straight inside `SUM(...)` it
/// does not read at all; the parentheses avoid both.
#[derive(Default)]
struct RowFields {
    /// dataset → (field name, its SQL, the metrics aggregating it).
    by_dataset: BTreeMap<String, Vec<(String, String, Vec<String>)>>,
}

impl RowFields {
    /// The field for `sql` in `dataset` (named after `owner` when new);
    /// `None` when another dataset has a field of the same SQL: the
    /// converter takes the first such dataset, which could be the wrong
    /// one, so the caller qualifies instead.
    fn locate(&mut self, model: &SemanticModel, dataset: &str, sql: &str, owner: &str, metric: &str) -> Option<String> {
        if self.by_dataset.iter().any(|(d, fs)| d != dataset && fs.iter().any(|(_, s, _)| s == sql)) {
            return None;
        }
        let here = self.by_dataset.entry(dataset.to_string()).or_default();
        if let Some((name, _, metrics)) = here.iter_mut().find(|(_, s, _)| s == sql) {
            if !metrics.iter().any(|m| m == metric) {
                metrics.push(metric.to_string());
            }
            return Some(name.clone());
        }
        let e = model.entities.get(dataset);
        let mut name = format!("{owner}_value");
        while e.is_some_and(|e| e.column(&name).is_some() || e.column_aliases.contains_key(&name) || name == dataset) || here.iter().any(|(n, _, _)| *n == name) {
            name.push('_');
        }
        here.push((name.clone(), sql.to_string(), vec![metric.to_string()]));
        Some(name)
    }
}

/// A column of `entity` as row SQL of that entity alone: itself, an
/// alias's column, or a computed column's expression (parenthesized).
fn own_column(model: &SemanticModel, entity: &str, name: &str) -> String {
    let Some(e) = model.entities.get(entity) else { return name.to_string() };
    let real = e.resolve_alias(name);
    match e.column(real).and_then(|c| c.expr.as_deref()) {
        Some(expr) => format!("({expr})"),
        None => real.to_string(),
    }
}

/// `expr` (a measure expression over `entity`'s columns) with each column
/// as `own_column` reads it.
fn own_expression(model: &SemanticModel, entity: &str, expr: &str) -> String {
    use sqlparser::dialect::GenericDialect;
    use sqlparser::parser::Parser;
    let parse = |t: &str| Parser::new(&GenericDialect {}).try_with_sql(t).and_then(|mut p| p.parse_expr()).ok();
    let Some(mut e) = parse(expr) else { return expr.to_string() };
    let _ = sqlparser::ast::visit_expressions_mut(&mut e, |node| {
        if let Expr::Identifier(id) = node {
            if let Some(x) = parse(&own_column(model, entity, &id.value)) {
                *node = x;
            }
        }
        ControlFlow::<()>::Continue(())
    });
    e.to_string()
}

/// A simple metric as one SQL aggregate, its own filters (and `extra`) as
/// a CASE inside it. A plain column is `entity.column`; anything more is
/// row SQL over the entity's own columns, unqualified and kept as a field
/// (`RowFields`); a filter on another entity's column keeps the old
/// qualified form (no row of one dataset says it).
fn simple_sql(model: &SemanticModel, m: &Metric, extra: &[FilterSpec], owner: &str, metric: &str, rows: &mut RowFields) -> String {
    let e = &m.entity;
    let conds: Vec<&FilterSpec> = m.filters.iter().chain(extra).collect();
    let plain = matches!(m.measure.operand, MeasureOperand::Column(_)) && m.measure.agg != Aggregation::SumBoolean && conds.is_empty() && m.any_of.is_empty();
    let computed = match &m.measure.operand {
        MeasureOperand::Column(c) => model.entities.get(e).and_then(|x| x.column(x.resolve_alias(c))).is_some_and(|c| c.expr.is_some()),
        MeasureOperand::Expression(_) => false,
    };
    let all_own = conds.iter().all(|f| f.column.entity == *e) && m.any_of.iter().all(|c| condition_entities(c).iter().all(|x| x == e));
    let qualified = |f: &FilterSpec| f.column.to_string();
    let unqualified = |f: &FilterSpec| own_column(model, e, &f.column.column);
    let arg = if plain && !computed {
        let MeasureOperand::Column(c) = &m.measure.operand else { return "NULL".into() };
        format!("{e}.{c}")
    } else {
        let row = |own: bool| -> String {
            let mut x = match &m.measure.operand {
                MeasureOperand::Column(c) if own => own_column(model, e, c),
                MeasureOperand::Column(c) => format!("{e}.{c}"),
                MeasureOperand::Expression(_) => {
                    let text = measure_text(m).unwrap_or_else(|| m.measure.columns().join(" + "));
                    if own {
                        own_expression(model, e, &text)
                    } else {
                        qualify(&text, e)
                    }
                }
            };
            if m.measure.agg == Aggregation::SumBoolean {
                x = format!("CASE WHEN {x} THEN 1 ELSE 0 END");
            }
            let col: &dyn Fn(&FilterSpec) -> String = if own { &unqualified } else { &qualified };
            let mut cs: Vec<String> = conds.iter().map(|f| filter_sql_with(f, &col(f))).collect();
            cs.extend(m.any_of.iter().map(|c| condition_sql_with(c, col)));
            if !cs.is_empty() {
                x = format!("CASE WHEN {} THEN {x} END", cs.join(" AND "));
            }
            x
        };
        let sql = format!("({})", row(true));
        match all_own.then(|| rows.locate(model, e, &sql, owner, metric)).flatten() {
            Some(_) => sql,
            None => row(false),
        }
    };
    let within = |f: &str, p: f64| format!("{f}({p}) WITHIN GROUP (ORDER BY {arg})");
    match m.measure.agg {
        Aggregation::Sum | Aggregation::SumBoolean => format!("SUM({arg})"),
        Aggregation::Count => format!("COUNT({arg})"),
        Aggregation::CountDistinct => format!("COUNT(DISTINCT {arg})"),
        Aggregation::Avg => format!("AVG({arg})"),
        Aggregation::Min => format!("MIN({arg})"),
        Aggregation::Max => format!("MAX({arg})"),
        Aggregation::Median => within("PERCENTILE_CONT", 0.5),
        Aggregation::Percentile => within(if m.measure.discrete { "PERCENTILE_DISC" } else { "PERCENTILE_CONT" }, m.measure.percentile.unwrap_or(0.5)),
    }
}

fn condition_entities(c: &Condition<FilterSpec>) -> Vec<String> {
    match c {
        Condition::Atom(f) => vec![f.column.entity.clone()],
        Condition::All(cs) | Condition::Any(cs) => cs.iter().flat_map(condition_entities).collect(),
    }
}

/// A measure expression's text as written (the model keeps its tree).
fn measure_text(m: &Metric) -> Option<String> {
    let text = std::fs::read_to_string(&m.defined_at.file).ok()?;
    let docs = crate::model::yaml_documents_as_json(&text).ok()?;
    let doc = docs.into_iter().find(|d| d.get("name").and_then(Json::as_str) == Some(m.name.as_str()))?;
    doc.get("measure")?.get("expression")?.as_str().map(str::to_string)
}

/// How a metric is said in Ossie's SQL.
enum Said {
    /// One expression that means the metric.
    Exact(String),
    /// The values agree; grouped by a filter's column, the CASE keeps the
    /// group the filter empties (NULL) where ours drops it.
    Approximate(String),
    /// No SQL aggregate says it (a window over time, a time offset, a
    /// conversion, a balance's last value, a time-spine fill): the nearest
    /// one would be another number, so the metric is not among Ossie's
    /// metrics but in our model extension only.
    Beyond(&'static str),
}

impl Said {
    fn combine(parts: Vec<Said>, render: impl FnOnce(Vec<String>) -> String) -> Said {
        let mut approximate = false;
        let mut texts = Vec::new();
        for p in parts {
            match p {
                Said::Exact(t) => texts.push(t),
                Said::Approximate(t) => {
                    approximate = true;
                    texts.push(t);
                }
                Said::Beyond(why) => return Said::Beyond(why),
            }
        }
        let text = render(texts);
        if approximate {
            Said::Approximate(text)
        } else {
            Said::Exact(text)
        }
    }
}

/// A metric's SQL aggregate (for `owner`, the metric it is written in).
fn metric_sql(model: &SemanticModel, name: &str, owner: &str, rows: &mut RowFields) -> Said {
    if let Some(m) = model.metrics.get(name) {
        if m.non_additive.is_some() {
            return Said::Beyond("a balance (non-additive over time): each period takes its last value, which no aggregate over rows says");
        }
        if m.join_to_timespine || m.fill_nulls_with.is_some() {
            return Said::Beyond("its periods are filled from the time spine, which Ossie's SQL does not say");
        }
        let sql = simple_sql(model, m, &[], name, owner, rows);
        let filtered = !m.filters.is_empty() || !m.any_of.is_empty();
        return if filtered { Said::Approximate(sql) } else { Said::Exact(sql) };
    }
    let Some(d) = model.derived.get(name) else { return Said::Beyond("not a metric of the project") };
    if d.inputs.iter().any(|i| i.offset.is_some()) {
        return Said::Beyond("an input moved in time (offset_window, offset_to_grain), which Ossie's SQL does not say");
    }
    let input_said = |i: &crate::model::MetricInput, role: &str, rows: &mut RowFields| -> Said {
        let part = format!("{name}_{role}");
        match model.metrics.get(&i.metric) {
            Some(_) if i.filters.is_empty() => metric_sql(model, &i.metric, owner, rows),
            Some(m) => match metric_sql(model, &i.metric, owner, rows) {
                Said::Beyond(why) => Said::Beyond(why),
                _ => Said::Approximate(simple_sql(model, m, &i.filters, &part, owner, rows)),
            },
            None => metric_sql(model, &i.metric, owner, rows),
        }
    };
    match d.kind {
        // `A / B`, not `A / NULLIF(B, 0)`: the converter reads a ratio
        // only as a division of two aggregates. Division by zero is NULL
        // in our ratios and in MetricFlow's; `import ossie` reads `A / B`
        // as a ratio.
        DerivedKind::Ratio => match d.inputs.as_slice() {
            [n, den] => {
                let parts = vec![input_said(n, "numerator", rows), input_said(den, "denominator", rows)];
                Said::combine(parts, |t| match t.as_slice() {
                    [a, b] => format!("{} / {}", paren(a), paren(b)),
                    _ => "NULL".into(),
                })
            }
            _ => Said::Beyond("a ratio without two inputs"),
        },
        DerivedKind::Derived => {
            let text = derived_text(d).unwrap_or_default();
            let aliases: Vec<String> = d.inputs.iter().map(|i| i.alias.clone()).collect();
            let parts: Vec<Said> = d.inputs.iter().map(|i| input_said(i, &i.alias, rows)).collect();
            Said::combine(parts, |texts| {
                let by_alias: BTreeMap<&str, String> = aliases.iter().map(String::as_str).zip(texts).collect();
                match plain_division(&text) {
                    // `a / b` is a ratio: written as one, which the converter reads.
                    Some((a, b)) => match (by_alias.get(a.as_str()), by_alias.get(b.as_str())) {
                        (Some(x), Some(y)) => format!("{} / {}", paren(x), paren(y)),
                        _ => substitute(&text, &by_alias),
                    },
                    None => substitute(&text, &by_alias),
                }
            })
        }
        DerivedKind::Cumulative => Said::Beyond("a window over time (cumulative), which Ossie's SQL does not say"),
        DerivedKind::Conversion => Said::Beyond("a conversion (a base event followed by another within a window), which Ossie's SQL does not say"),
    }
}

/// An aggregate as one operand of `/`: a division inside is parenthesized.
fn paren(sql: &str) -> String {
    if sql.contains(" / ") {
        format!("({sql})")
    } else {
        sql.to_string()
    }
}

/// `a / b` of two names, whatever the spacing and parentheses.
fn plain_division(expr: &str) -> Option<(String, String)> {
    use sqlparser::dialect::GenericDialect;
    use sqlparser::parser::Parser;
    let mut e = Parser::new(&GenericDialect {}).try_with_sql(expr).and_then(|mut p| p.parse_expr()).ok()?;
    while let Expr::Nested(inner) = e {
        e = *inner;
    }
    let Expr::BinaryOp { left, op: sqlparser::ast::BinaryOperator::Divide, right } = e else { return None };
    let name = |x: &Expr| -> Option<String> {
        match x {
            Expr::Identifier(id) => Some(id.value.clone()),
            Expr::Nested(inner) => match inner.as_ref() {
                Expr::Identifier(id) => Some(id.value.clone()),
                _ => None,
            },
            _ => None,
        }
    };
    Some((name(&left)?, name(&right)?))
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
