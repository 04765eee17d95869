//! `bulk`: a large result on demand (about 85 bytes of JSON per item), to
//! exercise the host's size limits and result store.

use serde::{Deserialize, Serialize};
use toolhost_guest::{CallContext, ErrorCode, Plugin, ToolDescriptor, ToolResult, json, with_args};

const MAX_COUNT: u32 = 100_000;

struct Bulk;

#[derive(Deserialize)]
struct Args {
    count: i64,
}

#[derive(Serialize)]
struct Item {
    id: u32,
    name: String,
    note: &'static str,
}

#[derive(Serialize)]
struct Items {
    items: Vec<Item>,
}

fn bulk(Args { count }: Args) -> ToolResult {
    let count = match u32::try_from(count) {
        Ok(count @ 1..=MAX_COUNT) => count,
        _ => {
            return ToolResult::failure(
                ErrorCode::InvalidArguments,
                format!("count must be between 1 and {MAX_COUNT}."),
            )
            .details(json!({"field": "count", "min": 1, "max": MAX_COUNT}))
            .build();
        }
    };
    let items = (1..=count)
        .map(|id| Item {
            id,
            name: format!("item {id}"),
            note: "a line of filler text to make the result large",
        })
        .collect();
    ToolResult::success(Items { items })
        .summary(format!("{count} items"))
        .build()
}

impl Plugin for Bulk {
    fn describe() -> Vec<ToolDescriptor> {
        vec![
            ToolDescriptor::new("bulk", "Returns `count` generated items: a large result.")
                .input_schema(json!({
                    "type": "object",
                    "properties": {
                        "count": {"type": "integer", "minimum": 1, "maximum": MAX_COUNT}
                    },
                    "required": ["count"],
                }))
                .read_only(true)
                .build(),
        ]
    }

    fn call(name: String, arguments: String, _context: CallContext) -> ToolResult {
        match name.as_str() {
            "bulk" => with_args(&arguments, bulk),
            other => ToolResult::unknown_tool(other).build(),
        }
    }
}

toolhost_guest::export_plugin!(Bulk);
