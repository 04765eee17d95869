//! The stdio transport: rmcp's line-delimited JSON-RPC, with the results of
//! `tools/call` sent as the text the mapper wrote.
//!
//! rmcp's handler API returns typed results, which its transport serializes. A
//! result whose text block holds JSON (the legacy envelope of the `compat` mode,
//! the data in `spec` mode) is then formatted into a string, and that string
//! escaped again by the serializer. On stdio the MCP renderer writes the whole
//! result as JSON text in one pass instead (`McpRenderer::render_text`), and:
//! - the handler returns it inside a placeholder result ([`carrying`]), the only
//!   way through rmcp's typed API;
//! - [`StdioTransport`] takes it out of the placeholder as the response goes
//!   out and writes `{"jsonrpc":"2.0","id":..,"result":<the text>}` as it is.
//!
//! Everything else goes through rmcp's own transport (`AsyncRwTransport`: its
//! line length limit, its answers to malformed requests) and its own
//! serialization. Both write through one lock on stdout, a whole frame at a
//! time, so their lines never interleave.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};

use rmcp::RoleServer;
use rmcp::model::{
    CallToolResult, ClientJsonRpcMessage, JsonRpcMessage, MetaObject, ServerJsonRpcMessage,
    ServerResult,
};
use rmcp::transport::Transport;
use rmcp::transport::async_rw::AsyncRwTransport;
use serde_json::{Map, Value};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt as _};
use tokio::sync::{Mutex, OwnedMutexGuard};
use tokio_util::either::Either;

/// The `_meta` key of the placeholder that carries a result's text to the
/// transport. It never reaches the wire: [`StdioTransport`] takes the text out.
const CARRIED: &str = "toolhost.internal/text";

/// A placeholder `tools/call` result carrying `text`, the result's JSON as the
/// renderer wrote it, to [`StdioTransport`], which sends the text in its place.
///
/// Only a session served by [`StdioTransport`] may return it: another
/// transport would send the placeholder itself.
pub fn carrying(text: String) -> CallToolResult {
    let mut meta = Map::new();
    meta.insert(CARRIED.to_owned(), Value::String(text));
    let mut placeholder = CallToolResult::success(Vec::new());
    placeholder.result_type = None;
    placeholder.meta = Some(MetaObject(meta));
    placeholder
}

/// The text a placeholder of [`carrying`] carries, taken out of it.
fn carried(result: &mut CallToolResult) -> Option<String> {
    let meta = result.meta.as_mut()?;
    let is_placeholder = result.content.is_empty()
        && meta.0.len() == 1
        && meta.0.get(CARRIED).is_some_and(Value::is_string);
    match is_placeholder.then(|| meta.0.shift_remove(CARRIED)) {
        Some(Some(Value::String(text))) => Some(text),
        _ => None,
    }
}

/// The line that answers `item`, when it is a response carrying its result's
/// text: the JSON-RPC envelope written around the text, as rmcp writes it.
fn text_frame(item: &mut ServerJsonRpcMessage) -> Option<Vec<u8>> {
    let JsonRpcMessage::Response(response) = item else {
        return None;
    };
    let ServerResult::CallToolResult(result) = &mut response.result else {
        return None;
    };
    let text = carried(result)?;
    let mut frame = Vec::with_capacity(text.len() + 48);
    frame.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    serde_json::to_writer(&mut frame, &response.id).expect("a request id serializes");
    frame.extend_from_slice(br#","result":"#);
    frame.extend_from_slice(text.as_bytes());
    frame.extend_from_slice(b"}\n");
    Some(frame)
}

/// The session's output, shared by rmcp's transport and the text frames;
/// `None` once the transport is closed.
type Output<W> = Arc<Mutex<Option<W>>>;

/// rmcp's transport over `read` and `write`, sending carried results as text.
pub struct StdioTransport<R: AsyncRead, W: AsyncWrite + Send + Unpin + 'static> {
    inner: AsyncRwTransport<RoleServer, R, Frames<W>>,
    output: Output<W>,
}

