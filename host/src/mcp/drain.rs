//! Graceful shutdown: the calls in flight, and whether the server still takes
//! new ones.
//!
//! A SIGTERM or SIGINT starts the drain ([`Drain::start`]): from then on a new
//! `tools/call` is refused (HTTP 503 on the listener, a JSON-RPC error on
//! stdio), and the transports wait ([`Drain::idle`]) until every call in
//! flight has answered, up to `host.drain_secs`. A call counts from the moment
//! it is admitted until its answer is written: on HTTP, the calls guard holds a
//! [`CallGuard`] until the response body has been sent; on stdio, the handler
//! holds one while the call runs (rmcp writes the answers that are ready before
//! its loop ends).

use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

/// The calls in flight and the drain's start.
pub struct Drain {
    calls: watch::Sender<usize>,
    started: CancellationToken,
}

impl Default for Drain {
    fn default() -> Self {
        Drain {
            calls: watch::Sender::new(0),
            started: CancellationToken::new(),
        }
    }
}

/// One call in flight; dropping it ends the call.
pub struct CallGuard {
    calls: watch::Sender<usize>,
}

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.calls.send_modify(|n| *n -= 1);
    }
}

impl Drain {
    /// Admits a call, or `None` once the drain has started.
    pub fn admit(&self) -> Option<CallGuard> {
        if self.started.is_cancelled() {
            return None;
        }
        self.calls.send_modify(|n| *n += 1);
        Some(CallGuard {
            calls: self.calls.clone(),
        })
    }

    /// Refuses new calls from now on.
    pub fn start(&self) {
        self.started.cancel();
    }

    /// Whether the drain has started.
    pub fn started(&self) -> bool {
        self.started.is_cancelled()
    }

    /// Resolves when the drain starts.
    pub async fn wait_started(&self) {
        self.started.cancelled().await;
    }

    /// The calls in flight now.
    pub fn in_flight(&self) -> usize {
        *self.calls.borrow()
    }

    /// Waits until no call is in flight, up to `deadline`; `false` when calls
    /// were still running at the deadline.
    pub async fn idle(&self, deadline: Duration) -> bool {
        let mut calls = self.calls.subscribe();
        tokio::time::timeout(deadline, calls.wait_for(|n| *n == 0))
            .await
            .is_ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_drain_refuses_new_calls_and_waits_for_the_running_ones() {
        let drain = std::sync::Arc::new(Drain::default());
        let first = drain.admit().unwrap();
        let second = drain.admit().unwrap();
        assert_eq!(drain.in_flight(), 2);
        drain.start();
        assert!(drain.admit().is_none());
        assert!(!drain.idle(Duration::from_millis(10)).await);
        drop(first);
        let waiting = tokio::spawn({
            let drain = drain.clone();
            async move { drain.idle(Duration::from_secs(10)).await }
        });
        drop(second);
        assert!(waiting.await.unwrap());
        assert_eq!(drain.in_flight(), 0);
    }
}
