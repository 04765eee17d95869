//! 2025-11-25's tasks at the transport's edge: what rmcp 3.11's types cannot
//! carry of them, carried around those types.
//!
//! rmcp models tasks as the 2026-07-28 extension only. Its `tools/call`
//! params have no `task` member, its server capabilities no `tasks`, its tools
//! no `execution`, and it answers `tasks/get` and `tasks/cancel` only for a
//! caller that declared the extension. So, for a session that negotiated
//! 2025-11-25:
//! - the `task` a `tools/call` asks for is read from the message as it came
//!   in, before rmcp parses it: on stdio by the [`Tap`] on the input, on HTTP by
//!   the calls guard, which parses each POST body for its calls anyway
//!   ([`Augmented`]);
//! - [`Edge`], around the session's transport, hands such a `tools/call`, and
//!   every `tasks/get` and `tasks/cancel`, to the handler as a custom request
//!   (`tasks/result` arrives as one already), marked with what it asked for;
//! - [`Edge`] adds the `tasks` capability to the `initialize` result (with
//!   `list` for a caller [`lists_tasks`] admits) and each task-supporting
//!   tool's `execution` to a `tools/list` result as they go out.
//!
//! Other revisions pass through untouched, and so does everything else.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use futures_core::Stream;
use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, CustomRequest, CustomResult, JsonRpcMessage,
    JsonRpcResponse, RequestId, ServerJsonRpcMessage, ServerResult,
};
use rmcp::transport::Transport as RmcpTransport;
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::session::{
    EventStore, RestoreOutcome, ServerSseMessage, SessionId, SessionManager,
};
use serde::Deserialize;

use crate::catalog::Caller;
use crate::mcp::Server;
use crate::mcp::handler::{Transport, caller_of};
use crate::render::Revision;

/// What a `tools/call` asked for in its `task` member (`TaskMetadata`): a
/// time to keep the task, which the server may shorten.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
pub struct TaskAsked {
    /// Milliseconds.
    #[serde(default)]
    pub ttl: Option<u64>,
}

/// The task-augmented `tools/call`s of one HTTP request, by JSON-RPC id: put in
/// the request's extensions by the calls guard.
#[derive(Debug, Clone, Default)]
pub struct Augmented(pub Vec<(RequestId, TaskAsked)>);

/// How many task-augmented calls the [`Tap`] remembers before the handler
/// takes them: a client that sends more without waiting loses the oldest
/// ones' `task` (they run as plain calls).
const REMEMBERED: usize = 64;

/// The longest line the [`Tap`] reads: rmcp's own limit on a stdio message.
const MAX_LINE: usize = 16 * 1024 * 1024;

/// The parts of a JSON-RPC message that say it is a task-augmented call.
#[derive(Deserialize)]
struct Probe {
    id: RequestId,
    method: String,
    params: ProbeParams,
}

#[derive(Deserialize)]
struct ProbeParams {
    task: Option<TaskAsked>,
}

/// The id and `task` of `message` when it is a `tools/call` that asks to run
/// as a task. Only a message that mentions `"task"` is parsed.
fn augmented_call(message: &[u8]) -> Option<(RequestId, TaskAsked)> {
    memchr::memmem::find(message, b"\"task\"")?;
    let probe: Probe = serde_json::from_slice(message).ok()?;
    if probe.method != "tools/call" {
        return None;
    }
    Some((probe.id, probe.params.task?))
}

/// The task-augmented calls a [`Tap`] saw, until the [`Edge`] takes them.
#[derive(Debug, Default)]
pub struct Seen(Mutex<VecDeque<(RequestId, TaskAsked)>>);

impl Seen {
    fn put(&self, id: RequestId, asked: TaskAsked) {
        let mut seen = self.0.lock().expect("seen lock");
        if seen.len() == REMEMBERED {
            seen.pop_front();
        }
        seen.push_back((id, asked));
    }

    fn take(&self, id: &RequestId) -> Option<TaskAsked> {
        let mut seen = self.0.lock().expect("seen lock");
        let at = seen.iter().position(|(seen, _)| seen == id)?;
        seen.remove(at).map(|(_, asked)| asked)
    }
}

