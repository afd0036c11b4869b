//! get_metric's trust signals (charter v1.2), derived from the plan rather
//! than fixed: every definition the answer rests on (the metrics asked for
//! and their inputs, the entities read, the joins walked, semi-joins
//! included) is rated from its origin and provenance, and the answer is as
//! trustworthy as its weakest definition, one bucket lower when the plan
//! degraded. The rules are in docs/mcp.md ("Trust signals").
//!
//! Architecture invariant: reads the model and the plan only; no SQL, no IO.

use serde_json::Value as Json;

use crate::envelope::{Confidence, InferenceMethod, Provenance, ProvenanceSource, ValidationState};
use crate::model::{DefinitionOrigin, Provenance as ModelProvenance, SemanticModel};
use crate::plan::RequestPlan;

/// One definition an answer used, rated; it borrows the model's names (an
/// answer is built per request, and these were most of its allocations).
#[derive(Clone, Debug, PartialEq)]
pub struct Used<'m> {
    pub kind: &'static str,
    pub name: &'m str,
    pub origin: DefinitionOrigin,
    pub inference_method: &'m str,
    pub validation_state: &'m str,
    pub confidence: Confidence,
    /// The definition's own evidence sentences, and where it came from
    /// (a dbt file and line, a source table), as its provenance block says.
    pub evidence: &'m [String],
    pub source: Option<&'m str>,
}

impl<'m> Used<'m> {
    /// Rates one definition from its origin and provenance block.
    pub fn new(kind: &'static str, name: &'m str, origin: DefinitionOrigin, provenance: Option<&'m ModelProvenance>) -> Self {
        let method = provenance.and_then(|p| p.inference_method.as_deref()).unwrap_or(match origin {
            DefinitionOrigin::Manual => "manually_authored",
            DefinitionOrigin::DbtImport => "dbt_import",
            // Suggested with no word on how: as weak as a guess, and not
            // said to come from a model (none runs here).
            DefinitionOrigin::Suggested => UNRECORDED,
        });
        let state = provenance.and_then(|p| p.validation_state.as_deref()).unwrap_or(match origin {
            DefinitionOrigin::Suggested => "draft",
            _ => "applied",
        });
        // Methods that read a declared fact rank above guessed or measured ones.
        let declared = matches!(method, "manually_authored" | "fk_constraint" | "dbt_import");
        let mut confidence = match (state, declared) {
            ("confirmed", _) | ("applied", true) => Confidence::High,
            ("applied", false) | ("draft", true) => Confidence::Medium,
            _ => Confidence::Low,
        };
        // The definition's own stated confidence can only lower it.
        if let Some(stated) = provenance.and_then(|p| p.confidence.as_deref()) {
            let stated = match stated {
                "low" => Confidence::Low,
                "medium" => Confidence::Medium,
                _ => Confidence::High,
            };
            confidence = confidence.min(stated);
        }
        let evidence = provenance.map(|p| p.evidence.as_slice()).unwrap_or(&[]);
        let source = provenance.and_then(|p| p.source.as_deref());
        Used { kind, name, origin, inference_method: method, validation_state: state, confidence, evidence, source }
    }

