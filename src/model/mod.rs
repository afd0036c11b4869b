//! The semantic model: entities, canonical joins, metrics and the PII policy,
//! as read from a project directory in SchemaBrain's YAML grammar
//! (`docs/grammar.md`).
//!
//! Owns the model types, the strict loader (every error with file, line and
//! key, all of a project's errors at once) and the checks that need nothing
//! but the model itself (dangling references, anchors, grains).
//!
//! Architecture invariant: this is a leaf. It knows nothing of catalogs,
//! engines, SQL or envelopes; the catalog overlays its columns onto the model
//! from above (`catalog::overlay`).

mod checked;
mod condition;
mod diagnostic;
mod expr;
pub mod graph;
mod load;
mod types;
mod validate;
pub(crate) mod yaml;

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

pub use checked::CheckedModel;
pub use condition::Condition;
pub use yaml::{documents_as_json as yaml_documents_as_json, quoted as yaml_quoted};
pub use diagnostic::{Diagnostic, Diagnostics};
pub use expr::{ArithOp, MeasureExpr};
pub use load::{
    load_checked, load_checked_from_files, load_project, load_project_from_files, load_project_with_extra, resolve_project_dir, FileKind,
};
pub use types::TypeClass;
pub use validate::check as check_references;

/// Caller text echoed in messages is cut to this many characters, so a
/// hostile 100 KB name or expression cannot blow up a message.
pub const ECHO_MAX: usize = 200;

/// `s` as a message may quote it: at most [`ECHO_MAX`] characters.
pub fn echo(s: &str) -> String {
    if s.chars().count() <= ECHO_MAX {
        s.to_string()
    } else {
        format!("{}...", s.chars().take(ECHO_MAX).collect::<String>())
    }
}

/// Where a definition came from, for error messages and `describe_*` output.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Origin {
    pub file: PathBuf,
    /// The line the document starts on.
    pub line: usize,
    /// The line of every key read from the document, by dotted path
    /// (`measure.column`, `on[0].source`), so later checks can point at it.
    pub key_lines: BTreeMap<String, usize>,
}

impl Origin {
    /// The line of `key`, or of its closest recorded parent, or of the document.
    pub fn line_of(&self, key: &str) -> usize {
        let mut k = key;
        loop {
            if let Some(l) = self.key_lines.get(k) {
                return *l;
            }
            match k.rfind(['.', '[']) {
                Some(i) => k = &k[..i],
                None => return self.line,
            }
        }
    }
}

impl fmt::Display for Origin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.file.display(), self.line)
    }
}

/// A whole project: the definitions plus the settings of `schemabrain.yaml`.
#[derive(Clone, Debug, Default)]
pub struct SemanticModel {
    pub settings: Settings,
    pub entities: BTreeMap<String, Entity>,
    pub joins: BTreeMap<String, Join>,
    pub metrics: BTreeMap<String, Metric>,
    /// Ratio and derived metrics: arithmetic over simple metrics.
    pub derived: BTreeMap<String, DerivedMetric>,
    /// Saved queries (`queries/<name>.yaml`), by name.
    pub queries: BTreeMap<String, SavedQuery>,
    pub pii_policy: PiiPolicy,
}

/// A named request (`queries/<name>.yaml`; dbt's saved queries import as
/// these): get_metric's `query` and `schemabrain query --saved` run it, and
/// a call may add filters, where strings, an order or a limit. Group-bys
/// and order keys may be written in MetricFlow's names.
#[derive(Clone, Debug)]
pub struct SavedQuery {
    pub name: String,
    pub description: Option<String>,
    pub metrics: Vec<String>,
    pub group_by: Vec<String>,
    pub time_grain: Option<String>,
    pub filters: Vec<FilterSpec>,
    pub where_strings: Vec<String>,
    /// `name` ascending, `-name` descending.
    pub order_by: Vec<String>,
    pub limit: Option<i64>,
    pub origin: DefinitionOrigin,
    pub provenance: Option<Provenance>,
    pub defined_at: Origin,
}

impl SemanticModel {
    pub fn entity(&self, name: &str) -> Option<&Entity> {
        self.entities.get(name)
    }

    /// A grain by name: a calendar grain or one of the time spine's custom grains.
    pub fn grain(&self, name: &str) -> Option<Grain> {
        Grain::parse(name).or_else(|| self.custom_grains().find(|g| g.name == name).map(Grain::Custom))
    }

    /// Every grain a request may name: the calendar ones, then the custom ones.
    pub fn grains(&self) -> Vec<Grain> {
        Grain::ALL.into_iter().chain(self.custom_grains().map(Grain::Custom)).collect()
    }

    fn custom_grains(&self) -> impl Iterator<Item = &'static CustomGrain> + '_ {
        self.settings.time_spine.iter().flat_map(|s| s.custom_grains.iter().copied())
    }

    /// The type class of a column; unknown when neither the model nor a
    /// catalog says (or the column is not there).
    pub fn class_of(&self, c: &ColumnRef) -> TypeClass {
        self.entity(&c.entity).and_then(|e| e.column(&c.column)).map_or(TypeClass::Unknown, Column::type_class)
    }

    pub fn metric(&self, name: &str) -> Option<&Metric> {
        self.metrics.get(name)
    }

    /// The simple metric `name` is, or the first input of the ratio,
    /// derived, cumulative or conversion metric it is: the one whose time
    /// dimension and grains speak for it.
    pub fn first_simple_metric(&self, name: &str) -> Option<&Metric> {
        self.metric(name).or_else(|| self.derived.get(name).and_then(|d| d.inputs.first()).and_then(|i| self.metric(&i.metric)))
    }

