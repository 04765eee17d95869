//! A tool that asks its caller mid-call (the `interaction` import), over stdio
//! in every revision: the same guest (`ask`) elicits, samples and lists the
//! client's roots; the host carries each question as the caller's revision
//! allows, and every message is checked against that revision's official
//! schema.
//!
//! - Handshake era: the question is a server-to-client request on the call's
//!   stream; the client's answer goes back to the waiting guest.
//! - 2026-07-28: the call answers `input_required`; the retry with the answer
//!   and the signed `requestState` runs the tool again and replays it. A
//!   forged, foreign or answer-less state is refused before anything runs.
//! - A client without the capability, or a revision without elicitation, is
//!   not asked: the guest gets a refusal and fails with a coded error.
//! - A guest over `max_input_requests` ends as `resource_limit`.

use crate::common;

use common::McpSchemas;
use common::host::{guest, root};
use common::stdio::Client;
use serde_json::{Value, json};
use toolhost::render::Revision;

fn start(max_input_requests: u32) -> Client {
    Client::start_with(&format!(
        "[host]\ndata_dir = \"{}\"\noutput_mode = \"spec\"\n[[plugin]]\npath = \"{}\"\n[plugin.policy]\nmax_input_requests = {max_input_requests}\n",
        root().join("target/test-data").display(),
        guest("ask").display(),
    ))
}

fn checked<'a>(
    schemas: &McpSchemas,
    revision: Revision,
    definition: &str,
    value: &'a Value,
) -> &'a Value {
    if let Err(errors) = schemas.check(revision, definition, value) {
        panic!("{revision} {definition}: {errors}\n{value:#}");
    }
    value
}

fn call_result<'a>(schemas: &McpSchemas, revision: Revision, response: &'a Value) -> &'a Value {
    let result = response
        .get("result")
        .unwrap_or_else(|| panic!("{revision}: expected a result, got {response}"));
    if let Err(errors) = schemas.check_call_tool_result(revision, result) {
        panic!("{revision} CallToolResult: {errors}\n{result:#}");
    }
    result
}

fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

#[test]
fn a_handshake_client_is_asked_on_the_calls_stream_and_the_guest_gets_its_answer() {
    let schemas = McpSchemas::load();
    for revision in [Revision::V2025_06_18, Revision::V2025_11_25] {
        let mut client = start(8);
        client.initialize_with(revision, json!({"elicitation": {}, "sampling": {}}));
        for (action, expected) in [
            (
                json!({"action": "accept", "content": {"ok": true}}),
                "Done: water the plants.",
            ),
            (
                json!({"action": "accept", "content": {"ok": false}}),
                "Not done: water the plants (you said no).",
            ),
            (
                json!({"action": "decline"}),
                "Not done: water the plants (declined).",
            ),
            (
                json!({"action": "cancel"}),
                "Not done: water the plants (cancelled).",
            ),
        ] {
            let (asked, response) = client.request_answering(
                "tools/call",
                json!({"name": "confirm", "arguments": {"action": "water the plants"}}),
                |request| {
                    assert_eq!(request["method"], "elicitation/create", "{request}");
                    checked(&schemas, revision, "ElicitRequest", request);
                    assert_eq!(request["params"]["message"], "Shall I water the plants?");
                    assert_eq!(
                        request["params"]["requestedSchema"]["required"],
                        json!(["ok"])
                    );
                    Ok(action.clone())
                },
            );
            assert_eq!(
                asked.iter().filter(|m| m.get("id").is_some()).count(),
                1,
                "{revision}: one question"
            );
            let result = call_result(&schemas, revision, &response);
            assert_eq!(result.get("isError"), None, "{revision}: {result}");
            assert_eq!(text_of(result), expected, "{revision}");
        }

        // Sampling: the model's text reaches the guest.
        let (_, response) = client.request_answering(
            "tools/call",
            json!({"name": "haiku", "arguments": {"topic": "rain"}}),
            |request| {
                assert_eq!(request["method"], "sampling/createMessage", "{request}");
                checked(&schemas, revision, "CreateMessageRequest", request);
                assert_eq!(request["params"]["maxTokens"], 100);
                assert_eq!(request["params"]["messages"][0]["content"]["text"], "Write a haiku about rain.");
                Ok(json!({"role": "assistant", "content": {"type": "text", "text": "soft rain on the roof"}, "model": "test-model"}))
            },
        );
        assert_eq!(
            text_of(call_result(&schemas, revision, &response)),
            "soft rain on the roof"
        );

        // A form that does not match the requested schema is no answer.
        let (_, response) = client.request_answering(
            "tools/call",
            json!({"name": "confirm", "arguments": {"action": "x"}}),
            |_| Ok(json!({"action": "accept", "content": {"ok": "yes"}})),
        );
        let result = call_result(&schemas, revision, &response);
        assert_eq!(result["isError"], true, "{revision}: {result}");
        assert!(result.to_string().contains("requested schema"), "{result}");

        // A client that answers with an error: the guest is told, the call is served.
        let (_, response) = client.request_answering(
            "tools/call",
            json!({"name": "confirm", "arguments": {"action": "x"}}),
            |_| Err(json!({"code": -32603, "message": "the user interface crashed"})),
        );
        let result = call_result(&schemas, revision, &response);
        assert_eq!(result["isError"], true);
        assert!(
            result.to_string().contains("the user interface crashed"),
            "{result}"
        );
    }
}

