//! The on-disk cache of compiled components, so a restart does not recompile.
//!
//! An entry is named by the SHA-256 of the component's bytes and a hash of the
//! engine's compatibility settings (wasmtime version, target, compiler flags), so a
//! changed component or a different engine never reads a stale entry. Entries are
//! written to a temporary file and renamed into place: a crash leaves no half entry.

use std::hash::{Hash, Hasher};
use std::path::{Path, PathBuf};
use std::time::Instant;

use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;
use wasmtime::error::Context as _;

/// Components larger than this get a progress line while they compile.
const ANNOUNCE_BYTES: usize = 1 << 20;

/// Where a component's compiled form is kept.
#[derive(Clone)]
pub struct CompileCache {
    dir: PathBuf,
    engine_key: String,
}

/// How a component was obtained, for logs and benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Cached,
    Compiled,
}

impl CompileCache {
    /// A cache in `dir` (created when first written) for `engine`.
    pub fn new(dir: PathBuf, engine: &Engine) -> Self {
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        CompileCache {
            dir,
            engine_key: format!("{:016x}", hasher.finish()),
        }
    }

    /// The component in `bytes` (read from `path`), from the cache or compiled.
    ///
    /// # Errors
    ///
    /// When the bytes are not a valid component for this engine. A broken or
    /// unwritable cache only costs time: it is logged, never an error.
    pub fn load(
        &self,
        engine: &Engine,
        path: &Path,
        bytes: &[u8],
    ) -> wasmtime::Result<(Component, Origin)> {
        let digest: String = Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let entry = self.dir.join(format!("{digest}-{}.cwasm", self.engine_key));
        if entry.exists() {
            // SAFETY: the entry was written by `Engine::precompile_component` of an
            // engine with the same compatibility hash (it is in the file name), into
            // a directory only this host writes; wasmtime also checks the header.
            match unsafe { Component::deserialize_file(engine, &entry) } {
                Ok(component) => return Ok((component, Origin::Cached)),
                Err(error) => {
                    tracing::warn!(entry = %entry.display(), %error, "ignoring an unreadable compile-cache entry")
                }
            }
        }
        let started = Instant::now();
        if bytes.len() >= ANNOUNCE_BYTES {
            tracing::info!(
                component = %path.display(),
                megabytes = format!("{:.1}", bytes.len() as f64 / 1_048_576.0),
                "compiling for the first time; this takes a few seconds, later starts read the compile cache"
            );
        }
        let compiled = engine
            .precompile_component(bytes)
            .with_context(|| format!("{} is not a valid WebAssembly component", path.display()))?;
        if bytes.len() >= ANNOUNCE_BYTES {
            tracing::info!(component = %path.display(), seconds = format!("{:.1}", started.elapsed().as_secs_f64()), "compiled");
        }
        if let Err(error) = self.store(&entry, &compiled) {
            tracing::warn!(dir = %self.dir.display(), %error, "cannot write the compile cache; the next start compiles again");
        }
        // SAFETY: `compiled` was just produced by `precompile_component` of this engine.
        let component = unsafe { Component::deserialize(engine, &compiled) }?;
        Ok((component, Origin::Compiled))
    }

    fn store(&self, entry: &Path, compiled: &[u8]) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.dir)?;
        let temporary = entry.with_extension(format!("tmp{}", std::process::id()));
        std::fs::write(&temporary, compiled)?;
        std::fs::rename(&temporary, entry)
    }
}
