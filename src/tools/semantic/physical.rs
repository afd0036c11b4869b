//! The physical-schema tools: describe_table, describe_column,
//! suggest_joins, get_example_queries. They read the project's catalog
//! snapshot (`project.catalog`); with none they answer `index_not_ready`
//! with a recovery into the semantic layer, which works without one.
//!
//! PII: the one decision of `pii::decide` (policy override, inferred tag,
//! name classifier), so a project without `pii_policy.yaml` is as safe as
//! one with it. Blocked columns are flagged `redacted` and lose their
//! comment; columns in the catastrophic floor (credential, payment_card,
//! government_id) are also renamed to placeholders, in foreign keys and
//! join paths too.
//!
//! Architecture invariant: reads the snapshot only; never opens an engine.

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{json, Value as Json};

use crate::catalog::{Catalog, TableInfo};
use crate::envelope::{Confidence, Envelope, FailureKind, Recovery, ToolError};
use crate::model::{close_matches, is_identifier, SemanticModel, TableRef};
use crate::project::Project;

/// Arguments of tools that take one table.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TableNameArgs {
    /// The table as `schema.table`, e.g. `main.orders` (find_relevant_tables lists them).
    pub qualified_name: String,
}

/// Arguments of `describe_column`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ColumnNameArgs {
    /// The column as `schema.table.column`, e.g. `main.orders.amount`.
    pub qualified_name: String,
}

/// Arguments of `suggest_joins`.
#[derive(Clone, Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SuggestJoinsArgs {
    /// Two or more tables as `schema.table`; a path is found for every pair.
    pub tables: Vec<String>,
    /// Longest path in hops, 1..10; default 6.
    #[serde(default = "default_hops")]
    #[schemars(range(min = 1, max = 10))]
    pub max_hops: u32,
}

fn default_hops() -> u32 {
    6
}

/// The snapshot, or the `index_not_ready` error every physical tool gives
/// without one. Its recovery is list_entities: the semantic layer needs no
/// snapshot, so the suggested call answers.
pub(crate) fn catalog_of(project: &Project) -> Result<&Catalog, ToolError> {
    project.catalog.as_ref().ok_or_else(|| {
        ToolError::new(
            FailureKind::IndexNotReady,
            "No catalog snapshot yet: run `schemabrain query` or `schemabrain serve --source URL` once so the physical tables are indexed; the semantic layer (list_entities) works meanwhile.",
            Recovery::call("list_entities", json!({})),
        )
    })
}

fn find_tables(query: &str) -> Recovery {
    Recovery::call("find_relevant_tables", json!({"query": query}))
}

/// Parses `schema.table` (parts = 2) or `schema.table.column` (parts = 3).
fn split_name<const N: usize>(name: &str, example: &str) -> Result<[String; N], ToolError> {
    let v: Vec<&str> = name.split('.').collect();
    if v.len() != N || !v.iter().all(|p| is_identifier(p)) {
        let last = v.last().copied().unwrap_or(name);
        let query = if is_identifier(last) { last.to_string() } else { crate::ir::echo_name(name) };
        return Err(ToolError::new(
            FailureKind::MalformedName,
            format!("`{}` is not a qualified name: expected {example}.", crate::ir::echo_name(name)),
            find_tables(&query),
        ));
    }
    Ok(std::array::from_fn(|i| v.get(i).map(|p| p.to_string()).unwrap_or_default()))
}

/// The catalog table `schema.table` names, or the error describe_table gives.
pub fn table_arg<'p>(project: &'p Project, qualified_name: &str) -> Result<&'p TableInfo, ToolError> {
    let catalog = catalog_of(project)?;
    let [schema, table] = split_name::<2>(qualified_name, "`schema.table`, e.g. main.orders")?;
    table_or_error(catalog, &schema, &table)
}

fn table_or_error<'c>(catalog: &'c Catalog, schema: &str, table: &str) -> Result<&'c TableInfo, ToolError> {
    let key = format!("{schema}.{table}");
    catalog.tables.get(&key).ok_or_else(|| {
        ToolError::new(
            FailureKind::UnknownName,
            format!("Table `{key}` is not in the indexed catalog; find_relevant_tables searches it."),
            find_tables(table).with_fuzzy_matches(close_matches(&key, catalog.tables.keys().map(String::as_str))),
        )
    })
}

/// How a column shows under the PII policy.
struct ColumnView {
    shown_name: String,
    redacted: bool,
    catastrophic: bool,
    /// The categories shown: only the blocked ones of a redacted column.
    categories: Vec<String>,
}

