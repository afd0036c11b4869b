//! MetricFlow's names in a request, rewritten to ours before anything is
//! resolved, so a dbt user (or an agent that learned MetricFlow) can ask as
//! they would ask `mf query`:
//!
//! - `metric_time`, `metric_time__month`, `TimeDimension('metric_time',
//!   'month')` in `group_by` → the metric's time bucket at that grain
//!   (`metric_time` alone is a day);
//! - `customer__country`, `order__customer__country` (an entity path, read
//!   by its last link), `Dimension('customer__country')` → `customer.country`;
//!   `order__ordered_at__week` → time dimension `order.ordered_at`, grain week;
//! - an entity name alone (`customer`) → its identity column;
//! - `-revenue` in `order_by` → descending;
//! - `where` strings (`{{ Dimension('customer__country') }} = 'US'`) →
//!   filters, through `dbt::where_filter` (values stay values).
//!
//! A name with a `.` is ours and passes untouched; the resolver then checks
//! every rewritten name as it checks any other, with the same errors.
//! A dimension renamed in dbt (`customer_segment` over column `segment`) is
//! not known here: its dunder form becomes `customer.customer_segment`,
//! which the resolver reads through the entity's `column_aliases` (the dbt
//! import writes one per renamed dimension).
//!
//! Architecture invariant: depends on `model` and the pure `dbt` parser.

use super::{Condition, FilterArg, FilterValue, Issue, MetricRequest, OrderArg};
use crate::model::{is_identifier, Literal, SemanticModel};

fn malformed(argument: &str, message: String) -> Issue {
    Issue::Malformed { argument: argument.into(), message }
}

/// A name in MetricFlow's object form, read.
struct Named {
    name: String,
    grain: Option<String>,
    /// `date_part_name='dow'`.
    part: Option<String>,
}

/// `TimeDimension('metric_time', 'month')`, `Dimension('customer__country')`,
/// `TimeDimension('metric_time', date_part_name='dow')` → the name, grain
/// and date part; anything else → the text as a name.
fn object_form(text: &str) -> Result<Named, Issue> {
    let t = text.trim();
    let plain = || Named { name: t.to_string(), grain: None, part: None };
    let Some(open) = t.find('(') else { return Ok(plain()) };
    let kind = &t[..open];
    if !["TimeDimension", "Dimension", "Entity"].contains(&kind) || !t.ends_with(')') {
        return Ok(plain());
    }
    if t.contains(".grain(") {
        return Err(malformed("group_by", format!("`{}`: write the grain as the second argument", super::echo_name(t))));
    }
    let unquote = |a: &str| a.trim().trim_matches(|c| c == '\'' || c == '"').to_string();
    let (mut positional, mut part) = (Vec::new(), None);
    for a in t[open + 1..t.len() - 1].split(',') {
        match a.split_once('=') {
            Some((key, value)) if key.trim() == "date_part_name" => part = Some(unquote(value)),
            // entity_path and friends: the name already says where it is.
            Some(_) => {}
            None => positional.push(unquote(a)),
        }
    }
    let name = positional.first().cloned().unwrap_or_default();
    let grain = positional.get(1).cloned().filter(|g| !g.is_empty());
    Ok(Named { name, grain, part })
}

/// `TimeDimension(name, date_part_name=part)` as our group-by key,
/// `entity.column__extract_<part>` (metric_time: the metric's own time).
fn date_part_key(model: &SemanticModel, name: &str, grain: Option<&str>, part: &str, metric_time: Option<&str>, argument: &str) -> Result<String, Issue> {
    // The grain as an argument or in the name (`metric_time__month`).
    let (column, grain) = column_of(model, name, grain.map(str::to_string));
    if let Some(g) = grain {
        return Err(malformed(argument, format!("`{}`: give a grain or a date part, not both (`{}`)", super::echo_name(name), super::echo_name(&g))));
    }
    let column = match column {
        c if c == "metric_time" => metric_time.map(str::to_string).ok_or_else(|| malformed(argument, "`metric_time` needs a metric with a time dimension".into()))?,
        c => c,
    };
    Ok(format!("{column}__extract_{part}"))
}

