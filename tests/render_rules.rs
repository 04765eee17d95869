//! The ADR's rules, each pinned by a test over every renderer, revision and mode.

use crate::common;

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Value, json};
use toolhost::render::{Mapper, OutputMode, RenderContext, Revision, SizeLimits, Target, legacy};
use toolhost::result::{
    ContentPart, ErrorCode, ResourceBody, ResourceLink, StoredLink, ToolResult,
};
use toolhost::samples;

fn ctx<'a>(sample: &'a samples::Sample) -> RenderContext<'a> {
    let mut ctx = RenderContext::new(sample.name, samples::render_time());
    ctx.output_schema = sample.output_schema.as_ref();
    ctx.request_id = "req-1";
    ctx
}

fn mcp_targets() -> impl Iterator<Item = (Revision, OutputMode)> {
    Revision::ALL
        .into_iter()
        .flat_map(|r| OutputMode::ALL.into_iter().map(move |m| (r, m)))
}

#[test]
fn is_error_is_set_on_failures_only() {
    let mapper = Mapper::default();
    for sample in samples::all() {
        for (revision, mode) in mcp_targets() {
            let out = mapper
                .render_inline(
                    &sample.result,
                    Target::Mcp { revision, mode },
                    &ctx(&sample),
                )
                .to_value();
            let expected = sample.result.is_failure().then_some(json!(true));
            assert_eq!(
                out.get("isError").cloned(),
                expected,
                "{} on {revision} {mode:?}",
                sample.name
            );
        }
    }
}

#[test]
fn structured_content_has_the_shape_each_revision_allows() {
    let mapper = Mapper::default();
    for sample in samples::all() {
        for (revision, mode) in mcp_targets() {
            let out = mapper
                .render_inline(
                    &sample.result,
                    Target::Mcp { revision, mode },
                    &ctx(&sample),
                )
                .to_value();
            let structured = out.get("structuredContent");
            let which = format!("{} on {revision} {mode:?}", sample.name);
            match (revision, sample.result.data()) {
                (_, None) => {
                    assert_eq!(structured, None, "{which}: no data, no structured content")
                }
                (Revision::V2024_11_05 | Revision::V2025_03_26, Some(_)) => {
                    assert_eq!(
                        structured, None,
                        "{which}: the revision has no structured content"
                    )
                }
                (Revision::V2026_07_28, Some(data)) => {
                    assert_eq!(structured, Some(data), "{which}")
                }
                (_, Some(data)) => {
                    let structured = structured.unwrap_or_else(|| panic!("{which}: missing"));
                    assert!(structured.is_object(), "{which}: must be an object");
                    if !data.is_object() {
                        assert_eq!(structured, &json!({ "result": data }), "{which}: wrapped");
                    }
                }
            }
        }
    }
}

#[test]
fn result_type_only_on_the_stateless_revision() {
    let mapper = Mapper::default();
    let sample = &samples::all()[0];
    for (revision, mode) in mcp_targets() {
        let out = mapper
            .render_inline(&sample.result, Target::Mcp { revision, mode }, &ctx(sample))
            .to_value();
        assert_eq!(
            out.get("resultType").is_some(),
            revision == Revision::V2026_07_28,
            "{revision}"
        );
    }
}

#[test]
fn compat_text_block_is_the_legacy_envelope() {
    let mapper = Mapper::default();
    for sample in samples::all() {
        let envelope = legacy::envelope_text(&sample.result, &ctx(&sample));
        for revision in Revision::ALL {
            let out = mapper
                .render_inline(
                    &sample.result,
                    Target::Mcp {
                        revision,
                        mode: OutputMode::Compat,
                    },
                    &ctx(&sample),
                )
                .to_value();
            assert_eq!(
                out["content"][0]["text"],
                json!(envelope),
                "{} on {revision}",
                sample.name
            );
        }
    }
}

