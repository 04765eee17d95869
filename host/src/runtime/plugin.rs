//! A loaded plugin: its compiled component, ready to instantiate, its tools, and
//! the capabilities its policy grants. Each call gets a fresh store and instance.

use std::pin::Pin;
use std::sync::{Arc, OnceLock};
use std::task::Poll;
use std::time::{Duration, Instant};

use serde_json::json;
use tokio::sync::{Semaphore, TryAcquireError};
use wasmtime::component::{ResourceTable, ResourceTableError};
use wasmtime::{Engine, Store, UpdateDeadline};

use super::bindings::{to_wit_datetime, wit_types};
use super::cache::Origin;
use super::contract::{Answer, Contract, Described, Ready, Version};
use super::descriptor::{PromptDescriptor, ResourceDescriptor, TemplateDescriptor, ToolDescriptor};
use super::engine::EPOCH_TICK;
use super::faults::{DeadlineExceeded, FaultContext, fault, host_failure, refused};
use super::guest_result::result_bytes;
use super::in_flight::{ResultsInFlight, SMALL_RESULT_BYTES};
use super::interaction::CallIo;
use super::output::GuestOutput;
use super::policy::{Capabilities, Denials};
use super::state::{BudgetHit, CallLimiter, CallState};
use crate::config::World;
use crate::render::format::decode_app_response;
use crate::result::{ErrorCode, Question, ToolResult};

/// How often `describe` instantiates a component whose memory image the kernel
/// would not seal (see [`Plugin::describe`]).
const SEAL_ATTEMPTS: u32 = 4;

/// Whether `error` is the kernel refusing to seal a memory image's memfd.
fn is_seal_refusal(error: &wasmtime::Error) -> bool {
    #[cfg(target_os = "linux")]
    {
        error
            .chain()
            .any(|cause| matches!(cause.downcast_ref(), Some(memfd::Error::AddSeals(_))))
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = error;
        false
    }
}

/// Who calls and which request this is, as the guest sees it.
#[derive(Debug, Clone, Default)]
pub struct CallContext {
    pub caller: Option<String>,
    pub request_id: String,
    /// The host's id of this call (random hex, made by the catalog): every log
    /// line of the call carries it, and so do the details of a failure, so an
    /// operator finds the full story of what a caller saw.
    pub call_id: String,
}

/// How a call ended: with a result, or stopped to ask its caller a question
/// outside the instance (see `interaction.rs`).
#[derive(Debug)]
// The large variant is the common one: boxing it would cost every call an
// allocation to save a rare question a few hundred bytes.
#[allow(clippy::large_enum_variant)]
pub enum Called {
    /// The tool's own answer (a failure it reported included).
    Finished(ToolResult),
    /// The sandbox ended the call before the tool answered (a trap, a budget,
    /// the deadline, a host failure): the coded failure the host made of it.
    Failed(ToolResult),
    /// The questions the caller is to answer before the call can go on.
    Asking(Vec<Question>),
}

impl Called {
    /// The result; a call that stopped to ask, where nobody could have asked
    /// it to, is a host failure.
    pub fn into_result(self) -> ToolResult {
        match self {
            Called::Finished(result) | Called::Failed(result) => result,
            Called::Asking(_) => ToolResult::failure(
                ErrorCode::ToolError,
                "The call stopped to ask a question where none can be asked.",
            )
            .build(),
        }
    }
}

/// Why [`Plugin::run`] gave no value.
#[allow(clippy::large_enum_variant)] // as for `Called`
pub(super) enum Stop {
    /// The coded failure the caller gets.
    Failed(ToolResult),
    /// The guest's questions are to be asked outside the instance.
    Asking(Vec<Question>),
}

