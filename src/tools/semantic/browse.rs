//! The semantic-layer browsing tools: list_metrics, list_entities,
//! describe_entity, list_joins, resolve_join. Pure reads of the model.
//! Every item carries its trust signal (`confidence`, `provenance`) by
//! get_metric's rules (`contract::trust`); an answer is as trustworthy as
//! its weakest item.

use serde_json::{json, Value as Json};

use super::args::{NameArgs, ResolveJoinArgs};
use crate::envelope::{Envelope, FailureKind, Recovery, ToolError};
use crate::tools::contract::trust::{self, Used};
use crate::model::{close_matches, is_identifier, Entity, Join, SemanticModel};
use crate::project::Project;

fn call(tool: &str, args: Json) -> Recovery {
    Recovery::call(tool, args)
}

/// A listing of rated items: each item stamped with its own rating, the
/// answer with its weakest item's.
fn listing(rated: Vec<(Json, Used<'_>)>, empty_hint: &str) -> Envelope {
    let n = rated.len();
    let weakest = trust::weakest(rated.iter().map(|(_, u)| u)).cloned();
    let items: Vec<Json> = rated
        .into_iter()
        .map(|(mut item, used)| {
            used.stamp(&mut item);
            item
        })
        .collect();
    let data = json!({"items": items, "count": n});
    match weakest {
        None => Envelope::empty(Some(data)).with_follow_up_hints(&[empty_hint]),
        Some(w) => rated_answer(Envelope::success(data), &w),
    }
}

/// An answer resting on `used`: its confidence and provenance.
fn rated_answer(env: Envelope, used: &Used<'_>) -> Envelope {
    env.with_confidence(used.confidence).with_provenance(used.provenance())
}

pub fn list_metrics(project: &Project) -> Envelope {
    let items = project
        .model
        .metrics
        .values()
        .map(|m| {
            let item = json!({
                "name": m.name,
                "description": m.description,
                "type": "simple",
                "entity": m.entity,
                "aggregation": m.measure.agg.as_str(),
                "measure_columns": m.measure.columns().into_iter().map(|c| crate::pii::shown_entity_column(&project.model, &m.entity, c)).collect::<Vec<_>>(),
                "time_dimension": m.time_dimension.as_ref().map(ToString::to_string),
                "time_grains": m.time_grains.iter().map(|g| g.as_str()).collect::<Vec<_>>(),
                "non_additive": m.non_additive.as_ref().map(|na| json!({
                    "dimension": na.dimension.to_string(),
                    "window": if na.window == crate::model::WindowChoice::Last { "last" } else { "first" },
                    "per": na.per.iter().map(ToString::to_string).collect::<Vec<_>>(),
                })),
                "origin": m.origin.as_str(),
            });
            (item, Used::new("metric", &m.name, m.origin, m.provenance.as_ref()))
        })
        .chain(project.model.derived.values().map(|d| {
            use crate::model::{CumulativeWindow, TimeOffset};
            let offset = |o: &Option<TimeOffset>| match o {
                None => Json::Null,
                Some(TimeOffset::Window(w)) => json!({"offset_window": w.to_string()}),
                Some(TimeOffset::ToGrain(g)) => json!({"offset_to_grain": g.as_str()}),
            };
            let mut item = json!({
                "name": d.name,
                "description": d.description,
                "type": d.kind.as_str(),
                "inputs": d.inputs.iter().map(|i| json!({
                    "metric": i.metric,
                    "alias": i.alias,
                    "filtered": !i.filters.is_empty(),
                    "offset": offset(&i.offset),
                })).collect::<Vec<_>>(),
                // Agents must pass time_grain for these, or get invalid_time_grain.
                "requires_time_grain": d.cumulative.is_some() || d.inputs.iter().any(|i| i.offset.is_some()),
                "origin": d.origin.as_str(),
            });
            if let Some(w) = d.cumulative {
                let window = match w {
                    CumulativeWindow::AllTime => json!("all_time"),
                    CumulativeWindow::Rolling(i) => json!(i.to_string()),
                    CumulativeWindow::GrainToDate(g) => json!(format!("{}_to_date", g.as_str())),
                };
                crate::json::set(&mut item, "window", window);
            }
            if let Some(c) = &d.conversion {
                let conversion = json!({
                    "entity": {"base": c.base_key, "conversion": c.conversion_key},
                    "window": c.window.map(|w| w.to_string()),
                    "calculation": if c.calculation == crate::model::ConversionCalculation::ConversionRate { "conversion_rate" } else { "conversions" },
                });
                crate::json::set(&mut item, "conversion", conversion);
            }
            (item, Used::new("metric", &d.name, d.origin, d.provenance.as_ref()))
        }))
        // Saved queries: run with get_metric {"query": name}.
        .chain(project.model.queries.values().map(|q| {
            (json!({
                "name": q.name,
                "description": q.description,
                "type": "saved_query",
                "metrics": q.metrics,
                "group_by": q.group_by,
                "get_metric": {"query": q.name},
                "origin": q.origin.as_str(),
            }), Used::new("saved_query", &q.name, q.origin, q.provenance.as_ref()))
        }))
        .collect();
    listing(items, "list_entities").with_follow_up_hints(&["describe_entity", "get_metric"])
}

pub fn list_entities(project: &Project) -> Envelope {
    let items = project
        .model
        .entities
        .values()
        .map(|e| {
            (json!({
                "name": e.name,
                "description": e.description,
                "qualified_table": e.table.to_string(),
                "identity": e.identity,
                "origin": e.origin.as_str(),
            }), Used::new("entity", &e.name, e.origin, e.provenance.as_ref()))
        })
        .collect();
    listing(items, "list_metrics").with_follow_up_hints(&["describe_entity", "list_metrics"])
}

fn entity_or_error<'m>(model: &'m SemanticModel, name: &str) -> Result<&'m Entity, ToolError> {
    if !is_identifier(name) {
        return Err(ToolError::new(FailureKind::MalformedName,
            format!("`{}` is not an entity name: names use letters, digits and `_`.", crate::ir::echo_name(name)),
            Recovery::call("list_entities", Json::Null),
        ));
    }
    model.entity(name).ok_or_else(|| {
        ToolError::new(FailureKind::UnknownName,
            format!("Entity `{}` is not defined; list_entities shows the entities there are.", crate::ir::echo_name(name)),
            Recovery::call("list_entities", Json::Null)
                .with_fuzzy_matches(close_matches(name, model.entities.keys().map(String::as_str))),
        )
    })
}

