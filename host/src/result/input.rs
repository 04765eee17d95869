//! Questions a tool puts to its caller during a call, and their answers, as the
//! WIT `interaction` import states them: a form for the user (elicitation), a
//! message from the caller's model (sampling), or the roots the client shares.
//!
//! Like the result object, these say what is asked, not how: the renderers of
//! `render::input` write them as a server-to-client request of a handshake-era
//! session, or as the `inputRequests` of a stateless caller's "input required"
//! answer, and read the client's answer back into these types.

use serde_json::{Map, Value};

use super::{ContentPart, Role};

/// A question a tool asked.
#[derive(Debug, Clone, PartialEq)]
pub enum InputRequest {
    /// A form for the user.
    Elicit(ElicitRequest),
    /// A message from the caller's model.
    Sample(SampleRequest),
    /// The roots (directories, files) the client shares.
    ListRoots,
}

impl InputRequest {
    /// The client capability the question needs (`elicitation`, `sampling`,
    /// `roots`).
    pub fn capability(&self) -> &'static str {
        match self {
            InputRequest::Elicit(_) => "elicitation",
            InputRequest::Sample(_) => "sampling",
            InputRequest::ListRoots => "roots",
        }
    }
}

/// A form: what is asked, and the JSON Schema of the object the user submits.
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitRequest {
    pub message: String,
    /// A JSON object schema with primitive properties (checked when asked).
    pub schema: Map<String, Value>,
}

/// A conversation for the caller's model to continue.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleRequest {
    pub messages: Vec<SampleMessage>,
    pub system_prompt: Option<String>,
    pub preferences: Option<ModelPreferences>,
    pub max_tokens: u32,
    pub temperature: Option<f64>,
    pub stop_sequences: Vec<String>,
}

/// One message of a conversation: text, or a binary part (an image or audio).
#[derive(Debug, Clone, PartialEq)]
pub struct SampleMessage {
    pub role: Role,
    pub content: ContentPart,
}

/// Hints for the client choosing a model.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelPreferences {
    pub hints: Vec<String>,
    pub cost_priority: Option<f64>,
    pub speed_priority: Option<f64>,
    pub intelligence_priority: Option<f64>,
}

/// The caller's answer to a question.
#[derive(Debug, Clone, PartialEq)]
pub enum InputAnswer {
    Elicit(ElicitAnswer),
    Sample(SampleAnswer),
    Roots(Vec<Root>),
}

/// A directory or file the client shares.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Root {
    pub uri: String,
    pub name: Option<String>,
}

/// What the user did with a form.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitAnswer {
    /// Submitted: an object matching the requested schema.
    Accept(Map<String, Value>),
    Decline,
    Cancel,
}

/// The model's answer: text, or a binary part.
#[derive(Debug, Clone, PartialEq)]
pub struct SampleAnswer {
    pub role: Role,
    pub content: ContentPart,
    pub model: String,
    pub stop_reason: Option<String>,
}

/// Why a question was not put to the caller, or got no usable answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RefusalCode {
    /// The caller's protocol or client cannot be asked this.
    Unsupported,
    /// The question itself is unusable.
    InvalidRequest,
    /// The call asked more questions than its policy allows.
    OverBudget,
    /// The client failed to answer, or answered something that does not fit.
    Failed,
}

/// A question the host did not put, or that got no usable answer: told to the
/// guest, which decides what to do (usually fail with a `tool-error`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub code: RefusalCode,
    pub message: String,
}

impl Refusal {
    pub fn new(code: RefusalCode, message: impl Into<String>) -> Self {
        Refusal {
            code,
            message: message.into(),
        }
    }
}

/// The most characters a question's key may have.
pub const MAX_KEY_CHARS: usize = 64;

/// A question under the key its answer comes back with: chosen by the tool
/// (`ask`), or by the host for the one-question imports (`elicitation-2`).
#[derive(Debug, Clone, PartialEq)]
pub struct Question {
    pub key: String,
    pub request: InputRequest,
}

impl Question {
    /// Whether `key` can name a question: 1 to [`MAX_KEY_CHARS`] characters of
    /// `A-Z a-z 0-9 _ . -`.
    ///
    /// # Errors
    ///
    /// A sentence saying what is wrong with the key.
    pub fn check_key(key: &str) -> Result<(), String> {
        if key.is_empty() || key.len() > MAX_KEY_CHARS {
            return Err(format!(
                "a question's key has 1 to {MAX_KEY_CHARS} characters, not {}",
                key.len()
            ));
        }
        match key
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-')))
        {
            Some(c) => Err(format!(
                "a question's key is made of A-Z, a-z, 0-9, `_`, `.` and `-`; {key:?} has {c:?}"
            )),
            None => Ok(()),
        }
    }
}

/// A call that stopped to ask a stateless caller: the questions it has no
/// answer to yet, each under its key, and the signed state the caller sends
/// back with the answers.
#[derive(Debug, Clone, PartialEq)]
pub struct InputRequired {
    pub questions: Vec<Question>,
    /// Opaque to the caller: the answers so far, signed and bound to the call.
    pub state: String,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_short_and_plain() {
        for key in [
            "user_name",
            "a",
            "elicitation-2",
            "v1.answer",
            &"k".repeat(64),
        ] {
            assert_eq!(Question::check_key(key), Ok(()), "{key}");
        }
        for (key, says) in [
            ("", "1 to 64"),
            (&"k".repeat(65) as &str, "not 65"),
            ("user name", "' '"),
            ("ключ", "'к'"),
            ("a/b", "'/'"),
        ] {
            let why = Question::check_key(key).unwrap_err();
            assert!(why.contains(says), "{key}: {why}");
        }
    }
}
