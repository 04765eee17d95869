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
use serde_json::{Map, Value, json};

use super::{OutputMode, RenderContext, Renderer, Revision, legacy, meta, structured, text};
use crate::result::{ContentPart, Outcome, ResourceBody, ResourceLink, StoredLink, ToolResult};

/// Renders for one MCP revision in one mode.
#[derive(Debug, Clone, Copy)]
pub struct McpRenderer {
    pub revision: Revision,
    pub mode: OutputMode,
}

impl Renderer for McpRenderer {
    fn render(&self, result: &ToolResult, ctx: &RenderContext<'_>) -> Value {
        let metadata = meta::metadata_map(result, ctx);
        let mut blocks = Vec::new();
        match self.mode {
            OutputMode::Compat | OutputMode::Legacy => {
                blocks.push(text_block(legacy::envelope_text(result, ctx)))
            }
            OutputMode::Spec => {
                match result.outcome() {
                    Outcome::Success { data: Some(data) } => {
                        blocks.push(text_block(data.to_string()))
                    }
                    Outcome::Success { data: None } => {}
                    Outcome::Failure(error) => {
                        blocks.push(text_block(error.message.clone()));
                        let mut object =
                            json!({ "code": error.code.as_str(), "message": error.message });
                        if let Some(details) = &error.details {
                            object["details"] = details.clone();
                        }
                        blocks.push(text_block(json!({ "error": object }).to_string()));
                    }
                }
                if let Some(summary) = result.summary() {
                    blocks.push(text_block(summary.to_owned()));
                }
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
            blocks.push(text_block(json!({ "_meta": metadata }).to_string()));
        }

        let mut out = Map::new();
        out.insert("content".into(), Value::Array(blocks));
        if let Some(data) = result.data()
            && let Some(content) = structured::content(data, ctx.output_schema, self.revision)
        {
            out.insert("structuredContent".into(), content);
        }
        if result.is_failure() {
            out.insert("isError".into(), json!(true));
        }
        out.insert("_meta".into(), Value::Object(metadata));
        if self.revision.is_stateless() {
            out.insert("resultType".into(), json!("complete"));
        }
        Value::Object(out)
    }
}

impl McpRenderer {
    fn part(&self, index: usize, part: &ContentPart) -> Value {
        match part {
            ContentPart::Text { text, mime: None } => text_block(text.clone()),
            // Text blocks cannot say what kind of text they hold; from 2025-06-18
            // their `_meta` can, before that an embedded text resource can.
            ContentPart::Text {
                text,
                mime: Some(mime),
            } if self.revision.has_structured_content() => {
                let mut block = text_block(text.clone());
                block["_meta"] = json!({ meta::key("mimeType"): mime });
                block
            }
            ContentPart::Text {
                text,
                mime: Some(mime),
            } => json!({
                "type": "resource",
                "resource": { "uri": part_uri(index), "mimeType": mime, "text": text }
            }),
            ContentPart::Binary { data, mime } => self.binary(index, data, mime),
            ContentPart::ResourceLink(link) => self.resource_link(link),
            ContentPart::EmbeddedResource { uri, mime, body } => {
                let mut resource = Map::new();
                // MCP requires a URI here; a tool's string that is none is named by
                // the part's place instead (and kept in `_meta` where blocks have one).
                let valid = is_uri(uri);
                let wire_uri = if valid { uri.clone() } else { part_uri(index) };
                resource.insert("uri".into(), json!(wire_uri));
                if let Some(mime) = mime {
                    resource.insert("mimeType".into(), json!(mime));
                }
                match body {
                    ResourceBody::Text(text) => resource.insert("text".into(), json!(text)),
                    ResourceBody::Bytes(bytes) => {
                        resource.insert("blob".into(), json!(STANDARD.encode(bytes)))
                    }
                };
                let mut block = json!({ "type": "resource", "resource": resource });
                if !valid && self.revision.has_structured_content() {
                    block["_meta"] = json!({ meta::key("uri"): uri });
                }
                block
            }
        }
    }

