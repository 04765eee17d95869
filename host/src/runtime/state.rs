//! What a store holds during one call: the WASI context, the resource limits, and
//! what the host imports need (the plugin's granted configuration, where progress
//! and log lines go), with the first budget the call hit.
//!
//! `memory_mib` is one budget for the whole instance: the bytes of every linear
//! memory plus [`TABLE_ELEMENT_BYTES`] per element of every table, counted from
//! their creation (wasmtime asks the limiter for each one's initial size too), so
//! a component of many core instances, each with its own memory, gets no more
//! than one with a single memory.

use std::collections::BTreeMap;
use std::sync::Arc;

use wasmtime::ResourceLimiter;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};
use wasmtime_wasi_http::{WasiHttpCtx, WasiHttpCtxView, WasiHttpView};

pub use super::events::{EventSender, GuestEvent, LogLevel};
use super::policy::Denials;

/// Log lines a guest may send through the host import per call; more are dropped.
pub const LOG_LINES_PER_CALL: usize = 1_000;

/// The data of one call's store.
pub struct CallState {
    pub(super) wasi: WasiCtx,
    pub(super) table: ResourceTable,
    pub(super) limiter: CallLimiter,
    pub(super) plugin: Arc<str>,
    pub(super) tool: Arc<str>,
    pub(super) config: Arc<BTreeMap<String, String>>,
    pub(super) events: Option<EventSender>,
    /// Whom the guest's questions reach (`interaction`); none refuses them.
    pub(super) asker: Option<std::sync::Arc<dyn super::interaction::Asker>>,
    /// Questions the guest asked so far, their keys, and the ones it stopped at.
    pub(super) questions: u32,
    pub(super) keys: std::collections::HashSet<String>,
    pub(super) suspended: Option<Vec<crate::result::Question>>,
    pub(super) log_lines: usize,
    /// The plugin's network rules: which names the lookup filter (`lookup.rs`)
    /// resolves, and whether sockets exist at all (`sockets.rs`).
    pub(super) network: Arc<super::network::NetworkPolicy>,
    /// Bytes of log messages and progress messages the guest sent so far.
    pub(super) log_bytes: u64,
    pub(super) progress_bytes: u64,
    pub(super) budgets: CallBudgets,
    /// The first budget of the call's host imports that was hit.
    pub(super) budget_hit: Option<BudgetHit>,
    /// The call's denials, shared with its WASI context and the runtime.
    pub(super) denials: Denials,
    /// `wasi:http`: its context, and the hooks that check and send each request.
    pub(super) http_ctx: WasiHttpCtx,
    pub(super) http: super::http::HttpCall,
}

/// The byte budgets of one call's host imports, from the plugin's policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallBudgets {
    /// `max_log_bytes`: bytes of log messages per call.
    pub log_bytes: u64,
    /// `max_progress_bytes`: bytes of progress messages per call.
    pub progress_bytes: u64,
    /// `max_input_requests`: questions to the caller per call.
    pub input_requests: u32,
}

/// A budget a call ran over: its configuration key and what happened.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BudgetHit {
    /// The policy (or host) key of the budget, e.g. `"max_resources"`.
    pub key: &'static str,
    pub message: String,
}

impl BudgetHit {
    pub fn new(key: &'static str, message: impl Into<String>) -> Self {
        BudgetHit {
            key,
            message: message.into(),
        }
    }
}

impl CallState {
    /// Records that a socket of `protocol` was refused: the plugin has no
    /// network rule.
    pub(super) fn deny_socket(&mut self, protocol: &str) {
        let denial = format!("{protocol} sockets are not granted (the plugin has no network rule)");
        // One line per kind: a guest that tries 20,000 times is logged once.
        let seen = self.denials.lock().expect("denials lock").contains(&denial);
        if !seen {
            super::policy::record_denial(&self.denials, &self.plugin, &self.tool, denial);
        }
    }

