//! The fixed sample results of the golden render matrix (`tests/golden/`), of the
//! literal stored rows of format 1 (`tests/formats/stored-v1/`) and of
//! `toolhost samples`: one of each kind of result the mapper must handle.

use jiff::Timestamp;
use serde_json::{Value, json};

use crate::render::legacy::parse::parse_legacy;
use crate::result::{
    ContentPart, ErrorCode, Extension, Pagination, ResourceBody, ResourceLink, StoredLink,
    ToolResult,
};

/// One sample: a name (also its folder under `tests/golden/`), what it shows, the
/// result, and the output schema its tool would declare.
#[derive(Debug, Clone)]
pub struct Sample {
    pub name: &'static str,
    pub about: &'static str,
    pub result: ToolResult,
    pub output_schema: Option<Value>,
}

/// The render time used for every sample, so renderings are reproducible.
pub fn render_time() -> Timestamp {
    "2027-01-15T08:00:00Z".parse().expect("a valid timestamp")
}

/// A 1×1 transparent PNG.
pub const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
    0x42, 0x60, 0x82,
];

/// A WAV file of four silent 8-bit mono samples at 8 kHz.
pub fn wav() -> Vec<u8> {
    let samples = [0x80u8; 4];
    let mut wav = Vec::new();
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + samples.len() as u32).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    wav.extend_from_slice(&16u32.to_le_bytes()); // fmt chunk size
    wav.extend_from_slice(&1u16.to_le_bytes()); // PCM
    wav.extend_from_slice(&1u16.to_le_bytes()); // mono
    wav.extend_from_slice(&8000u32.to_le_bytes()); // sample rate
    wav.extend_from_slice(&8000u32.to_le_bytes()); // byte rate
    wav.extend_from_slice(&1u16.to_le_bytes()); // block align
    wav.extend_from_slice(&8u16.to_le_bytes()); // bits per sample
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&(samples.len() as u32).to_le_bytes());
    wav.extend_from_slice(&samples);
    wav
}

fn at(text: &str) -> Timestamp {
    text.parse().expect("a valid timestamp")
}

fn failure(code: ErrorCode, message: &str, details: Option<Value>) -> ToolResult {
    let builder = ToolResult::failure(code, message);
    match details {
        Some(details) => builder.details(details).build(),
        None => builder.build(),
    }
}

