//! `hello`: the smallest useful tool. It greets someone, logs, reports
//! progress and reads an optional configuration value.

use serde::Deserialize;
use toolhost_guest::{
    CallContext, Part, Plugin, ToolDescriptor, ToolResult, config, json, log, progress, with_args,
};

struct Hello;

#[derive(Deserialize)]
struct Args {
    name: Option<String>,
}

impl Plugin for Hello {
    fn describe() -> Vec<ToolDescriptor> {
        vec![
            ToolDescriptor::new("hello", "Greets someone by name.")
                .title("Hello")
                .input_schema(json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "Who to greet (default: world)"}
                    },
                }))
                .read_only(true)
                .build(),
        ]
    }

    fn call(name: String, arguments: String, _context: CallContext) -> ToolResult {
        match name.as_str() {
            "hello" => with_args(&arguments, |Args { name }| {
                let name = name.unwrap_or_else(|| "world".to_string());
                // The operator may grant a `greeting` of its own.
                let greeting = config("greeting").unwrap_or_else(|| "Hello".to_string());
                log::info(format!("greeting {name}"));
                progress(1.0, Some(1.0));
                ToolResult::empty()
                    .part(Part::text(format!("{greeting}, {name}!")))
                    .summary(format!("Greeted {name}"))
            }),
            other => ToolResult::unknown_tool(other).build(),
        }
    }
}

toolhost_guest::export_plugin!(Hello);
