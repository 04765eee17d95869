//! A plugin's policy turned into capabilities, in two steps (the Spin pattern):
//! [`Capabilities::configure`] once per plugin at load (parse, validate, read the
//! granted environment, warn about odd settings), and [`Capabilities::prepare`]
//! per instance, cheaply, building the WASI context of one call.
//!
//! Defaults are deny: no preopened directories, no environment variables, no
//! network (no TCP or UDP sockets at all, name lookup off), no configuration
//! values.
//!
//! Network checks run in one closure on the *resolved* socket address
//! ([`NetworkPolicy`]: allow-list first, then blocked networks). Every denial is
//! logged with `error.type = "network_denied"` and recorded for the call's fault
//! report.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use wasmtime_wasi::{FsPerms, WasiCtx, WasiCtxBuilder};

use super::network::NetworkPolicy;
use super::output::GuestOutput;
use super::state::CallBudgets;
use crate::config::PolicyConfig;

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
    plugin: String,
    preopens: Vec<(PathBuf, String, FsPerms)>,
    env: Vec<(String, String)>,
    network: Arc<NetworkPolicy>,
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

impl Capabilities {
    /// Validates `policy` for `plugin`.
    ///
    /// # Errors
    ///
    /// A [`PolicyError`] when a preopened directory does not exist or a network
    /// rule is malformed.
    pub fn configure(plugin: &str, policy: &PolicyConfig) -> Result<Capabilities, PolicyError> {
        let error = |problem: String| PolicyError {
            plugin: plugin.to_owned(),
            problem,
        };
        let mut preopens = Vec::new();
        for preopen in &policy.preopens {
            if !preopen.host.is_dir() {
                return Err(error(format!(
                    "preopen {} is not a directory on the host; create it or fix `host`",
                    preopen.host.display()
                )));
            }
            let perms = if preopen.writable {
                FsPerms::ReadWrite
            } else {
                FsPerms::ReadOnly
            };
            preopens.push((preopen.host.clone(), preopen.guest.clone(), perms));
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
        if policy.memory_mib > 4096 {
            tracing::warn!(
                plugin,
                memory_mib = policy.memory_mib,
                "memory limit above 4 GiB: a 32-bit guest cannot use more than 4 GiB"
            );
        }
        Ok(Capabilities {
            plugin: plugin.to_owned(),
            preopens,
            env,
            network: Arc::new(network),
            config: Arc::new(policy.config.clone()),
            memory_bytes: usize::try_from(policy.memory_mib.min(4096) << 20).unwrap_or(usize::MAX),
            timeout: std::time::Duration::from_millis(policy.timeout_ms),
            fuel: policy.fuel,
            max_instances: policy.max_instances,
            max_resources: policy.max_resources,
            call_budgets: CallBudgets {
                log_bytes: policy.max_log_bytes,
                progress_bytes: policy.max_progress_bytes,
            },
            max_result_bytes: policy.max_result_bytes,
        })
    }

    /// Whether any network rule exists (for the `openWorldHint` a tool leaves unset).
    pub fn has_network(&self) -> bool {
        !self.network.is_empty()
    }

    /// Whether any preopen is writable (for the `readOnlyHint` a tool leaves unset).
    pub fn has_writable_preopen(&self) -> bool {
        self.preopens
            .iter()
            .any(|(_, _, perms)| matches!(perms, FsPerms::ReadWrite))
    }

    /// The configuration values granted to the plugin.
    pub fn config(&self) -> Arc<BTreeMap<String, String>> {
        self.config.clone()
    }

    /// The WASI context of one call of `tool`: the granted directories and
    /// variables, the network check recording into `denials`, stdout and stderr to
    /// the log.
    ///
    /// # Errors
    ///
    /// When a preopened directory can no longer be opened.
    pub fn prepare(
        &self,
        tool: &str,
        stderr: &GuestOutput,
        stdout: &GuestOutput,
        denials: &Denials,
    ) -> wasmtime::Result<WasiCtx> {
        let mut builder = WasiCtxBuilder::new();
        builder.stdout(stdout.clone()).stderr(stderr.clone());
        for (host, guest, perms) in &self.preopens {
            builder.preopened_dir(host, guest, *perms)?;
        }
        builder.envs(&self.env);
        // Without a network rule a guest cannot even create a socket (which would
        // hold a host descriptor); with one, every address reaches the check
        // below, which denies (and records) whatever the rules do not grant.
        let network = !self.network.is_empty();
        builder.allow_tcp(network);
        builder.allow_udp(network);
        builder.allow_ip_name_lookup(self.network.uses_names());
        let rules = self.network.clone();
        let denials = denials.clone();
        let plugin = self.plugin.clone();
        let tool = tool.to_owned();
        builder.socket_addr_check(move |addr, usage| {
            let rules = rules.clone();
            let denials = denials.clone();
            let plugin = plugin.clone();
            let tool = tool.clone();
            Box::pin(async move {
                let allowed = rules.allows(addr, usage).await;
                if !allowed {
                    tracing::warn!(%plugin, %tool, %addr, ?usage, error.type = "network_denied", "network access denied by policy");
                    denials.lock().expect("denials lock").push(format!("network access to {addr} ({usage:?}) is not granted"));
                }
                allowed
            })
        });
        Ok(builder.build())
    }
}
