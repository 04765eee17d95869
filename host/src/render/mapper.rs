//! [`Mapper`]: picks the renderer, applies the size limit, offloads what does not fit.

use std::sync::Arc;

use serde_json::{Value, json};

use super::legacy::format::encode;
use super::{RenderContext, Target};
use crate::result::{ContentPart, ErrorCode, ToolResult};
use crate::store::{Offload, ResultStore};

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
    /// Its size in bytes, as compact JSON.
    pub size: usize,
    /// Whether the full result went to the store (then `value` carries its link).
    pub offloaded: bool,
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
        let value = self.render_inline(result, target, ctx);
        let size = json_size(&value);
        if size <= limit {
            return Rendered {
                value,
                size,
                offloaded: false,
            };
        }
        let Some(store) = &self.store else {
            tracing::warn!(tool = ctx.tool, size, limit, %target, "result over the size limit and no result store configured; sending it inline");
            return Rendered {
                value,
                size,
                offloaded: false,
            };
        };
        let (version, body) = encode(result);
        let offload = Offload {
            format: version.number(),
            body: &body,
            data_size: result.data().map(|data| json_size(data) as u64),
            principal: ctx.principal,
            rendered_size: size,
        };
        let link = match store.put(offload).await {
            Ok(link) => link,
            Err(error) => {
                tracing::error!(tool = ctx.tool, size, limit, %error, "could not store a result over the size limit");
                let failure = ToolResult::failure_with(
                    ErrorCode::ToolError,
                    format!(
                        "The result ({size} bytes) is larger than the {limit} bytes this format allows inline, and storing it failed: {error}"
                    ),
                    json!({ "size": size, "limit": limit }),
                );
                let value = self.render_inline(&failure, target, ctx);
                return Rendered {
                    size: json_size(&value),
                    value,
                    offloaded: false,
                };
            }
        };

        let mut slim = result
            .to_builder()
            .without_payload()
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
            size: json_size(&value),
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
