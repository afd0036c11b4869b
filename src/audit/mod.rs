//! The audit log: one record per call that reads data or the model (tool
//! calls, rejected ones included; MCP resource reads, prompts and
//! completions under their method names),
//! appended to `.schemabrain/audit.log` in the project as one JSON line,
//! chained by SHA-256: `hash = sha256(prev_hash ‖ canonical record without
//! hash)`, genesis `prev` = 64 zeros. A head file (`audit.head`, replaced
//! atomically after each append) pins the last record, so deleting records
//! at the end is detected too.
//!
//! Crash safety: a record is one `write` of a whole line to a file opened
//! with O_APPEND, under an exclusive `flock` (several servers may share a
//! project). A process killed mid-write leaves at most a torn last line
//! with no newline: `verify` reports it (the log is not intact), and the
//! next writer cuts it off before appending, because a record the head
//! never pinned was never committed. The head lags the log by at most one
//! record; verify accepts exactly that and the next writer catches it up.
//!
//! Architecture invariant: knows tool names, statuses and hashes of
//! arguments; never stores argument values (they may carry PII filters).

use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::io::AsRawFd;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::Value as Json;
use sha2::{Digest, Sha256};

pub const LOG_PATH: &str = ".schemabrain/audit.log";
pub const HEAD_PATH: &str = ".schemabrain/audit.head";
const GENESIS: &str = "0000000000000000000000000000000000000000000000000000000000000000";

/// One audit record. Field order is the canonical order hashed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    pub seq: u64,
    pub occurred_at: String,
    pub tool: String,
    pub status: String,
    /// The error kind when status is error or refused.
    pub error_kind: Option<String>,
    /// SHA-256 of the arguments' JSON, so identical calls can be grouped
    /// without storing values.
    pub args_sha256: String,
    pub trace_id: String,
    /// A refusal's blocked PII categories (names of categories, no values).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pii_categories: Vec<String>,
    /// The recovery the answer gave: `suggested_tool` and the SHA-256 of
    /// `suggested_args` (values may carry PII filters, so they are hashed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub recovery: Option<RecoveryRecord>,
    /// Who called (issuer and subject; never the credential). Absent in
    /// records written before callers were authenticated.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub principal: Option<PrincipalRecord>,
    pub prev: String,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub hash: String,
}

impl Record {
    /// The record's hash over its fields except `hash`, chained on `prev`.
    pub fn compute_hash(&self) -> String {
        let mut body = self.clone();
        body.hash = String::new();
        // A record is strings, numbers and a JSON value: it always serializes;
        // were it not to, the error text is hashed on write and verify alike.
        let mut h = Sha256::new();
        h.update(self.prev.as_bytes());
        if let Err(e) = serde_json::to_writer(HashWriter(&mut h), &body) {
            h = Sha256::new();
            h.update(self.prev.as_bytes());
            h.update(e.to_string().as_bytes());
        }
        hex(&h.finalize())
    }
}

/// The recovery an error or refusal gave, as the log keeps it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecoveryRecord {
    pub suggested_tool: Option<String>,
    pub suggested_args_sha256: Option<String>,
}

impl RecoveryRecord {
    /// The record of a recovery: its tool, and its arguments hashed.
    pub fn of(tool: Option<&str>, args: Option<&Json>) -> Self {
        RecoveryRecord { suggested_tool: tool.map(|t| t.chars().take(128).collect()), suggested_args_sha256: args.map(json_sha256_hex) }
    }
}

/// The caller of a call, as the log keeps it: who vouched, and for whom.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrincipalRecord {
    pub issuer: String,
    pub subject: String,
}

impl PrincipalRecord {
    pub fn of(issuer: &str, subject: &str) -> Self {
        PrincipalRecord { issuer: issuer.chars().take(256).collect(), subject: subject.chars().take(256).collect() }
    }
}

/// What an answer said beyond its status, for its record.
#[derive(Clone, Debug, Default)]
pub struct Detail {
    pub pii_categories: Vec<String>,
    pub recovery: Option<RecoveryRecord>,
    pub principal: Option<PrincipalRecord>,
}

/// Feeds what is written into a hash: JSON hashed as it is serialised,
/// byte for byte what `to_string` would have given, with no buffer.
struct HashWriter<'h>(&'h mut Sha256);

