//! `MetricRequest` → `MetricQuery`: every name looked up, every value typed.
//! The first problem found is returned; arguments are checked in the order
//! an agent reads them (metric, limit, group_by, grain, filters, order, via).

use super::*;
use crate::model::{close_matches, is_identifier, CheckedModel, DatePart, Entity, FilterOp, OpArity, SemanticModel};

pub use crate::model::echo;

/// The request's lists and names within the bounds in `ir` (MAX_*).
fn within_bounds(req: &MetricRequest) -> Result<(), Issue> {
    let too_many = |argument: &str, got: usize, max: usize| Issue::Malformed {
        argument: argument.into(),
        message: format!("{got} entries in `{argument}`, more than the limit of {max}; split the request"),
    };
    let lists = [
        ("names", req.names.len(), MAX_NAMES),
        ("group_by", req.group_by.len(), MAX_GROUP_BY),
        ("filters", req.filters.len() + req.any_of.iter().map(|c| c.atoms().len()).sum::<usize>(), MAX_FILTERS),
        ("order_by", req.order_by.len(), MAX_ORDER_BY),
        ("via", req.via.len(), MAX_VIA),
        ("where", req.where_strings.len(), MAX_FILTERS),
    ];
    if let Some((argument, got, max)) = lists.into_iter().find(|(_, got, max)| got > max) {
        return Err(too_many(argument, got, max));
    }
    let long_name = |argument: &str, name: &str| Issue::Malformed {
        argument: argument.into(),
        message: format!("`{}` is {} characters long, more than the limit of {MAX_NAME_CHARS}", echo(name), name.chars().count()),
    };
    let names = req.names.iter().map(|n| ("names", n))
        .chain(req.group_by.iter().map(|n| ("group_by", n)))
        .chain(req.filters.iter().chain(req.any_of.iter().flat_map(Condition::atoms)).map(|f| ("filters", &f.column)))
        .chain(req.order_by.iter().map(|o| ("order_by", &o.column)))
        .chain(req.via.iter().map(|v| ("via", v)))
        .chain(req.time_dimension.iter().map(|t| ("time_dimension", t)));
    for (argument, name) in names {
        if name.chars().count() > MAX_NAME_CHARS {
            return Err(long_name(argument, name));
        }
    }
    if let Some(w) = req.where_strings.iter().find(|w| w.chars().count() > MAX_VALUE_CHARS) {
        return Err(Issue::Malformed {
            argument: "where".into(),
            message: format!("a where string of {} characters, more than the limit of {MAX_VALUE_CHARS}", w.chars().count()),
        });
    }
    for f in req.filters.iter().chain(req.any_of.iter().flat_map(Condition::atoms)) {
        let values: &[Literal] = match &f.value {
            FilterValue::None => &[],
            FilterValue::Scalar(v) => std::slice::from_ref(v),
            FilterValue::List(vs) => vs,
        };
        if values.len() > MAX_IN_VALUES {
            return Err(Issue::Malformed {
                argument: "filters".into(),
                message: format!("{} values in the filter on `{}`, more than the limit of {MAX_IN_VALUES}", values.len(), echo(&f.column)),
            });
        }
        if let Some(Literal::Text(t)) = values.iter().find(|v| matches!(v, Literal::Text(t) if t.chars().count() > MAX_VALUE_CHARS)) {
            return Err(Issue::Malformed {
                argument: "filters".into(),
                message: format!("a value of the filter on `{}` is {} characters long, more than the limit of {MAX_VALUE_CHARS}", echo(&f.column), t.chars().count()),
            });
        }
    }
    Ok(())
}

/// Resolves a request into the simple-metric queries it needs (components)
/// and the output metrics computed from them, in request order.
pub fn resolve(model: &CheckedModel, req: &MetricRequest) -> Result<ResolvedRequest, Issue> {
    resolve_in(model, req)
}

