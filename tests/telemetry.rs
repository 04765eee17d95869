//! OpenTelemetry traces (#16) from real `toolhost serve` processes, received by
//! an OTLP/HTTP receiver the test runs and decoded with the official
//! OpenTelemetry protobufs (`opentelemetry-proto`): a call carrying a
//! `traceparent` (HTTP header, or `_meta` on HTTP and stdio) arrives as one
//! trace continuing the caller's, with the request, tool call, instantiate,
//! guest, render and store spans parented as `docs/operating.md` shows and
//! their attributes set; the audit line names the same trace; a call without
//! a `traceparent` starts a trace of its own; the spans of the last calls
//! leave at shutdown.

use crate::common;

use std::collections::BTreeMap;
use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use common::host::{guest, root};
use common::mcp_client::{message, modern};
use common::process::Host;
use opentelemetry_proto::tonic::collector::trace::v1::{
    ExportTraceServiceRequest, ExportTraceServiceResponse,
};
use opentelemetry_proto::tonic::common::v1::any_value::Value as Any;
use opentelemetry_proto::tonic::trace::v1::span::SpanKind;
use opentelemetry_proto::tonic::trace::v1::status::StatusCode as SpanStatus;
use prost::Message as _;
use serde_json::{Value, json};

/// One span as received, its ids in hex.
#[derive(Debug, Clone)]
struct Span {
    name: String,
    trace_id: String,
    span_id: String,
    parent_span_id: String,
    kind: i32,
    status: i32,
    attributes: BTreeMap<String, Any>,
    service: String,
}

impl Span {
    fn text(&self, key: &str) -> Option<&str> {
        match self.attributes.get(key)? {
            Any::StringValue(text) => Some(text),
            _ => None,
        }
    }

    fn number(&self, key: &str) -> Option<f64> {
        match self.attributes.get(key)? {
            Any::IntValue(n) => Some(*n as f64),
            Any::DoubleValue(n) => Some(*n),
            _ => None,
        }
    }

    fn flag(&self, key: &str) -> Option<bool> {
        match self.attributes.get(key)? {
            Any::BoolValue(b) => Some(*b),
            _ => None,
        }
    }
}

/// An OTLP/HTTP receiver on a loopback port: `POST /v1/traces` with a
/// protobuf `ExportTraceServiceRequest`.
struct Receiver {
    url: String,
    spans: Arc<Mutex<Vec<Span>>>,
}

