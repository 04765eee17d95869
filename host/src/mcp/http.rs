//! Streamable HTTP: one endpoint, `/mcp`, for both eras.
//!
//! In front of rmcp's service sit three guards, in this order:
//! - the token guard ([`super::token_guard`]): a browser's `Origin` must be a
//!   localhost origin or one the operator allowed (else 403, the DNS-rebinding
//!   defence); when the configuration defines tokens, the request must carry
//!   one as `Authorization: Bearer` (else 401). The caller the token stands for
//!   travels to the handler in the request's extensions; without tokens, a
//!   loopback server's requests carry the open caller (every privilege), and
//!   nothing else serves without tokens;
//! - the calls guard ([`super::calls_guard`]): the drain's 503, the OAuth step
//!   up, the rate limits of `tools/call`s, the count of calls in flight, and a
//!   session call's own response stream ([`super::call_stream`]);
//! - the session guard ([`super::sessions`]): a handshake-era session answers
//!   only the principal that created it, and their number is capped.
//!
//! rmcp itself checks the `Host` header (loopback names, the bound address, and
//! `host.allowed_hosts`), the protocol-version and method headers of
//! 2026-07-28, and answers `-32020`/`-32022` where they do not fit.
//!
//! `GET /healthz` (alive) and `GET /readyz` (the catalog is loaded, the result
//! store answers a round trip, no drain has started) sit outside every guard:
//! they need no token and tell nothing but `ok` or what is not ready.
//!
//! On shutdown ([`serve`]'s token), the listener stops accepting, the calls in
//! flight finish up to the drain time, then open streams (SSE, subscriptions)
//! end and the server returns.
//!
//! The server binds to loopback unless told otherwise with an explicit flag, and
//! with that flag it needs tokens.
//!
//! `GET /metrics` (Prometheus text) sits behind the same Origin and token
//! guards, so with tokens configured a scraper sends one of them, and behind a
//! `Host` check of its own (the names rmcp accepts for `/mcp`), so a web page
//! that rebinds its name to the loopback address cannot read it. The same
//! route, alone, serves on `host.metrics_addr` ([`serve_metrics`]), for a stdio
//! server or an admin network.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Request, State};
use axum::http::{StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::calls_guard::{Calls, calls};
use super::oauth::ResourceServer;
use super::sessions::{self, Sessions};
use super::tasks::edge::EdgeSessions;
use super::token_guard::{Guard, guard, protected_resource};
use super::{Metrics, Server, Session, Tokens};
use crate::config::HostSettings;

/// Who may reach the endpoint.
#[derive(Clone)]
pub struct Access {
    pub tokens: Tokens,
    /// OAuth 2.1 access tokens (`[oauth]`), beside or instead of `tokens`.
    pub oauth: Option<Arc<ResourceServer>>,
    /// Browser origins allowed besides `http(s)://localhost`, `127.0.0.1`, `[::1]`.
    pub allowed_origins: Vec<String>,
    /// `Host` values allowed besides `localhost`, `127.0.0.1`, `::1` and the bound
    /// address (`host.allowed_hosts`, for a proxy in front).
    pub allowed_hosts: Vec<String>,
    /// Handshake-era sessions open at once (`host.max_sessions`).
    pub max_sessions: usize,
    /// How long a shutdown lets calls in flight finish (`host.drain_secs`).
    pub drain: Duration,
}

impl Access {
    /// Access by `tokens` alone, with the default hosts, origins and cap.
    pub fn with_tokens(tokens: Tokens) -> Access {
        Access {
            tokens,
            oauth: None,
            allowed_origins: Vec::new(),
            allowed_hosts: Vec::new(),
            max_sessions: HostSettings::DEFAULT_MAX_SESSIONS,
            drain: Duration::from_secs(HostSettings::DEFAULT_DRAIN_SECS),
        }
    }

    /// Whether every request needs a bearer token: static tokens or OAuth are
    /// configured.
    pub fn authenticates(&self) -> bool {
        self.tokens.required() || self.oauth.is_some()
    }
}

/// The address could not be served.
#[derive(Debug, thiserror::Error)]
pub enum HttpError {
    #[error(
        "refusing to listen on {0}, which is not a loopback address: pass --allow-remote to serve other machines, and configure [[token]]s"
    )]
    NotLoopback(SocketAddr),
    #[error(
        "refusing --allow-remote without tokens: anyone who reaches {0} could call every tool; configure at least one [[token]] or [oauth] (see docs/operating.md)"
    )]
    RemoteWithoutTokens(SocketAddr),
    #[error(
        "refusing host.metrics_addr = {0} without tokens: it is not a loopback address, and anyone who reaches it could read the metrics; configure [[token]]s or use 127.0.0.1"
    )]
    MetricsWithoutTokens(SocketAddr),
    #[error("cannot listen on {0}: {1}")]
    Bind(SocketAddr, std::io::Error),
    #[error("the HTTP server failed: {0}")]
    Serve(std::io::Error),
    #[error(
        "{0} call(s) were still running when the drain time (host.drain_secs) ran out; they were cut off"
    )]
    DrainTimedOut(usize),
}

