//! The MCP request handler: every method rmcp routes, for both eras. It serves
//! `tools/list`, `logging/setLevel`, `server/discover` and reads of stored
//! results itself, and hands `tools/call` to [`super::tools_call`], prompts and
//! resources to [`super::prompts`] and [`super::resources`].
//!
//! The negotiated revision of each request (rmcp tells: the request's `_meta` on
//! 2026-07-28, the `initialize` result before) and its output mode pick the
//! mapper's target; the mapper alone shapes the `CallToolResult`.
//!
//! Who calls is explicit: a stdio session is the local operator; an HTTP request
//! carries the [`Caller`] the HTTP guard put in its extensions (a token's
//! principal, or the open caller of a loopback server without tokens), and one
//! without is refused. `tools/list` shows a caller only the tools whose privileges
//! it holds, and a call to any other answers exactly as for a tool that does not
//! exist.

#![allow(deprecated)] // rmcp marks the logging types deprecated (SEP-2577); MCP still has them.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use rmcp::model::SubscriptionFilter;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, CompleteRequestParams,
    CompleteResult, CustomRequest, CustomResult, DiscoverResult, GetPromptRequestParams,
    GetPromptResponse, GetTaskParams, GetTaskResult, Implementation, InitializeRequestParams,
    InitializeResult, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, LoggingLevel, PaginatedRequestParams, ReadResourceRequestParams,
    ReadResourceResponse, ServerCapabilities, ServerConfig, SetLevelRequestParams,
    SubscribeRequestParams, UnsubscribeRequestParams, UpdateTaskParams,
};
use rmcp::service::{NotificationContext, RequestContext, SubscriptionContext};
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Value, json};

use super::tasks::{self, edge::TaskAsked};
use super::tools_call::Facts;
use super::trace::{self, HttpSpan, RequestTrace};
use super::{Listener, Server};
use crate::catalog::Caller;
use crate::render::{OutputMode, RenderContext, Revision, ServerInfo, format, mcp};
use crate::store::StoreError;
use tracing::Instrument as _;

/// The `_meta` key (and the HTTP header) a caller uses to pick the output mode
/// of one request: `"compat"` or `"spec"`.
pub const OUTPUT_MODE_KEY: &str = "dev.toolhost/outputMode";
pub const OUTPUT_MODE_HEADER: &str = "x-toolhost-output-mode";

/// This server, as 2026-07-28 results name it in their `_meta`.
pub(super) const SERVER: ServerInfo<'static> = ServerInfo {
    name: "toolhost",
    version: env!("CARGO_PKG_VERSION"),
};

/// One connection's handler (a stdio process or an HTTP session); the server
/// state behind it is shared.
#[derive(Clone)]
pub struct Session {
    pub(super) server: Arc<Server>,
    /// Where requests come from, and so who calls.
    pub(super) transport: Transport,
    /// The level `logging/setLevel` chose; no guest log lines are sent before.
    pub(super) log_level: Arc<Mutex<Option<LoggingLevel>>>,
    /// Cancelled when the client's input ends (stdio), so open subscriptions end
    /// with it instead of holding the process up.
    input_closed: tokio_util::sync::CancellationToken,
    /// The `subscriptions/listen` requests rmcp is acknowledging, on stdio
    /// (HTTP has none): each is settled as its `listen` begins, so the end of
    /// the input can wait for it.
    listens: Option<Arc<super::input_end::Listens>>,
    /// The URIs this session subscribed to (`resources/subscribe`).
    pub(super) subscriptions: Arc<Mutex<std::collections::BTreeSet<String>>>,
}

/// Where a session's requests come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Transport {
    /// stdio: the local operator, with every privilege.
    Stdio,
    /// HTTP: each request carries the caller the HTTP guard authenticated.
    Http,
}

impl Session {
    /// An HTTP session: every request must carry its [`Caller`].
    pub fn new(server: Arc<Server>) -> Self {
        Session {
            server,
            transport: Transport::Http,
            log_level: Arc::new(Mutex::new(None)),
            input_closed: tokio_util::sync::CancellationToken::new(),
            listens: None,
            subscriptions: Arc::default(),
        }
    }

    /// The stdio session of the local operator, whose subscriptions end when
    /// `input_closed` is cancelled, and settle in `listens` as they begin.
    pub(super) fn with_input(
        server: Arc<Server>,
        input_closed: tokio_util::sync::CancellationToken,
        listens: Arc<super::input_end::Listens>,
    ) -> Self {
        Session {
            input_closed,
            listens: Some(listens),
            transport: Transport::Stdio,
            ..Session::new(server)
        }
    }
}

