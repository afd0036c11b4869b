//! The published surface of the twelve tools: name, title, the charter's
//! "Use this when…" description, per-tool metadata (cost, latency,
//! idempotency, side effects) and the input schema generated from the Rust
//! argument types. Transports (`mcp`) publish these; they write none of it.
//!
//! Architecture invariant: data and schema generation only; no rmcp, no IO.

use schemars::generate::SchemaSettings;
use schemars::JsonSchema;
use serde_json::{json, Map, Value as Json};

use crate::tools::contract::shape::ResponseFormat;
use crate::tools::provider::{self, inspect};
use crate::tools::semantic::physical::{ColumnNameArgs, SuggestJoinsArgs, TableNameArgs};
use crate::tools::semantic::search::SearchArgs;
use crate::tools::semantic::{GetMetricArgs, NameArgs, ResolveJoinArgs};
use crate::envelope::CHARTER_VERSION;

/// What a tool touches (charter "Per-tool metadata").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SideEffects {
    /// Pure compute over the loaded model and catalog snapshot.
    None,
    /// Reads the source database.
    Read,
    /// Writes into the source database (only into the schema the server
    /// was started to allow).
    Write,
}

impl SideEffects {
    pub fn as_str(self) -> &'static str {
        match self {
            SideEffects::None => "none",
            SideEffects::Read => "read",
            SideEffects::Write => "write",
        }
    }
}

/// One tool as published.
#[derive(Clone, Debug)]
pub struct ToolSpec {
    pub name: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    /// Typical response size in tokens (charter `cost_hint.tokens_estimate`).
    pub tokens_estimate: u32,
    /// `fast` < 100 ms, `moderate` < 1 s, `slow` otherwise.
    pub latency_hint: &'static str,
    pub idempotent: bool,
    pub side_effects: SideEffects,
    /// Accepts `response_format` (concise | detailed).
    pub formats: bool,
    schema: fn() -> Json,
}

impl ToolSpec {
    /// JSON Schema (2020-12) of the arguments, object-rooted, inlined, every
    /// property described, unknown properties forbidden.
    pub fn input_schema(&self) -> Json {
        let mut schema = (self.schema)();
        if self.formats {
            let format = schema_of::<ResponseFormat>();
            if let Some(props) = schema.get_mut("properties").and_then(Json::as_object_mut) {
                props.insert("response_format".into(), format);
            }
        }
        schema
    }

    /// JSON Schema of this tool's answer: the compact envelope with `data`
    /// typed per tool (the keys every answer with data carries, and their
    /// types). Kept small on purpose: it is in every agent's context.
    pub fn output_schema(&self) -> Json {
        crate::envelope::compact_envelope_schema(data_schema(self.name))
    }

    /// The charter's per-tool metadata, published in the tool's `_meta`.
    pub fn metadata(&self) -> Map<String, Json> {
        let meta = json!({
            "cost_hint": {"tokens_estimate": self.tokens_estimate, "dollars_estimate": null},
            "latency_hint": self.latency_hint,
            "idempotent": self.idempotent,
            "side_effects": self.side_effects.as_str(),
            "charter_version": CHARTER_VERSION,
        });
        match meta {
            Json::Object(m) => m,
            _ => unreachable!("metadata is an object literal"),
        }
    }
}

/// get_metric's arguments with their closed vocabularies published as
/// enums, taken from the code that parses them (so the schema cannot drift
/// from what is accepted), and the defaults that do not depend on the model.
fn get_metric_schema() -> Json {
    let mut schema = schema_of::<GetMetricArgs>();
    let grains: Vec<&str> = crate::model::Grain::ALL.iter().map(|g| g.as_str()).collect();
    let set = |schema: &mut Json, path: &[&str], key: &str, value: Json| {
        let mut at = &mut *schema;
        for p in path {
            match at.get_mut(*p) {
                Some(next) => at = next,
                None => return,
            }
        }
        if let Some(m) = at.as_object_mut() {
            m.insert(key.into(), value);
        }
    };
    set(&mut schema, &["properties", "filters", "items", "properties", "op"], "enum", json!(crate::model::FilterOp::ALL));
    set(&mut schema, &["properties", "order_by", "items", "properties", "direction"], "enum", json!(["asc", "desc"]));
    set(&mut schema, &["properties", "order_by", "items", "properties", "direction"], "default", json!("asc"));
    set(&mut schema, &["properties", "time_grain"], "enum", json!(grains));
    set(&mut schema, &["properties", "dialect"], "enum", json!(crate::sql::Dialect::supported()));
    set(&mut schema, &["properties", "dry_run"], "default", json!(false));
    schema
}

