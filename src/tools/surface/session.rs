//! `Session`: one project served, for the CLI and MCP alike. It opens the
//! source once, decides when to introspect (and writes the catalog
//! snapshot), holds the limits, and runs every call the same way: the tool
//! (through `surface::invoke`: argument checks, shaping), retry escalation,
//! then one audit record. So `schemabrain query --json` prints exactly what
//! MCP's `get_metric` returns for the same arguments.
//!
//! Calls run side by side: the engine is shared without a lock (it gives
//! each call a connection of its own), so a long query never makes a
//! metadata call wait.
//!
//! Architecture invariant: no clap, no rmcp, no printing; transports call
//! `Session::call` and render what it returns.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use serde_json::Value as Json;

use crate::tools::contract::escalation::RetryTracker;
use crate::tools::contract::next;
use crate::tools::contract::paging::Pager;
use crate::tools::contract::rate::{RateLimiter, RateLimits};
use crate::tools::semantic::{self, Execution};
use crate::tools::provider;
use crate::tools::surface::{self, Toolsets};
use crate::audit::AuditLog;
use crate::auth::policy::AccessPolicy;
use crate::auth::Principal;
use crate::engine::{self, Cancel, Engine, EngineError, Limits};
use crate::envelope::{Envelope, FailureKind, Recovery, RefusalKind, Status, ToolError};
use crate::model::Diagnostics;
use crate::project::Project;

/// When the live catalog is read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Introspect {
    /// When the source opens (`serve`, `query`, `check --source`): the live
    /// catalog (metadata only: names, types, keys) is compared with the
    /// model, supersedes the snapshot, and the snapshot is rewritten when it
    /// changed; a snapshot existing does not skip the comparison.
    Always,
    Never,
}

#[derive(Clone, Debug)]
pub struct SessionOptions {
    /// A source URL that overrides the project's; relative `duckdb:` paths
    /// are relative to the current directory.
    pub source: Option<String>,
    /// Append an audit record per call.
    pub audit: bool,
    pub max_rows: Option<usize>,
    pub timeout: Option<Duration>,
    pub introspect: Introspect,
    /// A source that cannot be opened is an error (`query`), or a session
    /// that compiles only (`serve` answers everything but execution).
    pub require_engine: bool,
    /// The tool groups offered (the provider tools only when asked for).
    pub toolsets: Toolsets,
    /// The one schema the provider's write tools may write into
    /// (`serve --allow-writes SCHEMA`); none: writes are off.
    pub allow_writes: Option<String>,
    /// Answers are cut to the agents' token cap (`shape::MAX_TOKENS`); the
    /// CLI's `query` turns it off, so a person gets every row up to --limit.
    pub token_cap: bool,
    /// Per-principal limits on calls authenticated callers make.
    pub rate_limits: RateLimits,
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions {
            source: None,
            audit: true,
            max_rows: None,
            timeout: None,
            introspect: Introspect::Always,
            require_engine: false,
            toolsets: Toolsets::default(),
            allow_writes: None,
            token_cap: true,
            rate_limits: RateLimits::default(),
        }
    }
}

/// Why a session could not be opened (both are operational failures: exit 2).
#[derive(Debug)]
pub enum SessionError {
    NoSource,
    Engine(EngineError),
    /// The live catalog disagrees with the model.
    Project(Diagnostics),
    /// `access_policy.yaml` does not load.
    Policy(Diagnostics),
}

impl std::fmt::Display for SessionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionError::NoSource => write!(f, "no source: pass --source URL or set `source` in schemabrain.yaml"),
            SessionError::Engine(e) => write!(f, "{e}"),
            SessionError::Project(d) => write!(f, "the project does not match its source:\n{d}"),
            SessionError::Policy(d) => write!(f, "the access policy does not load:\n{d}"),
        }
    }
}

pub struct Session {
    /// Swapped whole when a write tool changes the catalog; each call reads
    /// one snapshot of it.
    project: std::sync::RwLock<Arc<Project>>,
    engine: Option<Box<dyn Engine>>,
    limits: Limits,
    retries: RetryTracker,
    audit: Option<AuditLog>,
    /// Where the live source disagrees with the model: found when the
    /// source opened, and again after an engine failure (re-checked).
    drift: std::sync::RwLock<Vec<crate::catalog::Drift>>,
    /// Why the source could not be opened, when it could not.
    open_error: Option<String>,
    toolsets: Toolsets,
    /// Makes and checks the provider tools' page tokens.
    pager: Pager,
    allow_writes: Option<String>,
    token_cap: bool,
    rate: Option<RateLimiter>,
    /// The project's `access_policy.yaml`, when it has one.
    policy: Option<AccessPolicy>,
    /// The model each set of roles may see, built on first use, for the
    /// project it was built from.
    scoped: std::sync::Mutex<ScopedModels>,
}

