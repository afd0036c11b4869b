//! Human output: result tables, SQL previews, errors with their recovery.

use serde_json::Value as Json;

use crate::envelope::Envelope;

fn cell(v: &Json) -> String {
    match v {
        Json::Null => "NULL".into(),
        Json::String(s) => s.clone(),
        Json::Number(n) => match n.as_f64() {
            Some(f) if n.is_f64() => format!("{f:.2}"),
            _ => n.to_string(),
        },
        other => other.to_string(),
    }
}

fn table(data: &Json) {
    let names: Vec<String> = data["columns"]
        .as_array()
        .map(|cols| cols.iter().map(|c| c["name"].as_str().unwrap_or("").to_string()).collect())
        .unwrap_or_default();
    let rows: Vec<Vec<String>> = data["rows"]
        .as_array()
        .map(|rows| rows.iter().map(|r| r.as_array().map(|r| r.iter().map(cell).collect()).unwrap_or_default()).collect())
        .unwrap_or_default();
    let mut widths: Vec<usize> = names.iter().map(|n| n.chars().count()).collect();
    for r in &rows {
        for (i, c) in r.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(c.chars().count());
            }
        }
    }
    let line = |cells: &[String]| {
        let parts: Vec<String> = cells.iter().zip(&widths).map(|(c, w)| format!("{c:<w$}")).collect();
        out!("  {}", parts.join("  "));
    };
    line(&names);
    out!("  {}", widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().join("  "));
    for r in &rows {
        line(r);
    }
    out!("  ({} row{})", rows.len(), if rows.len() == 1 { "" } else { "s" });
}

fn notes(data: &Json) {
    for n in data["notes"].as_array().into_iter().flatten() {
        out!("  note: {}", n.as_str().unwrap_or_default());
    }
}

/// A failed answer: kind, message and the call to make next.
fn error(env: &Envelope) {
    let Some(err) = env.tool_error() else { return };
    eprintln!("{}[{}]: {}", env.status().as_str(), err.kind().as_str(), err.message());
    let r = err.recovery();
    if let Some(tool) = r.suggested_tool() {
        let args = r.suggested_args().map(|a| Json::Object(a.clone()).to_string()).unwrap_or_default();
        eprintln!("  next: {tool} {args}");
    }
    if !r.fuzzy_matches().is_empty() {
        eprintln!("  did you mean: {}", r.fuzzy_matches().join(", "));
    }
}

pub fn envelope(env: &Envelope, title: &str) {
    let Some(data) = env.data() else {
        error(env);
        return;
    };
    out!("{title} [{}{}]", env.status().as_str(), env.degradation_reason().map(|r| format!(": {}", r.as_str())).unwrap_or_default());
    table(data);
    notes(data);
    if let Some(sql) = data["sql"].as_str() {
        out!("  sql:\n{}", indent(sql));
    }
}

/// `compile` output: the SQL, its parameters as comments, and notes.
pub fn compiled(env: &Envelope) {
    let Some(data) = env.data() else {
        error(env);
        return;
    };
    if let Some(sql) = data["sql"].as_str() {
        out!("{sql}");
    }
    for (i, p) in data["params"].as_array().into_iter().flatten().enumerate() {
        out!("-- ${} = {p}", i + 1);
    }
    for n in data["notes"].as_array().into_iter().flatten() {
        eprintln!("note: {}", n.as_str().unwrap_or_default());
    }
    let dialect = data["dialect"].as_str().unwrap_or_default();
    for check in data.get("validation").and_then(|v| v["engines"].as_array()).into_iter().flatten() {
        let (engine, verb) = match check["engine"].as_str() {
            Some("datafusion") => ("DataFusion", "plans"),
            _ => ("DuckDB", "prepares"),
        };
        let checked = check["dialect"].as_str().unwrap_or_default();
        let what = if checked == dialect { "this SQL".to_string() } else { format!("the {checked} SQL of this request") };
        match check["ok"].as_bool() {
            Some(true) => eprintln!("validated: {engine} {verb} {what} against the model's tables"),
            _ => eprintln!("not validated on {engine}: {}", check["reason"].as_str().unwrap_or_default()),
        }
    }
}

fn indent(s: &str) -> String {
    s.lines().map(|l| format!("    {l}")).collect::<Vec<_>>().join("\n")
}
