//! The sandbox: one wasmtime engine, plugins loaded once, each call in a fresh
//! instance with the limits and capabilities its plugin's policy grants.
//!
//! Loading a plugin ([`Runtime::load_bytes`]) compiles the component (or reads it from
//! the compile cache), checks which world it implements, links it against WASI
//! and the `host` and `interaction` interfaces, validates its policy into [`Capabilities`], and calls
//! `describe` once. A call ([`Plugin::call`]) gets a new store and instance from
//! the cached pre-instantiation; nothing carries over from one call to the next.

pub mod bindings;
mod cache;
mod contract;
mod descriptor;
mod engine;
mod events;
mod faults;
mod guest_result;
mod host_api;
mod http;
mod in_flight;
mod interaction;
mod lookup;
mod network;
mod offers;
mod output;
mod plugin;
mod policy;
mod sockets;
mod state;
mod webhook;

pub use cache::{Origin, ScratchDir, ensure_private_dir};
pub use contract::{Contract, Version};
pub use descriptor::{
    Annotations, PromptArgument, PromptDescriptor, ResourceDescriptor, TaskSupport,
    TemplateDescriptor, ToolDescriptor,
};
pub use engine::{EPOCH_TICK, EngineSettings, POOL_INSTANCES};
pub use events::{Empty, EventReceiver, EventSender, GuestEvent, LogLevel, event_channel};
pub use faults::{host_failure, with_call_id};
pub use guest_result::MalformedResult;
pub use in_flight::ResultsInFlight;
pub use interaction::{Asked, Asker, CallIo, MAX_SCHEMA_BYTES, elicit_request};
pub use network::NetworkPolicy;
pub use offers::{CompletionRef, MAX_COMPLETION_VALUES, Offered};
pub use plugin::{CallContext, Called, Plugin, call_budget};
pub use policy::{Capabilities, PolicyError};
pub use state::{BudgetHit, TABLE_ELEMENT_BYTES};
pub use webhook::{Webhook, WebhookError, headers as webhook_headers};

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

use tokio::sync::Semaphore;
use tracing::Instrument as _;
use wasmtime::Engine;
use wasmtime::component::Linker;

use crate::config::PluginConfig;
use cache::CompileCache;
use contract::Ready;
use engine::EpochTicker;
use http::HttpTls;
use state::CallState;

/// The import of a component that sends HTTP requests (any 0.2 version).
pub const HTTP_IMPORT: &str = "wasi:http/outgoing-handler@0.2";

/// A plugin could not be loaded. The message names the component file.
#[derive(Debug, thiserror::Error)]
#[error("{path}: {problem}")]
pub struct LoadError {
    pub path: String,
    pub problem: String,
}

/// The engine, the linker and the compile cache, shared by every plugin.
pub struct Runtime {
    engine: Engine,
    linker: Linker<CallState>,
    cache: CompileCache,
    ticker: Arc<EpochTicker>,
    /// Whether the engine meters fuel (then every store needs some).
    meters_fuel: bool,
    /// The largest memory a pooled slot holds (`None`: allocated on demand).
    pooled_memory_bytes: Option<u64>,
    /// The host-wide budget of result bytes in flight, shared by every plugin.
    results: ResultsInFlight,
    /// Whom guests' HTTPS requests trust.
    http_tls: Arc<HttpTls>,
}

