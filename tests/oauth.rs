//! The OAuth 2.1 resource server (#16) of a real `toolhost serve --http`
//! process, against a test issuer this file runs: its metadata (RFC 8414, from
//! which the host finds the key set) and its JWKS, served over HTTP, with
//! ES256 keys made here and tokens signed by them.
//!
//! Proves: the protected resource metadata (RFC 9728) at its well-known
//! address; `401` with `resource_metadata` and the required scope without a
//! token; expired, not-yet-valid, wrong-audience, wrong-issuer, unknown-key,
//! forged-signature, HMAC and `none` tokens each refused with `invalid_token`
//! and the reason; a missing required scope and a missing tool privilege each
//! `403 insufficient_scope` naming the scopes to ask for; a key rotation in the
//! JWKS picked up without a restart; made-up key ids cannot make the host fetch
//! the key set more than once per cooling time; static tokens beside OAuth;
//! the audit log names the token by its `jti`, never the token.

use crate::common;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::Router;
use axum::extract::State;
use axum::routing::get;
use base64::Engine as _;
use common::host::guest;
use common::mcp_client::{message, message_in, modern};
use common::process::Host;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

/// An ES256 key of the test issuer: its id, what signs, its public JWK.
struct SigningKey {
    kid: String,
    encoding: EncodingKey,
    jwk: Value,
}

impl SigningKey {
    fn new(kid: &str) -> SigningKey {
        let pair = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
        let point = pair.public_key_raw();
        assert_eq!(point.len(), 65, "an uncompressed P-256 point");
        let b64 = |bytes: &[u8]| base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
        SigningKey {
            kid: kid.to_owned(),
            encoding: EncodingKey::from_ec_der(&pair.serialize_der()),
            jwk: json!({
                "kty": "EC", "crv": "P-256", "use": "sig", "alg": "ES256", "kid": kid,
                "x": b64(&point[1..33]), "y": b64(&point[33..65]),
            }),
        }
    }

    fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(Algorithm::ES256);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.encoding).unwrap()
    }
}

/// The test issuer: its metadata and key set, and how often the set was fetched.
#[derive(Clone)]
struct Issuer {
    url: String,
    keys: Arc<Mutex<Vec<Value>>>,
    fetches: Arc<AtomicUsize>,
}

