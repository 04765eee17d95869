//! The OAuth 2.1 resource server of the HTTP transport: JWT access tokens
//! from one issuer, checked with the keys of its JWKS, turned into a
//! [`Caller`] whose privileges are those the token's scopes grant
//! (`[oauth.scopes]`).
//!
//! Configured once at start from [`OAuthConfig`]; per request it costs one
//! signature check. The keys are fetched on first use, used for
//! `jwks_max_age_secs`, and fetched again early when a token names a key id the
//! set does not have (a rotation), at most once per [`REFETCH_AFTER`]: a caller
//! sending made-up key ids cannot turn the server into a load on the issuer.
//! Every fetch has a deadline ([`FETCH_TIMEOUT`]) and a size cap
//! ([`MAX_DOCUMENT_BYTES`]); a failed refresh keeps the keys it had.
//!
//! What is checked, in order: the token is a JWT whose `alg` is asymmetric
//! ([`ACCEPTED`]; never `none` or an HMAC that would take a public key as
//! the secret); its key is in the set (by `kid`, or the only key that fits);
//! the signature; `iss` is the issuer; `aud` contains the audience (RFC 8707);
//! `exp` (required) and `nbf` within `leeway_secs`; the principal claim is a
//! string; the token carries every `required_scopes` scope.
//!
//! The answers (RFC 6750, RFC 9728) are built by [`ResourceServer::challenge`]:
//! `401` with `WWW-Authenticate: Bearer resource_metadata="..."` without a
//! token or with a bad one (then with `error="invalid_token"`), `403` with
//! `error="insufficient_scope"` and the scopes a client should ask for.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::{JwkSet, KeyAlgorithm, PublicKeyUse};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;

use super::TokenId;
use crate::catalog::Caller;
use crate::config::{OAuthConfig, secure_url};

/// The algorithms a token may be signed with: asymmetric ones only.
pub const ACCEPTED: [Algorithm; 9] = [
    Algorithm::RS256,
    Algorithm::RS384,
    Algorithm::RS512,
    Algorithm::PS256,
    Algorithm::PS384,
    Algorithm::PS512,
    Algorithm::ES256,
    Algorithm::ES384,
    Algorithm::EdDSA,
];

/// The least time between two fetches of the key set caused by an unknown key id.
pub const REFETCH_AFTER: Duration = Duration::from_secs(10);
/// How long one fetch of the issuer's metadata or keys may take.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(5);
/// The largest metadata or key-set document read.
pub const MAX_DOCUMENT_BYTES: usize = 512 * 1024;
/// The most keys kept from one key set.
pub const MAX_KEYS: usize = 64;
/// The longest bearer token looked at.
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// A token that passed: who it stands for, what it may do.
#[derive(Debug, Clone)]
pub struct Grant {
    pub caller: Caller,
    /// The token's scopes (`scope`, or `scp`).
    pub scopes: BTreeSet<String>,
    /// `jwt:<jti>`, or `jwt` when the token has no usable `jti`; for the audit log.
    pub id: TokenId,
}

/// Why a token was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Rejection {
    /// No bearer token came.
    Missing,
    /// The token is not valid; the text says why (it goes to the client).
    Invalid(String),
    /// Valid, but without these scopes (the client may step up).
    InsufficientScope { scopes: Vec<String>, why: String },
    /// The issuer's keys cannot be had; nothing can be checked now.
    KeysUnavailable,
}

impl Rejection {
    /// The `error.type` the refusal is logged with.
    pub fn error_type(&self) -> &'static str {
        match self {
            Rejection::Missing => "unauthorized",
            Rejection::Invalid(_) => "invalid_token",
            Rejection::InsufficientScope { .. } => "insufficient_scope",
            Rejection::KeysUnavailable => "jwks_unavailable",
        }
    }
}

/// The keys in use, and when they were fetched.
#[derive(Default)]
struct Keys {
    keys: Vec<Key>,
    fetched: Option<Instant>,
    /// The last fetch attempt, successful or not.
    attempted: Option<Instant>,
}

#[derive(Clone)]
struct Key {
    kid: Option<String>,
    /// The JWK's `alg`, when it names one.
    alg: Option<Algorithm>,
    key: DecodingKey,
}