/// A stdio client's input, passed on unchanged to rmcp, whose lines that are
/// task-augmented `tools/call`s are noted in [`Seen`].
pub struct Tap<R> {
    inner: R,
    line: Vec<u8>,
    /// The current line went past [`MAX_LINE`]: rmcp drops it, so does the tap.
    skipping: bool,
    seen: Arc<Seen>,
}

impl<R> Tap<R> {
    /// Notes what `inner` carries in `seen`.
    pub fn new(inner: R, seen: Arc<Seen>) -> Tap<R> {
        Tap {
            inner,
            line: Vec::new(),
            skipping: false,
            seen,
        }
    }

    fn observe(&mut self, mut bytes: &[u8]) {
        while let Some(end) = memchr::memchr(b'\n', bytes) {
            self.extend(&bytes[..end]);
            if !self.skipping
                && let Some((id, asked)) = augmented_call(&self.line)
            {
                self.seen.put(id, asked);
            }
            self.line.clear();
            self.skipping = false;
            bytes = &bytes[end + 1..];
        }
        self.extend(bytes);
    }

    fn extend(&mut self, bytes: &[u8]) {
        if self.skipping {
            return;
        }
        if self.line.len() + bytes.len() > MAX_LINE {
            self.skipping = true;
            self.line = Vec::new();
            return;
        }
        self.line.extend_from_slice(bytes);
    }
}

impl<R: tokio::io::AsyncRead + Unpin> tokio::io::AsyncRead for Tap<R> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        let before = buf.filled().len();
        let poll = std::pin::Pin::new(&mut self.inner).poll_read(cx, buf);
        if matches!(poll, std::task::Poll::Ready(Ok(()))) {
            let this = &mut *self;
            this.observe(&buf.filled()[before..]);
        }
        poll
    }
}

/// Where an [`Edge`] finds the `task` of a call.
#[derive(Clone)]
pub enum Source {
    /// A stdio session's [`Tap`].
    Tap(Arc<Seen>),
    /// An HTTP session: the [`Augmented`] the calls guard put in each request.
    Http,
}

/// A session's transport, with what 2025-11-25's tasks need added (see the
/// module's documentation).
pub struct Edge<T> {
    inner: T,
    source: Source,
    server: Arc<Server>,
    /// The session negotiated 2025-11-25.
    tasks: bool,
    /// The session's caller can be told from others (see [`lists_tasks`]).
    identified: bool,
}

/// Whether `caller`, on `transport`, is offered 2025-11-25's `tasks/list`: a
/// caller the server tells from others (a token's or OAuth principal, or
/// the one stdio client), as 2025-11-25 asks. The open caller of a loopback
/// server without tokens is anyone who can connect.
pub fn lists_tasks(transport: Transport, caller: &Caller) -> bool {
    transport == Transport::Stdio || caller.principal.is_some()
}

impl<T> Edge<T> {
    /// `inner`, whose task-augmented calls `source` tells.
    pub fn new(inner: T, source: Source, server: Arc<Server>) -> Edge<T> {
        Edge {
            inner,
            source,
            server,
            tasks: false,
            identified: false,
        }
    }

    /// Whether the caller that sent an `initialize` with `extensions` is
    /// offered `tasks/list`.
    fn identified(&self, extensions: &rmcp::model::Extensions) -> bool {
        let transport = match self.source {
            Source::Tap(_) => Transport::Stdio,
            Source::Http => Transport::Http,
        };
        let parts = extensions.get::<axum::http::request::Parts>();
        caller_of(transport, parts).is_ok_and(|caller| lists_tasks(transport, &caller))
    }

    fn asked(&self, id: &RequestId, extensions: &rmcp::model::Extensions) -> Option<TaskAsked> {
        match &self.source {
            Source::Tap(seen) => seen.take(id),
            Source::Http => extensions
                .get::<axum::http::request::Parts>()
                .and_then(|parts| parts.extensions.get::<Augmented>())
                .and_then(|augmented| augmented.0.iter().find(|(seen, _)| seen == id))
                .map(|(_, asked)| *asked),
        }
    }