    /// Records that the budget `key` was hit (the first hit is kept), logging it
    /// once with `error.type = "resource_limit"`.
    pub(super) fn hit(&mut self, key: &'static str, message: String) {
        if self.budget_hit.is_none() {
            tracing::warn!(plugin = %self.plugin, tool = %self.tool, budget = key, error.type = "resource_limit", "{message}; the rest is dropped and the call will fail");
            self.budget_hit = Some(BudgetHit::new(key, message));
        }
    }
}

impl WasiHttpView for CallState {
    fn http(&mut self) -> WasiHttpCtxView<'_> {
        WasiHttpCtxView {
            ctx: &mut self.http_ctx,
            table: &mut self.table,
            hooks: &mut self.http,
        }
    }
}

impl CallState {
    /// The first budget the call hit in a host import or a request.
    pub(super) fn first_budget_hit(&self) -> Option<BudgetHit> {
        self.budget_hit.clone().or_else(|| self.http.usage().hit())
    }
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// What one table element counts for against `memory_mib`: a table of funcrefs
/// holds a pointer per element on the host.
pub const TABLE_ELEMENT_BYTES: usize = 8;

/// The memory budget of one instance (`memory_mib`), summed over its linear
/// memories and tables, remembering whether it was hit (a guest whose allocation
/// fails usually traps, and the trap alone would not say why).
pub struct CallLimiter {
    memory_bytes: usize,
    /// Bytes of every memory and table of the instance approved so far.
    used: usize,
    pub(super) exceeded: Option<BudgetHit>,
}

impl CallLimiter {
    pub fn new(memory_bytes: usize) -> Self {
        CallLimiter {
            memory_bytes,
            used: 0,
            exceeded: None,
        }
    }

    /// Bytes of memories and tables the instance holds (as far as approved).
    #[cfg(test)]
    pub fn used(&self) -> usize {
        self.used
    }

    /// Approves growing something from `current` to `desired` bytes if the sum
    /// stays within the budget.
    fn grow(&mut self, what: &str, current: usize, desired: usize) -> bool {
        let total = self
            .used
            .saturating_sub(current)
            .saturating_add(desired.max(current));
        if total > self.memory_bytes {
            self.exceeded.get_or_insert_with(|| {
                BudgetHit::new(
                    "memory_mib",
                    format!(
                        "memory limit of {} MiB reached: growing a {what} would bring the instance's memories and tables to {} MiB",
                        self.memory_bytes >> 20,
                        total.div_ceil(1 << 20)
                    ),
                )
            });
            return false;
        }
        self.used = total;
        true
    }
}

impl ResourceLimiter for CallLimiter {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(self.grow("memory", current, desired))
    }

    fn memory_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        // What was approved stays counted: the sum errs on the safe side.
        self.exceeded.get_or_insert_with(|| {
            BudgetHit::new("memory_mib", format!("memory could not grow: {error}"))
        });
        Ok(())
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        Ok(self.grow(
            "table",
            current.saturating_mul(TABLE_ELEMENT_BYTES),
            desired.saturating_mul(TABLE_ELEMENT_BYTES),
        ))
    }

    fn instances(&self) -> usize {
        100
    }

    fn tables(&self) -> usize {
        100
    }

    fn memories(&self) -> usize {
        100
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn memory_is_one_budget_for_every_memory_and_table() {
        let mut limiter = CallLimiter::new(64 << 20);
        // Three memories created at 20 MiB each fit; a fourth does not.
        for _ in 0..3 {
            assert!(limiter.memory_growing(0, 20 << 20, None).unwrap());
        }
        assert!(!limiter.memory_growing(0, 20 << 20, None).unwrap());
        assert_eq!(limiter.exceeded.as_ref().unwrap().key, "memory_mib");
        assert_eq!(limiter.used(), 60 << 20);
        // Growing one of them counts the difference only.
        assert!(limiter.memory_growing(20 << 20, 22 << 20, None).unwrap());
        assert_eq!(limiter.used(), 62 << 20);
        // Table elements count too.
        assert!(
            !limiter
                .table_growing(0, (4 << 20) / TABLE_ELEMENT_BYTES, None)
                .unwrap()
        );
        assert!(limiter.table_growing(0, 1_000, None).unwrap());
        assert_eq!(limiter.used(), (62 << 20) + 8_000);
    }
}
