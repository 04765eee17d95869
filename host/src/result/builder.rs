//! [`ToolResultBuilder`]: the one way to make a [`ToolResult`].

use jiff::Timestamp;
use serde_json::Value;

use super::{
    ContentPart, ErrorCode, Extension, LegacyKeys, Metadata, Outcome, Pagination, Parts,
    StoredLink, ToolResult,
};

/// Builds a [`ToolResult`] part by part.
///
/// Start with [`ToolResult::success`] or [`ToolResult::failure`]. Defaults: no
/// summary, no content parts, no stored links, empty metadata (the mapper fills
/// in the generation time when it renders).
///
/// ```
/// use serde_json::json;
/// use toolhost::result::{ContentPart, ToolResult};
///
/// let result = ToolResult::success(Some(json!({"updated": 3})))
///     .summary("3 products updated")
///     .part(ContentPart::text("Stock levels were recalculated."))
///     .dry_run(false)
///     .build();
/// assert_eq!(result.summary(), Some("3 products updated"));
/// ```
#[derive(Debug, Clone)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct ToolResultBuilder {
    pub(super) result: ToolResult,
}

impl ToolResultBuilder {
    pub(super) fn new(outcome: Outcome) -> Self {
        ToolResultBuilder {
            result: ToolResult::from(Parts {
                outcome,
                summary: None,
                content: Vec::new(),
                stored_links: Vec::new(),
                metadata: Metadata::default(),
                lease: Default::default(),
                data_text: Default::default(),
            }),
        }
    }

    pub(super) fn from_result(result: ToolResult) -> Self {
        ToolResultBuilder { result }
    }

    /// Replaces the data of a success. Has no effect on a failure.
    pub fn data(mut self, data: Option<Value>) -> Self {
        if let Outcome::Success { data: slot } = &mut self.result.parts.outcome {
            *slot = data;
            self.result.parts.data_text = Default::default();
        }
        self
    }

    /// Sets the details of a failure (the invalid fields, the missing
    /// privileges). Has no effect on a success.
    pub fn details(mut self, details: Value) -> Self {
        if let Outcome::Failure(error) = &mut self.result.parts.outcome {
            error.details = Some(details);
        }
        self
    }

    /// A short text for the model or a human.
    pub fn summary(mut self, summary: impl Into<String>) -> Self {
        self.result.parts.summary = Some(summary.into());
        self
    }

    /// Appends a content part.
    pub fn part(mut self, part: ContentPart) -> Self {
        self.result.parts.content.push(part);
        self
    }

    /// Appends several content parts, in order.
    pub fn parts(mut self, parts: impl IntoIterator<Item = ContentPart>) -> Self {
        self.result.parts.content.extend(parts);
        self
    }

    /// Removes every content part.
    pub fn clear_parts(mut self) -> Self {
        self.result.parts.content.clear();
        self
    }

    /// Appends a link to a stored result.
    pub fn stored_link(mut self, link: StoredLink) -> Self {
        self.result.parts.stored_links.push(link);
        self
    }

    /// Replaces the whole metadata.
    pub fn metadata(mut self, metadata: Metadata) -> Self {
        self.result.parts.metadata = metadata;
        self
    }

    pub fn pagination(mut self, pagination: Pagination) -> Self {
        self.result.parts.metadata.pagination = Some(pagination);
        self
    }

    pub fn dry_run(mut self, dry_run: bool) -> Self {
        self.result.parts.metadata.dry_run = Some(dry_run);
        self
    }

    pub fn response_size(mut self, bytes: u64) -> Self {
        self.result.parts.metadata.response_size = Some(bytes);
        self
    }

    pub fn query(mut self, query: Value) -> Self {
        self.result.parts.metadata.query = Some(query);
        self
    }

    pub fn generated_at(mut self, at: Timestamp) -> Self {
        self.result.parts.metadata.generated_at = Some(at);
        self
    }

    pub fn expires_at(mut self, at: Timestamp) -> Self {
        self.result.parts.metadata.expires_at = Some(at);
        self
    }

    pub fn duration_ms(mut self, ms: f64) -> Self {
        self.result.parts.metadata.duration_ms = Some(ms);
        self
    }

    /// Adds an extension value (already validated by [`Extension::new`]).
    pub fn extension(mut self, extension: Extension) -> Self {
        self.result.parts.metadata.extensions.push(extension);
        self
    }

    /// Keys of a legacy envelope that have no typed field.
    pub fn legacy_keys(mut self, keys: LegacyKeys) -> Self {
        self.result.parts.metadata.legacy = keys;
        self
    }

    pub fn build(self) -> ToolResult {
        self.result
    }
}

impl From<ToolResultBuilder> for ToolResult {
    fn from(builder: ToolResultBuilder) -> Self {
        builder.build()
    }
}

/// A shorthand for host-detected failures with details.
impl ToolResult {
    /// A failure with `code`, `message` and `details` in one step.
    pub fn failure_with(code: ErrorCode, message: impl Into<String>, details: Value) -> ToolResult {
        ToolResult::failure(code, message).details(details).build()
    }
}
