//! The result object: what a tool's answer means, independent of any wire format.
//!
//! A [`ToolResult`] is an immutable value built with [`ToolResultBuilder`]. It is
//! either a success with optional data or a failure with a coded [`ToolError`], and
//! may carry a summary, typed [`ContentPart`]s, [`StoredLink`]s to results kept in a
//! store, and [`Metadata`]. Nothing here is named after a field of MCP or any other
//! protocol: the renderers under `render/` decide how each part is spelled on the
//! wire. Nor does anything here have a serialized form: the versioned forms a
//! store keeps and an app answers with are types of their own
//! (`crate::render::format`), so renaming a field here changes no stored row and
//! no public contract. The set of parts is closed; it grows by adding, never by
//! changing.
//!
//! Results come from three places: a guest's WIT `tool-result` (converted in
//! `crate::runtime`), an app's answer (decoded by `crate::render::format`, legacy
//! envelopes by `crate::render::legacy::parse`), and the host itself for faults it
//! detects (a timeout, a memory limit).

mod builder;
pub mod input;
mod namespace;
mod prompt;
mod resource;

pub use builder::ToolResultBuilder;
pub use input::{InputAnswer, InputRequest, InputRequired, Question};
pub use namespace::{Extension, NamespaceError, validate_name, validate_namespace};
pub use prompt::{Prompt, PromptMessage, Role};
pub use resource::{Contents, Suggestions};

use jiff::Timestamp;
use serde_json::Value;

/// The complete answer of a tool call. Build one with [`ToolResult::success`] or
/// [`ToolResult::failure`]; it cannot be changed afterwards, only rebuilt with
/// [`ToolResult::to_builder`].
///
/// Its parts sit behind one pointer: a result is handed on by value through
/// every layer of a call (the runtime, the catalog, the edge, each `async`
/// step), and inline each hand-over copied all of it, over 600 bytes, about
/// twenty times a call (issue #17). Boxed, a hand-over copies a pointer, for
/// one allocation a result.
#[derive(Clone, PartialEq)]
pub struct ToolResult {
    parts: Box<Parts>,
}

/// What a [`ToolResult`] holds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Parts {
    pub(crate) outcome: Outcome,
    pub(crate) summary: Option<String>,
    pub(crate) content: Vec<ContentPart>,
    pub(crate) stored_links: Vec<StoredLink>,
    pub(crate) metadata: Metadata,
    /// What the result holds of a host-wide budget while it is alive (the
    /// runtime's bytes of results in flight); not part of its meaning.
    pub(crate) lease: Lease,
    /// How much JSON text the data was read from; not part of its meaning.
    pub(crate) data_text: DataText,
}

impl From<Parts> for ToolResult {
    fn from(parts: Parts) -> Self {
        ToolResult {
            parts: Box::new(parts),
        }
    }
}

impl std::fmt::Debug for ToolResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let parts = &*self.parts;
        f.debug_struct("ToolResult")
            .field("outcome", &parts.outcome)
            .field("summary", &parts.summary)
            .field("content", &parts.content)
            .field("stored_links", &parts.stored_links)
            .field("metadata", &parts.metadata)
            .finish_non_exhaustive()
    }
}

/// At most how many bytes of JSON text a result's data was read from, when it
/// was read from text (a guest's or an app's answer): what the mapper knows of
/// the data's size without walking it. Not part of the result's meaning: it
/// takes no part in comparing results, and data replaced through the builder
/// forgets it.
#[derive(Debug, Clone, Copy, Default)]
pub struct DataText {
    bytes: Option<usize>,
}

impl DataText {
    /// Data read from `bytes` bytes of JSON text.
    pub(crate) fn read_from(bytes: usize) -> Self {
        DataText { bytes: Some(bytes) }
    }
}

impl PartialEq for DataText {
    fn eq(&self, _: &DataText) -> bool {
        true
    }
}

/// A share of a host-wide budget a [`ToolResult`] holds until its last copy is
/// dropped. It takes no part in comparing or printing results.
#[derive(Clone, Default)]
pub struct Lease {
    /// Held, never read: dropping the last copy gives the share back.
    _share: Option<std::sync::Arc<dyn std::any::Any + Send + Sync>>,
}