impl Issuer {
    async fn start(keys: Vec<Value>) -> Issuer {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        let issuer = Issuer {
            url,
            keys: Arc::new(Mutex::new(keys)),
            fetches: Arc::new(AtomicUsize::new(0)),
        };
        let app = Router::new()
            .route(
                "/.well-known/oauth-authorization-server",
                get(|State(issuer): State<Issuer>| async move {
                    axum::Json(json!({
                        "issuer": issuer.url,
                        "jwks_uri": format!("{}/keys", issuer.url),
                        "token_endpoint": format!("{}/token", issuer.url),
                        "response_types_supported": ["code"],
                    }))
                }),
            )
            .route(
                "/keys",
                get(|State(issuer): State<Issuer>| async move {
                    issuer.fetches.fetch_add(1, Ordering::SeqCst);
                    axum::Json(json!({ "keys": *issuer.keys.lock().unwrap() }))
                }),
            )
            .with_state(issuer.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        issuer
    }
}

const RESOURCE: &str = "http://127.0.0.1:1/mcp";

fn now() -> i64 {
    jiff::Timestamp::now().as_second()
}

/// Claims that pass, for `sub` with `scope`.
fn claims(issuer: &Issuer, sub: &str, scope: &str) -> Value {
    json!({
        "iss": issuer.url, "aud": RESOURCE, "sub": sub, "scope": scope,
        "iat": now(), "exp": now() + 300, "jti": format!("jti-{sub}-{}", now()),
    })
}

/// POSTs a `tools/call` of `add` with `bearer`; the status, the
/// `WWW-Authenticate` header, and the body.
async fn call_add(url: &str, bearer: &str) -> (u16, String, String) {
    let response = modern(
        "tools/call",
        Some("add"),
        json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
        Some(bearer),
        url,
    )
    .send()
    .await
    .unwrap();
    let status = response.status().as_u16();
    let challenge = response
        .headers()
        .get("www-authenticate")
        .map(|v| v.to_str().unwrap().to_owned())
        .unwrap_or_default();
    (status, challenge, response.text().await.unwrap())
}

fn assert_refused(
    answer: &(u16, String, String),
    status: u16,
    error: &str,
    why: &str,
    label: &str,
) {
    let (got, challenge, body) = answer;
    assert_eq!(*got, status, "{label}: {body}");
    assert!(
        challenge.starts_with("Bearer ")
            && challenge.contains(&format!("error=\"{error}\""))
            && challenge.contains(
                "resource_metadata=\"http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp\""
            ),
        "{label}: {challenge}"
    );
    assert!(
        challenge.contains(why) && body.contains(why),
        "{label}: {why:?} not in {challenge} / {body}"
    );
}

fn succeeded(answer: &(u16, String, String)) -> Value {
    assert_eq!(answer.0, 200, "{}", answer.2);
    let message = message_in(&answer.2);
    assert!(message["result"]["isError"] != true, "{message}");
    message
}

#[tokio::test(flavor = "multi_thread")]
async fn access_tokens_are_checked_against_the_issuers_keys() {
    let first = SigningKey::new("k1");
    let issuer = Issuer::start(vec![first.jwk.clone()]).await;
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let config = dir.path().join("toolhost.toml");
    let static_token = "static-token-0123456789abcdef";
    std::fs::write(
        &config,
        format!(
            "[host]\naudit = \"{audit}\"\n\
             [store]\nkind = \"sqlite\"\npath = \"{d}/r.sqlite3\"\nsigning_key_file = \"{d}/k\"\n\
             [oauth]\nresource = \"{RESOURCE}\"\nissuer = \"{issuer}\"\nrequired_scopes = [\"mcp\"]\n\
             [oauth.scopes]\n\"calc:add\" = [\"math:add\"]\n\
             [[token]]\ntoken = \"{static_token}\"\nprincipal = \"ops\"\nprivileges = [\"math:add\"]\n\
             [[plugin]]\npath = \"{calc}\"\n[plugin.tool_privileges]\nadd = [\"math:add\"]\n",
            audit = audit.display(),
            d = dir.path().display(),
            issuer = issuer.url,
            calc = guest("calc").display(),
        ),
    )
    .unwrap();
    let host = Host::start(&config);
    let base = host.url.trim_end_matches("/mcp").to_owned();
    let client = reqwest::Client::new();

    // The metadata, at RFC 9728's address for the resource and at the root.
    for path in [
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ] {
        let metadata: Value = client
            .get(format!("{base}{path}"))
            .send()
            .await
            .unwrap()
            .json()
            .await
            .unwrap();
        assert_eq!(
            metadata,
            json!({
                "resource": RESOURCE,
                "authorization_servers": [issuer.url],
                "scopes_supported": ["mcp", "calc:add"],
                "bearer_methods_supported": ["header"],
                "resource_signing_alg_values_supported":
                    ["RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "EdDSA"],
            }),
            "{path}"
        );
    }

    // No token: where to find out how to get one, and the scope to ask for.
    let response = modern("tools/list", None, json!({}), None, &host.url)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 401);
    assert_eq!(
        response.headers()["www-authenticate"],
        "Bearer resource_metadata=\"http://127.0.0.1:1/.well-known/oauth-protected-resource/mcp\", scope=\"mcp\""
    );
    assert_eq!(
        issuer.fetches.load(Ordering::SeqCst),
        0,
        "nothing to check yet"
    );

    // A good token with both scopes calls the tool; the keys were found
    // through the issuer's metadata and fetched once.
    let good = first.sign(&claims(&issuer, "ada", "mcp calc:add"));
    let answer = succeeded(&call_add(&host.url, &good).await);
    assert_eq!(answer["result"]["structuredContent"]["sum"], 5, "{answer}");
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 1);
    let fetched_at = Instant::now();

    // Each bad token, with the reason a client (and its developer) can act on.
    let mut expired = claims(&issuer, "ada", "mcp calc:add");
    expired["exp"] = json!(now() - 120);
    let mut early = claims(&issuer, "ada", "mcp calc:add");
    early["nbf"] = json!(now() + 600);
    let mut audience = claims(&issuer, "ada", "mcp calc:add");
    audience["aud"] = json!("https://other.example.com/mcp");
    let mut foreign = claims(&issuer, "ada", "mcp calc:add");
    foreign["iss"] = json!("https://evil.example.com");
    let mut no_sub = claims(&issuer, "ada", "mcp calc:add");
    no_sub.as_object_mut().unwrap().remove("sub");
    let stranger = SigningKey::new("k-stranger");
    let forger = SigningKey::new("k1");
    let ok_claims = claims(&issuer, "ada", "mcp calc:add");
    let hmac = jsonwebtoken::encode(
        &Header::new(Algorithm::HS256),
        &ok_claims,
        &EncodingKey::from_secret(first.jwk["x"].as_str().unwrap().as_bytes()).unwrap(),
    )
    .unwrap();
    let b64 = |v: &Value| {
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(serde_json::to_vec(v).unwrap())
    };
    let none = format!(
        "{}.{}.",
        b64(&json!({"alg": "none", "typ": "JWT"})),
        b64(&ok_claims)
    );
    for (label, token, why) in [
        ("expired", first.sign(&expired), "the token has expired"),
        ("not yet valid", first.sign(&early), "not valid yet"),
        (
            "wrong audience",
            first.sign(&audience),
            "audience (aud) does not name this server",
        ),
        ("wrong issuer", first.sign(&foreign), "issuer (iss) is not"),
        ("no subject", first.sign(&no_sub), "no sub claim"),
        ("unknown key", stranger.sign(&ok_claims), "key id"),
        (
            "forged signature",
            forger.sign(&ok_claims),
            "signature does not verify",
        ),
        ("hmac", hmac, "signed with HS256"),
        ("none", none, "not a JWT"),
        ("garbage", "not-a-token".to_owned(), "not a JWT"),
    ] {
        assert_refused(
            &call_add(&host.url, &token).await,
            401,
            "invalid_token",
            why,
            label,
        );
    }

