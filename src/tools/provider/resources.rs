//! The provider toolset's MCP resources (seed 003): the catalog as
//! addressable, cacheable documents. Each is the `data` of the tool that
//! answers the same question (so a resource can show nothing a tool would
//! not), plus an `etag` (a hash of the content) a client can compare.
//!
//! URIs: `res://catalogs`, `res://capabilities`, `res://schemas/{catalog}`,
//! `res://tables/{catalog}/{schema}`, `res://table/{catalog}/{schema}/{table}`,
//! `res://samples/{catalog}/{schema}/{table}`,
//! `res://lineage/{catalog}/{schema}/{table}`. A server reads one source,
//! so there is one catalog, named `default`.
//!
//! Architecture invariant: no rmcp; the MCP adapter turns these into
//! resources and errors.

use serde_json::{json, Value as Json};

use super::ProviderContext;
use crate::tools::semantic::physical;
use crate::envelope::Envelope;

/// The one catalog's name.
pub const CATALOG: &str = "default";

/// A fixed resource.
pub struct Fixed {
    pub uri: &'static str,
    pub name: &'static str,
    pub description: &'static str,
}

/// A resource template (RFC 6570).
pub struct Template {
    pub uri_template: &'static str,
    pub name: &'static str,
    pub description: &'static str,
}

pub const FIXED: [Fixed; 2] = [
    Fixed { uri: "res://catalogs", name: "catalogs", description: "The catalog this server reads (one, `default`), its engine and schemas." },
    Fixed { uri: "res://capabilities", name: "capabilities", description: "What the provider tools support on this server's engine, stated honestly (what is refused or not built too)." },
];

pub const TEMPLATES: [Template; 5] = [
    Template { uri_template: "res://schemas/{catalog}", name: "schemas", description: "The schemas of a catalog with their table counts (as list_schemas)." },
    Template { uri_template: "res://tables/{catalog}/{schema}", name: "tables", description: "The tables of a schema (as list_tables)." },
    Template { uri_template: "res://table/{catalog}/{schema}/{table}", name: "table", description: "One table's columns, keys and PII flags (as get_table_schema)." },
    Template { uri_template: "res://samples/{catalog}/{schema}/{table}", name: "samples", description: "Ten rows of a table by key, PII columns masked (as sample_table)." },
    Template { uri_template: "res://lineage/{catalog}/{schema}/{table}", name: "lineage", description: "What a table references and what references it (foreign keys), and the model entity and dbt source bound to it." },
];

/// Why a resource cannot be read.
#[derive(Debug, PartialEq, Eq)]
pub enum ReadError {
    /// No such resource (unknown URI, catalog, schema or table).
    NotFound(String),
    /// The resource exists but could not be produced now (the engine failed).
    Failed(String),
    /// The caller's roles do not grant the tool the resource mirrors.
    Denied(String),
}

/// The tool whose answer a resource mirrors, by its URI (`None` for the
/// catalog overview and capabilities, which every caller may read): a caller
/// whose roles do not grant that tool may not read it as a resource either.
pub fn mirrored_tool(uri: &str) -> Option<&'static str> {
    let path = uri.strip_prefix("res://")?;
    match path.split('/').next()? {
        "schemas" => Some("list_schemas"),
        "tables" => Some("list_tables"),
        "table" | "lineage" => Some("get_table_schema"),
        "samples" => Some("sample_table"),
        _ => None,
    }
}

/// Reads one resource: its JSON text.
pub fn read(ctx: &ProviderContext<'_>, uri: &str) -> Result<String, ReadError> {
    let not_found = || ReadError::NotFound(format!("no resource `{}`; resources: res://catalogs, res://capabilities and the templates of resources/templates/list", crate::model::echo(uri)));
    let path = uri.strip_prefix("res://").ok_or_else(not_found)?;
    let parts: Vec<&str> = path.split('/').collect();
    let catalog_ok = |c: &str| if c == CATALOG { Ok(()) } else { Err(ReadError::NotFound(format!("no catalog `{}`; this server reads one, `{CATALOG}`", crate::model::echo(c)))) };
    let data = match parts.as_slice() {
        ["catalogs"] => catalogs(ctx)?,
        ["capabilities"] => capabilities(ctx),
        ["schemas", c] => {
            catalog_ok(c)?;
            data_of(super::list_schemas(ctx.project))?
        }
        ["tables", c, schema] => {
            catalog_ok(c)?;
            data_of(super::list_tables(ctx.project, &super::ListTablesArgs { schema: Some(schema.to_string()) }))?
        }
        ["table", c, schema, table] => {
            catalog_ok(c)?;
            data_of(physical::describe_table(ctx.project, &format!("{schema}.{table}")))?
        }
        ["samples", c, schema, table] => {
            catalog_ok(c)?;
            if ctx.project.rows.is_some() {
                // Samples read whole tables; row filters restrict query_sql's reads.
                return Err(ReadError::Failed("samples read whole tables, and the caller's roles read rows only through their row filters (query_sql applies them)".to_string()));
            }
            let args = super::inspect::SampleArgs { qualified_name: format!("{schema}.{table}"), rows: Some(10), time_range: None };
            data_of(super::inspect::sample_table(ctx, &args))?
        }
        ["lineage", c, schema, table] => {
            catalog_ok(c)?;
            lineage(ctx, schema, table)?
        }
        _ => return Err(not_found()),
    };
    Ok(with_etag(data))
}

