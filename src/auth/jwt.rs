//! OAuth 2.1 access tokens: signed JWTs checked against the issuer's keys.
//!
//! What a token must be to be served (MCP authorization, 2025-11-25; RFC 9068
//! and RFC 8707):
//! - signed with an asymmetric algorithm (RS*, PS*, ES256, ES384, EdDSA) by
//!   a key of the issuer's JWKS whose type fits that algorithm. `none` and
//!   every HMAC algorithm are refused before any key is looked at, so a
//!   public key can never be used as an HMAC secret; keys the token carries
//!   itself (`jwk`, `jku`, `x5u`, `x5c`) are never used;
//! - `iss` equal to the configured issuer, `aud` (a string or a list)
//!   naming this server's resource identifier: a token meant for another
//!   resource is refused;
//! - `exp` present, `nbf` when present, both JSON numbers, checked with a
//!   small leeway; `sub` a non-empty string.
//!
//! The signature is checked by `jsonwebtoken` (on ring); the claims are
//! checked here, strictly typed: a claim of the wrong type is a refusal,
//! never a claim treated as absent (the flaw of jsonwebtoken 9's own checks,
//! CVE-2026-25537, which are switched off).
//!
//! The JWKS comes from a file, read again when the file changes (an
//! operator's key rotation needs no restart), or from the issuer's
//! `jwks_uri` over HTTPS (plain HTTP only to a loopback host): fetched at
//! startup, again after [`JWKS_MAX_AGE`], and again when a token names a
//! key id the keys lack (the issuer rotated), at most once per
//! [`JWKS_MIN_REFETCH`] so tokens with made-up key ids cause no fetch
//! storm. A JWKS that no longer loads keeps the keys read last, with a
//! warning. The URL may also be found from the issuer's metadata
//! ([`discover_jwks_uri`]: RFC 8414, then OpenID Connect discovery).
//!
//! Architecture invariant: pure checks plus reading the JWKS (file or one
//! blocking GET); no HTTP server types; a refusal's text never contains the
//! token or its claims.

use std::path::{Path, PathBuf};
use std::sync::{Mutex, RwLock};
use std::time::{Duration, Instant, SystemTime};

use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value as Json;

use super::{Principal, Refusal};

/// Seconds of clock skew tolerated on `exp` and `nbf` unless configured.
pub const DEFAULT_LEEWAY_SECS: u64 = 60;

#[derive(Clone, Debug)]
pub struct JwtSettings {
    /// The authorization server's issuer identifier (`iss`).
    pub issuer: String,
    /// This server's resource identifier, which `aud` must name.
    pub audience: String,
    /// Where the issuer's JWKS is.
    pub jwks: JwksSource,
    /// The claim holding the caller's roles (a list of strings, or one
    /// space-separated string).
    pub roles_claim: String,
    pub leeway_secs: u64,
}

/// Where the issuer's public keys are read from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum JwksSource {
    File(PathBuf),
    /// The issuer's `jwks_uri`: https, or http to a loopback host.
    Url(String),
}

impl JwksSource {
    /// An `http://` or `https://` argument is a URL, anything else a file.
    pub fn parse(arg: &str) -> JwksSource {
        if arg.starts_with("https://") || arg.starts_with("http://") {
            JwksSource::Url(arg.to_string())
        } else {
            JwksSource::File(PathBuf::from(arg))
        }
    }
}

impl From<PathBuf> for JwksSource {
    fn from(p: PathBuf) -> JwksSource {
        JwksSource::File(p)
    }
}

impl std::fmt::Display for JwksSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            JwksSource::File(p) => write!(f, "{}", p.display()),
            JwksSource::Url(u) => f.write_str(u),
        }
    }
}

/// A JWKS fetched from a URL is fetched again after this long.
pub const JWKS_MAX_AGE: Duration = Duration::from_secs(15 * 60);
/// A token with a key id the keys lack fetches the JWKS again at most this often.
pub const JWKS_MIN_REFETCH: Duration = Duration::from_secs(30);
/// Time allowed for one fetch of the JWKS or the issuer's metadata.
const FETCH_TIMEOUT: Duration = Duration::from_secs(10);
/// A JWKS or metadata document larger than this is not one.
const FETCH_LIMIT: u64 = 1 << 20;

/// The kind of key an algorithm needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Family {
    Rsa,
    P256,
    P384,
    Ed25519,
}

