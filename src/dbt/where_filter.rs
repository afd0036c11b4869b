//! MetricFlow where strings (`{{ Dimension('customer__country') }} = 'US'
//! AND {{ TimeDimension('metric_time', 'day') }} >= '2024-01-01'`) read
//! into our filters: comparisons, IN / NOT IN, IS [NOT] NULL, BETWEEN,
//! [NOT] LIKE, a boolean dimension on its own and metric filters
//! (`{{ Metric('order_count', group_by=['customer']) }} >= 5`, an atom with
//! a `metric`), each on a dbt name resolved to `entity.column`, combined
//! with AND, OR, NOT and parentheses
//! into a `Condition` (NOT pushed into the atoms). Values stay values (bound
//! as parameters later), never SQL text. Anything else is an error naming
//! the span it could not read.
//!
//! A `TimeDimension` at a grain compares the period the column falls in
//! (ISO weeks): the comparison becomes bounds on the column itself at
//! period starts (`period_bounds`), so `week <= '2024-01-29'` keeps times
//! before 2024-02-05.
//!
//! Architecture invariant: pure; knows dbt names only through the map it
//! is given.

use std::collections::BTreeMap;

use serde_json::{json, Value as Json};

use crate::model::{Condition, FilterOp};

/// One filter in our terms: `{column, op, value}` as get_metric and the
/// metric grammar take it.
pub type Filter = Json;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    /// `{{ Dimension('a__b') }}` and friends: (kind, name, grain).
    Ref(String, String, Option<String>),
    /// `{{ Metric('order_count', group_by=['customer']) }}`: (metric, entities).
    MetricRef(String, Vec<String>),
    Str(String),
    Num(String),
    Word(String),
    Op(String),
    Open,
    Close,
    Comma,
}

fn err(text: &str, at: usize, what: &str) -> String {
    let start = at.min(text.len());
    let snippet: String = text[start..].chars().take(40).collect();
    format!("where string: {what} at `{snippet}`")
}

fn quoted_args(inner: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = inner;
    while let Some(i) = rest.find(['\'', '"']) {
        let Some(&q) = rest.as_bytes().get(i) else { break };
        let q = q as char;
        let after = &rest[i + 1..];
        let Some(j) = after.find(q) else { break };
        out.push(after[..j].to_string());
        rest = &after[j + 1..];
    }
    out
}

