//! A guest's WIT `tool-result`, as the bindings lift it, turned into a
//! [`ToolResult`], and its size counted before that.
//!
//! The conversion is where a guest's answer is checked: data must be JSON text,
//! extension namespaces must be valid and unreserved, timestamps must be real
//! points in time. A guest that breaks a rule gets a [`MalformedResult`] naming
//! the part, which the runtime turns into a `tool_error` result. It lives in the
//! runtime, beside the bindings, so that `result/` knows nothing of wasmtime.

use jiff::Timestamp;
use serde_json::Value;

use super::bindings::wit_types;
use crate::result::{
    ContentPart, DataText, ErrorCode, Extension, Metadata, Outcome, Pagination, Parts,
    ResourceBody, ResourceLink, StoredLink, ToolError, ToolResult,
};

/// A guest returned a result that breaks the contract.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the tool returned a malformed result: {part}: {problem}")]
pub struct MalformedResult {
    /// Which part was wrong (`data`, `metadata.extensions[1]`, ...).
    pub part: String,
    /// What was wrong with it.
    pub problem: String,
}

impl MalformedResult {
    fn new(part: impl Into<String>, problem: impl ToString) -> Self {
        MalformedResult {
            part: part.into(),
            problem: problem.to_string(),
        }
    }
}

impl TryFrom<wit_types::ToolResult> for ToolResult {
    type Error = MalformedResult;

    fn try_from(wit: wit_types::ToolResult) -> Result<Self, Self::Error> {
        let mut data_text = DataText::default();
        let outcome = match wit.outcome {
            wit_types::Outcome::Success(data) => Outcome::Success {
                data: data
                    .map(|text| {
                        data_text = DataText::read_from(text.len());
                        parse_json("data", &text)
                    })
                    .transpose()?,
            },
            wit_types::Outcome::Failure(error) => Outcome::Failure(ToolError {
                code: error.code.into(),
                message: error.message,
                details: error
                    .details
                    .map(|text| parse_json("error.details", &text))
                    .transpose()?,
            }),
        };
        let stored_links = wit
            .stored_links
            .into_iter()
            .enumerate()
            .map(|(i, link)| {
                Ok(StoredLink {
                    uri: link.uri,
                    size: Some(link.size),
                    mime: link.mime,
                    expires_at: link
                        .expires_at
                        .map(|at| timestamp(&format!("stored-links[{i}].expires-at"), at))
                        .transpose()?,
                })
            })
            .collect::<Result<_, MalformedResult>>()?;
        Ok(ToolResult::from(Parts {
            outcome,
            summary: wit.summary,
            content: wit.content.into_iter().map(ContentPart::from).collect(),
            stored_links,
            metadata: metadata(wit.metadata)?,
            lease: Default::default(),
            data_text,
        }))
    }
}

/// What one list element counts for in [`result_bytes`] beside its strings, so
/// a million empty parts are not free.
pub const ELEMENT_BYTES: u64 = 32;

/// The size of a guest's result as lifted: the bytes of its strings and lists,
/// plus [`ELEMENT_BYTES`] per element of its lists of parts, links and
/// extensions. Counted before the result is converted, so one over the plugin's
/// `max_result_bytes` is refused without being parsed.
pub fn result_bytes(wit: &wit_types::ToolResult) -> u64 {
    let len = |s: &String| s.len() as u64;
    let opt = |s: &Option<String>| s.as_ref().map_or(0, len);
    let outcome = match &wit.outcome {
        wit_types::Outcome::Success(data) => opt(data),
        wit_types::Outcome::Failure(error) => len(&error.message) + opt(&error.details),
    };
    let content: u64 = wit.content.iter().map(part_bytes).sum();
    let links: u64 = wit
        .stored_links
        .iter()
        .map(|l| ELEMENT_BYTES + len(&l.uri) + len(&l.mime))
        .sum();
    let metadata = &wit.metadata;
    let extensions: u64 = metadata
        .extensions
        .iter()
        .map(|e| ELEMENT_BYTES + len(&e.namespace) + len(&e.name) + len(&e.value))
        .sum();
    outcome
        + opt(&wit.summary)
        + content
        + links
        + extensions
        + opt(&metadata.query)
        + metadata
            .pagination
            .as_ref()
            .map_or(0, |p| opt(&p.next_cursor))
}