fn resolve_in(model: &SemanticModel, req: &MetricRequest) -> Result<ResolvedRequest, Issue> {
    if req.names.is_empty() {
        return Err(Issue::Malformed { argument: "name".into(), message: "give a metric `name` (or several in `names`)".into() });
    }
    within_bounds(req)?;
    // MetricFlow's names (`customer__country`, `metric_time__month`, where strings) become ours first.
    let normalized = super::dbt_names::normalize(model, req)?;
    let req = &normalized;
    // Where strings became filters: they are bounded like the others.
    within_bounds(req)?;
    // Each requested name, as (output name, inputs as (simple metric, extra filters, alias), expression).
    let mut requested: Vec<&str> = Vec::new();
    for name in &req.names {
        if model.metric(name).is_none() && !model.derived.contains_key(name) {
            return Err(Issue::UnknownMetric { name: echo(name), fuzzy: close_matches(name, model.metric_names()) });
        }
        if !requested.contains(&name.as_str()) {
            requested.push(name);
        }
    }
    // The first requested metric (or a derived one's first input) gives the
    // grains a bad `time_grain` is told about.
    let first_simple = requested.first().and_then(|n| model.first_simple_metric(n));
    let first_grains = first_simple.map(|m| m.time_grains.clone()).unwrap_or_default();
    let limit = match req.limit {
        None => model.settings.default_limit.min(MAX_LIMIT as u32),
        Some(n) if (MIN_LIMIT..=MAX_LIMIT).contains(&n) => n as u32,
        Some(n) => {
            return Err(Issue::Malformed {
                argument: "limit".into(),
                message: format!("limit must be between {MIN_LIMIT} and {MAX_LIMIT}, got {n}"),
            })
        }
    };
    let mut group_by: Vec<GroupColumn> = Vec::new();
    for g in &req.group_by {
        let c = group_column(model, g)?;
        if !group_by.contains(&c) {
            group_by.push(c);
        }
    }
    let time_grain = match &req.time_grain {
        None => None,
        Some(g) => Some(model.grain(g).ok_or_else(|| Issue::InvalidTimeGrain {
            grain: echo(g),
            allowed: if first_grains.is_empty() { model.grains() } else { first_grains.clone() },
        })?),
    };
    let time_dimension = match &req.time_dimension {
        None => None,
        Some(td) => {
            let c = column(model, td, ColumnRole::TimeDimension)?;
            let class = model.entity(&c.entity).and_then(|e| e.column(&c.column)).map(|col| col.type_class());
            if class.is_some_and(|t| t != crate::model::TypeClass::Unknown && !t.is_temporal()) {
                return Err(Issue::Malformed {
                    argument: "time_dimension".into(),
                    message: format!("`{c}` is not a date or timestamp column"),
                });
            }
            Some(c)
        }
    };
    let mut request_filters: Vec<Filter> = Vec::new();
    for f in &req.filters {
        // Identical filters say the same thing once.
        let f = filter(model, f)?;
        if !request_filters.contains(&f) {
            request_filters.push(f);
        }
    }
    let mut request_any_of: Vec<Condition<Filter>> = Vec::new();
    for c in &req.any_of {
        let c = c.try_map(&mut |f| filter(model, f))?;
        if !request_any_of.contains(&c) {
            request_any_of.push(c);
        }
    }
    let order_by = order_keys(model, &requested, &group_by, time_grain, &req.order_by)?;
    for v in &req.via {
        if model.join(v).is_none() {
            let available: Vec<String> = model.joins.keys().cloned().collect();
            return Err(Issue::UnknownViaJoin {
                name: echo(v),
                fuzzy: close_matches(v, available.iter().map(String::as_str)),
                available,
            });
        }
    }
    let via = dedup(&req.via);
    let mut components: Vec<MetricQuery> = Vec::new();
    // A component is a simple metric with its extra filters; equal ones are shared.
    let mut component = |m: &crate::model::Metric, extra: &[crate::model::FilterSpec], transform: Transform| -> Result<usize, Issue> {
        let mut filters = metric_filters(model, m, extra)?;
        filters.extend(request_filters.iter().cloned());
        let mut any_of = m.any_of.iter().map(|c| c.try_map(&mut |f| declared_filter(model, f))).collect::<Result<Vec<_>, _>>()?;
        any_of.extend(request_any_of.iter().cloned());
        let q = MetricQuery {
            metric: m.name.clone(),
            anchor: m.entity.clone(),
            group_by: group_by.clone(),
            time_grain,
            time_dimension: time_dimension.clone(),
            filters,
            any_of,
            order_by: order_by.clone(),
            limit,
            via: via.clone(),
            transform,
        };
        Ok(match components.iter().position(|c| *c == q) {
            Some(i) => i,
            None => {
                components.push(q);
                components.len() - 1
            }
        })
    };
    let mut outputs = Vec::new();
    for name in requested {
        let expr = match model.metric(name) {
            Some(m) => OutputExpr::Component(component(m, &[], Transform::Plain)?),
            None => {
                let Some(d) = model.derived.get(name) else {
                    return Err(Issue::UnknownMetric { name: echo(name), fuzzy: close_matches(name, model.metric_names()) });
                };
                let broken = || Issue::Malformed { argument: "name".into(), message: format!("`{name}` names an input metric that is not defined") };
                let inputs: Vec<&crate::model::Metric> =
                    d.inputs.iter().map(|i| model.metric(&i.metric).ok_or_else(broken)).collect::<Result<_, _>>()?;
                let input_metric = |i: usize| inputs.get(i).copied().ok_or_else(broken);
                let input_filters = |i: usize| d.inputs.get(i).map(|x| x.filters.as_slice()).unwrap_or_default();
                match (d.cumulative, &d.conversion) {
                    (Some(window), _) => {
                        let transform = match d.period_agg {
                            // All-time, without a time grain: the total (as MetricFlow answers it).
                            Some(_) if time_grain.is_none() && window == crate::model::CumulativeWindow::AllTime => Transform::Plain,
                            Some(p) => Transform::DailyCumulative(window, p),
                            None => Transform::Cumulative(window),
                        };
                        check_time(name, input_metric(0)?, time_grain, &transform)?;
                        OutputExpr::Component(component(input_metric(0)?, input_filters(0), transform)?)
                    }
                    (None, Some(spec)) => {
                        let (base, conv) = (input_metric(0)?, input_metric(1)?);
                        let Some(conv_time) = &conv.time_dimension else {
                            return Err(Issue::Malformed {
                                argument: "name".into(),
                                message: format!("`{name}`: conversion metric `{}` has no time dimension", conv.name),
                            });
                        };
                        let target = ConversionTarget {
                            metric: conv.name.clone(),
                            entity: conv.entity.clone(),
                            keys: spec.base_key.iter().cloned().zip(spec.conversion_key.iter().cloned()).collect(),
                            time: conv_time.column.clone(),
                            window: spec.window,
                            filters: metric_filters(model, conv, input_filters(1))?,
                            counts: spec.counts,
                        };
                        let converted = component(base, input_filters(0), Transform::Converted(target))?;
                        // The base rows give every group its row, with no conversion where none converts:
                        // counted (ours), or the base metric itself (MetricFlow's).
                        let base_transform = match spec.counts {
                            crate::model::ConversionCounts::BaseRows => Transform::ConversionBase,
                            crate::model::ConversionCounts::ConversionRows => Transform::Plain,
                        };
                        let all = component(base, input_filters(0), base_transform)?;
                        match spec.calculation {
                            crate::model::ConversionCalculation::Conversions => OutputExpr::Component(converted),
                            crate::model::ConversionCalculation::ConversionRate => {
                                OutputExpr::Binary(
                                    crate::model::ArithOp::Div,
                                    Box::new(OutputExpr::Component(converted)),
                                    Box::new(OutputExpr::Component(all)),
                                )
                            }
                        }
                    }
                    (None, None) => {
                        let mut by_alias = Vec::new();
                        for (i, input) in d.inputs.iter().enumerate() {
                            let transform = match input.offset {
                                None => Transform::Plain,
                                Some(crate::model::TimeOffset::Window(w)) if d.periods == crate::model::Periods::AnyInput => Transform::OffsetKeys(w),
                                Some(crate::model::TimeOffset::Window(w)) => Transform::Offset(w),
                                Some(crate::model::TimeOffset::ToGrain(g)) if d.periods == crate::model::Periods::AnyInput => Transform::ToGrainKeys(g),
                                Some(crate::model::TimeOffset::ToGrain(g)) => Transform::ToGrain(g),
                            };
                            check_time(name, input_metric(i)?, time_grain, &transform)?;
                            by_alias.push((input.alias.as_str(), component(input_metric(i)?, &input.filters, transform)?));
                        }
                        OutputExpr::from_measure(&d.expression, &by_alias).ok_or_else(|| Issue::Malformed {
                            argument: "name".into(),
                            message: format!("`{name}` names an input its expression does not define"),
                        })?
                    }
                }
            }
        };
        outputs.push(OutputMetric { name: name.to_string(), expr });
    }
    Ok(ResolvedRequest { components, outputs })
}