/// Sorted roles → (the project the cut was made from, the cut models).
type ScopedModels = std::collections::HashMap<Vec<String>, (Arc<Project>, Scoped)>;

/// One set of roles' cuts of the project (`scope`): the one their
/// requests are planned on to find what they read, and the one they are
/// served from.
#[derive(Clone)]
struct Scoped {
    planning: Arc<Project>,
    served: Arc<Project>,
}

/// The client of calls that name none (the CLI, stdio: one client per process).
pub const LOCAL_CLIENT: &str = "local";

impl Session {
    /// Opens the source (the option's, else the project's) and introspects
    /// it as the options say.
    pub fn open(project: Project, options: SessionOptions) -> Result<Session, SessionError> {
        let source = options.source.as_deref().map(|s| engine::resolve_source(s, Path::new("."))).or_else(|| project.source());
        let writable = options.allow_writes.is_some();
        let mut open_error = None;
        let engine = match source.as_deref().map(|s| engine::open_for(s, writable)) {
            Some(Ok(e)) => Some(e),
            Some(Err(e)) if options.require_engine => return Err(SessionError::Engine(e)),
            Some(Err(e)) => {
                tracing::warn!("source not opened, get_metric will only dry-run: {e}");
                open_error = Some(e.to_string());
                None
            }
            None if options.require_engine => return Err(SessionError::NoSource),
            None => None,
        };
        let mut project = project;
        let introspect = options.introspect == Introspect::Always;
        let mut drift = Vec::new();
        if let (true, Some(e)) = (introspect, &engine) {
            (project, drift) = refresh_catalog(project, e.as_ref(), options.require_engine)?;
        }
        let settings = &project.model.settings;
        let limits = Limits {
            max_rows: options.max_rows.unwrap_or(settings.max_rows as usize),
            timeout: options.timeout.unwrap_or(Duration::from_millis(settings.timeout_ms)),
        };
        let audit = options.audit.then(|| AuditLog::new(&project.dir));
        let policy = load_policy(&project)?;
        // The write tools are listed only where they can work.
        let toolsets = Toolsets { writes: options.toolsets.provider && options.allow_writes.is_some(), ..options.toolsets };
        Ok(Session {
            project: std::sync::RwLock::new(Arc::new(project)),
            engine,
            limits,
            retries: RetryTracker::new(),
            audit,
            drift: std::sync::RwLock::new(drift),
            open_error,
            toolsets,
            pager: Pager::new(),
            allow_writes: options.allow_writes,
            token_cap: options.token_cap,
            rate: (!options.rate_limits.is_unlimited()).then(|| RateLimiter::new(options.rate_limits)),
            policy,
            scoped: Default::default(),
        })
    }

    /// A session on a project that compiles only (no source, no audit).
    pub fn offline(project: Project) -> Session {
        let settings = &project.model.settings;
        let limits = Limits { max_rows: settings.max_rows as usize, timeout: Duration::from_millis(settings.timeout_ms) };
        Session {
            project: std::sync::RwLock::new(Arc::new(project)),
            engine: None,
            limits,
            retries: RetryTracker::new(),
            audit: None,
            drift: std::sync::RwLock::new(Vec::new()),
            open_error: None,
            toolsets: Toolsets::default(),
            pager: Pager::new(),
            allow_writes: None,
            token_cap: true,
            rate: None,
            policy: None,
            scoped: Default::default(),
        }
    }

