//! [`MemoryStore`]: keeps stored results in the process, for tests and one-shot runs.

use std::collections::HashMap;
use std::sync::Mutex;

use jiff::{SignedDuration, Timestamp};
use sha2::{Digest, Sha256};

use super::{Kept, Offload, ResultStore, StoreError, StoreFuture, StoredRow, TaskRow, TaskSummary};

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
    tasks: Mutex<HashMap<String, TaskRow>>,
}

impl MemoryStore {
    /// A store whose links live for `ttl`, reading the time from `clock`.
    pub fn new(ttl: SignedDuration, clock: fn() -> Timestamp) -> Self {
        MemoryStore {
            ttl,
            clock,
            entries: Mutex::new(HashMap::new()),
            tasks: Mutex::new(HashMap::new()),
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
    fn put_task<'a>(&'a self, task: &'a TaskRow) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            let mut tasks = self.tasks.lock().expect("store lock");
            if tasks.contains_key(&task.id) {
                return Err(StoreError(format!("a task {} exists already", task.id)));
            }
            tasks.insert(task.id.clone(), task.clone());
            Ok(())
        })
    }

    fn task<'a>(
        &'a self,
        id: &'a str,
        principal: Option<&'a str>,
    ) -> StoreFuture<'a, Option<TaskRow>> {
        Box::pin(async move {
            let now = (self.clock)().as_second();
            let tasks = self.tasks.lock().expect("store lock");
            Ok(tasks
                .get(id)
                .filter(|task| task.principal.as_deref() == principal && task.expires_at > now)
                .cloned())
        })
    }

    fn tasks_of<'a>(
        &'a self,
        principal: Option<&'a str>,
        after: Option<&'a str>,
        limit: usize,
    ) -> StoreFuture<'a, Vec<TaskSummary>> {
        Box::pin(async move {
            let now = (self.clock)().as_second();
            let tasks = self.tasks.lock().expect("store lock");
            let mut listed: Vec<TaskSummary> = tasks
                .values()
                .filter(|task| task.principal.as_deref() == principal && task.expires_at > now)
                .filter(|task| after.is_none_or(|after| task.id.as_str() > after))
                .map(|task| TaskSummary {
                    id: task.id.clone(),
                    status: task.status.clone(),
                    created_ms: task.created_ms,
                    updated_ms: task.updated_ms,
                })
                .collect();
            listed.sort_by(|a, b| a.id.cmp(&b.id));
            listed.truncate(limit);
            Ok(listed)
        })
    }

    fn update_task<'a>(&'a self, task: &'a TaskRow) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let mut tasks = self.tasks.lock().expect("store lock");
            match tasks.get_mut(&task.id) {
                Some(stored) if stored.version == task.version => {
                    *stored = TaskRow {
                        version: task.version + 1,
                        ..task.clone()
                    };
                    Ok(true)
                }
                _ => Ok(false),
            }
        })
    }

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
            let mut tasks = self.tasks.lock().expect("store lock");
            let tasks_before = tasks.len();
            tasks.retain(|_, task| task.expires_at > now.as_second());
            Ok((before - entries.len() + tasks_before - tasks.len()) as u64)
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
