//! The `toolhost` command line: list, call and check tools; render the samples.
//!
//! Exit codes: 0 success; 1 a failed tool result or check findings; 2 bad usage,
//! configuration or component (the message names the file and the problem); 3
//! `serve` shut down (SIGTERM, SIGINT) with calls still running at the end of
//! the drain time (`host.drain_secs`), which were cut off.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, Parser, Subcommand};
use jiff::SignedDuration;
use serde_json::{Value, json};
use toolhost::catalog::{self, Caller, Catalog, Severity};
use toolhost::config::{Config, PluginConfig, World};
use toolhost::render::{Mapper, OutputMode, RenderContext, Revision, SizeLimits, Target};
use toolhost::runtime::{EngineSettings, Runtime};
use toolhost::samples;
use toolhost::store::MemoryStore;

/// Runs MCP tools written as sandboxed WebAssembly components.
#[derive(Parser)]
#[command(version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// Where the tools come from.
#[derive(Args, Clone)]
struct Source {
    /// The configuration file (default: ./toolhost.toml if it exists, else the
    /// embedded defaults with the example tools).
    #[arg(long, global = true)]
    config: Option<PathBuf>,
    /// Load only this component (repeatable), with its sidecar policy
    /// (`<name>.toml` beside it) or the default policy.
    #[arg(long = "plugin", global = true)]
    plugins: Vec<PathBuf>,
}

#[derive(Subcommand)]
enum Command {
    /// Serves the tools over MCP: stdio by default, or Streamable HTTP.
    Serve {
        /// Serve Streamable HTTP on this address (e.g. 127.0.0.1:8080) instead of stdio.
        #[arg(long, value_name = "ADDR")]
        http: Option<std::net::SocketAddr>,
        /// Allow listening on an address other than loopback (needs [[token]]s).
        #[arg(long)]
        allow_remote: bool,
        #[command(flatten)]
        source: Source,
    },
    /// Lists every tool with its schemas.
    Tools {
        #[command(flatten)]
        source: Source,
    },
    /// Calls a tool and prints its result as the mapper renders it.
    Call {
        /// The tool's name.
        tool: String,
        /// The arguments, a JSON object.
        #[arg(long, default_value = "{}")]
        args: String,
        /// The MCP revision to render for.
        #[arg(long, default_value = Revision::LATEST.as_str())]
        revision: String,
        /// `compat` (legacy text block) or `spec` (plain JSON text); default: the configuration's.
        #[arg(long)]
        mode: Option<String>,
        /// Render the legacy envelope or an A2A task instead of MCP.
        #[arg(long, value_parser = ["mcp", "legacy", "a2a"], default_value = "mcp")]
        format: String,
        #[command(flatten)]
        source: Source,
    },
    /// Checks a component: world, descriptors, names, schemas. One line per finding.
    Check {
        component: PathBuf,
        /// Treat deprecations (hand-built legacy envelopes) as errors.
        #[arg(long)]
        strict: bool,
        /// Check it under the policy this configuration gives it (the `[[plugin]]`
        /// whose path is the component) instead of its sidecar's.
        #[arg(long, value_name = "FILE")]
        config: Option<PathBuf>,
    },
    /// Pushes a component to an OCI registry (oci://REGISTRY/REPOSITORY:TAG), or
    /// writes it to a file, with the policy it requests embedded and signed when
    /// asked.
    Publish {
        component: PathBuf,
        target: String,
        /// A TOML file of what the component requests (preopens, env, network,
        /// http, budgets), embedded as its `toolhost:policy` section.
        #[arg(long, value_name = "FILE")]
        policy: Option<PathBuf>,
        /// Sign it with this secret key (made by `toolhost keygen`).
        #[arg(long, value_name = "KEY")]
        sign: Option<PathBuf>,
    },
    /// Resolves the tags of the registry plugins again (or of NAME) and pins each
    /// new version the trust policy accepts; one asking for more is held.
    Update {
        name: Option<String>,
        #[command(flatten)]
        source: Source,
    },
    /// Pins the version of plugin NAME that waits because it requests more than
    /// was approved, and approves what it requests.
    Approve {
        name: String,
        #[command(flatten)]
        source: Source,
    },
    /// Per plugin: its source, pinned version, requested, granted and effective
    /// policy, and what waits for approval. Reads no registry.
    Plugins {
        #[command(flatten)]
        source: Source,
    },
    /// Makes a signing key pair: OUT (the secret key, mode 0600) and OUT.pub.
    Keygen { out: PathBuf },
    /// Renders the sample results of the golden matrix through the mapper.
    Samples {
        /// Only this sample.
        name: Option<String>,
        /// `legacy`, `a2a`, `mcp-<revision>-<compat|spec>`, or `all`.
        #[arg(long, default_value = "mcp-2026-07-28-compat")]
        target: String,
    },
}