#[test]
fn a_client_is_asked_for_its_roots_in_every_handshake_revision() {
    let schemas = McpSchemas::load();
    for revision in Revision::ALL.into_iter().filter(|r| !r.is_stateless()) {
        let mut client = start(8);
        client.initialize_with(revision, json!({"roots": {}}));
        let (_, response) = client.request_answering(
            "tools/call",
            json!({"name": "workspace", "arguments": {}}),
            |request| {
                assert_eq!(request["method"], "roots/list", "{request}");
                checked(&schemas, revision, "ListRootsRequest", request);
                Ok(json!({"roots": [
                    {"uri": "file:///home/ann/notes", "name": "Notes"},
                    {"uri": "file:///srv/site"},
                ]}))
            },
        );
        assert_eq!(
            text_of(call_result(&schemas, revision, &response)),
            "Notes: file:///home/ann/notes\nfile:///srv/site",
            "{revision}"
        );
        // An answer without `roots` is no answer: the guest is told.
        let (_, response) = client.request_answering(
            "tools/call",
            json!({"name": "workspace", "arguments": {}}),
            |_| Ok(json!({"folders": []})),
        );
        let result = call_result(&schemas, revision, &response);
        assert_eq!(result["isError"], true, "{revision}: {result}");
        assert!(result.to_string().contains("roots"), "{result}");
    }
    // A client that did not declare `roots` is not asked.
    let mut client = start(8);
    client.initialize_with(Revision::V2025_11_25, json!({"elicitation": {}}));
    let (seen, response) =
        client.request("tools/call", json!({"name": "workspace", "arguments": {}}));
    assert!(
        seen.iter().all(|m| m.get("id").is_none()),
        "asked anyway: {seen:?}"
    );
    let result = call_result(&schemas, Revision::V2025_11_25, &response);
    assert!(
        result
            .to_string()
            .contains("did not declare the `roots` capability"),
        "{result}"
    );
}

#[test]
fn a_caller_that_cannot_be_asked_gets_a_coded_error_and_no_question() {
    let schemas = McpSchemas::load();
    // No capability declared, in a revision that has elicitation; and
    // revisions before elicitation existed, even with the capability.
    let cases = [
        (
            Revision::V2025_11_25,
            json!({}),
            "did not declare the `elicitation` capability",
        ),
        (
            Revision::V2025_03_26,
            json!({"elicitation": {}}),
            "has no elicitation",
        ),
        (
            Revision::V2024_11_05,
            json!({"elicitation": {}}),
            "has no elicitation",
        ),
    ];
    for (revision, capabilities, says) in cases {
        let mut client = start(8);
        client.initialize_with(revision, capabilities);
        let (seen, response) = client.request(
            "tools/call",
            json!({"name": "confirm", "arguments": {"action": "x"}}),
        );
        assert!(
            seen.iter().all(|m| m.get("id").is_none()),
            "{revision}: asked anyway: {seen:?}"
        );
        let result = call_result(&schemas, revision, &response);
        assert_eq!(result["isError"], true, "{revision}: {result}");
        let text = result.to_string();
        assert!(text.contains(says), "{revision}: {text}");
        assert!(
            text.contains("unsupported"),
            "{revision}: the refusal's code: {text}"
        );
        // The next call is served.
        let (_, listed) = client.request("tools/list", json!({}));
        assert!(listed["result"]["tools"].is_array());
    }
}

