//! Questions to the caller during a call: a form for the user ([`elicit`]), a
//! message from the caller's model ([`sample`], [`sample_text`]), or the roots
//! the client shares ([`list_roots`]).
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
    match wit::elicit(message, &schema.to_string())? {
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
    let request = SamplingRequest {
        messages: vec![SamplingMessage {
            role: Role::User,
            content: ContentPart::text(prompt),
        }],
        system_prompt: None,
        preferences: None,
        max_tokens,
        temperature: None,
        stop_sequences: Vec::new(),
    };
    Ok(match sample(&request)?.content {
        ContentPart::Text(text) => text.text,
        _ => String::new(),
    })
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
