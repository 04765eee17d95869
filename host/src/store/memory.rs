//! [`MemoryStore`]: keeps stored results in the process, for tests and one-shot runs.

use std::collections::HashMap;
use std::sync::Mutex;

use jiff::{SignedDuration, Timestamp};
use sha2::{Digest, Sha256};

use super::{Kept, Offload, ResultStore, StoreError, StoreFuture, StoredRow};

/// A stored entry: the serialized result and to whom it belongs.
#[derive(Debug, Clone)]
struct Entry {
    row: StoredRow,
    principal: Option<String>,
    expires_at: Timestamp,
}

/// An in-process [`ResultStore`]; nothing survives the process.
///
/// Links are `toolhost://results/<id>`, where the id is a hash of the serialized
/// result and the principal, so the same result stored twice has one link.
pub struct MemoryStore {
    ttl: SignedDuration,
    clock: fn() -> Timestamp,
    entries: Mutex<HashMap<String, Entry>>,
}

impl MemoryStore {
    /// A store whose links live for `ttl`, reading the time from `clock`.
    pub fn new(ttl: SignedDuration, clock: fn() -> Timestamp) -> Self {
        MemoryStore {
            ttl,
            clock,
            entries: Mutex::new(HashMap::new()),
        }
    }

    /// Reads back a stored row, if `uri` names one of `principal`'s that has
    /// not expired.
    pub fn read(&self, uri: &str, principal: Option<&str>) -> Option<StoredRow> {
        let entries = self.entries.lock().expect("store lock");
        let entry = entries.get(uri)?;
        if entry.principal.as_deref() != principal || entry.expires_at <= (self.clock)() {
            return None;
        }
        Some(entry.row.clone())
    }
}

impl ResultStore for MemoryStore {
    fn get<'a>(
        &'a self,
        uri: &'a str,
        principal: Option<&'a str>,
    ) -> StoreFuture<'a, Option<StoredRow>> {
        Box::pin(async move { Ok(self.read(uri, principal)) })
    }

    fn ping(&self) -> StoreFuture<'_, ()> {
        Box::pin(async { Ok(()) })
    }

    fn purge(&self) -> StoreFuture<'_, u64> {
        Box::pin(async move {
            let now = (self.clock)();
            let mut entries = self.entries.lock().expect("store lock");
            let before = entries.len();
            entries.retain(|_, entry| entry.expires_at > now);
            Ok((before - entries.len()) as u64)
        })
    }

    fn put<'a>(&'a self, offload: Offload<'a>) -> StoreFuture<'a, Kept> {
        Box::pin(async move {
            let format = offload.row_format()?;
            let mut hash = Sha256::new();
            hash.update(offload.body.as_bytes());
            hash.update([0]);
            hash.update(offload.principal.unwrap_or_default().as_bytes());
            let id: String = hash.finalize()[..12]
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            let uri = format!("toolhost://results/{id}");
            let expires_at = (self.clock)()
                .checked_add(self.ttl)
                .map_err(|e| StoreError(format!("expiry out of range: {e}")))?;
            self.entries.lock().expect("store lock").insert(
                uri.clone(),
                Entry {
                    row: StoredRow {
                        format,
                        body: offload.body.to_owned(),
                    },
                    principal: offload.principal.map(str::to_owned),
                    expires_at,
                },
            );
            Ok(Kept {
                uri,
                size: offload.data_size,
                mime: "application/json".into(),
                expires_at,
            })
        })
    }
}
