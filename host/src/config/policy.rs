//! A plugin's policy as the operator writes it (`[plugin.policy]`, or `[policy]`
//! in a sidecar): what the guest may reach and the budgets of each call, with
//! their defaults and the ranges the configuration is checked against.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::ConfigError;

/// What a plugin may do, as the operator wrote it. Every default is the safe one:
/// no preopened directories, no environment variables, no network, no HTTP
/// request, no configuration values, 64 MiB of memory, 10 s per call, no fuel
/// metering, 16 concurrent instances; per call at most 256 resource-table entries
/// (open files, sockets, streams), 1 MiB of log messages, 1 MiB of progress
/// messages, a result of 16 MiB, and (with HTTP rules) 64 requests, 8 MiB of
/// request bodies and 16 MiB of response bodies.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicyConfig {
    #[serde(default)]
    pub preopens: Vec<PreopenConfig>,
    /// Names of host environment variables passed through (values are read at load).
    #[serde(default)]
    pub env: Vec<String>,
    /// Addresses the guest may connect to: `host:port`, where host is an IP
    /// address, a CIDR block or a DNS name, and port a number or `*`.
    #[serde(default)]
    pub network: Vec<String>,
    /// Requests the guest may send through `wasi:http`:
    /// `"[METHODS ]SCHEME://HOST[:PORT][PATH]"`, e.g. `"https://api.github.com/*"`
    /// or `"GET https://example.org/search"`.
    #[serde(default)]
    pub http: Vec<String>,
    /// Requests one call may send through `wasi:http`.
    #[serde(default = "PolicyConfig::default_max_http_requests")]
    pub max_http_requests: u32,
    /// Bytes of request bodies one call may send.
    #[serde(default = "PolicyConfig::default_max_http_request_bytes")]
    pub max_http_request_bytes: u64,
    /// Bytes of response bodies one call may receive.
    #[serde(default = "PolicyConfig::default_max_http_response_bytes")]
    pub max_http_response_bytes: u64,
    /// Values the guest reads with the host `get-config` import.
    #[serde(default)]
    pub config: BTreeMap<String, String>,
    #[serde(default = "PolicyConfig::default_memory_mib")]
    pub memory_mib: u64,
    #[serde(default = "PolicyConfig::default_timeout_ms")]
    pub timeout_ms: u64,
    /// Instructions a call may execute (wasmtime fuel); none means unmetered.
    #[serde(default)]
    pub fuel: Option<u64>,
    #[serde(default = "PolicyConfig::default_max_instances")]
    pub max_instances: u32,
    /// Resource-table entries (open files, sockets, streams, ...) one call may
    /// hold at once.
    #[serde(default = "PolicyConfig::default_max_resources")]
    pub max_resources: u32,
    /// Bytes of log messages one call may send through the `log` import.
    #[serde(default = "PolicyConfig::default_max_log_bytes")]
    pub max_log_bytes: u64,
    /// Bytes of progress messages one call may send through `progress`.
    #[serde(default = "PolicyConfig::default_max_progress_bytes")]
    pub max_progress_bytes: u64,
    /// Bytes of a call's result (its strings and lists), checked before the host
    /// converts it.
    #[serde(default = "PolicyConfig::default_max_result_bytes")]
    pub max_result_bytes: u64,
    /// Questions one call may put to its caller through the `interaction`
    /// import (`elicit`, `sample`); 0 refuses every question.
    #[serde(default = "PolicyConfig::default_max_input_requests")]
    pub max_input_requests: u32,
}

/// The most questions a policy may let one call ask: a stateless caller sends
/// every earlier answer back with each round.
pub const MAX_INPUT_REQUESTS: u32 = 32;

impl PolicyConfig {
    fn default_memory_mib() -> u64 {
        64
    }
    fn default_timeout_ms() -> u64 {
        10_000
    }
    fn default_max_instances() -> u32 {
        16
    }
    fn default_max_resources() -> u32 {
        256
    }
    fn default_max_log_bytes() -> u64 {
        1 << 20
    }
    fn default_max_progress_bytes() -> u64 {
        1 << 20
    }
    fn default_max_result_bytes() -> u64 {
        16 << 20
    }
    fn default_max_input_requests() -> u32 {
        8
    }
    fn default_max_http_requests() -> u32 {
        64
    }
    fn default_max_http_request_bytes() -> u64 {
        8 << 20
    }
    fn default_max_http_response_bytes() -> u64 {
        16 << 20
    }
}

