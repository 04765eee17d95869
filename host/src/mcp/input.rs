//! How a tool's questions (`elicit`, `sample`, `list-roots`) reach an MCP
//! caller: the two [`Asker`]s of the runtime's `interaction` import.
//!
//! - A handshake-era session (2025-06-18, 2025-11-25; sampling and roots
//!   from 2024-11-05) is asked directly: [`Live`] sends `elicitation/create`,
//!   `sampling/createMessage` or `roots/list` to the client, marked as coming
//!   from the call's request so the Streamable HTTP transport writes it on the
//!   call's own stream, and the waiting guest gets the answer.
//! - A stateless caller (2026-07-28) cannot be asked mid-call. [`Replay`]
//!   answers each question the caller has already answered, in order, and
//!   suspends the call at the first new one; the handler then answers
//!   `input_required` with the question and a signed `requestState`
//!   ([`States`]). The retried request carries the answer, and a fresh
//!   instance runs the tool again from the start. No instance is held between
//!   rounds, and any replica sharing the store's signing key serves the retry.
//!
//! Either way a question the client did not declare the capability for
//! (`elicitation`, `sampling`, `roots`) is refused as `unsupported` without asking.
//!
//! The `requestState` is an HMAC-SHA256 token (rmcp's `RequestStateCodec`,
//! under a key derived from the store's signing key) over the answers so far
//! and the digest of the question now asked, bound to the caller's principal,
//! the tool and the digest of the arguments, and valid for [`STATE_TTL`]. A
//! state that was altered, has expired, or is sent by another principal or for
//! another tool or arguments is refused with `-32602` before the tool runs.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use rmcp::model::{
    ClientCapabilities, GetExtensions as _, RequestId, RequestStateCodec, SealOptions,
};
use rmcp::service::{OriginatingRequestId, Peer};
use rmcp::{ErrorData, RoleServer, ServiceError};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use crate::render::{Revision, input};
use crate::result::input::{InputRequest, InputRequired, Refusal, RefusalCode};
use crate::runtime::{Asked, Asker};

/// How long a `requestState` stays valid: the time a user has to answer.
pub const STATE_TTL: Duration = Duration::from_secs(15 * 60);

/// What the key of `requestState` tokens is derived for (see
/// `ResultStore::derived_key`).
pub const STATE_KEY_PURPOSE: &str = "mcp requestState v1";

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

/// The digest that identifies a question across rounds.
fn digest(request: &InputRequest) -> String {
    hex::encode(Sha256::digest(input::request_json(request).to_string()))
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
        request: &'a InputRequest,
    ) -> Pin<Box<dyn Future<Output = Asked> + Send + 'a>> {
        Box::pin(async move {
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
        })
    }
}

/// One answered question, as a `requestState` carries it.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct Answered {
    /// The digest of the question.
    q: String,
    /// The client's answer, as it sent it.
    a: Value,
}

/// The payload of a `requestState`.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
struct State {
    answers: Vec<Answered>,
    /// The key and digest of the question the state was issued with.
    key: String,
    q: String,
}

/// Seals and opens the `requestState` of a server.
pub struct States {
    codec: RequestStateCodec,
    ttl: Duration,
}

impl std::fmt::Debug for States {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("States { key: <hidden> }")
    }
}

/// The arguments of a call as a state binds them: their JSON text.
pub fn arguments_text(arguments: Option<&serde_json::Map<String, Value>>) -> String {
    arguments.map_or_else(|| "{}".to_owned(), |a| json!(a).to_string())
}

/// What a state is bound to: who calls which tool with which arguments.
pub struct Binding<'a> {
    pub principal: Option<&'a str>,
    pub tool: &'a str,
    /// The arguments as JSON text.
    pub arguments: &'a str,
}

impl Binding<'_> {
    fn associated_data(&self) -> Vec<u8> {
        let mut data = Vec::with_capacity(96);
        data.extend_from_slice(b"toolhost tools/call\0");
        match self.principal {
            Some(principal) => {
                data.push(1);
                data.extend_from_slice(principal.as_bytes());
            }
            None => data.push(0),
        }
        data.push(0);
        data.extend_from_slice(self.tool.as_bytes());
        data.push(0);
        data.extend_from_slice(&Sha256::digest(self.arguments.as_bytes()));
        data
    }
}

