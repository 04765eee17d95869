//! Streamable HTTP: one endpoint, `/mcp`, for both eras.
//!
//! In front of rmcp's service sits one guard, in this order: the `Origin` of a
//! browser request must be a localhost origin or one the operator allowed (else
//! 403, the DNS-rebinding defence); when the configuration defines tokens, the
//! request must carry one as `Authorization: Bearer` (else 401). The caller the
//! token stands for travels to the handler in the request's extensions. rmcp
//! itself checks the `Host` header, the protocol-version and method headers of
//! 2026-07-28, and answers `-32020`/`-32022` where they do not fit.
//!
//! The server binds to loopback unless told otherwise with an explicit flag.

use std::net::SocketAddr;
use std::sync::Arc;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::{Server, Session, Tokens};
use crate::catalog::Caller;

/// Who may reach the endpoint.
#[derive(Clone)]
pub struct Access {
    pub tokens: Tokens,
    /// Browser origins allowed besides `http(s)://localhost`, `127.0.0.1`, `[::1]`.
    pub allowed_origins: Vec<String>,
}

/// The address could not be served.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error(
        "refusing to listen on {0}, which is not a loopback address: pass --allow-remote to serve other machines, and configure [[token]]s"
    )]
    NotLoopback(SocketAddr),
    #[error("cannot listen on {0}: {1}")]
    Bind(SocketAddr, std::io::Error),
    #[error("the HTTP server failed: {0}")]
    Serve(std::io::Error),
}

/// The axum application: `/mcp` behind the guard.
pub fn router(
    server: Arc<Server>,
    access: Access,
    hosts: Vec<String>,
    shutdown: CancellationToken,
) -> Router {
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts)
        .with_cancellation_token(shutdown.child_token());
    let service = StreamableHttpService::new(
        move || Ok(Session::new(server.clone())),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    Router::new()
        .nest_service("/mcp", service)
        .layer(middleware::from_fn_with_state(Arc::new(access), guard))
}

/// Serves `server` on `addr` until `shutdown` is cancelled; `ready` gets the bound
/// address (useful with port 0).
///
/// # Errors
///
/// [`HttpError`] when the address is not loopback without `allow_remote`, cannot be
/// bound, or the server fails.
pub async fn serve(
    server: Arc<Server>,
    access: Access,
    addr: SocketAddr,
    allow_remote: bool,
    shutdown: CancellationToken,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), HttpError> {
    if !addr.ip().is_loopback() && !allow_remote {
        return Err(HttpError::NotLoopback(addr));
    }
    if !addr.ip().is_loopback() && !access.tokens.required() {
        tracing::warn!(%addr, "serving a non-loopback address without tokens: anyone who reaches it can call every tool");
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| HttpError::Bind(addr, e))?;
    let bound = listener.local_addr().map_err(HttpError::Serve)?;
    let mut hosts = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
    ];
    if !bound.ip().is_loopback() {
        hosts.push(bound.ip().to_string());
    }
    let app = router(server, access, hosts, shutdown.clone());
    tracing::info!(url = %format!("http://{bound}/mcp"), "serving MCP over Streamable HTTP");
    ready(bound);
    // Responses are written in pieces (an SSE stream's events): without
    // TCP_NODELAY, Nagle's algorithm meets the client's delayed ACK and each
    // response waits ~40 ms for its last piece.
    let listener =
        axum::serve::ListenerExt::tap_io(listener, |stream: &mut tokio::net::TcpStream| {
            if let Err(error) = stream.set_nodelay(true) {
                tracing::debug!(%error, "cannot set TCP_NODELAY");
            }
        });
    axum::serve(listener, app)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await
        .map_err(HttpError::Serve)
}

/// Origin first (403), then the bearer token (401); the caller goes into the
/// request's extensions.
async fn guard(State(access): State<Arc<Access>>, mut request: Request, next: Next) -> Response {
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
    let caller = if access.tokens.required() {
        let bearer = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "));
        match bearer.and_then(|token| access.tokens.caller(token)) {
            Some(caller) => caller,
            None => {
                tracing::warn!(error.type = "unauthorized", "request without a valid bearer token refused");
                return (
                    StatusCode::UNAUTHORIZED,
                    [(header::WWW_AUTHENTICATE, "Bearer")],
                    "Unauthorized: send a valid bearer token",
                )
                    .into_response();
            }
        }
    } else {
        Caller::local()
    };
    request.extensions_mut().insert(caller);
    next.run(request).await
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
