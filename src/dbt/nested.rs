//! Ratio and derived metrics over other ratio and derived metrics, as
//! MetricFlow nests them, written in our grammar, whose derived metrics
//! read simple metrics only: each composite input is replaced by its own
//! arithmetic over its simple inputs (its leaves), recursively. Division
//! is the same on both sides (floating point, NULL on a zero divisor:
//! MetricFlow's ratio is `CAST(num AS DOUBLE) / NULLIF(den, 0)`), and a
//! NULL input makes the whole NULL, so the flattened metric answers as the
//! nested one for every group.
//!
//! An input's own filter (and its alias) is carried down to every leaf of
//! that input; an input's `offset_window`/`offset_to_grain` too, when no
//! leaf below it is moved already (two offsets do not compose here).
//!
//! Owns only the flattening (pure over names and texts); it must not read
//! the manifest's JSON layout (mod.rs does) nor the model's loader.

use crate::model::{ArithOp, MeasureExpr};

/// A simple metric read by a composite metric, with the filter items (YAML
/// flow text) and the time offset (`offset_window: 1 month`) it is read with.
#[derive(Clone, Debug, PartialEq)]
pub struct Leaf {
    pub metric: String,
    /// The name the expression uses for it.
    pub alias: String,
    pub filters: Vec<String>,
    pub offset: Option<String>,
}

/// A ratio or derived metric as arithmetic over simple metrics.
#[derive(Clone, Debug, PartialEq)]
pub struct Composite {
    pub leaves: Vec<Leaf>,
    /// Over the leaves' aliases.
    pub expr: MeasureExpr,
}

/// One input of a composite metric as dbt declares it: the metric it reads
/// (a leaf, or a composite already flattened), under `alias`, with its own
/// filter items and offset.
pub struct Input<'a> {
    pub alias: String,
    pub read: Read<'a>,
    pub filters: Vec<String>,
    pub offset: Option<String>,
}

pub enum Read<'a> {
    Simple(String),
    Composite(&'a Composite),
}

/// The composite metric whose expression `expr` (over the inputs' aliases)
/// reads `inputs`: composite inputs inlined, their leaves renamed
/// `<input alias>__<leaf alias>` so that no two leaves share a name.
pub fn flatten(expr: &MeasureExpr, inputs: Vec<Input<'_>>) -> Result<Composite, String> {
    let aliases: Vec<&str> = inputs.iter().map(|i| i.alias.as_str()).collect();
    if let Some(c) = expr.columns().into_iter().find(|c| !aliases.contains(c)) {
        return Err(format!("its expression names `{c}`, which is not one of its inputs"));
    }
    let mut leaves: Vec<Leaf> = Vec::new();
    let mut replaced: Vec<(String, MeasureExpr)> = Vec::new();
    for input in inputs {
        match input.read {
            Read::Simple(metric) => leaves.push(Leaf { metric, alias: input.alias, filters: input.filters, offset: input.offset }),
            Read::Composite(c) => {
                if input.offset.is_some() {
                    if let Some(moved) = c.leaves.iter().find(|l| l.offset.is_some()) {
                        return Err(format!(
                            "its input `{}` is moved in time and reads `{}`, which is moved too: two offsets do not compose here",
                            input.alias, moved.metric
                        ));
                    }
                }
                let rename = |a: &str| format!("{}__{a}", input.alias);
                for l in &c.leaves {
                    let mut filters = l.filters.clone();
                    filters.extend(input.filters.iter().cloned());
                    leaves.push(Leaf { metric: l.metric.clone(), alias: rename(&l.alias), filters, offset: l.offset.clone().or(input.offset.clone()) });
                }
                replaced.push((input.alias.clone(), renamed(&c.expr, &rename)));
            }
        }
    }
    let mut seen = std::collections::BTreeSet::new();
    if let Some(l) = leaves.iter().find(|l| !seen.insert(l.alias.as_str())) {
        return Err(format!("two of its inputs, once nested metrics are inlined, are both named `{}`", l.alias));
    }
    Ok(Composite { leaves, expr: substitute(expr, &replaced) })
}

/// `numerator / denominator` as a composite.
pub fn ratio(numerator: Input<'_>, denominator: Input<'_>) -> Result<Composite, String> {
    let expr = MeasureExpr::Binary(
        ArithOp::Div,
        Box::new(MeasureExpr::Column(numerator.alias.clone())),
        Box::new(MeasureExpr::Column(denominator.alias.clone())),
    );
    flatten(&expr, vec![numerator, denominator])
}

