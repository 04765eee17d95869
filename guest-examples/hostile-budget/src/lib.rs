//! `hostile-budget`: a plugin whose tools each try to use up one host resource
//! a call can touch, for the budget tests (`tests/budgets.rs`). Each takes its
//! size as arguments, so the same tool is an ordinary call when small and an
//! attack when large. Where the host refuses something, the tool does not
//! handle it (it panics or returns what it got), so a test sees exactly what the
//! sandbox let through.

use std::hint::black_box;
use std::io::Write;

use serde::Deserialize;
use toolhost_guest::wit::Outcome;
use toolhost_guest::{
    CallContext, Plugin, ToolDescriptor, ToolResult, Value, json, log, parse_args,
    progress_with_message,
};

struct HostileBudget;

fn schema(fields: &[(&str, &str)]) -> Value {
    let properties: toolhost_guest::serde_json::Map<String, Value> = fields
        .iter()
        .map(|(name, kind)| ((*name).to_owned(), json!({"type": kind})))
        .collect();
    let required: Vec<&str> = fields.iter().map(|(name, _)| *name).collect();
    json!({"type": "object", "properties": properties, "required": required})
}

/// The tools: name, description, input schema.
fn tools() -> Vec<(&'static str, &'static str, Value)> {
    vec![
        (
            "open_files",
            "Opens the file `path` `count` times and holds every handle.",
            schema(&[("path", "string"), ("count", "integer")]),
        ),
        (
            "open_sockets",
            "Connects to host:port `count` times and holds every connection; returns how many succeeded.",
            schema(&[
                ("host", "string"),
                ("port", "integer"),
                ("count", "integer"),
            ]),
        ),
        (
            "log_flood",
            "Sends `lines` log lines of `bytes` bytes each.",
            schema(&[("lines", "integer"), ("bytes", "integer")]),
        ),
        (
            "progress_flood",
            "Sends `count` progress reports, each with a message of `bytes` bytes.",
            schema(&[("count", "integer"), ("bytes", "integer")]),
        ),
        (
            "stdout_line",
            "Writes one line of `bytes` bytes to stdout, without a newline.",
            schema(&[("bytes", "integer")]),
        ),
        (
            "big_result",
            "Returns about `bytes` bytes of JSON data: an array of small objects, or one string when `shape` is \"string\".",
            json!({
                "type": "object",
                "properties": {"bytes": {"type": "integer"}, "shape": {"enum": ["objects", "string"]}},
                "required": ["bytes"],
            }),
        ),
        (
            "grow",
            "Allocates and touches `mib` MiB of memory, then returns.",
            schema(&[("mib", "integer")]),
        ),
    ]
}

#[derive(Deserialize)]
struct OpenFiles {
    path: String,
    count: usize,
}

#[derive(Deserialize)]
struct OpenSockets {
    host: String,
    port: u16,
    count: usize,
}

#[derive(Deserialize)]
struct Flood {
    #[serde(alias = "count")]
    lines: usize,
    bytes: usize,
}

#[derive(Deserialize)]
struct Bytes {
    bytes: usize,
}

#[derive(Deserialize)]
struct BigResult {
    bytes: usize,
    #[serde(default)]
    shape: Option<String>,
}

#[derive(Deserialize)]
struct Mib {
    mib: usize,
}

fn open_files(OpenFiles { path, count }: OpenFiles) -> ToolResult {
    let mut held = Vec::with_capacity(count);
    for _ in 0..count {
        held.push(std::fs::File::open(&path).unwrap());
    }
    ToolResult::success(json!({"opened": black_box(held).len()})).build()
}

fn open_sockets(OpenSockets { host, port, count }: OpenSockets) -> ToolResult {
    let mut held = Vec::new();
    let mut failed = 0;
    let mut error = None;
    for _ in 0..count {
        match std::net::TcpStream::connect((host.as_str(), port)) {
            Ok(stream) => held.push(stream),
            Err(e) => {
                failed += 1;
                error.get_or_insert_with(|| e.to_string());
            }
        }
    }
    ToolResult::success(json!({"connected": held.len(), "failed": failed, "error": error})).build()
}

fn log_flood(Flood { lines, bytes }: Flood) -> ToolResult {
    let line = "x".repeat(bytes);
    for _ in 0..lines {
        log::info(&line);
    }
    ToolResult::success(json!({"sent": lines})).build()
}

fn progress_flood(
    Flood {
        lines: count,
        bytes,
    }: Flood,
) -> ToolResult {
    let message = "p".repeat(bytes);
    for n in 0..count {
        progress_with_message(n as f64, Some(count as f64), &message);
    }
    ToolResult::success(json!({"sent": count})).build()
}

fn stdout_line(Bytes { bytes }: Bytes) -> ToolResult {
    let chunk = [b'o'; 4096];
    let mut out = std::io::stdout().lock();
    let mut left = bytes;
    while left > 0 {
        let n = left.min(chunk.len());
        out.write_all(&chunk[..n]).unwrap();
        left -= n;
    }
    out.flush().unwrap();
    ToolResult::success(json!({"written": bytes})).build()
}

/// JSON text written directly (no `Value` in the guest), so the guest needs
/// little more memory than the text itself.
fn big_result(BigResult { bytes, shape }: BigResult) -> ToolResult {
    let mut data = String::with_capacity(bytes + 64);
    if shape.as_deref() == Some("string") {
        data.push('"');
        data.extend(std::iter::repeat_n('s', bytes));
        data.push('"');
        let mut result = ToolResult::empty().build();
        result.outcome = Outcome::Success(Some(data));
        return result;
    }
    data.push('[');
    let mut id = 0u64;
    while data.len() < bytes {
        if id > 0 {
            data.push(',');
        }
        data.push_str("{\"id\":");
        data.push_str(&id.to_string());
        data.push_str(",\"name\":\"item\",\"ok\":true}");
        id += 1;
    }
    data.push(']');
    let mut result = ToolResult::empty().build();
    result.outcome = Outcome::Success(Some(data));
    result
}

fn grow(Mib { mib }: Mib) -> ToolResult {
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    for _ in 0..mib {
        let mut chunk = vec![0u8; 1 << 20];
        for page in chunk.chunks_mut(4096) {
            page[0] = 1;
        }
        chunks.push(black_box(chunk));
    }
    ToolResult::success(json!({"grown": black_box(chunks).len()})).build()
}

impl Plugin for HostileBudget {
    fn describe() -> Vec<ToolDescriptor> {
        tools()
            .into_iter()
            .map(|(name, description, schema)| {
                ToolDescriptor::new(name, description)
                    .input_schema(schema)
                    .build()
            })
            .collect()
    }

    fn call(name: String, arguments: String, _context: CallContext) -> ToolResult {
        match name.as_str() {
            "open_files" => open_files(parse_args(&arguments).unwrap()),
            "open_sockets" => open_sockets(parse_args(&arguments).unwrap()),
            "log_flood" => log_flood(parse_args(&arguments).unwrap()),
            "progress_flood" => progress_flood(parse_args(&arguments).unwrap()),
            "stdout_line" => stdout_line(parse_args(&arguments).unwrap()),
            "big_result" => big_result(parse_args(&arguments).unwrap()),
            "grow" => grow(parse_args(&arguments).unwrap()),
            other => ToolResult::unknown_tool(other).build(),
        }
    }
}

toolhost_guest::export_plugin!(HostileBudget);