/// Every sample, in a fixed order.
pub fn all() -> Vec<Sample> {
    let product_schema = json!({
        "type": "object",
        "properties": {
            "products": {"type": "array", "items": {"type": "object"}},
            "count": {"type": "integer"}
        },
        "required": ["products", "count"]
    });
    let big_items: Vec<Value> = (0..1500)
        .map(|i| json!({"id": i, "name": format!("Item number {i}"), "description": "A product with a fairly long description to make the list large."}))
        .collect();
    let mut samples = vec![
        Sample {
            name: "success-object",
            about: "a success with object data and an object output schema",
            result: ToolResult::success(Some(json!({
                "products": [{"id": "p1", "name": "Desk lamp", "price": 29.99}],
                "count": 1
            })))
            .build(),
            output_schema: Some(product_schema),
        },
        Sample {
            name: "success-list",
            about: "list data with a list output schema: wrapped where only objects are allowed",
            result: ToolResult::success(Some(json!([{"id": 1}, {"id": 2}, {"id": 3}])))
                .summary("3 orders found")
                .build(),
            output_schema: Some(
                json!({"type": "array", "items": {"type": "object", "properties": {"id": {"type": "integer"}}}}),
            ),
        },
        Sample {
            name: "success-scalar",
            about: "a scalar as data, no output schema",
            result: ToolResult::success(Some(json!(42))).build(),
            output_schema: None,
        },
        Sample {
            name: "no-data",
            about: "a success with nothing to return",
            result: ToolResult::success(None).build(),
            output_schema: None,
        },
        Sample {
            name: "summary-only",
            about: "a success with only a summary",
            result: ToolResult::success(None)
                .summary("Cache cleared for 3 sales channels")
                .build(),
            output_schema: None,
        },
    ];
    let failures = [
        (
            "failure-invalid-arguments",
            ErrorCode::InvalidArguments,
            "The arguments do not match the input schema.",
            Some(
                json!({"fields": [{"path": "/limit", "error": "101 is greater than the maximum of 100"}]}),
            ),
        ),
        (
            "failure-missing-privilege",
            ErrorCode::MissingPrivilege,
            "Missing privilege: product:read",
            Some(json!({"missing": ["product:read"]})),
        ),
        (
            "failure-not-found",
            ErrorCode::NotFound,
            "No product with id p9.",
            Some(json!({"id": "p9"})),
        ),
        (
            "failure-tool-error",
            ErrorCode::ToolError,
            "The payment provider did not answer.",
            None,
        ),
        (
            "failure-timeout",
            ErrorCode::Timeout,
            "The call ran past its deadline of 5000 ms and was stopped.",
            Some(json!({"plugin": "examples", "tool": "slow", "deadlineMs": 5000})),
        ),
        (
            "failure-resource-limit",
            ErrorCode::ResourceLimit,
            "The call exceeded its memory limit of 64 MiB.",
            Some(json!({"plugin": "examples", "tool": "bomb", "limitBytes": 67108864})),
        ),
        (
            "failure-permission-denied",
            ErrorCode::PermissionDenied,
            "The tool tried to open a network connection it was not granted.",
            Some(json!({"plugin": "examples", "tool": "fetch", "address": "127.0.0.1:80"})),
        ),
    ];
    for (name, code, message, details) in failures {
        samples.push(Sample {
            name,
            about: "a failure with a code (and details)",
            result: failure(code, message, details),
            output_schema: None,
        });
    }
    samples.extend([
        Sample {
            name: "mixed-content",
            about: "every kind of content part: text with a MIME type, image, audio, other binary, resource link, embedded text and blob",
            result: ToolResult::success(Some(json!({"report": "weekly"})))
                .summary("The weekly report, with a chart and a recording")
                .parts([
                    ContentPart::Text { text: "# Weekly report\nSales grew by 4%.".into(), mime: Some("text/markdown".into()) },
                    ContentPart::binary(PNG, "image/png"),
                    ContentPart::binary(wav(), "audio/wav"),
                    ContentPart::binary(b"%PDF-1.4 tiny".to_vec(), "application/pdf"),
                    ContentPart::ResourceLink(ResourceLink {
                        uri: "file:///reports/2027-02.csv".into(),
                        name: "2027-02.csv".into(),
                        title: Some("February sales".into()),
                        description: Some("Every order of February as CSV.".into()),
                        mime: Some("text/csv".into()),
                        size: Some(18234),
                    }),
                    ContentPart::EmbeddedResource {
                        uri: "file:///reports/summary.txt".into(),
                        mime: Some("text/plain".into()),
                        body: ResourceBody::Text("Revenue: 10,400 EUR".into()),
                    },
                    ContentPart::EmbeddedResource {
                        uri: "file:///reports/logo.png".into(),
                        mime: Some("image/png".into()),
                        body: ResourceBody::Bytes(PNG.to_vec()),
                    },
                ])
                .build(),
            output_schema: None,
        },
        Sample {
            name: "stored-link",
            about: "a result the tool itself stored, returned as a link",
            result: ToolResult::success(None)
                .summary("The export is ready")
                .stored_link(StoredLink {
                    uri: "toolhost://results/export-7f3a".into(),
                    size: Some(5_242_880),
                    mime: "text/csv".into(),
                    expires_at: Some(at("2027-01-15T09:00:00Z")),
                })
                .build(),
            output_schema: None,
        },
        Sample {
            name: "extension-metadata",
            about: "values of an extension under its own namespace",
            result: ToolResult::success(Some(json!({"sku": "LAMP-1", "available": 12})))
                .extension(Extension::new("com.example.inventory", "warehouse", json!("north")).expect("valid"))
                .extension(Extension::new("com.example.inventory", "reserved", json!({"units": 3, "until": "2027-01-16"})).expect("valid"))
                .build(),
            output_schema: None,
        },
        Sample {
            name: "pagination-dry-run",
            about: "a page of a list, a dry run and the echoed query",
            result: ToolResult::success(Some(json!({"orders": [{"id": 11}, {"id": 12}]})))
                .pagination(Pagination { total: Some(42), offset: Some(10), limit: Some(2), next_cursor: Some("b2Zmc2V0PTEy".into()), has_more: Some(true) })
                .dry_run(true)
                .query(json!({"filter": {"status": "open"}, "sort": "-createdAt"}))
                .build(),
            output_schema: None,
        },
        Sample {
            name: "timestamps",
            about: "data older than the call (from an index) with an expiry",
            result: ToolResult::success(Some(json!({"price": 19.5})))
                .generated_at(at("2027-01-14T23:10:00Z"))
                .expires_at(at("2027-01-15T12:00:00Z"))
                .duration_ms(37.25)
                .build(),
            output_schema: None,
        },
        Sample {
            name: "over-limit",
            about: "data larger than the size limit: stored, sent as a link",
            result: ToolResult::success(Some(json!({"items": big_items})))
                .summary("1500 items exported")
                .build(),
            output_schema: None,
        },
        Sample {
            name: "legacy-envelope",
            about: "an app's legacy answer with an error object and keys beside the envelope",
            result: parse_legacy(
                r#"{"success": false, "error": {"message": "The cart is locked.", "code": "CART_LOCKED", "cartId": "c-1"}, "dryRun": true, "preview": {"total": 12.5}}"#,
            ),
            output_schema: None,
        },
        Sample {
            name: "legacy-passthrough",
            about: "an app's answer that is not an envelope: passed through as text",
            result: parse_legacy("Order 1001 was shipped."),
            output_schema: None,
        },
    ]);
    samples
}