/// `data` of a tool's answer: its required keys, typed. Shaping may add
/// `token_estimate` and `truncated`, and `concise` drops descriptions, so
/// only keys every answer keeps are required.
fn data_schema(tool: &str) -> Json {
    let object = |required: &[(&str, &str)]| {
        let props: Map<String, Json> = required.iter().map(|(k, t)| (k.to_string(), json!({"type": t}))).collect();
        json!({"type": "object", "required": required.iter().map(|(k, _)| *k).collect::<Vec<_>>(), "properties": props})
    };
    match tool {
        "find_relevant_tables" | "find_relevant_entities" => object(&[("hits", "array"), ("count", "integer")]),
        "list_entities" | "list_metrics" | "list_joins" => object(&[("items", "array"), ("count", "integer")]),
        "describe_table" => object(&[("qualified_name", "string"), ("columns", "array")]),
        "describe_column" => object(&[("qualified_name", "string"), ("table", "string")]),
        "suggest_joins" => object(&[("paths", "array"), ("unreachable_pairs", "array")]),
        "get_example_queries" => object(&[("qualified_name", "string"), ("queries", "array")]),
        "describe_entity" => object(&[("name", "string"), ("columns", "array"), ("metrics", "array"), ("joins", "array")]),
        "resolve_join" => object(&[("name", "string"), ("source_entity", "string"), ("target_entity", "string"), ("on", "array")]),
        "get_metric" => object(&[("columns", "array"), ("dialect", "string")]),
        "list_schemas" | "list_tables" => object(&[("items", "array"), ("count", "integer")]),
        "get_table_schema" => object(&[("qualified_name", "string"), ("columns", "array")]),
        "query_sql" | "query_plan" => object(&[("sql", "string"), ("dialect", "string")]),
        "explain_sql" => object(&[("sql", "string"), ("plan", "array")]),
        "sample_table" => object(&[("qualified_name", "string"), ("columns", "array"), ("rows", "array"), ("masked_columns", "array")]),
        "get_stats" | "profile_table" => object(&[("qualified_name", "string"), ("row_count", "integer"), ("columns", "array")]),
        "detect_pii" => object(&[("qualified_name", "string"), ("columns", "array")]),
        "preview_masked" => object(&[("qualified_name", "string"), ("columns", "array"), ("rows", "array"), ("policy_applied", "object")]),
        "materialize_sql" | "create_view" => object(&[("qualified_name", "string"), ("mode", "string")]),
        _ => json!({"type": "object"}),
    }
}

/// Schema of a tool without arguments: `{}` and nothing else.
fn no_args() -> Json {
    json!({"type": "object", "properties": {}, "additionalProperties": false})
}

/// Generates a schema with every subschema inlined (no `$ref`: some hosts
/// drop referenced definitions) and optional fields as plain types rather
/// than `[T, "null"]` unions (some hosts strip nullable unions; omitting an
/// optional argument means the same as null).
pub fn schema_of<T: JsonSchema>() -> Json {
    let mut settings = SchemaSettings::draft2020_12();
    settings.inline_subschemas = true;
    let mut schema = settings.into_generator().into_root_schema_for::<T>().to_value();
    if let Json::Object(m) = &mut schema {
        m.remove("$schema");
        m.remove("title");
    }
    denull(&mut schema);
    schema
}

