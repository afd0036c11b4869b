//! Held-out evaluation (issue 38, item 5): data written without looking at
//! the code it measures, so the figures are measured, not fitted.
//!
//! - Search: `tests/heldout/search.tsv`, natural-language questions over
//!   Chinook and Sakila (`tests/heldout/{chinook,sakila}.sql`, public sample
//!   databases the synonym table never saw). Each database is built in
//!   DuckDB, indexed the way `schemabrain index` does it, and asked every
//!   question through find_relevant_tables and find_relevant_entities;
//!   Recall@1, @3 and @10 are printed and held to floors.
//! - PII: `tests/heldout/pii.tsv`, column names from public schemas
//!   labelled by hand; precision and recall of the name classifier, per
//!   column (personal or not) and per (column, category), on every row and
//!   on the rows whose name alone decides the label.
//!
//! The floors sit a little under the figures measured when the sets were
//! written (docs/search.md, docs/pii.md), so a regression fails; a gain is
//! raised into the floors by hand. The fitted sets live in search.rs and
//! pii.rs; this module depends only on the public tool surface, the index
//! and `pii::classify_name`.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use serde_json::json;

use schemabrain::project::Project;
use schemabrain::tools::surface::invoke;
use schemabrain::tools::Execution;

use crate::common::repo;

const SEARCH: &str = "tests/heldout/search.tsv";
const PII: &str = "tests/heldout/pii.tsv";
/// The held-out databases, each with the number of tables its DDL creates
/// (so a DDL that half-loads cannot pass as a smaller, easier set).
const DATABASES: &[(&str, usize)] = &[("chinook", 11), ("sakila", 16)];
/// The 12-category taxonomy (the charter's); a label outside it is a typo
/// in the corpus.
use schemabrain::model::PII_CATEGORIES as CATEGORIES;

/// The data rows of a tab-separated file (comments and blank lines
/// skipped), each with its 1-based line number and exactly `fields` fields.
fn rows(rel: &str, fields: usize) -> Vec<(usize, Vec<String>)> {
    let text = std::fs::read_to_string(repo(rel)).unwrap_or_else(|e| panic!("{rel}: {e}"));
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        let parts: Vec<String> = line.split('\t').map(str::to_string).collect();
        assert_eq!(parts.len(), fields, "{rel}:{}: expected {fields} tab-separated fields, got {}: {line:?}", i + 1, parts.len());
        out.push((i + 1, parts));
    }
    out
}

// ---------------------------------------------------------------------------
// Search
// ---------------------------------------------------------------------------

struct Question {
    line: usize,
    db: String,
    text: String,
    /// Table names (unqualified, as in the DDL); any of them counts.
    tables: Vec<String>,
}

fn questions() -> Vec<Question> {
    let known: BTreeSet<&str> = DATABASES.iter().map(|d| d.0).collect();
    rows(SEARCH, 3)
        .into_iter()
        .map(|(line, f)| {
            assert!(known.contains(f[0].as_str()), "{SEARCH}:{line}: unknown database {:?} (known: {known:?})", f[0]);
            let tables: Vec<String> = f[2].split('|').map(|t| t.trim().to_string()).filter(|t| !t.is_empty()).collect();
            assert!(!f[1].trim().is_empty() && !tables.is_empty(), "{SEARCH}:{line}: a question and at least one table");
            Question { line, db: f[0].clone(), text: f[1].clone(), tables }
        })
        .collect()
}

