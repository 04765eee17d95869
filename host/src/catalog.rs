//! The catalog: every tool of every loaded plugin under its public name, checked
//! once at load, and the steps of a call that come before and after the sandbox:
//! privileges, arguments against the input schema, data against the output schema.
//!
//! Load-time checks: names fit `^[a-zA-Z0-9_-]{1,64}$` after the plugin's prefix;
//! input schemas are valid JSON Schema describing an object; output schemas are
//! valid JSON Schema; a name used twice is an error naming both plugins.
//!
//! The privileges a tool requires are the operator's: those the configuration
//! names for the plugin and the tool (`privileges`, `tool_privileges`, a webhook's
//! `privileges`), joined by what the plugin declares, which can only add. A caller
//! sees (and can call) only the tools whose privileges it holds; the call checks
//! them again.

use std::collections::{BTreeSet, HashMap};
use std::num::NonZeroUsize;
use std::sync::Arc;
use std::time::Instant;

use futures::StreamExt as _;
use futures::stream::FuturesOrdered;
use serde_json::{Value, json};
use tracing::Instrument as _;

use crate::config::{Config, PluginConfig, RequiredPrivileges, WebhookConfig, World};

mod privileges;
mod prompts;
mod resources;
use crate::result::{ErrorCode, ToolResult};
use crate::supply::{Supplied, Supply};
use privileges::{check_tool_privileges, effective_privileges};
pub use prompts::Prompt;
pub use resources::{HOST_SCHEME, Resource, Template};

use crate::runtime::{
    Annotations, CallContext, CallIo, Called, EventSender, LoadError, Plugin, Runtime,
    ToolDescriptor, Webhook, WebhookError, host_failure, with_call_id,
};

/// What serves a tool: a component in the sandbox, or an app webhook.
#[derive(Clone)]
pub enum Provider {
    Component(Arc<Plugin>),
    Webhook(Arc<Webhook>),
}

impl Provider {
    /// The plugin's or webhook's name (logs, error details).
    pub fn name(&self) -> &str {
        match self {
            Provider::Component(plugin) => plugin.name(),
            Provider::Webhook(webhook) => webhook.name(),
        }
    }

    /// The SHA-256 (hex) of a component as loaded; a webhook has none.
    pub fn digest(&self) -> Option<&str> {
        match self {
            Provider::Component(plugin) => Some(plugin.digest()),
            Provider::Webhook(_) => None,
        }
    }
}

/// A tool as the catalog serves it.
pub struct Tool {
    /// The public name (with the plugin's prefix).
    pub name: String,
    /// The descriptor as the plugin gave it (its own name inside).
    pub descriptor: ToolDescriptor,
    /// The hints, with unset ones derived from the plugin's policy.
    pub annotations: Annotations,
    /// The privileges a caller needs, sorted: the operator's and the plugin's.
    privileges: Vec<String>,
    provider: Provider,
    input: jsonschema::Validator,
    output: Option<jsonschema::Validator>,
}

impl Tool {
    /// What serves the tool.
    pub fn provider(&self) -> &Provider {
        &self.provider
    }

    /// The privileges a caller needs: the union of those the configuration names
    /// for the tool or its plugin and those the plugin declares.
    pub fn privileges(&self) -> &[String] {
        &self.privileges
    }

    /// Whether `caller` holds every privilege the tool requires (and so sees it).
    pub fn visible_to(&self, caller: &Caller) -> bool {
        caller.missing(&self.privileges).is_empty()
    }
}

/// Who calls, and what they may do.
#[derive(Debug, Clone, Default)]
pub struct Caller {
    /// The authenticated principal; `None` for a local, unauthenticated caller.
    pub principal: Option<String>,
    /// The caller's privileges; `None` means every privilege (a local operator).
    pub privileges: Option<BTreeSet<String>>,
}

impl Caller {
    /// The local operator: no principal, every privilege.
    pub fn local() -> Self {
        Caller::default()
    }

