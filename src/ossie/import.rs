//! Ossie model (JSON read by `read`) → project files in our grammar.
//! Datasets → entities, relationships → many_to_one joins, fields →
//! declared columns, metrics → simple, ratio or derived metrics (via
//! `aggregate`); our own `SCHEMABRAIN` extensions restore what Ossie
//! cannot say. Everything not mapped is listed with its reason; a file
//! the loader would refuse is taken out and listed with its message.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{json, Map, Value as Json};

use super::aggregate::{self, FieldSql, Fields, Formula, Operand, Term};
use super::read::{arr, line, s};
use super::{Extensions, ReadError, Unmapped, VENDOR};
use crate::model::{computed_expr_problem, is_identifier, yaml_quoted as q};

/// What the import is for.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// The project's dialect (`duckdb`, `snowflake`, ...): a field or
    /// metric's expression in the matching Ossie dialect wins over ANSI_SQL.
    pub dialect: Option<String>,
    /// The project's source URL, written into `schemabrain.yaml`.
    pub source: Option<String>,
    /// The project's name when the model has none usable.
    pub name: Option<String>,
}

/// A join written from a relationship: what `--source` measures (the
/// `to` side's columns must be unique for many_to_one to hold).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Relationship {
    pub join: String,
    pub to_table: String,
    pub to_columns: Vec<String>,
}

/// The import: project files by relative path, what was not mapped,
/// notes (mapped, with a caveat), other vendors' extensions.
#[derive(Clone, Debug, Default)]
pub struct Imported {
    pub version: String,
    pub files: BTreeMap<String, String>,
    pub unmapped: Vec<Unmapped>,
    pub notes: Vec<String>,
    pub extensions: Extensions,
    pub relationships: Vec<Relationship>,
    pub entities: usize,
    pub joins: usize,
    pub metrics: usize,
}

/// The Ossie dialect whose expressions the project's dialect runs.
fn ossie_dialect(ours: Option<&str>) -> &'static str {
    match ours.map(str::to_ascii_lowercase).as_deref() {
        Some("snowflake") => "SNOWFLAKE",
        Some("databricks" | "spark") => "DATABRICKS",
        Some("bigquery") => "BIGQUERY",
        _ => "ANSI_SQL",
    }
}

/// The expression for the project's dialect, else ANSI_SQL's.
fn pick(v: &Json, dialect: &str) -> Result<String, String> {
    let dialects = v.get("expression").map(|e| arr(e, "dialects")).unwrap_or(&[]);
    let of = |d: &str| dialects.iter().find(|x| s(x, "dialect") == Some(d)).and_then(|x| s(x, "expression"));
    match of(dialect).or_else(|| of("ANSI_SQL")) {
        Some(e) => Ok(e.trim().to_string()),
        None => {
            let have: Vec<&str> = dialects.iter().filter_map(|x| s(x, "dialect")).collect();
            let wanted = if dialect == "ANSI_SQL" { "ANSI_SQL".to_string() } else { format!("{dialect} or ANSI_SQL") };
            Err(format!("no {wanted} expression (only {})", have.join(", ")))
        }
    }
}

/// `ai_context` as description text: instructions, synonyms, examples.
fn context_text(v: &Json) -> Option<String> {
    match v.get("ai_context")? {
        Json::String(t) if !t.trim().is_empty() => Some(format!("Context: {}", t.trim())),
        Json::Object(o) => {
            let list = |k: &str| -> Vec<String> {
                o.get(k).and_then(Json::as_array).map(|a| a.iter().filter_map(Json::as_str).map(str::to_string).collect()).unwrap_or_default()
            };
            let mut parts = Vec::new();
            if let Some(i) = o.get("instructions").and_then(Json::as_str).filter(|i| !i.trim().is_empty()) {
                parts.push(i.trim().to_string());
            }
            let syn = list("synonyms");
            if !syn.is_empty() {
                parts.push(format!("Also called: {}.", syn.join(", ")));
            }
            let ex = list("examples");
            if !ex.is_empty() {
                parts.push(format!("Example questions: {}.", ex.join("; ")));
            }
            (!parts.is_empty()).then(|| parts.join(" "))
        }
        _ => None,
    }
}