fn tokenize(text: &str) -> Result<Vec<(usize, Tok)>, String> {
    let b = text.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    while i < b.len() {
        // By characters, not bytes: `i` stays on a character boundary.
        let Some(c) = text[i..].chars().next() else { break };
        if c.is_whitespace() {
            i += c.len_utf8();
        } else if !c.is_ascii() {
            return Err(err(text, i, "an unexpected character"));
        } else if text[i..].starts_with("{{") {
            let end = text[i..].find("}}").ok_or_else(|| err(text, i, "an unclosed `{{`"))? + i;
            let inner = text[i + 2..end].trim();
            let kind: String = inner.chars().take_while(|c| c.is_ascii_alphabetic()).collect();
            if !["Dimension", "TimeDimension", "Entity", "Metric"].contains(&kind.as_str()) {
                return Err(err(text, i, "expected Dimension(...), TimeDimension(...), Entity(...) or Metric(...)"));
            }
            let args = quoted_args(inner);
            if kind == "Metric" {
                let Some((metric, group_by)) = args.split_first() else { return Err(err(text, i, "a Metric(...) without a quoted name")) };
                out.push((i, Tok::MetricRef(metric.clone(), group_by.to_vec())));
                i = end + 2;
                continue;
            }
            let name = args.first().cloned().ok_or_else(|| err(text, i, "a reference without a quoted name"))?;
            let mut grain = args.get(1).cloned().filter(|_| kind == "TimeDimension");
            if let Some(g) = inner.find(".grain(") {
                grain = quoted_args(&inner[g..]).first().cloned();
            }
            if inner.contains("date_part") {
                return Err(err(text, i, "date parts are not supported in where strings yet"));
            }
            out.push((i, Tok::Ref(kind, name, grain)));
            i = end + 2;
        } else if c == '\'' {
            let mut s = String::new();
            let mut j = i + 1;
            loop {
                match b.get(j) {
                    None => return Err(err(text, i, "an unclosed string")),
                    Some(b'\'') if b.get(j + 1) == Some(&b'\'') => {
                        s.push('\'');
                        j += 2;
                    }
                    Some(b'\'') => break,
                    Some(_) => {
                        let ch = text[j..].chars().next().unwrap_or(' ');
                        s.push(ch);
                        j += ch.len_utf8();
                    }
                }
            }
            out.push((i, Tok::Str(s)));
            i = j + 1;
        } else if c.is_ascii_digit() || (c == '-' && b.get(i + 1).is_some_and(u8::is_ascii_digit)) {
            let start = i;
            i += 1;
            while b.get(i).is_some_and(|x| x.is_ascii_digit() || *x == b'.') {
                i += 1;
            }
            out.push((start, Tok::Num(text[start..i].to_string())));
        } else if c.is_ascii_alphabetic() {
            let start = i;
            while b.get(i).is_some_and(|x| x.is_ascii_alphanumeric() || *x == b'_') {
                i += 1;
            }
            out.push((start, Tok::Word(text[start..i].to_ascii_uppercase())));
        } else if c == '(' {
            out.push((i, Tok::Open));
            i += 1;
        } else if c == ')' {
            out.push((i, Tok::Close));
            i += 1;
        } else if c == ',' {
            out.push((i, Tok::Comma));
            i += 1;
        } else {
            let two = text.get(i..i + 2).unwrap_or("");
            let op = if ["<=", ">=", "!=", "<>"].contains(&two) { two } else { &text[i..i + 1] };
            if !["=", "<", ">", "<=", ">=", "!=", "<>"].contains(&op) {
                return Err(err(text, i, "an unexpected character"));
            }
            out.push((i, Tok::Op(op.to_string())));
            i += op.len();
        }
    }
    Ok(out)
}

fn literal(t: &Tok) -> Option<Json> {
    match t {
        Tok::Str(s) => Some(json!(s)),
        Tok::Num(n) => n.parse::<i64>().map(|i| json!(i)).ok().or_else(|| n.parse::<f64>().ok().map(|f| json!(f))),
        Tok::Word(w) if w == "TRUE" => Some(json!(true)),
        Tok::Word(w) if w == "FALSE" => Some(json!(false)),
        _ => None,
    }
}

/// A period of a grain: `day`, `week` (ISO, from Monday), `month`,
/// `quarter`, `year`.
#[derive(Clone, Copy, PartialEq)]
enum Period {
    Day,
    Week,
    Month,
    Quarter,
    Year,
}

impl Period {
    fn parse(g: &str) -> Option<Period> {
        Some(match g {
            "day" => Period::Day,
            "week" => Period::Week,
            "month" => Period::Month,
            "quarter" => Period::Quarter,
            "year" => Period::Year,
            _ => return None,
        })
    }

    /// The first day of the period holding `d`.
    fn start(self, d: chrono::NaiveDate) -> Option<chrono::NaiveDate> {
        use chrono::Datelike;
        match self {
            Period::Day => Some(d),
            Period::Week => d.checked_sub_days(chrono::Days::new(u64::from(d.weekday().num_days_from_monday()))),
            Period::Month => d.with_day(1),
            Period::Quarter => chrono::NaiveDate::from_ymd_opt(d.year(), (d.month0() / 3) * 3 + 1, 1),
            Period::Year => chrono::NaiveDate::from_ymd_opt(d.year(), 1, 1),
        }
    }

    /// The first day of the next period after the one holding `d`.
    fn next(self, d: chrono::NaiveDate) -> Option<chrono::NaiveDate> {
        let start = self.start(d)?;
        match self {
            Period::Day => start.succ_opt(),
            Period::Week => start.checked_add_days(chrono::Days::new(7)),
            Period::Month => start.checked_add_months(chrono::Months::new(1)),
            Period::Quarter => start.checked_add_months(chrono::Months::new(3)),
            Period::Year => start.checked_add_months(chrono::Months::new(12)),
        }
    }
}