    /// The privileges of `required` the caller does not hold.
    pub fn missing<'a>(&self, required: &'a [String]) -> Vec<&'a str> {
        match &self.privileges {
            None => Vec::new(),
            Some(held) => required
                .iter()
                .filter(|p| !held.contains(*p))
                .map(String::as_str)
                .collect(),
        }
    }
}

/// A problem that stops the catalog from loading; each names the file.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    #[error(transparent)]
    Load(#[from] LoadError),
    #[error(transparent)]
    Webhook(#[from] WebhookError),
    #[error("{path}: {kind} {name:?}: {problem}")]
    Descriptor {
        path: String,
        /// `tool` or `prompt`.
        kind: &'static str,
        name: String,
        problem: String,
    },
    #[error(
        "{file}: plugin {plugin}: tool_privileges names tool {tool:?}, which the plugin does not offer (its tools: {tools}); fix the name (the plugin's own, without the prefix) or remove the key"
    )]
    UnknownPrivilegedTool {
        file: String,
        plugin: String,
        tool: String,
        tools: String,
    },
    #[error(transparent)]
    Duplicate(Box<Duplicate>),
}

/// A name or URI two plugins offer.
#[derive(Debug, thiserror::Error)]
#[error(
    "{kind} name {name:?} is offered twice: by plugin {first} ({first_path}) and by plugin {second} ({second_path}); give one of them a `prefix`"
)]
pub struct Duplicate {
    /// `tool`, `prompt`, `resource` or `resource template`.
    pub kind: &'static str,
    pub name: String,
    pub first: String,
    pub first_path: String,
    pub second: String,
    pub second_path: String,
}

/// How serious a finding of [`check`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
    /// What the component uses, for the operator to know (not a problem).
    Note,
}

/// One finding of [`check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub severity: Severity,
    pub message: String,
}

/// The static check of one loaded plugin (`toolhost check`): every descriptor
/// rule as an error, and warnings for tools without an output schema and for
/// app tools that answer with hand-built legacy envelopes (the ADR's phase 2
/// deprecation; an error with `strict`, its phase 3).
pub fn check(config: &PluginConfig, plugin: &Arc<Plugin>, strict: bool) -> Vec<Finding> {
    let mut findings = Vec::new();
    let mut seen = BTreeSet::new();
    let error = |message: String| Finding {
        severity: Severity::Error,
        message,
    };
    for descriptor in plugin.tools() {
        let provider = Provider::Component(plugin.clone());
        match checked_tool(
            config.prefix.as_deref(),
            &provider,
            descriptor,
            &config.privileges,
            policy_hints(plugin),
        ) {
            Ok(tool) => {
                if !seen.insert(tool.name.clone()) {
                    findings.push(error(format!(
                        "tool {:?}: described twice by the same plugin",
                        tool.name
                    )));
                }
                if descriptor.output_schema.is_none() && plugin.world() == World::Plugin {
                    findings.push(Finding {
                        severity: Severity::Warning,
                        message: format!("tool {:?}: no output schema; clients cannot validate its data (declare one in describe())", tool.name),
                    });
                }
            }
            Err(problem) => findings.push(error(format!("tool {:?}: {problem}", descriptor.name))),
        }
    }
    if plugin.world() == World::LegacyApp {
        findings.push(Finding {
            severity: if strict { Severity::Error } else { Severity::Warning },
            message: "world legacy-app: the tools answer with hand-built {\"success\": ..} strings, which are deprecated; return a result object from world plugin instead".into(),
        });
    }
    for descriptor in plugin.prompts() {
        if let Err(problem) = public_name(config.prefix.as_deref(), &descriptor.name) {
            findings.push(error(format!("prompt {:?}: {problem}", descriptor.name)));
        }
    }
    let offers_more = !plugin.prompts().is_empty()
        || !plugin.resources().is_empty()
        || !plugin.templates().is_empty();
    if plugin.tools().is_empty() && !offers_more {
        findings.push(error(
            "describe() returned no tools, and the plugin offers no prompts or resources".into(),
        ));
    }
    if let Err(problem) = check_tool_privileges(config, plugin.tools()) {
        findings.push(error(problem.to_string()));
    }
    if plugin.imports_http() {
        let rules = config.policy.http.len();
        findings.push(if plugin.capabilities().has_http() {
            Finding {
                severity: Severity::Note,
                message: format!(
                    "imports {}: it may send the HTTP requests its {rules} policy.http rule(s) allow",
                    crate::runtime::HTTP_IMPORT
                ),
            }
        } else {
            Finding {
                severity: Severity::Warning,
                message: format!(
                    "imports {} but has no policy.http rule in {}: every request it sends will be refused; grant destinations, e.g. http = [\"https://api.example.com/*\"]",
                    crate::runtime::HTTP_IMPORT,
                    config.configured_in.display()
                ),
            }
        });
    }
    findings
}

