//! `hostile`: a plugin whose tools misbehave, one way each, for the sandbox
//! tests. Where an operation the sandbox should forbid fails, the tool panics
//! with the error (`unwrap`): a hostile guest does not handle errors, so the
//! host sees a trap whose message names the error. If an operation succeeds,
//! the tool returns what it got, so a test can tell an escape apart from a
//! denial.

use std::hint::black_box;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Deserialize;
use toolhost_guest::wit::Outcome;
use toolhost_guest::{
    CallContext, Plugin, ToolDescriptor, ToolResult, Value, json, log, parse_args,
};

struct Hostile;

/// Survives between calls only if the host reuses an instance (it must not).
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// The tools: name, description, input schema.
fn tools() -> Vec<(&'static str, &'static str, Value)> {
    let none = json!({"type": "object", "properties": {}});
    let string = |field: &str| {
        json!({
            "type": "object",
            "properties": {field: {"type": "string"}},
            "required": [field],
        })
    };
    vec![
        (
            "spin",
            "Loops forever without calling the host.",
            none.clone(),
        ),
        (
            "memory_bomb",
            "Allocates and touches 1 MiB chunks forever.",
            none.clone(),
        ),
        (
            "deep_recursion",
            "Recurses without bound, with a buffer on the shadow stack in linear memory.",
            none.clone(),
        ),
        (
            "deep_recursion_native",
            "Recurses without bound on the wasm stack alone (no addressable locals).",
            none.clone(),
        ),
        ("panic", "Panics.", none.clone()),
        (
            "huge_output",
            "Returns a 500 MB string as data.",
            none.clone(),
        ),
        ("read_passwd", "Reads /etc/passwd.", none.clone()),
        ("escape_dotdot", "Reads /data/../secret.txt.", none.clone()),
        (
            "escape_symlink",
            "Reads /data/link-to-secret, a symlink out of /data.",
            none.clone(),
        ),
        (
            "escape_absolute",
            "Reads the absolute path `path`.",
            string("path"),
        ),
        (
            "connect_tcp",
            "Opens a TCP connection to host:port and writes hello.",
            json!({
                "type": "object",
                "properties": {"host": {"type": "string"}, "port": {"type": "integer"}},
                "required": ["host", "port"],
            }),
        ),
        (
            "read_env",
            "Reads the environment variable `name`.",
            string("name"),
        ),
        ("write_readonly", "Writes /data/written.txt.", none.clone()),
        ("bad_json", "Returns data that is not JSON.", none.clone()),
        (
            "bad_namespace",
            "Returns an extension value in a protocol's namespace.",
            none.clone(),
        ),
        ("stateful", "Counts its calls in a static.", none.clone()),
        ("slow_host_calls", "Calls the host's log forever.", none),
    ]
}

#[derive(Deserialize)]
struct PathArg {
    path: String,
}

#[derive(Deserialize)]
struct Connect {
    host: String,
    port: u16,
}

#[derive(Deserialize)]
struct EnvArg {
    name: String,
}

fn spin() -> ! {
    let mut n = 0u64;
    loop {
        n = black_box(n.wrapping_add(1));
    }
}

fn memory_bomb() -> ! {
    let mut chunks: Vec<Vec<u8>> = Vec::new();
    loop {
        let mut chunk = vec![0u8; 1 << 20];
        // Write every page, so the memory is really used.
        for page in chunk.chunks_mut(4096) {
            page[0] = 1;
        }
        chunks.push(black_box(chunk));
    }
}

/// Not a tail call: the frame (with its buffer) is needed after the call.
#[allow(unconditional_recursion)]
fn recurse(depth: u64) -> u64 {
    let mut buffer = [0u8; 1024];
    buffer[(depth % 1024) as usize] = depth as u8;
    let buffer = black_box(buffer);
    recurse(black_box(depth + 1)) + u64::from(buffer[0])
}

/// Recursion whose frames live on the wasm value stack only, so it overflows the
/// engine's stack limit instead of Rust's shadow stack in linear memory.
fn recurse_native(depth: u64) -> u64 {
    if black_box(depth) == u64::MAX {
        return 0;
    }
    black_box(recurse_native(depth + 1)).wrapping_mul(3) ^ depth
}

fn huge_output() -> ToolResult {
    const SIZE: usize = 500 * 1024 * 1024;
    let mut data = String::with_capacity(SIZE + 2);
    data.push('"');
    while data.len() < SIZE {
        data.push_str("xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx");
    }
    data.push('"');
    raw_success(data)
}

/// A result whose data is `text` as it is, past the SDK's serializer.
fn raw_success(text: String) -> ToolResult {
    let mut result = ToolResult::empty().build();
    result.outcome = Outcome::Success(Some(text));
    result
}

fn read(path: &str) -> ToolResult {
    let content = std::fs::read_to_string(path).unwrap();
    ToolResult::success(json!({"path": path, "content": content})).build()
}

fn connect_tcp(Connect { host, port }: Connect) -> ToolResult {
    let mut stream = std::net::TcpStream::connect((host.as_str(), port)).unwrap();
    stream.write_all(b"hello").unwrap();
    ToolResult::success(json!({"connected": true})).build()
}

fn read_env(EnvArg { name }: EnvArg) -> ToolResult {
    let value = std::env::var(&name).unwrap();
    ToolResult::success(json!({"value": value})).build()
}

impl Plugin for Hostile {
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
            "spin" => spin(),
            "memory_bomb" => memory_bomb(),
            "deep_recursion" => {
                let depth = recurse(0);
                ToolResult::success(json!({"depth": depth})).build()
            }
            "deep_recursion_native" => {
                let depth = recurse_native(0);
                ToolResult::success(json!({"depth": depth})).build()
            }
            "panic" => panic!("hostile panic"),
            "huge_output" => huge_output(),
            "read_passwd" => read("/etc/passwd"),
            "escape_dotdot" => read("/data/../secret.txt"),
            "escape_symlink" => read("/data/link-to-secret"),
            "escape_absolute" => read(&parse_args::<PathArg>(&arguments).unwrap().path),
            "connect_tcp" => connect_tcp(parse_args(&arguments).unwrap()),
            "read_env" => read_env(parse_args(&arguments).unwrap()),
            "write_readonly" => {
                std::fs::write("/data/written.txt", "pwned").unwrap();
                ToolResult::success(json!({"written": true})).build()
            }
            "bad_json" => raw_success("{not json".to_string()),
            "bad_namespace" => ToolResult::success(json!({"ok": true}))
                .extension("io.modelcontextprotocol", "hijack", json!(true))
                .build(),
            "stateful" => {
                let count = COUNTER.fetch_add(1, Ordering::SeqCst) + 1;
                ToolResult::success(json!({"count": count})).build()
            }
            "slow_host_calls" => loop {
                log::debug("still busy");
            },
            other => ToolResult::unknown_tool(other).build(),
        }
    }
}

toolhost_guest::export_plugin!(Hostile);
