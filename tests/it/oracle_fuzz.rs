//! Brute-force oracle: random schemas (1–6 entities joined as a tree with
//! every cardinality, NULL keys, orphans, duplicate keys on to-many sides),
//! random rows and random requests (every aggregation, group-bys through
//! every kind of hop, filters to-one, across to-many hops and on the very
//! entities grouped or bucketed by). The planner's SQL runs on DuckDB; an
//! evaluator written here from the definitions — never calling the planner
//! or sharing its code — computes the expected rows. They must agree.
//!
//! The evaluator's meaning, from `docs/grammar.md` ("Filters across
//! to-many joins") and DESIGN: the entities a group-by or the time bucket
//! needs are LEFT-joined row by row; a filter on any of them (or on an
//! entity reached from them over to-one joins) keeps the joined rows it
//! holds for; a filter on an entity reached over a to-many join that no
//! group-by or bucket needs keeps a joined row when at least one related
//! row exists and matches (one related row for all filters of that
//! branch). The kept rows are reduced to distinct (anchor row, keys) and
//! aggregated; a group with no row aggregates the empty set, so a count
//! is 0 and a sum NULL. The time dimension is the metric's own, the one
//! requested, or the only date column among the anchor's and those
//! reachable over declared to-one joins (several: an ambiguity error).
//!
//! Every metric type is drawn: simple, ratio, cumulative (all time, rolling,
//! grain-to-date), derived with an offset window or offset-to-grain,
//! conversion (with and without a window, rate or count) and non-additive
//! (last or first, with or without `per`); the grain is day, week, month,
//! quarter or year (month for the types that move or accumulate by months).
//!
//! `SCHEMABRAIN_FUZZ_CASES` sets the number of cases (default 1000). A
//! failing seed is kept by proptest in `tests/regressions/oracle_fuzz.txt`
//! and replayed first on every run; new cases run even when a kept one
//! fails, so a new failing seed is kept even when an old one hits the
//! same fault.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::path::PathBuf;

use chrono::Datelike;
use proptest::prelude::*;
use proptest::test_runner::{Config, FailurePersistence, FileFailurePersistence, PersistedSeed, TestRunner};
use serde_json::{json, Value as Json};

use schemabrain::engine::DuckDbEngine;
use schemabrain::envelope::Status;
use schemabrain::model::{load_project_from_files, FileKind};
use schemabrain::project::Project;
use schemabrain::tools::{self, Execution};

use crate::common::limits;

/// A tiny deterministic PRNG (splitmix64): a case is a pure function of its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E3779B97F4A7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58476D1CE4E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D049BB133111EB);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.next() % 100 < percent
    }
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum V {
    Null,
    Bool(bool),
    Int(i64),
    Text(String),
}

/// One table: `id` is unique (the identity); `cat` text; `val`, `grp` integers;
/// plus one foreign-key column per join whose key this table holds.
#[derive(Clone, Debug)]
struct Table {
    rows: Vec<BTreeMap<String, V>>,
}

#[derive(Clone, Debug)]
struct JoinDef {
    name: String,
    source: usize,
    target: usize,
    source_col: String,
    target_col: String,
    cardinality: Option<&'static str>,
}

