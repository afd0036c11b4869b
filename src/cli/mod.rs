//! The command line: clap flags → tool arguments → `tools` → printed output.
//! Results go to stdout (with `--json`, exactly one JSON document); logs and
//! progress go to stderr.
//!
//! Exit codes: 0 answered (success, empty, partial, degraded); 1 refused or
//! invalid request; 2 operational failure (engine down, unreadable project).
//!
//! Architecture invariant: no planning or SQL here; everything a user sees
//! is a `tools` answer printed.

/// Writes a line to stdout. A closed pipe (`schemabrain … | head`) ends the
/// output quietly instead of panicking, as a well-behaved CLI should.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let mut stdout = std::io::stdout().lock();
        if let Err(e) = writeln!(stdout, $($arg)*) {
            if e.kind() == std::io::ErrorKind::BrokenPipe {
                std::process::exit(0);
            }
        }
    }};
}

mod args;
mod render;
mod serve;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

pub use args::{parse_filter, parse_order, Cli, Command, RequestFlags};

use crate::catalog::Catalog;
use crate::engine::{self, Limits};
use crate::envelope::{Envelope, ErrorCode, FailureKind, Recovery, Status, ToolError};
use crate::model::{load_project_with_extra, Diagnostics};
use crate::project::Project;
use crate::tools::{self, Execution, GetMetricArgs};

pub fn run() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Demo { project, json } => demo(project, json),
        Command::Compile { metrics, validate, request } => compile(&metrics, validate, &request),
        Command::Query { metrics, source, max_rows, timeout_ms, request } => {
            query(&metrics, source.as_deref(), max_rows, timeout_ms, &request)
        }
        Command::Check { project, source, json } => check(&project, source.as_deref(), json),
        Command::Serve(args) => serve::serve(&args),
        Command::Audit { command } => serve::audit(&command),
        Command::Export { to, project, schema } => export(&to, project, schema.as_deref()),
    }
}

/// `schemabrain export`: the project's DuckDB source (the demo warehouse by
/// default) copied into the target, with a line per table on stdout.
fn export(to: &str, project: Option<PathBuf>, schema: Option<&str>) -> ExitCode {
    let target = match engine::export::Target::parse(to, schema) {
        Ok(t) => t,
        Err(msg) => return usage_failure(&msg, false),
    };
    // A project of its own exports its `duckdb:` source; otherwise the demo
    // project is prepared (files written if missing, warehouse built).
    let own = project.as_ref().filter(|d| d.join("schemabrain.yaml").is_file() && !is_demo_project(d));
    let source = match own {
        Some(dir) => match Project::open_declared(dir) {
            Ok(p) => match p.source() {
                Some(s) => s,
                None => return usage_failure(&format!("{} names no source in schemabrain.yaml", dir.display()), false),
            },
            Err(d) => return project_failure(&d, false),
        },
        None => match prepare_demo(project) {
            Ok(dir) => format!("duckdb:{}", dir.join(crate::demo::WAREHOUSE_FILE).display()),
            Err(msg) => return operational(&msg, false),
        },
    };
    let Some(path) = source.strip_prefix("duckdb:") else {
        return usage_failure(&format!("export reads a DuckDB source, not `{source}`"), false);
    };
    let duck = match engine::DuckDbEngine::open_read_only(Path::new(path), &source) {
        Ok(e) => e,
        Err(e) => return operational(&e.to_string(), false),
    };
    match engine::export::export(&duck, "main", &target) {
        Ok(report) => {
            for (table, rows) in &report.tables {
                out!("{table}: {rows} rows");
            }
            eprintln!("exported {} tables in {:.1?}", report.tables.len(), report.elapsed);
            ExitCode::SUCCESS
        }
        Err(e) => operational(&e.to_string(), false),
    }
}

/// Whether `dir` holds the demo project (its source is the demo warehouse).
fn is_demo_project(dir: &Path) -> bool {
    std::fs::read_to_string(dir.join("schemabrain.yaml")).is_ok_and(|s| s.contains("name: demo"))
}

/// What an envelope means for the exit code.
pub fn exit_code(env: &Envelope) -> u8 {
    match env.status() {
        Status::Error | Status::Refused => match env.tool_error().map(ToolError::code) {
            Some(ErrorCode::QueryFailed | ErrorCode::Timeout | ErrorCode::Internal) => 2,
            _ => 1,
        },
        _ => 0,
    }
}

fn print_envelope(env: &Envelope, json: bool, title: &str) -> ExitCode {
    if json {
        out!("{}", serde_json::to_string_pretty(env).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}")));
    } else {
        render::envelope(env, title);
    }
    ExitCode::from(exit_code(env))
}

/// A project that does not load: exit 2, with every diagnostic.
fn project_failure(diags: &Diagnostics, json: bool) -> ExitCode {
    if json {
        let env = Envelope::error(ToolError::new(FailureKind::InternalError, format!("the project does not load:\n{diags}"), Recovery::none()));
        out!("{}", serde_json::to_string_pretty(&env).unwrap_or_default());
    } else {
        eprintln!("{diags}");
    }
    ExitCode::from(2)
}

