//! The mapper: structurally valid, arbitrary `ToolResult`s through every renderer.
//!
//! The input is decoded (with `arbitrary`) into a mirror of the result's shape, so
//! the fuzzer spends its time on results rather than on parse failures. For every
//! target of `Target::all()` the rendering's bytes must be valid JSON, as long as
//! the size the mapper counts; for MCP they must validate against the revision's
//! official `CallToolResult` schema and read back into rmcp's `CallToolResult` (as
//! an rmcp client does). The size-limited path (`Mapper::render` with a
//! store and a small limit) must stay within the limit or say why not.

#![no_main]

use std::sync::{Arc, LazyLock};

use arbitrary::{Arbitrary, Result, Unstructured};
use jiff::{SignedDuration, Timestamp};
use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Number, Value, json};
use toolhost::render::{Mapper, RenderContext, Rendering, Revision, SizeLimits, Target};
use toolhost::result::{
    ContentPart, ErrorCode, Extension, LegacyKeys, Pagination, ResourceBody, ResourceLink,
    StoredLink, ToolResult,
};
use toolhost::samples;
use toolhost::store::MemoryStore;

/// Arbitrary JSON, at most `depth` levels deep.
fn json_value(u: &mut Unstructured<'_>, depth: u32) -> Result<Value> {
    let pick = if depth == 0 {
        u.int_in_range(0..=4)?
    } else {
        u.int_in_range(0..=6)?
    };
    Ok(match pick {
        0 => Value::Null,
        1 => Value::Bool(u.arbitrary()?),
        2 => Value::Number(Number::from(u.arbitrary::<i64>()?)),
        3 => Number::from_f64(u.arbitrary()?).map_or(Value::Null, Value::Number),
        4 => Value::String(u.arbitrary()?),
        5 => {
            let n = u.int_in_range(0..=4)?;
            Value::Array(
                (0..n)
                    .map(|_| json_value(u, depth - 1))
                    .collect::<Result<_>>()?,
            )
        }
        _ => Value::Object(json_object(u, depth - 1)?),
    })
}

fn json_object(u: &mut Unstructured<'_>, depth: u32) -> Result<Map<String, Value>> {
    let n = u.int_in_range(0..=4)?;
    let mut map = Map::new();
    for _ in 0..n {
        let key = if u.arbitrary()? {
            // Keys the renderers and the legacy envelope treat specially.
            u.choose(&[
                "success",
                "data",
                "error",
                "_meta",
                "message",
                "code",
                "type",
                "text",
                "structuredContent",
                "isError",
                "content",
                "result",
                "summary",
                "dryRun",
            ])?
            .to_string()
        } else {
            u.arbitrary()?
        };
        map.insert(key, json_value(u, depth)?);
    }
    Ok(map)
}

fn timestamp(u: &mut Unstructured<'_>) -> Result<Option<Timestamp>> {
    if !u.arbitrary()? {
        return Ok(None);
    }
    let seconds = u.int_in_range(Timestamp::MIN.as_second()..=Timestamp::MAX.as_second())?;
    let nanos = u.int_in_range(0..=999_999_999)?;
    Ok(Timestamp::new(seconds, nanos).ok())
}

fn opt_string(u: &mut Unstructured<'_>) -> Result<Option<String>> {
    u.arbitrary()
}

fn mime(u: &mut Unstructured<'_>) -> Result<String> {
    if u.arbitrary()? {
        Ok(u.choose(&[
            "image/png",
            "audio/wav",
            "application/json",
            "text/plain",
            "text/markdown",
            "application/octet-stream",
            "",
        ])?
        .to_string())
    } else {
        u.arbitrary()
    }
}

fn content_part(u: &mut Unstructured<'_>) -> Result<ContentPart> {
    Ok(match u.int_in_range(0..=3)? {
        0 => ContentPart::Text {
            text: u.arbitrary()?,
            mime: if u.arbitrary()? { Some(mime(u)?) } else { None },
        },
        1 => ContentPart::Binary {
            data: u.arbitrary()?,
            mime: mime(u)?,
        },
        2 => ContentPart::ResourceLink(ResourceLink {
            uri: u.arbitrary()?,
            name: u.arbitrary()?,
            title: opt_string(u)?,
            description: opt_string(u)?,
            mime: if u.arbitrary()? { Some(mime(u)?) } else { None },
            size: u.arbitrary()?,
        }),
        _ => ContentPart::EmbeddedResource {
            uri: u.arbitrary()?,
            mime: if u.arbitrary()? { Some(mime(u)?) } else { None },
            body: if u.arbitrary()? {
                ResourceBody::Text(u.arbitrary()?)
            } else {
                ResourceBody::Bytes(u.arbitrary()?)
            },
        },
    })
}

fn extension(u: &mut Unstructured<'_>) -> Result<Option<Extension>> {
    let namespace: String = if u.arbitrary()? {
        u.choose(&[
            "com.example",
            "com.example.inventory",
            "dev.toolhost",
            "org.acme.x",
        ])?
        .to_string()
    } else {
        u.arbitrary()?
    };
    let name: String = if u.arbitrary()? {
        u.choose(&["stock", "warehouse", "trace-id", "a"])?
            .to_string()
    } else {
        u.arbitrary()?
    };
    Ok(Extension::new(namespace, name, json_value(u, 2)?).ok())
}