#[derive(Clone, Debug)]
struct Case {
    tables: Vec<Table>,
    joins: Vec<JoinDef>,
    anchor: usize,
    agg: &'static str,
    group_by: Vec<(usize, String)>,
    filters: Vec<(usize, String, &'static str, Json)>,
    /// Ask for `r` = m (filtered to the anchor's `cat = 'a'`) / c (count of val) instead of `m`.
    ratio: bool,
    /// Bucket by `grain` of the anchor's DATE column `d`.
    time: bool,
    /// day, week, month, quarter or year; month for the types that move
    /// or accumulate by months.
    grain: &'static str,
    /// The metric type asked for (`x`), when not `m` or the ratio `r`.
    kind: Kind,
    /// The anchor has no identity (removed after loading: the grammar
    /// requires one, the library does not): a to-many join can then only
    /// be aggregated as joined, and the answer is degraded.
    no_identity: bool,
    /// Where the time dimension comes from when the request has a grain.
    time_mode: TimeMode,
    /// The ratio's numerator filter (`cat = 'a'` on some entity).
    ratio_filter: Filter,
}

type Filter = (usize, String, &'static str, Json);

/// How a bucketed request finds its time dimension.
#[derive(Clone, Debug, PartialEq)]
enum TimeMode {
    /// The metric declares its anchor's `d`.
    Own,
    /// The metric declares none: the anchor's `d` and the `d` of every
    /// entity reachable over declared to-one joins are the candidates.
    Inherit,
    /// The metric declares none; the request names `e<k>.d`.
    Requested(usize),
}

/// The other metric types; each is defined as `x` over `m` (or `c`).
#[derive(Clone, Debug, PartialEq)]
enum Kind {
    Plain,
    /// `window` in months (rolling), or `to_date` (quarter to date), or all time.
    Cumulative { window: Option<u32>, quarter_to_date: bool },
    /// `x = m + p`, `p` = `m` moved `months` later.
    Offset { months: u32 },
    /// `x = p` alone: `p` = `m` moved `months` later, answered on its moved
    /// buckets up to the last bucket of `m` (none past the data).
    OffsetOnly { months: u32 },
    /// `x = m - q`, `q` = `m` of the first month of the quarter.
    QuarterStart,
    /// Base rows of the anchor converting to rows of `target` with equal
    /// `key` column, within `days` (or any time after); `rate` or count;
    /// optionally only target rows with `val > 3`.
    Conversion { target: usize, key: &'static str, days: Option<u32>, rate: bool, filtered: bool },
    /// `m` keeps only rows at the last (or first) `d` per month (and per `grp`).
    NonAdditive { last: bool, per: bool },
}

impl Kind {
    fn needs_grain(&self) -> bool {
        matches!(self, Kind::Cumulative { .. } | Kind::Offset { .. } | Kind::OffsetOnly { .. } | Kind::QuarterStart)
    }
    /// Whether `m` and `c` carry the anchor's time dimension.
    fn needs_time_dimension(&self) -> bool {
        *self != Kind::Plain
    }
}

const CATS: [&str; 3] = ["a", "b", "c"];

fn generate(seed: u64) -> Case {
    let mut r = Rng(seed);
    let n = 1 + r.below(6);
    let mut tables: Vec<Table> = (0..n)
        .map(|_| {
            let rows = r.below(7);
            Table {
                rows: (1..=rows as i64)
                    .map(|id| {
                        let mut row = BTreeMap::new();
                        row.insert("id".to_string(), V::Int(id));
                        let cat = if r.chance(15) { V::Null } else { V::Text(CATS[r.below(3)].to_string()) };
                        row.insert("cat".to_string(), cat);
                        let val = if r.chance(15) { V::Null } else { V::Int(r.below(25) as i64 - 5) };
                        row.insert("val".to_string(), val);
                        row.insert("grp".to_string(), if r.chance(10) { V::Null } else { V::Int(r.below(3) as i64) });
                        row
                    })
                    .collect(),
            }
        })
        .collect();
    let mut joins = Vec::new();
    for i in 1..n {
        let p = r.below(i);
        let name = format!("j{i}");
        // Truthful cardinalities: a declared to-one side has unique keys.
        let (source, target, source_col, target_col, cardinality): (usize, usize, String, String, Option<&str>) =
            match r.below(6) {
                0 => (i, p, format!("fk{i}"), "id".into(), Some("many_to_one")), // child holds the key
                1 => (p, i, format!("fk{i}"), "id".into(), Some("many_to_one")), // parent holds the key
                2 => (p, i, "id".into(), format!("fk{i}"), Some("one_to_many")), // same as 0, declared from the parent
                3 => (i, p, "grp".into(), "grp".into(), Some("many_to_many")),
                4 => (p, i, "grp".into(), "grp".into(), None), // undeclared: worst case
                _ => (i, p, format!("fk{i}"), "id".into(), Some("one_to_one")),
            };
        // Fill the key column: the table holding `fk{i}` points at the other's ids.
        let (holder, other) = if source_col.starts_with("fk") { (source, target) } else if target_col.starts_with("fk") { (target, source) } else { (usize::MAX, 0) };
        if holder != usize::MAX {
            let other_rows = tables[other].rows.len() as i64;
            let unique = cardinality == Some("one_to_one");
            let mut free: Vec<i64> = (1..=other_rows + 1).collect();
            for row in &mut tables[holder].rows {
                let v = if r.chance(12) {
                    V::Null
                } else if unique {
                    if free.is_empty() { V::Null } else { V::Int(free.remove(r.below(free.len()))) }
                } else {
                    V::Int(r.below((other_rows + 2) as usize) as i64) // 0 and rows+1 are orphans
                };
                row.insert(format!("fk{i}"), v);
            }
        }
        joins.push(JoinDef { name, source, target, source_col, target_col, cardinality });
    }
    let anchor = r.below(n);
    let agg = ["sum", "count", "count_distinct", "avg", "min", "max", "median", "percentile"][r.below(8)];
    let col = |r: &mut Rng| ["cat", "val", "grp"][r.below(3)].to_string();
    let mut group_by = Vec::new();
    for _ in 0..r.below(3) {
        let g = (r.below(n), col(&mut r));
        if !group_by.contains(&g) {
            group_by.push(g);
        }
    }
    let mut filters = Vec::new();
    for _ in 0..r.below(3) {
        let e = r.below(n);
        let c = if r.chance(50) { "cat".to_string() } else { "val".to_string() };
        let text = c == "cat";
        let scalar = |r: &mut Rng| if text { json!(CATS[r.below(3)]) } else { json!(r.below(25) as i64 - 5) };
        let (op, value) = match r.below(6) {
            0 => ("eq", scalar(&mut r)),
            1 => ("ne", scalar(&mut r)),
            2 if !text => ("gt", scalar(&mut r)),
            2 => ("lt", scalar(&mut r)),
            3 => ("in", json!([scalar(&mut r), scalar(&mut r)])),
            4 => ("is_null", Json::Null),
            _ => ("not_null", Json::Null),
        };
        filters.push((e, c, op, value));
    }
    let ratio = r.chance(30);
    // Dates and the grain come from a second stream, so the draws above stay
    // what they were for a seed.
    let mut dr = Rng(seed ^ 0x5EED_DA7E);
    for table in &mut tables {
        for row in &mut table.rows {
            let d = if dr.chance(10) {
                V::Null
            } else {
                // Every tenth day: equal dates and exact 30- and 90-day gaps are common,
                // so window boundaries and ties are exercised.
                let day = 10 * dr.below(40) as i64;
                let date = chrono::NaiveDate::from_ymd_opt(2024, 1, 1).unwrap() + chrono::Duration::days(day);
                V::Text(date.format("%Y-%m-%d").to_string())
            };
            row.insert("d".to_string(), d);
        }
    }
    let mut time = dr.chance(35);
    // The metric type comes from a third stream, for the same reason.
    let mut kr = Rng(seed ^ 0x0071_950F_3E7A);
    let kind = match kr.below(10) {
        0 => Kind::Cumulative {
            window: kr.chance(50).then(|| 1 + kr.below(3) as u32),
            quarter_to_date: kr.chance(30),
        },
        1 => Kind::Offset { months: [1, 2, 3][kr.below(3)] },
        2 => Kind::QuarterStart,
        3 => Kind::Conversion {
            target: kr.below(n),
            key: ["grp", "cat"][kr.below(2)],
            days: kr.chance(60).then(|| [30, 90][kr.below(2)]),
            rate: kr.chance(60),
            filtered: kr.chance(40),
        },
        4 => Kind::NonAdditive { last: kr.chance(70), per: kr.chance(50) },
        5 => Kind::OffsetOnly { months: [1, 2, 3][kr.below(3)] },
        _ => Kind::Plain,
    };
    let kind = match kind {
        Kind::Cumulative { window: Some(_), quarter_to_date: true } => Kind::Cumulative { window: None, quarter_to_date: true },
        k => k,
    };
    if kind.needs_grain() {
        time = true;
    }
    let ratio = ratio && kind == Kind::Plain;
    let no_identity = kind == Kind::Plain && kr.chance(15);
    let grain = if kind.needs_grain() { "month" } else { ["day", "week", "month", "quarter", "year"][kr.below(5)] };
    // A fourth stream: where the time dimension comes from, filters moved
    // onto the entities grouped or bucketed by, sum_boolean, the ratio's filter.
    let mut xr = Rng(seed ^ 0x0F17_E5EE_D000);
    let time_mode = if time && kind == Kind::Plain {
        match xr.below(3) {
            0 => TimeMode::Own,
            1 => TimeMode::Inherit,
            _ => TimeMode::Requested(xr.below(n)),
        }
    } else {
        TimeMode::Own
    };
    let mut keyed: Vec<usize> = group_by.iter().map(|g| g.0).collect();
    if let TimeMode::Requested(k) = time_mode {
        keyed.push(k);
    }
    for f in &mut filters {
        if !keyed.is_empty() && xr.chance(45) {
            f.0 = keyed[xr.below(keyed.len())];
        }
    }
    let agg = if kind == Kind::Plain && xr.chance(10) { "sum_boolean" } else { agg };
    for table in &mut tables {
        for row in &mut table.rows {
            row.insert("flag".to_string(), if xr.chance(15) { V::Null } else { V::Bool(xr.chance(50)) });
        }
    }
    let ratio_filter: Filter = (if xr.chance(50) { anchor } else { xr.below(n) }, "cat".to_string(), "eq", json!("a"));
    Case { tables, joins, anchor, agg, group_by, filters, ratio, time, grain, kind, no_identity, time_mode, ratio_filter }
}

fn fk_columns(case: &Case, t: usize) -> Vec<String> {
    let mut v: Vec<String> = case.tables[t].rows.first().map(|r| r.keys().filter(|k| k.starts_with("fk")).cloned().collect()).unwrap_or_default();
    // Empty tables still need their key columns: derive them from the joins.
    for j in &case.joins {
        for (side, col) in [(j.source, &j.source_col), (j.target, &j.target_col)] {
            if side == t && col.starts_with("fk") && !v.contains(col) {
                v.push(col.clone());
            }
        }
    }
    v
}

fn model_files(case: &Case) -> Vec<(FileKind, PathBuf, String)> {
    let mut files = Vec::new();
    for t in 0..case.tables.len() {
        let mut cols = vec!["{name: id, type: integer}".to_string(), "{name: cat, type: varchar}".into(), "{name: val, type: integer}".into(), "{name: grp, type: integer}".into(), "{name: d, type: date}".into(), "{name: flag, type: boolean}".into()];
        cols.extend(fk_columns(case, t).iter().map(|c| format!("{{name: {c}, type: integer}}")));
        files.push((
            FileKind::Entity,
            PathBuf::from(format!("entities/e{t}.yaml")),
            format!("version: 1\nname: e{t}\nbinding: {{single_table: main.t{t}}}\nidentity: id\ncolumns: [{}]\n", cols.join(", ")),
        ));
    }
    for j in &case.joins {
        let card = j.cardinality.map(|c| format!("cardinality: {c}\n")).unwrap_or_default();
        files.push((
            FileKind::Join,
            PathBuf::from(format!("joins/{}.yaml", j.name)),
            format!(
                "version: 1\nname: {}\nsource_entity: e{}\ntarget_entity: e{}\n\"on\": [{{source: {}, target: {}}}]\n{card}",
                j.name, j.source, j.target, j.source_col, j.target_col
            ),
        ));
    }
    let non_additive = match case.kind {
        Kind::NonAdditive { last, per } => format!(
            "non_additive: {{dimension: e{a}.d, window: {}{}}}\n",
            if last { "last" } else { "first" },
            if per { format!(", per: [e{}.grp]", case.anchor) } else { String::new() },
            a = case.anchor
        ),
        _ => String::new(),
    };
    files.push((
        FileKind::Metric,
        PathBuf::from("metrics/m.yaml"),
        format!(
            "version: 1\nname: m\nentity: e{}\nmeasure: {{agg: {}, column: {}{}}}\n{}{non_additive}",
            case.anchor,
            case.agg,
            measure_column(case),
            if case.agg == "percentile" { ", percentile: 0.9" } else { "" },
            time_lines(case)
        ),
    ));
    if let Some(x) = x_metric(case) {
        files.push((FileKind::Metric, PathBuf::from("metrics/x.yaml"), x));
    }
    if let Kind::Conversion { target, filtered, .. } = case.kind {
        let filter = if filtered { format!("filter: [{{column: e{target}.val, op: gt, value: 3}}]\n") } else { String::new() };
        files.push((
            FileKind::Metric,
            PathBuf::from("metrics/cv.yaml"),
            format!(
                "version: 1\nname: cv\nentity: e{target}\nmeasure: {{agg: count, column: val}}\ntime_dimension: e{target}.d\ntime_grains: [{}]\n{filter}",
                case.grain
            ),
        ));
    }
    files.push((
        FileKind::Metric,
        PathBuf::from("metrics/c.yaml"),
        format!("version: 1\nname: c\nentity: e{}\nmeasure: {{agg: count, column: val}}\n{}", case.anchor, time_lines(case)),
    ));
    files.push((
        FileKind::Metric,
        PathBuf::from("metrics/r.yaml"),
        format!(
            "version: 1\nname: r\ntype: ratio\nnumerator: {{metric: m, filter: [{{column: e{}.cat, op: eq, value: a}}]}}\ndenominator: c\n",
            case.ratio_filter.0
        ),
    ));
    files
}

/// The definition of `x`, the metric asked for when the case is of another type.
fn x_metric(case: &Case) -> Option<String> {
    let head = "version: 1\nname: x\n";
    Some(match case.kind {
        Kind::Plain => return None,
        Kind::NonAdditive { .. } => return None,
        Kind::Cumulative { window, quarter_to_date } => {
            let w = match (window, quarter_to_date) {
                (Some(m), _) => format!("window: {m} months\n"),
                (None, true) => "grain_to_date: quarter\n".into(),
                (None, false) => String::new(),
            };
            format!("{head}type: cumulative\nmetric: m\n{w}")
        }
        Kind::Offset { months } => {
            let w = if months == 3 { "1 quarter".to_string() } else { format!("{months} months") };
            format!("{head}type: derived\nexpression: m + p\nmetrics:\n  - {{name: m}}\n  - {{name: m, alias: p, offset_window: {w}}}\n")
        }
        Kind::OffsetOnly { months } => {
            let w = if months == 3 { "1 quarter".to_string() } else { format!("{months} months") };
            format!("{head}type: derived\nexpression: p\nmetrics:\n  - {{name: m, alias: p, offset_window: {w}}}\n")
        }
        Kind::QuarterStart => format!(
            "{head}type: derived\nexpression: m - q\nmetrics:\n  - {{name: m}}\n  - {{name: m, alias: q, offset_to_grain: quarter}}\n"
        ),
        Kind::Conversion { key, days, rate, .. } => {
            let w = days.map(|d| format!("window: {d} days\n")).unwrap_or_default();
            let calc = if rate { "conversion_rate" } else { "conversions" };
            format!(
                "{head}type: conversion\nbase: c\nconversion: cv\nentity: {{base: {key}, conversion: {key}}}\n{w}calculation: {calc}\n"
            )
        }
    })
}

/// The column `m` aggregates.
fn measure_column(case: &Case) -> &'static str {
    if case.agg == "sum_boolean" { "flag" } else { "val" }
}

fn time_lines(case: &Case) -> String {
    if (case.time && case.time_mode == TimeMode::Own) || case.kind.needs_time_dimension() {
        format!("time_dimension: e{}.d\ntime_grains: [{}]\n", case.anchor, case.grain)
    } else {
        String::new()
    }
}

fn sql_literal(v: &V) -> String {
    match v {
        V::Null => "NULL".into(),
        V::Bool(b) => b.to_string(),
        V::Int(i) => i.to_string(),
        V::Text(s) => format!("'{s}'"),
    }
}

fn warehouse_sql(case: &Case) -> String {
    let mut sql = String::new();
    for (t, table) in case.tables.iter().enumerate() {
        let fks = fk_columns(case, t);
        let mut cols = vec!["id INTEGER".to_string(), "cat VARCHAR".into(), "val INTEGER".into(), "grp INTEGER".into(), "d DATE".into(), "flag BOOLEAN".into()];
        cols.extend(fks.iter().map(|c| format!("{c} INTEGER")));
        sql.push_str(&format!("CREATE TABLE main.t{t} ({});\n", cols.join(", ")));
        for row in &table.rows {
            let mut vals = vec![sql_literal(&row["id"]), sql_literal(&row["cat"]), sql_literal(&row["val"]), sql_literal(&row["grp"]), sql_literal(&row["d"]), sql_literal(&row["flag"])];
            vals.extend(fks.iter().map(|c| sql_literal(row.get(c).unwrap_or(&V::Null))));
            sql.push_str(&format!("INSERT INTO main.t{t} VALUES ({});\n", vals.join(", ")));
        }
    }
    sql
}

// ---- The evaluator: the definitions' meaning, computed row by row. ----

/// One hop walked from `from` to `to`: the from-side column, the to-side
/// column, and whether it can repeat the from-side row.
#[derive(Clone, Debug)]
struct Hop {
    from: usize,
    to: usize,
    from_col: String,
    to_col: String,
    fans_out: bool,
    /// Declared to-one in the walking direction (many_to_one or one_to_one).
    declared_to_one: bool,
}

/// The unique path (the joins form a tree) from the anchor to every entity.
fn paths(case: &Case) -> BTreeMap<usize, Vec<Hop>> {
    let mut out = BTreeMap::from([(case.anchor, Vec::new())]);
    let mut frontier = vec![case.anchor];
    while let Some(e) = frontier.pop() {
        for j in &case.joins {
            // The cardinality seen walking source → target, or its reverse.
            let (to, from_col, to_col, seen) = if j.source == e {
                (j.target, &j.source_col, &j.target_col, j.cardinality)
            } else if j.target == e {
                let reversed = j.cardinality.map(|c| match c {
                    "one_to_many" => "many_to_one",
                    "many_to_one" => "one_to_many",
                    other => other,
                });
                (j.source, &j.target_col, &j.source_col, reversed)
            } else {
                continue;
            };
            if out.contains_key(&to) {
                continue;
            }
            let hop = Hop {
                from: e,
                to,
                from_col: from_col.clone(),
                to_col: to_col.clone(),
                fans_out: matches!(seen, Some("one_to_many" | "many_to_many") | None),
                declared_to_one: matches!(seen, Some("many_to_one" | "one_to_one")),
            };
            let mut p = out[&e].clone();
            p.push(hop);
            out.insert(to, p);
            frontier.push(to);
        }
    }
    out
}

type Assignment = BTreeMap<usize, Option<usize>>;

/// Walks `hops` from the rows already assigned: LEFT (an unmatched hop
/// assigns None) or INNER (an unmatched hop drops the assignment).
fn extend(case: &Case, start: Vec<Assignment>, hops: &[Hop], left: bool) -> Vec<Assignment> {
    let mut current = start;
    for h in hops {
        let mut next = Vec::new();
        for a in current {
            if a.contains_key(&h.to) {
                next.push(a);
                continue;
            }
            let key = a.get(&h.from).copied().flatten().map(|i| case.tables[h.from].rows[i][&h.from_col].clone());
            let matches: Vec<usize> = match key {
                Some(k) if k != V::Null => (0..case.tables[h.to].rows.len()).filter(|&i| case.tables[h.to].rows[i].get(&h.to_col) == Some(&k)).collect(),
                _ => Vec::new(),
            };
            if matches.is_empty() {
                if left {
                    let mut b = a.clone();
                    b.insert(h.to, None);
                    next.push(b);
                }
            } else {
                for m in matches {
                    let mut b = a.clone();
                    b.insert(h.to, Some(m));
                    next.push(b);
                }
            }
        }
        current = next;
    }
    current
}

fn value(case: &Case, a: &Assignment, e: usize, col: &str) -> V {
    a.get(&e).copied().flatten().map_or(V::Null, |i| case.tables[e].rows[i].get(col).cloned().unwrap_or(V::Null))
}

fn json_v(j: &Json) -> V {
    match j {
        Json::String(s) => V::Text(s.clone()),
        Json::Number(n) => V::Int(n.as_i64().unwrap()),
        _ => V::Null,
    }
}

/// SQL's three-valued comparisons collapsed to "kept or not".
fn holds(v: &V, op: &str, arg: &Json) -> bool {
    match op {
        "is_null" => *v == V::Null,
        "not_null" => *v != V::Null,
        _ if *v == V::Null => false,
        "eq" => *v == json_v(arg),
        "ne" => *v != json_v(arg),
        "gt" => *v > json_v(arg),
        "lt" => *v < json_v(arg),
        "in" => arg.as_array().unwrap().iter().any(|x| *v == json_v(x)),
        other => panic!("op {other}"),
    }
}

fn as_f64(v: &V) -> Option<f64> {
    match v {
        V::Int(i) => Some(*i as f64),
        V::Text(t) if t.starts_with("avg:") => {
            let (s, n) = t[4..].split_once('/').unwrap();
            Some(s.parse::<f64>().unwrap() / n.parse::<f64>().unwrap())
        }
        V::Text(t) if t.starts_with("num:") => t[4..].parse().ok(),
        _ => None,
    }
}

/// The entity whose `d` buckets the rows, or why the request must fail.
fn time_entity(case: &Case) -> Result<Option<usize>, &'static str> {
    if !case.time {
        return Ok(None);
    }
    match case.time_mode {
        TimeMode::Own => Ok(Some(case.anchor)),
        TimeMode::Requested(k) => Ok(Some(k)),
        TimeMode::Inherit => {
            // The anchor's own `d`, and the `d` of every entity whose whole
            // path is declared to-one.
            let candidates = paths(case).values().filter(|p| p.iter().all(|h| h.declared_to_one)).count();
            if candidates == 1 {
                Ok(Some(case.anchor))
            } else {
                Err("ambiguous_time_dimension")
            }
        }
    }
}

/// The expected rows (the metric, the ratio of its filtered self to the
/// count, or `x` of the case's kind), or the error kind the request must get.
fn evaluate(case: &Case) -> Result<Vec<Vec<V>>, &'static str> {
    let time = time_entity(case)?;
    let row = |mut k: Vec<V>, v: V| {
        k.push(v);
        k
    };
    let m_col = measure_column(case);
    // The value of `m` in a group: the aggregate of its rows, or of none.
    let m_at = |m: &BTreeMap<Vec<V>, Vec<V>>, k: &Vec<V>| aggregate(case.agg, m.get(k).map_or(&[][..], Vec::as_slice));
    Ok(match &case.kind {
        Kind::Plain if case.ratio => {
            let num = group_rows(case, time, std::slice::from_ref(&case.ratio_filter), true, m_col);
            let den = group_rows(case, time, &[], false, "val");
            let keys: BTreeSet<&Vec<V>> = num.keys().chain(den.keys()).collect();
            keys.into_iter()
                .map(|k| {
                    let n = as_f64(&m_at(&num, k));
                    let d = as_f64(&aggregate("count", den.get(k).map_or(&[][..], Vec::as_slice))).filter(|d| *d != 0.0);
                    row(k.clone(), numeric(n.zip(d).map(|(n, d)| n / d)))
                })
                .collect()
        }
        Kind::Plain | Kind::NonAdditive { .. } => {
            group_rows(case, time, &[], true, m_col).into_iter().map(|(k, vals)| row(k, aggregate(case.agg, &vals))).collect()
        }
        Kind::Offset { months } => {
            let m = group_rows(case, time, &[], true, m_col);
            m.keys()
                .map(|k| {
                    // p at bucket b is m at b - months (a NULL bucket stays NULL).
                    let mut earlier = k.clone();
                    earlier[0] = shift_month(&k[0], -(*months as i32));
                    let sum = as_f64(&m_at(&m, k)).zip(as_f64(&m_at(&m, &earlier))).map(|(a, b)| a + b);
                    row(k.clone(), numeric(sum))
                })
                .collect()
        }
        Kind::OffsetOnly { months } => {
            // The buckets of `m` moved later, none past the last bucket of
            // `m` itself (the end of the data); the NULL bucket stays NULL.
            let m = group_rows(case, time, &[], true, m_col);
            let end = m.keys().filter_map(|k| date(&k[0])).max();
            m.iter()
                .filter_map(|(k, vals)| {
                    let mut later = k.clone();
                    later[0] = shift_month(&k[0], *months as i32);
                    let kept = date(&later[0]).is_none_or(|d| end.is_some_and(|e| d <= e));
                    kept.then(|| row(later, aggregate(case.agg, vals)))
                })
                .collect()
        }
        Kind::QuarterStart => {
            let m = group_rows(case, time, &[], true, m_col);
            m.keys()
                .map(|k| {
                    // A NULL bucket has no quarter: its `q` aggregates no rows.
                    let q = if k[0] == V::Null {
                        aggregate(case.agg, &[])
                    } else {
                        let mut start = k.clone();
                        start[0] = quarter_start(&k[0]);
                        m_at(&m, &start)
                    };
                    row(k.clone(), numeric(as_f64(&m_at(&m, k)).zip(as_f64(&q)).map(|(a, b)| a - b)))
                })
                .collect()
        }
        Kind::Cumulative { window, quarter_to_date } => evaluate_cumulative(case, *window, *quarter_to_date),
        Kind::Conversion { target, key, days, rate, filtered } => {
            let base = contributions(case, time, &[]);
            let a = case.anchor;
            let converts = |r: usize| -> bool {
                let (Some(k), Some(d)) = (non_null(&case.tables[a].rows[r][*key]), date(&case.tables[a].rows[r]["d"])) else {
                    return false;
                };
                case.tables[*target].rows.iter().any(|c| {
                    let Some(cd) = date(&c["d"]) else { return false };
                    c[*key] == *k
                        && cd >= d
                        && days.is_none_or(|n| cd <= d + chrono::Duration::days(i64::from(n)))
                        && (!filtered || matches!(c["val"], V::Int(v) if v > 3))
                })
            };
            let mut groups: BTreeMap<Vec<V>, (BTreeSet<usize>, BTreeSet<usize>)> = BTreeMap::new();
            for (r, k) in &base {
                let entry = groups.entry(k.clone()).or_default();
                entry.0.insert(*r);
                if converts(*r) {
                    entry.1.insert(*r);
                }
            }
            if case.group_by.is_empty() && !case.time && groups.is_empty() {
                groups.insert(Vec::new(), Default::default());
            }
            groups
                .into_iter()
                .map(|(k, (all, converted))| {
                    let v = if !*rate {
                        V::Int(converted.len() as i64)
                    } else if all.is_empty() {
                        V::Null
                    } else {
                        V::Text(format!("num:{}", converted.len() as f64 / all.len() as f64))
                    };
                    row(k, v)
                })
                .collect()
        }
    })
}

