//! The MCP server over Streamable HTTP: the security of the endpoint (Origin,
//! tokens, privileges, loopback), both eras on one endpoint, and stored results
//! bound to the principal who caused them.

mod common;

use std::net::SocketAddr;
use std::sync::Arc;

use common::host::{TestHost, guest};
use common::mcp_client::{message, modern};
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
    let access = Access {
        tokens: Tokens::from_config(tokens).unwrap(),
        allowed_origins: vec![],
    };
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
    let denied = call(&running, Some("secret-a"), "needs_privilege", json!({})).await;
    assert_eq!(denied["result"]["isError"], true, "{denied}");
    assert!(
        denied["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("missing_privilege"),
        "{denied}"
    );
    assert!(
        denied["result"]["content"]
            .to_string()
            .contains("orders:write")
    );
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
    let access = Access {
        tokens: Tokens::default(),
        allowed_origins: vec![],
    };
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
}
