//! The `interaction` import: the questions a guest puts to its caller during a
//! call (`elicit`, `sample`, `list-roots`, or a batch of them under keys the
//! guest names with `ask`), and the [`Asker`] through which they reach it.
//!
//! The runtime knows nothing of protocols. It checks a question (a requested
//! schema that is a JSON object, sampling messages of text, images or audio),
//! counts it against the call's budget (`max_input_requests`) and hands it to
//! the call's [`Asker`], which the edge provides: one that asks a handshake-era
//! client on the call's stream and waits, or one that replays a stateless
//! caller's recorded answers. A call without an asker (an A2A or app target, a
//! prompt) has every question refused as `unsupported`.
//!
//! An asker may also answer [`Asked::Suspend`]: the caller is to be asked
//! later, outside this instance. The import then traps with [`Suspended`], the
//! instance ends, and the call comes back as [`super::Called::Asking`] with the
//! question; nothing of the instance is kept.
//!
//! Budget: at most `max_input_requests` questions per call, each question of
//! a batch counted; the next one is refused as `over-budget` and the call ends
//! as `resource_limit` whatever the guest returns. A batch longer than the
//! highest budget ends the call before any of it is converted. A key names one
//! question of a call: a repeated or malformed one is refused as
//! `invalid-request`. The time a caller takes to answer counts against the call's
//! deadline, so no instance waits on a user for longer than `timeout_ms`.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use serde_json::{Map, Value};

use super::bindings::v0_1::plugin::toolhost::plugin::types::ContentPart as WitPart;
use super::bindings::v0_2::full::toolhost::plugin::interaction as wit;
use super::state::CallState;
use crate::result::input::{
    ElicitAnswer, ElicitRequest, InputAnswer, InputRequest, ModelPreferences, Question, Refusal,
    RefusalCode, SampleAnswer, SampleMessage, SampleRequest,
};
use crate::result::{ContentPart, Role};

/// The most bytes of JSON text a requested schema may have.
pub const MAX_SCHEMA_BYTES: usize = 64 * 1024;

/// What an [`Asker`] made of a question.
#[derive(Debug, Clone, PartialEq)]
pub enum Asked {
    /// The caller's answer.
    Answer(InputAnswer),
    /// The question was not put, or got no usable answer.
    Refused(Refusal),
    /// The caller is to be asked outside this instance: end the call with
    /// the question (and the others of its batch that are to be asked too).
    Suspend,
}

/// Whom a call's questions reach: provided by the edge for one call.
pub trait Asker: Send + Sync {
    /// Puts a batch of `questions` to the caller; what became of each, in
    /// their order.
    fn ask<'a>(
        &'a self,
        questions: &'a [Question],
    ) -> Pin<Box<dyn Future<Output = Vec<Asked>> + Send + 'a>>;
}

/// The trap that ends an instance whose question is to be asked outside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Suspended;

impl std::fmt::Display for Suspended {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the call stopped to ask its caller a question")
    }
}

impl std::error::Error for Suspended {}

/// Where one call's events go and whom its questions reach.
#[derive(Default)]
pub struct CallIo {
    pub events: Option<super::EventSender>,
    pub asker: Option<Arc<dyn Asker>>,
}

impl CallIo {
    /// Events only: every question is refused as `unsupported`.
    pub fn events(events: Option<super::EventSender>) -> Self {
        CallIo {
            events,
            asker: None,
        }
    }
}

/// One question of a guest's batch under its key, or why it is not put.
type Entry = (String, Result<InputRequest, Refusal>);

