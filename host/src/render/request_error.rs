//! The JSON-RPC error of a request other than `tools/call` (`prompts/get`,
//! `resources/read`, `completion/complete`) that a plugin or the host failed
//! with a coded error. A tool call reports its failure inside its result; these
//! requests have no such place, so MCP answers them with an error.

use rmcp::ErrorData;
use serde_json::json;

use crate::result::{ErrorCode, ToolError};

/// Input the plugin cannot use, or what does not exist, is invalid params
/// (`-32602`, as MCP asks of a prompt or argument it does not know); anything
/// else, the plugin's failure or the host's (a timeout, a budget), is an
/// internal error (`-32603`). Either way `data` has the code and the details.
pub fn of(error: &ToolError) -> ErrorData {
    let data = Some(json!({
        "code": error.code.as_str(),
        "details": error.details,
    }));
    match error.code {
        ErrorCode::InvalidArguments | ErrorCode::NotFound => {
            ErrorData::invalid_params(error.message.clone(), data)
        }
        _ => ErrorData::internal_error(error.message.clone(), data),
    }
}