/// The call named a tool the catalog does not have.
#[derive(Debug, Clone, thiserror::Error)]
#[error("unknown tool {0:?}")]
pub struct UnknownTool(pub String);

/// Every tool, prompt and resource, in the order the configuration lists the
/// plugins.
pub struct Catalog {
    tools: Vec<Tool>,
    by_name: HashMap<String, usize>,
    prompts: Vec<Prompt>,
    prompt_by_name: HashMap<String, usize>,
    resources: Vec<Resource>,
    templates: Vec<Template>,
    paths: HashMap<String, String>,
}

/// At most this many plugins load at once. Each holds its component and its
/// compiled form in memory while it loads (50 MB and more for a JavaScript or
/// Python one), so the start of a host with many cores stays within a few of them.
const LOADS_AT_ONCE: usize = 4;

/// The plugin `supplied` describes, loaded into `runtime`, with its configuration.
async fn load(
    runtime: &Runtime,
    supplied: Result<Supplied, LoadError>,
) -> Result<(PluginConfig, Plugin), CatalogError> {
    let Supplied { bytes, config } = supplied?;
    let plugin = runtime.load_bytes(&config, bytes).await?;
    Ok((config, plugin))
}

/// Gives the memory the loads freed back to the system. The components and
/// their compiled forms were read into memory, megabytes each, some on other
/// threads at once, so glibc's allocator holds freed pages in more than one
/// arena, where it would keep them resident while the host idles (P5).
fn release_load_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only returns free memory to the kernel; it takes
    // the allocator's own locks and may be called from any thread.
    unsafe {
        libc::malloc_trim(0);
    }
}

impl Catalog {
    /// Loads every plugin of `config` into `runtime` and checks their tools.
    ///
    /// # Errors
    ///
    /// The first [`CatalogError`]: a plugin that does not load, a descriptor that
    /// breaks a rule, or a duplicate name.
    pub async fn load(config: &Config, runtime: &Runtime) -> Result<Catalog, CatalogError> {
        let mut catalog = Catalog {
            tools: Vec::new(),
            by_name: HashMap::new(),
            prompts: Vec::new(),
            prompt_by_name: HashMap::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            paths: HashMap::new(),
        };
        let supply = Supply::configure(config).map_err(|problem| LoadError {
            path: "[trust.keys]".into(),
            problem,
        })?;
        // Components are read one after the other (a registry's lock file is
        // read and written as they are), and compiled or read from the compile
        // cache (hashing and checking megabytes) a few at once: as many as
        // there are cores, up to [`LOADS_AT_ONCE`]. They join the catalog in the
        // configuration's order, so the error is that of the first plugin in it
        // that fails, whichever load finished first.
        let at_once = std::thread::available_parallelism()
            .map_or(1, NonZeroUsize::get)
            .min(LOADS_AT_ONCE);
        let mut plugins = config.plugins.iter();
        let mut loading = FuturesOrdered::new();
        loop {
            while loading.len() < at_once
                && let Some(plugin_config) = plugins.next()
            {
                let supplied = supply.component(plugin_config).await;
                loading.push_back(load(runtime, supplied));
            }
            let Some(loaded) = loading.next().await else {
                break;
            };
            let (plugin_config, plugin) = loaded?;
            catalog.add(&plugin_config, Arc::new(plugin))?;
        }
        for webhook_config in &config.webhooks {
            let webhook = Webhook::configure(webhook_config, &config.host.webhook_allow).await?;
            catalog.add_webhook(webhook_config, Arc::new(webhook))?;
        }
        release_load_memory();
        Ok(catalog)
    }

