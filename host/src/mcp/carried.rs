//! A call's result sent over Streamable HTTP as the text the mapper wrote, as
//! on stdio.
//!
//! rmcp's handler API returns typed results, which its HTTP service serializes
//! inside the response body; it has no place for JSON text written beforehand.
//! The stdio edge swaps a placeholder for the text at the transport
//! ([`super::stdio`]); rmcp's HTTP service has no such seam, so the swap happens
//! in the bytes of the response body instead:
//! - the calls guard opens a [`TextSlot`] for a POST that carries one
//!   `tools/call`, and puts it in the request's extensions;
//! - the handler renders the result as text, keeps it in the slot and returns a
//!   placeholder naming it ([`TextSlot::carry`]): an empty result whose `_meta`
//!   holds one key with a name no one else can know (a secret of the process
//!   and a counter);
//! - [`splice_call`] finds that placeholder in the body rmcp answers with and sends
//!   the text in its place, as three frames (before, the text, after) without
//!   copying the text.
//!
//! In a session (2024-11-05 to 2025-11-25) rmcp keeps each message to send it
//! again on a resumed stream, and sends a response it cannot route on the
//! session's standalone stream: the placeholder may come back on any of the
//! session's streams after the request is gone. So a session's slot also
//! keeps the text in the server's [`Replays`], and the calls guard splices
//! every event stream of the session (its `GET`s too) from there; a text no
//! longer kept is replaced by a coded error result ([`SessionTexts`]).
//!
//! A guest cannot forge a placeholder: the name is never shown to it (nor to
//! the client: it is spliced out), a placeholder of another name is left as it
//! is without a session, and within a session only that session's texts are
//! looked up.

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
use super::replays::Replays;
use crate::render::{OutputMode, RenderContext, Rendering, Revision, Target};
use crate::result::{ErrorCode, ToolResult};

/// The `_meta` key of a placeholder; its value names the slot's text.
const CARRIED: &str = "toolhost.internal/carried";

/// What makes the names of this process's placeholders unguessable: 128 random
/// bits, drawn once.
static SECRET: LazyLock<String> = LazyLock::new(|| {
    let mut secret = [0u8; 16];
    getrandom::fill(&mut secret).expect("the system's random source");
    hex::encode(secret)
});

/// How every placeholder of this process begins as rmcp writes it: its `_meta`
/// object up to the counter of its name.
static PREFIX: LazyLock<Vec<u8>> =
    LazyLock::new(|| format!("{{\"{CARRIED}\":\"{}-", SECRET.as_str()).into_bytes());

/// How a placeholder ends: its name, its `_meta` object and the result close.
const SUFFIX: &[u8] = b"\"}}";

/// Placeholders named so far, so that no two are alike.
static NAMED: AtomicU64 = AtomicU64::new(0);

/// The text of one call's result, on its way from the handler to [`splice_call`].
#[derive(Clone, Debug, Default)]
pub struct TextSlot {
    carried: Arc<OnceLock<Carried>>,
    /// The session the call belongs to, whose streams may send it again.
    session: Option<Arc<SessionTexts>>,
}

#[derive(Debug)]
struct Carried {
    /// The counter of the placeholder's name.
    name: u64,
    text: Bytes,
}

impl TextSlot {
    /// An empty slot, for one `tools/call` without a session.
    pub fn open() -> TextSlot {
        TextSlot::default()
    }

    /// An empty slot, for one `tools/call` of `session`: its text is kept for
    /// the session's replays too.
    pub fn in_session(session: Arc<SessionTexts>) -> TextSlot {
        TextSlot {
            carried: Arc::default(),
            session: Some(session),
        }
    }

    /// Keeps `text`, the result's JSON as the mapper wrote it, and returns the
    /// placeholder the handler answers with; `None` when the slot already holds
    /// a text (one slot serves one call).
    pub fn carry(&self, text: String) -> Option<CallToolResult> {
        let name = NAMED.fetch_add(1, Ordering::Relaxed);
        let text = Bytes::from(text);
        self.carried
            .set(Carried {
                name,
                text: text.clone(),
            })
            .ok()?;
        if let Some(session) = &self.session {
            session.replays.keep(&session.id, name, text);
        }
        let mut meta = Map::new();
        meta.insert(
            CARRIED.to_owned(),
            Value::String(format!("{}-{name}", SECRET.as_str())),
        );
        let mut placeholder = CallToolResult::success(Vec::new());
        placeholder.result_type = None;
        placeholder.meta = Some(MetaObject(meta));
        Some(placeholder)
    }

    /// Whether the handler put a text in this slot.
    fn holds_text(&self) -> bool {
        self.carried.get().is_some()
    }

    /// The text named `name`, when this slot carries it.
    fn text(&self, name: u64) -> Option<Bytes> {
        let carried = self.carried.get()?;
        (carried.name == name).then(|| carried.text.clone())
    }
}

