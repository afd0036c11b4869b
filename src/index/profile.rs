//! The queries `schemabrain index` runs: per-table statistics (rows,
//! non-null and distinct counts, min/max of numbers and dates), a sample of
//! the text columns for the value classifier, and the inclusion check that
//! confirms a join guessed from names.
//!
//! Samples stay in memory; only counts and the min/max of numbers and
//! dates reach the snapshot, so no personal value is written to disk.
//!
//! Architecture invariant: builds plain SQL in the engine's own dialect
//! (quoting only) and runs it through `Engine`; infers nothing.

use std::collections::BTreeMap;

use serde_json::Value as Json;

use crate::catalog::{ColumnStats, TableInfo};
use crate::engine::{Engine, EngineError, Limits};
use crate::model::TypeClass;
use crate::sql::{CompiledSql, Dialect};

/// Rows sampled per table for the value classifier.
pub const SAMPLE_ROWS: usize = 200;

/// An identifier quoted for the dialect.
pub fn quote(d: &Dialect, ident: &str) -> String {
    match d.quote {
        '`' => format!("`{}`", ident.replace('`', "``")),
        '[' => format!("[{}]", ident.replace(']', "]]")),
        q => format!("{q}{}{q}", ident.replace(q, &format!("{q}{q}"))),
    }
}

/// `schema.table`, quoted.
pub fn relation(d: &Dialect, t: &TableInfo) -> String {
    format!("{}.{}", quote(d, &t.schema), quote(d, &t.name))
}

fn run(engine: &dyn Engine, sql: String, max_rows: usize, limits: Limits) -> Result<Vec<Vec<Json>>, EngineError> {
    let d = engine.dialect();
    let compiled = CompiledSql { sql, params: Vec::new(), dialect: d.name };
    Ok(engine.run(&compiled, Limits { max_rows, ..limits })?.rows)
}

fn count(v: Option<&Json>) -> u64 {
    match v {
        Some(Json::Number(n)) => n.as_u64().or_else(|| n.as_f64().map(|f| f as u64)).unwrap_or(0),
        Some(Json::String(s)) => s.parse().unwrap_or(0),
        _ => 0,
    }
}

/// Which statistics a column gets: counts for comparable types, min/max
/// for numbers and dates only.
fn profiled(class: TypeClass) -> (bool, bool) {
    match class {
        TypeClass::Integer | TypeClass::Decimal | TypeClass::Float | TypeClass::Date | TypeClass::Timestamp => (true, true),
        TypeClass::Text | TypeClass::Boolean | TypeClass::Time => (true, false),
        TypeClass::Other | TypeClass::Unknown => (false, false),
    }
}

/// A table's measured row count and column statistics (by column index).
pub struct TableStats {
    pub row_count: u64,
    pub columns: Vec<(usize, ColumnStats)>,
}

impl TableStats {
    /// Writes the figures into the table.
    pub fn apply(self, t: &mut TableInfo) {
        t.row_count = Some(self.row_count);
        for (i, stats) in self.columns {
            if let Some(c) = t.columns.get_mut(i) {
                c.stats = Some(stats);
            }
        }
    }
}

/// Measures the table's row count and its columns' statistics: one scan
/// for the counts and ranges, one statement for the distinct counts.
///
/// Distinct counts are one `GROUP BY` per column (`SELECT COUNT(*) FROM
/// (SELECT c FROM t WHERE c IS NOT NULL GROUP BY c)`, joined by UNION ALL)
/// rather than `COUNT(DISTINCT c)` in the scan: DuckDB builds a distinct
/// hash table per aggregate, which cost about 1.5 ms per column on a
/// ten-row table and made up most of an index run (a 1,000-table schema:
/// `docs/performance.md`). Exact either way, in every engine.
pub fn table_stats(engine: &dyn Engine, t: &TableInfo, limits: Limits) -> Result<TableStats, EngineError> {
    let d = engine.dialect();
    let mut select = vec!["COUNT(*)".to_string()];
    let mut layout = Vec::new();
    for (i, c) in t.columns.iter().enumerate() {
        let (counts, range) = profiled(TypeClass::of(&c.data_type));
        if !counts {
            continue;
        }
        let q = quote(d, &c.name);
        select.push(format!("COUNT({q})"));
        if range {
            select.push(format!("MIN({q})"));
            select.push(format!("MAX({q})"));
        }
        layout.push((i, range));
    }
    let rows = run(engine, format!("SELECT {} FROM {}", select.join(", "), relation(d, t)), 1, limits)?;
    let row = rows.into_iter().next().unwrap_or_default();
    let total = count(row.first());
    let distinct = distinct_counts(engine, t, layout.iter().map(|(i, _)| *i), limits)?;
    let mut columns = Vec::with_capacity(layout.len());
    let mut at = 1;
    for (n, (i, range)) in layout.into_iter().enumerate() {
        let non_null = count(row.get(at));
        let (min, max) = if range { (row.get(at + 1).cloned(), row.get(at + 2).cloned()) } else { (None, None) };
        at += if range { 3 } else { 1 };
        columns.push((
            i,
            ColumnStats {
                null_fraction: if total == 0 { 0.0 } else { (total - non_null.min(total)) as f64 / total as f64 },
                distinct_count: distinct.get(n).copied().unwrap_or(0),
                non_null_count: non_null,
                min: min.filter(|v| !v.is_null()),
                max: max.filter(|v| !v.is_null()),
            },
        ));
    }
    Ok(TableStats { row_count: total, columns })
}

