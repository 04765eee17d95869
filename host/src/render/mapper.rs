//! [`Mapper`]: picks the renderer, applies the size limit, offloads what does not fit.

use std::sync::Arc;

use serde_json::{Value, json};

use super::legacy::format::encode;
use super::{RenderContext, Target};
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
    /// The JSON to send.
    pub value: Value,
    /// Whether the full result went to the store (then `value` carries its link).
    pub offloaded: bool,
}

impl Rendered {
    /// The size of the rendering in bytes, as compact JSON. Counted on demand:
    /// the mapper itself only counts what is near the limit.
    pub fn size(&self) -> usize {
        json_size(&self.value)
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
    ) -> Value {
        target.renderer().render(result, ctx)
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
        let data_alone_over = result
            .data()
            .is_some_and(|data| json_size_exceeds(data, limit));
        let oversized = if data_alone_over {
            None
        } else {
            let value = self.render_inline(result, target, ctx);
            // Most results are far below the limit: a bound that formats nothing
            // says so without serializing the rendering to count it.
            if json_size_within(&value, limit) {
                return Rendered {
                    value,
                    offloaded: false,
                };
            }
            let size = json_size(&value);
            if size <= limit {
                return Rendered {
                    value,
                    offloaded: false,
                };
            }
            Some((value, size))
        };
        let Some(store) = &self.store else {
            let (value, size) = oversized.unwrap_or_else(|| {
                let value = self.render_inline(result, target, ctx);
                let size = json_size(&value);
                (value, size)
            });
            tracing::warn!(tool = ctx.tool, size, limit, %target, "result over the size limit and no result store configured; sending it inline");
            return Rendered {
                value,
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
        let link = match store.put(offload).await {
            Ok(kept) => stored_link(kept),
            Err(error) => {
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
                    value: self.render_inline(&failure, target, ctx),
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
        let mut value = self.render_inline(&slim, target, ctx);
        if json_size(&value) > limit && !slim.content().is_empty() {
            let kept_back = slim.content().len();
            slim = slim
                .to_builder()
                .clear_parts()
                .part(ContentPart::text(format!(
                    "{kept_back} content part(s) of this result are in the stored result at {}.",
                    link.uri
                )))
                .build();
            value = self.render_inline(&slim, target, ctx);
        }
        Rendered {
            value,
            offloaded: true,
        }
    }
}

/// The size of `value` as compact JSON, in bytes.
pub fn json_size(value: &Value) -> usize {
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
    let mut counter = Counter(0);
    serde_json::to_writer(&mut counter, value).expect("writing JSON to a counter cannot fail");
    counter.0
}

/// Whether `value` as compact JSON is at most `limit` bytes long, by an upper bound
/// of its size: every string byte counted as a six-byte escape, every number at
/// its longest. `false` may still mean "within"; it stops as soon as the bound
/// passes the limit, and formats nothing.
pub fn json_size_within(value: &Value, limit: usize) -> bool {
    fn at_most(value: &Value, limit: usize, sum: &mut usize) -> bool {
        *sum += match value {
            Value::Null | Value::Bool(_) => 5,
            // `-9223372036854775808`, or a float as `-1.7976931348623157e308`.
            Value::Number(_) => 24,
            Value::String(s) => s.len() * 6 + 2,
            Value::Array(items) => {
                *sum += 2 + items.len();
                return *sum <= limit && items.iter().all(|item| at_most(item, limit, sum));
            }
            Value::Object(map) => {
                *sum += 2 + map.len();
                return *sum <= limit
                    && map.iter().all(|(key, item)| {
                        *sum += key.len() * 6 + 3;
                        at_most(item, limit, sum)
                    });
            }
        };
        *sum <= limit
    }
    let mut sum = 0;
    at_most(value, limit, &mut sum)
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
                if json_size_within(&value, limit) {
                    assert!(size <= limit, "{value}: {size} bytes, said within {limit}");
                }
            }
            let escapes = value.to_string().contains('\\');
            let fractions = value.to_string().contains('.');
            if !escapes && !fractions {
                assert!(!json_size_exceeds(&value, size), "{value}");
                assert!(json_size_exceeds(&value, size - 1), "{value}");
            }
            assert!(json_size_within(&value, size * 6 + 24), "{value}");
        }
    }
}
