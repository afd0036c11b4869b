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
//! The JWKS is read from a file and read again when the file changes (an
//! operator's key rotation needs no restart); a file that no longer loads
//! keeps the keys read last, with a warning.
//!
//! Architecture invariant: pure checks plus the JWKS file; no network, no
//! HTTP types; a refusal's text never contains the token or its claims.

use std::path::{Path, PathBuf};
use std::sync::RwLock;
use std::time::SystemTime;

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
    /// The issuer's JWKS, as a file.
    pub jwks: PathBuf,
    /// The claim holding the caller's roles (a list of strings, or one
    /// space-separated string).
    pub roles_claim: String,
    pub leeway_secs: u64,
}

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
    modified: Option<SystemTime>,
    keys: Vec<Key>,
}

pub struct JwtValidator {
    settings: JwtSettings,
    loaded: RwLock<Loaded>,
}

impl JwtValidator {
    /// Loads the JWKS; a file without one usable signing key is an error.
    pub fn new(settings: JwtSettings) -> Result<JwtValidator, String> {
        let keys = load_jwks(&settings.jwks)?;
        let modified = modified(&settings.jwks);
        Ok(JwtValidator { settings, loaded: RwLock::new(Loaded { modified, keys }) })
    }

    pub fn issuer(&self) -> &str {
        &self.settings.issuer
    }

    /// Re-reads the JWKS file when it changed since it was read.
    fn refresh(&self) {
        let now = modified(&self.settings.jwks);
        let stale = self.loaded.read().map(|l| l.modified != now).unwrap_or(true);
        if !stale {
            return;
        }
        match load_jwks(&self.settings.jwks) {
            Ok(keys) => {
                if let Ok(mut l) = self.loaded.write() {
                    *l = Loaded { modified: now, keys };
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

    /// Checks a token at `now` (Unix seconds): the principal it names, or why not.
    pub fn validate(&self, token: &str, now: u64) -> Result<Principal, Refusal> {
        let refuse = |why: &str| Refusal(why.to_string());
        let header = jsonwebtoken::decode_header(token).map_err(|_| refuse("the token's header is not a JWS header with a known algorithm"))?;
        let family = family_of(header.alg).ok_or_else(|| refuse("the token is not signed with an asymmetric algorithm (RS*, PS*, ES256, ES384, EdDSA)"))?;
        let alg_name = format!("{:?}", header.alg);
        self.refresh();
        let loaded = self.loaded.read().map_err(|_| refuse("the issuer's keys are unavailable"))?;
        let candidates: Vec<&Key> = loaded
            .keys
            .iter()
            .filter(|k| k.family == family)
            .filter(|k| k.alg.as_deref().is_none_or(|a| a == alg_name))
            .filter(|k| match (&header.kid, &k.kid) {
                (Some(want), Some(have)) => want == have,
                (Some(_), None) => false,
                (None, _) => true,
            })
            .collect();
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

/// The signing keys of a JWKS file. Keys for encryption (`use: enc`) and
/// of unknown types are skipped; a symmetric key (`kty: oct`) is an error:
/// a resource server has no business holding the issuer's secret.
fn load_jwks(path: &Path) -> Result<Vec<Key>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read the JWKS: {e}", path.display()))?;
    let doc: Json = serde_json::from_str(&text).map_err(|e| format!("{}:{}: the JWKS is not JSON: {e}", path.display(), e.line()))?;
    let Some(items) = doc.get("keys").and_then(Json::as_array) else {
        return Err(format!("{}: a JWKS is an object with a `keys` list", path.display()));
    };
    let mut keys = Vec::new();
    for (i, item) in items.iter().enumerate() {
        if item.get("kty").and_then(Json::as_str) == Some("oct") {
            return Err(format!("{}: keys[{i}] is a symmetric key (kty oct); only the issuer's public keys belong here", path.display()));
        }
        let Ok(jwk) = serde_json::from_value::<Jwk>(item.clone()) else {
            tracing::warn!("{}: keys[{i}] is not a JWK this server reads; skipped", path.display());
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
                tracing::warn!("{}: keys[{i}] has a curve this server does not verify; skipped", path.display());
                continue;
            }
        };
        let decoding = DecodingKey::from_jwk(&jwk).map_err(|e| format!("{}: keys[{i}] is not a valid public key: {e}", path.display()))?;
        let alg = jwk.common.key_algorithm.map(|a| a.to_string());
        keys.push(Key { kid: jwk.common.key_id.clone(), alg, family, decoding });
    }
    if keys.is_empty() {
        return Err(format!("{}: the JWKS has no signing key this server can use (RSA, P-256, P-384, Ed25519)", path.display()));
    }
    Ok(keys)
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
        JwtValidator::new(JwtSettings { issuer: ISS.into(), audience: AUD.into(), jwks, roles_claim: "roles".into(), leeway_secs: 30 }).unwrap()
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
        let e = JwtValidator::new(JwtSettings { issuer: ISS.into(), audience: AUD.into(), jwks: oct, roles_claim: "roles".into(), leeway_secs: 0 }).err().unwrap();
        assert!(e.contains("symmetric"), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }
}