    /// The entity bound to `schema.table`, if any (the first, by name, when
    /// several are).
    pub fn entity_on(&self, schema: &str, table: &str) -> Option<&Entity> {
        self.entities.values().find(|e| e.table.schema == schema && e.table.table == table)
    }

    pub fn join(&self, name: &str) -> Option<&Join> {
        self.joins.get(name)
    }

    /// Every metric name, simple and derived, sorted.
    pub fn metric_names(&self) -> Vec<&str> {
        let mut v: Vec<&str> = self.metrics.keys().chain(self.derived.keys()).map(String::as_str).collect();
        v.sort_unstable();
        v
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DerivedKind {
    /// numerator / denominator; NULL (not an error) when the denominator is 0.
    Ratio,
    /// Arithmetic over named inputs, each possibly offset in time.
    Derived,
    /// One input accumulated over a window ending with each time bucket.
    Cumulative,
    /// Base rows that reach a conversion event, as a count or a rate.
    Conversion,
}

impl DerivedKind {
    pub const ALL: [&'static str; 4] = ["ratio", "derived", "cumulative", "conversion"];

    pub fn as_str(self) -> &'static str {
        match self {
            DerivedKind::Ratio => "ratio",
            DerivedKind::Derived => "derived",
            DerivedKind::Cumulative => "cumulative",
            DerivedKind::Conversion => "conversion",
        }
    }
}

/// A span of calendar time, `7 days`, `1 month`: a count of one grain.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Interval {
    pub count: u32,
    pub unit: Grain,
}

impl Interval {
    /// Parses `<n> <grain>[s]` (`7 days`, `1 month`, `2 weeks`); `n` from 1.
    pub fn parse(text: &str) -> Result<Interval, String> {
        let mut parts = text.split_whitespace();
        let (Some(n), Some(unit), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(format!("`{text}` must be `<count> <grain>`, e.g. `7 days` or `1 month`"));
        };
        let count: u32 = n.parse().ok().filter(|c| *c >= 1).ok_or_else(|| format!("`{n}` in `{text}` must be a whole number from 1"))?;
        let singular = unit.to_ascii_lowercase();
        let singular = singular.strip_suffix('s').unwrap_or(&singular);
        let unit = Grain::parse(singular)
            .ok_or_else(|| format!("`{unit}` in `{text}` is not a grain; use one of {}", Grain::names().join(", ")))?;
        Ok(Interval { count, unit })
    }

    /// The same span as a count of hours, days or months, which every
    /// engine's date arithmetic knows (a week is 7 days, a quarter 3 months).
    pub fn in_base_units(self) -> (i64, Grain) {
        let n = i64::from(self.count);
        match self.unit {
            Grain::Hour => (n, Grain::Hour),
            Grain::Day => (n, Grain::Day),
            Grain::Week => (7 * n, Grain::Day),
            Grain::Month => (n, Grain::Month),
            Grain::Quarter => (3 * n, Grain::Month),
            Grain::Year => (12 * n, Grain::Month),
            // Never built: `Interval::parse` reads calendar grains only, and
            // a time spine's periods have no length to count in.
            Grain::Custom(_) => (n, Grain::Day),
        }
    }
}

impl fmt::Display for Interval {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plural = if self.count == 1 { "" } else { "s" };
        write!(f, "{} {}{plural}", self.count, self.unit.as_str())
    }
}

/// How a derived metric's input is moved in time.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TimeOffset {
    /// The value `n grain` earlier: each bucket shows the input's value of
    /// the bucket that lies the interval before it (`1 month` ago).
    Window(Interval),
    /// The value at the first bucket of the period holding each bucket
    /// (the month's first day, at grain day with `month`).
    ToGrain(Grain),
}

/// A simple metric used inside a derived metric, possibly with filters and
/// a time offset of its own, under an alias the expression names.
#[derive(Clone, Debug, PartialEq)]
pub struct MetricInput {
    pub metric: String,
    pub alias: String,
    pub filters: Vec<FilterSpec>,
    pub offset: Option<TimeOffset>,
}

/// The window a cumulative metric accumulates over, ending with each bucket.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CumulativeWindow {
    /// Everything up to the end of the bucket.
    AllTime,
    /// The interval ending with the end of the bucket.
    Rolling(Interval),
    /// From the start of the period (month, year…) holding the bucket.
    GrainToDate(Grain),
}

/// How a cumulative metric computed per day becomes one value per period
/// (dbt's `period_agg`): the value of the period's first or last day that
/// has one, or the average over its days that have one.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum PeriodAgg {
    First,
    Last,
    Average,
}

impl PeriodAgg {
    pub fn as_str(self) -> &'static str {
        match self {
            PeriodAgg::First => "first",
            PeriodAgg::Last => "last",
            PeriodAgg::Average => "average",
        }
    }
}

/// The periods a derived metric with moved (`offset_window`) inputs
/// answers for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Periods {
    /// The buckets of the unmoved inputs; the moved ones fill in values
    /// (when every input is moved, their buckets up to the data's end).
    #[default]
    UnmovedInputs,
    /// Every bucket where any input has rows, the moved buckets included
    /// (MetricFlow's rule).
    AnyInput,
}

/// What a conversion metric outputs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConversionCalculation {
    /// Converted base rows / base rows.
    ConversionRate,
    /// Converted base rows.
    Conversions,
}

/// What a conversion metric counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConversionCounts {
    /// Base rows that reach a conversion row (ours).
    BaseRows,
    /// The conversion metric over conversion rows, each credited to the
    /// latest base row (by day) within the window before it (MetricFlow's).
    ConversionRows,
}

/// A conversion metric: `inputs[0]` is the base metric, `inputs[1]` the
/// conversion metric. A base row converts when a conversion row with equal
/// key columns has a time at or after the base row's, within `window`.
#[derive(Clone, Debug, PartialEq)]
pub struct ConversionSpec {
    /// Columns of the base metric's anchor, paired with `conversion_key`.
    pub base_key: Vec<String>,
    pub conversion_key: Vec<String>,
    pub window: Option<Interval>,
    pub calculation: ConversionCalculation,
    pub counts: ConversionCounts,
}

