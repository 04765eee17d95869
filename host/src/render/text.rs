//! The documented text forms a renderer writes where its format lacks a concept.
//!
//! Each function here is the one text form of one kind of part; `docs/rendering.md`
//! lists where each is used. None of them loses information the format could
//! otherwise carry: a binary part keeps its bytes (as base64), a link keeps its URI,
//! size and MIME type.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;

use crate::result::{ResourceLink, StoredLink, ToolResult};

/// A resource link for a format without links:
/// `Resource "name" (title): uri [mime, N bytes]`, then the description on its own line.
pub fn resource_link(link: &ResourceLink) -> String {
    let mut text = format!("Resource \"{}\"", link.name);
    if let Some(title) = &link.title {
        text.push_str(&format!(" ({title})"));
    }
    text.push_str(&format!(": {}", link.uri));
    let facts = facts(link.mime.as_deref(), link.size);
    if !facts.is_empty() {
        text.push_str(&format!(" [{facts}]"));
    }
    if let Some(description) = &link.description {
        text.push('\n');
        text.push_str(description);
    }
    text
}

/// The pointer to a stored result for a format without links.
pub fn stored_link(link: &StoredLink) -> String {
    let mut text = format!(
        "The full result is stored at {} [{}]; read it with resources/read",
        link.uri,
        facts(Some(&link.mime), link.size)
    );
    if let Some(at) = link.expires_at {
        text.push_str(&format!(" before {at}"));
    }
    text.push('.');
    text
}

/// The description a stored link carries where the format has links.
pub fn stored_link_description(link: &StoredLink) -> String {
    match link.expires_at {
        Some(at) => format!("The full result, too large to send inline; readable until {at}."),
        None => "The full result, too large to send inline.".to_owned(),
    }
}

/// Binary content for a format that cannot carry it as such: the MIME type and
/// size, then the bytes as standard base64 on the next line.
pub fn binary(data: &[u8], mime: &str) -> String {
    format!(
        "[{mime} content, {} bytes, base64-encoded below]\n{}",
        data.len(),
        STANDARD.encode(data)
    )
}

/// What a result says when it has nothing else to show: a success without data,
/// summary or parts.
pub fn empty(result: &ToolResult) -> &'static str {
    if result.is_failure() {
        "The tool failed."
    } else {
        "The tool completed and returned no data."
    }
}

fn facts(mime: Option<&str>, size: Option<u64>) -> String {
    match (mime, size) {
        (Some(mime), Some(size)) => format!("{mime}, {size} bytes"),
        (Some(mime), None) => mime.to_owned(),
        (None, Some(size)) => format!("{size} bytes"),
        (None, None) => String::new(),
    }
}
