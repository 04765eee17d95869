//! The serialized forms of a result that are not renderings: what is written
//! where a result leaves the host to be read back later (a stored large result)
//! and what an app tool answers with.
//!
//! Each serialized result carries a [`FormatVersion`]; [`decode`] picks the reader
//! for it, so rows written by an older toolhost and apps built against an older
//! format stay readable. [`encode`] writes the current version; the mapper encodes
//! a result before it hands it to the result store, and [`decode_stored`] reads
//! back the row the store kept (the store itself never reads one). An app's answer
//! is parsed once by [`decode_app_response`]: a versioned result
//! (`{"format": N, "result": {..}}`) or, failing that, the legacy envelope.
//!
//! The fields of each version are types of their own, in one module per version
//! ([`v1`]); [`ToolResult`] has no serialized form of its own. The
//! [`FormatVersion::Legacy`] form is the `{"success": ..}` envelope, read by
//! [`parse_legacy`]. The literal files under `tests/formats/` pin every version.

mod app;
pub mod v1;

pub use app::{AppAnswer, decode_app_response};

use serde::Deserialize;

use super::legacy::parse::parse_legacy;
use crate::result::ToolResult;

/// The version of a serialized result. Add a variant for each new serialized form;
/// never change what an existing one means.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FormatVersion {
    /// The legacy `{"success": ..}` envelope string, which carries no version.
    Legacy = 0,
    /// Format 1 of toolhost 0.1 (camelCase JSON, see [`v1`]).
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
    /// An app's answer whose `format` is not a whole number.
    #[error("the answer's \"format\" is {0}, not a format version (a whole number such as 1)")]
    NotAVersion(serde_json::Number),
    /// A stored row's version this build does not know (rows keep it signed).
    #[error(
        "a stored result has format version {0}, newer than this toolhost knows; upgrade toolhost"
    )]
    UnknownStoredVersion(i64),
    /// The text is not JSON of the version's shape.
    #[error("result of format version {version} is not valid: {source}")]
    Invalid {
        version: u64,
        #[source]
        source: serde_json::Error,
    },
    /// The JSON has the version's shape, but a field holds what no result can.
    #[error("result of format version {version} is not valid: {at}: {problem}")]
    Refused {
        version: u64,
        at: String,
        problem: String,
    },
}

impl FormatError {
    fn refused(version: FormatVersion, refusal: v1::Refusal) -> FormatError {
        FormatError::Refused {
            version: version.number(),
            at: refusal.at,
            problem: refusal.problem,
        }
    }
}

/// Serializes `result` in the current format version.
pub fn encode(result: &ToolResult) -> (FormatVersion, String) {
    let text =
        serde_json::to_string(&v1::Body::from(result)).expect("a format-1 body always serializes");
    (FormatVersion::CURRENT, text)
}

/// Reads a result serialized in `version`.
///
/// # Errors
///
/// [`FormatError::Invalid`] when the text is not a result of that version,
/// [`FormatError::Refused`] when a field holds what no result can (an unknown
/// error code, a reserved extension namespace). The legacy version never fails:
/// any text is a valid legacy answer.
pub fn decode(version: FormatVersion, text: &str) -> Result<ToolResult, FormatError> {
    match version {
        FormatVersion::Legacy => Ok(parse_legacy(text)),
        FormatVersion::V1 => {
            let body: v1::Body =
                serde_json::from_str(text).map_err(|source| FormatError::Invalid {
                    version: version.number(),
                    source,
                })?;
            body.into_result()
                .map_err(|refusal| FormatError::refused(version, refusal))
        }
    }
}

/// Reads a body of format 1 that is already parsed (the `result` of an app's answer).
fn decode_v1_value(value: serde_json::Value) -> Result<ToolResult, FormatError> {
    let version = FormatVersion::V1;
    let body = v1::Body::deserialize(value).map_err(|source| FormatError::Invalid {
        version: version.number(),
        source,
    })?;
    body.into_result()
        .map_err(|refusal| FormatError::refused(version, refusal))
}

/// Reads a row a result store kept (`crate::store::StoredRow`): `body` in the
/// format version `format` the row records.
///
/// # Errors
///
/// [`FormatError::UnknownStoredVersion`] when the version is newer than this
/// toolhost knows, [`FormatError::Invalid`] or [`FormatError::Refused`] when the
/// body is not a result of its version.
pub fn decode_stored(format: i64, body: &str) -> Result<ToolResult, FormatError> {
    let version = u64::try_from(format)
        .ok()
        .and_then(FormatVersion::from_number)
        .ok_or(FormatError::UnknownStoredVersion(format))?;
    decode(version, body)
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
        assert_eq!(version, FormatVersion::V1);
        assert_eq!(decode(version, &text).unwrap(), result);
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
        let error = decode(FormatVersion::V1, text).unwrap_err();
        assert!(
            error
                .to_string()
                .starts_with("result of format version 1 is not valid: missing field `outcome`"),
            "{error}"
        );
    }

    #[test]
    fn a_refused_field_is_named_in_the_error() {
        let error = decode(
            FormatVersion::V1,
            r#"{"outcome": {"failure": {"code": "oops", "message": "m"}}}"#,
        )
        .unwrap_err();
        assert!(
            error.to_string().starts_with(
                "result of format version 1 is not valid: outcome.failure.code: unknown error code \"oops\""
            ),
            "{error}"
        );
    }
}