    fn binary(&self, index: usize, data: &[u8], mime: &str) -> Value {
        let family = mime.split('/').next().unwrap_or_default();
        match family {
            "image" => json!({ "type": "image", "data": STANDARD.encode(data), "mimeType": mime }),
            "audio" if self.revision.has_audio() => {
                json!({ "type": "audio", "data": STANDARD.encode(data), "mimeType": mime })
            }
            "audio" => text_block(text::binary(data, mime)),
            // Other blobs travel as an embedded resource, named by their place in
            // the result: MCP has no plain binary block.
            _ => json!({
                "type": "resource",
                "resource": { "uri": part_uri(index), "mimeType": mime, "blob": STANDARD.encode(data) }
            }),
        }
    }

    fn resource_link(&self, link: &ResourceLink) -> Value {
        // A `resource_link` must carry a URI: a tool's string that is none (an
        // app's `""` or a bare path) goes as the text form, as before 2025-06-18.
        if !self.revision.has_structured_content() || !is_uri(&link.uri) {
            return text_block(text::resource_link(link));
        }
        let mut block = Map::new();
        block.insert("type".into(), json!("resource_link"));
        block.insert("uri".into(), json!(link.uri));
        block.insert("name".into(), json!(link.name));
        if let Some(title) = &link.title {
            block.insert("title".into(), json!(title));
        }
        if let Some(description) = &link.description {
            block.insert("description".into(), json!(description));
        }
        if let Some(mime) = &link.mime {
            block.insert("mimeType".into(), json!(mime));
        }
        if let Some(size) = link.size {
            block.insert("size".into(), json!(size));
        }
        Value::Object(block)
    }

    fn stored_link(&self, link: &StoredLink) -> Value {
        if !self.revision.has_structured_content() || !is_uri(&link.uri) {
            return text_block(text::stored_link(link));
        }
        let mut block = self.resource_link(&ResourceLink {
            uri: link.uri.clone(),
            name: "result".into(),
            title: Some("Stored result".into()),
            description: Some(text::stored_link_description(link)),
            mime: Some(link.mime.clone()),
            size: link.size,
        });
        if let Some(at) = link.expires_at {
            block["_meta"] = json!({ meta::key("expiresAt"): at.to_string() });
        }
        block
    }
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

fn text_block(text: String) -> Value {
    json!({ "type": "text", "text": text })
}

/// The `_meta` entry with which a 2026-07-28 result names the server that sent
/// it: its key and value. The MCP edge adds it to every stateless result; it is
/// no part of what a tool returned, so it is not in the rendering itself.
pub fn server_info(name: &str, version: &str) -> (String, Value) {
    (
        "io.modelcontextprotocol/serverInfo".to_owned(),
        json!({ "name": name, "version": version }),
    )
}

/// The `resources/read` contents of a stored result: its data as JSON text, then
/// each content part that has a resource form (text as text, bytes as a blob).
/// A stored result without data or parts reads as its legacy envelope, so a read
/// never comes back empty.
pub fn stored_contents(uri: &str, result: &ToolResult, ctx: &RenderContext<'_>) -> Value {
    let mut contents = Vec::new();
    if let Some(data) = result.data() {
        contents
            .push(json!({ "uri": uri, "mimeType": "application/json", "text": data.to_string() }));
    }
    for part in result.content() {
        let item = match part {
            ContentPart::Text { text, mime } => {
                json!({ "uri": uri, "mimeType": mime.as_deref().unwrap_or("text/plain"), "text": text })
            }
            ContentPart::Binary { data, mime } => {
                json!({ "uri": uri, "mimeType": mime, "blob": STANDARD.encode(data) })
            }
            ContentPart::EmbeddedResource {
                uri: inner,
                mime,
                body,
            } => {
                let mut item = match body {
                    ResourceBody::Text(text) => json!({ "uri": inner, "text": text }),
                    ResourceBody::Bytes(bytes) => {
                        json!({ "uri": inner, "blob": STANDARD.encode(bytes) })
                    }
                };
                if let Some(mime) = mime {
                    item["mimeType"] = json!(mime);
                }
                item
            }
            ContentPart::ResourceLink(link) => {
                json!({ "uri": uri, "mimeType": "text/plain", "text": text::resource_link(link) })
            }
        };
        contents.push(item);
    }
    if contents.is_empty() {
        contents.push(json!({ "uri": uri, "mimeType": "application/json", "text": legacy::envelope_text(result, ctx) }));
    }
    json!({ "contents": contents })
}
