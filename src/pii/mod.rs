//! PII: the 12-category taxonomy, a column-name classifier, a value
//! classifier (for `schemabrain index`), the one decision every tool reads
//! (`pii_policy.yaml` overrides first, then the tags the index inferred,
//! then the name classifier) and the checks `get_metric` applies before any
//! SQL exists.
//!
//! Owns which categories a column carries, which are blocked, and the rule
//! (DESIGN, PII): a blocked category (or the floor) is refused in every
//! use; a personal column of another category may be grouped, bucketed and
//! filtered with the minimum group size applied; MIN/MAX of any personal
//! column is refused (one raw value); a presence test reveals no value.
//!
//! Architecture invariant: depends on `model` only (the catalog's column
//! names reach it through the model's overlaid columns and table refs),
//! and on sqlparser's parser alone to find presence tests in a computed
//! column (`presence`); never on our `sql` module or engines. Refusals
//! name only categories that caused them.

mod classify;
mod presence;
mod values;

pub use classify::classify_name;
pub use presence::value_words;
/// Lower-case words of an identifier (snake_case, camelCase), as the classifier splits them.
#[cfg(feature = "app")]
pub(crate) use classify::words as identifier_words;
pub use values::{classify_values, is_card_number, looks_like_birth_dates, ValueMatch};

use crate::model::{MaskMethod, PiiPolicy, SemanticModel, TableRef, CATASTROPHIC_CATEGORIES};

/// A column's PII tag as the policy resolves it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tag {
    pub sensitivity: String,
    pub categories: Vec<String>,
    /// Where the tag came from: `policy` (a reviewed override), `inferred`
    /// (the index's classification of names and sampled values) or
    /// `classifier` (the column-name rules, applied at read time).
    pub source: &'static str,
}

impl Tag {
    pub fn is_tagged(&self) -> bool {
        !self.categories.is_empty()
    }
}

/// The tag of `table.column`: the policy's override first, then the tag
/// the index inferred, then the name classifier (empty categories = clean).
/// Every tool and the planner read this one function, so no tool can show
/// what another refuses.
pub fn tag_of_table(policy: &PiiPolicy, table: &TableRef, column: &str) -> Tag {
    match found(policy, table, column) {
        Found::Tagged(t, source) => Tag { sensitivity: t.sensitivity.clone(), categories: t.categories.clone(), source },
        Found::Narrowed(t, categories, source) => Tag { sensitivity: t.sensitivity.clone(), categories: categories.into_iter().map(str::to_string).collect(), source },
        Found::Classified(words) => {
            let categories: Vec<String> = words.into_iter().map(str::to_string).collect();
            let sensitivity = if categories.is_empty() { "public" } else { "pii" };
            Tag { sensitivity: sensitivity.to_string(), categories, source: "classifier" }
        }
    }
}

/// Where a column's tag comes from, in the order every reader asks: the
/// policy's override, the index's inferred tag, the name classifier.
/// A caller's widened categories (`PiiPolicy::widened`) are taken out here,
/// the one place every reader goes through, so no tool can refuse or mask
/// what another shows that caller.
enum Found<'p> {
    Tagged(&'p crate::model::ColumnTag, &'static str),
    /// A tag some of whose categories the caller sees: the rest.
    Narrowed(&'p crate::model::ColumnTag, Vec<&'p str>, &'static str),
    Classified(Vec<&'static str>),
}

fn found<'p>(policy: &'p PiiPolicy, table: &TableRef, column: &str) -> Found<'p> {
    let tagged = |t: &'p crate::model::ColumnTag, source: &'static str| {
        if t.categories.iter().any(|c| policy.sees(c)) {
            Found::Narrowed(t, t.categories.iter().map(String::as_str).filter(|c| !policy.sees(c)).collect(), source)
        } else {
            Found::Tagged(t, source)
        }
    };
    if let Some(t) = policy.tag(table, column) {
        return tagged(t, "policy");
    }
    if let Some(t) = policy.inferred_tag(table, column) {
        return tagged(t, "inferred");
    }
    let mut classified = classify_name(column);
    if !policy.widened.is_empty() {
        classified.retain(|c| !policy.sees(c));
    }
    Found::Classified(classified)
}

/// The tag of `entity.column` (the entity's table column); a column of an
/// unknown entity gets the name classifier's verdict.
pub fn tag_of(model: &SemanticModel, entity: &str, column: &str) -> Tag {
    match model.entity(entity) {
        Some(e) => tag_of_table(&model.pii_policy, &e.table, column),
        None => tag_of_table(&PiiPolicy::default(), &TableRef { schema: String::new(), table: String::new() }, column),
    }
}