    /// Adds the tools of a loaded plugin.
    ///
    /// # Errors
    ///
    /// A [`CatalogError`] for a descriptor that breaks a rule or a duplicate name.
    pub fn add(&mut self, config: &PluginConfig, plugin: Arc<Plugin>) -> Result<(), CatalogError> {
        let derive = policy_hints(&plugin);
        let descriptors = plugin.tools().to_vec();
        check_tool_privileges(config, &descriptors)?;
        let path = config.path.display().to_string();
        self.add_prompts(config, &plugin, &path)?;
        self.add_resources(config, &plugin, &path)?;
        self.add_tools(
            config.prefix.as_deref(),
            &descriptors,
            Provider::Component(plugin),
            path,
            &config.privileges,
            derive,
        )
    }

    /// Adds the tools of an app webhook; their hints are as configured.
    ///
    /// # Errors
    ///
    /// A [`CatalogError`] for a description that breaks a rule or a duplicate name.
    pub fn add_webhook(
        &mut self,
        config: &WebhookConfig,
        webhook: Arc<Webhook>,
    ) -> Result<(), CatalogError> {
        let descriptors = webhook.tools().to_vec();
        let url = webhook.url().to_owned();
        // Each [[webhook.tool]]'s own `required_privileges` is in its descriptor.
        let required = RequiredPrivileges {
            all: config.privileges.clone(),
            per_tool: Default::default(),
        };
        self.add_tools(
            config.prefix.as_deref(),
            &descriptors,
            Provider::Webhook(webhook),
            url,
            &required,
            |hints| hints,
        )
    }

    fn add_tools(
        &mut self,
        prefix: Option<&str>,
        descriptors: &[ToolDescriptor],
        provider: Provider,
        path: String,
        required: &RequiredPrivileges,
        derive: impl Fn(Annotations) -> Annotations,
    ) -> Result<(), CatalogError> {
        let mut seen = BTreeSet::new();
        for descriptor in descriptors {
            let tool = checked_tool(prefix, &provider, descriptor, required, &derive).map_err(
                |problem| CatalogError::Descriptor {
                    path: path.clone(),
                    kind: "tool",
                    name: descriptor.name.clone(),
                    problem,
                },
            )?;
            if !seen.insert(tool.name.clone()) {
                return Err(CatalogError::Descriptor {
                    path: path.clone(),
                    kind: "tool",
                    name: tool.name.clone(),
                    problem: "described twice by the same plugin".into(),
                });
            }
            if let Some(&index) = self.by_name.get(&tool.name) {
                let first = &self.tools[index];
                return Err(CatalogError::Duplicate(Box::new(Duplicate {
                    kind: "tool",
                    name: tool.name.clone(),
                    first: first.provider.name().to_owned(),
                    first_path: self.paths[first.provider.name()].clone(),
                    second: provider.name().to_owned(),
                    second_path: path,
                })));
            }
            self.by_name.insert(tool.name.clone(), self.tools.len());
            self.tools.push(tool);
        }
        self.paths.insert(provider.name().to_owned(), path);
        Ok(())
    }

