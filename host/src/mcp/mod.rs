//! The MCP server: JSON-RPC on rmcp, over stdio and Streamable HTTP, serving the
//! handshake era (2024-11-05 to 2025-11-25) and the stateless 2026-07-28 era on the
//! same process and endpoint.
//!
//! A request flows: transport (and, on HTTP, the Origin and token checks of
//! [`http`]) → [`handler::Session`] → the catalog → the runtime → the mapper, which
//! alone shapes the result for the request's revision and output mode.

mod auth;
pub mod handler;
pub mod http;
mod tools;

pub use auth::Tokens;
pub use handler::{OUTPUT_MODE_HEADER, OUTPUT_MODE_KEY, Session};

use std::sync::{Arc, Mutex};

use rmcp::{Peer, RoleServer, ServiceExt};

use crate::catalog::Catalog;
use crate::render::{Mapper, OutputMode};
use crate::store::ResultStore;

/// What every session shares.
pub struct Server {
    pub(crate) catalog: Arc<Catalog>,
    pub(crate) mapper: Mapper,
    pub(crate) store: Arc<dyn ResultStore>,
    pub(crate) default_mode: OutputMode,
    /// Handshake-era peers, for `notifications/tools/list_changed`.
    pub(crate) peers: Mutex<Vec<Peer<RoleServer>>>,
    /// Wakes 2026-07-28 subscribers when the catalog changes.
    pub(crate) changes: tokio::sync::broadcast::Sender<()>,
}

impl Server {
    pub fn new(
        catalog: Arc<Catalog>,
        mapper: Mapper,
        store: Arc<dyn ResultStore>,
        default_mode: OutputMode,
    ) -> Arc<Server> {
        let (changes, _) = tokio::sync::broadcast::channel(16);
        Arc::new(Server {
            catalog,
            mapper,
            store,
            default_mode,
            peers: Mutex::new(Vec::new()),
            changes,
        })
    }
}

/// Serves one client on stdin and stdout until stdin closes.
///
/// # Errors
///
/// When the transport fails before the first message.
pub async fn serve_stdio(server: Arc<Server>) -> anyhow::Result<()> {
    let running = Session::new(server).serve(rmcp::transport::stdio()).await?;
    let reason = running.waiting().await?;
    tracing::info!(?reason, "stdio client finished");
    Ok(())
}