pub fn describe_entity(project: &Project, args: &NameArgs) -> Envelope {
    let model = &project.model;
    let e = match entity_or_error(model, &args.name) {
        Ok(e) => e,
        Err(err) => return Envelope::error(err),
    };
    let listed = crate::pii::decide_listing(&model.pii_policy, &e.table, e.columns.iter().map(|c| c.name.as_str()));
    let columns: Vec<Json> = e
        .columns
        .iter()
        .zip(&listed)
        .map(|(c, l)| {
            // The one decision every tool reads; only blocked categories are
            // named for a redacted column (naming the rest would let an agent
            // probe for PII), and catastrophic columns are never named.
            let d = &l.decision;
            crate::json::object([
                ("name", l.shown.clone().into()),
                ("data_type", c.data_type.clone().into()),
                ("nullable", c.nullable.into()),
                ("description", if d.redacted() { Json::Null } else { c.description.clone().into() }),
                // The values a filter on it may compare with (dbt's accepted_values).
                ("accepted_values", if d.redacted() { Json::Null } else { e.accepted_values_of(&c.name).map(<[String]>::to_vec).into() }),
                ("pii_sensitivity", d.tag.sensitivity.clone().into()),
                ("pii_categories", d.shown_categories().into()),
                ("redacted", d.redacted().into()),
            ])
        })
        .collect();
    let identity: Vec<String> = e
        .identity
        .iter()
        .map(|c| listed.iter().find(|l| &l.column == c).map(|l| l.shown.clone()).unwrap_or_else(|| crate::pii::shown_entity_column(model, &e.name, c)))
        .collect();
    let graph = model.graph();
    let mut reachable: Vec<Json> = Vec::new();
    // What get_metric anchored here does to reach each entity: one path (its
    // joins), or roles `via` must choose between (the planner's own pass,
    // not the shortest path, which may be one role of several).
    for other in model.entities.keys().filter(|n| **n != e.name) {
        let entry = match crate::plan::path_choice(graph, &e.name, other) {
            crate::plan::PathChoice::One(joins) => {
                crate::json::object([("entity", other.clone().into()), ("hops", joins.len().into()), ("paths", 1.into()), ("via", json!(joins))])
            }
            crate::plan::PathChoice::Ambiguous(paths) => crate::json::object([
                ("entity", other.clone().into()),
                ("hops", paths.iter().map(Vec::len).min().unwrap_or(0).into()),
                ("paths", paths.len().into()),
                ("via_choices", json!(paths)),
            ]),
            crate::plan::PathChoice::Unreachable => continue,
        };
        reachable.push(entry);
    }
    let metrics: Vec<&str> = model.metrics.values().filter(|m| m.entity == e.name).map(|m| m.name.as_str()).collect();
    let joins: Vec<&str> = model
        .joins
        .values()
        .filter(|j| j.source_entity == e.name || j.target_entity == e.name)
        .map(|j| j.name.as_str())
        .collect();
    let used = Used::new("entity", &e.name, e.origin, e.provenance.as_ref());
    let [(_, confidence), (_, provenance)] = used.item_fields();
    // Built by moving the lists in: `json!` would serialise them again.
    let env = Envelope::success(crate::json::object([
        ("name", e.name.clone().into()),
        ("description", e.description.clone().into()),
        ("qualified_table", e.table.to_string().into()),
        ("identity", identity.into()),
        ("origin", e.origin.as_str().into()),
        ("columns", Json::Array(columns)),
        ("metrics", metrics.into()),
        ("joins", joins.into()),
        ("reachable_entities", Json::Array(reachable)),
        ("confidence", confidence),
        ("provenance", provenance),
    ]));
    rated_answer(env, &used).with_follow_up_hints(&["get_metric", "resolve_join"])
}