impl Receiver {
    async fn start() -> Receiver {
        let spans = Arc::new(Mutex::new(Vec::new()));
        let app = axum::Router::new()
            .route("/v1/traces", axum::routing::post(receive))
            .with_state(spans.clone());
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}", listener.local_addr().unwrap());
        tokio::spawn(async move { axum::serve(listener, app).await });
        Receiver { url, spans }
    }

    /// The spans received, waiting up to 20 s until `enough` holds of them.
    async fn wait_for(&self, what: &str, enough: impl Fn(&[Span]) -> bool) -> Vec<Span> {
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let spans = self.spans.lock().unwrap().clone();
            if enough(&spans) {
                return spans;
            }
            assert!(
                Instant::now() < deadline,
                "{what} did not arrive within 20 s; received: {:#?}",
                spans
                    .iter()
                    .map(|s| (&s.name, &s.trace_id))
                    .collect::<Vec<_>>()
            );
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

async fn receive(
    State(spans): State<Arc<Mutex<Vec<Span>>>>,
    headers: axum::http::HeaderMap,
    body: Bytes,
) -> (StatusCode, Vec<u8>) {
    assert_eq!(
        headers.get("content-type").and_then(|v| v.to_str().ok()),
        Some("application/x-protobuf")
    );
    let request = ExportTraceServiceRequest::decode(body).expect("an OTLP protobuf request");
    let mut received = spans.lock().unwrap();
    for resource in request.resource_spans {
        let service = resource
            .resource
            .iter()
            .flat_map(|r| &r.attributes)
            .find(|kv| kv.key == "service.name")
            .and_then(|kv| match kv.value.as_ref()?.value.as_ref()? {
                Any::StringValue(name) => Some(name.clone()),
                _ => None,
            })
            .unwrap_or_default();
        for scope in resource.scope_spans {
            for span in scope.spans {
                received.push(Span {
                    name: span.name,
                    trace_id: hex::encode(&span.trace_id),
                    span_id: hex::encode(&span.span_id),
                    parent_span_id: hex::encode(&span.parent_span_id),
                    kind: span.kind,
                    status: span.status.map_or(0, |s| s.code),
                    attributes: span
                        .attributes
                        .into_iter()
                        .filter_map(|kv| Some((kv.key, kv.value?.value?)))
                        .collect(),
                    service: service.clone(),
                });
            }
        }
    }
    (
        StatusCode::OK,
        ExportTraceServiceResponse::default().encode_to_vec(),
    )
}

fn random_hex(bytes: usize) -> String {
    let mut buffer = vec![0u8; bytes];
    getrandom::fill(&mut buffer).unwrap();
    hex::encode(buffer)
}

/// A caller's trace context: (trace id, span id, `traceparent`).
fn caller_context() -> (String, String, String) {
    let (trace, span) = (random_hex(16), random_hex(8));
    let header = format!("00-{trace}-{span}-01");
    (trace, span, header)
}

fn named<'a>(spans: &'a [Span], trace: &str, name: &str) -> &'a Span {
    spans
        .iter()
        .find(|s| s.trace_id == trace && s.name == name)
        .unwrap_or_else(|| {
            panic!(
                "no span {name:?} in trace {trace}; the trace has: {:?}",
                spans
                    .iter()
                    .filter(|s| s.trace_id == trace)
                    .map(|s| &s.name)
                    .collect::<Vec<_>>()
            )
        })
}

fn has(spans: &[Span], trace: &str, name: &str) -> bool {
    spans.iter().any(|s| s.trace_id == trace && s.name == name)
}

fn config(
    dir: &std::path::Path,
    receiver: &Receiver,
    audit: &std::path::Path,
) -> std::path::PathBuf {
    let path = dir.join("toolhost.toml");
    std::fs::write(
        &path,
        format!(
            "[host]\ndata_dir = \"{d}/data\"\nsize_limit = 4096\naudit = \"{audit}\"\n\
             [store]\nkind = \"sqlite\"\npath = \"{d}/r.sqlite3\"\nsigning_key_file = \"{d}/k\"\n\
             [telemetry]\notlp_endpoint = \"{otlp}\"\nservice_name = \"toolhost-under-test\"\n\
             [[plugin]]\npath = \"{calc}\"\n\
             [[plugin]]\npath = \"{bulk}\"\n",
            d = dir.display(),
            audit = audit.display(),
            otlp = receiver.url,
            calc = guest("calc").display(),
            bulk = guest("bulk").display(),
        ),
    )
    .unwrap();
    path
}