/// Each held-out database built from its DDL and indexed into a project of
/// its own, once per test run.
fn projects() -> &'static BTreeMap<String, Project> {
    static P: OnceLock<BTreeMap<String, Project>> = OnceLock::new();
    P.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(crate::engines_servers::unique_name("heldout"));
        std::fs::create_dir_all(&dir).unwrap();
        let mut out = BTreeMap::new();
        for (db, tables) in DATABASES {
            let path: PathBuf = dir.join(format!("{db}.duckdb"));
            let ddl_path = format!("tests/heldout/{db}.sql");
            let ddl = std::fs::read_to_string(repo(&ddl_path)).unwrap_or_else(|e| panic!("{ddl_path}: {e}"));
            duckdb::Connection::open(&path).unwrap().execute_batch(&ddl).unwrap_or_else(|e| panic!("{ddl_path}: {e}"));
            let project_dir = crate::index::index_into(&format!("duckdb:{}", path.display()), &[], &format!("heldout-{db}"));
            let project = Project::open(&project_dir).unwrap_or_else(|d| panic!("the indexed {db} project loads:\n{d}"));
            let catalog = project.catalog.as_ref().unwrap_or_else(|| panic!("{db}: the index saved a catalog snapshot"));
            assert_eq!(catalog.tables.len(), *tables, "{db}: every table of the DDL is in the catalog");
            out.insert(db.to_string(), project);
        }
        out
    })
}

/// Recall@1, @3, @10 of one search tool over the held-out questions;
/// `wanted` gives the names a question accepts in the tool's `key` field.
fn recall(tool: &str, key: &str, wanted: fn(&Project, &Question) -> BTreeSet<String>) -> [f64; 3] {
    let projects = projects();
    let questions = questions();
    let mut hits: BTreeMap<&str, [usize; 4]> = BTreeMap::new();
    let mut misses = Vec::new();
    for q in &questions {
        let project = &projects[&q.db];
        let want = wanted(project, q);
        let env = invoke(project, tool, &json!({"query": q.text, "limit": 10, "response_format": "detailed"}), Execution::DryRun);
        assert_ne!(env.status().as_str(), "error", "{SEARCH}:{}: {tool} fails on {:?}: {}", q.line, q.text, serde_json::to_string(&env).unwrap_or_default());
        let data = env.data().cloned().unwrap_or_default();
        let ranked: Vec<String> = data["hits"].as_array().map(|h| h.iter().map(|x| x[key].as_str().unwrap_or("").to_ascii_lowercase()).collect()).unwrap_or_default();
        let pos = ranked.iter().position(|r| want.contains(r));
        let counts = hits.entry(q.db.as_str()).or_default();
        counts[3] += 1;
        for (i, k) in [1, 3, 10].iter().enumerate() {
            if pos.is_some_and(|p| p < *k) {
                counts[i] += 1;
            }
        }
        if pos != Some(0) {
            let rank = pos.map_or("not in the top 10".to_string(), |p| format!("at {}", p + 1));
            misses.push(format!("{}:{:?} wanted {want:?}, {rank}; first {:?}", q.db, q.text, ranked.first()));
        }
    }
    let mut total = [0usize; 4];
    for (db, c) in &hits {
        let n = c[3] as f64;
        eprintln!("{tool} on {db}: {} questions, Recall@1 {:.2}, @3 {:.2}, @10 {:.2}", c[3], c[0] as f64 / n, c[1] as f64 / n, c[2] as f64 / n);
        for (t, x) in total.iter_mut().zip(c) {
            *t += x;
        }
    }
    let n = total[3] as f64;
    let r = [total[0] as f64 / n, total[1] as f64 / n, total[2] as f64 / n];
    eprintln!("{tool} held out: {} questions, Recall@1 {:.2}, @3 {:.2}, @10 {:.2}\n  not first:\n  {}", total[3], r[0], r[1], r[2], misses.join("\n  "));
    assert!(total[3] >= 75, "the held-out set holds at least 75 questions, got {}", total[3]);
    assert_eq!(hits.len(), DATABASES.len(), "every held-out database is asked");
    r
}

fn wanted_tables(_: &Project, q: &Question) -> BTreeSet<String> {
    q.tables.iter().map(|t| format!("main.{t}").to_ascii_lowercase()).collect()
}