/// Bounds on the column for a comparison of its period at `grain` with the
/// date `d`: `trunc(t) >= d` is `t >= ceil(d)`, `trunc(t) > d` and
/// `trunc(t) <= d` bound `t` by the next period's start, `trunc(t) < d` is
/// `t < ceil(d)`, and `trunc(t) = d` is the period `d` starts (empty when `d`
/// starts none). Each bound is `(op, YYYY-MM-DD)`.
fn period_bounds(grain: Period, op: &str, d: &Json) -> Option<Vec<(&'static str, Json)>> {
    let date = chrono::NaiveDate::parse_from_str(d.as_str()?.get(..10)?, "%Y-%m-%d").ok()?;
    let day = |x: chrono::NaiveDate| json!(x.format("%Y-%m-%d").to_string());
    let next = grain.next(date)?;
    let ceil = if grain.start(date)? == date { date } else { next };
    Some(match op {
        "gte" => vec![("gte", day(ceil))],
        "gt" => vec![("gte", day(next))],
        "lt" => vec![("lt", day(ceil))],
        "lte" => vec![("lt", day(next))],
        _ => vec![("gte", day(ceil)), ("lt", day(if ceil == date { next } else { ceil }))],
    })
}

/// How deep parentheses and NOTs may nest: far beyond any hand-written
/// filter, and well within the stack.
const MAX_DEPTH: usize = 32;

/// A recursive-descent reader over the tokens:
/// `or := and (OR and)*`, `and := unary (AND unary)*`,
/// `unary := NOT unary | ( or ) | predicate`. `NOT` is carried down as a
/// flag and applied to the atoms (De Morgan), so the tree has none.
struct Parser<'a> {
    text: &'a str,
    toks: Vec<(usize, Tok)>,
    i: usize,
    resolve: &'a dyn Fn(&str, &str) -> Result<String, String>,
}

pub type Cond = Condition<Filter>;

fn atom(column: &str, op: &str, value: Option<Json>) -> Cond {
    let mut f = json!({"column": column, "op": op});
    if let (Some(v), Some(o)) = (value, f.as_object_mut()) {
        o.insert("value".into(), v);
    }
    Condition::Atom(f)
}

/// `All` of the branches (or `Any` when negated), one level flattened.
fn join(all: bool, branches: Vec<Cond>) -> Cond {
    let mut flat = Vec::new();
    for b in branches {
        match b {
            Condition::All(inner) if all => flat.extend(inner),
            Condition::Any(inner) if !all => flat.extend(inner),
            other => flat.push(other),
        }
    }
    match <[Cond; 1]>::try_from(flat) {
        Ok([only]) => only,
        Err(many) if all => Condition::All(many),
        Err(many) => Condition::Any(many),
    }
}