impl Key {
    fn fits(&self, alg: Algorithm) -> bool {
        self.alg.is_none_or(|a| a == alg) && self.key.family() == alg.family()
    }
}

/// The resource server: settings, the HTTP client for the issuer, the keys.
pub struct ResourceServer {
    config: OAuthConfig,
    metadata_url: String,
    metadata_path: String,
    client: reqwest::Client,
    keys: std::sync::RwLock<Arc<Keys>>,
    /// One fetch at a time; waiting requests use its keys.
    fetching: tokio::sync::Mutex<()>,
    /// The key set's address, once known (configured, or from the metadata).
    jwks_uri: tokio::sync::OnceCell<String>,
    refetch_after: Duration,
}

impl std::fmt::Debug for ResourceServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceServer")
            .field("resource", &self.config.resource)
            .field("issuer", &self.config.issuer)
            .finish_non_exhaustive()
    }
}

impl ResourceServer {
    /// The resource server of `config`. Nothing is fetched yet.
    ///
    /// # Errors
    ///
    /// A message naming `oauth.ca_file` when it cannot be read or holds no
    /// certificate, or when the HTTP client cannot be built.
    pub fn new(config: OAuthConfig) -> Result<ResourceServer, String> {
        Self::with_refetch_after(config, REFETCH_AFTER)
    }

    /// As [`new`](Self::new), with another least time between unknown-key
    /// fetches (tests).
    ///
    /// # Errors
    ///
    /// As [`new`](Self::new).
    pub fn with_refetch_after(
        config: OAuthConfig,
        refetch_after: Duration,
    ) -> Result<ResourceServer, String> {
        let mut client = reqwest::Client::builder()
            .timeout(FETCH_TIMEOUT)
            .redirect(reqwest::redirect::Policy::none())
            .user_agent(concat!("toolhost/", env!("CARGO_PKG_VERSION")));
        if let Some(path) = &config.ca_file {
            let pem = std::fs::read(path)
                .map_err(|e| format!("oauth.ca_file: cannot read {}: {e}", path.display()))?;
            let certificates = reqwest::Certificate::from_pem_bundle(&pem).map_err(|e| {
                format!(
                    "oauth.ca_file: {} is not a PEM certificate bundle: {e}",
                    path.display()
                )
            })?;
            if certificates.is_empty() {
                return Err(format!(
                    "oauth.ca_file: {} holds no certificate",
                    path.display()
                ));
            }
            for certificate in certificates {
                client = client.add_root_certificate(certificate);
            }
        }
        let client = client
            .build()
            .map_err(|e| format!("oauth: cannot build the HTTP client: {e}"))?;
        let (metadata_url, metadata_path) = metadata_location(&config.resource);
        let jwks_uri = tokio::sync::OnceCell::new();
        if let Some(uri) = &config.jwks_uri {
            jwks_uri.set(uri.clone()).expect("a new cell");
        }
        Ok(ResourceServer {
            config,
            metadata_url,
            metadata_path,
            client,
            keys: std::sync::RwLock::new(Arc::new(Keys::default())),
            fetching: tokio::sync::Mutex::new(()),
            jwks_uri,
            refetch_after,
        })
    }

    /// The settings.
    pub fn config(&self) -> &OAuthConfig {
        &self.config
    }

    /// The absolute URL of the protected resource metadata.
    pub fn metadata_url(&self) -> &str {
        &self.metadata_url
    }

    /// The path the metadata is served at (RFC 9728, 3.1: the well-known
    /// prefix inserted before the resource's path).
    pub fn metadata_path(&self) -> &str {
        &self.metadata_path
    }

    /// The protected resource metadata document (RFC 9728, 2).
    pub fn metadata(&self) -> Value {
        serde_json::json!({
            "resource": self.config.resource,
            "authorization_servers": self.config.authorization_servers,
            "scopes_supported": self.config.scopes_supported(),
            "bearer_methods_supported": ["header"],
            "resource_signing_alg_values_supported": ACCEPTED
                .iter()
                .map(|alg| format!("{alg:?}"))
                .collect::<Vec<_>>(),
        })
    }