/// The entities the index bound to the question's tables; a table the
/// index made no entity for leaves nothing to find, which counts as a miss.
fn wanted_entities(p: &Project, q: &Question) -> BTreeSet<String> {
    p.model
        .entities
        .values()
        .filter(|e| q.tables.iter().any(|t| e.table.table.eq_ignore_ascii_case(t)))
        .map(|e| e.name.to_ascii_lowercase())
        .collect()
}

#[test]
fn find_relevant_tables_recall_on_the_held_out_set() {
    let r = recall("find_relevant_tables", "qualified_name", wanted_tables);
    assert!(r[0] >= FLOOR_TABLES[0] && r[1] >= FLOOR_TABLES[1] && r[2] >= FLOOR_TABLES[2], "Recall@1/3/10 {r:?} under the floors {FLOOR_TABLES:?}");
}

#[test]
fn find_relevant_entities_recall_on_the_held_out_set() {
    let r = recall("find_relevant_entities", "name", wanted_entities);
    assert!(r[0] >= FLOOR_ENTITIES[0] && r[1] >= FLOOR_ENTITIES[1] && r[2] >= FLOOR_ENTITIES[2], "Recall@1/3/10 {r:?} under the floors {FLOOR_ENTITIES:?}");
}

/// Recall@1, @3, @10 floors, about four questions under what was measured
/// when the set was written (2026-11-28: tables 0.70, 0.81, 0.84; entities
/// 0.69, 0.81, 0.84).
const FLOOR_TABLES: [f64; 3] = [0.65, 0.76, 0.80];
const FLOOR_ENTITIES: [f64; 3] = [0.64, 0.76, 0.80];

// ---------------------------------------------------------------------------
// PII
// ---------------------------------------------------------------------------

struct Labelled {
    line: usize,
    source: String,
    table: String,
    column: String,
    want: BTreeSet<String>,
    /// Whether the column name alone decides the label (`name`), or only
    /// the table does (`table`).
    by_name: bool,
}

fn corpus() -> Vec<Labelled> {
    rows(PII, 5)
        .into_iter()
        .map(|(line, f)| {
            let want: BTreeSet<String> = f[3].split(',').map(str::trim).filter(|s| !s.is_empty()).map(str::to_string).collect();
            for c in &want {
                assert!(CATEGORIES.contains(&c.as_str()), "{PII}:{line}: unknown category {c:?} (allowed: {CATEGORIES:?})");
            }
            let by_name = match f[4].as_str() {
                "name" => true,
                "table" => false,
                other => panic!("{PII}:{line}: decided_by is `name` or `table`, got {other:?}"),
            };
            assert!(!f[2].is_empty(), "{PII}:{line}: an empty column name");
            Labelled { line, source: f[0].clone(), table: f[1].clone(), column: f[2].clone(), want, by_name }
        })
        .collect()
}

/// The classifier's figures over some rows of the corpus.
#[derive(Default)]
struct Figures {
    columns: usize,
    /// Per column: personal (any category) or not.
    column_tp: usize,
    column_predicted: usize,
    column_expected: usize,
    /// Per (column, category) pair.
    pair_tp: usize,
    pair_predicted: usize,
    pair_expected: usize,
    /// Columns labelled with a floor category (credential, payment_card,
    /// government_id), and those of them given none of their floor labels.
    floor_expected: usize,
    floor_missed: Vec<String>,
    missed: Vec<String>,
    false_alarms: Vec<String>,
    wrong_category: Vec<String>,
}

