//! JSON → block YAML for the Ossie file `export` writes: mappings and
//! lists indented, strings double-quoted (JSON's escaping is valid YAML),
//! so any reader of YAML 1.2 gets back the same JSON. Knows nothing of
//! Ossie itself.

use serde_json::Value as Json;

/// `v` as a YAML document.
pub fn to_yaml(v: &Json) -> String {
    let mut out = String::new();
    block(v, 0, &mut out);
    out
}

fn scalar(v: &Json) -> String {
    match v {
        Json::String(s) => crate::model::yaml_quoted(s),
        Json::Array(a) if a.is_empty() => "[]".into(),
        Json::Object(o) if o.is_empty() => "{}".into(),
        other => other.to_string(),
    }
}

fn key(k: &str) -> String {
    let plain = k.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_') && k.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    // `on`, `yes`, `no` are booleans to YAML 1.1 readers: quoted.
    if plain && !matches!(k.to_ascii_lowercase().as_str(), "on" | "off" | "yes" | "no" | "y" | "n" | "true" | "false" | "null") {
        k.to_string()
    } else {
        crate::model::yaml_quoted(k)
    }
}

fn nested(v: &Json) -> bool {
    matches!(v, Json::Array(a) if !a.is_empty()) || matches!(v, Json::Object(o) if !o.is_empty())
}

fn block(v: &Json, indent: usize, out: &mut String) {
    let pad = " ".repeat(indent);
    match v {
        Json::Object(o) if !o.is_empty() => {
            for (k, x) in o {
                if nested(x) {
                    out.push_str(&format!("{pad}{}:\n", key(k)));
                    block(x, indent + 2, out);
                } else {
                    out.push_str(&format!("{pad}{}: {}\n", key(k), scalar(x)));
                }
            }
        }
        Json::Array(a) if !a.is_empty() => {
            for x in a {
                if nested(x) {
                    // The item's first line follows the dash.
                    let mut inner = String::new();
                    block(x, indent + 2, &mut inner);
                    let trimmed = inner.get(indent + 2..).unwrap_or("");
                    out.push_str(&format!("{pad}- {trimmed}"));
                } else {
                    out.push_str(&format!("{pad}- {}\n", scalar(x)));
                }
            }
        }
        other => out.push_str(&format!("{pad}{}\n", scalar(other))),
    }
}