    /// A 2025-11-25 session's request as the handler is to get it.
    fn incoming(&self, message: ClientJsonRpcMessage) -> ClientJsonRpcMessage {
        let JsonRpcMessage::Request(mut request) = message else {
            return message;
        };
        let custom = match request.request {
            ClientRequest::CallToolRequest(call) => {
                let Some(asked) = self.asked(&request.id, &call.extensions) else {
                    request.request = ClientRequest::CallToolRequest(call);
                    return JsonRpcMessage::Request(request);
                };
                let mut custom = as_custom("tools/call", &call.params, call.extensions);
                custom.extensions.insert(asked);
                custom
            }
            ClientRequest::GetTaskRequest(get) => {
                as_custom("tasks/get", &get.params, get.extensions)
            }
            ClientRequest::CancelTaskRequest(cancel) => {
                as_custom("tasks/cancel", &cancel.params, cancel.extensions)
            }
            other => {
                request.request = other;
                return JsonRpcMessage::Request(request);
            }
        };
        request.request = ClientRequest::CustomRequest(custom);
        JsonRpcMessage::Request(request)
    }

    /// A response as a 2025-11-25 client is to get it.
    fn outgoing(&mut self, message: ServerJsonRpcMessage) -> ServerJsonRpcMessage {
        let JsonRpcMessage::Response(response) = message else {
            return message;
        };
        let JsonRpcResponse {
            jsonrpc,
            id,
            result,
        } = response;
        let result = match result {
            ServerResult::InitializeResult(init) => {
                let revision = init.protocol_version.to_string().parse();
                self.tasks = revision.is_ok_and(applies_to);
                if self.tasks {
                    let mut value = serde_json::to_value(&init).unwrap_or_default();
                    crate::render::task::declare_handshake_tasks(&mut value, self.identified);
                    ServerResult::CustomResult(CustomResult(value))
                } else {
                    ServerResult::InitializeResult(init)
                }
            }
            ServerResult::ListToolsResult(list) if self.tasks => {
                let catalog = self.server.catalog();
                let supports = |name: &str| {
                    catalog.tool(name).and_then(|tool| {
                        super::handshake::task_support(tool.descriptor.task_support)
                    })
                };
                if list.tools.iter().all(|tool| supports(&tool.name).is_none()) {
                    ServerResult::ListToolsResult(list)
                } else {
                    let mut value = serde_json::to_value(&list).unwrap_or_default();
                    crate::render::task::list_execution(&mut value, supports);
                    ServerResult::CustomResult(CustomResult(value))
                }
            }
            other => other,
        };
        JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc,
            id,
            result,
        })
    }
}

/// A typed request handed on as the custom request `method`, its params as
/// they would have been written.
fn as_custom<P: serde::Serialize>(
    method: &str,
    params: &P,
    extensions: rmcp::model::Extensions,
) -> CustomRequest {
    let mut custom = CustomRequest::new(method, serde_json::to_value(params).ok());
    custom.extensions = extensions;
    custom
}

impl<T: RmcpTransport<RoleServer>> RmcpTransport<RoleServer> for Edge<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let item = self.outgoing(item);
        self.inner.send(item)
    }

    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        let message = self.inner.receive().await?;
        if let JsonRpcMessage::Request(request) = &message
            && let ClientRequest::InitializeRequest(initialize) = &request.request
        {
            self.identified = self.identified(&initialize.extensions);
        }
        Some(match self.tasks {
            true => self.incoming(message),
            false => message,
        })
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

/// rmcp's session manager for Streamable HTTP, each session's transport
/// behind an [`Edge`].
pub struct EdgeSessions {
    inner: Arc<LocalSessionManager>,
    server: Arc<Server>,
}

impl EdgeSessions {
    /// The sessions of `inner`, served by `server`.
    pub fn new(inner: Arc<LocalSessionManager>, server: Arc<Server>) -> EdgeSessions {
        EdgeSessions { inner, server }
    }

    fn edge<T>(&self, transport: T) -> Edge<T> {
        Edge::new(transport, Source::Http, self.server.clone())
    }
}

impl SessionManager for EdgeSessions {
    type Error = <LocalSessionManager as SessionManager>::Error;
    type Transport = Edge<<LocalSessionManager as SessionManager>::Transport>;

    async fn create_session(&self) -> Result<(SessionId, Self::Transport), Self::Error> {
        let (id, transport) = self.inner.create_session().await?;
        Ok((id, self.edge(transport)))
    }