#[test]
fn a_guest_over_its_question_budget_ends_as_resource_limit() {
    let schemas = McpSchemas::load();
    let revision = Revision::V2025_11_25;
    let mut client = start(2);
    client.initialize_with(revision, json!({"elicitation": {}}));
    let mut asked = 0;
    let (_, response) = client.request_answering(
        "tools/call",
        json!({"name": "pester", "arguments": {"times": 5}}),
        |_| {
            asked += 1;
            Ok(json!({"action": "accept", "content": {}}))
        },
    );
    assert_eq!(asked, 2, "the third question never reaches the client");
    let result = call_result(&schemas, revision, &response);
    assert_eq!(result["isError"], true);
    let text = result.to_string();
    assert!(
        text.contains("resource_limit") && text.contains("max_input_requests"),
        "{text}"
    );
    // Within the budget, the same tool succeeds, one by one or in a batch.
    for arguments in [json!({"times": 2}), json!({"times": 2, "at_once": true})] {
        let (_, response) = client.request_answering(
            "tools/call",
            json!({"name": "pester", "arguments": arguments}),
            |_| Ok(json!({"action": "accept", "content": {}})),
        );
        assert_eq!(
            text_of(call_result(&schemas, revision, &response)),
            "Asked 2 times.",
            "{arguments}"
        );
    }
    // A batch past the budget: the first two are asked, the call still ends
    // as resource_limit. A batch longer than any budget is not looked at.
    for (times, reaching) in [(5, 2), (10_000, 0)] {
        let mut asked = 0;
        let (_, response) = client.request_answering(
            "tools/call",
            json!({"name": "pester", "arguments": {"times": times, "at_once": true}}),
            |_| {
                asked += 1;
                Ok(json!({"action": "accept", "content": {}}))
            },
        );
        assert_eq!(asked, reaching, "a batch of {times}");
        let text = call_result(&schemas, revision, &response).to_string();
        assert!(
            text.contains("resource_limit") && text.contains("max_input_requests"),
            "a batch of {times}: {text}"
        );
    }
    // One key twice, or a key that is no key: refused to the guest as
    // invalid_request, and nothing more is asked.
    for key in ["same", "not a key"] {
        let mut asked = 0;
        let (_, response) = client.request_answering(
            "tools/call",
            json!({"name": "pester", "arguments": {"times": 2, "at_once": true, "key": key}}),
            |_| {
                asked += 1;
                Ok(json!({"action": "accept", "content": {}}))
            },
        );
        let text = call_result(&schemas, revision, &response).to_string();
        assert!(text.contains("invalid_request"), "{key}: {text}");
        assert_eq!(asked, usize::from(key == "same"), "{key}");
    }
}

fn modern(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

/// The `input_required` result in `response`: its one question's key and
/// request, and the state.
fn input_required(schemas: &McpSchemas, response: &Value) -> (String, Value, String) {
    let result = response
        .get("result")
        .unwrap_or_else(|| panic!("expected a result, got {response}"));
    checked(
        schemas,
        Revision::V2026_07_28,
        "InputRequiredResult",
        result,
    );
    assert_eq!(result["resultType"], "input_required", "{result}");
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "toolhost"
    );
    let requests = result["inputRequests"].as_object().expect("inputRequests");
    assert_eq!(requests.len(), 1, "{result}");
    let (key, request) = requests.iter().next().unwrap();
    checked(schemas, Revision::V2026_07_28, "InputRequest", request);
    let state = result["requestState"]
        .as_str()
        .expect("requestState")
        .to_owned();
    (key.clone(), request.clone(), state)
}

