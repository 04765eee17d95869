//! `http-probe`: a plugin for the HTTP tests. It sends exactly the request it
//! is told to (any method, headers and body, as often as asked), reads the
//! placeholders of secrets, writes to a TCP socket and to the host's log, so a
//! test can check what leaves the sandbox and what the host lets through.

use std::collections::BTreeMap;
use std::io::Write;

use serde::Deserialize;
use toolhost_guest::{
    CallContext, ErrorCode, Plugin, ToolDescriptor, ToolResult, http, json, log, secret, with_args,
};

struct HttpProbe;

fn default_method() -> String {
    "GET".into()
}

fn one() -> u32 {
    1
}

#[derive(Deserialize)]
struct HttpRequest {
    url: String,
    #[serde(default = "default_method")]
    method: String,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    body: Option<String>,
    #[serde(default = "one")]
    times: u32,
    #[serde(default)]
    unwrap: bool,
}

#[derive(Deserialize)]
struct HttpSecret {
    name: String,
}

#[derive(Deserialize)]
struct TcpSend {
    addr: String,
    text: String,
}

#[derive(Deserialize)]
struct LogText {
    text: String,
}

/// Sends the request `times` times, one after the other, each body read in
/// full; answers with the last response.
fn http_request(args: HttpRequest) -> ToolResult {
    let mut request = http::Request::new(&args.method, &args.url);
    for (name, value) in &args.headers {
        request = request.header(name, value);
    }
    if let Some(body) = &args.body {
        request = request.body(body.as_bytes());
    }
    let mut last = None;
    for sent in 0..args.times {
        match request.clone().send() {
            Ok(response) => last = Some(response),
            Err(e) if args.unwrap => {
                panic!("HTTP {} {} failed: {e}", args.method, args.url)
            }
            Err(e) => {
                let failed = format!("HTTP {} {} failed: {e}", args.method, args.url);
                // Into the host's log too: what the guest saw of the failure,
                // host-side error texts included, is what a test can read.
                log::warn(&failed);
                return ToolResult::failure(ErrorCode::ToolError, failed)
                    .details(json!({"code": e.code(), "sent": sent}))
                    .build();
            }
        }
    }
    // `times` is at least 1 (the input schema says so).
    let Some(response) = last else {
        return ToolResult::failure(ErrorCode::InvalidArguments, "times must be at least 1")
            .build();
    };
    let mut headers = BTreeMap::<String, String>::new();
    for (name, value) in &response.headers {
        headers
            .entry(name.clone())
            .and_modify(|joined| {
                joined.push_str(", ");
                joined.push_str(value);
            })
            .or_insert_with(|| value.clone());
    }
    ToolResult::success(json!({
        "status": response.status,
        "headers": headers,
        "body": response.text(),
        "sent": args.times,
    }))
    .summary(format!(
        "{} {} -> {}",
        args.method, args.url, response.status
    ))
    .build()
}

fn http_secret(HttpSecret { name }: HttpSecret) -> ToolResult {
    ToolResult::success(json!({"placeholder": secret(&name)})).build()
}

fn tcp_send(TcpSend { addr, text }: TcpSend) -> ToolResult {
    let sent = std::net::TcpStream::connect(addr.as_str())
        .and_then(|mut stream| stream.write_all(text.as_bytes()));
    match sent {
        Ok(()) => ToolResult::success(json!({"sent": text.len()})).build(),
        Err(e) => ToolResult::failure(
            ErrorCode::ToolError,
            format!("sending to {addr} failed: {e}"),
        )
        .build(),
    }
}

fn log_text(LogText { text }: LogText) -> ToolResult {
    log::info(&text);
    ToolResult::success(json!({"logged": true})).build()
}

impl Plugin for HttpProbe {
    fn describe() -> Vec<ToolDescriptor> {
        vec![
            ToolDescriptor::new(
                "http_request",
                "Sends an HTTP request `times` times and returns the last response: \
                 status, headers and body as text.",
            )
            .input_schema(json!({
                "type": "object",
                "properties": {
                    "url": {"type": "string"},
                    "method": {"type": "string", "default": "GET"},
                    "headers": {
                        "type": "object",
                        "additionalProperties": {"type": "string"},
                        "default": {},
                    },
                    "body": {"type": ["string", "null"], "default": null},
                    "times": {"type": "integer", "minimum": 1, "default": 1},
                    "unwrap": {
                        "type": "boolean",
                        "default": false,
                        "description": "Trap (panic) on a wasi:http error instead of failing.",
                    },
                },
                "required": ["url"],
                "additionalProperties": false,
            }))
            .output_schema(json!({
                "type": "object",
                "properties": {
                    "status": {"type": "integer"},
                    "headers": {"type": "object", "additionalProperties": {"type": "string"}},
                    "body": {"type": "string"},
                    "sent": {"type": "integer"},
                },
                "required": ["status", "headers", "body", "sent"],
            }))
            .open_world(true)
            .build(),
            ToolDescriptor::new(
                "http_secret",
                "Returns the placeholder the host gives for the secret `name`, or null.",
            )
            .input_schema(json!({
                "type": "object",
                "properties": {"name": {"type": "string"}},
                "required": ["name"],
                "additionalProperties": false,
            }))
            .output_schema(json!({
                "type": "object",
                "properties": {"placeholder": {"type": ["string", "null"]}},
                "required": ["placeholder"],
            }))
            .read_only(true)
            .build(),
            ToolDescriptor::new(
                "tcp_send",
                "Connects to `addr` (IP:port) over TCP and writes `text`.",
            )
            .input_schema(json!({
                "type": "object",
                "properties": {"addr": {"type": "string"}, "text": {"type": "string"}},
                "required": ["addr", "text"],
                "additionalProperties": false,
            }))
            .output_schema(json!({
                "type": "object",
                "properties": {"sent": {"type": "integer"}},
                "required": ["sent"],
            }))
            .build(),
            ToolDescriptor::new("log_text", "Writes `text` to the host's log at info level.")
                .input_schema(json!({
                    "type": "object",
                    "properties": {"text": {"type": "string"}},
                    "required": ["text"],
                    "additionalProperties": false,
                }))
                .output_schema(json!({
                    "type": "object",
                    "properties": {"logged": {"type": "boolean"}},
                    "required": ["logged"],
                }))
                .build(),
        ]
    }

    fn call(name: String, arguments: String, _context: CallContext) -> ToolResult {
        match name.as_str() {
            "http_request" => with_args(&arguments, http_request),
            "http_secret" => with_args(&arguments, http_secret),
            "tcp_send" => with_args(&arguments, tcp_send),
            "log_text" => with_args(&arguments, log_text),
            other => ToolResult::unknown_tool(other).build(),
        }
    }
}

toolhost_guest::export_plugin!(HttpProbe);