struct Key {
    kid: Option<String>,
    /// The JWK's `alg`, when it names one: the key is used for that alone.
    alg: Option<String>,
    family: Family,
    decoding: DecodingKey,
}

struct Loaded {
    /// The file's modification time when read (files only).
    modified: Option<SystemTime>,
    /// When the keys were fetched (URLs only).
    fetched: Instant,
    keys: Vec<Key>,
}

pub struct JwtValidator {
    settings: JwtSettings,
    loaded: RwLock<Loaded>,
    /// When the URL was last fetched or tried, held while fetching: one
    /// fetch at a time, and none within `JWKS_MIN_REFETCH` of the last.
    last_fetch: Mutex<Instant>,
    /// How many times the JWKS URL was fetched (startup included).
    fetches: std::sync::atomic::AtomicUsize,
    min_refetch: Duration,
    max_age: Duration,
}

impl JwtValidator {
    /// Loads the JWKS; one without a usable signing key is an error.
    pub fn new(settings: JwtSettings) -> Result<JwtValidator, String> {
        let keys = read_jwks(&settings.jwks)?;
        let modified = match &settings.jwks {
            JwksSource::File(p) => modified(p),
            JwksSource::Url(_) => None,
        };
        let fetches = usize::from(matches!(settings.jwks, JwksSource::Url(_)));
        let now = Instant::now();
        Ok(JwtValidator {
            settings,
            loaded: RwLock::new(Loaded { modified, fetched: now, keys }),
            last_fetch: Mutex::new(now),
            fetches: std::sync::atomic::AtomicUsize::new(fetches),
            min_refetch: JWKS_MIN_REFETCH,
            max_age: JWKS_MAX_AGE,
        })
    }

    pub fn issuer(&self) -> &str {
        &self.settings.issuer
    }

    /// The refetch limits of a JWKS URL: at most one fetch per
    /// `min_refetch` for unknown key ids, and a fetch once the keys are
    /// `max_age` old (defaults `JWKS_MIN_REFETCH`, `JWKS_MAX_AGE`; tests
    /// shorten them).
    pub fn with_refetch_limits(mut self, min_refetch: Duration, max_age: Duration) -> JwtValidator {
        self.min_refetch = min_refetch;
        self.max_age = max_age;
        self
    }

    /// How many times the JWKS was fetched from its URL (0 for a file).
    pub fn fetches(&self) -> usize {
        self.fetches.load(std::sync::atomic::Ordering::Relaxed)
    }

    /// A file: read again when it changed. A URL: fetched again when the
    /// keys are older than `JWKS_MAX_AGE`.
    fn refresh(&self) {
        match &self.settings.jwks {
            JwksSource::File(path) => {
                let now = modified(path);
                let stale = self.loaded.read().map(|l| l.modified != now).unwrap_or(true);
                if !stale {
                    return;
                }
                match load_jwks(path) {
                    Ok(keys) => {
                        if let Ok(mut l) = self.loaded.write() {
                            *l = Loaded { modified: now, fetched: Instant::now(), keys };
                        }
                    }
                    Err(e) => {
                        tracing::warn!("the JWKS changed but does not load; keeping the keys read before: {e}");
                        if let Ok(mut l) = self.loaded.write() {
                            l.modified = now;
                        }
                    }
                }
            }
            JwksSource::Url(_) => {
                let old = self.loaded.read().map(|l| l.fetched.elapsed() >= self.max_age).unwrap_or(true);
                if old {
                    // A failed fetch leaves the keys old: retried at this pace, not per request.
                    self.refetch(self.min_refetch.min(self.max_age));
                }
            }
        }
    }

    /// Fetches the JWKS URL again unless it was fetched (or tried) within
    /// `within`; returns whether it fetched. Failures keep the keys there are.
    fn refetch(&self, within: Duration) -> bool {
        let JwksSource::Url(url) = &self.settings.jwks else { return false };
        let mut last = self.last_fetch.lock().unwrap_or_else(|e| e.into_inner());
        if last.elapsed() < within {
            return false;
        }
        *last = Instant::now();
        self.fetches.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        match fetch_text(url).and_then(|text| parse_jwks(url, &text)) {
            Ok(keys) => {
                if let Ok(mut l) = self.loaded.write() {
                    *l = Loaded { modified: None, fetched: Instant::now(), keys };
                }
            }
            Err(e) => tracing::warn!("the JWKS could not be fetched again; keeping the keys fetched before: {e}"),
        }
        true
    }