    /// Every tool, in a stable order.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    pub fn tool(&self, name: &str) -> Option<&Tool> {
        self.by_name.get(name).map(|&i| &self.tools[i])
    }

    /// Where the tool `name` is in [`Catalog::tools`].
    pub fn position(&self, name: &str) -> Option<usize> {
        self.by_name.get(name).copied()
    }

    /// Calls `name`: looks the tool up, then [`Catalog::call`].
    ///
    /// # Errors
    ///
    /// [`UnknownTool`] when there is no such tool; everything else is a result.
    pub async fn call_named(
        &self,
        name: &str,
        arguments: Option<&Value>,
        caller: &Caller,
        request_id: &str,
        events: Option<EventSender>,
    ) -> Result<ToolResult, UnknownTool> {
        let tool = self
            .tool(name)
            .ok_or_else(|| UnknownTool(name.to_owned()))?;
        Ok(self.call(tool, arguments, caller, request_id, events).await)
    }

    /// Calls `tool`, one of this catalog's (the caller looked it up once, with
    /// [`Catalog::tool`]), with `arguments` (absent means `{}`) for `caller`. The
    /// result carries the call's duration. Each call gets a random id: every log
    /// line of the call carries it (the `call` span), and the details of a
    /// failure the host made (a fault, a webhook's failure, a schema violation)
    /// name it as `"callId"`, so the caller can quote it and the operator find the
    /// full detail the caller is not shown. A failure the tool returned keeps its
    /// details as the tool gave them.
    pub async fn call(
        &self,
        tool: &Tool,
        arguments: Option<&Value>,
        caller: &Caller,
        request_id: &str,
        events: Option<EventSender>,
    ) -> ToolResult {
        self.call_as(new_call_id(), tool, arguments, caller, request_id, events)
            .await
    }

    /// [`Catalog::call`] under the id `call_id` (from [`new_call_id`]), for a
    /// caller that records the call under its id too (the audit log).
    pub async fn call_as(
        &self,
        call_id: String,
        tool: &Tool,
        arguments: Option<&Value>,
        caller: &Caller,
        request_id: &str,
        events: Option<EventSender>,
    ) -> ToolResult {
        self.call_with(
            call_id,
            tool,
            arguments,
            caller,
            request_id,
            CallIo::events(events),
        )
        .await
        .into_result()
    }

    /// [`Catalog::call_as`] with the call's questions going to `io.asker`: a
    /// call may end by asking its caller a question ([`Called::Asking`]), to be
    /// called again with the answer.
    pub async fn call_with(
        &self,
        call_id: String,
        tool: &Tool,
        arguments: Option<&Value>,
        caller: &Caller,
        request_id: &str,
        io: CallIo,
    ) -> Called {
        // At level ERROR, so the span (and its id) is on whatever the filter
        // lets through; the events inside keep their own levels.
        // The tool, the plugin and the outcome are on the request's span; the
        // runtime records the instance's time here.
        let span = tracing::error_span!(
            "call",
            call_id = %call_id,
            toolhost.instance_ms = tracing::field::Empty,
        );
        let call = async {
            let started = Instant::now();
            let called = self
                .run(tool, arguments, caller, request_id, &call_id, io)
                .await;
            // Milliseconds to the microsecond: most calls take well under one.
            let duration_ms = (started.elapsed().as_micros() as f64) / 1000.0;
            let log = |result: &ToolResult| {
                tracing::info!(
                    tool = tool.name.as_str(),
                    plugin = tool.provider.name(),
                    duration_ms,
                    failed = result.is_failure(),
                    "call"
                );
            };
            match called {
                Called::Finished(result) => {
                    log(&result);
                    Called::Finished(result.into_builder().duration_ms(duration_ms).build())
                }
                Called::Failed(result) => {
                    log(&result);
                    Called::Failed(result.into_builder().duration_ms(duration_ms).build())
                }
                Called::Asking(questions) => {
                    tracing::info!(
                        tool = tool.name.as_str(),
                        plugin = tool.provider.name(),
                        duration_ms,
                        questions = questions.len(),
                        "call stopped to ask its caller"
                    );
                    Called::Asking(questions)
                }
            }
        };
        with_call_id(call_id.clone(), call.instrument(span)).await
    }

    async fn run(
        &self,
        tool: &Tool,
        arguments: Option<&Value>,
        caller: &Caller,
        request_id: &str,
        call_id: &str,
        io: CallIo,
    ) -> Called {
        // Defence in depth: over MCP a caller does not even see a tool it lacks
        // the privileges for.
        let missing = caller.missing(&tool.privileges);
        if !missing.is_empty() {
            return Called::Finished(ToolResult::failure_with(
                ErrorCode::MissingPrivilege,
                format!("Missing privilege: {}", missing.join(", ")),
                json!({ "missing": missing }),
            ));
        }
        let empty = json!({});
        let arguments = arguments.unwrap_or(&empty);
        let errors = schema_violations(&tool.input, arguments);
        if !errors.is_empty() {
            return Called::Finished(ToolResult::failure_with(
                ErrorCode::InvalidArguments,
                format!(
                    "The arguments do not match the input schema of {}: {}",
                    tool.name,
                    errors[0]["message"].as_str().unwrap_or_default()
                ),
                json!({ "errors": errors }),
            ));
        }
        let context = CallContext {
            caller: caller.principal.clone(),
            request_id: request_id.to_owned(),
            call_id: call_id.to_owned(),
        };
        // Each provider's call is a large future (a webhook's holds an HTTP
        // request's; the whole was 10 KB). On the heap, the futures around it stay
        // small: every `async fn` layer above moves its inner future into place, and
        // these moves were the largest copies of a call (P1, issue #17).
        let called = match &tool.provider {
            Provider::Component(plugin) => {
                // `to_string` writes into the `String` directly; `Value`'s
                // `Display` goes through a formatter adapter (1.25 % of P1).
                let arguments =
                    serde_json::to_string(arguments).expect("a JSON value always serializes");
                Box::pin(plugin.call(&tool.descriptor.name, arguments, &context, io)).await
            }
            Provider::Webhook(webhook) => Called::Finished(
                Box::pin(webhook.call(&tool.descriptor.name, arguments, &context)).await,
            ),
        };
        match called {
            Called::Finished(result) => Called::Finished(check_output(tool, result)),
            asking => asking,
        }
    }
}

