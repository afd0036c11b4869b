//! MetricFlow where strings (`{{ Dimension('customer__country') }} = 'US'
//! AND {{ TimeDimension('metric_time', 'day') }} >= '2024-01-01'`) read
//! into our filters: a conjunction of comparisons, IN / NOT IN, IS [NOT]
//! NULL and BETWEEN, each on a dbt name resolved to `entity.column`. Values
//! stay values (bound as parameters later), never SQL text. OR, NOT (...),
//! LIKE and anything else is an error naming the span it could not read.
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

/// One filter in our terms: `{column, op, value}` as get_metric and the
/// metric grammar take it.
pub type Filter = Json;

#[derive(Clone, Debug, PartialEq)]
enum Tok {
    /// `{{ Dimension('a__b') }}` and friends: (kind, name, grain).
    Ref(String, String, Option<String>),
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
            if !["Dimension", "TimeDimension", "Entity"].contains(&kind.as_str()) {
                return Err(err(text, i, "expected Dimension(...), TimeDimension(...) or Entity(...)"));
            }
            let args = quoted_args(inner);
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

/// Parses `text`; `resolve` maps a reference (kind, dbt name) to our
/// `entity.column`, or says why it cannot.
pub fn parse(text: &str, resolve: &dyn Fn(&str, &str) -> Result<String, String>) -> Result<Vec<Filter>, String> {
    let toks = tokenize(text)?;
    let mut out = Vec::new();
    let mut i = 0;
    let at = |i: usize| toks.get(i).map(|(p, _)| *p).unwrap_or(text.len());
    // Parentheses around the whole of a conjunct are allowed and ignored.
    let mut depth = 0usize;
    loop {
        while matches!(toks.get(i), Some((_, Tok::Open))) {
            depth += 1;
            i += 1;
        }
        let Some((_, Tok::Ref(kind, name, grain))) = toks.get(i) else {
            return Err(err(text, at(i), "expected a {{ Dimension(...) }} reference"));
        };
        let column = resolve(kind, name).map_err(|e| err(text, at(i), &e))?;
        i += 1;
        // A time dimension at a grain compares its period's start.
        let period = match grain.as_deref() {
            None => None,
            Some(g) => Some(Period::parse(g).ok_or_else(|| err(text, at(i - 1), &format!("`{g}` is not a grain (day, week, month, quarter, year)")))?),
        };
        let day_grain = period.is_some();
        let bounds = |op: &str, v: &Json, at: usize| -> Result<Vec<(&'static str, Json)>, String> {
            period.and_then(|p| period_bounds(p, op, v)).ok_or_else(|| err(text, at, "expected a date (YYYY-MM-DD)"))
        };
        let mut push = |op: &str, value: Option<Json>| {
            let mut f = json!({"column": column, "op": op});
            if let (Some(v), Some(o)) = (value, f.as_object_mut()) {
                o.insert("value".into(), v);
            }
            out.push(f);
        };
        match toks.get(i).map(|(_, t)| t) {
            Some(Tok::Op(op)) => {
                let v = toks.get(i + 1).and_then(|(_, t)| literal(t)).ok_or_else(|| err(text, at(i + 1), "expected a literal"))?;
                let ours = match op.as_str() {
                    "=" => "eq",
                    "!=" | "<>" => "ne",
                    "<" => "lt",
                    "<=" => "lte",
                    ">" => "gt",
                    _ => "gte",
                };
                match (day_grain, ours) {
                    (true, "ne") => return Err(err(text, at(i), "`!=` on a time dimension at a grain is not supported yet")),
                    (true, _) => {
                        for (op, bound) in bounds(ours, &v, at(i + 1))? {
                            push(op, Some(bound));
                        }
                    }
                    _ => push(ours, Some(v)),
                }
                i += 2;
            }
            Some(Tok::Word(w)) if w == "IS" => {
                let not = matches!(toks.get(i + 1), Some((_, Tok::Word(n))) if n == "NOT");
                let k = if not { i + 2 } else { i + 1 };
                if !matches!(toks.get(k), Some((_, Tok::Word(n))) if n == "NULL") {
                    return Err(err(text, at(k), "expected NULL"));
                }
                push(if not { "not_null" } else { "is_null" }, None);
                i = k + 1;
            }
            Some(Tok::Word(w)) if w == "IN" || w == "NOT" || w == "BETWEEN" => {
                if w == "BETWEEN" {
                    let lo = toks.get(i + 1).and_then(|(_, t)| literal(t)).ok_or_else(|| err(text, at(i + 1), "expected a literal"))?;
                    if !matches!(toks.get(i + 2), Some((_, Tok::Word(a))) if a == "AND") {
                        return Err(err(text, at(i + 2), "expected AND"));
                    }
                    let hi = toks.get(i + 3).and_then(|(_, t)| literal(t)).ok_or_else(|| err(text, at(i + 3), "expected a literal"))?;
                    if day_grain {
                        for (op, bound) in bounds("gte", &lo, at(i + 1))?.into_iter().chain(bounds("lte", &hi, at(i + 3))?) {
                            push(op, Some(bound));
                        }
                    } else {
                        push("gte", Some(lo));
                        push("lte", Some(hi));
                    }
                    i += 4;
                } else {
                    let not = w == "NOT";
                    let k = if not { i + 1 } else { i };
                    if !matches!(toks.get(k), Some((_, Tok::Word(n))) if n == "IN") {
                        return Err(err(text, at(k), "expected IN (LIKE and NOT on its own are not supported yet)"));
                    }
                    if !matches!(toks.get(k + 1), Some((_, Tok::Open))) {
                        return Err(err(text, at(k + 1), "expected `(`"));
                    }
                    let mut values = Vec::new();
                    let mut j = k + 2;
                    loop {
                        let v = toks.get(j).and_then(|(_, t)| literal(t)).ok_or_else(|| err(text, at(j), "expected a literal"))?;
                        values.push(v);
                        match toks.get(j + 1).map(|(_, t)| t) {
                            Some(Tok::Comma) => j += 2,
                            Some(Tok::Close) => break,
                            _ => return Err(err(text, at(j + 1), "expected `,` or `)`")),
                        }
                    }
                    if day_grain {
                        return Err(err(text, at(i), "IN on a time dimension at a grain is not supported yet"));
                    }
                    push(if not { "not_in" } else { "in" }, Some(Json::Array(values)));
                    i = j + 2;
                }
            }
            _ => return Err(err(text, at(i), "expected a comparison, IN, IS [NOT] NULL or BETWEEN")),
        }
        while depth > 0 && matches!(toks.get(i), Some((_, Tok::Close))) {
            depth -= 1;
            i += 1;
        }
        match toks.get(i) {
            None if depth == 0 => return Ok(out),
            None => return Err(err(text, text.len(), "an unclosed `(`")),
            Some((_, Tok::Word(w))) if w == "AND" => i += 1,
            Some((p, Tok::Word(w))) if w == "OR" => return Err(err(text, *p, "OR is not supported yet (only AND)")),
            Some((p, _)) => return Err(err(text, *p, "expected AND")),
        }
    }
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
        let f = parse("{{ Dimension('customer__country') }} = 'US' AND {{ Dimension('order__status') }} IN ('a', 'b')", &r).unwrap();
        assert_eq!(f, vec![json!({"column": "customer.country", "op": "eq", "value": "US"}), json!({"column": "order.status", "op": "in", "value": ["a", "b"]})]);
        let f = parse("{{ TimeDimension('metric_time', 'day') }} <= '2024-01-31'", &r).unwrap();
        assert_eq!(f, vec![json!({"column": "order.ordered_at", "op": "lt", "value": "2024-02-01"})]);
        let f = parse("({{ Dimension('customer__country') }} IS NOT NULL)", &r).unwrap();
        assert_eq!(f, vec![json!({"column": "customer.country", "op": "not_null"})]);
        let f = parse("{{ Dimension('order__customer__country') }} != 'it''s'", &r).unwrap();
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
            for op in ["=", "<", "<=", ">", ">="] {
                for d in days.iter().step_by(3) {
                    let text = format!("{{{{ TimeDimension('metric_time', '{g}') }}}} {op} '{d}'");
                    let filters = parse(&text, &r).unwrap();
                    for t in &days {
                        let tt = trunc(g, *t);
                        let want = match op {
                            "=" => tt == *d,
                            "<" => tt < *d,
                            "<=" => tt <= *d,
                            ">" => tt > *d,
                            _ => tt >= *d,
                        };
                        let got = filters.iter().all(|f| {
                            let b = NaiveDate::parse_from_str(f["value"].as_str().unwrap(), "%Y-%m-%d").unwrap();
                            match f["op"].as_str().unwrap() {
                                "gte" => *t >= b,
                                _ => *t < b,
                            }
                        });
                        assert_eq!(got, want, "{text} at {t}: {filters:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn refuses_what_it_cannot_read_and_says_where() {
        let n = names();
        let ids = BTreeMap::new();
        let r = resolver(&n, &ids, None);
        let e = parse("{{ Dimension('customer__country') }} = 'US' OR 1 = 1", &r).unwrap_err();
        assert!(e.contains("OR") && e.contains("OR 1 = 1"), "{e}");
        let e = parse("{{ Dimension('customer__country') }} = 'US'; DROP TABLE x", &r).unwrap_err();
        assert!(e.contains("unexpected character"), "{e}");
        assert!(parse("{{ Dimension('nope__x') }} = 1", &r).unwrap_err().contains("unknown dimension"));
        // Found by the fuzzer: a multi-byte character where an operator may be.
        assert!(parse("{{ Dimension('customer__country') }} \u{3c1}= 1", &r).is_err());
        assert!(parse("{{ Dimension('customer__country') }}\u{a0}= 'x'", &r).is_ok());
        assert!(parse("{{ TimeDimension('metric_time', 'day') }} = '2024-01-01'", &r).unwrap_err().contains("metric_time"));
    }
}
