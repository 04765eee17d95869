//! Where results too large to send inline are kept, and read back from.
//!
//! The mapper hands a [`ResultStore`] the complete result it could not send and
//! renders the [`StoredLink`] it gets back. A store keeps the serialized result
//! with its format version (`crate::render::legacy::format::FormatVersion`), bound to the principal
//! that called, until the link expires.

use std::future::Future;
use std::pin::Pin;

mod memory;
mod postgres;
mod row;
pub mod signing;
mod sqlite;
pub use memory::MemoryStore;
pub use postgres::PostgresStore;
pub use signing::Signer;
pub use sqlite::SqliteStore;

use std::sync::Arc;

use jiff::{SignedDuration, Timestamp};

use crate::config::{StoreBackend, StoreConfig};
use crate::result::{StoredLink, ToolResult};

/// A boxed future of a store operation.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// What the mapper asks a store to keep.
#[derive(Debug, Clone, Copy)]
pub struct Offload<'a> {
    /// The complete result, as the tool returned it.
    pub result: &'a ToolResult,
    /// Who called; only this principal may read it back.
    pub principal: Option<&'a str>,
    /// The size of the rendering that did not fit, in bytes.
    pub rendered_size: usize,
}

/// A place to keep large results.
pub trait ResultStore: Send + Sync {
    /// Keeps `offload.result` and returns the link to read it back.
    fn put<'a>(&'a self, offload: Offload<'a>) -> StoreFuture<'a, StoredLink>;

    /// The result behind `uri`, if it exists, has not expired and belongs to
    /// `principal`. Every other case is `None`, alike, so a caller learns nothing.
    fn get<'a>(
        &'a self,
        uri: &'a str,
        principal: Option<&'a str>,
    ) -> StoreFuture<'a, Option<ToolResult>>;

    /// Deletes what has expired by now; returns how many results went.
    fn purge(&self) -> StoreFuture<'_, u64>;
}

/// A store could not keep or read a result.
#[derive(Debug, thiserror::Error)]
#[error("result store: {0}")]
pub struct StoreError(pub String);

/// Opens the store the configuration names, with its signing key (created on
/// first start); links live for `ttl`.
///
/// # Errors
///
/// A message naming the key file, the database file or the PostgreSQL problem,
/// fit to print at start-up.
pub async fn open(
    config: &StoreConfig,
    ttl: SignedDuration,
) -> Result<Arc<dyn ResultStore>, String> {
    let key = &config.signing_key_file;
    let signer = Signer::load_or_create(key).map_err(|e| format!("{}: {e}", key.display()))?;
    Ok(match &config.backend {
        StoreBackend::Sqlite { path } => Arc::new(
            SqliteStore::open(path, signer, ttl, Timestamp::now).map_err(|e| e.to_string())?,
        ),
        StoreBackend::Postgres { url, pool_size } => Arc::new(
            PostgresStore::connect(&url.resolve()?, *pool_size, signer, ttl, Timestamp::now)
                .await
                .map_err(|e| {
                    format!("{e}; check store.url and that the database accepts connections")
                })?,
        ),
    })
}
