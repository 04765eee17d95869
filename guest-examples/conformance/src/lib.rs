//! `conformance`: the fixture tools the official MCP conformance suite
//! (`@modelcontextprotocol/conformance`, 0.1.16 and 0.2.0-alpha) calls on a
//! server under test, as far as a tool can provide them.
//!
//! Each tool and prompt answers what the suite's scenario describes (texts,
//! URIs and MIME types as given there); the host's mapper turns the result into
//! MCP content.
//! `test_sampling`, `test_elicitation`, the SEP-1034 and SEP-1330 forms and
//! `test_streaming_elicitation` ask the client through the `interaction`
//! import, and so do the 2026-07-28 `input_required` tools.
//! The tasks extension's fixtures (`greet`, `slow_compute`, `failing_job`,
//! `protocol_error_job`, `confirm_delete`, `multi_input`, `test_tool_with_task`)
//! are ordinary tools; the `tasks` export says which may run as tasks.

use std::time::Duration;

use toolhost_guest::completion::{Argument, Reference, Suggestions};
use toolhost_guest::interaction::{self, Answer, Question, Reply};
use toolhost_guest::prompts::{Prompt, PromptDescriptor, PromptMessage};
use toolhost_guest::resources::{Contents, ResourceBody, ResourceDescriptor, TemplateDescriptor};
use toolhost_guest::tasks::TaskSupport;
use toolhost_guest::{
    CallContext, Completion, ContentPart, ErrorCode, IntoToolResult, Part, Plugin, Prompts,
    Resources, Tasks, ToolDescriptor, ToolError, ToolResult, Value, json, log, not_found, progress,
    with_args,
};

/// A 1x1 PNG, one red pixel (8-bit RGB): signature, IHDR, IDAT (zlib),
/// IEND, each chunk with its CRC.
const PNG: [u8; 69] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, // signature
    0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, // IHDR, 13 bytes
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, // width 1, height 1
    0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53, 0xde, // 8-bit RGB, CRC
    0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, // IDAT, 12 bytes
    0x78, 0xda, 0x63, 0xf8, 0xcf, 0xc0, 0x00, 0x00, 0x03, 0x01, 0x01, 0x00, // zlib
    0xf7, 0x03, 0x41, 0x43, // CRC
    0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60, 0x82, // IEND
];

/// A WAV file of 8 ms of silence: PCM, mono, 8 kHz, 8-bit (64 samples).
fn wav() -> Vec<u8> {
    let samples = [128u8; 64];
    let sample_rate: u32 = 8000;
    let mut wav = Vec::with_capacity(44 + samples.len());
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + samples.len() as u32).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes()); // size of the fmt chunk
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // channels
    wav.extend_from_slice(&sample_rate.to_le_bytes());
    wav.extend_from_slice(&sample_rate.to_le_bytes()); // bytes per second
    wav.extend_from_slice(&1u16.to_le_bytes()); // bytes per frame
    wav.extend_from_slice(&8u16.to_le_bytes()); // bits per sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&(samples.len() as u32).to_le_bytes());
    wav.extend_from_slice(&samples);
    wav
}

/// The pause between notifications the scenarios ask for ("~50ms"), so a
/// client sees them arrive during the call.
const PAUSE: Duration = Duration::from_millis(50);

/// The input schema of a tool without arguments.
fn no_arguments() -> toolhost_guest::Value {
    json!({"type": "object", "properties": {}})
}

/// The input schema `json-schema-2020-12` expects to find unchanged in
/// `tools/list` (0.2.0-alpha's version, a superset of 0.1.16's): `$schema`,
/// `$defs` with an `$anchor`, `additionalProperties`, `allOf`/`anyOf` and
/// `if`/`then`/`else`.
fn json_schema_2020_12() -> toolhost_guest::Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {
                    "street": {"type": "string"},
                    "city": {"type": "string"}
                }
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    })
}

/// The line [`trigger_tool_change`] logs: `tests/conformance/run.sh` watches the
/// server's log for it and, outside the sandbox, touches the watched plugin
/// directory.
pub const TRIGGER_MARKER: &str = "toolhost-conformance: please touch the plugin directory";

