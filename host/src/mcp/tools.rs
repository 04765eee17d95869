//! `tools/list` entries per revision: the fields each revision has, the output
//! schema in the shape the revision allows (the same transformation the mapper
//! applies to structured content), and hints a tool leaves unset derived from its
//! plugin's policy.

use serde_json::{Map, Value, json};

use crate::catalog::Tool;
use crate::render::{Revision, structured};

/// The JSON of one tool for `revision`.
pub fn listing(tool: &Tool, revision: Revision) -> Value {
    let descriptor = &tool.descriptor;
    let mut out = Map::new();
    out.insert("name".into(), json!(tool.name));
    if revision.has_structured_content()
        && let Some(title) = &descriptor.title
    {
        out.insert("title".into(), json!(title));
    }
    out.insert("description".into(), json!(descriptor.description));
    out.insert("inputSchema".into(), descriptor.input_schema.clone());
    if let Some(schema) = &descriptor.output_schema
        && let Some(advertised) = structured::output_schema(schema, revision)
    {
        out.insert("outputSchema".into(), advertised);
    }
    if revision.has_audio() {
        // Annotations came with 2025-03-26 (the same revision as audio).
        let hints = tool.annotations;
        let mut annotations = Map::new();
        if let Some(title) = &descriptor.title {
            annotations.insert("title".into(), json!(title));
        }
        for (key, value) in [
            ("readOnlyHint", hints.read_only),
            ("destructiveHint", hints.destructive),
            ("idempotentHint", hints.idempotent),
            ("openWorldHint", hints.open_world),
        ] {
            if let Some(value) = value {
                annotations.insert(key.into(), json!(value));
            }
        }
        if !annotations.is_empty() {
            out.insert("annotations".into(), Value::Object(annotations));
        }
    }
    Value::Object(out)
}