#[test]
fn a_stateless_caller_answers_input_required_and_the_retry_replays_the_tool() {
    let schemas = McpSchemas::load();
    let revision = Revision::V2026_07_28;
    let mut client = start(8);
    let meta = modern(json!({"elicitation": {}}));
    let call = |extra: Value| {
        let mut params = json!({"name": "survey", "arguments": {}, "_meta": meta.clone()});
        params
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        params
    };

    // Round 1: the first question.
    let (seen, first) = client.request("tools/call", call(json!({})));
    assert!(
        seen.iter().all(|m| m.get("id").is_none()),
        "no server-to-client request in 2026-07-28"
    );
    let (key1, request1, state1) = input_required(&schemas, &first);
    assert_eq!(request1["method"], "elicitation/create");
    assert_eq!(request1["params"]["message"], "What is your name?");

    // Round 2: answered; the tool runs again and asks the second question.
    let answer1 = json!({ key1.clone(): {"action": "accept", "content": {"name": "Ada"}} });
    let (_, second) = client.request(
        "tools/call",
        call(json!({"inputResponses": answer1, "requestState": state1})),
    );
    let (key2, request2, state2) = input_required(&schemas, &second);
    assert_ne!(key1, key2);
    assert_eq!(request2["params"]["message"], "Ada, your favourite colour?");

    // Round 3: both answers; the tool completes.
    let answer2 = json!({ key2.clone(): {"action": "accept", "content": {"colour": "green"}} });
    let (_, done) = client.request(
        "tools/call",
        call(json!({"inputResponses": answer2.clone(), "requestState": state2.clone()})),
    );
    let result = call_result(&schemas, revision, &done);
    assert_eq!(result["resultType"], "complete");
    assert_eq!(
        result["structuredContent"],
        json!({"name": "Ada", "colour": "green"})
    );

    // A retry without the answer asks the same question again.
    let (_, again) = client.request("tools/call", call(json!({"requestState": state2.clone()})));
    let (_, request, _) = input_required(&schemas, &again);
    assert_eq!(request["params"]["message"], "Ada, your favourite colour?");

    // Answers without a state are matched by key to the questions the tool
    // asks: the second answer alone leaves the first question open, both
    // (and a key nobody asked) complete the call, an answer that does not
    // fit its form is asked for again.
    let (_, open) = client.request(
        "tools/call",
        call(json!({"inputResponses": answer2.clone()})),
    );
    let (key, request, _) = input_required(&schemas, &open);
    assert_eq!(
        (key.as_str(), &request["params"]["message"]),
        (key1.as_str(), &json!("What is your name?"))
    );
    let mut both = answer2.clone();
    both[&key1] = json!({"action": "accept", "content": {"name": "Ada"}});
    both["unknown_extra_key"] = json!({"action": "accept", "content": {}});
    let (_, done) = client.request("tools/call", call(json!({"inputResponses": both.clone()})));
    let result = call_result(&schemas, revision, &done);
    assert_eq!(
        result["structuredContent"],
        json!({"name": "Ada", "colour": "green"})
    );
    both[&key2] = json!({"action": "accept", "content": {"colour": 7}});
    let (_, unfit) = client.request("tools/call", call(json!({"inputResponses": both})));
    let (key, _, _) = input_required(&schemas, &unfit);
    assert_eq!(key, key2, "an unfit answer is asked for again: {unfit}");

    // Refused before the tool runs, with -32602: a forged state, a state for
    // other arguments or another tool.
    let mut forged = state2.clone();
    let flipped = if forged.ends_with('A') { 'B' } else { 'A' };
    forged.pop();
    forged.push(flipped);
    let refusals = [
        call(json!({"inputResponses": answer2.clone(), "requestState": forged})),
        {
            let mut other =
                call(json!({"inputResponses": answer2.clone(), "requestState": state2.clone()}));
            other["arguments"] = json!({"unexpected": true});
            other
        },
        json!({"name": "confirm", "arguments": {"action": "x"}, "_meta": meta.clone(), "inputResponses": answer2.clone(), "requestState": state2.clone()}),
    ];
    for params in refusals {
        let (_, refused) = client.request("tools/call", params.clone());
        assert_eq!(refused["error"]["code"], -32602, "{params}: {refused}");
    }

    // A caller that declares no elicitation is not asked: a coded error.
    let (_, unasked) = client.request(
        "tools/call",
        json!({"name": "survey", "arguments": {}, "_meta": modern(json!({}))}),
    );
    let result = call_result(&schemas, revision, &unasked);
    assert_eq!(result["isError"], true, "{result}");
    assert!(result.to_string().contains("unsupported"), "{result}");
}

#[test]
fn a_stateless_caller_answers_a_sampling_request_the_same_way() {
    let schemas = McpSchemas::load();
    let mut client = start(8);
    let meta = modern(json!({"sampling": {}}));
    let (_, first) = client.request(
        "tools/call",
        json!({"name": "haiku", "arguments": {"topic": "snow"}, "_meta": meta.clone()}),
    );
    let (key, request, state) = input_required(&schemas, &first);
    assert_eq!(request["method"], "sampling/createMessage");
    let answer = json!({ key: {"role": "assistant", "content": {"type": "text", "text": "white hush"}, "model": "m"} });
    let (_, done) = client.request(
        "tools/call",
        json!({"name": "haiku", "arguments": {"topic": "snow"}, "_meta": meta, "inputResponses": answer, "requestState": state}),
    );
    let result = call_result(&schemas, Revision::V2026_07_28, &done);
    assert_eq!(text_of(result), "white hush");
}

