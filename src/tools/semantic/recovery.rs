//! Issues → error kinds with a recovery that keeps the question.
//!
//! A recovery that suggests `get_metric` again is the caller's request with
//! every metric, group-by, filter, grain, order, limit and via kept: only the
//! faulty item changes, to its correction (the unique fuzzy match that
//! plans, a normalised value), and then it is a *correction*
//! (`next_action.must_obey: true`). Where no such correction exists the
//! recovery is a read-only look-up that shows what to choose
//! (describe_entity, list_metrics, list_joins), never a `get_metric` without
//! the faulty part. A choice among meanings (an ambiguous path, a grain the
//! request lacked) keeps the whole request, adds the choice, and is not a
//! correction. No suggestion repeats the faulty input.
//!
//! Owns: the recovery of every planner issue. Depends on the planner (to
//! check that a correction plans) and `get_metric`'s request reading; not on
//! the surface or the provider.

use serde_json::{json, Value as Json};

use super::args::{FilterArgs, GetMetricArgs, OrderByArgs};
use super::get_metric::check_request;
use crate::envelope::{Envelope, FailureKind, Recovery, RefusalKind, ToolError};
use crate::ir::{ColumnRole, Issue, MAX_FILTERS, MAX_IN_VALUES, MAX_NAME_CHARS};
use crate::model::{close_matches, TypeClass};
use crate::project::Project;

/// Items of a list argument probed one by one to find the faulty one.
const MAX_PROBED: usize = 64;

/// A `get_metric` call with the same arguments after `change`, as a
/// suggestion (a choice the agent should check, e.g. a path among several).
fn retry(args: &GetMetricArgs, change: impl FnOnce(&mut GetMetricArgs)) -> Recovery {
    let mut fixed = args.clone();
    change(&mut fixed);
    Recovery::call("get_metric", fixed.to_json())
}

fn list(items: &[String], max: usize) -> String {
    let shown: Vec<String> = items.iter().take(max).map(|s| format!("`{s}`")).collect();
    let more = items.len().saturating_sub(max);
    if more > 0 {
        format!("{} and {more} more", shown.join(", "))
    } else {
        shown.join(", ")
    }
}

/// Whether two issues are the same failure (same kind, same argument).
fn same(a: &Issue, b: &Issue) -> bool {
    match (a, b) {
        (Issue::Malformed { argument: x, .. }, Issue::Malformed { argument: y, .. }) => x == y,
        (Issue::UnknownColumn { role: x, .. }, Issue::UnknownColumn { role: y, .. }) => x == y,
        (Issue::UnknownEntity { role: x, .. }, Issue::UnknownEntity { role: y, .. }) => x == y,
        _ => std::mem::discriminant(a) == std::mem::discriminant(b),
    }
}

/// `fixed` as a correction of `args` for `issue`: it differs, echoes no
/// long caller value, and no longer fails with `issue`.
fn correction(project: &Project, args: &GetMetricArgs, issue: &Issue, fixed: GetMetricArgs) -> Option<GetMetricArgs> {
    if &fixed == args {
        return None;
    }
    let json = fixed.to_json();
    if crate::tools::contract::next::oversized(&json) {
        return None;
    }
    match check_request(project, &fixed) {
        Ok(_) => Some(fixed),
        Err(again) if same(&again, issue) => None,
        // Another problem further on: this part is fixed, the next recovery fixes that one.
        Err(_) => Some(fixed),
    }
}

/// The one correction among `candidates` that plans, if exactly one does.
fn unique(project: &Project, args: &GetMetricArgs, issue: &Issue, candidates: Vec<GetMetricArgs>) -> Option<GetMetricArgs> {
    let mut passing = candidates.into_iter().filter_map(|c| correction(project, args, issue, c));
    let first = passing.next()?;
    match passing.next() {
        None => Some(first),
        Some(_) => None,
    }
}

/// The first of `candidates` (normalisations, best first) that plans.
fn first(project: &Project, args: &GetMetricArgs, issue: &Issue, candidates: Vec<GetMetricArgs>) -> Option<GetMetricArgs> {
    candidates.into_iter().find_map(|c| correction(project, args, issue, c))
}

