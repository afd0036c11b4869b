//! Strict, position-aware reading of YAML documents.
//!
//! saphyr's marked nodes keep the line of every key and value; this module
//! turns them into typed values while collecting a `Diagnostic` for every
//! unknown key, missing key, wrong type and bad identifier, instead of
//! stopping at the first.

use std::path::{Path, PathBuf};

use saphyr::{LoadableYamlNode, MarkedYamlOwned, ScalarOwned, YamlDataOwned};

use super::{close_matches, is_identifier, Diagnostic, Diagnostics, Literal};

pub(crate) type Node = MarkedYamlOwned;

/// Every document of a YAML text as JSON, each mapping with its line as
/// `"__line"` (for readers of other tools' YAML, such as a dbt project,
/// that report where an item came from). Bounded like the model loader:
/// size, nesting depth; aliases and unreadable values become null.
pub fn documents_as_json(text: &str) -> Result<Vec<serde_json::Value>, (usize, String)> {
    if text.len() > MAX_YAML_BYTES {
        return Err((1, format!("the file is {} bytes; at most {MAX_YAML_BYTES} are read", text.len())));
    }
    if let Some(line) = too_deep(text) {
        return Err((line, format!("the YAML nests deeper than {MAX_YAML_DEPTH} levels")));
    }
    let docs = MarkedYamlOwned::load_from_str(text).map_err(|e| (e.marker().line(), format!("invalid YAML: {}", e.info())))?;
    Ok(docs.iter().map(node_as_json).collect())
}

fn node_as_json(node: &Node) -> serde_json::Value {
    use serde_json::Value as J;
    match &node.data {
        YamlDataOwned::Value(ScalarOwned::Null) => J::Null,
        YamlDataOwned::Value(ScalarOwned::Boolean(b)) => J::Bool(*b),
        YamlDataOwned::Value(ScalarOwned::Integer(i)) => J::from(*i),
        YamlDataOwned::Value(ScalarOwned::FloatingPoint(f)) => serde_json::Number::from_f64(f.into_inner()).map_or(J::Null, J::Number),
        YamlDataOwned::Value(ScalarOwned::String(s)) => J::String(s.clone()),
        YamlDataOwned::Representation(s, ..) => J::String(s.to_string()),
        YamlDataOwned::Sequence(items) => J::Array(items.iter().map(node_as_json).collect()),
        YamlDataOwned::Mapping(entries) => {
            let mut m = serde_json::Map::new();
            m.insert("__line".into(), J::from(line_of(node)));
            for (k, v) in entries.iter() {
                let key = match node_as_json(k) {
                    J::String(s) => s,
                    other => other.to_string(),
                };
                m.insert(key, node_as_json(v));
            }
            J::Object(m)
        }
        YamlDataOwned::Tagged(_, inner) => node_as_json(inner),
        YamlDataOwned::Alias(_) | YamlDataOwned::BadValue => J::Null,
    }
}

/// `s` as a YAML double-quoted scalar, for the files schemabrain writes
/// (JSON's string escaping is valid YAML).
pub fn quoted(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// The deepest nesting of sequences and mappings a model file may have.
/// Deeper documents are refused before the node tree is built: it is
/// recursive, and 100,000 nested brackets would overflow the stack.
pub const MAX_YAML_DEPTH: usize = 64;
/// The largest model file read, in bytes.
pub const MAX_YAML_BYTES: usize = 8 << 20;

/// Parses every document of a file, or reports the syntax error with its line.
pub(crate) fn parse_documents(file: &Path, text: &str, diags: &mut Diagnostics) -> Vec<Node> {
    if text.len() > MAX_YAML_BYTES {
        diags.push(Diagnostic::new(file, 1, "", format!("the file is {} bytes; model files are at most {MAX_YAML_BYTES}", text.len())));
        return Vec::new();
    }
    if let Some(line) = too_deep(text) {
        diags.push(Diagnostic::new(file, line, "", format!("the YAML nests deeper than {MAX_YAML_DEPTH} levels of sequences and mappings")));
        return Vec::new();
    }
    match MarkedYamlOwned::load_from_str(text) {
        Ok(docs) => docs,
        Err(e) => {
            diags.push(Diagnostic::new(file, e.marker().line(), "", format!("invalid YAML: {}", e.info())));
            Vec::new()
        }
    }
}

/// The line where nesting first exceeds the bound, read from saphyr's
/// event stream (an iterative parser, so the check itself cannot overflow).
/// Syntax errors are left to the loader, which reports them with context.
fn too_deep(text: &str) -> Option<usize> {
    use saphyr_parser::{Event, Parser};
    let mut depth = 0usize;
    for event in Parser::new_from_str(text) {
        let Ok((event, span)) = event else { return None };
        match event {
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                depth += 1;
                if depth > MAX_YAML_DEPTH {
                    return Some(span.start.line().max(1));
                }
            }
            Event::SequenceEnd | Event::MappingEnd => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    None
}

pub(crate) fn line_of(node: &Node) -> usize {
    node.span.start.line().max(1)
}

/// Collects diagnostics for one file.
pub(crate) struct Reader<'d> {
    pub file: PathBuf,
    pub diags: &'d mut Diagnostics,
    /// Lines of the keys read from the current document, by dotted path.
    pub key_lines: std::collections::BTreeMap<String, usize>,
}

/// A value found under a key, with its dotted path for messages.
#[derive(Clone, Copy)]
pub(crate) struct Field<'n> {
    pub node: &'n Node,
    pub line: usize,
}

