//! `broken`: a plugin whose descriptors break the catalog's rules, for the tests of
//! `toolhost check` and of loading. It describes one tool twice, a tool whose
//! input schema is not valid JSON Schema, and a name clients would refuse.

use toolhost_guest::{CallContext, Plugin, ToolDescriptor, ToolResult, json};

struct Broken;

impl Plugin for Broken {
    fn describe() -> Vec<ToolDescriptor> {
        let object = json!({"type": "object"});
        vec![
            ToolDescriptor::new("twice", "Described twice.")
                .input_schema(object.clone())
                .build(),
            ToolDescriptor::new("twice", "Described twice.")
                .input_schema(object.clone())
                .build(),
            ToolDescriptor::new("invalid_schema", "Its input schema is not JSON Schema.")
                .input_schema(json!({"type": "object", "properties": {"a": {"type": 12}}}))
                .build(),
            ToolDescriptor::new("bad name!", "A name with a space and a '!'.")
                .input_schema(object)
                .build(),
        ]
    }

    fn call(name: String, _arguments: String, _context: CallContext) -> ToolResult {
        ToolResult::unknown_tool(&name).build()
    }
}

toolhost_guest::export_plugin!(Broken);
