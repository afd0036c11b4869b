//! Shared test helpers: paths, the demo project, a demo warehouse built once
//! per content of its generator, YAML test files read as JSON.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

use schemabrain::engine::{DuckDbEngine, Engine, Limits};
use schemabrain::project::Project;

pub fn repo(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

/// Sorted files (or directories) directly under `dir` whose name ends with `suffix`.
pub fn entries(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()))
        .map(|e| e.expect("dir entry").path())
        .filter(|p| p.file_name().and_then(|n| n.to_str()).is_some_and(|n| n.ends_with(suffix)))
        .collect();
    v.sort();
    v
}

/// Whether goldens should be rewritten instead of compared.
pub fn updating() -> bool {
    std::env::var_os("UPDATE_GOLDEN").is_some()
}

/// Compares `actual` with the file at `path`; writes it when missing or when
/// UPDATE_GOLDEN is set, failing in the missing case so the new file is seen.
pub fn check_golden(path: &Path, actual: &str) {
    let expected = std::fs::read_to_string(path).ok();
    if updating() || expected.is_none() {
        std::fs::create_dir_all(path.parent().expect("golden has a parent")).expect("create golden dir");
        std::fs::write(path, actual).expect("write golden");
        assert!(expected.is_some() || updating(), "wrote missing golden {}; check it and commit it", path.display());
        return;
    }
    let expected = expected.expect("checked above");
    if expected != actual {
        panic!(
            "golden mismatch for {}\n--- expected\n{expected}\n--- actual\n{actual}\n(re-run with UPDATE_GOLDEN=1 to accept)",
            path.display()
        );
    }
}

/// The demo project as declared (no catalog).
pub fn demo_project() -> &'static Project {
    static P: OnceLock<Project> = OnceLock::new();
    // As declared: `cargo run -- demo` leaves a snapshot in semantics/demo,
    // which must not change what the tests see.
    P.get_or_init(|| Project::open_declared(&repo("semantics/demo")).unwrap_or_else(|d| panic!("demo does not load:\n{d}")))
}

/// The demo warehouse, built once per generator content into the cargo
/// target's test temp dir (not the clone).
pub fn demo_warehouse() -> &'static Path {
    static W: OnceLock<PathBuf> = OnceLock::new();
    W.get_or_init(|| {
        let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(format!("demo-{}", schemabrain::demo::generator_fingerprint()));
        schemabrain::demo::ensure_warehouse(&dir).expect("demo warehouse builds");
        dir.join(schemabrain::demo::WAREHOUSE_FILE)
    })
}

pub fn demo_engine() -> DuckDbEngine {
    let w = demo_warehouse();
    DuckDbEngine::open_read_only(w, &format!("duckdb:{}", w.display())).expect("warehouse opens")
}

/// The demo project checked against the warehouse's real catalog.
pub fn demo_project_with_catalog() -> &'static Project {
    static P: OnceLock<Project> = OnceLock::new();
    P.get_or_init(|| {
        let catalog = demo_engine().introspect().expect("introspects");
        demo_project().clone().with_catalog(catalog).unwrap_or_else(|d| panic!("demo disagrees with its warehouse:\n{d}"))
    })
}

pub fn limits() -> Limits {
    Limits { max_rows: 10_000, timeout: Duration::from_secs(60) }
}

/// A YAML test file read as JSON (test data only).
pub fn yaml_file_as_json(path: &Path) -> serde_json::Value {
    use saphyr::{LoadableYamlNode, Scalar, Yaml};
    fn conv(y: &Yaml) -> serde_json::Value {
        match y {
            Yaml::Value(Scalar::Null) => serde_json::Value::Null,
            Yaml::Value(Scalar::Boolean(b)) => (*b).into(),
            Yaml::Value(Scalar::Integer(i)) => (*i).into(),
            Yaml::Value(Scalar::FloatingPoint(f)) => f.into_inner().into(),
            Yaml::Value(Scalar::String(s)) => s.to_string().into(),
            Yaml::Sequence(v) => v.iter().map(conv).collect(),
            Yaml::Mapping(m) => m
                .iter()
                .map(|(k, v)| (k.as_str().map(str::to_string).unwrap_or_else(|| format!("{k:?}")), conv(v)))
                .collect::<serde_json::Map<_, _>>()
                .into(),
            other => panic!("unsupported YAML in test data: {other:?}"),
        }
    }
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let docs = Yaml::load_from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    conv(&docs[0])
}

/// Spawns `command` and SIGKILLs it `delay` after the first file in `dir`
/// newer than the spawn appears (or once `limit` has passed without one),
/// then reaps it: a crash at a random point of a run that writes files.
pub fn kill_after_first_write(command: &mut std::process::Command, dir: &Path, limit: Duration, delay: Duration) {
    let spawned = std::time::SystemTime::now();
    let mut child = command.spawn().unwrap();
    let writing = || std::fs::read_dir(dir).into_iter().flatten().flatten().any(|e| e.metadata().and_then(|m| m.modified()).is_ok_and(|t| t >= spawned));
    let watch = std::time::Instant::now();
    while !writing() && watch.elapsed() < limit {
        std::thread::sleep(Duration::from_millis(1));
    }
    std::thread::sleep(delay);
    let _ = child.kill();
    let _ = child.wait();
}

