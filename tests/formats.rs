//! The serialized forms of a result, against literal files written by hand or
//! kept from before format 1 left `ToolResult`'s serde derive (`tests/formats/`);
//! the code under test never writes them.
//!
//! - `stored-v1/<sample>.json`: the stored row of every sample of `samples::all()`,
//!   byte for byte as toolhost 0.1 wrote it. Each still reads back to its sample,
//!   and `encode` still writes exactly it.
//! - `app-answer-v1/<case>.json`: versioned app answers (`{"format": 1, "result":
//!   ..}`) as a webhook author writes them, each read to the result it documents,
//!   built here with the builder.
//!
//! A newer format version and a malformed body are refused with errors that name
//! them. To add a case, write the file by hand; never generate it with the code.

use std::collections::BTreeSet;
use std::path::PathBuf;

use jiff::Timestamp;
use serde_json::json;
use toolhost::render::format::{
    FormatError, FormatVersion, decode, decode_app_response, decode_stored, encode,
};
use toolhost::result::{
    ContentPart, ErrorCode, Extension, LegacyKeys, Pagination, ResourceBody, ResourceLink,
    StoredLink, ToolResult,
};
use toolhost::samples;

fn dir(kind: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../tests/formats")
        .join(kind)
}

fn read(kind: &str, name: &str) -> String {
    let path = dir(kind).join(format!("{name}.json"));
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The names (without `.json`) of the files in `kind`.
fn files(kind: &str) -> BTreeSet<String> {
    std::fs::read_dir(dir(kind))
        .unwrap()
        .map(|entry| {
            let name = entry.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".json")
                .unwrap_or_else(|| panic!("{kind}/{name} is not a .json file"))
                .to_owned()
        })
        .collect()
}

fn at(text: &str) -> Timestamp {
    text.parse().unwrap()
}

#[test]
fn every_sample_has_its_literal_stored_row_and_no_row_is_left_over() {
    let names: BTreeSet<String> = samples::all()
        .iter()
        .map(|sample| sample.name.to_owned())
        .collect();
    assert_eq!(files("stored-v1"), names);
}

/// A row of format 1 written before the serialized form was a type of its own
/// reads back to the same result.
#[test]
fn literal_stored_rows_of_format_1_read_back_to_their_samples() {
    for sample in samples::all() {
        let body = read("stored-v1", sample.name);
        let decoded = decode_stored(1, &body)
            .unwrap_or_else(|e| panic!("stored-v1/{}.json: {e}", sample.name));
        assert_eq!(decoded, sample.result, "stored-v1/{}.json", sample.name);
    }
}

#[test]
fn encode_writes_the_literal_stored_rows_byte_for_byte() {
    for sample in samples::all() {
        let (version, body) = encode(&sample.result);
        assert_eq!(version, FormatVersion::V1, "{}", sample.name);
        let literal = read("stored-v1", sample.name);
        assert!(
            body == literal,
            "stored-v1/{}.json differs from what encode writes:\n  file:   {}\n  encode: {}",
            sample.name,
            &literal[..literal.len().min(400)],
            &body[..body.len().min(400)],
        );
    }
}

/// Every literal app answer with the result it documents.
fn app_answers() -> Vec<(&'static str, ToolResult)> {
    vec![
        (
            "success-data",
            ToolResult::success(Some(
                json!({"orderId": "A-1001", "items": ["a", "b"], "total": 42.5}),
            ))
            .summary("Order A-1001 created")
            .build(),
        ),
        ("success-no-data", ToolResult::success(None).build()),
        (
            "failure-details",
            ToolResult::failure(ErrorCode::NotFound, "No product with id p9.")
                .details(json!({"id": "p9", "hint": "search first"}))
                .summary("Nothing was changed")
                .build(),
        ),
        (
            "failure-without-details",
            ToolResult::failure(ErrorCode::ToolError, "The payment provider did not answer.")
                .build(),
        ),
        (
            "parts",
            ToolResult::success(Some(json!({"report": "weekly"})))
                .parts([
                    ContentPart::text("Sales grew by 4%."),
                    ContentPart::Text {
                        text: "# Weekly report".into(),
                        mime: Some("text/markdown".into()),
                    },
                    ContentPart::binary(b"\x89PNG\r\n\x1a\n".to_vec(), "image/png"),
                    ContentPart::ResourceLink(ResourceLink {
                        uri: "file:///reports/2027-02.csv".into(),
                        name: "2027-02.csv".into(),
                        title: Some("February sales".into()),
                        description: Some("Every order of February as CSV.".into()),
                        mime: Some("text/csv".into()),
                        size: Some(18234),
                    }),
                    ContentPart::ResourceLink(ResourceLink {
                        uri: "file:///reports/all.csv".into(),
                        name: "all.csv".into(),
                        title: None,
                        description: None,
                        mime: None,
                        size: None,
                    }),
                    ContentPart::EmbeddedResource {
                        uri: "file:///reports/summary.txt".into(),
                        mime: Some("text/plain".into()),
                        body: ResourceBody::Text("Revenue: 10,400 EUR".into()),
                    },
                    ContentPart::EmbeddedResource {
                        uri: "file:///reports/raw.bin".into(),
                        mime: None,
                        body: ResourceBody::Bytes(vec![0, 1, 2]),
                    },
                ])
                .build(),
        ),
        (
            "links",
            ToolResult::success(None)
                .summary("The export is ready")
                .stored_link(StoredLink {
                    uri: "toolhost://results/export-7f3a".into(),
                    size: Some(5_242_880),
                    mime: "text/csv".into(),
                    expires_at: Some(at("2027-01-15T09:00:00Z")),
                })
                .stored_link(StoredLink {
                    uri: "toolhost://results/export-7f3b".into(),
                    size: None,
                    mime: "application/json".into(),
                    expires_at: None,
                })
                .build(),
        ),
        (
            "metadata",
            ToolResult::success(Some(json!({"orders": [{"id": 11}, {"id": 12}]})))
                .pagination(Pagination {
                    total: Some(42),
                    offset: Some(10),
                    limit: Some(2),
                    next_cursor: Some("b2Zmc2V0PTEy".into()),
                    has_more: Some(true),
                })
                .dry_run(true)
                .response_size(24000)
                .query(json!({"filter": {"status": "open"}}))
                .generated_at(at("2027-01-14T23:10:00Z"))
                .expires_at(at("2027-01-15T12:00:00Z"))
                .duration_ms(37.25)
                .build(),
        ),
        (
            "extensions",
            ToolResult::success(Some(json!({"sku": "LAMP-1", "available": 12})))
                .extension(
                    Extension::new("com.example.inventory", "warehouse", json!("north")).unwrap(),
                )
                .extension(
                    Extension::new(
                        "com.example.inventory",
                        "reserved",
                        json!({"units": 3, "until": "2027-01-16"}),
                    )
                    .unwrap(),
                )
                .legacy_keys(LegacyKeys {
                    beside: json!({"preview": {"total": 12.5}})
                        .as_object()
                        .unwrap()
                        .clone(),
                    meta: json!({"usageHint": "call next"})
                        .as_object()
                        .unwrap()
                        .clone(),
                })
                .build(),
        ),
    ]
}