/// The list arguments whose items are probed one at a time.
#[derive(Clone, Copy, PartialEq)]
enum Part {
    Names,
    GroupBy,
    Filters,
    OrderBy,
    Via,
}

impl Part {
    fn of(argument: &str) -> Option<Part> {
        Some(match argument {
            "name" | "names" => Part::Names,
            "group_by" => Part::GroupBy,
            "filters" => Part::Filters,
            "order_by" => Part::OrderBy,
            "via" => Part::Via,
            _ => return None,
        })
    }

    fn len(self, a: &GetMetricArgs) -> usize {
        match self {
            Part::Names => a.metric_names().len(),
            Part::GroupBy => a.group_by.len(),
            Part::Filters => a.filters.len(),
            Part::OrderBy => a.order_by.len(),
            Part::Via => a.via.len(),
        }
    }

    /// `a` with only item `i` of this list.
    fn only(self, a: &GetMetricArgs, i: usize) -> GetMetricArgs {
        let mut p = a.clone();
        match self {
            Part::Names => {
                let n = a.metric_names().get(i).cloned();
                p.name = n;
                p.names.clear();
            }
            Part::GroupBy => p.group_by = a.group_by.get(i).cloned().into_iter().collect(),
            Part::Filters => p.filters = a.filters.get(i).cloned().into_iter().collect(),
            Part::OrderBy => p.order_by = a.order_by.get(i).cloned().into_iter().collect(),
            Part::Via => p.via = a.via.get(i).cloned().into_iter().collect(),
        }
        p
    }

    /// The name at item `i` (a filter's column, an order's column).
    fn name(self, a: &GetMetricArgs, i: usize) -> Option<String> {
        match self {
            Part::Names => a.metric_names().get(i).cloned(),
            Part::GroupBy => a.group_by.get(i).cloned(),
            Part::Filters => a.filters.get(i).map(|f| f.column.clone()),
            Part::OrderBy => a.order_by.get(i).map(|o| o.column.clone()),
            Part::Via => a.via.get(i).cloned(),
        }
    }

    /// `a` with the name at item `i` replaced by `new`.
    fn rename(self, a: &GetMetricArgs, i: usize, new: &str) -> GetMetricArgs {
        let mut p = a.clone();
        match self {
            Part::Names => match (&mut p.name, i) {
                (Some(n), 0) => *n = new.to_string(),
                (Some(_), i) => {
                    if let Some(n) = p.names.get_mut(i - 1) {
                        *n = new.to_string();
                    }
                }
                (None, i) => {
                    if let Some(n) = p.names.get_mut(i) {
                        *n = new.to_string();
                    }
                }
            },
            Part::GroupBy => {
                if let Some(g) = p.group_by.get_mut(i) {
                    *g = new.to_string();
                }
            }
            Part::Filters => {
                if let Some(f) = p.filters.get_mut(i) {
                    f.column = new.to_string();
                }
            }
            Part::OrderBy => {
                if let Some(o) = p.order_by.get_mut(i) {
                    o.column = new.to_string();
                }
            }
            Part::Via => {
                if let Some(v) = p.via.get_mut(i) {
                    *v = new.to_string();
                }
            }
        }
        p
    }
}

/// The faulty item of `part`: the one that fails with `issue` on its own.
fn faulty(project: &Project, args: &GetMetricArgs, part: Part, issue: &Issue) -> Option<usize> {
    let n = part.len(args);
    if n == 1 {
        return Some(0);
    }
    (0..n.min(MAX_PROBED)).find(|&i| matches!(check_request(project, &part.only(args, i)), Err(e) if same(&e, issue)))
}

