//! Response size discipline (charter "Response size discipline"):
//! `response_format` concise (default) or detailed, a token estimate on
//! every payload, and a hard cap well under 25k tokens that cuts the largest
//! list and says so with `truncated: true`.
//!
//! Edits only the envelope's `data` object in place
//! (`Envelope::map_data_object`), so shaping can never produce an envelope
//! that breaks the charter's invariants, and nothing is serialised twice.
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
    serialized_len(v).div_ceil(4)
}

/// The length of `v`'s compact JSON, counted as it is written: no buffer
/// (a shaped answer is serialised again right after, by the transport).
fn serialized_len<T: serde::Serialize + ?Sized>(v: &T) -> usize {
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0 += buf.len();
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    match serde_json::to_writer(&mut count, v) {
        Ok(()) => count.0,
        Err(_) => 0,
    }
}

/// Applies the format and the cap to a tool's answer. An answer cut at all
/// is `partial` (or stays `degraded`) and says in its notes what was cut.
pub fn shape(tool: &str, env: Envelope, format: ResponseFormat) -> Envelope {
    shape_capped(tool, env, format, true)
}

/// `shape`, with the token cap applied only when `token_cap` (off for a
/// person at the CLI; agents always get the cap).
pub fn shape_capped(tool: &str, env: Envelope, format: ResponseFormat, token_cap: bool) -> Envelope {
    let mut cut = false;
    let env = env.map_data_object(|data| {
        if format == ResponseFormat::Concise {
            cut |= concise(tool, data);
        }
        let tokens = if token_cap {
            let (capped, tokens) = cap(data);
            cut |= capped;
            tokens
        } else {
            estimate_tokens(&*data)
        };
        data.insert("token_estimate".into(), tokens.into());
    });
    if cut {
        env.mark_partial()
    } else {
        env
    }
}

/// Trims a detailed answer to its concise form. Returns whether the answer
/// itself was cut (metric rows); fewer search hits or no descriptions is
/// what `concise` means, not a cut answer.
fn concise(tool: &str, data: &mut Map<String, Json>) -> bool {
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
                    return true;
                }
            }
        }
        _ => {}
    }
    false
}

fn note(data: &mut Map<String, Json>, text: &str) {
    match data.get_mut("notes") {
        Some(Json::Array(notes)) => notes.push(text.into()),
        _ => {
            data.insert("notes".into(), Json::Array(vec![text.into()]));
        }
    }
}

/// Parts of an answer that explain it rather than are it, cut first when an
/// answer is over the cap, with how to get each back.
const BULK: [(&str, &str); 4] = [
    ("params", "the SQL parameters"),
    ("joins", "the join list"),
    ("notes", "the notes"),
    ("sql", "the SQL text (call get_metric with dry_run=true and narrower arguments to see it)"),
];

/// Brings the payload under [`MAX_TOKENS`]: first the bulky explanatory
/// parts ([`BULK`]), so the answer itself is kept; then, if still over,
/// halves the largest top-level list. Returns whether anything was cut, and
/// the payload's tokens after.
fn cap(data: &mut Map<String, Json>) -> (bool, usize) {
    // Most answers are far under the cap: counted once, nothing to cut.
    let tokens = estimate_tokens(&*data);
    if tokens <= MAX_TOKENS {
        return (false, tokens);
    }
    let mut cut = false;
    let mut dropped: Vec<&str> = Vec::new();
    for (key, what) in BULK {
        if estimate_tokens(&*data) <= MAX_TOKENS {
            break;
        }
        if data.remove(key).is_some() {
            dropped.push(what);
        }
    }
    if !dropped.is_empty() {
        data.insert("truncated".into(), true.into());
        note(data, &format!("Over {MAX_TOKENS} tokens: cut {} to keep the answer.", dropped.join(", ")));
    }
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
    (cut || !dropped.is_empty(), estimate_tokens(&*data))
}
