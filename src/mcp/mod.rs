//! The MCP adapter (rmcp 3.11): publishes `tools::surface` as MCP tools and
//! answers `tools/call` with the envelope in `structuredContent`, mirrored as
//! compact JSON text in `content[0]`. Serves both protocol eras (2025-11-25
//! with its `initialize` handshake, stateless 2026-07-28) over stdio and
//! streamable HTTP (`transport`).
//!
//! Tool failures are envelopes (`isError: true` for status error and
//! refused), never JSON-RPC errors; only an unknown tool name is a protocol
//! error (-32602), as the spec asks. Every call, rejected ones included,
//! appends one audit record.
//!
//! Architecture invariant: adapts only. No tool behaviour, no planning, no
//! SQL here; nothing is printed (stdout belongs to the protocol).

pub mod transport;

use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject, ListToolsResult, MetaObject,
    PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value as Json;

use crate::audit::AuditLog;
use crate::engine::{Engine, Limits};
use crate::envelope::{envelope_json_schema, Envelope, Status};
use crate::project::Project;
use crate::tools::escalation::RetryTracker;
use crate::tools::surface::{self, Published};
use crate::tools::Execution;

/// What every connection of one server process shares.
pub struct Shared {
    pub project: Project,
    engine: Option<Mutex<Box<dyn Engine + Send>>>,
    limits: Limits,
    retries: RetryTracker,
    audit: Option<AuditLog>,
}

/// How `serve` was asked to run.
pub struct Options {
    /// Append audit records (on by default; tests of pure protocol turn it off).
    pub audit: bool,
}

impl Shared {
    /// Opens the project's source read-only when there is one. Without a
    /// source (or when it cannot be opened) the server still answers
    /// everything but executing get_metric, which says how to fix it.
    pub fn new(project: Project, source: Option<&str>, options: Options) -> Shared {
        let source = source.map(|s| crate::engine::resolve_source(s, Path::new("."))).or_else(|| project.source());
        let engine = source.as_deref().and_then(|s| match crate::engine::open(s) {
            Ok(e) => Some(e),
            Err(msg) => {
                tracing::warn!("source not opened, get_metric will only dry-run: {msg}");
                None
            }
        });
        // Index on start when the project has no snapshot yet, so the
        // physical tools answer (the snapshot is written for next time).
        let mut project = project;
        if project.catalog.is_none() {
            if let Some(e) = &engine {
                match e.introspect() {
                    Ok(cat) => {
                        let _ = cat.save_snapshot(&project.dir);
                        match project.clone().with_catalog(cat) {
                            Ok(p) => project = p,
                            Err(d) => tracing::warn!("the catalog disagrees with the model:\n{d}"),
                        }
                    }
                    Err(err) => tracing::warn!("introspection failed: {err}"),
                }
            }
        }
        let settings = &project.model.settings;
        let limits = Limits { max_rows: settings.max_rows as usize, timeout: Duration::from_millis(settings.timeout_ms) };
        let audit = options.audit.then(|| AuditLog::new(&project.dir));
        Shared { engine: engine.map(Mutex::new), limits, retries: RetryTracker::new(), audit, project }
    }

    /// Runs one call to the end: tool, escalation, audit.
    pub fn call(&self, tool: &str, args: &Json) -> Envelope {
        let env = match &self.engine {
            Some(engine) => {
                let guard = engine.lock().unwrap_or_else(|p| p.into_inner());
                surface::invoke(&self.project, tool, args, Execution::Run { engine: guard.as_ref(), limits: self.limits })
            }
            None => {
                let env = surface::invoke(&self.project, tool, args, Execution::DryRun);
                // Only a get_metric that planned fine and was meant to run needs the source.
                if tool == "get_metric" && env.status() == Status::Success && !surface::is_dry_run(args) {
                    surface::no_source(args)
                } else {
                    env
                }
            }
        };
        let env = self.retries.observe(tool, args, env);
        self.record(tool, args, &env);
        env
    }