/// Names a faulty `entity.column` (or bare `column`, with an optional
/// `__grain` suffix) could have meant: the entities that have a column of
/// that name, or the close matches of the column (or entity).
fn column_candidates(project: &Project, name: &str) -> Vec<String> {
    let model = &project.model;
    if name.chars().count() > MAX_NAME_CHARS {
        return Vec::new();
    }
    let trimmed = name.trim();
    let (base, suffix) = match trimmed.split_once("__") {
        Some((b, s)) => (b, format!("__{s}")),
        None => (trimmed, String::new()),
    };
    let lower = base.to_ascii_lowercase();
    let with = |e: &str, c: &str| format!("{e}.{c}{suffix}");
    let mut out: Vec<String> = Vec::new();
    match lower.split_once('.') {
        None => {
            for e in model.entities.values() {
                if let Some(c) = e.columns.iter().find(|c| c.name.to_ascii_lowercase() == lower) {
                    out.push(with(&e.name, &c.name));
                }
            }
        }
        Some((entity, column)) => {
            let column = column.trim();
            match model.entity(entity.trim()) {
                Some(e) => {
                    let names: Vec<String> = e.column_names();
                    match names.iter().find(|n| n.to_ascii_lowercase() == column.replace(' ', "")) {
                        Some(exact) => out.push(with(&e.name, exact)),
                        None => out.extend(close_matches(column, names.iter().map(String::as_str)).iter().map(|c| with(&e.name, c))),
                    }
                }
                None => {
                    let entities: Vec<&str> = model.entities.keys().map(String::as_str).collect();
                    for near in close_matches(entity, entities) {
                        if let Some(e) = model.entity(&near) {
                            if let Some(c) = e.columns.iter().find(|c| c.name.to_ascii_lowercase() == column) {
                                out.push(with(&e.name, &c.name));
                            }
                        }
                    }
                }
            }
        }
    }
    out.retain(|c| c != name);
    out
}

/// The entity a column name points at, when it names one.
fn entity_of(project: &Project, name: &str) -> Option<String> {
    let e = name.split_once('.')?.0.trim();
    project.model.entity(e).map(|e| e.name.clone())
}

/// Normalised forms of a filter (best first): the op as a word, a value an
/// op needs in another shape, trimmed text, values without repeats.
fn filter_variants(f: &FilterArgs) -> Vec<FilterArgs> {
    let mut out = Vec::new();
    let op = f.op.trim().to_ascii_lowercase().replace([' ', '-'], "_");
    let word = match op.as_str() {
        "=" | "==" | "equals" | "is" => "eq",
        "!=" | "<>" | "not_equals" | "neq" => "ne",
        "<" => "lt",
        "<=" => "lte",
        ">" => "gt",
        ">=" => "gte",
        "notin" | "not_in" => "not_in",
        "isnull" | "is_null" | "null" => "is_null",
        "is_not_null" | "notnull" | "not_null" => "not_null",
        other => other,
    }
    .to_string();
    let mut base = f.clone();
    base.op = word.clone();
    out.push(base.clone());
    match (word.as_str(), &f.value) {
        ("is_null" | "not_null", Some(_)) => out.push(FilterArgs { value: None, ..base.clone() }),
        ("in" | "not_in", Some(Json::Array(items))) => {
            let mut seen: Vec<&Json> = Vec::new();
            for v in items {
                if !seen.contains(&v) {
                    seen.push(v);
                }
            }
            if seen.len() < items.len() {
                out.push(FilterArgs { value: Some(Json::Array(seen.into_iter().cloned().collect())), ..base.clone() });
            }
        }
        ("in" | "not_in", Some(v)) if !v.is_null() => out.push(FilterArgs { value: Some(json!([v])), ..base.clone() }),
        (_, Some(Json::Array(items))) if items.len() == 1 => out.push(FilterArgs { value: items.first().cloned(), ..base.clone() }),
        (_, Some(Json::String(s))) if s.trim() != s => out.push(FilterArgs { value: Some(Json::String(s.trim().to_string())), ..base.clone() }),
        _ => {}
    }
    out.retain(|v| v != f);
    out
}