#[derive(Clone, Debug)]
pub struct DerivedMetric {
    pub name: String,
    pub description: Option<String>,
    pub kind: DerivedKind,
    pub inputs: Vec<MetricInput>,
    /// Over the inputs' aliases; a ratio is `numerator / denominator`.
    pub expression: MeasureExpr,
    /// `Some` for cumulative metrics.
    pub cumulative: Option<CumulativeWindow>,
    /// A cumulative metric computed per day of the time spine, then one
    /// value per period (MetricFlow's way); `None`: over the window ending
    /// with each bucket (ours).
    pub period_agg: Option<PeriodAgg>,
    /// Which inputs' buckets are the answer's periods (derived metrics
    /// with `offset_window` inputs).
    pub periods: Periods,
    /// `Some` for conversion metrics.
    pub conversion: Option<ConversionSpec>,
    pub origin: DefinitionOrigin,
    pub provenance: Option<Provenance>,
    pub defined_at: Origin,
}

/// Which row of the window a non-additive metric keeps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum WindowChoice {
    First,
    Last,
}

/// A measure that does not add up along a dimension (a balance snapshot):
/// only rows at the last (or first) value of `dimension` within each time
/// bucket, and within each value of `per`, are aggregated.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct NonAdditive {
    /// The metric's time dimension (an anchor column).
    pub dimension: ColumnRef,
    pub window: WindowChoice,
    /// Anchor columns the choice is made within (each account's last snapshot).
    pub per: Vec<ColumnRef>,
}

/// `schemabrain.yaml`: where the data lives and the project's defaults.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    pub name: Option<String>,
    /// A source URL (`duckdb:PATH`, `postgres://…`); relative paths are
    /// relative to the project directory.
    pub source: Option<String>,
    pub dialect: Option<String>,
    pub default_limit: u32,
    pub max_rows: u32,
    pub timeout_ms: u64,
    /// A table with one row per day (dbt's `metricflow_time_spine`): the
    /// periods a `join_to_timespine` metric answers for.
    pub time_spine: Option<TimeSpine>,
}

/// `time_spine: {table: schema.table, column: date_day}` in `schemabrain.yaml`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeSpine {
    pub table: TableRef,
    /// A DATE (or TIMESTAMP) column with one row per day.
    pub column: String,
    /// `custom_grains: [{name: fiscal_year, column: fiscal_year}]`: grains
    /// whose period of each day is a column of the spine.
    pub custom_grains: Vec<&'static CustomGrain>,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            name: None,
            source: None,
            dialect: None,
            default_limit: 1000,
            max_rows: 10_000,
            timeout_ms: 30_000,
            time_spine: None,
        }
    }
}

/// A physical table, `schema.table`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TableRef {
    pub schema: String,
    pub table: String,
}

impl fmt::Display for TableRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.schema, self.table)
    }
}

/// A column of an entity as the planner sees it: declared in the model or
/// overlaid from the catalog snapshot.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Column {
    pub name: String,
    /// The engine's type name (`decimal(12,2)`, `timestamp`); `None` when
    /// neither the model nor a catalog says.
    pub data_type: Option<String>,
    pub description: Option<String>,
    pub nullable: Option<bool>,
    /// A computed column: an expression over the entity's own columns, in
    /// the engine's SQL (dbt's dimension and measure `expr`). The model
    /// keeps it as text; `sql` parses it for the dialect it emits.
    pub expr: Option<String>,
}

impl Column {
    pub fn type_class(&self) -> TypeClass {
        self.data_type.as_deref().map_or(TypeClass::Unknown, TypeClass::of)
    }

    /// The words of a computed column's expression that may name columns
    /// (identifiers outside string literals; `"quoted"` ones unquoted), for
    /// the PII check: a computed column carries the categories of every
    /// column it may read. Over-approximates (function names and keywords
    /// come too); the caller keeps those that are columns.
    pub fn reads(&self) -> Vec<String> {
        self.expr.as_deref().map(expr_words).unwrap_or_default()
    }
}

/// The words of an SQL expression that may name columns (identifiers
/// outside string literals; `"quoted"` ones unquoted): `Column::reads`.
pub fn expr_words(expr: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut chars = expr.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                // A string literal ('' is a quote inside it).
                while let Some(x) = chars.next() {
                    if x == '\'' && chars.peek() != Some(&'\'') {
                        break;
                    }
                    if x == '\'' {
                        chars.next();
                    }
                }
            }
            '"' | '`' => {
                let word: String = chars.by_ref().take_while(|x| *x != c).collect();
                out.push(word);
            }
            c if c.is_alphabetic() || c == '_' => {
                let mut word = c.to_string();
                while let Some(x) = chars.peek().copied().filter(|x| x.is_alphanumeric() || *x == '_') {
                    word.push(x);
                    chars.next();
                }
                out.push(word);
            }
            _ => {}
        }
    }
    out
}

