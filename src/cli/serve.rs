//! `schemabrain serve` (MCP over stdio or streamable HTTP) and
//! `schemabrain audit verify`.
//!
//! Architecture invariant: parses flags and starts `mcp`; under stdio it
//! prints nothing on stdout (the protocol owns it).

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Subcommand};

use crate::mcp::transport;
use crate::tools::{Session, SessionOptions, Toolsets};
use crate::project::Project;

pub const SERVE_LONG_ABOUT: &str = "\
Serve the twelve SchemaBrain tools over MCP (protocol eras 2025-11-25 and 2026-07-28).

stdio is the default: stdout carries MCP messages only, logs go to stderr
(SCHEMABRAIN_LOG=debug). With --http 127.0.0.1:PORT it serves streamable
HTTP at http://127.0.0.1:PORT/mcp (loopback Host and Origin checks on).
Every call is appended to the hash-chained audit log
.schemabrain/audit.log; check it with `schemabrain audit verify`.

Client setup (replace /path/to/project; the binary must be on PATH):

Claude Desktop (claude_desktop_config.json):
  {\"mcpServers\": {\"schemabrain\": {\"command\": \"schemabrain\",
    \"args\": [\"serve\", \"--project\", \"/path/to/project\"]}}}

Claude Code:
  claude mcp add schemabrain -- schemabrain serve --project /path/to/project

Cursor (.cursor/mcp.json):
  {\"mcpServers\": {\"schemabrain\": {\"command\": \"schemabrain\",
    \"args\": [\"serve\", \"--project\", \"/path/to/project\"]}}}

VS Code (.vscode/mcp.json):
  {\"servers\": {\"schemabrain\": {\"type\": \"stdio\", \"command\": \"schemabrain\",
    \"args\": [\"serve\", \"--project\", \"/path/to/project\"]}}}

Over HTTP, point the client at {\"url\": \"http://127.0.0.1:PORT/mcp\"}
(VS Code: \"type\": \"http\"). See docs/mcp.md.";

#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// The project directory (semantic model, schemabrain.yaml, .schemabrain/).
    #[arg(long, default_value = ".")]
    pub project: PathBuf,
    /// Source URL (duckdb:PATH, postgres://…, mysql://…, parquet:DIR, csv:DIR); default: the project's `source`.
    #[arg(long)]
    pub source: Option<String>,
    /// Serve streamable HTTP on this loopback address (e.g. 127.0.0.1:8765) instead of stdio.
    #[arg(long, value_name = "ADDR")]
    pub http: Option<SocketAddr>,
    /// Do not append to the audit log.
    #[arg(long)]
    pub no_audit: bool,
    /// Tool groups to offer: `semantic` (the default), `provider` (catalog
    /// and read-only free SQL, seed 003), `all`, or a comma-separated list.
    #[arg(long, default_value = "semantic", value_parser = parse_toolsets)]
    pub toolsets: Toolsets,
    /// Let the provider's materialize_sql and create_view write, only into
    /// this schema (created if missing). Off by default. On DuckDB the file
    /// then opens read-write (reads still pass the free-SQL guard).
    #[arg(long, value_name = "SCHEMA")]
    pub allow_writes: Option<String>,
}

#[derive(Subcommand, Debug, Clone)]
pub enum AuditCommand {
    /// Re-walk the chain: exit 0 intact, 1 tampered or torn, 2 unreadable.
    Verify {
        #[arg(long, default_value = ".")]
        project: PathBuf,
    },
    /// Print the audit record an answer's `fingerprint` names (one JSON line): exit 0 found, 1 not found, 2 unreadable.
    Show {
        fingerprint: String,
        #[arg(long, default_value = ".")]
        project: PathBuf,
    },
}

fn parse_toolsets(text: &str) -> Result<Toolsets, String> {
    Toolsets::parse(text)
}

pub fn serve(args: &ServeArgs) -> ExitCode {
    let project = match Project::open(&args.project) {
        Ok(p) => p,
        Err(d) => match Project::open_declared(&args.project) {
            // The model loads; the snapshot a drifted source left behind does
            // not fit it. The live source is compared when it opens, and what
            // drifted is answered `schema_drift` per request.
            Ok(p) => {
                tracing::warn!("the catalog snapshot does not fit the model; comparing with the live source instead:\n{d}");
                p
            }
            Err(_) => {
                eprintln!("the project does not load:\n{d}");
                return ExitCode::from(2);
            }
        },
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            return ExitCode::from(2);
        }
    };
    let options = SessionOptions { source: args.source.clone(), audit: !args.no_audit, toolsets: args.toolsets, allow_writes: args.allow_writes.clone(), ..SessionOptions::default() };
    let shared = match Session::open(project, options) {
        Ok(s) => Arc::new(s),
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let result = runtime.block_on(async move {
        match args.http {
            Some(addr) => transport::serve_http(shared, addr).await,
            None => transport::serve_stdio(shared).await,
        }
    });
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("serve failed: {e:#}");
            ExitCode::from(2)
        }
    }
}

pub fn audit(command: &AuditCommand) -> ExitCode {
    match command {
        AuditCommand::Show { fingerprint, project } => {
            let dir = crate::model::resolve_project_dir(project);
            match crate::audit::find(&dir, fingerprint) {
                Ok(Some(rec)) => {
                    out!("{}", serde_json::to_string(&rec).unwrap_or_default());
                    ExitCode::SUCCESS
                }
                Ok(None) => {
                    eprintln!("no audit record with fingerprint {} in {}", crate::model::echo(fingerprint), dir.display());
                    ExitCode::from(1)
                }
                Err(e) => {
                    eprintln!("cannot read the audit log: {e}");
                    ExitCode::from(2)
                }
            }
        }
        AuditCommand::Verify { project } => {
            let dir = crate::model::resolve_project_dir(project);
            match crate::audit::verify(&dir) {
                Ok(v) if v.intact() => {
                    out!("audit log intact: {} records", v.records);
                    ExitCode::SUCCESS
                }
                Ok(v) => {
                    out!("audit log NOT intact ({} records read):", v.records);
                    for p in &v.problems {
                        out!("  {p}");
                    }
                    ExitCode::from(1)
                }
                Err(e) => {
                    eprintln!("cannot read the audit log: {e}");
                    ExitCode::from(2)
                }
            }
        }
    }
}