/// The filters a metric declares, with an input's own, typed.
fn metric_filters(model: &SemanticModel, m: &crate::model::Metric, extra: &[crate::model::FilterSpec]) -> Result<Vec<Filter>, Issue> {
    let mut filters: Vec<Filter> = Vec::new();
    for f in m.filters.iter().chain(extra) {
        filters.push(declared_filter(model, f)?);
    }
    Ok(filters)
}

/// One filter a metric declares, typed.
fn declared_filter(model: &SemanticModel, f: &crate::model::FilterSpec) -> Result<Filter, Issue> {
    let values = typed_values(model, &f.column, f.op, &f.values)?;
    check_like(model, &f.column, f.op, &values, "name")?;
    Ok(Filter { column: f.column.clone(), op: f.op, values, from_metric: true, by_metric: None, bucket: None })
}

/// A component that moves along time needs a grain, and a period
/// (`offset_to_grain`, `grain_to_date`) must hold whole buckets of it.
fn check_time(output: &str, m: &crate::model::Metric, grain: Option<Grain>, transform: &Transform) -> Result<(), Issue> {
    let allowed = if m.time_grains.is_empty() { Grain::ALL.to_vec() } else { m.time_grains.clone() };
    if !transform.needs_grain() {
        return Ok(());
    }
    let Some(grain) = grain else {
        return Err(Issue::TimeGrainRequired { metric: output.to_string(), allowed });
    };
    // Moving rows along time, accumulating over a window or reading a
    // period's first bucket needs buckets of a known length; a custom
    // grain's periods are whatever the time spine says.
    if grain.is_custom() {
        return Err(Issue::InvalidTimeGrain { grain: grain.as_str().to_string(), allowed: allowed.into_iter().filter(|g| !g.is_custom()).collect() });
    }
    let period = match transform {
        Transform::ToGrain(p) | Transform::ToGrainKeys(p) | Transform::Cumulative(crate::model::CumulativeWindow::GrainToDate(p)) => *p,
        _ => return Ok(()),
    };
    if grain.nests_in(period) {
        return Ok(());
    }
    Err(Issue::GrainNotNested {
        metric: output.to_string(),
        grain,
        period,
        allowed: allowed.into_iter().filter(|g| g.nests_in(period)).collect(),
    })
}