/// Asks for a change of the catalog. No guest can write into a plugin directory
/// (the host refuses any grant that reaches one: a guest could install code), so
/// the tool only says so on its log, and the test harness makes the change the
/// way an operator would; the host then reloads and sends
/// `notifications/tools/list_changed`.
fn trigger_tool_change() -> ToolResult {
    log::info(TRIGGER_MARKER);
    ToolResult::empty()
        .part(Part::text(
            "The plugin directory will change; the tool list will follow.",
        ))
        .build()
}

/// The line [`trigger_prompt_change`] logs: `tests/conformance/run.sh` then
/// adds a plugin with prompts of its own (or takes it away again) in the
/// watched plugin directory.
pub const PROMPT_TRIGGER_MARKER: &str =
    "toolhost-conformance: please add or remove the plugin with prompts";

/// Asks for a change of the prompt list, the way [`trigger_tool_change`] asks
/// for one of the catalog; the host then sends
/// `notifications/prompts/list_changed`.
fn trigger_prompt_change() -> ToolResult {
    log::info(PROMPT_TRIGGER_MARKER);
    ToolResult::empty()
        .part(Part::text(
            "A plugin with prompts will come or go; the prompt list will follow.",
        ))
        .build()
}

/// `test_sampling`: asks the client's model to answer `prompt`.
fn sampling(arguments: Value) -> Result<ToolResult, ToolError> {
    let prompt = arguments["prompt"].as_str().unwrap_or_default();
    let answer = interaction::sample_text(prompt, 100)?;
    Ok(ToolResult::empty()
        .part(Part::text(format!("LLM response: {answer}")))
        .build())
}

/// `test_elicitation`: asks the user for a username and an email address.
fn elicitation(arguments: Value) -> Result<ToolResult, ToolError> {
    let message = arguments["message"].as_str().unwrap_or_default();
    let schema = json!({
        "type": "object",
        "properties": {
            "username": { "type": "string", "description": "User's response" },
            "email": { "type": "string", "description": "User's email address" },
        },
        "required": ["username", "email"],
    });
    let text = match interaction::elicit(message, &schema)? {
        Answer::Accept(form) => {
            format!(
                "User response: action: accept, content: {}",
                Value::Object(form)
            )
        }
        Answer::Decline => "User response: action: decline".to_owned(),
        Answer::Cancel => "User response: action: cancel".to_owned(),
    };
    Ok(ToolResult::empty().part(Part::text(text)).build())
}

/// Asks the user to fill in `schema`; tells what they did, as the SEP-1034
/// and SEP-1330 scenarios expect it.
fn elicit_form(message: &str, schema: Value) -> Result<ToolResult, ToolError> {
    let text = match interaction::elicit(message, &schema)? {
        Answer::Accept(form) => {
            format!(
                "Elicitation completed: action=accept, content={}",
                Value::Object(form)
            )
        }
        Answer::Decline => "Elicitation completed: action=decline, content={}".to_owned(),
        Answer::Cancel => "Elicitation completed: action=cancel, content={}".to_owned(),
    };
    Ok(ToolResult::empty().part(Part::text(text)).build())
}

/// SEP-1034: a form whose every primitive field has a default.
fn form_with_defaults() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": { "type": "string", "default": "John Doe" },
            "age": { "type": "integer", "default": 30 },
            "score": { "type": "number", "default": 95.5 },
            "status": {
                "type": "string",
                "enum": ["active", "inactive", "pending"],
                "default": "active",
            },
            "verified": { "type": "boolean", "default": true },
        },
    })
}

/// SEP-1330: the five ways a form offers a choice.
fn form_with_enums() -> Value {
    let titled = |choices: [(&str, &str); 3]| -> Vec<Value> {
        choices
            .iter()
            .map(|(value, title)| json!({ "const": value, "title": title }))
            .collect()
    };
    json!({
        "type": "object",
        "properties": {
            "untitledSingle": { "type": "string", "enum": ["option1", "option2", "option3"] },
            "titledSingle": {
                "type": "string",
                "oneOf": titled([
                    ("value1", "First Option"),
                    ("value2", "Second Option"),
                    ("value3", "Third Option"),
                ]),
            },
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"],
            },
            "untitledMulti": {
                "type": "array",
                "items": { "type": "string", "enum": ["option1", "option2", "option3"] },
            },
            "titledMulti": {
                "type": "array",
                "items": {
                    "anyOf": titled([
                        ("value1", "First Choice"),
                        ("value2", "Second Choice"),
                        ("value3", "Third Choice"),
                    ]),
                },
            },
        },
    })
}

