//! The calls guard, between the token guard and the session guard: once a
//! drain has started it answers every request 503; for a POST it reads the
//! JSON-RPC body for `tools/call`s, asks an OAuth caller to step up when a
//! scope would grant a called tool's privileges (403), spends the calls'
//! rate-limit buckets ([`super::limits`]; over the limit, `429 Too Many
//! Requests` with `Retry-After`), counts them in flight until their response
//! has been sent ([`super::drain`]), and for a single call in a handshake-era
//! session opens the call's outlet ([`super::call_stream`]), and for a single
//! call the slot of its result's text ([`super::carried`]), whose placeholder it
//! replaces on every event stream of the request's session.

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::common::http_header::HEADER_MCP_PROTOCOL_VERSION;

use super::Server;
use super::call_stream::{self, CallOutlet};
use super::carried::{self, SessionTexts, TextSlot};
use super::handler::OUTPUT_MODE_HEADER;
use super::limits::{self, RATE_LIMITED, Refusal};
use super::oauth::Rejection;
use super::replays::Replays;
use super::sessions::SESSION_HEADER;
use super::tasks::edge::{Augmented, TaskAsked};
use super::token_guard::{Scoped, refuse_token};
use crate::catalog::Caller;
use crate::render::Revision;

/// What the calls guard needs.
#[derive(Clone)]
pub(super) struct Calls {
    pub(super) server: Arc<Server>,
    /// rmcp's limit on a POST body, which the guard keeps too.
    pub(super) max_body: usize,
    /// The texts of the sessions' results, for their replays.
    pub(super) replays: Arc<Replays>,
}

/// The kept texts of the session `request` names, if it names one.
fn session_texts(calls: &Calls, request: &axum::http::request::Parts) -> Option<Arc<SessionTexts>> {
    let header = |name: &str| {
        request
            .headers
            .get(name)
            .and_then(|value| value.to_str().ok())
    };
    let id = header(SESSION_HEADER)?;
    // 2025-03-26 clients send no version header; later ones must.
    let revision = header(HEADER_MCP_PROTOCOL_VERSION)
        .and_then(|version| version.parse().ok())
        .unwrap_or(Revision::V2025_03_26);
    let mode = header(OUTPUT_MODE_HEADER)
        .and_then(|mode| mode.parse().ok())
        .unwrap_or(calls.server.default_mode);
    Some(SessionTexts::new(calls.replays.clone(), id, revision, mode))
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
    /// 2025-11-25's `task`, which rmcp does not parse (see `tasks::edge`).
    /// Read as any value, so that a malformed one cannot make the guard
    /// miss the call.
    #[serde(default)]
    task: Option<serde_json::Value>,
}

/// One `tools/call` of a POST body, as the guard reads it.
struct Call {
    id: serde_json::Value,
    tool: String,
    /// The `task` it asks for, when it is one the edge can read.
    task: Option<TaskAsked>,
}

/// Whether a POST body is a JSON-RPC batch (an array) rather than one message.
fn is_batch(body: &[u8]) -> bool {
    body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[')
}

/// The `tools/call`s of a POST body (one message or a batch). A body that does
/// not parse has none; rmcp answers it.
fn tools_calls(body: &[u8]) -> Vec<Call> {
    let messages: Vec<Probe> = if is_batch(body) {
        serde_json::from_slice(body).unwrap_or_default()
    } else {
        serde_json::from_slice(body)
            .map(|m| vec![m])
            .unwrap_or_default()
    };
    messages
        .into_iter()
        .filter(|m| m.method.as_deref() == Some("tools/call"))
        .map(|m| {
            let (name, task) = m.params.map_or((None, None), |p| (p.name, p.task));
            Call {
                id: m.id,
                tool: name
                    .and_then(|n| n.as_str().map(str::to_owned))
                    .unwrap_or_default(),
                task: task.and_then(|task| serde_json::from_value(task).ok()),
            }
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
/// session call's outlet and a call's text slot, and splices a session's
/// kept texts into its streams.
pub(super) async fn calls(State(calls): State<Calls>, request: Request, next: Next) -> Response {
    let server = &calls.server;
    if server.drain.started() {
        return shutting_down();
    }
    if request.method() != Method::POST {
        // A session's standalone or resumed stream may send a kept result again.
        let (parts, body) = request.into_parts();
        let session = session_texts(&calls, &parts);
        let response = next.run(Request::from_parts(parts, body)).await;
        return match session {
            Some(session) => carried::splice_session(response, session),
            None => response,
        };
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
    let augmented: Vec<_> = called
        .iter()
        .filter_map(|call| Some((serde_json::from_value(call.id.clone()).ok()?, call.task?)))
        .collect();
    // One call in a handshake-era session: what it sends before its result
    // goes on its own response stream (see `call_stream`).
    let one_call = called.len() == 1 && !is_batch(&bytes);
    let session = one_call.then(|| session_texts(&calls, &parts)).flatten();
    let outlet = session.is_some().then(CallOutlet::open);
    // One call: its result may go out as the text the mapper wrote (see
    // `carried`).
    let slot = one_call.then(|| match session {
        Some(session) => TextSlot::in_session(session),
        None => TextSlot::open(),
    });
    let mut request = Request::from_parts(parts, Body::from(bytes));
    if !augmented.is_empty() {
        request.extensions_mut().insert(Augmented(augmented));
    }
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
    for Call { id, tool, .. } in called {
        if let Err(refusal) = server.limiter.check(principal.as_deref(), &tool) {
            limits::log_refusal(server, principal.as_deref(), &tool, &refusal);
            return too_many(id, &refusal);
        }
    }
    let Some(in_flight) = server.drain.admit() else {
        return shutting_down();
    };
    if let Some(slot) = &slot {
        request.extensions_mut().insert(slot.clone());
    }
    let response = match outlet {
        Some((outlet, inlet)) => {
            request.extensions_mut().insert(outlet);
            call_stream::splice(next.run(request).await, inlet)
        }
        None => next.run(request).await,
    };
    let response = match slot {
        Some(slot) => carried::splice_call(response, slot),
        None => response,
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
fn step_up(server: &Server, request: &Request, called: &[Call]) -> Option<Response> {
    let scoped = request.extensions().get::<Scoped>()?;
    let caller = request.extensions().get::<Caller>()?;
    let catalog = server.catalog();
    for Call { tool: name, .. } in called {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_call_is_read_with_its_task_and_a_malformed_task_hides_no_call() {
        let asked = tools_calls(
            br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"slow","task":{"ttl":5}}}"#,
        );
        assert_eq!(asked.len(), 1);
        assert_eq!(asked[0].tool, "slow");
        assert_eq!(asked[0].task, Some(TaskAsked { ttl: Some(5) }));
        // Still a call the rate limits count, only not a task.
        let malformed = tools_calls(
            br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow","task":"soon"}}"#,
        );
        assert_eq!(malformed.len(), 1);
        assert_eq!(malformed[0].tool, "slow");
        assert_eq!(malformed[0].task, None);
    }
}
