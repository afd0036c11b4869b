//! `CheckedModel`: a model whose every reference resolves, with the join
//! graph built once. Only `CheckedModel::new` (which the loader and
//! `Project` call) builds one, so the planner can rely on what the checks
//! established instead of re-checking or panicking.

use std::ops::Deref;

use super::graph::JoinGraph;
use super::{check_references, Diagnostics, SemanticModel};

#[derive(Clone, Debug)]
pub struct CheckedModel {
    model: SemanticModel,
    graph: JoinGraph,
}

impl CheckedModel {
    /// Checks every cross-reference of `model` (the loader's per-file checks
    /// have run when it came from disk; a model built by hand gets the
    /// reference checks here) and builds its join graph.
    pub fn new(model: SemanticModel) -> Result<CheckedModel, Diagnostics> {
        let mut diags = Diagnostics::default();
        check_references(&model, &mut diags);
        if !diags.is_empty() {
            return Err(diags);
        }
        let graph = JoinGraph::new(&model);
        Ok(CheckedModel { model, graph })
    }

    pub fn graph(&self) -> &JoinGraph {
        &self.graph
    }

    /// The project settings (`schemabrain.yaml`): where the data lives and
    /// the defaults. They are no definitions, so changing them needs no new
    /// check.
    pub fn settings_mut(&mut self) -> &mut super::Settings {
        &mut self.model.settings
    }

    /// The PII categories one caller sees beyond the project's policy (its
    /// roles' `pii_allowed`): a decision input like the settings, no
    /// definition, so no new check. `PiiPolicy::sees` never lets a
    /// catastrophic category through, whatever is given here.
    pub fn widen_pii(&mut self, categories: Vec<String>) {
        self.model.pii_policy.widened = categories;
    }

    /// The model back, to change it (then check it again).
    pub fn into_model(self) -> SemanticModel {
        self.model
    }
}

/// Read access to the definitions; there is no mutable access.
impl Deref for CheckedModel {
    type Target = SemanticModel;

    fn deref(&self) -> &SemanticModel {
        &self.model
    }
}
