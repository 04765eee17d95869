//! The MCP server: JSON-RPC on rmcp, over stdio and Streamable HTTP, serving the
//! handshake era (2024-11-05 to 2025-11-25) and the stateless 2026-07-28 era on the
//! same process and endpoint.
//!
//! A request flows: transport (and, on HTTP, the Origin and token checks of
//! [`http`]) → [`handler::Session`] → the catalog → the runtime → the mapper, which
//! alone shapes the result for the request's revision and output mode.

mod asking;
pub mod audit;
mod auth;
pub mod call_stream;
mod calls_guard;
mod carried;
pub mod drain;
mod events;
pub mod handler;
pub mod http;
pub mod input;
mod input_end;
pub mod limits;
pub mod oauth;
mod pipes;
pub mod prometheus;
mod prompts;
pub mod reload;
mod replays;
mod resources;
mod sessions;
mod stdio;
mod tasks;
mod token_guard;
mod tools;
mod tools_call;
pub mod trace;

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

/// What a new catalog changed, for the list-changed notifications: the tools
/// are announced at every change, the prompts and resources when theirs differ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Change {
    pub(crate) prompts: bool,
    pub(crate) resources: bool,
}

/// A handshake-era session to notify: its peer, and the URIs it subscribed to
/// (`resources/subscribe`).
#[derive(Clone)]
pub(crate) struct Listener {
    pub(crate) peer: Peer<RoleServer>,
    pub(crate) resources: Arc<Mutex<std::collections::BTreeSet<String>>>,
}

/// What every session shares.
pub struct Server {
    /// The current catalog and its listings; hot load replaces both whole.
    served: std::sync::RwLock<Arc<Served>>,
    pub(crate) mapper: Mapper,
    pub(crate) store: Arc<dyn ResultStore>,
    pub(crate) default_mode: OutputMode,
    /// Handshake-era peers and the resources each subscribed to, for the
    /// list-changed and `resources/updated` notifications.
    pub(crate) peers: Mutex<Vec<Listener>>,
    /// Wakes 2026-07-28 subscribers when the catalog changes.
    pub(crate) changes: tokio::sync::broadcast::Sender<Change>,
    /// The calls in flight, and whether a shutdown has begun.
    pub drain: drain::Drain,
    /// Seals and opens the `requestState` of stateless callers' questions.
    pub(crate) states: input::States,
    /// The tasks this replica runs in the background.
    pub(crate) running: tasks::Running,
    /// The rate limits' buckets.
    pub(crate) limiter: limits::Limiter,
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
    /// A server without rate limits, audit log or `/metrics`.
    pub fn new(
        catalog: Arc<Catalog>,
        mapper: Mapper,
        store: Arc<dyn ResultStore>,
        default_mode: OutputMode,
    ) -> Arc<Server> {
        Server::with_limits(
            catalog,
            mapper,
            store,
            default_mode,
            limits::Limiter::default(),
            Observers::default(),
            tasks::MAX_RUNNING,
        )
    }

