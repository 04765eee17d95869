//! The token guard in front of `/mcp`: the browser `Origin` first (403 unless
//! a localhost origin or one the operator allowed, the DNS-rebinding defence),
//! then the bearer token (401): a static `[[token]]`, else an OAuth access token
//! the issuer signed ([`super::oauth`]). The caller the token stands for goes
//! into the request's extensions for the handler; without tokens, a loopback
//! server's requests carry the open caller. Also RFC 9728's metadata document
//! of the protected resource.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::http::Access;
use super::oauth::{Rejection, ResourceServer};
use crate::catalog::Caller;

/// What the token guard knows: the access rules, and whether a request without
/// a token is the open caller (a loopback server without tokens).
pub(super) struct Guard {
    pub(super) access: Access,
    pub(super) open_loopback: bool,
}

/// Origin first (403), then the bearer token (401): a static token, else an
/// OAuth access token. The caller goes into the request's extensions, with the
/// token's id, and for an OAuth token its [`Scoped`] grant.
pub(super) async fn guard(
    State(guard): State<Arc<Guard>>,
    mut request: Request,
    next: Next,
) -> Response {
    let access = &guard.access;
    if let Some(origin) = request.headers().get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or_default();
        if !origin_allowed(origin, &access.allowed_origins) {
            tracing::warn!(origin, error.type = "origin_denied", "request from a foreign origin refused");
            return (
                StatusCode::FORBIDDEN,
                "Forbidden: this origin may not call this server",
            )
                .into_response();
        }
    }
    let caller = if access.authenticates() {
        let bearer = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(bearer_token);
        let statically = bearer.and_then(|token| access.tokens.authenticate(token));
        match (statically, bearer, &access.oauth) {
            (Some((caller, id)), _, _) => {
                request.extensions_mut().insert(id);
                caller
            }
            (None, bearer, Some(oauth)) => {
                let checked = match bearer {
                    Some(token) => oauth.authenticate(token).await,
                    None => Err(Rejection::Missing),
                };
                match checked {
                    Ok(grant) => {
                        request.extensions_mut().insert(grant.id);
                        request.extensions_mut().insert(Scoped {
                            scopes: grant.scopes,
                            oauth: oauth.clone(),
                        });
                        grant.caller
                    }
                    Err(rejection) => return refuse_token(oauth, &rejection),
                }
            }
            (None, _, None) => {
                tracing::warn!(error.type = "unauthorized", "request without a valid bearer token refused");
                return (
                    StatusCode::UNAUTHORIZED,
                    [(header::WWW_AUTHENTICATE, "Bearer")],
                    "Unauthorized: send a valid bearer token",
                )
                    .into_response();
            }
        }
    } else if guard.open_loopback {
        // A loopback server without tokens is open, by the operator's choice.
        Caller::local()
    } else {
        tracing::warn!(error.type = "unauthorized", "request without a caller refused: no tokens are configured on a server that is not loopback-only");
        return (
            StatusCode::UNAUTHORIZED,
            [(header::WWW_AUTHENTICATE, "Bearer")],
            "Unauthorized: this server has no tokens",
        )
            .into_response();
    };
    request.extensions_mut().insert(caller);
    next.run(request).await
}

/// The token of an `Authorization: Bearer` value (the scheme in any case,
/// RFC 9110, 11.1).
fn bearer_token(value: &str) -> Option<&str> {
    let (scheme, token) = value.split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// An OAuth caller's scopes, and the resource server that checked them, in
/// the request's extensions: the calls guard asks a caller who lacks a
/// tool's privileges to step up.
#[derive(Clone)]
pub(super) struct Scoped {
    pub(super) scopes: std::collections::BTreeSet<String>,
    pub(super) oauth: Arc<ResourceServer>,
}

/// The answer to a refused OAuth token: 401 (none, or invalid), 403 (a scope
/// is missing) or 503 (the issuer's keys cannot be had), each with its
/// `WWW-Authenticate` challenge.
pub(super) fn refuse_token(oauth: &ResourceServer, rejection: &Rejection) -> Response {
    let (status, body) = match rejection {
        Rejection::Missing => (
            StatusCode::UNAUTHORIZED,
            "Unauthorized: send an access token as Authorization: Bearer".to_owned(),
        ),
        Rejection::Invalid(why) => (StatusCode::UNAUTHORIZED, format!("Unauthorized: {why}")),
        Rejection::InsufficientScope { why, .. } => {
            (StatusCode::FORBIDDEN, format!("Forbidden: {why}"))
        }
        Rejection::KeysUnavailable => (
            StatusCode::SERVICE_UNAVAILABLE,
            "Service unavailable: the issuer's keys cannot be fetched to check the token"
                .to_owned(),
        ),
    };
    match rejection {
        Rejection::Invalid(why) => {
            tracing::warn!(error.type = rejection.error_type(), reason = why.as_str(), "access token refused")
        }
        Rejection::KeysUnavailable => {
            tracing::error!(error.type = rejection.error_type(), "access token not checked: no keys of the issuer")
        }
        _ => tracing::info!(error.type = rejection.error_type(), "request refused: {body}"),
    }
    let challenge = HeaderValue::from_str(&oauth.challenge(rejection))
        .unwrap_or_else(|_| HeaderValue::from_static("Bearer"));
    let mut response = (status, body).into_response();
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, challenge);
    if status == StatusCode::SERVICE_UNAVAILABLE {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(10));
    }
    response
}

/// `GET` of the protected resource metadata (RFC 9728): public, cacheable.
pub(super) async fn protected_resource(State(oauth): State<Arc<ResourceServer>>) -> Response {
    (
        [(header::CACHE_CONTROL, "max-age=300")],
        axum::Json(oauth.metadata()),
    )
        .into_response()
}

/// Localhost origins on any port, and the ones the operator allowed exactly.
fn origin_allowed(origin: &str, allowed: &[String]) -> bool {
    if allowed.iter().any(|a| a == origin) {
        return true;
    }
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let host = if let Some(v6) = rest.strip_prefix('[') {
        v6.split(']').next().unwrap_or_default()
    } else {
        rest.split(':').next().unwrap_or_default()
    };
    matches!(host, "localhost" | "127.0.0.1" | "::1")
}

#[cfg(test)]
mod tests {
    use super::origin_allowed;

    #[test]
    fn only_local_and_allowed_origins_pass() {
        for ok in [
            "http://localhost",
            "http://localhost:6274",
            "https://127.0.0.1:8443",
            "http://[::1]:3000",
        ] {
            assert!(origin_allowed(ok, &[]), "{ok}");
        }
        for bad in [
            "http://evil.example.com",
            "http://localhost.evil.com",
            "null",
            "file://",
            "http://127.0.0.1.evil.com",
        ] {
            assert!(!origin_allowed(bad, &[]), "{bad}");
        }
        assert!(origin_allowed(
            "https://app.example.com",
            &["https://app.example.com".to_owned()]
        ));
    }
}