/// The content with `etag`, a hash of the content without it.
fn with_etag(mut data: Json) -> String {
    let body = serde_json::to_string(&data).unwrap_or_default();
    let digest = crate::audit::sha256_hex(body.as_bytes());
    let etag = digest.get(..16).unwrap_or(&digest).to_string();
    if let Some(m) = data.as_object_mut() {
        m.insert("etag".into(), json!(etag));
    }
    serde_json::to_string(&data).unwrap_or_default()
}

/// A tool's answer as resource content: its data, or why there is none.
fn data_of(env: Envelope) -> Result<Json, ReadError> {
    if let Some(e) = env.tool_error() {
        let message = e.message().to_string();
        return Err(match e.code().as_str() {
            "NOT_FOUND" | "INVALID_INPUT" => ReadError::NotFound(message),
            _ => ReadError::Failed(message),
        });
    }
    let mut data = env.data().cloned().unwrap_or(json!({}));
    if let Some(m) = data.as_object_mut() {
        m.remove("token_estimate");
    }
    Ok(data)
}

fn catalogs(ctx: &ProviderContext<'_>) -> Result<Json, ReadError> {
    let schemas = data_of(super::list_schemas(ctx.project))?;
    let engine = ctx.engine.map(|e| e.describe());
    Ok(json!({"catalogs": [{"name": CATALOG, "engine": engine, "schemas": schemas.get("items").cloned().unwrap_or(json!([]))}]}))
}

fn capabilities(ctx: &ProviderContext<'_>) -> Json {
    let dialect = ctx.engine.map(|e| e.dialect().name);
    json!({
        "engine": ctx.engine.map(|e| e.describe()),
        "dialect": dialect,
        // Which dialects' SQL has run on its own engine here; the rest are parse-checked (docs/engines.md).
        "dialects": {
            "executed_on_their_engine": crate::engine::EXECUTED_DIALECTS.iter().map(|(d, on)| json!({"dialect": d, "engine": on})).collect::<Vec<_>>(),
            "parse_checked_only": crate::sql::Dialect::supported().into_iter().filter(|d| !crate::engine::EXECUTED_DIALECTS.iter().any(|(e, _)| e == d)).collect::<Vec<_>>(),
        },
        "query_sql": {
            "available": ctx.engine.is_some(),
            "statements": "exactly one read-only query (SELECT/WITH/VALUES/set operations)",
            "dialects_accepted": dialect.map(|d| vec![d]).unwrap_or_default(),
            "paging": {"default_rows": super::DEFAULT_PAGE_ROWS, "max_rows": super::MAX_PAGE_ROWS, "max_page_bytes": super::MAX_PAGE_BYTES, "token_lifetime_seconds": crate::tools::contract::paging::TOKEN_LIFETIME.as_secs()},
            "pii": "blocked categories refused anywhere; other PII only under COUNT(col) / COUNT(DISTINCT col); a column the policy masks is read as its mask (policy_applied says which)",
            "time_range": "each table read restricted through its time dimension (or time_range.column); the answer lists which",
            "timeout_ms": ctx.limits.timeout.as_millis() as u64,
        },
        "explain_sql": ctx.engine.is_some(),
        "sample_table": ctx.engine.is_some(),
        "get_stats": ctx.engine.is_some(),
        "profile_table": ctx.engine.is_some(),
        "detect_pii": ctx.engine.is_some(),
        "preview_masked": ctx.engine.is_some(),
        "masking": {"policy_id": super::POLICY_ID, "methods": crate::model::MaskMethod::ALL, "rules": ctx.project.model.pii_policy.masking.len(), "applies_to": ["query_sql", "materialize_sql", "preview_masked"], "not": "get_metric, which refuses PII as before"},
        "writes": {"allowed_schema": ctx.allow_writes, "tools": if ctx.allow_writes.is_some() { json!(["materialize_sql", "create_view"]) } else { json!([]) }},
        "time_range": "query_sql, sample_table, preview_masked, get_stats and profile_table, through the table's time dimension",
        "query_plan": {"available": ctx.engine.is_some(), "input": "a Substrait plan (protobuf JSON), translated by DataFusion to the source's SQL, then run as query_sql runs SQL", "reads": "namedTable of catalog tables and virtual tables; no files"},
    })
}

fn lineage(ctx: &ProviderContext<'_>, schema: &str, table: &str) -> Result<Json, ReadError> {
    let described = data_of(physical::describe_table(ctx.project, &format!("{schema}.{table}")))?;
    let references = described.get("foreign_keys").cloned().unwrap_or(json!([]));
    let mut referenced_by = Vec::new();
    if let Some(catalog) = &ctx.project.catalog {
        for t in catalog.tables.values() {
            for fk in t.foreign_keys.iter().filter(|fk| fk.ref_schema == schema && fk.ref_table == table) {
                // Column names as describe_table would show them (placeholders for catastrophic ones).
                let policy = &ctx.project.model.pii_policy;
                let tref = crate::model::TableRef { schema: t.schema.clone(), table: t.name.clone() };
                let columns: Vec<String> = fk.columns.iter().map(|c| crate::pii::shown_table_column(policy, &tref, c)).collect();
                referenced_by.push(json!({"qualified_name": format!("{}.{}", t.schema, t.name), "columns": columns}));
            }
        }
    }
    let entity = described.get("entity").and_then(Json::as_str).and_then(|e| ctx.project.model.entity(e));
    let model = entity.map(|e| {
        json!({
            "entity": e.name,
            "origin": e.origin.as_str(),
            "defined_at": e.defined_at.to_string(),
        })
    });
    Ok(json!({
        "qualified_name": format!("{schema}.{table}"),
        "references": references,
        "referenced_by": referenced_by,
        "model": model,
        "sources": ["catalog foreign keys", "the semantic model (dbt_import origin and file:line when imported)"],
    }))
}