/// Filters on one column that can be written as one condition with the
/// same meaning: `eq`/`in` filters as one `in` of the values all of them
/// admit, `ne`/`not_in` as one `not_in` of every excluded value. Only for
/// text, integer and boolean columns with values of one JSON type, where
/// equal JSON is equal SQL. None when nothing merges or the merged filters
/// would still be over the limit.
pub fn merged_filters(project: &Project, filters: &[FilterArgs]) -> Option<Vec<FilterArgs>> {
    let mergeable = |f: &FilterArgs| -> bool {
        if f.metric.is_some() {
            return false;
        }
        let class = f.column.split_once('.').and_then(|(e, c)| project.model.entity(e)?.column(c)).map(|c| c.type_class());
        let kind_ok = |v: &Json| match class {
            Some(TypeClass::Text) => v.is_string(),
            Some(TypeClass::Integer) => v.is_i64() || v.is_u64(),
            Some(TypeClass::Boolean) => v.is_boolean(),
            _ => false,
        };
        match (f.op.as_str(), &f.value) {
            ("eq" | "ne", Some(v)) => kind_ok(v),
            ("in" | "not_in", Some(Json::Array(items))) => !items.is_empty() && items.iter().all(kind_ok),
            _ => false,
        }
    };
    let values = |f: &FilterArgs| -> Vec<Json> {
        match &f.value {
            Some(Json::Array(items)) => items.clone(),
            Some(v) => vec![v.clone()],
            None => Vec::new(),
        }
    };
    let mut out: Vec<FilterArgs> = Vec::new();
    let mut merged_any = false;
    for (i, f) in filters.iter().enumerate() {
        let positive = matches!(f.op.as_str(), "eq" | "in");
        let group = |g: &FilterArgs| mergeable(g) && g.column == f.column && matches!(g.op.as_str(), "eq" | "in") == positive;
        if !mergeable(f) {
            out.push(f.clone());
            continue;
        }
        // Merged at the column's first filter of this sign; the later ones are in it.
        if filters.iter().take(i).any(group) {
            continue;
        }
        let same_column: Vec<&FilterArgs> = filters.iter().skip(i).filter(|g| group(g)).collect();
        if same_column.len() == 1 {
            out.push(f.clone());
            continue;
        }
        let mut acc = values(f);
        for g in same_column.iter().skip(1) {
            let vs = values(g);
            if positive {
                acc.retain(|v| vs.contains(v));
            } else {
                for v in vs {
                    if !acc.contains(&v) {
                        acc.push(v);
                    }
                }
            }
        }
        // No value admitted by all: `in []` cannot be written; keep them apart.
        if acc.is_empty() || acc.len() > MAX_IN_VALUES {
            out.extend(same_column.into_iter().cloned());
            continue;
        }
        merged_any = true;
        out.push(FilterArgs { column: f.column.clone(), op: if positive { "in" } else { "not_in" }.into(), value: Some(Json::Array(acc)), metric: None });
    }
    (merged_any && out.len() <= MAX_FILTERS).then_some(out)
}

/// The correction of a faulty name at item `i` of `part`.
fn renamed(project: &Project, args: &GetMetricArgs, issue: &Issue, part: Part, i: usize, candidates: Vec<String>) -> Option<GetMetricArgs> {
    unique(project, args, issue, candidates.iter().map(|c| part.rename(args, i, c)).collect())
}

