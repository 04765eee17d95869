//! A Streamable HTTP client for the tests, in the 2026-07-28 era: every request
//! stands alone, carrying its revision in `_meta` and in the headers.

use serde_json::{Value, json};

/// A request of `method` (naming `name` in the `Mcp-Name` header) to `url`.
pub fn modern(
    method: &str,
    name: Option<&str>,
    params: Value,
    bearer: Option<&str>,
    url: &str,
) -> reqwest::RequestBuilder {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {},
    });
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