    /// Checks a token at `now` (Unix seconds): the principal it names, or why not.
    pub fn validate(&self, token: &str, now: u64) -> Result<Principal, Refusal> {
        let refuse = |why: &str| Refusal(why.to_string());
        let header = jsonwebtoken::decode_header(token).map_err(|_| refuse("the token's header is not a JWS header with a known algorithm"))?;
        let family = family_of(header.alg).ok_or_else(|| refuse("the token is not signed with an asymmetric algorithm (RS*, PS*, ES256, ES384, EdDSA)"))?;
        let alg_name = format!("{:?}", header.alg);
        self.refresh();
        let fits = |k: &&Key| {
            k.family == family
                && k.alg.as_deref().is_none_or(|a| a == alg_name)
                && match (&header.kid, &k.kid) {
                    (Some(want), Some(have)) => want == have,
                    (Some(_), None) => false,
                    (None, _) => true,
                }
        };
        // A key id the keys lack: the issuer may have rotated; fetch again (rate-limited).
        let unknown = self.loaded.read().map(|l| !l.keys.iter().any(|k| fits(&k))).unwrap_or(true);
        if unknown {
            self.refetch(self.min_refetch);
        }
        let loaded = self.loaded.read().map_err(|_| refuse("the issuer's keys are unavailable"))?;
        let candidates: Vec<&Key> = loaded.keys.iter().filter(fits).collect();
        if candidates.is_empty() {
            return Err(refuse("no key of the issuer fits the token's key id and algorithm"));
        }
        let mut validation = Validation::new(header.alg);
        // Claims are checked below, strictly typed; jsonwebtoken checks the signature only.
        validation.validate_exp = false;
        validation.validate_nbf = false;
        validation.validate_aud = false;
        validation.required_spec_claims.clear();
        let claims = candidates
            .iter()
            .find_map(|k| jsonwebtoken::decode::<Json>(token, &k.decoding, &validation).ok())
            .ok_or_else(|| refuse("the token's signature does not verify with the issuer's keys"))?
            .claims;
        self.check_claims(&claims, now)
    }

    fn check_claims(&self, claims: &Json, now: u64) -> Result<Principal, Refusal> {
        let refuse = |why: String| Refusal(why);
        let s = &self.settings;
        match claims.get("iss") {
            Some(Json::String(iss)) if *iss == s.issuer => {}
            Some(Json::String(_)) => return Err(refuse("the token was issued by another issuer".into())),
            _ => return Err(refuse("the token has no `iss` string".into())),
        }
        let aud_ok = match claims.get("aud") {
            Some(Json::String(a)) => *a == s.audience,
            Some(Json::Array(list)) => list.iter().any(|a| a.as_str() == Some(s.audience.as_str())),
            _ => return Err(refuse("the token has no `aud`".into())),
        };
        if !aud_ok {
            return Err(refuse(format!("the token is meant for another resource (its audience is not {})", s.audience)));
        }
        let leeway = s.leeway_secs as f64;
        let now = now as f64;
        match claims.get("exp") {
            Some(Json::Number(n)) => match n.as_f64() {
                Some(exp) if now <= exp + leeway => {}
                _ => return Err(refuse("the token has expired".into())),
            },
            Some(_) => return Err(refuse("the token's `exp` is not a number".into())),
            None => return Err(refuse("the token has no `exp`".into())),
        }
        match claims.get("nbf") {
            None => {}
            Some(Json::Number(n)) => match n.as_f64() {
                Some(nbf) if now + leeway >= nbf => {}
                _ => return Err(refuse("the token is not valid yet (`nbf`)".into())),
            },
            Some(_) => return Err(refuse("the token's `nbf` is not a number".into())),
        }
        let subject = match claims.get("sub") {
            Some(Json::String(sub)) if !sub.trim().is_empty() => sub.clone(),
            _ => return Err(refuse("the token has no `sub`".into())),
        };
        let roles = match claims.get(&s.roles_claim) {
            None | Some(Json::Null) => Vec::new(),
            Some(Json::String(text)) => text.split_whitespace().map(str::to_string).collect(),
            Some(Json::Array(items)) => {
                let mut roles = Vec::new();
                for item in items {
                    match item.as_str() {
                        Some(r) => roles.push(r.to_string()),
                        None => return Err(refuse(format!("the token's `{}` claim is not a list of strings", s.roles_claim))),
                    }
                }
                roles
            }
            Some(_) => return Err(refuse(format!("the token's `{}` claim is not a list of strings", s.roles_claim))),
        };
        Ok(Principal { issuer: s.issuer.clone(), subject, roles })
    }
}

