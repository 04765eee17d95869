//! A filled-in prompt: what a plugin answers when a client gets one of its
//! prompts, made of the same closed set of content parts as a tool's result.
//! Like [`super::ToolResult`], it has no serialized form: `crate::render`
//! decides how each revision spells it.

use super::ContentPart;

/// Who speaks a message of a prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    User,
    Assistant,
}

/// One message of a prompt.
#[derive(Debug, Clone, PartialEq)]
pub struct PromptMessage {
    pub role: Role,
    pub content: ContentPart,
}

/// A prompt as its plugin filled it in.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Prompt {
    /// What this filled-in prompt is, where it says more than its descriptor.
    pub description: Option<String>,
    pub messages: Vec<PromptMessage>,
}