/// A client of the conformance guest, whose prompt
/// `test_input_required_result_prompt` and resource `test://input-required`
/// ask the user for a context (key `user_context`).
fn start_conformance() -> Client {
    Client::start_with(&format!(
        "[host]\ndata_dir = \"{}\"\n[[plugin]]\npath = \"{}\"\n",
        root().join("target/test-data").display(),
        guest("conformance").display(),
    ))
}

const PROMPT: &str = "test_input_required_result_prompt";
const RESOURCE: &str = "test://input-required";

#[test]
fn a_prompt_and_a_resource_ask_a_handshake_client_on_the_requests_stream() {
    let schemas = McpSchemas::load();
    for revision in [Revision::V2025_06_18, Revision::V2025_11_25] {
        let mut client = start_conformance();
        client.initialize_with(revision, json!({"elicitation": {}}));
        let answer = |request: &Value| {
            assert_eq!(request["method"], "elicitation/create", "{request}");
            checked(&schemas, revision, "ElicitRequest", request);
            Ok(json!({"action": "accept", "content": {"context": "tea"}}))
        };
        let (_, got) = client.request_answering("prompts/get", json!({"name": PROMPT}), answer);
        let result = checked(&schemas, revision, "GetPromptResult", &got["result"]);
        assert_eq!(
            result.get("_meta"),
            None,
            "{revision}: no serverInfo before 2026-07-28"
        );
        assert_eq!(
            result["messages"][0]["content"]["text"], "Answer with this context in mind: tea",
            "{revision}"
        );
        let (_, read) =
            client.request_answering("resources/read", json!({"uri": RESOURCE}), answer);
        let result = checked(&schemas, revision, "ReadResourceResult", &read["result"]);
        assert_eq!(result["contents"][0]["text"], "Context: tea", "{revision}");

        // A client without elicitation: the guest's refusal is its coded error.
        let mut unasked = start_conformance();
        unasked.initialize_with(revision, json!({}));
        let (_, refused) = unasked.request("prompts/get", json!({"name": PROMPT}));
        assert!(
            refused["error"].to_string().contains("unsupported"),
            "{revision}: {refused}"
        );
    }
}

#[test]
fn a_prompt_and_a_resource_answer_a_stateless_caller_input_required() {
    let schemas = McpSchemas::load();
    let mut client = start_conformance();
    let meta = modern(json!({"elicitation": {}}));
    let tea = json!({"user_context": {"action": "accept", "content": {"context": "tea"}}});
    for (method, params, done, text) in [
        (
            "prompts/get",
            json!({"name": PROMPT, "_meta": meta.clone()}),
            "GetPromptResult",
            "/messages/0/content/text",
        ),
        (
            "resources/read",
            json!({"uri": RESOURCE, "_meta": meta.clone()}),
            "ReadResourceResult",
            "/contents/0/text",
        ),
    ] {
        let (_, first) = client.request(method, params.clone());
        let (key, request, state) = input_required(&schemas, &first);
        assert_eq!(key, "user_context", "{method}");
        assert_eq!(request["method"], "elicitation/create", "{method}");

        let with = |extra: Value| {
            let mut params = params.clone();
            params
                .as_object_mut()
                .unwrap()
                .extend(extra.as_object().unwrap().clone());
            params
        };
        let (_, second) = client.request(
            method,
            with(json!({"inputResponses": tea.clone(), "requestState": state.clone()})),
        );
        let result = checked(&schemas, Revision::V2026_07_28, done, &second["result"]);
        assert_eq!(result["resultType"], "complete", "{method}: {result}");
        assert_eq!(
            result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"], "toolhost",
            "{method}: a 2026-07-28 result names its server"
        );
        assert!(
            result
                .pointer(text)
                .and_then(Value::as_str)
                .is_some_and(|t| t.ends_with("tea")),
            "{method}: {result}"
        );

        // The state is bound to the request it was issued for: not to the
        // other method, another prompt or resource, or a forged copy.
        let mut forged = state.clone();
        forged.insert(forged.len() / 2, 'x');
        let (_, refused) = client.request(
            method,
            with(json!({"inputResponses": tea.clone(), "requestState": forged})),
        );
        assert_eq!(refused["error"]["code"], -32602, "{method}: {refused}");
        let (other_method, other) = if method == "prompts/get" {
            ("resources/read", json!({"uri": RESOURCE}))
        } else {
            ("prompts/get", json!({"name": PROMPT}))
        };
        let mut other = other;
        other["_meta"] = meta.clone();
        other["inputResponses"] = tea.clone();
        other["requestState"] = json!(state);
        let (_, refused) = client.request(other_method, other);
        assert_eq!(
            refused["error"]["code"], -32602,
            "a {method} state for {other_method}: {refused}"
        );
    }
}