impl Lease {
    /// A lease that holds `share` until dropped.
    pub fn new(share: impl std::any::Any + Send + Sync) -> Self {
        Lease {
            _share: Some(std::sync::Arc::new(share)),
        }
    }
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Lease")
    }
}

impl PartialEq for Lease {
    fn eq(&self, _: &Lease) -> bool {
        true
    }
}

impl ToolResult {
    /// Starts a successful result; `data` is any JSON value, or `None` when the
    /// tool has nothing machine-readable to return.
    pub fn success(data: Option<Value>) -> ToolResultBuilder {
        ToolResultBuilder::new(Outcome::Success { data })
    }

    /// Starts a successful result whose data is the JSON `text`, parsed, as a
    /// guest's answer arrives: the result keeps the text's length, so the
    /// mapper knows the data's size without walking it.
    ///
    /// ```
    /// use toolhost::result::ToolResult;
    ///
    /// let result = ToolResult::success_from_json(r#"{"sum": 5}"#)?.build();
    /// assert_eq!(result.data(), Some(&serde_json::json!({"sum": 5})));
    /// assert_eq!(result.data_text_bytes(), Some(10));
    /// # Ok::<(), serde_json::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// When `text` is not JSON, `serde_json`'s error, which says where.
    pub fn success_from_json(text: &str) -> serde_json::Result<ToolResultBuilder> {
        let data = serde_json::from_str(text)?;
        let mut builder = ToolResultBuilder::new(Outcome::Success { data: Some(data) });
        builder.result.parts.data_text = DataText::read_from(text.len());
        Ok(builder)
    }

    /// Starts a failed result with a stable code and a message for the caller.
    pub fn failure(code: ErrorCode, message: impl Into<String>) -> ToolResultBuilder {
        ToolResultBuilder::new(Outcome::Failure(ToolError {
            code,
            message: message.into(),
            details: None,
        }))
    }

    /// A builder holding every part of this result, to derive a changed copy.
    pub fn to_builder(&self) -> ToolResultBuilder {
        ToolResultBuilder::from_result(self.clone())
    }

    /// A builder holding this result, to change it without copying it.
    pub fn into_builder(self) -> ToolResultBuilder {
        ToolResultBuilder::from_result(self)
    }

    /// This result holding `lease` (a share of a host-wide budget) while it lives.
    pub fn with_lease(mut self, lease: Lease) -> Self {
        self.parts.lease = lease;
        self
    }

    /// A builder starting from a copy of this result without its payload: the
    /// data of a success, the details of a failure. What the mapper renders
    /// beside the link to the stored whole; the payload, often most of the
    /// result, is not copied.
    pub fn to_builder_without_payload(&self) -> ToolResultBuilder {
        let outcome = match &self.parts.outcome {
            Outcome::Success { .. } => Outcome::Success { data: None },
            Outcome::Failure(error) => Outcome::Failure(ToolError {
                code: error.code,
                message: error.message.clone(),
                details: None,
            }),
        };
        ToolResultBuilder::from_result(ToolResult::from(Parts {
            outcome,
            summary: self.parts.summary.clone(),
            content: self.parts.content.clone(),
            stored_links: self.parts.stored_links.clone(),
            metadata: self.parts.metadata.clone(),
            lease: self.parts.lease.clone(),
            data_text: DataText::default(),
        }))
    }

    pub fn outcome(&self) -> &Outcome {
        &self.parts.outcome
    }

    pub fn is_failure(&self) -> bool {
        matches!(self.parts.outcome, Outcome::Failure(_))
    }

    /// The data of a success, if it has any.
    pub fn data(&self) -> Option<&Value> {
        match &self.parts.outcome {
            Outcome::Success { data } => data.as_ref(),
            Outcome::Failure(_) => None,
        }
    }

    /// The data of a success, moved out (the result is left without data): for
    /// a renderer that owns the result and need not copy its largest part.
    pub fn take_data(&mut self) -> Option<Value> {
        self.parts.data_text = DataText::default();
        match &mut self.parts.outcome {
            Outcome::Success { data } => data.take(),
            Outcome::Failure(_) => None,
        }
    }

    /// At most how many bytes of JSON text the data was read from, when the
    /// result was read from text ([`ToolResult::success_from_json`], a guest's
    /// or an app's answer); `None` for data built as a value.
    pub fn data_text_bytes(&self) -> Option<usize> {
        self.parts.data_text.bytes
    }

