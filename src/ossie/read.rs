//! An Ossie file as JSON with the line of every mapping (`__line`), and
//! the checks of its shape that the mapping relies on: the version, the
//! required keys and their types, each error naming file, line and key.
//! What the content means is `import`'s; this module only reads.

use std::fmt;

use serde_json::Value as Json;

/// A file that is not an Ossie model we can read: where and why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReadError {
    pub file: String,
    pub line: usize,
    /// The key path (`semantic_model[0].datasets[2].source`), empty for the file.
    pub key: String,
    pub message: String,
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.key.is_empty() {
            write!(f, "{}:{}: {}", self.file, self.line, self.message)
        } else {
            write!(f, "{}:{}: {}: {}", self.file, self.line, self.key, self.message)
        }
    }
}

impl std::error::Error for ReadError {}

/// The versions read: the released 0.1 line and the 0.2 draft.
pub const VERSIONS: [&str; 2] = ["0.1.x", "0.2.0.dev0"];

pub(crate) fn line(v: &Json) -> usize {
    v.get("__line").and_then(Json::as_u64).map_or(1, |l| usize::try_from(l).unwrap_or(1))
}

pub(crate) fn s<'a>(v: &'a Json, key: &str) -> Option<&'a str> {
    v.get(key).and_then(Json::as_str)
}

pub(crate) fn arr<'a>(v: &'a Json, key: &str) -> &'a [Json] {
    v.get(key).and_then(Json::as_array).map(Vec::as_slice).unwrap_or(&[])
}

/// Reads the text of `file` (YAML, or JSON, which is YAML too) and checks
/// its shape. The document is returned with `__line` on every mapping.
pub fn read(text: &str, file: &str) -> Result<Json, ReadError> {
    let err = |line: usize, key: &str, message: String| ReadError { file: file.to_string(), line, key: key.to_string(), message };
    let docs = match crate::model::yaml_documents_as_json(text) {
        Ok(d) => d,
        // A JSON file YAML cannot read (rare: JSON escapes YAML does not
        // know): serde_json's own reading, without lines of mappings.
        Err((line, message)) => match serde_json::from_str::<Json>(text) {
            Ok(v) => vec![v],
            Err(_) => return Err(err(line, "", message)),
        },
    };
    let doc = match docs.as_slice() {
        [one] => one.clone(),
        [] => return Err(err(1, "", "the file holds no document".into())),
        [_, second, ..] => return Err(err(line(second), "", "the file holds several documents; an Ossie model is one".into())),
    };
    if !doc.is_object() {
        return Err(err(1, "", "the document is not a mapping with `version` and `semantic_model`".into()));
    }
    let at = line(&doc);
    match doc.get("version") {
        None => return Err(err(at, "version", "missing: an Ossie model says its version (0.1.1 or 0.2.0.dev0)".into())),
        Some(Json::String(v)) if v.starts_with("0.1.") || v.starts_with("0.2.") => {}
        // `version: 0.1` unquoted is a number in YAML.
        Some(v) => return Err(err(at, "version", format!("`{}` is not a version read here ({})", plain(v), VERSIONS.join(", ")))),
    }
    let models = match doc.get("semantic_model") {
        Some(Json::Array(m)) if !m.is_empty() => m,
        Some(Json::Array(_)) => return Err(err(at, "semantic_model", "is empty: at least one semantic model".into())),
        Some(_) => return Err(err(at, "semantic_model", "must be a list of semantic models".into())),
        None => return Err(err(at, "semantic_model", "missing: the list of semantic models".into())),
    };
    for (i, m) in models.iter().enumerate() {
        check_model(m, &format!("semantic_model[{i}]"), at).map_err(|(l, k, msg)| err(l, &k, msg))?;
    }
    Ok(doc)
}

type Problem = (usize, String, String);

