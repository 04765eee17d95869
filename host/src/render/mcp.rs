//! A `CallToolResult` of one MCP revision, in one output mode.
//!
//! What each revision can carry (see `docs/rendering.md` for the full table):
//! - 2024-11-05: text, image and embedded-resource blocks only. Audio, resource
//!   links and stored-result pointers become their documented text forms.
//! - 2025-03-26: adds audio blocks.
//! - 2025-06-18 and 2025-11-25: add `structuredContent` (an object: other data is
//!   wrapped, see [`super::structured`]), `resource_link` blocks, `_meta` on blocks.
//! - 2026-07-28: structured content may be any JSON value; `resultType` is set.
//!
//! The two modes are the ADR's phases. `compat` (phase 1): the text block is the
//! legacy envelope string. `spec` (phase 3): the data as plain JSON text, the
//! summary as a block of its own, the metadata as a `{"_meta": ..}` block; a
//! result without data sends no data block. In both, the error flag is set on
//! failures only, and `_meta` carries the metadata under [`super::meta`]'s keys.

use std::sync::LazyLock;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rmcp::model::{
    AudioContent, CallToolResult, ContentBlock, EmbeddedResource, ImageContent, MetaObject,
    ReadResourceResult, Resource, ResourceContents, ResultType, TextContent,
};
use serde_json::{Map, Value, json};

use super::{OutputMode, RenderContext, Revision, legacy, literal, meta, structured, text};
use crate::result::{
    ContentPart, Outcome, ResourceBody, ResourceLink, StoredLink, ToolError, ToolResult,
};

/// Renders for one MCP revision in one mode, into the `CallToolResult` rmcp
/// sends as it is: nothing converts or patches it on the way out.
#[derive(Debug, Clone, Copy)]
pub struct McpRenderer {
    pub revision: Revision,
    pub mode: OutputMode,
}

impl McpRenderer {
    pub fn render(&self, result: &ToolResult, ctx: &RenderContext<'_>) -> CallToolResult {
        let mut out = self.render_without_data(result, ctx);
        out.structured_content = result
            .data()
            .and_then(|data| structured::content(data, ctx.output_schema, self.revision));
        out
    }