pub(super) fn revision(ctx: &RequestContext<RoleServer>) -> Revision {
    ctx.protocol_version()
        .and_then(|v| v.to_string().parse().ok())
        // Streamable HTTP without a version header means 2025-03-26.
        .unwrap_or(Revision::V2025_03_26)
}

pub(super) fn parts(ctx: &RequestContext<RoleServer>) -> Option<&axum::http::request::Parts> {
    ctx.extensions.get::<axum::http::request::Parts>()
}

/// Who sends a request: the local operator over stdio; over HTTP, the caller the
/// HTTP guard put in the request's extensions. An HTTP request without one is
/// refused, never taken for the local operator.
pub(super) fn caller_of(
    transport: Transport,
    parts: Option<&axum::http::request::Parts>,
) -> Result<Caller, ErrorData> {
    match transport {
        Transport::Stdio => Ok(Caller::local()),
        Transport::Http => parts
            .and_then(|p| p.extensions.get::<Caller>().cloned())
            .ok_or_else(|| {
                tracing::warn!(error.type = "unauthorized", "an HTTP request reached the handler without a caller; refused");
                ErrorData::invalid_request("the request carries no authenticated caller", None)
            }),
    }
}

impl Session {
    pub(super) fn caller(&self, ctx: &RequestContext<RoleServer>) -> Result<Caller, ErrorData> {
        caller_of(self.transport, parts(ctx))
    }
}

pub(super) fn output_mode(
    ctx: &RequestContext<RoleServer>,
    default: OutputMode,
) -> Result<OutputMode, ErrorData> {
    let from_meta = ctx
        .meta
        .get(OUTPUT_MODE_KEY)
        .and_then(Value::as_str)
        .map(str::to_owned);
    let from_header = parts(ctx)
        .and_then(|p| p.headers.get(OUTPUT_MODE_HEADER))
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    match from_meta.or(from_header) {
        Some(mode) => mode.parse().map_err(|e: String| {
            ErrorData::invalid_params(e, Some(json!({ "key": OUTPUT_MODE_KEY })))
        }),
        None => Ok(default),
    }
}

impl Session {
    /// `resources/read` of a stored result: the caller's own, by its link.
    async fn read_stored(
        &self,
        uri: String,
        context: &RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let caller = self.caller(context)?;

        let not_found =
            || ErrorData::resource_not_found("Resource not found", Some(json!({ "uri": uri })));
        let unreadable = |e: StoreError| {
            metrics::counter!("toolhost_store_errors_total", "operation" => "get").increment(1);
            tracing::error!(%e, error.type = "store_failed", "reading the result store failed");
            ErrorData::internal_error("the result store could not be read", None)
        };
        let stored = self
            .server
            .store
            .get(&uri, caller.principal.as_deref())
            .await
            .map_err(unreadable)?;
        let Some(row) = stored else {
            return Err(not_found());
        };
        // A row this toolhost cannot decode counts as a failure of the store.
        let result = format::decode_stored(row.format, &row.body)
            .map_err(|e| unreadable(StoreError(e.to_string())))?;
        let ctx = RenderContext::new("resources/read", jiff::Timestamp::now());
        let mut read = mcp::stored_contents(&uri, &result, &ctx);
        read.meta = mcp::server_meta(revision(context), Some(SERVER));
        Ok(read.into())
    }
}

/// The span of the request `context` for `method`, continuing the caller's
/// trace (see [`trace`]).
fn request_trace(
    method: &'static str,
    target: Option<&str>,
    request_id: &str,
    context: &RequestContext<RoleServer>,
) -> RequestTrace {
    let http = parts(context).and_then(|p| p.extensions.get::<HttpSpan>());
    trace::request_span(method, target, request_id, &context.meta, http)
}

impl Session {
    /// `tools/call`, traced and observed; `asked` is the `task` of a
    /// 2025-11-25 call that asks to run as one.
    pub(super) async fn call(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
        asked: Option<TaskAsked>,
    ) -> Result<CallToolResponse, ErrorData> {
        let started = Instant::now();
        let name = request.name.to_string();
        let request_id = context.id.to_string();
        let mut facts = Facts::new();
        let trace = request_trace("tools/call", Some(&name), &request_id, &context);
        let answer = self
            .serve_call(request, &context, (&name, asked), &request_id, &mut facts)
            .instrument(trace.span.clone())
            .await;
        self.observe(&context, &name, &request_id, started, facts, &trace);
        answer
    }
}

