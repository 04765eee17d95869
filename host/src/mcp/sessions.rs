//! Handshake-era HTTP sessions (`Mcp-Session-Id`, rmcp's `LocalSessionManager`),
//! bound to the principal that created them and capped in number.
//!
//! A guard behind the token check records, from each `initialize` response, the
//! new session's id with the principal of the request that created it. A later
//! request naming that id with another principal's token (or an id the guard
//! never recorded) is answered 404, exactly as rmcp answers an unknown session.
//! Each request of a session marks it used; when a new session would exceed
//! `host.max_sessions` (default 1,000), the sessions idle longest are closed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use axum::extract::{Request, State};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::SessionManager;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;

use crate::catalog::Caller;

/// The session header of Streamable HTTP.
pub(super) const SESSION_HEADER: &str = "mcp-session-id";

/// The open sessions' owners, and the manager that holds the sessions.
pub struct Sessions {
    manager: Arc<LocalSessionManager>,
    max: usize,
    owners: Mutex<HashMap<String, Owner>>,
}

struct Owner {
    /// `None`: the open caller of a loopback server without tokens.
    principal: Option<String>,
    last_use: Instant,
}

/// What the guard decides for a request naming a session.
#[derive(Debug, PartialEq, Eq)]
enum Check {
    Owner,
    /// Another principal's session, or one never recorded.
    NotFound,
}

impl Sessions {
    /// At most `max` sessions of `manager` at once.
    pub fn new(manager: Arc<LocalSessionManager>, max: usize) -> Arc<Sessions> {
        Arc::new(Sessions {
            manager,
            max,
            owners: Mutex::new(HashMap::new()),
        })
    }

    fn check(&self, id: &str, principal: Option<&str>) -> Check {
        let mut owners = self.owners.lock().expect("sessions lock");
        match owners.get_mut(id) {
            Some(owner) if owner.principal.as_deref() == principal => {
                owner.last_use = Instant::now();
                Check::Owner
            }
            _ => Check::NotFound,
        }
    }

    fn forget(&self, id: &str) {
        let mut owners = self.owners.lock().expect("sessions lock");
        owners.remove(id);
        open_sessions(owners.len());
    }

    /// Records a new session of `principal`, then closes the sessions idle
    /// longest while there are more than the cap.
    async fn adopt(&self, id: String, principal: Option<String>) {
        // Sessions rmcp ended on its own (idle timeout, transport closed) leave
        // the record first, so they do not count. Only needed when the new one
        // would go over the cap: below it, nothing is closed (and the records stay
        // bounded by the cap).
        let live: Vec<String> = {
            let owners = self.owners.lock().expect("sessions lock");
            if owners.len() < self.max {
                Vec::new()
            } else {
                owners.keys().cloned().collect()
            }
        };
        let mut ended = Vec::new();
        for known in live {
            if !self
                .manager
                .has_session(&known.as_str().into())
                .await
                .unwrap_or(false)
            {
                ended.push(known);
            }
        }
        let evicted = {
            let mut owners = self.owners.lock().expect("sessions lock");
            for gone in &ended {
                owners.remove(gone);
            }
            owners.insert(
                id.clone(),
                Owner {
                    principal,
                    last_use: Instant::now(),
                },
            );
            let mut evicted = Vec::new();
            while owners.len() > self.max {
                let Some(oldest) = owners
                    .iter()
                    .filter(|(known, _)| **known != id)
                    .min_by_key(|(_, owner)| owner.last_use)
                    .map(|(known, _)| known.clone())
                else {
                    break;
                };
                owners.remove(&oldest);
                evicted.push(oldest);
            }
            open_sessions(owners.len());
            evicted
        };
        for oldest in evicted {
            tracing::info!(session = %oldest, max_sessions = self.max, error.type = "resource_limit", "closing the session idle longest: host.max_sessions reached");
            let manager = self.manager.clone();
            tokio::spawn(async move {
                let _ = manager.close_session(&oldest.as_str().into()).await;
            });
        }
    }
}

/// `toolhost_sessions_open{transport="http"}`: the sessions recorded here.
/// One rmcp ended on its own (an idle timeout, a closed stream) counts until a
/// new session past the cap looks, or its client deletes it.
fn open_sessions(count: usize) {
    metrics::gauge!("toolhost_sessions_open", "transport" => "http").set(count as f64);
}

/// The guard: a request naming a session must come from its owner (else 404);
/// a response that opens a session records it.
pub async fn guard(
    State(sessions): State<Arc<Sessions>>,
    request: Request,
    next: Next,
) -> Response {
    let principal = request
        .extensions()
        .get::<Caller>()
        .map(|caller| caller.principal.clone());
    let Some(principal) = principal else {
        // The token guard runs first and always leaves a caller; fail closed.
        return (StatusCode::UNAUTHORIZED, "Unauthorized").into_response();
    };
    let named = request
        .headers()
        .get(SESSION_HEADER)
        .map(|v| v.to_str().unwrap_or_default().to_owned());
    let closing = request.method() == Method::DELETE;
    if let Some(id) = &named
        && sessions.check(id, principal.as_deref()) == Check::NotFound
    {
        tracing::warn!(session = %id, principal = principal.as_deref().unwrap_or("<open>"), error.type = "session_denied", "request for a session this caller does not own (or an unknown one)");
        return (StatusCode::NOT_FOUND, "Not Found: Session not found").into_response();
    }
    let response = next.run(request).await;
    match named {
        Some(id) if closing && response.status().is_success() => sessions.forget(&id),
        Some(_) => {}
        None => {
            if let Some(id) = response
                .headers()
                .get(SESSION_HEADER)
                .and_then(|v| v.to_str().ok())
            {
                sessions.adopt(id.to_owned(), principal).await;
            }
        }
    }
    response
}