/// Why a computed column's expression cannot be one SQL expression, by its
/// shape alone (the dialect's parser has the last word when SQL is
/// written): empty, a statement separator, a comment, or unbalanced
/// quotes or parentheses.
pub fn computed_expr_problem(expr: &str) -> Option<&'static str> {
    if expr.trim().is_empty() {
        return Some("is empty");
    }
    let (mut depth, mut quote): (i64, Option<char>) = (0, None);
    let mut chars = expr.chars().peekable();
    while let Some(c) = chars.next() {
        match (quote, c) {
            (Some(q), c) if c == q => quote = None,
            (Some(_), _) => {}
            (None, '\'' | '"' | '`') => quote = Some(c),
            (None, '(') => depth += 1,
            (None, ')') => {
                depth -= 1;
                if depth < 0 {
                    return Some("closes a parenthesis it never opened");
                }
            }
            (None, ';') => return Some("holds `;`: one expression, not statements"),
            (None, '-') if chars.peek() == Some(&'-') => return Some("holds a `--` comment"),
            (None, '/') if chars.peek() == Some(&'*') => return Some("holds a `/*` comment"),
            _ => {}
        }
    }
    match (quote, depth) {
        (Some(_), _) => Some("leaves a quote open"),
        (None, 0) => None,
        _ => Some("leaves a parenthesis open"),
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DefinitionOrigin {
    Manual,
    Suggested,
    DbtImport,
}

impl DefinitionOrigin {
    pub fn as_str(self) -> &'static str {
        match self {
            DefinitionOrigin::Manual => "manual",
            DefinitionOrigin::Suggested => "suggested",
            DefinitionOrigin::DbtImport => "dbt_import",
        }
    }
}

/// How a definition was derived and how far it has been checked (the
/// charter's two trust axes), with its evidence. `schemabrain index` and
/// `schemabrain import dbt` write it; hand-written YAML may omit it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Provenance {
    /// One of `INFERENCE_METHODS`.
    pub inference_method: Option<String>,
    /// `draft`, `applied` or `confirmed`.
    pub validation_state: Option<String>,
    /// `high`, `medium` or `low`.
    pub confidence: Option<String>,
    /// Where the definition came from: a dbt file and line, a source table.
    pub source: Option<String>,
    /// One sentence per piece of evidence ("declared foreign key").
    pub evidence: Vec<String>,
}

/// The charter's inference methods, then ours: `name_match` (a join found
/// from column names and verified on the data), `data_profile` (an identity
/// or measure found from the data's statistics).
pub const INFERENCE_METHODS: [&str; 7] =
    ["manually_authored", "llm_suggested", "fk_constraint", "dbt_import", "observed_in_query_log", "name_match", "data_profile"];
pub const VALIDATION_STATES: [&str; 3] = ["draft", "applied", "confirmed"];
pub const CONFIDENCE_LEVELS: [&str; 3] = ["high", "medium", "low"];

#[derive(Clone, Debug)]
pub struct Entity {
    pub name: String,
    pub description: Option<String>,
    pub table: TableRef,
    /// One column, or several for a composite identity.
    pub identity: Vec<String>,
    pub origin: DefinitionOrigin,
    pub provenance: Option<Provenance>,
    pub group: Option<String>,
    /// Declared columns; replaced by the catalog's when a snapshot exists.
    pub columns: Vec<Column>,
    /// True once a catalog has confirmed the columns.
    pub columns_from_catalog: bool,
    /// Other names requests may use for a column (`customer_segment` →
    /// `segment`: a dbt dimension named apart from its column).
    pub column_aliases: BTreeMap<String, String>,
    /// The values a column may take, by column (dbt's `accepted_values`
    /// test, or declared): filter values are checked against them, and
    /// describe_entity shows them. Numbers and booleans as their text.
    pub accepted_values: BTreeMap<String, Vec<String>>,
    pub defined_at: Origin,
}

impl Entity {
    pub fn column(&self, name: &str) -> Option<&Column> {
        self.columns.iter().find(|c| c.name == name)
    }

    /// The column a request's name stands for: itself, or the column an
    /// alias names (a real column of that name wins).
    pub fn resolve_alias<'a>(&'a self, name: &'a str) -> &'a str {
        match self.column_aliases.get(name) {
            Some(real) if self.column(name).is_none() => real,
            _ => name,
        }
    }

    /// The accepted values of `column` (after aliases), if any are declared.
    pub fn accepted_values_of(&self, column: &str) -> Option<&[String]> {
        self.accepted_values.get(self.resolve_alias(column)).map(Vec::as_slice).filter(|v| !v.is_empty())
    }

    pub fn column_names(&self) -> Vec<String> {
        self.columns.iter().map(|c| c.name.clone()).collect()
    }

    /// Whether the columns are known at all. A model without declared
    /// columns and without a catalog cannot be checked column by column
    /// (computed columns alone say nothing of the table's).
    pub fn knows_columns(&self) -> bool {
        self.columns_from_catalog || self.columns.iter().any(|c| c.expr.is_none())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Cardinality {
    OneToOne,
    OneToMany,
    ManyToOne,
    ManyToMany,
}

impl Cardinality {
    pub const ALL: [&'static str; 4] = ["one_to_one", "one_to_many", "many_to_one", "many_to_many"];

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "one_to_one" => Some(Cardinality::OneToOne),
            "one_to_many" => Some(Cardinality::OneToMany),
            "many_to_one" => Some(Cardinality::ManyToOne),
            "many_to_many" => Some(Cardinality::ManyToMany),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Cardinality::OneToOne => "one_to_one",
            Cardinality::OneToMany => "one_to_many",
            Cardinality::ManyToOne => "many_to_one",
            Cardinality::ManyToMany => "many_to_many",
        }
    }

    /// The cardinality seen when walking the join from target to source.
    pub fn reversed(self) -> Self {
        match self {
            Cardinality::OneToMany => Cardinality::ManyToOne,
            Cardinality::ManyToOne => Cardinality::OneToMany,
            other => other,
        }
    }

    /// Whether walking this way can multiply the rows of the side we come from.
    pub fn fans_out(self) -> bool {
        matches!(self, Cardinality::OneToMany | Cardinality::ManyToMany)
    }
}

/// The target's validity window of a versioned join: `from` (inclusive)
/// and `to` (exclusive; NULL while the version is current), columns of the
/// target entity.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Validity {
    pub from: String,
    pub to: String,
}