fn denull(v: &mut Json) {
    match v {
        Json::Object(m) => {
            if let Some(Json::Array(types)) = m.get_mut("type") {
                types.retain(|t| t != "null");
                if let [only] = types.as_slice() {
                    let only = only.clone();
                    m.insert("type".into(), only);
                }
            }
            if let Some(Json::Array(e)) = m.get_mut("enum") {
                e.retain(|x| !x.is_null());
            }
            for (_, child) in m.iter_mut() {
                denull(child);
            }
        }
        Json::Array(a) => a.iter_mut().for_each(denull),
        _ => {}
    }
}

/// Every tool, in the order `tools/list` publishes them (by name).
pub fn tool_specs() -> Vec<ToolSpec> {
    let mut v = vec![
        ToolSpec {
            name: "find_relevant_tables",
            title: "Find relevant tables",
            description: "Use this when the user describes data in words (\"where are refunds?\") and you need the physical tables. \
                Ranks tables by local keyword search over names, columns, comments and descriptions. \
                Use find_relevant_entities instead when you want semantic-layer entities for a metric. \
                Compositions: find_relevant_tables → describe_table → describe_column; find_relevant_tables → suggest_joins.",
            tokens_estimate: 400,
            latency_hint: "fast",
            idempotent: true,
            side_effects: SideEffects::None,
            formats: true,
            schema: schema_of::<SearchArgs>,
        },
        ToolSpec {
            name: "describe_table",
            title: "Describe a table",
            description: "Use this when the user names a specific table (`schema.table`, e.g. main.orders). \
                Returns columns with types, keys, foreign keys and comments; blocked PII columns are redacted. \
                Use find_relevant_tables instead when the user describes the table in words. \
                Compositions: find_relevant_tables → describe_table; describe_table → describe_column for one column's links.",
            tokens_estimate: 700,
            latency_hint: "fast",
            idempotent: true,
            side_effects: SideEffects::None,
            formats: true,
            schema: schema_of::<TableNameArgs>,
        },
        ToolSpec {
            name: "describe_column",
            title: "Describe a column",
            description: "Use this when you need one column's detail (`schema.table.column`): type, nullability, comment, PII tag and the foreign keys into and out of it. \
                Use describe_table instead when you need every column of a table. \
                Compositions: describe_table → describe_column; describe_column → suggest_joins to connect the tables it links.",
            tokens_estimate: 250,
            latency_hint: "fast",
            idempotent: true,
            side_effects: SideEffects::None,
            formats: false,
            schema: schema_of::<ColumnNameArgs>,
        },
        ToolSpec {
            name: "suggest_joins",
            title: "Suggest joins between tables",
            description: "Use this when you have two or more physical tables and need how they connect: shortest foreign-key paths per pair, with unreachable pairs listed. \
                Use resolve_join instead when both sides are semantic-layer entities with a canonical join. \
                Compositions: find_relevant_tables → suggest_joins; suggest_joins → describe_table on bridge tables.",
            tokens_estimate: 500,
            latency_hint: "fast",
            idempotent: true,
            side_effects: SideEffects::None,
            formats: false,
            schema: schema_of::<SuggestJoinsArgs>,
        },
        ToolSpec {
            name: "get_example_queries",
            title: "Get example queries",
            description: "Use this when you want working get_metric calls about a table (`schema.table`) as a pattern: \
                built from the model's metrics and the table's columns, each planned before it is offered. \
                Use get_metric instead when a declared metric answers the question. \
                Compositions: describe_table → get_example_queries; get_example_queries → list_metrics to find the governed version.",
            tokens_estimate: 300,
            latency_hint: "fast",
            idempotent: true,
            side_effects: SideEffects::None,
            formats: true,
            schema: schema_of::<TableNameArgs>,
        },
        ToolSpec {
            name: "find_relevant_entities",
            title: "Find relevant entities",
            description: "Use this when the user describes a business concept (\"buyers\", \"sales lines\") and you need the semantic-layer entity. \
                Ranks entities by local keyword search over names, descriptions and columns. \
                Use find_relevant_tables instead when you need raw tables outside the semantic layer. \
                Compositions: find_relevant_entities → describe_entity → get_metric.",
            tokens_estimate: 350,
            latency_hint: "fast",
            idempotent: true,
            side_effects: SideEffects::None,
            formats: true,
            schema: schema_of::<SearchArgs>,
        },
        ToolSpec {
            name: "list_entities",
            title: "List entities",
            description: "Use this when you need every semantic-layer entity (business object bound to one table) with its identity. \
                Use find_relevant_entities instead when you have a concept in words and many entities. \
                Compositions: list_entities → describe_entity → get_metric; list_entities → resolve_join.",
            tokens_estimate: 600,
            latency_hint: "fast",
            idempotent: true,
            side_effects: SideEffects::None,
            formats: false,
            schema: no_args,
        },
        ToolSpec {
            name: "describe_entity",
            title: "Describe an entity",
            description: "Use this when you know an entity's name and need its columns (PII redacted), metrics, joins and the entities it reaches. \
                Use describe_table instead when you have a physical table with no entity. \
                Compositions: list_entities → describe_entity → get_metric; describe_entity → resolve_join.",
            tokens_estimate: 900,
            latency_hint: "fast",
            idempotent: true,
            side_effects: SideEffects::None,
            formats: false,
            schema: schema_of::<NameArgs>,
        },
        ToolSpec {
            name: "list_metrics",
            title: "List metrics",
            description: "Use this when the user wants a number (revenue, counts, averages): lists every governed metric with its entity, aggregation, time dimension and grains. \
                Use get_metric instead when you already know the metric's name. \
                Compositions: list_metrics → describe_entity (its entity) → get_metric.",
            tokens_estimate: 800,
            latency_hint: "fast",
            idempotent: true,
            side_effects: SideEffects::None,
            formats: false,
            schema: no_args,
        },
        ToolSpec {
            name: "list_joins",
            title: "List joins",
            description: "Use this when you need every canonical join of the semantic layer: its two entities, keys and cardinality. \
                Use resolve_join instead when you need the join between two given entities. \
                Compositions: list_joins → get_metric with via to pick a path; list_joins → resolve_join.",
            tokens_estimate: 700,
            latency_hint: "fast",
            idempotent: true,
            side_effects: SideEffects::None,
            formats: false,
            schema: no_args,
        },
        ToolSpec {
            name: "resolve_join",
            title: "Resolve a join",
            description: "Use this when you need the canonical join between two entities: keys, cardinality and a paste-ready JOIN clause. \
                Use suggest_joins instead when the tables are outside the semantic layer. \
                Compositions: describe_entity → resolve_join; resolve_join → get_metric with via.",
            tokens_estimate: 250,
            latency_hint: "fast",
            idempotent: true,
            side_effects: SideEffects::None,
            formats: false,
            schema: schema_of::<ResolveJoinArgs>,
        },
        ToolSpec {
            name: "get_metric",
            title: "Get a metric",
            description: "Use this when the user asks for a governed number: a metric by group-bys, time grain, filters, order and limit. \
                Plans joins, refuses PII, runs read-only SQL; dry_run returns the SQL only. \
                Use list_metrics instead when you do not know the metric's name. \
                Compositions: list_metrics → get_metric; describe_entity → get_metric with group_by.",
            tokens_estimate: 1500,
            latency_hint: "moderate",
            idempotent: true,
            side_effects: SideEffects::Read,
            formats: true,
            schema: get_metric_schema,
        },
    ];
    v.sort_by_key(|s| s.name);
    v
}

