//! P1's call, shared by criterion's benchmark (`benches/call.rs`) and its
//! instruction count (`examples/p1_count.rs`): calc's `add` as the MCP handler
//! makes it, rendered for the edge, and the host that serves it.

use std::path::{Path, PathBuf};

use serde_json::Value;
use toolhost::catalog::{Caller, Catalog};
use toolhost::config::Config;
use toolhost::render::{Mapper, OutputMode, RenderContext, Revision, ServerInfo, Target};
use toolhost::runtime::{EngineSettings, Runtime};

/// The repository's root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The built Rust example `name`.
///
/// # Panics
///
/// When it is not built (`make guests`).
pub fn example(name: &str) -> PathBuf {
    let path = root().join(format!(
        "guest-examples/target/wasm32-wasip2/release/{name}.wasm"
    ));
    assert!(
        path.exists(),
        "{} is missing: run `make guests` first",
        path.display()
    );
    path
}

/// The target P1's call is rendered for: the latest MCP revision, compat mode.
pub const TARGET: Target = Target::Mcp {
    revision: Revision::LATEST,
    mode: OutputMode::Compat,
};

/// The server a 2026-07-28 result names, as the MCP edge passes it.
pub const SERVER: ServerInfo<'static> = ServerInfo {
    name: "toolhost",
    version: env!("CARGO_PKG_VERSION"),
};

/// A catalog and mapper, and the runtime under them.
pub struct Host {
    pub catalog: Catalog,
    pub mapper: Mapper,
    pub runtime: Runtime,
}

/// calc alone, with the pooling allocator (a pool of `pool_instances`) or
/// on demand.
pub async fn calc_host(pooling: bool, pool_instances: u32) -> Host {
    let toml = format!(
        "[host]\nallocator = \"{}\"\n[[plugin]]\npath = \"{}\"\n",
        if pooling { "pooling" } else { "on-demand" },
        example("calc").display()
    );
    host_of(&toml, pool_instances).await
}

/// The catalog and mapper of the configuration `toml`.
///
/// # Panics
///
/// When the configuration or a plugin in it does not load.
pub async fn host_of(toml: &str, pool_instances: u32) -> Host {
    let config = Config::parse(toml, Path::new("bench.toml"), Path::new("")).expect("config");
    let settings = EngineSettings {
        pooling: config.host.pooling,
        fuel: false,
        max_memory_bytes: 64 << 20,
        pool_instances,
    };
    let runtime =
        Runtime::new(settings, root().join("target/bench/compile-cache")).expect("an engine");
    let catalog = Catalog::load(&config, &runtime).await.expect("the catalog");
    Host {
        catalog,
        mapper: Mapper::default(),
        runtime,
    }
}

/// One call as the MCP handler makes it, rendered for the edge: over stdio and
/// over Streamable HTTP without a session the text the mapper writes (`as_text`
/// true), over HTTP in a session the typed result that rmcp serializes
/// (`as_text` false).
///
/// # Panics
///
/// When the answer holds no sum.
pub async fn toolhost_call(host: &Host, args: &Value, as_text: bool) -> String {
    let tool = host.catalog.tool("add").expect("add");
    let result = host
        .catalog
        .call(tool, Some(args), &Caller::local(), "1", None)
        .await;
    let mut ctx = RenderContext::new("add", jiff::Timestamp::now());
    ctx.output_schema = tool.descriptor.output_schema.as_ref();
    ctx.request_id = "1";
    ctx.server = Some(SERVER);
    ctx.mcp_as_text = as_text;
    let rendered = host.mapper.render_owned(result, TARGET, &ctx).await;
    // What goes into the response: the typed rendering serialized once as rmcp
    // does, or the text as it is.
    let text = rendered.rendering.into_json();
    assert!(text.contains("\"sum\"") || text.contains('5'), "{text}");
    text
}
