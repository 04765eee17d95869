//! The legacy envelope: `{"success": true, "data": ..}` / `{"success": false, "error": ".."}`.
//!
//! This is the format tools and apps produced before the result object, and what
//! existing readers (clients, prompts, evaluation suites) parse. It is rendered on
//! its own for callers that ask for it, and as the text block of the MCP `compat`
//! mode. The legacy parser ([`parse`]) reads it back into the same result; the
//! versioned serialized form of stored results and app answers is in
//! [`crate::render::format`].
//!
//! Layout: `success`; then `data` (a success with data) or `error` (always the
//! message string, which is what legacy readers show); then `summary` and `dryRun`
//! and the keys a legacy tool had put beside its envelope; then `_meta` with the
//! well-known fields under their legacy names (`responseSize`, `resourceUri`, ...),
//! the error's code and details, the content parts, and extension values under
//! `namespace/name`. The parts (`_meta.parts`), the stored links
//! (`_meta.storedLinks`) and the pagination (`_meta.pagination`) are written in
//! their format-1 form ([`crate::render::format::v1`]), so a reader of stored rows
//! and a reader of envelopes parse one form.

pub mod keys;
pub mod parse;

use serde::ser::SerializeMap as _;
use serde::{Serialize, Serializer};
use serde_json::{Value, json};

use super::RenderContext;
use super::format::v1;
use super::members::{Member, Members};
use crate::result::{Outcome, ToolResult};

/// The envelope as the compact JSON string legacy readers parse.
///
/// Written straight from the result: the data, usually most of it, is not
/// copied into a tree first.
pub fn envelope_text(result: &ToolResult, ctx: &RenderContext<'_>) -> String {
    // A small result's envelope fits without growing the buffer along the way.
    let mut out = Vec::with_capacity(ENVELOPE_CAPACITY);
    serde_json::to_writer(&mut out, &Envelope::of(result, ctx))
        .expect("a JSON value always serializes");
    String::from_utf8(out).expect("serde_json writes UTF-8")
}

/// What [`envelope_text`] reserves: the envelope of a small result (a few
/// fields of data, a summary, the generation time and duration) is 150 to 250
/// bytes.
const ENVELOPE_CAPACITY: usize = 256;

/// [`envelope_text`] as a JSON string literal (with its quotes), written into
/// `out` in one pass: what a text block carrying the envelope holds on the wire.
pub fn write_envelope_literal(result: &ToolResult, ctx: &RenderContext<'_>, out: &mut Vec<u8>) {
    super::literal::write_literal(out, &Envelope::of(result, ctx));
}

/// The envelope of one result, borrowing what it can from the result.
///
/// Its members keep the order and the rule of a JSON object built by inserting
/// them one by one ([`Members`]). Written out as it stands, without a tree of
/// its own: neither the data nor any other key or value is copied.
struct Envelope<'a> {
    /// Every member but `data`, in order.
    rest: Members<'a>,
    /// What goes under `data`, second, right after `success`.
    data: Option<&'a Value>,
}

impl<'a> Envelope<'a> {
    fn of(result: &'a ToolResult, ctx: &RenderContext<'_>) -> Self {
        let mut out = Members::default();
        let mut meta = Members::default();
        let mut data = None;
        match result.outcome() {
            Outcome::Success { data: value } => {
                out.insert(keys::SUCCESS, Member::Bool(true));
                data = value.as_ref();
            }
            Outcome::Failure(error) => {
                out.insert(keys::SUCCESS, Member::Bool(false));
                out.insert(keys::ERROR, Member::Str(&error.message));
                meta.insert(keys::ERROR_CODE, Member::Str(error.code.as_str()));
                if let Some(details) = &error.details {
                    meta.insert(keys::ERROR_DETAILS, Member::Json(details));
                }
            }
        }
        if let Some(summary) = result.summary() {
            out.insert(keys::SUMMARY, Member::Str(summary));
        }
        let metadata = result.metadata();
        if let Some(dry_run) = metadata.dry_run {
            out.insert(keys::DRY_RUN, Member::Bool(dry_run));
        }
        for (key, value) in &metadata.legacy.beside {
            // A key beside the envelope named like the data takes its place, as
            // inserting it into the envelope would.
            if key == keys::DATA && data.is_some() {
                data = Some(value);
            } else {
                out.insert(key, Member::Json(value));
            }
        }

        let generated_at = metadata.generated_at.unwrap_or(ctx.now);
        meta.insert(keys::GENERATED_AT, Member::Time(generated_at));
        if let Some(at) = metadata.expires_at {
            meta.insert(keys::EXPIRES_AT, Member::Time(at));
        }
        if let Some(ms) = metadata.duration_ms {
            meta.insert(keys::DURATION_MS, Member::Owned(json!(ms)));
        }
        if let Some(size) = metadata.response_size {
            meta.insert(keys::RESPONSE_SIZE, Member::Owned(json!(size)));
        }
        if let Some(pagination) = &metadata.pagination {
            meta.insert(
                keys::PAGINATION,
                Member::Owned(v1::to_value(&v1::Pagination::from(pagination))),
            );
        }
        if let Some(query) = &metadata.query {
            meta.insert(keys::QUERY, Member::Json(query));
        }
        if let Some(first) = result.stored_links().first() {
            // `resourceUri` is what legacy readers know; `storedLinks` keeps every link whole.
            meta.insert(keys::RESOURCE_URI, Member::Str(&first.uri));
            let links: Vec<_> = result
                .stored_links()
                .iter()
                .map(v1::StoredLink::from)
                .collect();
            meta.insert(keys::STORED_LINKS, Member::Owned(v1::to_value(&links)));
        }
        if !result.content().is_empty() {
            let parts: Vec<_> = result.content().iter().map(v1::Part::from).collect();
            meta.insert(keys::PARTS, Member::Owned(v1::to_value(&parts)));
        }
        for extension in &metadata.extensions {
            meta.insert(extension.key(), Member::Json(extension.value()));
        }
        for (key, value) in &metadata.legacy.meta {
            meta.insert(key, Member::Json(value));
        }
        out.insert(keys::META, Member::Object(meta));
        Envelope { rest: out, data }
    }
}