/// The provider toolset (seed 003), published only when the server is
/// started with it (`serve --toolsets semantic,provider`).
pub fn provider_specs() -> Vec<ToolSpec> {
    let mut v = vec![
        ToolSpec {
            name: "list_schemas",
            title: "List schemas",
            description: "Use this when you need raw tables outside the semantic layer and do not know where they are: every schema of the source with its table count. \
                Use list_metrics instead when a governed metric may answer. \
                Compositions: list_schemas → list_tables → get_table_schema → query_sql.",
            tokens_estimate: 150,
            latency_hint: "fast",
            idempotent: true,
            side_effects: SideEffects::None,
            formats: false,
            schema: no_args,
        },
        ToolSpec {
            name: "list_tables",
            title: "List tables",
            description: "Use this when you need the tables of the source (optionally of one schema): qualified names, column and row counts. \
                Use find_relevant_tables instead when you can describe the data in words. \
                Compositions: list_schemas → list_tables → get_table_schema → query_sql.",
            tokens_estimate: 600,
            latency_hint: "fast",
            idempotent: true,
            side_effects: SideEffects::None,
            formats: false,
            schema: schema_of::<provider::ListTablesArgs>,
        },
        ToolSpec {
            name: "get_table_schema",
            title: "Get a table's schema",
            description: "Use this when you are about to write SQL against a table (`schema.table`) and need its columns with types, keys and PII flags (blocked columns redacted). \
                Use describe_entity instead when the table is a modelled entity. \
                Compositions: list_tables → get_table_schema → query_sql.",
            tokens_estimate: 700,
            latency_hint: "fast",
            idempotent: true,
            side_effects: SideEffects::None,
            formats: false,
            schema: schema_of::<TableNameArgs>,
        },
        ToolSpec {
            name: "query_sql",
            title: "Run read-only SQL",
            description: "Use this when no governed metric answers (check list_metrics first) and you need rows from catalog tables: runs one read-only SELECT, paged (page_size, page_token), \
                with PII columns refused except under COUNT; dry_run checks without running. \
                Use get_metric instead when the semantic layer defines the number. \
                Compositions: get_table_schema → query_sql; query_sql with page_token for more rows.",
            tokens_estimate: 2000,
            latency_hint: "moderate",
            idempotent: true,
            side_effects: SideEffects::Read,
            formats: false,
            schema: schema_of::<provider::QuerySqlArgs>,
        },
        ToolSpec {
            name: "explain_sql",
            title: "Explain read-only SQL",
            description: "Use this when a query_sql statement may be slow or you want to see how it runs: the engine's plan for one read-only SELECT, checked as query_sql checks it, without running it. \
                Use query_sql with dry_run instead when you only need to know the statement is allowed. \
                Compositions: query_sql (dry_run) → explain_sql → query_sql.",
            tokens_estimate: 800,
            latency_hint: "fast",
            idempotent: true,
            side_effects: SideEffects::Read,
            formats: false,
            schema: schema_of::<provider::ExplainSqlArgs>,
        },
        ToolSpec {
            name: "query_plan",
            title: "Run a Substrait plan",
            description: "Use this when you hold a query as a Substrait plan (protobuf JSON) rather than SQL: it is translated to the source's SQL through DataFusion, then checked, masked, paged and run exactly as query_sql runs SQL; the answer shows the SQL it became. \
                Use query_sql instead when you can write the SELECT yourself. \
                Compositions: list_tables → query_plan (dry_run) → query_plan.",
            tokens_estimate: 1500,
            latency_hint: "moderate",
            idempotent: true,
            side_effects: SideEffects::Read,
            formats: false,
            schema: schema_of::<provider::QueryPlanArgs>,
        },
        ToolSpec {
            name: "sample_table",
            title: "Sample a table",
            description: "Use this when you need to see what a table's rows look like (up to 100, by primary key): PII columns are left out and listed as masked. \
                Use query_sql instead when you need the rows that answer a question. \
                Compositions: get_table_schema → sample_table → query_sql.",
            tokens_estimate: 900,
            latency_hint: "fast",
            idempotent: true,
            side_effects: SideEffects::Read,
            formats: false,
            schema: schema_of::<inspect::SampleArgs>,
        },
        ToolSpec {
            name: "get_stats",
            title: "Get table statistics",
            description: "Use this when you need a table's size and per-column null fraction, distinct count and (for numbers and dates) min/max, measured now; blocked PII columns are left out. \
                Use profile_table instead when you also want each small column's most common values. \
                Compositions: list_tables → get_stats → query_sql.",
            tokens_estimate: 600,
            latency_hint: "moderate",
            idempotent: true,
            side_effects: SideEffects::Read,
            formats: false,
            schema: schema_of::<inspect::TableStatsArgs>,
        },
        ToolSpec {
            name: "profile_table",
            title: "Profile a table",
            description: "Use this when you need to know what values a table holds before filtering: get_stats plus the five most common values of every non-PII column with at most 50 distinct values. \
                Use get_stats instead when counts suffice (one statement, cheaper). \
                Compositions: get_table_schema → profile_table → query_sql with filters on the values seen.",
            tokens_estimate: 1200,
            latency_hint: "moderate",
            idempotent: true,
            side_effects: SideEffects::Read,
            formats: false,
            schema: schema_of::<inspect::TableStatsArgs>,
        },
        ToolSpec {
            name: "detect_pii",
            title: "Detect PII in a table",
            description: "Use this when you need to know which columns of a table hold personal data: the name classifier, the value classifier over sampled values (emails, phones, cards by Luhn, IBANs, national ids, IPs) and the policy's current decision per column; no value is returned. \
                Use get_table_schema instead when the policy's flags suffice. \
                Compositions: list_tables → detect_pii → get_table_schema.",
            tokens_estimate: 900,
            latency_hint: "moderate",
            idempotent: true,
            side_effects: SideEffects::Read,
            formats: false,
            schema: schema_of::<inspect::DetectPiiArgs>,
        },
        ToolSpec {
            name: "preview_masked",
            title: "Preview a table under the masking policy",
            description: "Use this when a PII column you need is masked by the policy (pii_policy.yaml `masking`) and you want to see what free SQL will show of it: rows with clean columns as they are, masked columns as their mask (redact, hash, last4, email_domain), PII without a mask withheld and listed. \
                Use sample_table instead when the clean columns suffice. \
                Compositions: detect_pii → preview_masked → query_sql grouping or joining on the masked column.",
            tokens_estimate: 900,
            latency_hint: "fast",
            idempotent: true,
            side_effects: SideEffects::Read,
            formats: false,
            schema: schema_of::<inspect::PreviewMaskedArgs>,
        },
    ];
    v.sort_by_key(|s| s.name);
    v
}

