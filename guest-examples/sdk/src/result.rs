//! Building a [`ToolResult`]: an outcome (data or a coded failure), a summary,
//! content parts, stored links and metadata.

use serde::Serialize;

use crate::wit::{
    BinaryPart, ContentPart, Datetime, EmbeddedResource, ErrorCode, Metadata, NamespacedValue,
    Outcome, Pagination, ResourceBody, ResourceLink, StoredLink, TextPart, ToolError, ToolResult,
};

impl ToolResult {
    /// A success whose data is `data`, serialized as JSON (any JSON value:
    /// an object, a list, a number...).
    ///
    /// ```
    /// # use toolhost_guest::{ToolResult, json};
    /// let result = ToolResult::success(json!({"sum": 3})).summary("1 + 2 = 3").build();
    /// ```
    pub fn success(data: impl Serialize) -> ResultBuilder {
        let mut builder = ResultBuilder::new(Outcome::Success(None));
        let data = builder.serialize(&data);
        builder.0.result.outcome = Outcome::Success(data);
        builder
    }

    /// A success without data: the summary and the content parts say it all.
    pub fn empty() -> ResultBuilder {
        ResultBuilder::new(Outcome::Success(None))
    }

    /// A failure with a stable `code` and a sentence saying what went wrong
    /// and what to do. Add specifics with [`ResultBuilder::details`].
    ///
    /// ```
    /// # use toolhost_guest::{ErrorCode, ToolResult, json};
    /// let result = ToolResult::failure(ErrorCode::InvalidArguments, "b must not be zero")
    ///     .details(json!({"field": "b"}))
    ///     .build();
    /// ```
    pub fn failure(code: ErrorCode, message: impl Into<String>) -> ResultBuilder {
        ResultBuilder::new(Outcome::Failure(ToolError {
            code,
            message: message.into(),
            details: None,
        }))
    }

    /// The failure for a tool name this plugin does not offer
    /// (`invalid_arguments`, details `{"tool": name}`).
    pub fn unknown_tool(name: &str) -> ResultBuilder {
        Self::failure(
            ErrorCode::InvalidArguments,
            format!("This plugin has no tool named `{name}`."),
        )
        .details(serde_json::json!({ "tool": name }))
    }
}

/// A [`ToolResult`] under construction; [`build`](Self::build) (or `.into()`)
/// finishes it.
///
/// Every method takes and returns the builder, so calls chain. JSON values
/// (data, details, the query, extension values) are serialized as they are
/// added; if one cannot be serialized, [`build`](Self::build) returns a
/// `tool_error` failure saying so instead of a malformed result.
#[derive(Debug, Clone)]
#[must_use = "a result does nothing until it is built and returned"]
pub struct ResultBuilder(Box<Draft>);

/// The builder's state, boxed so that a builder (say, in the `Err` of a
/// `Result`) is one pointer wide.
#[derive(Debug, Clone)]
struct Draft {
    result: ToolResult,
    serialization_error: Option<String>,
}

impl ResultBuilder {
    pub(crate) fn new(outcome: Outcome) -> Self {
        Self(Box::new(Draft {
            result: ToolResult {
                outcome,
                summary: None,
                content: Vec::new(),
                stored_links: Vec::new(),
                metadata: Metadata::default(),
            },
            serialization_error: None,
        }))
    }

    /// `value` as JSON text; on error, remembers it for `build`.
    fn serialize(&mut self, value: &impl Serialize) -> Option<String> {
        match serde_json::to_string(value) {
            Ok(text) => Some(text),
            Err(error) => {
                self.0.serialization_error.get_or_insert(error.to_string());
                None
            }
        }
    }

    fn metadata(&mut self) -> &mut Metadata {
        &mut self.0.result.metadata
    }

    /// A short text for the model or a human ("3 products updated").
    pub fn summary(mut self, summary: impl Into<String>) -> Self {
        self.0.result.summary = Some(summary.into());
        self
    }

    /// Specifics of a failure as JSON: the invalid field, the missing
    /// privileges, the id that was not found. Ignored on a success.
    pub fn details(mut self, details: impl Serialize) -> Self {
        let details = self.serialize(&details);
        if let Outcome::Failure(error) = &mut self.0.result.outcome {
            error.details = details;
        }
        self
    }

    /// Appends a content part (see [`Part`]): text, an image, audio, any
    /// binary, a resource link or an embedded resource. Parts are presented
    /// in the order they are added.
    pub fn part(mut self, part: impl Into<ContentPart>) -> Self {
        self.0.result.content.push(part.into());
        self
    }

    /// Appends several content parts.
    pub fn parts<P: Into<ContentPart>>(mut self, parts: impl IntoIterator<Item = P>) -> Self {
        self.0
            .result
            .content
            .extend(parts.into_iter().map(Into::into));
        self
    }

    /// Appends a link to a result the tool keeps in a store of its own.
    pub fn stored_link(mut self, link: StoredLink) -> Self {
        self.0.result.stored_links.push(link);
        self
    }