/// The key type an algorithm needs; `None` for what is never accepted
/// (HMAC: a shared secret, and the door to the public-key-as-secret attack).
fn family_of(alg: Algorithm) -> Option<Family> {
    use Algorithm::*;
    match alg {
        RS256 | RS384 | RS512 | PS256 | PS384 | PS512 => Some(Family::Rsa),
        ES256 => Some(Family::P256),
        ES384 => Some(Family::P384),
        EdDSA => Some(Family::Ed25519),
        HS256 | HS384 | HS512 => None,
    }
}

fn modified(path: &Path) -> Option<SystemTime> {
    std::fs::metadata(path).and_then(|m| m.modified()).ok()
}

fn read_jwks(source: &JwksSource) -> Result<Vec<Key>, String> {
    match source {
        JwksSource::File(path) => load_jwks(path),
        JwksSource::Url(url) => parse_jwks(url, &fetch_text(url)?),
    }
}

fn load_jwks(path: &Path) -> Result<Vec<Key>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read the JWKS: {e}", path.display()))?;
    parse_jwks(&path.display().to_string(), &text)
}

/// The signing keys of a JWKS read from `origin` (a file or a URL). Keys
/// for encryption (`use: enc`) and of unknown types are skipped; a
/// symmetric key (`kty: oct`) is an error: a resource server has no
/// business holding the issuer's secret.
fn parse_jwks(origin: &str, text: &str) -> Result<Vec<Key>, String> {
    let doc: Json = serde_json::from_str(text).map_err(|e| format!("{origin}:{}: the JWKS is not JSON: {e}", e.line()))?;
    let Some(items) = doc.get("keys").and_then(Json::as_array) else {
        return Err(format!("{origin}: a JWKS is an object with a `keys` list"));
    };
    let mut keys = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if item.get("kty").and_then(Json::as_str) == Some("oct") {
            return Err(format!("{origin}: keys[{i}] is a symmetric key (kty oct); only the issuer's public keys belong here"));
        }
        let Ok(jwk) = serde_json::from_value::<Jwk>(item.clone()) else {
            tracing::warn!("{origin}: keys[{i}] is not a JWK this server reads; skipped");
            continue;
        };
        if matches!(jwk.common.public_key_use, Some(PublicKeyUse::Encryption)) {
            continue;
        }
        let family = match &jwk.algorithm {
            AlgorithmParameters::RSA(_) => Family::Rsa,
            AlgorithmParameters::EllipticCurve(p) if p.curve == EllipticCurve::P256 => Family::P256,
            AlgorithmParameters::EllipticCurve(p) if p.curve == EllipticCurve::P384 => Family::P384,
            AlgorithmParameters::OctetKeyPair(p) if p.curve == EllipticCurve::Ed25519 => Family::Ed25519,
            _ => {
                tracing::warn!("{origin}: keys[{i}] has a curve this server does not verify; skipped");
                continue;
            }
        };
        let decoding = DecodingKey::from_jwk(&jwk).map_err(|e| format!("{origin}: keys[{i}] is not a valid public key: {e}"))?;
        let alg = jwk.common.key_algorithm.map(|a| a.to_string());
        keys.push(Key { kid: jwk.common.key_id.clone(), alg, family, decoding });
    }
    if keys.is_empty() {
        return Err(format!("{origin}: the JWKS has no signing key this server can use (RSA, P-256, P-384, Ed25519)"));
    }
    Ok(keys)
}

/// Whether `url` may be fetched: https, or http to a loopback host (a
/// development issuer on the same machine; keys over plain HTTP anywhere
/// else could be swapped on the way).
fn check_url(url: &str) -> Result<(), String> {
    if url.starts_with("https://") {
        return Ok(());
    }
    if let Some(rest) = url.strip_prefix("http://") {
        if is_loopback_authority(rest) {
            return Ok(());
        }
    }
    Err(format!("{url}: the issuer's keys are fetched over https (http only from a loopback host)"))
}

