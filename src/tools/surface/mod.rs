//! The one entry point transports call: `invoke(project, tool, args,
//! execution)`. It checks the arguments against the published schema
//! (unknown names rejected with the allowed ones listed), takes
//! `response_format` off the arguments, dispatches through [`crate::tools::semantic::call`]
//! and shapes the answer (format, token estimate, cap).
//!
//! Architecture invariant: no rmcp, no IO; the MCP adapter and tests see the
//! same behaviour.

pub mod scope;
pub mod session;
pub mod spec;

use std::sync::OnceLock;

use serde_json::{json, Map, Value as Json};

use crate::tools::contract::shape::{self, shape, ResponseFormat};
use crate::tools::contract::next;
use crate::tools::provider;
use spec::{provider_specs, tool_specs, write_specs, ToolSpec};
use crate::tools::semantic::{call, Execution};
use crate::envelope::{Envelope, FailureKind, Recovery, ToolError};
use crate::project::Project;

/// A tool as published, with its input schema generated once.
pub struct Published {
    pub spec: ToolSpec,
    pub input_schema: Json,
    /// Property names the schema allows.
    pub allowed: Vec<String>,
}

fn publish(specs: Vec<ToolSpec>) -> Vec<Published> {
    specs
        .into_iter()
        .map(|spec| {
            let input_schema = spec.input_schema();
            let allowed = input_schema.get("properties").and_then(Json::as_object).map(|p| p.keys().cloned().collect()).unwrap_or_default();
            Published { spec, input_schema, allowed }
        })
        .collect()
}

/// Every tool of the semantic layer (the default toolset) as published,
/// sorted by name, built once per process.
pub fn published() -> &'static [Published] {
    static P: OnceLock<Vec<Published>> = OnceLock::new();
    P.get_or_init(|| publish(tool_specs()))
}

/// The provider toolset as published.
pub fn published_provider() -> &'static [Published] {
    static P: OnceLock<Vec<Published>> = OnceLock::new();
    P.get_or_init(|| publish(provider_specs()))
}

/// The write tools as published.
pub fn published_writes() -> &'static [Published] {
    static P: OnceLock<Vec<Published>> = OnceLock::new();
    P.get_or_init(|| publish(write_specs()))
}

/// The tool groups a server offers: the semantic layer always, the
/// provider tools (seed 003: catalog and free SQL) when asked for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Toolsets {
    pub provider: bool,
    /// materialize_sql and create_view: with the provider toolset on a
    /// server started with `--allow-writes SCHEMA` (set by the session).
    pub writes: bool,
}

impl Toolsets {
    /// `semantic`, `provider`, `all`, or a comma-separated list of them.
    pub fn parse(text: &str) -> Result<Toolsets, String> {
        let mut sets = Toolsets::default();
        for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            match part {
                "semantic" => {}
                "provider" | "all" => sets.provider = true,
                other => return Err(format!("unknown toolset `{}`; toolsets: semantic, provider, all", crate::model::echo(other))),
            }
        }
        Ok(sets)
    }

    /// The tools offered, semantic first, each group sorted by name.
    pub fn tools(self) -> impl Iterator<Item = &'static Published> {
        let provider: &'static [Published] = if self.provider { published_provider() } else { &[] };
        let writes: &'static [Published] = if self.provider && self.writes { published_writes() } else { &[] };
        published().iter().chain(provider.iter()).chain(writes.iter())
    }

    pub fn find(self, tool: &str) -> Option<&'static Published> {
        self.tools().find(|p| p.spec.name == tool)
    }
}

pub fn find(tool: &str) -> Option<&'static Published> {
    published().iter().find(|p| p.spec.name == tool)
}