impl std::io::Write for HashWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn hex(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        // Lowercase, as `{:02x}` writes it; a nibble is always a hex digit.
        out.push(char::from_digit(u32::from(b >> 4), 16).unwrap_or('0'));
        out.push(char::from_digit(u32::from(b & 0x0f), 16).unwrap_or('0'));
    }
    out
}

pub fn sha256_hex(data: &[u8]) -> String {
    hex(&Sha256::digest(data))
}

/// The SHA-256 of a JSON value's compact text (what `to_string` gives).
fn json_sha256_hex(value: &Json) -> String {
    let mut h = Sha256::new();
    match serde_json::to_writer(HashWriter(&mut h), value) {
        Ok(()) => hex(&h.finalize()),
        Err(_) => sha256_hex(value.to_string().as_bytes()),
    }
}

/// The last committed record, as the head file pins it.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Head {
    pub seq: u64,
    pub hash: String,
}

/// An append-only writer for one project's log. Keeps both files open and
/// the chain's tail cached; the tail is re-read only when the log's length
/// is not what this writer left it at (another process appended).
pub struct AuditLog {
    dir: PathBuf,
    state: Mutex<Option<Open>>,
}

struct Open {
    log: File,
    head: File,
    /// Length of the log after this writer's last append.
    len: u64,
    seq: u64,
    prev: String,
}

/// The head is one fixed-size slot rewritten in place with a single
/// `pwrite`, so it is never half-replaced and costs one syscall.
const HEAD_SLOT: usize = 128;

impl AuditLog {
    /// A log under `project_dir/.schemabrain/`. Nothing is touched until the
    /// first append.
    pub fn new(project_dir: &Path) -> Self {
        Self { dir: project_dir.to_path_buf(), state: Mutex::new(None) }
    }

    pub fn log_path(&self) -> PathBuf {
        self.dir.join(LOG_PATH)
    }

    fn open(&self) -> std::io::Result<Open> {
        let path = self.log_path();
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent)?;
        }
        let log = OpenOptions::new().read(true).append(true).create(true).open(&path)?;
        let head = OpenOptions::new().read(true).write(true).create(true).truncate(false).open(self.dir.join(HEAD_PATH))?;
        Ok(Open { log, head, len: u64::MAX, seq: 0, prev: String::new() })
    }

    /// Appends one record for a call.
    pub fn append(&self, tool: &str, status: &str, error_kind: Option<&str>, args: &Json, trace_id: &str) -> std::io::Result<Record> {
        self.append_detailed(tool, status, error_kind, args, trace_id, Detail::default())
    }

    /// `append`, with a refusal's categories and the recovery given.
    pub fn append_detailed(&self, tool: &str, status: &str, error_kind: Option<&str>, args: &Json, trace_id: &str, detail: Detail) -> std::io::Result<Record> {
        let mut state = self.state.lock().unwrap_or_else(|p| p.into_inner());
        if state.is_none() {
            *state = Some(self.open()?);
        }
        let Some(open) = state.as_mut() else { return Err(std::io::Error::other("the audit log did not open")) };
        let _lock = Flock::exclusive(&open.log)?;
        let len = open.log.metadata()?.len();
        if len != open.len {
            let (seq, prev) = tail_state(&mut open.log, &self.dir)?;
            open.seq = seq;
            open.prev = prev;
            open.len = open.log.metadata()?.len();
        }
        let mut rec = Record {
            seq: open.seq,
            occurred_at: chrono::Utc::now().to_rfc3339_opts(chrono::SecondsFormat::Micros, true),
            tool: tool.chars().take(128).collect(),
            status: status.to_string(),
            error_kind: error_kind.map(str::to_string),
            args_sha256: json_sha256_hex(args),
            trace_id: trace_id.chars().take(128).collect(),
            pii_categories: detail.pii_categories.into_iter().take(32).map(|c| c.chars().take(64).collect()).collect(),
            recovery: detail.recovery,
            principal: detail.principal,
            prev: open.prev.clone(),
            hash: String::new(),
        };
        rec.hash = rec.compute_hash();
        let mut line = serde_json::to_string(&rec).map_err(std::io::Error::other)?;
        line.push('\n');
        // One write of the whole line: O_APPEND makes it land at the end.
        if let Err(e) = open.log.write_all(line.as_bytes()) {
            open.len = u64::MAX;
            return Err(e);
        }
        open.len += line.len() as u64;
        write_head(&open.head, &Head { seq: rec.seq, hash: rec.hash.clone() })?;
        open.seq = rec.seq + 1;
        open.prev = rec.hash.clone();
        Ok(rec)
    }
}

