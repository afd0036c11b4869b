//! A project opened for use: the model, its catalog snapshot when there is
//! one, and the directory they came from.
//!
//! Owns the one place where a directory becomes a checked model, so the CLI,
//! the tools and the tests all see the same diagnostics.

use std::path::{Path, PathBuf};

use crate::catalog::{self, Catalog};
use crate::model::{load_project, resolve_project_dir, CheckedModel, Diagnostic, Diagnostics, SemanticModel};

#[derive(Clone, Debug)]
pub struct Project {
    pub dir: PathBuf,
    /// Checked: the planner accepts nothing else.
    pub model: CheckedModel,
    pub catalog: Option<Catalog>,
    /// The rows the caller this project was scoped to may read (row-level
    /// security, `auth::row_filter`): every query through the tools reads
    /// each table through it. `None`: every row (the project as opened).
    pub rows: Option<std::sync::Arc<crate::auth::row_filter::RowRestriction>>,
}

impl Project {
    /// Loads `dir` and overlays its catalog snapshot. Any diagnostic makes
    /// the project unusable: all of them are returned together.
    pub fn open(dir: &Path) -> Result<Project, Diagnostics> {
        let dir = resolve_project_dir(dir);
        let (model, diags) = load_project(&dir);
        if !diags.is_empty() {
            return Err(diags);
        }
        let snapshot = Catalog::load_snapshot(&dir).map_err(|msg| {
            let mut d = Diagnostics::default();
            d.push(Diagnostic::new(dir.join(catalog::SNAPSHOT_PATH), 0, "", msg));
            d
        })?;
        Project::from_parts(dir, model, snapshot)
    }

    /// Loads `dir` ignoring its catalog snapshot: for callers about to
    /// introspect the live source, whose catalog supersedes the snapshot.
    pub fn open_declared(dir: &Path) -> Result<Project, Diagnostics> {
        let dir = resolve_project_dir(dir);
        let (model, diags) = load_project(&dir);
        if !diags.is_empty() {
            return Err(diags);
        }
        Ok(Project { dir, model: CheckedModel::new(model)?, catalog: None, rows: None })
    }

    /// Builds a project from a model already loaded, overlaying `catalog`.
    pub fn from_parts(dir: PathBuf, mut model: SemanticModel, catalog: Option<Catalog>) -> Result<Project, Diagnostics> {
        if let Some(c) = &catalog {
            let diags = catalog::overlay(&mut model, c);
            if !diags.is_empty() {
                return Err(diags);
            }
        }
        Ok(Project { dir, model: CheckedModel::new(model)?, catalog, rows: None })
    }

    /// Replaces the catalog (after an engine introspected the source) and
    /// re-checks the model against it.
    pub fn with_catalog(self, catalog: Catalog) -> Result<Project, Diagnostics> {
        if self.catalog.is_none() {
            // The model is still as declared: no need to read the files again.
            return Project::from_parts(self.dir, self.model.into_model(), Some(catalog));
        }
        // Start from the model as declared, not as overlaid by an older catalog.
        let (model, diags) = load_project(&self.dir);
        if !diags.is_empty() {
            return Err(diags);
        }
        Project::from_parts(self.dir, model, Some(catalog))
    }

    /// The source URL of `schemabrain.yaml`, with a relative `duckdb:` path
    /// made relative to the project directory.
    pub fn source(&self) -> Option<String> {
        self.model.settings.source.as_deref().map(|s| crate::engine::resolve_source(s, &self.dir))
    }
}