/// mimalloc with `--features mimalloc`: results render up to a third faster,
/// but the idle server holds 26 MiB more (docs/benchmarks.md, "The allocator").
#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime");
    // `serve` reads its configuration before logging starts: `[telemetry]`
    // decides whether traces go out beside the log lines.
    let served = match &cli.command {
        Command::Serve { source, .. } => match load_config(source) {
            Ok(config) => Some(config),
            Err(message) => return usage_error(message),
        },
        _ => None,
    };
    let telemetry = match toolhost::app::telemetry::init(
        served.as_ref().map(|config| &config.telemetry),
        runtime.handle(),
    ) {
        Ok(telemetry) => telemetry,
        Err(message) => return usage_error(message),
    };
    raise_descriptor_limit();
    let code = runtime.block_on(async {
        match cli.command {
            Command::Serve {
                http,
                allow_remote,
                source,
            } => {
                let config = served.expect("loaded above");
                serve(&source, config, http, allow_remote).await
            }
            Command::Tools { source } => list_tools(&source).await,
            Command::Call {
                tool,
                args,
                revision,
                mode,
                format,
                source,
            } => call(&source, &tool, &args, &revision, mode.as_deref(), &format).await,
            Command::Check {
                component,
                strict,
                config,
            } => check(&component, strict, config.as_deref()).await,
            Command::Samples { name, target } => render_samples(name.as_deref(), &target).await,
            Command::Publish {
                component,
                target,
                policy,
                sign,
            } => report(
                toolhost::supply::publish(&component, &target, policy.as_deref(), sign.as_deref())
                    .await,
            ),
            Command::Update { name, source } => update(&source, name.as_deref()).await,
            Command::Approve { name, source } => {
                report(supply(&source).and_then(|(_, supply)| supply.approve(&name)))
            }
            Command::Plugins { source } => report(
                load_config(&source).and_then(|config| toolhost::supply::report::plugins(&config)),
            ),
            Command::Keygen { out } => {
                report(toolhost::supply::signature::keygen(&out).map(|public| {
                    format!(
                        "secret key {} (keep it private), public key {} (for [trust.keys])",
                        out.display(),
                        public.display()
                    )
                }))
            }
        }
    });
    // The last spans leave while the runtime still runs their exports.
    telemetry.shutdown();
    // A blocking read of stdin (stdio serving, ended by a signal) does not hold
    // the exit up.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    code
}

/// The exit code of a shutdown whose drain time ran out with calls running.
const DRAIN_TIMED_OUT: u8 = 3;

/// Starts the server's drain at the first SIGTERM or SIGINT.
fn drain_on_signal(server: &Arc<toolhost::mcp::Server>) -> tokio_util::sync::CancellationToken {
    use tokio::signal::unix::{SignalKind, signal};
    let signalled = tokio_util::sync::CancellationToken::new();
    let (Ok(mut term), Ok(mut int)) = (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) else {
        tracing::error!(
            "cannot listen for SIGTERM and SIGINT; a signal will end the process without a drain"
        );
        return signalled;
    };
    let (server, done) = (server.clone(), signalled.clone());
    tokio::spawn(async move {
        let name = tokio::select! {
            _ = term.recv() => "SIGTERM",
            _ = int.recv() => "SIGINT",
        };
        tracing::info!(signal = name, "shutting down");
        server.drain.start();
        done.cancel();
    });
    signalled
}

/// Prints `error: <message>` and returns exit code 2.
fn usage_error(message: impl std::fmt::Display) -> ExitCode {
    eprintln!("error: {message}");
    ExitCode::from(2)
}

