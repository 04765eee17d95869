//! The baseline of `make bench` (issue #7, P2s): a bare rmcp stdio server with one
//! native `add` tool, no WebAssembly. Its calls/s over stdio are the yardstick
//! for toolhost's.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, ListToolsResult,
    PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

#[derive(Clone)]
struct Add;

impl ServerHandler for Add {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("native-add", "0.1.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tool = serde_json::from_value(json!({
            "name": "add",
            "description": "Adds two numbers.",
            "inputSchema": {
                "type": "object",
                "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
                "required": ["a", "b"]
            }
        }))
        .expect("a tool");
        Ok(ListToolsResult::with_all_items(vec![tool]))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = request.arguments.unwrap_or_default();
        let number = |k: &str| args.get(k).and_then(Value::as_f64).unwrap_or(0.0);
        let sum = number("a") + number("b");
        let result: CallToolResult = serde_json::from_value(json!({
            "content": [{"type": "text", "text": format!("{{\"sum\":{sum}}}")}],
            "structuredContent": {"sum": sum}
        }))
        .expect("a result");
        Ok(result.into())
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let running = Add.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