impl Serialize for Envelope<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut rest = self.rest.iter();
        let mut map = serializer.serialize_map(None)?;
        if let Some((key, value)) = rest.next() {
            map.serialize_entry(key, value)?;
        }
        if let Some(data) = self.data {
            map.serialize_entry(keys::DATA, data)?;
        }
        for (key, value) in rest {
            map.serialize_entry(key, value)?;
        }
        map.end()
    }
}

#[cfg(test)]
mod tests {
    use super::parse::parse_legacy;
    use super::*;
    use crate::result::{ContentPart, ErrorCode, Extension, LegacyKeys, Pagination, StoredLink};
    use jiff::Timestamp;

    /// The envelope of `result` as legacy readers parse it.
    fn envelope_of(result: &ToolResult) -> Value {
        serde_json::from_str(&envelope_text(result, &ctx())).unwrap()
    }

    fn ctx() -> RenderContext<'static> {
        RenderContext::new("t", Timestamp::from_second(1_800_000_000).unwrap())
    }

    #[test]
    fn success_and_failure_envelopes() {
        let ok = ToolResult::success(Some(json!({"id": 1}))).build();
        let rendered = envelope_of(&ok);
        assert_eq!(rendered["success"], json!(true));
        assert_eq!(rendered["data"], json!({"id": 1}));
        assert!(rendered.get("error").is_none());

        let failed = ToolResult::failure(
            ErrorCode::MissingPrivilege,
            "Missing privilege: product:read",
        )
        .details(json!({"missing": ["product:read"]}))
        .build();
        let rendered = envelope_of(&failed);
        assert_eq!(rendered["success"], json!(false));
        assert_eq!(rendered["error"], json!("Missing privilege: product:read"));
        assert_eq!(rendered["_meta"]["errorCode"], json!("missing_privilege"));
        assert!(rendered.get("data").is_none());
    }

    /// What the legacy renderer writes, the legacy parser reads back whole.
    #[test]
    fn parser_reads_back_what_the_renderer_writes() {
        let at = Timestamp::from_second(1_700_000_000).unwrap();
        let results = [
            ToolResult::success(Some(json!([1, 2])))
                .summary("two")
                .dry_run(true)
                .pagination(Pagination {
                    total: Some(9),
                    next_cursor: Some("c".into()),
                    ..Default::default()
                })
                .query(json!({"term": "x"}))
                .generated_at(at)
                .expires_at(at)
                .duration_ms(12.5)
                .part(ContentPart::binary(vec![1, 2, 3], "image/png"))
                .stored_link(StoredLink {
                    uri: "toolhost://r/1".into(),
                    size: Some(5),
                    mime: "application/json".into(),
                    expires_at: Some(at),
                })
                .extension(Extension::new("com.example", "stock", json!(3)).unwrap())
                .build(),
            ToolResult::failure(ErrorCode::NotFound, "gone")
                .details(json!({"id": 4}))
                .generated_at(at)
                .build(),
        ];
        for result in results {
            let text = envelope_text(&result, &ctx());
            assert_eq!(parse_legacy(&text), result, "{text}");
        }
    }

    /// A kept legacy key named like a well-known one takes its place and gives
    /// it its value, as inserting it into a JSON object would; `data` beside the
    /// envelope replaces a success's data.
    #[test]
    fn kept_keys_that_repeat_a_well_known_one_replace_it_in_place() {
        let mut kept = LegacyKeys::default();
        kept.beside.insert("preview".into(), json!(1));
        kept.beside.insert("summary".into(), json!("kept"));
        kept.beside.insert("data".into(), json!("beside"));
        kept.meta.insert("generatedAt".into(), json!("then"));
        kept.meta.insert("usageHint".into(), json!("x"));
        let result = ToolResult::success(Some(json!({"id": 1})))
            .summary("own")
            .duration_ms(2.0)
            .legacy_keys(kept)
            .build();
        assert_eq!(
            envelope_text(&result, &ctx()),
            r#"{"success":true,"data":"beside","summary":"kept","preview":1,"_meta":{"generatedAt":"then","durationMs":2.0,"usageHint":"x"}}"#
        );
    }

    #[test]
    fn legacy_input_round_trips_byte_for_byte() {
        let input = r#"{"success":true,"data":{"cart":1},"dryRun":true,"preview":{"total":2},"_meta":{"generatedAt":"2027-01-15T08:00:00Z","usageHint":"x"}}"#;
        assert_eq!(envelope_text(&parse_legacy(input), &ctx()), input);
    }
}
