//! Local lexical search for find_relevant_tables and find_relevant_entities:
//! Okapi BM25 over fielded documents built from identifiers (split into
//! words), table and column comments, the model's descriptions and the
//! metrics anchored on each entity, with light stemming and a small synonym
//! table. No network, no model download, deterministic.
//!
//! PII: columns `pii::decide` redacts (blocked categories and the
//! catastrophic floor, from the policy, inferred tags or the name
//! classifier) are left out of the index entirely, so a search can never
//! reveal their names or comments.
//!
//! Architecture invariant: pure over the model and catalog snapshot.

use std::collections::{BTreeMap, BTreeSet};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value as Json};

use super::physical::catalog_of;
use crate::envelope::{Confidence, Envelope, FailureKind, Recovery, ToolError};
use crate::model::{SemanticModel, TableRef};
use crate::project::Project;

/// Arguments of find_relevant_tables and find_relevant_entities.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchArgs {
    /// What you are looking for, in words ("orders by country", "marketing spend"); `*` lists everything.
    pub query: String,
    /// Hits at most, 1..50; default 10.
    #[serde(default = "default_limit")]
    #[schemars(range(min = 1, max = 50))]
    pub limit: u32,
}

fn default_limit() -> u32 {
    10
}

/// Words that carry no meaning for schema search.
const STOPWORDS: &[&str] = &[
    "a", "an", "the", "of", "in", "on", "for", "by", "to", "and", "or", "per", "with", "is", "are", "was", "were", "what", "which",
    "where", "who", "how", "many", "much", "do", "does", "we", "i", "our", "my", "me", "show", "find", "table", "tables", "data",
    "list", "get", "give", "all", "each", "every", "that", "this", "there", "have", "has", "it", "its", "at", "from", "be", "about",
    "info", "information", "stored", "kept", "record", "records", "row", "rows",
];

/// Business words and the schema words they usually mean (both stemmed).
/// Small on purpose: a lexical net for the commonest paraphrases.
const SYNONYMS: &[(&str, &[&str])] = &[
    ("client", &["customer"]),
    ("buyer", &["customer"]),
    ("user", &["customer", "account"]),
    ("shopper", &["customer"]),
    ("people", &["customer"]),
    ("person", &["customer"]),
    ("account", &["customer"]),
    ("purchase", &["order"]),
    ("sale", &["order", "revenue"]),
    ("transaction", &["order"]),
    ("basket", &["order", "item"]),
    ("line", &["item"]),
    ("item", &["product", "line"]),
    ("sku", &["product"]),
    ("merchandise", &["product"]),
    ("good", &["product"]),
    ("catalog", &["product"]),
    ("brand", &["product"]),
    ("shop", &["store"]),
    ("branch", &["store"]),
    ("outlet", &["store"]),
    ("location", &["address", "city", "store"]),
    ("territory", &["region"]),
    ("area", &["region"]),
    ("geography", &["region", "country"]),
    ("delivery", &["shipping", "address"]),
    ("ship", &["shipping"]),
    ("shipment", &["shipping"]),
    ("postal", &["address"]),
    ("zip", &["postal", "address"]),
    ("invoice", &["billing", "order"]),
    ("marketing", &["campaign", "spend"]),
    ("advertising", &["campaign", "spend", "marketing"]),
    ("ad", &["campaign", "spend"]),
    ("ads", &["campaign", "spend"]),
    ("budget", &["spend", "cost"]),
    ("expense", &["spend", "cost"]),
    ("cost", &["spend"]),
    ("money", &["amount", "cost"]),
    ("price", &["unit", "list"]),
    ("revenue", &["amount", "order"]),
    ("income", &["revenue", "amount"]),
    ("total", &["amount"]),
    ("value", &["amount"]),
    ("discount", &["order"]),
    ("date", &["day", "at", "on"]),
    ("when", &["date", "at"]),
    ("signup", &["signup"]),
    ("registration", &["signup"]),
    ("join", &["signup"]),
    ("birthday", &["birth"]),
    ("age", &["birth"]),
    ("quantity", &["unit"]),
    ("unit", &["quantity"]),
    ("category", &["product"]),
    ("kind", &["category"]),
    ("type", &["category"]),
];

