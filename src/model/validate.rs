//! Cross-reference checks over a loaded model: every name a definition uses
//! must exist, and every column must be on the entity it is used with.
//!
//! Column checks run only for entities whose columns are known (declared in
//! the model or overlaid from a catalog); `catalog::overlay` re-runs them
//! after it replaces the columns.

use super::*;

/// Adds a diagnostic for every dangling reference in `model`.
pub fn check(model: &SemanticModel, diags: &mut Diagnostics) {
    check_skipping(model, &[], diags);
}

/// As `check`, but references to `broken` names (definitions that failed
/// to load and were reported already) are not reported again.
pub fn check_skipping(model: &SemanticModel, broken: &[String], diags: &mut Diagnostics) {
    check_all(&Cx { model, broken }, diags);
}

/// What every check reads: the model, and the names not to report twice.
struct Cx<'a> {
    model: &'a SemanticModel,
    broken: &'a [String],
}

impl Cx<'_> {
    fn is_broken(&self, name: &str) -> bool {
        self.broken.iter().any(|n| n == name)
    }
}

fn check_all(cx: &Cx<'_>, diags: &mut Diagnostics) {
    for e in cx.model.entities.values() {
        for id in &e.identity {
            check_column(cx, &e.name, id, &e.defined_at, "identity", diags);
        }
    }
    for j in cx.model.joins.values() {
        let ok_source = check_entity(cx, &j.source_entity, &j.defined_at, "source_entity", diags);
        let ok_target = check_entity(cx, &j.target_entity, &j.defined_at, "target_entity", diags);
        for (i, k) in j.on.iter().enumerate() {
            if ok_source {
                check_column(cx, &j.source_entity, &k.source, &j.defined_at, &format!("on[{i}].source"), diags);
            }
            if ok_target {
                check_column(cx, &j.target_entity, &k.target, &j.defined_at, &format!("on[{i}].target"), diags);
            }
        }
        if let (Some(v), true) = (&j.valid_between, ok_target) {
            check_column(cx, &j.target_entity, &v.from, &j.defined_at, "valid_between.from", diags);
            check_column(cx, &j.target_entity, &v.to, &j.defined_at, "valid_between.to", diags);
        }
    }
    for m in cx.model.metrics.values() {
        check_metric(cx, m, diags);
    }
    for d in cx.model.derived.values() {
        check_derived(cx, d, diags);
    }
    for q in cx.model.queries.values() {
        check_query(cx, q, diags);
    }
}

/// A saved query's metrics exist (simple or derived). Its group-bys and
/// order may be MetricFlow names: the resolver checks them when it runs.
fn check_query(cx: &Cx<'_>, q: &SavedQuery, diags: &mut Diagnostics) {
    let at = &q.defined_at;
    for m in &q.metrics {
        if cx.model.metric(m).is_none() && !cx.model.derived.contains_key(m) && !cx.is_broken(m) {
            let names = cx.model.metric_names();
            diags.push(
                Diagnostic::new(&at.file, at.line_of("metrics"), "metrics", format!("saved query `{}` reads unknown metric `{m}`", q.name))
                    .suggest(close_matches(m, names.iter().copied())),
            );
        }
    }
}