    async fn initialize_session(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<ServerJsonRpcMessage, Self::Error> {
        self.inner.initialize_session(id, message).await
    }

    async fn has_session(&self, id: &SessionId) -> Result<bool, Self::Error> {
        self.inner.has_session(id).await
    }

    async fn close_session(&self, id: &SessionId) -> Result<(), Self::Error> {
        self.inner.close_session(id).await
    }

    async fn create_stream(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_stream(id, message).await
    }

    async fn accept_message(
        &self,
        id: &SessionId,
        message: ClientJsonRpcMessage,
    ) -> Result<(), Self::Error> {
        self.inner.accept_message(id, message).await
    }

    async fn create_standalone_stream(
        &self,
        id: &SessionId,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.create_standalone_stream(id).await
    }

    async fn resume(
        &self,
        id: &SessionId,
        last_event_id: String,
    ) -> Result<impl Stream<Item = ServerSseMessage> + Send + Sync + 'static, Self::Error> {
        self.inner.resume(id, last_event_id).await
    }

    async fn restore_session(
        &self,
        id: SessionId,
    ) -> Result<RestoreOutcome<Self::Transport>, Self::Error> {
        Ok(match self.inner.restore_session(id).await? {
            RestoreOutcome::Restored(transport) => RestoreOutcome::Restored(self.edge(transport)),
            RestoreOutcome::AlreadyPresent => RestoreOutcome::AlreadyPresent,
            _ => RestoreOutcome::NotSupported,
        })
    }

    fn event_store(&self) -> Option<Arc<dyn EventStore>> {
        self.inner.event_store()
    }
}

/// Which revisions the edge changes anything for.
pub fn applies_to(revision: Revision) -> bool {
    revision == Revision::V2025_11_25
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncReadExt as _;

    #[test]
    fn only_a_tools_call_with_a_task_is_augmented() {
        let call = br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"slow","task":{"ttl":60000}}}"#;
        assert_eq!(
            augmented_call(call),
            Some((RequestId::Number(7), TaskAsked { ttl: Some(60000) }))
        );
        let named = br#"{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"slow","task":{}}}"#;
        assert_eq!(
            augmented_call(named),
            Some((RequestId::String("a".into()), TaskAsked { ttl: None }))
        );
        let plain = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"slow","arguments":{"task":1}}}"#;
        assert_eq!(augmented_call(plain), None);
        let other =
            br#"{"jsonrpc":"2.0","id":1,"method":"prompts/get","params":{"name":"p","task":{}}}"#;
        assert_eq!(augmented_call(other), None);
        assert_eq!(augmented_call(b"{not json"), None);
    }

    #[tokio::test]
    async fn the_tap_passes_every_byte_and_notes_calls_split_across_reads() {
        let input = concat!(
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#,
            "\n",
            r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","task":{"ttl":5}}}"#,
            "\n",
        );
        // A reader that hands out three bytes at a time.
        let (mut client, server) = tokio::io::duplex(3);
        let seen = Arc::new(Seen::default());
        let mut tap = Tap::new(server, seen.clone());
        let writer = tokio::spawn(async move {
            tokio::io::AsyncWriteExt::write_all(&mut client, input.as_bytes())
                .await
                .unwrap();
        });
        let mut read = Vec::new();
        tap.read_to_end(&mut read).await.unwrap();
        writer.await.unwrap();
        assert_eq!(read, input.as_bytes());
        assert_eq!(
            seen.take(&RequestId::Number(2)),
            Some(TaskAsked { ttl: Some(5) })
        );
        assert_eq!(seen.take(&RequestId::Number(2)), None, "taken once");
        assert_eq!(seen.take(&RequestId::Number(1)), None);
    }

    #[test]
    fn the_tap_forgets_the_oldest_beyond_its_bound() {
        let seen = Seen::default();
        for id in 0..(REMEMBERED as i64 + 1) {
            seen.put(RequestId::Number(id), TaskAsked::default());
        }
        assert_eq!(seen.take(&RequestId::Number(0)), None);
        assert!(seen.take(&RequestId::Number(REMEMBERED as i64)).is_some());
    }
}
