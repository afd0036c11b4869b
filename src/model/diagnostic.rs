//! A problem found while loading or checking a project, with where it is.

use std::fmt;
use std::path::PathBuf;

/// One problem in one file. `key` is the dotted path of the offending key
/// inside the document (`measure.agg`, `on[0].source`), empty for the whole
/// document.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub file: PathBuf,
    pub line: usize,
    pub key: String,
    pub message: String,
    /// What would have been accepted here, when that is a short closed list.
    pub allowed: Vec<String>,
    /// Close matches to what was written.
    pub suggestions: Vec<String>,
}

impl Diagnostic {
    pub fn new(file: impl Into<PathBuf>, line: usize, key: impl Into<String>, message: impl Into<String>) -> Self {
        Diagnostic {
            file: file.into(),
            line,
            key: key.into(),
            message: message.into(),
            allowed: Vec::new(),
            suggestions: Vec::new(),
        }
    }

    pub fn allowed<S: AsRef<str>>(mut self, allowed: impl IntoIterator<Item = S>) -> Self {
        self.allowed = allowed.into_iter().map(|s| s.as_ref().to_string()).collect();
        self
    }

    pub fn suggest(mut self, suggestions: Vec<String>) -> Self {
        self.suggestions = suggestions;
        self
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)?;
        if !self.key.is_empty() {
            write!(f, ": key `{}`", self.key)?;
        }
        write!(f, ": {}", self.message)?;
        if !self.allowed.is_empty() {
            write!(f, "; allowed: {}", self.allowed.join(", "))?;
        }
        if !self.suggestions.is_empty() {
            write!(f, "; did you mean {}?", self.suggestions.join(" or "))?;
        }
        Ok(())
    }
}

/// All problems of a project, sorted by file and line so reports are stable.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Diagnostics(pub Vec<Diagnostic>);

impl Diagnostics {
    pub fn push(&mut self, d: Diagnostic) {
        self.0.push(d);
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn iter(&self) -> impl Iterator<Item = &Diagnostic> {
        self.0.iter()
    }

    pub fn sort(&mut self) {
        self.0.sort_by(|a, b| (&a.file, a.line, &a.key, &a.message).cmp(&(&b.file, b.line, &b.key, &b.message)));
        self.0.dedup();
    }
}

impl fmt::Display for Diagnostics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for d in &self.0 {
            writeln!(f, "{d}")?;
        }
        write!(f, "{} error{}", self.0.len(), if self.0.len() == 1 { "" } else { "s" })
    }
}

impl std::error::Error for Diagnostics {}
