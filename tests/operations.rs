//! Running it in production (issue #16): health probes, graceful shutdown and
//! rate limits, against the release binary (`toolhost serve`, over HTTP as a
//! process of [`common::process::Host`] and over stdio), spoken to by a real
//! HTTP client or raw JSON-RPC on its pipes, stopped with real signals.
//!
//! - `/healthz` and `/readyz` need no token and name no tool, principal or
//!   setting; `/readyz` turns 503, naming the store, once the PostgreSQL server
//!   behind the store stops (this binary's private cluster, which no other test
//!   here uses).
//! - SIGTERM while slow calls run (the conformance guest's
//!   `test_tool_with_progress`, ~100 ms each, sent SIGTERM once each call has
//!   reported its first progress): every call gets its whole answer, the process
//!   exits 0, and a call after the signal is refused.
//! - A burst over a principal's bucket gets 429 with `Retry-After` and a JSON-RPC
//!   error; calls under it, another principal's, and requests without a token do
//!   not touch it; after the wait the caller is served again. On stdio the same
//!   limit is a JSON-RPC error `-32029` with the wait in its data.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use common::host::guest;
use common::mcp_client::{message, modern, sse_messages};
use common::process::Host;
use serde_json::{Value, json};

const SLOW_TOOL: &str = "test_tool_with_progress";
const SLOW_ANSWER: &str = "Progress test completed.";
const FAST_TOOL: &str = "test_simple_text";

/// A configuration file in a fresh directory: `extra` goes into `[host]`
/// (before any table), `tables` after the plugin.
fn config(dir: &Path, host_keys: &str, tables: &str) -> PathBuf {
    let text = format!(
        "[host]\ndata_dir = \"{data}\"\n{host_keys}\n\n[[plugin]]\npath = \"{conformance}\"\n\n{tables}\n",
        data = dir.join("data").display(),
        conformance = guest("conformance").display(),
    );
    let path = dir.join("toolhost.toml");
    std::fs::write(&path, text).unwrap();
    path
}

fn base(url: &str) -> String {
    url.trim_end_matches("/mcp").to_owned()
}

const TOKENS: &str = "[[token]]\ntoken = \"secret-a\"\nprincipal = \"alice\"\n\
                      [[token]]\ntoken = \"secret-b\"\nprincipal = \"bob\"\n";

#[tokio::test(flavor = "multi_thread")]
async fn the_probes_need_no_token_and_tell_nothing_else() {
    let dir = tempfile::tempdir().unwrap();
    let host = Host::start(&config(dir.path(), "", TOKENS));
    let client = reqwest::Client::new();
    let alive = client
        .get(format!("{}/healthz", base(&host.url)))
        .send()
        .await
        .unwrap();
    assert_eq!(alive.status(), 200);
    assert_eq!(
        alive.json::<Value>().await.unwrap(),
        json!({"status": "ok"})
    );
    let ready = client
        .get(format!("{}/readyz", base(&host.url)))
        .send()
        .await
        .unwrap();
    assert_eq!(ready.status(), 200);
    let body = ready.text().await.unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap(),
        json!({"status": "ready", "checks": {"catalog": "ok", "store": "ok"}})
    );
    for secret in ["alice", "bob", "secret", "test_", "conformance", "sqlite"] {
        assert!(!body.contains(secret), "{secret} in {body}");
    }
    // The MCP endpoint still needs a token.
    let refused = modern("tools/list", None, json!({}), None, &host.url)
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 401);
}

#[tokio::test(flavor = "multi_thread")]
async fn readyz_turns_503_naming_the_store_when_postgres_stops() {
    let dir = tempfile::tempdir().unwrap();
    // A server of its own: the test stops it.
    let postgres = common::postgres::private("readyz").await;
    let url = postgres.database().await;
    let ca = postgres.ca_file();
    let store = format!(
        "[store]\nkind = \"postgres\"\nurl = \"{url}\"\nca_file = \"{}\"\n",
        ca.display()
    );
    let host = Host::start(&config(dir.path(), "", &store));
    let readyz = format!("{}/readyz", base(&host.url));
    let client = reqwest::Client::new();
    let ready = client.get(&readyz).send().await.unwrap();
    assert_eq!(ready.status(), 200);

    postgres.stop().await;
    let response = client.get(&readyz).send().await.unwrap();
    assert_eq!(response.status(), 503);
    let body: Value = response.json().await.unwrap();
    assert_eq!(body["status"], "not_ready");
    assert_eq!(body["checks"]["catalog"], "ok");
    assert_ne!(body["checks"]["store"], "ok", "{body}");
    assert!(!body.to_string().contains("postgres"), "{body}");
    // Alive all the same: only readiness depends on the store.
    let alive = client
        .get(format!("{}/healthz", base(&host.url)))
        .send()
        .await
        .unwrap();
    assert_eq!(alive.status(), 200);
    host.wait_for_log("naming the unreachable store", |l| {
        l.contains("not_ready") && l.contains("result store")
    });
}

