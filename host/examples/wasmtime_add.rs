//! P2s's second yardstick (issue #17): the bare rmcp stdio server of
//! `native_add`, whose `add` runs calc's `add` in a fresh WebAssembly instance
//! with wasmtime alone ([`floor`]: the engine toolhost builds, an empty WASI
//! context, no checks, no rendering). Between it and `native_add` lies what
//! any server pays that instantiates a component per call; between toolhost
//! and it, what toolhost adds.
//!
//! Usage: `wasmtime_add <calc.wasm>`.

use std::path::PathBuf;
use std::sync::Arc;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};
use toolhost::runtime::{EngineSettings, Runtime};

#[path = "bench/floor.rs"]
mod floor;

#[derive(Clone)]
struct Add {
    calc: Arc<floor::FloorPre>,
}

impl ServerHandler for Add {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("wasmtime-add", "0.1.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tool = serde_json::from_value(json!({
            "name": "add",
            "description": "Adds two numbers, in a fresh WebAssembly instance.",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"]
            }
        }))
        .expect("a tool");
        Ok(ListToolsResult::with_all_items(vec![tool]))
    }

    /// As `native_add` answers, with the sum calc's `add` computed.
    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.unwrap_or_default()).to_string();
        let data = floor::floor_call(&self.calc, "add", &args).await;
        let sum: Value = serde_json::from_str(&data).expect("calc answers JSON");
        let result: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": data}],
            "structuredContent": sum
        }))
        .expect("a result");
        Ok(result.into())
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
    let calc = Arc::new(floor::floor_pre(&runtime, &calc));
    let running = Add { calc }.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