/// What one content part counts for in [`result_bytes`]: [`ELEMENT_BYTES`] and
/// the bytes of its strings and lists.
pub fn part_bytes(part: &wit_types::ContentPart) -> u64 {
    let len = |s: &String| s.len() as u64;
    let opt = |s: &Option<String>| s.as_ref().map_or(0, len);
    ELEMENT_BYTES
        + match part {
            wit_types::ContentPart::Text(t) => len(&t.text) + opt(&t.mime),
            wit_types::ContentPart::Binary(b) => b.data.len() as u64 + len(&b.mime),
            wit_types::ContentPart::ResourceLink(l) => {
                len(&l.uri) + len(&l.name) + opt(&l.title) + opt(&l.description) + opt(&l.mime)
            }
            wit_types::ContentPart::EmbeddedResource(r) => {
                len(&r.uri)
                    + opt(&r.mime)
                    + match &r.body {
                        wit_types::ResourceBody::Text(text) => len(text),
                        wit_types::ResourceBody::Bytes(bytes) => bytes.len() as u64,
                    }
            }
        }
}

impl From<wit_types::ErrorCode> for ErrorCode {
    fn from(code: wit_types::ErrorCode) -> Self {
        match code {
            wit_types::ErrorCode::InvalidArguments => ErrorCode::InvalidArguments,
            wit_types::ErrorCode::MissingPrivilege => ErrorCode::MissingPrivilege,
            wit_types::ErrorCode::NotFound => ErrorCode::NotFound,
            wit_types::ErrorCode::ToolError => ErrorCode::ToolError,
        }
    }
}

impl From<wit_types::ContentPart> for ContentPart {
    fn from(part: wit_types::ContentPart) -> Self {
        match part {
            wit_types::ContentPart::Text(t) => ContentPart::Text {
                text: t.text,
                mime: t.mime,
            },
            wit_types::ContentPart::Binary(b) => ContentPart::Binary {
                data: b.data,
                mime: b.mime,
            },
            wit_types::ContentPart::ResourceLink(l) => ContentPart::ResourceLink(ResourceLink {
                uri: l.uri,
                name: l.name,
                title: l.title,
                description: l.description,
                mime: l.mime,
                size: l.size,
            }),
            wit_types::ContentPart::EmbeddedResource(r) => ContentPart::EmbeddedResource {
                uri: r.uri,
                mime: r.mime,
                body: match r.body {
                    wit_types::ResourceBody::Text(text) => ResourceBody::Text(text),
                    wit_types::ResourceBody::Bytes(bytes) => ResourceBody::Bytes(bytes),
                },
            },
        }
    }
}

fn metadata(wit: wit_types::Metadata) -> Result<Metadata, MalformedResult> {
    let extensions = wit
        .extensions
        .into_iter()
        .enumerate()
        .map(|(i, ext)| {
            let part = format!("metadata.extensions[{i}]");
            let value = parse_json(&part, &ext.value)?;
            Extension::new(ext.namespace, ext.name, value)
                .map_err(|e| MalformedResult::new(part, e))
        })
        .collect::<Result<_, _>>()?;
    Ok(Metadata {
        pagination: wit.pagination.map(|p| Pagination {
            total: p.total,
            offset: p.offset,
            limit: p.limit,
            next_cursor: p.next_cursor,
            has_more: p.has_more,
        }),
        dry_run: wit.dry_run,
        response_size: wit.response_size,
        query: wit
            .query
            .map(|q| parse_json("metadata.query", &q))
            .transpose()?,
        generated_at: wit
            .generated_at
            .map(|at| timestamp("metadata.generated-at", at))
            .transpose()?,
        expires_at: wit
            .expires_at
            .map(|at| timestamp("metadata.expires-at", at))
            .transpose()?,
        duration_ms: None,
        extensions,
        legacy: Default::default(),
    })
}

fn parse_json(part: &str, text: &str) -> Result<Value, MalformedResult> {
    serde_json::from_str(text).map_err(|e| MalformedResult::new(part, format!("not JSON ({e})")))
}