/// A form of one required string field.
fn field(name: &str) -> Value {
    json!({
        "type": "object",
        "properties": { name: { "type": "string" } },
        "required": [name],
    })
}

/// The text field `name` of an accepted form, or why there is none.
fn ask_text(message: &str, name: &str) -> Result<String, ToolError> {
    match interaction::elicit(message, &field(name))? {
        Answer::Accept(form) => Ok(form[name].as_str().unwrap_or_default().to_owned()),
        Answer::Decline | Answer::Cancel => Err(ToolError {
            code: ErrorCode::ToolError,
            message: format!("the user did not give a {name}"),
            details: None,
        }),
    }
}

/// The 2026-07-28 multi-round fixtures (SEP-2322) that one question per round
/// can serve; the host turns each question into `input_required`.
fn input_required(name: &str) -> Result<ToolResult, ToolError> {
    let text = match name {
        "test_input_required_result_elicitation" => {
            let schema = json!({
                "type": "object",
                "properties": { "name": { "type": "string" } },
                "required": ["name"],
            });
            match interaction::elicit_as("user_name", "What is your name?", &schema)? {
                Answer::Accept(form) => format!("Hello, {}!", form["name"].as_str().unwrap_or("")),
                Answer::Decline | Answer::Cancel => "Hello, whoever you are!".to_owned(),
            }
        }
        "test_input_required_result_multiple_inputs" => {
            let schema = json!({"type": "object", "properties": { "name": { "type": "string" } }});
            let replies = interaction::ask(&[
                (
                    "user_name",
                    Question::Elicit {
                        message: "What is your name?".into(),
                        schema,
                    },
                ),
                (
                    "greeting",
                    Question::Sample(interaction::text_request("Say hello.", 50)),
                ),
                ("client_roots", Question::ListRoots),
            ]);
            let mut said = Vec::with_capacity(replies.len());
            for reply in replies {
                said.push(match reply? {
                    Reply::Form(Answer::Accept(form)) => {
                        format!("name {}", form["name"].as_str().unwrap_or(""))
                    }
                    Reply::Form(_) => "no name".to_owned(),
                    Reply::Sample(answer) => match answer.content {
                        ContentPart::Text(text) => format!("greeting {:?}", text.text),
                        _ => "a greeting that is not text".to_owned(),
                    },
                    Reply::Roots(roots) => format!("{} roots", roots.len()),
                });
            }
            said.join("; ")
        }
        "test_input_required_result_sampling" => {
            interaction::sample_text("What is the capital of France?", 100)?
        }
        "test_input_required_result_request_state"
        | "test_input_required_result_tampered_state" => {
            let schema = json!({ "type": "object", "properties": { "ok": { "type": "boolean" } } });
            interaction::elicit("Proceed?", &schema)?;
            "state-ok: the request state verified".to_owned()
        }
        "test_input_required_result_list_roots" => {
            let roots = interaction::list_roots()?;
            let uris: Vec<&str> = roots.iter().map(|root| root.uri.as_str()).collect();
            format!(
                "The client shares {} roots: {}",
                roots.len(),
                uris.join(", ")
            )
        }
        "test_input_required_result_multi_round" => {
            let name = ask_text("What is your name?", "name")?;
            let color = ask_text(&format!("{name}, what is your favourite color?"), "color")?;
            format!("{name} likes {color}")
        }
        // Elicitation only if the client declared it, else sampling.
        _ => match ask_text("What is your name?", "name") {
            Ok(name) => format!("Hello, {name}!"),
            Err(_) => interaction::sample_text("Suggest a name.", 50)?,
        },
    };
    Ok(ToolResult::empty().part(Part::text(text)).build())
}

/// The input schema of a tool with one required string argument.
fn one_string(name: &str, description: &str) -> Value {
    json!({
        "type": "object",
        "properties": { name: { "type": "string", "description": description } },
        "required": [name],
    })
}