/// 64 bits in hex: the id of one call in the host's log.
///
/// A counter passed through SipHash under a key drawn from the system's
/// randomness once per process ([`std::hash::RandomState`]): ids do not repeat
/// within a process, cannot be guessed from one another, and differ between
/// processes (replicas, restarts), without a system call per call.
pub fn new_call_id() -> String {
    use std::hash::{BuildHasher as _, Hasher as _};
    use std::sync::LazyLock;
    use std::sync::atomic::{AtomicU64, Ordering};
    static KEY: LazyLock<std::hash::RandomState> = LazyLock::new(std::hash::RandomState::new);
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let mut hasher = KEY.build_hasher();
    hasher.write_u64(NEXT.fetch_add(1, Ordering::Relaxed));
    hex16(hasher.finish())
}

/// `id` as sixteen lowercase hex digits, as `format!("{id:016x}")` writes it,
/// from its bytes: the formatter's padding is several times the work (P1,
/// issue #17).
fn hex16(id: u64) -> String {
    hex::encode(id.to_be_bytes())
}

/// Where `instance` breaks `validator`'s schema, each as `{"path", "message"}`;
/// empty when it matches. `is_valid` comes first: it stops at the first
/// violation and builds no error, so the common case costs the least.
fn schema_violations(validator: &jsonschema::Validator, instance: &Value) -> Vec<Value> {
    if validator.is_valid(instance) {
        return Vec::new();
    }
    validator
        .iter_errors(instance)
        .map(|e| json!({ "path": e.instance_path().to_string(), "message": e.to_string() }))
        .collect()
}

