//! A filled-in prompt as `prompts/get` answers it. The messages' parts are
//! rendered as a tool's content parts are, by the same rules per revision (audio
//! before 2025-03-26 and a resource link before 2025-06-18 as their text forms,
//! a blob that is neither image nor audio as an embedded resource).

use rmcp::model::{GetPromptResult, PromptMessage, Role};

use super::mcp::{McpRenderer, ServerInfo, server_meta};
use super::{OutputMode, Revision};
use crate::result::{Prompt, Role as PromptRole};

/// A filled-in prompt, as `prompts/get` of `revision` answers it (naming
/// `server` in 2026-07-28).
pub fn filled(
    prompt: &Prompt,
    revision: Revision,
    server: Option<ServerInfo<'_>>,
) -> GetPromptResult {
    let parts = McpRenderer {
        revision,
        mode: OutputMode::Spec,
    };
    let messages = prompt
        .messages
        .iter()
        .enumerate()
        .map(|(index, message)| {
            let role = match message.role {
                PromptRole::User => Role::User,
                PromptRole::Assistant => Role::Assistant,
            };
            PromptMessage::new(role, parts.part(index, &message.content))
        })
        .collect();
    let mut result = GetPromptResult::new(messages);
    result.description = prompt.description.clone();
    result.meta = server_meta(revision, server);
    // 2026-07-28 requires `resultType`; rmcp removes it for older peers.
    result
}
