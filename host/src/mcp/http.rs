//! Streamable HTTP: one endpoint, `/mcp`, for both eras.
//!
//! In front of rmcp's service sit two guards, in this order: the `Origin` of a
//! browser request must be a localhost origin or one the operator allowed (else
//! 403, the DNS-rebinding defence); when the configuration defines tokens, the
//! request must carry one as `Authorization: Bearer` (else 401). The caller the
//! token stands for travels to the handler in the request's extensions; without
//! tokens, a loopback server's requests carry the open caller (every privilege),
//! and nothing else serves without tokens. Then the session guard
//! ([`super::sessions`]): a handshake-era session answers only the principal that
//! created it, and their number is capped. rmcp itself checks the `Host` header
//! (loopback names, the bound address, and `host.allowed_hosts`), the
//! protocol-version and method headers of 2026-07-28, and answers
//! `-32020`/`-32022` where they do not fit.
//!
//! Between the token guard and the session guard sits the calls guard: it reads
//! a POST's JSON-RPC body for `tools/call`s, spends their rate-limit buckets
//! ([`super::limits`]; over the limit, `429 Too Many Requests` with
//! `Retry-After`), and counts them in flight until their response has been sent
//! ([`super::drain`]); once a drain has started, it answers every request 503.
//! For a single `tools/call` in a handshake-era session it also opens the
//! call's outlet, so the call's progress and log lines are written into its own
//! response stream ([`super::call_stream`]).
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
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::{StreamableHttpServerConfig, StreamableHttpService};
use tokio_util::sync::CancellationToken;

use super::call_stream::{self, CallOutlet};
use super::limits::{self, RATE_LIMITED, Refusal};
use super::oauth::{Rejection, ResourceServer};
use super::sessions::{self, SESSION_HEADER, Sessions};
use super::{Metrics, Server, Session, Tokens};
use crate::catalog::Caller;
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

