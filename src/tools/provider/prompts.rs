//! The provider toolset's MCP prompts (seed 003): messages an agent asks
//! the user with when it cannot proceed alone, filled from the model and
//! the catalog, and the completion of their arguments (and of the resource
//! templates' `schema`/`table`).
//!
//! Prompts: ask_for_disambiguation (question, options),
//! ask_for_time_window (metric), ask_for_sensitive_columns_ack (table),
//! ask_for_missing_keys_or_joins (tables). Arguments are strings on the
//! wire, as MCP has them.
//!
//! Architecture invariant: no rmcp; the MCP adapter wraps these.

use std::collections::BTreeMap;

use crate::model::TableRef;
use crate::project::Project;

/// One prompt argument.
pub struct Arg {
    pub name: &'static str,
    pub description: &'static str,
    pub required: bool,
}

pub struct PromptSpec {
    pub name: &'static str,
    pub description: &'static str,
    pub args: &'static [Arg],
}

pub const PROMPTS: [PromptSpec; 4] = [
    PromptSpec {
        name: "ask_for_disambiguation",
        description: "Ask the user which of several readings of a request they mean, before answering any of them.",
        args: &[
            Arg { name: "question", description: "The user's request, as they wrote it.", required: true },
            Arg { name: "options", description: "The readings to choose from, separated by `|` (metrics, tables or columns).", required: false },
        ],
    },
    PromptSpec {
        name: "ask_for_time_window",
        description: "Ask the user for the period (and grain) a number should cover, naming what the metric can be bucketed by.",
        args: &[Arg { name: "metric", description: "The metric's name (list_metrics).", required: false }],
    },
    PromptSpec {
        name: "ask_for_sensitive_columns_ack",
        description: "Tell the user which columns of a table hold personal data and how they will be treated, and ask them to acknowledge it.",
        args: &[Arg { name: "table", description: "The table as `schema.table`.", required: true }],
    },
    PromptSpec {
        name: "ask_for_missing_keys_or_joins",
        description: "Ask the user how tables with no known join connect (which key matches which), naming the pairs that have no path.",
        args: &[Arg { name: "tables", description: "Two or more tables as `schema.table`, separated by commas.", required: true }],
    },
];

/// Why a prompt cannot be made.
#[derive(Debug, PartialEq, Eq)]
pub struct PromptError(pub String);

/// The prompt's description and its one user message.
pub fn get(project: &Project, name: &str, args: &BTreeMap<String, String>) -> Result<(String, String), PromptError> {
    let Some(spec) = PROMPTS.iter().find(|p| p.name == name) else {
        let names: Vec<&str> = PROMPTS.iter().map(|p| p.name).collect();
        return Err(PromptError(format!("no prompt `{}`; prompts: {}", crate::model::echo(name), names.join(", "))));
    };
    for a in spec.args.iter().filter(|a| a.required) {
        if args.get(a.name).is_none_or(|v| v.trim().is_empty()) {
            return Err(PromptError(format!("prompt {name} needs the argument `{}`: {}", a.name, a.description)));
        }
    }
    let arg = |k: &str| args.get(k).map(|v| crate::model::echo(v.trim())).unwrap_or_default();
    let text = match name {
        "ask_for_disambiguation" => disambiguation(&arg("question"), &arg("options")),
        "ask_for_time_window" => time_window(project, &arg("metric"))?,
        "ask_for_sensitive_columns_ack" => sensitive_columns(project, &arg("table"))?,
        _ => missing_joins(project, &arg("tables"))?,
    };
    Ok((spec.description.to_string(), text))
}

fn disambiguation(question: &str, options: &str) -> String {
    let options: Vec<&str> = options.split('|').map(str::trim).filter(|o| !o.is_empty()).collect();
    let listed = if options.is_empty() {
        "Name the two or three readings you see and ask the user to pick one.".to_string()
    } else {
        let lines: Vec<String> = options.iter().enumerate().map(|(i, o)| format!("{}. {o}", i + 1)).collect();
        format!("Ask the user to pick one of:\n{}", lines.join("\n"))
    };
    format!("The request \"{question}\" can be read more than one way, and the answers differ. Do not answer yet. {listed}\nThen answer only the reading the user chose.")
}

fn time_window(project: &Project, metric: &str) -> Result<String, PromptError> {
    if metric.is_empty() {
        return Ok("Ask the user which period the number should cover (a start and an end date) and, for a series, the grain (day, week, month, quarter or year). Do not assume the whole history.".into());
    }
    let Some(m) = project.model.metric(metric) else {
        return Err(PromptError(format!("no metric `{metric}`; list_metrics names them")));
    };
    let Some(time) = &m.time_dimension else {
        return Ok(format!("The metric {metric} has no time dimension: it cannot be limited to a period. Tell the user it covers all the data, and ask whether that answers their question."));
    };
    let grains: Vec<&str> = m.time_grains.iter().map(|g| g.as_str()).collect();
    Ok(format!(
        "Ask the user which period {metric} should cover: a start and an end date on {}.{}. For a series, ask for the grain: one of {}. Do not assume the whole history.",
        time.entity,
        time.column,
        grains.join(", ")
    ))
}