struct Conformance;

impl Plugin for Conformance {
    fn describe() -> Vec<ToolDescriptor> {
        // `test_simple_text` comes first: a 2026-07-28 scenario calls the
        // first listed tool with `{}`.
        let plain = |name: &str, description: &str| {
            ToolDescriptor::new(name, description)
                .input_schema(no_arguments())
                .read_only(true)
                .build()
        };
        vec![
            plain("test_simple_text", "Returns one text block."),
            plain("test_image_content", "Returns a 1x1 PNG image."),
            plain("test_audio_content", "Returns a short WAV sound."),
            plain(
                "test_embedded_resource",
                "Returns an embedded text resource.",
            ),
            plain(
                "test_multiple_content_types",
                "Returns text, an image and an embedded resource.",
            ),
            plain("test_error_handling", "Always fails with a tool error."),
            plain(
                "test_tool_with_progress",
                "Reports progress three times (0, 50 and 100 of 100), then returns text.",
            ),
            plain(
                "test_tool_with_logging",
                "Logs three info lines during the call, then returns text.",
            ),
            plain(
                "test_logging_tool",
                "Logs one info line, then returns text (a server must not forward the line \
                 when the request set no log level).",
            ),
            ToolDescriptor::new(
                "json_schema_2020_12_tool",
                "Tool with JSON Schema 2020-12 features",
            )
            .input_schema(json_schema_2020_12())
            .read_only(true)
            .build(),
            // SEP-2575's diagnostic hook: the catalog changes the way an operator
            // changes it, by a file in the watched plugin directory, which the
            // test harness writes when this tool asks on its log (no guest may
            // write there); the host reloads and sends
            // `notifications/tools/list_changed`.
            ToolDescriptor::new(
                "test_trigger_tool_change",
                "Asks the test harness to touch the watched plugin directory, so the host reloads its tools.",
            )
            .input_schema(no_arguments())
            .build(),
            ToolDescriptor::new(
                "test_trigger_prompt_change",
                "Asks the test harness to add or remove a plugin with prompts in the watched plugin directory.",
            )
            .input_schema(no_arguments())
            .build(),
            // SEP-2575: a tool that needs the client's sampling capability; the
            // host refuses a client that did not declare it (-32021).
            ToolDescriptor::new(
                "test_missing_capability",
                "Needs the client's sampling capability.",
            )
            .input_schema(no_arguments())
            .requires_client_capability("sampling")
            .build(),
            ToolDescriptor::new(
                "test_sampling",
                "Asks the client's model to answer a prompt (sampling/createMessage).",
            )
            .input_schema(one_string("prompt", "The prompt to send to the LLM"))
            .read_only(true)
            .build(),
            ToolDescriptor::new(
                "test_elicitation",
                "Asks the user for a username and an email address (elicitation/create).",
            )
            .input_schema(one_string("message", "The message to show the user"))
            .read_only(true)
            .build(),
            plain(
                "test_elicitation_sep1034_defaults",
                "Asks the user for a form whose fields all have defaults (SEP-1034).",
            ),
            plain(
                "test_elicitation_sep1330_enums",
                "Asks the user for a form with each kind of enum (SEP-1330).",
            ),
            // SEP-2575: a stateless caller is never sent a request of its own
            // on the call's stream; this question comes back as `input_required`.
            ToolDescriptor::new(
                "test_streaming_elicitation",
                "Asks the user to confirm (elicitation/create), then returns text.",
            )
            .input_schema(no_arguments())
            .requires_client_capability("elicitation")
            .read_only(true)
            .build(),
            plain(
                "test_input_required_result_elicitation",
                "Asks the user's name (SEP-2322).",
            ),
            plain(
                "test_input_required_result_sampling",
                "Asks the client's model a question (SEP-2322).",
            ),
            plain(
                "test_input_required_result_request_state",
                "Asks once; answers `state-ok` (SEP-2322).",
            ),
            plain(
                "test_input_required_result_tampered_state",
                "Asks once; a tampered requestState is refused (SEP-2322).",
            ),
            plain(
                "test_input_required_result_list_roots",
                "Asks the client which roots it shares (SEP-2322).",
            ),
            plain(
                "test_input_required_result_multiple_inputs",
                "Asks a name, a model and the roots in one round (SEP-2322).",
            ),
            plain(
                "test_input_required_result_multi_round",
                "Asks a name, then a colour, in two rounds (SEP-2322).",
            ),
            plain(
                "test_input_required_result_capabilities",
                "Asks the user, or the model if the client cannot elicit (SEP-2322).",
            ),
            // The tasks extension's fixtures (SEP-2663): `greet` runs while
            // its caller waits; the others may run as tasks (see `Tasks`).
            ToolDescriptor::new("greet", "Greets someone by name.")
                .input_schema(one_string("name", "Whom to greet."))
                .read_only(true)
                .build(),
            ToolDescriptor::new("slow_compute", "Works for `seconds`, then answers.")
                .input_schema(json!({
                    "type": "object",
                    "properties": {
                        "seconds": {"type": "number", "minimum": 0, "maximum": 600},
                        "label": {"type": "string"}
                    },
                    "required": ["seconds"]
                }))
                .read_only(true)
                .build(),
            plain("failing_job", "Works a second, then fails with a tool error."),
            plain("protocol_error_job", "Works a second, then crashes."),
            ToolDescriptor::new("confirm_delete", "Looks a file up, then asks to confirm.")
                .input_schema(one_string("filename", "The file to delete."))
                .build(),
            plain("multi_input", "Looks around, then asks two questions at once."),
            plain("test_tool_with_task", "Asks a name, then works on it as a task."),
            // SEP-2243: a parameter the client mirrors into an `Mcp-Param-Region`
            // header, which the server checks against the body.
            ToolDescriptor::new(
                "test_custom_header",
                "Echoes a region the client also sends as a header.",
            )
            .input_schema(json!({
                "type": "object",
                "properties": {
                    "region": {"type": "string", "x-mcp-header": "Region"},
                    "query": {"type": "string"}
                },
                "required": ["region"]
            }))
            .read_only(true)
            .build(),
        ]
    }

