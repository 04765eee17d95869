//! The answer to a request that carried a secret, with the secret's value put back
//! to its placeholder: a bound destination that reflects the header it received
//! (an echo service, an error page quoting the request) hands the guest the
//! placeholder, never the value.
//!
//! This is defence in depth, not a guarantee: a destination that transforms the
//! value (encodes it, splits it) can still reveal it, which is why a secret is
//! bound only to destinations the operator trusts with it.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::{Bytes, BytesMut};
use http_body::{Body, Frame, SizeHint};
use memchr::memmem;

/// The values to take out and what replaces each.
#[derive(Clone)]
pub struct Scrubber {
    /// `(value, placeholder)`, values never empty.
    pairs: Vec<(Bytes, Bytes)>,
    /// The longest value, less one: how much of a frame's end may be the start of
    /// a value that the next frame completes.
    carry: usize,
}

impl Scrubber {
    pub fn new(pairs: Vec<(Bytes, Bytes)>) -> Option<Scrubber> {
        let longest = pairs.iter().map(|(value, _)| value.len()).max()?;
        Some(Scrubber {
            pairs,
            carry: longest.saturating_sub(1),
        })
    }

    /// `text` with every value replaced, or `None` when it holds none.
    pub fn replace_all(&self, text: &[u8]) -> Option<Vec<u8>> {
        let mut out = Vec::new();
        let rest = self.replace_into(text, &mut out);
        if rest == text.len() {
            return None;
        }
        out.extend_from_slice(&text[text.len() - rest..]);
        Some(out)
    }

    /// Appends to `out` the part of `text` before and including the last value it
    /// holds, replaced; returns how many bytes at the end were not looked at
    /// (all of `text` when it holds no value: `out` is then untouched).
    fn replace_into(&self, text: &[u8], out: &mut Vec<u8>) -> usize {
        let mut at = 0;
        while let Some((start, pair)) = self.first(&text[at..]) {
            out.extend_from_slice(&text[at..at + start]);
            out.extend_from_slice(&pair.1);
            at += start + pair.0.len();
        }
        text.len() - at
    }

    /// The earliest value in `text`: where, and which.
    fn first(&self, text: &[u8]) -> Option<(usize, &(Bytes, Bytes))> {
        self.pairs
            .iter()
            .filter_map(|pair| memmem::find(text, &pair.0).map(|at| (at, pair)))
            .min_by_key(|(at, _)| *at)
    }
}

/// A response body with every value of a [`Scrubber`] replaced, also where one
/// spans two frames.
pub struct Scrubbed<B> {
    inner: B,
    scrubber: Scrubber,
    /// Bytes held back: the start of a value, maybe.
    held: BytesMut,
    /// A frame that came after the held bytes were flushed (trailers).
    next: Option<Frame<Bytes>>,
    ended: bool,
}

impl<B> Scrubbed<B> {
    pub fn new(inner: B, scrubber: Scrubber) -> Self {
        Scrubbed {
            inner,
            scrubber,
            held: BytesMut::new(),
            next: None,
            ended: false,
        }
    }

    /// Replaces the values in the held bytes, and keeps back at most `keep` bytes
    /// at their end; what may go out now.
    fn release(&mut self, keep: usize) -> Bytes {
        let mut out = Vec::new();
        let unseen = self.scrubber.replace_into(&self.held, &mut out);
        let unseen_from = self.held.len() - unseen;
        let kept = unseen.min(keep);
        out.extend_from_slice(&self.held[unseen_from..self.held.len() - kept]);
        let rest = self.held.split_off(self.held.len() - kept);
        self.held = rest;
        Bytes::from(out)
    }
}

impl<B> Body for Scrubbed<B>
where
    B: Body<Data = Bytes> + Unpin,
{
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        let this = &mut *self;
        if let Some(frame) = this.next.take() {
            return Poll::Ready(Some(Ok(frame)));
        }
        loop {
            if this.ended {
                return Poll::Ready(None);
            }
            match Pin::new(&mut this.inner).poll_frame(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Err(error))) => return Poll::Ready(Some(Err(error))),
                Poll::Ready(Some(Ok(frame))) => match frame.into_data() {
                    Ok(data) => {
                        this.held.extend_from_slice(&data);
                        let carry = this.scrubber.carry;
                        let out = this.release(carry);
                        if !out.is_empty() {
                            return Poll::Ready(Some(Ok(Frame::data(out))));
                        }
                    }
                    Err(other) => {
                        let out = this.release(0);
                        if out.is_empty() {
                            return Poll::Ready(Some(Ok(other)));
                        }
                        this.next = Some(other);
                        return Poll::Ready(Some(Ok(Frame::data(out))));
                    }
                },
                Poll::Ready(None) => {
                    this.ended = true;
                    let out = this.release(0);
                    if !out.is_empty() {
                        return Poll::Ready(Some(Ok(Frame::data(out))));
                    }
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.ended && self.held.is_empty() && self.next.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        // A placeholder may be longer or shorter than the value it replaces.
        SizeHint::default()
    }
}

#[cfg(test)]
mod tests {
    use http_body_util::{BodyExt as _, StreamBody};

    use super::*;

    fn scrubber() -> Scrubber {
        Scrubber::new(vec![(
            Bytes::from_static(b"s3cr3t"),
            Bytes::from_static(b"<placeholder>"),
        )])
        .unwrap()
    }

    async fn through(chunks: &[&'static [u8]]) -> Vec<u8> {
        let frames = chunks
            .iter()
            .map(|c| Ok::<_, std::convert::Infallible>(Frame::data(Bytes::from_static(c))));
        let body = StreamBody::new(futures::stream::iter(frames));
        Scrubbed::new(body, scrubber())
            .collect()
            .await
            .unwrap()
            .to_bytes()
            .to_vec()
    }

    #[tokio::test]
    async fn a_value_is_replaced_in_one_frame_across_frames_and_at_the_end() {
        assert_eq!(
            through(&[b"token: s3cr3t, again s3cr3t."]).await,
            b"token: <placeholder>, again <placeholder>."
        );
        assert_eq!(
            through(&[b"token: s3", b"cr", b"3t!"]).await,
            b"token: <placeholder>!"
        );
        assert_eq!(
            through(&[b"ends in s3cr", b"3t"]).await,
            b"ends in <placeholder>"
        );
        assert_eq!(through(&[b"no secret, s3cr"]).await, b"no secret, s3cr");
        assert_eq!(through(&[b"", b"plain"]).await, b"plain");
    }

    #[test]
    fn header_values_are_replaced_only_when_they_hold_a_value() {
        let scrubber = scrubber();
        assert_eq!(
            scrubber.replace_all(b"Bearer s3cr3t").as_deref(),
            Some(&b"Bearer <placeholder>"[..])
        );
        assert_eq!(scrubber.replace_all(b"nothing here"), None);
    }
}
