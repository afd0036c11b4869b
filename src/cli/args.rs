//! clap definitions and the translation of flags into tool arguments.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

use crate::tools::{FilterArgs, GetMetricArgs, OrderByArgs};

#[derive(Parser, Debug)]
#[command(name = "schemabrain", version, about = "Semantic-layer metric compiler and SQL planner for AI agents")]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Build the demo shop warehouse (DuckDB) if missing and answer a few metrics.
    Demo {
        /// Where the demo project lives (created if missing).
        #[arg(long)]
        project: Option<PathBuf>,
        /// Print each answer's envelope as JSON lines instead of tables.
        #[arg(long)]
        json: bool,
    },
    /// Print the SQL of metrics (metric YAML files or metric names) without any engine.
    Compile {
        /// Metric files in SchemaBrain's grammar, or names of project metrics; several are answered side by side.
        #[arg(required_unless_present = "saved")]
        metrics: Vec<String>,
        /// Also have DuckDB prepare the request's DuckDB SQL and DataFusion plan its DataFusion SQL, against empty tables shaped like the model (no data, no warehouse).
        #[arg(long)]
        validate: bool,
        /// Print the request's plan (joins, filters, aggregation, how metrics combine) instead of its SQL.
        #[arg(long, conflicts_with = "validate")]
        plan: bool,
        #[command(flatten)]
        request: RequestFlags,
    },
    /// Compile metrics and run them against the project's source.
    Query {
        /// Metric names; several are answered side by side.
        #[arg(required_unless_present = "saved")]
        metrics: Vec<String>,
        /// Source URL (duckdb:PATH, a .duckdb path, postgres://…, mysql://…, parquet:DIR, csv:DIR, or `demo`); default: the project's.
        #[arg(long)]
        source: Option<String>,
        /// Rows returned at most by the engine.
        #[arg(long)]
        max_rows: Option<usize>,
        /// Query timeout in milliseconds.
        #[arg(long)]
        timeout_ms: Option<u64>,
        #[command(flatten)]
        request: RequestFlags,
    },
    /// Copy the demo warehouse (or a project's DuckDB source) into Parquet files, Postgres or MySQL/MariaDB;
    /// or, with `export ossie`, write a project's definitions as an Apache Ossie model.
    #[command(args_conflicts_with_subcommands = true, subcommand_negates_reqs = true)]
    Export {
        #[command(subcommand)]
        format: Option<ExportCommand>,
        /// Target: parquet:DIR, csv:DIR, postgres://USER@HOST:PORT/DB, mysql://USER@HOST:PORT/DB (or mariadb://…).
        #[arg(long, required = true)]
        to: Option<String>,
        /// Project whose DuckDB source is exported (default: the demo project, built if missing).
        #[arg(long)]
        project: Option<PathBuf>,
        /// Postgres schema or MySQL database to create the tables in (default: main, as the entity bindings say).
        #[arg(long)]
        schema: Option<String>,
    },
    /// Load a project and report every problem in it; with --source, check it against the live catalog.
    Check {
        #[arg(long, default_value = ".")]
        project: PathBuf,
        #[arg(long)]
        source: Option<String>,
        #[arg(long)]
        json: bool,
    },
    /// Serve the twelve tools over MCP: stdio by default, streamable HTTP with --http.
    #[command(long_about = super::serve::SERVE_LONG_ABOUT)]
    Serve(super::serve::ServeArgs),
    /// Infer a draft project from a live source: catalog snapshot with statistics, entities, joins (keys, or names verified on the data), default metrics, PII tags.
    Index {
        /// Source URL: duckdb:PATH (or a .duckdb path), postgres://…, mysql://…, parquet:DIR, csv:DIR.
        #[arg(long)]
        source: String,
        /// The project directory to write (created if missing); re-indexing keeps files edited by hand.
        #[arg(long)]
        out: PathBuf,
        /// Index only these schemas (repeatable; default: every schema the source shows).
        #[arg(long = "schema")]
        schemas: Vec<String>,
        /// Print one JSON summary instead of text (and no progress bar).
        #[arg(long)]
        json: bool,
    },
    /// Import definitions from another tool into a schemabrain project.
    Import {
        #[command(subcommand)]
        from: ImportCommand,
    },
    /// Draw the project's join graph with cardinalities (Mermaid or Graphviz dot).
    Graph {
        #[arg(long, default_value = ".")]
        project: PathBuf,
        /// mermaid or dot.
        #[arg(long, default_value = "mermaid", value_parser = ["mermaid", "dot"])]
        format: String,
    },
    /// The hash-chained audit log of tool calls.
    Audit {
        #[command(subcommand)]
        command: super::serve::AuditCommand,
    },
    /// Credentials for `serve --http`: API keys.
    Auth {
        #[command(subcommand)]
        command: super::serve::AuthCommand,
    },
}

