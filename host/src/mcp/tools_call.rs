//! `tools/call` as the handler serves it, in the order of one call: who calls
//! and whether it is admitted, the tool (one the caller may not see answers as
//! one that does not exist), the client capabilities it needs, how its
//! questions reach the caller ([`super::asking`]), the call in the sandbox with
//! its progress and log lines on the caller's stream, the mapper's rendering,
//! and what the audit log and the metrics learn of it ([`Facts`]).

use std::sync::Arc;
use std::time::Instant;

use rmcp::model::{CallToolRequestParams, CallToolResponse};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer};
use serde_json::{Value, json};
use tracing::Instrument as _;

use super::asking::Subject;
use super::call_stream::CallOutlet;
use super::carried::TextSlot;
use super::drain::CallGuard;
use super::events;
use super::handler::{SERVER, Session, Transport, output_mode, parts, revision};
use super::limits;
use super::prometheus::UNKNOWN_TOOL;
use super::stdio;
use super::tasks::{self, edge::TaskAsked};
use super::trace::RequestTrace;
use super::{TokenId, audit};
use crate::catalog::{self, Caller};
use crate::render::{RenderContext, Rendering, Target};
use crate::runtime;

impl Facts {
    /// Nothing learnt yet: a request refused before anything is known is
    /// `invalid_params`.
    pub(super) fn new() -> Facts {
        Facts {
            outcome: "invalid_params",
            caller: None,
            catalog: None,
            call_id: None,
            arguments: None,
        }
    }
}

/// A call the server cannot take now (`-32000`), saying why.
pub(super) fn unavailable(why: &str) -> ErrorData {
    ErrorData::new(
        rmcp::model::ErrorCode(-32000),
        format!("Service unavailable: {why}"),
        None,
    )
}

/// The answer to a call of a tool the catalog does not have, or one the caller
/// may not see: the same, so the two cannot be told apart.
fn unknown_tool(name: &str) -> ErrorData {
    ErrorData::invalid_params(
        format!("Unknown tool: {name}"),
        Some(json!({ "name": name })),
    )
}

impl Session {
    /// A stdio call: refused once a drain has started, or over a rate limit
    /// (`-32029`, the wait in `data.retryAfterMs`).
    fn admit_stdio(
        &self,
        caller: &Caller,
        tool: &str,
        facts: &mut Facts,
    ) -> Result<CallGuard, ErrorData> {
        let Some(guard) = self.server.drain.admit() else {
            tracing::info!(error.type = "shutting_down", tool, "call refused: the server is shutting down");
            facts.outcome = "shutting_down";
            return Err(unavailable("the server is shutting down"));
        };
        let principal = caller.principal.as_deref();
        if let Err(refusal) = self.server.limiter.check(principal, tool) {
            limits::log_refusal(&self.server, principal, tool, &refusal);
            facts.outcome = "rate_limited";
            return Err(ErrorData::new(
                rmcp::model::ErrorCode(limits::RATE_LIMITED),
                refusal.message(),
                Some(refusal.data()),
            ));
        }
        Ok(guard)
    }
}

/// A tool that needs client capabilities refuses a client that did not declare
/// them (in the request's `_meta` on 2026-07-28, at `initialize` before) with
/// `-32021`, naming what is missing.
fn check_client_capabilities(
    required: &[String],
    ctx: &RequestContext<RoleServer>,
) -> Result<(), ErrorData> {
    if required.is_empty() {
        return Ok(());
    }
    let declared = ctx
        .client_capabilities()
        .and_then(|caps| serde_json::to_value(caps).ok())
        .unwrap_or_default();
    let missing: serde_json::Map<String, Value> = required
        .iter()
        .filter(|cap| declared.get(cap.as_str()).is_none_or(Value::is_null))
        .map(|cap| (cap.clone(), json!({})))
        .collect();
    if missing.is_empty() {
        return Ok(());
    }
    let required = serde_json::from_value(Value::Object(missing))
        .map_err(|e| ErrorData::internal_error(format!("unknown client capability: {e}"), None))?;
    Err(ErrorData::missing_required_client_capability(required))
}