/// The distinct non-null values of each listed column, in order.
fn distinct_counts(engine: &dyn Engine, t: &TableInfo, columns: impl Iterator<Item = usize>, limits: Limits) -> Result<Vec<u64>, EngineError> {
    let d = engine.dialect();
    let rel = relation(d, t);
    let parts: Vec<String> = columns
        .enumerate()
        .filter_map(|(n, i)| {
            let q = quote(d, &t.columns.get(i)?.name);
            Some(format!("SELECT {n} AS k, COUNT(*) AS n FROM (SELECT {q} FROM {rel} WHERE {q} IS NOT NULL GROUP BY {q}) sb_g{n}"))
        })
        .collect();
    if parts.is_empty() {
        return Ok(Vec::new());
    }
    let mut out = vec![0; parts.len()];
    for r in run(engine, parts.join(" UNION ALL "), parts.len(), limits)? {
        if let Some(slot) = out.get_mut(count(r.first()) as usize) {
            *slot = count(r.get(1));
        }
    }
    Ok(out)
}

/// Up to `SAMPLE_ROWS` values of each text column, for the value classifier.
pub fn text_samples(engine: &dyn Engine, t: &TableInfo, limits: Limits) -> Result<BTreeMap<String, Vec<String>>, EngineError> {
    let d = engine.dialect();
    let text: Vec<&str> = t.columns.iter().filter(|c| TypeClass::of(&c.data_type) == TypeClass::Text).map(|c| c.name.as_str()).collect();
    if text.is_empty() {
        return Ok(BTreeMap::new());
    }
    let cols: Vec<String> = text.iter().map(|c| quote(d, c)).collect();
    let rows = run(engine, format!("SELECT {} FROM {} LIMIT {SAMPLE_ROWS}", cols.join(", "), relation(d, t)), SAMPLE_ROWS, limits)?;
    let mut out: BTreeMap<String, Vec<String>> = text.iter().map(|c| (c.to_string(), Vec::new())).collect();
    for row in rows {
        for (c, v) in text.iter().zip(row) {
            match v {
                Json::Null => {}
                Json::String(s) => out.entry(c.to_string()).or_default().push(s),
                other => out.entry(c.to_string()).or_default().push(other.to_string()),
            }
        }
    }
    Ok(out)
}

/// One join to check: rows of `from` whose non-null key finds no row of
/// `to` (0: the key is included in the target's identity).
pub struct InclusionCheck<'a> {
    pub from: &'a TableInfo,
    pub from_cols: &'a [String],
    pub to: &'a TableInfo,
    pub to_cols: &'a [String],
}

/// Checks per statement: one round trip for many joins (a schema of a
/// thousand tables has about as many candidates), in batches small enough
/// to spread over the workers.
pub const CHECKS_PER_QUERY: usize = 32;

/// The orphan count of every check, in order; `None` where the engine
/// refused the comparison (types it cannot compare: no join).
pub fn orphans(engine: &dyn Engine, checks: &[InclusionCheck<'_>], limits: Limits) -> Result<Vec<Option<u64>>, EngineError> {
    let d = engine.dialect();
    let one = |i: usize, c: &InclusionCheck<'_>| {
        let not_null: Vec<String> = c.from_cols.iter().map(|x| format!("c.{} IS NOT NULL", quote(d, x))).collect();
        let eq: Vec<String> = c.from_cols.iter().zip(c.to_cols).map(|(a, b)| format!("p.{} = c.{}", quote(d, b), quote(d, a))).collect();
        format!(
            "SELECT {i} AS k, COUNT(*) AS n FROM {} c WHERE {} AND NOT EXISTS (SELECT 1 FROM {} p WHERE {})",
            relation(d, c.from),
            not_null.join(" AND "),
            relation(d, c.to),
            eq.join(" AND ")
        )
    };
    let mut out = vec![None; checks.len()];
    for (chunk_no, chunk) in checks.chunks(CHECKS_PER_QUERY).enumerate() {
        let base = chunk_no * CHECKS_PER_QUERY;
        let sql = chunk.iter().enumerate().map(|(i, c)| one(base + i, c)).collect::<Vec<_>>().join(" UNION ALL ");
        match run(engine, sql, chunk.len(), limits) {
            Ok(rows) => {
                for r in rows {
                    if let Some(slot) = out.get_mut(count(r.first()) as usize) {
                        *slot = Some(count(r.get(1)));
                    }
                }
            }
            // One comparison the engine refuses fails the batch: check each alone.
            Err(EngineError::Query(_)) => {
                for (i, c) in chunk.iter().enumerate() {
                    let found = match run(engine, one(base + i, c), 1, limits) {
                        Ok(rows) => Some(count(rows.first().and_then(|r| r.get(1)))),
                        Err(EngineError::Query(_)) => None,
                        Err(e) => return Err(e),
                    };
                    if let Some(slot) = out.get_mut(base + i) {
                        *slot = found;
                    }
                }
            }
            Err(e) => return Err(e),
        }
    }
    Ok(out)
}

/// Distinct combinations of `cols` in `t` (a composite identity holds when
/// this equals the row count and none of them is null).
pub fn distinct_combinations(engine: &dyn Engine, t: &TableInfo, cols: &[String], limits: Limits) -> Result<u64, EngineError> {
    let d = engine.dialect();
    let list: Vec<String> = cols.iter().map(|c| quote(d, c)).collect();
    let sql = format!("SELECT COUNT(*) FROM (SELECT DISTINCT {} FROM {}) sb_combinations", list.join(", "), relation(d, t));
    let rows = run(engine, sql, 1, limits)?;
    Ok(count(rows.first().and_then(|r| r.first())))
}