fn dedup(v: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for s in v {
        if !out.contains(s) {
            out.push(s.clone());
        }
    }
    out
}

/// Looks up `entity.column`, reporting shape, entity and column problems.
fn column(model: &SemanticModel, text: &str, role: ColumnRole) -> Result<ColumnRef, Issue> {
    let Some((entity, col)) = text.split_once('.') else {
        return Err(Issue::Malformed {
            argument: role.argument().into(),
            message: format!("`{}` must be `entity.column`, e.g. `customer.country`", echo(text)),
        });
    };
    if !is_identifier(entity) || !is_identifier(col) {
        return Err(Issue::Malformed {
            argument: role.argument().into(),
            message: format!(
                "`{}` is not a valid `entity.column`: names use letters, digits and `_`",
                echo(text)
            ),
        });
    }
    let Some(e) = model.entity(entity) else {
        return Err(Issue::UnknownEntity {
            role,
            name: entity.to_string(),
            fuzzy: close_matches(entity, model.entities.keys().map(String::as_str)),
        });
    };
    let col = e.resolve_alias(col);
    check_column(model, e, col, role)?;
    Ok(ColumnRef::new(entity, col))
}

fn check_column(model: &SemanticModel, e: &Entity, col: &str, role: ColumnRole) -> Result<(), Issue> {
    if !e.knows_columns() || e.column(col).is_some() {
        return Ok(());
    }
    // Redacted columns are neither offered nor named: a request could not
    // use them, and listing them would leak what the PII policy hides.
    let allowed: Vec<String> =
        e.column_names().into_iter().filter(|c| !crate::pii::decide(&model.pii_policy, &e.table, c).redacted()).collect();
    Err(Issue::UnknownColumn {
        role,
        entity: e.name.clone(),
        column: col.to_string(),
        fuzzy: close_matches(col, allowed.iter().map(String::as_str)),
        allowed,
    })
}