/// The item's description with its `ai_context` after it.
fn description(v: &Json) -> Option<String> {
    let own = s(v, "description").map(str::trim).filter(|d| !d.is_empty()).map(str::to_string);
    match (own, context_text(v)) {
        (Some(d), Some(c)) => Some(format!("{d} {c}")),
        (d, c) => d.or(c),
    }
}

/// Our extension's data on an item (parsed), and the others kept.
fn extensions_of(v: &Json, item: &str, kept: &mut Extensions, problems: &mut Vec<Unmapped>) -> Option<Map<String, Json>> {
    let mut ours = None;
    for e in arr(v, "custom_extensions") {
        if s(e, "vendor_name") == Some(VENDOR) {
            match serde_json::from_str::<Json>(s(e, "data").unwrap_or("")) {
                Ok(Json::Object(o)) => ours = Some(o),
                _ => problems.push(Unmapped { item: item.to_string(), reason: format!("its {VENDOR} extension's data is not a JSON object") }),
            }
        } else {
            let mut e = e.clone();
            if let Some(o) = e.as_object_mut() {
                o.remove("__line");
            }
            kept.entry(item.to_string()).or_default().push(e);
        }
    }
    ours
}

/// `v` as YAML flow text: JSON with a space after every `:` and `,`
/// (strings JSON-quoted, which YAML reads the same).
fn flow(v: &Json) -> String {
    match v {
        Json::Object(o) => format!("{{{}}}", o.iter().map(|(k, v)| format!("{}: {}", q(k), flow(v))).collect::<Vec<_>>().join(", ")),
        Json::Array(a) => format!("[{}]", a.iter().map(flow).collect::<Vec<_>>().join(", ")),
        other => other.to_string(),
    }
}

/// A definition file: `version: 1`, then each key with its value as
/// flow text, one key per line.
fn file_text(doc: &Map<String, Json>) -> String {
    let mut text = String::from("version: 1\n");
    for (k, v) in doc {
        if k == "version" {
            continue;
        }
        let key = if k == "on" { "\"on\"".to_string() } else { k.clone() };
        text.push_str(&format!("{key}: {}\n", flow(v)));
    }
    text
}

fn provenance(at: &str) -> Json {
    json!({"inference_method": "manually_authored", "validation_state": "applied", "confidence": "high", "source": format!("Ossie model {at}")})
}

/// One dataset as the mapping sees it.
struct Dataset {
    name: String,
    table: String,
    identity: Vec<String>,
    description: Option<String>,
    /// Declared columns, in field order (plain and computed).
    columns: Vec<Map<String, Json>>,
    aliases: BTreeMap<String, String>,
    /// The time fields' columns, with their Ossie datatype.
    time: Vec<(String, Option<String>)>,
    ours: Option<Map<String, Json>>,
    at: String,
}

impl Dataset {
    fn has_column(&self, c: &str) -> bool {
        self.columns.iter().any(|x| x.get("name").and_then(Json::as_str) == Some(c))
    }

    fn declare(&mut self, c: &str) {
        if !self.has_column(c) && !self.aliases.contains_key(c) {
            let mut m = Map::new();
            m.insert("name".into(), json!(c));
            self.columns.push(m);
        }
    }
}

fn our_type(datatype: &str) -> Option<&'static str> {
    Some(match datatype {
        "String" => "varchar",
        "Integer" => "bigint",
        "Decimal" => "decimal",
        "Float" => "double",
        "Boolean" => "boolean",
        "Date" => "date",
        "Time" => "time",
        "DateTime" => "timestamp",
        "DateTimeTz" => "timestamptz",
        _ => return None,
    })
}

