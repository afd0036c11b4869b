//! API keys: a YAML file of SHA-256 hashes, each naming a principal and its
//! roles. The server never holds a key in clear; `schemabrain auth new-key`
//! prints a fresh key once, with the entry to add.
//!
//! ```yaml
//! version: 1
//! keys:
//!   - principal: alice
//!     roles: [analyst]
//!     sha256: 3f0a…   # sha256 of the key's text, 64 hex digits
//! ```
//!
//! A loaded file is read again when it changes (its modification time or
//! size), checked on every lookup: adding a key or deleting one (key
//! rotation, revocation) needs no restart. A changed file that no longer
//! loads keeps the keys read last, with a warning naming its line and key.
//!
//! Keys are 256 random bits, so a plain SHA-256 is the right hash (a slow
//! password hash protects guessable secrets; these are not guessable).
//! Lookups compare every entry without stopping early, so timing does not
//! say which prefix of a hash matched.
//!
//! Architecture invariant: reads the file strictly (file:line:key errors,
//! like every project file); never logs or returns a key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::RwLock;
use std::time::SystemTime;

use sha2::{Digest, Sha256};

use super::Principal;
use crate::model::yaml::{parse_documents, Reader};
use crate::model::{Diagnostic, Diagnostics};

/// Every API key starts with this, so a credential's kind is plain.
pub const KEY_PREFIX: &str = "sbk_";
/// The issuer of principals authenticated by an API key.
pub const API_KEY_ISSUER: &str = "api_key";

struct Entry {
    sha256: [u8; 32],
    principal: String,
    roles: Vec<String>,
}

pub struct ApiKeys {
    entries: RwLock<Vec<Entry>>,
    /// The file the keys were read from, and its stamp when read (`None`
    /// for keys parsed from text).
    file: Option<(PathBuf, RwLock<Option<Stamp>>)>,
}

/// What says a file changed: its modification time and size.
type Stamp = (SystemTime, u64);

fn stamp(path: &Path) -> Option<Stamp> {
    std::fs::metadata(path).ok().and_then(|m| Some((m.modified().ok()?, m.len())))
}

impl ApiKeys {
    /// Reads the key file; every problem is reported with its line and key.
    pub fn load(path: &Path) -> Result<ApiKeys, Diagnostics> {
        let before = stamp(path);
        let mut keys = ApiKeys::read(path)?;
        keys.file = Some((path.to_path_buf(), RwLock::new(before)));
        Ok(keys)
    }

    fn read(path: &Path) -> Result<ApiKeys, Diagnostics> {
        match std::fs::read_to_string(path) {
            Ok(text) => ApiKeys::parse(path, &text),
            Err(e) => {
                let mut d = Diagnostics::default();
                d.push(Diagnostic::new(path, 0, "", format!("cannot read the API key file: {e}")));
                Err(d)
            }
        }
    }

    pub fn parse(file: &Path, text: &str) -> Result<ApiKeys, Diagnostics> {
        let mut diags = Diagnostics::default();
        let docs = parse_documents(file, text, &mut diags);
        let mut entries = Vec::new();
        {
            let mut r = Reader { file: file.to_path_buf(), diags: &mut diags, key_lines: BTreeMap::new() };
            match docs.as_slice() {
                [doc] => {
                    if let Some(top) = r.mapping(doc, "", &["version", "keys"], &["keys"]) {
                        r.version(&top);
                        if let Some(list) = top.get("keys").and_then(|f| r.list(f, "keys")) {
                            for (path, item) in list {
                                let Some(m) = r.mapping(item.node, &path, &["principal", "roles", "sha256"], &["principal", "sha256"]) else { continue };
                                let principal = m.get("principal").and_then(|f| r.string(f, &m.key_path("principal")));
                                if principal.as_deref().is_some_and(|p| p.trim().is_empty()) {
                                    r.error(m.line, &m.key_path("principal"), "the principal must not be empty");
                                }
                                let mut roles = Vec::new();
                                if let Some(f) = m.get("roles") {
                                    for (rp, role) in r.list(f, &m.key_path("roles")).unwrap_or_default() {
                                        if let Some(name) = r.identifier(role, &rp) {
                                            roles.push(name);
                                        }
                                    }
                                }
                                let hash = m.get("sha256").and_then(|f| {
                                    let text = r.string(f, &m.key_path("sha256"))?;
                                    let parsed = parse_hex32(&text);
                                    if parsed.is_none() {
                                        r.error(f.line, &m.key_path("sha256"), "expected the key's SHA-256 as 64 hexadecimal digits (the key itself never goes in this file)");
                                    }
                                    parsed
                                });
                                if let (Some(principal), Some(sha256)) = (principal, hash) {
                                    if entries.iter().any(|e: &Entry| e.sha256 == sha256) {
                                        r.error(m.line, &m.key_path("sha256"), "this hash is listed twice: one key names one principal");
                                    }
                                    entries.push(Entry { sha256, principal, roles });
                                }
                            }
                        }
                    }
                }
                [] if r.diags.is_empty() => r.error(1, "keys", "the file is empty; it needs a `keys:` list"),
                [] => {}
                [_, second, ..] => r.error(crate::model::yaml::line_of(second), "", "one YAML document is expected"),
            }
        }
        if diags.is_empty() {
            Ok(ApiKeys { entries: RwLock::new(entries), file: None })
        } else {
            Err(diags)
        }
    }

