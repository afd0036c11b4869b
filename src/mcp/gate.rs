//! The HTTP gate in front of `/mcp`: schemabrain as an OAuth 2.1 resource
//! server (MCP authorization, 2025-11-25).
//!
//! - Every request to `/mcp` must carry `Authorization: Bearer …`, checked
//!   by `auth::Authenticator` on every request (a legacy session is no
//!   credential). Without a valid one: 401 with
//!   `WWW-Authenticate: Bearer resource_metadata="…"` (and
//!   `error="invalid_token"` when one was given), so a client can discover
//!   the authorization server.
//! - Protected Resource Metadata (RFC 9728) is served without a credential
//!   at `/.well-known/oauth-protected-resource` and at the path-suffixed
//!   form RFC 9728 derives from the resource identifier
//!   (`/.well-known/oauth-protected-resource/mcp`).
//! - The principal rides in the request's extensions, which rmcp hands to
//!   the handler with the request parts.
//! - A legacy session (`Mcp-Session-Id`) is bound to the principal that
//!   opened it: another principal presenting its id is answered 404, as if
//!   the session did not exist.
//!
//! A credential is never logged, echoed or forwarded: refusals are logged
//! by reason only, and nothing here talks to a database.
//!
//! Architecture invariant: HTTP plumbing around `auth`; no tool behaviour.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::auth::{Authenticator, Principal, Refusal};

pub const WELL_KNOWN: &str = "/.well-known/oauth-protected-resource";

pub struct Gate {
    auth: Authenticator,
    /// The resource identifier split at its path: `(origin, path)`.
    origin: String,
    path: String,
    /// Legacy session id → the principal (issuer, subject) that opened it.
    sessions: Mutex<HashMap<String, (String, String)>>,
}

impl Gate {
    /// The resource identifier must be an absolute http(s) URL.
    pub fn new(auth: Authenticator) -> Result<Gate, String> {
        let (origin, path) = split_resource(auth.resource())
            .ok_or_else(|| format!("the resource identifier must be an absolute http(s) URL without query or fragment, e.g. https://schemabrain.example.com/mcp; got {:?}", auth.resource()))?;
        Ok(Gate { auth, origin, path, sessions: Mutex::new(HashMap::new()) })
    }

    pub fn resource(&self) -> &str {
        self.auth.resource()
    }

    /// The host (with port) clients reach this server by, for the Host check.
    pub fn authority(&self) -> &str {
        self.origin.split_once("://").map_or("", |(_, a)| a)
    }

    /// Where the Protected Resource Metadata is (RFC 9728 §3.1: the
    /// well-known path inserted before the resource's path).
    pub fn metadata_url(&self) -> String {
        format!("{}{WELL_KNOWN}{}", self.origin, self.path)
    }

    /// The metadata paths served: the plain one, and the path-suffixed one.
    pub fn metadata_paths(&self) -> Vec<String> {
        let mut paths = vec![WELL_KNOWN.to_string()];
        if !self.path.is_empty() && self.path != "/" {
            paths.push(format!("{WELL_KNOWN}{}", self.path));
        }
        paths
    }

    /// The Protected Resource Metadata document.
    pub fn metadata(&self) -> serde_json::Value {
        let mut doc = serde_json::json!({
            "resource": self.resource(),
            "bearer_methods_supported": ["header"],
            "resource_name": "schemabrain",
        });
        if let (Some(issuer), Some(map)) = (self.auth.issuer(), doc.as_object_mut()) {
            map.insert("authorization_servers".into(), serde_json::json!([issuer]));
        }
        doc
    }

    fn unauthorized(&self, refusal: Option<&Refusal>) -> Response {
        let mut challenge = format!("Bearer resource_metadata=\"{}\"", self.metadata_url());
        let body = match refusal {
            None => serde_json::json!({"error": "unauthorized", "error_description": "this server needs a bearer token or API key (Authorization: Bearer …)"}),
            Some(r) => {
                // RFC 6750 §3: quoted-string without `"` or `\`.
                let text: String = r.0.chars().filter(|c| *c != '"' && *c != '\\' && (' '..='~').contains(c)).collect();
                challenge.push_str(&format!(", error=\"invalid_token\", error_description=\"{text}\""));
                serde_json::json!({"error": "invalid_token", "error_description": r.0})
            }
        };
        let mut response = json_response(StatusCode::UNAUTHORIZED, &body);
        if let Ok(v) = HeaderValue::from_str(&challenge) {
            response.headers_mut().insert(header::WWW_AUTHENTICATE, v);
        }
        response
    }
}

