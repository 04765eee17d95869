//! The per-call queue of guest events (log lines, progress) on their way to the
//! caller: bounded, whatever the guest sends and however slowly the caller reads.
//!
//! The guest side ([`EventSender::send`]) never waits. A progress report that
//! arrives while the previous one is still queued right behind it replaces it
//! (progress is a level, only its latest value matters); a log line that finds
//! [`QUEUED_LOG_LINES`] lines already queued is dropped and counted. So one call
//! holds at most `2 * QUEUED_LOG_LINES + 1` events, each within the call's byte
//! budgets (`max_log_bytes`, `max_progress_bytes`). The queue closes when the
//! sender is dropped, i.e. when the call's store is.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;

/// Something a guest reported during a call, for the caller.
#[derive(Debug, Clone, PartialEq)]
pub enum GuestEvent {
    Log {
        level: LogLevel,
        message: String,
    },
    Progress {
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    },
}

/// The level of a guest log line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum LogLevel {
    Trace,
    Debug,
    Info,
    Warn,
    Error,
}

/// Log lines one call's queue holds before it drops new ones.
pub const QUEUED_LOG_LINES: usize = 256;

#[derive(Default)]
struct Queue {
    events: VecDeque<GuestEvent>,
    queued_logs: usize,
    dropped_logs: usize,
    coalesced_progress: usize,
    closed: bool,
}

#[derive(Default)]
struct Shared {
    queue: Mutex<Queue>,
    ready: Notify,
}

/// Where a call's events go (the guest's side of the queue).
pub struct EventSender {
    shared: Arc<Shared>,
}

/// Where a call's events come from (the caller's side of the queue).
pub struct EventReceiver {
    shared: Arc<Shared>,
}

/// Nothing is queued right now (the queue may still be open).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Empty;

/// A new bounded event queue for one call.
pub fn event_channel() -> (EventSender, EventReceiver) {
    let shared = Arc::new(Shared::default());
    (
        EventSender {
            shared: shared.clone(),
        },
        EventReceiver { shared },
    )
}

impl EventSender {
    /// Queues `event` without waiting: progress coalesces with a progress report
    /// queued right before it, a log line over the bound is dropped.
    pub fn send(&self, event: GuestEvent) {
        let mut queue = self.shared.queue.lock().expect("event queue lock");
        match event {
            GuestEvent::Progress { .. } => {
                if let Some(last @ GuestEvent::Progress { .. }) = queue.events.back_mut() {
                    *last = event;
                    queue.coalesced_progress += 1;
                    return;
                }
                queue.events.push_back(event);
            }
            GuestEvent::Log { .. } => {
                if queue.queued_logs >= QUEUED_LOG_LINES {
                    queue.dropped_logs += 1;
                    return;
                }
                queue.queued_logs += 1;
                queue.events.push_back(event);
            }
        }
        drop(queue);
        self.shared.ready.notify_one();
    }

    /// Log lines dropped because the caller did not keep up, and progress reports
    /// replaced by a later one before they were sent.
    pub fn dropped(&self) -> (usize, usize) {
        let queue = self.shared.queue.lock().expect("event queue lock");
        (queue.dropped_logs, queue.coalesced_progress)
    }
}

impl Drop for EventSender {
    fn drop(&mut self) {
        let (dropped, coalesced) = {
            let mut queue = self.shared.queue.lock().expect("event queue lock");
            queue.closed = true;
            (queue.dropped_logs, queue.coalesced_progress)
        };
        if dropped > 0 {
            tracing::warn!(
                dropped,
                coalesced,
                "the caller did not keep up with the guest's log lines; some were not sent"
            );
        }
        self.shared.ready.notify_one();
    }
}

impl EventReceiver {
    /// The next event; `None` once the call ended and everything was received.
    pub async fn recv(&mut self) -> Option<GuestEvent> {
        loop {
            match self.try_recv() {
                Ok(event) => return Some(event),
                Err(Empty) if self.is_closed() => return None,
                Err(Empty) => self.shared.ready.notified().await,
            }
        }
    }

    /// The next event if one is queued.
    ///
    /// # Errors
    ///
    /// [`Empty`] when nothing is queued.
    pub fn try_recv(&mut self) -> Result<GuestEvent, Empty> {
        let mut queue = self.shared.queue.lock().expect("event queue lock");
        let event = queue.events.pop_front().ok_or(Empty)?;
        if matches!(event, GuestEvent::Log { .. }) {
            queue.queued_logs -= 1;
        }
        Ok(event)
    }

    fn is_closed(&self) -> bool {
        let queue = self.shared.queue.lock().expect("event queue lock");
        queue.closed && queue.events.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(n: usize) -> GuestEvent {
        GuestEvent::Log {
            level: LogLevel::Info,
            message: n.to_string(),
        }
    }

    fn step(progress: f64) -> GuestEvent {
        GuestEvent::Progress {
            progress,
            total: None,
            message: None,
        }
    }

    #[test]
    fn progress_right_behind_progress_keeps_the_latest_value_only() {
        let (sender, mut receiver) = event_channel();
        for n in 0..10_000 {
            sender.send(step(f64::from(n)));
        }
        sender.send(log(1));
        sender.send(step(1.0));
        assert_eq!(receiver.try_recv(), Ok(step(9_999.0)));
        assert_eq!(receiver.try_recv(), Ok(log(1)));
        assert_eq!(receiver.try_recv(), Ok(step(1.0)));
        assert_eq!(receiver.try_recv(), Err(Empty));
        assert_eq!(sender.dropped(), (0, 9_999));
    }

    #[test]
    fn log_lines_over_the_bound_are_dropped_and_counted() {
        let (sender, mut receiver) = event_channel();
        for n in 0..QUEUED_LOG_LINES + 10 {
            sender.send(log(n));
        }
        assert_eq!(sender.dropped(), (10, 0));
        assert_eq!(receiver.try_recv(), Ok(log(0)));
        // A line read makes room for one more.
        sender.send(log(7));
        assert_eq!(sender.dropped(), (10, 0));
    }

    #[tokio::test]
    async fn the_queue_ends_when_the_sender_is_dropped() {
        let (sender, mut receiver) = event_channel();
        let reader = tokio::spawn(async move {
            let mut seen = Vec::new();
            while let Some(event) = receiver.recv().await {
                seen.push(event);
            }
            seen
        });
        sender.send(log(1));
        tokio::task::yield_now().await;
        sender.send(log(2));
        drop(sender);
        let seen = reader.await.unwrap();
        assert_eq!(seen, vec![log(1), log(2)]);
    }
}