fn usage_failure(message: &str, json: bool) -> ExitCode {
    if json {
        let env = Envelope::error(ToolError::new(FailureKind::MalformedName, message.to_string(), Recovery::none()));
        out!("{}", serde_json::to_string_pretty(&env).unwrap_or_default());
    } else {
        eprintln!("error: {message}");
    }
    ExitCode::from(1)
}

fn compile(metrics: &[String], validate: bool, flags: &RequestFlags) -> ExitCode {
    // Arguments that are files add their metric to the project; the rest are names.
    let files: Vec<&Path> = metrics.iter().map(Path::new).filter(|p| p.is_file()).collect();
    let (model, diags) = load_project_with_extra(&flags.project, &files);
    if !diags.is_empty() {
        return project_failure(&diags, flags.json);
    }
    let mut names = Vec::new();
    for m in metrics {
        let file = Path::new(m);
        if !file.is_file() {
            names.push(m.clone());
            continue;
        }
        match model.metrics.values().find(|x| same_file(&x.defined_at.file, file)) {
            Some(x) => names.push(x.name.clone()),
            None => return usage_failure(&format!("{} defines no metric", file.display()), flags.json),
        }
    }
    let dir = crate::model::resolve_project_dir(&flags.project);
    let snapshot = match Catalog::load_snapshot(&dir) {
        Ok(s) => s,
        Err(msg) => return operational(&msg, flags.json),
    };
    let project = match Project::from_parts(dir, model, snapshot) {
        Ok(p) => p,
        Err(d) => return project_failure(&d, flags.json),
    };
    let args = match flags.to_args(&names) {
        Ok(a) => GetMetricArgs { dry_run: true, ..a },
        Err(msg) => return usage_failure(&msg, flags.json),
    };
    let execution = if validate { Execution::Validate } else { Execution::DryRun };
    let env = tools::get_metric(&project, &args, execution);
    if flags.json {
        return print_envelope(&env, true, "");
    }
    render::compiled(&env);
    ExitCode::from(exit_code(&env))
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => a == b,
    }
}

fn query(metrics: &[String], source: Option<&str>, max_rows: Option<usize>, timeout_ms: Option<u64>, flags: &RequestFlags) -> ExitCode {
    let mut dir = flags.project.clone();
    if source == Some("demo") {
        match prepare_demo(None) {
            Ok(d) => dir = d,
            Err(msg) => return operational(&msg, flags.json),
        }
    }
    // The live catalog replaces the snapshot, so a stale snapshot is no obstacle.
    let project = match Project::open_declared(&dir) {
        Ok(p) => p,
        Err(d) => return project_failure(&d, flags.json),
    };
    let source = match source.filter(|s| *s != "demo").map(|s| s.to_string()).or_else(|| project.source()) {
        Some(s) => s,
        None => return usage_failure("no source: pass --source URL or set `source` in schemabrain.yaml", flags.json),
    };
    let engine = match engine::open(&source) {
        Ok(e) => e,
        Err(e) => return operational(&e.to_string(), flags.json),
    };
    let project = match refresh_catalog(project, engine.as_ref()) {
        Ok(p) => p,
        Err(code) => return code(flags.json),
    };
    let args = match flags.to_args(metrics) {
        Ok(a) => a,
        Err(msg) => return usage_failure(&msg, flags.json),
    };
    let settings = &project.model.settings;
    let limits = Limits {
        max_rows: max_rows.unwrap_or(settings.max_rows as usize),
        timeout: Duration::from_millis(timeout_ms.unwrap_or(settings.timeout_ms)),
    };
    let env = tools::get_metric(&project, &args, Execution::Run { engine: engine.as_ref(), limits });
    print_envelope(&env, flags.json, &metrics.join(", "))
}

type Failure = Box<dyn Fn(bool) -> ExitCode>;

/// Introspects the source, writes the snapshot when it changed, and checks
/// the model against it.
fn refresh_catalog(project: Project, engine: &dyn engine::Engine) -> Result<Project, Failure> {
    let catalog = engine.introspect().map_err(|e| -> Failure {
        let msg = e.to_string();
        Box::new(move |json| operational(&msg, json))
    })?;
    if project.catalog.as_ref() != Some(&catalog) {
        if let Err(e) = catalog.save_snapshot(&project.dir) {
            tracing::warn!("could not write the catalog snapshot: {e}");
        }
    }
    project.with_catalog(catalog).map_err(|d| -> Failure { Box::new(move |json| project_failure(&d, json)) })
}

fn operational(message: &str, json: bool) -> ExitCode {
    if json {
        let env = Envelope::error(ToolError::query_failed(message.to_string()));
        out!("{}", serde_json::to_string_pretty(&env).unwrap_or_default());
    } else {
        eprintln!("error: {message}");
    }
    ExitCode::from(2)
}