/// One equality of a join's ON clause: `source.column = target.column`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JoinKey {
    pub source: String,
    pub target: String,
}

#[derive(Clone, Debug)]
pub struct Join {
    pub name: String,
    pub description: Option<String>,
    pub source_entity: String,
    pub target_entity: String,
    pub on: Vec<JoinKey>,
    /// `None` when undeclared: the planner treats it as the worst case.
    pub cardinality: Option<Cardinality>,
    /// Why every row of the source finds its target row, when something
    /// says so: the planner may then INNER JOIN (as cheap as an expert's
    /// SQL) where a LEFT JOIN would otherwise keep unmatched rows.
    pub every_row_matches: Option<MatchEvidence>,
    /// A versioned target (a slowly changing dimension): of the target's
    /// rows with the keys, the one whose window holds the time of the
    /// metric's row.
    pub valid_between: Option<Validity>,
    pub origin: DefinitionOrigin,
    pub provenance: Option<Provenance>,
    pub defined_at: Origin,
}

/// Why every row of a join's source entity has a key that finds its row in
/// the target entity (no NULL key, no orphan).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MatchEvidence {
    /// The join says `every_row_matches: true`: written by a person, or by
    /// `schemabrain index` after measuring no NULL key and no orphan.
    Declared,
    /// The catalog snapshot: a foreign key from the join's source columns to
    /// its target columns, every source column NOT NULL.
    ForeignKey,
}

impl MatchEvidence {
    pub fn as_str(self) -> &'static str {
        match self {
            MatchEvidence::Declared => "every_row_matches declared",
            MatchEvidence::ForeignKey => "foreign key, NOT NULL",
        }
    }
}

/// A column of an entity, `entity.column`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ColumnRef {
    pub entity: String,
    pub column: String,
}

impl ColumnRef {
    pub fn new(entity: impl Into<String>, column: impl Into<String>) -> Self {
        ColumnRef { entity: entity.into(), column: column.into() }
    }

    /// Parses `entity.column`; `None` if the shape is wrong.
    pub fn parse(s: &str) -> Option<Self> {
        let (entity, column) = s.split_once('.')?;
        (is_identifier(entity) && is_identifier(column)).then(|| ColumnRef::new(entity, column))
    }
}

impl fmt::Display for ColumnRef {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.entity, self.column)
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Aggregation {
    Sum,
    Count,
    CountDistinct,
    Avg,
    Min,
    Max,
    Median,
    /// The measure's `percentile` (0..1), continuous.
    Percentile,
    /// Count of true values of a boolean column.
    SumBoolean,
}

impl Aggregation {
    pub const ALL: [&'static str; 9] =
        ["sum", "count", "count_distinct", "avg", "min", "max", "median", "percentile", "sum_boolean"];

    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "sum" => Some(Aggregation::Sum),
            "count" => Some(Aggregation::Count),
            "count_distinct" => Some(Aggregation::CountDistinct),
            "avg" => Some(Aggregation::Avg),
            "min" => Some(Aggregation::Min),
            "max" => Some(Aggregation::Max),
            "median" => Some(Aggregation::Median),
            "percentile" => Some(Aggregation::Percentile),
            "sum_boolean" => Some(Aggregation::SumBoolean),
            _ => None,
        }
    }

    // `ALL` names every variant in declaration order: the index is in bounds.
    #[allow(clippy::indexing_slicing)]
    pub fn as_str(self) -> &'static str {
        Aggregation::ALL[self as usize]
    }
}

#[derive(Clone, Debug, PartialEq)]
pub enum MeasureOperand {
    Column(String),
    Expression(MeasureExpr),
}

#[derive(Clone, Debug, PartialEq)]
pub struct Measure {
    pub agg: Aggregation,
    pub operand: MeasureOperand,
    /// For `percentile`: the fraction, strictly between 0 and 1.
    pub percentile: Option<f64>,
    /// For `percentile`: the smallest value whose share of rows at or below
    /// it reaches the fraction (a value of the column), not the continuous
    /// interpolation between two values (`percentile_disc` in SQL).
    pub discrete: bool,
}

impl Measure {
    /// Every anchor column the measure reads, in first-use order.
    pub fn columns(&self) -> Vec<&str> {
        match &self.operand {
            MeasureOperand::Column(c) => vec![c.as_str()],
            MeasureOperand::Expression(e) => e.columns(),
        }
    }
}

/// Time grains, finest first. Week is ISO (starts Monday). A custom grain
/// (the project's time spine says which period each day is in, dbt's
/// `custom_granularities`) comes after the calendar ones; it is made of
/// days and holds no calendar grain but a day.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Grain {
    Hour,
    Day,
    Week,
    Month,
    Quarter,
    Year,
    Custom(&'static CustomGrain),
}

/// A grain read from a time spine column: a row's period is `column` on
/// the spine's row for the row's day (`day` = the day). Interned, so that
/// `Grain` stays `Copy` and its name a `&'static str` like the others.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CustomGrain {
    pub name: String,
    pub table: TableRef,
    /// The spine's day column.
    pub day: String,
    /// The column holding each day's period (its first day, as a DATE).
    pub column: String,
}

impl CustomGrain {
    /// Why `name` cannot name a custom grain, if it cannot: a request
    /// names a grain in `time_grain` and after `__`, where it must not read
    /// as a calendar grain or a date part (`extract_<part>`).
    pub fn name_clash(name: &str) -> Option<&'static str> {
        if Grain::parse(name).is_some() {
            Some("a calendar grain has that name")
        } else if name.starts_with("extract_") {
            Some("`extract_<part>` names a date part")
        } else {
            None
        }
    }

    /// The one `'static` copy of `g`: each distinct grain is stored once
    /// per process, however often a project is loaded.
    pub fn intern(g: CustomGrain) -> &'static CustomGrain {
        static INTERNED: std::sync::Mutex<std::collections::BTreeSet<&'static CustomGrain>> = std::sync::Mutex::new(std::collections::BTreeSet::new());
        // A poisoned lock still holds a valid set (insertions are atomic).
        let mut set = INTERNED.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(found) = set.get(&g) {
            return found;
        }
        let leaked: &'static CustomGrain = Box::leak(Box::new(g));
        set.insert(leaked);
        leaked
    }
}