    /// The project as it stands (a write tool may have swapped in a newer
    /// catalog since the session opened).
    pub fn project(&self) -> Arc<Project> {
        self.project.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// Re-reads the live catalog after a write, so the written table is
    /// readable at once; the snapshot on disk follows.
    pub fn refresh_after_write(&self) {
        let Some(engine) = &self.engine else { return };
        let current = self.project();
        match refresh_catalog((*current).clone(), engine.as_ref(), false) {
            Ok((p, _)) => *self.project.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(p),
            Err(e) => tracing::warn!("catalog not refreshed after a write: {e}"),
        }
    }

    pub fn engine(&self) -> Option<&dyn Engine> {
        self.engine.as_deref()
    }

    pub fn limits(&self) -> Limits {
        self.limits
    }

    /// Runs one call to the end: the tool, escalation, audit.
    pub fn call(&self, tool: &str, args: &Json) -> Envelope {
        self.call_cancellable(tool, args, &Cancel::never())
    }

    /// The tool groups this session offers.
    pub fn toolsets(&self) -> Toolsets {
        self.toolsets
    }

    /// `call`, with `cancel` interrupting a running query in the engine.
    pub fn call_cancellable(&self, tool: &str, args: &Json, cancel: &Cancel) -> Envelope {
        self.call_as(LOCAL_CLIENT, tool, args, cancel)
    }

    /// `call_cancellable` for one client session (`client` binds the page
    /// tokens it is given: another client cannot use them).
    pub fn call_as(&self, client: &str, tool: &str, args: &Json, cancel: &Cancel) -> Envelope {
        self.call_by(client, None, tool, args, cancel)
    }

    /// `call_as` on behalf of an authenticated caller, whom the audit
    /// record names (issuer and subject).
    pub fn call_by(&self, client: &str, principal: Option<&Principal>, tool: &str, args: &Json, cancel: &Cancel) -> Envelope {
        let record = |env: Envelope| self.record(tool, args, env, principal);
        // Held until the call ends: a query's slot under the concurrent limit.
        let _permit = match (&self.rate, principal) {
            (Some(rate), Some(p)) => {
                let who = p.to_string();
                let query = self.toolsets.find(tool).is_some_and(|t| t.spec.side_effects != surface::spec::SideEffects::None);
                match rate.admit(&who, query) {
                    Ok(permit) => Some(permit),
                    Err(limited) => return record(limited.envelope(&who, tool)),
                }
            }
            _ => None,
        };
        let restricted = principal.filter(|p| p.issuer != crate::auth::LOCAL_ISSUER);
        if let (Some(policy), Some(p)) = (&self.policy, restricted) {
            if let Err(denied) = self.allowed(policy, p, tool, args) {
                return record(denied);
            }
        }
        if let Some(open) = self.retries.breaker(client, tool, args) {
            return record(open);
        }
        if provider::PROVIDER_TOOLS.contains(&tool) {
            let env = self.call_provider(client, restricted, tool, args, cancel);
            let env = self.note_widening(restricted, tool, args, env);
            let env = self.retries.observe(client, tool, args, env);
            return record(env);
        }
        if let Some(drifted) = self.drift_touched(tool, args) {
            let env = self.retries.observe(client, tool, args, drifted);
            return record(env);
        }
        let project = self.project_for(restricted);
        let env = match &self.engine {
            Some(engine) => surface::invoke_capped(
                &project,
                tool,
                args,
                Execution::Run {
                    engine: engine.as_ref(),
                    limits: self.limits,
                    cancel: cancel.clone(),
                    pages: Some(semantic::Pages { pager: &self.pager, client }),
                },
                self.token_cap,
            ),
            None => {
                let env = surface::invoke_capped(&project, tool, args, Execution::DryRun, self.token_cap);
                // Only a get_metric that planned fine and was meant to run needs the source.
                if tool == "get_metric" && env.status() == Status::Success && !surface::is_dry_run(args) {
                    match &self.open_error {
                        Some(why) => surface::unreachable_source(args, why),
                        None => surface::no_source(args),
                    }
                } else {
                    env
                }
            }
        };
        let env = self.recheck_drift(tool, args, env);
        let env = self.note_widening(restricted, tool, args, env);
        let env = self.retries.observe(client, tool, args, env);
        record(env)
    }

    /// Whether the caller's roles grant this call: the tool, and for
    /// get_metric the metrics or saved query it names. A denial is the
    /// `allowlist_violation` refusal, its widening hint naming the role that
    /// would grant it.
    fn allowed(&self, policy: &AccessPolicy, p: &Principal, tool: &str, args: &Json) -> Result<(), Envelope> {
        let refuse = |d: crate::auth::policy::Denied, recovery: Recovery| {
            let message = format!("{} is outside what {p} may use (roles: {}).", d.what, if p.roles.is_empty() { "none".to_string() } else { p.roles.join(", ") });
            Envelope::refused(ToolError::refusal(RefusalKind::AllowlistViolation, message, recovery, Vec::new()).with_widening_hint(d.widening_hint()))
        };
        policy.check_tool(&p.roles, tool).map_err(|d| refuse(d, Recovery::none()))?;
        if tool == "get_metric" {
            self.allowed_metrics(policy, p, args, &refuse)?;
        }
        if let Some(scoped) = self.scoped_for(Some(p)) {
            let dialect = self.engine.as_deref().map_or("duckdb", |e| e.dialect().name);
            let listing = if policy.check_tool(&p.roles, "list_entities").is_ok() { Recovery::call("list_entities", serde_json::json!({})) } else { Recovery::none() };
            super::scope::check_call(policy, &p.roles, &scoped.planning, tool, args, dialect).map_err(|d| refuse(d, listing))?;
        }
        Ok(())
    }

    /// get_metric's metrics or saved query, against the metrics allowlist.
    fn allowed_metrics(&self, policy: &AccessPolicy, p: &Principal, args: &Json, refuse: &dyn Fn(crate::auth::policy::Denied, Recovery) -> Envelope) -> Result<(), Envelope> {
        let project = self.project();
        let model = &project.model;
        let named = args.get("name").into_iter().chain(args.get("names").and_then(Json::as_array).into_iter().flatten()).chain(args.get("query"));
        for name in named.filter_map(Json::as_str) {
            // A name the model does not have is the tool's to answer (unknown_metric, from what the caller may see).
            let exists = model.metrics.contains_key(name) || model.derived.contains_key(name) || model.queries.contains_key(name);
            if exists {
                let listing = if policy.check_tool(&p.roles, "list_metrics").is_ok() { Recovery::call("list_metrics", serde_json::json!({})) } else { Recovery::none() };
                policy.check_metric(&p.roles, name).map_err(|d| refuse(d, listing))?;
            }
        }
        Ok(())
    }

    /// The project as `principal` may see it: with a policy, only the
    /// metrics its roles grant (and what granted derived metrics are
    /// computed from), only their entities (`scope::served`), with their
    /// PII widening. Built once per set of roles and project.
    fn project_for(&self, principal: Option<&Principal>) -> Arc<Project> {
        match self.scoped_for(principal) {
            Some(s) => s.served,
            None => self.project(),
        }
    }

    /// The caller's cuts of the project; `None` when it sees it whole.
    fn scoped_for(&self, principal: Option<&Principal>) -> Option<Scoped> {
        let (Some(policy), Some(p)) = (&self.policy, principal) else { return None };
        let visible = policy.visible_metrics(&p.roles);
        let entities = policy.visible_entities(&p.roles);
        let widened = policy.pii_allowed(&p.roles);
        if visible.is_none() && entities.is_none() && widened.is_empty() && !policy.row_filtered(&p.roles) {
            return None;
        }
        let base = self.project();
        let mut key = p.roles.clone();
        key.sort();
        let mut cache = self.scoped.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((built_from, scoped)) = cache.get(&key) {
            if Arc::ptr_eq(built_from, &base) {
                return Some(scoped.clone());
            }
        }
        let metrics_cut = match &visible {
            None => (*base).clone(),
            Some(visible) => match scope_project(&base, visible) {
                Ok(p) => p,
                Err(d) => {
                    // Removing metrics keeps a checked model valid, so this is not
                    // expected; the roles then see no metric at all.
                    tracing::error!("the model scoped to roles {key:?} does not check; they see no metric:\n{d}");
                    match scope_project(&base, &Default::default()) {
                        Ok(p) => p,
                        Err(_) => (*base).clone(),
                    }
                }
            },
        };
        // Roles with row filters read every table through them.
        let rows = policy.row_restriction(&p.roles, &base.model);
        let mut metrics_cut = Project { rows: rows.map(Arc::new), ..metrics_cut };
        if let (Some(r), Some(catalog)) = (metrics_cut.rows.clone(), metrics_cut.catalog.as_mut()) {
            // A restricted table's statistics (row count, min, max) are of
            // every row: the metadata tools do not show them to these roles.
            for t in catalog.tables.iter_mut().filter(|(k, _)| r.table_by_key(k).is_some()).map(|(_, t)| t) {
                t.row_count = None;
                for c in &mut t.columns {
                    c.stats = None;
                }
            }
        }
        let planning = Arc::new(super::scope::widen(metrics_cut, &widened));
        let served = match &entities {
            None => planning.clone(),
            Some(allowed) => Arc::new(super::scope::served(&planning, allowed)),
        };
        let scoped = Scoped { planning, served };
        cache.insert(key, (base, scoped.clone()));
        Some(scoped)
    }

    /// Adds `policy_applied.pii_widened` to a get_metric or query_sql
    /// answer of a caller whose roles widen PII: the categories, and the
    /// columns of the tables the answer read that carry one of them (what
    /// the project's policy alone would have refused or masked there).
    fn note_widening(&self, principal: Option<&Principal>, tool: &str, args: &Json, env: Envelope) -> Envelope {
        let (Some(policy), Some(p)) = (&self.policy, principal) else { return env };
        if !matches!(tool, "get_metric" | "query_sql") || env.tool_error().is_some() {
            return env;
        }
        let widened = policy.pii_allowed(&p.roles);
        let Some(scoped) = self.scoped_for(Some(p)).filter(|_| !widened.is_empty()) else { return env };
        let base = self.project();
        let entities = if tool == "get_metric" {
            super::scope::request_entities(&scoped.planning, args)
        } else {
            let dialect = self.engine.as_deref().map_or("duckdb", |e| e.dialect().name);
            args.get("sql").and_then(Json::as_str).map(|s| super::scope::sql_entities(&base, s, dialect)).unwrap_or_default()
        };
        let mut columns = Vec::new();
        for name in &entities {
            let Some(e) = base.model.entity(name) else { continue };
            let table_columns: Vec<String> = match base.catalog.as_ref().and_then(|c| c.tables.get(&format!("{}.{}", e.table.schema, e.table.table))) {
                Some(t) => t.columns.iter().map(|c| c.name.clone()).collect(),
                None => e.columns.iter().map(|c| c.name.clone()).collect(),
            };
            for c in table_columns {
                let d = crate::pii::decide(&base.model.pii_policy, &e.table, &c);
                if !d.catastrophic && d.tag.categories.iter().any(|cat| widened.contains(cat)) {
                    columns.push(serde_json::json!(format!("{name}.{c}")));
                }
            }
        }
        if columns.is_empty() {
            return env;
        }
        let note = serde_json::json!({"categories": widened, "roles": p.roles, "columns": columns});
        env.map_data_object(|data| {
            let applied = data.entry("policy_applied").or_insert_with(|| serde_json::json!({}));
            crate::json::set(applied, "pii_widened", note);
        })
    }

    /// The project as `principal` may see it (MCP's prompts and
    /// completions read it); the whole project for the local user.
    pub fn project_as(&self, principal: Option<&Principal>) -> Arc<Project> {
        self.project_for(principal.filter(|p| p.issuer != crate::auth::LOCAL_ISSUER))
    }

    /// Reads an MCP resource for `principal`: from its cut of the project,
    /// and only when its roles grant the tool the resource mirrors (a role
    /// without `sample_table` reads no samples as a resource either).
    pub fn read_resource(&self, client: &str, principal: Option<&Principal>, uri: &str) -> Result<String, provider::resources::ReadError> {
        if let Some(tool) = provider::resources::mirrored_tool(uri).filter(|t| !self.tool_allowed(principal, t)) {
            return Err(provider::resources::ReadError::Denied(format!("`{}` is the answer of {tool}, which the caller's roles do not grant", crate::model::echo(uri))));
        }
        self.with_provider_as(client, principal, &Cancel::never(), |ctx| provider::resources::read(ctx, uri))
    }

    /// Whether the caller may use `tool` (MCP's tools/list shows only those).
    pub fn tool_allowed(&self, principal: Option<&Principal>, tool: &str) -> bool {
        match (&self.policy, principal.filter(|p| p.issuer != crate::auth::LOCAL_ISSUER)) {
            (Some(policy), Some(p)) => {
                // A caller under row filters is refused the provider tools that read whole tables.
                let whole_tables = provider::PROVIDER_TOOLS.contains(&tool) && !ROW_FILTERED_PROVIDER_TOOLS.contains(&tool);
                policy.check_tool(&p.roles, tool).is_ok() && !(whole_tables && self.project_for(Some(p)).rows.is_some())
            }
            _ => true,
        }
    }

    /// Runs `f` with the provider tools' context for `client` (MCP resources
    /// read through it, so they show nothing a tool would not).
    pub fn with_provider<R>(&self, client: &str, cancel: &Cancel, f: impl FnOnce(&provider::ProviderContext<'_>) -> R) -> R {
        self.with_provider_as(client, None, cancel, f)
    }

    /// `with_provider` for `principal`: the project as its access policy
    /// cuts it (only its entities' tables; its PII widening).
    pub fn with_provider_as<R>(&self, client: &str, principal: Option<&Principal>, cancel: &Cancel, f: impl FnOnce(&provider::ProviderContext<'_>) -> R) -> R {
        let project = self.project_as(principal);
        let ctx = provider::ProviderContext {
            project: &project,
            engine: self.engine.as_deref(),
            limits: self.limits,
            cancel: cancel.clone(),
            pager: &self.pager,
            client,
            allow_writes: self.allow_writes.as_deref(),
        };
        f(&ctx)
    }

    fn call_provider(&self, client: &str, principal: Option<&Principal>, tool: &str, args: &Json, cancel: &Cancel) -> Envelope {
        if !self.toolsets.provider {
            let env = Envelope::error(ToolError::new(
                FailureKind::MalformedName,
                format!("{tool} is a provider tool, which this server does not offer (start it with `--toolsets semantic,provider`); the semantic layer answers governed numbers"),
                Recovery::call("list_metrics", serde_json::json!({})),
            ));
            return next::attach(tool, args, env);
        }
        // The caller's cut: its entities' tables only, its PII widening, its row filters.
        let env = self.with_provider_as(client, principal, cancel, |ctx| {
            if ctx.project.rows.is_some() && !ROW_FILTERED_PROVIDER_TOOLS.contains(&tool) {
                return row_filtered_refusal(tool);
            }
            surface::invoke_provider(ctx, tool, args)
        });
        if provider::WRITE_TOOLS.contains(&tool) && env.status() == Status::Success {
            self.refresh_after_write();
        }
        env
    }

    /// A get_metric whose plan reads a table or column that drifted in the
    /// live source is answered `schema_drift` before it reaches the engine
    /// (which would fail with a bare SQL error), naming what changed and how
    /// to reconcile the model.
    fn drift_touched(&self, tool: &str, args: &Json) -> Option<Envelope> {
        let drift = self.drift.read().unwrap_or_else(|p| p.into_inner());
        if tool != "get_metric" || drift.is_empty() || surface::is_dry_run(args) {
            return None;
        }
        let parsed: semantic::GetMetricArgs = serde_json::from_value(args.clone()).ok()?;
        let project = self.project();
        let plan = semantic::request_plan(&project, &parsed).ok()?;
        let shown = plan.to_string();
        let mut touched: Vec<&str> = Vec::new();
        for c in &plan.components {
            touched.push(&c.anchor.entity);
            touched.extend(c.joins.iter().chain(c.semi_joins.iter().flat_map(|s| s.steps.iter())).map(|j| j.to.entity.as_str()));
        }
        let hits: Vec<&crate::catalog::Drift> = drift
            .iter()
            // A column that now accepts NULL still answers (`check` reports it).
            .filter(|d| d.code != "nullability_changed")
            .filter(|d| touched.contains(&d.entity.as_str()))
            .filter(|d| d.column.as_ref().is_none_or(|c| shown.contains(&format!("{}.{c}", d.entity)) || shown.contains(c.as_str())))
            .collect();
        if hits.is_empty() {
            return None;
        }
        let what: Vec<&str> = hits.iter().map(|d| d.what.as_str()).collect();
        let dir = project.dir.display();
        let message = format!(
            "The source changed under the model: {}. The request reads it, so it is not run; the catalog snapshot now holds the live source. Reconcile the model (`schemabrain check --project {dir} --source SOURCE` lists every change), then retry; describe_entity shows what the model reads.",
            what.join("; ")
        );
        let entity = hits.first().map(|h| h.entity.clone()).unwrap_or_default();
        let env = Envelope::error(ToolError::new(FailureKind::SchemaDrift, message, Recovery::call("describe_entity", serde_json::json!({"name": entity}))));
        Some(env.with_next_action(crate::envelope::NextAction::instruct(
            "Tell the user the model is out of date with the source; other metrics may still answer.",
            Some(format!("schemabrain check --project {dir} --source SOURCE")),
            false,
        )))
    }

    /// The drift this session knows of (tests and `serve` logs).
    pub fn drift(&self) -> Vec<crate::catalog::Drift> {
        self.drift.read().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// A get_metric the engine rejected may have met a source that changed
    /// since the session opened (a column dropped, a table renamed): the
    /// live catalog is read again (metadata only), the snapshot refreshed,
    /// and when the new drift touches the request the answer is
    /// `schema_drift` instead of the engine's bare error. A source that
    /// cannot be reached for that re-read is answered as unreachable.
    fn recheck_drift(&self, tool: &str, args: &Json, env: Envelope) -> Envelope {
        let engine_rejected = env.tool_error().is_some_and(|e| e.code() == crate::envelope::ErrorCode::QueryFailed && e.kind() == crate::envelope::ErrorKind::InternalError);
        let Some(engine) = self.engine.as_deref() else { return env };
        if tool != "get_metric" || !engine_rejected {
            return env;
        }
        let current = self.project();
        let live = match engine.introspect() {
            Ok(c) => crate::catalog::keep_stats(current.catalog.as_ref(), c),
            // The source went away while serving: say so, not "a bug".
            Err(e @ EngineError::Connect { .. }) => return surface::unreachable_source(args, &e.to_string()),
            Err(e) => {
                tracing::warn!("the live catalog could not be re-read after an engine failure: {e}");
                return env;
            }
        };
        let drift = crate::catalog::drift(&current.model, &live);
        if current.catalog.as_ref() == Some(&live) && drift.is_empty() {
            return env;
        }
        if let Err(e) = live.save_snapshot(&current.dir) {
            tracing::warn!("could not write the catalog snapshot: {e}");
        }
        let refreshed = if drift.is_empty() {
            // Changed only where the model does not read: take it whole.
            (*current).clone().with_catalog(live.clone()).unwrap_or_else(|_| Project { catalog: Some(live), ..(*current).clone() })
        } else {
            // The model keeps what it declared; the physical tools see the truth.
            Project { catalog: Some(live), ..(*current).clone() }
        };
        *self.project.write().unwrap_or_else(|p| p.into_inner()) = Arc::new(refreshed);
        *self.drift.write().unwrap_or_else(|p| p.into_inner()) = drift;
        self.drift_touched(tool, args).unwrap_or(env)
    }

    /// Compiles without running, whatever the session's engine (`compile`).
    pub fn compile(&self, args: &Json, validate: bool) -> Envelope {
        let execution = if validate { Execution::Validate } else { Execution::DryRun };
        surface::invoke(&self.project(), "get_metric", args, execution)
    }

    /// Appends the call's audit record and stamps the answer with its hash,
    /// the fingerprint an agent can echo (`schemabrain audit show`).
    fn record(&self, tool: &str, args: &Json, env: Envelope, principal: Option<&Principal>) -> Envelope {
        let Some(log) = &self.audit else { return env };
        let kind = env.tool_error().map(|e| e.kind().as_str());
        let mut detail = match env.tool_error() {
            None => crate::audit::Detail::default(),
            Some(e) => {
                let r = e.recovery();
                let suggested = r.suggested_tool().map(|t| (t, r.suggested_args().map(|a| Json::Object(a.clone())).unwrap_or(Json::Null)));
                crate::audit::Detail {
                    pii_categories: e.pii_categories().to_vec(),
                    recovery: Some(crate::audit::RecoveryRecord::of(suggested.as_ref().map(|s| s.0), suggested.as_ref().map(|s| &s.1))),
                    principal: None,
                }
            }
        };
        detail.principal = principal_record(principal);
        match log.append_detailed(tool, env.status().as_str(), kind, args, env.trace_id(), detail) {
            Ok(rec) => env.with_fingerprint(rec.hash),
            Err(e) => {
                tracing::error!("audit append failed: {e}");
                env
            }
        }
    }

    /// Records an MCP read that is not a tool call (`resources/read`,
    /// `prompts/get`, `completion/complete`): what was asked (hashed), and
    /// whether it answered. Returns the record's hash.
    pub fn record_read(&self, method: &str, args: &Json, outcome: Result<(), &str>, principal: Option<&Principal>) -> Option<String> {
        let log = self.audit.as_ref()?;
        let trace = uuid::Uuid::new_v4().simple().to_string();
        let (status, kind) = match outcome {
            Ok(()) => ("success", None),
            Err(kind) => ("error", Some(kind)),
        };
        let detail = crate::audit::Detail { principal: principal_record(principal), ..Default::default() };
        match log.append_detailed(method, status, kind, args, &trace, detail) {
            Ok(rec) => Some(rec.hash),
            Err(e) => {
                tracing::error!("audit append failed: {e}");
                None
            }
        }
    }

    /// Records a call rejected before any tool ran (an unknown tool name).
    pub fn record_rejected(&self, tool: &str, args: &Json, principal: Option<&Principal>) {
        if let Some(log) = &self.audit {
            let trace = uuid::Uuid::new_v4().simple().to_string();
            let detail = crate::audit::Detail { principal: principal_record(principal), ..Default::default() };
            if let Err(e) = log.append_detailed(tool, "rejected", Some("unknown_tool"), args, &trace, detail) {
                tracing::error!("audit append failed: {e}");
            }
        }
    }
}

/// The provider tools a caller under row filters may use: the catalog's
/// metadata, and free SQL, which reads each table through the filters. The
/// others read or copy whole tables (samples, statistics, profiles, views).
const ROW_FILTERED_PROVIDER_TOOLS: [&str; 5] = ["list_schemas", "list_tables", "get_table_schema", "query_sql", "explain_sql"];

fn row_filtered_refusal(tool: &str) -> Envelope {
    let message = format!("{tool} reads whole tables, and the caller's roles read rows only through their row filters; query_sql reads through them");
    Envelope::refused(
        ToolError::refusal(RefusalKind::AllowlistViolation, message, Recovery::none(), Vec::new())
            .with_widening_hint(format!("a role without row filters ({}) may use {tool}: ask an operator for one", crate::auth::policy::POLICY_FILE)),
    )
}

/// The project's access policy, checked against its tools and metrics, and
/// its row filters against the model.
fn load_policy(project: &Project) -> Result<Option<AccessPolicy>, SessionError> {
    let model = &project.model;
    let metrics: std::collections::BTreeSet<String> = model.metrics.keys().chain(model.derived.keys()).chain(model.queries.keys()).cloned().collect();
    let tools: Vec<&str> = semantic::TOOL_NAMES.iter().chain(provider::PROVIDER_TOOLS.iter()).copied().collect();
    let entities: std::collections::BTreeSet<String> = model.entities.keys().cloned().collect();
    let known = crate::auth::policy::Known { tools: &tools, metrics: &metrics, entities: &entities };
    let policy = AccessPolicy::load(&project.dir, known).map_err(SessionError::Policy)?;
    if let Some(p) = &policy {
        let file = project.dir.join(crate::auth::policy::POLICY_FILE);
        crate::auth::row_filter::check(&file, p.row_filters(), model).map_err(SessionError::Policy)?;
    }
    Ok(policy)
}

/// `base` with only the `visible` metrics and saved queries, plus the
/// metrics visible derived metrics are computed from.
fn scope_project(base: &Project, visible: &std::collections::BTreeSet<String>) -> Result<Project, crate::model::Diagnostics> {
    let mut model = base.model.clone().into_model();
    let mut keep: std::collections::BTreeSet<String> = visible.clone();
    // Derived metrics may build on derived metrics: widen to a fixed point.
    loop {
        let before = keep.len();
        let inputs: Vec<String> = model.derived.values().filter(|d| keep.contains(&d.name)).flat_map(|d| d.inputs.iter().map(|i| i.metric.clone())).collect();
        keep.extend(inputs);
        if keep.len() == before {
            break;
        }
    }
    model.metrics.retain(|n, _| keep.contains(n));
    model.derived.retain(|n, _| keep.contains(n));
    model.queries.retain(|n, q| visible.contains(n) && q.metrics.iter().all(|m| keep.contains(m)));
    Ok(Project { dir: base.dir.clone(), model: crate::model::CheckedModel::new(model)?, catalog: base.catalog.clone(), rows: None })
}

/// A caller as the audit keeps it: issuer and subject, no credential, no roles.
fn principal_record(principal: Option<&Principal>) -> Option<crate::audit::PrincipalRecord> {
    principal.map(|p| crate::audit::PrincipalRecord::of(&p.issuer, &p.subject))
}

/// Introspects the source, writes the snapshot when it changed, and checks
/// the model against it. With `strict`, a disagreement is an error; else it
/// is logged and the project keeps its declared columns.
fn refresh_catalog(project: Project, engine: &dyn Engine, strict: bool) -> Result<(Project, Vec<crate::catalog::Drift>), SessionError> {
    let catalog = match engine.introspect() {
        Ok(c) => c,
        Err(e) if strict => return Err(SessionError::Engine(e)),
        Err(e) => {
            tracing::warn!("introspection failed: {e}");
            return Ok((project, Vec::new()));
        }
    };
    let catalog = crate::catalog::keep_stats(project.catalog.as_ref(), catalog);
    let drift = crate::catalog::drift(&project.model, &catalog);
    if project.catalog.as_ref() != Some(&catalog) {
        if let Err(e) = catalog.save_snapshot(&project.dir) {
            tracing::warn!("could not write the catalog snapshot: {e}");
        }
    }
    match project.clone().with_catalog(catalog.clone()) {
        Ok(p) => Ok((p, drift)),
        // Drift is answered per request (`schema_drift`), not by refusing to open.
        Err(d) if strict && drift.is_empty() => Err(SessionError::Project(d)),
        Err(d) => {
            tracing::warn!("the catalog disagrees with the model:\n{d}");
            // The model keeps what it declared; the physical tools see the live catalog.
            Ok((Project { catalog: Some(catalog), ..project }, drift))
        }
    }
}
