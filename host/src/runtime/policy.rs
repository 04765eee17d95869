//! A plugin's policy turned into capabilities, in two steps (the Spin pattern):
//! [`Capabilities::configure`] once per plugin at load (parse, validate, read the
//! granted environment, warn about odd settings), and [`Capabilities::prepare`]
//! per instance, cheaply, building the WASI context of one call.
//!
//! Defaults are deny: no preopened directories, no environment variables, no
//! network (no TCP or UDP sockets at all, name lookup off), no configuration
//! values. With network rules, a guest may look up only the names they name.
//!
//! A preopened directory is opened once, at load, and kept open for the plugin's
//! life ([`Preopen`]); every call is given that same directory, never the host path
//! resolved again, so a path renamed or replaced by a symlink after load (by
//! another plugin, say) changes nothing a call can reach.
//!
//! Network checks run in one closure on the *resolved* socket address
//! ([`NetworkPolicy`]: allow-list first, then blocked networks). Every denial is
//! logged with `error.type = "network_denied"` and recorded for the call's fault
//! report.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

use super::http::{HttpBudgets, HttpGate, HttpTls};
use super::network::NetworkPolicy;
use super::output::GuestOutput;
use super::state::CallBudgets;
use crate::config::{PolicyConfig, SecretConfig};

/// A policy that cannot be applied.
#[derive(Debug, thiserror::Error)]
#[error("plugin {plugin}: {problem}")]
pub struct PolicyError {
    pub plugin: String,
    pub problem: String,
}

/// What one plugin may do, validated once at load.
#[derive(Debug)]
pub struct Capabilities {
    plugin: Arc<str>,
    preopens: Vec<Preopen>,
    env: Vec<(String, String)>,
    network: Arc<NetworkPolicy>,
    /// The HTTP rules, secrets and budgets of `wasi:http`.
    http: Arc<HttpGate>,
    /// The granted configuration values and the secrets' placeholders.
    config: Arc<BTreeMap<String, String>>,
    /// Memory limit per instance, in bytes.
    pub memory_bytes: usize,
    /// Wall-clock budget of one call.
    pub timeout: std::time::Duration,
    pub fuel: Option<u64>,
    pub max_instances: u32,
    /// Resource-table entries per call (`max_resources`).
    pub max_resources: u32,
    /// Bytes of log and progress messages per call.
    pub call_budgets: CallBudgets,
    /// Bytes of a result, checked before it is converted (`max_result_bytes`).
    pub max_result_bytes: u64,
}

/// The denials of one call, shared between its WASI context and the runtime.
pub type Denials = Arc<Mutex<Vec<String>>>;

/// Denials of one call that are recorded and logged; a guest that keeps trying
/// (one refused name lookup after another) adds no more log lines or memory.
pub const DENIALS_RECORDED_PER_CALL: usize = 16;

/// Records one denial of a call and logs it with `error.type = "network_denied"`,
/// up to [`DENIALS_RECORDED_PER_CALL`]; past that, only one line says so.
pub fn record_denial(denials: &Denials, plugin: &str, tool: &str, denial: String) {
    let mut denials = denials.lock().expect("denials lock");
    if denials.len() < DENIALS_RECORDED_PER_CALL {
        tracing::warn!(%plugin, %tool, denial = %denial, error.type = "network_denied", "network access denied by policy");
        denials.push(denial);
    } else if denials.len() == DENIALS_RECORDED_PER_CALL {
        tracing::warn!(%plugin, %tool, error.type = "network_denied", "more network denials in this call; they are not logged");
        denials.push("and more".to_owned());
    }
}

