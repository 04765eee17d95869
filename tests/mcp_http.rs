//! The MCP server over Streamable HTTP: the security of the endpoint (Origin,
//! tokens, privileges, loopback), both eras on one endpoint, and stored results
//! bound to the principal who caused them. The authorization rules that are the
//! operator's (privileges set in the configuration, tools hidden from callers
//! lacking them, `--allow-remote` only with tokens, sessions bound to their
//! principal and capped, allowed `Host` names) run against the release binary.

use crate::common;

use std::net::SocketAddr;
use std::sync::Arc;

use common::host::{TestHost, guest};
use common::mcp_client::{in_session, message, modern, open_session, sse_messages};
use jiff::SignedDuration;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolhost::config::TokenConfig;
use toolhost::mcp::http::{Access, HttpError, serve};
use toolhost::mcp::{Server, Tokens};
use toolhost::render::{Mapper, OutputMode, SizeLimits};
use toolhost::store::{MemoryStore, ResultStore};

struct Running {
    url: String,
    shutdown: CancellationToken,
    _host: Arc<TestHost>,
}

impl Drop for Running {
    fn drop(&mut self) {
        self.shutdown.cancel();
    }
}

fn token(secret: &str, principal: &str, privileges: &[&str]) -> TokenConfig {
    TokenConfig {
        token: Some(secret.into()),
        token_env: None,
        principal: principal.into(),
        privileges: privileges.iter().map(|p| p.to_string()).collect(),
    }
}

async fn start(tokens: &[TokenConfig]) -> Running {
    let host = Arc::new(
        TestHost::new(&format!(
            "[[plugin]]\npath = \"{}\"\n[[plugin]]\npath = \"{}\"\n[[plugin]]\npath = \"{}\"\n",
            guest("errors").display(),
            guest("bulk").display(),
            guest("calc").display()
        ))
        .await,
    );
    let store: Arc<dyn ResultStore> = Arc::new(MemoryStore::new(
        SignedDuration::from_hours(1),
        jiff::Timestamp::now,
    ));
    let server = Server::new(
        host.catalog.clone(),
        Mapper::new(SizeLimits::default(), Some(store.clone())),
        store,
        OutputMode::Compat,
    );
    let access = Access::with_tokens(Tokens::from_config(tokens).unwrap());
    let shutdown = CancellationToken::new();
    let (ready, bound) = tokio::sync::oneshot::channel();
    let stop = shutdown.clone();
    tokio::spawn(async move {
        serve(
            server,
            access,
            "127.0.0.1:0".parse().unwrap(),
            false,
            stop,
            move |addr: SocketAddr| {
                let _ = ready.send(addr);
            },
        )
        .await
        .unwrap();
    });
    let addr = bound.await.unwrap();
    Running {
        url: format!("http://{addr}/mcp"),
        shutdown,
        _host: host,
    }
}