    /// This result, its data (if it has any) read from at most `bytes` bytes of
    /// JSON text: for a decoder that read the whole result from that text.
    pub(crate) fn data_read_from(mut self, bytes: usize) -> Self {
        if self.data().is_some() {
            self.parts.data_text = DataText::read_from(bytes);
        }
        self
    }

    /// The error of a failure, to change (the runtime names what its policy
    /// denied in a failure that followed).
    pub fn error_mut(&mut self) -> Option<&mut ToolError> {
        match &mut self.parts.outcome {
            Outcome::Success { .. } => None,
            Outcome::Failure(error) => Some(error),
        }
    }

    /// The error of a failure, taken out of the result.
    pub fn into_error(self) -> Option<ToolError> {
        match self.parts.outcome {
            Outcome::Success { .. } => None,
            Outcome::Failure(error) => Some(error),
        }
    }

    /// The error of a failure.
    pub fn error(&self) -> Option<&ToolError> {
        match &self.parts.outcome {
            Outcome::Success { .. } => None,
            Outcome::Failure(error) => Some(error),
        }
    }

    pub fn summary(&self) -> Option<&str> {
        self.parts.summary.as_deref()
    }

    pub fn content(&self) -> &[ContentPart] {
        &self.parts.content
    }

    pub fn stored_links(&self) -> &[StoredLink] {
        &self.parts.stored_links
    }

    pub fn metadata(&self) -> &Metadata {
        &self.parts.metadata
    }
}

/// Whether the call succeeded: every result is exactly one of the two.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    Success { data: Option<Value> },
    Failure(ToolError),
}

/// A failure with a stable code, a message and optional details.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolError {
    pub code: ErrorCode,
    pub message: String,
    pub details: Option<Value>,
}

/// Why a call failed. Closed, and grows only by adding: an existing code never
/// changes its meaning or its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ErrorCode {
    /// Input the tool cannot use: malformed, unknown names, failing the input schema.
    InvalidArguments,
    /// The caller lacks a privilege the call needs.
    MissingPrivilege,
    /// What the call refers to does not exist.
    NotFound,
    /// The tool ran and failed, or returned something the host cannot accept.
    ToolError,
    /// Host-detected: the call ran past its deadline (or out of fuel).
    Timeout,
    /// Host-detected: the call hit a memory, table or instance limit.
    ResourceLimit,
    /// Host-detected: the call needed a capability its policy does not grant.
    PermissionDenied,
}

impl ErrorCode {
    /// Every code, in declaration order.
    pub const ALL: [ErrorCode; 7] = [
        ErrorCode::InvalidArguments,
        ErrorCode::MissingPrivilege,
        ErrorCode::NotFound,
        ErrorCode::ToolError,
        ErrorCode::Timeout,
        ErrorCode::ResourceLimit,
        ErrorCode::PermissionDenied,
    ];

    /// The stable name of the code (`invalid_arguments`, ...), the same in every format.
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorCode::InvalidArguments => "invalid_arguments",
            ErrorCode::MissingPrivilege => "missing_privilege",
            ErrorCode::NotFound => "not_found",
            ErrorCode::ToolError => "tool_error",
            ErrorCode::Timeout => "timeout",
            ErrorCode::ResourceLimit => "resource_limit",
            ErrorCode::PermissionDenied => "permission_denied",
        }
    }

    /// The code with this stable name, if there is one.
    pub fn from_name(name: &str) -> Option<ErrorCode> {
        ErrorCode::ALL
            .into_iter()
            .find(|code| code.as_str() == name)
    }
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// An additional typed part of a result, beside the data.
#[derive(Debug, Clone, PartialEq)]
pub enum ContentPart {
    /// Text; `mime` says what kind (absent means plain text).
    Text { text: String, mime: Option<String> },
    /// Binary content (an image, audio, any blob) with its MIME type.
    Binary { data: Vec<u8>, mime: String },
    /// A pointer to a resource the caller can fetch later.
    ResourceLink(ResourceLink),
    /// A resource whose content travels inside the result.
    EmbeddedResource {
        uri: String,
        mime: Option<String>,
        body: ResourceBody,
    },
}

