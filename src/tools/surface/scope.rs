//! What one caller may see beyond its metrics (issue 37): the project cut
//! to its roles' allowed entities and with their PII widening, and the
//! entity checks a call gets before any tool runs, so a request outside the
//! allowlist is refused as `allowlist_violation` (naming the role that
//! would allow it) rather than answered as an unknown name.
//!
//! Two cuts per set of roles: the *planning* project (metrics cut, PII
//! widened, every entity still there) on which a request's plan is made to
//! find every entity it reads, and the *served* project (also without the
//! disallowed entities, their joins, the metrics and saved queries whose
//! plans read them, and their catalog tables) every tool then answers from,
//! so listings, search and descriptions show only what the caller may use.
//!
//! Architecture invariant: decisions over the model and the access
//! policy; no engine, no audit, no transport, no envelope building.

use std::collections::BTreeSet;

use serde_json::Value as Json;

use crate::auth::policy::{AccessPolicy, Denied};
use crate::project::Project;
use crate::tools::semantic::{self, GetMetricArgs};

/// `project` with the PII categories the caller sees beyond its policy.
pub fn widen(mut project: Project, categories: &BTreeSet<String>) -> Project {
    if !categories.is_empty() {
        project.model.widen_pii(categories.iter().cloned().collect());
    }
    project
}

/// The entities a get_metric request reads: those of its plan (each
/// component's own, every join and semi-join on its paths, a conversion's
/// other entity). A request that does not plan (a typo, a PII refusal)
/// reads, to be safe, every entity named as `entity.` or `entity__` in any
/// of its strings.
pub fn request_entities(planning: &Project, args: &Json) -> BTreeSet<String> {
    let planned = serde_json::from_value::<GetMetricArgs>(args.clone()).ok().and_then(|a| semantic::request_plan(planning, &a).ok());
    match planned {
        Some(plan) => plan_entities(&plan),
        None => named_entities(planning, args),
    }
}

fn plan_entities(plan: &crate::plan::RequestPlan) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for c in &plan.components {
        out.insert(c.anchor.entity.clone());
        for j in c.joins.iter().chain(c.semi_joins.iter().flat_map(|s| s.steps.iter())) {
            out.insert(j.from_entity.clone());
            out.insert(j.to.entity.clone());
        }
        if let Some(conv) = &c.conversion {
            out.insert(conv.entity.clone());
        }
    }
    out
}

/// Entities any string of `args` names as `entity.x` or `entity__x`.
fn named_entities(project: &Project, args: &Json) -> BTreeSet<String> {
    let mut strings = Vec::new();
    collect_strings(args, &mut strings);
    let mut out = BTreeSet::new();
    for name in project.model.entities.keys() {
        let (dot, dunder) = (format!("{name}."), format!("{name}__"));
        let starts_word = |s: &str, pat: &str| {
            s.match_indices(pat).any(|(i, _)| s.get(..i).and_then(|before| before.chars().next_back()).is_none_or(|c| !(c.is_alphanumeric() || c == '_')))
        };
        if strings.iter().any(|s| starts_word(s, &dot) || starts_word(s, &dunder)) {
            out.insert(name.clone());
        }
    }
    out
}

fn collect_strings<'a>(v: &'a Json, out: &mut Vec<&'a str>) {
    match v {
        Json::String(s) => out.push(s),
        Json::Array(items) => items.iter().for_each(|i| collect_strings(i, out)),
        Json::Object(m) => m.values().for_each(|i| collect_strings(i, out)),
        _ => {}
    }
}

/// The entities bound to catalog table `key` (`schema.table`, any case).
fn entities_on_table<'p>(project: &'p Project, key: &str) -> impl Iterator<Item = &'p str> + 'p {
    let key = key.to_lowercase();
    project.model.entities.values().filter(move |e| format!("{}.{}", e.table.schema, e.table.table).to_lowercase() == key).map(|e| e.name.as_str())
}

/// The entities bound to the tables a physical tool's `qualified_name`
/// (`schema.table`, or `schema.table.column` for describe_column) or
/// `tables` names.
fn table_arg_entities(project: &Project, tool: &str, args: &Json) -> BTreeSet<String> {
    let mut names: Vec<String> = Vec::new();
    if let Some(q) = args.get("qualified_name").and_then(Json::as_str) {
        let q = if tool == "describe_column" { q.rsplit_once('.').map_or(q, |(t, _)| t) } else { q };
        names.push(q.to_string());
    }
    if let Some(t) = args.get("table").and_then(Json::as_str) {
        names.push(t.to_string());
    }
    names.extend(args.get("tables").and_then(Json::as_array).into_iter().flatten().filter_map(Json::as_str).map(str::to_string));
    names.iter().flat_map(|n| entities_on_table(project, n).map(str::to_string).collect::<Vec<_>>()).collect()
}

/// The entities bound to the tables a free SQL statement reads; nothing
/// when it does not parse (the tool then refuses it itself).
pub fn sql_entities(project: &Project, sql: &str, dialect: &str) -> BTreeSet<String> {
    let (Ok(statement), Some(catalog)) = (crate::provider::guard::check(sql, dialect), project.catalog.as_ref()) else { return BTreeSet::new() };
    let tables = crate::provider::columns::tables_read(&statement, catalog);
    tables.iter().flat_map(|t| entities_on_table(project, t).map(str::to_string).collect::<Vec<_>>()).collect()
}