/// Lowercase words of a text: identifiers split at `_`, `.` and camelCase.
pub fn words(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for ch in text.chars() {
        if ch.is_alphanumeric() {
            if ch.is_uppercase() && prev_lower && !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = ch.is_lowercase() || ch.is_ascii_digit();
            cur.extend(ch.to_lowercase());
        } else {
            prev_lower = false;
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        }
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// A light English stemmer: plural and a few suffixes, enough for schema words.
pub fn stem(w: &str) -> String {
    let w = w.to_string();
    for (suffix, with) in [("ies", "y"), ("sses", "ss"), ("ches", "ch"), ("shes", "sh"), ("xes", "x")] {
        if w.len() > suffix.len() + 2 && w.ends_with(suffix) {
            return format!("{}{with}", &w[..w.len() - suffix.len()]);
        }
    }
    if w.len() > 3 && w.ends_with('s') && !w.ends_with("ss") && !w.ends_with("us") && !w.ends_with("is") {
        return w[..w.len() - 1].to_string();
    }
    if w.len() > 5 && w.ends_with("ing") {
        return w[..w.len() - 3].to_string();
    }
    w
}

/// Index terms of a text: words, stopwords dropped, stemmed.
pub fn terms(text: &str) -> Vec<String> {
    words(text).into_iter().filter(|w| !STOPWORDS.contains(&w.as_str())).map(|w| stem(&w)).collect()
}

/// Query terms with weights: the query's own terms at 1.0, synonyms at 0.5.
fn query_terms(query: &str) -> Vec<(String, f64)> {
    let mut out: BTreeMap<String, f64> = BTreeMap::new();
    for t in terms(query) {
        out.insert(t.clone(), 1.0);
        if let Some((_, syns)) = SYNONYMS.iter().find(|(k, _)| *k == t) {
            for s in *syns {
                let e = out.entry(stem(s)).or_insert(0.0);
                *e = e.max(0.5);
            }
        }
    }
    out.into_iter().collect()
}

/// One searchable document: weighted terms (a field's weight repeats its terms).
#[derive(Debug, Default)]
struct Doc {
    key: String,
    tf: BTreeMap<String, f64>,
    len: f64,
    /// Column name → its terms, to name the best-matching column.
    columns: Vec<(String, Option<String>, BTreeSet<String>)>,
}

impl Doc {
    fn add(&mut self, text: &str, weight: f64) {
        for t in terms(text) {
            *self.tf.entry(t).or_insert(0.0) += weight;
            self.len += weight;
        }
    }
}

/// BM25 parameters (the usual defaults).
const K1: f64 = 1.2;
const B: f64 = 0.75;

/// Ranked `(doc index, score, matched query terms)`, best first, ties by key.
fn rank(docs: &[Doc], query: &[(String, f64)]) -> Vec<(usize, f64, Vec<String>)> {
    let n = docs.len() as f64;
    let avg = (docs.iter().map(|d| d.len).sum::<f64>() / n.max(1.0)).max(1.0);
    let mut out = Vec::new();
    for (i, d) in docs.iter().enumerate() {
        let mut score = 0.0;
        let mut matched = Vec::new();
        for (t, w) in query {
            let Some(tf) = d.tf.get(t) else { continue };
            let df = docs.iter().filter(|x| x.tf.contains_key(t)).count() as f64;
            let idf = ((n - df + 0.5) / (df + 0.5) + 1.0).ln();
            score += w * idf * (tf * (K1 + 1.0)) / (tf + K1 * (1.0 - B + B * d.len / avg));
            if *w >= 1.0 {
                matched.push(t.clone());
            }
        }
        if score > 0.0 {
            out.push((i, score, matched));
        }
    }
    let key = |i: usize| docs.get(i).map(|d| d.key.as_str());
    out.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| key(a.0).cmp(&key(b.0))));
    out
}