    /// The `WWW-Authenticate` value for `rejection` (RFC 6750, 3; RFC 9728, 5.1).
    pub fn challenge(&self, rejection: &Rejection) -> String {
        let mut params = vec![format!("resource_metadata=\"{}\"", self.metadata_url)];
        match rejection {
            Rejection::Missing | Rejection::KeysUnavailable => {
                if !self.config.required_scopes.is_empty() {
                    params.push(format!(
                        "scope=\"{}\"",
                        self.config.required_scopes.join(" ")
                    ));
                }
            }
            Rejection::Invalid(why) => {
                params.push("error=\"invalid_token\"".into());
                params.push(format!("error_description=\"{}\"", quoted(why)));
            }
            Rejection::InsufficientScope { scopes, why } => {
                params.push("error=\"insufficient_scope\"".into());
                params.push(format!("scope=\"{}\"", scopes.join(" ")));
                params.push(format!("error_description=\"{}\"", quoted(why)));
            }
        }
        format!("Bearer {}", params.join(", "))
    }

    /// The scopes a caller holding `held` should ask for to also hold
    /// `missing` privileges: `held` and, for each missing privilege, the first
    /// configured scope that grants it. `None` when some privilege no scope
    /// grants (no token could help).
    pub fn step_up(&self, held: &BTreeSet<String>, missing: &[&str]) -> Option<Vec<String>> {
        let mut scopes: Vec<String> = held.iter().cloned().collect();
        for privilege in missing {
            let scope = self
                .config
                .scopes
                .iter()
                .find(|(_, grants)| grants.iter().any(|g| g == privilege))
                .map(|(scope, _)| scope)?;
            if !scopes.contains(scope) {
                scopes.push(scope.clone());
            }
        }
        Some(scopes)
    }