/// An exclusive advisory lock held until dropped.
struct Flock(i32);

impl Flock {
    fn exclusive(f: &File) -> std::io::Result<Flock> {
        let fd = f.as_raw_fd();
        // SAFETY: flock on a descriptor we own for the lock's lifetime.
        let r = unsafe { libc::flock(fd, libc::LOCK_EX) };
        if r != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(Flock(fd))
    }
}

impl Drop for Flock {
    fn drop(&mut self) {
        // SAFETY: unlocks the descriptor locked in `exclusive`.
        unsafe { libc::flock(self.0, libc::LOCK_UN) };
    }
}

fn read_head(dir: &Path) -> Option<Head> {
    let text = std::fs::read_to_string(dir.join(HEAD_PATH)).ok()?;
    serde_json::from_str(&text).ok()
}

fn write_head(file: &File, head: &Head) -> std::io::Result<()> {
    use std::os::unix::fs::FileExt;
    let mut slot = serde_json::to_string(head).map_err(std::io::Error::other)?;
    // Trailing spaces pad the slot; JSON readers skip them.
    while slot.len() < HEAD_SLOT - 1 {
        slot.push(' ');
    }
    slot.push('\n');
    file.write_all_at(slot.as_bytes(), 0)
}

/// Where the next record goes: `(seq, prev)`. Repairs a torn tail that the
/// head never pinned (an uncommitted write) by cutting it off; anything
/// else odd is left in place for `verify` to report, and the chain goes on
/// from the head so the break stays visible.
fn tail_state(file: &mut File, dir: &Path) -> std::io::Result<(u64, String)> {
    let len = file.seek(SeekFrom::End(0))?;
    let head = read_head(dir);
    if len == 0 {
        return Ok(match head {
            Some(h) => (h.seq + 1, h.hash),
            None => (0, GENESIS.to_string()),
        });
    }
    // Records are bounded (< 1 KiB), so the last 4 KiB hold the last whole line.
    let start = len.saturating_sub(4096);
    file.seek(SeekFrom::Start(start))?;
    let mut buf = Vec::new();
    file.read_to_end(&mut buf)?;
    let torn = buf.last() != Some(&b'\n');
    let whole_end = buf.iter().rposition(|b| *b == b'\n').map(|i| i + 1).unwrap_or(0);
    let last_line = buf.get(..whole_end).unwrap_or_default().split(|b| *b == b'\n').rfind(|l| !l.is_empty());
    let last: Option<Record> = last_line.and_then(|l| serde_json::from_slice(l).ok());
    if torn {
        let uncommitted = match (&head, &last) {
            // The torn bytes come after the record the head pins: never committed.
            (Some(h), Some(r)) => r.seq >= h.seq && r.hash == h.hash || r.seq == h.seq + 1 && r.prev == h.hash,
            (None, _) => true,
            (Some(_), None) => false,
        };
        if uncommitted {
            file.set_len(start + whole_end as u64)?;
        } else {
            // Tampering, not a crash: keep the evidence, end the line.
            file.write_all(b"\n")?;
        }
    }
    Ok(match (last, head) {
        (Some(r), Some(h)) if r.seq == h.seq + 1 && r.prev == h.hash => (r.seq + 1, r.hash),
        (Some(r), Some(h)) if r.seq == h.seq && r.hash == h.hash => (r.seq + 1, r.hash),
        (_, Some(h)) => (h.seq + 1, h.hash),
        (Some(r), None) => (r.seq + 1, r.hash),
        (None, None) => (0, GENESIS.to_string()),
    })
}

/// What `verify` found.
#[derive(Debug, Default, PartialEq)]
pub struct Verification {
    pub records: u64,
    /// Empty when the log is intact.
    pub problems: Vec<String>,
}

impl Verification {
    pub fn intact(&self) -> bool {
        self.problems.is_empty()
    }
}