/// A JSON body with its content type (axum's `Json` needs a feature we do not build).
fn json_response(status: StatusCode, body: &serde_json::Value) -> Response {
    let mut response = (status, body.to_string()).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// `(scheme://authority, /path)` of an absolute http(s) URL.
fn split_resource(url: &str) -> Option<(String, String)> {
    let (scheme, rest) = url.split_once("://")?;
    if !matches!(scheme, "http" | "https") || rest.contains(['?', '#']) {
        return None;
    }
    let (authority, path) = match rest.find('/') {
        Some(i) => (rest.get(..i)?, rest.get(i..)?),
        None => (rest, ""),
    };
    if authority.is_empty() || authority.contains('@') {
        return None;
    }
    let path = path.trim_end_matches('/');
    Some((format!("{scheme}://{authority}"), path.to_string()))
}

/// The credential of `Authorization: Bearer X` (scheme case-insensitive).
fn bearer(req: &Request) -> Option<&str> {
    let value = req.headers().get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, credential) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| credential.trim()).filter(|c| !c.is_empty())
}

/// A refusal sent once the refused request's body is read (up to 64 KiB):
/// a body left unread makes the server close the connection after the
/// response, and a client that sends its next request on that kept-alive
/// connection meets "server disconnected without sending a response". A
/// larger body is not read; the refusal then says `Connection: close`.
async fn refuse_after_body(req: Request, mut response: Response) -> Response {
    const BODY_LIMIT: usize = 64 * 1024;
    if axum::body::to_bytes(req.into_body(), BODY_LIMIT).await.is_err() {
        response.headers_mut().insert(header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// The middleware on `/mcp`.
pub async fn require_bearer(State(gate): State<Arc<Gate>>, mut req: Request, next: Next) -> Response {
    let principal = match bearer(&req) {
        None => {
            tracing::info!("MCP request without a credential: 401");
            return refuse_after_body(req, gate.unauthorized(None)).await;
        }
        Some(credential) => match gate.auth.authenticate(credential, crate::auth::now()) {
            Ok(p) => p,
            Err(refusal) => {
                // The reason only: the credential never reaches a log.
                tracing::info!("MCP request refused: {refusal}");
                return refuse_after_body(req, gate.unauthorized(Some(&refusal))).await;
            }
        },
    };
    let who = (principal.issuer.clone(), principal.subject.clone());
    let session = req.headers().get("mcp-session-id").and_then(|v| v.to_str().ok()).map(str::to_string);
    if let Some(id) = &session {
        let owner = gate.sessions.lock().unwrap_or_else(|p| p.into_inner()).get(id).cloned();
        if owner.is_some_and(|o| o != who) {
            tracing::info!("a session was presented by a principal other than the one that opened it: 404");
            return refuse_after_body(req, (StatusCode::NOT_FOUND, "session not found").into_response()).await;
        }
    }
    let closing = req.method() == Method::DELETE;
    req.extensions_mut().insert(principal);
    let response = next.run(req).await;
    let mut sessions = gate.sessions.lock().unwrap_or_else(|p| p.into_inner());
    match (&session, response.headers().get("mcp-session-id").and_then(|v| v.to_str().ok())) {
        // A session opened by this request belongs to its principal.
        (None, Some(opened)) => {
            sessions.insert(opened.to_string(), who);
        }
        (Some(id), _) if closing && response.status().is_success() => {
            sessions.remove(id);
        }
        _ => {}
    }
    response
}

/// The metadata document's handler.
pub async fn metadata(State(gate): State<Arc<Gate>>) -> Response {
    let mut response = json_response(StatusCode::OK, &gate.metadata());
    // Metadata is public and cacheable; browsers' MCP clients read it cross-origin.
    response.headers_mut().insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
    response
}

/// The principal a request was authenticated as (set by `require_bearer`).
pub fn principal_of(parts: &axum::http::request::Parts) -> Option<Principal> {
    parts.extensions.get::<Principal>().cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_url_inserts_the_well_known_path_before_the_resource_path() {
        assert_eq!(split_resource("https://sb.example.com/mcp"), Some(("https://sb.example.com".into(), "/mcp".into())));
        assert_eq!(split_resource("http://127.0.0.1:8765"), Some(("http://127.0.0.1:8765".into(), "".into())));
        for bad in ["ftp://x/mcp", "sb.example.com/mcp", "https://u@x/mcp", "https:///mcp", "https://x/mcp?a=1"] {
            assert_eq!(split_resource(bad), None, "{bad}");
        }
    }
}
