//! The one-tool rmcp stdio server of P2s's yardsticks (`native_add`,
//! `wasmtime_add`): `add` listed with the same schema, answered by an [`Adder`].

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, Implementation, JsonObject,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::json;

/// How a yardstick computes `add`'s answer.
pub trait Adder: Send + Sync + 'static {
    /// The server's name, as `initialize` reports it.
    const NAME: &'static str;
    /// The tool's description.
    const DESCRIPTION: &'static str;

    /// The result for the call's arguments.
    fn add(&self, arguments: JsonObject) -> impl Future<Output = CallToolResult> + Send;
}

struct AddServer<A>(A);

impl<A: Adder> ServerHandler for AddServer<A> {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new(A::NAME, "0.1.0"))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let tool = serde_json::from_value(json!({
            "name": "add",
            "description": A::DESCRIPTION,
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
        let result = self.0.add(request.arguments.unwrap_or_default()).await;
        Ok(result.into())
    }
}

/// Serves `add` with `adder` on stdin and stdout until stdin closes.
pub async fn serve(adder: impl Adder) -> anyhow::Result<()> {
    let running = AddServer(adder).serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}
