//! PII: the 12-category taxonomy, a column-name classifier, the policy
//! (`pii_policy.yaml` overrides first, then the classifier) and the checks
//! `get_metric` applies before any SQL exists.
//!
//! Owns which categories a column carries and which are blocked.
//!
//! Architecture invariant: depends on `model` only (the catalog's column
//! names reach it through the model's overlaid columns); never on SQL or
//! engines. Refusals name only categories that caused them.

mod classify;

pub use classify::classify_name;

use crate::model::{SemanticModel, CATASTROPHIC_CATEGORIES};

/// A column's PII tag as the policy resolves it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tag {
    pub sensitivity: String,
    pub categories: Vec<String>,
    /// Where the tag came from: `policy` (an override) or `classifier`.
    pub source: &'static str,
}

impl Tag {
    pub fn is_tagged(&self) -> bool {
        !self.categories.is_empty()
    }
}

/// The tag of `entity.column`: the policy's override for its table column,
/// else the name classifier's verdict (empty categories = clean).
pub fn tag_of(model: &SemanticModel, entity: &str, column: &str) -> Tag {
    if let Some(e) = model.entity(entity) {
        if let Some(t) = model.pii_policy.tag(&e.table, column) {
            return Tag { sensitivity: t.sensitivity.clone(), categories: t.categories.clone(), source: "policy" };
        }
    }
    let categories: Vec<String> = classify_name(column).into_iter().map(str::to_string).collect();
    let sensitivity = if categories.is_empty() { "public" } else { "pii" };
    Tag { sensitivity: sensitivity.to_string(), categories, source: "classifier" }
}

/// Why a request touching PII is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RefusalReason {
    /// A touched column carries a blocked category (policy or floor).
    Blocked,
    /// A group-by column carries any PII category: grouping by it would list
    /// the values, whatever the policy says.
    GroupByGuard { column: String },
    /// MIN or MAX over a tagged column returns a raw value.
    MinMaxGuard { column: String },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub reason: RefusalReason,
    /// Only the categories that caused the refusal, sorted.
    pub categories: Vec<String>,
}

/// The columns a plan touches, by role.
pub struct Touched<'a> {
    /// `(entity, column)` of every column read anywhere (measure, time,
    /// group-by, filter, join keys on every hop).
    pub all: Vec<(&'a str, &'a str)>,
    pub group_by: Vec<(&'a str, &'a str)>,
    /// Operands of a MIN or MAX measure.
    pub min_max_operands: Vec<(&'a str, &'a str)>,
}

/// Checks the touched columns against the policy; the first refusal wins in
/// the order blocked, group-by guard, min/max guard.
pub fn check(model: &SemanticModel, touched: &Touched<'_>) -> Result<(), Refusal> {
    let blocked = model.pii_policy.blocked();
    let mut hit: Vec<String> = Vec::new();
    for (e, c) in &touched.all {
        for cat in tag_of(model, e, c).categories {
            if blocked.contains(&cat) && !hit.contains(&cat) {
                hit.push(cat);
            }
        }
    }
    if !hit.is_empty() {
        hit.sort();
        return Err(Refusal { reason: RefusalReason::Blocked, categories: hit });
    }
    let guard = |cols: &[(&str, &str)], make: fn(String) -> RefusalReason| -> Result<(), Refusal> {
        for (e, c) in cols {
            let mut cats = tag_of(model, e, c).categories;
            if !cats.is_empty() {
                cats.sort();
                return Err(Refusal { reason: make(format!("{e}.{c}")), categories: cats });
            }
        }
        Ok(())
    };
    guard(&touched.group_by, |column| RefusalReason::GroupByGuard { column })?;
    guard(&touched.min_max_operands, |column| RefusalReason::MinMaxGuard { column })
}

/// Whether a category is on the catastrophic floor (always blocked, never named
/// by a column placeholder).
pub fn is_catastrophic(category: &str) -> bool {
    CATASTROPHIC_CATEGORIES.contains(&category)
}
