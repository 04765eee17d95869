//! The operator's configuration: host settings and the plugins to load, read from
//! a TOML file (see `toolhost.example.toml` for every key with a comment).
//!
//! Plugins come in two ways: listed in the file (`[[plugin]]`), or as `.wasm` files
//! in a directory named by `host.plugin_dirs`, each with an optional sidecar
//! `<name>.toml` holding the same keys as a `[[plugin]]` table (without `path`).
//! Relative paths are resolved against the file that names them.
//!
//! Parsing checks shapes and values; every error names the file and the key.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use crate::render::{OutputMode, SizeLimits};

pub mod grants;
mod limits;
mod oauth;
mod policy;
mod privileges;
mod secret;
mod store;
mod telemetry;
mod trust;
mod webhook;
pub use limits::{LOCAL_PRINCIPAL, Rate, RateLimits};
pub use oauth::{OAuthConfig, secure_url};
use policy::check_limits;
pub use policy::{
    MAX_INPUT_REQUESTS, MAX_INSTANCES, MAX_MEMORY_MIB, MAX_TIMEOUT_MS, PolicyConfig, PreopenConfig,
};
pub use privileges::RequiredPrivileges;
pub use secret::{SECRET_KEY_PREFIX, SecretConfig, SecretSource};
pub use store::{Secret, StoreBackend, StoreConfig};
pub use telemetry::{TelemetryConfig, check_endpoint};
pub use trust::{OCI_SCHEME, TrustConfig};
pub use webhook::{WebhookConfig, WebhookToolConfig};

/// The configuration `make run` and `toolhost` use when no file is given: the Rust
/// example tools, built by `make guests`, with the default policy.
pub const EMBEDDED_DEFAULTS: &str = include_str!("../../../toolhost.default.toml");

/// A configuration problem, naming the file and what is wrong.
#[derive(Debug, thiserror::Error)]
#[error("{file}: {problem}")]
pub struct ConfigError {
    pub file: String,
    pub problem: String,
}

impl ConfigError {
    fn new(file: &Path, problem: impl Into<String>) -> Self {
        ConfigError {
            file: file.display().to_string(),
            problem: problem.into(),
        }
    }
}

/// The whole configuration, with paths resolved.
#[derive(Debug, Clone)]
pub struct Config {
    pub host: HostSettings,
    /// Where large results are kept and the key that signs their links.
    pub store: StoreConfig,
    pub plugins: Vec<PluginConfig>,
    /// App tools served by HTTP endpoints.
    pub webhooks: Vec<WebhookConfig>,
    /// Bearer tokens for HTTP callers; none (and no `oauth`) means a loopback
    /// server is open.
    pub tokens: Vec<TokenConfig>,
    /// OAuth 2.1 access tokens for HTTP callers (`[oauth]`, off by default).
    pub oauth: Option<OAuthConfig>,
    /// OpenTelemetry traces (`[telemetry]`; the `OTEL_*` variables too).
    pub telemetry: TelemetryConfig,
    /// The public keys that may sign components (`[trust]`).
    pub trust: TrustConfig,
}

/// One bearer token and who holds it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TokenConfig {
    /// The token itself, or the name of an environment variable holding it.
    #[serde(default)]
    pub token: Option<String>,
    #[serde(default)]
    pub token_env: Option<String>,
    /// The principal the token stands for (stored results are bound to it).
    pub principal: String,
    /// The privileges it grants; tools name the privileges they require.
    #[serde(default)]
    pub privileges: Vec<String>,
}