#[test]
fn spec_mode_sends_plain_data_then_summary_and_metadata_blocks() {
    let mapper = Mapper::default();
    let target = Target::Mcp {
        revision: Revision::V2025_11_25,
        mode: OutputMode::Spec,
    };
    let result = ToolResult::success(Some(json!({"a": 1})))
        .summary("one a")
        .build();
    let sample = samples::Sample {
        name: "t",
        about: "",
        result,
        output_schema: None,
    };
    let out = mapper
        .render_inline(&sample.result, target, &ctx(&sample))
        .to_value();
    let texts: Vec<&str> = out["content"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["text"].as_str().unwrap())
        .collect();
    assert_eq!(texts[0], r#"{"a":1}"#);
    assert_eq!(texts[1], "one a");
    let meta_block: Value = serde_json::from_str(texts[2]).unwrap();
    assert_eq!(meta_block, json!({ "_meta": out["_meta"] }));

    // A result without data sends no data block.
    let no_data = ToolResult::success(None).summary("done").build();
    let out = mapper
        .render_inline(&no_data, target, &ctx(&sample))
        .to_value();
    assert_eq!(out["content"][0]["text"], json!("done"));
    assert_eq!(out["content"].as_array().unwrap().len(), 2);
}

/// Every part kind, with markers that must each appear in every rendering.
fn every_part() -> (ToolResult, Vec<String>) {
    let image = b"IMAGE-BYTES".to_vec();
    let audio = b"AUDIO-BYTES".to_vec();
    let blob = b"BLOB-BYTES".to_vec();
    let embedded = b"EMBEDDED-BYTES".to_vec();
    let result = ToolResult::success(Some(json!({"marker": "DATA-MARKER"})))
        .summary("SUMMARY-MARKER")
        .parts([
            ContentPart::Text {
                text: "TEXT-MARKER".into(),
                mime: Some("text/x-marker".into()),
            },
            ContentPart::binary(image.clone(), "image/x-marker"),
            ContentPart::binary(audio.clone(), "audio/x-marker"),
            ContentPart::binary(blob.clone(), "application/x-marker"),
            ContentPart::ResourceLink(ResourceLink {
                uri: "file:///LINK-URI".into(),
                name: "LINK-NAME".into(),
                title: Some("LINK-TITLE".into()),
                description: Some("LINK-DESCRIPTION".into()),
                mime: Some("text/x-link".into()),
                size: Some(987_654_321),
            }),
            ContentPart::EmbeddedResource {
                uri: "file:///EMBEDDED-TEXT-URI".into(),
                mime: Some("text/x-embedded".into()),
                body: ResourceBody::Text("EMBEDDED-TEXT".into()),
            },
            ContentPart::EmbeddedResource {
                uri: "file:///EMBEDDED-BLOB-URI".into(),
                mime: Some("application/x-embedded".into()),
                body: ResourceBody::Bytes(embedded.clone()),
            },
        ])
        .stored_link(StoredLink {
            uri: "toolhost://results/STORED-URI".into(),
            size: Some(123_456_789),
            mime: "application/x-stored".into(),
            expires_at: Some("2031-02-03T04:05:06Z".parse().unwrap()),
        })
        .extension(
            toolhost::result::Extension::new("com.example", "ext-name", json!("EXT-VALUE"))
                .unwrap(),
        )
        .dry_run(true)
        .query(json!("QUERY-MARKER"))
        .build();
    let mut markers: Vec<String> = [
        "DATA-MARKER",
        "SUMMARY-MARKER",
        "TEXT-MARKER",
        "text/x-marker",
        "image/x-marker",
        "audio/x-marker",
        "application/x-marker",
        "file:///LINK-URI",
        "LINK-NAME",
        "LINK-TITLE",
        "LINK-DESCRIPTION",
        "text/x-link",
        "987654321",
        "file:///EMBEDDED-TEXT-URI",
        "text/x-embedded",
        "EMBEDDED-TEXT",
        "file:///EMBEDDED-BLOB-URI",
        "application/x-embedded",
        "toolhost://results/STORED-URI",
        "123456789",
        "application/x-stored",
        "2031-02-03T04:05:06Z",
        "com.example/ext-name",
        "EXT-VALUE",
        "QUERY-MARKER",
        "dryRun",
    ]
    .into_iter()
    .map(String::from)
    .collect();
    markers.extend([&image, &audio, &blob, &embedded].map(|bytes| STANDARD.encode(bytes)));
    (result, markers)
}

#[test]
fn no_part_is_dropped_by_any_renderer() {
    let (result, markers) = every_part();
    let mapper = Mapper::default();
    let sample = samples::Sample {
        name: "every-part",
        about: "",
        result,
        output_schema: None,
    };
    for target in Target::all() {
        let out = mapper
            .render_inline(&sample.result, target, &ctx(&sample))
            .to_value();
        // Look through the text of nested JSON strings too (the compat text block).
        let text = out.to_string().replace("\\\"", "\"");
        for marker in &markers {
            assert!(
                text.contains(marker.as_str()),
                "{target} dropped {marker}: {text}"
            );
        }
    }
    // The error of a failure, too.
    let failure = ToolResult::failure(ErrorCode::NotFound, "MESSAGE-MARKER")
        .details(json!("DETAILS-MARKER"))
        .build();
    for target in Target::all() {
        let out = mapper
            .render_inline(&failure, target, &ctx(&sample))
            .to_value()
            .to_string();
        for marker in ["MESSAGE-MARKER", "DETAILS-MARKER", "not_found"] {
            assert!(out.contains(marker), "{target} dropped {marker}: {out}");
        }
    }
}

#[test]
fn every_mcp_rendering_of_every_part_passes_the_official_schema() {
    let schemas = common::McpSchemas::load();
    let (result, _) = every_part();
    let sample = samples::Sample {
        name: "every-part",
        about: "",
        result,
        output_schema: None,
    };
    for (revision, mode) in mcp_targets() {
        let out = Mapper::default()
            .render_inline(
                &sample.result,
                Target::Mcp { revision, mode },
                &ctx(&sample),
            )
            .to_value();
        if let Err(errors) = schemas.check_call_tool_result(revision, &out) {
            panic!("{revision} {mode:?}: {errors}\n{out:#}");
        }
    }
}

/// MCP `_meta` keys: an optional prefix of labels and `/`, then a name; reserved
/// prefixes (second label `modelcontextprotocol` or `mcp`) never appear.
#[test]
fn meta_keys_follow_the_key_rules_and_avoid_reserved_prefixes() {
    fn keys(value: &Value, found: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                for (key, inner) in map {
                    if key == "_meta" {
                        found.extend(inner.as_object().unwrap().keys().cloned());
                    }
                    keys(inner, found);
                }
            }
            Value::Array(items) => items.iter().for_each(|i| keys(i, found)),
            _ => {}
        }
    }
    let (every, _) = every_part();
    let mut all = samples::all();
    all.push(samples::Sample {
        name: "every-part",
        about: "",
        result: every,
        output_schema: None,
    });
    for sample in &all {
        for (revision, mode) in mcp_targets() {
            let out = Mapper::default()
                .render_inline(&sample.result, Target::Mcp { revision, mode }, &ctx(sample))
                .to_value();
            let mut found = Vec::new();
            keys(&out, &mut found);
            for key in found {
                let (prefix, name) = key.rsplit_once('/').unwrap_or(("", &key));
                assert!(
                    toolhost::result::validate_name(name).is_ok(),
                    "{key}: bad name"
                );
                if !prefix.is_empty() {
                    let labels: Vec<&str> = prefix.split('.').collect();
                    assert!(
                        labels.len() >= 2
                            && labels[1] != "mcp"
                            && labels[1] != "modelcontextprotocol",
                        "{key}"
                    );
                }
            }
        }
    }
}

