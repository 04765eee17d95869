//! A host for tests: a runtime and catalog from TOML written by the test, with the
//! guests `make guests` built.

use std::path::{Path, PathBuf};

use serde_json::Value;
use toolhost::catalog::{Caller, Catalog};
use toolhost::config::Config;
use toolhost::result::{ErrorCode, ToolResult};
use toolhost::runtime::{EngineSettings, Runtime};

/// The repository root.
pub fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The built component of guest crate `name` (`hello`, `legacy_app`, ...).
pub fn guest(name: &str) -> PathBuf {
    built("guest-examples/target/wasm32-wasip2/release", name)
}

/// The built component `name` of a JavaScript, Python or C example
/// (`js_tools`, `py_tools`, `c_tools`, `js_legacy_app`).
pub fn lang_guest(name: &str) -> PathBuf {
    built("guest-examples/target/lang", name)
}

fn built(dir: &str, name: &str) -> PathBuf {
    let path = root().join(dir).join(format!("{name}.wasm"));
    assert!(
        path.exists(),
        "{} is missing: run `make guests` first",
        path.display()
    );
    path
}

/// A loaded catalog and the runtime it lives in.
pub struct TestHost {
    pub catalog: std::sync::Arc<Catalog>,
    pub runtime: Runtime,
}

impl TestHost {
    /// Loads the configuration `toml` (paths in it are used as written).
    pub async fn new(toml: &str) -> TestHost {
        let config = Config::parse(toml, Path::new("test.toml"), Path::new(""))
            .expect("the test configuration parses");
        let settings = EngineSettings {
            pooling: config.host.pooling,
            fuel: config.plugins.iter().any(|p| p.policy.fuel.is_some()),
            max_memory_bytes: config
                .plugins
                .iter()
                .map(|p| p.policy.memory_mib << 20)
                .max()
                .unwrap_or(64 << 20),
            ..EngineSettings::default()
        };
        // One compile cache for every test: each component compiles once per machine.
        let runtime =
            Runtime::new(settings, root().join("target/test-compile-cache")).expect("an engine");
        let catalog = Catalog::load(&config, &runtime)
            .await
            .unwrap_or_else(|e| panic!("loading the catalog: {e}"));
        TestHost {
            catalog: std::sync::Arc::new(catalog),
            runtime,
        }
    }

    /// Calls `tool` as the local operator; panics for an unknown tool.
    pub async fn call(&self, tool: &str, arguments: Value) -> ToolResult {
        self.call_as(tool, arguments, &Caller::local()).await
    }

    pub async fn call_as(&self, tool: &str, arguments: Value, caller: &Caller) -> ToolResult {
        // A generous bound so a deadline that never fires fails the test instead of hanging it.
        tokio::time::timeout(
            std::time::Duration::from_secs(60),
            self.catalog
                .call_named(tool, Some(&arguments), caller, "test-1", None),
        )
        .await
        .unwrap_or_else(|_| panic!("{tool} did not return within 60 s: the deadline did not fire"))
        .unwrap_or_else(|e| panic!("{e}"))
    }
}

/// The error code of a failure; panics on a success.
pub fn code(result: &ToolResult) -> ErrorCode {
    result
        .error()
        .unwrap_or_else(|| panic!("expected a failure, got {result:?}"))
        .code
}