fn non_null(v: &V) -> Option<&V> {
    (*v != V::Null).then_some(v)
}

fn date(v: &V) -> Option<chrono::NaiveDate> {
    match v {
        V::Text(s) => chrono::NaiveDate::parse_from_str(s, "%Y-%m-%d").ok(),
        _ => None,
    }
}

fn month_start(d: chrono::NaiveDate) -> chrono::NaiveDate {
    d.with_day(1).unwrap()
}

fn date_v(d: chrono::NaiveDate) -> V {
    V::Text(d.format("%Y-%m-%d").to_string())
}

/// A month bucket moved by `months` (either way).
fn shift_month(v: &V, months: i32) -> V {
    date(v).map_or(V::Null, |d| {
        let moved = if months >= 0 {
            d.checked_add_months(chrono::Months::new(months as u32))
        } else {
            d.checked_sub_months(chrono::Months::new((-months) as u32))
        };
        date_v(moved.unwrap())
    })
}

fn quarter_start(v: &V) -> V {
    date(v).map_or(V::Null, |d| date_v(chrono::NaiveDate::from_ymd_opt(d.year(), (d.month0() / 3) * 3 + 1, 1).unwrap()))
}

/// The bucket of a date at the case's grain: its first day (a week starts
/// on Monday), still a DATE.
fn bucket(case: &Case, v: &V) -> V {
    date(v).map_or(V::Null, |d| {
        date_v(match case.grain {
            "day" => d,
            "week" => d - chrono::Duration::days(i64::from(d.weekday().num_days_from_monday())),
            "month" => month_start(d),
            "quarter" => chrono::NaiveDate::from_ymd_opt(d.year(), (d.month0() / 3) * 3 + 1, 1).unwrap(),
            "year" => chrono::NaiveDate::from_ymd_opt(d.year(), 1, 1).unwrap(),
            other => panic!("grain {other}"),
        })
    })
}