/// A dbt name as (our `entity.column` or `metric_time`, grain).
fn column_of(model: &SemanticModel, name: &str, grain: Option<String>) -> (String, Option<String>) {
    if name.contains('.') {
        return (name.to_string(), grain);
    }
    if let Some(rest) = name.strip_prefix("metric_time") {
        return match rest.strip_prefix("__") {
            Some(g) => ("metric_time".into(), Some(g.to_string())),
            None if rest.is_empty() => ("metric_time".into(), grain),
            None => (name.to_string(), grain),
        };
    }
    let parts: Vec<&str> = name.split("__").collect();
    if parts.len() == 1 {
        // An entity alone means its identity.
        if let Some((e, [id])) = model.entity(name).map(|e| (e, e.identity.as_slice())) {
            return (format!("{}.{id}", e.name), grain);
        }
        return (name.to_string(), grain);
    }
    let (parts, grain) = match (parts.split_last(), parts.last().and_then(|g| model.grain(g))) {
        (Some((g, rest)), Some(_)) if parts.len() >= 3 => (rest, Some(g.to_string())),
        _ => (parts.as_slice(), grain),
    };
    // The last two links: the entity and its column (more than one `__` is an entity path).
    match parts {
        [.., entity, column] => (versioned_home(model, entity, column).unwrap_or_else(|| format!("{entity}.{column}")), grain),
        _ => (name.to_string(), grain),
    }
}

/// MetricFlow names a dimension of a versioned model (SCD) after its
/// natural entity (`store__manager_name`): ours is the column of the one
/// versioned entity joined from that entity which has it, when the entity
/// itself has no such column.
fn versioned_home(model: &SemanticModel, entity: &str, column: &str) -> Option<String> {
    let e = model.entity(entity)?;
    if !e.knows_columns() || e.column(e.resolve_alias(column)).is_some() {
        return None;
    }
    let mut homes = model
        .joins
        .values()
        .filter(|j| j.valid_between.is_some() && j.source_entity == entity)
        .filter_map(|j| model.entity(&j.target_entity))
        .filter(|v| v.column(v.resolve_alias(column)).is_some());
    let home = homes.next()?;
    homes.next().is_none().then(|| format!("{}.{column}", home.name))
}