fn timestamp(part: &str, at: wit_types::Datetime) -> Result<Timestamp, MalformedResult> {
    let nanos = i32::try_from(at.nanoseconds)
        .ok()
        .filter(|n| *n < 1_000_000_000)
        .ok_or_else(|| MalformedResult::new(part, "nanoseconds must be below 1,000,000,000"))?;
    Timestamp::new(at.seconds, nanos).map_err(|e| MalformedResult::new(part, e))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtime::bindings::to_wit_datetime;
    use serde_json::json;

    fn empty_metadata() -> wit_types::Metadata {
        wit_types::Metadata {
            pagination: None,
            dry_run: None,
            response_size: None,
            query: None,
            generated_at: None,
            expires_at: None,
            extensions: vec![],
        }
    }

    fn wit_result(outcome: wit_types::Outcome) -> wit_types::ToolResult {
        wit_types::ToolResult {
            outcome,
            summary: None,
            content: vec![],
            stored_links: vec![],
            metadata: empty_metadata(),
        }
    }

    #[test]
    fn converts_every_part() {
        let mut wit = wit_result(wit_types::Outcome::Success(Some("[1,2]".into())));
        wit.summary = Some("two".into());
        wit.content = vec![
            wit_types::ContentPart::Text(wit_types::TextPart {
                text: "# hi".into(),
                mime: Some("text/markdown".into()),
            }),
            wit_types::ContentPart::Binary(wit_types::BinaryPart {
                data: vec![1, 2],
                mime: "image/png".into(),
            }),
            wit_types::ContentPart::EmbeddedResource(wit_types::EmbeddedResource {
                uri: "file:///a".into(),
                mime: None,
                body: wit_types::ResourceBody::Bytes(vec![0]),
            }),
        ];
        wit.metadata.extensions = vec![wit_types::NamespacedValue {
            namespace: "com.example".into(),
            name: "stock".into(),
            value: "{\"n\":1}".into(),
        }];
        wit.metadata.generated_at = Some(wit_types::Datetime {
            seconds: 1_700_000_000,
            nanoseconds: 5,
        });
        let result = ToolResult::try_from(wit).unwrap();
        assert_eq!(result.data(), Some(&json!([1, 2])));
        // The mapper reads the data's size from its text instead of walking it.
        assert_eq!(result.data_text_bytes(), Some("[1,2]".len()));
        assert_eq!(result.summary(), Some("two"));
        assert_eq!(result.content().len(), 3);
        assert_eq!(result.metadata().extensions[0].value(), &json!({"n": 1}));
        let at = result.metadata().generated_at.unwrap();
        assert_eq!(to_wit_datetime(at).seconds, 1_700_000_000);
        assert_eq!(to_wit_datetime(at).nanoseconds, 5);
    }

    #[test]
    fn result_bytes_counts_every_string_and_list() {
        let mut wit = wit_result(wit_types::Outcome::Success(Some("[1,2]".into())));
        assert_eq!(result_bytes(&wit), 5);
        wit.summary = Some("two".into());
        wit.content = vec![
            wit_types::ContentPart::Binary(wit_types::BinaryPart {
                data: vec![0; 1000],
                mime: "image/png".into(),
            }),
            wit_types::ContentPart::Text(wit_types::TextPart {
                text: String::new(),
                mime: None,
            }),
        ];
        wit.metadata.extensions = vec![wit_types::NamespacedValue {
            namespace: "com.example".into(),
            name: "stock".into(),
            value: "{}".into(),
        }];
        assert_eq!(
            result_bytes(&wit),
            5 + 3 + (ELEMENT_BYTES + 1000 + 9) + ELEMENT_BYTES + (ELEMENT_BYTES + 11 + 5 + 2)
        );
    }

    #[test]
    fn invalid_json_data_is_malformed() {
        let err = ToolResult::try_from(wit_result(wit_types::Outcome::Success(Some(
            "{nope".into(),
        ))))
        .unwrap_err();
        assert_eq!(err.part, "data");
        assert!(err.problem.contains("not JSON"), "{err}");
    }

    #[test]
    fn reserved_namespace_is_malformed() {
        let mut wit = wit_result(wit_types::Outcome::Success(None));
        wit.metadata.extensions = vec![wit_types::NamespacedValue {
            namespace: "io.modelcontextprotocol".into(),
            name: "x".into(),
            value: "1".into(),
        }];
        let err = ToolResult::try_from(wit).unwrap_err();
        assert_eq!(err.part, "metadata.extensions[0]");
        assert!(err.problem.contains("reserved"), "{err}");
    }

    #[test]
    fn failure_keeps_code_and_details() {
        let result = ToolResult::try_from(wit_result(wit_types::Outcome::Failure(
            wit_types::ToolError {
                code: wit_types::ErrorCode::MissingPrivilege,
                message: "no".into(),
                details: Some("{\"missing\":[\"product:read\"]}".into()),
            },
        )))
        .unwrap();
        let error = result.error().unwrap();
        assert_eq!(error.code, ErrorCode::MissingPrivilege);
        assert_eq!(error.details, Some(json!({"missing": ["product:read"]})));
    }

    #[test]
    fn impossible_timestamps_are_malformed() {
        let mut wit = wit_result(wit_types::Outcome::Success(None));
        wit.metadata.expires_at = Some(wit_types::Datetime {
            seconds: 0,
            nanoseconds: 2_000_000_000,
        });
        assert_eq!(
            ToolResult::try_from(wit).unwrap_err().part,
            "metadata.expires-at"
        );
    }
}