/// Settings of the host itself.
#[derive(Debug, Clone)]
pub struct HostSettings {
    /// Where the compile cache and (by default) the result store live.
    pub data_dir: PathBuf,
    /// The output mode for callers that do not choose one.
    pub output_mode: OutputMode,
    /// The largest rendering each format sends inline.
    pub size_limits: SizeLimits,
    /// Directories scanned for `.wasm` plugins with sidecar policies.
    pub plugin_dirs: Vec<PathBuf>,
    /// Use the pooling instance allocator (the default) or allocate on demand.
    pub pooling: bool,
    /// Browser origins allowed to call over HTTP (besides localhost ones).
    pub allowed_origins: Vec<String>,
    /// `Host` values the HTTP endpoint accepts besides `localhost`, `127.0.0.1`,
    /// `::1` and the bound address (a name or `name:port`, for a proxy in front).
    pub allowed_hosts: Vec<String>,
    /// Handshake-era HTTP sessions open at once (default 1,000); a new one past it
    /// closes the one idle longest.
    pub max_sessions: usize,
    /// Tasks this replica runs in the background at once (default 64); a call
    /// that would become a task past it keeps its caller waiting instead.
    pub max_running_tasks: usize,
    /// How long a stored result's link stays readable, in seconds.
    pub result_ttl_secs: i64,
    /// Addresses webhooks may be reached at (`host:port` rules, as for plugins).
    pub webhook_allow: Vec<String>,
    /// Bytes of guest results the host converts and renders at once, over every
    /// call (default 64 MiB); a result that does not fit waits for room until its
    /// call's deadline.
    pub max_result_bytes_in_flight: u64,
    /// One more CA (PEM) trusted for guests' outgoing HTTPS, beside the system's
    /// roots (`host.http_ca_file`).
    pub http_ca_file: Option<PathBuf>,
    /// How long a SIGTERM or SIGINT lets calls in flight finish (`host.drain_secs`,
    /// default 30).
    pub drain: std::time::Duration,
    /// Token buckets for `tools/call` (`[host.rate_limits]`, off by default).
    pub rate_limits: RateLimits,
    /// Where the audit log goes (`host.audit`, default off).
    pub audit: AuditSink,
    /// Whether audit lines carry argument values, not only their keys
    /// (`host.audit_values`, default false).
    pub audit_values: bool,
    /// A second listener serving only `GET /metrics` (`host.metrics_addr`), for
    /// a stdio server or an admin network.
    pub metrics_addr: Option<std::net::SocketAddr>,
    /// Whether metrics are recorded and served at all (`host.metrics`, default
    /// true); off, `/metrics` answers 404.
    pub metrics: bool,
}

/// Where the audit log's lines go.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum AuditSink {
    /// No audit log.
    #[default]
    Off,
    /// Standard error, between the log lines.
    Stderr,
    /// Appended to this file (created 0600 when missing).
    File(PathBuf),
}

impl HostSettings {
    /// The default of `host.drain_secs`.
    pub const DEFAULT_DRAIN_SECS: u64 = 30;
    /// The longest `host.drain_secs` accepted: an hour.
    pub const MAX_DRAIN_SECS: u64 = 3_600;
    /// The default of `host.max_result_bytes_in_flight`: 64 MiB.
    pub const DEFAULT_RESULT_BYTES_IN_FLIGHT: u64 = 64 << 20;
    /// The default of `host.max_sessions`.
    pub const DEFAULT_MAX_SESSIONS: usize = 1_000;
    /// The default of `host.max_running_tasks`.
    pub const DEFAULT_MAX_RUNNING_TASKS: usize = 64;
    /// The most `host.max_running_tasks` accepts.
    pub const MAX_RUNNING_TASKS: usize = 4_096;
}

/// One plugin: a component and the policy it runs under.
#[derive(Debug, Clone)]
pub struct PluginConfig {
    /// The plugin's name (logs, error details); defaults to the file stem (or
    /// the repository's last segment).
    pub name: String,
    /// The component's file; for a registry source, the `oci://` reference as
    /// written (for messages), and [`PluginConfig::registry`] says so.
    pub path: PathBuf,
    /// The `oci://` reference of a registry source; `None` for a file.
    pub registry: Option<String>,
    /// The `[trust.keys]` that may sign it; empty means any of them.
    pub signers: Vec<String>,
    /// Whether it loads only with a valid signature by one of its signers.
    pub require_signature: bool,
    /// The world the component must export; detected when absent.
    pub world: Option<World>,
    /// Prepended to each tool name (`<prefix>_<tool>`), to keep names unique.
    pub prefix: Option<String>,
    /// Privileges the operator requires of the callers of the plugin's tools (on
    /// top of what the plugin itself declares).
    pub privileges: RequiredPrivileges,
    pub policy: PolicyConfig,
    /// Credentials its requests may carry (`[[plugin.secret]]`; never from a sidecar).
    pub secrets: Vec<SecretConfig>,
    /// The file this plugin was configured in, for error messages.
    pub configured_in: PathBuf,
}

/// The two worlds a component may implement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum World {
    Plugin,
    LegacyApp,
}

