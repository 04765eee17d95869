//! Reading results that arrive as text: the legacy `{"success": ..}` envelope and
//! the versioned serialized form.
//!
//! The legacy parser follows the ADR's "Legacy input" rule. A JSON object with a
//! boolean `success` is an envelope: `data` becomes the data of a success; `error`
//! (a string, or an object whose `message` and `code` are taken and whose other
//! keys are kept as details) becomes the failure; keys beside the envelope
//! (`dryRun`, `preview`, ...) are kept as metadata, and so are the keys of its
//! `_meta` object. Anything else, including JSON that is not such an envelope, is
//! passed through unchanged as a single text part. Nothing is dropped: a key with
//! no typed home is kept verbatim in [`LegacyKeys`], and the legacy renderer puts
//! it back where it was.
//!
//! Results that leave the host and are read back later (stored large results, app
//! responses) carry a [`FormatVersion`]; [`decode`] picks the parser for it, so rows
//! written by an older toolhost and apps built against an older format stay readable.

use serde_json::{Map, Value};

use crate::result::{
    ContentPart, ErrorCode, Extension, LegacyKeys, Pagination, StoredLink, ToolResult,
    ToolResultBuilder,
};

/// The wire names of the legacy envelope, shared with its renderer.
pub mod keys {
    pub const SUCCESS: &str = "success";
    pub const DATA: &str = "data";
    pub const ERROR: &str = "error";
    pub const META: &str = "_meta";
    pub const SUMMARY: &str = "summary";
    pub const DRY_RUN: &str = "dryRun";
    pub const RESPONSE_SIZE: &str = "responseSize";
    pub const RESOURCE_URI: &str = "resourceUri";
    pub const STORED_LINKS: &str = "storedLinks";
    pub const PAGINATION: &str = "pagination";
    pub const QUERY: &str = "query";
    pub const GENERATED_AT: &str = "generatedAt";
    pub const EXPIRES_AT: &str = "expiresAt";
    pub const DURATION_MS: &str = "durationMs";
    pub const ERROR_CODE: &str = "errorCode";
    pub const ERROR_DETAILS: &str = "errorDetails";
    pub const PARTS: &str = "parts";
}

/// The version of a serialized result. Add a variant for each new serialized form;
/// never change what an existing one means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FormatVersion {
    /// The legacy `{"success": ..}` envelope string, which carries no version.
    Legacy = 0,
    /// The serialized [`ToolResult`] of toolhost 0.1 (camelCase JSON).
    V1 = 1,
}

impl FormatVersion {
    /// The version this build writes.
    pub const CURRENT: FormatVersion = FormatVersion::V1;

    /// The version with this number, if this build knows it.
    pub fn from_number(number: u64) -> Option<FormatVersion> {
        match number {
            0 => Some(FormatVersion::Legacy),
            1 => Some(FormatVersion::V1),
            _ => None,
        }
    }

    pub fn number(self) -> u64 {
        self as u64
    }
}

/// A serialized result could not be read.
#[derive(Debug, thiserror::Error)]
pub enum FormatError {
    #[error(
        "result format version {0} is newer than this toolhost knows (up to {known}); upgrade toolhost to read it",
        known = FormatVersion::CURRENT.number()
    )]
    UnknownVersion(u64),
    #[error("result of format version {version} is not valid: {source}")]
    Invalid {
        version: u64,
        #[source]
        source: serde_json::Error,
    },
}

/// Serializes `result` in the current format version.
pub fn encode(result: &ToolResult) -> (FormatVersion, String) {
    let text = serde_json::to_string(result).expect("a ToolResult always serializes");
    (FormatVersion::CURRENT, text)
}

/// Reads a result serialized in `version`.
///
/// # Errors
///
/// [`FormatError::Invalid`] when the text is not a result of that version. The
/// legacy version never fails: any text is a valid legacy answer.
pub fn decode(version: FormatVersion, text: &str) -> Result<ToolResult, FormatError> {
    match version {
        FormatVersion::Legacy => Ok(parse_legacy(text)),
        FormatVersion::V1 => serde_json::from_str(text).map_err(|source| FormatError::Invalid {
            version: version.number(),
            source,
        }),
    }
}