    /// Says where this page lies in a longer list.
    ///
    /// ```
    /// # use toolhost_guest::{Pagination, ToolResult, json};
    /// let page = ToolResult::success(json!([11, 12])).pagination(Pagination {
    ///     total: Some(42),
    ///     offset: Some(10),
    ///     limit: Some(2),
    ///     has_more: Some(true),
    ///     ..Default::default()
    /// });
    /// ```
    pub fn pagination(mut self, pagination: Pagination) -> Self {
        self.metadata().pagination = Some(pagination);
        self
    }

    /// Marks the call as a preview that committed nothing.
    pub fn dry_run(mut self, dry_run: bool) -> Self {
        self.metadata().dry_run = Some(dry_run);
        self
    }

    /// The size of the full response in bytes, when the tool knows it.
    pub fn response_size(mut self, bytes: u64) -> Self {
        self.metadata().response_size = Some(bytes);
        self
    }

    /// Echoes the query the tool actually ran (any JSON value).
    pub fn query(mut self, query: impl Serialize) -> Self {
        let query = self.serialize(&query);
        self.metadata().query = query;
        self
    }

    /// When the data was produced, for data older than the call (from an
    /// index or a cache). Without it the host uses the time of rendering.
    pub fn generated_at(mut self, at: Datetime) -> Self {
        self.metadata().generated_at = Some(at);
        self
    }

    /// Until when the result is valid.
    pub fn expires_at(mut self, at: Datetime) -> Self {
        self.metadata().expires_at = Some(at);
        self
    }

    /// Attaches `value` under an extension's own reverse-DNS `namespace`
    /// (`com.example.inventory`). The host refuses malformed namespaces, the
    /// protocols' (`io.modelcontextprotocol`, `dev.mcp`, ...) and its own
    /// (`dev.toolhost`).
    pub fn extension(
        mut self,
        namespace: impl Into<String>,
        name: impl Into<String>,
        value: impl Serialize,
    ) -> Self {
        if let Some(value) = self.serialize(&value) {
            self.metadata().extensions.push(NamespacedValue {
                namespace: namespace.into(),
                name: name.into(),
                value,
            });
        }
        self
    }

    /// Finishes the result.
    pub fn build(self) -> ToolResult {
        let Draft {
            result,
            serialization_error,
        } = *self.0;
        match serialization_error {
            None => result,
            Some(error) => ToolResult::failure(
                ErrorCode::ToolError,
                format!("The tool's result could not be serialized as JSON: {error}"),
            )
            .build(),
        }
    }
}

impl From<ResultBuilder> for ToolResult {
    fn from(builder: ResultBuilder) -> Self {
        builder.build()
    }
}

/// A content part of a result; build one with the functions below and add it
/// with [`ResultBuilder::part`].
///
/// ```
/// # use toolhost_guest::{Part, ToolResult};
/// # let png: Vec<u8> = vec![];
/// let result = ToolResult::empty()
///     .part(Part::text("Here is the chart."))
///     .part(Part::image(png, "image/png"))
///     .part(Part::resource_link("file:///reports/2027-02.csv", "2027-02.csv").mime("text/csv"))
///     .build();
/// ```
pub type Part = ContentPart;

impl ContentPart {
    /// Plain text for the model or a human.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Text(TextPart {
            text: text.into(),
            mime: None,
        })
    }

    /// Text of a given kind (`text/markdown`, `text/x-rust`).
    pub fn text_with_mime(text: impl Into<String>, mime: impl Into<String>) -> Self {
        Self::Text(TextPart {
            text: text.into(),
            mime: Some(mime.into()),
        })
    }

    /// Markdown text (`text/markdown`).
    pub fn markdown(text: impl Into<String>) -> Self {
        Self::text_with_mime(text, "text/markdown")
    }

    /// An image (`image/png`, `image/jpeg`...).
    pub fn image(bytes: impl Into<Vec<u8>>, mime: impl Into<String>) -> Self {
        Self::binary(bytes, mime)
    }

    /// Audio (`audio/wav`, `audio/mpeg`...).
    pub fn audio(bytes: impl Into<Vec<u8>>, mime: impl Into<String>) -> Self {
        Self::binary(bytes, mime)
    }

    /// Any binary content with its MIME type. Images and audio are binary
    /// parts too: the host tells them apart by the MIME type.
    pub fn binary(bytes: impl Into<Vec<u8>>, mime: impl Into<String>) -> Self {
        Self::Binary(BinaryPart {
            data: bytes.into(),
            mime: mime.into(),
        })
    }

    /// A pointer to a resource the caller can fetch later: its URI and a
    /// short programmatic name (a file name). Add a title, description, MIME
    /// type and size on the returned [`LinkBuilder`].
    pub fn resource_link(uri: impl Into<String>, name: impl Into<String>) -> LinkBuilder {
        LinkBuilder(ResourceLink {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: None,
            mime: None,
            size: None,
        })
    }

    /// A text resource whose content travels inside the result.
    pub fn embedded_text(
        uri: impl Into<String>,
        mime: impl Into<String>,
        text: impl Into<String>,
    ) -> Self {
        Self::EmbeddedResource(EmbeddedResource {
            uri: uri.into(),
            mime: Some(mime.into()),
            body: ResourceBody::Text(text.into()),
        })
    }

    /// A binary resource whose content travels inside the result.
    pub fn embedded_bytes(
        uri: impl Into<String>,
        mime: impl Into<String>,
        bytes: impl Into<Vec<u8>>,
    ) -> Self {
        Self::EmbeddedResource(EmbeddedResource {
            uri: uri.into(),
            mime: Some(mime.into()),
            body: ResourceBody::Bytes(bytes.into()),
        })
    }
}

