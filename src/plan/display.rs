//! A stable text form of a plan, one fact per line, for snapshot tests
//! (`tests/golden/plan/`) and for reading a plan apart from its SQL.

use std::fmt::{self, Display, Formatter};

use super::*;
use crate::model::MeasureOperand;

impl Display for RequestPlan {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let outputs: Vec<String> = self.outputs.iter().map(|o| format!("{} = {}", o.name, expr(&o.expr))).collect();
        writeln!(f, "outputs: {}", outputs.join("; "))?;
        if let Some(t) = &self.time {
            writeln!(f, "time: {} ({})", t.name, t.grain.as_str())?;
        }
        if !self.group_by.is_empty() {
            writeln!(f, "group by: {}", self.group_by.iter().map(|g| g.output_name.as_str()).collect::<Vec<_>>().join(", "))?;
        }
        let names = self.output_names();
        let n_time = usize::from(self.time.is_some());
        let order: Vec<String> = self
            .order_by
            .iter()
            .filter_map(|k| {
                let i = match k.target {
                    OutputRef::Time => 0,
                    OutputRef::GroupBy(i) => n_time + i,
                    OutputRef::Metric(i) => n_time + self.group_by.len() + i,
                };
                names.get(i).map(|n| format!("{n} {}", if k.descending { "desc" } else { "asc" }))
            })
            .collect();
        writeln!(f, "order by: {}", order.join(", "))?;
        writeln!(f, "limit: {}", self.limit)?;
        for g in &self.scans {
            let members: Vec<String> = g.iter().map(|i| format!("c{i}")).collect();
            writeln!(f, "one scan: {}", members.join(" + "))?;
        }
        match &self.combine {
            Combine::Single => writeln!(f, "combine: single")?,
            Combine::OneScan => writeln!(f, "combine: one select")?,
            Combine::Joined { key_sources, keys_end, reads } => {
                let sources: Vec<String> = key_sources.iter().map(|i| format!("c{i}")).collect();
                write!(f, "combine: joined; keys from {}", sources.join(" ∪ "))?;
                if let Some(e) = keys_end {
                    write!(f, " up to the last bucket of c{e}")?;
                }
                writeln!(f)?;
                for r in reads {
                    let align = match r.align {
                        Align::SameKeys => "at the same keys".to_string(),
                        Align::PeriodStart(g) => format!("at the start of its {}", g.as_str()),
                    };
                    let missing = r.missing.value().map_or("NULL".to_string(), |v| v.to_string());
                    writeln!(f, "  read c{} {align}; missing = {missing}", r.component)?;
                }
            }
        }
        for (i, c) in self.components.iter().enumerate() {
            write!(f, "c{i}: {c}")?;
        }
        Ok(())
    }
}

impl Display for ComponentPlan {
    fn fmt(&self, f: &mut Formatter<'_>) -> fmt::Result {
        let operand = match &self.measure.operand {
            MeasureOperand::Column(c) => format!("{}.{c}", self.anchor.alias),
            MeasureOperand::Expression(_) => "an expression".to_string(),
        };
        let pct = self.measure.percentile.map(|p| format!(" {p}")).unwrap_or_default();
        writeln!(f, "{} = {}{pct}({operand}) from {} ({})", self.metric, self.measure.agg.as_str(), self.anchor.alias, self.anchor.table)?;
        match &self.transform {
            Transform::Plain => {}
            other => writeln!(f, "  transform: {}", transform(other))?,
        }
        for j in &self.joins {
            let versions = j.versions.as_ref().map_or(String::new(), |v| format!(", the {} version valid at {}.{} in [{}, {})", j.to.alias, j.from_alias, v.time, v.from, v.to));
            let kind = match j.kind {
                JoinKind::Left => String::new(),
                JoinKind::Inner(evidence) => match &j.within {
                    Some(leader) => format!(", inner inside the left join of {leader}: {}", evidence.as_str()),
                    None => format!(", inner: {}", evidence.as_str()),
                },
            };
            writeln!(f, "  join {}: {} -> {} ({}{}{kind}{versions})", j.join, j.from_alias, j.to.alias, j.cardinality.as_str(), declared(j))?;
        }
        if let Some(t) = &self.time {
            let shift = t.shift.map(|s| format!(", moved {s} later")).unwrap_or_default();
            let how = self.time_resolution.map(|r| r.as_str()).unwrap_or("");
            writeln!(f, "  time: {} by {} ({how}{shift})", t.dimension, t.grain.as_str())?;
        }
        for p in &self.filters {
            writeln!(f, "  where {}", filter(p))?;
        }
        for c in &self.any_of {
            writeln!(f, "  where {}", condition(c))?;
        }
        for s in &self.semi_joins {
            let path: Vec<String> = s.steps.iter().map(|j| format!("{} ({})", j.to.alias, j.join)).collect();
            let conditions: Vec<String> = s.filters.iter().map(filter).collect();
            let form = match s.form {
                SemiJoinForm::In => "IN",
                SemiJoinForm::Exists => "EXISTS",
            };
            writeln!(f, "  semi-join ({form}) from {} via {}: {}", s.correlate_from, path.join(" -> "), conditions.join(" and "))?;
        }
        if let Some(c) = &self.conversion {
            let window = c.window.map(|w| format!(" within {w}")).unwrap_or_default();
            let keys: Vec<String> = c.keys.iter().map(|(a, b)| format!("{a} = {}.{b}", c.entity)).collect();
            match &c.credit {
                None => writeln!(f, "  converts: when a {} row has {} at or after {}{window}", c.entity, keys.join(" and "), c.base_time)?,
                Some(credit) => writeln!(
                    f,
                    "  credits: each {} row ({}) to the latest row by day of {} with {} on or before its {}{window}",
                    c.entity,
                    credit.identity.join(", "),
                    c.base_time,
                    keys.join(" and "),
                    c.time
                )?,
            }
        }
        if let Some(s) = &self.spine {
            let conditions: Vec<String> = s.filters.iter().map(filter).collect();
            let filtered = if conditions.is_empty() { String::new() } else { format!(" where {}", conditions.join(" and ")) };
            writeln!(f, "  time spine: {}.{}{filtered}", s.table, s.column)?;
        }
        if let Some(na) = &self.non_additive {
            let per = if na.per.is_empty() { String::new() } else { format!(" per {}", na.per.join(", ")) };
            writeln!(f, "  non-additive: {} {}{per}", if na.window == WindowChoice::Last { "last" } else { "first" }, na.column)?;
        }
        match &self.aggregation {
            AggregationStrategy::Direct => writeln!(f, "  aggregate: direct")?,
            AggregationStrategy::DistinctBranch { step } => {
                let join = self.joins.get(*step).map_or("?", |j| j.join.as_str());
                writeln!(f, "  aggregate: direct, the side of {join} first reduced to its distinct keys")?
            }
            AggregationStrategy::RepeatInsensitive { count_identity } => {
                let how = if *count_identity { "the identity counted distinct" } else { "repeats change nothing" };
                writeln!(f, "  aggregate: over the repeated rows ({how})")?
            }
            AggregationStrategy::Deduplicated { identity } => {
                let identity: Vec<String> = identity.iter().map(|c| format!("{}.{c}", self.anchor.alias)).collect();
                writeln!(f, "  aggregate: deduplicated on {}", identity.join(", "))?
            }
        }
        match self.count {
            CountForm::AsDeclared => {}
            CountForm::Values => writeln!(f, "  count: values, without distinct (each row is one {}, its identity distinct)", self.anchor.alias)?,
            CountForm::Rows => writeln!(f, "  count: rows (each row is one {}, the column never NULL)", self.anchor.alias)?,
        }
        if let Some(floor) = &self.group_floor {
            let people: Vec<String> = floor.owners.iter().map(|(a, id)| format!("{a}.{id}")).collect();
            writeln!(f, "  withhold groups of fewer than {} distinct {}", floor.k, people.join(", "))?;
        }
        for d in &self.degradations {
            writeln!(f, "  degraded: {d:?}")?;
        }
        Ok(())
    }
}

