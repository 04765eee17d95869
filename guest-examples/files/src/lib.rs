//! `files`: reads the directory the operator preopened at the guest path
//! `/data`. Paths are relative to it; the sandbox, not this code, keeps the
//! tool inside it.

use std::io::ErrorKind;

use serde::Deserialize;
use toolhost_guest::{
    CallContext, ErrorCode, Plugin, ResultBuilder, ToolDescriptor, ToolResult, json, with_args,
};

/// Where the operator's grant appears inside the guest.
const ROOT: &str = "/data";

struct Files;

#[derive(Deserialize)]
struct ReadFile {
    path: String,
}

#[derive(Deserialize)]
struct ListDir {
    path: Option<String>,
}

fn full_path(path: &str) -> String {
    format!("{ROOT}/{}", path.trim_start_matches('/'))
}

/// The failure for an I/O error on `path`: `not_found` when it does not
/// exist, otherwise a `tool_error` with the system's reason.
fn io_failure(path: &str, error: std::io::Error) -> ResultBuilder {
    let failure = match error.kind() {
        ErrorKind::NotFound => ToolResult::failure(
            ErrorCode::NotFound,
            format!("There is no file or directory `{path}`."),
        ),
        _ => ToolResult::failure(
            ErrorCode::ToolError,
            format!("Cannot read `{path}`: {error}."),
        ),
    };
    failure.details(json!({"path": path}))
}

fn read_file(ReadFile { path }: ReadFile) -> Result<ResultBuilder, ResultBuilder> {
    let bytes = std::fs::read(full_path(&path)).map_err(|e| io_failure(&path, e))?;
    let len = bytes.len();
    let content = String::from_utf8(bytes).map_err(|_| {
        ToolResult::failure(ErrorCode::ToolError, format!("`{path}` is not UTF-8 text."))
            .details(json!({"path": path}))
    })?;
    Ok(
        ToolResult::success(json!({"path": path, "content": content, "bytes": len}))
            .summary(format!("Read {len} bytes from {path}")),
    )
}

fn list_dir(ListDir { path }: ListDir) -> Result<ResultBuilder, ResultBuilder> {
    let path = path.unwrap_or_else(|| ".".to_string());
    let entries = std::fs::read_dir(full_path(&path)).map_err(|e| io_failure(&path, e))?;
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.map_err(|e| io_failure(&path, e))?;
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    let summary = format!("{} entries in {path}", names.len());
    Ok(ToolResult::success(names).summary(summary))
}

impl Plugin for Files {
    fn describe() -> Vec<ToolDescriptor> {
        vec![
            ToolDescriptor::new("read_file", "Reads a UTF-8 text file from the data directory.")
                .input_schema(json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "Relative to the data directory"}
                    },
                    "required": ["path"],
                }))
                .output_schema(json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string"},
                        "content": {"type": "string"},
                        "bytes": {"type": "integer"},
                    },
                    "required": ["path", "content", "bytes"],
                }))
                .read_only(true)
                .build(),
            ToolDescriptor::new("list_dir", "Lists the names in a directory of the data directory, sorted.")
                .input_schema(json!({
                    "type": "object",
                    "properties": {
                        "path": {"type": "string", "description": "Relative to the data directory (default: .)"}
                    },
                }))
                .output_schema(json!({"type": "array", "items": {"type": "string"}}))
                .read_only(true)
                .build(),
        ]
    }

    fn call(name: String, arguments: String, _context: CallContext) -> ToolResult {
        match name.as_str() {
            "read_file" => with_args(&arguments, read_file),
            "list_dir" => with_args(&arguments, list_dir),
            other => ToolResult::unknown_tool(other).build(),
        }
    }
}

toolhost_guest::export_plugin!(Files);