async fn call(running: &Running, bearer: Option<&str>, tool: &str, arguments: Value) -> Value {
    let response = modern(
        "tools/call",
        Some(tool),
        json!({"name": tool, "arguments": arguments}),
        bearer,
        &running.url,
    )
    .send()
    .await
    .unwrap();
    assert_eq!(response.status(), 200);
    message(response).await
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_valid_token_the_answer_is_401() {
    let running = start(&[token("secret-a", "alice", &[])]).await;
    for bearer in [None, Some("wrong")] {
        let response = modern("tools/list", None, json!({}), bearer, &running.url)
            .send()
            .await
            .unwrap();
        assert_eq!(response.status(), 401, "{bearer:?}");
        assert_eq!(response.headers()["www-authenticate"], "Bearer");
    }
    let ok = modern(
        "tools/list",
        None,
        json!({}),
        Some("secret-a"),
        &running.url,
    )
    .send()
    .await
    .unwrap();
    assert_eq!(ok.status(), 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_foreign_origin_gets_403_even_with_a_token() {
    let running = start(&[token("secret-a", "alice", &[])]).await;
    let foreign = modern(
        "tools/list",
        None,
        json!({}),
        Some("secret-a"),
        &running.url,
    )
    .header("origin", "http://evil.example.com")
    .send()
    .await
    .unwrap();
    assert_eq!(foreign.status(), 403);
    let local = modern(
        "tools/list",
        None,
        json!({}),
        Some("secret-a"),
        &running.url,
    )
    .header("origin", "http://localhost:6274")
    .send()
    .await
    .unwrap();
    assert_eq!(local.status(), 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn privileges_come_from_the_token() {
    let running = start(&[
        token("secret-a", "alice", &[]),
        token("secret-w", "writer", &["orders:write"]),
    ])
    .await;
    // A tool the caller lacks the privileges for answers as one that does not exist.
    let denied = call(&running, Some("secret-a"), "needs_privilege", json!({})).await;
    let unknown = call(&running, Some("secret-a"), "no_such_tool", json!({})).await;
    assert_eq!(denied["error"]["code"], -32602, "{denied}");
    assert_eq!(
        denied["error"]["message"]
            .as_str()
            .unwrap()
            .replace("needs_privilege", "X"),
        unknown["error"]["message"]
            .as_str()
            .unwrap()
            .replace("no_such_tool", "X"),
        "{denied} / {unknown}"
    );
    assert!(denied.get("result").is_none(), "{denied}");
    let allowed = call(&running, Some("secret-w"), "needs_privilege", json!({})).await;
    assert_eq!(
        allowed["result"]["structuredContent"],
        json!({"ok": true}),
        "{allowed}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stored_result_is_read_only_by_its_principal() {
    let running = start(&[
        token("secret-a", "alice", &[]),
        token("secret-b", "bob", &[]),
    ])
    .await;
    let big = call(&running, Some("secret-a"), "bulk", json!({"count": 5000})).await;
    let link = big["result"]["content"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["type"] == "resource_link")
        .expect("a link")
        .clone();
    let uri = link["uri"].as_str().unwrap();
    let read = |bearer: &'static str| {
        modern(
            "resources/read",
            Some(uri),
            json!({"uri": uri}),
            Some(bearer),
            &running.url,
        )
        .send()
    };
    let alice = message(read("secret-a").await.unwrap()).await;
    let data: Value =
        serde_json::from_str(alice["result"]["contents"][0]["text"].as_str().unwrap()).unwrap();
    assert_eq!(data["items"].as_array().unwrap().len(), 5000);
    let bob = message(read("secret-b").await.unwrap()).await;
    assert_eq!(
        bob["error"]["code"], -32602,
        "another principal's link is not found: {bob}"
    );
    assert!(bob.get("result").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn both_eras_are_served_on_one_endpoint_without_tokens_on_loopback() {
    let running = start(&[]).await;
    let modern_call = call(&running, None, "add", json!({"a": 1, "b": 2})).await;
    assert_eq!(modern_call["result"]["resultType"], "complete");
    let client = reqwest::Client::new();
    let post = |body: Value, session: Option<String>| {
        let mut request = client
            .post(&running.url)
            .header("accept", "application/json, text/event-stream")
            .header("mcp-protocol-version", "2025-06-18")
            .json(&body);
        if let Some(session) = session {
            request = request.header("mcp-session-id", session);
        }
        request.send()
    };
    let init = post(json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}), None).await.unwrap();
    let session = init
        .headers()
        .get("mcp-session-id")
        .map(|v| v.to_str().unwrap().to_owned());
    assert_eq!(
        message(init).await["result"]["protocolVersion"],
        "2025-06-18"
    );
    let _ = post(
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        session.clone(),
    )
    .await
    .unwrap();
    let called = message(post(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "range", "arguments": {"start": 0, "end": 2}}}), session).await.unwrap()).await;
    assert_eq!(
        called["result"]["structuredContent"],
        json!({"result": [0, 1]}),
        "{called}"
    );
    assert!(called["result"].get("resultType").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_non_loopback_address_needs_the_explicit_flag() {
    let host = TestHost::new("").await;
    let store: Arc<dyn ResultStore> = Arc::new(MemoryStore::new(
        SignedDuration::from_hours(1),
        jiff::Timestamp::now,
    ));
    let server = Server::new(
        host.catalog.clone(),
        Mapper::default(),
        store,
        OutputMode::Compat,
    );
    let access = Access::with_tokens(Tokens::default());
    let refused = serve(
        server,
        access,
        "0.0.0.0:0".parse().unwrap(),
        false,
        CancellationToken::new(),
        |_| {},
    )
    .await;
    let error = refused.unwrap_err();
    assert!(matches!(error, HttpError::NotLoopback(_)));
    assert!(error.to_string().contains("--allow-remote"), "{error}");

    // With the flag but without tokens, the server does not start either.
    let store: Arc<dyn ResultStore> = Arc::new(MemoryStore::new(
        SignedDuration::from_hours(1),
        jiff::Timestamp::now,
    ));
    let server = Server::new(
        host.catalog.clone(),
        Mapper::default(),
        store,
        OutputMode::Compat,
    );
    let without_tokens = serve(
        server,
        Access::with_tokens(Tokens::default()),
        "0.0.0.0:0".parse().unwrap(),
        true,
        CancellationToken::new(),
        |_| {},
    )
    .await
    .unwrap_err();
    assert!(
        matches!(without_tokens, HttpError::RemoteWithoutTokens(_)),
        "{without_tokens}"
    );
    assert!(without_tokens.to_string().contains("[[token]]"));
}

// The operator's authorization rules, against the release binary.

/// Writes `toolhost.toml` into `dir`: `[host]` with a data directory and
/// `host_keys`, then `rest` (plugins, tokens).
fn config_file(dir: &std::path::Path, host_keys: &str, rest: &str) -> std::path::PathBuf {
    let path = dir.join("toolhost.toml");
    std::fs::write(
        &path,
        format!(
            "[host]\ndata_dir = \"{}\"\n{host_keys}\n{rest}",
            dir.join("data").display()
        ),
    )
    .unwrap();
    path
}

/// `[[token]]` tables: (secret, principal, privileges).
fn token_tables(tokens: &[(&str, &str, &[&str])]) -> String {
    tokens
        .iter()
        .map(|(secret, principal, privileges)| {
            format!("[[token]]\ntoken = \"{secret}\"\nprincipal = \"{principal}\"\nprivileges = {privileges:?}\n")
        })
        .collect()
}

/// The names `tools/list` (2026-07-28) shows `bearer`.
async fn listed(url: &str, bearer: &str) -> Vec<String> {
    let response = modern("tools/list", None, json!({}), Some(bearer), url)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    let list = message(response).await;
    list["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {list}"))
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect()
}

/// `tools/list` in `session` as `bearer`: the HTTP status, and the message on 200.
async fn list_in_session(url: &str, bearer: &str, session: &str) -> (u16, Option<Value>) {
    let response = in_session(
        url,
        "2025-06-18",
        Some(bearer),
        Some(session),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
    )
    .send()
    .await
    .unwrap();
    let status = response.status().as_u16();
    if status == 200 {
        (status, Some(message(response).await))
    } else {
        (status, None)
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_operator_sets_privileges_and_callers_see_only_the_tools_they_may_call() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_file(
        dir.path(),
        "",
        &format!(
            "[[plugin]]\npath = \"{calc}\"\n[plugin.tool_privileges]\nadd = [\"math:add\"]\n\n\
             [[plugin]]\npath = \"{errors}\"\nprivileges = [\"ops\"]\n\n{tokens}",
            calc = guest("calc").display(),
            errors = guest("errors").display(),
            tokens = token_tables(&[
                ("secret-a", "alice", &[]),
                ("secret-b", "bob", &["math:add"]),
                ("secret-c", "carol", &["math:add", "ops"]),
                ("secret-d", "dave", &["math:add", "ops", "orders:write"]),
            ]),
        ),
    );
    let host = common::process::Host::start(&config);

    // `add` needs the operator's math:add; `needs_privilege` the operator's ops and
    // the plugin's own orders:write (the plugin adds, it cannot take away).
    let alice = listed(&host.url, "secret-a").await;
    assert!(alice.contains(&"divide".to_owned()), "{alice:?}");
    assert!(!alice.contains(&"add".to_owned()), "{alice:?}");
    assert!(
        !alice
            .iter()
            .any(|name| name == "fail" || name == "needs_privilege"),
        "{alice:?}"
    );
    let bob = listed(&host.url, "secret-b").await;
    assert!(
        bob.contains(&"add".to_owned()) && !bob.contains(&"fail".to_owned()),
        "{bob:?}"
    );
    let carol = listed(&host.url, "secret-c").await;
    assert!(carol.contains(&"fail".to_owned()), "{carol:?}");
    assert!(!carol.contains(&"needs_privilege".to_owned()), "{carol:?}");
    let dave = listed(&host.url, "secret-d").await;
    assert!(dave.contains(&"needs_privilege".to_owned()), "{dave:?}");

    // A hidden tool answers exactly as a tool that does not exist.
    let as_alice = |tool: &'static str| {
        common::attack::call_as(&host.url, tool, json!({"a": 2, "b": 3}), Some("secret-a"))
    };
    let (hidden, missing) = (as_alice("add").await, as_alice("no_such_tool").await);
    assert_eq!(hidden["error"]["code"], -32602, "{hidden}");
    assert_eq!(
        hidden["error"].to_string().replace("add", "X"),
        missing["error"].to_string().replace("no_such_tool", "X"),
    );
    let as_bob =
        common::attack::call_as(&host.url, "add", json!({"a": 2, "b": 3}), Some("secret-b")).await;
    assert_eq!(
        as_bob["result"]["structuredContent"],
        json!({"sum": 5}),
        "{as_bob}"
    );

    // `toolhost tools` shows the effective set.
    let tools = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["tools", "--config"])
        .arg(&config)
        .env("TOOLHOST_LOG", "warn")
        .output()
        .unwrap();
    assert!(
        tools.status.success(),
        "{}",
        String::from_utf8_lossy(&tools.stderr)
    );
    let listing = String::from_utf8_lossy(&tools.stdout);
    let entries: Vec<Value> = serde_json::Deserializer::from_str(&listing)
        .into_iter::<Value>()
        .map(Result::unwrap)
        .collect();
    let privileges = |name: &str| {
        entries
            .iter()
            .find(|e| e["name"] == name)
            .unwrap_or_else(|| panic!("{name} in {listing}"))["requiredPrivileges"]
            .clone()
    };
    assert_eq!(privileges("add"), json!(["math:add"]));
    assert_eq!(privileges("divide"), json!([]));
    assert_eq!(
        privileges("needs_privilege"),
        json!(["ops", "orders:write"])
    );
    assert_eq!(privileges("fail"), json!(["ops"]));
}

#[test]
fn tool_privileges_for_a_tool_the_plugin_does_not_offer_stop_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_file(
        dir.path(),
        "",
        &format!(
            "[[plugin]]\npath = \"{}\"\n[plugin.tool_privileges]\nad = [\"math:add\"]\n",
            guest("calc").display()
        ),
    );
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["tools", "--config"])
        .arg(&config)
        .env("TOOLHOST_LOG", "warn")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains(&config.display().to_string())
            && stderr.contains("tool_privileges")
            && stderr.contains("\"ad\""),
        "{stderr}"
    );
}

