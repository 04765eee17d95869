//! Hot load: the plugin directories are watched, and a new, changed or removed
//! component (or sidecar policy) rebuilds the catalog without a restart.
//!
//! The watch polls each directory's listing (names, sizes, modification times)
//! every half second: portable, cheap for a directory of components, and it sees a
//! file only once it is complete (a copy in progress changes its size). A catalog
//! that fails to load is logged (`error.type = "reload_refused"`, with the file and
//! key at fault) and the old one stays in service. The watcher itself never stops:
//! each load runs in a task of its own, so even a panic in it is only logged.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use super::Server;
use crate::catalog::Catalog;
use crate::config::Config;
use crate::runtime::Runtime;

/// How often the directories are looked at.
pub const POLL: Duration = Duration::from_millis(500);

type Fingerprint = Vec<(PathBuf, u64, Option<SystemTime>)>;

/// Watches the plugin directories of the configuration `load` returns, until the
/// task is dropped; `load` is called again for each change.
pub async fn watch(
    server: Arc<Server>,
    runtime: Arc<Runtime>,
    load: impl Fn() -> Result<Config, String> + Send + Sync,
) {
    let dirs = match load() {
        Ok(config) => config.host.plugin_dirs,
        Err(_) => return,
    };
    if dirs.is_empty() {
        return;
    }
    let mut seen = fingerprint(&dirs);
    loop {
        tokio::time::sleep(POLL).await;
        let now = fingerprint(&dirs);
        if now == seen {
            continue;
        }
        // Wait one more round for the files to settle (a copy in progress).
        tokio::time::sleep(POLL).await;
        let settled = fingerprint(&dirs);
        if settled != now {
            continue;
        }
        seen = settled;
        let config = match load() {
            Ok(config) => config,
            Err(error) => {
                tracing::error!(%error, error.type = "reload_refused", "plugin directory changed, but the configuration does not load; keeping the current tools");
                reloaded("refused");
                continue;
            }
        };
        let loading = tokio::spawn({
            let runtime = runtime.clone();
            async move { Catalog::load(&config, &runtime).await }
        });
        match loading.await {
            Ok(Ok(catalog)) => {
                let names: Vec<&str> = catalog.tools().iter().map(|t| t.name.as_str()).collect();
                tracing::info!(tools = %names.join(", "), "plugin directory changed; catalog reloaded");
                server.replace_catalog(Arc::new(catalog)).await;
                reloaded("ok");
            }
            Ok(Err(error)) => {
                tracing::error!(%error, error.type = "reload_refused", "plugin directory changed, but a plugin does not load; keeping the current tools");
                reloaded("refused");
            }
            Err(error) => {
                tracing::error!(%error, error.type = "reload_refused", "plugin directory changed, but loading it failed; keeping the current tools");
                reloaded("refused");
            }
        }
    }
}

/// Counts a reload in `toolhost_catalog_reloads_total`.
fn reloaded(outcome: &'static str) {
    metrics::counter!("toolhost_catalog_reloads_total", "outcome" => outcome).increment(1);
}

fn fingerprint(dirs: &[PathBuf]) -> Fingerprint {
    let mut entries = Vec::new();
    for dir in dirs {
        entries.extend(listing(dir));
    }
    entries.sort();
    entries
}

fn listing(dir: &Path) -> Fingerprint {
    let Ok(read) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    read.filter_map(Result::ok)
        .map(|entry| entry.path())
        .filter(|path| path.extension().is_some_and(|x| x == "wasm" || x == "toml"))
        .filter_map(|path| {
            let meta = std::fs::metadata(&path).ok()?;
            Some((path, meta.len(), meta.modified().ok()))
        })
        .collect()
}