impl ServerHandler for Session {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .enable_prompts()
                .enable_prompts_list_changed()
                .enable_resources()
                .enable_resources_list_changed()
                .enable_resources_subscribe()
                .enable_completions()
                .enable_logging()
                .enable_tasks()
                .build(),
        )
        .with_server_info(Implementation::new(SERVER.name, SERVER.version))
        .with_instructions("Tools run as sandboxed WebAssembly components. Large results come back as links; read them with resources/read.")
    }

    async fn initialize(
        &self,
        request: InitializeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<InitializeResult, ErrorData> {
        context.peer.set_peer_info(request.clone());
        {
            // Sessions that ended leave the list as new ones arrive, so it holds
            // the live sessions only, with or without catalog changes.
            let mut peers = self.server.peers.lock().expect("peers lock");
            peers.retain(|listener| !listener.peer.is_transport_closed());
            peers.push(Listener {
                peer: context.peer.clone(),
                resources: self.subscriptions.clone(),
            });
        }
        let mut result = self.negotiate_initialize(&request)?;
        // Tasks are the 2026-07-28 extension's: a session of the handshake era
        // is not offered them (it creates none, see `tasks::runs_as_task`).
        if let Some(extensions) = result.capabilities.extensions.as_mut() {
            extensions.remove(rmcp::model::TASKS_EXTENSION_ID);
            if extensions.is_empty() {
                result.capabilities.extensions = None;
            }
        }
        Ok(result)
    }

    async fn on_initialized(&self, _context: NotificationContext<RoleServer>) {}

    async fn discover(
        &self,
        _context: RequestContext<RoleServer>,
    ) -> Result<DiscoverResult, ErrorData> {
        Ok(DiscoverResult::from_server_info(
            self.supported_protocol_versions().into_owned(),
            self.get_info(),
        ))
    }

    async fn set_level(
        &self,
        request: SetLevelRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if revision(&context).is_stateless() {
            // 2026-07-28 has no setLevel: the level travels in each request's `_meta`.
            return Err(ErrorData::method_not_found::<
                rmcp::model::SetLevelRequestMethod,
            >());
        }
        *self.log_level.lock().expect("level lock") = Some(request.level);
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let revision = revision(&context);
        let caller = self.caller(&context)?;
        let served = self.server.served();
        let listed = served
            .listings
            .for_revision(revision)
            .map_err(|e| ErrorData::internal_error(e.to_owned(), None))?;
        let tools = served
            .catalog
            .tools()
            .iter()
            .zip(listed)
            .filter(|(tool, _)| tool.visible_to(&caller))
            .map(|(_, listed)| listed.clone())
            .collect();
        Ok(ListToolsResult::with_all_items(tools))
    }

    /// rmcp validates a 2026-07-28 request's `Mcp-Param-*` headers against this
    /// schema, before the handler knows the caller: only tools every caller may
    /// see are offered, so a tool hidden from a caller answers as an unknown one.
    fn get_tool(&self, name: &str) -> Option<rmcp::model::Tool> {
        let served = self.server.served();
        let index = served.catalog.position(name)?;
        if !served.catalog.tools()[index].privileges().is_empty() {
            return None;
        }
        let listed = served.listings.for_revision(Revision::LATEST).ok()?;
        listed.get(index).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        self.call(request, context, None).await
    }

    async fn list_prompts(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListPromptsResult, ErrorData> {
        self.list_prompts_for(&context)
    }

    async fn get_prompt(
        &self,
        request: GetPromptRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetPromptResponse, ErrorData> {
        let trace = request_trace(
            "prompts/get",
            Some(&request.name),
            &context.id.to_string(),
            &context,
        );
        self.get_prompt_for(request, &context)
            .instrument(trace.span)
            .await
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri.to_string();
        let trace = request_trace("resources/read", None, &context.id.to_string(), &context);
        let caller = self.caller(&context)?;
        // Stored results live under the host's own scheme, which no plugin may use.
        if self.server.catalog().offers_resource(&uri, &caller) {
            return self
                .read_offered(&request, &caller, &context)
                .instrument(trace.span)
                .await;
        }
        self.read_stored(uri, &context).instrument(trace.span).await
    }

    async fn subscribe(
        &self,
        request: SubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.subscribe_for(request.uri, &context)
    }

    async fn unsubscribe(
        &self,
        request: UnsubscribeRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        self.unsubscribe_for(&request.uri, &context)
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        self.list_resources_for(&context)
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        self.list_templates_for(&context)
    }

    async fn complete(
        &self,
        request: CompleteRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CompleteResult, ErrorData> {
        let trace = request_trace(
            "completion/complete",
            None,
            &context.id.to_string(),
            &context,
        );
        self.complete_for(request, &context)
            .instrument(trace.span)
            .await
    }
    fn accepted_subscription_filter(
        &self,
        requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        Some(requested.clone())
    }

    /// `subscriptions/listen` (2026-07-28): holds the stream open and sends
    /// `notifications/tools/list_changed` whenever the catalog changes (and
    /// `prompts/list_changed` when its prompts do).
    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        if let Some(listens) = &self.listens {
            listens.settled(&context.request_context().id);
        }
        let mut changes = self.server.changes.subscribe();
        loop {
            tokio::select! {
                () = context.cancelled() => return Ok(()),
                () = self.input_closed.cancelled() => return Ok(()),
                change = changes.recv() => {
                    let Ok(change) = change else { return Ok(()) };
                    let _ = context.sink().notify_tool_list_changed().await;
                    if change.prompts {
                        let _ = context.sink().notify_prompt_list_changed().await;
                    }
                    if change.resources {
                        let _ = context.sink().notify_resource_list_changed().await;
                    }
                }
            }
        }
    }

    async fn get_task(
        &self,
        request: GetTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let caller = self.caller(&context)?;
        self.task_status(&request.task_id, &caller).await
    }

    async fn update_task(
        &self,
        request: UpdateTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let caller = self.caller(&context)?;
        let request_id = context.id.to_string();
        self.answer_task(
            &request.task_id,
            &request.input_responses,
            &caller,
            &request_id,
        )
        .await
    }

    async fn cancel_task(
        &self,
        request: CancelTaskParams,
        context: RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let caller = self.caller(&context)?;
        self.cancel(&request.task_id, &caller).await.map(|_| ())
    }

    async fn on_custom_request(
        &self,
        request: CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Result<CustomResult, ErrorData> {
        if tasks::edge::applies_to(revision(&context))
            && let Some(answer) = self.handshake_task_request(&request, context.clone()).await
        {
            return answer;
        }
        // The handshake methods do not exist on 2026-07-28.
        const HANDSHAKE_ONLY: [&str; 5] = [
            "initialize",
            "logging/setLevel",
            "ping",
            "resources/subscribe",
            "resources/unsubscribe",
        ];
        if revision(&context).is_stateless() && HANDSHAKE_ONLY.contains(&request.method.as_str()) {
            return Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                format!(
                    "Method not found: {} is not part of 2026-07-28",
                    request.method
                ),
                None,
            ));
        }
        // A known method lands here when its params do not parse.
        const KNOWN: [&str; 13] = [
            "resources/subscribe",
            "resources/unsubscribe",
            "tools/call",
            "tools/list",
            "prompts/list",
            "prompts/get",
            "resources/read",
            "resources/list",
            "resources/templates/list",
            "completion/complete",
            "initialize",
            "logging/setLevel",
            "server/discover",
        ];
        if KNOWN.contains(&request.method.as_str()) {
            return Err(ErrorData::invalid_params(
                format!("invalid params for {}", request.method),
                None,
            ));
        }
        Err(ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {}", request.method),
            None,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_http_request_without_a_caller_is_refused_never_local() {
        let (bare, ()) = axum::http::Request::new(()).into_parts();
        assert!(caller_of(Transport::Http, Some(&bare)).is_err());
        assert!(caller_of(Transport::Http, None).is_err());

        let mut request = axum::http::Request::new(());
        let alice = Caller {
            principal: Some("alice".into()),
            privileges: Some(Default::default()),
        };
        request.extensions_mut().insert(alice);
        let (with_caller, ()) = request.into_parts();
        let caller = caller_of(Transport::Http, Some(&with_caller)).unwrap();
        assert_eq!(caller.principal.as_deref(), Some("alice"));

        let local = caller_of(Transport::Stdio, None).unwrap();
        assert!(local.principal.is_none() && local.privileges.is_none());
    }
}