fn check_derived(cx: &Cx<'_>, d: &DerivedMetric, diags: &mut Diagnostics) {
    let at = &d.defined_at;
    if d.period_agg.is_some() && cx.model.settings.time_spine.is_none() {
        diags.push(Diagnostic::new(
            &at.file,
            at.line_of("period_agg"),
            "period_agg",
            "`period_agg` computes the metric on every day of the time spine: it needs `time_spine: {table: schema.table, column: <date column>}` in schemabrain.yaml",
        ));
    }
    let to_grain = d.inputs.iter().any(|i| matches!(i.offset, Some(crate::model::TimeOffset::ToGrain(_))));
    if to_grain && d.periods == crate::model::Periods::AnyInput && cx.model.settings.time_spine.is_none() {
        diags.push(Diagnostic::new(
            &at.file,
            at.line_of("periods"),
            "periods",
            "`periods: any_input` with an `offset_to_grain` input answers for the time spine's buckets: it needs `time_spine: {table: schema.table, column: <date column>}` in schemabrain.yaml",
        ));
    }
    if let Some(simple) = cx.model.metrics.get(&d.name) {
        diags.push(Diagnostic::new(
            &at.file,
            at.line_of("name"),
            "name",
            format!("duplicate metric `{}`: already defined at {}", d.name, simple.defined_at),
        ));
    }
    for (i, input) in d.inputs.iter().enumerate() {
        let key = match d.kind {
            DerivedKind::Derived => format!("metrics[{i}]"),
            _ => input.alias.clone(),
        };
        let Some(m) = cx.model.metrics.get(&input.metric) else {
            if cx.is_broken(&input.metric) {
                continue;
            }
            let names: Vec<&str> = cx.model.metrics.keys().map(String::as_str).collect();
            let what = if let Some(other) = cx.model.derived.get(&input.metric) {
                format!(
                    "`{}` is a {} metric; the inputs of a {} metric must be simple metrics",
                    input.metric,
                    other.kind.as_str(),
                    d.kind.as_str()
                )
            } else {
                format!("unknown metric `{}`", input.metric)
            };
            diags.push(
                Diagnostic::new(&at.file, at.line_of(&key), &key, what)
                    .suggest(close_matches(&input.metric, names.iter().copied())),
            );
            continue;
        };
        for (j, f) in input.filters.iter().enumerate() {
            let fkey = format!("{key}.filter[{j}].column");
            if check_entity(cx, &f.column.entity, at, &fkey, diags) {
                check_column(cx, &f.column.entity, &f.column.column, at, &fkey, diags);
            }
        }
        let mut problem = |message: String| diags.push(Diagnostic::new(&at.file, at.line_of(&key), &key, message));
        // Every time-moving type reads the input's own time dimension.
        let needs_time = match d.kind {
            DerivedKind::Cumulative => Some("a cumulative metric accumulates over its input's time dimension"),
            DerivedKind::Conversion => Some("a conversion metric compares the times of base and conversion rows"),
            _ if input.offset.is_some() => Some("a time offset moves the input along its time dimension"),
            _ => None,
        };
        if let Some(why) = needs_time {
            if m.time_dimension.is_none() {
                problem(format!("`{}` has no time_dimension; {why}", m.name));
            }
            if m.non_additive.is_some() && d.kind != DerivedKind::Derived {
                problem(format!("`{}` is non-additive; a {} metric needs an additive input", m.name, d.kind.as_str()));
            }
        }
        if d.kind == DerivedKind::Conversion && i == 1 {
            if !m.any_of.is_empty() {
                problem(format!("the conversion metric `{}` has a filter with `any_of`/`all_of`; conversion events take plain filters only", m.name));
            }
            for f in m.filters.iter().chain(&input.filters) {
                if f.column.entity != m.entity {
                    problem(format!(
                        "the conversion metric's filter on `{}` is not on its entity `{}`; conversion events are read from that entity alone",
                        f.column, m.entity
                    ));
                }
            }
        }
    }
    if let (Some(spec), [base, conversion]) = (&d.conversion, d.inputs.as_slice()) {
        for (input, cols, side) in [(base, &spec.base_key, "base"), (conversion, &spec.conversion_key, "conversion")] {
            if let Some(m) = cx.model.metrics.get(&input.metric) {
                for c in cols {
                    check_column(cx, &m.entity, c, at, &format!("entity.{side}"), diags);
                }
            }
        }
    }
}

