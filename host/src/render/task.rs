//! What a task that failed shows its caller (the tasks extension's `error`):
//! a JSON-RPC error object made of the coded failure the host made of a call
//! the sandbox ended before the tool answered (a trap, a budget, the deadline).
//!
//! A failure the tool reported itself is not one of these: its task completes
//! with the result the mapper renders, `isError` and all.

use serde_json::{Map, Value, json};

use crate::result::ToolResult;

/// JSON-RPC's code for an internal error: the call could not be carried out.
const INTERNAL_ERROR: i64 = -32603;

/// The `error` of a task whose call ended with `result`: its message, and its
/// code and details under `data`.
pub fn failure(result: &ToolResult) -> Value {
    let Some(error) = result.error() else {
        return json!({ "code": INTERNAL_ERROR, "message": "The call ended without a result." });
    };
    let mut data = Map::new();
    data.insert("code".into(), json!(error.code.as_str()));
    if let Some(details) = &error.details {
        data.insert("details".into(), details.clone());
    }
    json!({ "code": INTERNAL_ERROR, "message": error.message, "data": data })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::ErrorCode;

    #[test]
    fn a_fault_becomes_an_internal_error_with_its_code_and_details() {
        let result = ToolResult::failure_with(
            ErrorCode::Timeout,
            "The call ran past its deadline.",
            json!({ "plugin": "demo" }),
        );
        assert_eq!(
            failure(&result),
            json!({
                "code": -32603,
                "message": "The call ran past its deadline.",
                "data": { "code": "timeout", "details": { "plugin": "demo" } }
            })
        );
    }
}
