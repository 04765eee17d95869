//! How a stdio session ends with its input.
//!
//! When the client closes stdin, rmcp's service loop stops, sends the answers
//! its handlers still produce (for up to 5 s), then closes the transport. Two
//! things would hold that up, and this module removes both:
//! - an open `subscriptions/listen` (2026-07-28) never answers by itself:
//!   [`EndSignal`] cancels a token at the end of the input, on which the
//!   session's `listen` returns;
//! - a `subscriptions/listen` whose acknowledgment rmcp has written but not yet
//!   marked as sent never reaches `listen`: rmcp marks it in the loop that the
//!   end of the input stops, so its handler would wait out the 5 s.
//!   [`InputEnd`] holds the end of the input back from rmcp until every
//!   `subscriptions/listen` that came in has begun or been answered
//!   ([`Listens`]), for at most [`ACKNOWLEDGE_WAIT`].

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use rmcp::RoleServer;
use rmcp::model::{
    ClientJsonRpcMessage, ClientRequest, JsonRpcMessage, RequestId, ServerJsonRpcMessage,
};
use rmcp::transport::Transport;
use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

/// The longest the end of the input waits for the `subscriptions/listen`
/// requests still being acknowledged. rmcp marks an acknowledgment sent within
/// moments of writing it; this bound only matters if it never does.
pub const ACKNOWLEDGE_WAIT: Duration = Duration::from_secs(1);

/// Client input that cancels `ended` when it reaches its end, so long-lived
/// handlers (a 2026-07-28 `subscriptions/listen`) stop when the client has gone;
/// it ends early, as if the client had closed it, once `stop` resolves (the
/// drain of a shutdown is over).
pub struct EndSignal<R> {
    inner: R,
    ended: CancellationToken,
    stop: Pin<Box<WaitForCancellationFutureOwned>>,
}

impl<R> EndSignal<R> {
    /// `inner`, cancelling `ended` at its end, and ending once `stop` is cancelled.
    pub fn new(inner: R, ended: CancellationToken, stop: CancellationToken) -> Self {
        EndSignal {
            inner,
            ended,
            stop: Box::pin(stop.cancelled_owned()),
        }
    }
}

impl<R: AsyncRead + Unpin> AsyncRead for EndSignal<R> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.stop.as_mut().poll(cx).is_ready() {
            self.ended.cancel();
            return Poll::Ready(Ok(()));
        }
        let (before, room) = (buf.filled().len(), buf.remaining() > 0);
        let poll = Pin::new(&mut self.inner).poll_read(cx, buf);
        // Zero bytes into a buffer with room is the end of the input.
        if room && matches!(poll, Poll::Ready(Ok(()))) && buf.filled().len() == before {
            self.ended.cancel();
        }
        poll
    }
}

/// The `subscriptions/listen` requests of one session that came in and whose
/// handler has neither begun nor been answered: rmcp is acknowledging them.
#[derive(Debug)]
pub struct Listens(watch::Sender<HashSet<RequestId>>);

impl Default for Listens {
    fn default() -> Self {
        Listens(watch::Sender::new(HashSet::new()))
    }
}

impl Listens {
    fn arrived(&self, id: &RequestId) {
        self.0.send_modify(|waiting| {
            waiting.insert(id.clone());
        });
    }

    /// The listen request `id` no longer waits on rmcp: its handler began, or
    /// it was answered (refused, or its acknowledgment failed).
    pub fn settled(&self, id: &RequestId) {
        self.0.send_if_modified(|waiting| waiting.remove(id));
    }

    /// Resolves once no listen request is being acknowledged.
    async fn all_settled(&self) {
        let mut waiting = self.0.subscribe();
        // The sender is `self`, so the channel cannot close while this waits.
        let _ = waiting.wait_for(HashSet::is_empty).await;
    }
}

/// A session's transport whose input ends, for rmcp, only once [`Listens`] has
/// settled (or [`ACKNOWLEDGE_WAIT`] has passed): see the module's documentation.
pub struct InputEnd<T> {
    inner: T,
    listens: Arc<Listens>,
    /// When the inner input ended, the time the wait for [`Listens`] gives up.
    give_up: Option<Instant>,
}

impl<T> InputEnd<T> {
    pub fn new(inner: T, listens: Arc<Listens>) -> Self {
        InputEnd {
            inner,
            listens,
            give_up: None,
        }
    }
}

impl<T: Transport<RoleServer>> Transport<RoleServer> for InputEnd<T> {
    type Error = T::Error;

    fn send(
        &mut self,
        item: ServerJsonRpcMessage,
    ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
        let answered = match &item {
            JsonRpcMessage::Response(response) => Some(&response.id),
            JsonRpcMessage::Error(error) => error.id.as_ref(),
            _ => None,
        };
        if let Some(id) = answered {
            self.listens.settled(id);
        }
        self.inner.send(item)
    }