/// The JavaScript `notes` example (`guest-examples/js-notes`): its prompt,
/// resources and completions, and a tool that asks, over stdio in both eras.
#[test]
fn the_javascript_notes_example_offers_a_prompt_a_resource_and_a_tool_that_asks() {
    let schemas = McpSchemas::load();
    let start = || {
        let mut client = Client::start_with(&format!(
            "[host]\ndata_dir = \"{}\"\n[[plugin]]\npath = \"{}\"\n",
            root().join("target/test-data").display(),
            common::host::lang_guest("js_notes").display(),
        ));
        // The first start compiles the SpiderMonkey component (seconds, and more
        // on a busy machine beside other tests) before it answers.
        client.patience = std::time::Duration::from_secs(180);
        client
    };
    let revision = Revision::V2025_11_25;
    let mut client = start();
    client.initialize_with(revision, json!({"elicitation": {}}));
    let (_, got) = client.request(
        "prompts/get",
        json!({"name": "summarize_note", "arguments": {"slug": "sandbox"}}),
    );
    let prompt = checked(&schemas, revision, "GetPromptResult", &got["result"]);
    assert_eq!(
        prompt["messages"][0]["content"]["resource"]["uri"],
        "notes://note/sandbox"
    );
    let (_, read) = client.request("resources/read", json!({"uri": "notes://note/prompts"}));
    let read = checked(&schemas, revision, "ReadResourceResult", &read["result"]);
    assert!(
        read["contents"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("# Prompts and resources"),
        "{read}"
    );
    // A guest's thrown tool-error reaches the caller with its code.
    let (_, missing) = client.request("resources/read", json!({"uri": "notes://note/nothing"}));
    assert_eq!(missing["error"]["code"], -32002, "{missing}");
    let (_, completed) = client.request(
        "completion/complete",
        json!({"ref": {"type": "ref/resource", "uri": "notes://note/{slug}"}, "argument": {"name": "slug", "value": "p"}}),
    );
    assert_eq!(
        completed["result"]["completion"]["values"],
        json!(["prompts"])
    );
    let (_, picked) = client.request_answering(
        "tools/call",
        json!({"name": "pick_note", "arguments": {}}),
        |request| {
            checked(&schemas, revision, "ElicitRequest", request);
            assert_eq!(
                request["params"]["requestedSchema"]["properties"]["slug"]["enum"],
                json!(["sandbox", "results", "prompts"])
            );
            Ok(json!({"action": "accept", "content": {"slug": "prompts"}}))
        },
    );
    let result = call_result(&schemas, revision, &picked);
    assert_eq!(
        result["structuredContent"],
        json!({"slug": "prompts", "title": "Prompts and resources"})
    );

    // A client that cannot be asked: the refusal becomes the coded error.
    let mut unasked = start();
    unasked.initialize_with(revision, json!({}));
    let (_, refused) = unasked.request("tools/call", json!({"name": "pick_note", "arguments": {}}));
    let result = call_result(&schemas, revision, &refused);
    assert_eq!(result["isError"], true, "{result}");
    assert!(result.to_string().contains("unsupported"), "{result}");

    // 2026-07-28: input_required, then the retry with the answer.
    let meta = modern(json!({"elicitation": {}}));
    let (_, first) = client.request(
        "tools/call",
        json!({"name": "pick_note", "arguments": {}, "_meta": meta.clone()}),
    );
    let (key, _, state) = input_required(&schemas, &first);
    let (_, done) = client.request(
        "tools/call",
        json!({"name": "pick_note", "arguments": {}, "_meta": meta, "requestState": state,
               "inputResponses": {key: {"action": "accept", "content": {"slug": "sandbox"}}}}),
    );
    let result = call_result(&schemas, Revision::V2026_07_28, &done);
    assert_eq!(
        result["structuredContent"],
        json!({"slug": "sandbox", "title": "The sandbox"})
    );
}
