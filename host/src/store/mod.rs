//! Where results too large to send inline are kept, and read back from, and
//! where tasks keep their state ([`TaskRow`]).
//!
//! The mapper hands a [`ResultStore`] the complete result it could not send,
//! already serialized (a format version number and the body text), and gets back
//! where the store [`Kept`] it, which it renders as the result's stored link. A
//! store keeps that row as it was given, bound to the principal that called,
//! until the link expires, and hands it back as a [`StoredRow`]. It never reads a
//! body: writing and reading the serialized form is the renderers'.
//!
//! This module imports nothing from the rest of the crate (no result type, no
//! configuration type): the composition root (`crate::app`) reads `[store]` and
//! opens a store with plain arguments, and the mapper turns a [`Kept`] into the
//! result object's `StoredLink`.

use std::future::Future;
use std::pin::Pin;

mod memory;
mod postgres;
mod postgres_tls;
pub mod private;
mod row;
pub mod signing;
mod sqlite;
mod task;
pub use memory::MemoryStore;
pub use postgres::PostgresStore;
pub use postgres_tls::SslMode;
pub use signing::Signer;
pub use sqlite::SqliteStore;
pub use task::{TaskRow, TaskSummary, new_task_id};

use jiff::Timestamp;

/// A boxed future of a store operation.
pub type StoreFuture<'a, T> = Pin<Box<dyn Future<Output = Result<T, StoreError>> + Send + 'a>>;

/// What the mapper asks a store to keep.
#[derive(Debug, Clone, Copy)]
pub struct Offload<'a> {
    /// The format version `body` is written in.
    pub format: u64,
    /// The complete result, as the tool returned it, serialized in `format`.
    pub body: &'a str,
    /// The size of the result's data in bytes, when it has data: the size the
    /// link announces.
    pub data_size: Option<u64>,
    /// Who called; only this principal may read it back.
    pub principal: Option<&'a str>,
}

impl Offload<'_> {
    /// The format version as the rows of every store hold it.
    ///
    /// # Errors
    ///
    /// When the number does not fit a row's column.
    pub fn row_format(&self) -> Result<i64, StoreError> {
        i64::try_from(self.format)
            .map_err(|_| StoreError(format!("format version {} out of range", self.format)))
    }
}

/// Where a store kept a result, and for how long: what the mapper renders as the
/// result's stored link.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Kept {
    /// The signed link to read it back ([`ResultStore::get`]).
    pub uri: String,
    /// The size of the result's data in bytes, as [`Offload::data_size`] gave it.
    pub size: Option<u64>,
    /// The MIME type of the stored body.
    pub mime: String,
    /// When the link expires and the row may be purged.
    pub expires_at: Timestamp,
}

/// A stored result as it was kept: the body and its format version, as an
/// [`Offload`] handed them over.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredRow {
    /// The format version `body` is written in, as the row holds it; a version
    /// this toolhost does not know is for the reader to refuse.
    pub format: i64,
    pub body: String,
}

/// A place to keep large results.
pub trait ResultStore: Send + Sync {
    /// Keeps `offload.body` and returns where: the link to read it back.
    fn put<'a>(&'a self, offload: Offload<'a>) -> StoreFuture<'a, Kept>;

    /// The row behind `uri`, if it exists, has not expired and belongs to
    /// `principal`. Every other case is `None`, alike, so a caller learns nothing.
    fn get<'a>(
        &'a self,
        uri: &'a str,
        principal: Option<&'a str>,
    ) -> StoreFuture<'a, Option<StoredRow>>;

    /// Deletes what has expired by now (results and tasks); returns how many
    /// rows went.
    fn purge(&self) -> StoreFuture<'_, u64>;

    /// Keeps a new task; once this returns, every replica reads it.
    fn put_task<'a>(&'a self, task: &'a TaskRow) -> StoreFuture<'a, ()>;

    /// The task `id`, if it exists, has not expired and belongs to
    /// `principal`; every other case is `None`, alike.
    fn task<'a>(
        &'a self,
        id: &'a str,
        principal: Option<&'a str>,
    ) -> StoreFuture<'a, Option<TaskRow>>;

    /// Up to `limit` of `principal`'s tasks that have not expired, in the
    /// order of their ids, only those after the id `after` when it is given.
    fn tasks_of<'a>(
        &'a self,
        principal: Option<&'a str>,
        after: Option<&'a str>,
        limit: usize,
    ) -> StoreFuture<'a, Vec<TaskSummary>>;

    /// Replaces the task `task.id` with `task` (its status, body, call and
    /// update time) and increments its version, if the stored version is still
    /// `task.version`; `false` when another writer came first.
    fn update_task<'a>(&'a self, task: &'a TaskRow) -> StoreFuture<'a, bool>;

    /// A cheap round trip to where the rows live (readiness, `/readyz`): an error
    /// when the store could not keep or read a result now.
    fn ping(&self) -> StoreFuture<'_, ()>;

    /// A key for `purpose` derived from the store's signing key, which every
    /// replica sharing the store shares ([`Signer::derive`]); `None` for a
    /// store without one (the in-memory store), whose users make their own.
    fn derived_key(&self, purpose: &str) -> Option<[u8; 32]> {
        let _ = purpose;
        None
    }
}

/// A store could not keep or read a result.
#[derive(Debug, thiserror::Error)]
#[error("result store: {0}")]
pub struct StoreError(pub String);