/// A 2026-07-28 `tools/call` of `tool` with a progress token.
fn call_with_progress(url: &str, tool: &str, token: &str) -> reqwest::RequestBuilder {
    reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", tool)
        .json(&json!({
            "jsonrpc": "2.0", "id": token, "method": "tools/call",
            "params": {"name": tool, "arguments": {}, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
                "progressToken": token,
            }},
        }))
}

/// The text of a CallToolResult message: its last text block (in compat mode
/// the legacy envelope comes first).
fn answer_text(message: &Value) -> &str {
    assert!(message["result"]["isError"] != true, "{message}");
    message["result"]["content"]
        .as_array()
        .and_then(|blocks| blocks.iter().rev().find_map(|b| b["text"].as_str()))
        .unwrap_or_else(|| panic!("no text in {message}"))
}

#[tokio::test(flavor = "multi_thread")]
async fn sigterm_over_http_lets_every_call_in_flight_answer_then_exits_0() {
    const CALLS: usize = 4;
    let dir = tempfile::tempdir().unwrap();
    let mut host = Host::start_logging(&config(dir.path(), "drain_secs = 20", ""), "info");
    // Each call streams: it is in flight once its first progress arrived.
    let (started, mut in_flight) = tokio::sync::mpsc::channel(CALLS);
    let mut calls = Vec::new();
    for n in 0..CALLS {
        let (url, started) = (host.url.clone(), started.clone());
        calls.push(tokio::spawn(async move {
            let mut response = call_with_progress(&url, SLOW_TOOL, &format!("call-{n}"))
                .send()
                .await
                .unwrap();
            assert_eq!(response.status(), 200);
            let mut text = String::new();
            let mut told = false;
            while let Some(chunk) = response.chunk().await.unwrap() {
                text.push_str(std::str::from_utf8(&chunk).unwrap());
                if !told
                    && sse_messages(&text)
                        .iter()
                        .any(|m| m["method"] == "notifications/progress")
                {
                    told = true;
                    started.send(()).await.unwrap();
                }
            }
            sse_messages(&text)
                .into_iter()
                .find(|m| m.get("id").is_some())
                .unwrap_or_else(|| panic!("call-{n}: no answer in {text}"))
        }));
    }
    for _ in 0..CALLS {
        in_flight.recv().await.unwrap();
    }
    host.signal(libc::SIGTERM);
    let line = host.wait_for_log("of the drain", |l| {
        l.contains("finishing the calls in flight")
    });
    assert!(
        !line.contains("in_flight=0"),
        "the drain started with no call in flight: {line}"
    );
    // A call after the signal: the listener is closed (or, racing it, 503).
    match modern(
        "tools/call",
        Some(FAST_TOOL),
        json!({"name": FAST_TOOL, "arguments": {}}),
        None,
        &host.url,
    )
    .send()
    .await
    {
        // Refused, or reset while the listener closes.
        Err(error) => assert!(error.is_connect() || error.is_request(), "{error}"),
        Ok(response) => assert_eq!(response.status(), 503),
    }
    for (n, call) in calls.into_iter().enumerate() {
        let message = call.await.unwrap();
        assert_eq!(message["id"], format!("call-{n}"));
        assert_eq!(answer_text(&message), SLOW_ANSWER, "{message}");
    }
    let status = host.wait_exit(Duration::from_secs(30));
    assert_eq!(status.code(), Some(0), "{status:?}");
    host.wait_for_log("that the drain ended", |l| {
        l.contains("every call in flight answered")
    });
}

/// `toolhost serve` over stdio, its stdout read line by line on a thread.
struct Stdio_ {
    child: Child,
    lines: Receiver<Value>,
}

