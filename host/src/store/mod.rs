//! Where results too large to send inline are kept, and read back from.
//!
//! The mapper hands a [`ResultStore`] the complete result it could not send and
//! renders the [`StoredLink`] it gets back. A store keeps the serialized result
//! with its format version (`crate::legacy::FormatVersion`), bound to the principal
//! that called, until the link expires.

use std::future::Future;
use std::pin::Pin;

mod memory;
pub mod signing;
mod sqlite;
pub use memory::MemoryStore;
pub use signing::Signer;
pub use sqlite::SqliteStore;

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
}

/// A store could not keep or read a result.
#[derive(Debug, thiserror::Error)]
#[error("result store: {0}")]
pub struct StoreError(pub String);
