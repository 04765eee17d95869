//! The JSON-RPC input path: arbitrary bytes as what a client sends to the server.
//!
//! Each input is one stdio session: the bytes go, as written, into rmcp's stdio
//! framing (newline-delimited JSON-RPC) over an in-memory duplex pipe, and then the
//! client end closes. Behind the framing is our handler (`mcp::Session`) with a real
//! catalog (the example guests `hello`, `calc`, `errors` and `media`, when built),
//! a mapper with a small size limit and an in-memory store, so `tools/call`,
//! `tools/list`, `resources/read`, `logging/setLevel`, `server/discover` and custom
//! methods of both eras all run. The server must not panic, must finish within
//! 20 s of the client closing, and must write nothing but JSON-RPC messages.

#![no_main]

use std::path::PathBuf;
use std::sync::{Arc, LazyLock};
use std::time::Duration;

use jiff::SignedDuration;
use libfuzzer_sys::fuzz_target;
use rmcp::ServiceExt;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use toolhost::catalog::Catalog;
use toolhost::config::Config;
use toolhost::mcp::{Server, Session};
use toolhost::render::{Mapper, OutputMode, SizeLimits};
use toolhost::runtime::{EngineSettings, Runtime};
use toolhost::store::{MemoryStore, ResultStore};

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
});

/// Where the example guests are: `TOOLHOST_FUZZ_GUESTS`, or `make guests`' output.
fn guest_dir() -> PathBuf {
    std::env::var_os("TOOLHOST_FUZZ_GUESTS")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("../guest-examples/target/wasm32-wasip2/release")
        })
}

/// The wasmtime runtime and the catalog, loaded once for the whole run.
static HOST: LazyLock<(Runtime, Arc<Catalog>)> = LazyLock::new(|| {
    let dir = guest_dir();
    let mut toml = String::from("[host]\nallocator = \"on-demand\"\n");
    for name in ["hello", "calc", "errors", "media"] {
        let path = dir.join(format!("{name}.wasm"));
        if path.exists() {
            toml.push_str(&format!(
                "[[plugin]]\npath = {:?}\n",
                path.display().to_string()
            ));
        } else {
            eprintln!(
                "jsonrpc fuzz target: {} is missing (run `make rust-guests` or set TOOLHOST_FUZZ_GUESTS); serving without it",
                path.display()
            );
        }
    }
    let config = Config::parse(
        &toml,
        std::path::Path::new("fuzz.toml"),
        std::path::Path::new(""),
    )
    .expect("the fuzz configuration parses");
    let settings = EngineSettings {
        pooling: false,
        fuel: false,
        max_memory_bytes: 64 << 20,
    };
    let cache = std::env::temp_dir().join("toolhost-fuzz-compile-cache");
    let runtime = Runtime::new(settings, cache).expect("an engine");
    let catalog = RUNTIME
        .block_on(Catalog::load(&config, &runtime))
        .unwrap_or_else(|e| panic!("loading the fuzz catalog: {e}"));
    (runtime, Arc::new(catalog))
});

fuzz_target!(|data: &[u8]| {
    let catalog = HOST.1.clone();
    RUNTIME.block_on(async move {
        let store: Arc<dyn ResultStore> = Arc::new(MemoryStore::new(
            SignedDuration::from_hours(1),
            jiff::Timestamp::now,
        ));
        // A small limit, so that larger results take the store's path too.
        let mapper = Mapper::new(SizeLimits::uniform(2048), Some(store.clone()));
        let server = Server::new(catalog, mapper, store, OutputMode::Compat);

        let (client, server_end) = tokio::io::duplex(1 << 16);
        let (server_read, server_write) = tokio::io::split(server_end);
        let serving = tokio::spawn(async move {
            // A pipe, as stdio is: the local operator's session (an HTTP session
            // would refuse every request, none carrying a caller).
            let local = Session::with_input(server, tokio_util::sync::CancellationToken::new());
            if let Ok(running) = local.serve((server_read, server_write)).await {
                let _ = running.waiting().await;
            }
        });

        let (mut client_read, mut client_write) = tokio::io::split(client);
        let input = data.to_vec();
        let writer = tokio::spawn(async move {
            let _ = client_write.write_all(&input).await;
            let _ = client_write.shutdown().await;
            // Keep the write half until the server is done reading.
            client_write
        });
        let mut output = Vec::new();
        let read = tokio::time::timeout(
            Duration::from_secs(20),
            client_read.read_to_end(&mut output),
        )
        .await;
        assert!(
            read.is_ok(),
            "the server did not finish within 20 s of the client closing; it wrote:\n{}",
            String::from_utf8_lossy(&output)
        );
        let _ = writer.await;
        tokio::time::timeout(Duration::from_secs(20), serving)
            .await
            .expect("the session task ends once the pipe closes")
            .expect("the session task did not panic");

        let output = String::from_utf8(output).expect("the server writes UTF-8");
        for line in output.lines().filter(|l| !l.trim().is_empty()) {
            let message: Value = serde_json::from_str(line).unwrap_or_else(|e| {
                panic!("the server wrote a line that is not JSON ({e}): {line}")
            });
            assert_eq!(message["jsonrpc"], "2.0", "not a JSON-RPC message: {line}");
        }
    });
});