    fn call(name: String, arguments: String, _context: CallContext) -> ToolResult {
        match name.as_str() {
            "test_sampling" => with_args(&arguments, sampling),
            "test_elicitation" => with_args(&arguments, elicitation),
            name if name.starts_with("test_input_required_result_") => {
                input_required(name).into_tool_result()
            }
            "test_streaming_elicitation" => elicit_form(
                "Go ahead?",
                json!({ "type": "object", "properties": { "ok": { "type": "boolean" } } }),
            )
            .into_tool_result(),
            "test_elicitation_sep1034_defaults" => {
                elicit_form("Please review your details.", form_with_defaults()).into_tool_result()
            }
            "test_elicitation_sep1330_enums" => {
                elicit_form("Please choose your options.", form_with_enums()).into_tool_result()
            }
            "test_simple_text" => ToolResult::empty()
                .part(Part::text("This is a simple text response for testing."))
                .build(),
            "test_image_content" => ToolResult::empty()
                .part(Part::image(PNG, "image/png"))
                .build(),
            "test_audio_content" => ToolResult::empty()
                .part(Part::audio(wav(), "audio/wav"))
                .build(),
            "test_embedded_resource" => ToolResult::empty()
                .part(Part::embedded_text(
                    "test://embedded-resource",
                    "text/plain",
                    "This is an embedded resource content.",
                ))
                .build(),
            "test_multiple_content_types" => ToolResult::empty()
                .part(Part::text("Multiple content types test:"))
                .part(Part::image(PNG, "image/png"))
                .part(Part::embedded_text(
                    "test://mixed-content-resource",
                    "application/json",
                    r#"{"test":"data","value":123}"#,
                ))
                .build(),
            "test_error_handling" => ToolResult::failure(
                ErrorCode::ToolError,
                "This tool intentionally returns an error for testing",
            )
            .build(),
            "test_tool_with_progress" => {
                progress(0.0, Some(100.0));
                std::thread::sleep(PAUSE);
                progress(50.0, Some(100.0));
                std::thread::sleep(PAUSE);
                progress(100.0, Some(100.0));
                ToolResult::empty()
                    .part(Part::text("Progress test completed."))
                    .build()
            }
            "test_tool_with_logging" => {
                log::info("Tool execution started");
                std::thread::sleep(PAUSE);
                log::info("Tool processing data");
                std::thread::sleep(PAUSE);
                log::info("Tool execution completed");
                ToolResult::empty()
                    .part(Part::text("Logging test completed."))
                    .build()
            }
            "test_logging_tool" => {
                log::info("test_logging_tool ran");
                ToolResult::empty()
                    .part(Part::text("Logging tool completed."))
                    .build()
            }
            "json_schema_2020_12_tool" => ToolResult::empty().part(Part::text("ok")).build(),
            "test_trigger_tool_change" => trigger_tool_change(),
            "test_trigger_prompt_change" => trigger_prompt_change(),
            "test_missing_capability" => ToolResult::empty()
                .part(Part::text("The client declared sampling."))
                .build(),
            "test_custom_header" => ToolResult::empty()
                .part(Part::text("Custom header test completed"))
                .build(),
            "greet"
            | "slow_compute"
            | "failing_job"
            | "protocol_error_job"
            | "confirm_delete"
            | "multi_input"
            | "test_tool_with_task" => task_fixture(&name, &arguments),
            other => ToolResult::unknown_tool(other).build(),
        }
    }
}