/// The limit applies to the complete rendering, text copy included: a rendering of
/// exactly the limit goes inline, one byte more goes to the store. The same for
/// data built as a value and data read from JSON text (as a guest's answer
/// arrives, which the mapper does not walk before rendering), typed or as the
/// text the stdio edge sends.
#[tokio::test]
async fn size_limit_applies_to_the_whole_rendering_at_the_boundary() {
    let data = json!({"rows": (0..200).collect::<Vec<_>>()});
    let built = ToolResult::success(Some(data.clone()));
    let read = ToolResult::success_from_json(&data.to_string()).expect("JSON");
    for (how, result) in [("built", built), ("read from text", read)] {
        let sample = samples::Sample {
            name: "rows",
            about: "",
            result: result.summary("200 rows").build(),
            output_schema: None,
        };
        for as_text in [false, true] {
            let mut ctx = ctx(&sample);
            ctx.mcp_as_text = as_text;
            for target in Target::all() {
                let what = format!("{target}, data {how}, as text {as_text}");
                offloads_one_byte_over(&sample.result, target, &ctx, &what, "199,").await;
            }
        }
    }
}

/// Data whose JSON text fits the limit but grows past it when written out
/// (numbers in exponent form) is still stored, not sent over the limit.
#[tokio::test]
async fn data_that_grows_when_written_is_still_stored() {
    let text = format!("[{}]", vec!["1e15"; 50].join(","));
    let result = ToolResult::success_from_json(&text).expect("JSON").build();
    assert_eq!(result.data_text_bytes(), Some(text.len()));
    let sample = samples::Sample {
        name: "exponents",
        about: "",
        result,
        output_schema: None,
    };
    for as_text in [false, true] {
        let mut ctx = ctx(&sample);
        ctx.mcp_as_text = as_text;
        for target in Target::all() {
            let what = format!("{target}, as text {as_text}");
            let size =
                offloads_one_byte_over(&sample.result, target, &ctx, &what, "1000000000000000.0")
                    .await;
            assert!(
                size > 3 * text.len(),
                "{what}: the data grew ({size} bytes)"
            );
        }
    }
}