fn sensitive_columns(project: &Project, table: &str) -> Result<String, PromptError> {
    let info = crate::tools::semantic::physical::table_arg(project, table).map_err(|e| PromptError(e.message().to_string()))?;
    let policy = &project.model.pii_policy;
    let tref = TableRef { schema: info.schema.clone(), table: info.name.clone() };
    let mut blocked = Vec::new();
    let mut counted = Vec::new();
    let mut masked = Vec::new();
    for l in crate::pii::decide_listing(policy, &tref, info.columns.iter().map(|c| c.name.as_str())) {
        let d = &l.decision;
        let line = format!("- {} ({})", l.shown, d.shown_categories().join(", "));
        if let Some(m) = d.mask {
            let metric = if d.redacted() { "refused by get_metric" } else { "grouped by get_metric only with small groups withheld" };
            masked.push(format!("- {} ({}; shown as {} in free SQL, {metric})", l.shown, d.shown_categories().join(", "), m.as_str()));
        } else if d.redacted() {
            blocked.push(line);
        } else if d.guarded() {
            counted.push(line);
        }
    }
    if blocked.is_empty() && counted.is_empty() && masked.is_empty() {
        return Ok(format!("No column of {table} holds personal data under the policy; no acknowledgement is needed."));
    }
    let mut text = format!("Before using {table}, tell the user it holds personal data and ask them to acknowledge how it is treated:\n");
    if !blocked.is_empty() {
        text.push_str(&format!("Never read, in any form (blocked by the PII policy):\n{}\n", blocked.join("\n")));
    }
    if !counted.is_empty() {
        let k = policy.min_group_size();
        text.push_str(&format!(
            "Never listed; free SQL only counts them; get_metric groups and filters on them with every group of fewer than {k} people withheld:\n{}\n",
            counted.join("\n")
        ));
    }
    if !masked.is_empty() {
        text.push_str(&format!("Masked by the policy (preview_masked shows how):\n{}\n", masked.join("\n")));
    }
    text.push_str("Continue only once the user has acknowledged it; a policy change is for the data owner, not the agent.");
    Ok(text)
}

fn missing_joins(project: &Project, tables: &str) -> Result<String, PromptError> {
    let list: Vec<String> = tables.split(',').map(|t| t.trim().to_string()).filter(|t| !t.is_empty()).collect();
    if list.len() < 2 {
        return Err(PromptError("prompt ask_for_missing_keys_or_joins needs two or more tables, separated by commas".into()));
    }
    let args = crate::tools::semantic::physical::SuggestJoinsArgs { tables: list.clone(), max_hops: 6 };
    let env = crate::tools::semantic::physical::suggest_joins(project, &args);
    if let Some(e) = env.tool_error() {
        return Err(PromptError(e.message().to_string()));
    }
    let pairs: Vec<String> = env
        .data()
        .and_then(|d| d.get("unreachable_pairs"))
        .and_then(|p| p.as_array())
        .map(|a| a.iter().map(|p| p.to_string()).collect())
        .unwrap_or_default();
    if pairs.is_empty() {
        return Ok(format!("Every pair of {} is connected by known foreign keys (suggest_joins shows the paths); no question for the user.", list.join(", ")));
    }
    Ok(format!(
        "No known join connects these pairs: {}. Ask the user which columns match between them (for example `orders.customer_ref = customers.code`), and whether each match is one-to-one or one-to-many. Do not guess a join from similar names.",
        pairs.join("; ")
    ))
}

/// Values completing `argument` (prefix `value`), at most 100.
pub fn complete(project: &Project, argument: &str, value: &str) -> Vec<String> {
    let prefix = value.to_lowercase();
    let mut out: Vec<String> = match argument {
        "metric" => project.model.metrics.keys().cloned().collect(),
        "table" | "tables" => project.catalog.as_ref().map(|c| c.tables.keys().cloned().collect()).unwrap_or_default(),
        "schema" => {
            let mut s: Vec<String> = project.catalog.as_ref().map(|c| c.tables.values().map(|t| t.schema.clone()).collect()).unwrap_or_default();
            s.dedup();
            s
        }
        "catalog" => vec![super::resources::CATALOG.to_string()],
        _ => Vec::new(),
    };
    // For `tables`, complete the last item of the comma list.
    // What the caller typed before the last item (spaces included) is kept.
    let (head, last) = match (argument, value.rfind(',')) {
        ("tables", Some(pos)) => {
            let rest = value.get(pos + 1..).unwrap_or("");
            let start = pos + 1 + (rest.len() - rest.trim_start().len());
            (value.get(..start).unwrap_or("").to_string(), rest.trim().to_lowercase())
        }
        _ => (String::new(), prefix.clone()),
    };
    out.retain(|v| v.to_lowercase().starts_with(&last) || (argument == "table" || argument == "tables") && v.split('.').nth(1).is_some_and(|t| t.starts_with(&last)));
    out.sort();
    out.dedup();
    out.truncate(100);
    out.into_iter().map(|v| format!("{head}{v}")).collect()
}
