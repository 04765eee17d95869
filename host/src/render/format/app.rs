//! The decoder of an app's answer (a `legacy-app` component's string, a
//! webhook's HTTP body): parsed once, then read as a versioned result or by the
//! legacy rule.

use serde_json::{Map, Number, Value};

use super::{FormatError, FormatVersion, decode_v1_value};
use crate::render::legacy::keys;
use crate::render::legacy::parse::{pass_through, read_envelope};
use crate::result::ToolResult;

/// What an app answered, after its one parse.
#[derive(Debug)]
pub enum AppAnswer {
    /// `{"format": N, "result": {..}}`: an object with a numeric `format` and a
    /// `result`, and no `success` (which would make it a legacy envelope).
    Versioned { format: Number, result: Value },
    /// Any other JSON: the legacy envelope, or JSON the legacy rule passes through.
    Json(Value),
    /// Not JSON at all.
    Text,
}

impl AppAnswer {
    /// Parses `text` (once) and tells the versioned answer from the rest.
    pub fn parse(text: &str) -> AppAnswer {
        match serde_json::from_str::<Value>(text) {
            Ok(Value::Object(object)) => match versioned(object) {
                Ok((format, result)) => AppAnswer::Versioned { format, result },
                Err(object) => AppAnswer::Json(Value::Object(object)),
            },
            Ok(other) => AppAnswer::Json(other),
            Err(_) => AppAnswer::Text,
        }
    }
}

/// The `format` and `result` of a versioned answer, or the object back.
fn versioned(mut object: Map<String, Value>) -> Result<(Number, Value), Map<String, Value>> {
    let is_versioned = matches!(object.get("format"), Some(Value::Number(_)))
        && object.contains_key("result")
        && !object.contains_key(keys::SUCCESS);
    if !is_versioned {
        return Err(object);
    }
    match (object.shift_remove("format"), object.shift_remove("result")) {
        (Some(Value::Number(format)), Some(result)) => Ok((format, result)),
        _ => unreachable!("both keys were just checked"),
    }
}

/// Reads an app's answer: either a versioned result object
/// (`{"format": N, "result": {..}}`) or, failing that, by the legacy rule (the
/// `{"success": ..}` envelope, or any other text as one text part).
///
/// # Errors
///
/// A [`FormatError`] when the answer claims a format version it does not hold,
/// or one newer than this build knows.
pub fn decode_app_response(text: &str) -> Result<ToolResult, FormatError> {
    // The data, if any, is JSON inside `text`: the mapper need not walk it to
    // know it is small.
    decode(text).map(|result| result.data_read_from(text.len()))
}

fn decode(text: &str) -> Result<ToolResult, FormatError> {
    match AppAnswer::parse(text) {
        AppAnswer::Versioned { format, result } => {
            let number = format
                .as_u64()
                .ok_or_else(|| FormatError::NotAVersion(format.clone()))?;
            match FormatVersion::from_number(number) {
                Some(FormatVersion::Legacy) => {
                    Ok(read_envelope(result)
                        .unwrap_or_else(|other| pass_through(&other.to_string())))
                }
                Some(FormatVersion::V1) => decode_v1_value(result),
                None => Err(FormatError::UnknownVersion(number)),
            }
        }
        // Not an envelope: the text as the app wrote it, not as it parsed.
        AppAnswer::Json(value) => Ok(read_envelope(value).unwrap_or_else(|_| pass_through(text))),
        AppAnswer::Text => Ok(pass_through(text)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::ContentPart;
    use serde_json::json;

    #[test]
    fn a_versioned_answer_or_the_legacy_rule() {
        let versioned =
            r#"{"format": 1, "result": {"outcome": {"success": {"data": 5}}, "summary": "five"}}"#;
        let result = decode_app_response(versioned).unwrap();
        assert_eq!(result.data(), Some(&json!(5)));
        assert_eq!(result.summary(), Some("five"));
        assert_eq!(result.data_text_bytes(), Some(versioned.len()));

        let legacy = decode_app_response(r#"{"success": true, "data": 5}"#).unwrap();
        assert_eq!(legacy.data(), Some(&json!(5)));
        assert_eq!(legacy.data_text_bytes(), Some(28));

        // `success` beside `format` makes it an envelope.
        let envelope =
            decode_app_response(r#"{"success": true, "format": 1, "result": 2}"#).unwrap();
        assert_eq!(
            envelope.metadata().legacy.beside.get("result"),
            Some(&json!(2))
        );

        let legacy_in_format_0 =
            decode_app_response(r#"{"format": 0, "result": {"success": true, "data": 7}}"#)
                .unwrap();
        assert_eq!(legacy_in_format_0.data(), Some(&json!(7)));
    }

    #[test]
    fn what_is_not_an_envelope_passes_through_as_written() {
        for text in [
            "plain words",
            r#"{ "result": 1 }"#,
            r#"{"format": "1", "result": {}}"#,
            "[1,  2]",
            "",
        ] {
            let result = decode_app_response(text).unwrap();
            assert_eq!(result.content(), &[ContentPart::text(text)], "{text:?}");
            assert_eq!(result.data_text_bytes(), None, "no data: {text:?}");
        }
    }

    #[test]
    fn newer_and_non_numeric_versions_are_refused() {
        let future = decode_app_response(r#"{"format": 99, "result": {}}"#).unwrap_err();
        assert_eq!(
            future.to_string(),
            "result format version 99 is newer than this toolhost knows (up to 1); upgrade toolhost to read it"
        );
        let fraction = decode_app_response(r#"{"format": 1.5, "result": {}}"#).unwrap_err();
        assert_eq!(
            fraction.to_string(),
            "the answer's \"format\" is 1.5, not a format version (a whole number such as 1)"
        );
        let negative = decode_app_response(r#"{"format": -1, "result": {}}"#).unwrap_err();
        assert!(
            matches!(negative, FormatError::NotAVersion(_)),
            "{negative}"
        );
    }
}