/// A whole result, built through the public builder.
fn tool_result(u: &mut Unstructured<'_>) -> Result<ToolResult> {
    let mut builder = if u.arbitrary()? {
        let data = if u.arbitrary()? {
            Some(json_value(u, 4)?)
        } else {
            None
        };
        ToolResult::success(data)
    } else {
        let code = *u.choose(&ErrorCode::ALL)?;
        let b = ToolResult::failure(code, u.arbitrary::<String>()?);
        if u.arbitrary()? {
            b.details(json_value(u, 3)?)
        } else {
            b
        }
    };
    if let Some(summary) = opt_string(u)? {
        builder = builder.summary(summary);
    }
    for _ in 0..u.int_in_range(0..=4)? {
        builder = builder.part(content_part(u)?);
    }
    for _ in 0..u.int_in_range(0..=2)? {
        builder = builder.stored_link(StoredLink {
            uri: u.arbitrary()?,
            size: u.arbitrary()?,
            mime: mime(u)?,
            expires_at: timestamp(u)?,
        });
    }
    if u.arbitrary()? {
        builder = builder.pagination(Pagination {
            total: u.arbitrary()?,
            offset: u.arbitrary()?,
            limit: u.arbitrary()?,
            next_cursor: opt_string(u)?,
            has_more: u.arbitrary()?,
        });
    }
    if let Some(dry_run) = u.arbitrary()? {
        builder = builder.dry_run(dry_run);
    }
    if let Some(size) = u.arbitrary()? {
        builder = builder.response_size(size);
    }
    if u.arbitrary()? {
        builder = builder.query(json_value(u, 2)?);
    }
    if let Some(at) = timestamp(u)? {
        builder = builder.generated_at(at);
    }
    if let Some(at) = timestamp(u)? {
        builder = builder.expires_at(at);
    }
    if let Some(ms) = u.arbitrary::<Option<f64>>()? {
        builder = builder.duration_ms(ms);
    }
    for _ in 0..u.int_in_range(0..=2)? {
        if let Some(ext) = extension(u)? {
            builder = builder.extension(ext);
        }
    }
    if u.arbitrary()? {
        builder = builder.legacy_keys(LegacyKeys {
            beside: json_object(u, 2)?,
            meta: json_object(u, 2)?,
        });
    }
    Ok(builder.build())
}

/// The output schema the tool declared: none, a typical one, or anything.
fn output_schema(u: &mut Unstructured<'_>) -> Result<Option<Value>> {
    Ok(match u.int_in_range(0..=4)? {
        0 => None,
        1 => Some(json!({"type": "object", "properties": {"count": {"type": "integer"}}})),
        2 => Some(json!({"type": "array", "items": {"type": "string"}})),
        3 => Some(json!({"type": ["string", "null"]})),
        _ => Some(json_value(u, 3)?),
    })
}

#[derive(Debug)]
struct Input {
    result: ToolResult,
    output_schema: Option<Value>,
    limit: usize,
}

impl<'a> Arbitrary<'a> for Input {
    fn arbitrary(u: &mut Unstructured<'a>) -> Result<Self> {
        Ok(Input {
            result: tool_result(u)?,
            output_schema: output_schema(u)?,
            limit: u.int_in_range(0..=4096)?,
        })
    }
}

/// `CallToolResult` of each revision, compiled once.
static VALIDATORS: LazyLock<Vec<(Revision, jsonschema::Validator)>> = LazyLock::new(|| {
    let dir = std::env::var_os("TOOLHOST_SHARED_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared"))
        .join("reference/mcp-schema");
    Revision::ALL
        .into_iter()
        .map(|revision| {
            let path = dir.join(format!("{revision}.json"));
            let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
                panic!(
                    "cannot read {}: {e}; set TOOLHOST_SHARED_DIR to the folder holding reference/mcp-schema",
                    path.display()
                )
            });
            let mut schema: Value = serde_json::from_str(&text).expect("the schema is JSON");
            let defs = if schema.get("$defs").is_some() {
                "$defs"
            } else {
                "definitions"
            };
            schema["$ref"] = json!(format!("#/{defs}/CallToolResult"));
            let validator = jsonschema::validator_for(&schema).expect("the schema compiles");
            (revision, validator)
        })
        .collect()
});

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
});

fn check(target: Target, rendering: &Rendering, what: &str) {
    let text = rendering.to_json();
    let value: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("{target} {what}: not valid JSON ({e}): {text}"));
    assert_eq!(
        text.len(),
        rendering.size(),
        "{target} {what}: the size is the length"
    );
    let value = &value;
    if let Target::Mcp { revision, .. } = target {
        let (_, validator) = VALIDATORS.iter().find(|(r, _)| *r == revision).unwrap();
        let errors: Vec<String> = validator
            .iter_errors(value)
            .map(|e| format!("{e} at {}", e.instance_path()))
            .collect();
        assert!(
            errors.is_empty(),
            "{target} {what}: not a CallToolResult of {revision}: {}\n{text}",
            errors.join("; ")
        );
        if let Err(e) = serde_json::from_value::<rmcp::model::CallToolResult>(value.clone()) {
            panic!("{target} {what}: rmcp cannot read it ({e}): {text}");
        }
    }
}

fuzz_target!(|input: Input| {
    let now = samples::render_time();
    let mut ctx = RenderContext::new("fuzz_tool", now);
    ctx.output_schema = input.output_schema.as_ref();
    ctx.request_id = "req-1";
    ctx.principal = Some("fuzzer");

    let inline = Mapper::default();
    let store = MemoryStore::new(SignedDuration::from_hours(1), samples::render_time);
    let limited = Mapper::new(SizeLimits::uniform(input.limit), Some(Arc::new(store)));
    for target in Target::all() {
        let rendering = inline.render_inline(&input.result, target, &ctx);
        check(target, &rendering, "inline");

        let rendered = RUNTIME.block_on(limited.render(&input.result, target, &ctx));
        check(target, &rendered.rendering, "limited");
    }
});
