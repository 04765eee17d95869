//! The baseline of `make bench` (issue #7, P2s): a bare rmcp stdio server with one
//! native `add` tool, no WebAssembly. Its calls/s over stdio are the yardstick
//! for toolhost's.

use rmcp::model::{CallToolResult, JsonObject};
use serde_json::{Value, json};

#[path = "bench/add_server.rs"]
mod add_server;

struct Native;

impl add_server::Adder for Native {
    const NAME: &'static str = "native-add";
    const DESCRIPTION: &'static str = "Adds two numbers.";

    async fn add(&self, args: JsonObject) -> CallToolResult {
        let number = |k: &str| args.get(k).and_then(Value::as_f64).unwrap_or(0.0);
        let sum = number("a") + number("b");
        serde_json::from_value(json!({
            "content": [{"type": "text", "text": format!("{{\"sum\":{sum}}}")}],
            "structuredContent": {"sum": sum}
        }))
        .expect("a result")
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    add_server::serve(Native).await
}