/// What every tool does with one column.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Decision {
    pub tag: Tag,
    /// The column's categories the policy blocks (the floor included), sorted.
    pub blocked_categories: Vec<String>,
    /// Carries a catastrophic category: never named in any output.
    pub catastrophic: bool,
    /// How free SQL shows it instead of refusing (the policy's `masking`);
    /// None for a clean column, and for a credential under a rule that
    /// would show part of it.
    pub mask: Option<MaskMethod>,
}

impl Decision {
    /// Blocked: listed without description or values, refused by get_metric.
    pub fn redacted(&self) -> bool {
        !self.blocked_categories.is_empty() || self.catastrophic
    }

    /// Any PII category: free SQL counts over it and never lists it;
    /// get_metric groups, buckets and filters on it only with the minimum
    /// group size applied (when not blocked), and refuses MIN/MAX of it.
    pub fn guarded(&self) -> bool {
        self.tag.is_tagged()
    }

    /// The categories a tool may name: only the blocked ones for a redacted
    /// column (naming the rest would let an agent probe for PII), all of
    /// them otherwise.
    pub fn shown_categories(&self) -> Vec<String> {
        if self.redacted() {
            self.blocked_categories.clone()
        } else {
            self.tag.categories.clone()
        }
    }
}

/// The decision for `table.column`.
pub fn decide(policy: &PiiPolicy, table: &TableRef, column: &str) -> Decision {
    let tag = tag_of_table(policy, table, column);
    let mut blocked_categories: Vec<String> = tag.categories.iter().filter(|c| policy.blocks(c)).cloned().collect();
    blocked_categories.sort();
    blocked_categories.dedup();
    let catastrophic = tag.categories.iter().any(|c| is_catastrophic(c));
    let credential = tag.categories.iter().any(|c| c == "credential");
    let mask = if tag.is_tagged() { policy.mask_of(table, column, &tag.categories).filter(|m| !(credential && m.shows_part())) } else { None };
    Decision { tag, blocked_categories, catastrophic, mask }
}

/// The decision for `entity.column`.
pub fn decide_entity(model: &SemanticModel, entity: &str, column: &str) -> Decision {
    match model.entity(entity) {
        Some(e) => decide(&model.pii_policy, &e.table, column),
        None => decide(&PiiPolicy::default(), &TableRef { schema: String::new(), table: String::new() }, column),
    }
}

/// The placeholder shown instead of a catastrophic column's name where no
/// per-table numbering applies (join keys, metric operands).
pub const PLACEHOLDER: &str = "<redacted_column>";

/// `column`, or the placeholder when it is catastrophic on `entity`.
pub fn shown_entity_column(model: &SemanticModel, entity: &str, column: &str) -> String {
    if decide_entity(model, entity, column).catastrophic {
        PLACEHOLDER.to_string()
    } else {
        column.to_string()
    }
}

/// `column`, or the placeholder when it is catastrophic on `table`.
pub fn shown_table_column(policy: &PiiPolicy, table: &TableRef, column: &str) -> String {
    if decide(policy, table, column).catastrophic {
        PLACEHOLDER.to_string()
    } else {
        column.to_string()
    }
}

/// One column of a listing under the policy.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Listed {
    pub column: String,
    /// The name a tool may show: a numbered placeholder
    /// (`<redacted_column_1>`, ...) for a catastrophic column.
    pub shown: String,
    pub decision: Decision,
}

/// The decision for every column of one listing, in listing order, each
/// decided once, with catastrophic columns numbered in that order.
pub fn decide_listing<'a>(policy: &PiiPolicy, table: &TableRef, columns: impl IntoIterator<Item = &'a str>) -> Vec<Listed> {
    let mut n = 0;
    columns
        .into_iter()
        .map(|c| {
            let decision = decide(policy, table, c);
            let shown = if decision.catastrophic {
                n += 1;
                format!("<redacted_column_{n}>")
            } else {
                c.to_string()
            };
            Listed { column: c.to_string(), shown, decision }
        })
        .collect()
}

/// How a request uses a column whose values it would reveal.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Grouped by: the answer lists its values.
    GroupBy,
    /// Bucketed by as the time dimension: bucketing by a column is grouping by it.
    TimeDimension,
    /// Filtered on: the answer is about the rows holding a chosen value.
    Filter,
    /// The operand of MIN or MAX: the answer is one raw value.
    MinMax,
}

