//! A plugin's resource as `resources/read` answers it, and suggestions as
//! `completion/complete` does. Text reads as text, bytes as a base64 blob.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rmcp::model::{CompleteResult, CompletionInfo, ReadResourceResult, ResourceContents};

use super::Revision;
use super::mcp::{ServerInfo, server_meta};
use crate::result::{Contents, ResourceBody, Suggestions};

/// What `resources/read` of a plugin's resource answers in `revision`
/// (naming `server` in 2026-07-28).
pub fn contents(
    contents: &[Contents],
    revision: Revision,
    server: Option<ServerInfo<'_>>,
) -> ReadResourceResult {
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
    let mut read = ReadResourceResult::new(contents);
    read.meta = server_meta(revision, server);
    read
}

/// What `completion/complete` answers in `revision` (naming `server` in
/// 2026-07-28).
pub fn suggestions(
    suggestions: &Suggestions,
    revision: Revision,
    server: Option<ServerInfo<'_>>,
) -> CompleteResult {
    // The runtime cuts the values to MCP's limit of 100, which rmcp checks.
    let completion = CompletionInfo::with_pagination(
        suggestions.values.clone(),
        suggestions.total,
        suggestions.has_more,
    )
    .unwrap_or_else(|_| {
        CompletionInfo::with_pagination(Vec::new(), None, true).expect("no values")
    });
    let mut complete = CompleteResult::new(completion);
    complete.meta = server_meta(revision, server);
    complete
}