/// The request with MetricFlow's names rewritten to ours.
pub fn normalize(model: &SemanticModel, req: &MetricRequest) -> Result<MetricRequest, Issue> {
    // Group-bys, order and where strings are rewritten below: not copied.
    let mut out = MetricRequest {
        names: req.names.clone(),
        group_by: Vec::new(),
        filters: req.filters.clone(),
        time_grain: req.time_grain.clone(),
        time_dimension: req.time_dimension.clone(),
        order_by: Vec::new(),
        limit: req.limit,
        via: req.via.clone(),
        where_strings: Vec::new(),
        any_of: req.any_of.clone(),
    };
    let mut grains: Vec<String> = Vec::new();
    let mut group_by = Vec::new();
    let mut time_dimension = None;
    // metric_time is the first metric's time dimension (a ratio, derived
    // or cumulative metric's: its first input's).
    let metric_time = req.names.first().and_then(|n| model.first_simple_metric(n)).and_then(|m| m.time_dimension.as_ref()).map(|t| t.to_string());
    // A named time dimension at a grain is the request's time bucket where
    // it is every metric's own; elsewhere a key of its own, that column
    // bucketed (`order.delivered_at__month`), as MetricFlow groups it.
    let simple: Vec<&crate::model::Metric> = req
        .names
        .iter()
        .flat_map(|n| match model.metric(n) {
            Some(m) => vec![m],
            None => model.derived.get(n).map(|d| d.inputs.iter().filter_map(|i| model.metric(&i.metric)).collect()).unwrap_or_default(),
        })
        .collect();
    let every_metrics_own = |td: &str| !simple.is_empty() && simple.iter().all(|m| m.time_dimension.as_ref().is_some_and(|t| t.to_string() == td));
    for g in &req.group_by {
        let Named { name, grain, part } = object_form(g)?;
        if let Some(part) = part {
            group_by.push(date_part_key(model, &name, grain.as_deref(), &part, metric_time.as_deref(), "group_by")?);
            continue;
        }
        let (column, grain) = column_of(model, &name, grain);
        if let Some(p) = grain.as_deref().and_then(|g| g.strip_prefix("extract_")) {
            return Err(malformed(
                "group_by",
                format!("`{}`: a date part is written TimeDimension('{}', date_part_name='{}')", super::echo_name(g), super::echo_name(&name.replace(&format!("__extract_{p}"), "")), super::echo_name(p)),
            ));
        }
        if column == "metric_time" {
            grains.push(grain.unwrap_or_else(|| "day".into()));
        } else if let Some(grain) = grain.clone().filter(|g| model.grain(g).is_some() && !every_metrics_own(&column)) {
            group_by.push(format!("{column}__{grain}"));
        } else if let Some(grain) = grain {
            grains.push(grain);
            time_dimension = Some(column);
        } else {
            group_by.push(column);
        }
    }
    grains.dedup();
    match (grains.as_slice(), &req.time_grain) {
        ([], _) => {}
        ([g], Some(t)) if g != t => {
            return Err(malformed("time_grain", format!("time_grain `{}` and a group-by at grain `{g}` disagree", super::echo_name(t))));
        }
        ([g], _) => out.time_grain = Some(g.clone()),
        (many, _) => return Err(malformed("group_by", format!("one time grain per request; asked: {}", many.join(", ")))),
    }
    out.group_by = group_by;
    if let Some(td) = time_dimension {
        if out.time_dimension.as_ref().is_some_and(|t| *t != td) {
            return Err(malformed("time_dimension", format!("time_dimension and a group-by at a grain name different columns (`{td}`)")));
        }
        out.time_dimension = Some(td);
    }
    for f in out.filters.iter_mut().chain(out.any_of.iter_mut().flat_map(Condition::atoms_mut)) {
        let Named { name, .. } = object_form(&f.column)?;
        f.column = column_of(model, &name, None).0;
    }
    out.order_by = req
        .order_by
        .iter()
        .map(|o| -> Result<OrderArg, Issue> {
            let (text, direction) = match o.column.strip_prefix('-') {
                Some(rest) if o.direction.is_none() => (rest, Some("desc".to_string())),
                _ => (o.column.as_str(), o.direction.clone()),
            };
            let is_metric = req.names.iter().any(|n| n == text);
            let column = if is_metric || text.contains('.') || text.starts_with("metric_time") {
                text.to_string()
            } else {
                let Named { name, grain, part } = object_form(text)?;
                if let Some(part) = part {
                    return Ok(OrderArg { column: date_part_key(model, &name, grain.as_deref(), &part, metric_time.as_deref(), "order_by")?, direction });
                }
                match column_of(model, &name, grain) {
                    // A time dimension at a grain is the request's time
                    // bucket where it is the metrics' own, else its own key.
                    (c, Some(g)) if model.grain(&g).is_some() && !every_metrics_own(&c) => format!("{c}__{g}"),
                    (_, Some(g)) => format!("metric_time__{g}"),
                    (c, None) => c,
                }
            };
            Ok(OrderArg { column, direction })
        })
        .collect::<Result<_, _>>()?;
    for w in &req.where_strings {
        let resolve = |kind: &str, name: &str| -> Result<String, String> {
            if name == "metric_time" {
                return metric_time.clone().ok_or_else(|| "`metric_time` needs a metric with a time dimension".to_string());
            }
            if kind == "Entity" {
                return model
                    .entity(name)
                    .and_then(|e| match e.identity.as_slice() {
                        [id] => Some(format!("{}.{id}", e.name)),
                        _ => None,
                    })
                    .ok_or_else(|| format!("unknown entity `{name}`"));
            }
            let (column, _) = column_of(model, name, None);
            if column.split('.').all(is_identifier) {
                Ok(column)
            } else {
                Err(format!("`{name}` is not a dimension name"))
            }
        };
        let cond = crate::dbt::where_filter::parse(w, &resolve).map_err(|e| malformed("where", super::echo_name(&e)))?;
        let (filters, any_of) = crate::dbt::where_filter::conjuncts(cond);
        let arg = |f: &serde_json::Value| filter_arg(f).ok_or_else(|| malformed("where", "a value that is not a string, number or boolean".into()));
        for f in &filters {
            out.filters.push(arg(f)?);
        }
        for c in &any_of {
            out.any_of.push(c.try_map(&mut |f| arg(f))?);
        }
    }
    Ok(out)
}

fn literal(v: &serde_json::Value) -> Option<Literal> {
    match v {
        serde_json::Value::Bool(b) => Some(Literal::Bool(*b)),
        serde_json::Value::Number(n) => Some(n.as_i64().map(Literal::Int).unwrap_or_else(|| Literal::Float(n.as_f64().unwrap_or(f64::NAN)))),
        serde_json::Value::String(s) => Some(Literal::Text(s.clone())),
        _ => None,
    }
}