/// The configuration, with every grant checked against the rules of
/// `config::grants` (at start and at each hot load).
fn load_config(source: &Source) -> Result<Config, String> {
    let file = match &source.config {
        Some(path) => Some(path.as_path()),
        None if Path::new("toolhost.toml").exists() => Some(Path::new("toolhost.toml")),
        None => None,
    };
    let mut config = match file {
        Some(path) => Config::load(path).map_err(|e| e.to_string())?,
        None => Config::embedded(),
    };
    if !source.plugins.is_empty() {
        config.plugins = source
            .plugins
            .iter()
            .map(|path| toolhost::config::sidecar_plugin(path))
            .collect::<Result<_, _>>()
            .map_err(|e| e.to_string())?;
    }
    toolhost::config::grants::check(&mut config, file).map_err(|e| e.to_string())?;
    Ok(config)
}

/// Prints the outcome of a command that reports one text: on stdout with code 0,
/// or as `error: ...` with code 1.
fn report(outcome: Result<String, String>) -> ExitCode {
    match outcome {
        Ok(text) => {
            print!("{text}{}", if text.ends_with('\n') { "" } else { "\n" });
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("error: {message}");
            ExitCode::from(1)
        }
    }
}

/// The configuration and its trust policy, read.
fn supply(source: &Source) -> Result<(Config, toolhost::supply::Supply), String> {
    let config = load_config(source)?;
    let supply = toolhost::supply::Supply::configure(&config)?;
    Ok((config, supply))
}

/// `toolhost update [NAME]`: every registry plugin, or NAME; exit 1 if one fails.
async fn update(source: &Source, name: Option<&str>) -> ExitCode {
    let (config, supply) = match supply(source) {
        Ok(found) => found,
        Err(message) => return usage_error(message),
    };
    if let Err(message) =
        toolhost::runtime::ensure_private_dir(&config.host.data_dir, "host.data_dir")
    {
        return usage_error(message);
    }
    let plugins: Vec<&PluginConfig> = config
        .plugins
        .iter()
        .filter(|p| name.is_none_or(|n| n == p.name))
        .collect();
    if let (Some(name), true) = (name, plugins.is_empty()) {
        return usage_error(format!(
            "no plugin {name} is configured; `toolhost plugins` lists them"
        ));
    }
    let mut failed = false;
    for plugin in plugins {
        match supply.update(plugin).await {
            Ok(line) => println!("{line}"),
            Err(message) => {
                failed = true;
                eprintln!("error: {message}");
            }
        }
    }
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

fn engine_settings(config: &Config) -> EngineSettings {
    EngineSettings {
        pooling: config.host.pooling,
        fuel: config.plugins.iter().any(|p| p.policy.fuel.is_some()),
        max_memory_bytes: config
            .plugins
            .iter()
            .map(|p| p.policy.memory_mib.min(4096) << 20)
            .max()
            .unwrap_or(64 << 20),
        ..EngineSettings::default()
    }
}

/// Raises the soft limit of open descriptors to the hard limit: each call may
/// hold up to its plugin's `max_resources` of them.
fn raise_descriptor_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write the struct passed.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) == 0 && limit.rlim_cur < limit.rlim_max
        {
            limit.rlim_cur = limit.rlim_max;
            if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                tracing::debug!("could not raise the soft limit of open descriptors");
            }
        }
    }
}

/// Warns when the plugins' calls together may hold more resources (each one a
/// descriptor at worst) than the process may open.
fn check_descriptor_budget(config: &Config) {
    let worst: u64 = config
        .plugins
        .iter()
        .map(|p| u64::from(p.policy.max_instances) * u64::from(p.policy.max_resources))
        .sum();
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit only writes the struct passed.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) } == 0 && worst > limit.rlim_cur {
        tracing::warn!(
            worst_case = worst,
            limit = limit.rlim_cur,
            "the plugins' calls may together hold more open resources (max_instances x max_resources, summed) than the process may open descriptors; lower policy.max_resources or max_instances, or raise the limit (ulimit -n)"
        );
    }
}

async fn open(source: &Source) -> Result<(Config, Runtime, Catalog), String> {
    open_config(load_config(source)?).await
}