    /// Cancel-safe, as rmcp needs: the loop drops this future whenever another
    /// of its branches is ready first, and the wait resumes with the same bound.
    async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
        let give_up = match self.give_up {
            Some(give_up) => give_up,
            None => match self.inner.receive().await {
                Some(message) => {
                    if let JsonRpcMessage::Request(request) = &message
                        && let ClientRequest::SubscriptionsListenRequest(_) = &request.request
                    {
                        self.listens.arrived(&request.id);
                    }
                    return Some(message);
                }
                None => *self.give_up.insert(Instant::now() + ACKNOWLEDGE_WAIT),
            },
        };
        if tokio::time::timeout_at(give_up, self.listens.all_settled())
            .await
            .is_err()
        {
            tracing::warn!(
                error.type = "listen_unacknowledged",
                "the client's input ended while a subscriptions/listen was still being acknowledged; the session ends without it"
            );
        }
        None
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Self::Error>> + Send {
        self.inner.close()
    }
}

#[cfg(test)]
mod tests {
    use std::collections::VecDeque;

    use futures::FutureExt as _;
    use rmcp::model::{ErrorData, JsonRpcError, JsonRpcRequest, JsonRpcVersion2_0, NumberOrString};
    use serde_json::json;

    use super::*;

    /// A transport that hands out `incoming`, then ends, and drops what is sent.
    struct Scripted {
        incoming: VecDeque<ClientJsonRpcMessage>,
    }

    impl Transport<RoleServer> for Scripted {
        type Error = std::io::Error;

        fn send(
            &mut self,
            _item: ServerJsonRpcMessage,
        ) -> impl Future<Output = Result<(), Self::Error>> + Send + 'static {
            std::future::ready(Ok(()))
        }

        async fn receive(&mut self) -> Option<ClientJsonRpcMessage> {
            self.incoming.pop_front()
        }

        async fn close(&mut self) -> Result<(), Self::Error> {
            Ok(())
        }
    }

    fn request(id: i64, method: &str) -> ClientJsonRpcMessage {
        serde_json::from_value(json!({
            "jsonrpc": "2.0", "id": id, "method": method,
            "params": {"notifications": {"toolsListChanged": true}},
        }))
        .expect("a client request")
    }

    fn input(messages: Vec<ClientJsonRpcMessage>) -> (InputEnd<Scripted>, Arc<Listens>) {
        let listens = Arc::new(Listens::default());
        let scripted = Scripted {
            incoming: messages.into(),
        };
        (InputEnd::new(scripted, listens.clone()), listens)
    }

    #[tokio::test]
    async fn the_input_ends_once_the_listen_that_came_in_has_begun() {
        let listen = request(1, "subscriptions/listen");
        assert!(
            matches!(
                &listen,
                JsonRpcMessage::Request(JsonRpcRequest {
                    request: ClientRequest::SubscriptionsListenRequest(_),
                    ..
                })
            ),
            "{listen:?}"
        );
        let (mut input, listens) = input(vec![listen]);
        assert!(input.receive().await.is_some());
        // The inner input has ended, but the listen has not begun: held back,
        // however often rmcp polls and drops the wait.
        for _ in 0..3 {
            assert!(input.receive().now_or_never().is_none());
        }
        listens.settled(&NumberOrString::Number(1));
        assert!(matches!(input.receive().now_or_never(), Some(None)));
    }

    #[tokio::test]
    async fn a_listen_answered_without_beginning_ends_the_wait() {
        let (mut input, _listens) = input(vec![request(7, "subscriptions/listen")]);
        assert!(input.receive().await.is_some());
        assert!(input.receive().now_or_never().is_none());
        let refused: ServerJsonRpcMessage = JsonRpcMessage::Error(JsonRpcError {
            jsonrpc: JsonRpcVersion2_0,
            id: Some(NumberOrString::Number(7)),
            error: ErrorData::internal_error("failed to acknowledge subscription", None),
        });
        input.send(refused).await.expect("sent");
        assert!(matches!(input.receive().now_or_never(), Some(None)));
    }

    #[tokio::test]
    async fn other_requests_do_not_hold_the_end_back() {
        let (mut input, _listens) = input(vec![request(1, "tools/list"), request(2, "ping")]);
        assert!(input.receive().await.is_some());
        assert!(input.receive().await.is_some());
        assert!(matches!(input.receive().now_or_never(), Some(None)));
    }

    #[tokio::test]
    async fn a_listen_never_acknowledged_ends_the_input_after_the_bound() {
        let (mut input, _listens) = input(vec![request(3, "subscriptions/listen")]);
        assert!(input.receive().await.is_some());
        let ended = Instant::now();
        assert!(input.receive().await.is_none());
        assert!(ended.elapsed() >= ACKNOWLEDGE_WAIT);
    }
}
