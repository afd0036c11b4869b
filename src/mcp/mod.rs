//! The MCP adapter (rmcp 3.11): publishes `tools::surface` as MCP tools and
//! answers `tools/call` with the envelope in `structuredContent`, mirrored as
//! compact JSON text in `content[0]`. Serves both protocol eras (2025-11-25
//! with its `initialize` handshake, stateless 2026-07-28) over stdio and
//! streamable HTTP (`transport`).
//!
//! Tool failures are envelopes (`isError: true` for status error and
//! refused), never JSON-RPC errors; only an unknown tool name is a protocol
//! error (-32602), as the spec asks. Every call, rejected ones included,
//! appends one audit record (`tools::Session`), and so does every resource
//! read, prompt and completion, naming the caller (`gate` authenticates
//! HTTP callers; stdio's caller is the local user). A client's cancellation
//! interrupts the running query in the engine.
//!
//! Architecture invariant: adapts only. No tool behaviour, no planning, no
//! SQL here; nothing is printed (stdout belongs to the protocol).

pub mod gate;
pub mod transport;

use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, CompleteRequestParams, CompleteResult, CompletionInfo, GetPromptRequestParams,
    GetPromptResponse, GetPromptResult, Implementation, JsonObject, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, MetaObject, PaginatedRequestParams, Prompt, PromptArgument, PromptMessage, ReadResourceRequestParams, ReadResourceResponse,
    ReadResourceResult, Resource, ResourceContents, ResourceTemplate, ServerCapabilities, ServerConfig, Tool, ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::Value as Json;

use crate::auth::Principal;
use crate::engine::Cancel;
use crate::envelope::{Envelope, Status};
use crate::tools::surface::Published;
use crate::tools::provider::{prompts, resources};
use crate::tools::{Session, Toolsets};

/// The rmcp handler: cheap to clone (one per HTTP request in stateless mode).
#[derive(Clone)]
pub struct SchemaBrainServer {
    session: Arc<Session>,
}

impl SchemaBrainServer {
    pub fn new(session: Arc<Session>) -> Self {
        Self { session }
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
    use crate::tools::surface::spec::SideEffects;
    let read = spec.side_effects == SideEffects::Read;
    let writes = spec.side_effects == SideEffects::Write;
    let annotations = ToolAnnotations::with_title(spec.title)
        .read_only(!writes)
        // A replace drops what was there.
        .destructive(writes)
        .idempotent(spec.idempotent)
        .open_world(read || writes);
    Tool::new_with_raw(spec.name, Some(spec.description.into()), object(p.input_schema.clone()))
        .with_title(spec.title)
        .with_raw_output_schema(object(spec.output_schema()))
        .with_annotations(annotations)
        .with_meta(MetaObject(spec.metadata()))
}

/// `tool` as this project's callers see it: get_metric's `time_grain`
/// enum lists the time spine's custom grains after the calendar ones, so
/// the published vocabulary stays exactly what get_metric accepts.
fn with_project_grains(tool: &Tool, model: &crate::model::SemanticModel) -> Tool {
    let custom: Vec<Json> = model.grains().into_iter().filter(|g| g.is_custom()).map(|g| Json::from(g.as_str())).collect();
    if tool.name != "get_metric" || custom.is_empty() {
        return tool.clone();
    }
    let mut schema = (*tool.input_schema).clone();
    if let Some(Json::Array(grains)) = schema.get_mut("properties").and_then(|p| p.get_mut("time_grain")).and_then(|g| g.get_mut("enum")) {
        grains.extend(custom);
    }
    let mut tool = tool.clone();
    tool.input_schema = Arc::new(schema);
    tool
}

/// The MCP tools of the semantic layer, and with the provider toolset.
fn tools(toolsets: Toolsets) -> &'static [Tool] {
    static SEMANTIC: std::sync::OnceLock<Vec<Tool>> = std::sync::OnceLock::new();
    static ALL: std::sync::OnceLock<Vec<Tool>> = std::sync::OnceLock::new();
    let cell = if toolsets.provider { &ALL } else { &SEMANTIC };
    cell.get_or_init(|| toolsets.tools().map(mcp_tool).collect())
}

