//! The wire forms of a tool's questions to its caller and of the caller's
//! answers (the `interaction` import): MCP's `elicitation/create`,
//! `sampling/createMessage` and `roots/list` requests, the 2026-07-28 `input_required` result
//! that carries one to a stateless caller, and the A2A task that waits for
//! input.
//!
//! A question is written the same way on every path (a request on a session's
//! stream, an entry of `inputRequests`), so its text is also what identifies
//! it when a stateless caller's answers are replayed ([`request_json`]).
//! Answers come back as JSON from either path and are read by one decoder
//! ([`answer`]), which checks an accepted form against the requested schema.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use rmcp::model::{InputRequest as WireRequest, InputRequiredResult, MetaObject, ServerRequest};
use serde_json::{Map, Value, json};

use super::ServerInfo;
use super::mcp::SERVER_INFO_KEY;
use crate::result::input::{
    ElicitAnswer, InputAnswer, InputRequest, InputRequired, Root, SampleAnswer, SampleRequest,
};
use crate::result::{ContentPart, Role};

/// The most bytes of JSON one answer may have.
pub const MAX_ANSWER_BYTES: usize = 64 * 1024;

/// The JSON-RPC method of `request`.
pub fn method(request: &InputRequest) -> &'static str {
    match request {
        InputRequest::Elicit(_) => "elicitation/create",
        InputRequest::Sample(_) => "sampling/createMessage",
        InputRequest::ListRoots => "roots/list",
    }
}

/// `request` as a JSON-RPC request without an id: `{"method", "params"}`.
pub fn request_json(request: &InputRequest) -> Value {
    let params = match request {
        InputRequest::Elicit(elicit) => json!({
            "mode": "form",
            "message": elicit.message,
            "requestedSchema": elicit.schema,
        }),
        InputRequest::Sample(sample) => sample_params(sample),
        InputRequest::ListRoots => json!({}),
    };
    json!({ "method": method(request), "params": params })
}

fn sample_params(sample: &SampleRequest) -> Value {
    let messages: Vec<Value> = sample
        .messages
        .iter()
        .map(|message| json!({ "role": role_name(message.role), "content": block(&message.content) }))
        .collect();
    let mut params = Map::new();
    params.insert("messages".into(), Value::Array(messages));
    params.insert("maxTokens".into(), json!(sample.max_tokens));
    if let Some(prompt) = &sample.system_prompt {
        params.insert("systemPrompt".into(), json!(prompt));
    }
    if let Some(temperature) = sample.temperature {
        params.insert("temperature".into(), json!(temperature));
    }
    if !sample.stop_sequences.is_empty() {
        params.insert("stopSequences".into(), json!(sample.stop_sequences));
    }
    if let Some(preferences) = &sample.preferences {
        let mut wire = Map::new();
        if !preferences.hints.is_empty() {
            let hints: Vec<Value> = preferences
                .hints
                .iter()
                .map(|name| json!({ "name": name }))
                .collect();
            wire.insert("hints".into(), Value::Array(hints));
        }
        for (key, value) in [
            ("costPriority", preferences.cost_priority),
            ("speedPriority", preferences.speed_priority),
            ("intelligencePriority", preferences.intelligence_priority),
        ] {
            if let Some(value) = value {
                wire.insert(key.into(), json!(value));
            }
        }
        params.insert("modelPreferences".into(), Value::Object(wire));
    }
    Value::Object(params)
}

/// A sampling content block: text, or a binary part as an image or audio.
fn block(part: &ContentPart) -> Value {
    match part {
        ContentPart::Binary { data, mime } => {
            let kind = if mime.starts_with("audio/") {
                "audio"
            } else {
                "image"
            };
            json!({ "type": kind, "data": STANDARD.encode(data), "mimeType": mime })
        }
        ContentPart::Text { text, .. } => json!({ "type": "text", "text": text }),
        // The runtime lets only text and binary parts into a sampling request.
        ContentPart::ResourceLink(_) | ContentPart::EmbeddedResource { .. } => {
            json!({ "type": "text", "text": "" })
        }
    }
}

fn role_name(role: Role) -> &'static str {
    match role {
        Role::User => "user",
        Role::Assistant => "assistant",
    }
}

