//! Questions to the caller during a call: a form for the user ([`elicit`]), a
//! message from the caller's model ([`sample`], [`sample_text`]), the roots
//! the client shares ([`list_roots`]), or several at once under keys of the
//! tool's choosing ([`ask`]).
//!
//! The host decides how a question travels: to a client with a session it goes
//! mid-call and the answer comes back here; a stateless client is told "input
//! required", asks its user and calls the tool again with the answer, and the
//! host runs the tool from the start, answering each earlier question from
//! what the client sent. So ask the same questions in the same order for the
//! same arguments and answers, and change nothing outside before the last
//! question.
//!
//! A question the caller cannot be asked comes back as a [`Refusal`]; `?`
//! turns it into a `tool-error` that names its code.
//!
//! ```no_run
//! use toolhost_guest::interaction::{elicit, Answer};
//! use toolhost_guest::{json, ToolError};
//!
//! fn confirm(what: &str) -> Result<bool, ToolError> {
//!     let schema = json!({
//!         "type": "object",
//!         "properties": { "ok": { "type": "boolean", "title": "Go ahead?" } },
//!         "required": ["ok"],
//!     });
//!     Ok(match elicit(&format!("Delete {what}?"), &schema)? {
//!         Answer::Accept(form) => form["ok"] == json!(true),
//!         Answer::Decline | Answer::Cancel => false,
//!     })
//! }
//! ```

use serde_json::{Map, Value, json};

use crate::bindings::toolhost::plugin::interaction as wit;
use crate::{ContentPart, ErrorCode, ToolError};
pub use wit::{
    ModelPreferences, Refusal, RefusalCode, Role, Root, SamplingAnswer, SamplingMessage,
    SamplingRequest,
};

/// What the user did with a form.
#[derive(Debug, Clone, PartialEq)]
pub enum Answer {
    /// Submitted: the fields, matching the requested schema (the host checked).
    Accept(Map<String, Value>),
    /// Said no.
    Decline,
    /// Dismissed the form without choosing.
    Cancel,
}

/// Asks the user to fill in the form `schema` (a JSON Schema of an object
/// whose properties are strings, numbers, integers, booleans or enums).
///
/// # Errors
///
/// A [`Refusal`] when the caller cannot be asked (`unsupported`), the schema
/// is unusable (`invalid-request`), the call asked too many questions
/// (`over-budget`) or the client failed to answer (`failed`).
pub fn elicit(message: &str, schema: &Value) -> Result<Answer, Refusal> {
    form(wit::elicit(message, &schema.to_string())?)
}

/// Asks the caller's model to continue `request`'s conversation.
///
/// # Errors
///
/// A [`Refusal`], as for [`elicit`].
pub fn sample(request: &SamplingRequest) -> Result<SamplingAnswer, Refusal> {
    wit::sample(request)
}

/// Asks the caller's model one question in text; its answer's text (empty
/// when it answered with an image or audio).
///
/// # Errors
///
/// A [`Refusal`], as for [`elicit`].
pub fn sample_text(prompt: &str, max_tokens: u32) -> Result<String, Refusal> {
    Ok(match sample(&text_request(prompt, max_tokens))?.content {
        ContentPart::Text(text) => text.text,
        _ => String::new(),
    })
}

/// A sampling request of one question in text from the user, answered in at
/// most `max_tokens`: what [`sample_text`] asks, for a batch of [`ask`].
pub fn text_request(prompt: &str, max_tokens: u32) -> SamplingRequest {
    SamplingRequest {
        messages: vec![SamplingMessage {
            role: Role::User,
            content: ContentPart::text(prompt),
        }],
        system_prompt: None,
        preferences: None,
        max_tokens,
        temperature: None,
        stop_sequences: Vec::new(),
    }
}

/// The roots (directories, files) the client shares: where its user works.
/// A hint only: the tool reaches no path its policy does not preopen.
///
/// # Errors
///
/// A [`Refusal`], as for [`elicit`] (`unsupported` when the client did not
/// declare the `roots` capability).
pub fn list_roots() -> Result<Vec<Root>, Refusal> {
    wit::list_roots()
}

/// One question of a batch ([`ask`]).
#[derive(Debug, Clone)]
pub enum Question {
    /// A form for the user, as [`elicit`] takes it.
    Elicit { message: String, schema: Value },
    /// A conversation for the caller's model, as [`sample`] takes it.
    Sample(SamplingRequest),
    /// The roots the client shares, as [`list_roots`] gives them.
    ListRoots,
}