#[test]
fn allow_remote_without_tokens_refuses_to_start() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_file(
        dir.path(),
        "",
        &format!("[[plugin]]\npath = \"{}\"\n", guest("calc").display()),
    );
    for addr in ["0.0.0.0:0", "127.0.0.1:0"] {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
            .args(["serve", "--http", addr, "--allow-remote", "--config"])
            .arg(&config)
            .env("TOOLHOST_LOG", "warn")
            .stdin(std::process::Stdio::null())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{addr}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("[[token]]"), "{addr}: {stderr}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_session_answers_only_the_principal_that_opened_it() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_file(
        dir.path(),
        "",
        &format!(
            "[[plugin]]\npath = \"{}\"\n{}",
            guest("calc").display(),
            token_tables(&[("secret-a", "alice", &[]), ("secret-b", "bob", &[])])
        ),
    );
    let host = common::process::Host::start(&config);
    let session = open_session(&host.url, "2025-06-18", Some("secret-a")).await;
    let (status, list) = list_in_session(&host.url, "secret-a", &session).await;
    assert_eq!(status, 200);
    assert!(list.unwrap()["result"]["tools"].as_array().is_some());

    // Bob's valid token does not open Alice's session: 404, as for no session.
    let (foreign, _) = list_in_session(&host.url, "secret-b", &session).await;
    assert_eq!(foreign, 404);
    let (unknown, _) = list_in_session(&host.url, "secret-a", "no-such-session").await;
    assert_eq!(unknown, 404);
    let closed_by_bob = reqwest::Client::new()
        .delete(&host.url)
        .bearer_auth("secret-b")
        .header("mcp-session-id", &session)
        .send()
        .await
        .unwrap();
    assert_eq!(closed_by_bob.status(), 404);
    // Alice's session is untouched by all of it.
    let (still, _) = list_in_session(&host.url, "secret-a", &session).await;
    assert_eq!(still, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_are_capped_and_the_one_idle_longest_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_file(
        dir.path(),
        "max_sessions = 2",
        &format!(
            "[[plugin]]\npath = \"{}\"\n{}",
            guest("calc").display(),
            token_tables(&[("secret-a", "alice", &[])])
        ),
    );
    let host = common::process::Host::start(&config);
    let first = open_session(&host.url, "2025-06-18", Some("secret-a")).await;
    let second = open_session(&host.url, "2025-06-18", Some("secret-a")).await;
    // The first is used again, so the second is the one idle longest.
    assert_eq!(list_in_session(&host.url, "secret-a", &first).await.0, 200);
    let third = open_session(&host.url, "2025-06-18", Some("secret-a")).await;
    assert_eq!(list_in_session(&host.url, "secret-a", &second).await.0, 404);
    assert_eq!(list_in_session(&host.url, "secret-a", &first).await.0, 200);
    assert_eq!(list_in_session(&host.url, "secret-a", &third).await.0, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_host_name_behind_a_proxy_is_allowed_when_configured() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_file(
        dir.path(),
        "allowed_hosts = [\"mcp.example.com\"]",
        &format!(
            "[[plugin]]\npath = \"{}\"\n{}",
            guest("calc").display(),
            token_tables(&[("secret-a", "alice", &[])])
        ),
    );
    let host = common::process::Host::start(&config);
    let with_host = |value: &'static str| {
        modern("tools/list", None, json!({}), Some("secret-a"), &host.url)
            .header("host", value)
            .send()
    };
    for allowed in ["mcp.example.com", "mcp.example.com:443", "localhost"] {
        assert_eq!(with_host(allowed).await.unwrap().status(), 200, "{allowed}");
    }
    for refused in ["evil.example.com", "mcp.example.com.evil.example"] {
        assert_eq!(with_host(refused).await.unwrap().status(), 403, "{refused}");
    }
}