/// The edge that sends a result's text in place of a placeholder.
pub(super) enum Carrier {
    Stdio,
    Http(TextSlot),
}

/// What the audit log and the metrics learn of a `tools/call` as it is served.
pub(super) struct Facts {
    /// `"ok"`, the result's error code, or the refusal before the call (a
    /// closed set: see `docs/operating.md`, "Metrics").
    outcome: &'static str,
    caller: Option<Caller>,
    /// The catalog that has the tool; `None` when no tool was found.
    catalog: Option<Arc<crate::catalog::Catalog>>,
    call_id: Option<String>,
    arguments: Option<Value>,
}

impl Session {
    /// `tools/call`, filling in `facts` as it goes.
    pub(super) async fn serve_call(
        &self,
        request: CallToolRequestParams,
        context: &RequestContext<RoleServer>,
        (name, asked): (&str, Option<TaskAsked>),
        request_id: &str,
        facts: &mut Facts,
    ) -> Result<CallToolResponse, ErrorData> {
        let revision = revision(context);
        let mode = output_mode(context, self.server.default_mode)?;
        facts.outcome = "unauthorized";
        let caller = self.caller(context)?;
        facts.caller = Some(caller.clone());
        // On HTTP the calls guard admitted the call and spent its buckets; on
        // stdio it happens here, once, before the tool is even looked up (as on
        // HTTP, where the guard cannot look it up).
        let _in_flight = match self.transport {
            Transport::Stdio => Some(self.admit_stdio(&caller, name, facts)?),
            Transport::Http => None,
        };
        let catalog = self.server.catalog();
        let Some(tool) = catalog.tool(name).filter(|tool| tool.visible_to(&caller)) else {
            facts.outcome = "unknown_tool";
            if self.server.audit.is_on() {
                facts.arguments = request.arguments.map(Value::Object);
            }
            return Err(unknown_tool(name));
        };
        facts.catalog = Some(catalog.clone());
        facts.outcome = "missing_client_capability";
        check_client_capabilities(&tool.descriptor.required_client_capabilities, context)?;
        // Decoded only for a tool that may run as a task: every other call
        // goes without.
        let capabilities = tool
            .descriptor
            .task_support
            .allows_tasks()
            .then(|| context.client_capabilities())
            .flatten();
        let as_task = tasks::runs_as_task(
            tool.descriptor.task_support,
            revision,
            capabilities.as_ref(),
            asked.is_some(),
        )?;
        // A stateless caller's retry replays its answers; its state is checked
        // before the tool runs.
        let principal = caller.principal.as_deref();
        let subject = Subject {
            principal,
            method: "tools/call",
            name,
            arguments: request.arguments.as_ref(),
        };
        facts.outcome = "invalid_params";
        let asking = match asked {
            // A 2025-11-25 task cannot ask on a request that has been
            // answered: its questions wait for `tasks/result`.
            Some(_) => self.replaying(&subject, None, None, capabilities.clone())?,
            None => self.asking(
                context,
                &subject,
                request.request_state.as_deref(),
                request.input_responses.as_ref(),
            )?,
        };
        let arguments = request.arguments.map(Value::Object);

        let progress_token = context.meta.get_progress_token();
        let log_level = if revision.is_stateless() {
            context.meta.log_level()
        } else {
            *self.log_level.lock().expect("level lock")
        };
        let outlet = match parts(context).and_then(|p| p.extensions.get::<CallOutlet>()) {
            Some(outlet) => events::Outlet::Stream(outlet.clone()),
            None => events::Outlet::Peer(context.peer.clone()),
        };
        let (events, forward) = events::forward(outlet, progress_token, log_level).unzip();
        let call_id = catalog::new_call_id();
        facts.call_id = Some(call_id.clone());
        let io = asking.io(events);
        let called = if as_task {
            // A task outlives its request: the call owns what it uses.
            let call = {
                let (catalog, name, caller) = (catalog.clone(), name.to_owned(), caller.clone());
                let (arguments, request_id) = (arguments.clone(), request_id.to_owned());
                async move {
                    let tool = catalog.tool(&name).expect("the catalog the tool came from");
                    catalog
                        .call_with(call_id, tool, arguments.as_ref(), &caller, &request_id, io)
                        .await
                }
            };
            let start = tasks::Start {
                caller: caller.clone(),
                tool: name.to_owned(),
                arguments: arguments.as_ref().and_then(Value::as_object).cloned(),
                mode,
                capabilities,
                request_id: request_id.to_owned(),
                asking: asking.clone(),
                revision,
            };
            if asked.is_some() {
                let created = self.task_now(start, call).await;
                facts.outcome = "task";
                facts.arguments = arguments;
                return created
                    .map(CallToolResponse::Task)
                    .inspect_err(|_| facts.outcome = "internal_error");
            }
            let early = self.call_or_task(start, call, context.ct.clone()).await;
            match early.inspect_err(|_| facts.outcome = "internal_error")? {
                tasks::Early::Done(called) => called,
                tasks::Early::Task(created) => {
                    facts.outcome = "task";
                    facts.arguments = arguments;
                    return Ok(CallToolResponse::Task(*created));
                }
            }
        } else {
            let call =
                catalog.call_with(call_id, tool, arguments.as_ref(), &caller, request_id, io);
            tokio::select! {
                called = call => called,
                () = context.ct.cancelled() => {
                    // Dropping the call drops its store: the instance ends here.
                    tracing::info!(tool = %name, "call cancelled by the client");
                    facts.outcome = "cancelled";
                    facts.arguments = arguments;
                    return Err(ErrorData::internal_error("the request was cancelled", None));
                }
            }
        };
        if let Some(forward) = forward {
            let _ = forward.await;
        }
        let result = match called {
            runtime::Called::Finished(result) | runtime::Called::Failed(result) => result,
            runtime::Called::Asking(questions) if asking.is_stateless() => {
                facts.outcome = "input_required";
                let subject = Subject {
                    principal,
                    method: "tools/call",
                    name,
                    arguments: arguments.as_ref().and_then(Value::as_object),
                };
                let required = self.input_required(&asking, questions, &subject);
                facts.arguments = arguments;
                return required.map(Into::into).inspect_err(|_| {
                    facts.outcome = "internal_error";
                });
            }
            asking @ runtime::Called::Asking(_) => asking.into_result(),
        };
        facts.arguments = arguments;
        facts.outcome = result.error().map_or("ok", |error| error.code.as_str());

        let principal = caller.principal.as_deref();
        let schema = tool.descriptor.output_schema.as_ref();
        // The answer to this `tools/call` goes out as the text the mapper
        // writes on stdio (see `stdio`) and over HTTP where the calls guard
        // opened a slot for it (see `carried`); a 2025-11-25 task's (`asked`)
        // is wrapped by the handler first, so it stays typed.
        let carrier = match self.transport {
            _ if asked.is_some() => None,
            Transport::Stdio => Some(Carrier::Stdio),
            Transport::Http => parts(context)
                .and_then(|p| p.extensions.get::<TextSlot>())
                .map(|slot| Carrier::Http(slot.clone())),
        };
        self.render_call(
            name,
            schema,
            result,
            (revision, mode, carrier),
            request_id,
            principal,
        )
        .await
        .map(Into::into)
        .inspect_err(|_| facts.outcome = "internal_error")
    }

