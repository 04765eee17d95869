//! `word_stats`: counts the words, lines and characters of a text. The same
//! tool exists in JavaScript, Python and C (`js-tools`, `py-tools`, `c-tools`);
//! `tests/languages.rs` checks that all four answer byte for byte alike.
//!
//! The rules every version follows: a character is a Unicode scalar value; a
//! word is a maximal run of characters other than ASCII whitespace (space, tab,
//! LF, VT, FF, CR); the lines are the LFs, plus one when the text does not end
//! with LF (so an empty text has none).

use serde::Deserialize;
use toolhost_guest::{CallContext, Plugin, ToolDescriptor, ToolResult, json, with_args};

struct WordStats;

#[derive(Deserialize)]
struct Args {
    text: String,
}

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r')
}

/// `1 word`, `2 words`.
fn counted(n: usize, noun: &str) -> String {
    if n == 1 {
        format!("1 {noun}")
    } else {
        format!("{n} {noun}s")
    }
}

fn word_stats(Args { text }: Args) -> ToolResult {
    let characters = text.chars().count();
    let words = text.split(is_space).filter(|w| !w.is_empty()).count();
    let newlines = text.matches('\n').count();
    let lines = newlines + usize::from(!text.is_empty() && !text.ends_with('\n'));
    ToolResult::success(json!({"characters": characters, "lines": lines, "words": words}))
        .summary(format!(
            "{}, {}, {}",
            counted(words, "word"),
            counted(lines, "line"),
            counted(characters, "character")
        ))
        .build()
}

impl Plugin for WordStats {
    fn describe() -> Vec<ToolDescriptor> {
        vec![
            ToolDescriptor::new(
                "word_stats",
                "Counts the words, lines and characters of a text.",
            )
            .title("Word statistics")
            .input_schema(json!({
                "additionalProperties": false,
                "properties": {"text": {"description": "The text to count", "type": "string"}},
                "required": ["text"],
                "type": "object",
            }))
            .output_schema(json!({
                "additionalProperties": false,
                "properties": {
                    "characters": {"minimum": 0, "type": "integer"},
                    "lines": {"minimum": 0, "type": "integer"},
                    "words": {"minimum": 0, "type": "integer"},
                },
                "required": ["characters", "lines", "words"],
                "type": "object",
            }))
            .read_only(true)
            .build(),
        ]
    }

    fn call(name: String, arguments: String, _context: CallContext) -> ToolResult {
        match name.as_str() {
            "word_stats" => with_args(&arguments, word_stats),
            other => ToolResult::unknown_tool(other).build(),
        }
    }
}

toolhost_guest::export_plugin!(WordStats);