impl Grain {
    /// The calendar grains (a project's custom grains are in
    /// `SemanticModel::grains`).
    pub const ALL: [Grain; 6] = [Grain::Hour, Grain::Day, Grain::Week, Grain::Month, Grain::Quarter, Grain::Year];

    /// A calendar grain by name (`SemanticModel::grain` also knows the
    /// project's custom ones).
    pub fn parse(s: &str) -> Option<Self> {
        Grain::ALL.into_iter().find(|g| g.as_str() == s)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Grain::Hour => "hour",
            Grain::Day => "day",
            Grain::Week => "week",
            Grain::Month => "month",
            Grain::Quarter => "quarter",
            Grain::Year => "year",
            Grain::Custom(g) => g.name.as_str(),
        }
    }

    pub fn names() -> Vec<&'static str> {
        Grain::ALL.iter().map(|g| g.as_str()).collect()
    }

    pub fn is_custom(self) -> bool {
        matches!(self, Grain::Custom(_))
    }

    /// Whether every bucket of `self` lies inside one bucket of `coarse`:
    /// days in months, months in years; weeks only in weeks (a week can
    /// straddle two months); days (and hours) in a custom grain's periods,
    /// which are made of days.
    pub fn nests_in(self, coarse: Grain) -> bool {
        match (self, coarse) {
            (Grain::Custom(_), _) => self == coarse,
            (_, Grain::Custom(_)) => self <= Grain::Day,
            _ => self <= coarse && (self <= Grain::Day || self == coarse || (self != Grain::Week && coarse != Grain::Week)),
        }
    }
}

/// A part of a date as a whole number (MetricFlow's date parts): the
/// year, quarter (1-4), month (1-12), day of the month, ISO day of the
/// week (Monday 1 to Sunday 7) and day of the year.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DatePart {
    Year,
    Quarter,
    Month,
    Day,
    Dow,
    Doy,
}

impl DatePart {
    pub const ALL: [DatePart; 6] = [DatePart::Year, DatePart::Quarter, DatePart::Month, DatePart::Day, DatePart::Dow, DatePart::Doy];

    pub fn parse(s: &str) -> Option<Self> {
        DatePart::ALL.into_iter().find(|p| p.as_str() == s)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            DatePart::Year => "year",
            DatePart::Quarter => "quarter",
            DatePart::Month => "month",
            DatePart::Day => "day",
            DatePart::Dow => "dow",
            DatePart::Doy => "doy",
        }
    }

    pub fn names() -> Vec<&'static str> {
        DatePart::ALL.iter().map(|p| p.as_str()).collect()
    }
}

/// Filter operators shared by metric definitions, tool calls and the CLI.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FilterOp {
    Eq,
    Ne,
    Lt,
    Lte,
    Gt,
    Gte,
    In,
    NotIn,
    IsNull,
    NotNull,
    /// SQL `LIKE` on text, case-sensitive on every engine: `%` any run of
    /// characters, `_` one character.
    Like,
    NotLike,
}

impl FilterOp {
    pub const ALL: [&'static str; 12] =
        ["eq", "ne", "lt", "lte", "gt", "gte", "in", "not_in", "is_null", "not_null", "like", "not_like"];

    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "eq" | "=" | "==" => FilterOp::Eq,
            "ne" | "!=" | "<>" => FilterOp::Ne,
            "lt" | "<" => FilterOp::Lt,
            "lte" | "<=" => FilterOp::Lte,
            "gt" | ">" => FilterOp::Gt,
            "gte" | ">=" => FilterOp::Gte,
            "in" => FilterOp::In,
            "not_in" => FilterOp::NotIn,
            "is_null" => FilterOp::IsNull,
            "not_null" => FilterOp::NotNull,
            "like" => FilterOp::Like,
            "not_like" => FilterOp::NotLike,
            _ => return None,
        })
    }

    // `ALL` names every variant in declaration order: the index is in bounds.
    #[allow(clippy::indexing_slicing)]
    pub fn as_str(self) -> &'static str {
        FilterOp::ALL[self as usize]
    }

    /// The operator keeping exactly the rows this one does not keep, NULLs
    /// aside: a comparison with NULL keeps no row either way, as `NOT`
    /// of it does in SQL's three-valued logic.
    pub fn negated(self) -> Self {
        match self {
            FilterOp::Eq => FilterOp::Ne,
            FilterOp::Ne => FilterOp::Eq,
            FilterOp::Lt => FilterOp::Gte,
            FilterOp::Gte => FilterOp::Lt,
            FilterOp::Lte => FilterOp::Gt,
            FilterOp::Gt => FilterOp::Lte,
            FilterOp::In => FilterOp::NotIn,
            FilterOp::NotIn => FilterOp::In,
            FilterOp::IsNull => FilterOp::NotNull,
            FilterOp::NotNull => FilterOp::IsNull,
            FilterOp::Like => FilterOp::NotLike,
            FilterOp::NotLike => FilterOp::Like,
        }
    }

    pub fn arity(self) -> OpArity {
        match self {
            FilterOp::IsNull | FilterOp::NotNull => OpArity::None,
            FilterOp::In | FilterOp::NotIn => OpArity::List,
            _ => OpArity::Scalar,
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpArity {
    None,
    Scalar,
    List,
}

/// A literal as written in YAML or a tool call, before it is checked
/// against a column type.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    Bool(bool),
    Int(i64),
    Float(f64),
    Text(String),
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Bool(b) => write!(f, "{b}"),
            Literal::Int(i) => write!(f, "{i}"),
            Literal::Float(x) => write!(f, "{x}"),
            Literal::Text(s) => write!(f, "{s:?}"),
        }
    }
}

