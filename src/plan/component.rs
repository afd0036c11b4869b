//! Planning one component: a simple metric with its filters and transform,
//! at the request's keys. Which entities are joined and how, which rows a
//! filter keeps, how the measure is aggregated, which time dimension
//! buckets the rows.

use super::note::PlanNote;
use super::tree::{JoinTree, SemiJoinBuilder, TreeStep};
use super::*;
use crate::ir::{Condition, Filter, Issue, MetricQuery, Transform};
use crate::model::{Aggregation, CheckedModel, ColumnRef, ConversionCounts, Grain, Measure, MeasureOperand, TypeClass};

pub(super) fn plan_component(model: &CheckedModel, q: &MetricQuery) -> Result<ComponentPlan, Issue> {
    let (Some(metric), Some(anchor_entity)) = (model.metric(&q.metric), model.entity(&q.anchor)) else {
        return Err(Issue::UnknownMetric { name: q.metric.clone(), fuzzy: Vec::new() });
    };
    let graph = model.graph();
    let mut notes = Vec::new();
    let mut tree = JoinTree::new(&q.anchor);

    // A date part is read from the rows as they are: a metric that moves
    // or accumulates its rows along time would need it moved too.
    let reads_rows_as_they_are = matches!(q.transform, Transform::Plain | Transform::ConversionBase | Transform::Converted(_));
    if let (Some(g), false) = (q.group_by.iter().find(|g| g.derived.is_some()), reads_rows_as_they_are) {
        return Err(Issue::Malformed {
            argument: "group_by".into(),
            message: format!(
                "`{g}`: `{}` moves or accumulates its rows along time, and date parts or other date columns at a grain are not supported with it yet; group by its own time (metric_time) at a grain instead",
                q.metric
            ),
        });
    }
    let (time, time_resolution) = choose_time(model, q, &mut notes)?;
    if let Some(t) = &time {
        let steps = tree.path_steps(graph, &t.dimension.entity, &q.via)?;
        tree.add(steps, &t.dimension.entity)?;
    }
    for g in &q.group_by {
        let steps = tree.path_steps(graph, &g.column.entity, &q.via)?;
        tree.add(steps, &g.column.entity)?;
    }
    let (mut filters, semi) = place_filters(model, &mut tree, q)?;
    let mut any_of = place_any_of(model, &mut tree, q)?;
    let mut used: Vec<&str> = tree.steps.iter().map(|s| s.join.as_str()).collect();
    used.extend(semi.iter().flat_map(|(b, _)| b.steps.iter().map(|s| s.join.as_str())));
    let unused: Vec<String> = q.via.iter().filter(|v| !used.contains(&v.as_str())).cloned().collect();
    if !unused.is_empty() {
        notes.push(PlanNote::ViaUnused { joins: unused });
    }

    let step = |s: &TreeStep, alias: &str, from_alias: &str| -> Result<JoinStep, Issue> {
        let to = model.entity(&s.to).ok_or_else(|| Issue::Unreachable { anchor: q.anchor.clone(), target: s.to.clone() })?;
        // A versioned join picks the version valid at the metric's own time
        // (MetricFlow's agg time), which must be a column of the side it is
        // walked from.
        let versions = match &s.versions {
            None => None,
            // Walked from the versions to the other side, the window would
            // filter rows by a time of their own: no exact meaning.
            Some((_, false)) => {
                return Err(Issue::Malformed {
                    argument: "name".into(),
                    message: format!(
                        "`{}` would walk the versioned join `{}` from `{}` (the versions) to `{}`; a versioned join is walked towards its versions only: ask for a metric of `{}`",
                        q.metric, s.join, s.from, s.to, s.to
                    ),
                })
            }
            Some((v, true)) => {
                let time = metric.time_dimension.as_ref().filter(|t| t.entity == s.from).ok_or_else(|| Issue::Malformed {
                    argument: "name".into(),
                    message: format!(
                        "join `{}` picks the version valid at the time of each row of `{}`, which needs the metric's time dimension on `{}`; ask for another metric, or group by columns that do not need `{}`",
                        s.join, q.metric, s.from, s.to
                    ),
                })?;
                Some(Versions { from: v.from.clone(), to: v.to.clone(), time: time.column.clone() })
            }
        };
        Ok(JoinStep {
            versions,
            join: s.join.clone(),
            from_alias: from_alias.to_string(),
            from_entity: s.from.clone(),
            to: Relation { alias: alias.to_string(), entity: s.to.clone(), table: to.table.clone(), computed: Vec::new() },
            on: s.on.clone(),
            cardinality: s.cardinality,
            cardinality_declared: s.declared,
            kind: JoinKind::Left,
            matches: None,
            within: None,
        })
    };
    let joins = tree.steps.iter().map(|s| step(s, &s.to, &s.from)).collect::<Result<Vec<_>, _>>()?;
    for j in &joins {
        if let Some(v) = &j.versions {
            let (versions, other) = (j.to.entity.clone(), j.from_entity.clone());
            notes.push(PlanNote::VersionedJoin { join: j.join.clone(), versions, other, time: v.time.clone(), from: v.from.clone(), to: v.to.clone() });
        }
    }
    let mut semi_joins = Vec::with_capacity(semi.len());
    for (i, (b, fs)) in semi.iter().enumerate() {
        let steps = b
            .steps
            .iter()
            .enumerate()
            .map(|(k, s)| step(s, &semi_alias(&s.to, i), &if k == 0 { s.from.clone() } else { semi_alias(&s.from, i) }))
            .collect::<Result<Vec<_>, _>>()?;
        let filters = fs.iter().map(|(f, entity)| PlannedFilter::on(model, &semi_alias(entity, i), f)).collect::<Result<_, _>>()?;
        notes.push(PlanNote::SemiJoin { join: b.key.1.clone(), correlated: b.key.0.clone() });
        semi_joins.push(SemiJoin { correlate_from: b.key.0.clone(), steps, filters, form: SemiJoinForm::Exists });
    }

    let mut degradations = Vec::new();
    let fan: Vec<&JoinStep> = joins.iter().filter(|j| j.fans_out()).collect();
    let aggregation = if fan.is_empty() {
        AggregationStrategy::Direct
    } else if anchor_entity.identity.is_empty() {
        for j in &fan {
            notes.push(PlanNote::FanOutInflated {
                metric: q.metric.clone(),
                anchor: q.anchor.clone(),
                join: j.join.clone(),
                to: j.to.alias.clone(),
            });
        }
        degradations.push(Degradation::FanOut { joins: fan.iter().map(|j| j.join.clone()).collect() });
        AggregationStrategy::Direct
    } else {
        for j in &fan {
            notes.push(PlanNote::FanOutDeduplicated {
                metric: q.metric.clone(),
                anchor: q.anchor.clone(),
                join: j.join.clone(),
                to: j.to.alias.clone(),
                cardinality: j.cardinality,
                declared: j.cardinality_declared,
            });
        }
        AggregationStrategy::Deduplicated { identity: anchor_entity.identity.clone() }
    };
    if time_resolution == Some(TimeResolution::Unavailable) {
        degradations.push(Degradation::TimeDimensionUnavailable);
    }

    let mut time = time;
    if let (Transform::Offset(shift) | Transform::OffsetKeys(shift), Some(t)) = (&q.transform, &mut time) {
        t.shift = Some(*shift);
        let atoms = any_of.iter_mut().flat_map(Condition::atoms_mut);
        for f in filters.iter_mut().chain(atoms).filter(|f| f.alias == t.dimension.entity && f.column == t.dimension.column) {
            f.shift = Some((*shift, t.class));
        }
    }
    let credited = |t: &Transform| matches!(t, Transform::Converted(target) if target.counts == ConversionCounts::ConversionRows);
    let (measure, non_additive) = match &q.transform {
        // Credited conversion rows: the conversion metric's measure over them.
        Transform::Converted(target) if credited(&q.transform) => {
            let Some(conv) = model.metric(&target.metric) else {
                return Err(Issue::UnknownMetric { name: target.metric.clone(), fuzzy: Vec::new() });
            };
            if aggregation.over_repeated_rows() {
                return Err(Issue::Malformed {
                    argument: "group_by".into(),
                    message: format!(
                        "`{}` credits each conversion row to one base row; a group-by across a to-many join of `{}` would credit it to several. Group by columns of `{}` or those reached over to-one joins",
                        target.metric, q.anchor, q.anchor
                    ),
                });
            }
            (conv.measure.clone(), None)
        }
        // A conversion counts base rows: one per anchor identity.
        Transform::ConversionBase | Transform::Converted(_) => {
            let id = anchor_entity.identity.first().map(String::as_str).or_else(|| metric.measure.columns().first().copied());
            let Some(id) = id else {
                return Err(Issue::Malformed { argument: "name".into(), message: format!("`{}` has no column to count", q.anchor) });
            };
            (Measure { agg: Aggregation::Count, operand: MeasureOperand::Column(id.to_string()), percentile: None, discrete: false }, None)
        }
        _ => (
            metric.measure.clone(),
            metric.non_additive.as_ref().map(|na| NonAdditiveWindow {
                column: na.dimension.column.clone(),
                window: na.window,
                per: na.per.iter().map(|p| p.column.clone()).collect(),
            }),
        ),
    };
    if let Some(na) = &non_additive {
        notes.push(PlanNote::NonAdditive {
            metric: q.metric.clone(),
            column: na.column.clone(),
            window: na.window,
            bucketed: time.is_some(),
            per: na.per.clone(),
        });
    }
    let conversion = match &q.transform {
        Transform::Converted(target) => {
            let (Some(base_time), Some(entity)) = (&metric.time_dimension, model.entity(&target.entity)) else {
                return Err(Issue::Malformed {
                    argument: "name".into(),
                    message: format!("conversion from `{}` needs a time dimension on both metrics", q.metric),
                });
            };
            // Crediting one conversion to one base row needs the conversion
            // rows' identity: without one, every row would share the credit.
            if credited(&q.transform) && entity.identity.is_empty() {
                return Err(Issue::Malformed {
                    argument: "name".into(),
                    message: format!("conversion to `{}` credits each conversion once, but `{}` declares no identity", target.metric, target.entity),
                });
            }
            notes.push(PlanNote::Conversion {
                anchor: q.anchor.clone(),
                entity: target.entity.clone(),
                metric: target.metric.clone(),
                keys: target.keys.clone(),
                window: target.window,
                credited: credited(&q.transform),
            });
            let alias = "sb_conv".to_string();
            let credit = credited(&q.transform).then(|| Credit {
                identity: entity.identity.clone(),
                class: entity.column(&target.time).map_or(TypeClass::Timestamp, |c| c.type_class()),
            });
            Some(ConversionCheck {
                credit,
                table: entity.table.clone(),
                computed: Vec::new(),
                entity: target.entity.clone(),
                keys: target.keys.clone(),
                base_time: base_time.column.clone(),
                base_class: anchor_entity.column(&base_time.column).map_or(TypeClass::Timestamp, |c| c.type_class()),
                time: target.time.clone(),
                window: target.window,
                filters: target.filters.iter().map(|f| PlannedFilter::on(model, &alias, f)).collect::<Result<_, _>>()?,
                alias,
            })
        }
        _ => None,
    };
    if let Transform::Cumulative(window) = &q.transform {
        if time.is_none() {
            return Err(Issue::TimeGrainRequired { metric: q.metric.clone(), allowed: Grain::ALL.to_vec() });
        }
        notes.push(PlanNote::Cumulative { metric: q.metric.clone(), window: *window });
    }
    if measure.agg == Aggregation::Percentile && measure.percentile.is_none() {
        return Err(Issue::Malformed { argument: "name".into(), message: format!("`{}` is a percentile without a fraction", q.metric) });
    }

    // Counts are 0 for a key they have no row for (DESIGN, "Empty groups of
    // counts are 0"), except in metrics imported from dbt, which keep
    // MetricFlow's NULL.
    let counts = matches!(measure.agg, Aggregation::Count | Aggregation::CountDistinct | Aggregation::SumBoolean);
    let missing = match metric.fill_nulls_with {
        Some(v) => Missing::Fill(v),
        None if counts && metric.origin != crate::model::DefinitionOrigin::DbtImport => Missing::Zero,
        None => Missing::Null,
    };
    // The time spine: a plain `join_to_timespine` component grouped by
    // time answers for every period of it, a daily cumulative is computed
    // on its days (the loader made sure the project names one). Filters on
    // the time dimension choose periods (and, for a daily cumulative, only
    // days: its windows read earlier rows).
    // A value read at its period's start (`offset_to_grain`) is computed
    // over all its rows: the request's time filters choose the answer's
    // buckets, and the period's first bucket may lie before them. The
    // metric's own filters say which rows it counts, and stay.
    let daily = matches!(q.transform, Transform::DailyCumulative(..));
    let spine_keyed = matches!(q.transform, Transform::ToGrainKeys(_));
    let on_time = |f: &PlannedFilter| time.as_ref().is_some_and(|t| f.alias == t.dimension.entity && f.column == t.dimension.column && f.shift.is_none());
    let time_leaves_rows = daily || q.transform.period_start().is_some();
    let requested_time = |f: &PlannedFilter| on_time(f) && !(time_leaves_rows && f.from_metric);
    let time_filters: Vec<PlannedFilter> = filters.iter().filter(|f| requested_time(f)).cloned().collect();
    if time_leaves_rows {
        filters.retain(|f| !requested_time(f));
        // A disjunction on time would choose some buckets and some rows.
        if any_of.iter().flat_map(Condition::atoms).any(requested_time) {
            let how = if daily { "is accumulated per day" } else { "is read at the start of each period" };
            return Err(Issue::Malformed {
                argument: "where".into(),
                message: format!("`{}` {how}: a time filter on it must stand on its own, not inside OR", q.metric),
            });
        }
    }
    let spine = match (&time, &model.settings.time_spine) {
        (Some(_), Some(spine)) if daily || spine_keyed || (metric.join_to_timespine && q.transform == Transform::Plain) => {
            // The spine's day is a DATE (`TimeSpine`), compared with the time's values.
            let spine_filters = time_filters.into_iter().map(|f| PlannedFilter { alias: "sb_spine".into(), column: spine.column.clone(), class: TypeClass::Date, ..f }).collect();
            Some(SpineKeys { table: spine.table.clone(), column: spine.column.clone(), filters: spine_filters })
        }
        (None, _) if daily => return Err(Issue::TimeGrainRequired { metric: q.metric.clone(), allowed: Grain::ALL.to_vec() }),
        (_, None) if daily || spine_keyed => {
            return Err(Issue::Malformed { argument: "name".into(), message: format!("`{}` answers for the buckets of a time spine, and the project names none", q.metric) })
        }
        _ => None,
    };
    match (&q.transform, &spine) {
        (Transform::DailyCumulative(window, period_agg), Some(s)) => notes.push(PlanNote::DailyCumulative {
            metric: q.metric.clone(),
            window: *window,
            period_agg: *period_agg,
            spine: s.table.clone(),
        }),
        (Transform::Plain, Some(s)) => notes.push(PlanNote::TimeSpine { metric: q.metric.clone(), spine: s.table.clone(), fill: metric.fill_nulls_with }),
        _ => {}
    }
    let mut plan = ComponentPlan {
        group_floor: None,
        missing,
        spine,
        metric: metric.name.clone(),
        anchor: Relation {
            alias: anchor_entity.name.clone(),
            entity: anchor_entity.name.clone(),
            table: anchor_entity.table.clone(),
            computed: Vec::new(),
        },
        joins,
        semi_joins,
        aggregation,
        time,
        time_resolution,
        filters,
        any_of,
        degradations,
        notes,
        transform: q.transform.clone(),
        measure,
        non_additive,
        conversion,
        count: super::CountForm::AsDeclared,
    };
    // The columns the component reads, listed once: which computed columns
    // its relations need, and what the PII check judges.
    let (computed, floor) = {
        let read = super::pii::columns_read(model, metric, &plan, q);
        let computed = computed_read(model, metric, &plan, &read);
        (computed, super::pii::check(model, metric, &plan, q)?)
    };
    give_computed(&mut plan, computed);
    if let Some((floor, note)) = floor {
        plan.group_floor = Some(floor);
        plan.notes.push(note);
    }
    // The passes that choose how the plan is written (plan/mod.rs).
    super::join_type::run(model, &mut plan);
    super::fan_out::run(&mut plan, &anchor_entity.identity);
    super::semi_join::run(&mut plan);
    super::counts::run(&mut plan, anchor_entity);
    Ok(plan)
}