/// Whether this run is CI: `CI=true` (or `CI=1`). `.ci/run` sets it itself.
pub fn in_ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// Whether the run asked to skip what needs a server or an outside engine:
/// `SCHEMABRAIN_SKIP_SERVERS=1` (never honoured under CI).
pub fn skipping_servers() -> bool {
    std::env::var("SCHEMABRAIN_SKIP_SERVERS").is_ok_and(|v| v == "1" || v == "true")
}

/// A server (or a Python client, Java, a wheel) a test needs is missing: the
/// test fails, unless `SCHEMABRAIN_SKIP_SERVERS=1` asked for skipping and
/// this is not CI; then it says so on stderr, past libtest's capture (a
/// plain `cargo test` shows the line), and returns `None` for the test to
/// return early.
pub fn unavailable<T>(what: &str, why: &str) -> Option<T> {
    let message = format!("{what} is unavailable: {why}");
    if in_ci() {
        panic!("{message} (CI=true: a missing server is a failure, SCHEMABRAIN_SKIP_SERVERS is not honoured)");
    }
    if !skipping_servers() {
        panic!("{message} (set SCHEMABRAIN_SKIP_SERVERS=1 to skip the tests that need it)");
    }
    let test = std::thread::current().name().unwrap_or("?").to_string();
    // Straight to the process's stderr: libtest captures `eprintln!` of a
    // passing test, not writes to the stream itself.
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "*** SKIPPED (SCHEMABRAIN_SKIP_SERVERS=1) {test}: {message} ***");
    // And once more under libtest's summary, when the binary exits.
    let mut skipped = SKIPPED.lock().unwrap_or_else(|e| e.into_inner());
    if skipped.is_empty() {
        // SAFETY: registers a plain extern "C" fn with no captured state.
        unsafe {
            libc::atexit(print_skipped);
        }
    }
    skipped.push(test);
    None
}

/// The tests `unavailable` skipped, for the summary at exit.
static SKIPPED: std::sync::Mutex<Vec<String>> = std::sync::Mutex::new(Vec::new());

extern "C" fn print_skipped() {
    use std::io::Write;
    let mut skipped = SKIPPED.lock().unwrap_or_else(|e| e.into_inner()).clone();
    skipped.sort();
    skipped.dedup();
    let _ = writeln!(
        std::io::stderr().lock(),
        "\n*** {} tests SKIPPED for a missing server (SCHEMABRAIN_SKIP_SERVERS=1); they passed without checking anything:\n    {}\n",
        skipped.len(),
        skipped.join("\n    ")
    );
}

/// The PII value a returned cell shows, if any, compared case-insensitively
/// as substrings: the cell holds a value (`upper(email)`, a concatenation)
/// or a stretch of at least 10 characters of one (`substr(email, 1, 10)`;
/// shorter stretches are words that clean columns hold too: a street's
/// "Garden" is also a product category).
pub fn pii_leak<'a>(cell: &str, values: impl IntoIterator<Item = &'a String>) -> Option<String> {
    let cell = cell.to_lowercase();
    values.into_iter().find_map(|v| {
        let v_low = v.to_lowercase();
        let holds = v_low.chars().count() >= 4 && cell.contains(&v_low);
        let part = cell.chars().count() >= 10 && v_low.contains(&cell);
        (holds || part).then(|| v.clone())
    })
}

#[test]
fn the_leak_net_matches_values_inside_cells_in_any_case() {
    let values = ["ana.smith42@example.com".to_string(), "+1-555-0001234".to_string()];
    for cell in ["ANA.SMITH42@EXAMPLE.COM", "x ana.smith42@example.com y", "ana.smith4", "Phone: +1-555-0001234", "555-000123"] {
        assert!(pii_leak(cell, &values).is_some(), "{cell}");
    }
    for cell in ["example", "garden", "smith", "2024-01-01", ""] {
        assert!(pii_leak(cell, &values).is_none(), "{cell}");
    }
}

/// A copy of the project directory `from` at `to`, without its built
/// warehouse (`*.duckdb`) and index (`.schemabrain/`).
pub fn copy_project(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for e in std::fs::read_dir(from).expect("read dir") {
        let e = e.expect("entry");
        let target = to.join(e.file_name());
        if e.path().is_dir() {
            if e.file_name() != ".schemabrain" {
                copy_project(&e.path(), &target);
            }
        } else if !e.file_name().to_string_lossy().ends_with(".duckdb") {
            std::fs::copy(e.path(), &target).expect("copy");
        }
    }
}
