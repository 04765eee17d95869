//! Streamable HTTP without a session (2026-07-28): a call's result sent as the
//! text the mapper wrote, as on stdio.
//!
//! rmcp's handler API returns typed results, which its HTTP service serializes
//! inside the response body; it has no place for JSON text written beforehand.
//! The stdio edge swaps a placeholder for the text at the transport
//! ([`super::stdio`]); rmcp's HTTP service has no such seam, so the swap happens
//! in the bytes of the response body instead:
//! - the calls guard opens a [`TextSlot`] for a POST that carries one
//!   `tools/call` and no session, and puts it in the request's extensions;
//! - the handler renders the result as text, keeps it in the slot and returns a
//!   placeholder naming it ([`TextSlot::carry`]): an empty result whose `_meta`
//!   holds one key with a name no one else can know (a secret of the process
//!   and a counter);
//! - [`splice`] finds that placeholder in the body rmcp answers with and sends
//!   the text in its place, as three frames (before, the text, after) without
//!   copying the text.
//!
//! Only requests without a session: a session's messages are kept by rmcp's
//! session manager to be sent again on a resumed stream, which would replay the
//! placeholder where no slot can reach it. A stateless response is never
//! replayed.
//!
//! A guest cannot forge a placeholder: the name is never shown to it (nor to
//! the client: it is spliced out), and a placeholder of another name is left as
//! it is.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, LazyLock, OnceLock};
use std::task::{Context, Poll, ready};

use axum::body::Body;
use axum::response::Response;
use bytes::Bytes;
use http_body::{Body as HttpBody, Frame};
use rmcp::model::{CallToolResult, MetaObject};
use serde_json::{Map, Value};

use super::call_stream::is_event_stream;

/// The `_meta` key of a placeholder; its value names the slot's text.
const CARRIED: &str = "toolhost.internal/carried";

/// What makes the names of this process's placeholders unguessable: 128 random
/// bits, drawn once.
static SECRET: LazyLock<String> = LazyLock::new(|| {
    let mut secret = [0u8; 16];
    getrandom::fill(&mut secret).expect("the system's random source");
    hex::encode(secret)
});

/// Placeholders named so far, so that no two are alike.
static NAMED: AtomicU64 = AtomicU64::new(0);

/// The text of one call's result, on its way from the handler to [`splice`].
#[derive(Clone, Debug, Default)]
pub struct TextSlot(Arc<OnceLock<Carried>>);

#[derive(Debug)]
struct Carried {
    /// The end of the placeholder as rmcp writes it: its `_meta` object, which
    /// is its last member, and the result's closing brace.
    needle: Vec<u8>,
    text: Bytes,
}

impl TextSlot {
    /// An empty slot, for one `tools/call`.
    pub fn open() -> TextSlot {
        TextSlot::default()
    }

    /// Keeps `text`, the result's JSON as the mapper wrote it, and returns the
    /// placeholder the handler answers with; `None` when the slot already holds
    /// a text (one slot serves one call).
    pub fn carry(&self, text: String) -> Option<CallToolResult> {
        let name = format!(
            "{}-{}",
            SECRET.as_str(),
            NAMED.fetch_add(1, Ordering::Relaxed)
        );
        let needle = format!("{{\"{CARRIED}\":\"{name}\"}}}}").into_bytes();
        self.0
            .set(Carried {
                needle,
                text: Bytes::from(text),
            })
            .ok()?;
        let mut meta = Map::new();
        meta.insert(CARRIED.to_owned(), Value::String(name));
        let mut placeholder = CallToolResult::success(Vec::new());
        placeholder.result_type = None;
        placeholder.meta = Some(MetaObject(meta));
        Some(placeholder)
    }
}

/// `response` with the slot's text in place of its placeholder, when it is an
/// SSE stream (the answer to a stateless call). Any other answer (an error, a
/// refusal) carries no placeholder and is returned as it is.
pub fn splice(response: Response, slot: TextSlot) -> Response {
    if !is_event_stream(&response) {
        return response;
    }
    let (parts, body) = response.into_parts();
    let spliced = Spliced {
        body,
        slot: Some(slot),
        queued: VecDeque::new(),
    };
    Response::from_parts(parts, Body::new(spliced))
}

/// Where the placeholder of `carried` sits in `frame`: the range of the
/// `result` member's value.
///
/// rmcp writes each SSE event as one frame, so the placeholder is never split
/// between two.
fn placeholder_in(frame: &[u8], carried: &Carried) -> Option<std::ops::Range<usize>> {
    const MEMBER: &[u8] = br#""result":"#;
    let at = memchr::memmem::find(frame, &carried.needle)?;
    let start = memchr::memmem::rfind(&frame[..at], MEMBER)? + MEMBER.len();
    (frame.get(start) == Some(&b'{')).then_some(start..at + carried.needle.len())
}

/// An SSE body whose placeholder is replaced by the slot's text.
struct Spliced {
    body: Body,
    /// `None` once the text went out.
    slot: Option<TextSlot>,
    /// The frames that replace the one that held the placeholder.
    queued: VecDeque<Bytes>,
}