/// A success of a tool with an output schema must carry data that matches it.
fn check_output(tool: &Tool, result: ToolResult) -> ToolResult {
    let (Some(validator), false) = (&tool.output, result.is_failure()) else {
        return result;
    };
    let violations = match result.data() {
        Some(data) => schema_violations(validator, data),
        None => vec![json!({ "path": "", "message": "the tool returned no data" })],
    };
    if violations.is_empty() {
        return result;
    }
    tracing::warn!(tool = %tool.name, plugin = tool.provider.name(), error.type = "output_schema_violation", "result does not match the output schema");
    host_failure(
        ErrorCode::ToolError,
        format!(
            "The result of {} does not match its output schema, so it was not sent.",
            tool.name
        ),
        tool.provider.name(),
        &tool.descriptor.name,
        json!({ "violations": violations }),
    )
}

/// Unset hints of a component's tools follow from its policy: no writable
/// directory means read-only; a network or HTTP rule means an open world, none a
/// closed one.
fn policy_hints(plugin: &Plugin) -> impl Fn(Annotations) -> Annotations + use<> {
    let capabilities = plugin.capabilities();
    let (writable, network) = (
        capabilities.has_writable_preopen(),
        capabilities.has_network(),
    );
    move |mut hints: Annotations| {
        if hints.read_only.is_none() && !writable {
            hints.read_only = Some(true);
        }
        if hints.open_world.is_none() {
            hints.open_world = Some(network);
        }
        hints
    }
}

/// The public name of a tool or prompt the plugin calls `name`, under its
/// plugin's `prefix`.
///
/// # Errors
///
/// When the name is not 1 to 64 letters, digits, `_` or `-`.
fn public_name(prefix: Option<&str>, name: &str) -> Result<String, String> {
    let name = match prefix {
        Some(prefix) => format!("{prefix}_{name}"),
        None => name.to_owned(),
    };
    if name.is_empty()
        || name.len() > 64
        || !name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(format!(
            "the name {name:?} must be 1 to 64 letters, digits, '_' or '-' so every client accepts it"
        ));
    }
    Ok(name)
}

fn checked_tool(
    prefix: Option<&str>,
    provider: &Provider,
    descriptor: &ToolDescriptor,
    required: &RequiredPrivileges,
    derive: impl Fn(Annotations) -> Annotations,
) -> Result<Tool, String> {
    let name = public_name(prefix, &descriptor.name)?;
    if descriptor.input_schema.get("type") != Some(&json!("object")) {
        return Err("the input schema must describe an object (\"type\": \"object\")".into());
    }
    let invalid = |which: &str, e: jsonschema::ValidationError<'_>| {
        format!(
            "the {which} schema is not valid JSON Schema: at {}: {e}",
            e.instance_path()
        )
    };
    let input =
        jsonschema::validator_for(&descriptor.input_schema).map_err(|e| invalid("input", e))?;
    let output = descriptor
        .output_schema
        .as_ref()
        .map(|schema| jsonschema::validator_for(schema).map_err(|e| invalid("output", e)))
        .transpose()?;
    let annotations = derive(descriptor.annotations);
    Ok(Tool {
        name,
        descriptor: descriptor.clone(),
        annotations,
        privileges: effective_privileges(descriptor, required),
        provider: provider.clone(),
        input,
        output,
    })
}

#[cfg(test)]
mod tests {
    use super::{hex16, new_call_id};

    #[test]
    fn ids_are_written_as_the_formatter_writes_them() {
        for id in [0, 1, 0xf, 0xa5, 1 << 63, 0x0123_4567_89ab_cdef, u64::MAX] {
            assert_eq!(hex16(id), format!("{id:016x}"));
        }
    }

    #[test]
    fn call_ids_are_sixteen_hex_digits_and_do_not_repeat() {
        let ids: std::collections::HashSet<String> = (0..10_000).map(|_| new_call_id()).collect();
        assert_eq!(ids.len(), 10_000);
        for id in &ids {
            assert_eq!(id.len(), 16, "{id}");
            assert!(id.bytes().all(|b| b.is_ascii_hexdigit()), "{id}");
        }
        // Not a bare counter: consecutive ids share no long prefix.
        let (a, b) = (new_call_id(), new_call_id());
        assert_ne!(a[..8], b[..8], "{a} {b}");
    }
}