fn is_loopback_authority(rest: &str) -> bool {
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    let host = match authority.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or(""),
        None => authority.rsplit_once(':').map_or(authority, |(h, _)| h),
    };
    host.eq_ignore_ascii_case("localhost") || host.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// One GET, bounded in time and size, no redirects (a redirect could lead
/// off https); a status other than 200 is an error.
fn fetch_text(url: &str) -> Result<String, String> {
    check_url(url)?;
    let loopback = url.strip_prefix("http://").is_some_and(is_loopback_authority);
    let mut config = ureq::Agent::config_builder().timeout_global(Some(FETCH_TIMEOUT)).max_redirects(0).http_status_as_error(false);
    if loopback {
        // A proxy from the environment has no business with a loopback issuer.
        config = config.proxy(None);
    }
    let agent: ureq::Agent = config.build().into();
    let mut response = agent.get(url).header("Accept", "application/json").call().map_err(|e| format!("{url}: cannot fetch: {e}"))?;
    let status = response.status();
    if status != 200 {
        return Err(format!("{url}: answered HTTP {}", status.as_u16()));
    }
    response.body_mut().with_config().limit(FETCH_LIMIT).read_to_string().map_err(|e| format!("{url}: cannot read the answer: {e}"))
}

/// The issuer's `jwks_uri`, from its authorization server metadata (RFC
/// 8414, `/.well-known/oauth-authorization-server`), else its OpenID
/// Connect discovery document (`/.well-known/openid-configuration`). The
/// document's `issuer` must be the issuer asked about (RFC 8414 section 3.3:
/// else anyone serving a document could name keys for another issuer).
pub fn discover_jwks_uri(issuer: &str) -> Result<String, String> {
    let trimmed = issuer.trim_end_matches('/');
    // RFC 8414: the well-known segment goes between the host and the issuer's path.
    let (origin, path) = match trimmed.find("://").and_then(|i| trimmed.get(i + 3..).and_then(|rest| rest.find('/')).map(|j| i + 3 + j)) {
        Some(split) => trimmed.split_at(split),
        None => (trimmed, ""),
    };
    let candidates = [format!("{origin}/.well-known/oauth-authorization-server{path}"), format!("{trimmed}/.well-known/openid-configuration")];
    let mut why = Vec::new();
    for url in &candidates {
        let doc = match fetch_text(url).and_then(|t| serde_json::from_str::<Json>(&t).map_err(|e| format!("{url}: not JSON: {e}"))) {
            Ok(d) => d,
            Err(e) => {
                why.push(e);
                continue;
            }
        };
        let named = doc.get("issuer").and_then(Json::as_str).map(|i| i.trim_end_matches('/'));
        if named != Some(trimmed) {
            why.push(format!("{url}: its `issuer` is not {issuer}"));
            continue;
        }
        match doc.get("jwks_uri").and_then(Json::as_str) {
            Some(uri) => return Ok(uri.to_string()),
            None => why.push(format!("{url}: no `jwks_uri`")),
        }
    }
    Err(format!("the issuer's keys could not be found from its metadata: {}", why.join("; ")))
}

/// Test support: key pairs, JWKS files and tokens minted in the tests (the
/// unit tests here and the HTTP tests). Not for production use.
#[doc(hidden)]
pub mod testing {
    use serde_json::{json, Value as Json};

    /// base64url without padding (RFC 7515).
    pub fn b64url(bytes: &[u8]) -> String {
        const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
        let mut out = String::new();
        for chunk in bytes.chunks(3) {
            let b = [chunk.first().copied().unwrap_or(0), chunk.get(1).copied().unwrap_or(0), chunk.get(2).copied().unwrap_or(0)];
            let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
            for i in 0..=chunk.len() {
                let idx = ((n >> (18 - 6 * i)) & 63) as usize;
                out.push(char::from(ALPHABET.get(idx).copied().unwrap_or(b'A')));
            }
        }
        out
    }

    /// An unsigned token with the given header and claims, and `signature`.
    pub fn assemble(header: &Json, claims: &Json, signature: &[u8]) -> String {
        format!("{}.{}.{}", b64url(header.to_string().as_bytes()), b64url(claims.to_string().as_bytes()), b64url(signature))
    }

    /// A JWKS with one Ed25519 public key.
    pub fn ed25519_jwks(kid: &str, public_key: &[u8]) -> Json {
        json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": b64url(public_key), "kid": kid, "alg": "EdDSA", "use": "sig"}]})
    }
}