#[derive(Subcommand, Debug)]
pub enum ExportCommand {
    /// The project's entities, joins and metrics as an Apache Ossie model (version 0.2.0.dev0), what
    /// Ossie cannot say kept under vendor SCHEMABRAIN so that `import ossie` gives the project back.
    Ossie {
        /// The project directory.
        #[arg(long, default_value = ".")]
        project: PathBuf,
        /// The file to write (`.json` for JSON, else YAML); stdout when absent.
        #[arg(long)]
        out: Option<PathBuf>,
    },
}

#[derive(Subcommand, Debug)]
pub enum ImportCommand {
    /// An Apache Ossie (Open Semantic Interchange) model, YAML or JSON, version 0.1.x or the 0.2 draft.
    Ossie {
        /// The Ossie file.
        file: PathBuf,
        /// The schemabrain project directory to write; re-importing replaces the imported files.
        #[arg(long)]
        out: PathBuf,
        /// The warehouse the datasets live in (e.g. `duckdb:warehouse.duckdb`): written as the project's
        /// source, its catalog snapshotted, and every relationship's `to` columns checked unique on it.
        #[arg(long)]
        source: Option<String>,
        /// The project's SQL dialect (default: the source's): a field's expression in the matching
        /// Ossie dialect wins over ANSI_SQL.
        #[arg(long)]
        dialect: Option<String>,
        /// Print one JSON summary (with every unmapped item) instead of text.
        #[arg(long)]
        json: bool,
    },
    /// A dbt project: its semantic layer, and its models and sources with their tests and docs (a project directory or a manifest file).
    Dbt {
        /// The dbt project directory (dbt_project.yml, the profile and the YAML, SQL and docs under the
        /// model paths are read, or target/manifest.json when present; dbt is not needed), or a
        /// semantic_manifest.json or manifest.json file.
        path: PathBuf,
        /// The schemabrain project directory to write; re-importing replaces the imported files.
        #[arg(long)]
        out: PathBuf,
        /// Bind every relation to this schema instead of the profile target's.
        #[arg(long)]
        schema: Option<String>,
        /// The warehouse the models were built in (e.g. `duckdb:warehouse.duckdb`), instead of the
        /// profile's: plain models are typed and their relationships tests measured on it.
        #[arg(long)]
        source: Option<String>,
        /// Print one JSON summary (with every unmapped item) instead of text.
        #[arg(long)]
        json: bool,
    },
}

/// Flags shared by `compile` and `query`; one to one with get_metric's arguments.
#[derive(Args, Debug, Clone)]
pub struct RequestFlags {
    /// The project directory.
    #[arg(long, default_value = ".")]
    pub project: PathBuf,
    /// Group by `entity.column` (repeatable, order kept).
    #[arg(long = "group-by", value_name = "ENTITY.COLUMN")]
    pub group_by: Vec<String>,
    /// Time grain: hour, day, week, month, quarter, year, or a custom grain of the time spine (e.g. fiscal_year).
    #[arg(long)]
    pub grain: Option<String>,
    /// Time dimension `entity.column` when the metric has none of its own.
    #[arg(long = "time-dimension")]
    pub time_dimension: Option<String>,
    /// Filter "entity.column OP value" (OP: eq ne lt lte gt gte in not_in is_null not_null or = != < <= > >=).
    #[arg(long = "filter", value_name = "FILTER")]
    pub filters: Vec<String>,
    /// Order by "name [asc|desc]": a group-by column, the metric, or metric_time.
    #[arg(long = "order-by")]
    pub order_by: Vec<String>,
    /// Rows at most (1..10000, default 1000).
    #[arg(long)]
    pub limit: Option<i64>,
    /// Join name choosing among ambiguous paths (repeatable).
    #[arg(long)]
    pub via: Vec<String>,
    /// A MetricFlow where string, e.g. "{{ Dimension('customer__country') }} = 'US'" (repeatable, ANDed).
    #[arg(long = "where", value_name = "WHERE")]
    pub wheres: Vec<String>,
    /// SQL dialect (default: the project's, else duckdb).
    #[arg(long)]
    pub dialect: Option<String>,
    /// `concise` (at most 100 rows, as get_metric's default) or `detailed` (every row up to --limit, the CLI's default).
    #[arg(long = "response-format", value_name = "FORMAT", default_value = "detailed")]
    pub response_format: String,
    /// Run a saved query (`queries/NAME.yaml`) instead of naming metrics; filters, --where, --order-by and --limit narrow it.
    #[arg(long, value_name = "QUERY", conflicts_with_all = ["group_by", "grain", "time_dimension"])]
    pub saved: Option<String>,
    /// Print the envelope as JSON.
    #[arg(long)]
    pub json: bool,
}