fn numeric(x: Option<f64>) -> V {
    x.map_or(V::Null, |x| V::Text(format!("num:{x}")))
}

/// Every bucket of a spine from the first row's month to the last's; a
/// bucket's value aggregates the rows whose date lies in its window.
fn evaluate_cumulative(case: &Case, window: Option<u32>, quarter_to_date: bool) -> Vec<Vec<V>> {
    // Bucketed by the anchor's own date: the key's first value is its month.
    let rows = contributions(case, Some(case.anchor), &[]);
    let a = case.anchor;
    let dated: Vec<(chrono::NaiveDate, &[V], &V)> = rows
        .iter()
        .filter_map(|(r, k)| date(&case.tables[a].rows[*r]["d"]).map(|d| (d, &k[1..], &case.tables[a].rows[*r]["val"])))
        .collect();
    let (Some(first), Some(last)) = (dated.iter().map(|x| x.0).min(), dated.iter().map(|x| x.0).max()) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut b = month_start(first);
    while b <= last {
        let end = b.checked_add_months(chrono::Months::new(1)).unwrap();
        let start = match (window, quarter_to_date) {
            (Some(m), _) => Some(end.checked_sub_months(chrono::Months::new(m)).unwrap()),
            (None, true) => Some(chrono::NaiveDate::from_ymd_opt(b.year(), (b.month0() / 3) * 3 + 1, 1).unwrap()),
            (None, false) => None,
        };
        let mut groups: BTreeMap<&[V], Vec<V>> = BTreeMap::new();
        for (d, g, v) in &dated {
            if *d < end && start.is_none_or(|s| *d >= s) {
                groups.entry(g).or_default().push((*v).clone());
            }
        }
        for (g, vals) in groups {
            let mut k = vec![date_v(b)];
            k.extend(g.iter().cloned());
            k.push(aggregate(case.agg, &vals));
            out.push(k);
        }
        b = end;
    }
    out
}

