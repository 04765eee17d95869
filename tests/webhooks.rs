//! App webhooks: tools served by an HTTP endpoint, signed calls, and every answer
//! (legacy envelope, versioned result, plain text) through the same parser and
//! mapper as components; a bad signature, a replay, a timeout and an oversized
//! answer each end as a coded result, and the next call is served.

use crate::common;

use std::time::{Duration, Instant};

use common::host::{TestHost, code};
use common::webhook_server::WebhookServer;
use serde_json::{Value, json};
use toolhost::catalog::Caller;
use toolhost::render::{Mapper, RenderContext, Target};
use toolhost::result::{ContentPart, ErrorCode, Extension, Metadata, ToolResult};

const SECRET: &str = "a shared secret of enough length";

const TOOLS: [&str; 9] = [
    "create_order",
    "reject",
    "versioned",
    "versioned_failure",
    "context",
    "plain",
    "slow",
    "huge",
    "missing",
];

/// A configuration with one webhook at `url` serving every test tool.
fn config(url: &str, secret: &str, allow: &str) -> String {
    let mut text = format!(
        "[host]\nwebhook_allow = [\"{allow}\"]\n\n\
         [[webhook]]\nname = \"orders\"\nurl = \"{url}\"\nsecret = \"{secret}\"\n\
         timeout_ms = 1000\nmax_response_bytes = 65536\n"
    );
    for tool in TOOLS {
        text.push_str(&format!(
            "[[webhook.tool]]\nname = \"{tool}\"\ndescription = \"The {tool} case.\"\n"
        ));
    }
    text.push_str(
        "[webhook.tool.input_schema]\ntype = \"object\"\n\
         properties = { items = { type = \"array\" } }\n",
    );
    text
}

/// `result` without the call's duration, which the host measures and adds.
fn without_duration(result: ToolResult) -> ToolResult {
    assert!(result.metadata().duration_ms.is_some(), "{result:?}");
    let metadata = Metadata {
        duration_ms: None,
        ..result.metadata().clone()
    };
    result.into_builder().metadata(metadata).build()
}

async fn host(webhook: &WebhookServer) -> TestHost {
    TestHost::new(&config(&webhook.url, SECRET, "127.0.0.1:*")).await
}

#[tokio::test]
async fn a_legacy_envelope_answer_goes_through_the_parser_and_the_mapper() {
    let webhook = WebhookServer::start(SECRET).await;
    let host = host(&webhook).await;
    let result = host
        .call("create_order", json!({"items": ["a", "b"], "dryRun": true}))
        .await;
    assert!(!result.is_failure(), "{result:?}");
    assert_eq!(
        result.data(),
        Some(&json!({"orderId": "A-1001", "items": ["a", "b"]}))
    );
    assert_eq!(result.metadata().dry_run, Some(true));
    // Rendered like any result: the legacy envelope reads back the same.
    let ctx = RenderContext::new("create_order", jiff::Timestamp::now());
    let legacy = Mapper::default()
        .render(&result, Target::Legacy, &ctx)
        .await
        .rendering
        .to_value();
    assert_eq!(legacy["success"], true);
    assert_eq!(legacy["data"]["orderId"], "A-1001");
    let schemas = common::McpSchemas::load();
    for target in Target::all() {
        if let Target::Mcp { revision, .. } = target {
            let rendered = Mapper::default()
                .render(&result, target, &ctx)
                .await
                .rendering
                .to_value();
            schemas
                .check(revision, "CallToolResult", &rendered)
                .unwrap_or_else(|e| panic!("{target}: {e}"));
        }
    }
}