/// Whether the PII decision hides this column from search (blocked or
/// catastrophic, by policy, inferred tag or name).
fn hidden(model: &SemanticModel, table: &TableRef, column: &str) -> bool {
    crate::pii::decide(&model.pii_policy, table, column).redacted()
}

/// Adds what the semantic layer says about `table` (entity, its columns'
/// descriptions, metrics anchored on it).
fn add_semantics(doc: &mut Doc, model: &SemanticModel, table: &TableRef) {
    for e in model.entities.values().filter(|e| &e.table == table) {
        doc.add(&e.name, 2.0);
        if let Some(d) = &e.description {
            doc.add(d, 1.0);
        }
        for c in &e.columns {
            if let Some(d) = &c.description {
                if !hidden(model, table, &c.name) {
                    doc.add(d, 0.5);
                }
            }
        }
        for m in model.metrics.values().filter(|m| m.entity == e.name) {
            doc.add(&m.name, 0.5);
            if let Some(d) = &m.description {
                doc.add(d, 0.5);
            }
        }
    }
}

fn column_terms(name: &str, description: Option<&str>) -> BTreeSet<String> {
    let mut s: BTreeSet<String> = terms(name).into_iter().collect();
    if let Some(d) = description {
        s.extend(terms(d));
    }
    s
}

fn table_docs(project: &Project) -> Result<Vec<Doc>, ToolError> {
    let catalog = catalog_of(project)?;
    let model = &project.model;
    let mut docs = Vec::new();
    for t in catalog.tables.values() {
        let tref = TableRef { schema: t.schema.clone(), table: t.name.clone() };
        let mut d = Doc { key: format!("{}.{}", t.schema, t.name), ..Default::default() };
        d.add(&t.name, 3.0);
        if let Some(c) = &t.comment {
            d.add(c, 1.0);
        }
        for c in t.columns.iter().filter(|c| !hidden(model, &tref, &c.name)) {
            d.add(&c.name, 1.0);
            if let Some(cm) = &c.comment {
                d.add(cm, 0.5);
            }
            let desc = c.comment.clone().or_else(|| {
                model.entities.values().find(|e| e.table == tref).and_then(|e| e.column(&c.name)).and_then(|x| x.description.clone())
            });
            let ts = column_terms(&c.name, desc.as_deref());
            d.columns.push((c.name.clone(), desc, ts));
        }
        add_semantics(&mut d, model, &tref);
        docs.push(d);
    }
    Ok(docs)
}

fn entity_docs(project: &Project) -> Vec<Doc> {
    let model = &project.model;
    model
        .entities
        .values()
        .map(|e| {
            let mut d = Doc { key: e.name.clone(), ..Default::default() };
            d.add(&e.table.table, 1.0);
            for c in e.columns.iter().filter(|c| !hidden(model, &e.table, &c.name)) {
                d.add(&c.name, 1.0);
                d.columns.push((c.name.clone(), c.description.clone(), column_terms(&c.name, c.description.as_deref())));
            }
            add_semantics(&mut d, model, &e.table);
            d
        })
        .collect()
}

/// The column sharing most query terms with the query, if any.
#[allow(clippy::type_complexity)]
fn best_column(doc: &Doc, query: &[(String, f64)]) -> (Option<String>, Option<String>) {
    let mut best: Option<(f64, &(String, Option<String>, BTreeSet<String>))> = None;
    for c in &doc.columns {
        let s: f64 = query.iter().filter(|(t, _)| c.2.contains(t)).map(|(_, w)| w).sum();
        if s > 0.0 && best.is_none_or(|(b, _)| s > b) {
            best = Some((s, c));
        }
    }
    match best {
        Some((_, c)) => (Some(c.0.clone()), c.1.clone()),
        None => (None, None),
    }
}