/// Which rows a request reads: the joins its keys need, and its filters.
struct Walk {
    /// LEFT-joined from the anchor, parents first: every entity a group-by
    /// or the time bucket needs, and the to-one way to the others.
    main: Vec<Hop>,
    /// Filters each joined row must pass.
    main_filters: Vec<Filter>,
    /// Filters on entities past a to-many join no key needs: a joined row
    /// is kept when one related row (walked INNER) passes all of a branch's.
    branches: Vec<(Vec<Hop>, Vec<Filter>)>,
}

fn walk(case: &Case, time: Option<usize>, filters: &[Filter]) -> Walk {
    let paths = paths(case);
    let depth = |h: &Hop| paths[&h.to].len();
    let mut main: Vec<Hop> = Vec::new();
    let push = |hops: &[Hop], into: &mut Vec<Hop>| {
        for h in hops {
            if !into.iter().any(|x| x.to == h.to) {
                into.push(h.clone());
            }
        }
    };
    for e in case.group_by.iter().map(|g| g.0).chain(time) {
        push(&paths[&e], &mut main);
    }
    let keyed: BTreeSet<usize> = main.iter().map(|h| h.to).collect();
    let mut main_filters = Vec::new();
    let mut branches: Vec<((usize, usize), Vec<Hop>, Vec<Filter>)> = Vec::new();
    for f in filters {
        let p = &paths[&f.0];
        match p.iter().position(|h| h.fans_out && !keyed.contains(&h.to)) {
            None => {
                push(p, &mut main);
                main_filters.push(f.clone());
            }
            Some(k) => {
                push(&p[..k], &mut main);
                let key = (p[k].from, p[k].to);
                match branches.iter_mut().find(|b| b.0 == key) {
                    Some(b) => {
                        push(&p[k..], &mut b.1);
                        b.2.push(f.clone());
                    }
                    None => branches.push((key, p[k..].to_vec(), vec![f.clone()])),
                }
            }
        }
    }
    main.sort_by_key(depth);
    Walk {
        main,
        main_filters,
        branches: branches
            .into_iter()
            .map(|(_, mut hops, fs)| {
                hops.sort_by_key(depth);
                (hops, fs)
            })
            .collect(),
    }
}