impl Runtime {
    /// A runtime with `settings`, caching compiled components in `cache_dir`.
    ///
    /// # Errors
    ///
    /// When wasmtime refuses the engine configuration, or the compile cache is not
    /// private (see [`ensure_private_dir`]).
    pub fn new(settings: EngineSettings, cache_dir: PathBuf) -> wasmtime::Result<Runtime> {
        let engine = engine::build(settings)?;
        let mut linker = Linker::<CallState>::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)?;
        // Outgoing HTTP, every request checked and sent by `http.rs`.
        wasmtime_wasi_http::p2::add_only_http_to_linker_async(&mut linker)?;
        sockets::add_to_linker(&mut linker)?;
        // Name lookups only for the names a plugin's rules name.
        lookup::add_to_linker(&mut linker)?;
        // The `host` import of each package version, one implementation.
        type Own = wasmtime::component::HasSelf<CallState>;
        bindings::v0_1::plugin::Plugin::add_to_linker::<_, Own>(&mut linker, |state| state)?;
        bindings::v0_2::full::toolhost::plugin::host::add_to_linker::<_, Own>(
            &mut linker,
            |state| state,
        )?;
        // The questions a 0.2.0 guest puts to its caller (`interaction.rs`).
        bindings::v0_2::full::toolhost::plugin::interaction::add_to_linker::<_, Own>(
            &mut linker,
            |state| state,
        )?;
        let cache = CompileCache::new(cache_dir, &engine).map_err(wasmtime::Error::msg)?;
        let ticker = Arc::new(EpochTicker::start(&engine));
        Ok(Runtime {
            engine,
            linker,
            cache,
            ticker,
            meters_fuel: settings.fuel,
            pooled_memory_bytes: settings.pooling.then_some(settings.max_memory_bytes),
            results: ResultsInFlight::new(
                crate::config::HostSettings::DEFAULT_RESULT_BYTES_IN_FLIGHT,
            ),
            http_tls: Arc::new(HttpTls::default()),
        })
    }

    /// Trusts the CAs of `ca_file` (`host.http_ca_file`) for guests' HTTPS, beside
    /// the system's, for the plugins loaded from now on.
    ///
    /// # Errors
    ///
    /// A message naming the file when it cannot be read or holds no certificate.
    pub fn trust_http_ca(&mut self, ca_file: Option<&std::path::Path>) -> Result<(), String> {
        self.http_tls = Arc::new(HttpTls::new(ca_file)?);
        Ok(())
    }

    /// Sets the host-wide budget of result bytes in flight
    /// (`host.max_result_bytes_in_flight`) for the plugins loaded from now on.
    pub fn limit_results_in_flight(&mut self, bytes: u64) {
        self.results = ResultsInFlight::new(bytes);
    }

    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Loads the component `bytes` under the plugin `config` describes (the
    /// bytes come from [`crate::supply`]; the runtime reads no source).
    ///
    /// # Errors
    ///
    /// A [`LoadError`] naming the component: not a component, the wrong world,
    /// imports the host does not offer, a policy that cannot apply, or a
    /// `describe` that fails or returns schemas that are not JSON.
    pub async fn load_bytes(
        &self,
        config: &PluginConfig,
        bytes: Vec<u8>,
    ) -> Result<Plugin, LoadError> {
        let error = |problem: String| LoadError {
            path: config.path.display().to_string(),
            problem,
        };
        self.check_engine_fits(config)?;
        // Compiling a 10-20 MB component takes seconds: off the async threads, so
        // a hot load does not stall the calls being served meanwhile.
        let (cache, engine, path) = (self.cache.clone(), self.engine.clone(), config.path.clone());
        let compiling = tracing::debug_span!(
            "compile",
            toolhost.plugin = %config.name,
            toolhost.component_bytes = bytes.len() as i64,
            toolhost.from_cache = tracing::field::Empty,
        );
        let (component, origin, digest) =
            tokio::task::spawn_blocking(move || cache.load(&engine, &path, &bytes))
                .instrument(compiling.clone())
                .await
                .map_err(|e| error(format!("compiling failed: {e}")))?
                .map_err(|e| error(format!("{e:#}")))?;
        compiling.record("toolhost.from_cache", origin == cache::Origin::Cached);
        let contract = Contract::detect(&self.engine, &component).map_err(error)?;
        let world = contract.world;
        let imports_http = component
            .component_type()
            .imports(&self.engine)
            .any(|(name, _)| name.starts_with(HTTP_IMPORT));
        if let Some(expected) = config.world
            && expected != world
        {
            return Err(error(format!(
                "configured as world {} but the component implements world {}",
                expected.as_str(),
                world.as_str()
            )));
        }
        let pre = self
            .linker
            .instantiate_pre(&component)
            .map_err(|e| error(format!("cannot be linked: {e:#}")))?;
        let ready = Ready::new(pre, contract).map_err(error)?;
        let capabilities = Capabilities::configure(
            &config.name,
            &config.policy,
            &config.secrets,
            self.http_tls.clone(),
        )
        .map_err(|e| error(e.to_string()))?;
        let mut plugin = Plugin {
            name: Arc::from(config.name.as_str()),
            contract,
            engine: self.engine.clone(),
            _ticker: self.ticker.clone(),
            ready,
            slots: Arc::new(Semaphore::new(capabilities.max_instances as usize)),
            capabilities,
            meters_fuel: self.meters_fuel,
            results: self.results.clone(),
            tools: Vec::new(),
            prompts: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            origin,
            digest,
            imports_http,
            in_use: OnceLock::new(),
        };
        let described = plugin
            .describe()
            .await
            .map_err(|e| error(format!("describe() failed: {e:#}")))?;
        plugin.tools = described
            .tools
            .into_iter()
            .map(ToolDescriptor::from_wit)
            .collect::<Result<_, _>>()
            .map_err(error)?;
        plugin.prompts = described
            .prompts
            .into_iter()
            .map(PromptDescriptor::from_wit)
            .collect::<Result<_, _>>()
            .map_err(error)?;
        plugin.resources = described.resources.into_iter().map(Into::into).collect();
        plugin.templates = described.templates.into_iter().map(Into::into).collect();
        for (name, support) in described.tasks {
            let Some(tool) = plugin.tools.iter_mut().find(|tool| tool.name == name) else {
                return Err(error(format!(
                    "tasks.describe() names the tool {name:?}, which describe() does not offer; name only tools the plugin has"
                )));
            };
            tool.task_support = match support {
                bindings::v0_2::tasks::TaskSupport::Optional => TaskSupport::Optional,
                bindings::v0_2::tasks::TaskSupport::Required => TaskSupport::Required,
            };
        }
        Ok(plugin)
    }
}

impl Runtime {
    /// A plugin loaded after start (hot load) may ask for what the engine was not
    /// built with: refused naming the file and key, instead of failing every call.
    fn check_engine_fits(&self, config: &PluginConfig) -> Result<(), LoadError> {
        let refuse = |problem: String| LoadError {
            path: config.configured_in.display().to_string(),
            problem: format!("plugin {}: {problem}", config.name),
        };
        if config.policy.fuel.is_some() && !self.meters_fuel {
            return Err(refuse("policy.fuel is set, but this toolhost started without fuel metering (no plugin had `fuel` then); restart toolhost to apply it, or remove the key".into()));
        }
        if let Some(slot) = self.pooled_memory_bytes
            && config.policy.memory_mib << 20 > slot
        {
            return Err(refuse(format!(
                "policy.memory_mib = {} is more than this toolhost's memory slots hold ({} MiB, the largest at start); restart toolhost to apply it, or lower the key",
                config.policy.memory_mib,
                slot >> 20
            )));
        }
        Ok(())
    }
}