/// The client session a call belongs to, which page tokens and retry
/// escalation are bound to: the HTTP `Mcp-Session-Id` when there is one;
/// over stdio the process is the one client.
fn client_of(context: &RequestContext<RoleServer>) -> String {
    match context.extensions.get::<axum::http::request::Parts>() {
        Some(parts) => match parts.headers.get("mcp-session-id").and_then(|v| v.to_str().ok()) {
            Some(id) => format!("http:{id}"),
            // Stateless HTTP (2026-07-28) names no session. With
            // authentication the principal is the client, so one caller's
            // failures never escalate another's retries and one caller's
            // page tokens are not another's; on an open loopback server
            // every stateless call is one client (tokens stay bound to
            // their statement and unforgeable).
            None => match gate::principal_of(parts) {
                Some(p) => format!("http-principal:{}\0{}", p.issuer, p.subject),
                None => "http".to_string(),
            },
        },
        None => crate::tools::LOCAL_CLIENT.to_string(),
    }
}

/// Who called: over HTTP the principal the gate authenticated (none on an
/// open loopback server); over stdio the local user, who started us.
fn principal_of(context: &RequestContext<RoleServer>) -> Option<Principal> {
    match context.extensions.get::<axum::http::request::Parts>() {
        Some(parts) => gate::principal_of(parts),
        None => Some(local_principal().clone()),
    }
}

fn local_principal() -> &'static Principal {
    static LOCAL: std::sync::OnceLock<Principal> = std::sync::OnceLock::new();
    LOCAL.get_or_init(Principal::local)
}

/// The envelope as a tool result: structured plus its text mirror.
pub fn tool_result(env: Envelope) -> CallToolResult {
    let status = env.status();
    let value = env.into_json();
    match status {
        Status::Error | Status::Refused => CallToolResult::structured_error(value),
        _ => CallToolResult::structured(value),
    }
}

const INSTRUCTIONS: &str = "SchemaBrain answers governed metrics over a semantic layer. \
Start with list_metrics (\"I want a number\") or find_relevant_entities / find_relevant_tables (\"where is X?\"), \
then describe_entity or describe_table, then get_metric. Every answer is a charter v1.2 envelope: read status, \
and on error follow error.recovery (suggested_tool + suggested_args).";

impl SchemaBrainServer {
    /// Resources, prompts and completion exist with the provider toolset only.
    fn provider_only(&self) -> Result<(), ErrorData> {
        if self.session.toolsets().provider {
            Ok(())
        } else {
            Err(ErrorData::invalid_request("resources and prompts come with the provider toolset (`serve --toolsets semantic,provider`)", None))
        }
    }
}

