//! What a store holds during one call: the WASI context, the resource limits, and
//! what the host imports need (the plugin's granted configuration, where progress
//! and log lines go).

use std::collections::BTreeMap;
use std::sync::Arc;

use tokio::sync::mpsc::UnboundedSender;
use wasmtime::ResourceLimiter;
use wasmtime::component::ResourceTable;
use wasmtime_wasi::{WasiCtx, WasiCtxView, WasiView};

/// Something a guest reported during a call, for the caller.
#[derive(Debug, Clone, PartialEq)]
pub enum GuestEvent {
    Log {
        level: LogLevel,
        message: String,
    },
    Progress {
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
}

/// The level of a guest log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
}

/// Where a call's events go.
pub type EventSender = UnboundedSender<GuestEvent>;

/// Log lines a guest may send through the host import per call; more are dropped.
pub const LOG_LINES_PER_CALL: usize = 1_000;

/// The data of one call's store.
pub struct CallState {
    pub(super) wasi: WasiCtx,
    pub(super) table: ResourceTable,
    pub(super) limiter: CallLimiter,
    pub(super) plugin: Arc<str>,
    pub(super) tool: String,
    pub(super) config: Arc<BTreeMap<String, String>>,
    pub(super) events: Option<EventSender>,
    pub(super) log_lines: usize,
    /// The name-lookup filter (`lookup.rs`).
    pub(super) lookups: super::lookup::NameLookups,
}

impl WasiView for CallState {
    fn ctx(&mut self) -> WasiCtxView<'_> {
        WasiCtxView {
            ctx: &mut self.wasi,
            table: &mut self.table,
        }
    }
}

/// The memory and table limits of one instance, remembering whether one was hit
/// (a guest whose allocation fails usually traps, and the trap alone would not
/// say why).
pub struct CallLimiter {
    memory_bytes: usize,
    table_elements: usize,
    pub(super) exceeded: Option<String>,
}

impl CallLimiter {
    pub fn new(memory_bytes: usize) -> Self {
        CallLimiter {
            memory_bytes,
            table_elements: 1_000_000,
            exceeded: None,
        }
    }
}

impl ResourceLimiter for CallLimiter {
    fn memory_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.memory_bytes {
            self.exceeded = Some(format!(
                "memory limit of {} MiB reached (the guest asked for {} MiB)",
                self.memory_bytes >> 20,
                desired >> 20
            ));
            return Ok(false);
        }
        Ok(true)
    }

    fn memory_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.exceeded
            .get_or_insert_with(|| format!("memory could not grow: {error}"));
        Ok(())
    }

    fn table_growing(
        &mut self,
        _current: usize,
        desired: usize,
        _maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        if desired > self.table_elements {
            self.exceeded = Some(format!(
                "table limit of {} elements reached",
                self.table_elements
            ));
            return Ok(false);
        }
        Ok(true)
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
