//! What a plugin says about its tools, parsed from the WIT `tool-descriptor`.

use serde_json::Value;

use super::bindings::wit_types;

/// A tool as its plugin describes it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolDescriptor {
    pub name: String,
    pub title: Option<String>,
    pub description: String,
    pub input_schema: Value,
    pub output_schema: Option<Value>,
    pub annotations: Annotations,
    pub required_privileges: Vec<String>,
    /// Client capabilities the tool needs (`sampling`, ...).
    pub required_client_capabilities: Vec<String>,
}

/// Behaviour hints; `None` where the tool does not say.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Annotations {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
}

impl ToolDescriptor {
    /// Parses a WIT descriptor; the schemas must be JSON.
    ///
    /// # Errors
    ///
    /// A message naming the tool and the schema that is not JSON.
    pub fn from_wit(wit: wit_types::ToolDescriptor) -> Result<ToolDescriptor, String> {
        let parse = |what: &str, text: &str| {
            serde_json::from_str::<Value>(text)
                .map_err(|e| format!("tool {:?}: the {what} is not JSON: {e}", wit.name))
        };
        let input_schema = parse("input schema", &wit.input_schema)?;
        let output_schema = wit
            .output_schema
            .as_deref()
            .map(|s| parse("output schema", s))
            .transpose()?;
        let annotations = wit
            .annotations
            .map_or_else(Annotations::default, |a| Annotations {
                read_only: a.read_only,
                destructive: a.destructive,
                idempotent: a.idempotent,
                open_world: a.open_world,
            });
        Ok(ToolDescriptor {
            name: wit.name,
            title: wit.title,
            description: wit.description,
            input_schema,
            output_schema,
            annotations,
            required_privileges: wit.required_privileges,
            required_client_capabilities: wit.required_client_capabilities,
        })
    }
}