/// The PII view of every column of `t` (the one decision every tool reads:
/// policy override, then inferred tag, then name classifier); catastrophic
/// columns get numbered placeholders.
fn column_views(model: &SemanticModel, t: &TableInfo) -> BTreeMap<String, ColumnView> {
    let tref = TableRef { schema: t.schema.clone(), table: t.name.clone() };
    crate::pii::decide_listing(&model.pii_policy, &tref, t.columns.iter().map(|c| c.name.as_str()))
        .into_iter()
        .map(|l| {
            let d = &l.decision;
            let view = ColumnView { redacted: d.redacted(), catastrophic: d.catastrophic, categories: d.shown_categories(), shown_name: l.shown };
            (l.column, view)
        })
        .collect()
}

/// A foreign key's target columns as shown: catastrophic ones as placeholders.
fn shown_targets(model: &SemanticModel, schema: &str, table: &str, columns: &[String]) -> Vec<String> {
    let tref = TableRef { schema: schema.to_string(), table: table.to_string() };
    columns.iter().map(|c| crate::pii::shown_table_column(&model.pii_policy, &tref, c)).collect()
}

fn shown(views: &BTreeMap<String, ColumnView>, col: &str) -> String {
    views.get(col).map(|v| v.shown_name.clone()).unwrap_or_else(|| col.to_string())
}

/// The entity bound to a table, if any.
fn entity_of(model: &SemanticModel, schema: &str, table: &str) -> Option<String> {
    model.entity_on(schema, table).map(|e| e.name.clone())
}

fn describe_column_text(model: &SemanticModel, t: &TableInfo, col: &str) -> Option<String> {
    model.entity_on(&t.schema, &t.name)?.column(col).and_then(|c| c.description.clone())
}

pub fn describe_table(project: &Project, qualified_name: &str) -> Envelope {
    let catalog = match catalog_of(project) {
        Ok(c) => c,
        Err(e) => return Envelope::error(e),
    };
    let parts = match split_name::<2>(qualified_name, "`schema.table`, e.g. main.orders") {
        Ok(p) => p,
        Err(e) => return Envelope::error(e),
    };
    let t = match table_or_error(catalog, &parts[0], &parts[1]) {
        Ok(t) => t,
        Err(e) => return Envelope::error(e),
    };
    let model = &project.model;
    let views = column_views(model, t);
    let columns: Vec<Json> = t
        .columns
        .iter()
        .filter_map(|c| {
            let v = views.get(&c.name)?;
            let description = if v.redacted { None } else { c.comment.clone().or_else(|| describe_column_text(model, t, &c.name)) };
            Some(json!({
                "name": v.shown_name,
                "data_type": c.data_type,
                "nullable": c.nullable,
                "is_primary_key": t.primary_key.contains(&c.name),
                "description": description,
                "redacted": v.redacted,
                "pii_categories": v.categories,
            }))
        })
        .collect();
    let fks: Vec<Json> = t
        .foreign_keys
        .iter()
        .map(|fk| {
            json!({
                "source_columns": fk.columns.iter().map(|c| shown(&views, c)).collect::<Vec<_>>(),
                "target_qualified_name": format!("{}.{}", fk.ref_schema, fk.ref_table),
                "target_columns": shown_targets(model, &fk.ref_schema, &fk.ref_table, &fk.ref_columns),
            })
        })
        .collect();
    Envelope::success(json!({
        "qualified_name": format!("{}.{}", t.schema, t.name),
        "schema_name": t.schema,
        "name": t.name,
        "description": t.comment,
        "entity": entity_of(model, &t.schema, &t.name),
        "row_count": t.row_count,
        "columns": columns,
        "foreign_keys": fks,
    }))
    .with_confidence(Confidence::High)
    .with_follow_up_hints(&["describe_column", "suggest_joins"])
}