/// The engine and the catalog of `config`, loaded.
async fn open_config(config: Config) -> Result<(Config, Runtime, Catalog), String> {
    toolhost::runtime::ensure_private_dir(&config.host.data_dir, "host.data_dir")?;
    let mut runtime = Runtime::new(
        engine_settings(&config),
        config.host.data_dir.join("compile-cache"),
    )
    .map_err(|e| format!("cannot start the engine: {e:#}"))?;
    runtime.limit_results_in_flight(config.host.max_result_bytes_in_flight);
    runtime.trust_http_ca(config.host.http_ca_file.as_deref())?;
    check_descriptor_budget(&config);
    let catalog = Catalog::load(&config, &runtime)
        .await
        .map_err(|e| e.to_string())?;
    Ok((config, runtime, catalog))
}

async fn serve(
    source: &Source,
    config: Config,
    http: Option<std::net::SocketAddr>,
    allow_remote: bool,
) -> ExitCode {
    // Refused before anything is compiled: remote callers need tokens.
    if allow_remote && config.tokens.is_empty() && config.oauth.is_none() {
        return usage_error(
            "--allow-remote without tokens would let anyone who reaches the server call every tool; configure at least one [[token]] or [oauth] (see docs/operating.md)",
        );
    }
    let (config, runtime, catalog) = match open_config(config).await {
        Ok(opened) => opened,
        Err(message) => return usage_error(message),
    };
    let tokens = match toolhost::mcp::Tokens::from_config(&config.tokens) {
        Ok(tokens) => tokens,
        Err(message) => return usage_error(message),
    };
    let oauth = match config
        .oauth
        .clone()
        .map(toolhost::mcp::oauth::ResourceServer::new)
    {
        None => None,
        Some(Ok(oauth)) => Some(Arc::new(oauth)),
        Some(Err(message)) => return usage_error(message),
    };
    let access = toolhost::mcp::http::Access {
        tokens,
        oauth,
        allowed_origins: config.host.allowed_origins.clone(),
        allowed_hosts: config.host.allowed_hosts.clone(),
        max_sessions: config.host.max_sessions,
        drain: config.host.drain,
    };
    let store = match toolhost::app::open_store(&config).await {
        Ok(store) => store,
        Err(message) => return usage_error(message),
    };
    // Housekeeping: expired results leave the store in the background.
    let purged = store.clone();
    tokio::spawn(async move {
        loop {
            tokio::time::sleep(std::time::Duration::from_secs(60)).await;
            match purged.purge().await {
                Ok(0) => {}
                Ok(rows) => tracing::info!(rows, "purged expired results"),
                Err(error) => {
                    metrics::counter!("toolhost_store_errors_total", "operation" => "purge")
                        .increment(1);
                    tracing::error!(%error, error.type = "store_failed", "purging expired results failed")
                }
            }
        }
    });
    let audit = match toolhost::mcp::Audit::open(&config.host.audit, config.host.audit_values) {
        Ok(audit) => audit,
        Err(message) => return usage_error(message),
    };
    // Metrics are recorded whenever they can be read (on the HTTP listener's
    // /metrics, or on host.metrics_addr), unless host.metrics turns them off.
    let metrics = if config.host.metrics && (http.is_some() || config.host.metrics_addr.is_some()) {
        match toolhost::mcp::Metrics::install() {
            Ok(metrics) => Some(metrics),
            Err(message) => return usage_error(message),
        }
    } else {
        None
    };
    let principals = access.tokens.principals();
    toolhost::mcp::prometheus::register_rate_limits(
        if principals.is_empty() {
            &["local"]
        } else {
            &principals
        },
        catalog.tools().iter().map(|tool| tool.name.as_str()),
    );
    let mapper = toolhost::app::mapper(&config, store.clone());
    let token_principals = config.tokens.iter().map(|t| t.principal.as_str());
    let limiter = if config.oauth.is_some() {
        toolhost::mcp::limits::Limiter::with_subjects(&config.host.rate_limits, token_principals)
    } else {
        toolhost::mcp::limits::Limiter::new(&config.host.rate_limits, token_principals)
    };
    for tool in config.host.rate_limits.tools.keys() {
        if catalog.tool(tool).is_none() {
            tracing::warn!(
                tool,
                "host.rate_limits.tools names a tool the catalog does not have (yet)"
            );
        }
    }
    let observers = toolhost::mcp::Observers {
        audit: audit.clone(),
        metrics: metrics.clone(),
    };
    let server = toolhost::mcp::Server::with_limits(
        Arc::new(catalog),
        mapper,
        store,
        config.host.output_mode,
        limiter,
        observers,
        config.host.max_running_tasks,
    );
    let signalled = drain_on_signal(&server);
    // The metrics listener serves until the transport has drained.
    let admin_stop = tokio_util::sync::CancellationToken::new();
    if let (Some(addr), Some(metrics)) = (config.host.metrics_addr, metrics) {
        let access = access.clone();
        let listening = admin_stop.clone();
        // Bound before serving starts, so a bad address stops the start.
        let (bound, ready) = tokio::sync::oneshot::channel();
        let admin = tokio::spawn(async move {
            toolhost::mcp::http::serve_metrics(metrics, access, addr, listening, |at| {
                let _ = bound.send(at);
            })
            .await
        });
        if ready.await.is_err() {
            return match admin.await {
                Ok(Err(e)) => usage_error(e),
                _ => usage_error("host.metrics_addr: the metrics listener stopped"),
            };
        }
    }
    // Hot load: a changed plugin directory rebuilds the catalog.
    let reload_source = source.clone();
    tokio::spawn(toolhost::mcp::reload::watch(
        server.clone(),
        Arc::new(runtime),
        move || load_config(&reload_source),
    ));
    let code = serve_transport(
        source,
        server,
        access,
        &config,
        http,
        allow_remote,
        signalled,
    )
    .await;
    admin_stop.cancel();
    audit.flush(std::time::Duration::from_secs(5));
    code
}