/// Each kept anchor row with its keys (time bucket first, then group-bys):
/// one entry per distinct (row, keys) when the anchor has an identity;
/// without one, one entry per joined row (the fan-out stays).
fn contributions(case: &Case, time: Option<usize>, extra: &[Filter]) -> Vec<(usize, Vec<V>)> {
    let filters: Vec<Filter> = case.filters.iter().cloned().chain(extra.iter().cloned()).collect();
    let w = walk(case, time, &filters);
    let a = case.anchor;
    let passes = |x: &Assignment, fs: &[Filter]| fs.iter().all(|(e, c, op, v)| holds(&value(case, x, *e, c), op, v));
    let mut out: Vec<(usize, Vec<V>)> = Vec::new();
    for r in 0..case.tables[a].rows.len() {
        for x in extend(case, vec![BTreeMap::from([(a, Some(r))])], &w.main, true) {
            if !passes(&x, &w.main_filters) {
                continue;
            }
            if !w.branches.iter().all(|(hops, fs)| extend(case, vec![x.clone()], hops, false).iter().any(|y| passes(y, fs))) {
                continue;
            }
            let mut key: Vec<V> = time.iter().map(|&t| bucket(case, &value(case, &x, t, "d"))).collect();
            key.extend(case.group_by.iter().map(|(e, c)| value(case, &x, *e, c)));
            out.push((r, key));
        }
    }
    if !case.no_identity {
        out.sort();
        out.dedup();
    }
    out
}