impl CallState {
    /// Checks each key of `batch`, counts its questions against the budget,
    /// and puts the usable ones to the call's asker; an answer or a refusal
    /// for each, in order.
    ///
    /// # Errors
    ///
    /// The [`Suspended`] trap when the asker is to ask outside the instance.
    /// (A batch longer than any call may ask never gets here: `ask` ends the
    /// call before converting it.)
    async fn ask_batch(
        &mut self,
        batch: Vec<Entry>,
    ) -> wasmtime::Result<Vec<Result<InputAnswer, Refusal>>> {
        let budget = self.budgets.input_requests;
        let mut answers: Vec<Option<Result<InputAnswer, Refusal>>> =
            Vec::with_capacity(batch.len());
        let mut asked = Vec::with_capacity(batch.len());
        for (key, request) in batch {
            self.questions += 1;
            let checked = request.and_then(|request| {
                if self.questions > budget {
                    self.hit(
                        "max_input_requests",
                        format!("the guest asked its caller more than {budget} questions"),
                    );
                    return Err(Refusal::new(
                        RefusalCode::OverBudget,
                        format!(
                            "this call may ask its caller at most {budget} questions (max_input_requests)"
                        ),
                    ));
                }
                let invalid = |why| Refusal::new(RefusalCode::InvalidRequest, why);
                Question::check_key(&key).map_err(invalid)?;
                if !self.keys.insert(key.clone()) {
                    return Err(invalid(format!(
                        "the key {key:?} was already asked in this call; each question needs a key of its own"
                    )));
                }
                Ok(request)
            });
            match checked {
                Ok(request) => {
                    answers.push(None);
                    asked.push(Question { key, request });
                }
                Err(refusal) => answers.push(Some(Err(refusal))),
            }
        }
        if !asked.is_empty() {
            let outcomes = match self.asker.clone() {
                Some(asker) => {
                    for question in &asked {
                        tracing::debug!(plugin = %self.plugin, tool = %self.tool, key = %question.key, kind = question.request.capability(), "the guest asks its caller");
                    }
                    asker.ask(&asked).await
                }
                None => Vec::new(),
            };
            let mut outcomes = outcomes.into_iter();
            let mut suspended = Vec::new();
            let slots = answers.iter_mut().filter(|slot| slot.is_none());
            for (slot, question) in slots.zip(asked) {
                let outcome = outcomes.next().unwrap_or_else(|| {
                    Asked::Refused(Refusal::new(
                        RefusalCode::Unsupported,
                        "this caller cannot be asked questions during a call",
                    ))
                });
                *slot = Some(match outcome {
                    Asked::Answer(answer) => Ok(answer),
                    Asked::Refused(refusal) => {
                        tracing::info!(plugin = %self.plugin, tool = %self.tool, key = %question.key, kind = question.request.capability(), error.type = "input_refused", "{}", refusal.message);
                        Err(refusal)
                    }
                    Asked::Suspend => {
                        suspended.push(question);
                        continue;
                    }
                });
            }
            if !suspended.is_empty() {
                self.suspended = Some(suspended);
                return Err(wasmtime::Error::new(Suspended));
            }
        }
        Ok(answers
            .into_iter()
            .map(|slot| slot.expect("every question has an outcome"))
            .collect())
    }

    /// The trap of a batch of `count` questions, more than any call may ask:
    /// the call ends as `resource_limit` before any is looked at.
    fn too_many(&mut self, count: usize) -> wasmtime::Error {
        let most = crate::config::MAX_INPUT_REQUESTS;
        let message = format!(
            "the guest asked {count} questions at once, more than the {most} any call may ask"
        );
        self.hit("max_input_requests", message.clone());
        wasmtime::Error::msg(message)
    }

    /// Asks one question under the host's key for it: the capability and its
    /// place in the call (`elicitation-2`).
    async fn ask_one(
        &mut self,
        request: Result<InputRequest, Refusal>,
    ) -> wasmtime::Result<Result<InputAnswer, Refusal>> {
        let capability = match &request {
            Ok(request) => request.capability(),
            Err(_) => "invalid",
        };
        let key = format!("{capability}-{}", self.questions + 1);
        let mut answers = self.ask_batch(vec![(key, request)]).await?;
        Ok(answers.pop().expect("one answer for one question"))
    }
}

impl wit::Host for CallState {
    async fn elicit(
        &mut self,
        message: String,
        requested_schema: String,
    ) -> wasmtime::Result<Result<wit::ElicitAnswer, wit::Refusal>> {
        let request = elicit_request(message, &requested_schema);
        Ok(match self.ask_one(request).await? {
            Ok(InputAnswer::Elicit(answer)) => Ok(to_wit_elicit(answer)),
            Ok(_) => Err(mismatched()),
            Err(refusal) => Err(to_wit_refusal(refusal)),
        })
    }