/// `request` as rmcp's server-to-client request, for a handshake-era session.
///
/// # Errors
///
/// When rmcp refuses the request's shape (a requested schema outside MCP's
/// form subset): the message says what it found.
pub fn server_request(request: &InputRequest) -> Result<ServerRequest, String> {
    serde_json::from_value(request_json(request))
        .map_err(|e| format!("{} is not a valid request: {e}", method(request)))
}

/// The 2026-07-28 result of a call that stopped to ask: each question under
/// its key, the signed state, and this server in `_meta`.
///
/// # Errors
///
/// When rmcp refuses a question's shape, as [`server_request`].
pub fn input_required(
    required: &InputRequired,
    server: Option<ServerInfo<'_>>,
) -> Result<InputRequiredResult, String> {
    let mut requests = std::collections::BTreeMap::new();
    for question in &required.questions {
        let wire: WireRequest = serde_json::from_value(request_json(&question.request))
            .map_err(|e| format!("{} is not a valid request: {e}", method(&question.request)))?;
        requests.insert(question.key.clone(), wire);
    }
    let mut result = InputRequiredResult::new(Some(requests), Some(required.state.clone()));
    if let Some(server) = server {
        let mut meta = Map::new();
        meta.insert(SERVER_INFO_KEY.into(), server.to_value());
        result.meta = Some(MetaObject(meta));
    }
    Ok(result)
}

/// The caller's `answer` (an `ElicitResult` or a `CreateMessageResult`) to
/// `request`.
///
/// # Errors
///
/// A sentence saying what does not fit: the wrong shape, an accepted form
/// that does not match the requested schema, an answer over
/// [`MAX_ANSWER_BYTES`].
pub fn answer(request: &InputRequest, answer: &Value) -> Result<InputAnswer, String> {
    let size = super::json_size(answer);
    if size > MAX_ANSWER_BYTES {
        return Err(format!(
            "the answer has {size} bytes of JSON, more than the {MAX_ANSWER_BYTES} allowed"
        ));
    }
    let Some(object) = answer.as_object() else {
        return Err("the answer is not a JSON object".into());
    };
    match request {
        InputRequest::Elicit(elicit) => {
            let action = object.get("action").and_then(Value::as_str);
            let answer = match action {
                Some("accept") => {
                    let content = match object.get("content") {
                        Some(Value::Object(content)) => content.clone(),
                        None => Map::new(),
                        Some(_) => {
                            return Err("the accepted form's content is not an object".into());
                        }
                    };
                    let schema = Value::Object(elicit.schema.clone());
                    let validator = jsonschema::validator_for(&schema)
                        .map_err(|e| format!("the requested schema does not compile: {e}"))?;
                    let content = Value::Object(content);
                    if let Some(error) = validator.iter_errors(&content).next() {
                        return Err(format!(
                            "the accepted form does not match the requested schema at `{}`: {error}",
                            error.instance_path()
                        ));
                    }
                    let Value::Object(content) = content else {
                        unreachable!("built as an object above")
                    };
                    ElicitAnswer::Accept(content)
                }
                Some("decline") => ElicitAnswer::Decline,
                Some("cancel") => ElicitAnswer::Cancel,
                _ => {
                    return Err(
                        "the answer's `action` is not \"accept\", \"decline\" or \"cancel\"".into(),
                    );
                }
            };
            Ok(InputAnswer::Elicit(answer))
        }
        InputRequest::Sample(_) => sample_answer(object).map(InputAnswer::Sample),
        InputRequest::ListRoots => roots_answer(object).map(InputAnswer::Roots),
    }
}

/// A `ListRootsResult`: every root has a string `uri`, and a `name` if any
/// is a string.
fn roots_answer(object: &Map<String, Value>) -> Result<Vec<Root>, String> {
    let Some(Value::Array(roots)) = object.get("roots") else {
        return Err("the answer has no `roots` array".into());
    };
    roots
        .iter()
        .enumerate()
        .map(|(at, root)| {
            let uri = root
                .get("uri")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("root {at} of the answer has no string `uri`"))?;
            let name = match root.get("name") {
                None | Some(Value::Null) => None,
                Some(Value::String(name)) => Some(name.clone()),
                Some(_) => return Err(format!("the `name` of root {at} is not a string")),
            };
            Ok(Root {
                uri: uri.to_owned(),
                name,
            })
        })
        .collect()
}