/// Why a retry's `requestState` or `inputResponses` were refused.
fn refused(message: &str) -> ErrorData {
    ErrorData::invalid_params(message.to_owned(), Some(json!({ "field": "requestState" })))
}

impl States {
    /// States under `key` (derived from the store's signing key, or random for
    /// a store without one: then only this process reads its states).
    pub fn new(key: [u8; 32]) -> States {
        States::with_ttl(key, STATE_TTL)
    }

    /// [`States::new`] whose states expire after `ttl`.
    pub fn with_ttl(key: [u8; 32], ttl: Duration) -> States {
        States {
            codec: RequestStateCodec::try_new(key.to_vec())
                .expect("a key of 32 bytes is long enough"),
            ttl,
        }
    }

    /// The replay of a call's retry: the answers of the `state` it sent, once
    /// verified for its binding, plus the one `responses` gives for the
    /// question the state was issued with. A first call (neither given)
    /// replays nothing.
    ///
    /// # Errors
    ///
    /// `-32602` when `responses` come without a state, or the state does not
    /// verify for the binding (altered, expired, another caller's, tool's or
    /// arguments').
    pub fn replay(
        &self,
        state: Option<(&str, &Binding<'_>)>,
        responses: Option<&BTreeMap<String, Value>>,
        capabilities: Option<ClientCapabilities>,
    ) -> Result<Replay, ErrorData> {
        let Some((state, binding)) = state else {
            if responses.is_some_and(|r| !r.is_empty()) {
                return Err(refused(
                    "inputResponses came without the requestState of the question they answer",
                ));
            }
            return Ok(Replay::new(Vec::new(), capabilities));
        };
        let opened: State = self
            .codec
            .open_json_with(state, &binding.associated_data())
            .map_err(|e| {
                tracing::info!(error.type = "request_state_refused", reason = %e, "a requestState did not verify");
                refused(
                    "the requestState is not valid for this call: it was altered, has expired, or belongs to another caller, tool or arguments",
                )
            })?;
        let mut answers = opened.answers;
        // A missing answer asks the same question again (SEP-2322).
        if let Some(answer) = responses.and_then(|r| r.get(&opened.key)) {
            answers.push(Answered {
                q: opened.q,
                a: answer.clone(),
            });
        }
        Ok(Replay::new(answers, capabilities))
    }

    /// The `input_required` answer of a call that stopped at `request`, its
    /// state carrying `replay`'s answers.
    pub fn input_required(
        &self,
        replay: &Replay,
        request: InputRequest,
        binding: &Binding<'_>,
    ) -> InputRequired {
        let round = replay.answers.len() + 1;
        let key = format!("{}-{round}", request.capability());
        let state = State {
            answers: replay.answers.clone(),
            key: key.clone(),
            q: digest(&request),
        };
        let data = binding.associated_data();
        let payload = serde_json::to_vec(&state).expect("a state serializes");
        let state = self.codec.seal_with(
            &payload,
            &SealOptions::new().associated_data(&data).ttl(self.ttl),
        );
        InputRequired {
            key,
            request,
            state,
        }
    }
}

/// Answers a stateless caller's questions from its earlier answers, and
/// suspends the call at the first question it has not answered.
pub struct Replay {
    answers: Vec<Answered>,
    next: AtomicUsize,
    /// What the request's `_meta` declared.
    capabilities: Option<ClientCapabilities>,
}

impl Replay {
    fn new(answers: Vec<Answered>, capabilities: Option<ClientCapabilities>) -> Replay {
        Replay {
            answers,
            next: AtomicUsize::new(0),
            capabilities,
        }
    }
}

impl Asker for Replay {
    fn ask<'a>(
        &'a self,
        request: &'a InputRequest,
    ) -> Pin<Box<dyn Future<Output = Asked> + Send + 'a>> {
        Box::pin(async move {
            if !declared(self.capabilities.as_ref(), request) {
                return undeclared(request.capability());
            }
            let at = self.next.fetch_add(1, Ordering::Relaxed);
            let Some(answered) = self.answers.get(at) else {
                return Asked::Suspend;
            };
            if answered.q != digest(request) {
                return Asked::Refused(Refusal::new(
                    RefusalCode::Failed,
                    format!(
                        "question {} differs from the one the caller answered: a tool must ask the same questions in the same order when it runs again",
                        at + 1
                    ),
                ));
            }
            match input::answer(request, &answered.a) {
                Ok(answer) => Asked::Answer(answer),
                Err(why) => Asked::Refused(Refusal::new(RefusalCode::Failed, why)),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::input::{ElicitAnswer, ElicitRequest, InputAnswer};

    fn question(message: &str) -> InputRequest {
        InputRequest::Elicit(ElicitRequest {
            message: message.into(),
            schema: json!({"type": "object", "properties": {"ok": {"type": "boolean"}}})
                .as_object()
                .cloned()
                .unwrap(),
        })
    }

    fn binding<'a>(principal: Option<&'a str>, arguments: &'a str) -> Binding<'a> {
        Binding {
            principal,
            tool: "demo__ask",
            arguments,
        }
    }

    fn caps() -> Option<ClientCapabilities> {
        serde_json::from_value(json!({"elicitation": {}})).ok()
    }

    #[tokio::test]
    async fn a_state_replays_its_answers_and_refuses_any_other_binding() {
        let states = States::new([7; 32]);
        let me = binding(Some("alice"), r#"{"n":1}"#);
        let first = states.replay(None, None, caps()).unwrap();
        assert_eq!(first.ask(&question("sure?")).await, Asked::Suspend);
        let required = states.input_required(&first, question("sure?"), &me);
        assert_eq!(required.key, "elicitation-1");

        let mut responses = BTreeMap::new();
        responses.insert(
            required.key.clone(),
            json!({"action": "accept", "content": {"ok": true}}),
        );
        let second = states
            .replay(Some((&required.state, &me)), Some(&responses), caps())
            .unwrap();
        assert_eq!(
            second.ask(&question("sure?")).await,
            Asked::Answer(InputAnswer::Elicit(ElicitAnswer::Accept(
                json!({"ok": true}).as_object().cloned().unwrap()
            )))
        );
        assert_eq!(second.ask(&question("really?")).await, Asked::Suspend);

        // Another principal, other arguments, another tool, a changed token:
        // all refused before anything runs.
        for other in [
            binding(Some("mallory"), r#"{"n":1}"#),
            binding(None, r#"{"n":1}"#),
            binding(Some("alice"), r#"{"n":2}"#),
            Binding {
                tool: "demo__other",
                ..binding(Some("alice"), r#"{"n":1}"#)
            },
        ] {
            let refused = states.replay(Some((&required.state, &other)), Some(&responses), caps());
            assert!(refused.is_err(), "a state verified for another binding");
        }
        let mut forged = required.state.clone();
        forged.insert(forged.len() / 2, 'x');
        assert!(
            states
                .replay(Some((&forged, &me)), Some(&responses), caps())
                .is_err()
        );
        let other_key = States::new([8; 32]);
        assert!(
            other_key
                .replay(Some((&required.state, &me)), Some(&responses), caps())
                .is_err()
        );
        // Answers without a state are refused; a question the caller answered
        // differently-worded is refused to the guest, not answered.
        assert!(states.replay(None, Some(&responses), caps()).is_err());
        let third = states
            .replay(Some((&required.state, &me)), Some(&responses), caps())
            .unwrap();
        assert!(matches!(
            third.ask(&question("something else?")).await,
            Asked::Refused(Refusal {
                code: RefusalCode::Failed,
                ..
            })
        ));
    }

    #[tokio::test]
    async fn a_stale_state_is_refused() {
        let states = States::with_ttl([7; 32], Duration::from_secs(1));
        let me = binding(None, "{}");
        let replay = states.replay(None, None, caps()).unwrap();
        let required = states.input_required(&replay, question("q"), &me);
        assert!(
            states
                .replay(Some((&required.state, &me)), None, caps())
                .is_ok()
        );
        tokio::time::sleep(Duration::from_millis(2100)).await;
        assert!(
            states
                .replay(Some((&required.state, &me)), None, caps())
                .is_err()
        );
    }

    #[tokio::test]
    async fn a_client_without_the_capability_is_not_asked() {
        let states = States::new([7; 32]);
        let replay = states.replay(None, None, None).unwrap();
        assert!(matches!(
            replay.ask(&question("q")).await,
            Asked::Refused(Refusal {
                code: RefusalCode::Unsupported,
                ..
            })
        ));
    }
}