    /// Checks `token`.
    ///
    /// # Errors
    ///
    /// A [`Rejection`] saying why the token is not accepted.
    pub async fn authenticate(&self, token: &str) -> Result<Grant, Rejection> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(Rejection::Invalid(format!(
                "the token is longer than {MAX_TOKEN_BYTES} bytes"
            )));
        }
        let header = jsonwebtoken::decode_header(token)
            .map_err(|_| Rejection::Invalid("the token is not a JWT".into()))?;
        if !ACCEPTED.contains(&header.alg) {
            return Err(Rejection::Invalid(format!(
                "the token is signed with {:?}, which this server does not accept",
                header.alg
            )));
        }
        let kid = header.kid.as_deref();
        let keys = self.keys_for(kid, header.alg).await?;
        let key = pick(&keys, kid, header.alg).ok_or_else(|| {
            Rejection::Invalid(match kid {
                Some(kid) => format!("the token's key id {kid:?} is not among the issuer's keys"),
                None => "the token has no key id (kid) and the issuer has several keys".into(),
            })
        })?;
        let claims = self.verify(token, header.alg, &key.key)?;
        self.grant(&claims)
    }

    fn verify(
        &self,
        token: &str,
        alg: Algorithm,
        key: &DecodingKey,
    ) -> Result<BTreeMap<String, Value>, Rejection> {
        let mut validation = Validation::new(alg);
        validation.set_issuer(&[&self.config.issuer]);
        validation.set_audience(&[&self.config.audience]);
        validation.set_required_spec_claims(&["exp", "iss", "aud"]);
        validation.validate_nbf = true;
        validation.leeway = self.config.leeway.as_secs();
        let data = jsonwebtoken::decode::<BTreeMap<String, Value>>(token, key, &validation)
            .map_err(|error| Rejection::Invalid(self.describe(error.kind())))?;
        Ok(data.claims)
    }

    fn describe(&self, kind: &ErrorKind) -> String {
        match kind {
            ErrorKind::ExpiredSignature => "the token has expired".into(),
            ErrorKind::ImmatureSignature => "the token is not valid yet (nbf)".into(),
            ErrorKind::InvalidAudience => format!(
                "the token's audience (aud) does not name this server, {}",
                self.config.audience
            ),
            ErrorKind::InvalidIssuer => {
                format!("the token's issuer (iss) is not {}", self.config.issuer)
            }
            ErrorKind::InvalidSignature => "the token's signature does not verify".into(),
            ErrorKind::MissingRequiredClaim(claim) => format!("the token has no {claim} claim"),
            ErrorKind::InvalidClaimFormat(claim) => {
                format!("the token's {claim} claim is malformed")
            }
            _ => "the token is malformed".into(),
        }
    }

    fn grant(&self, claims: &BTreeMap<String, Value>) -> Result<Grant, Rejection> {
        let claim = &self.config.principal_claim;
        let principal = match claims.get(claim) {
            Some(Value::String(p)) if !p.is_empty() => p.clone(),
            _ => {
                return Err(Rejection::Invalid(format!(
                    "the token has no {claim} claim naming its principal"
                )));
            }
        };
        let scopes = token_scopes(claims);
        let missing: Vec<String> = self
            .config
            .required_scopes
            .iter()
            .filter(|s| !scopes.contains(*s))
            .cloned()
            .collect();
        if !missing.is_empty() {
            let mut wanted: Vec<String> = scopes.iter().cloned().collect();
            wanted.extend(missing.iter().cloned());
            return Err(Rejection::InsufficientScope {
                scopes: wanted,
                why: format!("this server needs the scope(s) {}", missing.join(" ")),
            });
        }
        let privileges = scopes
            .iter()
            .filter_map(|scope| self.config.scopes.get(scope))
            .flatten()
            .cloned()
            .collect();
        let id = match claims.get("jti") {
            Some(Value::String(jti))
                if !jti.is_empty()
                    && jti.len() <= 128
                    && jti.bytes().all(|b| b.is_ascii_graphic()) =>
            {
                TokenId(format!("jwt:{jti}"))
            }
            _ => TokenId("jwt".into()),
        };
        Ok(Grant {
            caller: Caller {
                principal: Some(principal),
                privileges: Some(privileges),
            },
            scopes,
            id,
        })
    }

    /// The keys to check a token of `kid` and `alg` with: the cached ones,
    /// fetched first when there are none, they are older than
    /// `jwks_max_age_secs`, or they lack `kid` (then at most once per
    /// `refetch_after`).
    async fn keys_for(&self, kid: Option<&str>, alg: Algorithm) -> Result<Arc<Keys>, Rejection> {
        let current = self.keys.read().expect("keys lock").clone();
        if !self.wants_fetch(&current, kid, alg) {
            return Ok(current);
        }
        let _fetching = self.fetching.lock().await;
        // Another request may have fetched while this one waited.
        let current = self.keys.read().expect("keys lock").clone();
        if !self.wants_fetch(&current, kid, alg) {
            return Ok(current);
        }
        let attempted = Instant::now();
        let fetched = self.fetch_keys().await;
        let next = match fetched {
            Ok(keys) => Arc::new(Keys {
                keys,
                fetched: Some(attempted),
                attempted: Some(attempted),
            }),
            Err(error) => {
                tracing::warn!(
                    error.type = "jwks_unavailable",
                    issuer = self.config.issuer,
                    %error,
                    kept = current.keys.len(),
                    "cannot fetch the issuer's keys; keeping the ones held"
                );
                Arc::new(Keys {
                    keys: current.keys.clone(),
                    fetched: current.fetched,
                    attempted: Some(attempted),
                })
            }
        };
        *self.keys.write().expect("keys lock") = next.clone();
        if next.fetched.is_none() {
            return Err(Rejection::KeysUnavailable);
        }
        Ok(next)
    }

    fn wants_fetch(&self, keys: &Keys, kid: Option<&str>, alg: Algorithm) -> bool {
        // Never more than one attempt per `refetch_after`, whatever the reason.
        let cooled = keys
            .attempted
            .is_none_or(|at| at.elapsed() >= self.refetch_after);
        let stale = keys
            .fetched
            .is_none_or(|at| at.elapsed() >= self.config.jwks_max_age);
        cooled && (stale || pick(keys, kid, alg).is_none())
    }

    /// Fetches the key set (finding its address in the issuer's metadata first
    /// when it is not configured).
    async fn fetch_keys(&self) -> Result<Vec<Key>, String> {
        let uri = self
            .jwks_uri
            .get_or_try_init(|| self.discover_jwks_uri())
            .await?;
        let document = self.fetch_json(uri).await?;
        let set: JwkSet =
            serde_json::from_value(document).map_err(|e| format!("{uri} is not a JWK set: {e}"))?;
        let mut keys = Vec::new();
        for jwk in set.keys {
            if keys.len() == MAX_KEYS {
                tracing::warn!(
                    uri,
                    "the issuer's key set has more than {MAX_KEYS} keys; the rest are ignored"
                );
                break;
            }
            if jwk
                .common
                .public_key_use
                .as_ref()
                .is_some_and(|u| *u != PublicKeyUse::Signature)
            {
                continue;
            }
            let alg = match jwk.common.key_algorithm {
                None => None,
                Some(alg) => match key_algorithm(alg) {
                    Some(alg) => Some(alg),
                    // An encryption or HMAC key: never for checking tokens.
                    None => continue,
                },
            };
            let Ok(key) = DecodingKey::from_jwk(&jwk) else {
                continue;
            };
            if !ACCEPTED.iter().any(|a| a.family() == key.family()) {
                continue;
            }
            keys.push(Key {
                kid: jwk.common.key_id.clone(),
                alg,
                key,
            });
        }
        if keys.is_empty() {
            return Err(format!("{uri} has no signing key this server can use"));
        }
        tracing::info!(
            issuer = self.config.issuer,
            uri,
            keys = keys.len(),
            "fetched the issuer's keys"
        );
        Ok(keys)
    }

    /// The `jwks_uri` of the issuer's metadata: RFC 8414's well-known address,
    /// then OpenID Connect's; the document must name the configured issuer.
    async fn discover_jwks_uri(&self) -> Result<String, String> {
        let issuer = &self.config.issuer;
        let mut tried = Vec::new();
        for url in metadata_candidates(issuer) {
            match self.fetch_json(&url).await {
                Ok(document) => {
                    if document.get("issuer").and_then(Value::as_str) != Some(issuer.as_str()) {
                        return Err(format!(
                            "{url} names issuer {}, not {issuer}",
                            document.get("issuer").unwrap_or(&Value::Null)
                        ));
                    }
                    let uri = document
                        .get("jwks_uri")
                        .and_then(Value::as_str)
                        .ok_or_else(|| format!("{url} has no jwks_uri; set oauth.jwks_uri"))?;
                    secure_url(uri).map_err(|why| format!("{url}: jwks_uri: {why}"))?;
                    return Ok(uri.to_owned());
                }
                Err(error) => tried.push(error),
            }
        }
        Err(format!(
            "no authorization server metadata for {issuer} ({}); set oauth.jwks_uri",
            tried.join("; ")
        ))
    }

    /// GETs `url` as JSON, within [`FETCH_TIMEOUT`] and [`MAX_DOCUMENT_BYTES`].
    async fn fetch_json(&self, url: &str) -> Result<Value, String> {
        let mut response = self
            .client
            .get(url)
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|e| format!("{url}: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("{url}: HTTP {}", response.status()));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| format!("{url}: {e}"))? {
            if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                return Err(format!(
                    "{url}: the document is over {MAX_DOCUMENT_BYTES} bytes"
                ));
            }
            body.extend_from_slice(&chunk);
        }
        serde_json::from_slice(&body).map_err(|e| format!("{url}: not JSON: {e}"))
    }
}

