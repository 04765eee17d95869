//! Every example tool, called through the catalog, the runtime and the mapper.

use crate::common;

use std::collections::BTreeSet;

use common::host::{TestHost, code, guest};
use serde_json::{Value, json};
use toolhost::catalog::Caller;
use toolhost::render::{Mapper, OutputMode, RenderContext, Revision, Target};
use toolhost::result::{ContentPart, ErrorCode, ResourceBody};
use toolhost::runtime::GuestEvent;

async fn host(data: &std::path::Path) -> TestHost {
    TestHost::new(&format!(
        r#"
[[plugin]]
path = "{hello}"
[plugin.policy]
config = {{ greeting = "Hi" }}

[[plugin]]
path = "{calc}"

[[plugin]]
path = "{files}"
[[plugin.policy.preopens]]
host = "{data}"
guest = "/data"

[[plugin]]
path = "{media}"

[[plugin]]
path = "{bulk}"

[[plugin]]
path = "{errors}"

[[plugin]]
path = "{legacy}"
world = "legacy-app"
"#,
        hello = guest("hello").display(),
        calc = guest("calc").display(),
        files = guest("files").display(),
        media = guest("media").display(),
        bulk = guest("bulk").display(),
        errors = guest("errors").display(),
        legacy = guest("legacy_app").display(),
        data = data.display(),
    ))
    .await
}

fn data_dir() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("readme.txt"),
        "Hello from a granted directory.\n",
    )
    .unwrap();
    std::fs::create_dir(dir.path().join("notes")).unwrap();
    dir
}

/// Renders `result` for every MCP revision and mode, checking each against the
/// revision's official schema, and returns the 2026-07-28 compat rendering.
fn render_everywhere(host: &TestHost, tool: &str, result: &toolhost::result::ToolResult) -> Value {
    let schemas = common::McpSchemas::load();
    let schema = host
        .catalog
        .tool(tool)
        .and_then(|t| t.descriptor.output_schema.clone());
    let mut ctx = RenderContext::new(tool, jiff::Timestamp::now());
    ctx.output_schema = schema.as_ref();
    for revision in Revision::ALL {
        for mode in OutputMode::ALL {
            let out = Mapper::default()
                .render_inline(result, Target::Mcp { revision, mode }, &ctx)
                .to_value();
            if let Err(errors) = schemas.check_call_tool_result(revision, &out) {
                panic!("{tool} on {revision} {mode:?}: {errors}\n{out:#}");
            }
        }
    }
    Mapper::default()
        .render_inline(
            result,
            Target::Mcp {
                revision: Revision::V2026_07_28,
                mode: OutputMode::Compat,
            },
            &ctx,
        )
        .to_value()
}