fn aggregate(agg: &str, vals: &[V]) -> V {
    let nums: Vec<i64> = vals.iter().filter_map(|v| if let V::Int(i) = v { Some(*i) } else { None }).collect();
    match agg {
        "sum" => nums.iter().copied().reduce(|x, y| x + y).map_or(V::Null, V::Int),
        "count" => V::Int(nums.len() as i64),
        "count_distinct" => V::Int(nums.iter().collect::<BTreeSet<_>>().len() as i64),
        "sum_boolean" => V::Int(vals.iter().filter(|v| **v == V::Bool(true)).count() as i64),
        "min" => nums.iter().min().map_or(V::Null, |m| V::Int(*m)),
        "max" => nums.iter().max().map_or(V::Null, |m| V::Int(*m)),
        // avg as an exact fraction, compared with a tolerance later
        "avg" if nums.is_empty() => V::Null,
        "avg" => V::Text(format!("avg:{}/{}", nums.iter().sum::<i64>(), nums.len())),
        "median" => continuous_percentile(&nums, 0.5),
        "percentile" => continuous_percentile(&nums, 0.9),
        other => panic!("agg {other}"),
    }
}

/// The continuous percentile: linear interpolation between the two closest
/// ranks, at position `p * (n - 1)` of the sorted values.
fn continuous_percentile(nums: &[i64], p: f64) -> V {
    let mut sorted = nums.to_vec();
    sorted.sort_unstable();
    if sorted.is_empty() {
        return V::Null;
    }
    let pos = p * (sorted.len() - 1) as f64;
    let (lo, hi) = (pos.floor() as usize, pos.ceil() as usize);
    let x = sorted[lo] as f64 + (sorted[hi] - sorted[lo]) as f64 * (pos - lo as f64);
    V::Text(format!("num:{x}"))
}

/// The rows of one simple metric over the anchor's `col`, with the case's
/// filters plus `extra`: group key → the values to aggregate. `as_m`: this
/// is `m`, so a non-additive case keeps only the rows at the window's last
/// (or first) date.
fn group_rows(case: &Case, time: Option<usize>, extra: &[Filter], as_m: bool, col: &str) -> BTreeMap<Vec<V>, Vec<V>> {
    let a = case.anchor;
    let mut rows = contributions(case, time, extra);
    if let (Kind::NonAdditive { last, per }, true) = (&case.kind, as_m) {
        // The partition: the bucket (when bucketed, by the anchor's own `d`) and `grp` (with `per`).
        let partition = |r: usize| -> (V, V) {
            (
                if case.time { bucket(case, &case.tables[a].rows[r]["d"]) } else { V::Null },
                if *per { case.tables[a].rows[r]["grp"].clone() } else { V::Null },
            )
        };
        let mut pick: BTreeMap<(V, V), chrono::NaiveDate> = BTreeMap::new();
        for (r, _) in &rows {
            if let Some(d) = date(&case.tables[a].rows[*r]["d"]) {
                let e = pick.entry(partition(*r)).or_insert(d);
                *e = if *last { (*e).max(d) } else { (*e).min(d) };
            }
        }
        rows.retain(|(r, _)| date(&case.tables[a].rows[*r]["d"]).is_some_and(|d| pick.get(&partition(*r)) == Some(&d)));
    }
    let mut groups: BTreeMap<Vec<V>, Vec<V>> = BTreeMap::new();
    for (r, key) in rows {
        groups.entry(key).or_default().push(case.tables[a].rows[r][col].clone());
    }
    // Ungrouped: one row even with no input rows.
    if case.group_by.is_empty() && !case.time && groups.is_empty() {
        groups.insert(Vec::new(), Vec::new());
    }
    groups
}


fn from_json(j: &Json) -> V {
    match j {
        Json::Null => V::Null,
        Json::Bool(b) => V::Bool(*b),
        Json::Number(n) if n.is_i64() => V::Int(n.as_i64().unwrap()),
        Json::Number(n) => V::Text(format!("float:{}", n.as_f64().unwrap())),
        Json::String(s) => V::Text(s.clone()),
        other => V::Text(other.to_string()),
    }
}

fn same(expected: &V, got: &V) -> bool {
    match (expected, got) {
        (V::Text(e), V::Text(g)) if e.starts_with("avg:") => {
            let (s, n) = e[4..].split_once('/').unwrap();
            let want = s.parse::<f64>().unwrap() / n.parse::<f64>().unwrap();
            let have = g.strip_prefix("float:").and_then(|x| x.parse::<f64>().ok());
            have.is_some_and(|h| (h - want).abs() < 1e-9)
        }
        (V::Text(e), V::Int(g)) if e.starts_with("avg:") => same(expected, &V::Text(format!("float:{g}"))),
        (V::Text(e), got) if e.starts_with("num:") => {
            let want: f64 = e[4..].parse().unwrap();
            let have = match got {
                V::Int(i) => Some(*i as f64),
                V::Text(g) => g.strip_prefix("float:").and_then(|x| x.parse::<f64>().ok()),
                V::Null | V::Bool(_) => None,
            };
            have.is_some_and(|h| (h - want).abs() <= 1e-9 * want.abs().max(1.0))
        }
        _ => expected == got,
    }
}

fn request(case: &Case) -> Json {
    let group_by: Vec<String> = case.group_by.iter().map(|(e, c)| format!("e{e}.{c}")).collect();
    let filters: Vec<Json> = case
        .filters
        .iter()
        .map(|(e, c, op, v)| if v.is_null() { json!({"column": format!("e{e}.{c}"), "op": op}) } else { json!({"column": format!("e{e}.{c}"), "op": op, "value": v}) })
        .collect();
    let name = match (&case.kind, case.ratio) {
        (Kind::Plain | Kind::NonAdditive { .. }, false) => "m",
        (_, true) => "r",
        _ => "x",
    };
    let mut req = json!({"name": name, "group_by": group_by, "filters": filters, "limit": 10000});
    if case.time {
        req["time_grain"] = json!(case.grain);
        if let TimeMode::Requested(k) = case.time_mode {
            req["time_dimension"] = json!(format!("e{k}.d"));
        }
    }
    req
}

/// What one case checked: the expected error kind, or how many rows the
/// evaluator expected (0: an empty answer, which checks little).
#[derive(Clone, Copy, Debug)]
enum Checked {
    Error,
    Rows(usize),
}