impl<R, W> StdioTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    pub fn new(read: R, write: W) -> Self {
        let output = Arc::new(Mutex::new(Some(write)));
        let frames = Frames {
            output: output.clone(),
            buffer: Vec::new(),
            locking: None,
            guard: None,
        };
        StdioTransport {
            inner: AsyncRwTransport::new_server(read, frames),
            output,
        }
    }
}

impl<R, W> Transport<RoleServer> for StdioTransport<R, W>
where
    R: AsyncRead + Send + Unpin,
    W: AsyncWrite + Send + Unpin + 'static,
{
    type Error = io::Error;

    fn send(
        &mut self,
        mut item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        match text_frame(&mut item) {
            Some(frame) => {
                let output = self.output.clone();
                Either::Left(async move {
                    let mut output = output.lock_owned().await;
                    let write = output.as_mut().ok_or_else(closed)?;
                    write.write_all(&frame).await?;
                    write.flush().await
                })
            }
            None => Either::Right(self.inner.send(item)),
        }
    }

    fn receive(&mut self) -> impl Future<Output = Option<ClientJsonRpcMessage>> + Send {
        self.inner.receive()
    }

    async fn close(&mut self) -> Result<(), Self::Error> {
        self.inner.close().await?;
        self.output.lock().await.take();
        Ok(())
    }
}

fn closed() -> io::Error {
    io::Error::new(io::ErrorKind::NotConnected, "the stdio transport is closed")
}

/// The wait for the output's lock.
type Locking<W> = Pin<Box<dyn Future<Output = OwnedMutexGuard<Option<W>>> + Send>>;

/// What rmcp's transport writes into: its frames are kept until it flushes,
/// then written to the output under the lock, all at once.
struct Frames<W> {
    output: Output<W>,
    /// What rmcp wrote since its last flush: whole frames.
    buffer: Vec<u8>,
    /// The lock being waited for.
    locking: Option<Locking<W>>,
    /// The lock, held while the buffer is written and flushed.
    guard: Option<OwnedMutexGuard<Option<W>>>,
}

impl<W: AsyncWrite + Send + Unpin + 'static> Frames<W> {
    fn poll_write_out(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        if self.guard.is_none() {
            let output = &self.output;
            let locking = self
                .locking
                .get_or_insert_with(|| Box::pin(output.clone().lock_owned()));
            self.guard = Some(ready!(locking.as_mut().poll(cx)));
            self.locking = None;
        }
        let write = self
            .guard
            .as_mut()
            .and_then(|guard| guard.as_mut())
            .ok_or_else(closed)?;
        while !self.buffer.is_empty() {
            let written = ready!(Pin::new(&mut *write).poll_write(cx, &self.buffer))?;
            if written == 0 {
                return Poll::Ready(Err(io::ErrorKind::WriteZero.into()));
            }
            self.buffer.drain(..written);
        }
        ready!(Pin::new(&mut *write).poll_flush(cx))?;
        Poll::Ready(Ok(()))
    }
}