impl Role {
    pub fn as_str(self) -> &'static str {
        match self {
            Role::GroupBy => "group_by",
            Role::TimeDimension => "time_dimension",
            Role::Filter => "filter",
            Role::MinMax => "min_max",
        }
    }
}

/// Why a request touching PII is refused.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RefusalReason {
    /// A column read for its value carries a blocked category (policy or floor).
    Blocked,
    /// MIN or MAX of a personal column: the answer would be one person's
    /// raw value, whatever the group size.
    RawValue { column: String },
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    pub reason: RefusalReason,
    /// Only the categories that caused the refusal, sorted.
    pub categories: Vec<String>,
}

/// The columns a plan touches, by role. Presence tests (`IS [NOT] NULL`
/// on a column, `COUNT(col)`, a computed column's bare `col IS NULL`) are
/// left out by the caller: they read no value.
pub struct Touched<'a> {
    /// `(entity, column)` of every column read for its value anywhere
    /// (measure, time, group-by, filter, join keys on every hop).
    pub all: Vec<(&'a str, &'a str)>,
    /// Columns whose values the answer would reveal, with how.
    pub revealing: Vec<(Role, &'a str, &'a str)>,
}

/// A revealing use of a personal column the policy admits: the answer
/// must withhold rows computed over fewer than `k` people.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Admitted<'a> {
    pub role: Role,
    pub entity: &'a str,
    pub column: &'a str,
    pub k: u32,
    pub categories: Vec<String>,
}

/// Checks the touched columns against the policy: a blocked category
/// anywhere is refused (and wins); MIN/MAX of a personal column is refused;
/// every other revealing use of a personal column is admitted under the
/// policy's minimum group size, and the caller must then withhold small
/// groups or refuse.
pub fn check<'a>(model: &SemanticModel, touched: &Touched<'a>) -> Result<Vec<Admitted<'a>>, Refusal> {
    // Runs for every column of every request: categories are borrowed and
    // the blocked rule asked per category, nothing built per column.
    let policy = &model.pii_policy;
    let mut hit: Vec<String> = Vec::new();
    for (e, c) in &touched.all {
        categories_of(model, e, c).for_each(|cat| {
            if policy.blocks(cat) && !hit.iter().any(|h| h == cat) {
                hit.push(cat.to_string());
            }
        });
    }
    if !hit.is_empty() {
        hit.sort();
        return Err(Refusal { reason: RefusalReason::Blocked, categories: hit });
    }
    let mut admitted = Vec::new();
    for (role, e, c) in &touched.revealing {
        let found = categories_of(model, e, c);
        if found.is_empty() {
            continue;
        }
        let mut cats: Vec<String> = Vec::new();
        found.for_each(|cat| cats.push(cat.to_string()));
        cats.sort();
        cats.dedup();
        // A revealing use that is not also read would slip past the blocked
        // rule above: refuse it here too.
        let blocked: Vec<String> = cats.iter().filter(|c| policy.blocks(c)).cloned().collect();
        if !blocked.is_empty() {
            return Err(Refusal { reason: RefusalReason::Blocked, categories: blocked });
        }
        if *role == Role::MinMax {
            return Err(Refusal { reason: RefusalReason::RawValue { column: format!("{e}.{c}") }, categories: cats });
        }
        admitted.push(Admitted { role: *role, entity: e, column: c, k: policy.min_group_size(), categories: cats });
    }
    Ok(admitted)
}

impl Found<'_> {
    fn is_empty(&self) -> bool {
        match self {
            Found::Tagged(t, _) => t.categories.is_empty(),
            Found::Narrowed(_, c, _) => c.is_empty(),
            Found::Classified(c) => c.is_empty(),
        }
    }

    /// The categories, borrowed: nothing is allocated for a clean column.
    fn for_each(&self, mut f: impl FnMut(&str)) {
        match self {
            Found::Tagged(t, _) => t.categories.iter().for_each(|c| f(c)),
            Found::Narrowed(_, c, _) => c.iter().for_each(|c| f(c)),
            Found::Classified(c) => c.iter().for_each(|c| f(c)),
        }
    }
}

/// What `tag_of(model, entity, column)` finds, its categories borrowed.
fn categories_of<'m>(model: &'m SemanticModel, entity: &str, column: &str) -> Found<'m> {
    match model.entity(entity) {
        Some(e) => found(&model.pii_policy, &e.table, column),
        None => Found::Classified(classify_name(column)),
    }
}

