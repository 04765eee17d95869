//! What a client receives is what the mapper wrote: running servers (stdio in the
//! handshake era, Streamable HTTP in a session of each handshake revision, on a
//! stream the client resumed, and without a session in 2026-07-28) answer calls
//! whose results are
//! samples of the golden matrix, and the `result` member of each JSON-RPC
//! response is compared byte for byte with the sample rendered in process, as
//! `tests/golden_matrix.rs` pins it.
//!
//! The samples come back through an app webhook that answers each tool with its
//! sample in the versioned result format, and through a component built against
//! the frozen `toolhost:plugin@0.1.0` (`guest-examples/samples-v0-1`), which
//! must keep sending the golden bytes whatever newer package the host speaks.
//! Two values the host stamps on every
//! call cannot be known beforehand: the call's duration, and the generation time
//! of a result that has none. The test reads both from the response and renders
//! the sample in process with the same two values; every other byte must match.

use crate::common;

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;

use axum::body::Bytes;
use axum::extract::State;
use serde_json::{Value, json};
use toolhost::render::format::encode;
use toolhost::render::{Mapper, OutputMode, RenderContext, Revision, ServerInfo, Target};
use toolhost::result::ToolResult;
use toolhost::samples::{self, Sample};

/// The samples served: parts of every kind, extensions, fixed timestamps, data
/// that is no object (wrapped before 2026-07-28), a failure.
const SAMPLES: [&str; 5] = [
    "mixed-content",
    "extension-metadata",
    "timestamps",
    "success-scalar",
    "failure-tool-error",
];

fn samples() -> Vec<Sample> {
    samples_named(&SAMPLES)
}

/// An app webhook answering tool `<sample>` with `{"format": N, "result": ..}`
/// of that sample (it does not check signatures: the host's are tested in
/// `tests/webhooks.rs`). Returns its URL.
async fn webhook(samples: &[Sample]) -> String {
    webhook_after(samples, std::time::Duration::ZERO).await
}

/// [`webhook`], answering each call after `delay`.
async fn webhook_after(samples: &[Sample], delay: std::time::Duration) -> String {
    let answers: HashMap<String, String> = samples
        .iter()
        .map(|sample| {
            let (version, body) = encode(&sample.result);
            let answer = format!("{{\"format\":{},\"result\":{body}}}", version.number());
            (sample.name.to_owned(), answer)
        })
        .collect();
    type Answers = (Arc<HashMap<String, String>>, std::time::Duration);
    async fn answer(State((answers, delay)): State<Answers>, body: Bytes) -> String {
        tokio::time::sleep(delay).await;
        let request: Value = serde_json::from_slice(&body).unwrap();
        answers[request["tool"].as_str().unwrap()].clone()
    }
    let app = axum::Router::new()
        .route("/hook", axum::routing::post(answer))
        .with_state((Arc::new(answers), delay));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
    format!("http://{addr}/hook")
}

/// A configuration serving each sample as a webhook tool of its name.
fn config(url: &str, samples: &[Sample]) -> tempfile::NamedTempFile {
    let mut text = format!(
        "[host]\ndata_dir = \"{}\"\nwebhook_allow = [\"127.0.0.1:*\"]\n\n\
         [[webhook]]\nname = \"samples\"\nurl = \"{url}\"\nsecret = \"a shared secret of enough length\"\n",
        common::host::root().join("target/test-data").display()
    );
    for sample in samples {
        assert!(
            sample.output_schema.is_none(),
            "{}: a served sample declares no output schema",
            sample.name
        );
        text.push_str(&format!(
            "[[webhook.tool]]\nname = \"{}\"\ndescription = \"{}\"\n",
            sample.name, sample.about
        ));
    }
    let mut file = tempfile::NamedTempFile::new().unwrap();
    file.write_all(text.as_bytes()).unwrap();
    file
}

/// The `result` member of a JSON-RPC response line, as the bytes it was sent as.
fn result_bytes(line: &str) -> &str {
    let message: Value = serde_json::from_str(line).unwrap();
    assert!(message.get("error").is_none(), "an error: {line}");
    let (head, rest) = line
        .split_once(",\"result\":")
        .unwrap_or_else(|| panic!("no result member in {line}"));
    assert!(head.starts_with("{\"jsonrpc\":\"2.0\",\"id\":"), "{line}");
    let result = rest.strip_suffix('}').unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(result).unwrap(),
        message["result"]
    );
    result
}

