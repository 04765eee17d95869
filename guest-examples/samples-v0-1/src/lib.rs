//! `samples-v0-1`: a plugin built against `toolhost:plugin@0.1.0`, whose tools
//! return some of the host's golden samples (`host/src/samples.rs`), part for
//! part, so a test can hold a 0.1.0 component to the golden bytes.
//!
//! Written with bare `wit-bindgen` against `wit/0.1.0/` on purpose: it must not
//! follow the SDK or `wit/` to a newer package version.

wit_bindgen::generate!({
    path: "../../wit/0.1.0",
    world: "plugin",
});

use exports::toolhost::plugin::tool::Guest;
use toolhost::plugin::types::{
    BinaryPart, CallContext, ContentPart, Datetime, EmbeddedResource, ErrorCode, Metadata,
    NamespacedValue, Outcome, Pagination, ResourceBody, ResourceLink, StoredLink, TextPart,
    ToolDescriptor, ToolError, ToolResult,
};

/// The samples served, each a tool of its name.
const SAMPLES: [&str; 8] = [
    "mixed-content",
    "extension-metadata",
    "timestamps",
    "success-scalar",
    "failure-tool-error",
    "pagination-dry-run",
    "stored-link",
    "summary-only",
];

/// The sample PNG of `host/src/samples.rs` (a 1×1 transparent pixel).
const PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
    0x42, 0x60, 0x82,
];

/// The sample WAV: four silent 8-bit mono samples at 8 kHz.
fn wav() -> Vec<u8> {
    let samples = [0x80u8; 4];
    let mut wav = Vec::new();
    wav.extend_from_slice(b"RIFF");
    wav.extend_from_slice(&(36 + samples.len() as u32).to_le_bytes());
    wav.extend_from_slice(b"WAVEfmt ");
    for field in [
        16u32.to_le_bytes().as_slice(),
        &1u16.to_le_bytes(),
        &1u16.to_le_bytes(),
    ] {
        wav.extend_from_slice(field);
    }
    for field in [8000u32.to_le_bytes(), 8000u32.to_le_bytes()] {
        wav.extend_from_slice(&field);
    }
    wav.extend_from_slice(&1u16.to_le_bytes());
    wav.extend_from_slice(&8u16.to_le_bytes());
    wav.extend_from_slice(b"data");
    wav.extend_from_slice(&(samples.len() as u32).to_le_bytes());
    wav.extend_from_slice(&samples);
    wav
}

fn at(seconds: i64) -> Option<Datetime> {
    Some(Datetime {
        seconds,
        nanoseconds: 0,
    })
}

fn metadata() -> Metadata {
    Metadata {
        pagination: None,
        dry_run: None,
        response_size: None,
        query: None,
        generated_at: None,
        expires_at: None,
        extensions: Vec::new(),
    }
}

fn success(data: Option<&str>) -> ToolResult {
    ToolResult {
        outcome: Outcome::Success(data.map(str::to_owned)),
        summary: None,
        content: Vec::new(),
        stored_links: Vec::new(),
        metadata: metadata(),
    }
}

fn sample(name: &str) -> ToolResult {
    match name {
        "mixed-content" => ToolResult {
            summary: Some("The weekly report, with a chart and a recording".into()),
            content: vec![
                ContentPart::Text(TextPart {
                    text: "# Weekly report\nSales grew by 4%.".into(),
                    mime: Some("text/markdown".into()),
                }),
                ContentPart::Binary(BinaryPart {
                    data: PNG.to_vec(),
                    mime: "image/png".into(),
                }),
                ContentPart::Binary(BinaryPart {
                    data: wav(),
                    mime: "audio/wav".into(),
                }),
                ContentPart::Binary(BinaryPart {
                    data: b"%PDF-1.4 tiny".to_vec(),
                    mime: "application/pdf".into(),
                }),
                ContentPart::ResourceLink(ResourceLink {
                    uri: "file:///reports/2027-02.csv".into(),
                    name: "2027-02.csv".into(),
                    title: Some("February sales".into()),
                    description: Some("Every order of February as CSV.".into()),
                    mime: Some("text/csv".into()),
                    size: Some(18234),
                }),
                ContentPart::EmbeddedResource(EmbeddedResource {
                    uri: "file:///reports/summary.txt".into(),
                    mime: Some("text/plain".into()),
                    body: ResourceBody::Text("Revenue: 10,400 EUR".into()),
                }),
                ContentPart::EmbeddedResource(EmbeddedResource {
                    uri: "file:///reports/logo.png".into(),
                    mime: Some("image/png".into()),
                    body: ResourceBody::Bytes(PNG.to_vec()),
                }),
            ],
            ..success(Some(r#"{"report":"weekly"}"#))
        },
        "extension-metadata" => {
            let mut result = success(Some(r#"{"sku":"LAMP-1","available":12}"#));
            let value = |name: &str, value: &str| NamespacedValue {
                namespace: "com.example.inventory".into(),
                name: name.into(),
                value: value.into(),
            };
            result.metadata.extensions = vec![
                value("warehouse", r#""north""#),
                value("reserved", r#"{"units":3,"until":"2027-01-16"}"#),
            ];
            result
        }
        "timestamps" => {
            let mut result = success(Some(r#"{"price":19.5}"#));
            result.metadata.generated_at = at(1_799_968_200); // 2027-01-14T23:10:00Z
            result.metadata.expires_at = at(1_800_014_400); // 2027-01-15T12:00:00Z
            result
        }
        "success-scalar" => success(Some("42")),
        "failure-tool-error" => ToolResult {
            outcome: Outcome::Failure(ToolError {
                code: ErrorCode::ToolError,
                message: "The payment provider did not answer.".into(),
                details: None,
            }),
            ..success(None)
        },
        "pagination-dry-run" => {
            let mut result = success(Some(r#"{"orders":[{"id":11},{"id":12}]}"#));
            result.metadata.pagination = Some(Pagination {
                total: Some(42),
                offset: Some(10),
                limit: Some(2),
                next_cursor: Some("b2Zmc2V0PTEy".into()),
                has_more: Some(true),
            });
            result.metadata.dry_run = Some(true);
            result.metadata.query =
                Some(r#"{"filter":{"status":"open"},"sort":"-createdAt"}"#.into());
            result
        }
        "stored-link" => ToolResult {
            summary: Some("The export is ready".into()),
            stored_links: vec![StoredLink {
                uri: "toolhost://results/export-7f3a".into(),
                size: 5_242_880,
                mime: "text/csv".into(),
                expires_at: at(1_800_003_600), // 2027-01-15T09:00:00Z
            }],
            ..success(None)
        },
        "summary-only" => ToolResult {
            summary: Some("Cache cleared for 3 sales channels".into()),
            ..success(None)
        },
        other => ToolResult {
            outcome: Outcome::Failure(ToolError {
                code: ErrorCode::NotFound,
                message: format!("No sample named {other}."),
                details: None,
            }),
            ..success(None)
        },
    }
}

struct Samples;

impl Guest for Samples {
    fn describe() -> Vec<ToolDescriptor> {
        SAMPLES
            .iter()
            .map(|name| ToolDescriptor {
                name: (*name).into(),
                title: None,
                description: format!("Returns the golden sample {name}."),
                input_schema: r#"{"type":"object"}"#.into(),
                output_schema: None,
                annotations: None,
                required_privileges: Vec::new(),
                required_client_capabilities: Vec::new(),
            })
            .collect()
    }

    fn call(name: String, _arguments: String, _context: CallContext) -> ToolResult {
        sample(&name)
    }
}

export!(Samples);