/// A 2026-07-28 client that ends its `subscriptions/listen` stream has done
/// nothing wrong: the host logs no ERROR for it (rmcp did, for the response it
/// could no longer send), and serves the next request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_closing_its_subscription_stream_logs_no_error() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_file(
        dir.path(),
        "",
        &format!("[[plugin]]\npath = \"{}\"\n", guest("calc").display()),
    );
    let host = common::process::Host::start_logging(&config, "info");
    let mut listening = modern(
        "subscriptions/listen",
        None,
        json!({"notifications": {"toolsListChanged": true}}),
        None,
        &host.url,
    )
    .send()
    .await
    .unwrap();
    let first = listening.chunk().await.unwrap().unwrap();
    assert!(
        String::from_utf8_lossy(&first).contains("notifications/subscriptions/acknowledged"),
        "{first:?}"
    );
    drop(listening);
    host.wait_for_log("the subscription's service ending", |line| {
        line.contains("serve finished")
    });
    let answer = common::attack::call(&host.url, "add", json!({"a": 2, "b": 3})).await;
    assert_eq!(
        answer["result"]["structuredContent"],
        json!({"sum": 5}),
        "{answer}"
    );
    let errors: Vec<String> = host
        .log_lines()
        .into_iter()
        .filter(|line| line.contains(" ERROR "))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
}

