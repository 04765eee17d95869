//! `legacy-app`: an app written against the legacy response format (world
//! `legacy-app`). It returns hand-built `{"success": ..}` envelopes as strings,
//! as an old app would; the host parses them into result objects.

use toolhost_guest::{CallContext, LegacyApp, ToolDescriptor, json};

struct App;

/// Each tool and the exact string it answers with.
const ANSWERS: [(&str, &str, &str); 5] = [
    (
        "legacy_success",
        "Returns a success envelope with data.",
        r#"{"success": true, "data": {"orderId": "1001", "status": "shipped"}}"#,
    ),
    (
        "legacy_error_string",
        "Returns a failure envelope whose error is a string.",
        r#"{"success": false, "error": "Missing privilege: order:read"}"#,
    ),
    (
        "legacy_error_object",
        "Returns a failure envelope whose error is an object with a code.",
        r#"{"success": false, "error": {"message": "Order 1001 is locked", "code": "not_found", "orderId": "1001"}}"#,
    ),
    (
        "legacy_dry_run",
        "Returns a dry-run envelope with a preview beside the data.",
        r#"{"success": true, "data": {"total": 12.5}, "dryRun": true, "preview": {"lines": 2}}"#,
    ),
    (
        "legacy_plain",
        "Returns plain text instead of an envelope.",
        "Order 1001 was shipped.",
    ),
];

impl LegacyApp for App {
    fn describe() -> Vec<ToolDescriptor> {
        ANSWERS
            .iter()
            .map(|(name, description, _)| {
                ToolDescriptor::new(*name, *description)
                    .input_schema(json!({"type": "object", "properties": {}}))
                    .build()
            })
            .collect()
    }

    fn call(name: String, _arguments: String, _context: CallContext) -> String {
        match ANSWERS.iter().find(|(tool, _, _)| *tool == name) {
            Some((_, _, answer)) => answer.to_string(),
            None => json!({"success": false, "error": format!("Unknown tool: {name}")}).to_string(),
        }
    }
}

toolhost_guest::export_legacy_app!(App);