fn check_case(seed: u64) -> Result<Checked, String> {
    let case = generate(seed);
    let (mut model, diags) = load_project_from_files(&model_files(&case));
    if !diags.is_empty() {
        return Err(format!("generated model does not load: {diags}"));
    }
    if case.no_identity {
        model.entities.get_mut(&format!("e{}", case.anchor)).unwrap().identity.clear();
    }
    let project = Project::from_parts(".".into(), model, None).map_err(|d| d.to_string())?;
    let mut unlike_sqlparser = Vec::new();
    for dialect in schemabrain::sql::Dialect::supported() {
        // A request the planner refuses has no SQL to compare; the refusal
        // is checked against the evaluator below.
        let _ = crate::golden::check_written_as_sqlparser_writes(&project, &format!("seed {seed}"), dialect, &request(&case), &mut unlike_sqlparser);
    }
    if !unlike_sqlparser.is_empty() {
        return Err(unlike_sqlparser.join("\n"));
    }
    let engine = DuckDbEngine::in_memory(&warehouse_sql(&case)).map_err(|e| e.to_string())?;
    let env = tools::call(&project, "get_metric", &request(&case), Execution::run(&engine, limits()));
    let want = match evaluate(&case) {
        Ok(rows) => rows,
        Err(kind) => {
            let got = serde_json::to_value(&env).unwrap()["error"]["kind"].clone();
            return if got == json!(kind) {
                Ok(Checked::Error)
            } else {
                Err(format!("seed {seed}\nrequest: {}\nexpected error {kind}, got {}", request(&case), serde_json::to_string(&env).unwrap()))
            };
        }
    };
    let allowed = [Status::Success, Status::Empty].contains(&env.status()) || (case.no_identity && env.status() == Status::Degraded);
    if !allowed {
        return Err(format!("status {:?}: {}", env.status(), serde_json::to_string(&env).unwrap()));
    }
    let data = env.data().ok_or("no data")?;
    let mut got: Vec<Vec<V>> = data["rows"].as_array().unwrap().iter().map(|r| r.as_array().unwrap().iter().map(from_json).collect()).collect();
    let mut want = want;
    let expected_rows = want.len();
    got.sort();
    want.sort();
    let equal = got.len() == want.len() && got.iter().zip(&want).all(|(g, w)| g.len() == w.len() && w.iter().zip(g).all(|(a, b)| same(a, b)));
    if equal {
        Ok(Checked::Rows(expected_rows))
    } else {
        Err(format!(
            "seed {seed}\nrequest: {}\nmodel:\n{}\ndata:\n{}\nsql:\n{}\nplanner rows: {got:?}\nevaluator rows: {want:?}",
            request(&case),
            model_files(&case).iter().map(|f| f.2.clone()).collect::<Vec<_>>().join("---\n"),
            warehouse_sql(&case),
            data["sql"].as_str().unwrap_or("")
        ))
    }
}

const REGRESSIONS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/regressions/oracle_fuzz.txt");

/// The regressions file for saving only: proptest stops at the first kept
/// seed that fails, before any new case, so the new cases run in a second
/// runner that replays nothing and writes a new failure to the file.
#[derive(Debug, Clone, PartialEq)]
struct SaveOnly(FileFailurePersistence);

impl FailurePersistence for SaveOnly {
    fn load_persisted_failures2(&self, _: Option<&'static str>) -> Vec<PersistedSeed> {
        Vec::new()
    }

    fn save_persisted_failure2(&mut self, source_file: Option<&'static str>, seed: PersistedSeed, shrunken_value: &dyn std::fmt::Debug) {
        self.0.save_persisted_failure2(source_file, seed, shrunken_value);
    }

    fn box_clone(&self) -> Box<dyn FailurePersistence> {
        Box::new(self.clone())
    }

    fn eq(&self, other: &dyn FailurePersistence) -> bool {
        other.as_any().downcast_ref::<Self>().is_some_and(|o| o == self)
    }

    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

#[test]
fn planner_sql_equals_the_brute_force_evaluator() {
    let cases: u32 = std::env::var("SCHEMABRAIN_FUZZ_CASES").ok().and_then(|s| s.parse().ok()).unwrap_or(1000);
    // What the run checked, counted: a generator that drifts to empty
    // answers (or a case count of 0) checks nothing and must fail.
    let (errors, empty, rows) = (AtomicUsize::new(0), AtomicUsize::new(0), AtomicUsize::new(0));
    let body = |seed: u64| -> Result<(), TestCaseError> {
        let checked = check_case(seed).map_err(TestCaseError::fail)?;
        match checked {
            Checked::Error => &errors,
            Checked::Rows(0) => &empty,
            Checked::Rows(_) => &rows,
        }
        .fetch_add(1, Ordering::Relaxed);
        Ok(())
    };
    // The kept seeds alone (no new case), then the new cases, whatever the
    // kept ones gave: a new failure is kept even when an old seed fails too.
    let mut replay = Config::with_cases(0);
    replay.failure_persistence = Some(Box::new(FileFailurePersistence::Direct(REGRESSIONS)));
    let replayed = TestRunner::new(replay).run(&any::<u64>(), &body);
    let mut fresh = Config::with_cases(cases);
    fresh.failure_persistence = Some(Box::new(SaveOnly(FileFailurePersistence::Direct(REGRESSIONS))));
    let result = TestRunner::new(fresh).run(&any::<u64>(), &body);
    match (replayed, result) {
        (Ok(()), Ok(())) => {}
        (Err(old), Ok(())) => panic!("a kept seed fails: {old}"),
        (Ok(()), Err(new)) => panic!("{new}"),
        (Err(old), Err(new)) => panic!("{new}\n(a kept seed fails too: {old})"),
    }
    let (errors, empty, rows) = (errors.into_inner(), empty.into_inner(), rows.into_inner());
    eprintln!("oracle fuzz: {rows} cases with rows compared, {empty} with an empty expected answer, {errors} expected errors");
    assert_floor(cases, errors, empty, rows);
}

/// The floors: every requested case ran, and at least a third of them
/// compared a non-empty answer (a run of 1000 had 516 of them; the
/// floor sits far below, so a random seed does not flake).
fn assert_floor(cases: u32, errors: usize, empty: usize, rows: usize) {
    let ran = errors + empty + rows;
    assert!(cases > 0 && ran >= cases as usize, "the oracle fuzz ran {ran} cases of {cases} asked (SCHEMABRAIN_FUZZ_CASES must be > 0)");
    let floor = (cases as usize).div_ceil(3);
    assert!(rows >= floor, "only {rows} of {ran} cases had a non-empty expected answer (floor {floor}): the generator checks too little");
}

