//! The legacy parser and the versioned decoders, on arbitrary text.
//!
//! Checks, beside "no panic": the legacy version never fails; text that is not a
//! `{"success": <bool>, ..}` envelope comes back as one text part, unchanged; and
//! whatever the parser produced survives the current serialized form
//! (`encode` then `decode`) exactly, as stored results and app responses must.

#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolhost::render::format::{self, FormatVersion};
use toolhost::render::legacy::parse::parse_legacy;
use toolhost::result::ContentPart;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };

    let result = format::decode(FormatVersion::Legacy, text).expect("legacy never fails");
    assert_eq!(result, parse_legacy(text), "decode(Legacy) is parse_legacy");

    let is_envelope = matches!(
        serde_json::from_str::<Value>(text),
        Ok(Value::Object(ref o)) if o.get("success").is_some_and(Value::is_boolean)
    );
    if !is_envelope {
        assert!(!result.is_failure());
        assert_eq!(result.data(), None);
        assert_eq!(result.content(), &[ContentPart::text(text)]);
    }

    let (version, encoded) = format::encode(&result);
    let decoded = format::decode(version, &encoded)
        .unwrap_or_else(|e| panic!("the encoded form does not decode: {e}\n{encoded}"));
    assert_eq!(decoded, result, "encode/decode round trip\n{encoded}");

    // The other readers must not panic on the same text.
    let _ = format::decode(FormatVersion::V1, text);
    let _ = format::decode_app_response(text);
});