    /// The mapper's rendering of the result of a call of the tool `name`
    /// (whose output schema is `schema`) for an MCP revision in a mode: with a
    /// `carrier`, the JSON text in a placeholder that edge replaces with it
    /// ([`stdio::carrying`], [`TextSlot::carry`]); else rmcp's typed result.
    ///
    /// # Errors
    ///
    /// An internal error when the mapper rendered no MCP result.
    pub(super) async fn render_call(
        &self,
        name: &str,
        schema: Option<&Value>,
        result: crate::result::ToolResult,
        (revision, mode, carrier): (
            crate::render::Revision,
            crate::render::OutputMode,
            Option<Carrier>,
        ),
        request_id: &str,
        principal: Option<&str>,
    ) -> Result<rmcp::model::CallToolResult, ErrorData> {
        let mut render = RenderContext::new(name, jiff::Timestamp::now());
        render.output_schema = schema;
        render.request_id = request_id;
        render.principal = principal;
        render.server = Some(SERVER);
        render.mcp_as_text = carrier.is_some();
        let target = Target::Mcp { revision, mode };
        let rendered = self
            .server
            .mapper
            .render_owned(result, target, &render)
            .instrument(tracing::debug_span!("render", toolhost.target = %target))
            .await;
        let span = tracing::Span::current();
        if !span.is_disabled() {
            // Counted only for a span that is kept: the mapper itself does not
            // measure a rendering well within the limit.
            span.record("toolhost.rendered_bytes", rendered.size() as i64);
            span.record("toolhost.offloaded", rendered.offloaded);
        }
        match (rendered.rendering, carrier) {
            (Rendering::Mcp(wire), None) => Ok(*wire),
            (Rendering::Json(text), Some(Carrier::Stdio)) => Ok(stdio::carrying(text)),
            (Rendering::Json(text), Some(Carrier::Http(slot))) => {
                slot.carry(text).ok_or_else(|| {
                    ErrorData::internal_error("one HTTP request carried two results", None)
                })
            }
            _ => Err(ErrorData::internal_error(
                "the mapper rendered no MCP result for an MCP target",
                None,
            )),
        }
    }