fn filter(model: &SemanticModel, f: &FilterArg) -> Result<Filter, Issue> {
    // `entity.date_column__<grain>`: the period the time falls in.
    if let Some((name, suffix)) = f.column.rsplit_once("__").filter(|(name, _)| f.metric.is_none() && name.contains('.') && !column_exists(model, &f.column)) {
        match model.grain(suffix) {
            Some(grain) => return bucket_filter(model, f, name, grain),
            // A date column with a suffix that names no grain.
            None if column_exists(model, name) && model.class_of(&column(model, name, ColumnRole::Filter)?).is_temporal() => {
                let grains: Vec<&str> = model.grains().into_iter().map(|g| g.as_str()).collect();
                return Err(Issue::Malformed {
                    argument: "filters".into(),
                    message: format!("`{}`: `{}` is not a grain; use one of {}", echo(&f.column), echo(suffix), grains.join(", ")),
                });
            }
            None => {}
        }
    }
    let column = column(model, &f.column, ColumnRole::Filter)?;
    if let Some(metric) = &f.metric {
        return metric_filter(model, f, column, metric);
    }
    let Some(op) = FilterOp::parse(&f.op) else {
        return Err(Issue::Malformed {
            argument: "filters".into(),
            message: format!("unknown filter op `{}`; use one of {}", echo(&f.op), FilterOp::ALL.join(", ")),
        });
    };
    let literals = filter_literals(&column, op, &f.value)?;
    let values = typed_values(model, &column, op, &literals)?;
    check_like(model, &column, op, &values, "filters")?;
    check_accepted(model, &column, op, &values)?;
    Ok(Filter { column, op, values, from_metric: false, by_metric: None, bucket: None })
}

/// The values `op` takes, as given: none, one, or a non-empty list (one
/// value stands for a list of one).
fn filter_literals(column: &ColumnRef, op: FilterOp, value: &FilterValue) -> Result<Vec<Literal>, Issue> {
    Ok(match (op.arity(), value) {
        (OpArity::None, FilterValue::None) => Vec::new(),
        (OpArity::None, _) => return Err(malformed_filter(column, format!("`{}` takes no value; omit `value`", op.as_str()))),
        (OpArity::Scalar, FilterValue::Scalar(l)) => vec![l.clone()],
        (OpArity::Scalar, FilterValue::List(_)) => {
            return Err(malformed_filter(column, format!("`{}` takes one value; use `in` for a list", op.as_str())))
        }
        (OpArity::List, FilterValue::List(items)) if !items.is_empty() => items.clone(),
        (OpArity::List, FilterValue::Scalar(l)) => vec![l.clone()],
        (_, _) => return Err(malformed_filter(column, format!("`{}` needs a value", op.as_str()))),
    })
}