fn sample_answer(object: &Map<String, Value>) -> Result<SampleAnswer, String> {
    let role = match object.get("role").and_then(Value::as_str) {
        Some("assistant") => Role::Assistant,
        Some("user") => Role::User,
        _ => return Err("the answer's `role` is not \"user\" or \"assistant\"".into()),
    };
    let Some(model) = object.get("model").and_then(Value::as_str) else {
        return Err("the answer has no `model`".into());
    };
    let block = match object.get("content") {
        Some(Value::Array(blocks)) if blocks.len() == 1 => &blocks[0],
        Some(Value::Array(_)) => {
            return Err("the answer has several content blocks; the tool takes one".into());
        }
        Some(block) => block,
        None => return Err("the answer has no `content`".into()),
    };
    let content = match block.get("type").and_then(Value::as_str) {
        Some("text") => ContentPart::Text {
            text: block
                .get("text")
                .and_then(Value::as_str)
                .ok_or("the answer's text block has no `text`")?
                .to_owned(),
            mime: None,
        },
        Some("image" | "audio") => {
            let data = block
                .get("data")
                .and_then(Value::as_str)
                .ok_or("the answer's media block has no `data`")?;
            let mime = block
                .get("mimeType")
                .and_then(Value::as_str)
                .ok_or("the answer's media block has no `mimeType`")?;
            ContentPart::Binary {
                data: STANDARD
                    .decode(data)
                    .map_err(|e| format!("the answer's `data` is not base64: {e}"))?,
                mime: mime.to_owned(),
            }
        }
        _ => return Err("the answer's content is not text, an image or audio".into()),
    };
    Ok(SampleAnswer {
        role,
        content,
        model: model.to_owned(),
        stop_reason: object
            .get("stopReason")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

/// An A2A 1.0 task waiting for input: state `TASK_STATE_INPUT_REQUIRED`, the
/// questions in its status message (the text of each as a text part, the
/// whole request as a data part), as compact JSON text.
pub fn a2a_task(required: &InputRequired, task_id: &str) -> String {
    let mut parts = Vec::with_capacity(2 * required.questions.len());
    for question in &required.questions {
        let text = match &question.request {
            InputRequest::Elicit(elicit) => elicit.message.clone(),
            InputRequest::Sample(_) => "The tool asks for a message from a model.".to_owned(),
            InputRequest::ListRoots => "The tool asks which roots the client shares.".to_owned(),
        };
        parts.push(json!({ "text": text }));
        parts.push(json!({
            "data": { "key": question.key, "request": request_json(&question.request) },
            "mediaType": "application/json",
        }));
    }
    let keys: Vec<&str> = required.questions.iter().map(|q| q.key.as_str()).collect();
    let task = json!({
        "id": task_id,
        "contextId": task_id,
        "status": {
            "state": "TASK_STATE_INPUT_REQUIRED",
            "message": {
                "messageId": format!("{task_id}-input"),
                "role": "ROLE_AGENT",
                "parts": parts,
            },
        },
        "metadata": { "inputKeys": keys, "requestState": required.state },
    });
    super::mcp::json_text(&task)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::input::{ElicitRequest, Question};

    fn form() -> InputRequest {
        InputRequest::Elicit(ElicitRequest {
            message: "Your name?".into(),
            schema: json!({
                "type": "object",
                "properties": { "name": { "type": "string" } },
                "required": ["name"],
            })
            .as_object()
            .cloned()
            .unwrap(),
        })
    }

    #[test]
    fn an_accepted_form_is_checked_against_the_requested_schema() {
        let ok = answer(
            &form(),
            &json!({"action": "accept", "content": {"name": "Ada"}}),
        );
        assert_eq!(
            ok,
            Ok(InputAnswer::Elicit(ElicitAnswer::Accept(
                json!({"name": "Ada"}).as_object().cloned().unwrap()
            )))
        );
        let wrong = answer(
            &form(),
            &json!({"action": "accept", "content": {"name": 7}}),
        )
        .unwrap_err();
        assert!(wrong.contains("/name"), "{wrong}");
        let missing = answer(&form(), &json!({"action": "accept", "content": {}})).unwrap_err();
        assert!(missing.contains("requested schema"), "{missing}");
        assert_eq!(
            answer(&form(), &json!({"action": "decline"})),
            Ok(InputAnswer::Elicit(ElicitAnswer::Decline))
        );
        let bad = answer(&form(), &json!({"action": "maybe"})).unwrap_err();
        assert!(bad.contains("`action`"), "{bad}");
    }

    #[test]
    fn a_question_is_a_valid_rmcp_request() {
        let request = server_request(&form()).unwrap();
        assert!(matches!(request, ServerRequest::ElicitRequest(_)));
        let wire = request_json(&form());
        assert_eq!(wire["method"], "elicitation/create");
        assert_eq!(
            wire["params"]["requestedSchema"]["required"],
            json!(["name"])
        );
    }

    #[test]
    fn a_roots_question_and_its_answer() {
        let request = server_request(&InputRequest::ListRoots).unwrap();
        assert!(matches!(request, ServerRequest::ListRootsRequest(_)));
        let required = InputRequired {
            questions: vec![
                Question {
                    key: "roots-1".into(),
                    request: InputRequest::ListRoots,
                },
                Question {
                    key: "user_name".into(),
                    request: form(),
                },
            ],
            state: "sealed".into(),
        };
        let wire = serde_json::to_value(input_required(&required, None).unwrap()).unwrap();
        assert_eq!(wire["inputRequests"]["roots-1"]["method"], "roots/list");
        assert_eq!(
            wire["inputRequests"]["user_name"]["method"],
            "elicitation/create"
        );

        let roots = answer(
            &InputRequest::ListRoots,
            &json!({"roots": [{"uri": "file:///work", "name": "Work"}, {"uri": "file:///tmp"}]}),
        )
        .unwrap();
        assert_eq!(
            roots,
            InputAnswer::Roots(vec![
                Root {
                    uri: "file:///work".into(),
                    name: Some("Work".into())
                },
                Root {
                    uri: "file:///tmp".into(),
                    name: None
                },
            ])
        );
        for (bad, says) in [
            (json!({}), "`roots`"),
            (json!({"roots": [{"name": "x"}]}), "root 0"),
            (
                json!({"roots": [{"uri": "file:///a", "name": 3}]}),
                "`name`",
            ),
        ] {
            let why = answer(&InputRequest::ListRoots, &bad).unwrap_err();
            assert!(why.contains(says), "{bad}: {why}");
        }
    }

    #[test]
    fn an_a2a_task_waits_for_input_with_the_question() {
        let required = InputRequired {
            questions: vec![Question {
                key: "elicitation-1".into(),
                request: form(),
            }],
            state: "sealed".into(),
        };
        let task: Value = serde_json::from_str(&a2a_task(&required, "7")).unwrap();
        assert_eq!(task["status"]["state"], "TASK_STATE_INPUT_REQUIRED");
        assert_eq!(task["status"]["message"]["parts"][0]["text"], "Your name?");
        assert_eq!(
            task["status"]["message"]["parts"][1]["data"]["request"]["method"],
            "elicitation/create"
        );
        assert_eq!(task["metadata"]["inputKeys"], json!(["elicitation-1"]));
        assert_eq!(task["metadata"]["requestState"], "sealed");
    }

    /// The A2A task of a call asking two questions is the one in
    /// `tests/a2a/input-required/`, which `make a2a-check` has the official
    /// a2a-sdk parse (`TOOLHOST_BLESS=1` writes it anew).
    #[test]
    fn an_a2a_task_waiting_for_input_is_the_golden_one() {
        let required = InputRequired {
            questions: vec![
                Question {
                    key: "user_name".into(),
                    request: form(),
                },
                Question {
                    key: "client_roots".into(),
                    request: InputRequest::ListRoots,
                },
            ],
            state: "sealed".into(),
        };
        let text = a2a_task(&required, "task-7") + "\n";
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../tests/a2a/input-required/two-questions.json");
        if std::env::var_os("TOOLHOST_BLESS").is_some() {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &text).unwrap();
        }
        let golden = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(
            golden,
            text,
            "{} differs; if the change is intended, run `TOOLHOST_BLESS=1 make test`",
            path.display()
        );
    }

    #[test]
    fn an_oversized_answer_is_refused() {
        let big = json!({"action": "accept", "content": {"name": "x".repeat(MAX_ANSWER_BYTES)}});
        assert!(answer(&form(), &big).unwrap_err().contains("bytes"));
    }
}