impl Default for PolicyConfig {
    fn default() -> Self {
        PolicyConfig {
            preopens: Vec::new(),
            env: Vec::new(),
            network: Vec::new(),
            http: Vec::new(),
            max_http_requests: Self::default_max_http_requests(),
            max_http_request_bytes: Self::default_max_http_request_bytes(),
            max_http_response_bytes: Self::default_max_http_response_bytes(),
            config: BTreeMap::new(),
            memory_mib: Self::default_memory_mib(),
            timeout_ms: Self::default_timeout_ms(),
            fuel: None,
            max_instances: Self::default_max_instances(),
            max_resources: Self::default_max_resources(),
            max_log_bytes: Self::default_max_log_bytes(),
            max_progress_bytes: Self::default_max_progress_bytes(),
            max_result_bytes: Self::default_max_result_bytes(),
            max_input_requests: Self::default_max_input_requests(),
        }
    }
}

/// A host directory made visible to the guest.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PreopenConfig {
    /// The directory on the host (relative to the configuring file).
    pub host: PathBuf,
    /// Where the guest sees it (`/data`).
    pub guest: String,
    /// Whether the guest may create, change and delete files in it.
    #[serde(default)]
    pub writable: bool,
}

/// The largest `policy.memory_mib`: a 32-bit guest cannot address more.
pub const MAX_MEMORY_MIB: u64 = 4096;
/// The largest `policy.timeout_ms`: one hour.
pub const MAX_TIMEOUT_MS: u64 = 3_600_000;
/// The largest `policy.max_instances`.
pub const MAX_INSTANCES: u32 = 1024;

/// Each limit of `policy` within its range (and never zero), so no later
/// arithmetic on it can overflow.
pub(super) fn check_limits(
    name: &str,
    policy: &PolicyConfig,
    file: &Path,
) -> Result<(), ConfigError> {
    let out_of_range = |key: &str, value: u64, max: u64, unit: &str| {
        ConfigError::new(
            file,
            format!("plugin {name}: policy.{key} = {value} is out of range; use 1 to {max}{unit}"),
        )
    };
    if !(1..=MAX_MEMORY_MIB).contains(&policy.memory_mib) {
        return Err(out_of_range(
            "memory_mib",
            policy.memory_mib,
            MAX_MEMORY_MIB,
            " (MiB; a 32-bit guest cannot use more than 4 GiB)",
        ));
    }
    if !(1..=MAX_TIMEOUT_MS).contains(&policy.timeout_ms) {
        return Err(out_of_range(
            "timeout_ms",
            policy.timeout_ms,
            MAX_TIMEOUT_MS,
            " (milliseconds, one hour)",
        ));
    }
    if !(1..=MAX_INSTANCES).contains(&policy.max_instances) {
        return Err(out_of_range(
            "max_instances",
            u64::from(policy.max_instances),
            u64::from(MAX_INSTANCES),
            "",
        ));
    }
    if policy.max_input_requests > MAX_INPUT_REQUESTS {
        return Err(ConfigError::new(
            file,
            format!(
                "plugin {name}: policy.max_input_requests = {} is out of range; use 0 (no questions) to {MAX_INPUT_REQUESTS}",
                policy.max_input_requests
            ),
        ));
    }
    for (key, value) in [
        ("max_resources", u64::from(policy.max_resources)),
        ("max_log_bytes", policy.max_log_bytes),
        ("max_progress_bytes", policy.max_progress_bytes),
        ("max_result_bytes", policy.max_result_bytes),
        ("max_http_requests", u64::from(policy.max_http_requests)),
        ("max_http_request_bytes", policy.max_http_request_bytes),
        ("max_http_response_bytes", policy.max_http_response_bytes),
    ] {
        if value == 0 {
            return Err(ConfigError::new(
                file,
                format!("plugin {name}: policy.{key} must be greater than 0"),
            ));
        }
    }
    if policy.fuel == Some(0) {
        return Err(ConfigError::new(
            file,
            format!(
                "plugin {name}: policy.fuel = 0 would stop every call at once; give a budget greater than 0 or leave it out"
            ),
        ));
    }
    Ok(())
}