/// The key for a token of `kid` and `alg`: the one with that id, or without
/// an id the only key that fits.
fn pick<'a>(keys: &'a Keys, kid: Option<&str>, alg: Algorithm) -> Option<&'a Key> {
    match kid {
        Some(kid) => keys
            .keys
            .iter()
            .find(|k| k.kid.as_deref() == Some(kid) && k.fits(alg)),
        None => {
            let mut fitting = keys.keys.iter().filter(|k| k.fits(alg));
            let only = fitting.next()?;
            fitting.next().is_none().then_some(only)
        }
    }
}

/// A JWK's `alg` as a signing algorithm this server accepts.
fn key_algorithm(alg: KeyAlgorithm) -> Option<Algorithm> {
    let alg = match alg {
        KeyAlgorithm::RS256 => Algorithm::RS256,
        KeyAlgorithm::RS384 => Algorithm::RS384,
        KeyAlgorithm::RS512 => Algorithm::RS512,
        KeyAlgorithm::PS256 => Algorithm::PS256,
        KeyAlgorithm::PS384 => Algorithm::PS384,
        KeyAlgorithm::PS512 => Algorithm::PS512,
        KeyAlgorithm::ES256 => Algorithm::ES256,
        KeyAlgorithm::ES384 => Algorithm::ES384,
        KeyAlgorithm::EdDSA => Algorithm::EdDSA,
        _ => return None,
    };
    Some(alg)
}