impl ServerHandler for SchemaBrainServer {
    fn get_info(&self) -> ServerConfig {
        // Resources, prompts and completion come with the provider toolset.
        let capabilities = if self.session.toolsets().provider {
            ServerCapabilities::builder().enable_tools().enable_resources().enable_prompts().enable_completions().build()
        } else {
            ServerCapabilities::builder().enable_tools().build()
        };
        ServerConfig::new(capabilities)
            .with_server_info(Implementation::new("schemabrain", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.provider_only()?;
        let items = resources::FIXED
            .iter()
            .map(|r| Resource::new(r.uri, r.name).with_description(r.description).with_mime_type("application/json"))
            .collect();
        Ok(ListResourcesResult::with_all_items(items))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.provider_only()?;
        let items = resources::TEMPLATES
            .iter()
            .map(|t| ResourceTemplate::new(t.uri_template, t.name).with_description(t.description).with_mime_type("application/json"))
            .collect();
        Ok(ListResourceTemplatesResult::with_all_items(items))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        self.provider_only()?;
        let session = self.session.clone();
        let client = client_of(&context);
        let principal = principal_of(&context);
        let uri = request.uri.clone();
        // Samples read the engine: off the reactor, like tool calls.
        let read = tokio::task::spawn_blocking(move || {
            let read = session.read_resource(&client, principal.as_ref(), &uri);
            // Samples are data: every read is audited, answered or not.
            let outcome = match &read {
                Ok(_) => Ok(()),
                Err(resources::ReadError::NotFound(_)) => Err("unknown_name"),
                Err(resources::ReadError::Failed(_)) => Err("internal_error"),
                Err(resources::ReadError::Denied(_)) => Err("allowlist_violation"),
            };
            session.record_read("resources/read", &serde_json::json!({"uri": uri}), outcome, principal.as_ref());
            read
        })
        .await
        .map_err(|e| ErrorData::internal_error(format!("resource task failed: {e}"), None))?;
        match read {
            Ok(text) => Ok(ReadResourceResult::new(vec![ResourceContents::text(text, request.uri).with_mime_type("application/json")]).into()),
            Err(resources::ReadError::NotFound(m)) => Err(ErrorData::resource_not_found(m, None)),
            Err(resources::ReadError::Failed(m)) => Err(ErrorData::internal_error(m, None)),
            Err(resources::ReadError::Denied(m)) => Err(ErrorData::invalid_request(m, None)),
        }
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.provider_only()?;
        let items = prompts::PROMPTS
            .iter()
            .map(|p| {
                let args = p.args.iter().map(|a| PromptArgument::new(a.name).with_description(a.description).with_required(a.required)).collect();
                Prompt::new(p.name, Some(p.description), Some(args))
            })
            .collect();
        Ok(ListPromptsResult::with_all_items(items))
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        self.provider_only()?;
        // Prompt arguments are strings on the wire; anything else is read as its JSON text.
        let args: std::collections::BTreeMap<String, String> = request
            .arguments
            .unwrap_or_default()
            .into_iter()
            .map(|(k, v)| (k, v.as_str().map(str::to_string).unwrap_or_else(|| v.to_string())))
            .collect();
        let got = prompts::get(&self.session.project_as(principal_of(&context).as_ref()), &request.name, &args);
        let asked = serde_json::json!({"name": request.name, "arguments": args});
        self.session.record_read("prompts/get", &asked, got.as_ref().map(|_| ()).map_err(|_| "invalid_argument"), principal_of(&context).as_ref());
        match got {
            Ok((description, text)) => {
                Ok(GetPromptResult::new(vec![PromptMessage::new_text(rmcp::model::Role::User, text)]).with_description(description).into())
            }
            Err(prompts::PromptError(m)) => Err(ErrorData::invalid_params(m, None)),
        }
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        self.provider_only()?;
        let values = prompts::complete(&self.session.project_as(principal_of(&context).as_ref()), &request.argument.name, &request.argument.value);
        let asked = serde_json::json!({"argument": request.argument.name, "value": request.argument.value});
        self.session.record_read("completion/complete", &asked, Ok(()), principal_of(&context).as_ref());
        let total = values.len() as u32;
        let info = CompletionInfo::with_pagination(values, Some(total), false).map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(CompleteResult::new(info))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        // A caller sees the tools its roles grant (access_policy.yaml).
        let principal = principal_of(&context);
        let project = self.session.project_as(principal.as_ref());
        let items = tools(self.session.toolsets())
            .iter()
            .filter(|t| self.session.tool_allowed(principal.as_ref(), &t.name))
            .map(|t| with_project_grains(t, &project.model))
            .collect();
        Ok(ListToolsResult::with_all_items(items))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        tools(self.session.toolsets()).iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let name = request.name.to_string();
        let args = request.arguments.map(Json::Object).unwrap_or(Json::Null);
        let toolsets = self.session.toolsets();
        let principal = principal_of(&context);
        let Some(published) = toolsets.find(&name) else {
            self.session.record_rejected(&name, &args, principal.as_ref());
            let names: Vec<&str> = toolsets.tools().map(|p| p.spec.name).collect();
            return Err(ErrorData::invalid_params(format!("tool not found: `{}`; tools: {}", crate::ir::echo_name(&name), names.join(", ")), None));
        };
        let client = client_of(&context);
        // Pure tools (model and snapshot only, microseconds, no engine) answer
        // on the reactor: a hand-off to the blocking pool and back cost more
        // than the call itself (docs/performance.md, "The MCP server").
        if published.spec.side_effects == crate::tools::surface::spec::SideEffects::None {
            let env = self.session.call_by(&client, principal.as_ref(), &name, &args, &Cancel::never());
            return Ok(tool_result(env).into());
        }
        let session = self.session.clone();
        let cancel = Cancel::new();
        let in_task = cancel.clone();
        // Tools are synchronous (DuckDB, planning): keep them off the reactor.
        let mut task = tokio::task::spawn_blocking(move || session.call_by(&client, principal.as_ref(), &name, &args, &in_task));
        // A cancellation from the client interrupts the running query in the
        // engine; the call then ends (and is audited) as cancelled.
        let joined = tokio::select! {
            joined = &mut task => joined,
            _ = context.ct.cancelled() => {
                cancel.cancel();
                task.await
            }
        };
        let env = joined.map_err(|e| ErrorData::internal_error(format!("tool task failed: {e}"), None))?;
        Ok(tool_result(env).into())
    }
}
