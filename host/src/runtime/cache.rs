//! The on-disk cache of compiled components, so a restart does not recompile.
//!
//! An entry is named by the SHA-256 of the component's bytes and a hash of the
//! engine's compatibility settings (wasmtime version, target, compiler flags), so a
//! changed component or a different engine never reads a stale entry. Entries are
//! written to a temporary file and renamed into place: a crash leaves no half entry.
//!
//! An entry is native code the host runs, so what the host loads must be what it
//! wrote. Defaults, security first:
//! - the cache directory is created 0700, and a directory that is group- or
//!   world-writable is refused ([`ensure_private_dir`]);
//! - every entry carries an HMAC-SHA256 tag over its name and bytes, under a key of
//!   32 random bytes kept beside the entries in [`KEY_FILE`] (created 0600; a key
//!   file readable by group or others is refused). An entry is read into memory,
//!   its tag checked, and only those very bytes are deserialized; an entry that
//!   fails the check (planted, changed, or copied from another component's name) is
//!   logged with `error.type = "compile_cache_rejected"` and compiled again, never
//!   loaded.

use std::hash::{Hash, Hasher};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use hmac::{Hmac, KeyInit, Mac};
use sha2::{Digest, Sha256};
use wasmtime::Engine;
use wasmtime::component::Component;
use wasmtime::error::Context as _;

use crate::store::private;

/// Components larger than this get a progress line while they compile.
const ANNOUNCE_BYTES: usize = 1 << 20;

/// The file in the cache directory holding the MAC key (hex).
pub const KEY_FILE: &str = "cache.key";

/// The length of an entry's tag, appended to the compiled bytes.
const TAG_BYTES: usize = 32;

/// Where a component's compiled form is kept.
#[derive(Clone)]
pub struct CompileCache {
    dir: PathBuf,
    engine_key: String,
    key: Arc<[u8]>,
}

/// How a component was obtained, for logs and benchmarks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    Cached,
    Compiled,
}

impl CompileCache {
    /// A cache in `dir` (created 0700 when missing) for `engine`, with its MAC key
    /// (created when missing).
    ///
    /// # Errors
    ///
    /// When `dir` is group- or world-writable, or the key file is readable by group
    /// or others, cannot be created or holds no key; each message says how to fix it.
    pub fn new(dir: PathBuf, engine: &Engine) -> Result<Self, String> {
        ensure_private_dir(&dir, "the compile cache")?;
        let key = load_or_create_key(&dir.join(KEY_FILE))?;
        let mut hasher = std::collections::hash_map::DefaultHasher::new();
        engine.precompile_compatibility_hash().hash(&mut hasher);
        Ok(CompileCache {
            dir,
            engine_key: format!("{:016x}", hasher.finish()),
            key: key.into(),
        })
    }