/// The write tools, published only on a server started with
/// `--allow-writes SCHEMA` and the provider toolset.
pub fn write_specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: "create_view",
            title: "Create a view",
            description: "Use this when a free-SQL result should stay available as a view for later queries: CREATE (or, with mode replace, CREATE OR REPLACE) VIEW in the one schema the server allows, over a statement checked as query_sql checks it. \
                Use materialize_sql instead when the rows should be stored. \
                Compositions: query_sql (dry_run) → create_view → query_sql on the view.",
            tokens_estimate: 200,
            latency_hint: "fast",
            idempotent: false,
            side_effects: SideEffects::Write,
            formats: false,
            schema: schema_of::<provider::CreateViewArgs>,
        },
        ToolSpec {
            name: "materialize_sql",
            title: "Materialize a query",
            description: "Use this when a free-SQL result should be stored as a table: create, replace or append into a table of the one schema the server allows, from a statement checked as query_sql checks it (no PII can be stored). \
                Use create_view instead when the result should stay live. \
                Compositions: query_sql (dry_run) → materialize_sql → query_sql on the table.",
            tokens_estimate: 200,
            latency_hint: "moderate",
            idempotent: false,
            side_effects: SideEffects::Write,
            formats: false,
            schema: schema_of::<provider::MaterializeArgs>,
        },
    ]
}

/// The spec of one tool.
pub fn tool_spec(name: &str) -> Option<ToolSpec> {
    tool_specs().into_iter().find(|s| s.name == name)
}