#[cfg(test)]
mod tests {
    use super::testing::*;
    use super::*;
    use jsonwebtoken::{EncodingKey, Header};
    use ring::signature::{Ed25519KeyPair, KeyPair};
    use serde_json::json;

    const ISS: &str = "https://idp.example.test/";
    const AUD: &str = "http://127.0.0.1:8765/mcp";
    const NOW: u64 = 1_800_000_000;

    struct Issuer {
        pkcs8: Vec<u8>,
        public: Vec<u8>,
    }

    fn issuer() -> Issuer {
        let rng = ring::rand::SystemRandom::new();
        let pkcs8 = Ed25519KeyPair::generate_pkcs8(&rng).unwrap().as_ref().to_vec();
        let public = Ed25519KeyPair::from_pkcs8(&pkcs8).unwrap().public_key().as_ref().to_vec();
        Issuer { pkcs8, public }
    }

    fn sign(key: &Issuer, claims: &Json) -> String {
        let mut header = Header::new(Algorithm::EdDSA);
        header.kid = Some("k1".into());
        jsonwebtoken::encode(&header, claims, &EncodingKey::from_ed_der(&key.pkcs8)).unwrap()
    }

    fn validator(key: &Issuer, dir: &Path) -> JwtValidator {
        let jwks = dir.join("jwks.json");
        std::fs::write(&jwks, ed25519_jwks("k1", &key.public).to_string()).unwrap();
        JwtValidator::new(JwtSettings { issuer: ISS.into(), audience: AUD.into(), jwks: jwks.into(), roles_claim: "roles".into(), leeway_secs: 30 }).unwrap()
    }

    fn claims() -> Json {
        json!({"iss": ISS, "aud": AUD, "sub": "alice", "exp": NOW + 600, "nbf": NOW - 10, "iat": NOW - 10, "roles": ["analyst"]})
    }

    fn with(field: &str, value: Json) -> Json {
        let mut c = claims();
        c[field] = value;
        c
    }