/// A filter on the period a date column falls in at `grain`
/// (`order.ordered_at__fiscal_year = '2024-02-01'`): compared as a
/// bucket of that column is (a custom grain's period as the spine's
/// DATE), by the comparisons and lists that order dates.
fn bucket_filter(model: &SemanticModel, f: &FilterArg, name: &str, grain: Grain) -> Result<Filter, Issue> {
    let column = column(model, name, ColumnRole::Filter)?;
    let class = model.class_of(&column);
    if class != crate::model::TypeClass::Unknown && !class.is_temporal() {
        return Err(malformed_filter(&column, format!("`{column}` is not a date or timestamp column, so it has no {}", grain.as_str())));
    }
    if class == crate::model::TypeClass::Date && grain < Grain::Day {
        return Err(Issue::GrainMismatch { dimension: column.to_string(), grain, allowed: model.grains().into_iter().filter(|g| *g >= Grain::Day).collect() });
    }
    let op = FilterOp::parse(&f.op).filter(|op| !matches!(op, FilterOp::Like | FilterOp::NotLike));
    let Some(op) = op else {
        return Err(malformed_filter(&column, format!("op `{}` does not compare periods; use eq, ne, lt, lte, gt, gte, in, not_in, is_null or not_null", echo(&f.op))));
    };
    let literals = filter_literals(&column, op, &f.value)?;
    // A custom grain's period is the spine's DATE; a calendar bucket is
    // typed as its column is.
    let bucket_class = if grain.is_custom() { crate::model::TypeClass::Date } else { class };
    let values = literals
        .iter()
        .map(|l| Value::typed(l, bucket_class).map_err(|expected| malformed_filter(&column, format!("`{}` value {l} is not a period start: expected {expected}", op.as_str()))))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(Filter { column, op, values, from_metric: false, by_metric: None, bucket: Some(grain) })
}

/// A filter on a metric's value per value of `column` (the metric grouped
/// by it): numbers compared with `=`, `!=`, `<`, `<=`, `>`, `>=`, `in` or
/// `not_in`. A row whose column value has no metric value is not kept.
fn metric_filter(model: &SemanticModel, f: &FilterArg, column: ColumnRef, metric: &str) -> Result<Filter, Issue> {
    let bad = |message: String| Issue::Malformed { argument: "filters".into(), message: format!("metric filter `{}` by `{column}`: {message}", echo(metric)) };
    let op = FilterOp::parse(&f.op).filter(|op| !matches!(op, FilterOp::IsNull | FilterOp::NotNull | FilterOp::Like | FilterOp::NotLike));
    let Some(op) = op else {
        return Err(bad(format!("op `{}` does not compare numbers; use eq, ne, lt, lte, gt, gte, in or not_in", echo(&f.op))));
    };
    let literals: Vec<Literal> = match &f.value {
        FilterValue::Scalar(l) if op.arity() == OpArity::Scalar => vec![l.clone()],
        FilterValue::List(ls) if op.arity() == OpArity::List && !ls.is_empty() => ls.clone(),
        FilterValue::Scalar(l) if op.arity() == OpArity::List => vec![l.clone()],
        _ => return Err(bad(format!("`{}` needs {}", op.as_str(), if op.arity() == OpArity::List { "a list of numbers" } else { "one number" }))),
    };
    let values = literals
        .iter()
        .map(|l| match l {
            Literal::Int(i) => Ok(Value::Int(*i)),
            Literal::Float(x) => Ok(Value::Float(*x)),
            other => Err(bad(format!("a metric's value is a number, not {other}"))),
        })
        .collect::<Result<Vec<_>, _>>()?;
    // The metric per value of the column, as a request of its own.
    let inner = MetricRequest { names: vec![metric.to_string()], group_by: vec![column.to_string()], ..MetricRequest::default() };
    let resolved = resolve_in(model, &inner)?;
    if resolved.outputs.len() != 1 {
        return Err(bad("name one metric".into()));
    }
    Ok(Filter { column, op, values, from_metric: false, by_metric: Some(Box::new(resolved)), bucket: None })
}