impl ContentPart {
    pub fn text(text: impl Into<String>) -> ContentPart {
        ContentPart::Text {
            text: text.into(),
            mime: None,
        }
    }

    pub fn binary(data: impl Into<Vec<u8>>, mime: impl Into<String>) -> ContentPart {
        ContentPart::Binary {
            data: data.into(),
            mime: mime.into(),
        }
    }
}

/// A pointer to a resource, with what is known about it.
#[derive(Debug, Clone, PartialEq)]
pub struct ResourceLink {
    pub uri: String,
    pub name: String,
    pub title: Option<String>,
    pub description: Option<String>,
    pub mime: Option<String>,
    pub size: Option<u64>,
}

/// The body of an embedded resource.
#[derive(Debug, Clone, PartialEq)]
pub enum ResourceBody {
    Text(String),
    Bytes(Vec<u8>),
}

/// A result kept in a store and reachable by its URI until it expires.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredLink {
    pub uri: String,
    /// Size of the stored content in bytes, when known (a legacy pointer may
    /// not say).
    pub size: Option<u64>,
    pub mime: String,
    pub expires_at: Option<Timestamp>,
}

/// Where a page of a longer list lies.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Pagination {
    pub total: Option<u64>,
    pub offset: Option<u64>,
    pub limit: Option<u64>,
    pub next_cursor: Option<String>,
    pub has_more: Option<bool>,
}

/// Facts about a result: the well-known typed fields and the extension area.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Metadata {
    pub pagination: Option<Pagination>,
    /// The call only previewed a change and committed nothing.
    pub dry_run: Option<bool>,
    /// The size of the full response in bytes.
    pub response_size: Option<u64>,
    /// The query the tool actually ran, echoed back.
    pub query: Option<Value>,
    /// When the data was produced; the mapper uses the render time when unset.
    pub generated_at: Option<Timestamp>,
    /// Until when the result is valid.
    pub expires_at: Option<Timestamp>,
    /// How long the call took in milliseconds (to the microsecond), measured by the host.
    pub duration_ms: Option<f64>,
    /// Values of extensions, each under its validated namespace.
    pub extensions: Vec<Extension>,
    /// Keys a legacy envelope carried that have no typed field, kept verbatim so
    /// nothing is lost: those beside the envelope (`preview`) and those inside its
    /// `_meta` object.
    pub legacy: LegacyKeys,
}

impl Metadata {
    pub fn is_empty(&self) -> bool {
        *self == Metadata::default()
    }
}

/// Keys of a legacy envelope without a typed home, in their original order.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LegacyKeys {
    /// Keys beside `success`/`data`/`error` (e.g. `preview`).
    pub beside: serde_json::Map<String, Value>,
    /// Keys inside the envelope's metadata object.
    pub meta: serde_json::Map<String, Value>,
}

impl LegacyKeys {
    pub fn is_empty(&self) -> bool {
        self.beside.is_empty() && self.meta.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Every layer of a call hands its result on by value: that must copy a
    /// pointer, not the parts (P1, issue #17).
    #[test]
    fn a_result_is_handed_on_as_one_pointer() {
        assert_eq!(size_of::<ToolResult>(), size_of::<usize>());
        assert_eq!(size_of::<Option<ToolResult>>(), size_of::<usize>());
    }

    /// The length of the data's text goes with the data: kept by a rebuilt
    /// result, forgotten when the data is replaced or taken, never compared.
    #[test]
    fn data_replaced_or_taken_forgets_its_text() {
        let read = ToolResult::success_from_json("[1, 2]").unwrap().build();
        assert_eq!(read.data_text_bytes(), Some(6));
        assert_eq!(read, ToolResult::success(Some(json!([1, 2]))).build());
        let rebuilt = read.to_builder().summary("two").build();
        assert_eq!(rebuilt.data_text_bytes(), Some(6));
        let replaced = read.to_builder().data(Some(json!("x".repeat(100))));
        assert_eq!(replaced.build().data_text_bytes(), None);
        assert_eq!(
            read.to_builder_without_payload().build().data_text_bytes(),
            None
        );
        let mut taken = read.clone();
        taken.take_data();
        assert_eq!(taken.data_text_bytes(), None);
        assert!(ToolResult::success_from_json("{nope").is_err());
    }
}