fn check_metric(cx: &Cx<'_>, m: &Metric, diags: &mut Diagnostics) {
    let at = &m.defined_at;
    if !check_entity(cx, &m.entity, at, "entity", diags) {
        return;
    }
    let key = match m.measure.operand {
        MeasureOperand::Column(_) => "measure.column",
        MeasureOperand::Expression(_) => "measure.expression",
    };
    for col in m.measure.columns() {
        check_column(cx, &m.entity, col, at, key, diags);
    }
    if let Some(td) = &m.time_dimension {
        if td.entity != m.entity {
            diags.push(
                Diagnostic::new(
                    &at.file,
                    at.line_of("time_dimension"),
                    "time_dimension",
                    format!("the time dimension `{td}` must be a column of the anchor entity `{}`", m.entity),
                )
                .suggest(
                    cx.model.entities.get(&m.entity)
                        .and_then(|e| e.column(&td.column))
                        .map(|_| vec![format!("{}.{}", m.entity, td.column)])
                        .unwrap_or_default(),
                ),
            );
        } else if check_column(cx, &td.entity, &td.column, at, "time_dimension", diags) {
            let col = cx.model.entities.get(&td.entity).and_then(|e| e.column(&td.column));
            let class = col.map(Column::type_class);
            if class.is_some_and(|c| c != TypeClass::Unknown && !c.is_temporal()) {
                let type_name = col.and_then(|c| c.data_type.clone()).unwrap_or_default();
                diags.push(Diagnostic::new(
                    &at.file,
                    at.line_of("time_dimension"),
                    "time_dimension",
                    format!("`{td}` is not a date or timestamp column (its type is {type_name})"),
                ));
            }
        }
    }
    if m.join_to_timespine {
        let problem = match (&m.time_dimension, &cx.model.settings.time_spine) {
            (None, _) => Some("`join_to_timespine` needs the metric's `time_dimension`: the periods are periods of it"),
            (_, None) => Some("`join_to_timespine` needs `time_spine: {table: schema.table, column: <date column>}` in schemabrain.yaml: the table says which periods exist"),
            _ => None,
        };
        if let Some(message) = problem {
            diags.push(Diagnostic::new(&at.file, at.line_of("join_to_timespine"), "join_to_timespine", message));
        }
    }
    for f in m.filters.iter().chain(m.any_of.iter().flat_map(crate::model::Condition::atoms)) {
        let key = format!("{}.column", f.at);
        if check_entity(cx, &f.column.entity, at, &key, diags) {
            check_column(cx, &f.column.entity, &f.column.column, at, &key, diags);
        }
    }
    if let Some(na) = &m.non_additive {
        if m.time_dimension.as_ref() != Some(&na.dimension) {
            let now = m.time_dimension.as_ref().map_or("none".to_string(), |t| format!("`{t}`"));
            diags.push(Diagnostic::new(
                &at.file,
                at.line_of("non_additive.dimension"),
                "non_additive.dimension",
                format!("`{}` must be the metric's time_dimension (it is {now}): the window is chosen within each time bucket", na.dimension),
            ));
        }
        for (i, p) in na.per.iter().enumerate() {
            let key = format!("non_additive.per[{i}]");
            if p.entity != m.entity {
                diags.push(Diagnostic::new(
                    &at.file,
                    at.line_of(&key),
                    &key,
                    format!("`{p}` must be a column of the anchor entity `{}`", m.entity),
                ));
            } else {
                check_column(cx, &m.entity, &p.column, at, &key, diags);
            }
        }
    }
}

fn check_entity(cx: &Cx<'_>, name: &str, at: &Origin, key: &str, diags: &mut Diagnostics) -> bool {
    if cx.model.entities.contains_key(name) {
        return true;
    }
    if cx.is_broken(name) {
        return false;
    }
    let names: Vec<&str> = cx.model.entities.keys().map(String::as_str).collect();
    diags.push(
        Diagnostic::new(&at.file, at.line_of(key), key, format!("unknown entity `{name}`"))
            .allowed(names.iter().copied().take(20))
            .suggest(close_matches(name, names.iter().copied())),
    );
    false
}

/// Reports `column` missing from `entity` when the entity's columns are known.
/// Returns whether the column is there (or cannot be checked).
fn check_column(cx: &Cx<'_>, entity: &str, column: &str, at: &Origin, key: &str, diags: &mut Diagnostics) -> bool {
    let Some(e) = cx.model.entities.get(entity) else {
        return false;
    };
    if !e.knows_columns() || e.column(column).is_some() {
        return true;
    }
    let names = e.column_names();
    let source = if e.columns_from_catalog { format!("table {}", e.table) } else { "its declared columns".to_string() };
    diags.push(
        Diagnostic::new(&at.file, at.line_of(key), key, format!("entity `{entity}` has no column `{column}` ({source})"))
            .allowed(names.iter().map(String::as_str).take(30))
            .suggest(close_matches(column, names.iter().map(String::as_str))),
    );
    false
}