impl RequestFlags {
    /// The get_metric arguments these flags stand for. A filter or order
    /// that does not parse is an error message for the user.
    pub fn to_args(&self, metrics: &[String]) -> Result<GetMetricArgs, String> {
        let (name, names) = match metrics {
            [one] => (Some(one.clone()), Vec::new()),
            many => (None, many.to_vec()),
        };
        Ok(GetMetricArgs {
            name,
            names,
            group_by: self.group_by.clone(),
            filters: self.filters.iter().map(|f| parse_filter(f)).collect::<Result<_, _>>()?,
            time_grain: self.grain.clone(),
            time_dimension: self.time_dimension.clone(),
            order_by: self.order_by.iter().map(|o| parse_order(o)).collect::<Result<_, _>>()?,
            limit: self.limit,
            via: self.via.clone(),
            where_strings: self.wheres.clone(),
            dialect: self.dialect.clone(),
            dry_run: false,
            query: self.saved.clone(),
            page_size: None,
            page_token: None,
        })
    }

    /// The get_metric call these flags make, as the JSON an agent would
    /// send (with `response_format`).
    pub fn to_call(&self, metrics: &[String], dry_run: bool) -> Result<serde_json::Value, String> {
        let args = GetMetricArgs { dry_run, ..self.to_args(metrics)? };
        let mut call = serde_json::to_value(&args).map_err(|e| e.to_string())?;
        if let Some(map) = call.as_object_mut() {
            map.insert("response_format".into(), self.response_format.clone().into());
        }
        Ok(call)
    }
}

const SYMBOLS: [&str; 7] = [">=", "<=", "!=", "<>", "=", "<", ">"];

/// Parses `entity.column OP value`; OP is a word (`eq`, `in`…) or a symbol.
pub fn parse_filter(text: &str) -> Result<FilterArgs, String> {
    let usage = || {
        format!("cannot read filter `{text}`: write \"entity.column OP value\", e.g. \"order.status eq shipped\" or \"order.amount >= 100\"")
    };
    let trimmed = text.trim();
    let (column, op, rest) = match trimmed.split_once(char::is_whitespace) {
        Some((col, rest)) if !col.contains(['=', '<', '>', '!']) => {
            let rest = rest.trim_start();
            let (op, value) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
            (col.to_string(), op.to_string(), value.trim().to_string())
        }
        _ => {
            let (pos, sym) = SYMBOLS
                .iter()
                .filter_map(|s| trimmed.find(s).map(|p| (p, *s)))
                .min_by_key(|(p, s)| (*p, usize::MAX - s.len()))
                .ok_or_else(usage)?;
            (trimmed[..pos].trim().to_string(), sym.to_string(), trimmed[pos + sym.len()..].trim().to_string())
        }
    };
    if column.is_empty() || op.is_empty() {
        return Err(usage());
    }
    let op = if op == "<>" { "!=".to_string() } else { op };
    let unquote = |s: &str| -> String {
        let s = s.trim();
        for q in ['"', '\''] {
            if s.len() >= 2 && s.starts_with(q) && s.ends_with(q) {
                return s[1..s.len() - 1].to_string();
            }
        }
        s.to_string()
    };
    let value = match op.as_str() {
        "is_null" | "not_null" if rest.is_empty() => None,
        "in" | "not_in" => Some(serde_json::Value::Array(
            rest.split(',').map(|v| serde_json::Value::String(unquote(v))).collect(),
        )),
        _ if rest.is_empty() => return Err(usage()),
        _ => Some(serde_json::Value::String(unquote(&rest))),
    };
    Ok(FilterArgs { column, op, value, metric: None })
}

/// Parses `name [asc|desc]`.
pub fn parse_order(text: &str) -> Result<OrderByArgs, String> {
    let mut parts = text.split_whitespace();
    let column = parts.next().ok_or_else(|| "empty --order-by".to_string())?.to_string();
    let direction = parts.next().map(str::to_string);
    if parts.next().is_some() {
        return Err(format!("cannot read --order-by `{text}`: write \"name [asc|desc]\""));
    }
    Ok(OrderByArgs { column, direction })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_filters_in_both_spellings() {
        let f = parse_filter("order.status eq shipped").unwrap();
        assert_eq!((f.column.as_str(), f.op.as_str()), ("order.status", "eq"));
        assert_eq!(f.value, Some("shipped".into()));
        let f = parse_filter("order.amount>=100").unwrap();
        assert_eq!((f.column.as_str(), f.op.as_str()), ("order.amount", ">="));
        let f = parse_filter("order.status in placed,shipped").unwrap();
        assert_eq!(f.value, Some(serde_json::json!(["placed", "shipped"])));
        let f = parse_filter("order.store_id is_null").unwrap();
        assert_eq!(f.value, None);
        let f = parse_filter("customer.country = 'DE'").unwrap();
        assert_eq!(f.value, Some("DE".into()));
        assert!(parse_filter("order.status").is_err());
    }
}