/// A resource link under construction (see [`Part::resource_link`]); it
/// converts into a [`ContentPart`].
#[derive(Debug, Clone)]
#[must_use]
pub struct LinkBuilder(ResourceLink);

impl LinkBuilder {
    /// A human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.0.title = Some(title.into());
        self
    }

    /// What the resource holds.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.0.description = Some(description.into());
        self
    }

    /// The resource's MIME type.
    pub fn mime(mut self, mime: impl Into<String>) -> Self {
        self.0.mime = Some(mime.into());
        self
    }

    /// The size of the content in bytes.
    pub fn size(mut self, bytes: u64) -> Self {
        self.0.size = Some(bytes);
        self
    }

    /// Finishes the part.
    pub fn build(self) -> ContentPart {
        ContentPart::ResourceLink(self.0)
    }
}

impl From<LinkBuilder> for ContentPart {
    fn from(link: LinkBuilder) -> Self {
        link.build()
    }
}

// The generated records derive no `Default`; these let a tool write
// `Pagination { total: Some(42), ..Default::default() }`.
#[allow(clippy::derivable_impls)]
impl Default for Metadata {
    fn default() -> Self {
        Self {
            pagination: None,
            dry_run: None,
            response_size: None,
            query: None,
            generated_at: None,
            expires_at: None,
            extensions: Vec::new(),
        }
    }
}

#[allow(clippy::derivable_impls)]
impl Default for Pagination {
    fn default() -> Self {
        Self {
            total: None,
            offset: None,
            limit: None,
            next_cursor: None,
            has_more: None,
        }
    }
}

impl Datetime {
    /// The current wall-clock time, as the guest's WASI clock reports it.
    pub fn now() -> Self {
        std::time::SystemTime::now().into()
    }
}

impl From<std::time::SystemTime> for Datetime {
    fn from(time: std::time::SystemTime) -> Self {
        match time.duration_since(std::time::UNIX_EPOCH) {
            Ok(after) => Self {
                seconds: after.as_secs() as i64,
                nanoseconds: after.subsec_nanos(),
            },
            Err(before) => {
                let before = before.duration();
                let (seconds, nanoseconds) = match before.subsec_nanos() {
                    0 => (-(before.as_secs() as i64), 0),
                    n => (-(before.as_secs() as i64) - 1, 1_000_000_000 - n),
                };
                Self {
                    seconds,
                    nanoseconds,
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use serde_json::json;

    use super::*;

    #[test]
    fn success_serializes_data_and_keeps_everything() {
        let result = ToolResult::success(json!({"sum": 3}))
            .summary("1 + 2 = 3")
            .part(Part::text("hi"))
            .part(Part::resource_link("file:///a.csv", "a.csv").size(3))
            .pagination(Pagination {
                total: Some(2),
                ..Default::default()
            })
            .dry_run(true)
            .extension("com.example", "name", json!([1]))
            .build();
        assert!(matches!(result.outcome, Outcome::Success(Some(ref d)) if d == r#"{"sum":3}"#));
        assert_eq!(result.summary.as_deref(), Some("1 + 2 = 3"));
        assert_eq!(result.content.len(), 2);
        assert_eq!(result.metadata.dry_run, Some(true));
        assert_eq!(result.metadata.extensions[0].value, "[1]");
    }

    #[test]
    fn failure_carries_details() {
        let result = ToolResult::failure(ErrorCode::InvalidArguments, "b must not be zero")
            .details(json!({"field": "b"}))
            .build();
        match result.outcome {
            Outcome::Failure(error) => {
                assert_eq!(error.message, "b must not be zero");
                assert_eq!(error.details.as_deref(), Some(r#"{"field":"b"}"#));
            }
            Outcome::Success(_) => panic!("not a failure"),
        }
    }

    #[test]
    fn unserializable_data_becomes_a_tool_error() {
        let map: BTreeMap<(u8, u8), u8> = [((1, 2), 3)].into();
        let result = ToolResult::success(map).build();
        assert!(matches!(
            result.outcome,
            Outcome::Failure(ToolError {
                code: ErrorCode::ToolError,
                ..
            })
        ));
    }

    #[test]
    fn datetime_before_the_epoch() {
        let before = std::time::UNIX_EPOCH - std::time::Duration::from_millis(1500);
        let at = Datetime::from(before);
        assert_eq!((at.seconds, at.nanoseconds), (-2, 500_000_000));
    }
}