/// The audit lines written so far, as JSON.
fn audit_lines(path: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn an_http_call_continues_the_callers_trace_from_the_header_or_meta() {
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let config = config(dir.path(), &receiver, &audit);
    let mut host = Host::start_with(
        &config,
        "warn",
        &[("OTEL_BSP_SCHEDULE_DELAY", "200")],
        Duration::from_secs(120),
    );

    // 1. The header's traceparent: the HTTP span continues it, the rest nest.
    let (trace, caller_span, header) = caller_context();
    let answer = message(
        modern(
            "tools/call",
            Some("add"),
            json!({"name": "add", "arguments": {"a": 2, "b": 3}}),
            None,
            &host.url,
        )
        .header("traceparent", &header)
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert!(answer["result"].is_object(), "{answer}");
    let spans = receiver
        .wait_for("the spans of the header's trace", |spans| {
            [
                "POST /mcp",
                "tools/call add",
                "call",
                "instantiate",
                "guest",
                "render",
            ]
            .iter()
            .all(|name| has(spans, &trace, name))
        })
        .await;
    let http = named(&spans, &trace, "POST /mcp");
    let request = named(&spans, &trace, "tools/call add");
    let call = named(&spans, &trace, "call");
    assert_eq!(http.parent_span_id, caller_span, "{http:?}");
    assert_eq!(http.kind, SpanKind::Server as i32);
    assert_eq!(http.text("http.request.method"), Some("POST"));
    assert_eq!(
        http.number("http.response.status_code"),
        Some(200.0),
        "{http:?}"
    );
    assert_eq!(request.parent_span_id, http.span_id);
    assert_eq!(request.kind, SpanKind::Server as i32);
    assert_eq!(request.text("mcp.method.name"), Some("tools/call"));
    assert_eq!(request.text("gen_ai.tool.name"), Some("add"));
    assert_eq!(request.text("toolhost.plugin"), Some("calc"));
    assert_eq!(request.text("toolhost.outcome"), Some("ok"));
    assert_eq!(request.flag("toolhost.offloaded"), Some(false));
    assert!(
        request.number("toolhost.rendered_bytes").unwrap() > 20.0,
        "{request:?}"
    );
    assert_ne!(request.status, SpanStatus::Error as i32);
    assert_eq!(call.parent_span_id, request.span_id);
    assert!(
        call.number("toolhost.instance_ms").unwrap() > 0.0,
        "{call:?}"
    );
    assert!(
        call.text("call_id").is_some_and(|id| id.len() == 16),
        "{call:?}"
    );
    for child in ["instantiate", "guest"] {
        assert_eq!(
            named(&spans, &trace, child).parent_span_id,
            call.span_id,
            "{child}"
        );
    }
    assert_eq!(
        named(&spans, &trace, "render").parent_span_id,
        request.span_id
    );
    assert!(spans.iter().all(|s| s.service == "toolhost-under-test"));

    // 2. `_meta`'s traceparent, no header: the MCP span continues it; a result
    // over the size limit adds the store span under render.
    let (meta_trace, meta_span, meta_header) = caller_context();
    let mut params = json!({"name": "bulk", "arguments": {"count": 200}});
    let mut request = modern("tools/call", Some("bulk"), params.clone(), None, &host.url);
    // `modern` writes its own `_meta`; add the traceparent beside it.
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
        "traceparent": meta_header,
    });
    request =
        request.json(&json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params}));
    let answer = message(request.send().await.unwrap()).await;
    assert!(answer["result"].is_object(), "{answer}");
    let spans = receiver
        .wait_for("the spans of the _meta trace", |spans| {
            has(spans, &meta_trace, "store") && has(spans, &meta_trace, "tools/call bulk")
        })
        .await;
    let request = named(&spans, &meta_trace, "tools/call bulk");
    let render = named(&spans, &meta_trace, "render");
    assert_eq!(request.parent_span_id, meta_span);
    assert_eq!(request.flag("toolhost.offloaded"), Some(true));
    assert_eq!(render.parent_span_id, request.span_id);
    assert_eq!(
        named(&spans, &meta_trace, "store").parent_span_id,
        render.span_id
    );
    assert!(
        !has(&spans, &meta_trace, "POST /mcp"),
        "the HTTP span keeps the header's (absent) trace"
    );

    // 3. No traceparent: a trace of the host's own, whose root is the HTTP span;
    // a failed call marks its span as an error with the code.
    let answer = message(
        modern(
            "tools/call",
            Some("add"),
            json!({"name": "add", "arguments": {"a": "x"}}),
            None,
            &host.url,
        )
        .send()
        .await
        .unwrap(),
    )
    .await;
    assert_eq!(answer["result"]["isError"], true, "{answer}");
    let spans = receiver
        .wait_for("the failed call's spans", |spans| {
            spans.iter().any(|s| {
                s.name == "tools/call add"
                    && s.text("toolhost.outcome") == Some("invalid_arguments")
            })
        })
        .await;
    let failed = spans
        .iter()
        .find(|s| s.text("toolhost.outcome") == Some("invalid_arguments"))
        .unwrap();
    assert_eq!(failed.status, SpanStatus::Error as i32);
    assert_eq!(failed.text("error.type"), Some("invalid_arguments"));
    let own = named(&spans, &failed.trace_id, "POST /mcp");
    assert!(own.parent_span_id.is_empty(), "{own:?}");
    assert!(failed.trace_id != trace && failed.trace_id != meta_trace);

    // The compile spans of the start, in traces of their own.
    let compiled: Vec<&Span> = spans.iter().filter(|s| s.name == "compile").collect();
    assert!(
        compiled
            .iter()
            .any(|s| s.text("toolhost.plugin") == Some("calc")),
        "{compiled:?}"
    );

    // The audit log names each call's trace.
    host.signal(libc::SIGTERM);
    assert!(host.wait_exit(Duration::from_secs(20)).success());
    let lines = audit_lines(&audit);
    let traces: Vec<&str> = lines
        .iter()
        .filter_map(|l| l["trace_id"].as_str())
        .collect();
    assert_eq!(
        traces,
        [
            trace.as_str(),
            meta_trace.as_str(),
            failed.trace_id.as_str()
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stdio_call_continues_the_meta_trace_and_its_spans_leave_at_exit() {
    let receiver = Receiver::start().await;
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let config = config(dir.path(), &receiver, &audit);
    // A schedule far beyond the test: only the exit's flush sends the spans.
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["serve", "--config"])
        .arg(&config)
        .env("TOOLHOST_LOG", "warn")
        .env("OTEL_BSP_SCHEDULE_DELAY", "600000")
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let (trace, caller_span, header) = caller_context();
    let mut send = move |message: Value| {
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    };
    let mut next_answer = || -> Value {
        let mut line = String::new();
        loop {
            line.clear();
            assert!(stdout.read_line(&mut line).unwrap() > 0, "stdout ended");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message.get("id").is_some() {
                return message;
            }
        }
    };
    send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "telemetry-test", "version": "1"}}}),
    );
    assert!(next_answer()["result"].is_object());
    send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
    send(
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
        "name": "add", "arguments": {"a": 1, "b": 2}, "_meta": {"traceparent": header}}}),
    );
    let answer = next_answer();
    assert_eq!(answer["result"]["structuredContent"]["sum"], 3, "{answer}");
    assert!(
        receiver.spans.lock().unwrap().is_empty(),
        "nothing is sent before the schedule or the exit"
    );
    drop(send);
    let status = child.wait().unwrap();
    assert!(status.success(), "{status}");
    let spans = receiver
        .wait_for("the stdio call's spans", |spans| {
            has(spans, &trace, "tools/call add") && has(spans, &trace, "guest")
        })
        .await;
    let request = named(&spans, &trace, "tools/call add");
    assert_eq!(request.parent_span_id, caller_span);
    assert_eq!(
        named(&spans, &trace, "call").parent_span_id,
        request.span_id
    );
    assert!(!has(&spans, &trace, "POST /mcp"));
    assert_eq!(audit_lines(&audit)[0]["trace_id"], trace.as_str());
}

