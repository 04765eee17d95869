//! The example tools in JavaScript, Python and C beside the Rust ones.
//!
//! `word_stats` exists in all four languages (guest-examples/word-stats, js-tools,
//! py-tools, c-tools); each component is loaded in a catalog of its own (the tool
//! has the same name everywhere), called with the same inputs, and every result
//! is rendered for every target of the mapper: the four renderings must be
//! identical byte for byte, and so must the tools/list entries. The other tools of
//! each language and the JavaScript legacy app are checked for what they show:
//! structured data against its schema, coded errors, log and progress events, the
//! legacy envelope parsed.

use crate::common;

use common::host::{TestHost, code, guest, lang_guest};
use serde_json::{Value, json};
use toolhost::catalog::Caller;
use toolhost::render::{RenderContext, Revision, Target};
use toolhost::result::{ContentPart, ErrorCode, ToolResult};
use toolhost::runtime::{GuestEvent, LogLevel};

/// Loading is serialised: a test that waits finds the component compiled in the
/// shared cache instead of compiling the same 10-20 MB again beside another test.
static LOADING: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// A catalog holding only the component at `path` (of world `world`).
async fn host_of(path: &std::path::Path, world: &str) -> TestHost {
    let _loading = LOADING.lock().await;
    TestHost::new(&format!(
        "[[plugin]]\npath = \"{}\"\nworld = \"{world}\"\n",
        path.display()
    ))
    .await
}