pub fn describe_column(project: &Project, qualified_name: &str) -> Envelope {
    let catalog = match catalog_of(project) {
        Ok(c) => c,
        Err(e) => return Envelope::error(e),
    };
    let parts = match split_name::<3>(qualified_name, "`schema.table.column`, e.g. main.orders.amount") {
        Ok(p) => p,
        Err(e) => return Envelope::error(e),
    };
    let t = match table_or_error(catalog, &parts[0], &parts[1]) {
        Ok(t) => t,
        Err(e) => return Envelope::error(e),
    };
    let table_name = format!("{}.{}", t.schema, t.name);
    let model = &project.model;
    let views = column_views(model, t);
    let Some(c) = t.columns.iter().find(|c| c.name == parts[2]) else {
        // Catastrophic columns are never offered as fuzzy matches.
        let names = t.columns.iter().filter(|c| !views.get(&c.name).is_some_and(|v| v.catastrophic)).map(|c| c.name.as_str());
        return Envelope::error(ToolError::new(
            FailureKind::UnknownName,
            format!("Table `{table_name}` has no column `{}`; describe_table lists its columns.", parts[2]),
            Recovery::call("describe_table", json!({"qualified_name": table_name})).with_fuzzy_matches(close_matches(&parts[2], names)),
        ));
    };
    let Some(v) = views.get(&c.name) else {
        return Envelope::error(ToolError::new(FailureKind::InternalError, format!("no PII decision for column `{}`", c.name), Recovery::none()));
    };
    let outgoing: Vec<Json> = t
        .foreign_keys
        .iter()
        .filter(|fk| fk.columns.contains(&c.name))
        .map(|fk| {
            json!({
                "target_qualified_name": format!("{}.{}", fk.ref_schema, fk.ref_table),
                "target_columns": shown_targets(model, &fk.ref_schema, &fk.ref_table, &fk.ref_columns),
            })
        })
        .collect();
    let mut incoming = Vec::new();
    for other in catalog.tables.values() {
        for fk in &other.foreign_keys {
            if fk.ref_schema == t.schema && fk.ref_table == t.name && fk.ref_columns.contains(&c.name) {
                let ov = column_views(model, other);
                incoming.push(json!({
                    "source_qualified_name": format!("{}.{}", other.schema, other.name),
                    "source_columns": fk.columns.iter().map(|x| shown(&ov, x)).collect::<Vec<_>>(),
                }));
            }
        }
    }
    Envelope::success(json!({
        "qualified_name": format!("{table_name}.{}", v.shown_name),
        "table": table_name,
        "name": v.shown_name,
        "data_type": c.data_type,
        "nullable": c.nullable,
        "is_primary_key": t.primary_key.contains(&c.name),
        "description": if v.redacted { None } else { c.comment.clone().or_else(|| describe_column_text(model, t, &c.name)) },
        "accepted_values": if v.redacted { None } else { model.entity_on(&t.schema, &t.name).and_then(|e| e.accepted_values_of(&c.name)) },
        "redacted": v.redacted,
        "pii_categories": v.categories,
        "outgoing_foreign_keys": outgoing,
        "incoming_foreign_keys": incoming,
    }))
    .with_confidence(Confidence::High)
    .with_follow_up_hints(&["describe_table", "suggest_joins"])
}

/// One edge of the table graph: a declared foreign key, or a canonical join
/// of the semantic layer between the tables two entities bind.
#[derive(Clone)]
struct Edge {
    from: String,
    to: String,
    from_columns: Vec<String>,
    to_columns: Vec<String>,
    via: &'static str,
    name: String,
    /// Its rating: a declared foreign key is a fact of the source; a
    /// canonical join is rated as get_metric rates it.
    confidence: crate::envelope::Confidence,
    provenance: crate::envelope::Provenance,
}

fn edges(project: &Project, catalog: &Catalog) -> Vec<Edge> {
    let mut out = Vec::new();
    for t in catalog.tables.values() {
        let views = column_views(&project.model, t);
        for (i, fk) in t.foreign_keys.iter().enumerate() {
            let from = format!("{}.{}", t.schema, t.name);
            let to = format!("{}.{}", fk.ref_schema, fk.ref_table);
            // Named after its columns, unless one of them must not be named.
            let hidden = fk.columns.iter().any(|c| views.get(c).is_some_and(|v| v.catastrophic));
            out.push(Edge {
                name: if hidden { format!("fk_{}_{}", t.name, i + 1) } else { format!("fk_{}_{}", t.name, fk.columns.join("_")) },
                from,
                to,
                from_columns: fk.columns.iter().map(|c| shown(&views, c)).collect(),
                to_columns: shown_targets(&project.model, &fk.ref_schema, &fk.ref_table, &fk.ref_columns),
                via: "foreign_key",
                confidence: crate::envelope::Confidence::High,
                provenance: {
                    let mut p = crate::envelope::Provenance::new(crate::envelope::ProvenanceSource::Schema);
                    p.inference_method = Some(crate::envelope::InferenceMethod::FkConstraint);
                    p.validation_state = Some(crate::envelope::ValidationState::Applied);
                    p
                },
            });
        }
    }
    let model = &project.model;
    for j in model.joins.values() {
        let (Some(a), Some(b)) = (model.entity(&j.source_entity), model.entity(&j.target_entity)) else { continue };
        let rated = super::browse::join_trust(j);
        out.push(Edge {
            confidence: rated.confidence,
            provenance: rated.provenance(),
            from: a.table.to_string(),
            to: b.table.to_string(),
            from_columns: j.on.iter().map(|k| crate::pii::shown_entity_column(model, &a.name, &k.source)).collect(),
            to_columns: j.on.iter().map(|k| crate::pii::shown_entity_column(model, &b.name, &k.target)).collect(),
            via: "canonical_join",
            name: j.name.clone(),
        });
    }
    out
}