    /// The component in `bytes` (read from `path`), from the cache or compiled,
    /// with the SHA-256 of `bytes` in hex (its name in the cache, and the
    /// component's digest in the audit log).
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
    ) -> wasmtime::Result<(Component, Origin, String)> {
        let digest: String = Sha256::digest(bytes)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let name = format!("{digest}-{}.cwasm", self.engine_key);
        let entry = self.dir.join(&name);
        match std::fs::read(&entry) {
            Ok(stored) => match self.verified(&name, &stored) {
                // SAFETY: these bytes carry a valid tag under the host's key, so this
                // host wrote them, from `Engine::precompile_component` of an engine
                // with the same compatibility hash (it is in the name, which the tag
                // covers); wasmtime also checks the header. They are the bytes just
                // checked, not the file read again.
                Some(compiled) => match unsafe { Component::deserialize(engine, compiled) } {
                    Ok(component) => return Ok((component, Origin::Cached, digest)),
                    Err(error) => {
                        tracing::warn!(entry = %entry.display(), %error, "ignoring an unreadable compile-cache entry")
                    }
                },
                None => {
                    tracing::warn!(entry = %entry.display(), component = %path.display(), error.type = "compile_cache_rejected", "compile-cache entry fails its MAC check (not written by this host, or changed since); compiling the component again instead of loading it")
                }
            },
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => {}
            Err(error) => {
                tracing::warn!(entry = %entry.display(), %error, "cannot read a compile-cache entry; compiling again")
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
        if let Err(error) = self.store(&name, &compiled) {
            tracing::warn!(dir = %self.dir.display(), %error, "cannot write the compile cache; the next start compiles again");
        }
        // SAFETY: `compiled` was just produced by `precompile_component` of this engine.
        let component = unsafe { Component::deserialize(engine, &compiled) }?;
        Ok((component, Origin::Compiled, digest))
    }

    /// The tag of the entry `name` holding `compiled`.
    fn tag(&self, name: &str, compiled: &[u8]) -> Hmac<Sha256> {
        let mut mac =
            <Hmac<Sha256> as KeyInit>::new_from_slice(&self.key).expect("HMAC takes any key");
        // Length-prefixed, so no (name, bytes) pair shares a message with another.
        mac.update(&(name.len() as u64).to_be_bytes());
        mac.update(name.as_bytes());
        mac.update(compiled);
        mac
    }

    /// The compiled bytes of a stored entry when its tag holds.
    fn verified<'a>(&self, name: &str, stored: &'a [u8]) -> Option<&'a [u8]> {
        let split = stored.len().checked_sub(TAG_BYTES)?;
        let (compiled, tag) = stored.split_at(split);
        self.tag(name, compiled).verify_slice(tag).ok()?;
        Some(compiled)
    }

    fn store(&self, name: &str, compiled: &[u8]) -> std::io::Result<()> {
        let entry = self.dir.join(name);
        // Unique per process and store, so two loads of one component at once
        // never share a temporary file.
        static STORES: AtomicU64 = AtomicU64::new(0);
        let temporary = entry.with_extension(format!(
            "tmp{}-{}",
            std::process::id(),
            STORES.fetch_add(1, Ordering::Relaxed)
        ));
        let written = private::create_new(&temporary).and_then(|mut file| {
            file.write_all(compiled)?;
            file.write_all(&self.tag(name, compiled).finalize().into_bytes())
        });
        let renamed = written.and_then(|()| std::fs::rename(&temporary, entry));
        if renamed.is_err() {
            let _ = std::fs::remove_file(&temporary);
        }
        renamed
    }
}

/// Creates `dir` (and its missing parents) with mode 0700, or checks the one that
/// exists: a directory that group or others may write to is refused, since whoever
/// can write there can plant what the host loads. `what` names it in the message.
///
/// # Errors
///
/// When the directory cannot be created, is not a directory, or is group- or
/// world-writable (the message says to `chmod 700` it).
pub fn ensure_private_dir(dir: &Path, what: &str) -> Result<(), String> {
    if !dir.exists() {
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder
            .create(dir)
            .map_err(|e| format!("cannot create {what} {}: {e}", dir.display()))?;
    }
    let meta =
        std::fs::metadata(dir).map_err(|e| format!("cannot read {what} {}: {e}", dir.display()))?;
    if !meta.is_dir() {
        return Err(format!("{what} {} is not a directory", dir.display()));
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = meta.permissions().mode() & 0o7777;
        if mode & 0o022 != 0 {
            return Err(format!(
                "{what} {} is writable by group or others (mode {mode:o}): whoever can write there can plant code or data the host loads; fix it with `chmod 700 {}`",
                dir.display(),
                dir.display()
            ));
        }
    }
    Ok(())
}

/// The MAC key in `path` (hex), created with 32 random bytes and mode 0600 when
/// missing. Two hosts starting at once on one cache agree on a single key: it is
/// written whole under a temporary name and linked into place only if none exists.
fn load_or_create_key(path: &Path) -> Result<Vec<u8>, String> {
    let shown = path.display();
    if !path.exists() {
        let mut key = [0u8; 32];
        getrandom::fill(&mut key).map_err(|e| format!("cannot make a key for {shown}: {e}"))?;
        // Unique per process and attempt: two engines of one process (tests run
        // side by side) must not remove each other's temporary key.
        static ATTEMPTS: AtomicU64 = AtomicU64::new(0);
        let temporary = path.with_extension(format!(
            "tmp{}-{}",
            std::process::id(),
            ATTEMPTS.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_file(&temporary);
        let written = private::create_new(&temporary)
            .and_then(|mut file| file.write_all(hex::encode(key).as_bytes()))
            .and_then(|()| std::fs::hard_link(&temporary, path));
        let _ = std::fs::remove_file(&temporary);
        match written {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(format!("cannot create the compile-cache key {shown}: {e}")),
        }
    }
    private::check(path, "the compile-cache key").map_err(|e| e.to_string())?;
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!("the compile-cache key {shown} is not a file"));
    }
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    match hex::decode(text.trim()) {
        Ok(key) if key.len() >= 32 => Ok(key),
        _ => Err(format!(
            "the compile-cache key {shown} does not hold 32 bytes in hex; delete it (a new one is made, and the cache is compiled again)"
        )),
    }
}