/// The scopes of a token: `scope` (space-separated, RFC 9068) or `scp` (a
/// list or a string, as some issuers write it).
fn token_scopes(claims: &BTreeMap<String, Value>) -> BTreeSet<String> {
    let words = |text: &str| {
        text.split_whitespace()
            .map(str::to_owned)
            .collect::<Vec<_>>()
    };
    let mut scopes = BTreeSet::new();
    for name in ["scope", "scp"] {
        match claims.get(name) {
            Some(Value::String(text)) => scopes.extend(words(text)),
            Some(Value::Array(items)) => {
                scopes.extend(items.iter().filter_map(Value::as_str).flat_map(words));
            }
            _ => {}
        }
    }
    scopes
}

/// Where the metadata of `resource` is: the well-known prefix inserted between
/// its origin and its path (RFC 9728, 3.1), as a URL and as a path.
fn metadata_location(resource: &str) -> (String, String) {
    let url = reqwest::Url::parse(resource).expect("the configuration checked the resource URL");
    let path = url.path().trim_end_matches('/');
    let well_known = format!("/.well-known/oauth-protected-resource{path}");
    let origin = url.origin().ascii_serialization();
    (format!("{origin}{well_known}"), well_known)
}

/// The addresses an issuer's metadata may be at: RFC 8414 (the well-known
/// prefix before the issuer's path), then OpenID Connect Discovery (appended).
fn metadata_candidates(issuer: &str) -> Vec<String> {
    let Ok(url) = reqwest::Url::parse(issuer) else {
        return Vec::new();
    };
    let origin = url.origin().ascii_serialization();
    let path = url.path().trim_end_matches('/');
    vec![
        format!("{origin}/.well-known/oauth-authorization-server{path}"),
        format!("{origin}{path}/.well-known/openid-configuration"),
    ]
}

/// `text` made safe inside a quoted-string of a header.
fn quoted(text: &str) -> String {
    text.chars()
        .filter(|c| !c.is_control())
        .map(|c| if c == '"' || c == '\\' { '\'' } else { c })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metadata_sits_before_the_resource_path() {
        assert_eq!(
            metadata_location("https://mcp.example.com/mcp"),
            (
                "https://mcp.example.com/.well-known/oauth-protected-resource/mcp".into(),
                "/.well-known/oauth-protected-resource/mcp".into()
            )
        );
        assert_eq!(
            metadata_location("http://127.0.0.1:8080/").1,
            "/.well-known/oauth-protected-resource"
        );
        assert_eq!(
            metadata_candidates("https://login.example.com/tenant/"),
            [
                "https://login.example.com/.well-known/oauth-authorization-server/tenant",
                "https://login.example.com/tenant/.well-known/openid-configuration",
            ]
        );
    }

    #[test]
    fn scopes_come_from_scope_or_scp() {
        let claims: BTreeMap<String, Value> = serde_json::from_value(serde_json::json!({
            "scope": "a b", "scp": ["c", "d e"]
        }))
        .unwrap();
        assert_eq!(
            token_scopes(&claims).into_iter().collect::<Vec<_>>(),
            ["a", "b", "c", "d", "e"]
        );
    }

    #[test]
    fn a_description_cannot_break_out_of_its_quotes() {
        assert_eq!(quoted("a \"b\"\\\r\nc"), "a 'b''c");
    }
}