    /// [`McpRenderer::render`]'s result as the JSON text rmcp writes for it (the
    /// same bytes), for an edge that sends text: stdio.
    ///
    /// Written in one pass, without the typed value's copies: the first block's
    /// JSON (the envelope in `compat` and `legacy` modes, the data in `spec`
    /// mode) goes into the text already escaped as a string ([`literal`]), and
    /// the structured content is written from the borrowed data. The members
    /// come in the order of rmcp's `CallToolResult`. The tests below and
    /// `tests/golden_matrix.rs` (every sample and target) hold the two
    /// renderings to the same bytes.
    pub fn render_text(&self, result: &ToolResult, ctx: &RenderContext<'_>) -> String {
        let without_lead = self.render_blocks(result, ctx, false);
        let lead = self.lead(result);
        let mut out = Vec::with_capacity(TEXT_CAPACITY);
        out.push(b'{');
        if let Some(result_type) = &without_lead.result_type {
            out.extend_from_slice(br#""resultType":"#);
            write_json(&mut out, result_type);
            out.push(b',');
        }
        out.extend_from_slice(br#""content":["#);
        for (index, block) in without_lead.content.iter().enumerate() {
            if index > 0 {
                out.push(b',');
            }
            match lead {
                Some(lead) if index == 0 => {
                    out.extend_from_slice(br#"{"type":"text","text":"#);
                    lead.write_literal(result, ctx, &mut out);
                    out.push(b'}');
                }
                _ => write_json(&mut out, block),
            }
        }
        out.push(b']');
        if let Some(data) = result.data()
            && let Some(shape) = structured::shape(data, ctx.output_schema, self.revision)
        {
            out.extend_from_slice(br#","structuredContent":"#);
            structured::write_shaped(&mut out, data, shape);
        }
        if let Some(is_error) = without_lead.is_error {
            out.extend_from_slice(br#","isError":"#);
            write_json(&mut out, &is_error);
        }
        if let Some(meta) = &without_lead.meta {
            out.extend_from_slice(br#","_meta":"#);
            write_json(&mut out, meta);
        }
        out.push(b'}');
        String::from_utf8(out).expect("serde_json and ASCII punctuation write UTF-8")
    }

    /// The JSON the first block of this result carries as its text, if any.
    fn lead<'r>(&self, result: &'r ToolResult) -> Option<Lead<'r>> {
        match (self.mode, result.outcome()) {
            (OutputMode::Compat | OutputMode::Legacy, _) => Some(Lead::Envelope),
            (OutputMode::Spec, Outcome::Success { data: Some(data) }) => Some(Lead::Data(data)),
            (OutputMode::Spec, _) => None,
        }
    }

    /// Everything of the rendering but the structured content, which the caller
    /// adds (a copy of the data, or the data itself when it owns the result).
    pub(super) fn render_without_data(
        &self,
        result: &ToolResult,
        ctx: &RenderContext<'_>,
    ) -> CallToolResult {
        self.render_blocks(result, ctx, true)
    }

    /// [`McpRenderer::render_without_data`]; without `with_lead`, the first
    /// block's JSON ([`McpRenderer::lead`]) is left empty for the caller to write.
    fn render_blocks(
        &self,
        result: &ToolResult,
        ctx: &RenderContext<'_>,
        with_lead: bool,
    ) -> CallToolResult {
        let mut metadata = meta::metadata_map(result, ctx);
        let mut blocks = Vec::new();
        if let Some(lead) = self.lead(result) {
            blocks.push(text_block(match with_lead {
                true => lead.text(result, ctx),
                false => String::new(),
            }));
        }
        if self.mode == OutputMode::Spec {
            if let Outcome::Failure(error) = result.outcome() {
                blocks.push(text_block(error.message.clone()));
                blocks.push(text_block(error_text(error)));
            }
            if let Some(summary) = result.summary() {
                blocks.push(text_block(summary.to_owned()));
            }
        }
        // In legacy mode the envelope already carries the parts and links.
        if self.mode != OutputMode::Legacy {
            for (index, part) in result.content().iter().enumerate() {
                blocks.push(self.part(index, part));
            }
            for link in result.stored_links() {
                blocks.push(self.stored_link(link));
            }
        }
        if self.mode == OutputMode::Spec {
            if blocks.is_empty() {
                blocks.push(text_block(text::empty(result).to_owned()));
            }
            blocks.push(text_block(json_text(
                &json!({ "_meta": Value::Object(metadata.clone()) }),
            )));
        }

        let mut out = CallToolResult::success(blocks);
        out.is_error = result.is_failure().then_some(true);
        if self.revision.is_stateless() {
            // 2026-07-28 names the server in every result; it is no part of what
            // the tool returned, so it comes last, after the result's own keys.
            if let Some(server) = ctx.server {
                metadata.insert(SERVER_INFO_KEY.into(), server.to_value());
            }
            out.result_type = Some(ResultType::COMPLETE);
        } else {
            out.result_type = None;
        }
        out.meta = Some(MetaObject(metadata));
        out
    }

    pub(super) fn part(&self, index: usize, part: &ContentPart) -> ContentBlock {
        match part {
            ContentPart::Text { text, mime: None } => text_block(text.clone()),
            // Text blocks cannot say what kind of text they hold; from 2025-06-18
            // their `_meta` can, before that an embedded text resource can.
            ContentPart::Text {
                text,
                mime: Some(mime),
            } if self.revision.has_structured_content() => ContentBlock::Text(
                TextContent::new(text.clone()).with_meta(meta_of(meta::key("mimeType"), mime)),
            ),
            ContentPart::Text {
                text,
                mime: Some(mime),
            } => ContentBlock::Resource(EmbeddedResource::new(
                ResourceContents::TextResourceContents {
                    uri: part_uri(index),
                    mime_type: Some(mime.clone()),
                    text: text.clone(),
                    meta: None,
                },
            )),
            ContentPart::Binary { data, mime } => self.binary(index, data, mime),
            ContentPart::ResourceLink(link) => self.resource_link(link),
            ContentPart::EmbeddedResource { uri, mime, body } => {
                // MCP requires a URI here; a tool's string that is none is named by
                // the part's place instead (and kept in `_meta` where blocks have one).
                let valid = is_uri(uri);
                let wire_uri = if valid { uri.clone() } else { part_uri(index) };
                let contents = match body {
                    ResourceBody::Text(text) => ResourceContents::TextResourceContents {
                        uri: wire_uri,
                        mime_type: mime.clone(),
                        text: text.clone(),
                        meta: None,
                    },
                    ResourceBody::Bytes(bytes) => ResourceContents::BlobResourceContents {
                        uri: wire_uri,
                        mime_type: mime.clone(),
                        blob: STANDARD.encode(bytes),
                        meta: None,
                    },
                };
                let mut block = EmbeddedResource::new(contents);
                if !valid && self.revision.has_structured_content() {
                    block = block.with_meta(meta_of(meta::key("uri"), uri));
                }
                ContentBlock::Resource(block)
            }
        }
    }

    fn binary(&self, index: usize, data: &[u8], mime: &str) -> ContentBlock {
        let family = mime.split('/').next().unwrap_or_default();
        match family {
            "image" => ContentBlock::Image(ImageContent::new(STANDARD.encode(data), mime)),
            "audio" if self.revision.has_audio() => {
                ContentBlock::Audio(AudioContent::new(STANDARD.encode(data), mime))
            }
            "audio" => text_block(text::binary(data, mime)),
            // Other blobs travel as an embedded resource, named by their place in
            // the result: MCP has no plain binary block.
            _ => ContentBlock::Resource(EmbeddedResource::new(
                ResourceContents::BlobResourceContents {
                    uri: part_uri(index),
                    mime_type: Some(mime.to_owned()),
                    blob: STANDARD.encode(data),
                    meta: None,
                },
            )),
        }
    }

    fn resource_link(&self, link: &ResourceLink) -> ContentBlock {
        // A `resource_link` must carry a URI: a tool's string that is none (an
        // app's `""` or a bare path) goes as the text form, as before 2025-06-18.
        if !self.revision.has_structured_content() || !is_uri(&link.uri) {
            return text_block(text::resource_link(link));
        }
        ContentBlock::ResourceLink(wire_link(link))
    }

    fn stored_link(&self, link: &StoredLink) -> ContentBlock {
        if !self.revision.has_structured_content() || !is_uri(&link.uri) {
            return text_block(text::stored_link(link));
        }
        let mut block = wire_link(&ResourceLink {
            uri: link.uri.clone(),
            name: "result".into(),
            title: Some("Stored result".into()),
            description: Some(text::stored_link_description(link)),
            mime: Some(link.mime.clone()),
            size: link.size,
        });
        if let Some(at) = link.expires_at {
            block.meta = Some(meta_of(meta::key("expiresAt"), &at.to_string()));
        }
        ContentBlock::ResourceLink(block)
    }
}

/// The JSON a result's first text block carries: formatted as text for the
/// typed result, written as an escaped string in one pass by
/// [`McpRenderer::render_text`].
#[derive(Clone, Copy)]
enum Lead<'r> {
    /// The legacy envelope (`compat` and `legacy` modes).
    Envelope,
    /// A success's data (`spec` mode).
    Data(&'r Value),
}

impl Lead<'_> {
    fn text(self, result: &ToolResult, ctx: &RenderContext<'_>) -> String {
        match self {
            Lead::Envelope => legacy::envelope_text(result, ctx),
            Lead::Data(data) => json_text(data),
        }
    }

    fn write_literal(self, result: &ToolResult, ctx: &RenderContext<'_>, out: &mut Vec<u8>) {
        match self {
            Lead::Envelope => legacy::write_envelope_literal(result, ctx, out),
            Lead::Data(data) => literal::write_literal(out, data),
        }
    }
}

/// What [`McpRenderer::render_text`] reserves: a small result's text, so most
/// renderings grow their buffer once or never.
const TEXT_CAPACITY: usize = 1024;

/// Appends `value` as compact JSON.
fn write_json(out: &mut Vec<u8>, value: &(impl serde::Serialize + ?Sized)) {
    serde_json::to_writer(out, value).expect("a JSON value always serializes into memory");
}

/// The `_meta` key with which a 2026-07-28 result names the server that sent it.
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

/// The `_meta` of a result of `revision` other than a tool's (a prompt, a
/// read, a completion): the server's name in 2026-07-28, nothing before.
pub fn server_meta(revision: Revision, server: Option<ServerInfo<'_>>) -> Option<MetaObject> {
    let server = server.filter(|_| revision.is_stateless())?;
    let mut meta = Map::new();
    meta.insert(SERVER_INFO_KEY.into(), server.to_value());
    Some(MetaObject(meta))
}

/// The server a 2026-07-28 result names in its `_meta`: what the MCP edge puts
/// into the render context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerInfo<'a> {
    pub name: &'a str,
    pub version: &'a str,
}

impl ServerInfo<'_> {
    pub(crate) fn to_value(self) -> Value {
        json!({ "name": self.name, "version": self.version })
    }
}

/// The spec mode's block of a failure: `{"error": {"code", "message", "details"?}}`.
fn error_text(error: &ToolError) -> String {
    let mut fields = Map::new();
    fields.insert("code".into(), json!(error.code.as_str()));
    fields.insert("message".into(), json!(error.message));
    if let Some(details) = &error.details {
        fields.insert("details".into(), details.clone());
    }
    json_text(&json!({ "error": Value::Object(fields) }))
}

fn wire_link(link: &ResourceLink) -> Resource {
    let mut block = Resource::new(link.uri.clone(), link.name.clone());
    block.title = link.title.clone();
    block.description = link.description.clone();
    block.mime_type = link.mime.clone();
    block.size = link.size;
    block
}

fn meta_of(key: String, value: &str) -> MetaObject {
    let mut map = Map::new();
    map.insert(key, json!(value));
    MetaObject(map)
}

/// Whether `uri` is a URI (RFC 3986, with a scheme), which the `uri` of MCP's
/// resource links and embedded resources must be (`"format": "uri"` in every
/// revision's schema). Decided by the same checker the schema tests use.
fn is_uri(uri: &str) -> bool {
    static URI: LazyLock<jsonschema::Validator> = LazyLock::new(|| {
        jsonschema::options()
            .should_validate_formats(true)
            .build(&json!({ "type": "string", "format": "uri" }))
            .expect("a schema of one format compiles")
    });
    URI.is_valid(&json!(uri))
}

/// The name of a part that travels as an embedded resource although it has no URI
/// of its own: its place in the result.
fn part_uri(index: usize) -> String {
    format!("toolhost:part/{index}")
}

/// `value` as compact JSON text. `serde_json::to_string` writes into a buffer;
/// `Value`'s `Display` (`to_string()`) goes through a formatter and is slower.
pub(super) fn json_text(value: &Value) -> String {
    serde_json::to_string(value).expect("a JSON value always serializes")
}

fn text_block(text: String) -> ContentBlock {
    ContentBlock::Text(TextContent::new(text))
}

/// The `resources/read` contents of a stored result: its data as JSON text, then
/// each content part that has a resource form (text as text, bytes as a blob).
/// A stored result without data or parts reads as its legacy envelope, so a read
/// never comes back empty.
pub fn stored_contents(
    uri: &str,
    result: &ToolResult,
    ctx: &RenderContext<'_>,
) -> ReadResourceResult {
    let text = |uri: &str, mime: &str, text: String| ResourceContents::TextResourceContents {
        uri: uri.to_owned(),
        mime_type: Some(mime.to_owned()),
        text,
        meta: None,
    };
    let mut contents = Vec::new();
    if let Some(data) = result.data() {
        contents.push(text(uri, "application/json", json_text(data)));
    }
    for part in result.content() {
        let item = match part {
            ContentPart::Text { text: body, mime } => {
                text(uri, mime.as_deref().unwrap_or("text/plain"), body.clone())
            }
            ContentPart::Binary { data, mime } => ResourceContents::BlobResourceContents {
                uri: uri.to_owned(),
                mime_type: Some(mime.clone()),
                blob: STANDARD.encode(data),
                meta: None,
            },
            ContentPart::EmbeddedResource {
                uri: inner,
                mime,
                body,
            } => match body {
                ResourceBody::Text(body) => ResourceContents::TextResourceContents {
                    uri: inner.clone(),
                    mime_type: mime.clone(),
                    text: body.clone(),
                    meta: None,
                },
                ResourceBody::Bytes(bytes) => ResourceContents::BlobResourceContents {
                    uri: inner.clone(),
                    mime_type: mime.clone(),
                    blob: STANDARD.encode(bytes),
                    meta: None,
                },
            },
            ContentPart::ResourceLink(link) => text(uri, "text/plain", text::resource_link(link)),
        };
        contents.push(item);
    }
    if contents.is_empty() {
        contents.push(text(
            uri,
            "application/json",
            legacy::envelope_text(result, ctx),
        ));
    }
    // 2026-07-28 requires `resultType`; rmcp removes it for older peers.
    ReadResourceResult::new(contents)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::ErrorCode;

    /// The text an edge sends is what rmcp writes for the typed rendering, byte
    /// for byte, for results of awkward strings, in every revision and mode,
    /// with and without the server named. (`tests/golden_matrix.rs` checks
    /// the same for every sample.)
    #[test]
    fn the_text_is_rmcps_serialization_of_the_typed_result() {
        let awkward = "quote \" backslash \\ controls \u{0}\u{1f}\t\n non-ASCII é 🦀 \u{2028}";
        let list_schema = json!({"type": "array"});
        let mut results: Vec<(ToolResult, Option<Value>)> = Vec::new();
        results.push((
            ToolResult::success(Some(json!({ awkward: [awkward, 1.5, null] })))
                .summary(awkward)
                .part(ContentPart::text(awkward))
                .build(),
            None,
        ));
        results.push((ToolResult::success(Some(json!([awkward]))).build(), None));
        results.push((
            ToolResult::success(Some(json!([awkward]))).build(),
            Some(list_schema),
        ));
        results.push((ToolResult::success(None).build(), None));
        results.push((
            ToolResult::failure_with(ErrorCode::ToolError, awkward, json!({ awkward: awkward })),
            None,
        ));
        let server = ServerInfo {
            name: "toolhost",
            version: "1.0",
        };
        for (result, schema) in &results {
            for server in [None, Some(server)] {
                let mut ctx = RenderContext::new("t\"ool", "2027-01-15T08:00:00Z".parse().unwrap());
                ctx.output_schema = schema.as_ref();
                ctx.server = server;
                for revision in Revision::ALL {
                    for mode in OutputMode::ALL {
                        let renderer = McpRenderer { revision, mode };
                        let typed = renderer.render(result, &ctx);
                        assert_eq!(
                            renderer.render_text(result, &ctx),
                            serde_json::to_string(&typed).unwrap(),
                            "{revision} {mode:?}: {result:?}"
                        );
                    }
                }
            }
        }
    }
}
