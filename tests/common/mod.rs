//! What the end-to-end tests share: the official MCP schemas and a mapper with an
//! in-memory store on the samples' fixed clock.

pub mod attack;
pub mod host;
pub mod mcp_client;
pub mod postgres;
pub mod process;
pub mod stdio;
pub mod web_server;
pub mod webhook_server;

use std::path::PathBuf;
use std::sync::Arc;

use jiff::SignedDuration;
use serde_json::{Value, json};
use toolhost::render::format::decode_stored;
use toolhost::render::{Mapper, Revision, SizeLimits};
use toolhost::result::ToolResult;
use toolhost::samples;
use toolhost::store::MemoryStore;

/// A mapper with the default limits and an in-memory store whose clock is the
/// samples' render time, so links and expiries are reproducible.
pub fn mapper() -> Mapper {
    Mapper::new(SizeLimits::default(), Some(Arc::new(store())))
}

pub fn store() -> MemoryStore {
    MemoryStore::new(SignedDuration::from_hours(1), samples::render_time)
}

/// The result `store` keeps behind `uri` for `principal`, decoded as
/// `resources/read` decodes it.
pub fn read_back(store: &MemoryStore, uri: &str, principal: Option<&str>) -> Option<ToolResult> {
    store
        .read(uri, principal)
        .map(|row| decode_stored(row.format, &row.body).expect("a stored row decodes"))
}

/// Where `../shared` lies: `TOOLHOST_SHARED_DIR`, or beside the checkout.
pub fn shared_dir() -> PathBuf {
    std::env::var_os("TOOLHOST_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
}

/// The official JSON schema of each MCP revision.
pub struct McpSchemas {
    documents: Vec<(Revision, Value)>,
}

impl McpSchemas {
    pub fn load() -> Self {
        let dir = shared_dir().join("reference/mcp-schema");
        let documents = Revision::ALL
            .into_iter()
            .map(|revision| {
                let path = dir.join(format!("{revision}.json"));
                let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
                    panic!(
                        "cannot read the official MCP schema {}: {e}; set TOOLHOST_SHARED_DIR to the folder holding reference/mcp-schema",
                        path.display()
                    )
                });
                (revision, serde_json::from_str(&text).expect("the schema is JSON"))
            })
            .collect();
        McpSchemas { documents }
    }

    /// Validates `value` as the definition `name` of `revision`'s schema.
    pub fn check(&self, revision: Revision, name: &str, value: &Value) -> Result<(), String> {
        let document = &self
            .documents
            .iter()
            .find(|(r, _)| *r == revision)
            .unwrap()
            .1;
        let mut schema = document.clone();
        let defs = if schema.get("$defs").is_some() {
            "$defs"
        } else {
            "definitions"
        };
        assert!(
            schema[defs].get(name).is_some(),
            "{revision} has no definition {name}"
        );
        schema["$ref"] = json!(format!("#/{defs}/{name}"));
        let validator = jsonschema::validator_for(&schema).expect("the official schema compiles");
        let errors: Vec<String> = validator
            .iter_errors(value)
            .map(|e| format!("{} at {}", e, e.instance_path()))
            .collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }

    /// The `result` of the JSON-RPC `response`, valid as the definition
    /// `definition` of `revision`'s schema; a panic naming what is wrong
    /// otherwise.
    pub fn result<'a>(
        &self,
        revision: Revision,
        definition: &str,
        response: &'a Value,
    ) -> &'a Value {
        let result = response
            .get("result")
            .unwrap_or_else(|| panic!("{revision}: expected a result, got {response}"));
        if let Err(errors) = self.check(revision, definition, result) {
            panic!("{revision} {definition}: {errors}\n{result:#}");
        }
        result
    }

    pub fn check_call_tool_result(&self, revision: Revision, value: &Value) -> Result<(), String> {
        self.check(revision, "CallToolResult", value)
    }
}

/// The code of the JSON-RPC error `response`; a panic for anything else.
pub fn error_code(response: &Value) -> i64 {
    response["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("expected an error, got {response}"))
}