/// The correction of `issue` in `args`, if one keeps the meaning.
fn corrected(project: &Project, args: &GetMetricArgs, issue: &Issue) -> Option<GetMetricArgs> {
    let argument = match issue {
        Issue::Malformed { argument, .. } => argument.as_str(),
        Issue::UnknownEntity { role, .. } | Issue::UnknownColumn { role, .. } => role.argument(),
        Issue::UnknownOrderBy { .. } => "order_by",
        Issue::UnknownViaJoin { .. } => "via",
        Issue::UnknownMetric { .. } => "names",
        Issue::InvalidTimeGrain { .. } => "time_grain",
        Issue::UnacceptedValue { accepted, .. } => return accepted_value_fix(project, args, issue, accepted),
        _ => return None,
    };
    match argument {
        "time_dimension" => {
            let td = args.time_dimension.as_deref()?;
            let candidates = column_candidates(project, td);
            unique(project, args, issue, candidates.into_iter().map(|c| GetMetricArgs { time_dimension: Some(c), ..args.clone() }).collect())
        }
        "time_grain" => {
            let Issue::InvalidTimeGrain { grain, allowed } = issue else { return None };
            // A grain the project has but this request cannot use (a custom
            // grain under an offset or a window): another grain would answer
            // another question (`fiscal_year` is not `year`).
            if project.model.grain(grain).is_some() {
                return None;
            }
            let g = grain.trim().to_ascii_lowercase();
            let g = match g.as_str() {
                "daily" => "day".to_string(),
                "hourly" => "hour".to_string(),
                "weekly" => "week".to_string(),
                "monthly" => "month".to_string(),
                "quarterly" => "quarter".to_string(),
                "yearly" | "annual" | "annually" => "year".to_string(),
                _ => g.strip_suffix('s').unwrap_or(&g).to_string(),
            };
            let names: Vec<&str> = allowed.iter().map(|a| a.as_str()).collect();
            let candidates = if names.contains(&g.as_str()) { vec![g] } else { close_matches(&g, names) };
            unique(project, args, issue, candidates.into_iter().map(|c| GetMetricArgs { time_grain: Some(c), ..args.clone() }).collect())
        }
        "filters" if args.filters.len() > MAX_FILTERS => {
            let merged = merged_filters(project, &super::args::distinct_filters(&args.filters))?;
            correction(project, args, issue, GetMetricArgs { filters: merged, ..args.clone() })
        }
        "order_by" => {
            let i = faulty(project, args, Part::OrderBy, issue)?;
            let o = args.order_by.get(i)?;
            if let Issue::UnknownOrderBy { fuzzy, .. } = issue {
                return renamed(project, args, issue, Part::OrderBy, i, fuzzy.clone());
            }
            let direction = o.direction.as_deref().map(|d| d.trim().to_ascii_lowercase());
            let direction = match direction.as_deref() {
                Some("ascending" | "asc") => "asc",
                Some("descending" | "desc") => "desc",
                _ => return renamed(project, args, issue, Part::OrderBy, i, column_candidates(project, &o.column)),
            };
            let mut fixed = args.clone();
            if let Some(x) = fixed.order_by.get_mut(i) {
                *x = OrderByArgs { column: o.column.trim().to_string(), direction: Some(direction.into()) };
            }
            correction(project, args, issue, fixed)
        }
        other => {
            let part = Part::of(other)?;
            let i = faulty(project, args, part, issue)?;
            let name = part.name(args, i)?;
            let candidates = match issue {
                Issue::UnknownMetric { fuzzy, .. } | Issue::UnknownViaJoin { fuzzy, .. } => fuzzy.clone(),
                _ if matches!(part, Part::Names | Part::Via) => Vec::new(),
                _ => column_candidates(project, &name),
            };
            if let Some(fixed) = renamed(project, args, issue, part, i, candidates) {
                return Some(fixed);
            }
            // A filter whose column is right: its op or value in normal form.
            let f = args.filters.get(i).filter(|_| part == Part::Filters)?;
            let variants = filter_variants(f)
                .into_iter()
                .map(|v| {
                    let mut fixed = args.clone();
                    if let Some(x) = fixed.filters.get_mut(i) {
                        *x = v;
                    }
                    fixed
                })
                .collect();
            first(project, args, issue, variants)
        }
    }
}

