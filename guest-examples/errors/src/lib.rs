//! `errors`: tools that fail on purpose, one way each: a coded failure, data
//! that breaks the declared output schema, and a tool that needs a privilege.

use serde::Deserialize;
use toolhost_guest::{CallContext, ErrorCode, Plugin, ToolDescriptor, ToolResult, json, with_args};

struct Errors;

#[derive(Deserialize)]
#[serde(rename_all = "snake_case")]
enum Code {
    InvalidArguments,
    MissingPrivilege,
    NotFound,
    ToolError,
}

#[derive(Deserialize)]
struct Fail {
    code: Code,
}

fn fail(Fail { code }: Fail) -> ToolResult {
    let (code, name) = match code {
        Code::InvalidArguments => (ErrorCode::InvalidArguments, "invalid_arguments"),
        Code::MissingPrivilege => (ErrorCode::MissingPrivilege, "missing_privilege"),
        Code::NotFound => (ErrorCode::NotFound, "not_found"),
        Code::ToolError => (ErrorCode::ToolError, "tool_error"),
    };
    ToolResult::failure(code, format!("failing with {name} on purpose"))
        .details(json!({"requested": name}))
        .build()
}

impl Plugin for Errors {
    fn describe() -> Vec<ToolDescriptor> {
        vec![
            ToolDescriptor::new("fail", "Fails with the error code asked for.")
                .input_schema(json!({
                    "type": "object",
                    "properties": {
                        "code": {
                            "type": "string",
                            "enum": ["invalid_arguments", "missing_privilege", "not_found", "tool_error"],
                        }
                    },
                    "required": ["code"],
                }))
                .build(),
            ToolDescriptor::new(
                "wrong_shape",
                "Returns data that breaks its own output schema (the host must catch it).",
            )
            .input_schema(json!({"type": "object", "properties": {}}))
            .output_schema(json!({
                "type": "object",
                "properties": {"x": {"type": "integer"}},
                "required": ["x"],
            }))
            .build(),
            ToolDescriptor::new("needs_privilege", "Succeeds, for callers holding orders:write.")
                .input_schema(json!({"type": "object", "properties": {}}))
                .requires("orders:write")
                .build(),
        ]
    }

    fn call(name: String, arguments: String, _context: CallContext) -> ToolResult {
        match name.as_str() {
            "fail" => with_args(&arguments, fail),
            "wrong_shape" => ToolResult::success(json!({"y": 1})).build(),
            "needs_privilege" => ToolResult::success(json!({"ok": true})).build(),
            other => ToolResult::unknown_tool(other).build(),
        }
    }
}

toolhost_guest::export_plugin!(Errors);