#[test]
fn literal_app_answers_of_format_1_read_to_the_results_they_document() {
    let cases = app_answers();
    let names: BTreeSet<String> = cases.iter().map(|(name, _)| (*name).to_owned()).collect();
    assert_eq!(
        files("app-answer-v1"),
        names,
        "a file without a case, or the reverse"
    );
    for (name, expected) in cases {
        let text = read("app-answer-v1", name);
        let result =
            decode_app_response(&text).unwrap_or_else(|e| panic!("app-answer-v1/{name}.json: {e}"));
        assert_eq!(result, expected, "app-answer-v1/{name}.json");
    }
}

#[test]
fn a_newer_format_version_is_refused_naming_it() {
    let answer = decode_app_response(r#"{"format": 2, "result": {"outcome": {"success": {}}}}"#)
        .unwrap_err();
    assert!(
        matches!(answer, FormatError::UnknownVersion(2)),
        "{answer:?}"
    );
    assert_eq!(
        answer.to_string(),
        "result format version 2 is newer than this toolhost knows (up to 1); upgrade toolhost to read it"
    );
    let body = read("stored-v1", "no-data");
    let row = decode_stored(2, &body).unwrap_err();
    assert_eq!(
        row.to_string(),
        "a stored result has format version 2, newer than this toolhost knows; upgrade toolhost"
    );
}

#[test]
fn a_malformed_body_is_refused_naming_the_version_and_what_is_wrong() {
    let not_json = decode_stored(1, "{\"outcome\": ").unwrap_err();
    assert!(
        not_json
            .to_string()
            .starts_with("result of format version 1 is not valid: EOF while parsing"),
        "{not_json}"
    );
    // Each body as a stored row and as the `result` of an app's answer.
    let cases = [
        (
            r#"{"summary": "s"}"#,
            "result of format version 1 is not valid: missing field `outcome`",
        ),
        (
            r#"{"outcome": {"maybe": {}}}"#,
            "result of format version 1 is not valid: unknown variant `maybe`, expected `success` or `failure`",
        ),
        (
            r#"{"outcome": {"success": {}}, "content": [{"kind": "video", "uri": "x"}]}"#,
            "result of format version 1 is not valid: unknown variant `video`",
        ),
        (
            r#"{"outcome": {"failure": {"code": "oops", "message": "m"}}}"#,
            "result of format version 1 is not valid: outcome.failure.code: unknown error code \"oops\"",
        ),
        (
            r#"{"outcome": {"success": {}}, "metadata": {"extensions": [{"namespace": "io.modelcontextprotocol", "name": "x", "value": 1}]}}"#,
            "result of format version 1 is not valid: metadata.extensions[0]: namespace \"io.modelcontextprotocol\" is reserved",
        ),
    ];
    for (body, start) in cases {
        let stored = decode(FormatVersion::V1, body).unwrap_err().to_string();
        assert!(stored.starts_with(start), "stored {body}: {stored}");
        let answer = decode_app_response(&format!(r#"{{"format": 1, "result": {body}}}"#))
            .unwrap_err()
            .to_string();
        assert!(answer.starts_with(start), "answer {body}: {answer}");
    }
}
