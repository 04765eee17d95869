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
use super::members::{Member, Members};
use crate::result::ToolResult;

/// `dev.toolhost/<name>` for a literal name, written out at compile time.
macro_rules! host_key {
    ($name:literal) => {
        concat!("dev.toolhost/", $name)
    };
}

/// The prefix of the host's own metadata keys.
pub const PREFIX: &str = host_key!("");

/// `dev.toolhost/<name>`.
pub fn key(name: &str) -> String {
    [PREFIX, name].concat()
}

/// Every metadata field of `result` as a map, in a fixed order: the host's
/// well-known fields, then the extensions, then keys kept from a legacy envelope.
/// The generation time is always present: the result's own, or the render time.
/// `pagination` and `legacy` are in their format-1 form.
pub fn metadata_map(result: &ToolResult, ctx: &RenderContext<'_>) -> Map<String, Value> {
    metadata(result, ctx).into_map()
}

/// [`metadata_map`]'s members, borrowed from `result`: written as they stand
/// by an edge that sends text, without a map of their own.
pub(crate) fn metadata<'a>(result: &'a ToolResult, ctx: &RenderContext<'_>) -> Members<'a> {
    let meta = result.metadata();
    let mut members = Members::default();
    let generated_at = meta.generated_at.unwrap_or(ctx.now);
    members.insert(host_key!("generatedAt"), Member::Time(generated_at));
    if let Some(at) = meta.expires_at {
        members.insert(host_key!("expiresAt"), Member::Time(at));
    }
    if let Some(ms) = meta.duration_ms {
        members.insert(host_key!("durationMs"), Member::Owned(json!(ms)));
    }
    if let Some(size) = meta.response_size {
        members.insert(host_key!("responseSize"), Member::Owned(json!(size)));
    }
    if let Some(dry_run) = meta.dry_run {
        members.insert(host_key!("dryRun"), Member::Bool(dry_run));
    }
    if let Some(pagination) = &meta.pagination {
        members.insert(
            host_key!("pagination"),
            Member::Owned(v1::to_value(&v1::Pagination::from(pagination))),
        );
    }
    if let Some(query) = &meta.query {
        members.insert(host_key!("query"), Member::Json(query));
    }
    for extension in &meta.extensions {
        members.insert(extension.key(), Member::Json(extension.value()));
    }
    if !meta.legacy.is_empty() {
        members.insert(
            host_key!("legacy"),
            Member::Owned(v1::to_value(&v1::LegacyKeys::from(&meta.legacy))),
        );
    }
    members
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_keys_are_under_the_prefix() {
        assert_eq!(host_key!("generatedAt"), key("generatedAt"));
        assert_eq!(PREFIX, "dev.toolhost/");
    }
}