#[tokio::test(flavor = "multi_thread")]
async fn an_endpoint_that_does_not_answer_is_named_once_and_calls_go_on() {
    // A port nothing listens on: bound, then closed.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        format!("http://{}", listener.local_addr().unwrap())
    };
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        format!(
            "[host]\ndata_dir = \"{d}/data\"\n[telemetry]\notlp_endpoint = \"{closed}\"\n\
             [[plugin]]\npath = \"{calc}\"\n",
            d = dir.path().display(),
            calc = guest("calc").display(),
        ),
    )
    .unwrap();
    let host = Host::start_with(
        &config,
        "warn",
        &[("OTEL_BSP_SCHEDULE_DELAY", "100")],
        Duration::from_secs(120),
    );
    for round in 0..3 {
        let answer = common::attack::call(&host.url, "add", json!({"a": round, "b": 1})).await;
        assert_eq!(
            answer["result"]["structuredContent"]["sum"],
            round + 1,
            "{answer}"
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    host.wait_for_log("naming the failed export", |line| {
        line.contains("trace_export_failed") && line.contains("cannot send traces")
    });
    let warnings = host
        .log_lines()
        .iter()
        .filter(|line| line.contains("trace_export_failed"))
        .count();
    assert_eq!(warnings, 1, "one warning for the run of failures");
}
