//! Result format 1: the serialized form of toolhost 0.1, field by field.
//!
//! These types are format 1 and nothing else: they are written from a borrowed
//! [`ToolResult`] (their fields borrow its strings and values, so the data,
//! usually most of a result, is not copied) and read into owned values that
//! become a [`ToolResult`] through its builder and validators
//! ([`Body::into_result`]). A field of format 1 is named here and only here; a
//! renamed field of [`ToolResult`] changes nothing a store or an app holds.
//! Renaming a field here breaks the literal files under `tests/formats/`.
//!
//! The body of a result (a stored row, the `result` of an app's answer) is a
//! [`Body`]:
//!
//! ```json
//! {"outcome": {"success": {"data": ..}} | {"failure": {"code", "message", "details"?}},
//!  "summary"?, "content"?: [part], "storedLinks"?: [link], "metadata"?: {..}}
//! ```
//!
//! The legacy envelope's `_meta.parts`, `_meta.storedLinks` and `_meta.pagination`
//! are the format-1 forms of [`Part`], [`StoredLink`] and [`Pagination`] too.
//! `docs/operating.md` documents every field for the authors of app tools.

mod metadata;
mod part;

pub use metadata::{Extension, LegacyKeys, Metadata, Pagination, StoredLink};
pub use part::{Part, ResourceBody, ResourceLink};

use std::borrow::Cow;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::result::{ErrorCode, Outcome as ResultOutcome, ToolResult};

/// A whole result of format 1.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Body<'a> {
    pub outcome: Outcome<'a>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Cow<'a, str>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub content: Vec<Part<'a>>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub stored_links: Vec<StoredLink<'a>>,
    #[serde(default, skip_serializing_if = "Metadata::is_empty")]
    pub metadata: Metadata<'a>,
}

/// `{"success": {"data"?}}` or `{"failure": {..}}`.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Outcome<'a> {
    Success {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        data: Option<Cow<'a, Value>>,
    },
    Failure(Error<'a>),
}

/// A failure: the stable code's name (`not_found`, ...), the message, the details.
#[derive(Debug, Serialize, Deserialize)]
pub struct Error<'a> {
    pub code: Cow<'a, str>,
    pub message: Cow<'a, str>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub details: Option<Cow<'a, Value>>,
}

/// Why a body that parsed is still not a result: what is wrong, and where.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    /// The path of the offending field inside the body (`outcome.failure.code`).
    pub at: String,
    pub problem: String,
}

impl<'a> From<&'a ToolResult> for Body<'a> {
    fn from(result: &'a ToolResult) -> Self {
        let outcome = match result.outcome() {
            ResultOutcome::Success { data } => Outcome::Success {
                data: data.as_ref().map(Cow::Borrowed),
            },
            ResultOutcome::Failure(error) => Outcome::Failure(Error {
                code: Cow::Borrowed(error.code.as_str()),
                message: Cow::Borrowed(&error.message),
                details: error.details.as_ref().map(Cow::Borrowed),
            }),
        };
        Body {
            outcome,
            summary: result.summary().map(Cow::Borrowed),
            content: result.content().iter().map(Part::from).collect(),
            stored_links: result.stored_links().iter().map(StoredLink::from).collect(),
            metadata: Metadata::from(result.metadata()),
        }
    }
}

impl Body<'_> {
    /// The result this body describes, built with the result's builder; the
    /// error code and every extension's namespace and name are validated.
    ///
    /// # Errors
    ///
    /// A [`Refusal`] naming the field when the code is not one this host knows
    /// or an extension's namespace or name is refused.
    pub fn into_result(self) -> Result<ToolResult, Refusal> {
        let builder = match self.outcome {
            Outcome::Success { data } => ToolResult::success(data.map(Cow::into_owned)),
            Outcome::Failure(error) => {
                let code = ErrorCode::from_name(&error.code).ok_or_else(|| Refusal {
                    at: "outcome.failure.code".into(),
                    problem: format!(
                        "unknown error code {:?}; the codes are {}",
                        error.code,
                        ErrorCode::ALL.map(ErrorCode::as_str).join(", ")
                    ),
                })?;
                let builder = ToolResult::failure(code, error.message.into_owned());
                match error.details {
                    Some(details) => builder.details(details.into_owned()),
                    None => builder,
                }
            }
        };
        let builder = match self.summary {
            Some(summary) => builder.summary(summary.into_owned()),
            None => builder,
        };
        let builder = builder.parts(self.content.into_iter().map(Part::into_part));
        let builder = self
            .stored_links
            .into_iter()
            .fold(builder, |builder, link| {
                builder.stored_link(link.into_link())
            });
        let metadata = self.metadata.into_metadata("metadata")?;
        Ok(builder.metadata(metadata).build())
    }
}

/// The JSON of a format-1 form, for a renderer that embeds one (the legacy
/// envelope's `_meta.parts`, the host's `pagination` metadata).
pub fn to_value(form: &impl Serialize) -> Value {
    serde_json::to_value(form).expect("a format-1 form always serializes")
}

/// Bytes as standard base64 text.
mod base64_bytes {
    use std::borrow::Cow;

    use base64::Engine as _;
    use base64::engine::general_purpose::STANDARD;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(bytes: &[u8], serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(&STANDARD.encode(bytes))
    }

    pub fn deserialize<'de, 'a, D: Deserializer<'de>>(
        deserializer: D,
    ) -> Result<Cow<'a, [u8]>, D::Error> {
        let text = Cow::<str>::deserialize(deserializer)?;
        STANDARD
            .decode(text.as_bytes())
            .map(Cow::Owned)
            .map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{ContentPart, Extension as ResultExtension};
    use serde_json::json;

    fn read(text: &str) -> Result<ToolResult, Refusal> {
        serde_json::from_str::<Body>(text).unwrap().into_result()
    }

    #[test]
    fn what_is_written_reads_back() {
        let result = ToolResult::failure(ErrorCode::NotFound, "gone")
            .details(json!({"id": 1}))
            .summary("s")
            .part(ContentPart::binary(vec![0, 1, 2], "image/png"))
            .extension(ResultExtension::new("com.example", "stock", json!(3)).unwrap())
            .build();
        let text = serde_json::to_string(&Body::from(&result)).unwrap();
        assert_eq!(read(&text), Ok(result));
    }

    #[test]
    fn an_unknown_code_is_refused_with_its_name_and_place() {
        let refusal = read(r#"{"outcome": {"failure": {"code": "gone_fishing", "message": "m"}}}"#)
            .unwrap_err();
        assert_eq!(refusal.at, "outcome.failure.code");
        assert!(refusal.problem.contains("\"gone_fishing\""), "{refusal:?}");
        assert!(refusal.problem.contains("not_found"), "{refusal:?}");
    }

    #[test]
    fn a_reserved_extension_namespace_is_refused_with_its_index() {
        let refusal = read(
            r#"{"outcome": {"success": {}}, "metadata": {"extensions": [
                {"namespace": "com.example", "name": "a", "value": 1},
                {"namespace": "dev.mcp", "name": "x", "value": 1}]}}"#,
        )
        .unwrap_err();
        assert_eq!(refusal.at, "metadata.extensions[1]");
        assert!(refusal.problem.contains("dev.mcp"), "{refusal:?}");
    }

    #[test]
    fn bad_base64_is_a_parse_error() {
        let error = serde_json::from_str::<Body>(
            r#"{"outcome": {"success": {}}, "content": [{"kind": "binary", "data": "%%", "mime": "x/y"}]}"#,
        )
        .unwrap_err();
        assert!(error.to_string().contains("Invalid"), "{error}");
    }
}
