//! Page tokens (seed 003 "Paging"): opaque, server-made, bound to one
//! statement and one client session, valid for a bounded time. A token is
//! the page's position and binding, authenticated with HMAC-SHA256 under a
//! key drawn at random when the server starts: a client cannot make one,
//! alter one, use another client's, or use one after its lifetime or a
//! restart. Each failure is its own clear error.
//!
//! Architecture invariant: pure; no engine, no envelope.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use hmac::{Hmac, Mac};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

type HmacSha256 = Hmac<Sha256>;

/// How long a token stays valid.
pub const TOKEN_LIFETIME: Duration = Duration::from_secs(15 * 60);

/// What a token carries.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
struct Claims {
    /// Version of the format.
    v: u8,
    /// The statement it pages (a hash of dialect and SQL text).
    q: String,
    /// The client session it was issued to.
    c: String,
    /// Rows already delivered.
    o: u64,
    /// Expiry, seconds since the epoch.
    e: u64,
}

/// Why a token was not accepted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TokenError {
    /// Not made by this server (altered, invented, or from before a restart).
    Forged,
    Expired,
    /// Made for another statement.
    OtherQuery,
    /// Made for another client session.
    OtherClient,
}

impl TokenError {
    pub fn message(&self) -> &'static str {
        match self {
            TokenError::Forged => "page_token was not issued by this server (altered, invented, or issued before it restarted); run the query again without page_token",
            TokenError::Expired => "page_token has expired (tokens live 15 minutes); run the query again without page_token",
            TokenError::OtherQuery => "page_token belongs to another statement; pass it with the exact sql and dialect it came with, or drop it to start over",
            TokenError::OtherClient => "page_token was issued to another client session; run the query again without page_token",
        }
    }
}

/// The server's token key.
pub struct Pager {
    key: [u8; 32],
}

impl Default for Pager {
    fn default() -> Self {
        Self::new()
    }
}

impl Pager {
    /// A pager with a fresh random key.
    pub fn new() -> Pager {
        let mut key = [0u8; 32];
        let (a, b) = key.split_at_mut(16);
        a.copy_from_slice(uuid::Uuid::new_v4().as_bytes());
        b.copy_from_slice(uuid::Uuid::new_v4().as_bytes());
        Pager { key }
    }

    /// The binding of a statement: dialect and text, hashed.
    pub fn statement_id(dialect: &str, sql: &str) -> String {
        let mut h = Sha256::new();
        h.update(dialect.as_bytes());
        h.update([0]);
        h.update(sql.as_bytes());
        hex(h.finalize().get(..16).unwrap_or_default())
    }

    fn mac(&self, payload: &[u8]) -> Vec<u8> {
        // `new_from_slice` accepts keys of any length for HMAC.
        match HmacSha256::new_from_slice(&self.key) {
            Ok(mut m) => {
                m.update(payload);
                m.finalize().into_bytes().to_vec()
            }
            Err(_) => Vec::new(),
        }
    }

    /// The salt of the `hash` mask: a secret of this server, drawn with the
    /// token key (so hashes are stable while the server runs, and no client
    /// can hash a guess to compare).
    pub fn mask_salt(&self) -> String {
        hex(self.mac(b"schemabrain mask salt").get(..16).unwrap_or_default())
    }

    /// A token for the page after `offset` rows of `statement`, for `client`.
    pub fn issue(&self, statement: &str, client: &str, offset: u64) -> String {
        self.issue_at(statement, client, offset, SystemTime::now())
    }

    fn issue_at(&self, statement: &str, client: &str, offset: u64, now: SystemTime) -> String {
        let e = now.duration_since(UNIX_EPOCH).unwrap_or_default().saturating_add(TOKEN_LIFETIME).as_secs();
        let claims = Claims { v: 1, q: statement.to_string(), c: client.to_string(), o: offset, e };
        let payload = serde_json::to_vec(&claims).unwrap_or_default();
        format!("{}.{}", hex(&payload), hex(&self.mac(&payload)))
    }

    /// The offset a token resumes at, when it is this server's, unexpired,
    /// for this statement and this client.
    pub fn open(&self, token: &str, statement: &str, client: &str) -> Result<u64, TokenError> {
        self.open_at(token, statement, client, SystemTime::now())
    }

    fn open_at(&self, token: &str, statement: &str, client: &str, now: SystemTime) -> Result<u64, TokenError> {
        let (payload, mac) = token.split_once('.').ok_or(TokenError::Forged)?;
        let payload = unhex(payload).ok_or(TokenError::Forged)?;
        let mac = unhex(mac).ok_or(TokenError::Forged)?;
        let mut m = HmacSha256::new_from_slice(&self.key).map_err(|_| TokenError::Forged)?;
        m.update(&payload);
        // Constant-time comparison.
        m.verify_slice(&mac).map_err(|_| TokenError::Forged)?;
        let claims: Claims = serde_json::from_slice(&payload).map_err(|_| TokenError::Forged)?;
        if claims.v != 1 {
            return Err(TokenError::Forged);
        }
        if claims.e < now.duration_since(UNIX_EPOCH).unwrap_or_default().as_secs() {
            return Err(TokenError::Expired);
        }
        if claims.c != client {
            return Err(TokenError::OtherClient);
        }
        if claims.q != statement {
            return Err(TokenError::OtherQuery);
        }
        Ok(claims.o)
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(s: &str) -> Option<Vec<u8>> {
    // Tokens are short; a long one is forged by definition.
    if !s.len().is_multiple_of(2) || s.len() > 4096 {
        return None;
    }
    (0..s.len()).step_by(2).map(|i| s.get(i..i + 2).and_then(|p| u8::from_str_radix(p, 16).ok())).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_opens_only_for_its_statement_client_and_lifetime() {
        let p = Pager::new();
        let q = Pager::statement_id("duckdb", "SELECT 1");
        let t = p.issue(&q, "client-a", 100);
        assert_eq!(p.open(&t, &q, "client-a"), Ok(100));
        assert_eq!(p.open(&t, &q, "client-b"), Err(TokenError::OtherClient));
        assert_eq!(p.open(&t, &Pager::statement_id("duckdb", "SELECT 2"), "client-a"), Err(TokenError::OtherQuery));
        assert_eq!(p.open(&t, &Pager::statement_id("postgres", "SELECT 1"), "client-a"), Err(TokenError::OtherQuery));
        let later = SystemTime::now() + TOKEN_LIFETIME + Duration::from_secs(5);
        assert_eq!(p.open_at(&t, &q, "client-a", later), Err(TokenError::Expired));
        // Another server (or this one after a restart) does not know it.
        assert_eq!(Pager::new().open(&t, &q, "client-a"), Err(TokenError::Forged));
    }

    #[test]
    fn altered_and_invented_tokens_are_forged() {
        let p = Pager::new();
        let q = Pager::statement_id("duckdb", "SELECT 1");
        let t = p.issue(&q, "c", 50);
        let (payload, mac) = t.split_once('.').unwrap();
        // The offset changed in the payload, the MAC kept.
        let raw = String::from_utf8(unhex(payload).unwrap()).unwrap().replace("\"o\":50", "\"o\":0");
        let altered = format!("{}.{mac}", hex(raw.as_bytes()));
        for bad in [altered.as_str(), "", ".", "zz.zz", "abc", &format!("{payload}.00"), &format!("{payload}.{}", "ff".repeat(4000))] {
            assert_eq!(p.open(bad, &q, "c"), Err(TokenError::Forged), "{bad}");
        }
    }
}