/// One session's view of the kept texts, for the streams of one request.
#[derive(Debug)]
pub struct SessionTexts {
    replays: Arc<Replays>,
    id: Box<str>,
    /// What a text no longer kept is rendered for: the request's revision (its
    /// `MCP-Protocol-Version`, else 2025-03-26, which has none) and output mode.
    target: Target,
}

impl SessionTexts {
    /// The texts `replays` keeps for the session `id`, a lapsed one rendered
    /// for `revision` in `mode`.
    pub fn new(
        replays: Arc<Replays>,
        id: &str,
        revision: Revision,
        mode: OutputMode,
    ) -> Arc<SessionTexts> {
        Arc::new(SessionTexts {
            replays,
            id: id.into(),
            target: Target::Mcp { revision, mode },
        })
    }

    /// The text named `name`; when it is no longer kept, a `resource_limit`
    /// error result saying so (the placeholder is ours, so it must not go out).
    fn text(&self, name: u64) -> Bytes {
        if let Some(text) = self.replays.text(&self.id, name) {
            return text;
        }
        tracing::warn!(
            error.type = "result_text_lapsed",
            "a session stream sent a call's result again after its text was dropped (past its time or over the replay budget); it went out as an error"
        );
        let lapsed = ToolResult::failure(
            ErrorCode::ResourceLimit,
            "this call's result is no longer kept for a resumed stream; call the tool again",
        )
        .build();
        let mut ctx = RenderContext::new("", jiff::Timestamp::now());
        ctx.mcp_as_text = true;
        match self.target.render(&lapsed, &ctx) {
            Rendering::Json(text) => Bytes::from(text),
            Rendering::Mcp(typed) => Bytes::from(serde_json::to_vec(&typed).unwrap_or_default()),
        }
    }
}

/// `response` to the request whose call `slot` is for, with the slot's text
/// in place of its placeholder, and in a session any text the session keeps
/// (see [`splice_session`]).
pub fn splice_call(response: Response, slot: TextSlot) -> Response {
    if !is_event_stream(&response) {
        if slot.holds_text() {
            // rmcp answered a call in one JSON body (its `json_response`,
            // which toolhost does not set): the placeholder went out.
            tracing::error!(
                error.type = "result_text_lost",
                "a call's result went out without its text: the answer was not an event stream"
            );
        }
        return response;
    }
    let session = slot.session.clone();
    spliced(response, Some(slot), session)
}

/// `response` to another request of `session` (a standalone or resumed
/// stream), with the texts the session keeps in place of their placeholders.
pub fn splice_session(response: Response, session: Arc<SessionTexts>) -> Response {
    if !is_event_stream(&response) {
        return response;
    }
    spliced(response, None, Some(session))
}

/// `response`, an SSE stream, whose placeholders find their texts in `slot` and
/// `session`.
fn spliced(
    response: Response,
    slot: Option<TextSlot>,
    session: Option<Arc<SessionTexts>>,
) -> Response {
    let (parts, body) = response.into_parts();
    let spliced = Spliced {
        body,
        slot,
        session,
        sent: false,
        queued: VecDeque::new(),
    };
    Response::from_parts(parts, Body::new(spliced))
}