    async fn sample(
        &mut self,
        request: wit::SamplingRequest,
    ) -> wasmtime::Result<Result<wit::SamplingAnswer, wit::Refusal>> {
        Ok(match self.ask_one(sample_request(request)).await? {
            Ok(InputAnswer::Sample(answer)) => Ok(to_wit_answer(answer)),
            Ok(_) => Err(mismatched()),
            Err(refusal) => Err(to_wit_refusal(refusal)),
        })
    }

    async fn list_roots(&mut self) -> wasmtime::Result<Result<Vec<wit::Root>, wit::Refusal>> {
        Ok(match self.ask_one(Ok(InputRequest::ListRoots)).await? {
            Ok(InputAnswer::Roots(roots)) => Ok(to_wit_roots(roots)),
            Ok(_) => Err(mismatched()),
            Err(refusal) => Err(to_wit_refusal(refusal)),
        })
    }

    async fn ask(
        &mut self,
        questions: Vec<(String, wit::Question)>,
    ) -> wasmtime::Result<Vec<Result<wit::Answer, wit::Refusal>>> {
        if questions.len() > crate::config::MAX_INPUT_REQUESTS as usize {
            return Err(self.too_many(questions.len()));
        }
        let batch = questions
            .into_iter()
            .map(|(key, question)| {
                let request = match question {
                    wit::Question::Elicit(form) => {
                        elicit_request(form.message, &form.requested_schema)
                    }
                    wit::Question::Sample(request) => sample_request(request),
                    wit::Question::ListRoots => Ok(InputRequest::ListRoots),
                };
                (key, request)
            })
            .collect();
        let answers = self.ask_batch(batch).await?;
        Ok(answers
            .into_iter()
            .map(|answer| match answer {
                Ok(InputAnswer::Elicit(answer)) => Ok(wit::Answer::Elicit(to_wit_elicit(answer))),
                Ok(InputAnswer::Sample(answer)) => Ok(wit::Answer::Sample(to_wit_answer(answer))),
                Ok(InputAnswer::Roots(roots)) => Ok(wit::Answer::Roots(to_wit_roots(roots))),
                Err(refusal) => Err(to_wit_refusal(refusal)),
            })
            .collect())
    }
}

fn to_wit_elicit(answer: ElicitAnswer) -> wit::ElicitAnswer {
    match answer {
        ElicitAnswer::Accept(content) => {
            wit::ElicitAnswer::Accept(Value::Object(content).to_string())
        }
        ElicitAnswer::Decline => wit::ElicitAnswer::Decline,
        ElicitAnswer::Cancel => wit::ElicitAnswer::Cancel,
    }
}

fn to_wit_roots(roots: Vec<crate::result::input::Root>) -> Vec<wit::Root> {
    roots
        .into_iter()
        .map(|root| wit::Root {
            uri: root.uri,
            name: root.name,
        })
        .collect()
}

/// An answer of the other kind than the question: an asker's bug, told as a
/// failed answer.
fn mismatched() -> wit::Refusal {
    to_wit_refusal(Refusal::new(
        RefusalCode::Failed,
        "the caller's answer does not fit the question",
    ))
}

/// The question of an `elicit`, or why it is unusable.
pub fn elicit_request(message: String, schema: &str) -> Result<InputRequest, Refusal> {
    let invalid = |why: String| Refusal::new(RefusalCode::InvalidRequest, why);
    if schema.len() > MAX_SCHEMA_BYTES {
        return Err(invalid(format!(
            "the requested schema has {} bytes, more than the {MAX_SCHEMA_BYTES} allowed",
            schema.len()
        )));
    }
    let schema: Map<String, Value> = match serde_json::from_str(schema) {
        Ok(Value::Object(schema)) => schema,
        Ok(_) => return Err(invalid("the requested schema is not a JSON object".into())),
        Err(e) => return Err(invalid(format!("the requested schema is not JSON: {e}"))),
    };
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err(invalid(
            "the requested schema must have \"type\": \"object\" (a form of named fields)".into(),
        ));
    }
    if !schema.get("properties").is_some_and(Value::is_object) {
        return Err(invalid(
            "the requested schema must have \"properties\", an object of the form's fields".into(),
        ));
    }
    Ok(InputRequest::Elicit(ElicitRequest { message, schema }))
}

