//! A handshake-era call's own response stream, for what the call sends before
//! its result.
//!
//! In a Streamable HTTP session (2025-03-26 to 2025-11-25) rmcp's session
//! manager sends a request's progress on that request's SSE stream, but every
//! other notification, `notifications/message` among them, on the session's
//! standalone GET stream: a client that never opens one never sees a call's log
//! lines, and one that does attributes them to whatever it is doing when they
//! arrive. They belong on the call's stream, before its result.
//!
//! So the calls guard opens an outlet ([`CallOutlet::open`]) for a POST that
//! carries one `tools/call` in a session and puts its sending half in the
//! request's extensions; the handler sends the call's progress and log lines
//! into it ([`super::events`]); and [`splice`] writes them into the SSE body
//! rmcp answers with, each as an event of its own between rmcp's events. The
//! handler has sent everything before it returns the result, so all of it is in
//! the outlet by the time rmcp writes the result event, and goes out first.
//!
//! Budget: the outlet holds at most [`OUTLET_MESSAGES`] messages; a sender
//! waits while it is full (the runtime's per-call queue coalesces progress and
//! drops log lines behind it), and a closed stream drops what is sent.

use std::pin::Pin;
use std::task::{Context, Poll, ready};

use axum::body::Body;
use axum::http::header;
use axum::response::Response;
use bytes::{Bytes, BytesMut};
use http_body::{Body as HttpBody, Frame};
use rmcp::model::ServerJsonRpcMessage;
use tokio::sync::mpsc;

/// How many messages an outlet holds before its sender waits.
pub const OUTLET_MESSAGES: usize = 8;

/// The sending half of a call's outlet, in the request's extensions.
#[derive(Clone, Debug)]
pub struct CallOutlet(mpsc::Sender<Bytes>);

/// The receiving half, for [`splice`].
pub struct CallInlet(mpsc::Receiver<Bytes>);

impl CallOutlet {
    /// A new outlet and its receiving half.
    pub fn open() -> (CallOutlet, CallInlet) {
        let (sender, receiver) = mpsc::channel(OUTLET_MESSAGES);
        (CallOutlet(sender), CallInlet(receiver))
    }

    /// Sends `message` as one SSE event, waiting while the outlet is full.
    /// `false` when the stream is gone (the client left, or the answer was not
    /// a stream): nothing more will be read.
    pub async fn send(&self, message: &ServerJsonRpcMessage) -> bool {
        let Ok(json) = serde_json::to_string(message) else {
            return false;
        };
        // Compact JSON has no line breaks, so it fits one `data:` line.
        let mut event = Vec::with_capacity(json.len() + 8);
        event.extend_from_slice(b"data: ");
        event.extend_from_slice(json.as_bytes());
        event.extend_from_slice(b"\n\n");
        self.0.send(Bytes::from(event)).await.is_ok()
    }
}

/// `response` with the outlet's messages written into its body, when it is an
/// SSE stream; any other answer (an error, a JSON body) is returned as it is,
/// and the outlet closes.
pub fn splice(response: Response, inlet: CallInlet) -> Response {
    if !is_event_stream(&response) {
        return response;
    }
    let (parts, body) = response.into_parts();
    let spliced = Spliced {
        body,
        inlet: Some(inlet.0),
        partial: BytesMut::new(),
        held: None,
    };
    Response::from_parts(parts, Body::new(spliced))
}

/// Whether `response` is an SSE stream (rmcp's answer to a call), not a JSON
/// body or an error.
pub(super) fn is_event_stream(response: &Response) -> bool {
    response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.starts_with("text/event-stream"))
}

/// An SSE body with an outlet's events between its own.
///
/// What goes out always ends at an event boundary: rmcp's bytes are held back
/// until the end of their last complete event, and the outlet's events go out
/// first, before each part that is let out.
struct Spliced {
    body: Body,
    /// `None` once every sender is gone.
    inlet: Option<mpsc::Receiver<Bytes>>,
    /// rmcp's bytes after its last complete event.
    partial: BytesMut,
    /// rmcp's complete events, to go out after the outlet's.
    held: Option<Bytes>,
}

