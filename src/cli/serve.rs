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

use crate::auth::jwt::{JwksSource, JwtSettings, JwtValidator};
use crate::auth::keys::ApiKeys;
use crate::auth::Authenticator;
use crate::mcp::gate::Gate;
use crate::mcp::transport;
use crate::tools::contract::rate::RateLimits;
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
(VS Code: \"type\": \"http\"). See docs/mcp.md.

For a team (any address but loopback), HTTP needs authentication:
  --api-keys FILE (hashed keys, `schemabrain auth new-key`) and/or
  --oauth-issuer URL [--oauth-jwks FILE|URL] (signed JWT access tokens), with
  --resource URL naming this server as clients reach it. A request without
  a valid credential gets 401 and the Protected Resource Metadata URL.
See docs/mcp.md, \"Running schemabrain for a team\".";

#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// The project directory (semantic model, schemabrain.yaml, .schemabrain/).
    #[arg(long, default_value = ".")]
    pub project: PathBuf,
    /// Source URL (duckdb:PATH, postgres://…, mysql://…, parquet:DIR, csv:DIR); default: the project's `source`.
    #[arg(long)]
    pub source: Option<String>,
    /// Serve streamable HTTP on this address (e.g. 127.0.0.1:8765) instead of
    /// stdio. A non-loopback address needs --api-keys or --oauth-issuer.
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
    /// HTTP only: accept the API keys listed (hashed) in this YAML file
    /// (`schemabrain auth new-key` makes one).
    #[arg(long, value_name = "FILE", requires = "http")]
    pub api_keys: Option<PathBuf>,
    /// HTTP only: accept OAuth access tokens (signed JWTs) from this issuer
    /// (its `iss`). Its keys: --oauth-jwks, else the `jwks_uri` of its
    /// metadata (/.well-known/oauth-authorization-server, then
    /// /.well-known/openid-configuration), read at startup.
    #[arg(long, value_name = "URL", requires = "http")]
    pub oauth_issuer: Option<String>,
    /// The issuer's public keys: a JWKS file (read again when it changes)
    /// or its `jwks_uri` (https; fetched again on an unknown key id, at
    /// most every 30 s, and every 15 minutes).
    #[arg(long, value_name = "FILE|URL", requires = "oauth_issuer")]
    pub oauth_jwks: Option<String>,
    /// The token claim listing the caller's roles.
    #[arg(long, value_name = "CLAIM", default_value = "roles")]
    pub oauth_roles_claim: String,
    /// Seconds of clock skew tolerated on a token's exp and nbf.
    #[arg(long, value_name = "SECONDS", default_value_t = crate::auth::jwt::DEFAULT_LEEWAY_SECS)]
    pub oauth_leeway: u64,
    /// This server's resource identifier, the URL clients use for /mcp
    /// (the audience tokens must name); default http://ADDR/mcp. Needed
    /// when ADDR is 0.0.0.0 or [::] or a proxy serves TLS in front.
    #[arg(long, value_name = "URL", requires = "http")]
    pub resource: Option<String>,
    /// Calls per minute each principal may make (authenticated callers,
    /// and stdio's local user); over it a call is answered RATE_LIMITED
    /// with the time to wait.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub rate_limit: Option<u32>,
    /// Queries each principal may run at once.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_concurrent_queries: Option<u32>,
}

/// The HTTP gate the flags ask for: `None` without --api-keys and
/// --oauth-issuer (the server is then open, and loopback only).
fn http_gate(args: &ServeArgs, addr: SocketAddr) -> Result<Option<Arc<Gate>>, String> {
    if args.api_keys.is_none() && args.oauth_issuer.is_none() {
        return Ok(None);
    }
    let resource = match &args.resource {
        Some(r) => r.clone(),
        None if addr.ip().is_unspecified() || addr.port() == 0 => {
            return Err(format!("--http {addr}: pass --resource URL, the address clients use for /mcp (e.g. https://schemabrain.example.com/mcp); tokens must name it as their audience"))
        }
        None => format!("http://{addr}/mcp"),
    };
    let keys = match &args.api_keys {
        Some(path) => Some(ApiKeys::load(path).map_err(|d| format!("the API key file does not load:\n{d}"))?),
        None => None,
    };
    let jwt = match &args.oauth_issuer {
        Some(issuer) => {
            let jwks = match &args.oauth_jwks {
                Some(arg) => JwksSource::parse(arg),
                None => {
                    let uri = crate::auth::jwt::discover_jwks_uri(issuer).map_err(|e| format!("{e}; pass --oauth-jwks FILE|URL"))?;
                    tracing::info!("the issuer's keys: {uri} (from its metadata)");
                    JwksSource::Url(uri)
                }
            };
            Some(JwtValidator::new(JwtSettings { issuer: issuer.clone(), audience: resource.clone(), jwks, roles_claim: args.oauth_roles_claim.clone(), leeway_secs: args.oauth_leeway })?)
        }
        None => None,
    };
    let auth = Authenticator::new(resource, keys, jwt)?;
    Gate::new(auth).map(|g| Some(Arc::new(g)))
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

#[derive(Subcommand, Debug, Clone)]
pub enum AuthCommand {
    /// Make a new API key: prints the key (shown once: give it to its
    /// holder) on stdout, and the entry to add to the --api-keys file, which
    /// holds only the key's SHA-256.
    NewKey {
        /// Who holds the key (the audit names this principal).
        #[arg(long)]
        principal: String,
        /// A role of the principal (access policies select on roles); repeatable.
        #[arg(long = "role")]
        roles: Vec<String>,
    },
}

pub fn auth(command: &AuthCommand) -> ExitCode {
    match command {
        AuthCommand::NewKey { principal, roles } => {
            if principal.trim().is_empty() {
                eprintln!("--principal must not be empty");
                return ExitCode::from(2);
            }
            if let Some(bad) = roles.iter().find(|r| !crate::model::is_identifier(r)) {
                eprintln!("--role {}: a role is an identifier (letters, digits, _)", crate::model::echo(bad));
                return ExitCode::from(2);
            }
            let (key, hash) = crate::auth::keys::new_key();
            let roles: Vec<String> = roles.iter().map(|r| crate::model::yaml_quoted(r)).collect();
            out!("{key}");
            eprintln!("Add this entry under `keys:` in the --api-keys file (it holds the hash, never the key):");
            eprintln!("  - principal: {}\n    roles: [{}]\n    sha256: {hash}", crate::model::yaml_quoted(principal), roles.join(", "));
            ExitCode::SUCCESS
        }
    }
}

fn parse_toolsets(text: &str) -> Result<Toolsets, String> {
    Toolsets::parse(text)
}

pub fn serve(args: &ServeArgs) -> ExitCode {
    // Credentials first: a server that would refuse to start says so before opening anything.
    let gate = match args.http.map(|addr| http_gate(args, addr)) {
        Some(Ok(g)) => g,
        Some(Err(e)) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
        None => None,
    };
    if let Some(why) = args.http.and_then(|addr| transport::open_refusal(addr, gate.is_some())) {
        eprintln!("{why}");
        return ExitCode::from(2);
    }
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
    let options = SessionOptions {
        source: args.source.clone(),
        audit: !args.no_audit,
        toolsets: args.toolsets,
        allow_writes: args.allow_writes.clone(),
        rate_limits: RateLimits { per_minute: args.rate_limit, concurrent: args.max_concurrent_queries },
        ..SessionOptions::default()
    };
    let shared = match Session::open(project, options) {
        Ok(s) => Arc::new(s),
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let result = runtime.block_on(async move {
        match args.http {
            Some(addr) => transport::serve_http(shared, addr, gate).await,
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