impl Capabilities {
    /// Validates `policy` for `plugin`, and loads its `secrets` (trusted for HTTPS
    /// as `tls` says).
    ///
    /// # Errors
    ///
    /// A [`PolicyError`] when a preopened directory does not exist, a network or
    /// HTTP rule is malformed, or a secret cannot be loaded.
    pub fn configure(
        plugin: &str,
        policy: &PolicyConfig,
        secrets: &[SecretConfig],
        tls: Arc<HttpTls>,
    ) -> Result<Capabilities, PolicyError> {
        let error = |problem: String| PolicyError {
            plugin: plugin.to_owned(),
            problem,
        };
        let mut preopens = Vec::new();
        for preopen in &policy.preopens {
            let perms = if preopen.writable {
                FsPerms::ReadWrite
            } else {
                FsPerms::ReadOnly
            };
            preopens.push(Preopen::open(&preopen.host, &preopen.guest, perms).map_err(error)?);
        }
        let mut env = Vec::new();
        for name in &policy.env {
            match std::env::var(name) {
                Ok(value) => env.push((name.clone(), value)),
                Err(_) => {
                    tracing::warn!(plugin, variable = %name, "granted environment variable is not set on the host; the guest will not see it")
                }
            }
        }
        let network = NetworkPolicy::parse(&policy.network).map_err(error)?;
        let http = HttpGate::configure(
            plugin,
            &policy.http,
            secrets,
            HttpBudgets {
                requests: policy.max_http_requests,
                sent_bytes: policy.max_http_request_bytes,
                received_bytes: policy.max_http_response_bytes,
            },
            tls,
        )
        .map_err(error)?;
        let mut config = policy.config.clone();
        config.extend(http.placeholder_entries());
        Ok(Capabilities {
            plugin: plugin.into(),
            preopens,
            env,
            network: Arc::new(network),
            http: Arc::new(http),
            config: Arc::new(config),
            memory_bytes: usize::try_from(policy.memory_mib.min(4096) << 20).unwrap_or(usize::MAX),
            timeout: std::time::Duration::from_millis(policy.timeout_ms),
            fuel: policy.fuel,
            max_instances: policy.max_instances,
            max_resources: policy.max_resources,
            call_budgets: CallBudgets {
                log_bytes: policy.max_log_bytes,
                progress_bytes: policy.max_progress_bytes,
                input_requests: policy.max_input_requests,
            },
            max_result_bytes: policy.max_result_bytes,
        })
    }

    /// Whether any network or HTTP rule exists (for the `openWorldHint` a tool
    /// leaves unset).
    pub fn has_network(&self) -> bool {
        !self.network.is_empty() || self.http.has_rules()
    }

    /// Whether the plugin may send any HTTP request.
    pub fn has_http(&self) -> bool {
        self.http.has_rules()
    }

    /// The plugin's HTTP rules, secrets and budgets.
    pub(super) fn http(&self) -> &Arc<HttpGate> {
        &self.http
    }

    /// Whether any preopen is writable (for the `readOnlyHint` a tool leaves unset).
    pub fn has_writable_preopen(&self) -> bool {
        self.preopens
            .iter()
            .any(|preopen| matches!(preopen.perms, FsPerms::ReadWrite))
    }

    /// The configuration values granted to the plugin.
    pub fn config(&self) -> Arc<BTreeMap<String, String>> {
        self.config.clone()
    }

    /// The plugin's network rules, for the lookup filter and the socket wrapper.
    pub(super) fn network(&self) -> Arc<NetworkPolicy> {
        self.network.clone()
    }