#[tokio::test]
async fn failures_versioned_results_and_plain_text_keep_their_meaning() {
    let webhook = WebhookServer::start(SECRET).await;
    let host = host(&webhook).await;

    let rejected = host.call("reject", json!({})).await;
    assert_eq!(code(&rejected), ErrorCode::NotFound);
    let error = rejected.error().unwrap();
    assert_eq!(error.message, "Out of stock");
    assert_eq!(error.details.as_ref().unwrap()["sku"], "X-9");

    // The versioned answers are literal JSON of format 1 (tests/common/webhook_server.rs).
    let versioned = without_duration(host.call("versioned", json!({})).await);
    assert_eq!(
        versioned,
        ToolResult::success(Some(json!({"total": 42})))
            .summary("42 in all")
            .build()
    );
    let versioned_failure = without_duration(host.call("versioned_failure", json!({})).await);
    assert_eq!(
        versioned_failure,
        ToolResult::failure(ErrorCode::NotFound, "No order A-7.")
            .details(json!({"orderId": "A-7"}))
            .part(ContentPart::Text {
                text: "Search by customer instead.".into(),
                mime: Some("text/markdown".into()),
            })
            .dry_run(false)
            .extension(Extension::new("com.example.orders", "region", json!("eu")).unwrap())
            .build()
    );

    // Not an envelope: passed through as one text part, as the legacy rule says.
    let plain = host.call("plain", json!({})).await;
    assert!(!plain.is_failure());
    assert_eq!(
        plain.content(),
        [ContentPart::Text {
            text: "plain words, no envelope".into(),
            mime: None
        }]
    );
}

#[tokio::test]
async fn the_call_carries_its_context_and_a_valid_signature() {
    let webhook = WebhookServer::start(SECRET).await;
    let host = host(&webhook).await;
    let caller = Caller {
        principal: Some("alice".into()),
        privileges: None,
    };
    let result = host.call_as("context", json!({}), &caller).await;
    let context = result.data().unwrap();
    assert_eq!(context["caller"], "alice");
    assert_eq!(context["requestId"], "test-1");
    // The host's id of the call, for the receiver's log.
    let call_id = context["callId"].as_str().unwrap();
    assert!(
        call_id.len() == 16 && call_id.bytes().all(|b| b.is_ascii_hexdigit()),
        "{call_id}"
    );
    let delivery = &webhook.accepted()[0];
    let body: Value = serde_json::from_slice(&delivery.body).unwrap();
    assert_eq!(body["tool"], "context");
    assert_eq!(body["arguments"], json!({}));
    assert!(webhook.refused().is_empty());
}

#[tokio::test]
async fn a_bad_signature_is_refused_and_reported_as_a_coded_result() {
    let webhook = WebhookServer::start(SECRET).await;
    let host = TestHost::new(&config(&webhook.url, "not the secret", "127.0.0.1:*")).await;
    let result = host.call("create_order", json!({})).await;
    assert_eq!(code(&result), ErrorCode::ToolError);
    let details = result.error().unwrap().details.clone().unwrap();
    assert_eq!(details["status"], 401, "{details}");
    assert_eq!(details["plugin"], "orders");
    assert_eq!(details["tool"], "create_order");
    assert_eq!(webhook.refused(), ["bad signature"]);
    assert!(webhook.accepted().is_empty());
}

#[tokio::test]
async fn a_replayed_or_unsigned_request_is_refused_by_the_reference_webhook() {
    let webhook = WebhookServer::start(SECRET).await;
    let host = host(&webhook).await;
    assert!(!host.call("create_order", json!({})).await.is_failure());
    let original = webhook.accepted()[0].clone();
    let client = reqwest::Client::new();
    let mut replay = client.post(&webhook.url).body(original.body.clone());
    for (name, value) in &original.headers {
        if name.as_str().starts_with("x-toolhost-") || name == "content-type" {
            replay = replay.header(name, value);
        }
    }
    assert_eq!(replay.send().await.unwrap().status(), 401);
    let unsigned = client
        .post(&webhook.url)
        .body(original.body.clone())
        .send()
        .await
        .unwrap();
    assert_eq!(unsigned.status(), 401);
    assert_eq!(webhook.refused(), ["replayed", "unsigned"]);
    // Two identical calls are two deliveries, not a replay.
    assert!(!host.call("create_order", json!({})).await.is_failure());
    assert_eq!(webhook.accepted().len(), 2);
}