/// The four versions of word_stats: (language, component).
fn word_stats_components() -> [(&'static str, std::path::PathBuf); 4] {
    [
        ("Rust", guest("word_stats")),
        ("JavaScript", lang_guest("js_tools")),
        ("Python", lang_guest("py_tools")),
        ("C", lang_guest("c_tools")),
    ]
}

/// The call's duration is the one thing that differs from run to run: it is set
/// to one value so that renderings can be compared.
fn without_timing(result: &ToolResult) -> ToolResult {
    result.to_builder().duration_ms(1.0).build()
}

/// `result` rendered for every target, as compact JSON text, with the tool's
/// output schema in the context (as the server renders it).
async fn renderings(host: &TestHost, tool: &str, result: &ToolResult) -> Vec<(String, String)> {
    let mapper = common::mapper();
    let schema = host
        .catalog
        .tool(tool)
        .and_then(|t| t.descriptor.output_schema.clone());
    let mut out = Vec::new();
    for target in Target::all() {
        let mut ctx = RenderContext::new(tool, toolhost::samples::render_time());
        ctx.output_schema = schema.as_ref();
        ctx.request_id = "req-1";
        let rendered = mapper.render(result, target, &ctx).await;
        out.push((target.to_string(), rendered.rendering.to_json()));
    }
    out
}

/// What the tools/list entries of `tool` are built from, for every revision: its
/// descriptor (name, title, description, input and output schema, privileges,
/// client capabilities) and its hints, as JSON text (the schemas with their
/// keys in the order the plugin wrote them).
fn listing(host: &TestHost, tool: &str) -> String {
    let tool = host.catalog.tool(tool).expect("the tool is listed");
    let d = &tool.descriptor;
    let hints = tool.annotations;
    json!({
        "name": tool.name,
        "title": d.title,
        "description": d.description,
        "inputSchema": d.input_schema,
        "outputSchema": d.output_schema,
        "readOnly": hints.read_only,
        "destructive": hints.destructive,
        "idempotent": hints.idempotent,
        "openWorld": hints.open_world,
        "requiredPrivileges": d.required_privileges,
        "requiredClientCapabilities": d.required_client_capabilities,
    })
    .to_string()
}

/// Inputs that tell apart the usual ways of counting: multi-byte characters
/// (counted as code points, not bytes or UTF-16 units), every ASCII whitespace
/// as a word separator, a no-break space that is not one, a final line without
/// its LF, empty lines and an empty text.
const INPUTS: [&str; 8] = [
    "",
    "one",
    "Hello, world!\nSecond line\n",
    "  tabs\tand\u{0b}vertical\u{0c}feeds\r\nend",
    "naïve café 😀 日本語\ntwo lines",
    "no\u{a0}break space",
    "\n\n\n",
    "family 👩\u{200d}👩\u{200d}👧 \"quoted\" \\ back\u{1}slash",
];

#[tokio::test(flavor = "multi_thread")]
async fn word_stats_answers_byte_for_byte_alike_in_four_languages() {
    let mut hosts = Vec::new();
    for (language, path) in word_stats_components() {
        hosts.push((language, host_of(&path, "plugin").await));
    }

    // The same descriptor, down to the order of the schemas' keys.
    let (_, rust) = &hosts[0];
    let expected_listing = listing(rust, "word_stats");
    assert!(
        expected_listing.contains(r#""required":["characters","lines","words"]"#),
        "{expected_listing}"
    );
    for (language, host) in &hosts[1..] {
        assert_eq!(
            listing(host, "word_stats"),
            expected_listing,
            "{language}: the descriptor differs from Rust's"
        );
        assert_eq!(
            host.catalog.tool("word_stats").unwrap().descriptor,
            rust.catalog.tool("word_stats").unwrap().descriptor,
            "{language}"
        );
    }

    for text in INPUTS {
        let args = json!({ "text": text });
        let reference = without_timing(&rust.call("word_stats", args.clone()).await);
        assert!(
            reference.error().is_none(),
            "Rust failed on {text:?}: {reference:?}"
        );
        let expected = renderings(rust, "word_stats", &reference).await;
        for (language, host) in &hosts[1..] {
            let result = without_timing(&host.call("word_stats", args.clone()).await);
            assert_eq!(result, reference, "{language} on {text:?}");
            for ((target, expected), (_, actual)) in expected
                .iter()
                .zip(renderings(host, "word_stats", &result).await)
            {
                assert_eq!(&actual, expected, "{language} on {text:?} for {target}");
            }
        }
    }

    // What they agree on is right, by the rules in guest-examples/word-stats.
    for (text, words, lines, characters, summary) in [
        ("", 0, 0, 0, "0 words, 0 lines, 0 characters"),
        ("one", 1, 1, 3, "1 word, 1 line, 3 characters"),
        (INPUTS[2], 4, 2, 26, "4 words, 2 lines, 26 characters"),
        (INPUTS[3], 5, 2, 30, "5 words, 2 lines, 30 characters"),
        (INPUTS[4], 6, 2, 26, "6 words, 2 lines, 26 characters"),
        (INPUTS[5], 2, 1, 14, "2 words, 1 line, 14 characters"),
        ("\n\n\n", 0, 3, 3, "0 words, 3 lines, 3 characters"),
    ] {
        let result = rust.call("word_stats", json!({ "text": text })).await;
        assert_eq!(
            result.data(),
            Some(&json!({"characters": characters, "lines": lines, "words": words})),
            "{text:?}"
        );
        assert_eq!(result.summary(), Some(summary), "{text:?}");
    }
}

/// The JavaScript and Python tools beside word_stats: `color` and `countdown`.
#[tokio::test(flavor = "multi_thread")]
async fn js_and_python_tools_return_checked_data_coded_errors_and_events() {
    for (language, name) in [("JavaScript", "js_tools"), ("Python", "py_tools")] {
        let host = host_of(&lang_guest(name), "plugin").await;

        // Structured data that fits the declared output schema (the host checks it
        // too: data that did not fit would have come back as a tool_error).
        let red = host.call("color", json!({"name": "red"})).await;
        let data = json!({"hex": "#ff0000", "name": "red", "rgb": [255, 0, 0]});
        assert_eq!(red.data(), Some(&data), "{language}: {red:?}");
        assert_eq!(red.summary(), Some("red is #ff0000"), "{language}");
        let schema = host
            .catalog
            .tool("color")
            .unwrap()
            .descriptor
            .output_schema
            .clone()
            .expect("color declares an output schema");
        assert!(
            jsonschema::validator_for(&schema).unwrap().is_valid(&data),
            "{language}: {schema}"
        );
        let rendered = renderings(&host, "color", &red).await;
        let latest = &rendered
            .iter()
            .find(|(t, _)| t.starts_with(&format!("mcp-{}", Revision::V2026_07_28)))
            .unwrap()
            .1;
        assert_eq!(
            serde_json::from_str::<Value>(latest).unwrap()["structuredContent"],
            data,
            "{language}"
        );

        // A coded failure with details.
        let purple = host.call("color", json!({"name": "purple"})).await;
        assert_eq!(code(&purple), ErrorCode::NotFound, "{language}");
        assert_eq!(
            purple.error().unwrap().details,
            Some(json!({"known": ["blue", "green", "red"], "name": "purple"})),
            "{language}"
        );
        let legacy = &renderings(&host, "color", &purple).await[0];
        assert_eq!(legacy.0, "legacy");
        let legacy: Value = serde_json::from_str(&legacy.1).unwrap();
        assert_eq!(legacy["success"], json!(false), "{language}: {legacy}");

        // Log lines and progress reports reach the caller's event channel.
        let (sender, mut events) = toolhost::runtime::event_channel();
        let counted = host
            .catalog
            .call_named(
                "countdown",
                Some(&json!({"from": 3})),
                &Caller::local(),
                "r1",
                Some(sender),
            )
            .await
            .unwrap();
        assert_eq!(counted.data(), Some(&json!({"counted": 3})), "{language}");
        let mut seen = Vec::new();
        while let Ok(event) = events.try_recv() {
            seen.push(event);
        }
        let log = |level, message: &str| GuestEvent::Log {
            level,
            message: message.into(),
        };
        let step = |n: f64| GuestEvent::Progress {
            progress: n,
            total: Some(3.0),
            message: Some(format!("step {n} of 3")),
        };
        assert_eq!(
            seen,
            vec![
                log(LogLevel::Info, "counting down from 3"),
                log(LogLevel::Debug, "3"),
                step(1.0),
                log(LogLevel::Debug, "2"),
                step(2.0),
                log(LogLevel::Debug, "1"),
                step(3.0),
            ],
            "{language}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_c_tool_returns_text_and_structured_data() {
    let host = host_of(&lang_guest("c_tools"), "plugin").await;
    for (n, even, square, text) in [
        (12, true, 144, "12 is even; its square is 144."),
        (-7, false, 49, "-7 is odd; its square is 49."),
    ] {
        let facts = host.call("number_facts", json!({ "n": n })).await;
        assert_eq!(
            facts.data(),
            Some(&json!({"even": even, "n": n, "square": square})),
            "{facts:?}"
        );
        assert_eq!(facts.content(), &[ContentPart::text(text)]);
        let rendered = renderings(&host, "number_facts", &facts).await;
        let legacy: Value = serde_json::from_str(&rendered[0].1).unwrap();
        assert_eq!(legacy["data"]["square"], json!(square), "{legacy}");
    }
    // Out of the declared range: refused by the host before the tool runs.
    let huge = host.call("number_facts", json!({"n": 1u64 << 40})).await;
    assert_eq!(code(&huge), ErrorCode::InvalidArguments);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_js_legacy_app_envelopes_go_through_the_legacy_parser() {
    let host = host_of(&lang_guest("js_legacy_app"), "legacy-app").await;
    let found = host.call("order_status", json!({"orderId": "1001"})).await;
    assert_eq!(
        found.data(),
        Some(&json!({"orderId": "1001", "status": "shipped", "total": 12.5}))
    );

    let missing = host.call("order_status", json!({"orderId": "9999"})).await;
    assert_eq!(code(&missing), ErrorCode::NotFound, "{missing:?}");
    assert_eq!(
        missing.error().unwrap().message,
        "Order 9999 does not exist"
    );
    assert_eq!(
        missing.error().unwrap().details,
        Some(json!({"orderId": "9999"}))
    );

    let shipped = host.call("order_cancel", json!({"orderId": "1001"})).await;
    assert_eq!(
        shipped.error().unwrap().message,
        "Order 1001 has shipped and can no longer be cancelled"
    );

    let preview = host
        .call("order_cancel", json!({"orderId": "1002", "dryRun": true}))
        .await;
    assert_eq!(preview.metadata().dry_run, Some(true));
    assert_eq!(
        preview.metadata().legacy.beside.get("preview"),
        Some(&json!({"refund": 40}))
    );
    assert_eq!(
        preview.data(),
        Some(&json!({"orderId": "1002", "status": "cancelled"}))
    );

    let note = host.call("order_note", json!({"orderId": "1001"})).await;
    assert_eq!(
        note.content(),
        &[ContentPart::text("Order 1001: handle with care.")]
    );

    // Back out through the legacy renderer: the envelope the app meant.
    let legacy = &renderings(&host, "order_cancel", &preview).await[0];
    assert_eq!(legacy.0, "legacy");
    let legacy: Value = serde_json::from_str(&legacy.1).unwrap();
    assert_eq!(legacy["success"], json!(true), "{legacy}");
    assert_eq!(legacy["dryRun"], json!(true), "{legacy}");
    assert_eq!(legacy["preview"], json!({"refund": 40}), "{legacy}");
}
