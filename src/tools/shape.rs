//! Response size discipline (charter "Response size discipline"):
//! `response_format` concise (default) or detailed, a token estimate on
//! every payload, and a hard cap well under 25k tokens that cuts the largest
//! list and says so with `truncated: true`.
//!
//! Works on the envelope's JSON and re-reads it through `Envelope`'s checked
//! deserializer, so shaping can never produce an envelope that breaks the
//! charter's invariants.
//!
//! Architecture invariant: no tool logic; only trims what tools returned.

use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value as Json};

use crate::envelope::Envelope;

/// How much a tool returns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
/// `concise` (default): the minimum useful payload (top hits, summary fields, at most 100 rows). `detailed`: everything, up to the size cap.
pub enum ResponseFormat {
    #[default]
    Concise,
    Detailed,
}

/// Hard cap on a payload, in estimated tokens (the charter's ceiling is ~25k).
pub const MAX_TOKENS: usize = 20_000;

/// Rows a concise get_metric answer keeps.
pub const CONCISE_ROWS: usize = 100;

/// Hits a concise search answer keeps.
pub const CONCISE_HITS: usize = 5;

/// Tokens of a JSON value, estimated at four characters per token (the usual
/// rule of thumb for English and JSON with BPE tokenizers).
pub fn estimate_tokens<T: serde::Serialize + ?Sized>(v: &T) -> usize {
    serde_json::to_vec(v).map(|s| s.len().div_ceil(4)).unwrap_or(0)
}

/// Applies the format and the cap to a tool's answer.
pub fn shape(tool: &str, env: Envelope, format: ResponseFormat) -> Envelope {
    if env.data().is_none_or(|d| !d.is_object()) {
        return env;
    }
    let Ok(mut wire) = serde_json::to_value(&env) else { return env };
    let Some(data) = wire.get_mut("data").and_then(Json::as_object_mut) else { return env };
    if format == ResponseFormat::Concise {
        concise(tool, data);
    }
    cap(data);
    let tokens = estimate_tokens(&*data);
    data.insert("token_estimate".into(), tokens.into());
    serde_json::from_value(wire).unwrap_or(env)
}

/// Trims a detailed answer to its concise form.
fn concise(tool: &str, data: &mut Map<String, Json>) {
    match tool {
        "find_relevant_tables" | "find_relevant_entities" => {
            if let Some(Json::Array(hits)) = data.get_mut("hits") {
                if hits.len() > CONCISE_HITS {
                    hits.truncate(CONCISE_HITS);
                    data.insert("truncated".into(), true.into());
                }
                if let Some(Json::Array(hits)) = data.get_mut("hits") {
                    for h in hits.iter_mut().filter_map(Json::as_object_mut) {
                        h.remove("matched_terms");
                        h.remove("description");
                    }
                }
                let n = data.get("hits").and_then(Json::as_array).map_or(0, Vec::len);
                data.insert("count".into(), n.into());
            }
        }
        "describe_table" => {
            if let Some(Json::Array(cols)) = data.get_mut("columns") {
                for c in cols.iter_mut().filter_map(Json::as_object_mut) {
                    c.remove("description");
                    if c.get("pii_categories").and_then(Json::as_array).is_some_and(Vec::is_empty) {
                        c.remove("pii_categories");
                    }
                }
            }
        }
        "get_metric" => {
            if let Some(Json::Array(rows)) = data.get_mut("rows") {
                if rows.len() > CONCISE_ROWS {
                    rows.truncate(CONCISE_ROWS);
                    data.insert("truncated".into(), true.into());
                    note(data, &format!("Concise answer: the first {CONCISE_ROWS} rows; pass response_format=detailed for all of them."));
                }
            }
        }
        _ => {}
    }
}

fn note(data: &mut Map<String, Json>, text: &str) {
    match data.get_mut("notes") {
        Some(Json::Array(notes)) => notes.push(text.into()),
        _ => {
            data.insert("notes".into(), Json::Array(vec![text.into()]));
        }
    }
}

/// Halves the largest top-level list until the payload fits [`MAX_TOKENS`].
fn cap(data: &mut Map<String, Json>) {
    let mut cut = false;
    // Bounded: each round halves a list, so at most ~64 rounds per list.
    for _ in 0..256 {
        if estimate_tokens(&*data) <= MAX_TOKENS {
            break;
        }
        let largest = data
            .iter()
            .filter_map(|(k, v)| v.as_array().filter(|a| !a.is_empty()).map(|a| (k.clone(), estimate_tokens(v), a.len())))
            .max_by_key(|(_, t, _)| *t);
        let Some((key, _, len)) = largest else { break };
        if let Some(Json::Array(a)) = data.get_mut(&key) {
            a.truncate(len / 2);
            cut = true;
        }
    }
    if cut {
        data.insert("truncated".into(), true.into());
        note(data, &format!("Cut to stay under {MAX_TOKENS} tokens; narrow the request (filters, limit) for the rest."));
    }
}