async fn serve_transport(
    source: &Source,
    server: Arc<toolhost::mcp::Server>,
    access: toolhost::mcp::http::Access,
    config: &Config,
    http: Option<std::net::SocketAddr>,
    allow_remote: bool,
    signalled: tokio_util::sync::CancellationToken,
) -> ExitCode {
    match http {
        None => {
            print_client_snippet(source);
            match toolhost::mcp::serve_stdio(server, config.host.drain).await {
                Ok(toolhost::mcp::StdioEnd::Done) => ExitCode::SUCCESS,
                Ok(toolhost::mcp::StdioEnd::DrainTimedOut) => ExitCode::from(DRAIN_TIMED_OUT),
                Err(e) => usage_error(format!("stdio: {e:#}")),
            }
        }
        Some(addr) => {
            match toolhost::mcp::http::serve(server, access, addr, allow_remote, signalled, |_| {})
                .await
            {
                Ok(()) => ExitCode::SUCCESS,
                Err(e @ toolhost::mcp::http::HttpError::DrainTimedOut(_)) => {
                    eprintln!("error: {e}");
                    ExitCode::from(DRAIN_TIMED_OUT)
                }
                Err(e) => usage_error(e),
            }
        }
    }
}

/// The `mcpServers` entry a client needs to start this server over stdio (stderr).
fn print_client_snippet(source: &Source) {
    let program = std::env::current_exe()
        .map(|p| p.display().to_string())
        .unwrap_or_else(|_| "toolhost".into());
    let mut args = vec!["serve".to_owned()];
    if let Some(config) = &source.config {
        args.push("--config".into());
        args.push(
            std::fs::canonicalize(config)
                .unwrap_or_else(|_| config.clone())
                .display()
                .to_string(),
        );
    }
    let cwd = std::env::current_dir()
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    let snippet =
        json!({ "mcpServers": { "toolhost": { "command": program, "args": args, "cwd": cwd } } });
    eprintln!(
        "toolhost serves MCP on stdin/stdout. A client configuration:\n{}",
        serde_json::to_string_pretty(&snippet).expect("JSON")
    );
}

async fn list_tools(source: &Source) -> ExitCode {
    let (_, _runtime, catalog) = match open(source).await {
        Ok(opened) => opened,
        Err(message) => return usage_error(message),
    };
    for tool in catalog.tools() {
        let d = &tool.descriptor;
        let entry = json!({
            "name": tool.name,
            "plugin": tool.provider().name(),
            "title": d.title,
            "description": d.description,
            "inputSchema": d.input_schema,
            "outputSchema": d.output_schema,
            "requiredPrivileges": tool.privileges(),
            "readOnly": tool.annotations.read_only,
            "openWorld": tool.annotations.open_world,
        });
        println!("{}", serde_json::to_string_pretty(&entry).expect("JSON"));
    }
    ExitCode::SUCCESS
}