fn renamed(e: &MeasureExpr, rename: &dyn Fn(&str) -> String) -> MeasureExpr {
    match e {
        MeasureExpr::Column(c) => MeasureExpr::Column(rename(c)),
        MeasureExpr::Number(n) => MeasureExpr::Number(n.clone()),
        MeasureExpr::Neg(x) => MeasureExpr::Neg(Box::new(renamed(x, rename))),
        MeasureExpr::Binary(op, l, r) => MeasureExpr::Binary(*op, Box::new(renamed(l, rename)), Box::new(renamed(r, rename))),
    }
}

fn substitute(e: &MeasureExpr, by: &[(String, MeasureExpr)]) -> MeasureExpr {
    match e {
        MeasureExpr::Column(c) => by.iter().find(|(a, _)| a == c).map_or_else(|| e.clone(), |(_, x)| x.clone()),
        MeasureExpr::Number(_) => e.clone(),
        MeasureExpr::Neg(x) => MeasureExpr::Neg(Box::new(substitute(x, by))),
        MeasureExpr::Binary(op, l, r) => MeasureExpr::Binary(*op, Box::new(substitute(l, by)), Box::new(substitute(r, by))),
    }
}

/// The expression as text our grammar reads back to the same tree: every
/// operation parenthesised.
pub fn text(e: &MeasureExpr) -> String {
    match e {
        MeasureExpr::Column(c) => c.clone(),
        MeasureExpr::Number(n) => n.clone(),
        MeasureExpr::Neg(x) => format!("-({})", text(x)),
        MeasureExpr::Binary(op, l, r) => format!("({} {} {})", text(l), op.symbol(), text(r)),
    }
}

/// The metric's lines from `type:` on: `type: derived`, its expression
/// and leaves, and `periods: any_input` when a leaf is moved (MetricFlow
/// answers for every period where any input has rows).
pub fn derived_yaml(c: &Composite, expression: &str) -> String {
    let mut out = format!("type: derived\nexpression: {}\nmetrics:\n", crate::model::yaml_quoted(expression));
    for l in &c.leaves {
        let mut item = format!("{{name: {}", l.metric);
        if l.alias != l.metric {
            item.push_str(&format!(", alias: {}", l.alias));
        }
        if !l.filters.is_empty() {
            item.push_str(&format!(", filter: [{}]", l.filters.join(", ")));
        }
        if let Some(o) = &l.offset {
            item.push_str(&format!(", {o}"));
        }
        out.push_str(&format!("  - {item}}}\n"));
    }
    if c.leaves.iter().any(|l| l.offset.is_some()) {
        out.push_str("periods: any_input\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf(alias: &str, metric: &str) -> Input<'static> {
        Input { alias: alias.into(), read: Read::Simple(metric.into()), filters: Vec::new(), offset: None }
    }

    #[test]
    fn a_ratio_inside_a_derived_metric_is_inlined_with_its_filter() {
        let aov = ratio(leaf("numerator", "revenue"), leaf("denominator", "orders")).unwrap();
        let expr = MeasureExpr::parse("aov - median").unwrap();
        let us = Input { alias: "aov".into(), read: Read::Composite(&aov), filters: vec!["{column: c.country, op: eq, value: US}".into()], offset: None };
        let flat = flatten(&expr, vec![us, leaf("median", "median_discount")]).unwrap();
        assert_eq!(text(&flat.expr), "((aov__numerator / aov__denominator) - median)");
        assert_eq!(flat.leaves.iter().map(|l| (l.alias.as_str(), l.filters.len())).collect::<Vec<_>>(), [("aov__numerator", 1), ("aov__denominator", 1), ("median", 0)]);
        assert_eq!(MeasureExpr::parse(&text(&flat.expr)).unwrap(), flat.expr);
    }

    #[test]
    fn two_offsets_do_not_compose() {
        let moved = flatten(&MeasureExpr::parse("r").unwrap(), vec![Input { offset: Some("offset_window: 1 month".into()), ..leaf("r", "revenue") }]).unwrap();
        let outer = Input { alias: "x".into(), read: Read::Composite(&moved), filters: Vec::new(), offset: Some("offset_window: 1 week".into()) };
        assert!(flatten(&MeasureExpr::parse("x").unwrap(), vec![outer]).unwrap_err().contains("do not compose"));
    }
}