/// The answer to one question of a batch, of the question's kind.
#[derive(Debug, Clone)]
pub enum Reply {
    Form(Answer),
    Sample(SamplingAnswer),
    Roots(Vec<Root>),
}

/// Asks several questions at once, each under a key of the tool's choosing
/// (1 to 64 characters of `A-Z a-z 0-9 _ . -`, each used once in a call); the
/// answers come back in the order of the questions.
///
/// A stateless caller gets every unanswered question of the batch in one
/// round and answers them under these keys; a caller with a session is asked
/// one after another. Each question counts against the call's budget.
///
/// ```no_run
/// use toolhost_guest::interaction::{ask, Question, Reply};
/// use toolhost_guest::json;
///
/// let schema = json!({"type": "object", "properties": {"name": {"type": "string"}}});
/// let replies = ask(&[
///     ("user_name", Question::Elicit { message: "Your name?".into(), schema }),
///     ("workspace", Question::ListRoots),
/// ]);
/// if let Ok(Reply::Roots(roots)) = &replies[1] {
///     println!("{} roots", roots.len());
/// }
/// ```
pub fn ask(questions: &[(&str, Question)]) -> Vec<Result<Reply, Refusal>> {
    let batch: Vec<(String, wit::Question)> = questions
        .iter()
        .map(|(key, question)| {
            let question = match question {
                Question::Elicit { message, schema } => wit::Question::Elicit(wit::ElicitRequest {
                    message: message.clone(),
                    requested_schema: schema.to_string(),
                }),
                Question::Sample(request) => wit::Question::Sample(request.clone()),
                Question::ListRoots => wit::Question::ListRoots,
            };
            ((*key).to_owned(), question)
        })
        .collect();
    wit::ask(&batch)
        .into_iter()
        .map(|answer| {
            Ok(match answer? {
                wit::Answer::Elicit(answer) => Reply::Form(form(answer)?),
                wit::Answer::Sample(answer) => Reply::Sample(answer),
                wit::Answer::Roots(roots) => Reply::Roots(roots),
            })
        })
        .collect()
}

/// [`elicit`] under a key of the tool's choosing: the key a stateless caller
/// answers under (see [`ask`]).
///
/// # Errors
///
/// A [`Refusal`], as for [`elicit`].
pub fn elicit_as(key: &str, message: &str, schema: &Value) -> Result<Answer, Refusal> {
    let question = Question::Elicit {
        message: message.to_owned(),
        schema: schema.clone(),
    };
    match ask(&[(key, question)]).pop() {
        Some(Ok(Reply::Form(answer))) => Ok(answer),
        Some(Err(refusal)) => Err(refusal),
        _ => Err(Refusal {
            code: RefusalCode::Failed,
            message: "the host answered a form with something else".into(),
        }),
    }
}

/// A form's answer as the host passed it on.
fn form(answer: wit::ElicitAnswer) -> Result<Answer, Refusal> {
    match answer {
        wit::ElicitAnswer::Accept(content) => match serde_json::from_str(&content) {
            Ok(Value::Object(fields)) => Ok(Answer::Accept(fields)),
            _ => Err(Refusal {
                code: RefusalCode::Failed,
                message: "the host passed on a form that is not a JSON object".into(),
            }),
        },
        wit::ElicitAnswer::Decline => Ok(Answer::Decline),
        wit::ElicitAnswer::Cancel => Ok(Answer::Cancel),
    }
}

impl RefusalCode {
    /// The code's name, as the `tool-error` of [`From<Refusal>`] gives it.
    pub fn as_str(self) -> &'static str {
        match self {
            RefusalCode::Unsupported => "unsupported",
            RefusalCode::InvalidRequest => "invalid_request",
            RefusalCode::OverBudget => "over_budget",
            RefusalCode::Failed => "failed",
        }
    }
}

impl From<Refusal> for ToolError {
    /// A `tool-error` with the refusal's message, its code in the details
    /// (`{"refusal": "unsupported"}`).
    fn from(refusal: Refusal) -> Self {
        ToolError {
            code: ErrorCode::ToolError,
            message: refusal.message,
            details: Some(json!({ "refusal": refusal.code.as_str() }).to_string()),
        }
    }
}