/// Re-walks the chain of a project's log. Reports every edited, deleted,
/// inserted or reordered record, a torn last line, and a log that ends
/// before (or disagrees with) the head.
pub fn verify(project_dir: &Path) -> std::io::Result<Verification> {
    let path = project_dir.join(LOG_PATH);
    let mut v = Verification::default();
    let bytes = match std::fs::read(&path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            if let Some(h) = read_head(project_dir) {
                v.problems.push(format!("the log is missing but its head pins record {}", h.seq));
            }
            return Ok(v);
        }
        Err(e) => return Err(e),
    };
    if !bytes.is_empty() && bytes.last() != Some(&b'\n') {
        v.problems.push("the last record is torn (a write was interrupted); the next append repairs it".into());
    }
    let mut prev = GENESIS.to_string();
    let mut expected_seq = 0u64;
    let mut last: Option<Record> = None;
    for (i, line) in bytes.split(|b| *b == b'\n').enumerate() {
        if line.is_empty() {
            continue;
        }
        let lineno = i + 1;
        let rec: Record = match serde_json::from_slice(line) {
            Ok(r) => r,
            Err(e) => {
                if bytes.last() == Some(&b'\n') || i + 1 < bytes.split(|b| *b == b'\n').count() {
                    v.problems.push(format!("line {lineno}: not a record ({e})"));
                }
                continue;
            }
        };
        v.records += 1;
        if rec.seq != expected_seq {
            v.problems.push(format!("line {lineno}: record {} where {expected_seq} was expected (deleted, inserted or reordered)", rec.seq));
        }
        if rec.prev != prev {
            v.problems.push(format!("line {lineno}: record {} does not chain on the record before it", rec.seq));
        }
        if rec.compute_hash() != rec.hash {
            v.problems.push(format!("line {lineno}: record {} was edited (hash mismatch)", rec.seq));
        }
        prev = rec.hash.clone();
        expected_seq = rec.seq + 1;
        last = Some(rec);
    }
    match (read_head(project_dir), &last) {
        (Some(h), Some(r)) => {
            let at_head = r.seq == h.seq && r.hash == h.hash;
            // A crash between appending and moving the head leaves it one behind.
            let one_past = r.seq == h.seq + 1 && r.prev == h.hash;
            if !at_head && !one_past {
                v.problems.push(format!(
                    "the log ends at record {} but its head pins record {} {}: records were deleted or rewritten",
                    r.seq, h.seq, h.hash
                ));
            }
        }
        (Some(h), None) => v.problems.push(format!("the log is empty but its head pins record {}", h.seq)),
        // A crash before the very first head write.
        (None, Some(r)) if r.seq == 0 => {}
        (None, Some(_)) => v.problems.push("the head file is missing".into()),
        (None, None) => {}
    }
    Ok(v)
}

/// The record whose hash is `fingerprint` (what an answer's `fingerprint`
/// names), if the project's log holds it.
pub fn find(project_dir: &Path, fingerprint: &str) -> std::io::Result<Option<Record>> {
    let bytes = match std::fs::read(project_dir.join(LOG_PATH)) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e),
    };
    Ok(bytes
        .split(|b| *b == b'\n')
        .filter_map(|l| serde_json::from_slice::<Record>(l).ok())
        .find(|r| r.hash == fingerprint))
}

#[cfg(test)]
mod tests {
    use sha2::{Digest, Sha256};

    /// Hashing while serialising must give the bytes the log has always
    /// hashed (the text, then its digest): old logs still verify.
    #[test]
    fn streamed_hashes_match_hashing_the_text() {
        let args = serde_json::json!({"name": "order", "filters": [{"column": "order.status", "value": "é\"\n"}], "limit": 10});
        assert_eq!(super::json_sha256_hex(&args), super::sha256_hex(args.to_string().as_bytes()));
        let rec = super::Record {
            seq: 7,
            occurred_at: "2026-11-27T02:00:00.000000Z".into(),
            tool: "describe_entity".into(),
            status: "success".into(),
            error_kind: None,
            args_sha256: super::sha256_hex(b"{}"),
            trace_id: "abc".into(),
            pii_categories: Vec::new(),
            recovery: None,
            principal: None,
            prev: "0".repeat(64),
            hash: "ignored".into(),
        };
        // A record without the optional fields serialises as records always did.
        assert!(!serde_json::to_string(&rec).unwrap_or_default().contains("recovery"));
        assert!(!serde_json::to_string(&rec).unwrap_or_default().contains("principal"));
        let mut body = rec.clone();
        body.hash = String::new();
        let mut h = Sha256::new();
        h.update(rec.prev.as_bytes());
        h.update(serde_json::to_string(&body).unwrap_or_default().as_bytes());
        let expected: String = h.finalize().iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(rec.compute_hash(), expected);
    }
}