    fn tempdir(tag: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("sb-jwt-{tag}-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn only_a_valid_token_is_served_and_no_refusal_quotes_it() {
        let key = issuer();
        let dir = tempdir("matrix");
        let v = validator(&key, &dir);

        let valid = sign(&key, &claims());
        let p = v.validate(&valid, NOW).unwrap();
        assert_eq!((p.issuer.as_str(), p.subject.as_str(), p.roles.clone()), (ISS, "alice", vec!["analyst".to_string()]));
        // Within the leeway either side.
        assert!(v.validate(&sign(&key, &with("exp", json!(NOW - 20))), NOW).is_ok());
        assert!(v.validate(&sign(&key, &with("nbf", json!(NOW + 20))), NOW).is_ok());
        // `aud` as a list naming this resource among others.
        assert!(v.validate(&sign(&key, &with("aud", json!(["other", AUD]))), NOW).is_ok());

        let other = issuer();
        let valid_parts: Vec<&str> = valid.split('.').collect();
        let tampered_claims = with("sub", json!("mallory"));
        let tampered = format!("{}.{}.{}", valid_parts[0], b64url(tampered_claims.to_string().as_bytes()), valid_parts[2]);
        let hs_header = json!({"alg": "HS256", "typ": "JWT", "kid": "k1"});
        let hs_signing_input = format!("{}.{}", b64url(hs_header.to_string().as_bytes()), b64url(claims().to_string().as_bytes()));
        // HMAC keyed with the public key, in each form an attacker could take it: raw bytes, base64url, the JWKS text.
        let mut hs_tokens = Vec::new();
        for secret in [key.public.clone(), b64url(&key.public).into_bytes(), ed25519_jwks("k1", &key.public).to_string().into_bytes()] {
            let tag = ring::hmac::sign(&ring::hmac::Key::new(ring::hmac::HMAC_SHA256, &secret), hs_signing_input.as_bytes());
            hs_tokens.push(format!("{hs_signing_input}.{}", b64url(tag.as_ref())));
        }

        let cases: Vec<(&str, String, &str)> = vec![
            ("expired", sign(&key, &with("exp", json!(NOW - 31))), "expired"),
            ("not yet valid", sign(&key, &with("nbf", json!(NOW + 31))), "not valid yet"),
            ("wrong issuer", sign(&key, &with("iss", json!("https://evil.example/"))), "another issuer"),
            ("wrong audience", sign(&key, &with("aud", json!("http://other.example/mcp"))), "another resource"),
            ("other key", sign(&other, &claims()), "does not verify"),
            ("alg none", assemble(&json!({"alg": "none", "typ": "JWT"}), &claims(), b""), "header"),
            ("HS256 with the public key (raw)", hs_tokens[0].clone(), "asymmetric"),
            ("HS256 with the public key (b64)", hs_tokens[1].clone(), "asymmetric"),
            ("HS256 with the public key (JWKS)", hs_tokens[2].clone(), "asymmetric"),
            ("tampered payload", tampered, "does not verify"),
            // Type confusion (CVE-2026-25537): a string claim is not an absent one.
            ("nbf as a string", sign(&key, &with("nbf", json!("99999999999"))), "not a number"),
            ("exp as a string", sign(&key, &with("exp", json!("never"))), "not a number"),
            ("no exp", sign(&key, &{ let mut c = claims(); c.as_object_mut().unwrap().remove("exp"); c }), "no `exp`"),
            ("no aud", sign(&key, &{ let mut c = claims(); c.as_object_mut().unwrap().remove("aud"); c }), "no `aud`"),
            ("no sub", sign(&key, &with("sub", json!(""))), "no `sub`"),
            ("unknown kid", {
                let mut h = Header::new(Algorithm::EdDSA);
                h.kid = Some("k9".into());
                jsonwebtoken::encode(&h, &claims(), &EncodingKey::from_ed_der(&key.pkcs8)).unwrap()
            }, "no key"),
            ("not a JWT", "a.b.c".to_string(), "header"),
        ];
        for (what, token, reason) in &cases {
            let refused = v.validate(token, NOW).err().unwrap_or_else(|| panic!("{what}: served"));
            assert!(refused.0.contains(reason), "{what}: {refused}");
            // Nothing of the token in the refusal: no segment, no claim value.
            for part in token.split('.').filter(|p| p.len() > 3) {
                assert!(!refused.0.contains(part), "{what}: the refusal quotes the token");
            }
            assert!(!refused.0.contains("alice") && !refused.0.contains("mallory") && !refused.0.contains("evil"), "{what}: {refused}");
        }
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn a_rotated_jwks_file_is_read_again_and_symmetric_keys_are_refused() {
        let first = issuer();
        let dir = tempdir("rotate");
        let v = validator(&first, &dir);
        assert!(v.validate(&sign(&first, &claims()), NOW).is_ok());
        let second = issuer();
        // A different mtime, whatever the filesystem's timestamp resolution.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(dir.join("jwks.json"), ed25519_jwks("k1", &second.public).to_string()).unwrap();
        let f = std::fs::File::options().write(true).open(dir.join("jwks.json")).unwrap();
        f.set_modified(SystemTime::now() + std::time::Duration::from_secs(5)).unwrap();
        assert!(v.validate(&sign(&second, &claims()), NOW).is_ok(), "the new key is read");
        assert!(v.validate(&sign(&first, &claims()), NOW).is_err(), "the old key is gone");

        let oct = dir.join("oct.json");
        std::fs::write(&oct, json!({"keys": [{"kty": "oct", "k": "c2VjcmV0"}]}).to_string()).unwrap();
        let e = JwtValidator::new(JwtSettings { issuer: ISS.into(), audience: AUD.into(), jwks: oct.into(), roles_claim: "roles".into(), leeway_secs: 0 }).err().unwrap();
        assert!(e.contains("symmetric"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn only_https_or_loopback_http_urls_are_fetched() {
        assert!(check_url("https://idp.example/jwks").is_ok());
        for ok in ["http://127.0.0.1:8080/jwks", "http://localhost/jwks", "http://[::1]:9/x"] {
            assert!(check_url(ok).is_ok(), "{ok}");
        }
        for bad in ["http://idp.example/jwks", "http://127.0.0.1.evil.example/jwks", "http://localhost.evil/x", "ftp://x/y"] {
            assert!(check_url(bad).is_err(), "{bad}");
        }
        assert_eq!(JwksSource::parse("https://a/b"), JwksSource::Url("https://a/b".into()));
        assert_eq!(JwksSource::parse("keys/jwks.json"), JwksSource::File("keys/jwks.json".into()));
    }
}