/// A private directory for one run (mode 0700, created anew under the temporary
/// directory, removed when dropped): the compile cache of `toolhost check`, which
/// has no data directory. A shared, predictable path there could be planted.
pub struct ScratchDir(PathBuf);

impl ScratchDir {
    /// # Errors
    ///
    /// When no fresh directory can be created.
    pub fn new(prefix: &str) -> std::io::Result<ScratchDir> {
        let mut builder = std::fs::DirBuilder::new();
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        let mut last = None;
        for _ in 0..16 {
            let mut nonce = [0u8; 8];
            getrandom::fill(&mut nonce).map_err(|e| std::io::Error::other(e.to_string()))?;
            let path = std::env::temp_dir().join(format!("{prefix}-{}", hex::encode(nonce)));
            // Not recursive: creating a directory that exists fails, so the
            // directory is this run's own.
            match builder.create(&path) {
                Ok(()) => return Ok(ScratchDir(path)),
                Err(e) => last = Some(e),
            }
        }
        Err(last.expect("at least one attempt"))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cache(dir: &Path) -> CompileCache {
        CompileCache::new(dir.join("cache"), &Engine::default()).unwrap()
    }

    #[test]
    fn a_changed_or_moved_entry_fails_its_check() {
        let dir = tempfile::tempdir().unwrap();
        let cache = cache(dir.path());
        let compiled = b"native code".to_vec();
        let mut stored = compiled.clone();
        stored.extend_from_slice(&cache.tag("a.cwasm", &compiled).finalize().into_bytes());
        assert_eq!(cache.verified("a.cwasm", &stored), Some(&compiled[..]));
        // Under another component's name, changed, cut short, or without a tag.
        assert_eq!(cache.verified("b.cwasm", &stored), None);
        let mut changed = stored.clone();
        changed[0] ^= 1;
        assert_eq!(cache.verified("a.cwasm", &changed), None);
        assert_eq!(cache.verified("a.cwasm", &stored[..10]), None);
        assert_eq!(cache.verified("a.cwasm", &compiled), None);
        // Another key (another host) does not verify this host's entries.
        let other = CompileCache::new(dir.path().join("other"), &Engine::default()).unwrap();
        assert_eq!(other.verified("a.cwasm", &stored), None);
    }

    /// Tests run engines side by side on one fresh cache directory (a fresh
    /// clone's first `make test`): every one gets the key, and all the same one.
    #[test]
    fn engines_starting_at_once_on_a_fresh_cache_agree_on_one_key() {
        let dir = tempfile::tempdir().unwrap();
        let key = dir.path().join("cache").join(KEY_FILE);
        let together = std::sync::Barrier::new(64);
        let keys: Vec<Vec<u8>> = std::thread::scope(|scope| {
            let starts: Vec<_> = (0..64)
                .map(|_| {
                    scope.spawn(|| {
                        together.wait();
                        ensure_private_dir(&dir.path().join("cache"), "the compile cache")?;
                        load_or_create_key(&key)
                    })
                })
                .collect();
            starts
                .into_iter()
                .map(|start| start.join().unwrap().unwrap())
                .collect()
        });
        assert!(keys.windows(2).all(|pair| pair[0] == pair[1]));
    }

    #[cfg(unix)]
    #[test]
    fn the_directory_and_key_are_private_and_loose_ones_are_refused() {
        use std::os::unix::fs::PermissionsExt as _;
        let dir = tempfile::tempdir().unwrap();
        let cache_dir = dir.path().join("data/cache");
        let first = cache(&dir.path().join("data")).key;
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&cache_dir), 0o700);
        assert_eq!(mode(&dir.path().join("data")), 0o700);
        assert_eq!(mode(&cache_dir.join(KEY_FILE)), 0o600);
        // The key is kept: a second start verifies the first one's entries.
        assert_eq!(cache(&dir.path().join("data")).key, first);

        let set = |p: &Path, mode: u32| {
            std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap()
        };
        set(&cache_dir.join(KEY_FILE), 0o644);
        let error = CompileCache::new(cache_dir.clone(), &Engine::default())
            .err()
            .unwrap();
        assert!(error.contains("chmod 600"), "{error}");
        set(&cache_dir.join(KEY_FILE), 0o600);
        set(&cache_dir, 0o777);
        let error = CompileCache::new(cache_dir.clone(), &Engine::default())
            .err()
            .unwrap();
        assert!(
            error.contains("writable by group or others") && error.contains("chmod 700"),
            "{error}"
        );
    }
}