fn filter_arg(f: &serde_json::Value) -> Option<FilterArg> {
    let value = match f.get("value") {
        None => FilterValue::None,
        Some(serde_json::Value::Array(items)) => FilterValue::List(items.iter().map(literal).collect::<Option<_>>()?),
        Some(v) => FilterValue::Scalar(literal(v)?),
    };
    let metric = f.get("metric").and_then(serde_json::Value::as_str).map(str::to_string);
    Some(FilterArg { column: f["column"].as_str()?.to_string(), op: f["op"].as_str()?.to_string(), value, metric })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{load_project_from_files, FileKind};
    use std::path::PathBuf;

    fn model() -> SemanticModel {
        let files = vec![
            (FileKind::Entity, PathBuf::from("entities/order.yaml"), "version: 1\nname: order\nbinding: {single_table: main.orders}\nidentity: id\ncolumns:\n  - {name: id, type: integer}\n  - {name: customer_id, type: integer}\n  - {name: ordered_at, type: timestamp}\n  - {name: shipped_at, type: timestamp}\n".to_string()),
            (FileKind::Entity, PathBuf::from("entities/customer.yaml"), "version: 1\nname: customer\nbinding: {single_table: main.customers}\nidentity: id\ncolumns:\n  - {name: id, type: integer}\n  - {name: country, type: varchar}\n".to_string()),
            (FileKind::Join, PathBuf::from("joins/order_customer.yaml"), "version: 1\nname: order_customer\nsource_entity: order\ntarget_entity: customer\n\"on\": [{source: customer_id, target: id}]\ncardinality: many_to_one\n".to_string()),
            (FileKind::Metric, PathBuf::from("metrics/order_count.yaml"), "version: 1\nname: order_count\nentity: order\nmeasure: {agg: count, column: id}\ntime_dimension: order.ordered_at\ntime_grains: [day, month]\n".to_string()),
        ];
        let (m, d) = load_project_from_files(&files);
        assert!(d.is_empty(), "{d}");
        m
    }

    fn req(group_by: &[&str]) -> MetricRequest {
        MetricRequest { names: vec!["order_count".into()], group_by: group_by.iter().map(|s| s.to_string()).collect(), ..Default::default() }
    }

    #[test]
    fn metricflow_names_become_ours() {
        let m = model();
        let r = normalize(&m, &req(&["metric_time__month", "order__customer__country", "customer"])).unwrap();
        assert_eq!(r.time_grain.as_deref(), Some("month"));
        assert_eq!(r.group_by, vec!["customer.country".to_string(), "customer.id".to_string()]);
        let r = normalize(&m, &req(&["TimeDimension('metric_time', 'day')", "Dimension('customer__country')"])).unwrap();
        assert_eq!((r.time_grain.as_deref(), r.group_by.clone()), (Some("day"), vec!["customer.country".to_string()]));
        let r = normalize(&m, &req(&["order__ordered_at__month"])).unwrap();
        assert_eq!((r.time_grain.as_deref(), r.time_dimension.as_deref()), (Some("month"), Some("order.ordered_at")));
        // Date parts: of metric_time (the metric's own time) or of a named time dimension.
        let r = normalize(&m, &req(&["TimeDimension('metric_time', date_part_name='dow')", "TimeDimension('order__shipped_at', date_part_name=\"month\")"])).unwrap();
        assert_eq!((r.time_grain.clone(), r.group_by.clone()), (None, vec!["order.ordered_at__extract_dow".to_string(), "order.shipped_at__extract_month".to_string()]));
        // Ours pass untouched.
        let r = normalize(&m, &req(&["customer.country"])).unwrap();
        assert_eq!(r.group_by, vec!["customer.country".to_string()]);
        let mut with_order = req(&[]);
        with_order.order_by = vec![OrderArg { column: "-order_count".into(), direction: None }];
        assert_eq!(normalize(&m, &with_order).unwrap().order_by[0].direction.as_deref(), Some("desc"));
        let mut with_where = req(&[]);
        with_where.where_strings = vec!["{{ Dimension('customer__country') }} = 'US'".into()];
        let r = normalize(&m, &with_where).unwrap();
        assert_eq!(r.filters.len(), 1);
        assert_eq!(r.filters[0].column, "customer.country");
    }

    #[test]
    fn what_would_answer_something_else_is_refused() {
        let m = model();
        // Another date column at a grain: not answered on the metric's own date.
        // Another date column at a grain is a key of its own, not the time bucket.
        let r = normalize(&m, &req(&["order__shipped_at__month", "metric_time__day"])).unwrap();
        assert_eq!((r.time_grain.as_deref(), r.group_by.clone()), (Some("day"), vec!["order.shipped_at__month".to_string()]));
        assert!(normalize(&m, &req(&["metric_time__month", "metric_time__day"])).is_err());
        let mut conflicting = req(&["metric_time__month"]);
        conflicting.time_grain = Some("day".into());
        assert!(normalize(&m, &conflicting).is_err());
        assert!(matches!(normalize(&m, &req(&["metric_time__extract_dow"])).unwrap_err(), Issue::Malformed { message, .. } if message.contains("date_part_name='dow'")));
        assert!(normalize(&m, &req(&["TimeDimension('metric_time', 'day', date_part_name='dow')"])).is_err());
    }
}
