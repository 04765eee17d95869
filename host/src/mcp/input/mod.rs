//! How a tool's questions (`elicit`, `sample`, `list-roots`, a batch of
//! them with `ask`) reach an MCP caller: the two [`Asker`]s of the runtime's
//! `interaction` import.
//!
//! - A handshake-era session (2025-06-18, 2025-11-25; sampling and roots
//!   from 2024-11-05) is asked directly: [`Live`] sends `elicitation/create`,
//!   `sampling/createMessage` or `roots/list` to the client, one question of
//!   a batch after another, marked as coming from the call's request so the
//!   Streamable HTTP transport writes them on the call's own stream, and the
//!   waiting guest gets the answers.
//! - A stateless caller (2026-07-28) cannot be asked mid-call. [`Replay`]
//!   answers each question from the answers the caller sent, by the
//!   question's key, and suspends the call at the first batch with a
//!   question it has no fitting answer to; the handler then answers
//!   `input_required` with those questions under their keys and a signed
//!   `requestState` ([`States`]). The retried request carries the answers,
//!   and a fresh instance runs the tool again from the start. No instance is
//!   held between rounds, and any replica sharing the store's signing key
//!   serves the retry.
//!
//! Either way a question the client did not declare the capability for
//! (`elicitation`, `sampling`, `roots`) is refused as `unsupported` without asking.
//!
//! The `requestState` is an HMAC-SHA256 token (rmcp's `RequestStateCodec`,
//! under a key derived from the store's signing key) over the answers so far
//! and the keys and digests of the questions now asked, bound to the caller's
//! principal, the method, the tool, prompt or resource, and the digest of the
//! arguments ([`Binding`]), and valid for [`STATE_TTL`]. A state that was
//! altered, has expired, or is sent by another principal or for another
//! method, target or arguments is refused with `-32602` before the guest
//! runs. An answer the state vouches for counts only for the very
//! question it answered (same digest). Answers under other keys, or sent
//! without any state, are matched to the question asked under that key and
//! used when they fit it; that trusts the caller no more than a state does,
//! since the caller writes every answer either way. An answer that does not
//! fit is not an error: the question is asked again (SEP-2322).
//!
//! This module holds what both share and [`Live`]; [`replay`] holds the
//! stateless side: [`States`], [`Binding`] and [`Replay`].

use std::future::Future;
use std::pin::Pin;

use rmcp::model::{ClientCapabilities, GetExtensions as _, RequestId};
use rmcp::service::{OriginatingRequestId, Peer};
use rmcp::{RoleServer, ServiceError};

use crate::render::{Revision, input};
use crate::result::input::{InputRequest, Question, Refusal, RefusalCode};
use crate::runtime::{Asked, Asker};

mod replay;
pub use replay::{Binding, Replay, STATE_KEY_PURPOSE, STATE_TTL, States, arguments_text};

/// Whether the client declared the capability `request` needs.
fn declared(capabilities: Option<&ClientCapabilities>, request: &InputRequest) -> bool {
    capabilities.is_some_and(|caps| match request {
        InputRequest::Elicit(_) => caps.elicitation.is_some(),
        InputRequest::Sample(_) => caps.sampling.is_some(),
        InputRequest::ListRoots => caps.roots.is_some(),
    })
}

fn undeclared(capability: &str) -> Asked {
    Asked::Refused(Refusal::new(
        RefusalCode::Unsupported,
        format!("the client did not declare the `{capability}` capability, so it cannot be asked"),
    ))
}

/// Asks a handshake-era client on the call's stream and waits for its answer.
pub struct Live {
    pub peer: Peer<RoleServer>,
    /// The `tools/call` request the questions come from.
    pub origin: RequestId,
    pub revision: Revision,
}

impl Asker for Live {
    fn ask<'a>(
        &'a self,
        questions: &'a [Question],
    ) -> Pin<Box<dyn Future<Output = Vec<Asked>> + Send + 'a>> {
        Box::pin(async move {
            // One after another, as a user would answer them.
            let mut outcomes = Vec::with_capacity(questions.len());
            for question in questions {
                outcomes.push(self.put(&question.request).await);
            }
            outcomes
        })
    }
}

impl Live {
    /// Puts one question to the client and waits for its answer.
    async fn put(&self, request: &InputRequest) -> Asked {
        if matches!(request, InputRequest::Elicit(_)) && !self.revision.has_elicitation() {
            return Asked::Refused(Refusal::new(
                RefusalCode::Unsupported,
                format!(
                    "MCP {} has no elicitation; the client would need 2025-06-18 or later",
                    self.revision
                ),
            ));
        }
        // What the client declared at `initialize`.
        let info = self.peer.peer_info();
        if !declared(info.as_ref().map(|info| &info.capabilities), request) {
            return undeclared(request.capability());
        }
        let mut wire = match input::server_request(request) {
            Ok(wire) => wire,
            Err(why) => return Asked::Refused(Refusal::new(RefusalCode::InvalidRequest, why)),
        };
        wire.extensions_mut()
            .insert(OriginatingRequestId(self.origin.clone()));
        let failed = |why: String| Asked::Refused(Refusal::new(RefusalCode::Failed, why));
        match self.peer.send_request(wire).await {
            Ok(result) => {
                let answer = serde_json::to_value(result).unwrap_or_default();
                match input::answer(request, &answer) {
                    Ok(answer) => Asked::Answer(answer),
                    Err(why) => failed(why),
                }
            }
            Err(ServiceError::McpError(error)) => failed(format!(
                "the client answered {} with an error: {}",
                input::method(request),
                error.message
            )),
            Err(error) => failed(format!(
                "the client did not answer {}: {error}",
                input::method(request)
            )),
        }
    }
}