/// `like` reads text: a text column and a text pattern.
fn check_like(model: &SemanticModel, column: &ColumnRef, op: FilterOp, values: &[Value], argument: &str) -> Result<(), Issue> {
    if !matches!(op, FilterOp::Like | FilterOp::NotLike) {
        return Ok(());
    }
    let class = model.class_of(column);
    let text_column = matches!(class, crate::model::TypeClass::Text | crate::model::TypeClass::Unknown);
    if text_column && values.iter().all(|v| matches!(v, Value::Text(_))) {
        return Ok(());
    }
    Err(Issue::Malformed {
        argument: argument.into(),
        message: format!("filter on `{column}`: `{}` compares text with a text pattern (`%` any characters, `_` one)", op.as_str()),
    })
}

/// An equality filter (`eq`, `ne`, `in`, `not_in`) on a column with
/// accepted values compares with accepted values only: `status = 'shiped'`
/// would answer nothing, `status != 'shiped'` everything, both silently.
fn check_accepted(model: &SemanticModel, column: &ColumnRef, op: FilterOp, values: &[Value]) -> Result<(), Issue> {
    if !matches!(op, FilterOp::Eq | FilterOp::Ne | FilterOp::In | FilterOp::NotIn) {
        return Ok(());
    }
    let Some(accepted) = model.entity(&column.entity).and_then(|e| e.accepted_values_of(&column.column)) else { return Ok(()) };
    for v in values {
        let text = match v {
            Value::Text(s) => s.clone(),
            Value::Int(i) => i.to_string(),
            Value::Float(x) => x.to_string(),
            Value::Bool(b) => b.to_string(),
            // Dates are not enumerated values.
            Value::Date(_) | Value::Timestamp(_) => return Ok(()),
        };
        if !accepted.contains(&text) {
            return Err(Issue::UnacceptedValue {
                column: column.to_string(),
                fuzzy: close_matches(&text, accepted.iter().map(String::as_str)),
                value: text,
                accepted: accepted.to_vec(),
            });
        }
    }
    Ok(())
}

fn malformed_filter(column: &ColumnRef, message: String) -> Issue {
    Issue::Malformed { argument: "filters".into(), message: format!("filter on `{column}`: {message}") }
}

fn typed_values(
    model: &SemanticModel,
    column: &ColumnRef,
    op: FilterOp,
    literals: &[crate::model::Literal],
) -> Result<Vec<Value>, Issue> {
    let col = model.entity(&column.entity).and_then(|e| e.column(&column.column));
    let class = col.map_or(crate::model::TypeClass::Unknown, |c| c.type_class());
    let type_name = col.and_then(|c| c.data_type.clone()).unwrap_or_else(|| "unknown".into());
    literals
        .iter()
        .map(|l| {
            Value::typed(l, class).map_err(|expected| {
                malformed_filter(
                    column,
                    format!("`{}` value {l} does not fit the column type {type_name}: expected {expected}", op.as_str()),
                )
            })
        })
        .collect()
}