/// Renders `result` for `target` with the limit at its rendering's size and
/// one byte above (inline) and one byte below (stored whole, the rendering
/// within the limit and without `marker`, a piece of the data); the size.
async fn offloads_one_byte_over(
    result: &ToolResult,
    target: Target,
    ctx: &RenderContext<'_>,
    what: &str,
    marker: &str,
) -> usize {
    let size = Mapper::default()
        .render_inline(result, target, ctx)
        .to_json()
        .len();
    for (limit, offloaded) in [(size + 1, false), (size, false), (size - 1, true)] {
        let store = Arc::new(common::store());
        let mapper = Mapper::new(SizeLimits::uniform(limit), Some(store.clone()));
        let rendered = mapper.render(result, target, ctx).await;
        assert_eq!(
            rendered.offloaded, offloaded,
            "{what} with limit {limit} (rendering {size} bytes)"
        );
        assert!(
            rendered.size() <= limit,
            "{what}: {} > {limit}",
            rendered.size()
        );
        if offloaded {
            let text = rendered.rendering.to_json();
            let uri_start = text
                .find("toolhost://results/")
                .expect("the link is rendered");
            let uri: String = text[uri_start..]
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || ":/.".contains(*c))
                .collect();
            assert_eq!(
                common::read_back(&store, &uri, None).as_ref(),
                Some(result),
                "{what}: stored whole"
            );
            assert!(
                !text.contains(marker),
                "{what}: the data must not travel inline"
            );
        }
    }
    size
}

#[tokio::test]
async fn stored_results_are_bound_to_the_principal() {
    let store = Arc::new(common::store());
    let mapper = Mapper::new(SizeLimits::uniform(200), Some(store.clone()));
    let result = ToolResult::success(Some(json!("x".repeat(1000)))).build();
    let mut ctx = RenderContext::new("t", samples::render_time());
    ctx.principal = Some("alice");
    let rendered = mapper.render(&result, Target::Legacy, &ctx).await;
    let value = rendered.rendering.to_value();
    let uri = value["_meta"]["resourceUri"].as_str().unwrap();
    assert_eq!(common::read_back(&store, uri, Some("alice")), Some(result));
    assert_eq!(common::read_back(&store, uri, Some("bob")), None);
    assert_eq!(common::read_back(&store, uri, None), None);
}

#[tokio::test]
async fn parts_too_large_stay_behind_in_the_store_with_a_note() {
    let store = Arc::new(common::store());
    let mapper = Mapper::new(SizeLimits::uniform(2_000), Some(store.clone()));
    let result = ToolResult::success(None)
        .part(ContentPart::binary(vec![7; 10_000], "image/png"))
        .build();
    let sample = samples::Sample {
        name: "big-image",
        about: "",
        result,
        output_schema: None,
    };
    for target in Target::all() {
        let rendered = mapper.render(&sample.result, target, &ctx(&sample)).await;
        assert!(
            rendered.offloaded && rendered.size() <= 2_000,
            "{target}: {}",
            rendered.size()
        );
        assert!(
            rendered
                .rendering
                .to_json()
                .contains("content part(s) of this result are in the stored result"),
            "{target}"
        );
    }
}