pub(crate) struct Mapping<'n> {
    entries: Vec<(String, Field<'n>)>,
    pub line: usize,
    pub path: String,
}

impl<'n> Mapping<'n> {
    pub fn get(&self, key: &str) -> Option<Field<'n>> {
        self.entries.iter().find(|(k, _)| k == key).map(|(_, f)| *f)
    }

    pub fn key_path(&self, key: &str) -> String {
        join_path(&self.path, key)
    }

    pub fn has(&self, key: &str) -> bool {
        self.get(key).is_some()
    }
}

pub(crate) fn join_path(parent: &str, key: &str) -> String {
    if parent.is_empty() {
        key.to_string()
    } else {
        format!("{parent}.{key}")
    }
}

fn scalar(node: &Node) -> Option<&ScalarOwned> {
    match &node.data {
        YamlDataOwned::Value(s) => Some(s),
        YamlDataOwned::Tagged(_, inner) => scalar(inner),
        _ => None,
    }
}

fn kind_name(node: &Node) -> &'static str {
    match &node.data {
        YamlDataOwned::Value(ScalarOwned::Null) => "null",
        YamlDataOwned::Value(ScalarOwned::Boolean(_)) => "a boolean",
        YamlDataOwned::Value(ScalarOwned::Integer(_)) => "an integer",
        YamlDataOwned::Value(ScalarOwned::FloatingPoint(_)) => "a number",
        YamlDataOwned::Value(ScalarOwned::String(_)) | YamlDataOwned::Representation(..) => "a string",
        YamlDataOwned::Sequence(_) => "a list",
        YamlDataOwned::Mapping(_) => "a mapping",
        YamlDataOwned::Tagged(_, inner) => kind_name(inner),
        YamlDataOwned::Alias(_) => "an alias",
        YamlDataOwned::BadValue => "an unreadable value",
    }
}

