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
mod index;
mod ossie;
mod render;
mod serve;

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::Parser;

pub use args::{parse_filter, parse_order, Cli, Command, RequestFlags};

use crate::catalog::Catalog;
use crate::engine;
use crate::envelope::{Envelope, ErrorCode, FailureKind, Recovery, Status, ToolError};
use crate::model::{load_project_with_extra, Diagnostics};
use crate::project::Project;
use crate::tools::{self, Introspect, Session, SessionError, SessionOptions};

pub fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return argument_error(e),
    };
    match cli.command {
        Command::Demo { project, json } => demo(project, json),
        Command::Compile { metrics, validate, plan, request } => compile(&metrics, validate, plan, &request),
        Command::Query { metrics, source, max_rows, timeout_ms, request } => {
            query(&metrics, source.as_deref(), max_rows, timeout_ms, &request)
        }
        Command::Check { project, source, json } => check(&project, source.as_deref(), json),
        Command::Serve(args) => serve::serve(&args),
        Command::Audit { command } => serve::audit(&command),
        Command::Auth { command } => serve::auth(&command),
        Command::Export { format: Some(args::ExportCommand::Ossie { project, out }), .. } => ossie::export(&project, out.as_deref()),
        Command::Export { format: None, to: Some(to), project, schema } => export(&to, project, schema.as_deref()),
        Command::Export { format: None, to: None, .. } => usage_failure("export needs --to TARGET, or a format (`export ossie`)", false),
        Command::Index { source, out, schemas, json } => index::index(&source, &out, &schemas, json),
        Command::Graph { project, format } => index::graph(&project, &format),
        Command::Import { from: args::ImportCommand::Dbt { path, out, schema, source, json } } => index::import_dbt(&path, &out, schema.as_deref(), source.as_deref(), json),
        Command::Import { from: args::ImportCommand::Ossie { file, out, source, dialect, json } } => {
            ossie::import(&file, &out, source.as_deref(), dialect.as_deref(), json)
        }
    }
}

/// Flags clap could not parse. `--help` and `--version` print as usual;
/// with `--json` anywhere on the line, an argument error is one JSON
/// envelope on stdout (the README promises JSON in every case), else
/// clap's own message on stderr. Either way exit 1, an invalid request.
fn argument_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(e.kind(), ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand) {
        let _ = e.print();
        return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand { ExitCode::from(1) } else { ExitCode::SUCCESS };
    }
    if std::env::args_os().any(|a| a == "--json") {
        // clap's text without its usage block: the first line says what is wrong.
        let text = e.render().to_string();
        let message = text.lines().next().unwrap_or("invalid arguments").trim_start_matches("error: ").to_string();
        let tip: Vec<&str> = text.lines().filter(|l| l.trim_start().starts_with("tip:")).map(str::trim).collect();
        let message = if tip.is_empty() { message } else { format!("{message} ({})", tip.join("; ")) };
        return usage_failure(&format!("{message}; run with --help for the flags"), true);
    }
    let _ = e.print();
    ExitCode::from(1)
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

fn compile(metrics: &[String], validate: bool, plan: bool, flags: &RequestFlags) -> ExitCode {
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
    if plan {
        let args = match flags.to_args(&names) {
            Ok(a) => a,
            Err(msg) => return usage_failure(&msg, flags.json),
        };
        return match tools::request_plan(&project, &args) {
            Ok(p) if flags.json => {
                out!("{}", serde_json::json!({"plan": p.to_string()}));
                ExitCode::SUCCESS
            }
            Ok(p) => {
                out!("{p}");
                ExitCode::SUCCESS
            }
            Err(env) => print_envelope(&env, flags.json, &names.join(", ")),
        };
    }
    let call = match flags.to_call(&names, true) {
        Ok(c) => c,
        Err(msg) => return usage_failure(&msg, flags.json),
    };
    let env = Session::offline(project).compile(&call, validate);
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
    let call = match flags.to_call(metrics, false) {
        Ok(c) => c,
        Err(msg) => return usage_failure(&msg, flags.json),
    };
    let options = SessionOptions {
        source: source.filter(|s| *s != "demo").map(str::to_string),
        audit: true,
        max_rows,
        timeout: timeout_ms.map(Duration::from_millis),
        introspect: Introspect::Always,
        require_engine: true,
        // A person at the terminal gets every row up to --limit; the cap is for agents' context.
        token_cap: false,
        ..SessionOptions::default()
    };
    let session = match Session::open(project, options) {
        Ok(s) => s,
        Err(SessionError::Project(d) | SessionError::Policy(d)) => return project_failure(&d, flags.json),
        Err(SessionError::NoSource) => return usage_failure(&SessionError::NoSource.to_string(), flags.json),
        // The source cannot be opened: the same answer an agent gets from a
        // server without its source (missing_credential, the dry run as the
        // recovery), and exit 2 as every operational failure.
        Err(SessionError::Engine(e)) => {
            print_envelope(&crate::tools::surface::unreachable_source(&call, &e.to_string()), flags.json, &metrics.join(", "));
            return ExitCode::from(2);
        }
    };
    let env = session.call("get_metric", &call);
    print_envelope(&env, flags.json, &metrics.join(", "))
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
    if let Some(src) = source {
        // Drift first: what the live source no longer has, with stable codes
        // (exit 1, so CI can gate on it).
        let url = engine::resolve_source(src, &std::env::current_dir().unwrap_or_default());
        let live = match engine::open(&url).and_then(|e| e.introspect()) {
            Ok(c) => c,
            Err(e) => return operational(&e.to_string(), json),
        };
        let drift = crate::catalog::drift(&project.model, &live);
        if !drift.is_empty() {
            if json {
                let items: Vec<serde_json::Value> = drift
                    .iter()
                    .map(|d| serde_json::json!({"code": d.code, "entity": d.entity, "table": d.table, "column": d.column, "message": d.what}))
                    .collect();
                out!("{}", serde_json::to_string_pretty(&serde_json::json!({"ok": false, "drift": items})).unwrap_or_default());
            } else {
                out!("{}: the source drifted from the model ({} changes):", project.dir.display(), drift.len());
                for d in &drift {
                    out!("  {:<24} {}: {}", d.code, d.entity, d.what);
                }
            }
            return ExitCode::from(1);
        }
        let options = SessionOptions {
            source: Some(src.to_string()),
            audit: false,
            introspect: Introspect::Always,
            require_engine: true,
            ..SessionOptions::default()
        };
        match Session::open(project.clone(), options) {
            Ok(_) => {}
            Err(SessionError::Project(d) | SessionError::Policy(d)) => return project_failure(&d, json),
            Err(e) => return operational(&e.to_string(), json),
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
                wheres: Vec::new(),
                dialect: None,
                response_format: "detailed".into(),
                saved: None,
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
