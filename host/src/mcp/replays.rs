//! The texts of a session's results, kept for a stream that sends them later.
//!
//! In a Streamable HTTP session (2024-11-05 to 2025-11-25) a call's result
//! goes into rmcp's messages as a placeholder ([`super::carried`]), and rmcp
//! does not always send it on the stream of the request that asked:
//! - a client that lost that stream while the call ran resumes it (`GET` with
//!   `Last-Event-ID`); rmcp sends the messages it kept, and the result when it
//!   comes, on the resumed stream;
//! - a response rmcp cannot route (its request was cancelled) goes to the
//!   session's standalone stream, whose last messages rmcp keeps to send again
//!   when that stream is resumed.
//!
//! So the text must outlive the request: [`Replays`] keeps it, by the
//! placeholder's name and the session it belongs to, for [`REPLAY_TTL`] (rmcp's
//! own time for a completed request's messages) and within a byte budget over
//! every session ([`REPLAY_BYTES`]), the oldest going first.
//!
//! The request's own stream never depends on it: its slot holds the text until
//! it went out, and then the kept copy is dropped (rmcp drops a request's
//! stream, and the messages it kept of it, once the response is on it), so
//! under a steady load the replays hold little more than the calls in flight.
//! A later sending that finds the text gone (past its time, or
//! pushed out by the budget) gets a coded error result in its place, never the
//! placeholder, and never another session's text.

use std::collections::BTreeMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;
use rmcp::transport::streamable_http_server::session::local::SessionConfig;

/// How long a text is kept: rmcp's own time for a completed request's messages.
pub const REPLAY_TTL: Duration = SessionConfig::DEFAULT_COMPLETED_CACHE_TTL;

/// How many bytes of texts are kept at most, over every session: beyond it the
/// oldest go first.
pub const REPLAY_BYTES: usize = 64 << 20;

/// What one kept text costs beside its bytes: its session's id and the entry.
const ENTRY_COST: usize = 96;

/// The kept texts of every session, oldest first.
#[derive(Debug)]
pub struct Replays {
    budget: usize,
    ttl: Duration,
    kept: Mutex<Kept>,
}

#[derive(Debug, Default)]
struct Kept {
    /// By name: names are drawn in order, so the first is the oldest.
    texts: BTreeMap<u64, Replay>,
    /// What the kept texts cost, by [`cost`].
    bytes: usize,
}

#[derive(Debug)]
struct Replay {
    session: Box<str>,
    text: Bytes,
    kept_at: Instant,
}

/// What keeping `text` of `session` costs against the budget.
fn cost(session: &str, text: &Bytes) -> usize {
    text.len() + session.len() + ENTRY_COST
}

impl Default for Replays {
    fn default() -> Replays {
        Replays::new(REPLAY_BYTES, REPLAY_TTL)
    }
}

impl Replays {
    /// At most `budget` bytes of texts, each for `ttl`.
    pub fn new(budget: usize, ttl: Duration) -> Replays {
        Replays {
            budget,
            ttl,
            kept: Mutex::new(Kept::default()),
        }
    }

    /// Keeps `text`, the result named `name` of `session`, pushing out the
    /// texts past their time and then the oldest, until it fits the budget. A
    /// text larger than the whole budget is not kept.
    pub fn keep(&self, session: &str, name: u64, text: Bytes) {
        let cost = cost(session, &text);
        let fits = cost <= self.budget;
        let mut guard = self.kept.lock().expect("replays lock");
        let Kept { texts, bytes } = &mut *guard;
        let now = Instant::now();
        while let Some(oldest) = texts.first_entry() {
            let stale = now.duration_since(oldest.get().kept_at) >= self.ttl;
            let over = fits && *bytes + cost > self.budget;
            if !stale && !over {
                break;
            }
            if !stale {
                tracing::debug!(
                    error.type = "replay_budget",
                    "a session's result text was dropped before its time: the replay budget is spent"
                );
            }
            let gone = oldest.remove();
            *bytes -= cost_of(&gone);
        }
        if !fits {
            return;
        }
        *bytes += cost;
        texts.insert(
            name,
            Replay {
                session: session.into(),
                text,
                kept_at: now,
            },
        );
    }

    /// Forgets the text named `name`: it went out on its request's own stream,
    /// after which rmcp keeps none of that stream's messages.
    pub fn forget(&self, name: u64) {
        let mut kept = self.kept.lock().expect("replays lock");
        if let Some(gone) = kept.texts.remove(&name) {
            kept.bytes -= cost_of(&gone);
        }
    }

    /// The text named `name` when `session` kept it and its time has not run
    /// out.
    pub fn text(&self, session: &str, name: u64) -> Option<Bytes> {
        let kept = self.kept.lock().expect("replays lock");
        let replay = kept.texts.get(&name)?;
        (&*replay.session == session && replay.kept_at.elapsed() < self.ttl)
            .then(|| replay.text.clone())
    }

    /// How many bytes the kept texts cost now.
    #[cfg(test)]
    fn bytes(&self) -> usize {
        self.kept.lock().expect("replays lock").bytes
    }
}

fn cost_of(replay: &Replay) -> usize {
    cost(&replay.session, &replay.text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_text_is_given_to_its_own_session_only() {
        let replays = Replays::default();
        replays.keep("a", 1, Bytes::from_static(b"{\"content\":[]}"));
        assert_eq!(
            replays.text("a", 1).as_deref(),
            Some(&b"{\"content\":[]}"[..])
        );
        assert_eq!(replays.text("b", 1), None, "another session's text");
        assert_eq!(replays.text("a", 2), None, "a name never kept");
    }

    #[test]
    fn the_budget_pushes_out_the_oldest_and_a_text_over_it_is_not_kept() {
        let text = Bytes::from(vec![b'x'; 100]);
        let one = cost("s", &text);
        let replays = Replays::new(2 * one, REPLAY_TTL);
        replays.keep("s", 1, text.clone());
        replays.keep("s", 2, text.clone());
        replays.keep("s", 3, text.clone());
        assert_eq!(replays.text("s", 1), None, "the oldest went first");
        assert!(replays.text("s", 2).is_some());
        assert!(replays.text("s", 3).is_some());
        assert_eq!(replays.bytes(), 2 * one);
        replays.keep("s", 4, Bytes::from(vec![b'x'; 2 * one]));
        assert_eq!(replays.text("s", 4), None, "larger than the budget");
        assert!(replays.bytes() <= 2 * one);
    }

    #[test]
    fn a_text_sent_on_its_own_stream_is_forgotten() {
        let replays = Replays::default();
        replays.keep("s", 1, Bytes::from_static(b"{}"));
        replays.keep("s", 2, Bytes::from_static(b"{}"));
        replays.forget(1);
        assert_eq!(replays.text("s", 1), None);
        assert!(replays.text("s", 2).is_some());
        assert_eq!(replays.bytes(), cost("s", &Bytes::from_static(b"{}")));
    }

    #[test]
    fn a_text_past_its_time_is_gone_and_leaves_the_budget() {
        let replays = Replays::new(REPLAY_BYTES, Duration::ZERO);
        replays.keep("s", 1, Bytes::from_static(b"{}"));
        assert_eq!(replays.text("s", 1), None);
        replays.keep("s", 2, Bytes::from_static(b"{}"));
        assert_eq!(replays.bytes(), cost("s", &Bytes::from_static(b"{}")));
    }
}