/// Asks the user for a context under the key the suite's
/// input-required-result-non-tool-request scenario expects (`user_context`).
fn ask_context(message: &str) -> Result<String, ToolError> {
    let schema = json!({
        "type": "object",
        "properties": { "context": { "type": "string" } },
        "required": ["context"],
    });
    Ok(
        match interaction::elicit_as("user_context", message, &schema)? {
            Answer::Accept(form) => form["context"].as_str().unwrap_or_default().to_owned(),
            Answer::Decline | Answer::Cancel => "none".to_owned(),
        },
    )
}

/// The prompts of the suite's `prompts-*` scenarios.
impl Prompts for Conformance {
    fn describe_prompts() -> Vec<PromptDescriptor> {
        vec![
            PromptDescriptor::new("test_simple_prompt", "A prompt without arguments."),
            PromptDescriptor::new(
                "test_prompt_with_arguments",
                "A prompt that puts its two arguments into its message.",
            )
            .argument("arg1", "First test argument", true)
            .argument("arg2", "Second test argument", true),
            PromptDescriptor::new(
                "test_prompt_with_embedded_resource",
                "A prompt that embeds the resource it is given.",
            )
            .argument("resourceUri", "URI of the resource to embed", true),
            PromptDescriptor::new("test_prompt_with_image", "A prompt with an image."),
            PromptDescriptor::new(
                "test_input_required_result_prompt",
                "Asks the user what context to use, then puts it in its message (SEP-2322).",
            ),
        ]
    }

    fn get_prompt(
        name: String,
        arguments: Vec<(String, String)>,
        _context: CallContext,
    ) -> Result<Prompt, ToolError> {
        let argument = |wanted: &str| {
            arguments
                .iter()
                .find(|(name, _)| name == wanted)
                .map(|(_, value)| value.as_str())
                .unwrap_or_default()
        };
        let messages = match name.as_str() {
            "test_simple_prompt" => vec![PromptMessage::user(Part::text(
                "This is a simple prompt for testing.",
            ))],
            "test_prompt_with_arguments" => vec![PromptMessage::user(Part::text(format!(
                "Prompt with arguments: arg1='{}', arg2='{}'",
                argument("arg1"),
                argument("arg2")
            )))],
            "test_prompt_with_embedded_resource" => vec![
                PromptMessage::user(Part::embedded_text(
                    argument("resourceUri"),
                    "text/plain",
                    "Embedded resource content for testing.",
                )),
                PromptMessage::user(Part::text("Please process the embedded resource above.")),
            ],
            "test_prompt_with_image" => vec![
                PromptMessage::user(Part::image(PNG, "image/png")),
                PromptMessage::user(Part::text("Please analyze the image above.")),
            ],
            "test_input_required_result_prompt" => {
                let context = ask_context("What context should the prompt use?")?;
                vec![PromptMessage::user(Part::text(format!(
                    "Answer with this context in mind: {context}"
                )))]
            }
            other => return Err(not_found(format!("No prompt named {other}."))),
        };
        Ok(Prompt::new(messages))
    }
}