/// Reads an app's answer: either a versioned result object
/// (`{"format": N, "result": {..}}`) or, failing that, legacy text.
///
/// # Errors
///
/// A [`FormatError`] when the answer claims a format version it does not hold,
/// or one newer than this build knows.
pub fn decode_app_response(text: &str) -> Result<ToolResult, FormatError> {
    if let Ok(Value::Object(object)) = serde_json::from_str::<Value>(text)
        && let (Some(Value::Number(format)), Some(result)) =
            (object.get("format"), object.get("result"))
        && !object.contains_key(keys::SUCCESS)
    {
        let number = format
            .as_u64()
            .ok_or(FormatError::UnknownVersion(u64::MAX))?;
        let version =
            FormatVersion::from_number(number).ok_or(FormatError::UnknownVersion(number))?;
        return match version {
            FormatVersion::Legacy => Ok(parse_legacy(&result.to_string())),
            FormatVersion::V1 => {
                serde_json::from_value(result.clone()).map_err(|source| FormatError::Invalid {
                    version: number,
                    source,
                })
            }
        };
    }
    Ok(parse_legacy(text))
}

/// Parses a legacy answer into a result object. Never fails: text that is not an
/// envelope becomes one text part, unchanged.
///
/// ```
/// use toolhost::legacy::parse_legacy;
/// let ok = parse_legacy(r#"{"success": true, "data": {"id": 7}, "dryRun": true}"#);
/// assert_eq!(ok.data(), Some(&serde_json::json!({"id": 7})));
/// assert_eq!(ok.metadata().dry_run, Some(true));
///
/// let plain = parse_legacy("just text");
/// assert_eq!(plain.data(), None);
/// assert_eq!(plain.content().len(), 1);
/// ```
pub fn parse_legacy(text: &str) -> ToolResult {
    match serde_json::from_str::<Value>(text) {
        Ok(Value::Object(envelope))
            if envelope.get(keys::SUCCESS).is_some_and(Value::is_boolean) =>
        {
            parse_envelope(envelope)
        }
        _ => ToolResult::success(None)
            .part(ContentPart::text(text))
            .build(),
    }
}

fn parse_envelope(mut envelope: Map<String, Value>) -> ToolResult {
    let success = envelope.shift_remove(keys::SUCCESS) == Some(Value::Bool(true));
    let mut legacy = LegacyKeys::default();
    let mut meta = match envelope.shift_remove(keys::META) {
        Some(Value::Object(meta)) => meta,
        Some(other) => {
            // Not an object: nothing typed can come of it, keep it as it was.
            legacy.beside.insert(keys::META.into(), other);
            Map::new()
        }
        None => Map::new(),
    };

    let mut builder = if success {
        let data = envelope.shift_remove(keys::DATA).filter(|d| !d.is_null());
        ToolResult::success(data)
    } else {
        failure(envelope.shift_remove(keys::ERROR), &mut meta)
    };

    for (key, value) in envelope {
        builder = match (key.as_str(), value) {
            (keys::DRY_RUN, Value::Bool(dry_run)) => builder.dry_run(dry_run),
            (keys::SUMMARY, Value::String(summary)) => builder.summary(summary),
            (_, value) => {
                legacy.beside.insert(key, value);
                builder
            }
        };
    }
    builder = read_meta(builder, meta, &mut legacy);
    builder.legacy_keys(legacy).build()
}

/// The failure of an envelope with `"success": false`.
fn failure(error: Option<Value>, meta: &mut Map<String, Value>) -> ToolResultBuilder {
    // Codes the legacy renderer wrote beside a string error.
    let meta_code = meta
        .get(keys::ERROR_CODE)
        .and_then(Value::as_str)
        .and_then(ErrorCode::from_name);
    if meta_code.is_some() {
        meta.shift_remove(keys::ERROR_CODE);
    }
    let meta_details = meta.shift_remove(keys::ERROR_DETAILS);
    let code = meta_code.unwrap_or(ErrorCode::ToolError);

    match error {
        Some(Value::String(message)) => {
            with_details(ToolResult::failure(code, message), meta_details)
        }
        Some(Value::Object(mut object)) => {
            let message = match object.shift_remove("message") {
                Some(Value::String(message)) => message,
                Some(other) => {
                    object.insert("message".into(), other);
                    "The tool reported a failure.".into()
                }
                None => "The tool reported a failure.".into(),
            };
            // A code this host knows becomes the code; any other code (an app's
            // own `PRODUCT_NOT_FOUND`) stays in the details.
            let code = match object
                .get("code")
                .and_then(Value::as_str)
                .and_then(ErrorCode::from_name)
            {
                Some(known) => {
                    object.shift_remove("code");
                    known
                }
                None => code,
            };
            let mut details = object;
            if let Some(Value::Object(extra)) = meta_details {
                details.extend(extra);
            } else if let Some(extra) = meta_details {
                details.insert(keys::ERROR_DETAILS.into(), extra);
            }
            let builder = ToolResult::failure(code, message);
            if details.is_empty() {
                builder
            } else {
                builder.details(Value::Object(details))
            }
        }
        None | Some(Value::Null) => with_details(
            ToolResult::failure(code, "The tool reported a failure without a message."),
            meta_details,
        ),
        Some(other) => with_details(ToolResult::failure(code, other.to_string()), meta_details),
    }
}

