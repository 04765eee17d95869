//! A call's guest events (progress, log lines) on their way to the caller, while
//! the call runs.
//!
//! Progress becomes `notifications/progress` for a caller that sent a progress
//! token; a log line becomes `notifications/message` at or above the level the
//! caller set (`logging/setLevel` in a session, the request's `_meta` on
//! 2026-07-28). They go out through the caller's peer (stdio, and rmcp's
//! per-request streams of 2026-07-28), or, for a call in a handshake-era HTTP
//! session, through the call's own outlet ([`super::call_stream`]), so that
//! they reach the call's response stream rather than the session's GET stream.

#![allow(deprecated)] // rmcp marks the logging types deprecated (SEP-2577); MCP still has them.

use rmcp::model::{
    LoggingLevel, LoggingMessageNotificationParam, Notification, ProgressNotificationParam,
    ProgressToken, ServerJsonRpcMessage, ServerNotification,
};
use rmcp::{Peer, RoleServer};
use serde_json::json;
use tokio::task::JoinHandle;

use super::call_stream::CallOutlet;
use crate::runtime::{EventSender, GuestEvent, LogLevel, event_channel};

/// Where a call's notifications go.
pub enum Outlet {
    /// The caller's peer: rmcp routes them.
    Peer(Peer<RoleServer>),
    /// The call's own response stream in a handshake-era HTTP session.
    Stream(CallOutlet),
}

impl Outlet {
    async fn send(&self, notification: ServerNotification) {
        match self {
            Outlet::Peer(peer) => {
                let _ = peer.send_notification(notification).await;
            }
            Outlet::Stream(outlet) => {
                let _ = outlet
                    .send(&ServerJsonRpcMessage::notification(notification))
                    .await;
            }
        }
    }
}

/// Starts the task that sends a call's guest events to the caller while the
/// call runs; the call's response waits for it, so every event goes out before
/// the response. The queue between is bounded per call: while the caller is
/// slow, progress coalesces to its latest value and log lines over the bound
/// are dropped (see `runtime::event_channel`).
///
/// `None` when the caller asked for neither (no progress token, no log level):
/// nothing would be sent, so there is no queue and no task. The guest's events
/// still count against its budgets and reach the host's log.
pub fn forward(
    outlet: Outlet,
    progress_token: Option<ProgressToken>,
    log_level: Option<LoggingLevel>,
) -> Option<(EventSender, JoinHandle<()>)> {
    if progress_token.is_none() && log_level.is_none() {
        return None;
    }
    let (events, mut received) = event_channel();
    let forward = tokio::spawn(async move {
        while let Some(event) = received.recv().await {
            match event {
                GuestEvent::Progress {
                    progress,
                    total,
                    message,
                } => {
                    if let Some(token) = &progress_token {
                        let mut param = ProgressNotificationParam::new(token.clone(), progress);
                        if let Some(total) = total {
                            param = param.with_total(total);
                        }
                        if let Some(message) = message {
                            param = param.with_message(message);
                        }
                        outlet
                            .send(ServerNotification::ProgressNotification(Notification::new(
                                param,
                            )))
                            .await;
                    }
                }
                GuestEvent::Log { level, message } => {
                    let level = wire_level(level);
                    if log_level.is_some_and(|min| rank(level) >= rank(min)) {
                        let param = LoggingMessageNotificationParam::new(level, json!(message))
                            .with_logger("toolhost");
                        outlet
                            .send(ServerNotification::LoggingMessageNotification(
                                Notification::new(param),
                            ))
                            .await;
                    }
                }
            }
        }
    });
    Some((events, forward))
}

fn rank(level: LoggingLevel) -> u8 {
    match level {
        LoggingLevel::Debug => 0,
        LoggingLevel::Info => 1,
        LoggingLevel::Notice => 2,
        LoggingLevel::Warning => 3,
        LoggingLevel::Error => 4,
        LoggingLevel::Critical => 5,
        LoggingLevel::Alert => 6,
        LoggingLevel::Emergency => 7,
    }
}

fn wire_level(level: LogLevel) -> LoggingLevel {
    match level {
        LogLevel::Trace | LogLevel::Debug => LoggingLevel::Debug,
        LogLevel::Info => LoggingLevel::Info,
        LogLevel::Warn => LoggingLevel::Warning,
        LogLevel::Error => LoggingLevel::Error,
    }
}