    /// Reads the file again when it changed since it was read.
    fn refresh(&self) {
        let Some((path, read_at)) = &self.file else { return };
        let now = stamp(path);
        if read_at.read().map(|r| *r == now).unwrap_or(false) {
            return;
        }
        if let Ok(mut r) = read_at.write() {
            *r = now;
        }
        match ApiKeys::read(path) {
            Ok(fresh) => {
                let entries = fresh.entries.into_inner().unwrap_or_else(|e| e.into_inner());
                tracing::info!("{}: the API key file changed; {} keys now", path.display(), entries.len());
                if let Ok(mut e) = self.entries.write() {
                    *e = entries;
                }
            }
            Err(d) => tracing::warn!("the API key file changed but does not load; keeping the keys read before:\n{d}"),
        }
    }

    /// The principal a key names, if the key is listed.
    pub fn lookup(&self, key: &str) -> Option<Principal> {
        self.refresh();
        let digest: [u8; 32] = Sha256::digest(key.as_bytes()).into();
        let entries = self.entries.read().unwrap_or_else(|e| e.into_inner());
        let mut found = None;
        for e in entries.iter() {
            // No early exit: every entry is compared in full.
            let diff = e.sha256.iter().zip(digest.iter()).fold(0u8, |acc, (a, b)| acc | (a ^ b));
            if diff == 0 {
                found = Some(e);
            }
        }
        found.map(|e| Principal { issuer: API_KEY_ISSUER.to_string(), subject: e.principal.clone(), roles: e.roles.clone() })
    }

    pub fn len(&self) -> usize {
        self.entries.read().map_or(0, |e| e.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// A fresh key and its SHA-256 (hex): 256 random bits from two v4 UUIDs'
/// worth of the system's random source, hex-encoded after the prefix.
pub fn new_key() -> (String, String) {
    let mut key = String::from(KEY_PREFIX);
    for _ in 0..2 {
        // A v4 UUID carries 122 random bits; the simple form is 32 hex digits.
        key.push_str(&uuid::Uuid::new_v4().simple().to_string());
    }
    let hash = crate::audit::sha256_hex(key.as_bytes());
    (key, hash)
}

fn parse_hex32(text: &str) -> Option<[u8; 32]> {
    let text = text.trim();
    if text.len() != 64 || !text.is_ascii() {
        return None;
    }
    let mut out = [0u8; 32];
    for (i, byte) in out.iter_mut().enumerate() {
        let pair = text.get(2 * i..2 * i + 2)?;
        *byte = u8::from_str_radix(pair, 16).ok()?;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(entries: &str) -> String {
        format!("version: 1\nkeys:\n{entries}")
    }

    #[test]
    fn a_listed_key_names_its_principal_and_an_unlisted_one_nothing() {
        let (key, hash) = new_key();
        assert!(key.starts_with(KEY_PREFIX) && key.len() == KEY_PREFIX.len() + 64);
        let keys = ApiKeys::parse(Path::new("api_keys.yaml"), &file(&format!("  - principal: alice\n    roles: [analyst, finance]\n    sha256: {hash}\n"))).unwrap();
        let p = keys.lookup(&key).unwrap();
        assert_eq!((p.issuer.as_str(), p.subject.as_str()), (API_KEY_ISSUER, "alice"));
        assert_eq!(p.roles, vec!["analyst", "finance"]);
        let (other, _) = new_key();
        assert_ne!(other, key, "keys are random");
        assert!(keys.lookup(&other).is_none());
        // The hash itself is not a key.
        assert!(keys.lookup(&hash).is_none());
    }

    #[test]
    fn bad_files_name_the_line_and_key() {
        let bad = file("  - principal: bob\n    role: [x]\n    sha256: abc\n");
        let d = ApiKeys::parse(Path::new("api_keys.yaml"), &bad).err().unwrap().to_string();
        assert!(d.contains("api_keys.yaml:4") && d.contains("keys[0].role") && d.contains("unknown key"), "{d}");
        assert!(d.contains("api_keys.yaml:5") && d.contains("keys[0].sha256") && d.contains("64 hexadecimal"), "{d}");
        let (_, hash) = new_key();
        let twice = file(&format!("  - {{principal: a, sha256: {hash}}}\n  - {{principal: b, sha256: {hash}}}\n"));
        let d = ApiKeys::parse(Path::new("k.yaml"), &twice).err().unwrap().to_string();
        assert!(d.contains("listed twice"), "{d}");
        let d = ApiKeys::parse(Path::new("k.yaml"), "").err().unwrap().to_string();
        assert!(d.contains("empty"), "{d}");
    }

    #[test]
    fn a_changed_key_file_is_read_again_and_a_broken_one_keeps_the_keys() {
        let dir = std::env::temp_dir().join(format!("sb-keys-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("api_keys.yaml");
        let ((old, old_hash), (new, new_hash)) = (new_key(), new_key());
        std::fs::write(&path, file(&format!("  - {{principal: alice, sha256: {old_hash}}}\n"))).unwrap();
        let keys = ApiKeys::load(&path).unwrap();
        assert!(keys.lookup(&old).is_some() && keys.lookup(&new).is_none());
        // Rotation: the new key added, the old one deleted; no restart.
        std::fs::write(&path, file(&format!("  - {{principal: alice, roles: [finance], sha256: {new_hash}}}\n"))).unwrap();
        let f = std::fs::File::options().write(true).open(&path).unwrap();
        f.set_modified(SystemTime::now() + std::time::Duration::from_secs(5)).unwrap();
        assert_eq!(keys.lookup(&new).map(|p| p.roles), Some(vec!["finance".to_string()]));
        assert!(keys.lookup(&old).is_none(), "the deleted key stops working");
        // A broken edit keeps the keys read before.
        std::fs::write(&path, "version: 1\nkeys:\n  - principal: alice\n    sha256: nothex\n").unwrap();
        assert!(keys.lookup(&new).is_some());
        assert_eq!(keys.len(), 1);
        std::fs::remove_dir_all(&dir).ok();
    }
}