pub fn suggest_joins(project: &Project, args: &SuggestJoinsArgs) -> Envelope {
    let catalog = match catalog_of(project) {
        Ok(c) => c,
        Err(e) => return Envelope::error(e),
    };
    if args.tables.len() < 2 || !(1..=10).contains(&args.max_hops) {
        let mut fixed: Vec<String> = args.tables.clone();
        let mut keys = catalog.tables.keys().cloned();
        while fixed.len() < 2 {
            match keys.next() {
                Some(k) if !fixed.contains(&k) => fixed.push(k),
                Some(_) => {}
                None => break,
            }
        }
        return Envelope::error(ToolError::new(
            FailureKind::MalformedName,
            "suggest_joins needs at least two tables (`schema.table`) and max_hops between 1 and 10.",
            Recovery::call("suggest_joins", json!({"tables": fixed, "max_hops": args.max_hops.clamp(1, 10)})),
        ));
    }
    for name in &args.tables {
        let parts = match split_name::<2>(name, "`schema.table`, e.g. main.orders") {
            Ok(p) => p,
            Err(e) => return Envelope::error(e),
        };
        if let Err(e) = table_or_error(catalog, &parts[0], &parts[1]) {
            return Envelope::error(e);
        }
    }
    let all = edges(project, catalog);
    let mut paths = Vec::new();
    let mut unreachable = Vec::new();
    let mut answer_trust = None;
    let uniq: BTreeSet<&String> = args.tables.iter().collect();
    let uniq: Vec<&String> = uniq.into_iter().collect();
    for (i, a) in uniq.iter().enumerate() {
        for b in uniq.iter().skip(i + 1) {
            match shortest(&all, a, b, args.max_hops as usize) {
                Some(hops) => {
                    // A path is as trustworthy as its weakest edge.
                    let weakest = hops.iter().map(|(e, _)| *e).min_by_key(|e| e.confidence);
                    if let Some(w) = weakest {
                        if answer_trust.as_ref().is_none_or(|(c, _): &(crate::envelope::Confidence, _)| w.confidence < *c) {
                            answer_trust = Some((w.confidence, w.provenance.clone()));
                        }
                    }
                    paths.push(json!({
                        "start": a, "end": b, "hops": hops.len(),
                        "confidence": weakest.map(|w| w.confidence),
                        "edges": hops.iter().map(|(e, forward)| {
                            let (l, r, lc, rc) = if *forward { (&e.from, &e.to, &e.from_columns, &e.to_columns) } else { (&e.to, &e.from, &e.to_columns, &e.from_columns) };
                            json!({"name": e.name, "left_qualified_name": l, "left_columns": lc, "right_qualified_name": r, "right_columns": rc, "via": e.via,
                                "confidence": e.confidence, "provenance": e.provenance})
                        }).collect::<Vec<_>>(),
                    }))
                }
                None => unreachable.push(json!([a, b])),
            }
        }
    }
    let data = json!({"paths": paths, "unreachable_pairs": unreachable});
    if paths.is_empty() {
        return Envelope::empty(Some(data)).with_follow_up_hints(&["describe_table", "find_relevant_tables"]);
    }
    let env = Envelope::success(data);
    let env = match answer_trust {
        Some((c, p)) => env.with_confidence(c).with_provenance(p),
        None => env.with_confidence(Confidence::High),
    };
    env.with_follow_up_hints(&["describe_table"])
}