/// A plugin ready to serve calls.
pub struct Plugin {
    pub(super) name: Arc<str>,
    pub(super) contract: Contract,
    pub(super) engine: Engine,
    /// Keeps the epoch advancing while the plugin lives, so its deadlines fire
    /// even after the [`super::Runtime`] that loaded it is gone.
    pub(super) _ticker: Arc<super::engine::EpochTicker>,
    pub(super) ready: Ready,
    pub(super) capabilities: Capabilities,
    /// Whether the engine meters fuel: asked once, not of every store (a store
    /// answers with an error, which captures a backtrace when
    /// `RUST_BACKTRACE` is set).
    pub(super) meters_fuel: bool,
    pub(super) slots: Arc<Semaphore>,
    /// The host-wide budget of result bytes in flight.
    pub(super) results: ResultsInFlight,
    pub(super) tools: Vec<ToolDescriptor>,
    pub(super) prompts: Vec<PromptDescriptor>,
    pub(super) resources: Vec<ResourceDescriptor>,
    pub(super) templates: Vec<TemplateDescriptor>,
    pub(super) origin: Origin,
    /// The SHA-256 of the component's bytes, in hex.
    pub(super) digest: String,
    /// Whether the component imports `wasi:http/outgoing-handler`.
    pub(super) imports_http: bool,
    /// `toolhost_instances_in_use` of this plugin, registered at its first call
    /// rather than at load: the metrics recorder is installed after the catalog
    /// loads, and a handle taken before it would record nothing.
    pub(super) in_use: OnceLock<metrics::Gauge>,
}

/// What a guest answered in [`Plugin::run`], with the call's deadline and what
/// the policy denied it; the instance slot is held while this lives.
pub(super) struct Ran<'a, T> {
    pub(super) value: T,
    pub(super) deadline: Instant,
    pub(super) denials: Vec<String>,
    _slot: tokio::sync::SemaphorePermit<'a>,
    _in_use: InUse<'a>,
}

/// A store set up for one call, and what observes it.
struct Sandbox {
    store: Store<CallState>,
    stdout: GuestOutput,
    stderr: GuestOutput,
    denials: Denials,
    deadline: Instant,
}

impl Plugin {
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn world(&self) -> World {
        self.contract.world
    }

    /// The version of the `toolhost:plugin` package the component was built against.
    pub fn package_version(&self) -> Version {
        self.contract.version
    }

    /// The tools the plugin described when it was loaded.
    pub fn tools(&self) -> &[ToolDescriptor] {
        &self.tools
    }

    pub fn capabilities(&self) -> &Capabilities {
        &self.capabilities
    }

    /// Whether the component imports `wasi:http/outgoing-handler` (it may send
    /// HTTP requests, as far as `policy.http` allows).
    pub fn imports_http(&self) -> bool {
        self.imports_http
    }

    /// The SHA-256 of the component file as loaded, in hex: which build of the
    /// plugin served a call (the audit log names it).
    pub fn digest(&self) -> &str {
        &self.digest
    }

    /// Whether the compiled component came from the compile cache.
    pub fn from_cache(&self) -> bool {
        self.origin == Origin::Cached
    }

    /// The guest's view of the call `ctx`: who calls, and when the host stops it.
    pub(super) fn wit_context(&self, ctx: &CallContext) -> wit_types::CallContext {
        wit_types::CallContext {
            caller: ctx.caller.clone(),
            request_id: ctx.request_id.clone(),
            deadline: jiff::Timestamp::now()
                .checked_add(self.capabilities.timeout)
                .ok()
                .map(to_wit_datetime),
        }
    }