/// In a handshake-era session a call's log lines and progress travel on the
/// call's own response stream, before its result: a client that never opens
/// the session's GET stream still gets them, and one that does cannot take
/// them for another call's. Each message is checked against its revision's
/// schema.
#[tokio::test(flavor = "multi_thread")]
async fn a_session_call_sends_its_log_lines_and_progress_on_its_own_stream() {
    let schemas = common::McpSchemas::load();
    let dir = tempfile::tempdir().unwrap();
    let config = config_file(
        dir.path(),
        "",
        &format!("[[plugin]]\npath = \"{}\"\n", guest("hello").display()),
    );
    let host = common::process::Host::start(&config);
    for revision in [
        toolhost::render::Revision::V2025_03_26,
        toolhost::render::Revision::V2025_06_18,
        toolhost::render::Revision::V2025_11_25,
    ] {
        let version = revision.to_string();
        let session = open_session(&host.url, &version, None).await;
        let level = in_session(&host.url, &version, None, Some(&session), json!({"jsonrpc": "2.0", "id": 2, "method": "logging/setLevel", "params": {"level": "info"}}))
            .send()
            .await
            .unwrap();
        assert!(level.status().is_success(), "{version}: {}", level.status());
        let _ = level.text().await;
        let call = in_session(&host.url, &version, None, Some(&session), json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {"name": "hello", "arguments": {"name": "Ada"}, "_meta": {"progressToken": "p-3"}}}))
            .send()
            .await
            .unwrap();
        assert_eq!(call.status(), 200, "{version}");
        let messages = sse_messages(&call.text().await.unwrap());
        let methods: Vec<&str> = messages
            .iter()
            .map(|m| m["method"].as_str().unwrap_or("(response)"))
            .collect();
        assert_eq!(
            methods,
            [
                "notifications/message",
                "notifications/progress",
                "(response)"
            ],
            "{version}: {messages:#?}"
        );
        let (log, progress, result) = (&messages[0], &messages[1], &messages[2]);
        assert_eq!(log["params"]["data"], "greeting Ada", "{version}");
        assert_eq!(log["params"]["level"], "info", "{version}");
        assert_eq!(progress["params"]["progressToken"], "p-3", "{version}");
        assert_eq!(result["id"], 3, "{version}");
        schemas
            .check(revision, "LoggingMessageNotification", log)
            .unwrap_or_else(|e| panic!("{version}: {e}"));
        schemas
            .check(revision, "ProgressNotification", progress)
            .unwrap_or_else(|e| panic!("{version}: {e}"));
        schemas
            .check(revision, "JSONRPCNotification", log)
            .unwrap_or_else(|e| panic!("{version}: {e}"));
    }
}
