//! `tools/list` entries per revision: the fields each revision has, the output
//! schema in the shape the revision allows (the same transformation the mapper
//! applies to structured content), and hints a tool leaves unset derived from its
//! plugin's policy. [`Listings`] holds them for every revision, built once per
//! catalog.

use serde_json::{Map, Value, json};

use crate::catalog::{Catalog, Tool};
use crate::render::{Revision, structured};

/// Every tool of one catalog as each revision lists it, in the catalog's order;
/// built when the catalog is, so a `tools/list` only filters and copies.
pub struct Listings {
    per_revision: Vec<Result<Vec<rmcp::model::Tool>, String>>,
}

impl Listings {
    /// The listings of every tool of `catalog` for every revision. A tool whose
    /// listing does not fit rmcp's types makes that revision's listing an error,
    /// which `tools/list` answers with.
    pub fn of(catalog: &Catalog) -> Listings {
        let per_revision = Revision::ALL
            .iter()
            .map(|&revision| {
                catalog
                    .tools()
                    .iter()
                    .map(|tool| {
                        serde_json::from_value(listing(tool, revision)).map_err(|e| {
                            format!(
                                "the listing of {} does not fit the protocol types: {e}",
                                tool.name
                            )
                        })
                    })
                    .collect()
            })
            .collect();
        Listings { per_revision }
    }

    /// The listing of every tool for `revision`, in the catalog's order.
    ///
    /// # Errors
    ///
    /// What did not fit the protocol types, when a listing did not.
    pub fn for_revision(&self, revision: Revision) -> Result<&[rmcp::model::Tool], &str> {
        let index = Revision::ALL
            .iter()
            .position(|&r| r == revision)
            .expect("every revision is in Revision::ALL");
        match &self.per_revision[index] {
            Ok(tools) => Ok(tools),
            Err(e) => Err(e),
        }
    }
}

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