/// A filter a metric declares on its own rows (e.g. not cancelled).
#[derive(Clone, Debug, PartialEq)]
pub struct FilterSpec {
    pub column: ColumnRef,
    pub op: FilterOp,
    pub values: Vec<Literal>,
    /// Where it was read (`filter[1].any_of[0]`), for diagnostics.
    pub at: String,
}

#[derive(Clone, Debug)]
pub struct Metric {
    pub name: String,
    pub description: Option<String>,
    pub entity: String,
    pub measure: Measure,
    pub time_dimension: Option<ColumnRef>,
    pub time_grains: Vec<Grain>,
    pub filters: Vec<FilterSpec>,
    /// Disjunctions ANDed with `filters` (`filter` items `any_of`/`all_of`).
    pub any_of: Vec<Condition<FilterSpec>>,
    pub non_additive: Option<NonAdditive>,
    /// What the metric is where it has no value (a group or period without
    /// rows), instead of NULL: dbt's `fill_nulls_with`.
    pub fill_nulls_with: Option<i64>,
    /// Answers for every period of the project's time spine when grouped
    /// by time, those without rows included (dbt's `join_to_timespine`).
    pub join_to_timespine: bool,
    pub origin: DefinitionOrigin,
    pub provenance: Option<Provenance>,
    pub defined_at: Origin,
}

/// The 12 PII categories of SchemaBrain's taxonomy.
pub const PII_CATEGORIES: [&str; 12] = [
    "contact",
    "financial",
    "payment_card",
    "health",
    "genetic",
    "biometric",
    "behavioral",
    "online_identifier",
    "credential",
    "government_id",
    "location",
    "demographic_protected",
];

/// Always blocked, whatever the policy says.
pub const CATASTROPHIC_CATEGORIES: [&str; 3] = ["credential", "payment_card", "government_id"];

pub const SENSITIVITIES: [&str; 4] = ["public", "internal", "confidential", "pii"];

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ColumnTag {
    pub sensitivity: String,
    pub categories: Vec<String>,
    /// Why the tag was given (an inferred tag's name rule or value share);
    /// reviewers read it, nothing decides on it.
    pub evidence: Option<String>,
}

#[derive(Clone, Debug, Default)]
pub struct PiiPolicy {
    pub description: Option<String>,
    pub block: Vec<String>,
    /// Keyed by `schema.table.column`: reviewed tags, which win.
    pub column_overrides: BTreeMap<String, ColumnTag>,
    /// Keyed by `schema.table.column`: tags `schemabrain index` inferred from
    /// names and sampled values, used where no override says otherwise.
    pub inferred: BTreeMap<String, ColumnTag>,
    /// The minimum group size (k) the policy sets: a personal column of a
    /// category it does not block may be grouped by, bucketed by or
    /// filtered on, and every answer row computed over fewer than k
    /// distinct people (the column's entity) is withheld. Unset: the
    /// default (`min_group_size()`).
    pub min_group_size: Option<u32>,
    /// How free SQL (query_sql, materialize_sql) and preview_masked show a
    /// PII column instead of refusing it. Keyed by category or by
    /// `schema.table.column` (which wins); get_metric ignores it.
    pub masking: BTreeMap<String, MaskMethod>,
    pub defined_at: Option<Origin>,
    /// Categories the caller may see beyond this policy (a role's
    /// `pii_allowed` in access_policy.yaml, issue 37): set only on the model
    /// a session cuts for that caller, never read from pii_policy.yaml. A
    /// column's widened categories count as absent for every decision
    /// (`pii::decide`); a catastrophic category is never widened (`sees`).
    pub widened: Vec<String>,
}

/// What a masked column shows in place of its value. NULL stays NULL.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum MaskMethod {
    /// `***` for every value: only whether a value is there.
    Redact,
    /// A salted MD5 of the value, the salt a secret of the running server:
    /// equal values give equal hashes (count, group and join on them), and
    /// no one without the salt can test a guess.
    Hash,
    /// `***` and the last four characters, for values longer than eight
    /// characters (shorter ones are redacted): card and phone numbers.
    Last4,
    /// `***@` and the domain of an e-mail address (redacted without an `@`).
    EmailDomain,
}

impl MaskMethod {
    pub const ALL: [&'static str; 4] = ["redact", "hash", "last4", "email_domain"];

    pub fn parse(s: &str) -> Option<MaskMethod> {
        match s {
            "redact" => Some(MaskMethod::Redact),
            "hash" => Some(MaskMethod::Hash),
            "last4" => Some(MaskMethod::Last4),
            "email_domain" => Some(MaskMethod::EmailDomain),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            MaskMethod::Redact => "redact",
            MaskMethod::Hash => "hash",
            MaskMethod::Last4 => "last4",
            MaskMethod::EmailDomain => "email_domain",
        }
    }

    /// Shows part of the value itself (not allowed for credentials).
    pub fn shows_part(self) -> bool {
        matches!(self, MaskMethod::Last4 | MaskMethod::EmailDomain)
    }
}

/// The minimum group size when the policy sets none: results grouped or
/// filtered on a personal column never rest on fewer than 5 people.
pub const DEFAULT_MIN_GROUP_SIZE: u32 = 5;

impl PiiPolicy {
    /// Whether the caller sees `category` as if it were not PII (widened
    /// for its role); never a catastrophic category, whatever was set.
    pub fn sees(&self, category: &str) -> bool {
        !CATASTROPHIC_CATEGORIES.contains(&category) && self.widened.iter().any(|w| w == category)
    }