#[tokio::test]
async fn a_slow_webhook_times_out_and_the_next_call_is_served() {
    let webhook = WebhookServer::start(SECRET).await;
    let host = host(&webhook).await;
    let started = Instant::now();
    let result = host.call("slow", json!({})).await;
    assert_eq!(code(&result), ErrorCode::Timeout);
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "the 1 s budget was not enforced: {:?}",
        started.elapsed()
    );
    assert!(!host.call("create_order", json!({})).await.is_failure());
}

#[tokio::test]
async fn an_oversized_answer_is_refused() {
    let webhook = WebhookServer::start(SECRET).await;
    let host = host(&webhook).await;
    let result = host.call("huge", json!({})).await;
    assert_eq!(code(&result), ErrorCode::ResourceLimit);
    assert_eq!(
        result.error().unwrap().details.as_ref().unwrap()["maxResponseBytes"],
        65536
    );
    let missing = host.call("missing", json!({})).await;
    assert_eq!(code(&missing), ErrorCode::ToolError);
    assert_eq!(
        missing.error().unwrap().details.as_ref().unwrap()["status"],
        404
    );
}

#[tokio::test]
async fn a_url_off_the_allow_list_does_not_load() {
    let config = toolhost::config::Config::parse(
        &config("http://127.0.0.1:9/hook", SECRET, "10.0.0.0/8:*"),
        std::path::Path::new("t.toml"),
        std::path::Path::new(""),
    )
    .unwrap();
    let runtime = toolhost::runtime::Runtime::new(
        toolhost::runtime::EngineSettings::default(),
        tempfile::tempdir().unwrap().path().to_path_buf(),
    )
    .unwrap();
    let error = toolhost::catalog::Catalog::load(&config, &runtime)
        .await
        .err()
        .expect("refused");
    let message = error.to_string();
    assert!(
        message.contains("webhook orders")
            && message.contains("127.0.0.1:9 is not on host.webhook_allow"),
        "{message}"
    );
}

#[tokio::test]
async fn a_name_on_the_allow_list_never_reaches_loopback() {
    // `localhost` is allowed by name, but names grant public addresses only.
    let webhook = WebhookServer::start(SECRET).await;
    let url = webhook.url.replace("127.0.0.1", "localhost");
    let port = url.split(':').nth(2).unwrap().split('/').next().unwrap();
    let host = TestHost::new(&config(&url, SECRET, &format!("localhost:{port}"))).await;
    let result = host.call("create_order", json!({})).await;
    assert_eq!(code(&result), ErrorCode::PermissionDenied, "{result:?}");
    assert!(webhook.accepted().is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn toolhost_call_serves_a_webhook_tool_from_the_configuration() {
    let webhook = WebhookServer::start(SECRET).await;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("toolhost.toml");
    let text = config(&webhook.url, SECRET, "127.0.0.1:*").replacen(
        "[host]\n",
        &format!(
            "[host]\ndata_dir = \"{}\"\n",
            dir.path().join("data").display()
        ),
        1,
    );
    std::fs::write(&path, text).unwrap();
    let output = tokio::task::spawn_blocking(move || {
        std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
            .args(["call", "create_order", "--format", "legacy", "--args"])
            .arg(r#"{"items":["z"]}"#)
            .arg("--config")
            .arg(&path)
            .output()
            .unwrap()
    })
    .await
    .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let envelope: Value = serde_json::from_slice(&output.stdout).unwrap();
    assert_eq!(envelope["success"], true, "{envelope}");
    assert_eq!(
        envelope["data"],
        json!({"orderId": "A-1001", "items": ["z"]})
    );
}
