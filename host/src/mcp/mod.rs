//! The MCP server: JSON-RPC on rmcp, over stdio and Streamable HTTP, serving the
//! handshake era (2024-11-05 to 2025-11-25) and the stateless 2026-07-28 era on the
//! same process and endpoint.
//!
//! A request flows: transport (and, on HTTP, the Origin and token checks of
//! [`http`]) → [`handler::Session`] → the catalog → the runtime → the mapper, which
//! alone shapes the result for the request's revision and output mode.

pub mod audit;
mod auth;
pub mod handler;
pub mod http;
pub mod prometheus;
pub mod reload;
mod sessions;
mod tools;

pub use audit::Audit;
pub use auth::{TokenId, Tokens};
pub use handler::{OUTPUT_MODE_HEADER, OUTPUT_MODE_KEY, Session};
pub use prometheus::Metrics;

use std::sync::{Arc, Mutex};

use rmcp::{Peer, RoleServer, ServiceExt};

use crate::catalog::Catalog;
use crate::render::{Mapper, OutputMode};
use crate::store::ResultStore;
use tools::Listings;

/// What every session shares.
pub struct Server {
    /// The current catalog and its listings; hot load replaces both whole.
    served: std::sync::RwLock<Arc<Served>>,
    pub(crate) mapper: Mapper,
    pub(crate) store: Arc<dyn ResultStore>,
    pub(crate) default_mode: OutputMode,
    /// Handshake-era peers, for `notifications/tools/list_changed`.
    pub(crate) peers: Mutex<Vec<Peer<RoleServer>>>,
    /// Wakes 2026-07-28 subscribers when the catalog changes.
    pub(crate) changes: tokio::sync::broadcast::Sender<()>,
    /// One line per call (`host.audit`).
    pub(crate) audit: Audit,
    /// What `GET /metrics` renders; `None` serves no `/metrics`.
    pub(crate) metrics: Option<Metrics>,
}

/// What a server reports about its calls besides answering them.
#[derive(Clone, Default)]
pub struct Observers {
    pub audit: Audit,
    pub metrics: Option<Metrics>,
}

impl Server {
    /// A server without audit log or `/metrics`.
    pub fn new(
        catalog: Arc<Catalog>,
        mapper: Mapper,
        store: Arc<dyn ResultStore>,
        default_mode: OutputMode,
    ) -> Arc<Server> {
        Server::observed(catalog, mapper, store, default_mode, Observers::default())
    }

    /// A server that writes its calls to `observers.audit` and serves
    /// `observers.metrics` at `GET /metrics`.
    pub fn observed(
        catalog: Arc<Catalog>,
        mapper: Mapper,
        store: Arc<dyn ResultStore>,
        default_mode: OutputMode,
        observers: Observers,
    ) -> Arc<Server> {
        let (changes, _) = tokio::sync::broadcast::channel(16);
        Arc::new(Server {
            served: std::sync::RwLock::new(Arc::new(Served::new(catalog))),
            mapper,
            store,
            default_mode,
            peers: Mutex::new(Vec::new()),
            changes,
            audit: observers.audit,
            metrics: observers.metrics,
        })
    }

    /// The audit log, to flush at the end of serving.
    pub fn audit(&self) -> &Audit {
        &self.audit
    }
}

/// A catalog and its `tools/list` entries, built once together.
pub(crate) struct Served {
    pub(crate) catalog: Arc<Catalog>,
    pub(crate) listings: Listings,
}

impl Served {
    fn new(catalog: Arc<Catalog>) -> Served {
        let listings = Listings::of(&catalog);
        Served { catalog, listings }
    }
}

impl Server {
    /// The catalog as it is now; a call keeps the one it started with.
    pub fn catalog(&self) -> Arc<Catalog> {
        self.served().catalog.clone()
    }

    /// The catalog as it is now, with its listings.
    pub(crate) fn served(&self) -> Arc<Served> {
        self.served.read().expect("catalog lock").clone()
    }

    /// Replaces the catalog and tells every client: `notifications/tools/list_changed`
    /// to handshake-era sessions, and to 2026-07-28 `subscriptions/listen` streams.
    pub async fn replace_catalog(&self, catalog: Arc<Catalog>) {
        let served = Arc::new(Served::new(catalog));
        *self.served.write().expect("catalog lock") = served;
        let peers: Vec<Peer<RoleServer>> = {
            let mut peers = self.peers.lock().expect("peers lock");
            peers.retain(|peer| !peer.is_transport_closed());
            peers.clone()
        };
        for peer in peers {
            let _ = peer.notify_tool_list_changed().await;
        }
        let _ = self.changes.send(());
    }
}

/// Serves one client on stdin and stdout until stdin closes.
///
/// # Errors
///
/// When the transport fails before the first message.
pub async fn serve_stdio(server: Arc<Server>) -> anyhow::Result<()> {
    let (stdin, stdout) = rmcp::transport::stdio();
    let input_closed = tokio_util::sync::CancellationToken::new();
    let stdin = EndSignal {
        inner: stdin,
        ended: input_closed.clone(),
    };
    let session = Session::with_input(server, input_closed);
    let open = metrics::gauge!("toolhost_sessions_open", "transport" => "stdio");
    open.increment(1.0);
    let served = serve_session(session, stdin, stdout).await;
    open.decrement(1.0);
    served
}

async fn serve_session(
    session: Session,
    stdin: EndSignal<tokio::io::Stdin>,
    stdout: tokio::io::Stdout,
) -> anyhow::Result<()> {
    let running = match session.serve((stdin, stdout)).await {
        Ok(running) => running,
        // A client that closes stdin before its first request is done, not failed.
        Err(rmcp::service::ServerInitializeError::ConnectionClosed(_)) => {
            tracing::info!("stdin closed before the first request");
            return Ok(());
        }
        Err(error) => return Err(error.into()),
    };
    let reason = running.waiting().await?;
    tracing::info!(?reason, "stdio client finished");
    Ok(())
}

/// Client input that cancels `ended` when it reaches its end, so long-lived
/// handlers (a 2026-07-28 `subscriptions/listen`) stop when the client has gone.
struct EndSignal<R> {
    inner: R,
    ended: tokio_util::sync::CancellationToken,
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for EndSignal<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let (before, room) = (buf.filled().len(), buf.remaining() > 0);
        let poll = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        // Zero bytes into a buffer with room is the end of the input.
        if room && matches!(poll, std::task::Poll::Ready(Ok(()))) && buf.filled().len() == before {
            self.ended.cancel();
        }
        poll
    }
}