#[test]
fn summary_and_generated_time_are_never_lost() {
    let mapper = Mapper::default();
    let at = "2020-01-01T00:00:00Z";
    let result = ToolResult::success(None)
        .generated_at(at.parse().unwrap())
        .build();
    let sample = samples::Sample {
        name: "t",
        about: "",
        result,
        output_schema: None,
    };
    for target in Target::all() {
        let out = mapper
            .render_inline(&sample.result, target, &ctx(&sample))
            .to_value()
            .to_string();
        assert!(
            out.contains(at),
            "{target}: the tool's own generation time wins"
        );
        assert!(
            !out.contains("2027-01-15T08:00:00Z"),
            "{target}: not the render time"
        );
    }
}

/// The schema check is not vacuous: it refuses what each revision forbids.
#[test]
fn the_official_schemas_refuse_what_a_revision_forbids() {
    let schemas = common::McpSchemas::load();
    let audio = json!({"content": [{"type": "audio", "data": "", "mimeType": "audio/wav"}]});
    let list = json!({"content": [], "structuredContent": [1]});
    let typed_list = json!({"content": [], "structuredContent": [1], "resultType": "complete"});
    let untyped = json!({"content": []});
    let link = json!({"content": [{"type": "resource_link", "uri": "file:///a", "name": "a"}]});
    // (revision, result, whether the revision's schema accepts it, why)
    let cases = [
        (
            Revision::V2024_11_05,
            &audio,
            false,
            "no audio before 2025-03-26",
        ),
        (Revision::V2025_03_26, &audio, true, "audio from 2025-03-26"),
        (
            Revision::V2025_11_25,
            &list,
            false,
            "structuredContent is an object up to 2025-11-25",
        ),
        (
            Revision::V2026_07_28,
            &typed_list,
            true,
            "any JSON value from 2026-07-28",
        ),
        (
            Revision::V2026_07_28,
            &untyped,
            false,
            "resultType is required",
        ),
        (
            Revision::V2025_03_26,
            &link,
            false,
            "no resource_link before 2025-06-18",
        ),
        (
            Revision::V2025_06_18,
            &link,
            true,
            "resource_link from 2025-06-18",
        ),
    ];
    for (revision, result, accepted, why) in cases {
        let outcome = schemas.check_call_tool_result(revision, result);
        assert_eq!(outcome.is_ok(), accepted, "{revision}: {why}: {outcome:?}");
    }
}

/// Legacy mode: the envelope is the only content block, and it alone carries the
/// parts and links (each still findable in it); the rest is as in compat mode.
#[test]
fn legacy_mode_sends_the_envelope_alone() {
    let (result, _) = every_part();
    let sample = samples::Sample {
        name: "every-part",
        about: "",
        result,
        output_schema: None,
    };
    for revision in Revision::ALL {
        let legacy = Mapper::default()
            .render_inline(
                &sample.result,
                Target::Mcp {
                    revision,
                    mode: OutputMode::Legacy,
                },
                &ctx(&sample),
            )
            .to_value();
        let compat = Mapper::default()
            .render_inline(
                &sample.result,
                Target::Mcp {
                    revision,
                    mode: OutputMode::Compat,
                },
                &ctx(&sample),
            )
            .to_value();
        let blocks = legacy["content"].as_array().unwrap();
        assert_eq!(blocks.len(), 1, "{revision}");
        assert_eq!(
            blocks[0], compat["content"][0],
            "{revision}: the same envelope"
        );
        assert_eq!(
            legacy.get("structuredContent"),
            compat.get("structuredContent"),
            "{revision}"
        );
    }
}