    fn record(&self, tool: &str, args: &Json, env: &Envelope) {
        if let Some(log) = &self.audit {
            let kind = env.tool_error().map(|e| e.kind().as_str());
            if let Err(e) = log.append(tool, env.status().as_str(), kind, args, env.trace_id()) {
                tracing::error!("audit append failed: {e}");
            }
        }
    }

    /// Records a call rejected before any tool ran (unknown tool name).
    fn record_rejected(&self, tool: &str, args: &Json) {
        if let Some(log) = &self.audit {
            let trace = uuid::Uuid::new_v4().simple().to_string();
            if let Err(e) = log.append(tool, "rejected", Some("unknown_tool"), args, &trace) {
                tracing::error!("audit append failed: {e}");
            }
        }
    }
}

/// The rmcp handler: cheap to clone (one per HTTP request in stateless mode).
#[derive(Clone)]
pub struct SchemaBrainServer {
    shared: Arc<Shared>,
}

impl SchemaBrainServer {
    pub fn new(shared: Arc<Shared>) -> Self {
        Self { shared }
    }
}

/// The MCP form of a published tool.
pub fn mcp_tool(p: &Published) -> Tool {
    let spec = &p.spec;
    let object = |v: Json| -> Arc<JsonObject> {
        match v {
            Json::Object(m) => Arc::new(m),
            _ => Arc::new(JsonObject::new()),
        }
    };
    let read = spec.side_effects == crate::tools::spec::SideEffects::Read;
    let annotations = ToolAnnotations::with_title(spec.title)
        .read_only(true)
        .destructive(false)
        .idempotent(spec.idempotent)
        .open_world(read);
    Tool::new_with_raw(spec.name, Some(spec.description.into()), object(p.input_schema.clone()))
        .with_title(spec.title)
        .with_raw_output_schema(output_schema())
        .with_annotations(annotations)
        .with_meta(MetaObject(spec.metadata()))
}

fn output_schema() -> Arc<JsonObject> {
    static S: std::sync::OnceLock<Arc<JsonObject>> = std::sync::OnceLock::new();
    S.get_or_init(|| match envelope_json_schema() {
        Json::Object(m) => Arc::new(m),
        _ => unreachable!("the envelope schema is object-rooted"),
    })
    .clone()
}

fn tools() -> &'static [Tool] {
    static T: std::sync::OnceLock<Vec<Tool>> = std::sync::OnceLock::new();
    T.get_or_init(|| surface::published().iter().map(mcp_tool).collect())
}

/// The envelope as a tool result: structured plus its text mirror.
pub fn tool_result(env: &Envelope) -> CallToolResult {
    let value = serde_json::to_value(env).unwrap_or(Json::Null);
    match env.status() {
        Status::Error | Status::Refused => CallToolResult::structured_error(value),
        _ => CallToolResult::structured(value),
    }
}

const INSTRUCTIONS: &str = "SchemaBrain answers governed metrics over a semantic layer. \
Start with list_metrics (\"I want a number\") or find_relevant_entities / find_relevant_tables (\"where is X?\"), \
then describe_entity or describe_table, then get_metric. Every answer is a charter v1.2 envelope: read status, \
and on error follow error.recovery (suggested_tool + suggested_args).";

impl ServerHandler for SchemaBrainServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("schemabrain", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(tools().to_vec()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools().iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let args = request.arguments.map(Json::Object).unwrap_or(Json::Null);
        if surface::find(&name).is_none() {
            self.shared.record_rejected(&name, &args);
            return Err(ErrorData::invalid_params(
                format!("tool not found: `{}`; tools: {}", crate::ir::echo_name(&name), crate::tools::TOOL_NAMES.join(", ")),
                None,
            ));
        }
        let shared = self.shared.clone();
        // Tools are synchronous (DuckDB, planning): keep them off the reactor.
        let env = tokio::task::spawn_blocking(move || shared.call(&name, &args))
            .await
            .map_err(|e| ErrorData::internal_error(format!("tool task failed: {e}"), None))?;
        Ok(tool_result(&env).into())
    }
}