/// The faulty filter with each value outside `accepted` replaced by the one
/// accepted value it plainly means (equal but for case, or the only close
/// match); `None` when one has no such value.
fn accepted_value_fix(project: &Project, args: &GetMetricArgs, issue: &Issue, accepted: &[String]) -> Option<GetMetricArgs> {
    let i = faulty(project, args, Part::Filters, issue)?;
    let meant = |v: &serde_json::Value| -> Option<serde_json::Value> {
        let text = match v {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        if accepted.contains(&text) {
            return Some(v.clone());
        }
        let same_case: Vec<&String> = accepted.iter().filter(|a| a.eq_ignore_ascii_case(&text)).collect();
        let fixed = match (same_case.as_slice(), close_matches(&text, accepted.iter().map(String::as_str)).as_slice()) {
            ([one], _) => (*one).clone(),
            ([], [one]) => one.clone(),
            _ => return None,
        };
        Some(serde_json::Value::String(fixed))
    };
    let mut fixed = args.clone();
    let f = fixed.filters.get_mut(i)?;
    f.value = Some(match f.value.as_ref()? {
        Json::Array(items) => Json::Array(items.iter().map(meant).collect::<Option<_>>()?),
        v => meant(v)?,
    });
    correction(project, args, issue, fixed)
}

/// The read-only look-up that shows what to choose for `issue`.
fn look_up(project: &Project, args: &GetMetricArgs, issue: &Issue, anchor: Option<&str>) -> Recovery {
    let describe = |e: Option<String>| match e.or_else(|| anchor.map(str::to_string)) {
        Some(e) => Recovery::call("describe_entity", json!({"name": e})),
        None => Recovery::call("list_entities", json!({})),
    };
    match issue {
        Issue::UnknownMetric { fuzzy, .. } => Recovery::call("list_metrics", json!({})).with_fuzzy_matches(fuzzy.clone()),
        Issue::UnknownEntity { fuzzy, .. } => Recovery::call("list_entities", json!({})).with_fuzzy_matches(fuzzy.clone()),
        Issue::UnknownColumn { entity, column: _, fuzzy, .. } => {
            describe(Some(entity.clone())).with_fuzzy_matches(fuzzy.iter().map(|c| format!("{entity}.{c}")))
        }
        Issue::UnknownOrderBy { fuzzy, allowed, .. } => {
            let shown: Vec<String> = if fuzzy.is_empty() { allowed.iter().take(20).cloned().collect() } else { fuzzy.clone() };
            Recovery::none().with_fuzzy_matches(shown)
        }
        Issue::UnknownViaJoin { fuzzy, .. } => Recovery::call("list_joins", json!({})).with_fuzzy_matches(fuzzy.clone()),
        Issue::InvalidTimeGrain { allowed, .. } | Issue::GrainMismatch { allowed, .. } | Issue::GrainNotNested { allowed, .. } => {
            Recovery::call("list_metrics", json!({})).with_fuzzy_matches(allowed.iter().map(|g| g.as_str().to_string()))
        }
        Issue::MetricsCannotAlign { without_time, .. } => Recovery::call("list_metrics", json!({})).with_fuzzy_matches(without_time.iter().take(10).cloned()),
        Issue::Malformed { argument, .. } => match argument.as_str() {
            "name" | "names" | "query" => Recovery::call("list_metrics", json!({})),
            "via" => Recovery::call("list_joins", json!({})),
            "order_by" => Recovery::none().with_fuzzy_matches(["asc", "desc"]),
            "limit" => {
                // The nearest limit allowed: a suggestion, since it changes how many rows come back.
                let limit = args.limit.map(|l| l.clamp(crate::ir::MIN_LIMIT, crate::ir::MAX_LIMIT));
                retry(args, |a| a.limit = limit)
            }
            "time_dimension" => describe(args.time_dimension.as_deref().and_then(|t| entity_of(project, t))),
            "filters" | "group_by" => {
                let part = if argument == "filters" { Part::Filters } else { Part::GroupBy };
                let entity = faulty(project, args, part, issue).and_then(|i| part.name(args, i)).and_then(|n| entity_of(project, &n));
                describe(entity)
            }
            _ => describe(None),
        },
        _ => describe(None),
    }
}

/// The envelope for an issue: `refused` for PII, `error` for everything else.
pub fn issue_envelope(project: &Project, args: &GetMetricArgs, issue: &Issue) -> Envelope {
    let first_metric = args.metric_names().into_iter().next().unwrap_or_default();
    let anchor = project.model.metric(&first_metric).map(|m| m.entity.clone());
    let describe_anchor = || match &anchor {
        Some(a) => Recovery::call("describe_entity", json!({"name": a})),
        None => Recovery::call("list_entities", json!({})),
    };
    // Corrections first: the same request with only the faulty part fixed.
    let fix_or_look_up = |fuzzy: Vec<String>| match corrected(project, args, issue) {
        Some(fixed) => Recovery::correction("get_metric", fixed.to_json()).with_fuzzy_matches(fuzzy),
        None => look_up(project, args, issue, anchor.as_deref()),
    };
    let error = match issue {
        Issue::PiiBlocked { categories, message } => {
            // Refusals lead to the anchor's description, which marks the
            // columns that cannot be used.
            return Envelope::refused(ToolError::refusal(RefusalKind::PiiBlocked, message.clone(), describe_anchor(), categories.clone()));
        }
        Issue::MetricsCannotAlign { grain, without_time } => ToolError::new(
            FailureKind::GrainMismatch,
            format!(
                "The metrics cannot share the {} grain: {} ha{} no time dimension; ask without time_grain or leave {} out (list_metrics shows each metric's time grains).",
                grain.as_str(),
                list(without_time, 10),
                if without_time.len() == 1 { "s" } else { "ve" },
                if without_time.len() == 1 { "it" } else { "them" }
            ),
            look_up(project, args, issue, anchor.as_deref()),
        ),
        Issue::TimeGrainRequired { metric, allowed } => {
            let names: Vec<String> = allowed.iter().map(|g| g.as_str().to_string()).collect();
            let pick = if names.iter().any(|n| n == "month") { Some("month".to_string()) } else { names.first().cloned() };
            // The request kept whole, with the grain it lacked: a choice, not a correction.
            ToolError::new(
                FailureKind::InvalidTimeGrain,
                format!("`{metric}` is a series over time: give time_grain, one of {}.", list(&names, 10)),
                retry(args, |a| a.time_grain = pick).with_fuzzy_matches(names),
            )
        }
        Issue::GrainNotNested { metric, grain, period, allowed } => {
            let mut names: Vec<String> = allowed.iter().map(|g| g.as_str().to_string()).collect();
            if names.is_empty() {
                names.push(period.as_str().to_string());
            }
            ToolError::new(
                FailureKind::GrainMismatch,
                format!(
                    "`{metric}` works per {}, which a {} bucket does not fit inside; use {}.",
                    period.as_str(),
                    grain.as_str(),
                    list(&names, 10)
                ),
                Recovery::call("list_metrics", json!({})).with_fuzzy_matches(names),
            )
        }
        Issue::UnknownMetric { name, fuzzy } => ToolError::new(
            FailureKind::UnknownMetric,
            format!("Metric `{name}` is not defined; list_metrics shows the metrics there are."),
            fix_or_look_up(fuzzy.clone()),
        ),
        Issue::Malformed { message, .. } => ToolError::new(FailureKind::MalformedName, format!("{message}."), fix_or_look_up(Vec::new())),
        Issue::UnacceptedValue { column, value, accepted, fuzzy } => ToolError::new(
            FailureKind::InvalidArgument,
            format!(
                "Filter on `{column}`: `{}` is not a value the column takes, so the filter would match no row or every row; its values are {}.",
                crate::model::echo(value),
                list(accepted, 20)
            ),
            match corrected(project, args, issue) {
                Some(fixed) => Recovery::correction("get_metric", fixed.to_json()).with_fuzzy_matches(fuzzy.clone()),
                None => {
                    let entity = column.split_once('.').map_or(column.as_str(), |(e, _)| e);
                    let shown = if fuzzy.is_empty() { accepted.iter().take(20).cloned().collect() } else { fuzzy.clone() };
                    Recovery::call("describe_entity", json!({"name": entity})).with_fuzzy_matches(shown)
                }
            },
        ),
        Issue::UnknownEntity { role, name, fuzzy } => ToolError::new(
            FailureKind::UnknownName,
            format!("Entity `{name}` (in {}) is not defined; list_entities shows the entities there are.", role.argument()),
            match corrected(project, args, issue) {
                Some(fixed) => Recovery::correction("get_metric", fixed.to_json()).with_fuzzy_matches(fuzzy.clone()),
                None => look_up(project, args, issue, anchor.as_deref()),
            },
        ),
        Issue::UnknownColumn { role, entity, column, allowed, fuzzy } => {
            let kind = match role {
                ColumnRole::GroupBy => FailureKind::UnknownGroupByColumn,
                ColumnRole::Filter => FailureKind::UnknownFilterColumn,
                ColumnRole::OrderBy => FailureKind::UnknownOrderByColumn,
                ColumnRole::Measure => FailureKind::UnknownMeasureColumn,
                ColumnRole::TimeDimension => FailureKind::UnknownName,
            };
            ToolError::new(
                kind,
                format!("Entity `{entity}` has no column `{column}` (in {}); its columns are {}.", role.argument(), list(allowed, 20)),
                fix_or_look_up(fuzzy.iter().map(|c| format!("{entity}.{c}")).collect()),
            )
        }
        Issue::UnknownOrderBy { column, allowed, fuzzy } => ToolError::new(
            FailureKind::UnknownOrderByColumn,
            format!("Cannot order by `{column}`: order_by may name {}.", list(allowed, 20)),
            fix_or_look_up(fuzzy.clone()),
        ),
        Issue::InvalidTimeGrain { grain, allowed } => {
            let names: Vec<String> = allowed.iter().map(|g| g.as_str().to_string()).collect();
            ToolError::new(
                FailureKind::InvalidTimeGrain,
                format!("Time grain `{grain}` is not allowed here; allowed: {} (list_metrics shows each metric's grains).", list(&names, 10)),
                fix_or_look_up(names.clone()),
            )
        }
        Issue::GrainMismatch { dimension, grain, allowed } => {
            let names: Vec<String> = allowed.iter().map(|g| g.as_str().to_string()).collect();
            ToolError::new(
                FailureKind::GrainMismatch,
                format!(
                    "Grain `{}` is finer than `{dimension}` can carry (it has no time of day); use {}.",
                    grain.as_str(),
                    list(&names, 10)
                ),
                look_up(project, args, issue, anchor.as_deref()),
            )
        }
        Issue::UnknownViaJoin { name, fuzzy, available } => ToolError::new(
            FailureKind::UnknownViaJoin,
            format!("`{name}` in via is not a join; joins are {}.", list(available, 20)),
            fix_or_look_up(fuzzy.clone()),
        ),
        Issue::Unreachable { anchor, target } => ToolError::new(
            FailureKind::UnreachableEntity,
            format!(
                "No chain of joins of at most {} hops connects `{anchor}` to `{target}`; describe_entity of `{anchor}` lists what it reaches.",
                crate::plan::MAX_HOPS
            ),
            describe_anchor(),
        ),
        // A choice among meanings: the whole request with one path's joins
        // added to via, as a suggestion to check, not a correction.
        Issue::AmbiguousPath { anchor, target, paths } => {
            let rendered: Vec<String> = paths.iter().map(|p| p.join(" → ")).collect();
            let first = paths.first().cloned().unwrap_or_default();
            ToolError::new(
                FailureKind::AmbiguousPath,
                format!(
                    "`{anchor}` reaches `{target}` by {} paths that can mean different things: {}; pass via with the joins of the one you mean.",
                    paths.len(),
                    list(&rendered, 4)
                ),
                retry(args, |a| extend_via(&mut a.via, &first)).with_fuzzy_matches(rendered),
            )
        }
        Issue::AmbiguousJoin { from, to, candidates } => {
            let first = candidates.first().cloned().into_iter().collect::<Vec<_>>();
            ToolError::new(
                FailureKind::AmbiguousJoin,
                format!("`{from}` joins `{to}` in {} ways: {}; pass via with one.", candidates.len(), list(candidates, 10)),
                retry(args, |a| extend_via(&mut a.via, &first)).with_fuzzy_matches(candidates.clone()),
            )
        }
        Issue::AmbiguousTimeDimension { candidates } => {
            let first = candidates.first().cloned();
            ToolError::new(
                FailureKind::AmbiguousTimeDimension,
                format!(
                    "Metric `{}` has no time dimension of its own and several are reachable: {}; pass time_dimension.",
                    crate::model::echo(&first_metric),
                    list(candidates, 10)
                ),
                retry(args, |a| a.time_dimension = first).with_fuzzy_matches(candidates.clone()),
            )
        }
    };
    Envelope::error(error)
}

fn extend_via(via: &mut Vec<String>, joins: &[String]) {
    for j in joins {
        if !via.contains(j) {
            via.push(j.clone());
        }
    }
}
