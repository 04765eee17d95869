//! [`Mapper`]: picks the renderer, applies the size limit, offloads what does not fit.

use std::sync::Arc;

use tracing::Instrument as _;

use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::{Value, json};

use super::format::encode;
use super::mcp::McpRenderer;
use super::{RenderContext, Rendering, Target, structured};
use crate::result::{ContentPart, ErrorCode, StoredLink, ToolResult};
use crate::store::{Kept, Offload, ResultStore};

/// The largest complete rendering, in bytes of compact JSON, each format sends
/// inline. The ADR's default is 100 KB for every format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SizeLimits {
    pub legacy: usize,
    pub mcp: usize,
    pub a2a: usize,
}

impl SizeLimits {
    /// 100 KiB, the ADR's default.
    pub const DEFAULT_BYTES: usize = 100 * 1024;

    /// The same limit for every format.
    pub fn uniform(bytes: usize) -> Self {
        SizeLimits {
            legacy: bytes,
            mcp: bytes,
            a2a: bytes,
        }
    }

    pub fn for_target(&self, target: Target) -> usize {
        match target {
            Target::Legacy => self.legacy,
            Target::Mcp { .. } => self.mcp,
            Target::A2a => self.a2a,
        }
    }
}

impl Default for SizeLimits {
    fn default() -> Self {
        SizeLimits::uniform(SizeLimits::DEFAULT_BYTES)
    }
}

/// A rendered result and what the mapper did to it.
#[derive(Debug, Clone, PartialEq)]
pub struct Rendered {
    /// What to send.
    pub rendering: Rendering,
    /// Whether the full result went to the store (then the rendering carries its
    /// link).
    pub offloaded: bool,
}

impl Rendered {
    /// The size of the rendering in bytes, as compact JSON. Counted on demand:
    /// the mapper itself only counts what is near the limit.
    pub fn size(&self) -> usize {
        self.rendering.size()
    }
}

/// The one place where a result becomes wire JSON.
///
/// Defaults: the ADR's 100 KiB limit for every format, and no store (a result over
/// the limit is then sent inline, with a warning in the log).
#[derive(Clone, Default)]
pub struct Mapper {
    limits: SizeLimits,
    store: Option<Arc<dyn ResultStore>>,
}

impl Mapper {
    pub fn new(limits: SizeLimits, store: Option<Arc<dyn ResultStore>>) -> Self {
        Mapper { limits, store }
    }

    pub fn limits(&self) -> SizeLimits {
        self.limits
    }

    /// Renders `result` for `target`, without a size limit.
    pub fn render_inline(
        &self,
        result: &ToolResult,
        target: Target,
        ctx: &RenderContext<'_>,
    ) -> Rendering {
        target.render(result, ctx)
    }

    /// [`Mapper::render`] of a result the caller gives away: what the MCP edge
    /// does with each call's result. The same bytes; where the rendering carries
    /// the data as structured content (MCP from 2025-06-18) and fits the limit,
    /// the data moves into it instead of being copied. (Text for an edge that
    /// sends text is written from the borrowed data: there is nothing to move.)
    pub async fn render_owned(
        &self,
        mut result: ToolResult,
        target: Target,
        ctx: &RenderContext<'_>,
    ) -> Rendered {
        if let Target::Mcp { revision, mode } = target
            && !ctx.mcp_as_text
            && let Some(data) = result.data()
            && let Some(shape) = structured::shape(data, ctx.output_schema, revision)
        {
            let limit = self.limits.for_target(target);
            let renderer = McpRenderer { revision, mode };
            let mut out = renderer.render_without_data(&result, ctx);
            // The member the data adds: `,"structuredContent":` and the data.
            let added = ",\"structuredContent\":".len() + shape.overhead();
            let fits = !data_alone_over(&result, data, limit)
                && (size_bound(&out) + value_bound(data) + added <= limit
                    || json_size(&out) + json_size(data) + added <= limit);
            if fits {
                out.structured_content = result
                    .take_data()
                    .map(|data| structured::shaped(data, shape));
                return Rendered {
                    rendering: Rendering::Mcp(Box::new(out)),
                    offloaded: false,
                };
            }
        }
        self.render(&result, target, ctx).await
    }