/// For each relation (anchor, joins, semi-join steps, conversion, in that
/// order) the computed columns of its entity the component reads (`read`,
/// plus the anchor's identity and non-additive time, which the SQL reads
/// too): a relation without any stays the plain table. Relations are
/// planned without them, so only these are copied from the model.
fn computed_read(model: &CheckedModel, metric: &crate::model::Metric, plan: &ComponentPlan, read: &[(&str, &str)]) -> Vec<Vec<(String, String)>> {
    let identity = model.entity(&metric.entity).map(|e| e.identity.as_slice()).unwrap_or_default();
    let is_read = |entity: &str, name: &str| {
        read.iter().any(|(e, c)| *e == entity && *c == name)
            || (entity == metric.entity && identity.iter().any(|c| c == name))
            || metric.non_additive.iter().any(|na| na.dimension.entity == entity && na.dimension.column == name)
    };
    let of_entity = |entity: &str| -> Vec<(String, String)> {
        let Some(e) = model.entity(entity) else { return Vec::new() };
        e.columns.iter().filter_map(|c| c.expr.as_ref().filter(|_| is_read(entity, &c.name)).map(|x| (c.name.clone(), x.clone()))).collect()
    };
    let steps = plan.joins.iter().chain(plan.semi_joins.iter().flat_map(|s| s.steps.iter()));
    std::iter::once(plan.anchor.entity.as_str())
        .chain(steps.map(|j| j.to.entity.as_str()))
        .chain(plan.conversion.iter().map(|c| c.entity.as_str()))
        .map(of_entity)
        .collect()
}