    /// Whether `category` is blocked: the policy's own or the catastrophic
    /// floor. The rule `blocked()` lists; asked per column, without the list.
    pub fn blocks(&self, category: &str) -> bool {
        CATASTROPHIC_CATEGORIES.contains(&category) || self.block.iter().any(|b| b == category)
    }

    /// Blocked categories: the policy's plus the catastrophic floor.
    pub fn blocked(&self) -> Vec<String> {
        let mut out: Vec<String> = CATASTROPHIC_CATEGORIES.iter().map(|s| s.to_string()).collect();
        for c in &self.block {
            if !out.contains(c) {
                out.push(c.clone());
            }
        }
        out
    }

    pub fn tag(&self, table: &TableRef, column: &str) -> Option<&ColumnTag> {
        Self::lookup(&self.column_overrides, table, column)
    }

    /// How `table.column`, carrying `categories`, is masked: its own rule;
    /// else, when every one of its categories has a rule, the one revealing
    /// least (a category without a rule leaves the column unmasked).
    pub fn mask_of(&self, table: &TableRef, column: &str, categories: &[String]) -> Option<MaskMethod> {
        if let Some(m) = Self::lookup(&self.masking, table, column) {
            return Some(*m);
        }
        if categories.is_empty() {
            return None;
        }
        categories.iter().map(|c| self.masking.get(c).copied()).collect::<Option<Vec<_>>>()?.into_iter().min()
    }

    pub fn inferred_tag(&self, table: &TableRef, column: &str) -> Option<&ColumnTag> {
        Self::lookup(&self.inferred, table, column)
    }

    /// `schema.table.column`; else, when the policy names this table under
    /// exactly one other schema and never under this one, that entry: a
    /// project moved to another schema (`main` in DuckDB, `public` in
    /// Postgres) keeps its reviewed tags instead of silently falling back
    /// to the name classifier.
    fn lookup<'a, V>(tags: &'a BTreeMap<String, V>, table: &TableRef, column: &str) -> Option<&'a V> {
        // Asked for every column of every request: no key is built when
        // there are no entries, and the table's own entries are found by
        // range rather than by reading every key.
        if tags.is_empty() {
            return None;
        }
        let mut key = String::with_capacity(table.schema.len() + table.table.len() + column.len() + 2);
        key.push_str(&table.schema);
        key.push('.');
        key.push_str(&table.table);
        key.push('.');
        let own_prefix_len = key.len();
        key.push_str(column);
        if let Some(t) = tags.get(&key) {
            return Some(t);
        }
        let own_prefix = &key[..own_prefix_len];
        let first_from_own = tags.range::<str, _>((std::ops::Bound::Included(own_prefix), std::ops::Bound::Unbounded)).next();
        if first_from_own.is_some_and(|(k, _)| k.starts_with(own_prefix)) {
            return None;
        }
        let mut found = tags.iter().filter(|(k, _)| {
            let mut parts = k.splitn(3, '.');
            let (_, t, c) = (parts.next(), parts.next(), parts.next());
            t == Some(table.table.as_str()) && c == Some(column)
        });
        match (found.next(), found.next()) {
            (Some((_, t)), None) => Some(t),
            _ => None,
        }
    }

    /// The minimum group size (k) every result grouped or filtered on a
    /// personal column applies: the policy's, else the default.
    pub fn min_group_size(&self) -> u32 {
        self.min_group_size.unwrap_or(DEFAULT_MIN_GROUP_SIZE)
    }
}

/// `^[A-Za-z_][A-Za-z0-9_$]*$`, the shape of every name in the model.
pub fn is_identifier(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
}

/// Up to three close matches for `name` among `candidates`, best first.
/// Used by the loader and by every `unknown_*` error.
pub fn close_matches<'a>(name: &str, candidates: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let lower = name.to_ascii_lowercase();
    let mut scored: Vec<(f64, &str)> = candidates
        .into_iter()
        .filter_map(|c| {
            let cl = c.to_ascii_lowercase();
            let mut score = strsim::jaro_winkler(&lower, &cl);
            // A candidate that contains the name (or the reverse) is a strong hint:
            // `country` for `customer_country`, `order` for `orders`.
            if !lower.is_empty() && (cl.contains(&lower) || lower.contains(&cl)) {
                score = score.max(0.85);
            }
            (score >= 0.75).then_some((score, c))
        })
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored.dedup_by(|a, b| a.1 == b.1);
    scored.into_iter().take(3).map(|(_, c)| c.to_string()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn computed(expr: &str) -> Column {
        Column { name: "c".into(), data_type: None, description: None, nullable: None, expr: Some(expr.into()) }
    }

    #[test]
    fn a_computed_expression_reads_the_words_outside_its_strings() {
        let c = computed("case when \"Ship Cost\" = 0 then 'free email' when shipping_cost < 6 then 'it''s cheap' else `raw` end");
        assert_eq!(c.reads(), ["case", "when", "Ship Cost", "then", "when", "shipping_cost", "then", "else", "raw", "end"]);
        assert!(Column { expr: None, ..computed("") }.reads().is_empty());
    }

    #[test]
    fn a_computed_expression_must_be_one_expression_by_its_shape() {
        assert_eq!(computed_expr_problem("case when a = ';' then '--' end"), None);
        assert_eq!(computed_expr_problem("coalesce(a, 'b)')"), None);
        for bad in ["", "  ", "a; drop table t", "a -- b", "a /* b */", "f(a", "f(a))", "a = 'b", "\"a"] {
            assert!(computed_expr_problem(bad).is_some(), "{bad}");
        }
    }
}