/// `entity.column`, `entity.column__extract_<part>` or
/// `entity.column__<grain>` (the latter two on a date or timestamp column).
fn group_column(model: &SemanticModel, text: &str) -> Result<GroupColumn, Issue> {
    let derived = match text.rsplit_once("__") {
        Some((name, suffix)) if name.contains('.') && !column_exists(model, text) => {
            let derived = match suffix.strip_prefix("extract_") {
                Some(part) => DatePart::parse(part).map(Derived::Part).ok_or_else(|| Issue::Malformed {
                    argument: "group_by".into(),
                    message: format!("`{}`: `{}` is not a date part; use one of {}", echo(text), echo(part), DatePart::names().join(", ")),
                })?,
                None => match model.grain(suffix) {
                    Some(g) => Derived::Bucket(g),
                    // Not a grain: the whole text is a (misspelt) column.
                    None => return Ok(GroupColumn::plain(column(model, text, ColumnRole::GroupBy)?)),
                },
            };
            Some((name, derived))
        }
        _ => None,
    };
    let Some((name, derived)) = derived else {
        return Ok(GroupColumn::plain(column(model, text, ColumnRole::GroupBy)?));
    };
    let c = column(model, name, ColumnRole::GroupBy)?;
    let what = match derived {
        Derived::Part(p) => p.as_str(),
        Derived::Bucket(g) => g.as_str(),
    };
    let class = model.class_of(&c);
    if class != crate::model::TypeClass::Unknown && !class.is_temporal() {
        return Err(Issue::Malformed {
            argument: "group_by".into(),
            message: format!("`{}`: `{c}` is not a date or timestamp column, so it has no {what}", echo(text)),
        });
    }
    if let (Derived::Bucket(g), crate::model::TypeClass::Date) = (derived, class) {
        if g < Grain::Day {
            return Err(Issue::GrainMismatch { dimension: c.to_string(), grain: g, allowed: model.grains().into_iter().filter(|g| *g >= Grain::Day).collect() });
        }
    }
    Ok(GroupColumn { column: c, derived: Some(derived) })
}

/// Whether `entity.column` (as written) names a column of the model.
fn column_exists(model: &SemanticModel, text: &str) -> bool {
    text.split_once('.').and_then(|(e, c)| model.entity(e).map(|e| e.column(e.resolve_alias(c)).is_some())).unwrap_or(false)
}

fn order_keys(
    model: &SemanticModel,
    metrics: &[&str],
    group_by: &[GroupColumn],
    grain: Option<Grain>,
    args: &[OrderArg],
) -> Result<Vec<OrderKey>, Issue> {
    let mut keys: Vec<OrderKey> = Vec::new();
    for a in args {
        let descending = match a.direction.as_deref().map(str::to_ascii_lowercase).as_deref() {
            None | Some("asc") => false,
            Some("desc") => true,
            Some(other) => {
                return Err(Issue::Malformed {
                    argument: "order_by".into(),
                    message: format!("direction `{}` must be `asc` or `desc`", echo(other)),
                })
            }
        };
        // `entity.alias` orders by the column the alias names.
        let column = match a.column.split_once('.') {
            Some((e, c)) => model.entity(e).map_or_else(|| a.column.clone(), |ent| format!("{e}.{}", ent.resolve_alias(c))),
            None => a.column.clone(),
        };
        let target = if let Some(i) = metrics.iter().position(|m| *m == a.column) {
            OutputRef::Metric(i)
        } else if let Some(i) = group_by.iter().position(|g| g.to_string() == column) {
            OutputRef::GroupBy(i)
        } else if grain.is_some_and(|g| is_time_name(&a.column, g)) {
            OutputRef::Time
        } else {
            let mut allowed: Vec<String> = metrics.iter().map(|m| m.to_string()).collect();
            allowed.extend(group_by.iter().map(ToString::to_string));
            if let Some(g) = grain {
                allowed.push(format!("metric_time__{}", g.as_str()));
            }
            return Err(Issue::UnknownOrderBy {
                column: echo(&a.column),
                fuzzy: close_matches(&a.column, allowed.iter().map(String::as_str)),
                allowed,
            });
        };
        if !keys.iter().any(|k| k.target == target) {
            keys.push(OrderKey { target, descending });
        }
    }
    Ok(keys)
}

/// The time bucket may be ordered by its output name
/// (`order.ordered_at__month`), `metric_time[__grain]` or `time_bucket`.
fn is_time_name(name: &str, grain: Grain) -> bool {
    let suffix = format!("__{}", grain.as_str());
    name == "time_bucket" || name == "metric_time" || name.ends_with(&suffix)
}