    /// Runs `work` in a fresh store for `what` (a tool's name, or what else the
    /// guest is asked for), within the plugin's instance slots, deadline and
    /// budgets. A fault, a budget hit or no free slot becomes the coded failure
    /// the caller gets.
    pub(super) async fn run<T>(
        &self,
        what: &str,
        io: CallIo,
        work: impl AsyncFnOnce(&mut Store<CallState>) -> wasmtime::Result<T>,
    ) -> Result<Ran<'_, T>, Stop> {
        let timeout = self.capabilities.timeout;
        // A free slot is taken at once. Only a call that has to wait for one arms
        // a timer: tokio takes its timer driver's lock to drop a timer, armed or
        // not, and every concurrent call would queue on that lock (#17).
        let slot = match self.slots.try_acquire() {
            Ok(slot) => Some(slot),
            Err(TryAcquireError::NoPermits) => {
                (tokio::time::timeout(timeout, self.slots.acquire()).await)
                    .ok()
                    .and_then(Result::ok)
            }
            Err(TryAcquireError::Closed) => None,
        };
        let Some(slot) = slot else {
            refused("max_instances", &self.name);
            return Err(Stop::Failed(host_failure(
                ErrorCode::ResourceLimit,
                format!(
                    "All {} instances of this plugin stayed busy for {} ms.",
                    self.capabilities.max_instances,
                    timeout.as_millis()
                ),
                &self.name,
                what,
                json!({ "maxInstances": self.capabilities.max_instances }),
            )));
        };
        let in_use = InUse::new(self.in_use.get_or_init(
            || metrics::gauge!("toolhost_instances_in_use", "plugin" => self.name.to_string()),
        ));
        let mut sandbox = match self.sandbox(what, io) {
            Ok(sandbox) => sandbox,
            Err(error) => return Err(Stop::Failed(self.finish_fault(what, &error, None))),
        };
        let started = std::time::Instant::now();
        // The guest's future (instantiating and calling, 3.6 KB) goes on the heap
        // once. Inline, every `async` layer above held it twice over (the value
        // built, then the value awaited), and `Plugin::call`'s future grew to 38 KB,
        // moved whole into its box on every call; boxed, it is 2.5 KB (P1, #17).
        let outcome = Self::bounded(sandbox.deadline, Box::pin(work(&mut sandbox.store))).await;
        // The instance's time, on the call's span (a no-op where it has no such field).
        let ms = started.elapsed().as_micros() as f64 / 1000.0;
        tracing::Span::current().record("toolhost.instance_ms", ms);
        sandbox.stdout.finish();
        sandbox.stderr.finish();
        let value = match outcome {
            Ok(value) => value,
            Err(error) => {
                // The `interaction` import stopped the guest to ask outside it.
                if let Some(questions) = sandbox.store.data_mut().suspended.take() {
                    return Err(Stop::Asking(questions));
                }
                return Err(Stop::Failed(self.finish_fault(
                    what,
                    &error,
                    Some(&sandbox),
                )));
            }
        };
        // A budget of the host imports that was hit fails the call, however the
        // guest went on.
        if let Some(hit) = sandbox.store.data().first_budget_hit() {
            return Err(Stop::Failed(self.budget_failure(what, &hit)));
        }
        let denials = sandbox.denials.lock().expect("denials lock").clone();
        Ok(Ran {
            value,
            deadline: sandbox.deadline,
            denials,
            _slot: slot,
            _in_use: in_use,
        })
    }

    /// Runs `tool` with `arguments` (JSON text) in a fresh instance. Never fails:
    /// a fault in the sandbox becomes a coded failure result.
    ///
    /// `io` says where the call's events go and whom its questions reach; a
    /// question to be asked outside the instance ends the call as
    /// [`Called::Asking`].
    pub async fn call(
        &self,
        tool: &str,
        arguments: String,
        ctx: &CallContext,
        io: CallIo,
    ) -> Called {
        let context = self.wit_context(ctx);
        // DEBUG spans: created only when traces are on or the log asks for them.
        let instantiating = tracing::debug_span!("instantiate", toolhost.plugin = %self.name);
        let guest =
            tracing::debug_span!("guest", toolhost.plugin = %self.name, gen_ai.tool.name = tool);
        let spans = (instantiating, guest);
        let ran = self
            .run(tool, io, async |store| {
                self.ready
                    .call(store, tool, &arguments, &context, spans)
                    .await
            })
            .await;
        // The instance (and its memory) is gone: the answer is lifted. The slot
        // (the rest of `ran`) is held until the answer is converted.
        match ran {
            Ok(ran) => Called::Finished(self.convert(tool, ran).await),
            Err(Stop::Failed(failure)) => Called::Failed(failure),
            Err(Stop::Asking(questions)) => Called::Asking(questions),
        }
    }

    /// The result of the answer `ran` lifted from the guest, within the result
    /// budgets.
    async fn convert(&self, tool: &str, ran: Ran<'_, Answer>) -> ToolResult {
        let (answer, deadline, denials) = (ran.value, ran.deadline, ran.denials);
        let size = match &answer {
            Answer::Plugin(wit) => result_bytes(wit),
            Answer::App(text) => text.len() as u64,
        };
        let budget = self.capabilities.max_result_bytes;
        if size > budget {
            return self.budget_failure(
                tool,
                &BudgetHit::new(
                    "max_result_bytes",
                    format!("the result of {size} bytes is over the budget of {budget} bytes"),
                ),
            );
        }
        let Some(lease) = self.results.acquire(size, deadline).await else {
            return self.budget_failure(
                tool,
                &BudgetHit::new(
                    "max_result_bytes_in_flight",
                    format!(
                        "the host had no room for a result of {size} bytes before the deadline (at most {} bytes of results are converted at once)",
                        self.results.bytes()
                    ),
                ),
            );
        };
        // Parsing megabytes of JSON takes a while: off the async threads, so the
        // calls beside it are not held up.
        let convert = move || match answer {
            Answer::Plugin(wit) => ToolResult::try_from(*wit).map_err(|e| e.to_string()),
            Answer::App(text) => decode_app_response(&text).map_err(|e| e.to_string()),
        };
        let converted = if size > SMALL_RESULT_BYTES {
            tokio::task::spawn_blocking(convert)
                .await
                .unwrap_or_else(|e| Err(format!("the conversion failed: {e}")))
        } else {
            convert()
        };
        match converted {
            Ok(mut result) => {
                blame_denials(&mut result, &denials);
                result.with_lease(lease)
            }
            Err(problem) => {
                tracing::warn!(plugin = %self.name, tool, %problem, error.type = "malformed_result", "guest returned a malformed result");
                host_failure(
                    ErrorCode::ToolError,
                    format!("The tool returned a malformed result: {problem}"),
                    &self.name,
                    tool,
                    json!({}),
                )
            }
        }
    }

    /// The `resource_limit` result of a call that went over the budget `hit`.
    pub(super) fn budget_failure(&self, tool: &str, hit: &BudgetHit) -> ToolResult {
        refused(hit.key, &self.name);
        tracing::warn!(plugin = %self.name, tool, budget = hit.key, error.type = "resource_limit", "{}", hit.message);
        host_failure(
            ErrorCode::ResourceLimit,
            format!("The call went over a budget: {}.", hit.message),
            &self.name,
            tool,
            json!({ "budget": hit.key, "limit": hit.message }),
        )
    }

    /// Calls `describe` in a fresh instance, at load.
    ///
    /// The first instantiation of a component also builds its memory images:
    /// wasmtime writes each initial heap to a memfd and seals it. Linux refuses
    /// the seal with EBUSY while some CPU still holds a reference to a page just
    /// written, which on a busy machine can outlast the kernel's own wait;
    /// wasmtime reports that as is and builds the image again at the next
    /// instantiation. So a seal refusal is retried a few times here, before it
    /// would fail the load; calls never meet it, as the images exist by then.
    pub(super) async fn describe(&self) -> wasmtime::Result<Described> {
        let mut attempt = 1;
        loop {
            match self.describe_once().await {
                Err(error) if attempt < SEAL_ATTEMPTS && is_seal_refusal(&error) => {
                    tracing::warn!(plugin = %self.name, attempt, error = %format!("{error:#}"), error.type = "memory_image_unsealed", "the kernel refused for now to seal a memory image of the component; instantiating it again");
                    tokio::time::sleep(Duration::from_millis(50 << attempt)).await;
                    attempt += 1;
                }
                outcome => return outcome,
            }
        }
    }

    async fn describe_once(&self) -> wasmtime::Result<Described> {
        let mut sandbox = self.sandbox("describe", CallIo::default())?;
        let store = &mut sandbox.store;
        let run = self.ready.describe(store);
        let outcome = Self::bounded(sandbox.deadline, run).await;
        sandbox.stdout.finish();
        sandbox.stderr.finish();
        outcome.map_err(|error| {
            let stderr = sandbox.stderr.tail();
            let error = match &sandbox.store.data().limiter.exceeded {
                Some(hit) => error.context(format!("{} (policy key `{}`)", hit.message, hit.key)),
                None => error,
            };
            if stderr.is_empty() {
                error
            } else {
                error.context(format!("guest stderr: {stderr}"))
            }
        })
    }

    /// Runs `work` until the deadline, plus a few ticks of grace for the epoch
    /// check to fire first; a guest waiting in a host call is stopped here.
    ///
    /// The timer is armed only once `work` has to wait. Most calls finish within
    /// their first poll, and tokio takes its timer driver's lock to drop a timer,
    /// armed or not (#17).
    async fn bounded<T>(
        deadline: Instant,
        work: impl Future<Output = wasmtime::Result<T>>,
    ) -> wasmtime::Result<T> {
        let grace = deadline + EPOCH_TICK * 5;
        let mut work = std::pin::pin!(work);
        let mut timer: Option<Pin<Box<tokio::time::Sleep>>> = None;
        std::future::poll_fn(|cx| {
            if let Poll::Ready(result) = work.as_mut().poll(cx) {
                return Poll::Ready(result);
            }
            let timer =
                timer.get_or_insert_with(|| Box::pin(tokio::time::sleep_until(grace.into())));
            timer
                .as_mut()
                .poll(cx)
                .map(|()| Err(DeadlineExceeded.into()))
        })
        .await
    }

    fn sandbox(&self, tool: &str, io: CallIo) -> wasmtime::Result<Sandbox> {
        // The names travel with the call's log lines and denials: allocated once,
        // shared by every part of the sandbox that names the call.
        let tool: Arc<str> = tool.into();
        let stdout = GuestOutput::new(&self.name, &tool, "stdout");
        let stderr = GuestOutput::new(&self.name, &tool, "stderr");
        let denials = Denials::default();
        let wasi = self
            .capabilities
            .prepare(&tool, &stderr, &stdout, &denials)?;
        // The configuration bounds `timeout_ms`; never a panic here regardless.
        let deadline = Instant::now()
            .checked_add(self.capabilities.timeout)
            .ok_or_else(|| wasmtime::Error::msg("policy.timeout_ms is out of range"))?;
        let http = self.capabilities.http().prepare(
            self.name.clone(),
            tool.clone(),
            denials.clone(),
            deadline,
        );
        let mut table = ResourceTable::new();
        table.set_max_capacity(self.capabilities.max_resources as usize);
        let state = CallState {
            wasi,
            table,
            limiter: CallLimiter::new(self.capabilities.memory_bytes),
            plugin: self.name.clone(),
            tool,
            config: self.capabilities.config(),
            events: io.events,
            asker: io.asker,
            questions: 0,
            keys: std::collections::HashSet::new(),
            suspended: None,
            log_lines: 0,
            network: self.capabilities.network(),
            log_bytes: 0,
            progress_bytes: 0,
            budgets: self.capabilities.call_budgets,
            budget_hit: None,
            denials: denials.clone(),
            http_ctx: wasmtime_wasi_http::WasiHttpCtx::new(),
            http,
        };
        let mut store = Store::new(&self.engine, state);
        store.limiter(|state| &mut state.limiter);
        // Each epoch tick, a running guest yields its thread to other calls; past
        // the deadline it is stopped.
        store.set_epoch_deadline(1);
        store.epoch_deadline_callback(move |_| {
            if Instant::now() >= deadline {
                Err(DeadlineExceeded.into())
            } else {
                Ok(UpdateDeadline::Yield(1))
            }
        });
        match self.capabilities.fuel {
            Some(fuel) => store.set_fuel(fuel)?,
            // The engine meters fuel when any plugin has a budget; a plugin without
            // one must not start with an empty tank.
            None if self.meters_fuel => store.set_fuel(u64::MAX)?,
            None => {}
        }
        Ok(Sandbox {
            store,
            stdout,
            stderr,
            denials,
            deadline,
        })
    }

    fn finish_fault(
        &self,
        tool: &str,
        error: &wasmtime::Error,
        sandbox: Option<&Sandbox>,
    ) -> ToolResult {
        let denials = sandbox
            .map(|s| s.denials.lock().expect("denials lock").clone())
            .unwrap_or_default();
        let table_full = matches!(
            error.downcast_ref::<ResourceTableError>(),
            Some(ResourceTableError::Full)
        )
        .then(|| {
            BudgetHit::new(
                "max_resources",
                format!(
                    "the call holds {} open resources (files, sockets, streams), its budget",
                    self.capabilities.max_resources
                ),
            )
        });
        let budget = sandbox
            .and_then(|s| s.store.data().limiter.exceeded.clone())
            .or(table_full)
            .or_else(|| sandbox.and_then(|s| s.store.data().first_budget_hit()));
        fault(
            error,
            FaultContext {
                plugin: &self.name,
                tool,
                timeout_ms: self.capabilities.timeout.as_millis(),
                budget: budget.as_ref(),
                denials: &denials,
                stderr: sandbox.map(|s| s.stderr.tail()).unwrap_or_default(),
            },
        )
    }
}