/// `source` as `schema.table`: `db.schema.table`, `schema.table` or
/// `table` (schema `main`); a query or anything else is refused.
fn table_of(source: &str) -> Result<(String, Option<String>), String> {
    let parts: Vec<String> = source.split('.').map(|p| p.trim().trim_matches('"').trim_matches('`').to_string()).collect();
    if !parts.iter().all(|p| is_identifier(p)) {
        let kind = if source.to_ascii_lowercase().contains("select") { "a query" } else { "not a table name" };
        return Err(format!(
            "its source `{}` is {kind}; entities bind to a table or view (create a view with this SQL and name it in `source`)",
            crate::model::echo(source)
        ));
    }
    match parts.as_slice() {
        [t] => Ok((format!("main.{t}"), None)),
        [sc, t] => Ok((format!("{sc}.{t}"), None)),
        [db, sc, t] => Ok((format!("{sc}.{t}"), Some(db.clone()))),
        _ => Err(format!("its source `{source}` has more than three parts")),
    }
}

/// Reads an Ossie file into project files.
pub fn import(text: &str, file: &str, options: &Options) -> Result<Imported, ReadError> {
    let doc = super::read::read(text, file)?;
    let mut out = Imported { version: s(&doc, "version").unwrap_or("").to_string(), ..Imported::default() };
    let dialect = ossie_dialect(options.dialect.as_deref());
    let at = |v: &Json, path: &str| format!("{file}:{}: {path}", line(v));
    let mut datasets: BTreeMap<String, Dataset> = BTreeMap::new();
    let mut fields: Fields = BTreeMap::new();
    let mut settings = Map::new();
    let mut model_name = None;
    // Metrics of our export that Ossie's SQL cannot say, from our model extension.
    let mut beyond: Vec<(String, Map<String, Json>)> = Vec::new();
    for m in arr(&doc, "semantic_model") {
        let mname = s(m, "name").unwrap_or("?");
        model_name.get_or_insert_with(|| mname.to_string());
        if let Some(ours) = extensions_of(m, &format!("model {mname}"), &mut out.extensions, &mut out.unmapped) {
            beyond.extend(model_extension(&ours, &mut out, &mut settings));
        }
        if let Some(d) = description(m) {
            out.notes.push(format!("model {mname}: {d}"));
        }
        for d in arr(m, "datasets") {
            let name = s(d, "name").unwrap_or("?").to_string();
            let item = format!("dataset {name}");
            let ours = extensions_of(d, &item, &mut out.extensions, &mut out.unmapped);
            if !is_identifier(&name) {
                out.unmapped.push(Unmapped { item, reason: "its name is not an identifier".into() });
                continue;
            }
            if datasets.contains_key(&name) {
                out.unmapped.push(Unmapped { item, reason: "a dataset of this name was read already".into() });
                continue;
            }
            let (table, database) = match table_of(s(d, "source").unwrap_or("")) {
                Ok(t) => t,
                Err(reason) => {
                    out.unmapped.push(Unmapped { item, reason });
                    continue;
                }
            };
            if let Some(db) = database {
                out.notes.push(format!("dataset {name}: database `{db}` of its source is left to the connection (bound to {table})"));
            }
            let mut ds = Dataset {
                name: name.clone(),
                table,
                identity: Vec::new(),
                description: description(d),
                columns: Vec::new(),
                aliases: BTreeMap::new(),
                time: Vec::new(),
                ours,
                at: at(d, &format!("datasets[{name}]")),
            };
            let mut own = BTreeMap::new();
            for f in arr(d, "fields") {
                let fname = s(f, "name").unwrap_or("?").to_string();
                let fitem = format!("field {name}.{fname}");
                // Our export's key fields (the key under the dataset's name,
                // for tools that name entities after key fields) read a
                // column the dataset already has: no alias of ours.
                let mine = extensions_of(f, &fitem, &mut out.extensions, &mut out.unmapped);
                let key_field = mine.as_ref().is_some_and(|o| o.contains_key("key_field_of"));
                // Our export's row fields (the SQL a metric aggregates, for
                // tools that locate a metric's dataset by it): the metrics'
                // definitions say the same, so no column of ours.
                if mine.as_ref().is_some_and(|o| o.contains_key("aggregated_by")) {
                    continue;
                }
                if !is_identifier(&fname) {
                    out.unmapped.push(Unmapped { item: fitem, reason: "its name is not an identifier".into() });
                    continue;
                }
                let sql = match pick(f, dialect) {
                    Ok(e) => e,
                    Err(reason) => {
                        out.unmapped.push(Unmapped { item: fitem, reason });
                        continue;
                    }
                };
                let datatype = s(f, "datatype").map(str::to_string);
                let mut col = Map::new();
                let plain = aggregate::plain_column(&sql, &name);
                match &plain {
                    Some(c) if *c != fname => {
                        if !key_field {
                            ds.aliases.insert(fname.clone(), c.clone());
                        }
                        col.insert("name".into(), json!(c));
                    }
                    Some(_) => {
                        col.insert("name".into(), json!(fname));
                    }
                    None => {
                        if let Some(p) = computed_expr_problem(&sql) {
                            out.unmapped.push(Unmapped { item: fitem, reason: format!("its expression {p}") });
                            continue;
                        }
                        if aggregate::idents(&sql).contains(&fname) {
                            out.unmapped.push(Unmapped {
                                item: fitem,
                                reason: "a computed field named like a column it reads (a computed column may not take a table column's name)".into(),
                            });
                            continue;
                        }
                        col.insert("name".into(), json!(fname));
                        col.insert("expr".into(), json!(sql));
                    }
                }
                if let Some(t) = datatype.as_deref().and_then(our_type) {
                    col.insert("type".into(), json!(t));
                }
                if let Some(desc) = description(f) {
                    col.insert("description".into(), json!(desc));
                }
                let temporal = matches!(datatype.as_deref(), Some("Date" | "DateTime" | "DateTimeTz" | "Time"));
                let is_time = f.get("dimension").and_then(|x| x.get("is_time")).and_then(Json::as_bool).unwrap_or(temporal);
                let cname = col.get("name").and_then(Json::as_str).unwrap_or(&fname).to_string();
                if is_time {
                    ds.time.push((cname.clone(), datatype.clone()));
                }
                own.insert(fname.clone(), FieldSql { column: cname.clone(), computed: plain.is_none(), sql });
                if ds.has_column(&cname) {
                    continue;
                }
                ds.columns.push(col);
            }
            // Keys name fields or columns; each becomes a column.
            let key_column = |k: &str, own: &BTreeMap<String, FieldSql>| own.get(k).map_or_else(|| k.to_string(), |f| f.column.clone());
            let pk: Vec<String> = arr(d, "primary_key").iter().filter_map(Json::as_str).map(|k| key_column(k, &own)).collect();
            if let Some(bad) = pk.iter().find(|k| !is_identifier(k)) {
                out.unmapped.push(Unmapped { item: format!("dataset {name}"), reason: format!("primary key column `{bad}` is not an identifier") });
                continue;
            }
            for k in &pk {
                ds.declare(k);
            }
            if pk.is_empty() {
                out.notes.push(format!("dataset {name}: no primary_key, so an entity without identity (its sums are never deduplicated across a fan-out; such requests come back degraded)"));
            }
            if arr(d, "unique_keys").iter().any(|k| k.as_array().is_some_and(|cols| cols.len() != pk.len() || cols.iter().zip(&pk).any(|(c, p)| c.as_str() != Some(p)))) {
                out.notes.push(format!("dataset {name}: unique_keys other than the primary key have no place in our grammar (not needed for answers)"));
            }
            ds.identity = pk;
            fields.insert(name.clone(), own);
            datasets.insert(name, ds);
        }
    }
    // Relationships → joins.
    let mut joins = BTreeMap::new();
    for m in arr(&doc, "semantic_model") {
        for r in arr(m, "relationships") {
            let name = s(r, "name").unwrap_or("?").to_string();
            let item = format!("relationship {name}");
            let ours = extensions_of(r, &item, &mut out.extensions, &mut out.unmapped);
            match relationship(r, &name, &mut datasets, &fields, ours, &at(r, &format!("relationships[{name}]"))) {
                Ok((doc, rel)) => {
                    if joins.insert(name.clone(), doc).is_some() {
                        out.unmapped.push(Unmapped { item, reason: "a relationship of this name was read already".into() });
                        continue;
                    }
                    out.relationships.extend(rel);
                }
                Err(reason) => out.unmapped.push(Unmapped { item, reason }),
            }
        }
    }
    // Metrics: simple ones first (a compound metric reuses one equal to
    // its term), then the compound ones.
    let mut metrics: BTreeMap<String, Map<String, Json>> = BTreeMap::new();
    let mut by_key: BTreeMap<String, String> = BTreeMap::new();
    let mut compound = Vec::new();
    let mut taken: BTreeSet<String> = BTreeSet::new();
    for (name, doc) in beyond {
        taken.insert(name.clone());
        metrics.insert(name, doc);
    }
    for m in arr(&doc, "semantic_model") {
        for x in arr(m, "metrics") {
            taken.insert(s(x, "name").unwrap_or("?").to_string());
        }
    }
    for m in arr(&doc, "semantic_model") {
        for x in arr(m, "metrics") {
            let name = s(x, "name").unwrap_or("?").to_string();
            let item = format!("metric {name}");
            let ours = extensions_of(x, &item, &mut out.extensions, &mut out.unmapped);
            if !is_identifier(&name) {
                out.unmapped.push(Unmapped { item, reason: "its name is not an identifier".into() });
                continue;
            }
            if metrics.contains_key(&name) {
                out.unmapped.push(Unmapped { item, reason: "a metric of this name was read already".into() });
                continue;
            }
            let at = at(x, &format!("metrics[{name}]"));
            let mut head = Map::new();
            head.insert("name".into(), json!(name));
            if let Some(d) = description(x) {
                head.insert("description".into(), json!(d));
            }
            // Our own export: the definition says what the SQL cannot.
            if let Some(def) = ours.as_ref().and_then(|o| o.get("definition")).and_then(Json::as_object) {
                let mut doc = head;
                doc.extend(def.iter().map(|(k, v)| (k.clone(), v.clone())));
                metrics.insert(name, doc);
                continue;
            }
            let sql = match pick(x, dialect) {
                Ok(e) => e,
                Err(reason) => {
                    out.unmapped.push(Unmapped { item, reason });
                    continue;
                }
            };
            match aggregate::parse(&sql, &fields) {
                Ok((Formula::Term(_), terms)) => {
                    let Some(term) = terms.into_iter().next() else { continue };
                    match simple(&head, &term, &mut datasets, &at) {
                        Ok(doc) => {
                            by_key.entry(term.key()).or_insert_with(|| name.clone());
                            metrics.insert(name, doc);
                        }
                        Err(reason) => out.unmapped.push(Unmapped { item, reason }),
                    }
                }
                Ok((formula, terms)) => compound.push((name, head, formula, terms, at)),
                Err(reason) => out.unmapped.push(Unmapped { item, reason: format!("its expression `{}`: {reason}", crate::model::echo(&sql)) }),
            }
        }
    }
    for (name, head, formula, terms, at) in compound {
        let mut names = Vec::new();
        let mut parts = Vec::new();
        let mut problem = None;
        for (i, term) in terms.iter().enumerate() {
            if let Some(existing) = by_key.get(&term.key()) {
                names.push(existing.clone());
                continue;
            }
            // A part of its own, named after the metric.
            let role = match (&formula, i, terms.len()) {
                (Formula::Op(_, '/', _), 0, 2) => "numerator".to_string(),
                (Formula::Op(_, '/', _), 1, 2) => "denominator".to_string(),
                _ => format!("part{}", i + 1),
            };
            let mut pname = format!("{name}_{role}");
            while taken.contains(&pname) || metrics.contains_key(&pname) {
                pname.push('_');
            }
            let mut phead = Map::new();
            phead.insert("name".into(), json!(pname));
            phead.insert("description".into(), json!(format!("The {role} of `{name}` (a part of its Ossie expression).")));
            match simple(&phead, term, &mut datasets, &at) {
                Ok(doc) => {
                    taken.insert(pname.clone());
                    by_key.insert(term.key(), pname.clone());
                    parts.push((pname.clone(), doc));
                    names.push(pname);
                }
                Err(reason) => {
                    problem = Some(reason);
                    break;
                }
            }
        }
        if let Some(reason) = problem {
            out.unmapped.push(Unmapped { item: format!("metric {name}"), reason });
            continue;
        }
        for (pname, doc) in parts {
            metrics.insert(pname, doc);
        }
        let mut doc = head;
        match (&formula, names.as_slice()) {
            (Formula::Op(a, '/', b), [n, d]) if matches!(**a, Formula::Term(0)) && matches!(**b, Formula::Term(1)) => {
                doc.insert("type".into(), json!("ratio"));
                doc.insert("numerator".into(), json!(n));
                doc.insert("denominator".into(), json!(d));
            }
            _ => {
                // A name may be used twice (`a / a`); each input once.
                let unique: BTreeSet<&String> = names.iter().collect();
                doc.insert("type".into(), json!("derived"));
                doc.insert("expression".into(), json!(formula.render(&names)));
                doc.insert("metrics".into(), Json::Array(unique.into_iter().map(|n| json!({"name": n})).collect()));
            }
        }
        doc.insert("provenance".into(), provenance(&at));
        metrics.insert(name, doc);
    }
    // Entities last: metrics may have added computed columns.
    for ds in datasets.values() {
        let mut doc = Map::new();
        doc.insert("name".into(), json!(ds.name));
        if let Some(d) = &ds.description {
            doc.insert("description".into(), json!(d));
        }
        doc.insert("binding".into(), json!({"single_table": ds.table}));
        doc.insert("identity".into(), json!(ds.identity));
        if !ds.aliases.is_empty() {
            doc.insert("column_aliases".into(), json!(ds.aliases));
        }
        doc.insert("columns".into(), Json::Array(ds.columns.iter().cloned().map(Json::Object).collect()));
        doc.insert("provenance".into(), provenance(&ds.at));
        if let Some(def) = ds.ours.as_ref().and_then(|o| o.get("definition")).and_then(Json::as_object) {
            doc.extend(def.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        out.files.insert(format!("entities/{}.yaml", ds.name), file_text(&doc));
    }
    for (name, doc) in &joins {
        out.files.insert(format!("joins/{name}.yaml"), file_text(doc));
    }
    for (name, doc) in &metrics {
        out.files.insert(format!("metrics/{name}.yaml"), file_text(doc));
    }
    let name = model_name.filter(|n| is_identifier(n)).or_else(|| options.name.clone()).unwrap_or_else(|| "ossie".into());
    let mut set = Map::new();
    set.insert("name".into(), json!(name));
    if let Some(d) = &options.dialect {
        set.insert("dialect".into(), json!(d));
    }
    if let Some(src) = &options.source {
        set.insert("source".into(), json!(src));
    }
    for (k, v) in settings {
        set.entry(k).or_insert(v);
    }
    out.files.insert("schemabrain.yaml".into(), file_text(&set));
    drop_what_does_not_load(&mut out);
    let count = |dir: &str| out.files.keys().filter(|k| k.starts_with(dir)).count();
    out.entities = count("entities/");
    out.joins = count("joins/");
    out.metrics = count("metrics/");
    out.relationships.retain(|r| out.files.contains_key(&format!("joins/{}.yaml", r.join)));
    Ok(out)
}

/// The model's own extension: settings, the PII policy, saved queries;
/// returns the metrics written there alone (those Ossie's SQL cannot say),
/// as definition documents by name.
fn model_extension(ours: &Map<String, Json>, out: &mut Imported, settings: &mut Map<String, Json>) -> Vec<(String, Map<String, Json>)> {
    if let Some(o) = ours.get("settings").and_then(Json::as_object) {
        settings.extend(o.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    if let Some(p) = ours.get("pii_policy").and_then(Json::as_object) {
        out.files.insert("pii_policy.yaml".into(), file_text(p));
    }
    for qy in ours.get("queries").and_then(Json::as_array).into_iter().flatten() {
        if let Some(n) = qy.get("name").and_then(Json::as_str).filter(|n| is_identifier(n)) {
            if let Some(o) = qy.as_object() {
                out.files.insert(format!("queries/{n}.yaml"), file_text(o));
            }
        }
    }
    let mut metrics = Vec::new();
    for m in ours.get("metrics").and_then(Json::as_array).into_iter().flatten() {
        let (Some(name), Some(def)) = (m.get("name").and_then(Json::as_str).filter(|n| is_identifier(n)), m.get("definition").and_then(Json::as_object)) else {
            out.unmapped.push(Unmapped { item: "model extension".into(), reason: format!("a metric without a name or definition: {}", crate::model::echo(&m.to_string())) });
            continue;
        };
        let mut doc = Map::new();
        doc.insert("name".into(), json!(name));
        if let Some(d) = m.get("description").and_then(Json::as_str) {
            doc.insert("description".into(), json!(d));
        }
        doc.extend(def.iter().map(|(k, v)| (k.clone(), v.clone())));
        metrics.push((name.to_string(), doc));
    }
    metrics
}

/// A relationship as a join document, with what `--source` measures.
fn relationship(
    r: &Json,
    name: &str,
    datasets: &mut BTreeMap<String, Dataset>,
    fields: &Fields,
    ours: Option<Map<String, Json>>,
    at: &str,
) -> Result<(Map<String, Json>, Option<Relationship>), String> {
    if !is_identifier(name) {
        return Err("its name is not an identifier".into());
    }
    let (from, to) = (s(r, "from").unwrap_or("?"), s(r, "to").unwrap_or("?"));
    for side in [from, to] {
        if !datasets.contains_key(side) {
            return Err(format!("dataset `{side}` was not mapped"));
        }
    }
    if from == to {
        return Err("a relationship of a dataset to itself (our joins connect two entities; bind a second entity to the table)".into());
    }
    let column = |ds: &str, c: &str| -> Result<String, String> {
        match fields.get(ds).and_then(|f| f.get(c)) {
            Some(FieldSql { computed: true, .. }) => Err(format!("`{ds}.{c}` is a computed field; a join key must be a column")),
            Some(FieldSql { column, .. }) => Ok(column.clone()),
            None if is_identifier(c) => Ok(c.to_string()),
            None => Err(format!("`{c}` is not a column name")),
        }
    };
    let mut on = Vec::new();
    let (mut fc, mut tc) = (Vec::new(), Vec::new());
    for (f, t) in arr(r, "from_columns").iter().zip(arr(r, "to_columns")) {
        let (f, t) = (column(from, f.as_str().unwrap_or("?"))?, column(to, t.as_str().unwrap_or("?"))?);
        on.push(json!({"source": f, "target": t}));
        fc.push(f);
        tc.push(t);
    }
    for c in &fc {
        if let Some(d) = datasets.get_mut(from) {
            d.declare(c);
        }
    }
    for c in &tc {
        if let Some(d) = datasets.get_mut(to) {
            d.declare(c);
        }
    }
    let mut doc = Map::new();
    doc.insert("name".into(), json!(name));
    if let Some(d) = description(r) {
        doc.insert("description".into(), json!(d));
    }
    doc.insert("source_entity".into(), json!(from));
    doc.insert("target_entity".into(), json!(to));
    doc.insert("on".into(), Json::Array(on));
    // Ossie's `from` is the many side, `to` the one side.
    doc.insert("cardinality".into(), json!("many_to_one"));
    doc.insert("provenance".into(), provenance(at));
    let to_table = datasets.get(to).map(|d| d.table.clone()).unwrap_or_default();
    let rel = Relationship { join: name.to_string(), to_table, to_columns: tc };
    if let Some(def) = ours.as_ref().and_then(|o| o.get("definition")).and_then(Json::as_object) {
        doc.extend(def.iter().map(|(k, v)| (k.clone(), v.clone())));
        // Our own export says the cardinality; nothing to measure.
        return Ok((doc, None));
    }
    Ok((doc, Some(rel)))
}

/// A simple metric document for one aggregate, anchored on its dataset.
fn simple(head: &Map<String, Json>, term: &Term, datasets: &mut BTreeMap<String, Dataset>, at: &str) -> Result<Map<String, Json>, String> {
    let name = head.get("name").and_then(Json::as_str).unwrap_or("?").to_string();
    let ds = datasets.get_mut(&term.dataset).ok_or_else(|| format!("dataset `{}` was not mapped", term.dataset))?;
    let mut measure = Map::new();
    measure.insert("agg".into(), json!(term.agg));
    match &term.operand {
        Operand::Column(c) => {
            ds.declare(c);
            measure.insert("column".into(), json!(c));
        }
        Operand::Expr(e) => {
            measure.insert("expression".into(), json!(e));
        }
        Operand::Computed(sql) => {
            // SQL beyond our arithmetic: a computed column named after the metric.
            let mut col = format!("{name}_value");
            while ds.has_column(&col) {
                col.push('_');
            }
            let mut c = Map::new();
            c.insert("name".into(), json!(col));
            c.insert("expr".into(), json!(sql));
            c.insert("description".into(), json!(format!("What `{name}` aggregates (from its Ossie expression).")));
            ds.columns.push(c);
            measure.insert("column".into(), json!(col));
        }
    }
    if let Some(p) = term.percentile {
        measure.insert("percentile".into(), json!(p));
        if term.discrete {
            measure.insert("discrete".into(), json!(true));
        }
    }
    let mut doc = head.clone();
    doc.insert("entity".into(), json!(term.dataset));
    doc.insert("measure".into(), Json::Object(measure));
    // The anchor's one time field (a date or time stamp) is the metric's
    // time dimension; with several, the request names one.
    let usable: Vec<&(String, Option<String>)> =
        ds.time.iter().filter(|(_, t)| matches!(t.as_deref(), None | Some("Date" | "DateTime" | "DateTimeTz"))).collect();
    if let [(col, ty)] = usable.as_slice() {
        doc.insert("time_dimension".into(), json!(format!("{}.{col}", term.dataset)));
        let grains = if matches!(ty.as_deref(), Some("DateTime" | "DateTimeTz")) {
            json!(["hour", "day", "week", "month", "quarter", "year"])
        } else {
            json!(["day", "week", "month", "quarter", "year"])
        };
        doc.insert("time_grains".into(), grains);
    }
    doc.insert("provenance".into(), provenance(at));
    Ok(doc)
}

/// A file the loader refuses (a shape this mapping did not foresee) is
/// taken out and listed with the loader's message, and so is what read
/// it, until the project loads.
fn drop_what_does_not_load(out: &mut Imported) {
    use crate::model::{load_project_from_files, FileKind};
    for _ in 0..32 {
        let files: Vec<(FileKind, std::path::PathBuf, String)> = out
            .files
            .iter()
            .filter_map(|(rel, text)| Some((FileKind::of_project_path(rel)?, std::path::PathBuf::from(rel), text.clone())))
            .collect();
        let (_, diags) = load_project_from_files(&files);
        let mut bad: BTreeMap<String, String> = BTreeMap::new();
        for d in diags.iter() {
            let rel = d.file.to_string_lossy().to_string();
            if out.files.contains_key(&rel) && rel != "schemabrain.yaml" {
                bad.entry(rel).or_insert_with(|| format!("line {}: {}{}", d.line, if d.key.is_empty() { String::new() } else { format!("{}: ", d.key) }, d.message));
            }
        }
        if bad.is_empty() {
            return;
        }
        for (rel, message) in bad {
            out.files.remove(&rel);
            let (kind, rest) = rel.split_once('/').unwrap_or(("", rel.as_str()));
            let what = match kind {
                "entities" => "dataset",
                "joins" => "relationship",
                "metrics" => "metric",
                "queries" => "saved query",
                _ => "file",
            };
            out.unmapped.push(Unmapped { item: format!("{what} {}", rest.trim_end_matches(".yaml")), reason: format!("the grammar refuses what it maps to: {message}") });
        }
    }
}