fn bad_query(tool: &str) -> Envelope {
    Envelope::error(ToolError::new(
        FailureKind::MalformedName,
        format!("{tool} needs a query with at least one word (or `*` for everything) and a limit between 1 and 50."),
        Recovery::call(tool, json!({"query": "*"})),
    ))
}

/// Shared by both tools: rank `docs`, build hits with `hit(doc, score, matched, best column)`.
#[allow(clippy::type_complexity)]
fn search(tool: &str, docs: &[Doc], args: &SearchArgs, hit: impl Fn(&Doc, f64, &[String], (Option<String>, Option<String>)) -> Json) -> Envelope {
    if !(1..=50).contains(&args.limit) {
        return bad_query(tool);
    }
    let limit = args.limit as usize;
    let q = args.query.trim();
    let (ranked, query): (Vec<(usize, f64, Vec<String>)>, Vec<(String, f64)>) = if q == "*" {
        let mut all: Vec<usize> = (0..docs.len()).collect();
        all.sort_by(|a, b| docs.get(*a).map(|d| &d.key).cmp(&docs.get(*b).map(|d| &d.key)));
        (all.into_iter().map(|i| (i, 0.0, Vec::new())).collect(), Vec::new())
    } else {
        let query = query_terms(q);
        if query.is_empty() {
            return bad_query(tool);
        }
        (rank(docs, &query), query)
    };
    let own_terms = query.iter().filter(|(_, w)| *w >= 1.0).count().max(1);
    let hits: Vec<Json> =
        ranked.iter().take(limit).filter_map(|(i, s, m)| docs.get(*i).map(|d| hit(d, *s, m, best_column(d, &query)))).collect();
    let data = json!({"query": args.query, "hits": hits, "count": hits.len(), "method": "bm25"});
    if hits.is_empty() {
        let hint = if tool == "find_relevant_tables" { "list_entities" } else { "find_relevant_tables" };
        return Envelope::empty(Some(data)).with_follow_up_hints(&[hint]);
    }
    // Confidence: how much of the query the top hit covers.
    let coverage = if q == "*" { 1.0 } else { ranked.first().map_or(0.0, |r| r.2.len() as f64 / own_terms as f64) };
    let confidence = if coverage >= 0.8 {
        Confidence::High
    } else if coverage >= 0.5 {
        Confidence::Medium
    } else {
        Confidence::Low
    };
    let next: &[&str] = if tool == "find_relevant_tables" { &["describe_table", "suggest_joins"] } else { &["describe_entity", "get_metric"] };
    Envelope::success(data).with_confidence(confidence).with_follow_up_hints(next)
}

fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

pub fn find_relevant_tables(project: &Project, args: &SearchArgs) -> Envelope {
    let docs = match table_docs(project) {
        Ok(d) => d,
        Err(e) => return Envelope::error(e),
    };
    let model = &project.model;
    search("find_relevant_tables", &docs, args, |d, score, matched, (col, desc)| {
        let (schema, table) = d.key.split_once('.').unwrap_or(("", &d.key));
        let entity = model.entity_on(schema, table).map(|e| e.name.clone());
        json!({
            "qualified_name": d.key,
            "score": round(score),
            "entity": entity,
            "best_column": col,
            "best_column_description": desc,
            "matched_terms": matched,
        })
    })
}

pub fn find_relevant_entities(project: &Project, args: &SearchArgs) -> Envelope {
    let docs = entity_docs(project);
    let model = &project.model;
    search("find_relevant_entities", &docs, args, |d, score, matched, (col, desc)| {
        let e = model.entity(&d.key);
        json!({
            "name": d.key,
            "score": round(score),
            "qualified_table": e.map(|e| e.table.to_string()),
            "description": e.and_then(|e| e.description.clone()),
            "best_column": col,
            "best_column_description": desc,
            "matched_terms": matched,
        })
    })
}