fn plain(v: &Json) -> String {
    match v {
        Json::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `key` of the mapping `v` must be a string (when required, present).
fn string(v: &Json, path: &str, key: &str, required: bool) -> Result<(), Problem> {
    match v.get(key) {
        Some(Json::String(x)) if !x.trim().is_empty() => Ok(()),
        Some(Json::String(_)) => Err((line(v), format!("{path}.{key}"), "is empty".into())),
        None | Some(Json::Null) if !required => Ok(()),
        None | Some(Json::Null) => Err((line(v), format!("{path}.{key}"), "missing (required)".into())),
        Some(other) => Err((line(v), format!("{path}.{key}"), format!("must be a string, not `{}`", plain(other)))),
    }
}

/// `key` must be a list of mappings, each checked by `each`.
fn list_of(v: &Json, path: &str, key: &str, required: bool, each: fn(&Json, &str, usize) -> Result<(), Problem>) -> Result<(), Problem> {
    match v.get(key) {
        Some(Json::Array(items)) => {
            for (i, item) in items.iter().enumerate() {
                let p = format!("{path}.{key}[{i}]");
                if !item.is_object() {
                    return Err((line(v), p, "must be a mapping".into()));
                }
                each(item, &p, line(v))?;
            }
            Ok(())
        }
        None | Some(Json::Null) if !required => Ok(()),
        None | Some(Json::Null) => Err((line(v), format!("{path}.{key}"), "missing (required)".into())),
        Some(other) => Err((line(v), format!("{path}.{key}"), format!("must be a list, not `{}`", plain(other)))),
    }
}

/// `key` must be a list of strings (a key's columns).
fn strings(v: &Json, path: &str, key: &str, required: bool) -> Result<(), Problem> {
    match v.get(key) {
        Some(Json::Array(items)) if items.iter().all(Json::is_string) => {
            if required && items.is_empty() {
                return Err((line(v), format!("{path}.{key}"), "is empty: at least one column".into()));
            }
            Ok(())
        }
        None | Some(Json::Null) if !required => Ok(()),
        None | Some(Json::Null) => Err((line(v), format!("{path}.{key}"), "missing (required)".into())),
        Some(_) => Err((line(v), format!("{path}.{key}"), "must be a list of column names".into())),
    }
}

fn extensions(v: &Json, path: &str) -> Result<(), Problem> {
    list_of(v, path, "custom_extensions", false, |e, p, _| {
        string(e, p, "vendor_name", true)?;
        match e.get("data") {
            Some(Json::String(_)) => Ok(()),
            _ => Err((line(e), format!("{p}.data"), "must be a JSON string (the spec's `data: '{...}'`)".into())),
        }
    })
}

fn check_model(m: &Json, path: &str, parent: usize) -> Result<(), Problem> {
    if !m.is_object() {
        return Err((parent, path.to_string(), "must be a mapping".into()));
    }
    string(m, path, "name", true)?;
    extensions(m, path)?;
    list_of(m, path, "datasets", true, check_dataset)?;
    if arr(m, "datasets").is_empty() {
        return Err((line(m), format!("{path}.datasets"), "is empty: at least one dataset".into()));
    }
    list_of(m, path, "relationships", false, |r, p, _| {
        string(r, p, "name", true)?;
        string(r, p, "from", true)?;
        string(r, p, "to", true)?;
        strings(r, p, "from_columns", true)?;
        strings(r, p, "to_columns", true)?;
        if arr(r, "from_columns").len() != arr(r, "to_columns").len() {
            return Err((line(r), format!("{p}.to_columns"), "must have as many columns as from_columns (they pair in order)".into()));
        }
        extensions(r, p)
    })?;
    list_of(m, path, "metrics", false, |x, p, _| {
        string(x, p, "name", true)?;
        expression(x, p)?;
        extensions(x, p)
    })
}

fn check_dataset(d: &Json, path: &str, _: usize) -> Result<(), Problem> {
    string(d, path, "name", true)?;
    string(d, path, "source", true)?;
    strings(d, path, "primary_key", false)?;
    if let Some(keys) = d.get("unique_keys").filter(|k| !k.is_null()) {
        let ok = keys.as_array().is_some_and(|ks| ks.iter().all(|k| k.as_array().is_some_and(|cs| cs.iter().all(Json::is_string))));
        if !ok {
            return Err((line(d), format!("{path}.unique_keys"), "must be a list of column lists".into()));
        }
    }
    extensions(d, path)?;
    list_of(d, path, "fields", false, |f, p, _| {
        string(f, p, "name", true)?;
        expression(f, p)?;
        if let Some(dim) = f.get("dimension").filter(|x| !x.is_null()) {
            if !dim.is_object() || dim.get("is_time").is_some_and(|t| !t.is_boolean() && !t.is_null()) {
                return Err((line(f), format!("{p}.dimension"), "must be a mapping with an optional boolean `is_time`".into()));
            }
        }
        extensions(f, p)
    })
}

/// `expression: {dialects: [{dialect, expression}, ...]}`, at least one.
fn expression(v: &Json, path: &str) -> Result<(), Problem> {
    let Some(e) = v.get("expression").filter(|e| !e.is_null()) else {
        return Err((line(v), format!("{path}.expression"), "missing (required): `{dialects: [{dialect: ANSI_SQL, expression: ...}]}`".into()));
    };
    if !e.is_object() {
        return Err((line(v), format!("{path}.expression"), "must be a mapping with `dialects`".into()));
    }
    let p = format!("{path}.expression");
    list_of(e, &p, "dialects", true, |d, p, _| {
        string(d, p, "dialect", true)?;
        string(d, p, "expression", true)
    })?;
    if arr(e, "dialects").is_empty() {
        return Err((line(e), format!("{p}.dialects"), "is empty: at least one dialect's expression".into()));
    }
    Ok(())
}