fn check(dir: &Path, source: Option<&str>, json: bool) -> ExitCode {
    let opened = if source.is_some() { Project::open_declared(dir) } else { Project::open(dir) };
    let project = match opened {
        Ok(p) => p,
        Err(d) if json => {
            let problems: Vec<serde_json::Value> = d
                .iter()
                .map(|x| {
                    serde_json::json!({"file": x.file.display().to_string(), "line": x.line, "key": x.key,
                        "message": x.message, "allowed": x.allowed, "suggestions": x.suggestions})
                })
                .collect();
            out!("{}", serde_json::json!({"ok": false, "problems": problems}));
            return ExitCode::from(2);
        }
        Err(d) => return project_failure(&d, json),
    };
    // Only an explicit --source is opened: `check` alone needs no database.
    if let Some(src) = source.map(|s| engine::resolve_source(s, Path::new("."))) {
        let engine = match engine::open(&src) {
            Ok(e) => e,
            Err(e) => return operational(&e.to_string(), json),
        };
        if let Err(code) = refresh_catalog(project.clone(), engine.as_ref()) {
            return code(json);
        }
    }
    let m = &project.model;
    let summary = format!(
        "{}: {} entities, {} joins, {} metrics, no problems",
        project.dir.display(),
        m.entities.len(),
        m.joins.len(),
        m.metrics.len() + m.derived.len()
    );
    if json {
        out!("{}", serde_json::json!({"ok": true, "summary": summary}));
    } else {
        out!("{summary}");
    }
    ExitCode::SUCCESS
}

/// The demo project directory: `semantics/demo` when run from a clone,
/// else `./schemabrain-demo`; model files written if missing, warehouse
/// built if missing.
fn prepare_demo(project: Option<PathBuf>) -> Result<PathBuf, String> {
    let dir = project.unwrap_or_else(|| {
        let in_clone = PathBuf::from("semantics/demo");
        if in_clone.join("schemabrain.yaml").is_file() {
            in_clone
        } else {
            PathBuf::from("schemabrain-demo")
        }
    });
    crate::demo::materialize(&dir).map_err(|e| format!("cannot write the demo project to {}: {e}", dir.display()))?;
    let started = std::time::Instant::now();
    if crate::demo::ensure_warehouse(&dir).map_err(|e| e.to_string())? {
        eprintln!("built the demo warehouse {} in {:.1?}", dir.join(crate::demo::WAREHOUSE_FILE).display(), started.elapsed());
    }
    Ok(dir)
}

fn demo(project: Option<PathBuf>, json: bool) -> ExitCode {
    let dir = match prepare_demo(project) {
        Ok(d) => d,
        Err(msg) => return operational(&msg, json),
    };
    let flags = |metric: &str, group_by: &[&str], grain: Option<&str>, order: &[&str], limit: Option<i64>, via: &[&str]| {
        (
            metric.to_string(),
            RequestFlags {
                project: dir.clone(),
                group_by: group_by.iter().map(|s| s.to_string()).collect(),
                grain: grain.map(str::to_string),
                time_dimension: None,
                filters: Vec::new(),
                order_by: order.iter().map(|s| s.to_string()).collect(),
                limit,
                via: via.iter().map(|s| s.to_string()).collect(),
                dialect: None,
                json,
            },
        )
    };
    let tour = [
        flags("revenue", &["customer.country"], None, &["revenue desc"], Some(5), &[]),
        flags("order_count", &[], Some("quarter"), &[], Some(4), &[]),
        flags("units_sold", &["product.category"], None, &["units_sold desc"], Some(5), &[]),
        // Two equally short paths lead from orders to regions: the answer is an
        // error whose recovery names the `via` to pass.
        flags("revenue", &["region.name"], None, &[], None, &[]),
        flags("revenue", &["region.name"], None, &["revenue desc"], None, &["order_store"]),
        // A running total over a time spine, and a conversion rate.
        flags("cumulative_revenue", &[], Some("year"), &[], None, &[]),
        flags("signup_order_conversion", &["customer.segment"], Some("year"), &[], None, &[]),
    ];
    let mut worst = 0u8;
    for (metric, f) in &tour {
        if !json {
            out!("\n$ schemabrain query {metric} {}", describe_flags(f));
        }
        let code = query(std::slice::from_ref(metric), None, None, None, f);
        // The ambiguous-path step is meant to fail; only operational failures count.
        if code == ExitCode::from(2) {
            worst = 2;
        }
    }
    ExitCode::from(worst)
}

fn describe_flags(f: &RequestFlags) -> String {
    let mut parts = Vec::new();
    parts.extend(f.group_by.iter().map(|g| format!("--group-by {g}")));
    parts.extend(f.grain.iter().map(|g| format!("--grain {g}")));
    parts.extend(f.order_by.iter().map(|o| format!("--order-by \"{o}\"")));
    parts.extend(f.limit.iter().map(|l| format!("--limit {l}")));
    parts.extend(f.via.iter().map(|v| format!("--via {v}")));
    parts.join(" ")
}