/// A placeholder of this process in `frame`, from `from` on: the counter of its
/// name and the range of the `result` member's value that it is.
///
/// rmcp writes each SSE event as one frame, so a placeholder is never split
/// between two.
fn placeholder_in(frame: &[u8], from: usize) -> Option<(u64, std::ops::Range<usize>)> {
    const MEMBER: &[u8] = br#""result":"#;
    let prefix = PREFIX.as_slice();
    let mut at = from;
    loop {
        at += memchr::memmem::find(&frame[at..], prefix)?;
        let digits = at + prefix.len();
        let count = frame[digits..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let end = digits + count;
        let name = std::str::from_utf8(&frame[digits..end])
            .ok()
            .and_then(|digits| digits.parse().ok());
        if let Some(name) = name
            && frame[end..].starts_with(SUFFIX)
            && let Some(member) = memchr::memmem::rfind(&frame[from..at], MEMBER)
            && frame.get(from + member + MEMBER.len()) == Some(&b'{')
        {
            return Some((name, from + member + MEMBER.len()..end + SUFFIX.len()));
        }
        at = digits;
    }
}

/// An SSE body whose placeholders are replaced by their texts.
struct Spliced {
    body: Body,
    slot: Option<TextSlot>,
    session: Option<Arc<SessionTexts>>,
    /// Whether the slot's text went out.
    sent: bool,
    /// The frames that replace the one that held a placeholder.
    queued: VecDeque<Bytes>,
}

impl Spliced {
    /// The text of the placeholder named `name`: the slot's, else the
    /// session's; `None` leaves it as it is (without a session, another
    /// name is no text of this request).
    fn text(&mut self, name: u64) -> Option<Bytes> {
        if let Some(slot) = &self.slot
            && let Some(text) = slot.text(name)
        {
            self.sent = true;
            if let Some(session) = &slot.session {
                session.replays.forget(name);
            }
            return Some(text);
        }
        Some(self.session.as_ref()?.text(name))
    }

    /// The slot carried a text that never went out on this stream, where it
    /// could go nowhere else (no session): a change in how rmcp writes results.
    fn lost(&self) -> bool {
        !self.sent && self.session.is_none() && self.slot.as_ref().is_some_and(TextSlot::holds_text)
    }
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
            None if this.lost() => {
                // The client got the placeholder, an empty result.
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
        let mut from = 0;
        let mut found = Vec::new();
        while let Some((name, range)) = placeholder_in(data, from) {
            from = range.end;
            if let Some(text) = this.text(name) {
                found.push((range, text));
            }
        }
        if found.is_empty() {
            return Poll::Ready(Some(Ok(frame)));
        }
        let data = frame.into_data().expect("a data frame");
        let mut at = 0;
        for (range, text) in found {
            this.queued.push_back(data.slice(at..range.start));
            this.queued.push_back(text);
            at = range.end;
        }
        this.queued.push_back(data.slice(at..));
        let first = this.queued.pop_front().expect("a frame before the text");
        Poll::Ready(Some(Ok(Frame::data(first))))
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
        let body = text(splice_call(
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
        let body = text(splice_call(
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
        assert_eq!(text(splice_call(json, slot)).await, "{\"error\":1}");
        let events = vec!["data: {\"result\":{}}\n\n".to_owned()];
        let empty = TextSlot::open();
        assert_eq!(
            text(splice_call(sse(events.clone()), empty)).await,
            events.concat()
        );
        // A text whose placeholder never shows up (logged): the body as it is.
        let lost = TextSlot::open();
        lost.carry("{}".to_owned()).unwrap();
        assert_eq!(
            text(splice_call(sse(events.clone()), lost)).await,
            events.concat()
        );
    }

    fn session(replays: &Arc<Replays>, id: &str) -> Arc<SessionTexts> {
        SessionTexts::new(replays.clone(), id, Revision::V2025_06_18, OutputMode::Spec)
    }

    #[tokio::test]
    async fn a_session_sends_a_kept_text_on_its_other_streams_until_its_own_sent_it() {
        let replays = Arc::new(Replays::default());
        let text_of_result = r#"{"content":[{"type":"text","text":"5"}],"isError":false}"#;
        let spliced =
            format!("data: {{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{text_of_result}}}\n\n");
        // The client lost the request's stream while the call ran: rmcp sends
        // the result on the stream it resumed, or twice on a standalone stream
        // resumed twice (here in one frame).
        let slot = TextSlot::in_session(session(&replays, "s1"));
        let placeholder = slot.carry(text_of_result.to_owned()).unwrap();
        drop(slot);
        let elsewhere = text(splice_session(
            sse(vec![event(&placeholder).repeat(2)]),
            session(&replays, "s1"),
        ))
        .await;
        assert_eq!(elsewhere, spliced.repeat(2));
        // The request's own stream, from its slot: after it, rmcp keeps nothing
        // of that stream, and neither do the replays.
        let slot = TextSlot::in_session(session(&replays, "s1"));
        let placeholder = slot.carry(text_of_result.to_owned()).unwrap();
        let own = text(splice_call(sse(vec![event(&placeholder)]), slot)).await;
        assert_eq!(own, spliced);
        let later = text(splice_session(
            sse(vec![event(&placeholder)]),
            session(&replays, "s1"),
        ))
        .await;
        assert!(later.contains("\"isError\":true"), "{later}");
    }

    #[tokio::test]
    async fn a_lapsed_or_foreign_text_goes_out_as_an_error_never_as_its_placeholder() {
        let replays = Arc::new(Replays::new(1 << 20, std::time::Duration::ZERO));
        let slot = TextSlot::in_session(session(&replays, "s1"));
        let placeholder = slot.carry("{\"content\":[]}".to_owned()).unwrap();
        let kept = Arc::new(Replays::default());
        let theirs = TextSlot::in_session(session(&kept, "s1"));
        let foreign = theirs.carry("{\"secret\":1}".to_owned()).unwrap();
        for (placeholder, replays, id) in [
            (&placeholder, &replays, "s1"),
            // Another session's: never its text.
            (&foreign, &kept, "s2"),
        ] {
            let body = text(splice_session(
                sse(vec![event(placeholder)]),
                session(replays, id),
            ))
            .await;
            assert!(!body.contains(CARRIED), "{body}");
            assert!(!body.contains("secret"), "{body}");
            let event: Value =
                serde_json::from_str(body.strip_prefix("data: ").unwrap().trim_end()).unwrap();
            assert_eq!(event["result"]["isError"], true, "{body}");
            let texts = event["result"]["content"].as_array().unwrap();
            assert!(
                texts.iter().any(|part| part["text"]
                    .as_str()
                    .unwrap()
                    .contains("\"resource_limit\"")),
                "{body}"
            );
        }
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
