//! The legacy parser: reads the `{"success": ..}` envelope back into a result
//! object.
//!
//! It follows the ADR's "Legacy input" rule. A JSON object with a
//! boolean `success` is an envelope: `data` becomes the data of a success; `error`
//! (a string, or an object whose `message` and `code` are taken and whose other
//! keys are kept as details) becomes the failure; keys beside the envelope
//! (`dryRun`, `preview`, ...) are kept as metadata, and so are the keys of its
//! `_meta` object. Anything else, including JSON that is not such an envelope, is
//! passed through unchanged as a single text part. Nothing is dropped: a key with
//! no typed home is kept verbatim in [`LegacyKeys`], and the legacy renderer puts
//! it back where it was.
//!
//! The envelope's `_meta.parts`, `_meta.storedLinks` and `_meta.pagination` are
//! read in their format-1 form ([`crate::render::format::v1`]). App tools answer
//! with this envelope, or with a versioned result (see
//! [`crate::render::format::decode_app_response`]).

use serde::Deserialize;
use serde_json::{Map, Value};

use super::keys;
use crate::render::format::v1;
use crate::result::{
    ContentPart, ErrorCode, Extension, LegacyKeys, StoredLink, ToolResult, ToolResultBuilder,
};

/// Parses a legacy answer into a result object. Never fails: text that is not an
/// envelope becomes one text part, unchanged.
///
/// ```
/// use toolhost::render::legacy::parse::parse_legacy;
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
        Ok(Value::Object(envelope)) if is_envelope(&envelope) => parse_envelope(envelope),
        _ => pass_through(text),
    }
}

/// Reads an answer that is already parsed, by the same rule as [`parse_legacy`]:
/// the result of an envelope, or the value back when it is not one (the caller
/// passes its text through with [`pass_through`]).
///
/// # Errors
///
/// The value itself when it is not an object with a boolean `success`.
pub fn read_envelope(value: Value) -> Result<ToolResult, Value> {
    match value {
        Value::Object(envelope) if is_envelope(&envelope) => Ok(parse_envelope(envelope)),
        other => Err(other),
    }
}

/// What the legacy rule makes of text that is not an envelope: a success with
/// the text, unchanged, as its one part.
pub fn pass_through(text: &str) -> ToolResult {
    ToolResult::success(None)
        .part(ContentPart::text(text))
        .build()
}

/// A JSON object with a boolean `success` is an envelope.
fn is_envelope(object: &Map<String, Value>) -> bool {
    object.get(keys::SUCCESS).is_some_and(Value::is_boolean)
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
    let links = meta.get(keys::STORED_LINKS).and_then(|links| {
        Vec::<v1::StoredLink>::deserialize(links).ok().map(|links| {
            links
                .into_iter()
                .map(v1::StoredLink::into_link)
                .collect::<Vec<_>>()
        })
    });
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
            keys::PAGINATION => match v1::Pagination::deserialize(&value) {
                Ok(pagination) => {
                    builder = builder.pagination(pagination.into_pagination());
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
            keys::PARTS => match Vec::<v1::Part>::deserialize(&value) {
                Ok(parts) => {
                    builder = builder.parts(parts.into_iter().map(v1::Part::into_part));
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
}
