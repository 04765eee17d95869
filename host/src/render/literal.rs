//! JSON text as a JSON string literal, written in one pass.
//!
//! Several renderings carry JSON inside a text block: the legacy envelope of the
//! MCP `compat` and `legacy` modes, the data of `spec` mode. Written the plain
//! way, that JSON is formatted into a `String` and the string is then escaped
//! into the response, so every byte is scanned twice and every quote written
//! twice. [`write_literal`] formats the value straight into its escaped form:
//! `serde_json` already splits strings at the characters that need escaping, so
//! the outer escaping only touches those escapes, the quotes around strings and
//! nothing else (numbers, punctuation, string contents are written as they are).
//!
//! The bytes are the same as `serde_json::to_string(&serde_json::to_string(v)?)`
//! (tests below; `render::mcp`'s and `tests/golden_matrix.rs` compare whole
//! results against rmcp's own serialization).

use std::io::{self, Write};

use serde::Serialize;
use serde_json::ser::{CharEscape, Formatter};

/// Writes `value` as compact JSON inside a JSON string literal (with its
/// quotes) into `out`.
pub fn write_literal(out: &mut Vec<u8>, value: &impl Serialize) {
    out.push(b'"');
    let mut serializer = serde_json::Serializer::with_formatter(&mut *out, Nested);
    value
        .serialize(&mut serializer)
        .expect("a JSON value always serializes into memory");
    out.push(b'"');
}

/// `serde_json`'s compact formatter, its output escaped once more.
struct Nested;

impl Formatter for Nested {
    fn begin_string<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(br#"\""#)
    }

    fn end_string<W: ?Sized + Write>(&mut self, writer: &mut W) -> io::Result<()> {
        writer.write_all(br#"\""#)
    }

    fn write_char_escape<W: ?Sized + Write>(
        &mut self,
        writer: &mut W,
        escape: CharEscape,
    ) -> io::Result<()> {
        // The inner escape (`\n`, `\"`, `\u001f`), its backslash (and, for a
        // quote or a backslash, its second character) escaped again.
        let escaped: &[u8] = match escape {
            CharEscape::Quote => br#"\\\""#,
            CharEscape::ReverseSolidus => br"\\\\",
            CharEscape::Solidus => br"\\/",
            CharEscape::Backspace => br"\\b",
            CharEscape::FormFeed => br"\\f",
            CharEscape::LineFeed => br"\\n",
            CharEscape::CarriageReturn => br"\\r",
            CharEscape::Tab => br"\\t",
            CharEscape::AsciiControl(byte) => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                let (high, low) = (HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 0xf)]);
                return writer.write_all(&[b'\\', b'\\', b'u', b'0', b'0', high, low]);
            }
        };
        writer.write_all(escaped)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn twice(value: &Value) -> String {
        serde_json::to_string(&serde_json::to_string(value).unwrap()).unwrap()
    }

    fn once(value: &Value) -> String {
        let mut out = Vec::new();
        write_literal(&mut out, value);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn the_same_bytes_as_formatting_then_escaping() {
        let every_control: String = (0u8..0x20).map(char::from).collect();
        let values = [
            json!(null),
            json!(true),
            json!(-12.5e-7),
            json!(u64::MAX),
            json!(""),
            json!("plain"),
            json!("quote \" backslash \\ slash / tab \t newline \n"),
            json!(every_control),
            json!("non-ASCII: é, 中文, 🦀, \u{7f}, \u{2028}"),
            json!({"key \"quoted\"\n": ["a\\b", {"": [1, 2.5, false]}], "x": {}}),
            json!([[], {}, [null], "\u{0}"]),
        ];
        for value in values {
            assert_eq!(once(&value), twice(&value), "{value}");
        }
    }

    #[test]
    fn the_literal_reads_back_as_the_json() {
        let value = json!({"rows": [{"name": "a \"row\"\n", "id": 7}]});
        let text: String = serde_json::from_str(&once(&value)).unwrap();
        assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), value);
    }
}
