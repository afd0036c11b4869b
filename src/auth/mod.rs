//! Who is calling: a bearer credential from an HTTP request becomes a
//! [`Principal`] (issuer, subject, roles) or a refusal that says why.
//!
//! Two kinds of credential: API keys (a file of SHA-256 hashes, each naming
//! a principal and its roles: [`keys`]) for simple deployments, and OAuth 2.1
//! access tokens (signed JWTs checked against the issuer's JWKS: [`jwt`]),
//! as the MCP authorization specification (2025-11-25) asks of a resource
//! server. The credential's shape picks the check: a JWT has three
//! dot-separated parts, an API key starts with `sbk_`.
//!
//! A credential never leaves this module: a refusal names the reason
//! (expired, wrong audience, unknown key, ...) and never quotes the
//! credential or its claims, so it is safe to log and to send back.
//!
//! Architecture invariant: no HTTP, no rmcp, no tools, no printing; reads
//! its files with the model's strict YAML reader and nothing else of ours.

pub mod jwt;
pub mod keys;
pub mod policy;
pub mod row_filter;

use std::fmt;

/// The caller a request was authenticated as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Principal {
    /// Who vouched for the subject: the token's `iss`, [`keys::API_KEY_ISSUER`]
    /// for an API key, [`LOCAL_ISSUER`] for the local user of stdio.
    pub issuer: String,
    /// The token's `sub`, or the principal an API key names.
    pub subject: String,
    /// Roles, in the order given (access policies select on them).
    pub roles: Vec<String>,
}

/// The issuer of the local user (stdio, CLI): the operating system vouches.
pub const LOCAL_ISSUER: &str = "local";

impl Principal {
    /// The user running the process (stdio has no credential: whoever
    /// started the server is the caller).
    pub fn local() -> Principal {
        let subject = std::env::var("USER").or_else(|_| std::env::var("LOGNAME")).unwrap_or_else(|_| "unknown".to_string());
        Principal { issuer: LOCAL_ISSUER.to_string(), subject, roles: Vec::new() }
    }
}

impl fmt::Display for Principal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {}", self.issuer, self.subject)
    }
}

/// Why a credential was refused. The text never contains the credential.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal(pub String);

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// The credential checks a server runs, for one resource identifier.
pub struct Authenticator {
    /// This server's resource identifier (RFC 8707), e.g.
    /// `https://schemabrain.example.com/mcp`: the audience tokens must name.
    resource: String,
    keys: Option<keys::ApiKeys>,
    jwt: Option<jwt::JwtValidator>,
}

impl Authenticator {
    /// At least one of API keys and a JWT validator is needed: a server
    /// with neither would accept nobody, which is a configuration mistake.
    pub fn new(resource: String, keys: Option<keys::ApiKeys>, jwt: Option<jwt::JwtValidator>) -> Result<Authenticator, String> {
        if keys.is_none() && jwt.is_none() {
            return Err("authentication needs API keys (--api-keys FILE) or an OAuth issuer (--oauth-issuer URL [--oauth-jwks FILE|URL])".to_string());
        }
        Ok(Authenticator { resource, keys, jwt })
    }

    pub fn resource(&self) -> &str {
        &self.resource
    }

    /// The authorization server tokens come from, when OAuth is on.
    pub fn issuer(&self) -> Option<&str> {
        self.jwt.as_ref().map(|j| j.issuer())
    }

    /// Checks one bearer credential at `now` (Unix seconds).
    pub fn authenticate(&self, credential: &str, now: u64) -> Result<Principal, Refusal> {
        if credential.starts_with(keys::KEY_PREFIX) {
            return match &self.keys {
                Some(k) => k.lookup(credential).ok_or_else(|| Refusal("unknown API key".to_string())),
                None => Err(Refusal("API keys are not accepted by this server".to_string())),
            };
        }
        if credential.split('.').count() == 3 {
            return match &self.jwt {
                Some(j) => j.validate(credential, now),
                None => Err(Refusal("access tokens are not accepted by this server (it takes API keys)".to_string())),
            };
        }
        Err(Refusal("the credential is neither an API key nor a JWT access token".to_string()))
    }
}

/// Seconds since the Unix epoch (0 if the clock is before it).
pub fn now() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}