    /// Renders `result` for `target` within the target's size limit.
    ///
    /// A rendering of at most the limit goes out as it is. A larger one is stored
    /// whole and rendered again without its payload (the data, or a failure's
    /// details), with the stored link and its expiry; if that is still over the
    /// limit, the content parts stay behind too, and a text part says so. When the
    /// store fails, the caller gets a `tool_error` result saying why, never a
    /// rendering over the limit.
    pub async fn render(
        &self,
        result: &ToolResult,
        target: Target,
        ctx: &RenderContext<'_>,
    ) -> Rendered {
        let limit = self.limits.for_target(target);
        // Every format carries the data whole (the envelope's `data`, MCP's
        // structured content or text, A2A's data part), so data that alone is
        // over the limit is stored without first rendering what would not be sent.
        let data_over = result
            .data()
            .is_some_and(|data| data_alone_over(result, data, limit));
        let oversized = if data_over {
            None
        } else {
            let rendering = self.render_inline(result, target, ctx);
            match size_over(&rendering, limit) {
                None => {
                    return Rendered {
                        rendering,
                        offloaded: false,
                    };
                }
                Some(size) => Some((rendering, size)),
            }
        };
        let Some(store) = &self.store else {
            let (rendering, size) = oversized.unwrap_or_else(|| {
                let rendering = self.render_inline(result, target, ctx);
                let size = rendering.size();
                (rendering, size)
            });
            tracing::warn!(tool = ctx.tool, size, limit, %target, "result over the size limit and no result store configured; sending it inline");
            return Rendered {
                rendering,
                offloaded: false,
            };
        };
        let size = oversized.map(|(_, size)| size);
        let oversize = size.map_or_else(
            || "over the limit".to_owned(),
            |size| format!("{size} bytes"),
        );
        let (version, body) = encode(result);
        let offload = Offload {
            format: version.number(),
            body: &body,
            data_size: result.data().map(|data| json_size(data) as u64),
            principal: ctx.principal,
        };
        let format = match target {
            Target::Legacy => "legacy",
            Target::Mcp { .. } => "mcp",
            Target::A2a => "a2a",
        };
        let link = match store
            .put(offload)
            .instrument(tracing::debug_span!(
                "store",
                toolhost.bytes = body.len() as i64
            ))
            .await
        {
            Ok(kept) => {
                metrics::counter!("toolhost_offloads_total", "format" => format).increment(1);
                stored_link(kept)
            }
            Err(error) => {
                metrics::counter!("toolhost_store_errors_total", "operation" => "put").increment(1);
                // The cause may name the database file or server: the log has it,
                // the caller gets the code and the sizes.
                tracing::error!(tool = ctx.tool, request_id = ctx.request_id, size = oversize, limit, %error, error.type = "store_failed", "could not store a result over the size limit");
                let failure = ToolResult::failure_with(
                    ErrorCode::ToolError,
                    format!(
                        "The result ({oversize}) is larger than the {limit} bytes this format allows inline, and storing it failed; the host's log has the cause (request {})",
                        ctx.request_id
                    ),
                    json!({ "size": size, "limit": limit }),
                );
                return Rendered {
                    rendering: self.render_inline(&failure, target, ctx),
                    offloaded: false,
                };
            }
        };

        let mut slim = result
            .to_builder_without_payload()
            .stored_link(link.clone());
        if let Some(expiry) = link.expires_at {
            let earliest = result
                .metadata()
                .expires_at
                .map_or(expiry, |at| at.min(expiry));
            slim = slim.expires_at(earliest);
        }
        let mut slim = slim.build();
        let mut rendering = self.render_inline(&slim, target, ctx);
        if size_over(&rendering, limit).is_some() && !slim.content().is_empty() {
            let kept_back = slim.content().len();
            slim = slim
                .to_builder()
                .clear_parts()
                .part(ContentPart::text(format!(
                    "{kept_back} content part(s) of this result are in the stored result at {}.",
                    link.uri
                )))
                .build();
            rendering = self.render_inline(&slim, target, ctx);
        }
        Rendered {
            rendering,
            offloaded: true,
        }
    }
}

/// Whether `data`, the data of `result`, is over `limit` bytes as compact JSON
/// by itself, so the result goes to the store without being rendered first.
///
/// Data read from at most `limit` bytes of JSON text (a guest's or an app's
/// answer) is not walked: written out it is rarely longer than the text it was
/// read from (only numbers can grow, `1e15` becoming `1000000000000000.0`), and
/// a rendering over the limit is caught when it is measured. The walk costs a
/// third of what serializing the data does (24 KB of records: 5 µs against 16),
/// for every result whose data fits, which is nearly every result; what
/// skipping it can cost is one rendering of a few times the limit, thrown away.
fn data_alone_over(result: &ToolResult, data: &Value, limit: usize) -> bool {
    result.data_text_bytes().is_none_or(|bytes| bytes > limit) && json_size_exceeds(data, limit)
}

/// The size of `rendering` when it is over `limit` bytes, `None` when it is
/// within. A text rendering is its length. A typed MCP result is first bounded
/// without formatting anything (most results are far below the limit); only one
/// the bound cannot clear is counted, by serializing it to a counter.
fn size_over(rendering: &Rendering, limit: usize) -> Option<usize> {
    let size = match rendering {
        Rendering::Json(text) => text.len(),
        Rendering::Mcp(result) if size_bound(result) <= limit => return None,
        Rendering::Mcp(result) => json_size(result),
    };
    (size > limit).then_some(size)
}

