//! The versioned serialized form of a result: what is written where a result
//! leaves the host and is read back later (a stored large result, an app's
//! answer).
//!
//! Each serialized result carries a [`FormatVersion`]; [`decode`] picks the
//! reader for it, so rows written by an older toolhost and apps built against an
//! older format stay readable. [`encode`] writes the current version; the mapper
//! encodes a result before it hands it to the result store, and [`decode_stored`]
//! reads back the row the store kept (the store itself never reads one). The
//! [`FormatVersion::Legacy`] form is the `{"success": ..}` envelope, read by
//! [`parse_legacy`].

use serde_json::Value;

use super::keys;
use super::parse::parse_legacy;
use crate::result::ToolResult;

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
    /// A stored row's version this build does not know (rows keep it signed).
    #[error(
        "a stored result has format version {0}, newer than this toolhost knows; upgrade toolhost"
    )]
    UnknownStoredVersion(i64),
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

/// Reads a row a result store kept (`crate::store::StoredRow`): `body` in the
/// format version `format` the row records.
///
/// # Errors
///
/// [`FormatError::UnknownStoredVersion`] when the version is newer than this
/// toolhost knows, [`FormatError::Invalid`] when the body does not parse.
pub fn decode_stored(format: i64, body: &str) -> Result<ToolResult, FormatError> {
    let version = u64::try_from(format)
        .ok()
        .and_then(FormatVersion::from_number)
        .ok_or(FormatError::UnknownStoredVersion(format))?;
    decode(version, body)
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::{ContentPart, ErrorCode};
    use serde_json::json;

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
    fn stored_rows_decode_by_their_version_and_refuse_newer_ones() {
        let result = ToolResult::success(Some(json!({"rows": [1, 2]}))).build();
        let (version, body) = encode(&result);
        let format = i64::try_from(version.number()).unwrap();
        assert_eq!(decode_stored(format, &body).unwrap(), result);
        assert_eq!(
            decode_stored(0, r#"{"success": true, "data": 1}"#)
                .unwrap()
                .data(),
            Some(&json!(1))
        );
        for format in [2, 99, -1] {
            let error = decode_stored(format, &body).unwrap_err();
            assert_eq!(
                error.to_string(),
                format!(
                    "a stored result has format version {format}, newer than this toolhost knows; upgrade toolhost"
                )
            );
        }
        assert!(matches!(
            decode_stored(1, "not json"),
            Err(FormatError::Invalid { version: 1, .. })
        ));
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