impl Parser<'_> {
    fn at(&self, i: usize) -> usize {
        self.toks.get(i).map(|(p, _)| *p).unwrap_or(self.text.len())
    }

    fn fail(&self, i: usize, what: &str) -> String {
        err(self.text, self.at(i), what)
    }

    fn word(&self, i: usize, w: &str) -> bool {
        matches!(self.toks.get(i), Some((_, Tok::Word(x))) if x == w)
    }

    fn literal(&self, i: usize) -> Result<Json, String> {
        self.toks.get(i).and_then(|(_, t)| literal(t)).ok_or_else(|| self.fail(i, "expected a literal"))
    }

    fn or(&mut self, negated: bool, depth: usize) -> Result<Cond, String> {
        let mut branches = vec![self.and(negated, depth)?];
        while self.word(self.i, "OR") {
            self.i += 1;
            branches.push(self.and(negated, depth)?);
        }
        // NOT (a OR b) is NOT a AND NOT b.
        Ok(join(negated, branches))
    }

    fn and(&mut self, negated: bool, depth: usize) -> Result<Cond, String> {
        let mut branches = vec![self.unary(negated, depth)?];
        while self.word(self.i, "AND") {
            self.i += 1;
            branches.push(self.unary(negated, depth)?);
        }
        Ok(join(!negated, branches))
    }

    fn unary(&mut self, negated: bool, depth: usize) -> Result<Cond, String> {
        if depth >= MAX_DEPTH {
            return Err(self.fail(self.i, &format!("nested deeper than {MAX_DEPTH} levels")));
        }
        if self.word(self.i, "NOT") {
            self.i += 1;
            return self.unary(!negated, depth + 1);
        }
        if matches!(self.toks.get(self.i), Some((_, Tok::Open))) {
            self.i += 1;
            let inner = self.or(negated, depth + 1)?;
            if !matches!(self.toks.get(self.i), Some((_, Tok::Close))) {
                return Err(self.fail(self.i, "expected `)`"));
            }
            self.i += 1;
            return Ok(inner);
        }
        self.predicate(negated)
    }

    /// `Metric('m', group_by=['entity']) op number` (or BETWEEN): the
    /// rows whose entity has that metric value. One entity, numbers only.
    fn metric_predicate(&mut self, negated: bool, metric: &str, group_by: &[String]) -> Result<Cond, String> {
        let i = self.i;
        let [entity] = group_by else {
            return Err(self.fail(i, "a Metric(...) filter groups by exactly one entity, e.g. group_by=['customer']"));
        };
        let column = (self.resolve)("Entity", entity).map_err(|e| self.fail(i, &e))?;
        let number = |p: &Self, at: usize| -> Result<Json, String> {
            match p.toks.get(at).map(|(_, t)| t) {
                Some(t @ Tok::Num(_)) => literal(t).ok_or_else(|| p.fail(at, "expected a number")),
                _ => Err(p.fail(at, "expected a number: a metric's value is compared with numbers")),
            }
        };
        let atom = |op: &str, v: Json| Condition::Atom(json!({"column": column, "op": op, "value": v, "metric": metric}));
        let (cond, next) = match self.toks.get(i + 1).map(|(_, t)| t) {
            Some(Tok::Op(op)) => {
                let op = FilterOp::parse(op).ok_or_else(|| self.fail(i + 1, "expected a comparison"))?;
                let v = number(self, i + 2)?;
                (atom(op.as_str(), v), i + 3)
            }
            Some(Tok::Word(w)) if w == "BETWEEN" => {
                let lo = number(self, i + 2)?;
                if !self.word(i + 3, "AND") {
                    return Err(self.fail(i + 3, "expected AND"));
                }
                let hi = number(self, i + 4)?;
                (join(true, vec![atom("gte", lo), atom("lte", hi)]), i + 5)
            }
            _ => return Err(self.fail(i + 1, "expected a comparison (=, !=, <, <=, >, >=) or BETWEEN after a Metric(...)")),
        };
        self.i = next;
        Ok(if negated { negate(cond) } else { cond })
    }

    /// One comparison on one reference, negated when asked.
    fn predicate(&mut self, negated: bool) -> Result<Cond, String> {
        let i = self.i;
        if let Some((_, Tok::MetricRef(metric, group_by))) = self.toks.get(i) {
            let (metric, group_by) = (metric.clone(), group_by.clone());
            return self.metric_predicate(negated, &metric, &group_by);
        }
        let Some((_, Tok::Ref(kind, name, grain))) = self.toks.get(i) else {
            return Err(self.fail(i, "expected a {{ Dimension(...) }} reference"));
        };
        let column = (self.resolve)(kind, name).map_err(|e| self.fail(i, &e))?;
        // A time dimension at a grain compares its period's start: a
        // calendar period as bounds on the column, any other grain (a time
        // spine's custom grain, checked when the filter is resolved) as the
        // bucketed column `<column>__<grain>`.
        let period = match grain.as_deref() {
            None => None,
            Some(g) => match Period::parse(g) {
                Some(p) => Some(Ok(p)),
                None if crate::model::is_identifier(g) => Some(Err(format!("{column}__{g}"))),
                None => return Err(self.fail(i, &format!("`{g}` is not a grain"))),
            },
        };
        let i = i + 1;
        // What a comparison, a list or a NULL test reads as written: the
        // column, or its bucketed name (a calendar period is NULL exactly
        // when its time is; a custom one also where the spine has no day).
        let read = match &period {
            Some(Err(bucketed)) => bucketed.clone(),
            _ => column.clone(),
        };
        // `op value` on what is read, or on a calendar period as bounds.
        let compare = |op: &str, v: Json, at: usize| -> Result<Cond, String> {
            match &period {
                Some(Ok(p)) => {
                    let bounds = period_bounds(*p, op, &v).ok_or_else(|| self.fail(at, "expected a date (YYYY-MM-DD)"))?;
                    Ok(join(true, bounds.into_iter().map(|(op, b)| atom(&column, op, Some(b))).collect()))
                }
                _ => Ok(atom(&read, op, Some(v))),
            }
        };
        let (cond, next) = match self.toks.get(i).map(|(_, t)| t) {
            Some(Tok::Op(op)) => {
                let op = FilterOp::parse(op).ok_or_else(|| self.fail(i, "expected a comparison"))?;
                let v = self.literal(i + 1)?;
                let cond = match op {
                    // `!=` is `NOT =`, also on a period.
                    FilterOp::Ne => negate(compare("eq", v, i + 1)?),
                    op => compare(op.as_str(), v, i + 1)?,
                };
                (cond, i + 2)
            }
            Some(Tok::Word(w)) if w == "IS" => {
                let not = self.word(i + 1, "NOT");
                let k = if not { i + 2 } else { i + 1 };
                if !self.word(k, "NULL") {
                    return Err(self.fail(k, "expected NULL"));
                }
                (atom(&read, if not { "not_null" } else { "is_null" }, None), k + 1)
            }
            Some(Tok::Word(w)) if ["IN", "NOT", "BETWEEN", "LIKE"].contains(&w.as_str()) => {
                let not = w == "NOT";
                let k = if not { i + 1 } else { i };
                let (cond, next) = if self.word(k, "BETWEEN") {
                    let lo = self.literal(k + 1)?;
                    if !self.word(k + 2, "AND") {
                        return Err(self.fail(k + 2, "expected AND"));
                    }
                    let hi = self.literal(k + 3)?;
                    (join(true, vec![compare("gte", lo, k + 1)?, compare("lte", hi, k + 3)?]), k + 4)
                } else if self.word(k, "LIKE") {
                    let Some(pattern @ Json::String(_)) = self.toks.get(k + 1).and_then(|(_, t)| literal(t)) else {
                        return Err(self.fail(k + 1, "expected a quoted pattern"));
                    };
                    if period.is_some() {
                        return Err(self.fail(k, "LIKE on a time dimension at a grain"));
                    }
                    (atom(&column, "like", Some(pattern)), k + 2)
                } else if self.word(k, "IN") {
                    if !matches!(self.toks.get(k + 1), Some((_, Tok::Open))) {
                        return Err(self.fail(k + 1, "expected `(`"));
                    }
                    let mut values = Vec::new();
                    let mut j = k + 2;
                    loop {
                        values.push((self.literal(j)?, j));
                        match self.toks.get(j + 1).map(|(_, t)| t) {
                            Some(Tok::Comma) => j += 2,
                            Some(Tok::Close) => break,
                            _ => return Err(self.fail(j + 1, "expected `,` or `)`")),
                        }
                    }
                    let cond = match &period {
                        // A calendar period in a list is one of those periods.
                        Some(Ok(_)) => join(false, values.into_iter().map(|(v, at)| compare("eq", v, at)).collect::<Result<_, _>>()?),
                        _ => atom(&read, "in", Some(Json::Array(values.into_iter().map(|(v, _)| v).collect()))),
                    };
                    (cond, j + 2)
                } else {
                    return Err(self.fail(k, "expected IN, LIKE or BETWEEN after NOT"));
                };
                (if not { negate(cond) } else { cond }, next)
            }
            // A boolean dimension on its own is true.
            _ if period.is_none() => (atom(&column, "eq", Some(json!(true))), i),
            _ => return Err(self.fail(i, "expected a comparison, IN, IS [NOT] NULL, BETWEEN or LIKE")),
        };
        self.i = next;
        Ok(if negated { negate(cond) } else { cond })
    }
}