fn with_details(builder: ToolResultBuilder, details: Option<Value>) -> ToolResultBuilder {
    match details {
        Some(details) => builder.details(details),
        None => builder,
    }
}

/// Takes the well-known keys of the envelope's `_meta` into typed fields; the rest
/// is kept in `legacy.meta`.
fn read_meta(
    mut builder: ToolResultBuilder,
    meta: Map<String, Value>,
    legacy: &mut LegacyKeys,
) -> ToolResultBuilder {
    let links = meta
        .get(keys::STORED_LINKS)
        .and_then(|links| serde_json::from_value::<Vec<StoredLink>>(links.clone()).ok());
    let first_link_uri = links
        .as_ref()
        .and_then(|l| l.first())
        .map(|l| l.uri.clone());
    let has_links = links.is_some();
    if let Some(links) = links {
        for link in links {
            builder = builder.stored_link(link);
        }
    }

    for (key, value) in meta {
        let kept = match key.as_str() {
            keys::STORED_LINKS if has_links => None,
            keys::RESOURCE_URI => match value {
                Value::String(uri) if Some(&uri) == first_link_uri.as_ref() => None,
                Value::String(uri) if !has_links => {
                    builder = builder.stored_link(StoredLink {
                        uri,
                        size: None,
                        mime: "application/json".into(),
                        expires_at: None,
                    });
                    None
                }
                other => Some(other),
            },
            keys::RESPONSE_SIZE => match value.as_u64() {
                Some(size) => {
                    builder = builder.response_size(size);
                    None
                }
                None => Some(value),
            },
            keys::DRY_RUN => match value {
                Value::Bool(dry_run) => {
                    builder = builder.dry_run(dry_run);
                    None
                }
                other => Some(other),
            },
            keys::PAGINATION => match serde_json::from_value::<Pagination>(value.clone()) {
                Ok(pagination) => {
                    builder = builder.pagination(pagination);
                    None
                }
                Err(_) => Some(value),
            },
            keys::QUERY => {
                builder = builder.query(value);
                None
            }
            keys::GENERATED_AT | keys::EXPIRES_AT => {
                match value
                    .as_str()
                    .and_then(|s| s.parse::<jiff::Timestamp>().ok())
                {
                    Some(at) if key == keys::GENERATED_AT => {
                        builder = builder.generated_at(at);
                        None
                    }
                    Some(at) => {
                        builder = builder.expires_at(at);
                        None
                    }
                    None => Some(value),
                }
            }
            keys::DURATION_MS => match value.as_f64() {
                Some(ms) => {
                    builder = builder.duration_ms(ms);
                    None
                }
                None => Some(value),
            },
            keys::PARTS => match serde_json::from_value::<Vec<ContentPart>>(value.clone()) {
                Ok(parts) => {
                    builder = builder.parts(parts);
                    None
                }
                Err(_) => Some(value),
            },
            _ => match extension(&key, &value) {
                Some(ext) => {
                    builder = builder.extension(ext);
                    None
                }
                None => Some(value),
            },
        };
        if let Some(value) = kept {
            legacy.meta.insert(key, value);
        }
    }
    builder
}

