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

use super::members::{Member, Members};
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
    /// Written in one pass from the borrowed result, without the typed value
    /// or its copies: the first block's JSON (the envelope in `compat` and
    /// `legacy` modes, the data in `spec` mode) goes into the text already
    /// escaped as a string ([`literal`]), the structured content is written
    /// from the borrowed data, and the metadata from its borrowed members. The
    /// members come in the order of rmcp's `CallToolResult`. The tests below
    /// and `tests/golden_matrix.rs` (every sample and target) hold the two
    /// renderings to the same bytes.
    pub fn render_text(&self, result: &ToolResult, ctx: &RenderContext<'_>) -> String {
        let mut metadata = meta::metadata(result, ctx);
        let mut out = Vec::with_capacity(TEXT_CAPACITY);
        out.push(b'{');
        if self.revision.is_stateless() {
            out.extend_from_slice(br#""resultType":"#);
            write_json(&mut out, &ResultType::COMPLETE);
            out.push(b',');
        }
        out.extend_from_slice(br#""content":["#);
        let mut first = true;
        self.each_block(result, |block| {
            if !std::mem::take(&mut first) {
                out.push(b',');
            }
            match block {
                Block::Lead(lead) => write_text_block(&mut out, |out| {
                    lead.write_literal(result, ctx, out);
                }),
                Block::Text(text) => write_text_block(&mut out, |out| write_json(out, text)),
                Block::Error(error) => write_text_block(&mut out, |out| {
                    literal::write_literal(out, &ErrorBlock::of(error));
                }),
                Block::Metadata => write_text_block(&mut out, |out| {
                    literal::write_literal(out, &MetadataBlock { meta: &metadata });
                }),
                Block::Part(index, part) => write_json(&mut out, &self.part(index, part)),
                Block::Stored(link) => write_json(&mut out, &self.stored_link(link)),
            }
        });
        out.push(b']');
        if let Some(data) = result.data()
            && let Some(shape) = structured::shape(data, ctx.output_schema, self.revision)
        {
            out.extend_from_slice(br#","structuredContent":"#);
            structured::write_shaped(&mut out, data, shape);
        }
        if result.is_failure() {
            out.extend_from_slice(br#","isError":true"#);
        }
        if let Some(server) = self.names_server(ctx) {
            metadata.insert(SERVER_INFO_KEY, Member::Object(server.members()));
        }
        out.extend_from_slice(br#","_meta":"#);
        write_json(&mut out, &metadata);
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
        let metadata = meta::metadata(result, ctx);
        let mut blocks = Vec::new();
        self.each_block(result, |block| {
            blocks.push(match block {
                Block::Lead(lead) => text_block(lead.text(result, ctx)),
                Block::Text(text) => text_block(text.to_owned()),
                Block::Error(error) => text_block(json_text(&ErrorBlock::of(error))),
                Block::Metadata => text_block(json_text(&MetadataBlock { meta: &metadata })),
                Block::Part(index, part) => self.part(index, part),
                Block::Stored(link) => self.stored_link(link),
            });
        });
        let mut out = CallToolResult::success(blocks);
        out.is_error = result.is_failure().then_some(true);
        let mut metadata = metadata.into_map();
        if let Some(server) = self.names_server(ctx) {
            metadata.insert(SERVER_INFO_KEY.into(), server.to_value());
        }
        out.result_type = self.revision.is_stateless().then_some(ResultType::COMPLETE);
        out.meta = Some(MetaObject(metadata));
        out
    }

    /// The server this revision's results name in their `_meta`, if any:
    /// 2026-07-28 names it in every result. It is no part of what the tool
    /// returned, so it comes last, after the result's own keys.
    fn names_server<'c>(&self, ctx: &RenderContext<'c>) -> Option<ServerInfo<'c>> {
        ctx.server.filter(|_| self.revision.is_stateless())
    }

    /// Calls `each` with the blocks of `result`'s content, in order. What
    /// decides which blocks a result has, for both the typed rendering and the
    /// text.
    fn each_block<'r>(&self, result: &'r ToolResult, mut each: impl FnMut(Block<'r>)) {
        let any = std::cell::Cell::new(false);
        let mut each = |block| {
            any.set(true);
            each(block);
        };
        if let Some(lead) = self.lead(result) {
            each(Block::Lead(lead));
        }
        if self.mode == OutputMode::Spec {
            if let Outcome::Failure(error) = result.outcome() {
                each(Block::Text(&error.message));
                each(Block::Error(error));
            }
            if let Some(summary) = result.summary() {
                each(Block::Text(summary));
            }
        }
        // In legacy mode the envelope already carries the parts and links.
        if self.mode != OutputMode::Legacy {
            for (index, part) in result.content().iter().enumerate() {
                each(Block::Part(index, part));
            }
            for link in result.stored_links() {
                each(Block::Stored(link));
            }
        }
        if self.mode == OutputMode::Spec {
            if !any.get() {
                each(Block::Text(text::empty(result)));
            }
            each(Block::Metadata);
        }
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

/// One block of a result's content, named before it is built as rmcp's
/// `ContentBlock` or written as text.
#[derive(Clone, Copy)]
enum Block<'r> {
    /// The first block's JSON, as text.
    Lead(Lead<'r>),
    /// A text of the result's own (`spec` mode: a failure's message, the
    /// summary, the text of a result without any other block).
    Text(&'r str),
    /// `spec` mode: a failure's `{"error": ..}` as text.
    Error(&'r ToolError),
    /// `spec` mode: the metadata as a `{"_meta": ..}` text.
    Metadata,
    /// A content part, with its place in the result.
    Part(usize, &'r ContentPart),
    /// A link to a stored result.
    Stored(&'r StoredLink),
}

/// The spec mode's block of a failure: `{"error": {"code", "message", "details"?}}`.
#[derive(serde::Serialize)]
struct ErrorBlock<'e> {
    error: ErrorFields<'e>,
}

#[derive(serde::Serialize)]
struct ErrorFields<'e> {
    code: &'e str,
    message: &'e str,
    #[serde(skip_serializing_if = "Option::is_none")]
    details: Option<&'e Value>,
}

impl<'e> ErrorBlock<'e> {
    fn of(error: &'e ToolError) -> Self {
        ErrorBlock {
            error: ErrorFields {
                code: error.code.as_str(),
                message: &error.message,
                details: error.details.as_ref(),
            },
        }
    }
}

/// The spec mode's block of the metadata: `{"_meta": ..}`.
#[derive(serde::Serialize)]
struct MetadataBlock<'m, 'a> {
    #[serde(rename = "_meta")]
    meta: &'m Members<'a>,
}

/// Appends a text block whose text `write_text` writes as a JSON string.
fn write_text_block(out: &mut Vec<u8>, write_text: impl FnOnce(&mut Vec<u8>)) {
    out.extend_from_slice(br#"{"type":"text","text":"#);
    write_text(out);
    out.push(b'}');
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

impl<'a> ServerInfo<'a> {
    /// This server as the JSON object a typed `_meta` holds. A process names
    /// the same server in every result, so the object is built once per thread
    /// and copied: a copy neither hashes its keys nor builds its members.
    pub(crate) fn to_value(self) -> Value {
        use std::cell::RefCell;
        thread_local! {
            static LAST: RefCell<Option<(String, String, Value)>> = const { RefCell::new(None) };
        }
        LAST.with_borrow_mut(|last| match last {
            Some((name, version, value)) if name == self.name && version == self.version => {
                value.clone()
            }
            _ => {
                let value = Value::Object(self.members().into_map());
                *last = Some((self.name.to_owned(), self.version.to_owned(), value.clone()));
                value
            }
        })
    }

    fn members(self) -> Members<'a> {
        let mut members = Members::default();
        members.insert("name", Member::Str(self.name));
        members.insert("version", Member::Str(self.version));
        members
    }
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
pub(super) fn json_text(value: &(impl serde::Serialize + ?Sized)) -> String {
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

    /// The object kept per thread is the server asked for, whichever server
    /// was asked for before it.
    #[test]
    fn server_info_is_the_server_asked_for() {
        let servers = [
            ServerInfo {
                name: "toolhost",
                version: "1.0.0",
            },
            ServerInfo {
                name: "toolhost",
                version: "1.0.1",
            },
            ServerInfo {
                name: "other",
                version: "1.0.1",
            },
        ];
        for _ in 0..2 {
            for server in servers {
                for _ in 0..2 {
                    assert_eq!(
                        server.to_value(),
                        json!({"name": server.name, "version": server.version})
                    );
                }
            }
        }
    }

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