/// The axum application: `/mcp` behind the token guard, the calls guard and the
/// session guard; the probes beside it, behind none.
fn router(
    server: Arc<Server>,
    guard_state: Guard,
    hosts: Vec<String>,
    streams: CancellationToken,
) -> Router {
    let config = StreamableHttpServerConfig::default()
        .with_allowed_hosts(hosts.clone())
        .with_cancellation_token(streams);
    let max_body = config.max_request_body_bytes;
    let manager = Arc::new(LocalSessionManager::default());
    let sessions = Sessions::new(manager.clone(), guard_state.access.max_sessions);
    let served = server.clone();
    let oauth = guard_state.access.oauth.clone();
    let metrics = metrics_route(server.metrics.clone(), hosts);
    // 2025-11-25's tasks need what rmcp does not carry (see `tasks::edge`).
    let edged = Arc::new(EdgeSessions::new(manager, server.clone()));
    let service =
        StreamableHttpService::new(move || Ok(Session::new(served.clone())), edged, config);
    let mcp = Router::new()
        .nest_service("/mcp", service)
        .merge(metrics)
        .layer(middleware::from_fn_with_state(sessions, sessions::guard))
        .layer(middleware::from_fn_with_state(
            Calls {
                server: server.clone(),
                max_body,
                replays: Arc::default(),
            },
            calls,
        ))
        .layer(middleware::from_fn_with_state(Arc::new(guard_state), guard));
    let mut probes = Router::new()
        .route("/healthz", axum::routing::get(healthz))
        .route("/readyz", axum::routing::get(readyz))
        .with_state(server);
    if let Some(oauth) = oauth {
        // RFC 9728's address for the resource, and the root one some clients try.
        const ROOT: &str = "/.well-known/oauth-protected-resource";
        let path = oauth.metadata_path().to_owned();
        let mut metadata = Router::new().route(&path, get(protected_resource));
        if path != ROOT {
            metadata = metadata.route(ROOT, get(protected_resource));
        }
        probes = probes.merge(metadata.with_state(oauth));
    }
    mcp.merge(probes)
        .layer(middleware::from_fn(super::trace::http_span))
}

/// `GET /healthz`: the process serves HTTP.
async fn healthz() -> Response {
    (
        [(header::CACHE_CONTROL, "no-store")],
        axum::Json(serde_json::json!({ "status": "ok" })),
    )
        .into_response()
}

/// How long `/readyz` waits for the store's round trip.
const STORE_PING_TIMEOUT: Duration = Duration::from_secs(2);

