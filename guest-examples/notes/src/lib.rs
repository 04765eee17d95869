//! `notes`: a plugin that offers more than tools. A handful of notes, built in,
//! are
//!
//! - **resources**: `notes://index` (every note, as Markdown) and the template
//!   `notes://note/{slug}` (one note);
//! - a **prompt**, `summarize_note`, that embeds a note and asks for a summary;
//! - **completions** of the `slug` of both;
//! - **tools**: `find_notes`, that answers with links to the notes it found,
//!   and `pick_note`, that asks the user which note to show (elicitation: the
//!   host asks live or answers `input_required`, as the caller's revision
//!   allows).
//!
//! The plugin implements [`Plugin`], [`Prompts`], [`Resources`] and
//! [`Completion`], and is exported with `export_full!`.

use serde::Deserialize;
use toolhost_guest::completion::{Argument, Reference, Suggestions};
use toolhost_guest::interaction::{self, Answer};
use toolhost_guest::prompts::{Prompt, PromptDescriptor, PromptMessage};
use toolhost_guest::resources::{Contents, ResourceBody, ResourceDescriptor, TemplateDescriptor};
use toolhost_guest::{
    CallContext, Completion, IntoToolResult, Part, Plugin, Prompts, Resources, ToolDescriptor,
    ToolError, ToolResult, json, not_found, with_args,
};

/// The notes: slug, title, text.
const NOTES: [(&str, &str, &str); 3] = [
    (
        "sandbox",
        "The sandbox",
        "Each call runs in a fresh instance. A guest reaches files and the network only as far as the operator grants.",
    ),
    (
        "results",
        "Results",
        "A tool returns typed parts; the host renders them for every protocol revision. Large results travel as links.",
    ),
    (
        "prompts",
        "Prompts and resources",
        "Since toolhost:plugin@0.2.0 a plugin may offer prompts, resources and completions beside its tools.",
    ),
];

const TEMPLATE: &str = "notes://note/{slug}";

fn note_uri(slug: &str) -> String {
    format!("notes://note/{slug}")
}

fn note(slug: &str) -> Result<(&'static str, &'static str, &'static str), ToolError> {
    NOTES
        .into_iter()
        .find(|(s, _, _)| *s == slug)
        .ok_or_else(|| {
            not_found(format!(
                "No note {slug:?}; the notes are: sandbox, results, prompts."
            ))
        })
}

struct Notes;

#[derive(Deserialize)]
struct Find {
    word: String,
}

impl Plugin for Notes {
    fn describe() -> Vec<ToolDescriptor> {
        vec![
            ToolDescriptor::new(
                "find_notes",
                "Finds the notes that mention a word; answers with links to them.",
            )
            .input_schema(json!({
                "type": "object",
                "properties": {"word": {"type": "string", "minLength": 1}},
                "required": ["word"],
            }))
            .output_schema(json!({
                "type": "object",
                "properties": {"found": {"type": "array", "items": {"type": "string"}}},
                "required": ["found"],
            }))
            .read_only(true)
            .build(),
            ToolDescriptor::new(
                "pick_note",
                "Asks the user which note to show, then shows it.",
            )
            .read_only(true)
            .build(),
        ]
    }

    fn call(name: String, arguments: String, _context: CallContext) -> ToolResult {
        match name.as_str() {
            "find_notes" => with_args(&arguments, |Find { word }| {
                let word = word.to_lowercase();
                let found: Vec<_> = NOTES
                    .iter()
                    .filter(|(_, title, text)| {
                        title.to_lowercase().contains(&word) || text.to_lowercase().contains(&word)
                    })
                    .collect();
                let slugs: Vec<&str> = found.iter().map(|(slug, _, _)| *slug).collect();
                ToolResult::success(json!({ "found": slugs }))
                    .summary(format!("{} note(s) mention {word:?}", found.len()))
                    .parts(found.iter().map(|(slug, title, _)| {
                        Part::resource_link(note_uri(slug), *slug)
                            .title(*title)
                            .mime("text/markdown")
                            .build()
                    }))
            }),
            "pick_note" => pick_note().into_tool_result(),
            other => ToolResult::unknown_tool(other).build(),
        }
    }
}