    /// Records a served call: its line in the audit log, its count and duration
    /// in the metrics.
    pub(super) fn observe(
        &self,
        context: &RequestContext<RoleServer>,
        name: &str,
        request_id: &str,
        started: Instant,
        facts: Facts,
        trace: &RequestTrace,
    ) {
        let elapsed = started.elapsed();
        let tool = facts
            .catalog
            .as_ref()
            .and_then(|catalog| catalog.tool(name));
        let label = tool
            .map_or(UNKNOWN_TOOL, |tool| tool.name.as_str())
            .to_owned();
        if let Some(tool) = tool {
            trace.span.record("gen_ai.tool.name", tool.name.as_str());
            trace.span.record("toolhost.plugin", tool.provider().name());
        }
        trace.span.record("toolhost.outcome", facts.outcome);
        if facts.outcome != "ok" {
            trace.span.record("error.type", facts.outcome);
            trace.span.record("otel.status_code", "ERROR");
        }
        metrics::counter!("toolhost_calls_total", "tool" => label.clone(), "outcome" => facts.outcome).increment(1);
        metrics::histogram!("toolhost_call_duration_seconds", "tool" => label)
            .record(elapsed.as_secs_f64());
        let audit = &self.server.audit;
        if !audit.is_on() {
            return;
        }
        let token_id = parts(context).and_then(|p| p.extensions.get::<TokenId>());
        audit.record(&audit::Entry {
            transport: match self.transport {
                Transport::Stdio => "stdio",
                Transport::Http => "http",
            },
            principal: facts.caller.as_ref().and_then(|c| c.principal.as_deref()),
            token_id: token_id.map(|id| id.0.as_str()),
            tool: name,
            plugin: tool.map(|tool| tool.provider().name()),
            digest: tool.and_then(|tool| tool.provider().digest()),
            outcome: facts.outcome,
            duration_ms: elapsed.as_secs_f64() * 1000.0,
            arguments: facts.arguments.as_ref().and_then(Value::as_object),
            request_id,
            call_id: facts.call_id.as_deref(),
            trace_id: trace.trace_id.as_deref(),
        });
    }
}