/// Whether a category is on the catastrophic floor (always blocked, never named
/// by a column placeholder).
pub fn is_catastrophic(category: &str) -> bool {
    CATASTROPHIC_CATEGORIES.contains(&category)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::ColumnTag;

    fn tag(categories: &[&str]) -> ColumnTag {
        let sensitivity = if categories.is_empty() { "public" } else { "pii" };
        ColumnTag { sensitivity: sensitivity.into(), categories: categories.iter().map(|c| c.to_string()).collect(), evidence: None }
    }

    fn table(schema: &str, name: &str) -> TableRef {
        TableRef { schema: schema.into(), table: name.into() }
    }

    /// `check` reads categories through `categories_of`, which must find
    /// what `tag_of` (every tool's answer) finds, source by source.
    #[test]
    fn borrowed_categories_are_tag_ofs() {
        let files = vec![(
            crate::model::FileKind::Entity,
            "entities/customer.yaml".into(),
            "version: 1\nname: customer\nbinding: {single_table: main.customers}\nidentity: id\n".to_string(),
        )];
        let mut model = crate::model::load_checked_from_files(&files).expect("loads").into_model();
        model.pii_policy.column_overrides.insert("main.customers.postal_code".into(), tag(&["location", "contact"]));
        model.pii_policy.column_overrides.insert("main.customers.email".into(), tag(&[]));
        model.pii_policy.inferred.insert("main.customers.notes".into(), tag(&["health"]));
        for (entity, column) in [("customer", "postal_code"), ("customer", "email"), ("customer", "notes"), ("customer", "phone_number"), ("customer", "amount"), ("nobody", "email")] {
            let mut borrowed = Vec::new();
            categories_of(&model, entity, column).for_each(|c| borrowed.push(c.to_string()));
            assert_eq!(borrowed, tag_of(&model, entity, column).categories, "{entity}.{column}");
        }
    }

    /// A project moved from `main` to `public` keeps its reviewed tags; a
    /// policy that names the table under the new schema, or under several,
    /// is not second-guessed.
    #[test]
    fn policy_tags_follow_a_table_moved_to_another_schema() {
        let mut p = PiiPolicy::default();
        p.column_overrides.insert("main.customers.postal_code".into(), tag(&["location"]));
        p.column_overrides.insert("main.customers.email".into(), tag(&[]));
        let moved = table("public", "customers");
        assert_eq!(decide(&p, &moved, "postal_code").tag.categories, ["location"]);
        assert_eq!(decide(&p, &moved, "postal_code").tag.source, "policy");
        // The reviewed "not PII" also follows.
        assert!(decide(&p, &moved, "email").tag.categories.is_empty());
        // Named under the new schema too: only its own entries count.
        p.column_overrides.insert("public.customers.segment".into(), tag(&[]));
        assert_eq!(decide(&p, &moved, "email").tag.source, "classifier");
        assert_eq!(decide(&p, &moved, "email").tag.categories, ["contact"]);
        // Two other schemas disagree: no guess.
        let mut q = PiiPolicy::default();
        q.column_overrides.insert("a.t.x_email".into(), tag(&[]));
        q.column_overrides.insert("b.t.x_email".into(), tag(&["contact"]));
        assert_eq!(decide(&q, &table("c", "t"), "x_email").tag.source, "classifier");
    }

    /// A caller's widened categories count as absent in every decision,
    /// a column keeps its other categories, and the floor is never widened.
    #[test]
    fn widened_categories_count_as_absent_never_the_floor() {
        let mut p = PiiPolicy { block: vec!["contact".into()], ..Default::default() };
        p.column_overrides.insert("main.customers.home".into(), tag(&["contact", "location"]));
        let t = table("main", "customers");
        assert!(decide(&p, &t, "email").redacted());
        p.widened = vec!["contact".into(), "credential".into()];
        let email = decide(&p, &t, "email");
        assert!(!email.redacted() && !email.guarded() && email.mask.is_none(), "{email:?}");
        assert_eq!(decide(&p, &t, "home").tag.categories, ["location"]);
        assert!(decide(&p, &t, "home").guarded() && !decide(&p, &t, "home").redacted());
        // `credential` was put in `widened` by hand: still blocked.
        assert!(decide(&p, &t, "password").redacted());
    }
}