impl Stdio_ {
    fn start(config: &Path) -> Stdio_ {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolhost"))
            .args(["serve", "--config"])
            .arg(config)
            .env("TOOLHOST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in stdout.lines().map_while(Result::ok) {
                let message = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}"));
                if sender.send(message).is_err() {
                    break;
                }
            }
        });
        let mut stdio = Stdio_ { child, lines };
        stdio.send(
            &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "operations-test", "version": "1"},
            }}),
        );
        let initialized = stdio.next().expect("an initialize result");
        assert!(initialized.get("result").is_some(), "{initialized}");
        stdio.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        stdio
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.child.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// The next message, or `None` when stdout ended (or 30 s passed).
    fn next(&mut self) -> Option<Value> {
        self.lines.recv_timeout(Duration::from_secs(30)).ok()
    }

    fn call(&mut self, id: &str, tool: &str, meta: Value) {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": tool, "arguments": {}, "_meta": meta}}));
    }

    fn wait_exit(&mut self, within: Duration) -> std::process::ExitStatus {
        common::process::wait_exit(&mut self.child, within, || {
            "(stderr is not captured over stdio)".to_owned()
        })
    }
}

impl Drop for Stdio_ {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn sigterm_over_stdio_lets_every_call_in_flight_answer_then_exits_0() {
    const CALLS: usize = 3;
    let dir = tempfile::tempdir().unwrap();
    let mut stdio = Stdio_::start(&config(dir.path(), "drain_secs = 20", ""));
    for n in 0..CALLS {
        stdio.call(
            &format!("call-{n}"),
            SLOW_TOOL,
            json!({"progressToken": format!("call-{n}")}),
        );
    }
    // Every call is in flight once its first progress arrived.
    let mut started = std::collections::BTreeSet::new();
    let mut answers = Vec::new();
    while started.len() < CALLS {
        let message = stdio.next().expect("progress from every call");
        if message["method"] == "notifications/progress" {
            started.insert(message["params"]["progressToken"].to_string());
        } else if message.get("id").is_some() {
            answers.push(message);
        }
    }
    assert!(
        answers.len() < CALLS,
        "every call answered before the signal: nothing was in flight"
    );
    // SAFETY: kill only signals the child this test started.
    assert_eq!(
        unsafe { libc::kill(stdio.child.id() as i32, libc::SIGTERM) },
        0
    );
    while let Some(message) = stdio.next() {
        if message.get("id").is_some() {
            answers.push(message);
        }
    }
    answers.sort_by_key(|m| m["id"].as_str().unwrap().to_owned());
    assert_eq!(answers.len(), CALLS, "{answers:?}");
    for (n, message) in answers.iter().enumerate() {
        assert_eq!(message["id"], format!("call-{n}"));
        assert_eq!(answer_text(message), SLOW_ANSWER, "{message}");
    }
    let status = stdio.wait_exit(Duration::from_secs(30));
    assert_eq!(status.code(), Some(0), "{status:?}");
}

/// A tools/call as `bearer`: the status, `Retry-After` and the JSON-RPC message.
async fn limited_call(url: &str, bearer: Option<&str>) -> (u16, Option<String>, Value) {
    let response = modern(
        "tools/call",
        Some(FAST_TOOL),
        json!({"name": FAST_TOOL, "arguments": {}}),
        bearer,
        url,
    )
    .send()
    .await
    .unwrap();
    let status = response.status().as_u16();
    let retry = response
        .headers()
        .get("retry-after")
        .map(|v| v.to_str().unwrap().to_owned());
    let body = if status == 401 {
        Value::Null
    } else {
        message(response).await
    };
    (status, retry, body)
}

#[tokio::test(flavor = "multi_thread")]
async fn over_its_rate_limit_a_principal_gets_429_with_retry_after_and_others_do_not() {
    let dir = tempfile::tempdir().unwrap();
    // alice: 3 at once, then one every 2 s; bob: the default, 1 per minute, 5 at once.
    let limits = format!(
        "{TOKENS}\n[host.rate_limits]\ndefault = {{ per_minute = 1, burst = 5 }}\n\
         principals.alice = {{ per_minute = 30, burst = 3 }}\n"
    );
    let host = Host::start(&config(dir.path(), "", &limits));
    // Requests without a valid token never reach a bucket.
    for bearer in [None, Some("wrong")] {
        for _ in 0..10 {
            assert_eq!(limited_call(&host.url, bearer).await.0, 401);
        }
    }
    for _ in 0..3 {
        let (status, retry, body) = limited_call(&host.url, Some("secret-a")).await;
        assert_eq!((status, retry), (200, None), "{body}");
        assert_eq!(
            answer_text(&body),
            "This is a simple text response for testing."
        );
    }
    for _ in 0..3 {
        let (status, retry, body) = limited_call(&host.url, Some("secret-a")).await;
        assert_eq!(status, 429, "{body}");
        let retry: u64 = retry.expect("Retry-After").parse().unwrap();
        assert!((1..=2).contains(&retry), "Retry-After: {retry}");
        assert_eq!(body["id"], 1);
        assert_eq!(body["error"]["code"], -32029, "{body}");
        let wait_ms = body["error"]["data"]["retryAfterMs"].as_u64().unwrap();
        assert!(wait_ms > 0 && wait_ms <= 2_000, "{body}");
        assert_eq!(retry, wait_ms.div_ceil(1000), "{body}");
    }
    // Another principal has its own bucket.
    for _ in 0..5 {
        assert_eq!(limited_call(&host.url, Some("secret-b")).await.0, 200);
    }
    assert_eq!(limited_call(&host.url, Some("secret-b")).await.0, 429);
    // After the wait alice is served again.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (status, retry, _) = limited_call(&host.url, Some("secret-a")).await;
        if status == 200 {
            break;
        }
        assert_eq!(status, 429);
        assert!(
            Instant::now() < deadline,
            "alice is still refused 10 s later"
        );
        tokio::time::sleep(Duration::from_secs(retry.unwrap().parse().unwrap())).await;
    }
    let line = host.wait_for_log("of the refusal", |l| l.contains("rate_limited"));
    assert!(
        line.contains("alice") && !line.contains("secret-a"),
        "{line}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_bucket_is_shared_by_its_callers() {
    let dir = tempfile::tempdir().unwrap();
    let limits = format!(
        "{TOKENS}\n[host.rate_limits]\ntools.{FAST_TOOL} = {{ per_minute = 1, burst = 1 }}\n"
    );
    let host = Host::start(&config(dir.path(), "", &limits));
    assert_eq!(limited_call(&host.url, Some("secret-a")).await.0, 200);
    let (status, retry, body) = limited_call(&host.url, Some("secret-b")).await;
    assert_eq!(status, 429, "{body}");
    let retry: u64 = retry.unwrap().parse().unwrap();
    assert!((50..=60).contains(&retry), "Retry-After: {retry}");
    assert_eq!(body["error"]["data"]["bucket"], "tool");
    // Other tools have no bucket.
    let other = modern(
        "tools/call",
        Some(SLOW_TOOL),
        json!({"name": SLOW_TOOL, "arguments": {}}),
        Some("secret-b"),
        &host.url,
    )
    .send()
    .await
    .unwrap();
    assert_eq!(other.status(), 200);
}

#[test]
fn over_its_rate_limit_a_stdio_call_gets_a_json_rpc_error_with_the_wait() {
    let dir = tempfile::tempdir().unwrap();
    let limits = "[host.rate_limits]\nprincipals.local = { per_minute = 1, burst = 2 }\n";
    let mut stdio = Stdio_::start(&config(dir.path(), "", limits));
    let mut answers = Vec::new();
    for n in 0..4 {
        stdio.call(&format!("c{n}"), FAST_TOOL, json!({}));
        let answer = loop {
            let message = stdio.next().expect("an answer");
            if message.get("id").is_some() {
                break message;
            }
        };
        answers.push(answer);
    }
    for answer in &answers[..2] {
        assert_eq!(
            answer_text(answer),
            "This is a simple text response for testing."
        );
    }
    for answer in &answers[2..] {
        assert_eq!(answer["error"]["code"], -32029, "{answer}");
        let wait = answer["error"]["data"]["retryAfterMs"].as_u64().unwrap();
        assert!(wait > 50_000 && wait <= 60_000, "{answer}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_call_still_running_at_the_drain_deadline_is_cut_off_and_the_exit_is_3() {
    let dir = tempfile::tempdir().unwrap();
    // `slow_host_calls` logs without end until its 10 s timeout; the drain is 1 s.
    let text = format!(
        "[host]\ndata_dir = \"{}\"\ndrain_secs = 1\n\n[[plugin]]\npath = \"{}\"\n",
        dir.path().join("data").display(),
        guest("hostile").display(),
    );
    let path = dir.path().join("toolhost.toml");
    std::fs::write(&path, text).unwrap();
    // The guest's log lines (debug) tell that the call runs.
    let mut host = Host::start_logging(&path, "info,toolhost::runtime::host_api=debug");
    let url = host.url.clone();
    let call = tokio::spawn(async move {
        let response = modern(
            "tools/call",
            Some("slow_host_calls"),
            json!({"name": "slow_host_calls", "arguments": {}}),
            None,
            &url,
        )
        .send()
        .await?;
        let status = response.status();
        Ok::<_, reqwest::Error>((status, response.text().await?))
    });
    host.wait_for_log("of the running call", |l| l.contains("still busy"));
    let started = Instant::now();
    host.signal(libc::SIGTERM);
    let status = host.wait_exit(Duration::from_secs(20));
    assert_eq!(status.code(), Some(3), "{status:?}");
    assert!(
        started.elapsed() < Duration::from_secs(9),
        "the exit waited for the call's own timeout"
    );
    host.wait_for_log("of the cut-off calls", |l| l.contains("drain_timeout"));
    // The caller got no result: a closed connection or stream, or an error status.
    if let Ok((status, text)) = call.await.unwrap() {
        assert!(!text.contains("\"result\""), "{status}: {text}");
    }
}

#[test]
fn each_stdio_call_gives_one_audit_line_with_the_transport_and_no_value() {
    let dir = tempfile::tempdir().unwrap();
    let audit = dir.path().join("audit.jsonl");
    let host_keys = format!("audit = \"{}\"", audit.display());
    let mut stdio = Stdio_::start(&config(dir.path(), &host_keys, ""));
    let secret_value = "value-that-must-not-be-logged-7f3a";
    stdio.send(
        &json!({"jsonrpc": "2.0", "id": "a1", "method": "tools/call",
        "params": {"name": FAST_TOOL, "arguments": {}}}),
    );
    stdio.send(
        &json!({"jsonrpc": "2.0", "id": "a2", "method": "tools/call",
        "params": {"name": "no_such_tool", "arguments": {"key": secret_value}}}),
    );
    let mut answered = 0;
    while answered < 2 {
        let message = stdio.next().expect("an answer");
        answered += usize::from(message.get("id").is_some());
    }
    // The writer is asynchronous: wait for both lines.
    let deadline = Instant::now() + Duration::from_secs(10);
    let text = loop {
        let text = std::fs::read_to_string(&audit).unwrap_or_default();
        if text.lines().count() >= 2 || Instant::now() > deadline {
            break text;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{text}");
    let by_tool = |tool: &str| {
        lines
            .iter()
            .find(|l| l["tool"] == tool)
            .unwrap_or_else(|| panic!("no line for {tool}: {text}"))
    };
    let ok = by_tool(FAST_TOOL);
    assert_eq!(ok["transport"], "stdio", "{ok}");
    assert_eq!(ok["outcome"], "ok", "{ok}");
    assert_eq!(
        ok["principal"],
        Value::Null,
        "the stdio operator has no principal: {ok}"
    );
    assert_eq!(ok["token_id"], Value::Null, "{ok}");
    assert_eq!(ok["plugin"], "conformance", "{ok}");
    let unknown = by_tool("no_such_tool");
    assert_eq!(unknown["transport"], "stdio", "{unknown}");
    assert_ne!(unknown["outcome"], "ok", "{unknown}");
    assert_eq!(unknown["argument_keys"], json!(["key"]), "{unknown}");
    assert!(
        !text.contains(secret_value),
        "an argument value is in the audit log: {text}"
    );
}

#[test]
fn a_stdio_server_serves_its_metrics_on_metrics_addr() {
    let dir = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let host_keys = format!("metrics_addr = \"127.0.0.1:{port}\"");
    let mut stdio = Stdio_::start(&config(dir.path(), &host_keys, ""));
    stdio.call("m1", FAST_TOOL, json!({}));
    while stdio.next().expect("an answer").get("id").is_none() {}
    let scrape = |path: &str| {
        let mut stream = std::net::TcpStream::connect(("127.0.0.1", port)).unwrap();
        write!(
            stream,
            "GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut text = String::new();
        std::io::Read::read_to_string(&mut stream, &mut text).unwrap();
        text
    };
    let metrics = scrape("/metrics");
    assert!(metrics.starts_with("HTTP/1.1 200"), "{metrics}");
    let counted = metrics.lines().any(|line| {
        line.starts_with("toolhost_calls_total{")
            && line.contains(&format!("tool=\"{FAST_TOOL}\""))
            && line.contains("outcome=\"ok\"")
            && line.ends_with(" 1")
    });
    assert!(counted, "the stdio call is not counted:\n{metrics}");
    // Only /metrics: the listener serves no MCP endpoint.
    assert!(
        scrape("/mcp").starts_with("HTTP/1.1 404"),
        "{}",
        scrape("/mcp")
    );
}