    /// The WASI context of one call of `tool`: the granted directories and
    /// variables, the network check recording into `denials`, stdout and stderr to
    /// the log.
    ///
    /// # Errors
    ///
    /// When a preopened directory can no longer be opened (`/proc` is gone).
    pub fn prepare(
        &self,
        tool: &Arc<str>,
        stderr: &GuestOutput,
        stdout: &GuestOutput,
        denials: &Denials,
    ) -> wasmtime::Result<WasiCtx> {
        let mut builder = WasiCtxBuilder::new();
        builder.stdout(stdout.clone()).stderr(stderr.clone());
        for preopen in &self.preopens {
            builder.preopened_dir(&preopen.path, &preopen.guest, preopen.perms)?;
        }
        builder.envs(&self.env);
        // Without a network rule a guest cannot even create a socket (which would
        // hold a host descriptor); with one, every address reaches the check
        // below, which denies (and records) whatever the rules do not grant.
        let network = !self.network.is_empty();
        builder.allow_tcp(network);
        builder.allow_udp(network);
        // Lookups are on with any rule, and filtered per name in the linker
        // (`lookup.rs`): only the names the rules name are resolved.
        builder.allow_ip_name_lookup(network);
        let rules = self.network.clone();
        let denials = denials.clone();
        let plugin = self.plugin.clone();
        let tool = tool.clone();
        builder.socket_addr_check(move |addr, usage| {
            let rules = rules.clone();
            let denials = denials.clone();
            let plugin = plugin.clone();
            let tool = tool.clone();
            Box::pin(async move {
                let allowed = rules.allows(addr, usage).await;
                if !allowed {
                    record_denial(
                        &denials,
                        &plugin,
                        &tool,
                        format!("network access to {addr} ({usage:?}) is not granted"),
                    );
                }
                allowed
            })
        });
        Ok(builder.build())
    }
}

/// A directory granted to a plugin, opened once at load and kept open.
///
/// wasmtime-wasi 48 takes a preopen only as a host path, which it opens anew for
/// every call. Each call is therefore given the path of the kept descriptor,
/// `/proc/self/fd/<n>`: a "magic link" that the kernel resolves to the very
/// directory opened at load, wherever it has been moved and whatever now lies at its
/// old path. (Where there is no `/proc`, the canonical path fixed at load is used.)
#[derive(Debug)]
struct Preopen {
    /// The directory, open for the plugin's life: held, never read, since its
    /// descriptor is what `path` names.
    _handle: File,
    /// What each call opens, fixed at load: the kept descriptor's magic link
    /// (where there is no `/proc`, the canonical path).
    path: PathBuf,
    guest: String,
    perms: FsPerms,
}

impl Preopen {
    /// Opens the directory at `host` (already canonical when the configuration's
    /// grant check ran) and checks that a call can reach it through the handle.
    fn open(host: &Path, guest: &str, perms: FsPerms) -> Result<Preopen, String> {
        let not_a_dir = |why: String| {
            format!(
                "preopen {} is not a directory on the host ({why}); create it or fix `host`",
                host.display()
            )
        };
        let handle = File::open(host).map_err(|e| not_a_dir(e.to_string()))?;
        let meta = handle.metadata().map_err(|e| not_a_dir(e.to_string()))?;
        if !meta.is_dir() {
            return Err(not_a_dir("it is a file".into()));
        }
        #[cfg(target_os = "linux")]
        let path = {
            use std::os::fd::AsRawFd as _;
            PathBuf::from(format!("/proc/self/fd/{}", handle.as_raw_fd()))
        };
        #[cfg(not(target_os = "linux"))]
        let path = host.to_path_buf();
        // The path must lead to this very directory, or calls would fail.
        let reopened = std::fs::metadata(&path).map_err(|e| {
            format!(
                "preopen {}: cannot reach the directory opened at load through {} ({e}); is /proc mounted?",
                host.display(),
                path.display()
            )
        })?;
        if !same_file(&meta, &reopened) {
            return Err(format!(
                "preopen {}: {} does not lead to the directory opened at load",
                host.display(),
                path.display()
            ));
        }
        Ok(Preopen {
            _handle: handle,
            path,
            guest: guest.to_owned(),
            perms,
        })
    }
}

#[cfg(unix)]
fn same_file(a: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    a.dev() == b.dev() && a.ino() == b.ino()
}

#[cfg(not(unix))]
fn same_file(_: &std::fs::Metadata, b: &std::fs::Metadata) -> bool {
    b.is_dir()
}
