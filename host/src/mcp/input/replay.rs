//! The stateless side of a question (2026-07-28): the signed `requestState`
//! ([`States`]), what it is bound to ([`Binding`]), and the [`Replay`] that
//! answers a retried request's questions from the answers its caller sent.

use std::collections::BTreeMap;
use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{ClientCapabilities, RequestStateCodec, SealOptions};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use sha2::{Digest as _, Sha256};

use super::{declared, undeclared};
use crate::render::input;
use crate::result::input::{InputAnswer, InputRequest, InputRequired, Question};
use crate::runtime::{Asked, Asker};

/// How long a `requestState` stays valid: the time a user has to answer.
pub const STATE_TTL: Duration = Duration::from_secs(15 * 60);

/// What the key of `requestState` tokens is derived for (see
/// `ResultStore::derived_key`).
pub const STATE_KEY_PURPOSE: &str = "mcp requestState v2";

/// The digest that identifies a question across rounds.
fn digest(request: &InputRequest) -> String {
    hex::encode(Sha256::digest(input::request_json(request).to_string()))
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
    /// The answers so far, under their questions' keys.
    answers: BTreeMap<String, Answered>,
    /// The questions the state was issued with: their keys and digests.
    asked: BTreeMap<String, String>,
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

/// What a state is bound to: who sends which request (`tools/call`,
/// `prompts/get`, `resources/read`) about which tool, prompt or resource, with
/// which arguments.
pub struct Binding<'a> {
    pub principal: Option<&'a str>,
    pub method: &'a str,
    /// The tool's or prompt's public name, or the resource's URI.
    pub name: &'a str,
    /// The arguments as JSON text.
    pub arguments: &'a str,
}