impl HttpBody for Spliced {
    type Data = Bytes;
    type Error = axum::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, axum::Error>>> {
        let this = self.get_mut();
        if let Some(next) = this.queued.pop_front() {
            return Poll::Ready(Some(Ok(Frame::data(next))));
        }
        let frame = match ready!(Pin::new(&mut this.body).poll_frame(cx)) {
            Some(Ok(frame)) => frame,
            None if this
                .slot
                .as_ref()
                .is_some_and(|slot| slot.0.get().is_some()) =>
            {
                // The handler answered with a placeholder this body never held:
                // a change in how rmcp writes results. The client got the
                // placeholder, an empty result.
                tracing::error!(
                    error.type = "result_text_lost",
                    "a call's result went out without its text: the placeholder was not found in the response"
                );
                return Poll::Ready(None);
            }
            other => return Poll::Ready(other),
        };
        let Some(data) = frame.data_ref() else {
            return Poll::Ready(Some(Ok(frame)));
        };
        let found = this.slot.as_ref().and_then(|slot| {
            let carried = slot.0.get()?;
            Some((placeholder_in(data, carried)?, carried.text.clone()))
        });
        let Some((range, text)) = found else {
            return Poll::Ready(Some(Ok(frame)));
        };
        this.slot = None;
        let data = frame.into_data().expect("a data frame");
        this.queued.push_back(text);
        this.queued.push_back(data.slice(range.end..));
        Poll::Ready(Some(Ok(Frame::data(data.slice(..range.start)))))
    }

    fn is_end_stream(&self) -> bool {
        self.queued.is_empty() && self.body.is_end_stream()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::header;
    use http_body_util::BodyExt as _;

    /// An SSE answer whose events are the frames of `events`, each written as
    /// rmcp writes one.
    fn sse(events: Vec<String>) -> Response {
        let stream = futures::stream::iter(
            events
                .into_iter()
                .map(|event| Ok::<_, std::convert::Infallible>(Bytes::from(event))),
        );
        Response::builder()
            .header(header::CONTENT_TYPE, "text/event-stream")
            .body(Body::from_stream(stream))
            .unwrap()
    }

    /// The SSE event of a JSON-RPC response with `result`, as rmcp writes it.
    fn event(result: &CallToolResult) -> String {
        let response = serde_json::json!({"jsonrpc": "2.0", "id": 7, "result": result});
        format!("data: {response}\n\n")
    }

    async fn text(response: Response) -> String {
        let bytes = response.into_body().collect().await.unwrap().to_bytes();
        String::from_utf8(bytes.to_vec()).unwrap()
    }

    #[tokio::test]
    async fn the_text_goes_out_in_place_of_its_placeholder() {
        let slot = TextSlot::open();
        let text_of_result = r#"{"content":[{"type":"text","text":"5"}],"isError":false}"#;
        let placeholder = slot.carry(text_of_result.to_owned()).unwrap();
        let body = text(splice(
            sse(vec![
                "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n".into(),
                event(&placeholder),
            ]),
            slot,
        ))
        .await;
        assert_eq!(
            body,
            format!(
                "data: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}}\n\n\
                 data: {{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{text_of_result}}}\n\n"
            )
        );
    }

    #[tokio::test]
    async fn a_placeholder_of_another_name_is_left_as_it_is() {
        // What a guest could put in a log line: a placeholder it made up, and
        // one named for another call (whose name it cannot know either).
        let other = TextSlot::open();
        let foreign = event(&other.carry("{\"stolen\":true}".to_owned()).unwrap());
        let made_up = "data: {\"result\":{\"content\":[],\"_meta\":{\"toolhost.internal/carried\":\"0-0\"}}}\n\n";
        let slot = TextSlot::open();
        let placeholder = slot.carry("{\"content\":[]}".to_owned()).unwrap();
        let body = text(splice(
            sse(vec![made_up.into(), foreign.clone(), event(&placeholder)]),
            slot,
        ))
        .await;
        assert_eq!(
            body,
            format!(
                "{made_up}{foreign}data: {{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{{\"content\":[]}}}}\n\n"
            )
        );
    }

    #[tokio::test]
    async fn an_answer_that_is_not_a_stream_or_has_no_text_is_left_alone() {
        let slot = TextSlot::open();
        slot.carry("{}".to_owned()).unwrap();
        let json = Response::builder()
            .header(header::CONTENT_TYPE, "application/json")
            .body(Body::from("{\"error\":1}"))
            .unwrap();
        assert_eq!(text(splice(json, slot)).await, "{\"error\":1}");
        let events = vec!["data: {\"result\":{}}\n\n".to_owned()];
        let empty = TextSlot::open();
        assert_eq!(
            text(splice(sse(events.clone()), empty)).await,
            events.concat()
        );
        // A text whose placeholder never shows up (logged): the body as it is.
        let lost = TextSlot::open();
        lost.carry("{}".to_owned()).unwrap();
        assert_eq!(
            text(splice(sse(events.clone()), lost)).await,
            events.concat()
        );
    }

    #[test]
    fn a_slot_carries_one_text_and_names_its_placeholder_unguessably() {
        let slot = TextSlot::open();
        let first = slot.carry("{}".to_owned()).unwrap();
        assert!(slot.carry("{}".to_owned()).is_none());
        let name = first.meta.as_ref().unwrap().0[CARRIED].as_str().unwrap();
        let (secret, count) = name.split_once('-').unwrap();
        assert_eq!(secret.len(), 32);
        assert!(count.parse::<u64>().is_ok());
        let second = TextSlot::open().carry("{}".to_owned()).unwrap();
        assert_ne!(first.meta, second.meta);
    }
}