    /// A server whose `tools/call`s spend the buckets of `limiter`, written to
    /// `observers.audit`, and that serves `observers.metrics` at `GET /metrics`.
    pub fn with_limits(
        catalog: Arc<Catalog>,
        mapper: Mapper,
        store: Arc<dyn ResultStore>,
        default_mode: OutputMode,
        limiter: limits::Limiter,
        observers: Observers,
        max_running_tasks: usize,
    ) -> Arc<Server> {
        let (changes, _) = tokio::sync::broadcast::channel(16);
        let state_key = store
            .derived_key(input::STATE_KEY_PURPOSE)
            .unwrap_or_else(|| {
                // A store without a signing key (the in-memory one): a key of
                // this process, so only it reads its states.
                let mut key = [0u8; 32];
                getrandom::fill(&mut key).expect("the OS gives random bytes for a key");
                key
            });
        Arc::new(Server {
            states: input::States::new(state_key),
            running: tasks::Running::new(max_running_tasks),
            served: std::sync::RwLock::new(Arc::new(Served::new(catalog))),
            mapper,
            store,
            default_mode,
            peers: Mutex::new(Vec::new()),
            changes,
            drain: drain::Drain::default(),
            limiter,
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
    /// (and `prompts/list_changed` when the prompts differ) to handshake-era
    /// sessions, and to 2026-07-28 `subscriptions/listen` streams.
    pub async fn replace_catalog(&self, catalog: Arc<Catalog>) {
        let served = Arc::new(Served::new(catalog));
        let before = std::mem::replace(
            &mut *self.served.write().expect("catalog lock"),
            served.clone(),
        );
        let change = Change {
            prompts: prompt_list(&before.catalog) != prompt_list(&served.catalog),
            resources: resource_list(&before.catalog) != resource_list(&served.catalog),
        };
        let listeners: Vec<Listener> = {
            let mut peers = self.peers.lock().expect("peers lock");
            peers.retain(|listener| !listener.peer.is_transport_closed());
            peers.clone()
        };
        for listener in listeners {
            let peer = &listener.peer;
            let _ = peer.notify_tool_list_changed().await;
            if change.prompts {
                let _ = peer.notify_prompt_list_changed().await;
            }
            if change.resources {
                let _ = peer.notify_resource_list_changed().await;
            }
            let subscribed: Vec<String> = listener
                .resources
                .lock()
                .expect("subscriptions lock")
                .iter()
                .cloned()
                .collect();
            for uri in subscribed {
                if resource_owner(&before.catalog, &uri) != resource_owner(&served.catalog, &uri) {
                    let _ = peer
                        .notify_resource_updated(
                            rmcp::model::ResourceUpdatedNotificationParam::new(uri),
                        )
                        .await;
                }
            }
        }
        let _ = self.changes.send(change);
    }
}

/// What the resource lists of `catalog` show, to tell whether they changed.
fn resource_list(
    catalog: &Catalog,
) -> (
    Vec<&crate::runtime::ResourceDescriptor>,
    Vec<&crate::runtime::TemplateDescriptor>,
) {
    (
        catalog.resources().iter().map(|r| &r.descriptor).collect(),
        catalog.templates().iter().map(|t| &t.descriptor).collect(),
    )
}

/// Which build of which plugin serves `uri` in `catalog`: a subscribed
/// resource is updated when this changes (a plugin's resources change only
/// with the plugin).
fn resource_owner(catalog: &Catalog, uri: &str) -> Option<(String, String)> {
    catalog.resource_owner(uri)
}

/// What a `prompts/list` of `catalog` shows, to tell whether it changed.
fn prompt_list(catalog: &Catalog) -> Vec<(&str, &crate::runtime::PromptDescriptor)> {
    catalog
        .prompts()
        .iter()
        .map(|prompt| (prompt.name.as_str(), &prompt.descriptor))
        .collect()
}

/// How a stdio session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StdioEnd {
    /// The client closed stdin, or a drain finished with every call answered.
    Done,
    /// The drain time ran out with calls still running; they were cut off.
    DrainTimedOut,
}

/// Serves one client on stdin and stdout until stdin closes, or until a drain
/// ([`Server::drain`], started by the caller on SIGTERM) has let the calls in
/// flight answer (up to `drain_time`): new calls are refused meanwhile, and the
/// input is then treated as closed.
///
/// # Errors
///
/// When the transport fails before the first message.
pub async fn serve_stdio(
    server: Arc<Server>,
    drain_time: std::time::Duration,
) -> anyhow::Result<StdioEnd> {
    let (stdin, stdout) = pipes::stdio();
    let input_closed = tokio_util::sync::CancellationToken::new();
    let stop_input = tokio_util::sync::CancellationToken::new();
    let drained = Arc::new(std::sync::atomic::AtomicBool::new(true));
    {
        let (server, stop_input, drained) = (server.clone(), stop_input.clone(), drained.clone());
        tokio::spawn(async move {
            server.drain.wait_started().await;
            let in_flight = server.drain.in_flight();
            tracing::info!(
                in_flight,
                drain_secs = drain_time.as_secs(),
                "shutting down: finishing the calls in flight"
            );
            if !server.drain.idle(drain_time).await {
                tracing::warn!(error.type = "drain_timeout", calls = server.drain.in_flight(), "the drain time ran out; ending the calls still running");
                drained.store(false, std::sync::atomic::Ordering::SeqCst);
            }
            // rmcp writes the answers that are ready, then its loop ends.
            stop_input.cancel();
        });
    }
    let stdin = input_end::EndSignal::new(stdin, input_closed.clone(), stop_input);
    // 2025-11-25's tasks need what rmcp does not carry (see `tasks::edge`).
    let seen = Arc::new(tasks::edge::Seen::default());
    let stdin = tasks::edge::Tap::new(stdin, seen.clone());
    let transport = tasks::edge::Edge::new(
        stdio::StdioTransport::new(stdin, stdout),
        tasks::edge::Source::Tap(seen),
        server.clone(),
    );
    let listens = Arc::new(input_end::Listens::default());
    let transport = input_end::InputEnd::new(transport, listens.clone());
    let session = Session::with_input(server, input_closed, listens);
    let open = metrics::gauge!("toolhost_sessions_open", "transport" => "stdio");
    open.increment(1.0);
    // Boxed: the session's future type is deep enough to exceed the
    // compiler's layout depth in the binary's `main`.
    let served = Box::pin(serve_session(session, transport)).await;
    open.decrement(1.0);
    served?;
    if drained.load(std::sync::atomic::Ordering::SeqCst) {
        Ok(StdioEnd::Done)
    } else {
        Ok(StdioEnd::DrainTimedOut)
    }
}

async fn serve_session(
    session: Session,
    transport: impl rmcp::transport::Transport<rmcp::RoleServer, Error = std::io::Error> + 'static,
) -> anyhow::Result<()> {
    let running = match session.serve(transport).await {
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

/// `text` cut to at most `max` bytes at a character boundary: how the edge
/// bounds a caller's strings in the audit log and in span names.
pub(crate) fn cut(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
