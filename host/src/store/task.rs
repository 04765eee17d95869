//! Tasks as the stores keep them: one row per task, what any replica sharing
//! the store reads to answer for it.
//!
//! A row holds the task's status and what the caller is shown of it (`body`:
//! the rendered result, error or questions, as JSON text), and what another
//! replica needs to go on with the call (`call`, JSON text). The store reads
//! neither: the MCP layer writes and reads both. Changes are compare-and-set
//! on the row's `version`, so two replicas (the one running the call and one
//! a `tasks/cancel` reached) never overwrite each other: the second writer
//! reads the row again and decides anew.

use super::StoreError;

/// One task.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskRow {
    /// 128 random bits in hex ([`new_task_id`]).
    pub id: String,
    /// Who created the task; only this principal reads or changes it.
    pub principal: Option<String>,
    /// `working`, `input_required`, `completed`, `failed` or `cancelled`.
    pub status: String,
    /// What the caller is shown beside the status, as JSON text.
    pub body: Option<String>,
    /// What resumes the call, as JSON text.
    pub call: String,
    /// Unix milliseconds.
    pub created_ms: i64,
    pub updated_ms: i64,
    /// Unix seconds: when the row may be purged.
    pub expires_at: i64,
    /// Incremented by every change ([`super::ResultStore::update_task`]).
    pub version: i64,
}

/// A task as a listing shows it (`tasks/list`): without what it holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TaskSummary {
    pub id: String,
    pub status: String,
    /// Unix milliseconds.
    pub created_ms: i64,
    pub updated_ms: i64,
}

/// A fresh task id: 128 random bits in hex, unguessable.
///
/// # Errors
///
/// When the system has no randomness.
pub fn new_task_id() -> Result<String, StoreError> {
    let mut id = [0u8; 16];
    getrandom::fill(&mut id).map_err(|e| StoreError(format!("no randomness for an id: {e}")))?;
    Ok(hex::encode(id))
}