/// `GET /readyz`: 200 when the catalog is loaded, the store answers and no drain
/// has started; else 503 naming the check that failed (never why in detail: the
/// store's error goes to the log).
async fn readyz(State(server): State<Arc<Server>>) -> Response {
    let catalog = "ok";
    let store = match tokio::time::timeout(STORE_PING_TIMEOUT, server.store.ping()).await {
        Ok(Ok(())) => "ok",
        Ok(Err(error)) => {
            tracing::warn!(error.type = "not_ready", %error, "readiness: the result store did not answer");
            "unreachable"
        }
        Err(_) => {
            tracing::warn!(error.type = "not_ready", "readiness: the result store did not answer within 2 s");
            "timeout"
        }
    };
    let draining = server.drain.started();
    let ready = store == "ok" && !draining;
    let mut checks = serde_json::json!({ "catalog": catalog, "store": store });
    if draining {
        checks["shutdown"] = "draining".into();
    }
    let status = if ready {
        StatusCode::OK
    } else {
        StatusCode::SERVICE_UNAVAILABLE
    };
    (
        status,
        [(header::CACHE_CONTROL, "no-store")],
        axum::Json(serde_json::json!({
            "status": if ready { "ready" } else { "not_ready" },
            "checks": checks,
        })),
    )
        .into_response()
}

/// Serves `server` on `addr` until `shutdown` is cancelled; `ready` gets the bound
/// address (useful with port 0).
///
/// # Errors
///
/// [`HttpError`] when the address is not loopback without `allow_remote`,
/// `allow_remote` comes without tokens, the address cannot be bound, or the
/// server fails.
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
    if allow_remote && !access.authenticates() {
        return Err(HttpError::RemoteWithoutTokens(addr));
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| HttpError::Bind(addr, e))?;
    let bound = listener.local_addr().map_err(HttpError::Serve)?;
    let hosts = host_names(bound, &access.allowed_hosts);
    let guard_state = Guard {
        open_loopback: !access.authenticates() && bound.ip().is_loopback(),
        access,
    };
    let drain = guard_state.access.drain;
    // Cancelled after the drain: ends the SSE streams and subscriptions still open.
    let streams = CancellationToken::new();
    let app = router(server.clone(), guard_state, hosts, streams.clone());
    tracing::info!(url = %format!("http://{bound}/mcp"), "serving MCP over Streamable HTTP");
    ready(bound);
    let stopping = shutdown.clone();
    let serving = axum::serve(without_nagle(listener), app)
        .with_graceful_shutdown(async move { stopping.cancelled().await })
        .into_future();
    tokio::pin!(serving);
    tokio::select! {
        served = &mut serving => return served.map_err(HttpError::Serve),
        () = shutdown.cancelled() => {}
    }
    // The listener no longer accepts; new requests on open connections get 503.
    server.drain.start();
    let in_flight = server.drain.in_flight();
    tracing::info!(
        in_flight,
        drain_secs = drain.as_secs(),
        "shutting down: finishing the calls in flight"
    );
    // The server may finish first (every connection closed): then it must not be
    // polled again below.
    let (drained, finished) = tokio::select! {
        drained = server.drain.idle(drain) => (drained, false),
        served = &mut serving => {
            served.map_err(HttpError::Serve)?;
            (true, true)
        }
    };
    let cut = if drained { 0 } else { server.drain.in_flight() };
    if cut > 0 {
        tracing::warn!(error.type = "drain_timeout", calls = cut, "the drain time ran out; ending the calls still running");
    }
    // Every answer is sent: the open streams end, and with them the connections.
    streams.cancel();
    if !finished {
        match tokio::time::timeout(STREAMS_CLOSE, &mut serving).await {
            Ok(served) => served.map_err(HttpError::Serve)?,
            Err(_) => {
                tracing::warn!(error.type = "drain_timeout", "connections still open after the drain; closing them")
            }
        }
    }
    if cut > 0 {
        return Err(HttpError::DrainTimedOut(cut));
    }
    tracing::info!("drained: every call in flight answered");
    Ok(())
}

/// The names a `Host` header may carry for a server bound to `bound`.
fn host_names(bound: SocketAddr, allowed: &[String]) -> Vec<String> {
    let mut hosts = vec![
        "localhost".to_owned(),
        "127.0.0.1".to_owned(),
        "::1".to_owned(),
    ];
    if !bound.ip().is_loopback() {
        hosts.push(bound.ip().to_string());
    }
    hosts.extend(allowed.iter().cloned());
    hosts
}