/// `sample` rendered in process for `target`, with the duration and generation
/// time the server stamped on the `received` result.
async fn expected(sample: &Sample, target: Target, received: &Value) -> String {
    let meta = &received["_meta"];
    let duration = meta["dev.toolhost/durationMs"]
        .as_f64()
        .expect("the server stamps the duration");
    let generated: jiff::Timestamp = meta["dev.toolhost/generatedAt"]
        .as_str()
        .expect("every result says when it was generated")
        .parse()
        .unwrap();
    let result: ToolResult = sample.result.to_builder().duration_ms(duration).build();
    let mut ctx = RenderContext::new(sample.name, generated);
    ctx.server = Some(ServerInfo {
        name: "toolhost",
        version: env!("CARGO_PKG_VERSION"),
    });
    let rendered = Mapper::default().render(&result, target, &ctx).await;
    assert!(!rendered.offloaded);
    rendered.rendering.to_json()
}

/// The samples of `names`.
fn samples_named(names: &[&str]) -> Vec<Sample> {
    let all = samples::all();
    names
        .iter()
        .map(|name| {
            all.iter()
                .find(|s| s.name == *name)
                .unwrap_or_else(|| panic!("no sample {name}"))
                .clone()
        })
        .collect()
}

/// Calls each of `samples` (a tool of its name) on a stdio server of `config`,
/// in each handshake-era revision and output mode, and compares the bytes sent
/// with the sample rendered in process.
async fn stdio_sends_the_samples(config: &std::path::Path, samples: &[Sample], served_by: &str) {
    for revision in [
        Revision::V2024_11_05,
        Revision::V2025_03_26,
        Revision::V2025_06_18,
        Revision::V2025_11_25,
    ] {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolhost"))
            .args(["serve", "--config"])
            .arg(config)
            .env("TOOLHOST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        let mut send = |message: Value| {
            writeln!(stdin, "{message}").unwrap();
            stdin.flush().unwrap();
        };
        send(
            json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": revision.as_str(), "capabilities": {},
            "clientInfo": {"name": "wire-test", "version": "1"}}}),
        );
        let init = lines.next().unwrap().unwrap();
        assert!(init.contains(revision.as_str()), "{init}");
        send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        let mut id = 0;
        for sample in samples {
            for mode in OutputMode::ALL {
                id += 1;
                send(
                    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
                    "name": sample.name, "arguments": {},
                    "_meta": {"dev.toolhost/outputMode": mode.as_str()}}}),
                );
                let line = lines.next().unwrap().unwrap();
                let sent = result_bytes(&line);
                let target = Target::Mcp { revision, mode };
                let want = expected(sample, target, &serde_json::from_str(sent).unwrap()).await;
                assert_eq!(
                    sent, want,
                    "{} as {target} over stdio, from {served_by}",
                    sample.name
                );
            }
        }
        drop(stdin);
        child.wait().unwrap();
    }
}

// The webhook answers on the runtime's other thread while this one blocks
// reading the server's output.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stdio_sends_the_bytes_the_mapper_wrote() {
    let samples = samples();
    let config = config(&webhook(&samples).await, &samples);
    stdio_sends_the_samples(config.path(), &samples, "a webhook").await;
}

/// A component built against `toolhost:plugin@0.1.0` (before the package moved
/// on) reaches clients exactly as the golden files have its results.
#[tokio::test]
async fn a_component_built_against_0_1_0_sends_the_golden_bytes() {
    let samples = samples_named(&[
        "mixed-content",
        "extension-metadata",
        "timestamps",
        "success-scalar",
        "failure-tool-error",
        "pagination-dry-run",
        "stored-link",
        "summary-only",
    ]);
    let text = format!(
        "[host]\ndata_dir = \"{}\"\n\n[[plugin]]\npath = \"{}\"\n",
        common::host::root().join("target/test-data").display(),
        common::host::guest("samples_v0_1").display()
    );
    let mut config = tempfile::NamedTempFile::new().unwrap();
    config.write_all(text.as_bytes()).unwrap();
    stdio_sends_the_samples(config.path(), &samples, "a 0.1.0 component").await;
}