/// Where the last complete event of `bytes` ends (rmcp ends each with a blank
/// line, `\n\n`).
fn events_end(bytes: &[u8]) -> Option<usize> {
    memchr::memmem::rfind(bytes, b"\n\n").map(|at| at + 2)
}

impl HttpBody for Spliced {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        loop {
            if let Some(inlet) = &mut this.inlet {
                match inlet.poll_recv(cx) {
                    Poll::Ready(Some(event)) => return Poll::Ready(Some(Ok(Frame::data(event)))),
                    Poll::Ready(None) => this.inlet = None,
                    Poll::Pending => {}
                }
            }
            if let Some(held) = this.held.take() {
                return Poll::Ready(Some(Ok(Frame::data(held))));
            }
            match ready!(Pin::new(&mut this.body).poll_frame(cx)) {
                Some(Ok(frame)) => match frame.into_data() {
                    Ok(data) => {
                        this.partial.extend_from_slice(&data);
                        if let Some(end) = events_end(&this.partial) {
                            this.held = Some(this.partial.split_to(end).freeze());
                        }
                    }
                    Err(frame) => return Poll::Ready(Some(Ok(frame))),
                },
                Some(Err(error)) => return Poll::Ready(Some(Err(error))),
                None if this.partial.is_empty() => return Poll::Ready(None),
                None => return Poll::Ready(Some(Ok(Frame::data(this.partial.split().freeze())))),
            }
        }
    }
}

#[cfg(test)]
#[allow(deprecated)] // rmcp marks the logging types deprecated (SEP-2577); MCP still has them.
mod tests {
    use super::*;
    use http_body_util::BodyExt as _;
    use rmcp::model::ServerNotification;
    use rmcp::model::{LoggingLevel, LoggingMessageNotificationParam, Notification};

    fn log_line(text: &str) -> ServerJsonRpcMessage {
        ServerJsonRpcMessage::notification(ServerNotification::LoggingMessageNotification(
            Notification::new(LoggingMessageNotificationParam::new(
                LoggingLevel::Info,
                serde_json::json!(text),
            )),
        ))
    }

    fn sse(chunks: Vec<&'static str>) -> Response {
        let stream = futures::stream::iter(
            chunks
                .into_iter()
                .map(|c| Ok::<_, std::convert::Infallible>(Bytes::from_static(c.as_bytes()))),
        );
        Response::builder()
            .header(header::CONTENT_TYPE, "text/event-stream")
            .body(Body::from_stream(stream))
            .unwrap()
    }

    async fn text(response: Response) -> String {
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn what_was_sent_goes_out_before_the_next_event_and_never_inside_one() {
        let (outlet, inlet) = CallOutlet::open();
        assert!(outlet.send(&log_line("first")).await);
        assert!(outlet.send(&log_line("second")).await);
        drop(outlet);
        // The result event arrives in two pieces; nothing may go between them.
        let body = text(splice(
            sse(vec!["id: 0\ndata:\n\n", "data: {\"result\"", ":1}\n\n"]),
            inlet,
        ))
        .await;
        let events: Vec<&str> = body.split_terminator("\n\n").collect();
        assert_eq!(events.len(), 4, "{body}");
        assert!(events[0].contains("\"first\""), "{body}");
        assert!(events[1].contains("\"second\""), "{body}");
        assert!(
            events[0]
                .starts_with("data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\""),
            "{body}"
        );
        assert_eq!(events[2], "id: 0\ndata:");
        assert_eq!(events[3], "data: {\"result\":1}");
    }

    #[tokio::test]
    async fn an_answer_that_is_not_a_stream_is_left_alone_and_closes_the_outlet() {
        let (outlet, inlet) = CallOutlet::open();
        let json = Response::builder()
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from("{}"))
            .unwrap();
        let answered = splice(json, inlet);
        assert_eq!(text(answered).await, "{}");
        assert!(!outlet.send(&log_line("late")).await);
    }

    #[tokio::test]
    async fn a_tail_without_its_blank_line_still_goes_out() {
        let (_outlet, inlet) = CallOutlet::open();
        let body = text(splice(sse(vec!["data: 1\n\ndata: 2"]), inlet)).await;
        assert_eq!(body, "data: 1\n\ndata: 2");
    }
}