/// The question of a `sample`, or why it is unusable.
fn sample_request(request: wit::SamplingRequest) -> Result<InputRequest, Refusal> {
    let invalid = |why: &str| Refusal::new(RefusalCode::InvalidRequest, why);
    if request.messages.is_empty() {
        return Err(invalid("a sampling request needs at least one message"));
    }
    let mut messages = Vec::with_capacity(request.messages.len());
    for message in request.messages {
        let content = match message.content {
            WitPart::ResourceLink(_) | WitPart::EmbeddedResource(_) => {
                return Err(invalid(
                    "a sampling message is text, an image or audio, not a resource",
                ));
            }
            WitPart::Binary(ref binary)
                if !(binary.mime.starts_with("image/") || binary.mime.starts_with("audio/")) =>
            {
                return Err(invalid(
                    "a binary sampling message must be an image (image/*) or audio (audio/*)",
                ));
            }
            part => ContentPart::from(part),
        };
        messages.push(SampleMessage {
            role: role(message.role),
            content,
        });
    }
    Ok(InputRequest::Sample(SampleRequest {
        messages,
        system_prompt: request.system_prompt,
        preferences: request.preferences.map(|p| ModelPreferences {
            hints: p.hints,
            cost_priority: p.cost_priority,
            speed_priority: p.speed_priority,
            intelligence_priority: p.intelligence_priority,
        }),
        max_tokens: request.max_tokens,
        temperature: request.temperature,
        stop_sequences: request.stop_sequences,
    }))
}

fn role(role: wit::Role) -> Role {
    match role {
        wit::Role::User => Role::User,
        wit::Role::Assistant => Role::Assistant,
    }
}

fn to_wit_answer(answer: SampleAnswer) -> wit::SamplingAnswer {
    use super::bindings::v0_1::plugin::toolhost::plugin::types::{BinaryPart, TextPart};
    wit::SamplingAnswer {
        role: match answer.role {
            Role::User => wit::Role::User,
            Role::Assistant => wit::Role::Assistant,
        },
        content: match answer.content {
            ContentPart::Binary { data, mime } => WitPart::Binary(BinaryPart { data, mime }),
            ContentPart::Text { text, mime } => WitPart::Text(TextPart { text, mime }),
            // The edge turns an answer into text or a binary part only.
            ContentPart::ResourceLink(_) | ContentPart::EmbeddedResource { .. } => {
                WitPart::Text(TextPart {
                    text: String::new(),
                    mime: None,
                })
            }
        },
        model: answer.model,
        stop_reason: answer.stop_reason,
    }
}

fn to_wit_refusal(refusal: Refusal) -> wit::Refusal {
    wit::Refusal {
        code: match refusal.code {
            RefusalCode::Unsupported => wit::RefusalCode::Unsupported,
            RefusalCode::InvalidRequest => wit::RefusalCode::InvalidRequest,
            RefusalCode::OverBudget => wit::RefusalCode::OverBudget,
            RefusalCode::Failed => wit::RefusalCode::Failed,
        },
        message: refusal.message,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_requested_schema_must_be_an_object_form() {
        let ok = elicit_request("name?".into(), r#"{"type":"object","properties":{}}"#);
        assert!(matches!(ok, Ok(InputRequest::Elicit(_))));
        for (schema, says) in [
            ("[1]", "not a JSON object"),
            ("{", "not JSON"),
            (r#"{"type":"string"}"#, "\"type\": \"object\""),
            (r#"{"type":"object"}"#, "\"properties\""),
        ] {
            let refusal = elicit_request("q".into(), schema).unwrap_err();
            assert_eq!(refusal.code, RefusalCode::InvalidRequest, "{schema}");
            assert!(
                refusal.message.contains(says),
                "{schema}: {}",
                refusal.message
            );
        }
        let huge = format!(
            r#"{{"type":"object","properties":{{}},"description":"{}"}}"#,
            "x".repeat(MAX_SCHEMA_BYTES)
        );
        let refusal = elicit_request("q".into(), &huge).unwrap_err();
        assert!(refusal.message.contains("bytes"), "{}", refusal.message);
    }
}