/// An instance of a plugin in use, in the gauge `toolhost_instances_in_use`
/// from its slot until its call's result is converted.
struct InUse<'a>(&'a metrics::Gauge);

impl InUse<'_> {
    fn new(gauge: &metrics::Gauge) -> InUse<'_> {
        gauge.increment(1.0);
        InUse(gauge)
    }
}

impl Drop for InUse<'_> {
    fn drop(&mut self) {
        self.0.decrement(1.0);
    }
}

/// A `tool_error` a guest returned after the policy denied it something (a
/// request, an address, a name) becomes `permission_denied`, naming what was
/// denied: a tool that cannot tell a refusal from any other failure (a
/// JavaScript `fetch` rejects with one generic error) still reports the cause.
/// A failure with a code of the tool's own choosing, and a success, stay as
/// they are.
fn blame_denials(result: &mut ToolResult, denials: &[String]) {
    let Some(error) = result.error_mut() else {
        return;
    };
    if denials.is_empty() || error.code != ErrorCode::ToolError {
        return;
    }
    error.code = ErrorCode::PermissionDenied;
    error.message = format!(
        "{} (after the host's policy denied: {})",
        error.message,
        denials.join("; ")
    );
    match &mut error.details {
        Some(serde_json::Value::Object(details)) => {
            details.insert("denied".into(), json!(denials));
        }
        details @ None => *details = Some(json!({ "denied": denials })),
        Some(_) => {}
    }
}

/// How long an operation may take at most, for tests and callers that need a bound.
pub fn call_budget(capabilities: &Capabilities) -> Duration {
    capabilities.timeout + EPOCH_TICK * 5
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::is_seal_refusal;

    #[test]
    fn a_seal_refusal_is_recognised_under_context_and_nothing_else_is() {
        let busy = std::io::Error::from_raw_os_error(libc::EBUSY);
        let refused = wasmtime::Error::from(memfd::Error::AddSeals(busy))
            .context("instantiating the component")
            .context("describe() failed");
        assert!(is_seal_refusal(&refused));

        let unsupported = std::io::Error::from_raw_os_error(libc::ENOSYS);
        let not_created = wasmtime::Error::from(memfd::Error::Create(unsupported));
        assert!(!is_seal_refusal(&not_created));
        assert!(!is_seal_refusal(&wasmtime::format_err!(
            "wasm trap: unreachable"
        )));
    }
}