/// What the token guard knows: the access rules, and whether a request without
/// a token is the open caller (a loopback server without tokens).
struct Guard {
    access: Access,
    open_loopback: bool,
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
    let service =
        StreamableHttpService::new(move || Ok(Session::new(served.clone())), manager, config);
    let mcp = Router::new()
        .nest_service("/mcp", service)
        .merge(metrics)
        .layer(middleware::from_fn_with_state(sessions, sessions::guard))
        .layer(middleware::from_fn_with_state(
            Calls {
                server: server.clone(),
                max_body,
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

/// What the calls guard needs.
#[derive(Clone)]
struct Calls {
    server: Arc<Server>,
    /// rmcp's limit on a POST body, which the guard keeps too.
    max_body: usize,
}

/// The parts of a JSON-RPC message the calls guard reads.
#[derive(serde::Deserialize)]
struct Probe {
    #[serde(default)]
    id: serde_json::Value,
    #[serde(default)]
    method: Option<String>,
    #[serde(default)]
    params: Option<ProbeParams>,
}

#[derive(serde::Deserialize)]
struct ProbeParams {
    #[serde(default)]
    name: Option<serde_json::Value>,
}

/// The `tools/call`s of a POST body (one message or a batch): each one's id and
/// tool name. A body that does not parse has none; rmcp answers it.
fn tools_calls(body: &[u8]) -> Vec<(serde_json::Value, String)> {
    let messages: Vec<Probe> = match body.iter().find(|b| !b.is_ascii_whitespace()) {
        Some(b'[') => serde_json::from_slice(body).unwrap_or_default(),
        _ => serde_json::from_slice(body)
            .map(|m| vec![m])
            .unwrap_or_default(),
    };
    messages
        .into_iter()
        .filter(|m| m.method.as_deref() == Some("tools/call"))
        .map(|m| {
            let name = m
                .params
                .and_then(|p| p.name)
                .and_then(|n| n.as_str().map(str::to_owned))
                .unwrap_or_default();
            (m.id, name)
        })
        .collect()
}

/// A JSON error body with `status`.
fn json_error(
    status: StatusCode,
    id: serde_json::Value,
    code: i32,
    message: &str,
    data: Option<serde_json::Value>,
) -> Response {
    let mut error = serde_json::json!({ "code": code, "message": message });
    if let Some(data) = data {
        error["data"] = data;
    }
    (
        status,
        axum::Json(serde_json::json!({ "jsonrpc": "2.0", "id": id, "error": error })),
    )
        .into_response()
}

/// 503 while the server drains: a load balancer retries elsewhere.
fn shutting_down() -> Response {
    tracing::info!(error.type = "shutting_down", "request refused: the server is shutting down");
    let mut response = json_error(
        StatusCode::SERVICE_UNAVAILABLE,
        serde_json::Value::Null,
        -32000,
        "Service unavailable: the server is shutting down",
        None,
    );
    response
        .headers_mut()
        .insert(header::CONNECTION, HeaderValue::from_static("close"));
    response
}

/// 429 with `Retry-After` (whole seconds, rounded up) and a JSON-RPC error.
fn too_many(id: serde_json::Value, refusal: &Refusal) -> Response {
    let mut response = json_error(
        StatusCode::TOO_MANY_REQUESTS,
        id,
        RATE_LIMITED,
        &refusal.message(),
        Some(refusal.data()),
    );
    response.headers_mut().insert(
        header::RETRY_AFTER,
        HeaderValue::from(refusal.retry_after_secs()),
    );
    response
}

/// The calls guard: refuses everything once a drain has started; for a POST
/// carrying `tools/call`s, spends their rate-limit buckets and counts them in
/// flight until the response body has been sent (or dropped); opens a
/// session call's outlet.
async fn calls(State(calls): State<Calls>, request: Request, next: Next) -> Response {
    let server = &calls.server;
    if server.drain.started() {
        return shutting_down();
    }
    if request.method() != Method::POST {
        return next.run(request).await;
    }
    let (parts, body) = request.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, calls.max_body).await else {
        return (
            StatusCode::PAYLOAD_TOO_LARGE,
            "Payload Too Large: the request body is over the limit",
        )
            .into_response();
    };
    let called = tools_calls(&bytes);
    // One call in a handshake-era session: what it sends before its result
    // goes on its own response stream (see `call_stream`).
    let outlet = (called.len() == 1
        && parts.headers.contains_key(SESSION_HEADER)
        && bytes.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{'))
    .then(CallOutlet::open);
    let mut request = Request::from_parts(parts, Body::from(bytes));
    if called.is_empty() {
        return next.run(request).await;
    }
    if let Some(refusal) = step_up(server, &request, &called) {
        return refusal;
    }
    let principal = request
        .extensions()
        .get::<Caller>()
        .and_then(|c| c.principal.clone());
    for (id, tool) in called {
        if let Err(refusal) = server.limiter.check(principal.as_deref(), &tool) {
            limits::log_refusal(server, principal.as_deref(), &tool, &refusal);
            return too_many(id, &refusal);
        }
    }
    let Some(in_flight) = server.drain.admit() else {
        return shutting_down();
    };
    let response = match outlet {
        Some((outlet, inlet)) => {
            request.extensions_mut().insert(outlet);
            call_stream::splice(next.run(request).await, inlet)
        }
        None => next.run(request).await,
    };
    let (parts, body) = response.into_parts();
    // The body holds the guard: the call counts until its answer is sent.
    let body = http_body_util::BodyExt::map_frame(body, move |frame| {
        let _ = &in_flight;
        frame
    });
    Response::from_parts(parts, Body::new(body))
}

/// For an OAuth caller who lacks the privileges of a called tool that some
/// configured scope grants: the 403 `insufficient_scope` answer naming the
/// scopes to ask for (the client may step up and retry). A tool no scope can
/// unlock is left to the handler, which answers `missing_privilege`.
fn step_up(
    server: &Server,
    request: &Request,
    called: &[(serde_json::Value, String)],
) -> Option<Response> {
    let scoped = request.extensions().get::<Scoped>()?;
    let caller = request.extensions().get::<Caller>()?;
    let catalog = server.catalog();
    for (_, name) in called {
        let Some(tool) = catalog.tool(name) else {
            continue;
        };
        let missing = caller.missing(tool.privileges());
        if missing.is_empty() {
            continue;
        }
        if let Some(scopes) = scoped.oauth.step_up(&scoped.scopes, &missing) {
            let rejection = Rejection::InsufficientScope {
                scopes,
                why: format!("tool {name} needs privilege(s) {}", missing.join(", ")),
            };
            return Some(refuse_token(&scoped.oauth, &rejection));
        }
    }
    None
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

/// Origin first (403), then the bearer token (401): a static token, else an
/// OAuth access token. The caller goes into the request's extensions, with the
/// token's id, and for an OAuth token its [`Scoped`] grant.
async fn guard(State(guard): State<Arc<Guard>>, mut request: Request, next: Next) -> Response {
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
struct Scoped {
    scopes: std::collections::BTreeSet<String>,
    oauth: Arc<ResourceServer>,
}

/// The answer to a refused OAuth token: 401 (none, or invalid), 403 (a scope
/// is missing) or 503 (the issuer's keys cannot be had), each with its
/// `WWW-Authenticate` challenge.
fn refuse_token(oauth: &ResourceServer, rejection: &Rejection) -> Response {
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
async fn protected_resource(State(oauth): State<Arc<ResourceServer>>) -> Response {
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