    // Valid, but without the scope every call needs: 403 with what to ask for.
    let unscoped = first.sign(&claims(&issuer, "ada", "calc:add"));
    assert_refused(
        &call_add(&host.url, &unscoped).await,
        403,
        "insufficient_scope",
        "needs the scope(s) mcp",
        "no required scope",
    );
    let (_, challenge, _) = call_add(&host.url, &unscoped).await;
    assert!(challenge.contains("scope=\"calc:add mcp\""), "{challenge}");

    // Without the tool's privilege: the tool is not listed, and calling it asks
    // for the scope that grants the privilege, beside the ones held.
    let plain = first.sign(&claims(&issuer, "bob", "mcp"));
    let listed = message(
        modern("tools/list", None, json!({}), Some(&plain), &host.url)
            .send()
            .await
            .unwrap(),
    )
    .await;
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("{listed}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        !names.contains(&"add") && names.contains(&"divide"),
        "{names:?}"
    );
    let step = call_add(&host.url, &plain).await;
    assert_refused(
        &step,
        403,
        "insufficient_scope",
        "tool add needs privilege(s) math:add",
        "step-up",
    );
    assert!(step.1.contains("scope=\"mcp calc:add\""), "{}", step.1);

    // A static token still works beside OAuth.
    succeeded(&call_add(&host.url, static_token).await);

    // Made-up key ids right after a fetch: no new fetch (the cooling time).
    for n in 0..5 {
        let mystery = SigningKey::new(&format!("k-made-up-{n}"));
        let answer = call_add(&host.url, &mystery.sign(&ok_claims)).await;
        assert_eq!(answer.0, 401, "{}", answer.2);
    }
    assert_eq!(
        issuer.fetches.load(Ordering::SeqCst),
        1,
        "unknown key ids did not cause fetches within the cooling time"
    );

    // Rotation: the issuer replaces k1 by k2. Once the cooling time since the
    // last fetch has passed, a token of k2 makes the host fetch again and pass.
    let second = SigningKey::new("k2");
    *issuer.keys.lock().unwrap() = vec![second.jwk.clone()];
    let cooling = Duration::from_secs(10);
    tokio::time::sleep(
        (fetched_at + cooling + Duration::from_millis(200))
            .saturating_duration_since(Instant::now()),
    )
    .await;
    let rotated = second.sign(&claims(&issuer, "ada", "mcp calc:add"));
    succeeded(&call_add(&host.url, &rotated).await);
    assert_eq!(issuer.fetches.load(Ordering::SeqCst), 2);
    // The old key is gone from the set the host holds now.
    let old = first.sign(&claims(&issuer, "ada", "mcp calc:add"));
    assert_refused(
        &call_add(&host.url, &old).await,
        401,
        "invalid_token",
        "key id",
        "retired key",
    );

    // The audit log names OAuth calls by subject and jti, never by the token.
    let deadline = Instant::now() + Duration::from_secs(10);
    let text = loop {
        let text = std::fs::read_to_string(&audit).unwrap_or_default();
        if text.lines().count() >= 3 || Instant::now() > deadline {
            break text;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert_eq!(lines[0]["principal"], "ada", "{text}");
    assert!(
        lines[0]["token_id"]
            .as_str()
            .unwrap()
            .starts_with("jwt:jti-ada-"),
        "{text}"
    );
    assert_eq!(lines[1]["principal"], "ops");
    assert_eq!(lines[1]["token_id"], "token-1");
    for token in [&good, &rotated] {
        assert!(
            !text.contains(token.as_str()),
            "a token is in the audit log: {text}"
        );
    }
    host.kill();
}

#[tokio::test(flavor = "multi_thread")]
async fn an_issuer_whose_keys_cannot_be_fetched_makes_the_host_answer_503() {
    // A configured jwks_uri that answers nothing: no key, no check, and the
    // caller is told to retry rather than to get a new token.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let dead = format!("http://{}/keys", listener.local_addr().unwrap());
    drop(listener);
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        format!(
            "[store]\nkind = \"sqlite\"\npath = \"{d}/r.sqlite3\"\nsigning_key_file = \"{d}/k\"\n\
             [oauth]\nresource = \"{RESOURCE}\"\nissuer = \"http://127.0.0.1:2\"\njwks_uri = \"{dead}\"\n\
             [[plugin]]\npath = \"{calc}\"\n",
            d = dir.path().display(),
            calc = guest("calc").display(),
        ),
    )
    .unwrap();
    let host = Host::start(&config);
    let key = SigningKey::new("k1");
    let token = key.sign(
        &json!({"iss": "http://127.0.0.1:2", "aud": RESOURCE, "sub": "x", "exp": now() + 60}),
    );
    let response = modern("tools/list", None, json!({}), Some(&token), &host.url)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 503);
    assert_eq!(response.headers()["retry-after"], "10");
    assert!(
        response.headers()["www-authenticate"]
            .to_str()
            .unwrap()
            .contains("resource_metadata=")
    );
    host.wait_for_log("the fetch failure", |l| l.contains("jwks_unavailable"));
    host.kill();
}