/// Runs one provider tool call (argument check, tool, size cap, next
/// action); the caller has checked that the toolset is offered.
pub fn invoke_provider(ctx: &provider::ProviderContext<'_>, tool: &str, args: &Json) -> Envelope {
    let env = match published_provider().iter().chain(published_writes()).find(|p| p.spec.name == tool) {
        None => provider::call(ctx, tool, args),
        Some(p) => match object_args(p, tool, args) {
            Err(e) => e,
            Ok(map) => shape(tool, provider::call(ctx, tool, &Json::Object(map)), ResponseFormat::Detailed),
        },
    };
    next::attach(tool, args, env)
}

/// The arguments as an object with only names the tool's schema allows;
/// else the error naming what is wrong, with the call repaired.
fn object_args(p: &Published, tool: &str, args: &Json) -> Result<Map<String, Json>, Envelope> {
    let map: Map<String, Json> = match args {
        Json::Null => Map::new(),
        Json::Object(m) => m.clone(),
        other => {
            return Err(Envelope::error(ToolError::new(
                FailureKind::MalformedName,
                format!("arguments of {tool} must be a JSON object, not {}", kind_of(other)),
                Recovery::none(),
            )))
        }
    };
    let unknown: Vec<String> = map.keys().filter(|k| !p.allowed.contains(k)).cloned().collect();
    if unknown.is_empty() {
        return Ok(map);
    }
    let names: Vec<String> = unknown.iter().map(|u| format!("`{}`", crate::ir::echo_name(u))).collect();
    let mut fuzzy = Vec::new();
    for u in &unknown {
        fuzzy.extend(crate::model::close_matches(u, p.allowed.iter().map(String::as_str)));
    }
    let allowed = if p.allowed.is_empty() { "it takes no arguments".to_string() } else { format!("allowed arguments: {}", p.allowed.join(", ")) };
    let message = format!("{tool} does not take {}; {allowed}.", names.join(", "));
    // The repaired call must ask the same question: each unknown argument is
    // renamed to the one allowed name it plainly means (`grain` ->
    // `time_grain`, `filter` -> `filters`), and the call is a correction. An
    // argument with no such name is never dropped from a suggested call (it
    // may be a filter or a group-by the caller needs): the error lists the
    // allowed names and suggests no call.
    let Some(renamed) = renamed_args(&map, &unknown, &p.allowed) else {
        return Err(Envelope::error(ToolError::new(FailureKind::MalformedName, message, Recovery::none().with_fuzzy_matches(fuzzy))));
    };
    Err(Envelope::error(ToolError::new(
        FailureKind::MalformedName,
        message,
        Recovery::correction(tool, Json::Object(renamed)).with_fuzzy_matches(fuzzy),
    )))
}

/// `map` with every unknown argument renamed to the allowed name it plainly
/// means, or `None` when one of them has no such name (no close match, a
/// tie, or the name is already given or claimed by another).
fn renamed_args(map: &Map<String, Json>, unknown: &[String], allowed: &[String]) -> Option<Map<String, Json>> {
    let mut fixed = map.clone();
    for u in unknown {
        let target = plain_meaning(u, allowed)?;
        if fixed.contains_key(&target) {
            return None;
        }
        let value = fixed.remove(u)?;
        fixed.insert(target, value);
    }
    Some(fixed)
}

/// The one allowed argument name `name` plainly means: the only allowed
/// name that, spelled without case or separators, contains it, is contained
/// in it, or is one typo away per five letters (`grain` -> `time_grain`,
/// `groupby` -> `group_by`). Names under three letters mean nothing plainly:
/// Jaro-Winkler finds `op` close to `group_by`, and renaming it would turn
/// an unknown argument into a group-by the caller never asked for.
fn plain_meaning(name: &str, allowed: &[String]) -> Option<String> {
    let spelled = |s: &str| s.chars().filter(|c| c.is_ascii_alphanumeric()).map(|c| c.to_ascii_lowercase()).collect::<String>();
    let n = spelled(name);
    if n.len() < 3 {
        return None;
    }
    let mut plain = allowed.iter().filter(|a| {
        let a = spelled(a);
        a.contains(&n) || n.contains(&a) || strsim::levenshtein(&n, &a) <= (a.len() / 5).max(1)
    });
    match (plain.next(), plain.next()) {
        (Some(m), None) => Some(m.clone()),
        _ => None,
    }
}