/// Breadth-first shortest path over undirected edges; ties go to the edge
/// listed first (foreign keys before canonical joins), so answers are stable.
fn shortest<'e>(edges: &'e [Edge], a: &str, b: &str, max_hops: usize) -> Option<Vec<(&'e Edge, bool)>> {
    let mut prev: BTreeMap<String, (String, &'e Edge, bool)> = BTreeMap::new();
    let mut depth: BTreeMap<String, usize> = BTreeMap::from([(a.to_string(), 0)]);
    let mut queue = VecDeque::from([a.to_string()]);
    while let Some(n) = queue.pop_front() {
        if n == b {
            break;
        }
        let Some(&d) = depth.get(&n) else { continue };
        if d >= max_hops {
            continue;
        }
        for e in edges {
            let (next, forward) = if e.from == n { (&e.to, true) } else if e.to == n { (&e.from, false) } else { continue };
            if depth.contains_key(next) {
                continue;
            }
            depth.insert(next.clone(), d + 1);
            prev.insert(next.clone(), (n.clone(), e, forward));
            queue.push_back(next.clone());
        }
    }
    if a == b {
        return Some(Vec::new());
    }
    let mut hops = Vec::new();
    let mut cur = b.to_string();
    while cur != a {
        let (p, e, f) = prev.get(&cur)?;
        hops.push((*e, *f));
        cur = p.clone();
    }
    hops.reverse();
    Some(hops)
}

pub fn get_example_queries(project: &Project, qualified_name: &str) -> Envelope {
    let catalog = match catalog_of(project) {
        Ok(c) => c,
        Err(e) => return Envelope::error(e),
    };
    let parts = match split_name::<2>(qualified_name, "`schema.table`, e.g. main.orders") {
        Ok(p) => p,
        Err(e) => return Envelope::error(e),
    };
    let t = match table_or_error(catalog, &parts[0], &parts[1]) {
        Ok(t) => t,
        Err(e) => return Envelope::error(e),
    };
    let qualified = format!("{}.{}", t.schema, t.name);
    let queries = example_calls(project, &t.schema, &t.name);
    let data = json!({"qualified_name": qualified, "queries": queries, "source": "model"});
    if queries.is_empty() {
        return Envelope::empty(Some(data)).with_follow_up_hints(&["describe_table", "list_metrics"]);
    }
    Envelope::success(data).with_confidence(Confidence::High).with_follow_up_hints(&["get_metric"])
}

/// Most examples one table gets: enough to show the patterns, few tokens.
const MAX_EXAMPLES: usize = 5;

/// Working get_metric calls about a table, built from the model (no query
/// log is mined, and nothing is invented): each metric whose anchor is the
/// table's entity or reaches it over to-one joins, grouped by one of the
/// entity's categorical columns and, when the metric is a series over time,
/// bucketed by its coarsest common grain. Every call is planned before it
/// is offered, so PII refusals and unreachable columns never appear.
fn example_calls(project: &Project, schema: &str, table: &str) -> Vec<Json> {
    let model = &project.model;
    let Some(entity) = model.entity_on(schema, table) else {
        return Vec::new();
    };
    let keys: BTreeSet<&str> = model
        .joins
        .values()
        .flat_map(|j| j.on.iter().flat_map(|k| [(&j.source_entity, &k.source), (&j.target_entity, &k.target)]))
        .filter(|(e, _)| **e == entity.name)
        .map(|(_, c)| c.as_str())
        .collect();
    let categorical: Vec<&str> = entity
        .columns
        .iter()
        .filter(|c| matches!(c.type_class(), crate::model::TypeClass::Text | crate::model::TypeClass::Boolean))
        .filter(|c| !entity.identity.contains(&c.name) && !keys.contains(c.name.as_str()))
        .map(|c| c.name.as_str())
        .collect();
    let graph = crate::model::graph::JoinGraph::new(model);
    let mut out = Vec::new();
    for m in model.metrics.values() {
        if out.len() >= MAX_EXAMPLES {
            break;
        }
        let reaches = m.entity == entity.name || graph.to_one_reachable(&m.entity).iter().any(|(e, _)| *e == entity.name);
        if !reaches {
            continue;
        }
        let grain = ["month", "quarter", "year", "week", "day"].into_iter().find(|g| m.time_grains.iter().any(|x| x.as_str() == *g));
        // The first categorical column the planner accepts (PII and fan-out
        // rules included); the metric alone when none is.
        let candidates = categorical.iter().map(|c| Some(format!("{}.{c}", entity.name))).chain([None]);
        for column in candidates {
            let mut args = json!({"name": m.name, "limit": 10});
            let mut question = m.name.clone();
            if let Some(c) = &column {
                crate::json::set(&mut args, "group_by", json!([c]));
                crate::json::set(&mut args, "order_by", json!([{"column": m.name, "direction": "desc"}]));
                question.push_str(&format!(" by {c}"));
            }
            if let Some(g) = grain {
                crate::json::set(&mut args, "time_grain", json!(g));
                question.push_str(&format!(" per {g}"));
            }
            let mut dry = args.clone();
            crate::json::set(&mut dry, "dry_run", true.into());
            if super::call(project, "get_metric", &dry, super::Execution::DryRun).tool_error().is_none() {
                out.push(json!({"question": question, "tool": "get_metric", "arguments": args}));
                break;
            }
        }
    }
    out
}
