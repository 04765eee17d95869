//! A Streamable HTTP client for the tests, in the 2026-07-28 era: every request
//! stands alone, carrying its revision in `_meta` and in the headers.

use serde_json::{Value, json};

/// A request of `method` (naming `name` in the `Mcp-Name` header) to `url`;
/// what `params` has in `_meta` is kept.
pub fn modern(
    method: &str,
    name: Option<&str>,
    params: Value,
    bearer: Option<&str>,
    url: &str,
) -> reqwest::RequestBuilder {
    // The caller's own `_meta` (its capabilities, say) wins.
    let mut params = params;
    let mut meta = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    if let Some(given) = params.get("_meta").and_then(Value::as_object) {
        for (key, value) in given {
            meta[key] = value.clone();
        }
    }
    params["_meta"] = meta;
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method)
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}));
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    if let Some(bearer) = bearer {
        request = request.bearer_auth(bearer);
    }
    request
}

/// The JSON-RPC message of a response, whether sent as JSON or as an SSE event.
pub async fn message(response: reqwest::Response) -> Value {
    message_in(&response.text().await.unwrap())
}

/// The JSON-RPC message in a response body: JSON, or the SSE event that
/// carries an `id`.
pub fn message_in(text: &str) -> Value {
    if let Ok(value) = serde_json::from_str(text) {
        return value;
    }
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|m| m.get("id").is_some())
        .unwrap_or_else(|| panic!("no JSON-RPC response in {text}"))
}

/// The JSON-RPC messages of an SSE body, in order, as far as `text` goes.
pub fn sse_messages(text: &str) -> Vec<Value> {
    text.lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .collect()
}

/// A POST of the handshake era at `revision` to `url`, with `bearer` and in
/// `session` when given.
pub fn in_session(
    url: &str,
    revision: &str,
    bearer: Option<&str>,
    session: Option<&str>,
    body: Value,
) -> reqwest::RequestBuilder {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", revision)
        .json(&body);
    if let Some(bearer) = bearer {
        request = request.bearer_auth(bearer);
    }
    if let Some(session) = session {
        request = request.header("mcp-session-id", session);
    }
    request
}

/// `initialize` at `revision` and `notifications/initialized`, as `bearer` when
/// given: the new session's id.
pub async fn open_session(url: &str, revision: &str, bearer: Option<&str>) -> String {
    let init = in_session(url, revision, bearer, None, json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"protocolVersion": revision, "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}}))
        .send()
        .await
        .unwrap();
    assert_eq!(init.status(), 200, "{revision}");
    let session = init.headers()["mcp-session-id"]
        .to_str()
        .unwrap()
        .to_owned();
    let _ = message(init).await;
    let initialized = in_session(
        url,
        revision,
        bearer,
        Some(&session),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .send()
    .await
    .unwrap();
    assert!(
        initialized.status().is_success(),
        "{revision}: {}",
        initialized.status()
    );
    session
}