impl Figures {
    fn add(&mut self, row: &Labelled, got: &BTreeSet<String>) {
        let at = format!("{}:{} {}.{}", row.line, row.source, row.table, row.column);
        self.columns += 1;
        let (want_personal, got_personal) = (!row.want.is_empty(), !got.is_empty());
        self.column_tp += usize::from(want_personal && got_personal);
        self.column_predicted += usize::from(got_personal);
        self.column_expected += usize::from(want_personal);
        self.pair_tp += got.intersection(&row.want).count();
        self.pair_predicted += got.len();
        self.pair_expected += row.want.len();
        let floor: BTreeSet<&String> = row.want.iter().filter(|c| schemabrain::pii::is_catastrophic(c)).collect();
        if !floor.is_empty() {
            self.floor_expected += 1;
            if !floor.iter().any(|c| got.contains(*c)) {
                self.floor_missed.push(format!("{at}: expected {:?}, got {got:?}", row.want));
            }
        }
        match (want_personal, got_personal) {
            (true, false) => self.missed.push(format!("{at}: expected {:?}", row.want)),
            (false, true) => self.false_alarms.push(format!("{at}: got {got:?}")),
            (true, true) if *got != row.want => self.wrong_category.push(format!("{at}: expected {:?}, got {got:?}", row.want)),
            _ => {}
        }
    }

    fn ratio(a: usize, b: usize) -> f64 {
        if b == 0 {
            1.0
        } else {
            a as f64 / b as f64
        }
    }

    /// [column precision, column recall, pair precision, pair recall, floor recall]
    fn rates(&self) -> [f64; 5] {
        [
            Self::ratio(self.column_tp, self.column_predicted),
            Self::ratio(self.column_tp, self.column_expected),
            Self::ratio(self.pair_tp, self.pair_predicted),
            Self::ratio(self.pair_tp, self.pair_expected),
            Self::ratio(self.floor_expected - self.floor_missed.len(), self.floor_expected),
        ]
    }

    fn report(&self, what: &str) -> String {
        let r = self.rates();
        format!(
            "{what}: {} columns ({} personal); per column precision {:.3}, recall {:.3}; per (column, category) precision {:.3}, recall {:.3}; floor columns found {}/{}",
            self.columns,
            self.column_expected,
            r[0],
            r[1],
            r[2],
            r[3],
            self.floor_expected - self.floor_missed.len(),
            self.floor_expected
        )
    }
}

/// Floors for [column precision, column recall, pair precision, pair
/// recall, floor recall], on every row and on the rows decided by name, a
/// little under what was measured when the corpus was written (2026-11-28:
/// every row 0.915, 0.500, 0.783, 0.428, 18/42; by name 0.924, 0.581,
/// 0.790, 0.497, 18/37). The low recalls are the finding, not a target:
/// raise the floors when the classifier improves.
const FLOOR_PII_ALL: [f64; 5] = [0.88, 0.47, 0.75, 0.40, 0.40];
const FLOOR_PII_BY_NAME: [f64; 5] = [0.89, 0.55, 0.76, 0.47, 0.45];

#[test]
fn name_classifier_precision_and_recall_on_the_held_out_corpus() {
    let corpus = corpus();
    let (mut all, mut by_name) = (Figures::default(), Figures::default());
    for row in &corpus {
        let got: BTreeSet<String> = schemabrain::pii::classify_name(&row.column).into_iter().map(str::to_string).collect();
        all.add(row, &got);
        if row.by_name {
            by_name.add(row, &got);
        }
    }
    eprintln!(
        "{}\n{}\n  missed:\n  {}\n  false alarms:\n  {}\n  personal, other categories:\n  {}",
        all.report("held-out PII corpus, every row"),
        by_name.report("held-out PII corpus, rows decided by name"),
        all.missed.join("\n  "),
        all.false_alarms.join("\n  "),
        all.wrong_category.join("\n  ")
    );
    assert!(all.columns >= 300, "the held-out corpus holds at least 300 columns, got {}", all.columns);
    assert!(all.floor_expected >= 30, "the corpus holds floor columns to miss, got {}", all.floor_expected);
    for (figures, floor, what) in [(&all, FLOOR_PII_ALL, "every row"), (&by_name, FLOOR_PII_BY_NAME, "rows decided by name")] {
        let r = figures.rates();
        for (i, name) in ["column precision", "column recall", "pair precision", "pair recall", "floor recall"].iter().enumerate() {
            assert!(r[i] >= floor[i], "{what}: {name} {:.3} is under its floor {:.3}\n{}", r[i], floor[i], figures.report(what));
        }
    }
}