#[tokio::test]
async fn streamable_http_sends_the_bytes_the_mapper_wrote() {
    let samples = samples();
    let config = config(&webhook(&samples).await, &samples);
    let host = common::process::Host::start(config.path());
    let revision = Revision::V2026_07_28;
    for sample in &samples {
        for mode in OutputMode::ALL {
            let response = common::mcp_client::modern(
                "tools/call",
                Some(sample.name),
                json!({"name": sample.name, "arguments": {}}),
                None,
                &host.url,
            )
            .header("x-toolhost-output-mode", mode.as_str())
            .send()
            .await
            .unwrap();
            let body = response.text().await.unwrap();
            // A JSON body, or the one SSE event that carries the response.
            let line = if body.starts_with('{') {
                body.as_str()
            } else {
                body.lines()
                    .filter_map(|line| line.strip_prefix("data: "))
                    .find(|data| data.contains("\"result\""))
                    .unwrap_or_else(|| panic!("no response in {body}"))
            };
            let sent = result_bytes(line);
            let target = Target::Mcp { revision, mode };
            let want = expected(sample, target, &serde_json::from_str(sent).unwrap()).await;
            assert_eq!(sent, want, "{} as {target} over HTTP", sample.name);
        }
    }
}

/// The `result` line of an SSE body: the `data:` of the event that carries it.
fn result_line(body: &str) -> &str {
    body.lines()
        .filter_map(|line| line.strip_prefix("data: "))
        .find(|data| data.contains("\"result\""))
        .unwrap_or_else(|| panic!("no response in {body}"))
}

#[tokio::test]
async fn a_session_sends_the_bytes_the_mapper_wrote() {
    let samples = samples();
    let config = config(&webhook(&samples).await, &samples);
    let host = common::process::Host::start(config.path());
    for revision in Revision::ALL.into_iter().filter(|r| !r.is_stateless()) {
        let version = revision.as_str();
        let session = common::mcp_client::open_session(&host.url, version, None).await;
        for (n, sample) in samples.iter().enumerate() {
            for mode in OutputMode::ALL {
                let call = json!({"jsonrpc": "2.0", "id": 10 + n, "method": "tools/call", "params": {"name": sample.name, "arguments": {}}});
                let response =
                    common::mcp_client::in_session(&host.url, version, None, Some(&session), call)
                        .header("x-toolhost-output-mode", mode.as_str())
                        .send()
                        .await
                        .unwrap();
                assert_eq!(response.status(), 200, "{version}");
                let body = response.text().await.unwrap();
                let sent = result_bytes(result_line(&body));
                let target = Target::Mcp { revision, mode };
                let want = expected(sample, target, &serde_json::from_str(sent).unwrap()).await;
                assert_eq!(sent, want, "{} as {target} in a session", sample.name);
            }
        }
    }
}

#[tokio::test]
async fn a_result_sent_after_the_client_resumed_its_stream_is_the_mappers_text() {
    let samples = samples_named(&["mixed-content"]);
    let sample = &samples[0];
    let hook = webhook_after(&samples, std::time::Duration::from_millis(700)).await;
    let config = config(&hook, &samples);
    let host = common::process::Host::start(config.path());
    for revision in Revision::ALL.into_iter().filter(|r| !r.is_stateless()) {
        let version = revision.as_str();
        let session = common::mcp_client::open_session(&host.url, version, None).await;
        let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": sample.name, "arguments": {}}});
        let mut posted =
            common::mcp_client::in_session(&host.url, version, None, Some(&session), call)
                .send()
                .await
                .unwrap();
        assert_eq!(posted.status(), 200, "{version}");
        // The stream's first event names it; then the client loses it, while
        // the call still runs.
        let mut head = String::new();
        while !head.contains("\n\n") {
            let chunk = posted.chunk().await.unwrap().expect("the priming event");
            head.push_str(std::str::from_utf8(&chunk).unwrap());
        }
        drop(posted);
        let first = head
            .lines()
            .find_map(|line| line.strip_prefix("id: "))
            .unwrap_or_else(|| panic!("no event id in {head}"));
        let resumed = reqwest::Client::new()
            .get(&host.url)
            .header("accept", "text/event-stream")
            .header("mcp-protocol-version", version)
            .header("mcp-session-id", &session)
            .header("last-event-id", first)
            .send()
            .await
            .unwrap();
        assert_eq!(resumed.status(), 200, "{version}: resume");
        let body = resumed.text().await.unwrap();
        let sent = result_bytes(result_line(&body));
        let target = Target::Mcp {
            revision,
            mode: OutputMode::default(),
        };
        let want = expected(sample, target, &serde_json::from_str(sent).unwrap()).await;
        assert_eq!(
            sent, want,
            "{} as {target} on a resumed stream",
            sample.name
        );
    }
}