/// Hands `computed_read`'s lists to the relations, in its order.
fn give_computed(plan: &mut ComponentPlan, lists: Vec<Vec<(String, String)>>) {
    let mut lists = lists.into_iter();
    let mut next = || lists.next().unwrap_or_default();
    plan.anchor.computed = next();
    for j in plan.joins.iter_mut().chain(plan.semi_joins.iter_mut().flat_map(|s| s.steps.iter_mut())) {
        j.to.computed = next();
    }
    if let Some(c) = plan.conversion.as_mut() {
        c.computed = next();
    }
}

/// Places each filter: on the main query when a key already joins the
/// entity it reads (or the way there is to-one), else in a semi-join from
/// the last joined entity on its way. A filter restricts the joined rows of
/// the entities the keys join: a category filter on a category group-by
/// keeps only those categories. Only a to-many join that no key needs
/// becomes a semi-join (EXISTS), which keeps the rows with at least one
/// matching related row and never multiplies them (docs/grammar.md,
/// "Filters across to-many joins"). Semi-join filters come back with the
/// entity they read, aliased later.
#[allow(clippy::type_complexity)]
fn place_filters<'q>(
    model: &CheckedModel,
    tree: &mut JoinTree,
    q: &'q MetricQuery,
) -> Result<(Vec<PlannedFilter>, Vec<(SemiJoinBuilder, Vec<(&'q Filter, String)>)>), Issue> {
    let graph = model.graph();
    let mut semi: Vec<(SemiJoinBuilder, Vec<(&Filter, String)>)> = Vec::new();
    let mut filters: Vec<PlannedFilter> = Vec::new();
    for f in &q.filters {
        let steps = tree.path_steps(graph, &f.column.entity, &q.via)?;
        let split = steps.iter().position(|s| s.cardinality.fans_out() && !tree.contains(&s.to)).unwrap_or(steps.len());
        let mut joined = steps;
        let beyond = joined.split_off(split.min(joined.len()));
        tree.add(joined, &f.column.entity)?;
        let Some(first) = beyond.first() else {
            filters.push(PlannedFilter::on(model, &f.column.entity, f)?);
            continue;
        };
        let key = (first.from.clone(), first.join.clone());
        let i = match semi.iter().position(|(b, _)| b.key == key) {
            Some(i) => i,
            None => {
                semi.push((SemiJoinBuilder { key, steps: Vec::new() }, Vec::new()));
                semi.len() - 1
            }
        };
        if let Some((builder, fs)) = semi.get_mut(i) {
            builder.add(&beyond)?;
            fs.push((f, f.column.entity.clone()));
        }
    }
    Ok((filters, semi))
}

/// Places the disjunctions on the main query: every column they read is
/// joined there (to-one, or on a to-many join the keys already make). A
/// branch beyond a to-many join would need a semi-join of its own inside
/// the OR, which is not written yet: refused, naming the join.
fn place_any_of(model: &CheckedModel, tree: &mut JoinTree, q: &MetricQuery) -> Result<Vec<Condition<PlannedFilter>>, Issue> {
    let graph = model.graph();
    let mut out = Vec::with_capacity(q.any_of.len());
    for c in &q.any_of {
        for f in c.atoms() {
            let steps = tree.path_steps(graph, &f.column.entity, &q.via)?;
            if let Some(s) = steps.iter().find(|s| s.cardinality.fans_out() && !tree.contains(&s.to)) {
                // The metric's own OR is its definition: the caller can only ask otherwise.
                return Err(match f.from_metric {
                    false => Issue::Malformed {
                        argument: "where".into(),
                        message: format!(
                            "`{}` inside OR (or NOT) lies across the to-many join `{}`; filter on it with AND alone (a semi-join), or group by it",
                            f.column, s.join
                        ),
                    },
                    true => Issue::Malformed {
                        argument: "name".into(),
                        message: format!(
                            "`{}` is defined with `{}` inside OR, which lies across the to-many join `{}` from `{}` and cannot be written yet; group by `{}` or ask for another metric",
                            q.metric, f.column, s.join, q.anchor, f.column
                        ),
                    },
                });
            }
            tree.add(steps, &f.column.entity)?;
        }
        out.push(c.try_map(&mut |f: &Filter| PlannedFilter::on(model, &f.column.entity, f))?);
    }
    Ok(out)
}

/// The alias of `entity` inside the `i`-th semi-join.
fn semi_alias(entity: &str, i: usize) -> String {
    format!("{entity}__s{}", i + 1)
}

/// The time dimension: the metric's own, the one requested, or the only
/// temporal column among the anchor's and those reachable over to-one
/// joins; none when no grain is asked.
fn choose_time(
    model: &CheckedModel,
    q: &MetricQuery,
    notes: &mut Vec<PlanNote>,
) -> Result<(Option<TimeBucket>, Option<TimeResolution>), Issue> {
    let Some(metric) = model.metric(&q.metric) else {
        return Err(Issue::UnknownMetric { name: q.metric.clone(), fuzzy: Vec::new() });
    };
    let Some(grain) = q.time_grain else {
        if q.time_dimension.is_some() {
            notes.push(PlanNote::TimeDimensionWithoutGrain);
        }
        return Ok((None, None));
    };
    let (dimension, resolution) = if let Some(own) = &metric.time_dimension {
        if q.time_dimension.as_ref().is_some_and(|td| td != own) {
            notes.push(PlanNote::TimeDimensionOverridden { metric: metric.name.clone(), own: own.clone() });
        }
        (own.clone(), TimeResolution::Local)
    } else if let Some(td) = &q.time_dimension {
        (td.clone(), TimeResolution::Requested)
    } else {
        // The anchor's own temporal columns, then those over to-one joins.
        let mut candidates: Vec<ColumnRef> = Vec::new();
        let reachable = model.graph().to_one_reachable(&q.anchor).into_iter().map(|(e, _)| e);
        for entity in std::iter::once(q.anchor.as_str()).chain(reachable) {
            for c in model.entity(entity).map(|e| e.columns.as_slice()).unwrap_or_default() {
                if c.type_class().is_temporal() {
                    candidates.push(ColumnRef::new(entity, &c.name));
                }
            }
        }
        match candidates.as_slice() {
            [] => {
                notes.push(PlanNote::TimeUnavailable { anchor: q.anchor.clone(), grain });
                return Ok((None, Some(TimeResolution::Unavailable)));
            }
            [only] => {
                if only.entity == q.anchor {
                    notes.push(PlanNote::TimeOwnColumn { column: only.clone(), anchor: q.anchor.clone() });
                } else {
                    notes.push(PlanNote::TimeInherited { column: only.clone() });
                }
                (only.clone(), TimeResolution::Inherited)
            }
            _ => return Err(Issue::AmbiguousTimeDimension { candidates: candidates.iter().map(ToString::to_string).collect() }),
        }
    };
    let class = model.class_of(&dimension);
    let allowed_by_metric: Vec<Grain> =
        if resolution == TimeResolution::Local && !metric.time_grains.is_empty() { metric.time_grains.clone() } else { model.grains() };
    if class == TypeClass::Date && grain < Grain::Day {
        return Err(Issue::GrainMismatch {
            dimension: dimension.to_string(),
            grain,
            allowed: allowed_by_metric.into_iter().filter(|g| *g >= Grain::Day).collect(),
        });
    }
    if !allowed_by_metric.contains(&grain) {
        return Err(Issue::InvalidTimeGrain { grain: grain.as_str().into(), allowed: allowed_by_metric });
    }
    Ok((Some(TimeBucket { dimension, grain, class, shift: None }), Some(resolution)))
}
