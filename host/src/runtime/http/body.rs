//! Bodies that count what crosses the host against a call's byte budgets
//! (`max_http_request_bytes`, `max_http_response_bytes`), and a response body that
//! gives up when the server goes quiet for longer than the guest allowed between
//! two frames.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use wasmtime_wasi_http::Error;

use super::HttpUsage;

/// Which way a body goes, and so which budget it counts against.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    Sent,
    Received,
}

/// A body whose data frames are counted into the call's [`HttpUsage`]; past the
/// budget it ends with an error (and the call with `resource_limit`).
pub struct Counted<B> {
    inner: B,
    usage: Arc<HttpUsage>,
    direction: Direction,
    /// For a response: how long the server may stay quiet between two frames.
    quiet: Option<(Duration, Pin<Box<tokio::time::Sleep>>)>,
}

impl<B> Counted<B> {
    pub fn new(inner: B, usage: Arc<HttpUsage>, direction: Direction) -> Self {
        Counted {
            inner,
            usage,
            direction,
            quiet: None,
        }
    }

    /// Ends the body with `connection-read-timeout` when no frame comes for `limit`.
    pub fn between_frames(mut self, limit: Duration) -> Self {
        self.quiet = Some((limit, Box::pin(tokio::time::sleep(limit))));
        self
    }
}

impl<B> Body for Counted<B>
where
    B: Body<Data = Bytes> + Unpin,
    B::Error: Into<Error>,
{
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        let frame = match polled {
            Poll::Pending => {
                if let Some((_, sleep)) = &mut this.quiet {
                    ready!(sleep.as_mut().poll(cx));
                    return Poll::Ready(Some(Err(Error::ConnectionReadTimeout)));
                }
                return Poll::Pending;
            }
            Poll::Ready(frame) => frame,
        };
        if let Some((limit, sleep)) = &mut this.quiet {
            sleep.as_mut().reset(tokio::time::Instant::now() + *limit);
        }
        match frame {
            Some(Ok(frame)) => {
                if let Some(data) = frame.data_ref()
                    && let Err(limit) = this.usage.count(this.direction, data.len() as u64)
                {
                    return Poll::Ready(Some(Err(match this.direction {
                        Direction::Sent => Error::HttpRequestBodySize(Some(limit)),
                        Direction::Received => Error::HttpResponseBodySize(Some(limit)),
                    })));
                }
                Poll::Ready(Some(Ok(frame)))
            }
            Some(Err(error)) => Poll::Ready(Some(Err(error.into()))),
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// A response body as hyper gives it, errors in wasi:http's terms.
pub struct Incoming(pub hyper::body::Incoming);

impl Body for Incoming {
    type Data = Bytes;
    type Error = Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Error>>> {
        Pin::new(&mut self.0).poll_frame(cx).map_err(|e| {
            if e.is_timeout() {
                Error::HttpResponseTimeout
            } else {
                Error::Hyper(e)
            }
        })
    }

    fn is_end_stream(&self) -> bool {
        self.0.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.0.size_hint()
    }
}