/// `namespace/name` keys with a valid, unreserved namespace are extension values.
fn extension(key: &str, value: &Value) -> Option<Extension> {
    let (namespace, name) = key.split_once('/')?;
    Extension::new(namespace, name, value.clone()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn success_envelope_with_data() {
        let result = parse_legacy(r#"{"success": true, "data": {"products": [1, 2]}}"#);
        assert!(!result.is_failure());
        assert_eq!(result.data(), Some(&json!({"products": [1, 2]})));
        assert!(result.content().is_empty());
        assert!(result.metadata().is_empty());
    }

    #[test]
    fn error_as_string() {
        let result =
            parse_legacy(r#"{"success": false, "error": "Missing privilege: product:read"}"#);
        let error = result.error().unwrap();
        assert_eq!(error.code, ErrorCode::ToolError);
        assert_eq!(error.message, "Missing privilege: product:read");
        assert_eq!(error.details, None);
    }

    #[test]
    fn error_as_object_takes_message_and_code_and_keeps_the_rest() {
        let result = parse_legacy(
            r#"{"success": false, "error": {"message": "No such product", "code": "not_found", "productId": "abc", "hint": "search first"}}"#,
        );
        let error = result.error().unwrap();
        assert_eq!(error.code, ErrorCode::NotFound);
        assert_eq!(error.message, "No such product");
        assert_eq!(
            error.details,
            Some(json!({"productId": "abc", "hint": "search first"}))
        );
    }

    #[test]
    fn unknown_error_code_is_kept_in_details() {
        let result = parse_legacy(
            r#"{"success": false, "error": {"message": "m", "code": "PRODUCT_GONE"}}"#,
        );
        let error = result.error().unwrap();
        assert_eq!(error.code, ErrorCode::ToolError);
        assert_eq!(error.details, Some(json!({"code": "PRODUCT_GONE"})));
    }

    #[test]
    fn keys_beside_the_envelope_are_metadata() {
        let result = parse_legacy(
            r#"{"success": true, "data": {"cart": 1}, "dryRun": true, "preview": {"total": 12.5}}"#,
        );
        assert_eq!(result.metadata().dry_run, Some(true));
        assert_eq!(
            result.metadata().legacy.beside.get("preview"),
            Some(&json!({"total": 12.5}))
        );
        assert_eq!(result.data(), Some(&json!({"cart": 1})));
    }

    #[test]
    fn meta_keys_are_typed_or_kept() {
        let result = parse_legacy(
            r#"{"success": true, "data": [], "_meta": {"responseSize": 24000, "resourceUri": "toolhost://results/1", "usageHint": "call next", "com.example/stock": 3}}"#,
        );
        let meta = result.metadata();
        assert_eq!(meta.response_size, Some(24000));
        assert_eq!(result.stored_links()[0].uri, "toolhost://results/1");
        assert_eq!(result.stored_links()[0].size, None);
        assert_eq!(meta.legacy.meta.get("usageHint"), Some(&json!("call next")));
        assert_eq!(meta.extensions[0].key(), "com.example/stock");
    }

    #[test]
    fn non_envelope_text_passes_through_unchanged() {
        for text in [
            "plain words",
            r#"{"result": 1}"#,
            r#"{"success": "yes", "data": 1}"#,
            "[1, 2]",
            "",
            "  {\"success\": true ",
        ] {
            let result = parse_legacy(text);
            assert!(!result.is_failure(), "{text:?}");
            assert_eq!(result.data(), None, "{text:?}");
            assert_eq!(result.content(), &[ContentPart::text(text)], "{text:?}");
        }
    }

    #[test]
    fn failure_without_error_still_says_something() {
        let result = parse_legacy(r#"{"success": false}"#);
        assert!(!result.error().unwrap().message.is_empty());
    }

    #[test]
    fn null_data_is_no_data() {
        assert_eq!(
            parse_legacy(r#"{"success": true, "data": null}"#).data(),
            None
        );
    }

    #[test]
    fn versioned_round_trip() {
        let result = ToolResult::failure(ErrorCode::NotFound, "gone")
            .details(json!({"id": 1}))
            .summary("s")
            .part(ContentPart::binary(vec![0, 1, 2], "image/png"))
            .build();
        let (version, text) = encode(&result);
        assert_eq!(decode(version, &text).unwrap(), result);
    }

    #[test]
    fn app_response_with_version_or_legacy() {
        let versioned =
            r#"{"format": 1, "result": {"outcome": {"success": {"data": 5}}, "summary": "five"}}"#;
        let result = decode_app_response(versioned).unwrap();
        assert_eq!(result.data(), Some(&json!(5)));
        assert_eq!(result.summary(), Some("five"));

        let legacy = decode_app_response(r#"{"success": true, "data": 5}"#).unwrap();
        assert_eq!(legacy.data(), Some(&json!(5)));

        let future = decode_app_response(r#"{"format": 99, "result": {}}"#).unwrap_err();
        assert!(future.to_string().contains("upgrade toolhost"), "{future}");
    }

    #[test]
    fn decode_picks_the_parser_by_version() {
        let text = r#"{"success": true, "data": 1}"#;
        assert_eq!(
            decode(FormatVersion::Legacy, text).unwrap().data(),
            Some(&json!(1))
        );
        assert!(decode(FormatVersion::V1, text).is_err());
    }
}