impl<W: AsyncWrite + Send + Unpin + 'static> AsyncWrite for Frames<W> {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        bytes: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().buffer.extend_from_slice(bytes);
        Poll::Ready(Ok(bytes.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if this.buffer.is_empty() && this.guard.is_none() {
            return Poll::Ready(Ok(()));
        }
        let done = ready!(this.poll_write_out(cx));
        // Written or failed, the lock goes: the next frame waits for no one.
        this.guard = None;
        Poll::Ready(done)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.poll_flush(cx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::render::{OutputMode, RenderContext, Revision, mcp::McpRenderer};
    use crate::result::{ErrorCode, ToolResult};
    use rmcp::model::{JsonRpcResponse, JsonRpcVersion2_0, NumberOrString};
    use serde_json::json;
    use tokio::io::{AsyncBufReadExt as _, BufReader};

    fn text_block(text: &str) -> rmcp::model::ContentBlock {
        rmcp::model::ContentBlock::Text(rmcp::model::TextContent::new(text))
    }

    fn response(id: NumberOrString, result: CallToolResult) -> ServerJsonRpcMessage {
        JsonRpcMessage::Response(JsonRpcResponse {
            jsonrpc: JsonRpcVersion2_0,
            id,
            result: ServerResult::CallToolResult(result),
        })
    }

    /// A carried result goes out as the line rmcp writes for the typed one.
    #[test]
    fn a_carried_result_is_the_line_rmcp_writes() {
        let results = [
            ToolResult::success(Some(json!({"text": "a \"quoted\"\nline"})))
                .summary("one row")
                .build(),
            ToolResult::failure(ErrorCode::NotFound, "no such row").build(),
        ];
        let ctx = RenderContext::new("tool", jiff::Timestamp::UNIX_EPOCH);
        for result in &results {
            for revision in Revision::ALL {
                let renderer = McpRenderer {
                    revision,
                    mode: OutputMode::Compat,
                };
                for id in [
                    NumberOrString::Number(7),
                    NumberOrString::String("a\"b".into()),
                ] {
                    let typed = response(id.clone(), renderer.render(result, &ctx));
                    let mut rmcp_line = serde_json::to_vec(&typed).unwrap();
                    rmcp_line.push(b'\n');
                    let text = renderer.render_text(result, &ctx);
                    let mut placeholder = response(id, carrying(text));
                    assert_eq!(
                        String::from_utf8(text_frame(&mut placeholder).unwrap()).unwrap(),
                        String::from_utf8(rmcp_line).unwrap(),
                        "{revision}: {result:?}"
                    );
                }
            }
        }
    }

    /// Only the placeholder is taken for text: a result of a tool that happens
    /// to have the same `_meta` key beside content, or another value, is not.
    #[test]
    fn only_the_placeholder_carries_text() {
        let mut placeholder = carrying("{}".into());
        assert_eq!(carried(&mut placeholder).as_deref(), Some("{}"));

        let mut with_content = carrying("{}".into());
        with_content.content.push(text_block("x"));
        assert_eq!(carried(&mut with_content), None);

        let mut not_text = carrying("{}".into());
        not_text
            .meta
            .as_mut()
            .unwrap()
            .0
            .insert(CARRIED.into(), Value::Bool(true));
        assert_eq!(carried(&mut not_text), None);

        let mut more = carrying("{}".into());
        more.meta
            .as_mut()
            .unwrap()
            .0
            .insert("other".into(), Value::Null);
        assert_eq!(carried(&mut more), None);
        assert!(more.meta.unwrap().0.contains_key(CARRIED), "left as it was");
    }

    /// rmcp's frames and the text frames, sent at once from many tasks, come out
    /// as whole lines, each once.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn frames_from_both_paths_never_interleave() {
        let (server_out, client_in) = tokio::io::duplex(64);
        let (_client_out, server_in) = tokio::io::duplex(64);
        let mut transport = StdioTransport::new(server_in, server_out);
        let big = "x".repeat(10_000);
        let mut sends = Vec::new();
        for n in 0..40 {
            let item = if n % 2 == 0 {
                response(
                    NumberOrString::Number(n),
                    carrying(format!(r#"{{"content":[],"n":"{big}"}}"#)),
                )
            } else {
                response(
                    NumberOrString::Number(n),
                    CallToolResult::success(vec![text_block(&big)]),
                )
            };
            sends.push(tokio::spawn(transport.send(item)));
        }
        let reader = tokio::spawn(async move {
            let mut lines = BufReader::new(client_in).lines();
            let mut ids = Vec::new();
            while ids.len() < 40 {
                let line = lines.next_line().await.unwrap().unwrap();
                let message: Value = serde_json::from_str(&line).expect("a whole line");
                ids.push(message["id"].as_i64().unwrap());
            }
            ids
        });
        for send in sends {
            send.await.unwrap().unwrap();
        }
        let mut ids = reader.await.unwrap();
        ids.sort_unstable();
        assert_eq!(ids, (0..40).collect::<Vec<_>>());
    }
}
