//! The one wasmtime [`Engine`] and what keeps it honest: the epoch ticker that
//! makes deadlines fire, and the allocator settings.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use wasmtime::{Config, Enabled, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

/// How often the epoch advances: the granularity of deadlines, and how often a
/// busy guest yields its thread to other calls.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);

/// How much of a pooled memory or table slot, in bytes, is reset by copying the
/// pages a call dirtied rather than by unmapping them (where `PAGEMAP_SCAN` is
/// available). It bounds what an idle warm slot keeps resident: a small Rust
/// tool dirties tens of KiB per call and stays within it; an interpreter (JS,
/// Python) or a memory-hungry call dirties MiBs, whose remainder is unmapped as
/// before, so a slot that once ran one does not keep it all.
///
/// It also bounds the reset's work: a page copied back stays present and counts
/// as written at the next scan, so each later instance in the slot resets every
/// page an earlier one wrote, up to this many bytes (docs/benchmarks.md, "Where
/// a served call's time goes").
pub const KEEP_RESIDENT_BYTES: usize = 256 << 10;

/// Engine settings chosen from the configuration.
#[derive(Debug, Clone, Copy)]
pub struct EngineSettings {
    /// Pooling allocator (fast fresh instances) or on-demand allocation.
    pub pooling: bool,
    /// Meter fuel (needed when any plugin sets a fuel budget).
    pub fuel: bool,
    /// The largest linear memory any plugin may have, in bytes.
    pub max_memory_bytes: u64,
    /// With the pooling allocator, how many component instances the pool holds
    /// at once ([`POOL_INSTANCES`] by default); its core instances, memories and
    /// tables scale with it. Each memory slot reserves 4 GiB of address space, so
    /// a tool that cannot reserve terabytes (valgrind, for P1's instruction
    /// count) asks for a small pool.
    pub pool_instances: u32,
}

/// Component instances the pool holds at once by default: as many calls run
/// at the same time, whatever their plugins.
pub const POOL_INSTANCES: u32 = 256;

impl Default for EngineSettings {
    fn default() -> Self {
        EngineSettings {
            pooling: true,
            fuel: false,
            max_memory_bytes: 64 << 20,
            pool_instances: POOL_INSTANCES,
        }
    }
}

/// Builds the engine: async, epoch interruption, copy-on-write memory images, and
/// the pooling allocator sized for many small concurrent instances, resetting
/// slots with `PAGEMAP_SCAN` where the kernel has it.
///
/// # Errors
///
/// When wasmtime refuses the configuration (e.g. the machine cannot reserve the
/// pool's virtual memory).
pub fn build(settings: EngineSettings) -> wasmtime::Result<Engine> {
    let mut config = Config::new();
    config.epoch_interruption(true);
    config.consume_fuel(settings.fuel);
    config.memory_init_cow(true);
    config.parallel_compilation(true);
    if settings.pooling {
        let mut pool = PoolingAllocationConfig::default();
        // Up to 256 instances at once by default. A component (WASI adapter,
        // language runtime) holds several core instances, memories and tables;
        // JS and Python ones more than Rust ones. Each memory slot reserves 4 GiB
        // of address space (so bounds checks can be elided), not of memory.
        let instances = settings.pool_instances.max(1);
        pool.total_component_instances(instances)
            .total_core_instances(instances.saturating_mul(4))
            .total_memories(instances.saturating_mul(2))
            .total_tables(instances.saturating_mul(4))
            .max_core_instances_per_component(64)
            .max_memories_per_component(16)
            .max_tables_per_component(32)
            .table_elements(200_000)
            .max_memory_size(usize::try_from(settings.max_memory_bytes).unwrap_or(usize::MAX))
            .max_unused_warm_slots(100);
        // Resetting a slot for the next instance with `madvise` makes its next
        // user fault every page in again, and each change of the mappings sends
        // TLB-flush interrupts to the other cores: together about a fifth of the
        // CPU under concurrent load. Where the kernel can say which pages of a slot
        // were written (`PAGEMAP_SCAN`, Linux 6.7), those are copied back from
        // the image instead, up to a budget per slot, and stay mapped.
        if PoolingAllocationConfig::is_pagemap_scan_available() {
            pool.pagemap_scan(Enabled::Yes)
                .linear_memory_keep_resident(KEEP_RESIDENT_BYTES)
                .table_keep_resident(KEEP_RESIDENT_BYTES);
        }
        config.allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
    }
    Engine::new(&config)
}

/// Advances the engine's epoch every [`EPOCH_TICK`] on a thread of its own, until
/// dropped. Without it, an epoch deadline never fires.
pub struct EpochTicker {
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
}

impl EpochTicker {
    pub fn start(engine: &Engine) -> Self {
        let stop = Arc::new(AtomicBool::new(false));
        let engine = engine.clone();
        let flag = stop.clone();
        let thread = std::thread::Builder::new()
            .name("toolhost-epoch".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(EPOCH_TICK);
                    engine.increment_epoch();
                }
            })
            .expect("spawning the epoch thread");
        EpochTicker {
            stop,
            thread: Some(thread),
        }
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}