impl World {
    pub fn as_str(self) -> &'static str {
        match self {
            World::Plugin => "plugin",
            World::LegacyApp => "legacy-app",
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawConfig {
    #[serde(default)]
    host: RawHost,
    #[serde(default)]
    store: store::RawStore,
    #[serde(default)]
    plugin: Vec<RawPlugin>,
    #[serde(default)]
    webhook: Vec<WebhookConfig>,
    #[serde(default)]
    token: Vec<TokenConfig>,
    oauth: Option<oauth::RawOAuth>,
    #[serde(default)]
    telemetry: telemetry::RawTelemetry,
    #[serde(default)]
    trust: trust::RawTrust,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawHost {
    data_dir: Option<PathBuf>,
    output_mode: Option<String>,
    size_limit: Option<usize>,
    #[serde(default)]
    size_limits: RawSizeLimits,
    #[serde(default)]
    plugin_dirs: Vec<PathBuf>,
    allocator: Option<String>,
    #[serde(default)]
    allowed_origins: Vec<String>,
    #[serde(default)]
    allowed_hosts: Vec<String>,
    max_sessions: Option<usize>,
    max_running_tasks: Option<usize>,
    result_ttl_secs: Option<i64>,
    #[serde(default)]
    webhook_allow: Vec<String>,
    max_result_bytes_in_flight: Option<u64>,
    http_ca_file: Option<PathBuf>,
    drain_secs: Option<i64>,
    #[serde(default)]
    rate_limits: limits::RawRateLimits,
    audit: Option<String>,
    #[serde(default)]
    audit_values: bool,
    metrics_addr: Option<String>,
    metrics: Option<bool>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
struct RawSizeLimits {
    legacy: Option<usize>,
    mcp: Option<usize>,
    a2a: Option<usize>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct RawPlugin {
    name: Option<String>,
    path: Option<PathBuf>,
    source: Option<String>,
    #[serde(default)]
    signers: Vec<String>,
    world: Option<World>,
    prefix: Option<String>,
    #[serde(default)]
    privileges: Vec<String>,
    #[serde(default)]
    tool_privileges: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    policy: PolicyConfig,
    #[serde(default)]
    secret: Vec<SecretConfig>,
}

impl Config {
    /// Reads the configuration file at `path`.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] naming the file when it cannot be read, is not valid TOML,
    /// has an unknown key or a bad value.
    pub fn load(path: &Path) -> Result<Config, ConfigError> {
        let text = std::fs::read_to_string(path)
            .map_err(|e| ConfigError::new(path, format!("cannot read the configuration: {e}")))?;
        let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
        Config::parse(&text, path, &base)
    }

    /// The embedded defaults, with paths relative to the current directory.
    pub fn embedded() -> Config {
        Config::parse(
            EMBEDDED_DEFAULTS,
            Path::new("<embedded defaults>"),
            Path::new(""),
        )
        .expect("the embedded defaults are valid")
    }

    /// Parses configuration text; `file` names it in errors, `base` resolves paths.
    ///
    /// # Errors
    ///
    /// A [`ConfigError`] for invalid TOML, unknown keys or bad values.
    pub fn parse(text: &str, file: &Path, base: &Path) -> Result<Config, ConfigError> {
        let mut raw: RawConfig =
            toml::from_str(text).map_err(|e| ConfigError::new(file, toml_error(text, &e)))?;
        let principals: Vec<&str> = raw.token.iter().map(|t| t.principal.as_str()).collect();
        let oauth = raw
            .oauth
            .take()
            .map(|o| o.resolve(file, base))
            .transpose()?;
        let telemetry = std::mem::take(&mut raw.telemetry).resolve(file)?;
        let rate_limits = std::mem::take(&mut raw.host.rate_limits).resolve(
            &principals,
            oauth.is_some(),
            file,
        )?;
        let mut host = host_settings(raw.host, file, base)?;
        host.rate_limits = rate_limits;
        let store = raw.store.resolve(&host.data_dir, file)?;
        let mut plugins = Vec::new();
        let (trust, require_signature) = trust::resolve(raw.trust, file, base)?;
        for (i, plugin) in raw.plugin.into_iter().enumerate() {
            let origin = trust::origin(plugin.path, plugin.source, i + 1, file, base)?;
            let (path, registry) = match origin {
                trust::Origin::File(path) => (path, None),
                trust::Origin::Registry(source) => (PathBuf::from(&source), Some(source)),
            };
            let name = match (&plugin.name, &registry) {
                (None, Some(source)) => Some(trust::registry_name(source)),
                (name, _) => name.clone(),
            };
            let mut config = plugin_config(
                name,
                path,
                plugin.world,
                plugin.prefix,
                plugin.policy,
                file,
                base,
            )?;
            config.require_signature = trust::signature_policy(
                &config.name,
                &plugin.signers,
                registry.is_some(),
                &trust,
                require_signature,
                file,
            )?;
            config.registry = registry;
            config.signers = plugin.signers;
            config.privileges = RequiredPrivileges::new(
                plugin.privileges,
                plugin.tool_privileges,
                file,
                &format!("plugin {}", config.name),
            )?;
            let mut secrets = plugin.secret;
            secret::check(&config.name, &mut secrets, file, base)?;
            config.secrets = secrets;
            plugins.push(config);
        }
        // The lock keeps one pin per name: a registry plugin's name is its own.
        for (i, plugin) in plugins.iter().enumerate() {
            if plugins[..i].iter().any(|other| {
                other.name == plugin.name && (other.registry.is_some() || plugin.registry.is_some())
            }) {
                return Err(ConfigError::new(
                    file,
                    format!(
                        "two plugins are named {:?}; give the one from {} its own `name` (toolhost.lock pins each plugin by name)",
                        plugin.name,
                        plugin.path.display()
                    ),
                ));
            }
        }
        for dir in &host.plugin_dirs {
            for mut config in scan_plugin_dir(dir, file)? {
                config.require_signature = trust::signature_policy(
                    &config.name,
                    &[],
                    false,
                    &trust,
                    require_signature,
                    file,
                )?;
                plugins.push(config);
            }
        }
        for (i, token) in raw.token.iter().enumerate() {
            if token.token.is_some() == token.token_env.is_some() {
                return Err(ConfigError::new(
                    file,
                    format!(
                        "[[token]] number {} needs exactly one of `token` and `token_env`",
                        i + 1
                    ),
                ));
            }
        }
        for webhook in &raw.webhook {
            if webhook.secret.is_some() == webhook.secret_env.is_some() {
                return Err(ConfigError::new(
                    file,
                    format!(
                        "[[webhook]] {}: needs exactly one of `secret` and `secret_env`",
                        webhook.name
                    ),
                ));
            }
            RequiredPrivileges::new(
                webhook.privileges.clone(),
                webhook
                    .tools
                    .iter()
                    .map(|t| (t.name.clone(), t.required_privileges.clone()))
                    .collect(),
                file,
                &format!("[[webhook]] {}", webhook.name),
            )?;
            if webhook.timeout_ms == 0 || webhook.max_response_bytes == 0 {
                return Err(ConfigError::new(
                    file,
                    format!(
                        "[[webhook]] {}: timeout_ms and max_response_bytes must be greater than 0",
                        webhook.name
                    ),
                ));
            }
        }
        Ok(Config {
            host,
            store,
            plugins,
            webhooks: raw.webhook,
            tokens: raw.token,
            oauth,
            telemetry,
            trust,
        })
    }
}

/// A TOML error as `line L, column C: what`, without the quoted line toml adds:
/// the line may hold a token or a secret written where it does not belong, and
/// start-up errors go to logs.
fn toml_error(text: &str, error: &toml::de::Error) -> String {
    match error.span() {
        Some(span) => {
            let before = &text[..span.start.min(text.len())];
            let line = before.matches('\n').count() + 1;
            let column = before.len() - before.rfind('\n').map_or(0, |at| at + 1) + 1;
            format!("line {line}, column {column}: {}", error.message())
        }
        None => error.message().to_owned(),
    }
}

fn host_settings(raw: RawHost, file: &Path, base: &Path) -> Result<HostSettings, ConfigError> {
    let output_mode = match raw.output_mode {
        Some(mode) => mode
            .parse()
            .map_err(|e: String| ConfigError::new(file, format!("host.output_mode: {e}")))?,
        None => OutputMode::default(),
    };
    let uniform = raw.size_limit.unwrap_or(SizeLimits::DEFAULT_BYTES);
    let size_limits = SizeLimits {
        legacy: raw.size_limits.legacy.unwrap_or(uniform),
        mcp: raw.size_limits.mcp.unwrap_or(uniform),
        a2a: raw.size_limits.a2a.unwrap_or(uniform),
    };
    let pooling = match raw.allocator.as_deref() {
        None | Some("pooling") => true,
        Some("on-demand") => false,
        Some(other) => {
            return Err(ConfigError::new(
                file,
                format!(
                    "host.allocator: unknown allocator {other:?}; use \"pooling\" or \"on-demand\""
                ),
            ));
        }
    };
    Ok(HostSettings {
        data_dir: base.join(raw.data_dir.unwrap_or_else(|| PathBuf::from(".toolhost"))),
        output_mode,
        size_limits,
        plugin_dirs: raw.plugin_dirs.into_iter().map(|d| base.join(d)).collect(),
        pooling,
        allowed_origins: raw.allowed_origins,
        allowed_hosts: allowed_hosts(raw.allowed_hosts, file)?,
        max_sessions: match raw.max_sessions {
            None => HostSettings::DEFAULT_MAX_SESSIONS,
            Some(0) => {
                return Err(ConfigError::new(
                    file,
                    "host.max_sessions: 0 would refuse every session; use at least 1 (default 1000)",
                ));
            }
            Some(max) => max,
        },
        max_running_tasks: match raw.max_running_tasks {
            None => HostSettings::DEFAULT_MAX_RUNNING_TASKS,
            Some(max) if max > HostSettings::MAX_RUNNING_TASKS => {
                return Err(ConfigError::new(
                    file,
                    format!(
                        "host.max_running_tasks = {max} is out of range; use 0 (no call becomes a task) to {} (default {})",
                        HostSettings::MAX_RUNNING_TASKS,
                        HostSettings::DEFAULT_MAX_RUNNING_TASKS
                    ),
                ));
            }
            Some(max) => max,
        },
        webhook_allow: raw.webhook_allow,
        max_result_bytes_in_flight: match raw.max_result_bytes_in_flight {
            None => HostSettings::DEFAULT_RESULT_BYTES_IN_FLIGHT,
            Some(0) => {
                return Err(ConfigError::new(
                    file,
                    "host.max_result_bytes_in_flight: must be greater than 0",
                ));
            }
            Some(bytes) => bytes,
        },
        http_ca_file: raw.http_ca_file.map(|path| base.join(path)),
        drain: match raw.drain_secs {
            None => std::time::Duration::from_secs(HostSettings::DEFAULT_DRAIN_SECS),
            Some(secs) => match u64::try_from(secs) {
                Ok(secs) if secs <= HostSettings::MAX_DRAIN_SECS => {
                    std::time::Duration::from_secs(secs)
                }
                _ => {
                    return Err(ConfigError::new(
                        file,
                        format!(
                            "host.drain_secs: {secs} is out of range; use 0 to {} (an hour; default 30)",
                            HostSettings::MAX_DRAIN_SECS
                        ),
                    ));
                }
            },
        },
        rate_limits: RateLimits::default(),
        audit: match raw.audit.as_deref() {
            None | Some("off") => AuditSink::Off,
            Some("stderr") => AuditSink::Stderr,
            Some(path) if path.trim().is_empty() => {
                return Err(ConfigError::new(
                    file,
                    "host.audit: an empty path; use \"off\", \"stderr\" or the path of a file",
                ));
            }
            Some(path) => AuditSink::File(base.join(path)),
        },
        audit_values: raw.audit_values,
        metrics: match (raw.metrics, &raw.metrics_addr) {
            (Some(false), Some(_)) => {
                return Err(ConfigError::new(
                    file,
                    "host.metrics = false, yet host.metrics_addr is set; remove one of them",
                ));
            }
            (metrics, _) => metrics.unwrap_or(true),
        },
        metrics_addr: match raw.metrics_addr {
            None => None,
            Some(addr) => Some(addr.parse().map_err(|e| {
                ConfigError::new(
                    file,
                    format!("host.metrics_addr: {addr:?} is not an address with a port, e.g. \"127.0.0.1:9464\": {e}"),
                )
            })?),
        },
        result_ttl_secs: match raw.result_ttl_secs {
            None => 3_600,
            Some(secs) if secs > 0 => secs,
            Some(secs) => {
                return Err(ConfigError::new(
                    file,
                    format!("host.result_ttl_secs: {secs} must be greater than 0"),
                ));
            }
        },
    })
}

/// `host.allowed_hosts`: each a host name, an address, or `host:port`, as in a
/// `Host` header.
fn allowed_hosts(hosts: Vec<String>, file: &Path) -> Result<Vec<String>, ConfigError> {
    for host in &hosts {
        let authority = host.parse::<axum::http::uri::Authority>();
        if host.trim().is_empty() || host.contains('@') || authority.is_err() {
            return Err(ConfigError::new(
                file,
                format!(
                    "host.allowed_hosts: {host:?} is not a host name or host:port as a Host header carries it, e.g. \"mcp.example.com\" or \"mcp.example.com:443\""
                ),
            ));
        }
    }
    Ok(hosts)
}

fn plugin_config(
    name: Option<String>,
    path: PathBuf,
    world: Option<World>,
    prefix: Option<String>,
    mut policy: PolicyConfig,
    file: &Path,
    base: &Path,
) -> Result<PluginConfig, ConfigError> {
    let name = match name {
        Some(name) => name,
        None => path
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .ok_or_else(|| {
                ConfigError::new(
                    file,
                    format!("plugin path {} has no file name", path.display()),
                )
            })?,
    };
    for preopen in &mut policy.preopens {
        preopen.host = base.join(&preopen.host);
        if !preopen.guest.starts_with('/') {
            return Err(ConfigError::new(
                file,
                format!(
                    "plugin {name}: preopen guest path {:?} must be absolute (e.g. \"/data\")",
                    preopen.guest
                ),
            ));
        }
    }
    check_limits(&name, &policy, file)?;
    if let Some(key) = policy
        .config
        .keys()
        .find(|key| key.starts_with(SECRET_KEY_PREFIX))
    {
        return Err(ConfigError::new(
            file,
            format!(
                "plugin {name}: policy.config key {key:?}: keys starting with {SECRET_KEY_PREFIX:?} are the placeholders of secrets; configure a [[plugin.secret]] instead"
            ),
        ));
    }
    if let Some(prefix) = &prefix
        && !is_plain_name(prefix)
    {
        return Err(ConfigError::new(
            file,
            format!("plugin {name}: prefix {prefix:?} may hold only letters, digits, '_' and '-'"),
        ));
    }
    Ok(PluginConfig {
        name,
        path,
        registry: None,
        signers: Vec::new(),
        require_signature: false,
        world,
        prefix,
        privileges: RequiredPrivileges::default(),
        policy,
        secrets: Vec::new(),
        configured_in: file.to_path_buf(),
    })
}

/// Whether `text` is a name of letters, digits, `_` and `-`, not empty (a tool
/// name's prefix, a secret's name).
fn is_plain_name(text: &str) -> bool {
    !text.is_empty()
        && text
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// Every `.wasm` in `dir`, each with its sidecar `<stem>.toml` if there is one.
fn scan_plugin_dir(dir: &Path, file: &Path) -> Result<Vec<PluginConfig>, ConfigError> {
    let entries = std::fs::read_dir(dir).map_err(|e| {
        ConfigError::new(
            file,
            format!("host.plugin_dirs: cannot read {}: {e}", dir.display()),
        )
    })?;
    let mut wasm: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "wasm"))
        .collect();
    wasm.sort();
    wasm.into_iter().map(|path| sidecar_plugin(&path)).collect()
}

/// The plugin for a `.wasm` found in a plugin directory.
///
/// # Errors
///
/// A [`ConfigError`] naming the sidecar file when it is invalid.
pub fn sidecar_plugin(path: &Path) -> Result<PluginConfig, ConfigError> {
    let sidecar = path.with_extension("toml");
    let base = path.parent().map(Path::to_path_buf).unwrap_or_default();
    if !sidecar.exists() {
        return plugin_config(
            None,
            path.to_path_buf(),
            None,
            None,
            PolicyConfig::default(),
            path,
            &base,
        );
    }
    #[derive(Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Sidecar {
        name: Option<String>,
        world: Option<World>,
        prefix: Option<String>,
        #[serde(default)]
        privileges: Vec<String>,
        #[serde(default)]
        tool_privileges: BTreeMap<String, Vec<String>>,
        #[serde(default)]
        policy: PolicyConfig,
    }
    let text = std::fs::read_to_string(&sidecar)
        .map_err(|e| ConfigError::new(&sidecar, format!("cannot read the policy: {e}")))?;
    let raw: Sidecar =
        toml::from_str(&text).map_err(|e| ConfigError::new(&sidecar, toml_error(&text, &e)))?;
    let mut config = plugin_config(
        raw.name,
        path.to_path_buf(),
        raw.world,
        raw.prefix,
        raw.policy,
        &sidecar,
        &base,
    )?;
    config.privileges = RequiredPrivileges::new(
        raw.privileges,
        raw.tool_privileges,
        &sidecar,
        &format!("plugin {}", config.name),
    )?;
    Ok(config)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<Config, ConfigError> {
        Config::parse(text, Path::new("test.toml"), Path::new("/etc/th"))
    }

    #[test]
    fn defaults_are_the_safe_ones() {
        let config = parse("[[plugin]]\npath = \"a.wasm\"\n").unwrap();
        let plugin = &config.plugins[0];
        assert_eq!(plugin.name, "a");
        assert_eq!(plugin.path, Path::new("/etc/th/a.wasm"));
        assert!(
            plugin.policy.preopens.is_empty()
                && plugin.policy.network.is_empty()
                && plugin.policy.env.is_empty()
        );
        assert_eq!(plugin.policy.memory_mib, 64);
        assert_eq!(plugin.policy.max_resources, 256);
        assert_eq!(plugin.policy.max_log_bytes, 1 << 20);
        assert_eq!(plugin.policy.max_progress_bytes, 1 << 20);
        assert_eq!(plugin.policy.max_result_bytes, 16 << 20);
        assert_eq!(config.host.max_result_bytes_in_flight, 64 << 20);
        assert_eq!(config.host.size_limits, SizeLimits::default());
        assert_eq!(config.host.output_mode, OutputMode::Compat);
        assert!(config.host.pooling);
        assert_eq!(config.host.audit, AuditSink::Off);
        assert!(!config.host.audit_values && config.host.metrics_addr.is_none());
        assert!(config.host.metrics);
        assert!(!parse("[host]\nmetrics = false\n").unwrap().host.metrics);
        let error = parse("[host]\nmetrics = false\nmetrics_addr = \"127.0.0.1:9464\"\n")
            .unwrap_err()
            .to_string();
        assert!(error.contains("host.metrics = false"), "{error}");
    }

    #[test]
    fn audit_and_metrics_settings_are_read_and_checked() {
        let config = parse("[host]\naudit = \"logs/audit.jsonl\"\naudit_values = true\nmetrics_addr = \"127.0.0.1:9464\"\n").unwrap();
        assert_eq!(
            config.host.audit,
            AuditSink::File(PathBuf::from("/etc/th/logs/audit.jsonl"))
        );
        assert!(config.host.audit_values);
        assert_eq!(
            config.host.metrics_addr,
            Some("127.0.0.1:9464".parse().unwrap())
        );
        let stderr = parse("[host]\naudit = \"stderr\"\n").unwrap();
        assert_eq!(stderr.host.audit, AuditSink::Stderr);
        for (text, key) in [
            ("[host]\naudit = \" \"\n", "host.audit"),
            (
                "[host]\nmetrics_addr = \"localhost\"\n",
                "host.metrics_addr",
            ),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.starts_with("test.toml: ") && err.contains(key), "{err}");
        }
    }

    #[test]
    fn errors_name_the_file_and_the_key() {
        let err =
            parse("[[plugin]]\npath = \"a.wasm\"\n[plugin.policy]\nmemory = 3\n").unwrap_err();
        assert!(err.to_string().starts_with("test.toml: "), "{err}");
        assert!(err.to_string().contains("memory"), "{err}");

        let err = parse("[host]\noutput_mode = \"fancy\"\n").unwrap_err();
        assert!(err.to_string().contains("host.output_mode"), "{err}");

        let err = parse("[[plugin]]\nname = \"x\"\n").unwrap_err();
        assert!(err.to_string().contains("no `path`"), "{err}");

        let err = parse("[[plugin]]\npath = \"a.wasm\"\n[[plugin.policy.preopens]]\nhost = \"d\"\nguest = \"data\"\n").unwrap_err();
        assert!(err.to_string().contains("must be absolute"), "{err}");
    }

    #[test]
    fn limits_out_of_range_are_errors_naming_the_key() {
        for (key, value) in [
            ("timeout_ms", "0"),
            ("timeout_ms", "9223372036854775807"),
            ("memory_mib", "4097"),
            ("max_instances", "1025"),
            ("fuel", "0"),
        ] {
            let err = parse(&format!(
                "[[plugin]]\npath = \"a.wasm\"\n[plugin.policy]\n{key} = {value}\n"
            ))
            .unwrap_err()
            .to_string();
            assert!(
                err.starts_with("test.toml: plugin a: ")
                    && err.contains(&format!("policy.{key} = {value}")),
                "{err}"
            );
        }
        let at_the_top = "[[plugin]]\npath = \"a.wasm\"\n[plugin.policy]\ntimeout_ms = 3600000\nmemory_mib = 4096\nmax_instances = 1024\n";
        assert!(parse(at_the_top).is_ok());
    }

    #[test]
    fn the_example_configuration_parses_with_every_key() {
        let text = include_str!("../../../toolhost.example.toml");
        let config =
            Config::parse(text, Path::new("toolhost.example.toml"), Path::new("/x")).unwrap();
        assert_eq!(config.plugins[0].policy.preopens[0].guest, "/data");
    }

    #[test]
    fn operator_privileges_and_http_settings_are_read() {
        let config = parse(
            "[host]\nallowed_hosts = [\"mcp.example.com\", \"mcp.example.com:8443\"]\nmax_sessions = 5\n[[plugin]]\npath = \"a.wasm\"\nprivileges = [\"ops\"]\n[plugin.tool_privileges]\nadd = [\"math:add\"]\n",
        )
        .unwrap();
        assert_eq!(
            config.host.allowed_hosts,
            ["mcp.example.com", "mcp.example.com:8443"]
        );
        assert_eq!(config.host.max_sessions, 5);
        let privileges = &config.plugins[0].privileges;
        assert_eq!(privileges.all, ["ops"]);
        assert_eq!(privileges.per_tool["add"], ["math:add"]);

        let defaults = parse("").unwrap();
        assert_eq!(defaults.host.max_sessions, 1_000);
        assert_eq!(defaults.host.max_running_tasks, 64);
        assert!(defaults.host.allowed_hosts.is_empty());
        assert_eq!(defaults.host.drain, std::time::Duration::from_secs(30));
        assert!(!defaults.host.rate_limits.is_on());
        let limited = parse(
            "[host]\ndrain_secs = 5\n[host.rate_limits]\ndefault = { per_second = 2 }\nprincipals.alice = { per_minute = 6 }\n[[token]]\ntoken = \"t\"\nprincipal = \"alice\"\n",
        )
        .unwrap();
        assert_eq!(limited.host.drain, std::time::Duration::from_secs(5));
        assert_eq!(limited.host.rate_limits.principals["alice"].calls.get(), 6);

        for (text, key) in [
            ("[host]\nmax_sessions = 0\n", "host.max_sessions"),
            (
                "[host]\nmax_running_tasks = 5000\n",
                "host.max_running_tasks",
            ),
            ("[host]\ndrain_secs = 86400\n", "host.drain_secs"),
            ("[host]\ndrain_secs = -1\n", "host.drain_secs"),
            (
                "[host.rate_limits]\nprincipals.bob = { per_second = 1 }\n",
                "host.rate_limits.principals.bob",
            ),
            (
                "[host.rate_limits]\ntools.x = { per_second = 1, extra = 2 }\n",
                "extra",
            ),
            (
                "[host]\nallowed_hosts = [\"http://x/\"]\n",
                "host.allowed_hosts",
            ),
            ("[host]\nallowed_hosts = [\"\"]\n", "host.allowed_hosts"),
            (
                "[[plugin]]\npath = \"a.wasm\"\nprivileges = [\"\"]\n",
                "privileges",
            ),
        ] {
            let err = parse(text).unwrap_err().to_string();
            assert!(err.starts_with("test.toml: ") && err.contains(key), "{err}");
        }
    }

    #[test]
    fn http_rules_secrets_and_the_ca_are_read_with_their_defaults() {
        let config = parse(
            "[host]\nhttp_ca_file = \"ca.pem\"\n[[plugin]]\npath = \"a.wasm\"\n[plugin.policy]\nhttp = [\"https://api.example.com/*\"]\n[[plugin.secret]]\nname = \"api\"\nfrom_file = \"tokens/api\"\nhosts = [\"https://api.example.com/*\"]\n",
        )
        .unwrap();
        assert_eq!(
            config.host.http_ca_file.as_deref(),
            Some(Path::new("/etc/th/ca.pem"))
        );
        let plugin = &config.plugins[0];
        assert_eq!(plugin.policy.http, ["https://api.example.com/*"]);
        assert_eq!(plugin.policy.max_http_requests, 64);
        assert_eq!(plugin.policy.max_http_request_bytes, 8 << 20);
        assert_eq!(plugin.policy.max_http_response_bytes, 16 << 20);
        assert_eq!(plugin.secrets[0].name, "api");
        assert_eq!(
            plugin.secrets[0].source(),
            SecretSource::File(PathBuf::from("/etc/th/tokens/api"))
        );
        assert!(parse("").unwrap().host.http_ca_file.is_none());
    }

    #[test]
    fn a_secret_needs_one_source_hosts_and_a_name_and_never_a_config_key() {
        let plugin = "[[plugin]]\npath = \"a.wasm\"\n";
        for (secret, problem) in [
            (
                "name = \"a\"\nhosts = [\"https://x.example/*\"]\n",
                "exactly one of `from_env`",
            ),
            (
                "name = \"a\"\nfrom_env = \"A\"\nfrom_file = \"f\"\nhosts = [\"https://x.example/*\"]\n",
                "exactly one of `from_env`",
            ),
            (
                "name = \"a\"\nfrom_env = \"A\"\nhosts = []\n",
                "`hosts` is empty",
            ),
            (
                "name = \"a b\"\nfrom_env = \"A\"\nhosts = [\"https://x.example/*\"]\n",
                "only letters",
            ),
            (
                "name = \"a\"\nvalue = \"inline\"\nhosts = [\"https://x.example/*\"]\n",
                "unknown field `value`",
            ),
        ] {
            let err = parse(&format!("{plugin}[[plugin.secret]]\n{secret}"))
                .unwrap_err()
                .to_string();
            assert!(
                err.starts_with("test.toml: ") && err.contains(problem),
                "{err}"
            );
        }
        let twice = "[[plugin.secret]]\nname = \"a\"\nfrom_env = \"A\"\nhosts = [\"https://x.example/*\"]\n";
        let err = parse(&format!("{plugin}{twice}{twice}"))
            .unwrap_err()
            .to_string();
        assert!(err.contains("configured twice"), "{err}");
        let err = parse(&format!(
            "{plugin}[plugin.policy.config]\n\"secret:a\" = \"forged\"\n"
        ))
        .unwrap_err()
        .to_string();
        assert!(err.contains("policy.config key \"secret:a\""), "{err}");
    }

    #[test]
    fn a_sidecar_cannot_name_a_secret() {
        let dir = tempfile::tempdir().unwrap();
        let wasm = dir.path().join("p.wasm");
        std::fs::write(&wasm, b"").unwrap();
        std::fs::write(
            dir.path().join("p.toml"),
            "[[secret]]\nname = \"a\"\nfrom_env = \"HOME\"\nhosts = [\"https://evil.example/*\"]\n",
        )
        .unwrap();
        let err = sidecar_plugin(&wasm).unwrap_err().to_string();
        assert!(
            err.contains("p.toml") && err.contains("unknown field `secret`"),
            "{err}"
        );
    }

    #[test]
    fn the_embedded_defaults_parse() {
        assert!(!Config::embedded().plugins.is_empty());
    }
}
