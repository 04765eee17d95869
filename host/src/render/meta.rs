//! Result metadata as key-value pairs, for formats that carry a metadata map
//! (MCP `_meta`, A2A `metadata`).
//!
//! The host's well-known fields go under the prefix it owns, `dev.toolhost/`;
//! an extension's values under its own validated namespace (`com.example/stock`).
//! Both follow MCP's key rules (a prefix of dot-separated labels, `/`, a name),
//! and neither can collide with a reserved protocol prefix.

use serde_json::{Map, Value, json};

use super::RenderContext;
use super::format::v1;
use crate::result::ToolResult;

/// The prefix of the host's own metadata keys.
pub const PREFIX: &str = "dev.toolhost/";

/// `dev.toolhost/<name>`.
pub fn key(name: &str) -> String {
    [PREFIX, name].concat()
}

/// Every metadata field of `result` as a map, in a fixed order: the host's
/// well-known fields, then the extensions, then keys kept from a legacy envelope.
/// The generation time is always present: the result's own, or the render time.
/// `pagination` and `legacy` are in their format-1 form.
pub fn metadata_map(result: &ToolResult, ctx: &RenderContext<'_>) -> Map<String, Value> {
    let meta = result.metadata();
    let mut map = Map::new();
    let generated_at = meta.generated_at.unwrap_or(ctx.now);
    map.insert(key("generatedAt"), json!(generated_at.to_string()));
    if let Some(at) = meta.expires_at {
        map.insert(key("expiresAt"), json!(at.to_string()));
    }
    if let Some(ms) = meta.duration_ms {
        map.insert(key("durationMs"), json!(ms));
    }
    if let Some(size) = meta.response_size {
        map.insert(key("responseSize"), json!(size));
    }
    if let Some(dry_run) = meta.dry_run {
        map.insert(key("dryRun"), json!(dry_run));
    }
    if let Some(pagination) = &meta.pagination {
        map.insert(
            key("pagination"),
            v1::to_value(&v1::Pagination::from(pagination)),
        );
    }
    if let Some(query) = &meta.query {
        map.insert(key("query"), query.clone());
    }
    for extension in &meta.extensions {
        map.insert(extension.key(), extension.value().clone());
    }
    if !meta.legacy.is_empty() {
        map.insert(
            key("legacy"),
            v1::to_value(&v1::LegacyKeys::from(&meta.legacy)),
        );
    }
    map
}