/// `NOT c`, pushed into the atoms.
fn negate(c: Cond) -> Cond {
    match c {
        Condition::Atom(mut f) => {
            let op = f.get("op").and_then(Json::as_str).and_then(FilterOp::parse).map(FilterOp::negated);
            if let Some(op) = op {
                crate::json::set(&mut f, "op", json!(op.as_str()));
            }
            Condition::Atom(f)
        }
        Condition::All(cs) => join(false, cs.into_iter().map(negate).collect()),
        Condition::Any(cs) => join(true, cs.into_iter().map(negate).collect()),
    }
}

/// Parses `text` into a condition whose atoms are our filters; `resolve`
/// maps a reference (kind, dbt name) to our `entity.column`, or says why
/// it cannot.
pub fn parse(text: &str, resolve: &dyn Fn(&str, &str) -> Result<String, String>) -> Result<Cond, String> {
    let mut p = Parser { text, toks: tokenize(text)?, i: 0, resolve };
    let c = p.or(false, 0)?;
    match p.toks.get(p.i) {
        None => Ok(c),
        Some((_, Tok::Close)) => Err(p.fail(p.i, "an unmatched `)`")),
        Some(_) => Err(p.fail(p.i, "expected AND, OR or the end")),
    }
}

/// A condition as its conjuncts: the plain filters, and the disjunctions.
pub fn conjuncts(c: Cond) -> (Vec<Filter>, Vec<Cond>) {
    let parts = match c {
        Condition::All(cs) => cs,
        other => vec![other],
    };
    let (mut filters, mut any_of) = (Vec::new(), Vec::new());
    for part in parts {
        match part {
            Condition::Atom(f) => filters.push(f),
            other => any_of.push(other),
        }
    }
    (filters, any_of)
}