fn declared(j: &JoinStep) -> &'static str {
    match (j.cardinality_declared, j.fans_out()) {
        (false, _) => ", undeclared, fans out",
        (true, true) => ", fans out",
        (true, false) => "",
    }
}

fn filter(p: &PlannedFilter) -> String {
    let values: Vec<String> = p.values.iter().map(|v| v.to_json().to_string()).collect();
    let shift = p.shift.map(|(s, _)| format!(" (moved {s} later)")).unwrap_or_default();
    // A metric filter: the column's values whose metric compares.
    let whose = p.by_metric.as_deref().and_then(|m| m.outputs.first()).map(|o| format!(" whose {}", o.name)).unwrap_or_default();
    format!("{}.{}{shift}{whose} {} [{}]", p.alias, p.column, p.op.as_str(), values.join(", "))
}

fn condition(c: &crate::ir::Condition<PlannedFilter>) -> String {
    let (parts, word) = match c {
        crate::ir::Condition::Atom(p) => return filter(p),
        crate::ir::Condition::All(cs) => (cs, " and "),
        crate::ir::Condition::Any(cs) => (cs, " or "),
    };
    format!("({})", parts.iter().map(condition).collect::<Vec<_>>().join(word))
}

fn transform(t: &Transform) -> String {
    match t {
        Transform::Plain => "plain".into(),
        Transform::Offset(i) => format!("moved {i} later"),
        Transform::OffsetKeys(i) => format!("moved {i} later, its buckets answer keys"),
        Transform::ToGrain(g) => format!("value at the start of each {}", g.as_str()),
        Transform::ToGrainKeys(g) => format!("value at the start of each {}, for every spine bucket of it", g.as_str()),
        Transform::Cumulative(w) => match w {
            crate::model::CumulativeWindow::AllTime => "cumulative, all time".into(),
            crate::model::CumulativeWindow::Rolling(i) => format!("cumulative over {i}"),
            crate::model::CumulativeWindow::GrainToDate(g) => format!("cumulative, {} to date", g.as_str()),
        },
        Transform::DailyCumulative(w, p) => {
            let window = match w {
                crate::model::CumulativeWindow::AllTime => "all time".to_string(),
                crate::model::CumulativeWindow::Rolling(i) => format!("over {i}"),
                crate::model::CumulativeWindow::GrainToDate(g) => format!("{} to date", g.as_str()),
            };
            format!("cumulative per spine day, {window}; each bucket's {} day", p.as_str())
        }
        Transform::ConversionBase => "conversion base rows".into(),
        Transform::Converted(c) => format!("base rows converting to {}", c.metric),
        Transform::DataEnd => "unmoved, read for its last bucket only".into(),
    }
}

fn expr(e: &OutputExpr) -> String {
    match e {
        OutputExpr::Component(i) => format!("c{i}"),
        OutputExpr::Number(n) => n.clone(),
        OutputExpr::Neg(inner) => format!("-{}", expr(inner)),
        OutputExpr::Binary(op, l, r) => {
            let op = match op {
                crate::model::ArithOp::Add => "+",
                crate::model::ArithOp::Sub => "-",
                crate::model::ArithOp::Mul => "*",
                crate::model::ArithOp::Div => "/",
            };
            format!("({} {op} {})", expr(l), expr(r))
        }
    }
}