#[tokio::test(flavor = "multi_thread")]
async fn hello_greets_with_the_granted_greeting_and_reports_progress() {
    let data = data_dir();
    let host = host(data.path()).await;
    let (sender, mut events) = toolhost::runtime::event_channel();
    let result = host
        .catalog
        .call_named(
            "hello",
            Some(&json!({"name": "Ada"})),
            &Caller::local(),
            "r1",
            Some(sender),
        )
        .await
        .unwrap();
    assert_eq!(result.summary(), Some("Greeted Ada"));
    assert_eq!(result.content(), &[ContentPart::text("Hi, Ada!")]);
    assert_eq!(result.data(), None);
    let mut seen = Vec::new();
    while let Ok(event) = events.try_recv() {
        seen.push(event);
    }
    assert!(
        seen.iter()
            .any(|e| matches!(e, GuestEvent::Log { message, .. } if message.contains("Ada"))),
        "{seen:?}"
    );
    assert!(
        seen.iter()
            .any(|e| matches!(e, GuestEvent::Progress { .. })),
        "{seen:?}"
    );
    let out = render_everywhere(&host, "hello", &result);
    assert!(out["content"].to_string().contains("Hi, Ada!"));
    assert!(
        result.metadata().duration_ms.is_some(),
        "every call is timed"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn calc_returns_structured_and_list_data_and_refuses_bad_input() {
    let data = data_dir();
    let host = host(data.path()).await;
    let sum = host.call("add", json!({"a": 1.5, "b": 2})).await;
    assert_eq!(sum.data(), Some(&json!({"sum": 3.5})));
    assert_eq!(
        render_everywhere(&host, "add", &sum)["structuredContent"],
        json!({"sum": 3.5})
    );

    let range = host.call("range", json!({"start": 2, "end": 5})).await;
    assert_eq!(range.data(), Some(&json!([2, 3, 4])));
    let schema = host
        .catalog
        .tool("range")
        .unwrap()
        .descriptor
        .output_schema
        .clone();
    let mut ctx = RenderContext::new("range", jiff::Timestamp::now());
    ctx.output_schema = schema.as_ref();
    let old = Mapper::default()
        .render_inline(
            &range,
            Target::Mcp {
                revision: Revision::V2025_11_25,
                mode: OutputMode::Spec,
            },
            &ctx,
        )
        .to_value();
    assert_eq!(
        old["structuredContent"],
        json!({"result": [2, 3, 4]}),
        "wrapped up to 2025-11-25"
    );
    assert_eq!(
        render_everywhere(&host, "range", &range)["structuredContent"],
        json!([2, 3, 4])
    );

    let zero = host.call("divide", json!({"a": 1, "b": 0})).await;
    assert_eq!(code(&zero), ErrorCode::InvalidArguments);
    assert_eq!(
        zero.error().unwrap().details.as_ref().unwrap()["field"],
        json!("b")
    );
    render_everywhere(&host, "divide", &zero);

    // Arguments that break the input schema never reach the guest.
    let bad = host.call("add", json!({"a": "one", "b": 2})).await;
    assert_eq!(code(&bad), ErrorCode::InvalidArguments);
    let errors = &bad.error().unwrap().details.as_ref().unwrap()["errors"];
    assert_eq!(errors[0]["path"], json!("/a"), "{errors}");
    let extra = host.call("add", json!({"a": 1, "b": 2, "c": 3})).await;
    assert_eq!(code(&extra), ErrorCode::InvalidArguments);
}

#[tokio::test(flavor = "multi_thread")]
async fn files_reads_and_lists_the_granted_directory() {
    let data = data_dir();
    let host = host(data.path()).await;
    let read = host.call("read_file", json!({"path": "readme.txt"})).await;
    assert_eq!(
        read.data().unwrap()["content"],
        json!("Hello from a granted directory.\n")
    );
    let missing = host.call("read_file", json!({"path": "nope.txt"})).await;
    assert_eq!(code(&missing), ErrorCode::NotFound);
    let listed = host.call("list_dir", json!({})).await;
    assert_eq!(listed.data(), Some(&json!(["notes", "readme.txt"])));
    render_everywhere(&host, "list_dir", &listed);
}

#[tokio::test(flavor = "multi_thread")]
async fn media_returns_every_kind_of_part() {
    let data = data_dir();
    let host = host(data.path()).await;
    let media = host.call("media", json!({})).await;
    let kinds: BTreeSet<&str> = media
        .content()
        .iter()
        .map(|part| match part {
            ContentPart::Binary { mime, .. } if mime.starts_with("image/") => "image",
            ContentPart::Binary { mime, .. } if mime.starts_with("audio/") => "audio",
            ContentPart::ResourceLink(_) => "link",
            ContentPart::EmbeddedResource {
                body: ResourceBody::Text(_),
                ..
            } => "embedded-text",
            ContentPart::EmbeddedResource {
                body: ResourceBody::Bytes(_),
                ..
            } => "embedded-blob",
            _ => "other",
        })
        .collect();
    assert_eq!(
        kinds,
        BTreeSet::from(["image", "audio", "link", "embedded-text", "embedded-blob"])
    );
    let out = render_everywhere(&host, "media", &media);
    let types: Vec<&str> = out["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["type"].as_str().unwrap())
        .collect();
    for expected in ["image", "audio", "resource_link", "resource"] {
        assert!(types.contains(&expected), "{types:?}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn bulk_results_are_offloaded_by_the_mapper() {
    let data = data_dir();
    let host = host(data.path()).await;
    let bulk = host.call("bulk", json!({"count": 5000})).await;
    assert_eq!(
        bulk.data().unwrap()["items"].as_array().unwrap().len(),
        5000
    );
    let store = std::sync::Arc::new(common::store());
    let mapper = Mapper::new(Default::default(), Some(store.clone()));
    let ctx = RenderContext::new("bulk", toolhost::samples::render_time());
    let rendered = mapper
        .render(
            &bulk,
            Target::Mcp {
                revision: Revision::V2025_06_18,
                mode: OutputMode::Compat,
            },
            &ctx,
        )
        .await;
    assert!(rendered.offloaded);
    let value = rendered.rendering.to_value();
    let link = value["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "resource_link")
        .expect("a link");
    assert_eq!(
        common::read_back(&store, link["uri"].as_str().unwrap(), None),
        Some(bulk)
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn errors_carry_each_code_and_the_host_checks_output_and_privileges() {
    let data = data_dir();
    let host = host(data.path()).await;
    for (name, expected) in [
        ("invalid_arguments", ErrorCode::InvalidArguments),
        ("missing_privilege", ErrorCode::MissingPrivilege),
        ("not_found", ErrorCode::NotFound),
        ("tool_error", ErrorCode::ToolError),
    ] {
        let failed = host.call("fail", json!({"code": name})).await;
        assert_eq!(code(&failed), expected);
        assert_eq!(
            failed.error().unwrap().details,
            Some(json!({"requested": name}))
        );
        let out = render_everywhere(&host, "fail", &failed);
        assert_eq!(out["isError"], json!(true));
    }
    let wrong = host.call("wrong_shape", json!({})).await;
    assert_eq!(code(&wrong), ErrorCode::ToolError);
    assert!(
        wrong.error().unwrap().details.as_ref().unwrap()["violations"]
            .to_string()
            .contains("x"),
        "{wrong:?}"
    );

    let nobody = Caller {
        principal: Some("alice".into()),
        privileges: Some(BTreeSet::new()),
    };
    let denied = host.call_as("needs_privilege", json!({}), &nobody).await;
    assert_eq!(code(&denied), ErrorCode::MissingPrivilege);
    assert_eq!(
        denied.error().unwrap().details,
        Some(json!({"missing": ["orders:write"]}))
    );
    let writer = Caller {
        principal: Some("bob".into()),
        privileges: Some(BTreeSet::from(["orders:write".to_owned()])),
    };
    assert_eq!(
        host.call_as("needs_privilege", json!({}), &writer)
            .await
            .data(),
        Some(&json!({"ok": true}))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn legacy_app_answers_go_through_the_legacy_parser() {
    let data = data_dir();
    let host = host(data.path()).await;
    let ok = host.call("legacy_success", json!({})).await;
    assert_eq!(
        ok.data(),
        Some(&json!({"orderId": "1001", "status": "shipped"}))
    );
    let string = host.call("legacy_error_string", json!({})).await;
    assert_eq!(
        string.error().unwrap().message,
        "Missing privilege: order:read"
    );
    let object = host.call("legacy_error_object", json!({})).await;
    assert_eq!(code(&object), ErrorCode::NotFound);
    assert_eq!(
        object.error().unwrap().details,
        Some(json!({"orderId": "1001"}))
    );
    let dry = host.call("legacy_dry_run", json!({})).await;
    assert_eq!(dry.metadata().dry_run, Some(true));
    assert_eq!(
        dry.metadata().legacy.beside.get("preview"),
        Some(&json!({"lines": 2}))
    );
    let plain = host.call("legacy_plain", json!({})).await;
    assert_eq!(
        plain.content(),
        &[ContentPart::text("Order 1001 was shipped.")]
    );
    for (tool, result) in [
        ("legacy_success", ok),
        ("legacy_error_object", object),
        ("legacy_dry_run", dry),
        ("legacy_plain", plain),
    ] {
        render_everywhere(&host, tool, &result);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_tools_are_not_results() {
    let data = data_dir();
    let host = host(data.path()).await;
    let outcome = host
        .catalog
        .call_named("no_such_tool", None, &Caller::local(), "r", None)
        .await;
    assert!(outcome.is_err());
}