/// Runs one tool call as an agent makes it.
///
/// Every answer, rejected calls included, carries its `next_action`.
pub fn invoke(project: &Project, tool: &str, args: &Json, execution: Execution<'_>) -> Envelope {
    invoke_capped(project, tool, args, execution, true)
}

/// `invoke`, with the agents' token cap on (`token_cap`) or off (the CLI:
/// a person reading `detailed` gets every row up to the limit).
pub fn invoke_capped(project: &Project, tool: &str, args: &Json, execution: Execution<'_>, token_cap: bool) -> Envelope {
    let env = checked_call(project, tool, args, execution, token_cap);
    next::attach(tool, args, env)
}

fn checked_call(project: &Project, tool: &str, args: &Json, execution: Execution<'_>, token_cap: bool) -> Envelope {
    let Some(p) = find(tool) else {
        return call(project, tool, args, execution);
    };
    let mut map = match object_args(p, tool, args) {
        Ok(m) => m,
        Err(e) => return e,
    };
    let format = match map.remove("response_format") {
        None | Some(Json::Null) => ResponseFormat::default(),
        Some(v) => match serde_json::from_value::<ResponseFormat>(v.clone()) {
            Ok(f) => f,
            Err(_) => {
                let mut fixed = map.clone();
                fixed.insert("response_format".into(), json!("concise"));
                return Envelope::error(ToolError::new(
                    FailureKind::MalformedName,
                    format!("response_format must be \"concise\" or \"detailed\", not {}", crate::model::echo(&v.to_string())),
                    Recovery::call(tool, Json::Object(fixed)).with_fuzzy_matches(["concise", "detailed"]),
                ));
            }
        },
    };
    let env = call(project, tool, &Json::Object(map), execution);
    shape::shape_capped(tool, env, format, token_cap)
}

/// Whether a get_metric call asks for `dry_run`.
pub fn is_dry_run(args: &Json) -> bool {
    args.get("dry_run").and_then(Json::as_bool).unwrap_or(false)
}

/// get_metric meant to execute on a server with no source: the recovery is
/// the same call as a dry run, which answers with the SQL.
pub fn no_source(args: &Json) -> Envelope {
    let mut fixed = args.as_object().cloned().unwrap_or_default();
    fixed.insert("dry_run".into(), Json::Bool(true));
    Envelope::error(ToolError::new(
        FailureKind::MissingCredential,
        "No source database is configured (schemabrain.yaml `source`, or `serve --source`), so get_metric can only compile: pass dry_run=true for the SQL.",
        Recovery::call("get_metric", Json::Object(fixed)),
    ))
}

/// get_metric meant to execute on a server whose source could not be
/// opened (down, unreachable, refused the connection): `missing_credential`
/// (the server lacks a working connection; code UNAUTHORIZED), saying why,
/// with the same call as a dry run, which answers with the SQL.
pub fn unreachable_source(args: &Json, why: &str) -> Envelope {
    let mut fixed = args.as_object().cloned().unwrap_or_default();
    fixed.insert("dry_run".into(), Json::Bool(true));
    Envelope::error(ToolError::new(
        FailureKind::MissingCredential,
        format!(
            "The source could not be reached ({}), so get_metric can only compile: pass dry_run=true for the SQL, or ask the user to make the source reachable (a server that started without it must be restarted).",
            crate::model::echo(why)
        ),
        Recovery::call("get_metric", Json::Object(fixed)),
    ))
}

fn kind_of(v: &Json) -> &'static str {
    match v {
        Json::Array(_) => "an array",
        Json::String(_) => "a string",
        Json::Number(_) => "a number",
        Json::Bool(_) => "a boolean",
        _ => "null",
    }
}