/// Found by the `mapper` fuzz target: a link or embedded resource whose "URI" is
/// not one (an app's `"resourceUri": ""`, a guest's bare path) made MCP renderings
/// that the official schemas refuse (`"format": "uri"`), and that strict clients
/// cannot read. Such a link goes as its text form; such an embedded resource is
/// named by its place, with the tool's string in `_meta`.
#[test]
fn strings_that_are_not_uris_never_reach_a_uri_field() {
    let schemas = common::McpSchemas::load();
    let from_app = toolhost::render::legacy::parse::parse_legacy(
        r#"{"success": true, "data": {"id": 1}, "_meta": {"resourceUri": ""}}"#,
    );
    let result = from_app
        .to_builder()
        .part(ContentPart::ResourceLink(ResourceLink {
            uri: "reports/q3.pdf".into(),
            name: "q3".into(),
            title: None,
            description: None,
            mime: None,
            size: None,
        }))
        .part(ContentPart::EmbeddedResource {
            uri: "not a uri".into(),
            mime: Some("text/plain".into()),
            body: ResourceBody::Text("hello".into()),
        })
        .stored_link(StoredLink {
            uri: "results/7".into(),
            size: None,
            mime: "application/json".into(),
            expires_at: None,
        })
        .build();
    let ctx = RenderContext::new("links", samples::render_time());
    for (revision, mode) in mcp_targets() {
        let out = Mapper::default()
            .render_inline(&result, Target::Mcp { revision, mode }, &ctx)
            .to_value();
        if let Err(errors) = schemas.check_call_tool_result(revision, &out) {
            panic!("{revision} {mode:?}: {errors}\n{out:#}");
        }
        // Nothing is lost: the links go as text, the embedded resource's string is
        // in its `_meta` (from 2025-06-18) or in the envelope text (compat, legacy).
        // Known gap: spec mode before 2025-06-18 has no place left for it.
        let text = out.to_string();
        let mut kept = vec!["reports/q3.pdf", "results/7"];
        if revision.has_structured_content() || mode != OutputMode::Spec {
            kept.push("not a uri");
        }
        for string in kept {
            assert!(
                text.contains(string),
                "{revision} {mode:?} lost {string:?}: {text}"
            );
        }
    }
}

/// The owned path renders the same bytes as the borrowed one, inline or
/// offloaded, for every sample and target, at the default limit and at one
/// that every data-carrying sample is over.
#[tokio::test]
async fn the_owned_path_renders_the_same_bytes() {
    use toolhost::store::{
        Kept, Offload, ResultStore, StoreFuture, StoredRow, TaskRow, TaskSummary,
    };
    /// A store that keeps nothing and answers one fixed link, so both paths
    /// offload alike (and has no tasks).
    struct Fixed;
    impl ResultStore for Fixed {
        fn put<'a>(&'a self, _: Offload<'a>) -> StoreFuture<'a, Kept> {
            Box::pin(async {
                Ok(Kept {
                    uri: "toolhost://results/fixed".into(),
                    size: Some(1),
                    mime: "application/json".into(),
                    expires_at: jiff::Timestamp::from_second(1_900_000_000).unwrap(),
                })
            })
        }
        fn get<'a>(&'a self, _: &'a str, _: Option<&'a str>) -> StoreFuture<'a, Option<StoredRow>> {
            Box::pin(async { Ok(None) })
        }
        fn purge(&self) -> StoreFuture<'_, u64> {
            Box::pin(async { Ok(0) })
        }
        fn ping(&self) -> StoreFuture<'_, ()> {
            Box::pin(async { Ok(()) })
        }
        fn put_task<'a>(&'a self, _: &'a TaskRow) -> StoreFuture<'a, ()> {
            Box::pin(async { Ok(()) })
        }
        fn task<'a>(&'a self, _: &'a str, _: Option<&'a str>) -> StoreFuture<'a, Option<TaskRow>> {
            Box::pin(async { Ok(None) })
        }
        fn update_task<'a>(&'a self, _: &'a TaskRow) -> StoreFuture<'a, bool> {
            Box::pin(async { Ok(false) })
        }
        fn tasks_of<'a>(
            &'a self,
            _: Option<&'a str>,
            _: Option<&'a str>,
            _: usize,
        ) -> StoreFuture<'a, Vec<TaskSummary>> {
            Box::pin(async { Ok(Vec::new()) })
        }
    }
    let mut seen_inline = 0;
    for limit in [SizeLimits::DEFAULT_BYTES, 200] {
        let mapper = Mapper::new(SizeLimits::uniform(limit), Some(Arc::new(Fixed)));
        for sample in toolhost::samples::all() {
            for target in Target::all() {
                let mut ctx = RenderContext::new(sample.name, toolhost::samples::render_time());
                ctx.output_schema = sample.output_schema.as_ref();
                let borrowed = mapper.render(&sample.result, target, &ctx).await;
                let owned = mapper
                    .render_owned(sample.result.clone(), target, &ctx)
                    .await;
                assert_eq!(owned, borrowed, "{} {target} at {limit}", sample.name);
                seen_inline += usize::from(!owned.offloaded);
            }
        }
    }
    assert!(seen_inline > 100, "{seen_inline}");
}