/// A resolver over the import's dbt names: `Dimension('customer__country')`
/// → `customer.country`, `Entity('customer')` → the entity's identity column,
/// `metric_time` → `metric_time` (the caller substitutes the time dimension).
pub fn resolver<'a>(names: &'a BTreeMap<String, String>, identities: &'a BTreeMap<String, String>, metric_time: Option<&'a str>) -> impl Fn(&str, &str) -> Result<String, String> + 'a {
    move |kind, name| {
        if name == "metric_time" {
            return metric_time.map(str::to_string).ok_or_else(|| "`metric_time` needs a metric with a time dimension".to_string());
        }
        if kind == "Entity" {
            return identities.get(name).cloned().ok_or_else(|| format!("unknown entity `{name}`"));
        }
        // An entity path names the same column as its last link.
        let parts: Vec<&str> = name.split("__").collect();
        let short = match parts.get(parts.len().saturating_sub(2)..) {
            Some(last_two) if parts.len() > 2 => last_two.join("__"),
            _ => name.to_string(),
        };
        names.get(&short).cloned().ok_or_else(|| format!("unknown dimension `{name}`"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> BTreeMap<String, String> {
        [("customer__country", "customer.country"), ("order__status", "order.status"), ("order__ordered_at", "order.ordered_at")]
            .iter()
            .map(|(a, b)| (a.to_string(), b.to_string()))
            .collect()
    }

    #[test]
    fn reads_the_forms_metricflow_writes() {
        let n = names();
        let ids = BTreeMap::new();
        let r = resolver(&n, &ids, Some("order.ordered_at"));
        let all = |text: &str| {
            let (filters, any_of) = conjuncts(parse(text, &r).unwrap());
            assert!(any_of.is_empty(), "{text}: {any_of:?}");
            filters
        };
        let f = all("{{ Dimension('customer__country') }} = 'US' AND {{ Dimension('order__status') }} IN ('a', 'b')");
        assert_eq!(f, vec![json!({"column": "customer.country", "op": "eq", "value": "US"}), json!({"column": "order.status", "op": "in", "value": ["a", "b"]})]);
        let f = all("{{ TimeDimension('metric_time', 'day') }} <= '2024-01-31'");
        assert_eq!(f, vec![json!({"column": "order.ordered_at", "op": "lt", "value": "2024-02-01"})]);
        let f = all("({{ Dimension('customer__country') }} IS NOT NULL)");
        assert_eq!(f, vec![json!({"column": "customer.country", "op": "not_null"})]);
        let f = all("{{ Dimension('order__customer__country') }} != 'it''s'");
        assert_eq!(f, vec![json!({"column": "customer.country", "op": "ne", "value": "it's"})]);
    }

    /// `trunc(t) op d` at every grain, for every day `t` and literal `d` of
    /// two years around leap day, holds exactly when the rewritten bounds
    /// hold on `t`; the period start is computed here another way (walking
    /// back day by day to the first day of its period).
    #[test]
    fn period_comparisons_become_exact_bounds() {
        use chrono::{Datelike, NaiveDate};
        let n = names();
        let ids = BTreeMap::new();
        let r = resolver(&n, &ids, Some("order.ordered_at"));
        let days: Vec<NaiveDate> = NaiveDate::from_ymd_opt(2023, 11, 1).unwrap().iter_days().take(550).collect();
        let first_of = |g: &str, x: NaiveDate| -> bool {
            match g {
                "day" => true,
                "week" => x.weekday() == chrono::Weekday::Mon,
                "month" => x.day() == 1,
                "quarter" => x.day() == 1 && x.month0() % 3 == 0,
                _ => x.ordinal() == 1,
            }
        };
        let trunc = |g: &str, mut x: NaiveDate| {
            while !first_of(g, x) {
                x = x.pred_opt().unwrap();
            }
            x
        };
        for g in ["day", "week", "month", "quarter", "year"] {
            for op in ["=", "<", "<=", ">", ">=", "!="] {
                for d in days.iter().step_by(3) {
                    let text = format!("{{{{ TimeDimension('metric_time', '{g}') }}}} {op} '{d}'");
                    let cond = parse(&text, &r).unwrap();
                    for t in &days {
                        let tt = trunc(g, *t);
                        let want = match op {
                            "=" => tt == *d,
                            "<" => tt < *d,
                            "<=" => tt <= *d,
                            ">" => tt > *d,
                            "!=" => tt != *d,
                            _ => tt >= *d,
                        };
                        let got = holds(&cond, &|f: &Filter| {
                            let b = NaiveDate::parse_from_str(f["value"].as_str().unwrap(), "%Y-%m-%d").unwrap();
                            match f["op"].as_str().unwrap() {
                                "gte" => *t >= b,
                                "lt" => *t < b,
                                other => panic!("{other}"),
                            }
                        });
                        assert_eq!(got, want, "{text} at {t}: {cond:?}");
                    }
                }
            }
        }
    }

    /// Whether the condition holds where each atom holds as `atom` says.
    fn holds(c: &Cond, atom: &dyn Fn(&Filter) -> bool) -> bool {
        match c {
            Condition::Atom(f) => atom(f),
            Condition::All(cs) => cs.iter().all(|c| holds(c, atom)),
            Condition::Any(cs) => cs.iter().any(|c| holds(c, atom)),
        }
    }

    /// AND, OR, NOT and parentheses read as SQL reads them (NOT binds
    /// tighter than AND, AND than OR), checked by evaluating both the
    /// parsed tree and the same text as Rust booleans over every assignment
    /// of three atoms.
    #[test]
    fn boolean_structure_matches_sql_precedence() {
        let n: BTreeMap<String, String> =
            [("a__x", "a.x"), ("a__y", "a.y"), ("a__z", "a.z")].iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
        let ids = BTreeMap::new();
        let r = resolver(&n, &ids, None);
        let x = "{{ Dimension('a__x') }} = 1";
        let y = "{{ Dimension('a__y') }}";
        let z = "{{ Dimension('a__z') }} LIKE 'q%'";
        type Rule = fn(bool, bool, bool) -> bool;
        let cases: Vec<(String, Rule)> = vec![
            (format!("{x} OR {y} AND {z}"), |x, y, z| x || (y && z)),
            (format!("({x} OR {y}) AND {z}"), |x, y, z| (x || y) && z),
            (format!("NOT {x} OR {y}"), |x, y, _| !x || y),
            (format!("NOT ({x} OR {y}) AND {z}"), |x, y, z| !(x || y) && z),
            (format!("NOT (NOT {x} AND NOT ({y} OR NOT {z}))"), |x, y, z| !(!x && !(y || !z))),
            (format!("{x} AND NOT NOT {y}"), |x, y, _| x && y),
        ];
        for (text, rule) in cases {
            let cond = parse(&text, &r).unwrap();
            for bits in 0..8u8 {
                let (vx, vy, vz) = (bits & 1 == 1, bits & 2 == 2, bits & 4 == 4);
                // An atom holds as its (possibly negated) op says of the assignment.
                let got = holds(&cond, &|f: &Filter| {
                    let truth = match f["column"].as_str().unwrap() {
                        "a.x" => vx,
                        "a.y" => vy,
                        _ => vz,
                    };
                    match f["op"].as_str().unwrap() {
                        "eq" | "like" => truth,
                        "ne" | "not_like" => !truth,
                        other => panic!("{other}"),
                    }
                });
                assert_eq!(got, rule(vx, vy, vz), "{text} at x={vx} y={vy} z={vz}: {cond:?}");
            }
        }
        let (plain, any_of) = conjuncts(parse(&format!("({x} OR {y}) AND NOT {z}"), &r).unwrap());
        assert_eq!(plain, vec![json!({"column": "a.z", "op": "not_like", "value": "q%"})]);
        assert_eq!(any_of.len(), 1);
    }

    #[test]
    fn metric_references_compare_the_metric_per_entity() {
        let n = names();
        let ids: BTreeMap<String, String> = [("customer".to_string(), "customer.id".to_string())].into();
        let r = resolver(&n, &ids, None);
        let (plain, any_of) = conjuncts(parse("NOT {{ Metric('order_count', group_by=['customer']) }} BETWEEN 2 AND 5", &r).unwrap());
        assert!(plain.is_empty());
        assert_eq!(
            any_of,
            vec![Condition::Any(vec![
                Condition::Atom(json!({"column": "customer.id", "op": "lt", "value": 2, "metric": "order_count"})),
                Condition::Atom(json!({"column": "customer.id", "op": "gt", "value": 5, "metric": "order_count"})),
            ])]
        );
        assert!(parse("{{ Metric('order_count', group_by=['customer']) }} >= 'five'", &r).unwrap_err().contains("number"));
        assert!(parse("{{ Metric('order_count', group_by=['customer', 'store']) }} >= 5", &r).unwrap_err().contains("exactly one entity"));
        assert!(parse("{{ Metric('order_count', group_by=['nope']) }} >= 5", &r).unwrap_err().contains("unknown entity"));
    }

    #[test]
    fn refuses_what_it_cannot_read_and_says_where() {
        let n = names();
        let ids = BTreeMap::new();
        let r = resolver(&n, &ids, None);
        let e = parse("{{ Dimension('customer__country') }} = 'US' OR 1 = 1", &r).unwrap_err();
        assert!(e.contains("expected a {{ Dimension") && e.contains("at `1 = 1`"), "{e}");
        let e = parse("({{ Dimension('customer__country') }} = 'US'", &r).unwrap_err();
        assert!(e.contains("expected `)`"), "{e}");
        let e = parse("{{ Dimension('customer__country') }} = 'US')", &r).unwrap_err();
        assert!(e.contains("unmatched `)`"), "{e}");
        let deep = format!("{}{{{{ Dimension('customer__country') }}}} = 'US'{}", "(".repeat(40), ")".repeat(40));
        assert!(parse(&deep, &r).unwrap_err().contains("nested deeper"));
        let e = parse("{{ TimeDimension('order__ordered_at', 'day') }} LIKE '2024%'", &r).unwrap_err();
        assert!(e.contains("LIKE on a time dimension"), "{e}");
        let e = parse("{{ Dimension('customer__country') }} = 'US'; DROP TABLE x", &r).unwrap_err();
        assert!(e.contains("unexpected character"), "{e}");
        assert!(parse("{{ Dimension('nope__x') }} = 1", &r).unwrap_err().contains("unknown dimension"));
        // Found by the fuzzer: a multi-byte character where an operator may be.
        assert!(parse("{{ Dimension('customer__country') }} \u{3c1}= 1", &r).is_err());
        assert!(parse("{{ Dimension('customer__country') }}\u{a0}= 'x'", &r).is_ok());
        assert!(parse("{{ TimeDimension('metric_time', 'day') }} = '2024-01-01'", &r).unwrap_err().contains("metric_time"));
    }
}