/// Asks the user to pick a note (a form with one choice) and shows it; a user
/// who declines or cancels gets no note, and that is no error.
fn pick_note() -> Result<ToolResult, ToolError> {
    let slugs: Vec<&str> = NOTES.iter().map(|(slug, _, _)| *slug).collect();
    let schema = json!({
        "type": "object",
        "properties": {
            "slug": { "type": "string", "title": "Note", "enum": slugs },
        },
        "required": ["slug"],
    });
    let slug = match interaction::elicit("Which note shall I show?", &schema)? {
        Answer::Accept(form) => form["slug"].as_str().unwrap_or_default().to_owned(),
        Answer::Decline | Answer::Cancel => {
            return Ok(ToolResult::empty()
                .part(Part::text("No note picked."))
                .build());
        }
    };
    let (slug, title, text) = note(&slug)?;
    Ok(ToolResult::success(json!({ "slug": slug, "title": title }))
        .part(Part::text(format!("# {title}\n\n{text}")))
        .part(
            Part::resource_link(note_uri(slug), slug)
                .title(title)
                .mime("text/markdown")
                .build(),
        )
        .build())
}

impl Resources for Notes {
    fn describe_resources() -> Vec<ResourceDescriptor> {
        vec![ResourceDescriptor {
            uri: "notes://index".into(),
            name: "index".into(),
            title: Some("All notes".into()),
            description: Some("Every note, as Markdown.".into()),
            mime: Some("text/markdown".into()),
            size: None,
            required_privileges: Vec::new(),
        }]
    }

    fn describe_templates() -> Vec<TemplateDescriptor> {
        vec![TemplateDescriptor {
            uri_template: TEMPLATE.into(),
            name: "note".into(),
            title: Some("One note".into()),
            description: Some("The note of a slug: sandbox, results or prompts.".into()),
            mime: Some("text/markdown".into()),
            required_privileges: Vec::new(),
        }]
    }

    fn read_resource(uri: String, _context: CallContext) -> Result<Vec<Contents>, ToolError> {
        let markdown = |text: String| Contents {
            uri: uri.clone(),
            mime: Some("text/markdown".into()),
            body: ResourceBody::Text(text),
        };
        if uri == "notes://index" {
            let index = NOTES
                .iter()
                .map(|(slug, title, text)| format!("## {title} ({slug})\n\n{text}\n"))
                .collect::<Vec<_>>()
                .join("\n");
            return Ok(vec![markdown(index)]);
        }
        let slug = uri
            .strip_prefix("notes://note/")
            .ok_or_else(|| not_found(format!("No resource {uri}.")))?;
        let (_, title, text) = note(slug)?;
        Ok(vec![markdown(format!("# {title}\n\n{text}\n"))])
    }
}

impl Prompts for Notes {
    fn describe_prompts() -> Vec<PromptDescriptor> {
        vec![
            PromptDescriptor::new(
                "summarize_note",
                "Asks for a one-sentence summary of a note.",
            )
            .title("Summarize a note")
            .argument("slug", "Which note: sandbox, results or prompts", true),
        ]
    }

    fn get_prompt(
        name: String,
        arguments: Vec<(String, String)>,
        _context: CallContext,
    ) -> Result<Prompt, ToolError> {
        if name != "summarize_note" {
            return Err(not_found(format!("No prompt named {name}.")));
        }
        // The host has checked that the required `slug` is there.
        let slug = &arguments
            .iter()
            .find(|(name, _)| name == "slug")
            .expect("slug is required")
            .1;
        let (_, title, text) = note(slug)?;
        Ok(Prompt::new([
            PromptMessage::user(Part::embedded_text(
                note_uri(slug),
                "text/markdown",
                format!("# {title}\n\n{text}"),
            )),
            PromptMessage::user(Part::text("Summarize the note above in one sentence.")),
        ]))
    }
}

impl Completion for Notes {
    /// Slugs that start with what was typed, for the prompt's and the template's `slug`.
    fn complete(
        _reference: Reference,
        argument: Argument,
        _resolved: Vec<(String, String)>,
        _context: CallContext,
    ) -> Result<Suggestions, ToolError> {
        let values: Vec<String> = NOTES
            .iter()
            .map(|(slug, _, _)| *slug)
            .filter(|slug| argument.name == "slug" && slug.starts_with(&argument.value))
            .map(str::to_owned)
            .collect();
        Ok(Suggestions {
            total: Some(values.len() as u32),
            values,
            has_more: false,
        })
    }
}

/// Every note tool answers at once: none runs as a task.
impl toolhost_guest::Tasks for Notes {}

toolhost_guest::export_full!(Notes);
