//! `ask`: tools that ask their caller during a call, the way the `interaction`
//! import lets a tool ask: a form for the user (`confirm`, `survey`), a
//! message from the caller's model (`haiku`) and the roots the client shares
//! (`workspace`). The host carries each question
//! as the caller's protocol revision allows; the tool is the same for all.

use serde::Deserialize;
use toolhost_guest::interaction::{self, Answer, Question};
use toolhost_guest::{
    CallContext, IntoToolResult, Part, Plugin, ToolDescriptor, ToolError, ToolResult, json,
    with_args,
};

struct Ask;

#[derive(Deserialize)]
struct Confirm {
    action: String,
}

#[derive(Deserialize)]
struct Haiku {
    topic: String,
}

#[derive(Deserialize)]
struct Pester {
    times: u32,
    /// Ask them all in one batch (`ask`) instead of one after another.
    #[serde(default)]
    at_once: bool,
    /// Put every question of the batch under this one key.
    #[serde(default)]
    key: Option<String>,
}

/// Asks whether to go ahead with `action`; answers what the user chose.
fn confirm(Confirm { action }: Confirm) -> Result<ToolResult, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": { "ok": { "type": "boolean", "title": "Go ahead?" } },
        "required": ["ok"],
    });
    let text = match interaction::elicit(&format!("Shall I {action}?"), &schema)? {
        Answer::Accept(form) if form.get("ok") == Some(&json!(true)) => format!("Done: {action}."),
        Answer::Accept(_) => format!("Not done: {action} (you said no)."),
        Answer::Decline => format!("Not done: {action} (declined)."),
        Answer::Cancel => format!("Not done: {action} (cancelled)."),
    };
    Ok(ToolResult::empty().part(Part::text(text)).build())
}

/// Two questions, one after the other: a name, then a favourite colour.
fn survey() -> Result<ToolResult, ToolError> {
    let field = |name: &str| {
        json!({
            "type": "object",
            "properties": { name: { "type": "string" } },
            "required": [name],
        })
    };
    let name = match interaction::elicit("What is your name?", &field("name"))? {
        Answer::Accept(form) => form["name"].as_str().unwrap_or_default().to_owned(),
        _ => {
            return Ok(ToolResult::empty()
                .part(Part::text("No name, no survey."))
                .build());
        }
    };
    let colour =
        match interaction::elicit(&format!("{name}, your favourite colour?"), &field("colour"))? {
            Answer::Accept(form) => form["colour"].as_str().unwrap_or_default().to_owned(),
            _ => "none".to_owned(),
        };
    Ok(
        ToolResult::success(json!({ "name": name, "colour": colour }))
            .summary(format!("{name} likes {colour}"))
            .build(),
    )
}

/// A haiku about `topic` from the caller's model.
fn haiku(Haiku { topic }: Haiku) -> Result<ToolResult, ToolError> {
    let poem = interaction::sample_text(&format!("Write a haiku about {topic}."), 100)?;
    Ok(ToolResult::empty().part(Part::text(poem)).build())
}

/// The roots the client shares, one per line (`name: uri`, or the URI).
fn workspace() -> Result<ToolResult, ToolError> {
    let roots = interaction::list_roots()?;
    let lines: Vec<String> = roots
        .iter()
        .map(|root| match &root.name {
            Some(name) => format!("{name}: {}", root.uri),
            None => root.uri.clone(),
        })
        .collect();
    Ok(ToolResult::empty()
        .part(Part::text(lines.join("\n")))
        .build())
}

/// Asks `times` questions whatever the answers (the budget tests): the host
/// refuses the ones over `max_input_requests` and fails the call, refuses a
/// key asked twice, and ends a batch longer than any budget.
fn pester(
    Pester {
        times,
        at_once,
        key,
    }: Pester,
) -> Result<ToolResult, ToolError> {
    let schema = json!({ "type": "object", "properties": {} });
    if at_once {
        let keys: Vec<String> = (1..=times)
            .map(|n| key.clone().unwrap_or_else(|| format!("question-{n}")))
            .collect();
        let batch: Vec<(&str, Question)> = keys
            .iter()
            .map(|key| {
                let message = format!("Question {key}?");
                (
                    key.as_str(),
                    Question::Elicit {
                        message,
                        schema: schema.clone(),
                    },
                )
            })
            .collect();
        for reply in interaction::ask(&batch) {
            reply?;
        }
    } else {
        for round in 1..=times {
            interaction::elicit(&format!("Question {round}?"), &schema)?;
        }
    }
    Ok(ToolResult::empty()
        .part(Part::text(format!("Asked {times} times.")))
        .build())
}

impl Plugin for Ask {
    fn describe() -> Vec<ToolDescriptor> {
        vec![
            ToolDescriptor::new(
                "confirm",
                "Asks the user whether to go ahead with an action.",
            )
            .input_schema(json!({
                "type": "object",
                "properties": { "action": { "type": "string" } },
                "required": ["action"],
            }))
            .read_only(true)
            .build(),
            ToolDescriptor::new(
                "survey",
                "Asks the user two questions, one after the other.",
            )
            .input_schema(json!({ "type": "object", "properties": {} }))
            .read_only(true)
            .build(),
            ToolDescriptor::new(
                "haiku",
                "Asks the caller's model for a haiku about a topic.",
            )
            .input_schema(json!({
                "type": "object",
                "properties": { "topic": { "type": "string" } },
                "required": ["topic"],
            }))
            .read_only(true)
            .build(),
            ToolDescriptor::new("workspace", "Lists the roots the client shares.")
                .input_schema(json!({ "type": "object", "properties": {} }))
                .read_only(true)
                .build(),
            ToolDescriptor::new(
                "pester",
                "Asks the user the same empty question many times.",
            )
            .input_schema(json!({
                "type": "object",
                "properties": {
                    "times": { "type": "integer", "minimum": 0 },
                    "at_once": { "type": "boolean" },
                    "key": { "type": "string" },
                },
                "required": ["times"],
            }))
            .read_only(true)
            .build(),
        ]
    }

    fn call(name: String, arguments: String, _context: CallContext) -> ToolResult {
        match name.as_str() {
            "confirm" => with_args(&arguments, confirm),
            "survey" => survey().into_tool_result(),
            "haiku" => with_args(&arguments, haiku),
            "pester" => with_args(&arguments, pester),
            "workspace" => workspace().into_tool_result(),
            other => ToolResult::unknown_tool(other).build(),
        }
    }
}

toolhost_guest::export_plugin!(Ask);