/// The resources of the suite's `resources-*` scenarios.
impl Resources for Conformance {
    fn describe_resources() -> Vec<ResourceDescriptor> {
        let resource = |uri: &str, name: &str, mime: &str, description: &str| ResourceDescriptor {
            uri: uri.into(),
            name: name.into(),
            title: None,
            description: Some(description.into()),
            mime: Some(mime.into()),
            size: None,
            required_privileges: Vec::new(),
        };
        vec![
            resource(
                "test://static-text",
                "static-text",
                "text/plain",
                "A static text resource.",
            ),
            resource(
                "test://static-binary",
                "static-binary",
                "image/png",
                "A static PNG image.",
            ),
            resource(
                "test://watched-resource",
                "watched-resource",
                "text/plain",
                "A resource clients subscribe to.",
            ),
            resource(
                "test://input-required",
                "input-required",
                "text/plain",
                "A resource that asks the user for its context before it is read.",
            ),
        ]
    }

    fn describe_templates() -> Vec<TemplateDescriptor> {
        vec![TemplateDescriptor {
            uri_template: "test://template/{id}/data".into(),
            name: "template-data".into(),
            title: None,
            description: Some("Data for an id.".into()),
            mime: Some("application/json".into()),
            required_privileges: Vec::new(),
        }]
    }

    fn read_resource(uri: String, _context: CallContext) -> Result<Vec<Contents>, ToolError> {
        let contents = |mime: &str, body: ResourceBody| Contents {
            uri: uri.clone(),
            mime: Some(mime.into()),
            body,
        };
        let text = |text: &str| ResourceBody::Text(text.into());
        let read = match uri.as_str() {
            "test://static-text" => contents(
                "text/plain",
                text("This is the content of the static text resource."),
            ),
            "test://static-binary" => contents("image/png", ResourceBody::Bytes(PNG.to_vec())),
            "test://watched-resource" => contents("text/plain", text("Watched resource content.")),
            "test://input-required" => {
                let context = ask_context("What context should the resource hold?")?;
                contents("text/plain", text(&format!("Context: {context}")))
            }
            other => match other
                .strip_prefix("test://template/")
                .and_then(|rest| rest.strip_suffix("/data"))
            {
                Some(id) => contents(
                    "application/json",
                    ResourceBody::Text(
                        json!({"id": id, "templateTest": true, "data": format!("Data for ID: {id}")})
                            .to_string(),
                    ),
                ),
                None => return Err(not_found(format!("No resource {other}."))),
            },
        };
        Ok(vec![read])
    }
}

/// How long the task fixtures work before they ask or answer: longer than the
/// host waits before it makes a call a task, so the call becomes one.
const WORK: Duration = Duration::from_millis(1200);