/// The entities a call names or reads, checked against the roles'
/// allowlist on the planning project. `dialect` is the source's, for free SQL.
pub fn check_call(policy: &AccessPolicy, roles: &[String], planning: &Project, tool: &str, args: &Json, dialect: &str) -> Result<(), Denied> {
    if policy.visible_entities(roles).is_none() {
        return Ok(());
    }
    let read: BTreeSet<String> = match tool {
        "get_metric" => request_entities(planning, args),
        "describe_entity" => args.get("name").and_then(Json::as_str).filter(|n| planning.model.entities.contains_key(*n)).map(str::to_string).into_iter().collect(),
        "resolve_join" => ["entity_a", "entity_b"]
            .iter()
            .filter_map(|k| args.get(*k).and_then(Json::as_str))
            .filter(|n| planning.model.entities.contains_key(*n))
            .map(str::to_string)
            .collect(),
        "query_sql" | "explain_sql" | "materialize_sql" | "create_view" => {
            let asked = args.get("dialect").and_then(Json::as_str).unwrap_or(dialect);
            let mut read = args.get("sql").and_then(Json::as_str).map(|s| sql_entities(planning, s, asked)).unwrap_or_default();
            read.extend(table_arg_entities(planning, tool, args));
            read
        }
        _ => table_arg_entities(planning, tool, args),
    };
    read.iter().try_for_each(|e| policy.check_entity(roles, e))
}

/// `planning` without the entities outside `allowed`: their joins, the
/// metrics and saved queries whose plans read them, and their catalog
/// tables go too. A cut that does not check (not expected: what is removed
/// takes what refers to it along) falls back to the allowed entities alone,
/// without joins or metrics: never to more than the caller may see.
pub fn served(planning: &Project, allowed: &BTreeSet<String>) -> Project {
    let model = &planning.model;
    let metric_ok = |name: &str| -> bool {
        let mut args = GetMetricArgs::metric(name);
        let mut plan = semantic::request_plan(planning, &args);
        if plan.is_err() {
            // Cumulative and offset metrics plan only with a grain.
            args.time_grain = Some("day".to_string());
            plan = semantic::request_plan(planning, &args);
        }
        match plan {
            Ok(p) => plan_entities(&p).is_subset(allowed),
            // Unplannable alone: judged by the entities it names.
            Err(_) => own_entities(model, name).is_subset(allowed),
        }
    };
    let keep_metrics: BTreeSet<String> = model.metrics.keys().chain(model.derived.keys()).filter(|n| metric_ok(n)).cloned().collect();
    let keep_queries: BTreeSet<String> = model
        .queries
        .iter()
        .filter(|(n, q)| {
            q.metrics.iter().all(|m| keep_metrics.contains(m)) && {
                let args = GetMetricArgs { query: Some((*n).clone()), ..GetMetricArgs::default() };
                semantic::request_plan(planning, &args).map_or_else(|_| named_entities(planning, &serde_json::json!(q.group_by)).is_subset(allowed), |p| plan_entities(&p).is_subset(allowed))
            }
        })
        .map(|(n, _)| n.clone())
        .collect();
    let cut = |metrics: bool| {
        let mut m = model.clone().into_model();
        m.entities.retain(|n, _| allowed.contains(n));
        if metrics {
            m.joins.retain(|_, j| allowed.contains(&j.source_entity) && allowed.contains(&j.target_entity));
            m.metrics.retain(|n, _| keep_metrics.contains(n));
            m.derived.retain(|n, _| keep_metrics.contains(n));
            m.queries.retain(|n, _| keep_queries.contains(n));
        } else {
            m.joins.clear();
            m.metrics.clear();
            m.derived.clear();
            m.queries.clear();
        }
        crate::model::CheckedModel::new(m)
    };
    let model = match cut(true) {
        Ok(m) => m,
        Err(d) => {
            tracing::error!("the model cut to entities {allowed:?} does not check; only the entities are served:\n{d}");
            match cut(false) {
                Ok(m) => m,
                Err(d) => {
                    tracing::error!("the entities {allowed:?} alone do not check; nothing is served:\n{d}");
                    let mut m = model.clone().into_model();
                    m.entities.clear();
                    m.joins.clear();
                    m.metrics.clear();
                    m.derived.clear();
                    m.queries.clear();
                    match crate::model::CheckedModel::new(m) {
                        Ok(m) => m,
                        Err(_) => model.clone(),
                    }
                }
            }
        }
    };
    let hidden: BTreeSet<String> = planning
        .model
        .entities
        .values()
        .filter(|e| !allowed.contains(&e.name))
        .map(|e| format!("{}.{}", e.table.schema, e.table.table).to_lowercase())
        .collect();
    let catalog = planning.catalog.clone().map(|mut c| {
        c.tables.retain(|k, _| !hidden.contains(&k.to_lowercase()));
        c
    });
    Project { dir: planning.dir.clone(), model, catalog, rows: planning.rows.clone() }
}

/// The entities a metric names itself: a simple metric's entity and its
/// time dimension's, a derived metric's inputs' (to a fixed point).
fn own_entities(model: &crate::model::SemanticModel, name: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    let mut todo = vec![name.to_string()];
    let mut seen = BTreeSet::new();
    while let Some(n) = todo.pop() {
        if !seen.insert(n.clone()) {
            continue;
        }
        if let Some(m) = model.metrics.get(&n) {
            out.insert(m.entity.clone());
            if let Some(t) = &m.time_dimension {
                out.insert(t.entity.clone());
            }
        }
        if let Some(d) = model.derived.get(&n) {
            todo.extend(d.inputs.iter().map(|i| i.metric.clone()));
        }
    }
    out
}