/// `GET /metrics` behind the `Host` check; 404 without a recorder.
fn metrics_route(metrics: Option<Metrics>, hosts: Vec<String>) -> Router {
    Router::new()
        .route("/metrics", get(metrics_text).with_state(metrics))
        .layer(middleware::from_fn_with_state(Arc::new(hosts), host_guard))
}

async fn metrics_text(State(metrics): State<Option<Metrics>>) -> Response {
    match metrics {
        Some(metrics) => (
            [(
                header::CONTENT_TYPE,
                "text/plain; version=0.0.4; charset=utf-8",
            )],
            metrics.render(),
        )
            .into_response(),
        None => (StatusCode::NOT_FOUND, "Not Found: no metrics are recorded").into_response(),
    }
}

/// Refuses (403) a request whose `Host` is none of `hosts` (a name, or a
/// `name:port` matched whole).
async fn host_guard(
    State(hosts): State<Arc<Vec<String>>>,
    request: Request,
    next: Next,
) -> Response {
    let host = request
        .headers()
        .get(header::HOST)
        .and_then(|v| v.to_str().ok())
        .unwrap_or_default();
    let name = match host.strip_prefix('[') {
        Some(v6) => v6.split(']').next().unwrap_or_default(),
        None => host.rsplit_once(':').map_or(host, |(name, _)| name),
    };
    if hosts
        .iter()
        .any(|allowed| allowed == host || allowed == name)
    {
        return next.run(request).await;
    }
    tracing::warn!(host, error.type = "host_denied", "a /metrics request for a host this server does not serve refused");
    (
        StatusCode::FORBIDDEN,
        "Forbidden: this host is not served here",
    )
        .into_response()
}

/// Serves `GET /metrics` alone on `addr` (`host.metrics_addr`) until `shutdown`
/// is cancelled, behind the Origin, token and `Host` guards of `/mcp`: without
/// tokens only a loopback address serves, to the open caller.
///
/// # Errors
///
/// [`HttpError`] when the address is not loopback and no token is configured,
/// cannot be bound, or the server fails.
pub async fn serve_metrics(
    metrics: Metrics,
    access: Access,
    addr: SocketAddr,
    shutdown: CancellationToken,
    ready: impl FnOnce(SocketAddr),
) -> Result<(), HttpError> {
    if !addr.ip().is_loopback() && !access.authenticates() {
        return Err(HttpError::MetricsWithoutTokens(addr));
    }
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| HttpError::Bind(addr, e))?;
    let bound = listener.local_addr().map_err(HttpError::Serve)?;
    let hosts = host_names(bound, &access.allowed_hosts);
    let guard_state = Guard {
        open_loopback: !access.authenticates() && bound.ip().is_loopback(),
        access,
    };
    let app = metrics_route(Some(metrics), hosts)
        .layer(middleware::from_fn_with_state(Arc::new(guard_state), guard));
    tracing::info!(url = %format!("http://{bound}/metrics"), "serving metrics");
    ready(bound);
    axum::serve(without_nagle(listener), app)
        .with_graceful_shutdown(async move { shutdown.cancelled().await })
        .await
        .map_err(HttpError::Serve)
}

/// The listener with `TCP_NODELAY` on every accepted connection. Responses are
/// written in pieces (an SSE stream's events): without it, Nagle's algorithm
/// meets the client's delayed ACK and each response waits ~40 ms for its last
/// piece.
fn without_nagle(
    listener: tokio::net::TcpListener,
) -> impl axum::serve::Listener<Addr = SocketAddr> {
    axum::serve::ListenerExt::tap_io(listener, |stream: &mut tokio::net::TcpStream| {
        if let Err(error) = stream.set_nodelay(true) {
            tracing::debug!(%error, "cannot set TCP_NODELAY");
        }
    })
}

/// How long connections may take to close once the streams are told to end.
const STREAMS_CLOSE: Duration = Duration::from_secs(5);