/// The tasks extension's fixtures (SEP-2663).
fn task_fixture(name: &str, arguments: &str) -> ToolResult {
    let arguments: Value = toolhost_guest::serde_json::from_str(arguments).unwrap_or_default();
    let text = |text: String| ToolResult::empty().part(Part::text(text)).build();
    match name {
        "greet" => text(format!(
            "Hello, {}!",
            arguments["name"].as_str().unwrap_or("")
        )),
        "slow_compute" => {
            let seconds = arguments["seconds"].as_f64().unwrap_or(0.0);
            std::thread::sleep(Duration::from_secs_f64(seconds));
            let label = arguments["label"].as_str().unwrap_or("unlabelled");
            text(format!("Computed {label} in {seconds} s."))
        }
        "failing_job" => {
            std::thread::sleep(WORK);
            ToolResult::failure(ErrorCode::ToolError, "The job failed, as it always does.").build()
        }
        "protocol_error_job" => {
            std::thread::sleep(WORK);
            panic!("protocol_error_job crashes on purpose");
        }
        "confirm_delete" => {
            std::thread::sleep(WORK);
            let file = arguments["filename"].as_str().unwrap_or("the file");
            let schema = json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}});
            let deleted = match interaction::elicit(&format!("Delete {file}?"), &schema) {
                Ok(Answer::Accept(form)) => form["confirm"].as_bool().unwrap_or(false),
                _ => false,
            };
            text(match deleted {
                true => format!("Deleted {file}."),
                false => format!("Kept {file}."),
            })
        }
        "multi_input" => {
            std::thread::sleep(WORK);
            let schema = json!({"type": "object", "properties": {
                "name": {"type": "string"}, "confirm": {"type": "boolean"}
            }});
            let question = |message: &str| Question::Elicit {
                message: message.into(),
                schema: schema.clone(),
            };
            let replies = interaction::ask(&[
                ("first", question("First name?")),
                ("second", question("Second name?")),
            ]);
            let names: Vec<String> = replies
                .into_iter()
                .map(|reply| match reply {
                    Ok(Reply::Form(Answer::Accept(form))) => {
                        form["name"].as_str().unwrap_or("").to_owned()
                    }
                    _ => "nobody".to_owned(),
                })
                .collect();
            text(format!("Got {}.", names.join(" and ")))
        }
        // test_tool_with_task: asks before it works, so the question is
        // answered in the call and the work runs as a task.
        _ => ask_text("What is your name?", "name")
            .map(|name| {
                std::thread::sleep(WORK);
                text(format!("Worked on it for {name}."))
            })
            .into_tool_result(),
    }
}

/// The fixtures that run as tasks for a caller that speaks tasks.
impl Tasks for Conformance {
    fn task_support() -> Vec<(String, TaskSupport)> {
        [
            ("slow_compute", TaskSupport::Optional),
            ("failing_job", TaskSupport::Required),
            ("protocol_error_job", TaskSupport::Optional),
            ("confirm_delete", TaskSupport::Optional),
            ("multi_input", TaskSupport::Optional),
            ("test_tool_with_task", TaskSupport::Required),
        ]
        .into_iter()
        .map(|(name, support)| (name.to_owned(), support))
        .collect()
    }
}

/// Completions of the prompt arguments, from a fixed list of words.
impl Completion for Conformance {
    fn complete(
        _reference: Reference,
        argument: Argument,
        _resolved: Vec<(String, String)>,
        _context: CallContext,
    ) -> Result<Suggestions, ToolError> {
        const WORDS: [&str; 6] = ["paris", "park", "party", "test", "testing", "tested"];
        let values: Vec<String> = WORDS
            .iter()
            .filter(|word| word.starts_with(&argument.value))
            .map(|word| (*word).to_owned())
            .collect();
        Ok(Suggestions {
            total: Some(values.len() as u32),
            values,
            has_more: false,
        })
    }
}

toolhost_guest::export_full!(Conformance);

#[cfg(test)]
mod tests {
    use super::*;

    /// The CRC-32 of PNG chunks (ISO 3309, reflected, polynomial 0xedb88320).
    fn crc32(bytes: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &byte in bytes {
            crc ^= u32::from(byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ 0xedb8_8320
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }

    #[test]
    fn png_chunks_are_well_formed() {
        assert_eq!(&PNG[..8], b"\x89PNG\r\n\x1a\n");
        let mut at = 8;
        let mut kinds = Vec::new();
        while at < PNG.len() {
            let length = u32::from_be_bytes(PNG[at..at + 4].try_into().unwrap()) as usize;
            let body = &PNG[at + 4..at + 8 + length];
            let crc =
                u32::from_be_bytes(PNG[at + 8 + length..at + 12 + length].try_into().unwrap());
            assert_eq!(crc32(body), crc);
            kinds.push(String::from_utf8(body[..4].to_vec()).unwrap());
            at += 12 + length;
        }
        assert_eq!(at, PNG.len());
        assert_eq!(kinds, ["IHDR", "IDAT", "IEND"]);
    }

    #[test]
    fn wav_sizes_add_up() {
        let wav = wav();
        assert_eq!(&wav[..4], b"RIFF");
        let riff = u32::from_le_bytes(wav[4..8].try_into().unwrap()) as usize;
        assert_eq!(riff + 8, wav.len());
        let data = u32::from_le_bytes(wav[40..44].try_into().unwrap()) as usize;
        assert_eq!(44 + data, wav.len());
    }
}
