//! A plugin's resource as `resources/read` answers it, and suggestions as
//! `completion/complete` does. Text reads as text, bytes as a base64 blob.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rmcp::model::{CompleteResult, CompletionInfo, ReadResourceResult, ResourceContents};

use crate::result::{Contents, ResourceBody, Suggestions};

/// What `resources/read` of a plugin's resource answers.
pub fn contents(contents: &[Contents]) -> ReadResourceResult {
    let contents = contents
        .iter()
        .map(|c| match &c.body {
            ResourceBody::Text(text) => ResourceContents::TextResourceContents {
                uri: c.uri.clone(),
                mime_type: c.mime.clone(),
                text: text.clone(),
                meta: None,
            },
            ResourceBody::Bytes(bytes) => ResourceContents::BlobResourceContents {
                uri: c.uri.clone(),
                mime_type: c.mime.clone(),
                blob: STANDARD.encode(bytes),
                meta: None,
            },
        })
        .collect();
    // 2026-07-28 requires `resultType`; rmcp removes it for older peers.
    ReadResourceResult::new(contents)
}

/// What `completion/complete` answers.
pub fn suggestions(suggestions: &Suggestions) -> CompleteResult {
    // The runtime cuts the values to MCP's limit of 100, which rmcp checks.
    let completion = CompletionInfo::with_pagination(
        suggestions.values.clone(),
        suggestions.total,
        suggestions.has_more,
    )
    .unwrap_or_else(|_| {
        CompletionInfo::with_pagination(Vec::new(), None, true).expect("no values")
    });
    CompleteResult::new(completion)
}