impl Reader<'_> {
    pub fn error(&mut self, line: usize, key: &str, message: impl Into<String>) {
        self.diags.push(Diagnostic::new(&self.file, line, key, message));
    }

    pub fn push(&mut self, d: Diagnostic) {
        self.diags.push(d);
    }

    pub fn diag(&self, line: usize, key: &str, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(&self.file, line, key, message)
    }

    /// Reads a mapping, reporting keys outside `allowed` (with close matches)
    /// and `required` keys that are missing.
    pub fn mapping<'n>(
        &mut self,
        node: &'n Node,
        path: &str,
        allowed: &[&str],
        required: &[&str],
    ) -> Option<Mapping<'n>> {
        let YamlDataOwned::Mapping(map) = &node.data else {
            let what = if path.is_empty() { "the document" } else { "this key" };
            self.error(line_of(node), path, format!("{what} must be a mapping, found {}", kind_name(node)));
            return None;
        };
        let mut entries = Vec::new();
        for (k, v) in map.iter() {
            let key_line = line_of(k);
            let key = match scalar(k) {
                Some(ScalarOwned::String(s)) => s.clone(),
                // YAML 1.2 reads `on` as a string, but `true:`/`1:` are other scalars.
                Some(ScalarOwned::Boolean(b)) => b.to_string(),
                Some(ScalarOwned::Integer(i)) => i.to_string(),
                _ => {
                    self.error(key_line, path, "keys must be plain strings");
                    continue;
                }
            };
            if !allowed.contains(&key.as_str()) {
                // `{type: decimal(10,2)}` splits at the comma in flow style.
                let hint = if key.contains(')') {
                    " (a `,` inside `{...}` splits the value: quote it, e.g. \"decimal(10,2)\")"
                } else {
                    ""
                };
                let d = self
                    .diag(key_line, &join_path(path, &key), format!("unknown key `{key}`{hint}"))
                    .allowed(allowed.iter().copied())
                    .suggest(close_matches(&key, allowed.iter().copied()));
                self.push(d);
                continue;
            }
            self.key_lines.insert(join_path(path, &key), key_line);
            entries.push((key, Field { node: v, line: line_of(v).max(key_line) }));
        }
        let line = line_of(node);
        for req in required {
            if !entries.iter().any(|(k, _)| k == req) {
                self.error(line, &join_path(path, req), format!("missing required key `{req}`"));
            }
        }
        Some(Mapping { entries, line, path: path.to_string() })
    }

    pub fn string(&mut self, field: Field<'_>, path: &str) -> Option<String> {
        match scalar(field.node) {
            Some(ScalarOwned::String(s)) => Some(s.clone()),
            _ => {
                self.error(field.line, path, format!("expected a string, found {}", kind_name(field.node)));
                None
            }
        }
    }

    /// A string that must be an identifier (`^[A-Za-z_][A-Za-z0-9_$]*$`).
    pub fn identifier(&mut self, field: Field<'_>, path: &str) -> Option<String> {
        let s = self.string(field, path)?;
        if is_identifier(&s) {
            Some(s)
        } else {
            self.error(
                field.line,
                path,
                format!("`{s}` is not a valid name: use letters, digits and `_`, starting with a letter or `_`"),
            );
            None
        }
    }

    /// A string from a closed set; reports the set and close matches.
    pub fn one_of(&mut self, field: Field<'_>, path: &str, allowed: &[&str]) -> Option<String> {
        let Some(ScalarOwned::String(s)) = scalar(field.node) else {
            let d = self
                .diag(field.line, path, format!("expected one of the names below, found {}", kind_name(field.node)))
                .allowed(allowed.iter().copied());
            self.push(d);
            return None;
        };
        let s = s.clone();
        if allowed.contains(&s.as_str()) {
            return Some(s);
        }
        let d = self
            .diag(field.line, path, format!("`{s}` is not allowed here"))
            .allowed(allowed.iter().copied())
            .suggest(close_matches(&s, allowed.iter().copied()));
        self.push(d);
        None
    }

    pub fn integer(&mut self, field: Field<'_>, path: &str) -> Option<i64> {
        match scalar(field.node) {
            Some(ScalarOwned::Integer(i)) => Some(*i),
            _ => {
                self.error(field.line, path, format!("expected an integer, found {}", kind_name(field.node)));
                None
            }
        }
    }

    pub fn boolean(&mut self, field: Field<'_>, path: &str) -> Option<bool> {
        match scalar(field.node) {
            Some(ScalarOwned::Boolean(b)) => Some(*b),
            _ => {
                self.error(field.line, path, format!("expected true or false, found {}", kind_name(field.node)));
                None
            }
        }
    }

    /// A JSON-like scalar for filter values: booleans, numbers and strings.
    pub fn literal(&mut self, field: Field<'_>, path: &str) -> Option<Literal> {
        match scalar(field.node) {
            Some(ScalarOwned::Boolean(b)) => Some(Literal::Bool(*b)),
            Some(ScalarOwned::Integer(i)) => Some(Literal::Int(*i)),
            Some(ScalarOwned::FloatingPoint(f)) => Some(Literal::Float(f.into_inner())),
            Some(ScalarOwned::String(s)) => Some(Literal::Text(s.clone())),
            _ => {
                self.error(field.line, path, format!("expected a string, number or boolean, found {}", kind_name(field.node)));
                None
            }
        }
    }

    /// Items of a list, each with its `path[i]`.
    pub fn list<'n>(&mut self, field: Field<'n>, path: &str) -> Option<Vec<(String, Field<'n>)>> {
        match &field.node.data {
            YamlDataOwned::Sequence(items) => Some(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, n)| (format!("{path}[{i}]"), Field { node: n, line: line_of(n) }))
                    .collect(),
            ),
            _ => {
                self.error(field.line, path, format!("expected a list, found {}", kind_name(field.node)));
                None
            }
        }
    }

    /// `version: 1`, the only version there is.
    pub fn version(&mut self, map: &Mapping<'_>) {
        if let Some(f) = map.get("version") {
            match scalar(f.node) {
                Some(ScalarOwned::Integer(1)) => {}
                _ => self.error(f.line, "version", "`version` must be the integer 1"),
            }
        }
    }
}