/// A join's rating.
pub fn join_trust(j: &Join) -> Used<'_> {
    Used::new("join", &j.name, j.origin, j.provenance.as_ref())
}

/// A join as tools show it: catastrophic key columns as placeholders.
fn join_json(model: &SemanticModel, j: &Join) -> Json {
    let shown = |entity: &str, c: &str| crate::pii::shown_entity_column(model, entity, c);
    json!({
        "name": j.name,
        "description": j.description,
        "source_entity": j.source_entity,
        "target_entity": j.target_entity,
        "on": j.on.iter().map(|k| json!({
            "source_column": shown(&j.source_entity, &k.source),
            "target_column": shown(&j.target_entity, &k.target),
        })).collect::<Vec<_>>(),
        "cardinality": j.cardinality.map(|c| c.as_str()),
        // A versioned join: the target row valid at the metric's time.
        "valid_between": j.valid_between.as_ref().map(|v| json!({"from": shown(&j.target_entity, &v.from), "to": shown(&j.target_entity, &v.to)})),
        "origin": j.origin.as_str(),
    })
}

pub fn list_joins(project: &Project) -> Envelope {
    let items = project.model.joins.values().map(|j| (join_json(&project.model, j), join_trust(j))).collect();
    listing(items, "list_entities").with_follow_up_hints(&["resolve_join", "get_metric"])
}

pub fn resolve_join(project: &Project, args: &ResolveJoinArgs) -> Envelope {
    let model = &project.model;
    for name in [&args.entity_a, &args.entity_b] {
        if let Err(err) = entity_or_error(model, name) {
            return Envelope::error(err);
        }
    }
    let (a, b) = (&args.entity_a, &args.entity_b);
    let between: Vec<&Join> = model
        .joins
        .values()
        .filter(|j| (&j.source_entity == a && &j.target_entity == b) || (&j.source_entity == b && &j.target_entity == a))
        .collect();
    let names: Vec<String> = between.iter().map(|j| j.name.clone()).collect();
    let first_name = names.first().cloned().unwrap_or_default();
    let chosen = match (&args.name, between.as_slice()) {
        (_, []) => {
            return Envelope::error(ToolError::new(FailureKind::NoCanonicalJoin,
                format!("No canonical join connects `{a}` and `{b}` directly; describe_entity of `{a}` lists what it reaches and how far."),
                call("describe_entity", json!({"name": a})),
            ))
        }
        (None, [only]) => *only,
        (None, _) => {
            return Envelope::error(ToolError::new(FailureKind::AmbiguousJoin,
                format!("`{a}` and `{b}` are joined in {} ways: {}; pass name.", names.len(), names.join(", ")),
                call("resolve_join", json!({"entity_a": a, "entity_b": b, "name": first_name})).with_fuzzy_matches(names),
            ))
        }
        (Some(n), _) => match between.iter().find(|j| &j.name == n) {
            Some(j) => j,
            None if model.join(n).is_some() => {
                return Envelope::error(ToolError::new(FailureKind::JoinNameMismatch,
                    format!("Join `{n}` does not connect `{a}` and `{b}`; joins between them: {}.", names.join(", ")),
                    call("resolve_join", json!({"entity_a": a, "entity_b": b, "name": first_name})).with_fuzzy_matches(names),
                ))
            }
            None => {
                return Envelope::error(ToolError::new(FailureKind::UnknownJoinName,
                    format!("`{}` is not a join; joins between `{a}` and `{b}`: {}.", crate::ir::echo_name(n), names.join(", ")),
                    call("resolve_join", json!({"entity_a": a, "entity_b": b, "name": first_name})).with_fuzzy_matches(names),
                ))
            }
        },
    };
    let (Some(src), Some(tgt)) = (model.entities.get(&chosen.source_entity), model.entities.get(&chosen.target_entity)) else {
        return Envelope::error(ToolError::new(FailureKind::InternalError, format!("join `{}` names an entity the model lacks", chosen.name), Recovery::none()));
    };
    let on: Vec<String> = chosen
        .on
        .iter()
        .map(|k| {
            let (a, b) = (crate::pii::shown_entity_column(model, &src.name, &k.source), crate::pii::shown_entity_column(model, &tgt.name, &k.target));
            format!("\"{}\".\"{a}\" = \"{}\".\"{b}\"", src.name, tgt.name)
        })
        .collect();
    let mut data = join_json(model, chosen);
    if let Json::Object(m) = &mut data {
        m.insert(
            "sql_skeleton".into(),
            format!("JOIN \"{}\".\"{}\" AS \"{}\" ON {}", tgt.table.schema, tgt.table.table, tgt.name, on.join(" AND ")).into(),
        );
    }
    let used = join_trust(chosen);
    used.stamp(&mut data);
    rated_answer(Envelope::success(data), &used).with_follow_up_hints(&["get_metric"])
}