/// The size of `value` as compact JSON, in bytes, counted without keeping it.
pub fn json_size(value: &impl serde::Serialize) -> usize {
    let mut counter = Counter(0);
    serde_json::to_writer(&mut counter, value).expect("writing JSON to a counter cannot fail");
    counter.0
}

/// An upper bound of the compact JSON size of `result`: every string byte
/// counted as a six-byte escape, every number at its longest, and a generous
/// allowance per block for its keys and punctuation. Formats nothing.
fn size_bound(result: &CallToolResult) -> usize {
    /// The keys, quotes, braces and tags of one block and of the result itself,
    /// beside its strings: fewer than this many bytes.
    const OVERHEAD: usize = 160;
    let text = |s: &str| s.len() * 6 + 2;
    let opt = |s: &Option<String>| s.as_deref().map_or(0, text);
    let meta = |m: &Option<rmcp::model::MetaObject>| m.as_ref().map_or(0, |m| map_bound(&m.0));
    let contents = |c: &ResourceContents| match c {
        ResourceContents::TextResourceContents {
            uri,
            mime_type,
            text: body,
            meta: m,
        } => text(uri) + opt(mime_type) + text(body) + meta(m),
        ResourceContents::BlobResourceContents {
            uri,
            mime_type,
            blob,
            meta: m,
        } => text(uri) + opt(mime_type) + text(blob) + meta(m),
        other => json_size(other),
    };
    let blocks: usize = result
        .content
        .iter()
        .map(|block| {
            OVERHEAD
                + match block {
                    ContentBlock::Text(t) => text(&t.text) + meta(&t.meta),
                    ContentBlock::Image(i) => text(&i.data) + text(&i.mime_type) + meta(&i.meta),
                    ContentBlock::Audio(a) => text(&a.data) + text(&a.mime_type) + meta(&a.meta),
                    ContentBlock::Resource(r) => contents(&r.resource) + meta(&r.meta),
                    ContentBlock::ResourceLink(l) => {
                        text(&l.uri)
                            + text(&l.name)
                            + opt(&l.title)
                            + opt(&l.description)
                            + opt(&l.mime_type)
                            + 24
                            + meta(&l.meta)
                    }
                    // A block kind this build does not write: count it exactly.
                    other => json_size(other),
                }
        })
        .sum();
    let structured = result.structured_content.as_ref().map_or(0, value_bound);
    OVERHEAD + blocks + structured + meta(&result.meta)
}

/// An upper bound of the size of `value` as compact JSON: every string byte
/// counted as a six-byte escape, every number at its longest.
fn value_bound(value: &Value) -> usize {
    match value {
        Value::Null | Value::Bool(_) => 5,
        Value::Number(_) => 24,
        Value::String(s) => s.len() * 6 + 2,
        Value::Array(items) => 2 + items.len() + items.iter().map(value_bound).sum::<usize>(),
        Value::Object(map) => map_bound(map),
    }
}

fn map_bound(map: &serde_json::Map<String, Value>) -> usize {
    2 + map.len()
        + map
            .iter()
            .map(|(key, item)| key.len() * 6 + 3 + value_bound(item))
            .sum::<usize>()
}

/// Counts the bytes written to it.
struct Counter(usize);

impl std::io::Write for Counter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0 += buf.len();
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Whether `value` as compact JSON is longer than `limit` bytes, by a lower bound
/// of its size: every character and bracket counted, but not the escapes in
/// strings nor the digits of fractions, so `false` may still mean "over". It
/// stops as soon as the bound passes the limit, and formats nothing.
pub fn json_size_exceeds(value: &Value, limit: usize) -> bool {
    fn at_least(value: &Value, limit: usize, sum: &mut usize) -> bool {
        *sum += match value {
            Value::Null | Value::Bool(true) => 4,
            Value::Bool(false) => 5,
            Value::Number(n) => match (n.as_u64(), n.as_i64()) {
                (Some(u), _) => u.checked_ilog10().unwrap_or(0) as usize + 1,
                (None, Some(i)) => i.unsigned_abs().ilog10() as usize + 2,
                // A float is written with at least a digit, a point and a digit.
                _ => 3,
            },
            Value::String(s) => s.len() + 2,
            Value::Array(items) => {
                *sum += 2 + items.len().saturating_sub(1);
                return items.iter().any(|item| at_least(item, limit, sum)) || *sum > limit;
            }
            Value::Object(map) => {
                // Braces, and per entry the quoted key, a colon and a comma.
                *sum += 2 + map.len().saturating_sub(1);
                return map.iter().any(|(key, item)| {
                    *sum += key.len() + 3;
                    at_least(item, limit, sum)
                }) || *sum > limit;
            }
        };
        *sum > limit
    }
    let mut sum = 0;
    at_least(value, limit, &mut sum)
}