    /// The per-item trust fields a listing shows: `confidence` and the
    /// charter `provenance` block.
    pub fn item_fields(&self) -> [(&'static str, Json); 2] {
        [
            ("confidence", serde_json::to_value(self.confidence).unwrap_or(Json::Null)),
            ("provenance", serde_json::to_value(self.provenance()).unwrap_or(Json::Null)),
        ]
    }

    /// Adds [`Used::item_fields`] to a JSON object.
    pub fn stamp(&self, item: &mut Json) {
        if let Json::Object(m) = item {
            for (k, v) in self.item_fields() {
                m.insert(k.into(), v);
            }
        }
    }

    pub fn to_json(&self) -> Json {
        crate::json::object([
            ("kind", self.kind.into()),
            ("name", self.name.into()),
            ("origin", self.origin.as_str().into()),
            ("inference_method", self.inference_method.into()),
            ("validation_state", self.validation_state.into()),
            ("confidence", serde_json::to_value(self.confidence).unwrap_or(Json::Null)),
        ])
    }

    /// The charter's provenance block for this definition.
    pub fn provenance(&self) -> Provenance {
        let method = match self.inference_method {
            "manually_authored" => Some(InferenceMethod::ManuallyAuthored),
            "llm_suggested" => Some(InferenceMethod::LlmSuggested),
            "fk_constraint" => Some(InferenceMethod::FkConstraint),
            "dbt_import" => Some(InferenceMethod::DbtImport),
            "observed_in_query_log" => Some(InferenceMethod::ObservedInQueryLog),
            // name_match, data_profile: ours, not the charter's; said in observed_in.
            _ => None,
        };
        let source = match method {
            Some(InferenceMethod::ManuallyAuthored | InferenceMethod::FkConstraint | InferenceMethod::DbtImport) => ProvenanceSource::Schema,
            Some(InferenceMethod::LlmSuggested) => ProvenanceSource::Llm,
            _ => ProvenanceSource::Inferred,
        };
        let mut p = Provenance::new(source);
        p.inference_method = method;
        p.validation_state = match self.validation_state {
            "draft" => Some(ValidationState::Draft),
            "confirmed" => Some(ValidationState::Confirmed),
            _ => Some(ValidationState::Applied),
        };
        // Ours (name_match, data_profile, unrecorded), the evidence and
        // where the definition came from are said in words.
        let mut said = Vec::new();
        if method.is_none() {
            said.push(format!("{} `{}` ({})", self.kind, self.name, self.inference_method));
        }
        if let Some(s) = self.source {
            said.push(format!("from {}", crate::model::echo(s)));
        }
        for e in self.evidence.iter().take(4) {
            said.push(crate::model::echo(e));
        }
        if !said.is_empty() {
            p.observed_in = Some(said.join("; "));
        }
        p
    }
}

/// The inference method of a `suggested` definition whose provenance
/// block does not name one.
pub const UNRECORDED: &str = "suggested_method_unrecorded";

/// The weakest of several ratings, the first of the weakest on a tie.
pub fn weakest<'a, 'm>(used: impl IntoIterator<Item = &'a Used<'m>>) -> Option<&'a Used<'m>>
where
    'm: 'a,
{
    let mut out: Option<&'a Used<'m>> = None;
    for u in used {
        if out.is_none_or(|o| u.confidence < o.confidence) {
            out = Some(u);
        }
    }
    out
}

/// Every definition `plan` rests on, metrics first, each once.
pub fn definitions_used<'m>(model: &'m SemanticModel, plan: &RequestPlan) -> Vec<Used<'m>> {
    let mut out: Vec<Used<'m>> = Vec::new();
    // A plan rests on a handful of definitions: a scan beats a set.
    let mut push = |u: Used<'m>| {
        if !out.iter().any(|o| o.kind == u.kind && o.name == u.name) {
            out.push(u);
        }
    };
    for name in plan.output_names() {
        if let Some(d) = model.derived.get(&name) {
            push(Used::new("metric", &d.name, d.origin, d.provenance.as_ref()));
        }
    }
    for c in &plan.components {
        if let Some(m) = model.metric(&c.metric) {
            push(Used::new("metric", &m.name, m.origin, m.provenance.as_ref()));
        }
    }
    for c in &plan.components {
        let steps = c.joins.iter().chain(c.semi_joins.iter().flat_map(|s| s.steps.iter()));
        let mut entities = vec![c.anchor.entity.as_str()];
        for step in steps {
            if let Some(j) = model.join(&step.join) {
                push(Used::new("join", &j.name, j.origin, j.provenance.as_ref()));
            }
            entities.push(step.to.entity.as_str());
        }
        for e in entities {
            if let Some(e) = model.entity(e) {
                push(Used::new("entity", &e.name, e.origin, e.provenance.as_ref()));
            }
        }
    }
    out
}

/// The answer's confidence: its weakest definition's, and at most MEDIUM
/// when the plan degraded.
pub fn confidence(used: &[Used<'_>], degraded: bool) -> Confidence {
    let weakest = used.iter().map(|u| u.confidence).min().unwrap_or(Confidence::High);
    if degraded {
        weakest.min(Confidence::Medium)
    } else {
        weakest
    }
}

/// The charter provenance of the answer: its weakest definition's (the
/// first of the weakest, metrics before joins before entities).
pub fn provenance(used: &[Used<'_>]) -> Option<Provenance> {
    let weakest = used.iter().map(|u| u.confidence).min()?;
    used.iter().find(|u| u.confidence == weakest).map(Used::provenance)
}