async fn call(
    source: &Source,
    name: &str,
    args: &str,
    revision: &str,
    mode: Option<&str>,
    format: &str,
) -> ExitCode {
    let arguments: Value = match serde_json::from_str(args) {
        Ok(value) => value,
        Err(e) => return usage_error(format!("--args is not JSON: {e}")),
    };
    let revision: Revision = match revision.parse() {
        Ok(revision) => revision,
        Err(e) => return usage_error(e),
    };
    let (config, _runtime, catalog) = match open(source).await {
        Ok(opened) => opened,
        Err(message) => return usage_error(message),
    };
    let mode: OutputMode = match mode.map(str::parse).transpose() {
        Ok(mode) => mode.unwrap_or(config.host.output_mode),
        Err(e) => return usage_error(e),
    };
    let target = match format {
        "legacy" => Target::Legacy,
        "a2a" => Target::A2a,
        _ => Target::Mcp { revision, mode },
    };
    let result = match catalog
        .call_named(name, Some(&arguments), &Caller::local(), "cli-1", None)
        .await
    {
        Ok(result) => result,
        Err(unknown) => {
            let names: Vec<&str> = catalog.tools().iter().map(|t| t.name.as_str()).collect();
            return usage_error(format!("{unknown}; the tools are: {}", names.join(", ")));
        }
    };
    let store = match toolhost::app::open_store(&config).await {
        Ok(store) => store,
        Err(message) => return usage_error(message),
    };
    let mapper = toolhost::app::mapper(&config, store);
    let tool = catalog.tool(name).expect("the tool was just called");
    let mut ctx = RenderContext::new(name, jiff::Timestamp::now());
    ctx.output_schema = tool.descriptor.output_schema.as_ref();
    ctx.request_id = "cli-1";
    let rendered = mapper.render(&result, target, &ctx).await;
    println!(
        "{}",
        serde_json::to_string_pretty(&rendered.rendering.to_value()).expect("JSON")
    );
    if result.is_failure() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// The policy `toolhost check` applies to `component`: its `[[plugin]]` in
/// `config_file`, or its sidecar's; and the CA trusted for its HTTPS.
fn policy_to_check(
    component: &Path,
    config_file: Option<&Path>,
) -> Result<(PluginConfig, Option<PathBuf>), String> {
    let Some(file) = config_file else {
        return toolhost::config::sidecar_plugin(component)
            .map(|plugin| (plugin, None))
            .map_err(|e| e.to_string());
    };
    let config = load_config(&Source {
        config: Some(file.to_path_buf()),
        plugins: Vec::new(),
    })?;
    let wanted =
        std::fs::canonicalize(component).map_err(|e| format!("{}: {e}", component.display()))?;
    let ca = config.host.http_ca_file.clone();
    config
        .plugins
        .into_iter()
        .find(|plugin| std::fs::canonicalize(&plugin.path).is_ok_and(|p| p == wanted))
        .map(|plugin| (plugin, ca))
        .ok_or_else(|| {
            format!(
                "{} configures no plugin whose path is {}; add a [[plugin]] for it or check it without --config",
                file.display(),
                component.display()
            )
        })
}

async fn check(component: &Path, strict: bool, config_file: Option<&Path>) -> ExitCode {
    let (plugin_config, http_ca) = match policy_to_check(component, config_file) {
        Ok(found) => found,
        Err(e) => return usage_error(e),
    };
    let settings = EngineSettings {
        pooling: false,
        fuel: plugin_config.policy.fuel.is_some(),
        max_memory_bytes: plugin_config.policy.memory_mib << 20,
        ..EngineSettings::default()
    };
    // A fresh private cache for this run: a shared one in the temporary
    // directory could be planted by another user.
    let scratch = match toolhost::runtime::ScratchDir::new("toolhost-check") {
        Ok(scratch) => scratch,
        Err(e) => return usage_error(format!("cannot create a private compile cache: {e}")),
    };
    let mut runtime = match Runtime::new(settings, scratch.path().to_path_buf()) {
        Ok(runtime) => runtime,
        Err(e) => return usage_error(format!("cannot start the engine: {e:#}")),
    };
    if let Err(e) = runtime.trust_http_ca(http_ca.as_deref()) {
        return usage_error(e);
    }
    let (loaded, requested) = match toolhost::supply::read_component(&plugin_config) {
        Ok(bytes) => {
            let requested = requested_policy(&plugin_config, &bytes);
            (runtime.load_bytes(&plugin_config, bytes).await, requested)
        }
        Err(problem) => {
            let path = plugin_config.path.display().to_string();
            (
                Err(toolhost::runtime::LoadError { path, problem }),
                Vec::new(),
            )
        }
    };
    let plugin = match loaded {
        Ok(plugin) => Arc::new(plugin),
        Err(e) => {
            println!("error: {e}");
            return ExitCode::from(1);
        }
    };
    let mut findings = catalog::check(&plugin_config, &plugin, strict);
    findings.extend(requested);
    let errors = findings
        .iter()
        .filter(|f| f.severity == Severity::Error)
        .count();
    let warnings = findings
        .iter()
        .filter(|f| f.severity == Severity::Warning)
        .count();
    for finding in &findings {
        let level = match finding.severity {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        };
        println!("{level}: {}: {}", component.display(), finding.message);
    }
    let world = match plugin.world() {
        World::Plugin => "plugin",
        World::LegacyApp => "legacy-app",
    };
    let tasks = plugin
        .tools()
        .iter()
        .filter(|tool| tool.task_support.allows_tasks())
        .count();
    let offers = [
        (plugin.prompts().len(), "prompt(s)"),
        (plugin.resources().len(), "resource(s)"),
        (plugin.templates().len(), "resource template(s)"),
        (tasks, "tool(s) that may run as tasks"),
    ]
    .iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!(", {n} {what}"))
    .collect::<String>();
    eprintln!(
        "{}: toolhost:plugin@{}, world {world}, {} tool(s){offers}, {errors} error(s), {} warning(s)",
        component.display(),
        plugin.package_version().as_str(),
        plugin.tools().len(),
        warnings
    );
    if errors > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Notes on what the component requests (its `toolhost:policy` section), what
/// the policy grants and what a call would get; none without a section.
fn requested_policy(plugin: &PluginConfig, component: &[u8]) -> Vec<catalog::Finding> {
    use toolhost::supply::{report::policy_summary, request};
    let note = |message: String| catalog::Finding {
        severity: Severity::Note,
        message,
    };
    match request::Request::from_component(component) {
        Ok(None) => Vec::new(),
        Err(problem) => vec![catalog::Finding {
            severity: Severity::Error,
            message: problem,
        }],
        Ok(Some(requested)) => {
            let (effective, missing) = request::effective(&plugin.policy, Some(&requested));
            let mut notes = vec![
                note(format!("requests: {}", request::summary(Some(&requested)))),
                note(format!("granted: {}", policy_summary(&plugin.policy))),
                note(format!("effective: {}", policy_summary(&effective))),
            ];
            if !missing.is_empty() {
                notes.push(note(format!("not granted: {}", missing.join("; "))));
            }
            notes
        }
    }
}

async fn render_samples(name: Option<&str>, target: &str) -> ExitCode {
    let targets = if target == "all" {
        Target::all()
    } else {
        match target.parse::<Target>() {
            Ok(target) => vec![target],
            Err(message) => return usage_error(message),
        }
    };
    let all = samples::all();
    let chosen: Vec<_> = all
        .iter()
        .filter(|s| name.is_none_or(|n| n == s.name))
        .collect();
    if chosen.is_empty() {
        let names: Vec<_> = all.iter().map(|s| s.name).collect();
        return usage_error(format!(
            "no sample named {:?}; the samples are: {}",
            name.unwrap_or_default(),
            names.join(", ")
        ));
    }
    let store = Arc::new(MemoryStore::new(
        SignedDuration::from_hours(1),
        samples::render_time,
    ));
    let mapper = Mapper::new(SizeLimits::default(), Some(store));
    for sample in chosen {
        for target in &targets {
            let mut ctx = RenderContext::new(sample.name, samples::render_time());
            ctx.output_schema = sample.output_schema.as_ref();
            ctx.request_id = "sample-1";
            let rendered = mapper.render(&sample.result, *target, &ctx).await;
            let note = if rendered.offloaded {
                ", offloaded to the store"
            } else {
                ""
            };
            println!(
                "# {} ({}) as {target}, {} bytes{note}",
                sample.name,
                sample.about,
                rendered.size()
            );
            println!(
                "{}",
                serde_json::to_string_pretty(&rendered.rendering.to_value()).expect("JSON")
            );
        }
    }
    ExitCode::SUCCESS
}
