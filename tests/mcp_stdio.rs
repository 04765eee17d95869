//! The MCP server over stdio, spoken to in raw JSON-RPC as a client of each
//! revision would (no SDK offers the older ones), with every answer checked
//! against that revision's official schema.

use crate::common;

use std::time::Duration;

use common::host::{guest, root};
use common::stdio::Client;
use common::{McpSchemas, error_code};
use serde_json::{Value, json};
use toolhost::render::Revision;

/// The URI of the stored-result link in a call result, as a link block or, before
/// 2025-06-18, inside the text pointer.
fn stored_uri(result: &Value) -> String {
    let text = result["content"].to_string();
    let start = text
        .find("toolhost://results/")
        .expect("a stored-result link");
    text[start..]
        .chars()
        .take_while(|c| !matches!(c, '"' | ' ' | '\\'))
        .collect()
}

#[test]
fn every_handshake_revision_lists_calls_and_reads_within_its_schema() {
    let schemas = McpSchemas::load();
    for revision in [
        Revision::V2024_11_05,
        Revision::V2025_03_26,
        Revision::V2025_06_18,
        Revision::V2025_11_25,
    ] {
        let mut client = Client::start();
        let init = client.initialize(revision);
        assert_eq!(
            schemas.result(revision, "InitializeResult", &init)["protocolVersion"],
            revision.as_str()
        );

        let (_, listed) = client.request("tools/list", json!({}));
        let tools = schemas.result(revision, "ListToolsResult", &listed)["tools"]
            .as_array()
            .unwrap()
            .clone();
        let range = tools.iter().find(|t| t["name"] == "range").unwrap();
        assert_eq!(
            range.get("outputSchema").is_some(),
            revision.has_structured_content(),
            "{revision}: outputSchema"
        );
        if revision.has_structured_content() {
            assert_eq!(
                range["outputSchema"]["type"], "object",
                "{revision}: wrapped list schema"
            );
        }
        assert_eq!(
            tools
                .iter()
                .find(|t| t["name"] == "hello")
                .unwrap()
                .get("annotations")
                .is_some(),
            revision.has_audio()
        );

        for (tool, arguments) in [
            ("add", json!({"a": 2, "b": 3})),
            ("range", json!({"start": 0, "end": 3})),
            ("media", json!({})),
            ("fail", json!({"code": "not_found"})),
            ("test_multiple_content_types", json!({})),
        ] {
            let (_, called) =
                client.request("tools/call", json!({"name": tool, "arguments": arguments}));
            let called = schemas.result(revision, "CallToolResult", &called);
            assert_eq!(
                called.get("isError").is_some(),
                tool == "fail",
                "{revision} {tool}"
            );
            assert_eq!(
                called.get("structuredContent").is_some(),
                revision.has_structured_content()
                    && tool != "fail"
                    && tool != "media"
                    && tool != "test_multiple_content_types",
                "{revision} {tool}"
            );
        }

        // Progress reaches a caller that sent a token, before the response.
        let (notifications, called) = client.request(
            "tools/call",
            json!({"name": "test_tool_with_progress", "arguments": {}, "_meta": {"progressToken": "p-1"}}),
        );
        schemas.result(revision, "CallToolResult", &called);
        let progress: Vec<f64> = notifications
            .iter()
            .filter(|n| n["method"] == "notifications/progress")
            .inspect(|n| {
                assert_eq!(n["params"]["progressToken"], "p-1");
                schemas.check(revision, "ProgressNotification", n).unwrap();
            })
            .map(|n| n["params"]["progress"].as_f64().unwrap())
            .collect();
        assert!(
            progress.len() >= 3 && progress.windows(2).all(|w| w[0] < w[1]),
            "{revision}: {progress:?}"
        );

        // Guest log lines reach the client once it set a level.
        let (_, set) = client.request("logging/setLevel", json!({"level": "debug"}));
        assert_eq!(set["result"], json!({}));
        let (notifications, _) = client.request(
            "tools/call",
            json!({"name": "test_tool_with_logging", "arguments": {}}),
        );
        let logs = notifications
            .iter()
            .filter(|n| n["method"] == "notifications/message")
            .count();
        assert!(logs >= 3, "{revision}: {notifications:?}");

        // A large result travels as a link, readable with resources/read.
        let (_, bulk) = client.request(
            "tools/call",
            json!({"name": "bulk", "arguments": {"count": 5000}}),
        );
        let bulk = schemas.result(revision, "CallToolResult", &bulk).clone();
        let uri = stored_uri(&bulk);
        let (_, read) = client.request("resources/read", json!({"uri": uri}));
        let read = schemas.result(revision, "ReadResourceResult", &read);
        let data: Value =
            serde_json::from_str(read["contents"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(data["items"].as_array().unwrap().len(), 5000);

        let (_, unknown) = client.request(
            "tools/call",
            json!({"name": "no_such_tool", "arguments": {}}),
        );
        assert_eq!(error_code(&unknown), -32602, "{revision}");
        let (_, missing) = client.request(
            "resources/read",
            json!({"uri": "toolhost://results/000000"}),
        );
        assert_eq!(error_code(&missing), -32002, "{revision}");
    }
}

/// An open `subscriptions/listen` ends with the client's input: the process
/// exits at once when stdin closes, even right after the acknowledgment
/// (before, rmcp waited up to 5 s for it).
#[test]
fn an_open_subscription_does_not_hold_the_process_after_stdin_closes() {
    let mut client = Client::start();
    let listen = client.next_id;
    client.next_id += 1;
    client.send(&json!({
        "jsonrpc": "2.0", "id": listen, "method": "subscriptions/listen",
        "params": {"_meta": modern_meta(), "notifications": {"toolsListChanged": true}},
    }));
    let acknowledged = client.notification("notifications/subscriptions/acknowledged");
    assert_eq!(
        acknowledged["params"]["notifications"]["toolsListChanged"],
        true
    );
    // Closed as soon as the acknowledgment is read: rmcp may not have marked
    // it sent yet, and the server waits for that before the input ends
    // (`mcp::input_end`), instead of rmcp's 5 s for the stuck subscription.
    let closed = std::time::Instant::now();
    drop(client.stdin.take());
    let status = client.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    assert!(
        closed.elapsed() < Duration::from_secs(2),
        "the server took {:?} to exit after stdin closed",
        closed.elapsed()
    );
}

/// A plugin's prompts in every revision: listed, filled in with and without
/// arguments, with an embedded resource and an image, and refused with `-32602`
/// when the prompt is unknown or its arguments do not fit; every answer within
/// its revision's schema.
#[test]
fn prompts_are_listed_and_filled_in_every_revision_within_its_schema() {
    let schemas = McpSchemas::load();
    let mut client;
    let mut next_meta = None;
    for revision in Revision::ALL {
        // The handshake once; 2026-07-28 names its revision in each request.
        let with_meta = |mut params: Value, meta: &Option<Value>| {
            if let Some(meta) = meta {
                params["_meta"] = meta.clone();
            }
            params
        };
        client = Client::start();
        if revision.is_stateless() {
            next_meta = Some(modern_meta());
        } else {
            let init = client.initialize(revision);
            let init = schemas.result(revision, "InitializeResult", &init);
            assert!(
                init["capabilities"]["prompts"].is_object(),
                "{revision}: {init}"
            );
        }
        let meta = next_meta.clone();
        let (_, listed) = client.request("prompts/list", with_meta(json!({}), &meta));
        let listed = schemas.result(revision, "ListPromptsResult", &listed);
        let names: Vec<&str> = listed["prompts"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "test_simple_prompt",
                "test_prompt_with_arguments",
                "test_prompt_with_embedded_resource",
                "test_prompt_with_image",
                "test_input_required_result_prompt"
            ],
            "{revision}"
        );
        let with_arguments = &listed["prompts"][1];
        assert_eq!(with_arguments["arguments"][0]["name"], "arg1");
        assert_eq!(with_arguments["arguments"][0]["required"], true);

        let mut get = |name: &str, arguments: Value| {
            let (_, got) = client.request(
                "prompts/get",
                with_meta(json!({"name": name, "arguments": arguments}), &meta),
            );
            got
        };
        let simple = get("test_simple_prompt", json!({}));
        let simple = schemas.result(revision, "GetPromptResult", &simple);
        assert_eq!(
            simple["messages"],
            json!([{"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}]),
            "{revision}"
        );
        assert_eq!(
            simple.get("resultType").is_some(),
            revision.is_stateless(),
            "{revision}: {simple}"
        );

        let filled = get(
            "test_prompt_with_arguments",
            json!({"arg1": "hello", "arg2": "world"}),
        );
        let filled = schemas.result(revision, "GetPromptResult", &filled);
        assert_eq!(
            filled["messages"][0]["content"]["text"],
            "Prompt with arguments: arg1='hello', arg2='world'"
        );

        let embedded = get(
            "test_prompt_with_embedded_resource",
            json!({"resourceUri": "test://example"}),
        );
        let embedded = schemas.result(revision, "GetPromptResult", &embedded);
        assert_eq!(embedded["messages"][0]["content"]["type"], "resource");
        assert_eq!(
            embedded["messages"][0]["content"]["resource"]["uri"],
            "test://example"
        );
        assert_eq!(
            embedded["messages"][1]["content"]["text"],
            "Please process the embedded resource above."
        );

        let image = get("test_prompt_with_image", json!({}));
        let image = schemas.result(revision, "GetPromptResult", &image);
        assert_eq!(image["messages"][0]["content"]["type"], "image");
        assert_eq!(image["messages"][0]["content"]["mimeType"], "image/png");

        for (name, arguments, says) in [
            (
                "no_such_prompt",
                json!({}),
                "Unknown prompt: no_such_prompt",
            ),
            (
                "test_prompt_with_arguments",
                json!({"arg1": "only one"}),
                "needs the argument \"arg2\"",
            ),
            (
                "test_simple_prompt",
                json!({"extra": "x"}),
                "takes no argument \"extra\"",
            ),
            (
                "test_prompt_with_arguments",
                json!({"arg1": 1, "arg2": "x"}),
                "must be a string",
            ),
        ] {
            let refused = get(name, arguments);
            assert_eq!(error_code(&refused), -32602, "{revision} {name}: {refused}");
            let message = refused["error"]["message"].as_str().unwrap();
            assert!(message.contains(says), "{revision}: {message}");
        }
    }
}

/// Plugin resources, templates and completions in every revision, beside the
/// stored results: listed, read by URI and by template, completed, and
/// subscribed to in the handshake era; every answer within its schema.
#[test]
fn resources_and_completions_of_plugins_in_every_revision_within_their_schema() {
    let schemas = McpSchemas::load();
    let toml = format!(
        "[host]\ndata_dir = \"{}\"\n[[plugin]]\npath = \"{}\"\n[[plugin]]\npath = \"{}\"\n",
        root().join("target/test-data").display(),
        guest("conformance").display(),
        guest("notes").display()
    );
    for revision in Revision::ALL {
        let mut client = Client::start_with(&toml);
        let meta = revision.is_stateless().then(modern_meta);
        if !revision.is_stateless() {
            let init = client.initialize(revision);
            let capabilities = &init["result"]["capabilities"];
            assert_eq!(capabilities["resources"]["subscribe"], true, "{revision}");
            assert!(capabilities["completions"].is_object(), "{revision}");
        }
        let mut ask = |method: &str, mut params: Value| {
            if let Some(meta) = &meta {
                params["_meta"] = meta.clone();
            }
            client.request(method, params).1
        };
        let listed = ask("resources/list", json!({}));
        let listed = schemas.result(revision, "ListResourcesResult", &listed);
        let uris: Vec<&str> = listed["resources"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["uri"].as_str().unwrap())
            .collect();
        assert_eq!(
            uris,
            [
                "test://static-text",
                "test://static-binary",
                "test://watched-resource",
                "test://input-required",
                "notes://index"
            ],
            "{revision}"
        );
        let index = &listed["resources"][4];
        assert_eq!(
            index.get("title").is_some(),
            revision >= Revision::V2025_06_18,
            "{revision}: {index}"
        );

        let templates = ask("resources/templates/list", json!({}));
        let templates = schemas.result(revision, "ListResourceTemplatesResult", &templates);
        assert_eq!(
            templates["resourceTemplates"][0]["uriTemplate"],
            "test://template/{id}/data"
        );
        assert_eq!(
            templates["resourceTemplates"][1]["uriTemplate"],
            "notes://note/{slug}"
        );

        let read = ask("resources/read", json!({"uri": "notes://note/sandbox"}));
        let read = schemas.result(revision, "ReadResourceResult", &read);
        assert_eq!(read["contents"][0]["mimeType"], "text/markdown");
        assert!(
            read["contents"][0]["text"]
                .as_str()
                .unwrap()
                .starts_with("# The sandbox")
        );
        let blob = ask("resources/read", json!({"uri": "test://static-binary"}));
        let blob = schemas.result(revision, "ReadResourceResult", &blob);
        assert!(blob["contents"][0]["blob"].is_string(), "{blob}");
        let missing = ask("resources/read", json!({"uri": "notes://note/nothing"}));
        let code = error_code(&missing);
        assert!(code == -32002 || code == -32602, "{revision}: {missing}");

        // A stored result still reads by its link beside the plugins' resources.
        let found = ask(
            "tools/call",
            json!({"name": "find_notes", "arguments": {"word": "host"}}),
        );
        let found = schemas.result(revision, "CallToolResult", &found);
        assert!(
            found["content"]
                .to_string()
                .contains("notes://note/results"),
            "{found}"
        );

        {
            let completed = ask(
                "completion/complete",
                json!({"ref": {"type": "ref/resource", "uri": "notes://note/{slug}"}, "argument": {"name": "slug", "value": "re"}}),
            );
            let completed = schemas.result(revision, "CompleteResult", &completed);
            assert_eq!(
                completed["completion"]["values"],
                json!(["results"]),
                "{revision}"
            );
            let prompt = ask(
                "completion/complete",
                json!({"ref": {"type": "ref/prompt", "name": "summarize_note"}, "argument": {"name": "slug", "value": "s"}}),
            );
            assert_eq!(
                schemas.result(revision, "CompleteResult", &prompt)["completion"]["values"],
                json!(["sandbox"])
            );
        }

        if !revision.is_stateless() {
            let subscribed = ask(
                "resources/subscribe",
                json!({"uri": "test://watched-resource"}),
            );
            schemas.result(revision, "EmptyResult", &subscribed);
            let unknown = ask("resources/subscribe", json!({"uri": "test://nothing"}));
            assert!(unknown.get("error").is_some(), "{unknown}");
            let unsubscribed = ask(
                "resources/unsubscribe",
                json!({"uri": "test://watched-resource"}),
            );
            schemas.result(revision, "EmptyResult", &unsubscribed);
        } else {
            let removed = ask(
                "resources/subscribe",
                json!({"uri": "test://watched-resource"}),
            );
            assert_eq!(error_code(&removed), -32601, "{removed}");
        }
    }
}

fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

#[test]
fn the_stateless_revision_needs_no_handshake() {
    let schemas = McpSchemas::load();
    let revision = Revision::V2026_07_28;
    let mut client = Client::start();
    let (_, discovered) = client.request("server/discover", json!({"_meta": modern_meta()}));
    let discovered = schemas.result(revision, "DiscoverResult", &discovered);
    assert!(
        discovered["supportedVersions"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );

    let (_, listed) = client.request("tools/list", json!({"_meta": modern_meta()}));
    let tools = schemas.result(revision, "ListToolsResult", &listed)["tools"]
        .as_array()
        .unwrap()
        .clone();
    let range = tools.iter().find(|t| t["name"] == "range").unwrap();
    assert_eq!(
        range["outputSchema"]["type"], "array",
        "any JSON Schema from 2026-07-28"
    );

    let (_, called) = client.request(
        "tools/call",
        json!({"name": "range", "arguments": {"start": 0, "end": 3}, "_meta": modern_meta()}),
    );
    let called = schemas.result(revision, "CallToolResult", &called);
    assert_eq!(called["structuredContent"], json!([0, 1, 2]));
    assert_eq!(called["resultType"], "complete");
    assert_eq!(
        called["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "toolhost"
    );

    // Output mode per request.
    let mut meta = modern_meta();
    meta["dev.toolhost/outputMode"] = json!("spec");
    let (_, spec) = client.request(
        "tools/call",
        json!({"name": "range", "arguments": {"start": 0, "end": 3}, "_meta": meta}),
    );
    assert_eq!(spec["result"]["content"][0]["text"], "[0,1,2]");

    let (_, missing) = client.request(
        "resources/read",
        json!({"uri": "toolhost://results/000000", "_meta": modern_meta()}),
    );
    assert_eq!(
        error_code(&missing),
        -32602,
        "resource not found is -32602 from 2026-07-28"
    );
    assert_eq!(missing["error"]["data"]["uri"], "toolhost://results/000000");

    let mut old = modern_meta();
    old["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let (_, unsupported) = client.request("tools/list", json!({"_meta": old}));
    assert_eq!(error_code(&unsupported), -32022);
    assert!(
        unsupported["error"]["data"]["supported"]
            .as_array()
            .unwrap()
            .contains(&json!("2026-07-28"))
    );
}

#[test]
fn stdout_carries_only_json_rpc_and_the_server_exits_when_stdin_closes() {
    let mut client = Client::start();
    client.initialize(Revision::V2025_11_25);
    let (_, called) = client.request(
        "tools/call",
        json!({"name": "hello", "arguments": {"name": "Ada"}}),
    );
    assert!(
        called["result"]["content"]
            .to_string()
            .contains("Hello, Ada!")
    );
    drop(client.stdin.take()); // EOF on the server's stdin
    let status = client.child.wait().unwrap();
    assert!(status.success(), "{status:?}");
    // Every line left on stdout is JSON-RPC too (`next` panics on anything else).
    while client.next().is_some() {}
}

/// Over pipes, stdin and stdout are read and written on the runtime's reactor
/// (every other test here). A redirected file cannot be, and stdout shared with
/// stderr must not be made non-blocking: both keep tokio's blocking way. Here the
/// requests come from a file and the answers go, with the log, into one pipe.
#[test]
fn requests_from_a_file_are_answered_into_a_pipe_shared_with_stderr() {
    use std::io::{Read as _, Write as _};
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        format!(
            "[host]\ndata_dir = \"{}\"\n[[plugin]]\npath = \"{}\"\n",
            dir.path().join("data").display(),
            guest("hello").display()
        ),
    )
    .unwrap();
    let requests = dir.path().join("requests.jsonl");
    let mut file = std::fs::File::create(&requests).unwrap();
    for line in [
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "file", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "hello", "arguments": {"name": "Ada"}}}),
    ] {
        writeln!(file, "{line}").unwrap();
    }
    drop(file);
    let (mut answers, writer) = std::io::pipe().unwrap();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["serve", "--config", config.to_str().unwrap()])
        .env("TOOLHOST_LOG", "warn")
        .stdin(std::fs::File::open(&requests).unwrap())
        .stdout(writer.try_clone().unwrap())
        .stderr(writer)
        .spawn()
        .unwrap();
    let mut out = String::new();
    answers.read_to_string(&mut out).unwrap();
    assert!(child.wait().unwrap().success(), "{out}");
    let called = out
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|message| message["id"] == json!(2))
        .unwrap_or_else(|| panic!("no answer to the call in: {out}"));
    assert!(
        called["result"]["content"]
            .to_string()
            .contains("Hello, Ada!"),
        "{called}"
    );
}

#[test]
fn a_component_dropped_into_the_plugin_directory_appears_with_list_changed() {
    let plugins = tempfile::tempdir().unwrap();
    std::fs::copy(guest("hello"), plugins.path().join("hello.wasm")).unwrap();
    let mut client = Client::start_with(&format!(
        "[host]\ndata_dir = \"{}\"\nplugin_dirs = [\"{}\"]\n",
        root().join("target/test-data").display(),
        plugins.path().display()
    ));
    client.initialize(Revision::V2025_11_25);
    let names = |client: &mut Client| -> Vec<String> {
        let (_, listed) = client.request("tools/list", json!({}));
        listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(names(&mut client), ["hello"]);

    // A new component: written under another name, then renamed into place.
    let partial = plugins.path().join("calc.part");
    std::fs::copy(guest("calc"), &partial).unwrap();
    std::fs::rename(&partial, plugins.path().join("calc.wasm")).unwrap();
    client.notification("notifications/tools/list_changed");
    assert_eq!(names(&mut client), ["add", "range", "divide", "hello"]);
    let (_, sum) = client.request(
        "tools/call",
        json!({"name": "add", "arguments": {"a": 1, "b": 1}}),
    );
    assert_eq!(sum["result"]["structuredContent"], json!({"sum": 2}));

    // A removed one goes away.
    std::fs::remove_file(plugins.path().join("hello.wasm")).unwrap();
    client.notification("notifications/tools/list_changed");
    assert_eq!(names(&mut client), ["add", "range", "divide"]);

    // One with prompts and resources changes those lists too; a subscribed
    // resource is updated when the plugin that serves it goes.
    let partial = plugins.path().join("notes.part");
    std::fs::copy(guest("notes"), &partial).unwrap();
    std::fs::rename(&partial, plugins.path().join("notes.wasm")).unwrap();
    client.notification("notifications/prompts/list_changed");
    let (_, prompts) = client.request("prompts/list", json!({}));
    assert_eq!(prompts["result"]["prompts"][0]["name"], "summarize_note");
    let (_, subscribed) = client.request("resources/subscribe", json!({"uri": "notes://index"}));
    assert!(subscribed.get("result").is_some(), "{subscribed}");
    std::fs::remove_file(plugins.path().join("notes.wasm")).unwrap();
    let updated = client.notification("notifications/resources/updated");
    assert_eq!(updated["params"]["uri"], "notes://index");
}

/// `notifications/cancelled` ends the instance: with one instance slot, a call
/// that follows a cancelled endless loop is served at once instead of waiting
/// (20 s) for the slot and failing with `resource_limit`.
#[test]
fn cancellation_ends_the_instance() {
    let mut client = Client::start_with(&format!(
        "[host]\ndata_dir = \"{}\"\n[[plugin]]\npath = \"{}\"\n[plugin.policy]\ntimeout_ms = 20000\nmax_instances = 1\n",
        root().join("target/test-data").display(),
        guest("hostile").display()
    ));
    client.initialize(Revision::V2025_11_25);
    let spin = client.next_id;
    client.next_id += 1;
    client.send(&json!({"jsonrpc": "2.0", "id": spin, "method": "tools/call", "params": {"name": "spin", "arguments": {}}}));
    std::thread::sleep(Duration::from_millis(300));
    client.send(&json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": spin, "reason": "test"}}));
    let (notifications, fresh) =
        client.request("tools/call", json!({"name": "stateful", "arguments": {}}));
    assert_eq!(
        fresh["result"]["structuredContent"],
        json!({"count": 1}),
        "{fresh}"
    );
    assert!(
        notifications
            .iter()
            .all(|n| n.get("id") != Some(&json!(spin))),
        "a cancelled request gets no response"
    );
}

/// The example tools in JavaScript, Python and C, served over stdio beside the Rust
/// one: listed, callable, and `word_stats` answers alike in every language.
#[test]
fn tools_in_every_language_are_served_over_mcp() {
    let mut toml = format!(
        "[host]\ndata_dir = \"{}\"\n[[plugin]]\npath = \"{}\"\n",
        root().join("target/test-data").display(),
        guest("word_stats").display()
    );
    for (name, prefix) in [("js_tools", "js"), ("py_tools", "py"), ("c_tools", "c")] {
        toml.push_str(&format!(
            "[[plugin]]\npath = \"{}\"\nprefix = \"{prefix}\"\n",
            common::host::lang_guest(name).display()
        ));
    }
    toml.push_str(&format!(
        "[[plugin]]\npath = \"{}\"\n",
        common::host::lang_guest("js_legacy_app").display()
    ));
    let mut client = Client::start_with(&toml);
    // A cold compile cache compiles three 12-18 MB components before serving.
    client.patience = Duration::from_secs(300);
    client.initialize(Revision::V2025_11_25);
    client.patience = Duration::from_secs(30);
    let (_, listed) = client.request("tools/list", json!({}));
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap())
        .collect();
    for name in [
        "word_stats",
        "js_word_stats",
        "py_word_stats",
        "c_word_stats",
        "js_color",
        "py_color",
        "c_number_facts",
        "order_status",
    ] {
        assert!(names.contains(&name), "{name} is not listed: {names:?}");
    }
    let text = "Zwei Wörter\nand three more";
    let mut answers = Vec::new();
    for name in [
        "word_stats",
        "js_word_stats",
        "py_word_stats",
        "c_word_stats",
    ] {
        let (_, called) = client.request(
            "tools/call",
            json!({"name": name, "arguments": {"text": text}}),
        );
        assert!(
            called["result"].get("isError").is_none(),
            "{name}: {called}"
        );
        answers.push(called["result"]["structuredContent"].clone());
    }
    assert!(answers[0].is_object(), "{:?}", answers[0]);
    for (name, answer) in ["js", "py", "c"].iter().zip(&answers[1..]) {
        assert_eq!(answer, &answers[0], "{name} differs from Rust");
    }
}