/// The result object's part for where the store kept a result.
fn stored_link(kept: Kept) -> StoredLink {
    StoredLink {
        uri: kept.uri,
        size: kept.size,
        mime: kept.mime,
        expires_at: Some(kept.expires_at),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bounds never say "over" for JSON that fits nor "within" for JSON that
    /// does not, and the lower one is exact for JSON without escapes or fractions.
    #[test]
    fn size_bounds_hold() {
        let values = [
            json!(null),
            json!(true),
            json!(false),
            json!(0),
            json!(9),
            json!(10),
            json!(-1),
            json!(-10),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(0.5),
            json!(-1.25e-7),
            json!(""),
            json!("line\nbreak \"quoted\" \u{1} ünïcode"),
            json!([]),
            json!([1, [2, [3]], {}]),
            json!({}),
            json!({"a": 1, "b\n": [true, null], "c": {"d": "e"}}),
        ];
        for value in values {
            let size = json_size(&value);
            for limit in 0..size + 3 {
                if json_size_exceeds(&value, limit) {
                    assert!(size > limit, "{value}: {size} bytes, said over {limit}");
                }
            }
            let escapes = value.to_string().contains('\\');
            let fractions = value.to_string().contains('.');
            if !escapes && !fractions {
                assert!(!json_size_exceeds(&value, size), "{value}");
                assert!(json_size_exceeds(&value, size - 1), "{value}");
            }
            assert!(value_bound(&value) >= size, "{value}");
            assert!(value_bound(&value) <= size * 6 + 24, "{value}");
        }
    }

    /// The bound of a typed MCP rendering is never below its size, for results
    /// with every kind of part, in every revision and mode.
    #[test]
    fn mcp_bound_is_never_below_the_size() {
        use crate::result::{ResourceBody, ResourceLink, StoredLink};
        let link = ResourceLink {
            uri: "https://example.com/a?b=\"c\"".into(),
            name: "a\nb".into(),
            title: Some("t".into()),
            description: Some("d".into()),
            mime: Some("text/csv".into()),
            size: Some(u64::MAX),
        };
        let stored = StoredLink {
            uri: "toolhost://results/1".into(),
            size: Some(12),
            mime: "application/json".into(),
            expires_at: Some(jiff::Timestamp::from_second(1_800_000_000).unwrap()),
        };
        let results = [
            ToolResult::success(Some(
                json!({"k": "\u{1}\"quoted\"", "n": -1.5e300, "a": [null, true]}),
            ))
            .summary("s\n")
            .part(ContentPart::text("plain"))
            .part(ContentPart::Text {
                text: "# md".into(),
                mime: Some("text/markdown".into()),
            })
            .part(ContentPart::binary(vec![0, 1, 2], "image/png"))
            .part(ContentPart::binary(vec![3; 10], "audio/wav"))
            .part(ContentPart::binary(vec![4; 7], "application/zip"))
            .part(ContentPart::ResourceLink(link.clone()))
            .part(ContentPart::ResourceLink(ResourceLink {
                uri: "".into(),
                ..link
            }))
            .part(ContentPart::EmbeddedResource {
                uri: "not a uri".into(),
                mime: None,
                body: ResourceBody::Bytes(vec![9; 5]),
            })
            .part(ContentPart::EmbeddedResource {
                uri: "file:///x".into(),
                mime: Some("text/plain".into()),
                body: ResourceBody::Text("x".into()),
            })
            .stored_link(stored)
            .duration_ms(1.25)
            .build(),
            ToolResult::success(Some(json!([1, 2, 3]))).build(),
            ToolResult::failure_with(ErrorCode::Timeout, "late", json!({"ms": 5})),
            ToolResult::success(None).build(),
        ];
        let now = jiff::Timestamp::from_second(1_700_000_000).unwrap();
        for (index, result) in results.iter().enumerate() {
            for target in Target::all() {
                let mut ctx = RenderContext::new("t", now);
                ctx.server = Some(super::super::ServerInfo {
                    name: "toolhost",
                    version: "0.0.0",
                });
                if let Rendering::Mcp(rendered) = target.render(result, &ctx) {
                    let size = json_size(&rendered);
                    assert!(size_bound(&rendered) >= size, "result {index}, {target}");
                    let rendering = Rendering::Mcp(rendered);
                    assert_eq!(size_over(&rendering, size), None);
                    assert_eq!(
                        size_over(&rendering, size - 1),
                        Some(size),
                        "result {index}, {target}"
                    );
                }
            }
        }
    }
}
