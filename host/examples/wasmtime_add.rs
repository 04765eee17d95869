//! P2s's second yardstick (issue #17): the bare rmcp stdio server of
//! `native_add`, whose `add` runs calc's `add` in a fresh WebAssembly instance
//! with wasmtime alone ([`floor`]: the engine toolhost builds, an empty WASI
//! context, no checks, no rendering). Between it and `native_add` lies what
//! any server pays that instantiates a component per call; between toolhost
//! and it, what toolhost adds.
//!
//! Usage: `wasmtime_add <calc.wasm>`.

use std::path::PathBuf;

use rmcp::model::{CallToolResult, JsonObject};
use serde_json::{Value, json};
use toolhost::runtime::{EngineSettings, Runtime};

#[path = "bench/add_server.rs"]
mod add_server;
#[path = "bench/floor.rs"]
mod floor;

struct Sandboxed {
    calc: floor::FloorPre,
}

impl add_server::Adder for Sandboxed {
    const NAME: &'static str = "wasmtime-add";
    const DESCRIPTION: &'static str = "Adds two numbers, in a fresh WebAssembly instance.";

    /// As `native_add` answers, with the sum calc's `add` computed.
    async fn add(&self, args: JsonObject) -> CallToolResult {
        let args = Value::Object(args).to_string();
        let data = floor::floor_call(&self.calc, "add", &args).await;
        let sum: Value = serde_json::from_str(&data).expect("calc answers JSON");
        serde_json::from_value(json!({
            "content": [{"type": "text", "text": data}],
            "structuredContent": sum
        }))
        .expect("a result")
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let calc = std::env::args_os()
        .nth(1)
        .map(PathBuf::from)
        .ok_or_else(|| anyhow::anyhow!("usage: wasmtime_add <calc.wasm>"))?;
    let cache = std::env::temp_dir().join("toolhost-wasmtime-add-cache");
    let runtime = Runtime::new(EngineSettings::default(), cache)?;
    let calc = floor::floor_pre(&runtime, &calc);
    add_server::serve(Sandboxed { calc }).await
}