impl Binding<'_> {
    fn associated_data(&self) -> Vec<u8> {
        let mut data = Vec::with_capacity(96);
        data.extend_from_slice(b"toolhost ");
        data.extend_from_slice(self.method.as_bytes());
        data.push(0);
        match self.principal {
            Some(principal) => {
                data.push(1);
                data.extend_from_slice(principal.as_bytes());
            }
            None => data.push(0),
        }
        data.push(0);
        data.extend_from_slice(self.name.as_bytes());
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
    /// verified for its binding, with those `responses` gives for the
    /// questions the state was issued with. Any other response (all of them,
    /// when no state came) is matched by key to the question the tool asks
    /// and used if it fits; one that fits no question is ignored. A first
    /// call replays nothing.
    ///
    /// # Errors
    ///
    /// `-32602` when the state does not verify for the binding (altered,
    /// expired, another caller's, tool's or arguments').
    pub fn replay(
        &self,
        state: Option<(&str, &Binding<'_>)>,
        responses: Option<&BTreeMap<String, Value>>,
        capabilities: Option<ClientCapabilities>,
    ) -> Result<Replay, ErrorData> {
        let mut replay = Replay::new(capabilities);
        let asked = match state {
            Some((state, binding)) => {
                let opened: State = self
                    .codec
                    .open_json_with(state, &binding.associated_data())
                    .map_err(|e| {
                        tracing::info!(error.type = "request_state_refused", reason = %e, "a requestState did not verify");
                        refused(
                            "the requestState is not valid for this call: it was altered, has expired, or belongs to another caller, tool or arguments",
                        )
                    })?;
                replay.answered = opened.answers;
                opened.asked
            }
            None => BTreeMap::new(),
        };
        for (key, answer) in responses.into_iter().flatten() {
            match asked.get(key) {
                Some(q) => {
                    let answered = Answered {
                        q: q.clone(),
                        a: answer.clone(),
                    };
                    replay.answered.insert(key.clone(), answered);
                }
                None => {
                    replay.loose.insert(key.clone(), answer.clone());
                }
            }
        }
        Ok(replay)
    }

    /// The `input_required` answer of a call that stopped at `questions`, its
    /// state carrying the answers `replay` gave the tool.
    pub fn input_required(
        &self,
        replay: &Replay,
        questions: Vec<Question>,
        binding: &Binding<'_>,
    ) -> InputRequired {
        let state = State {
            answers: replay.used.lock().expect("replay lock").clone(),
            asked: questions
                .iter()
                .map(|question| (question.key.clone(), digest(&question.request)))
                .collect(),
        };
        let data = binding.associated_data();
        let payload = serde_json::to_vec(&state).expect("a state serializes");
        let state = self.codec.seal_with(
            &payload,
            &SealOptions::new().associated_data(&data).ttl(self.ttl),
        );
        InputRequired { questions, state }
    }
}

/// Answers a stateless caller's questions from the answers it sent, and
/// suspends the call at the first batch with a question it has not answered.
pub struct Replay {
    /// Answers to questions the caller was asked, under their keys.
    answered: BTreeMap<String, Answered>,
    /// Answers under keys no state asked: used when they fit the question.
    loose: BTreeMap<String, Value>,
    /// The answers the tool got, for the state of the next round.
    used: Mutex<BTreeMap<String, Answered>>,
    /// What the request's `_meta` declared.
    capabilities: Option<ClientCapabilities>,
}

impl Replay {
    fn new(capabilities: Option<ClientCapabilities>) -> Replay {
        Replay {
            answered: BTreeMap::new(),
            loose: BTreeMap::new(),
            used: Mutex::new(BTreeMap::new()),
            capabilities,
        }
    }

    /// The caller's answer to `question`: the one it gave to this very
    /// question, or else one under its key that fits it.
    fn recall(&self, question: &Question) -> Option<InputAnswer> {
        let q = digest(&question.request);
        let asked = self
            .answered
            .get(&question.key)
            .filter(|answered| answered.q == q)
            .map(|answered| &answered.a);
        for sent in asked.into_iter().chain(self.loose.get(&question.key)) {
            match input::answer(&question.request, sent) {
                Ok(answer) => {
                    let answered = Answered { q, a: sent.clone() };
                    let mut used = self.used.lock().expect("replay lock");
                    used.insert(question.key.clone(), answered);
                    return Some(answer);
                }
                Err(why) => {
                    tracing::info!(key = %question.key, error.type = "input_answer_unfit", "{why}; the question is asked again");
                }
            }
        }
        None
    }
}

impl Asker for Replay {
    fn ask<'a>(
        &'a self,
        questions: &'a [Question],
    ) -> Pin<Box<dyn Future<Output = Vec<Asked>> + Send + 'a>> {
        Box::pin(async move {
            questions
                .iter()
                .map(|question| {
                    if !declared(self.capabilities.as_ref(), &question.request) {
                        return undeclared(question.request.capability());
                    }
                    match self.recall(question) {
                        Some(answer) => Asked::Answer(answer),
                        None => Asked::Suspend,
                    }
                })
                .collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::input::{ElicitAnswer, ElicitRequest, Refusal, RefusalCode};

    fn form(message: &str) -> InputRequest {
        InputRequest::Elicit(ElicitRequest {
            message: message.into(),
            schema: json!({"type": "object", "properties": {"ok": {"type": "boolean"}}})
                .as_object()
                .cloned()
                .unwrap(),
        })
    }

    fn question(key: &str, message: &str) -> Question {
        Question {
            key: key.into(),
            request: form(message),
        }
    }

    fn yes() -> Value {
        json!({"action": "accept", "content": {"ok": true}})
    }

    fn accepted() -> Asked {
        Asked::Answer(InputAnswer::Elicit(ElicitAnswer::Accept(
            json!({"ok": true}).as_object().cloned().unwrap(),
        )))
    }

    fn binding<'a>(principal: Option<&'a str>, arguments: &'a str) -> Binding<'a> {
        Binding {
            principal,
            method: "tools/call",
            name: "demo__ask",
            arguments,
        }
    }

    fn caps() -> Option<ClientCapabilities> {
        serde_json::from_value(json!({"elicitation": {}, "sampling": {}, "roots": {}})).ok()
    }

    fn responses(pairs: &[(&str, Value)]) -> BTreeMap<String, Value> {
        pairs
            .iter()
            .map(|(key, value)| ((*key).to_owned(), value.clone()))
            .collect()
    }

    #[tokio::test]
    async fn a_state_replays_its_answers_and_refuses_any_other_binding() {
        let states = States::new([7; 32]);
        let me = binding(Some("alice"), r#"{"n":1}"#);
        let first = states.replay(None, None, caps()).unwrap();
        let sure = question("elicitation-1", "sure?");
        assert_eq!(
            first.ask(std::slice::from_ref(&sure)).await,
            vec![Asked::Suspend]
        );
        let required = states.input_required(&first, vec![sure.clone()], &me);
        assert_eq!(required.questions, vec![sure.clone()]);

        let answers = responses(&[("elicitation-1", yes())]);
        let second = states
            .replay(Some((&required.state, &me)), Some(&answers), caps())
            .unwrap();
        assert_eq!(
            second.ask(std::slice::from_ref(&sure)).await,
            vec![accepted()]
        );
        let really = question("elicitation-2", "really?");
        assert_eq!(
            second.ask(std::slice::from_ref(&really)).await,
            vec![Asked::Suspend]
        );

        // Round three: the state carries round one's answer, the retry round two's.
        let required = states.input_required(&second, vec![really.clone()], &me);
        let third = states
            .replay(
                Some((&required.state, &me)),
                Some(&responses(&[("elicitation-2", yes())])),
                caps(),
            )
            .unwrap();
        assert_eq!(
            third.ask(std::slice::from_ref(&sure)).await,
            vec![accepted()]
        );
        assert_eq!(third.ask(&[really]).await, vec![accepted()]);

        // Another principal, other arguments, another tool, a changed token,
        // another server's key: all refused before anything runs.
        for other in [
            binding(Some("mallory"), r#"{"n":1}"#),
            binding(None, r#"{"n":1}"#),
            binding(Some("alice"), r#"{"n":2}"#),
            Binding {
                name: "demo__other",
                ..binding(Some("alice"), r#"{"n":1}"#)
            },
            Binding {
                method: "prompts/get",
                ..binding(Some("alice"), r#"{"n":1}"#)
            },
        ] {
            let refused = states.replay(Some((&required.state, &other)), Some(&answers), caps());
            assert!(refused.is_err(), "a state verified for another binding");
        }
        let mut forged = required.state.clone();
        forged.insert(forged.len() / 2, 'x');
        assert!(
            states
                .replay(Some((&forged, &me)), Some(&answers), caps())
                .is_err()
        );
        let other_key = States::new([8; 32]);
        assert!(
            other_key
                .replay(Some((&required.state, &me)), Some(&answers), caps())
                .is_err()
        );
    }

    #[tokio::test]
    async fn an_answer_counts_only_for_the_question_it_answered() {
        let states = States::new([7; 32]);
        let me = binding(None, "{}");
        let first = states.replay(None, None, caps()).unwrap();
        let required = states.input_required(&first, vec![question("go", "delete the file?")], &me);
        let retry = states
            .replay(
                Some((&required.state, &me)),
                Some(&responses(&[("go", yes())])),
                caps(),
            )
            .unwrap();
        // The tool, run again, asks something else under the same key: the
        // answer to the first question does not count for it.
        assert_eq!(
            retry.ask(&[question("go", "delete the directory?")]).await,
            vec![Asked::Suspend]
        );
    }

    #[tokio::test]
    async fn a_batch_is_answered_in_one_round_and_what_is_missing_is_asked_again() {
        let states = States::new([7; 32]);
        let me = binding(None, "{}");
        let batch = vec![
            question("user_name", "name?"),
            Question {
                key: "capital".into(),
                request: InputRequest::Sample(crate::result::input::SampleRequest {
                    messages: vec![crate::result::input::SampleMessage {
                        role: crate::result::Role::User,
                        content: crate::result::ContentPart::Text {
                            text: "Capital of France?".into(),
                            mime: None,
                        },
                    }],
                    system_prompt: None,
                    preferences: None,
                    max_tokens: 20,
                    temperature: None,
                    stop_sequences: Vec::new(),
                }),
            },
            Question {
                key: "roots".into(),
                request: InputRequest::ListRoots,
            },
        ];
        let first = states.replay(None, None, caps()).unwrap();
        assert_eq!(first.ask(&batch).await, vec![Asked::Suspend; 3]);
        let required = states.input_required(&first, batch.clone(), &me);

        // Two of three answered, plus a key nobody asked: the missing one is
        // asked again, the extra one ignored.
        let sampled = json!({"role": "assistant", "content": {"type": "text", "text": "Paris"}, "model": "m"});
        let some = responses(&[
            ("user_name", yes()),
            ("capital", sampled),
            ("unknown_extra_key", yes()),
        ]);
        let second = states
            .replay(Some((&required.state, &me)), Some(&some), caps())
            .unwrap();
        let outcomes = second.ask(&batch).await;
        assert_eq!(outcomes[0], accepted());
        assert!(matches!(outcomes[1], Asked::Answer(InputAnswer::Sample(_))));
        assert_eq!(outcomes[2], Asked::Suspend);

        // The next round needs only the missing answer.
        let required = states.input_required(&second, vec![batch[2].clone()], &me);
        let third = states
            .replay(
                Some((&required.state, &me)),
                Some(&responses(&[("roots", json!({"roots": []}))])),
                caps(),
            )
            .unwrap();
        let outcomes = third.ask(&batch).await;
        assert!(
            outcomes.iter().all(|o| matches!(o, Asked::Answer(_))),
            "{outcomes:?}"
        );
    }

    #[tokio::test]
    async fn answers_without_a_state_are_matched_by_key_and_must_fit() {
        let states = States::new([7; 32]);
        let name = question("user_name", "name?");
        let fitting = responses(&[("user_name", yes()), ("another_unexpected", json!(1))]);
        let replay = states.replay(None, Some(&fitting), caps()).unwrap();
        assert_eq!(
            replay.ask(std::slice::from_ref(&name)).await,
            vec![accepted()]
        );

        // An answer of the wrong shape, or one that breaks the form, is
        // asked for again rather than failing the call.
        for unfit in [
            json!(12345),
            json!({"action": "accept", "content": {"ok": "yes"}}),
        ] {
            let sent = responses(&[("user_name", unfit.clone())]);
            let replay = states.replay(None, Some(&sent), caps()).unwrap();
            assert_eq!(
                replay.ask(std::slice::from_ref(&name)).await,
                vec![Asked::Suspend],
                "{unfit}"
            );
        }
        // An answer under another key answers nothing.
        let wrong = responses(&[("wrong_key", yes())]);
        let replay = states.replay(None, Some(&wrong), caps()).unwrap();
        assert_eq!(replay.ask(&[name]).await, vec![Asked::Suspend]);
    }

    #[tokio::test]
    async fn a_stale_state_is_refused() {
        let states = States::with_ttl([7; 32], Duration::from_secs(1));
        let me = binding(None, "{}");
        let replay = states.replay(None, None, caps()).unwrap();
        let required = states.input_required(&replay, vec![question("q", "q")], &me);
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
            replay.ask(&[question("q", "q")]).await[..],
            [Asked::Refused(Refusal {
                code: RefusalCode::Unsupported,
                ..
            })]
        ));
    }
}
