//! The shape of structured data per revision, and the matching output schema.
//!
//! Up to 2025-11-25 structured content must be a JSON object and an output schema
//! must describe an object. Data of any other shape is wrapped as
//! `{"result": <data>}`, and a schema whose root is not `"type": "object"` is
//! advertised wrapped the same way, so what `tools/list` promises is exactly what
//! `tools/call` sends. From 2026-07-28 both go out unchanged. Before 2025-06-18
//! there is no structured content at all.
//!
//! The decision depends on the declared schema when there is one (so every result
//! of a tool is shaped the same way), and on the data only when there is none.

use serde_json::{Map, Value, json};

use super::Revision;

/// The key non-object data is wrapped under.
pub const WRAP_KEY: &str = "result";

/// Keys that must stay at the root of a schema when it is wrapped: the dialect
/// and the definitions its `$ref`s point into.
const ROOT_KEYWORDS: [&str; 4] = ["$schema", "$id", "$defs", "definitions"];

/// How `data` travels as structured content on one revision.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// The data as it is.
    AsIs,
    /// The data under [`WRAP_KEY`] in an object of its own.
    Wrapped,
}

impl Shape {
    /// What the shape adds to the data's size as compact JSON: `{"result":` and `}`.
    pub fn overhead(self) -> usize {
        match self {
            Shape::AsIs => 0,
            Shape::Wrapped => WRAP_KEY.len() + 5,
        }
    }
}

/// How `data` is shaped as structured content on `revision`, or `None` where the
/// revision has none (or where object-typed schema and non-object data disagree,
/// which the runtime's output validation rules out).
pub fn shape(data: &Value, schema: Option<&Value>, revision: Revision) -> Option<Shape> {
    if !revision.has_structured_content() {
        return None;
    }
    if revision.is_stateless() {
        return Some(Shape::AsIs);
    }
    let wrap = match schema {
        Some(schema) => !is_object_schema(schema),
        None => !data.is_object(),
    };
    if wrap {
        Some(Shape::Wrapped)
    } else {
        data.is_object().then_some(Shape::AsIs)
    }
}

/// The structured content for `data` on `revision` (a copy), or `None` as for
/// [`shape`].
pub fn content(data: &Value, schema: Option<&Value>, revision: Revision) -> Option<Value> {
    shape(data, schema, revision).map(|shape| shaped(data.clone(), shape))
}

/// `data`, moved, in `shape`.
pub fn shaped(data: Value, shape: Shape) -> Value {
    match shape {
        Shape::AsIs => data,
        Shape::Wrapped => json!({ WRAP_KEY: data }),
    }
}

/// [`shaped`] of borrowed data, appended to `out` as compact JSON: the same
/// bytes, without moving or copying the data.
pub fn write_shaped(out: &mut Vec<u8>, data: &Value, shape: Shape) {
    let json = "a JSON value always serializes into memory";
    match shape {
        Shape::AsIs => serde_json::to_writer(out, data).expect(json),
        Shape::Wrapped => {
            out.push(b'{');
            serde_json::to_writer(&mut *out, WRAP_KEY).expect(json);
            out.push(b':');
            serde_json::to_writer(&mut *out, data).expect(json);
            out.push(b'}');
        }
    }
}

/// The output schema to advertise on `revision`, or `None` where the revision has
/// no output schemas.
pub fn output_schema(schema: &Value, revision: Revision) -> Option<Value> {
    if !revision.has_structured_content() {
        return None;
    }
    if revision.is_stateless() || is_object_schema(schema) {
        return Some(schema.clone());
    }
    let mut inner = match schema {
        Value::Object(map) => map.clone(),
        // A boolean schema (`true` accepts anything) wraps as it is.
        other => return Some(wrapped(other.clone(), Map::new())),
    };
    let mut root = Map::new();
    for keyword in ROOT_KEYWORDS {
        if let Some(value) = inner.shift_remove(keyword) {
            root.insert(keyword.to_owned(), value);
        }
    }
    // `$ref`s into `#/$defs/..` keep working because the definitions moved to the
    // root with the wrapper; other pointers into the schema would need rewriting.
    Some(wrapped(Value::Object(inner), root))
}

fn wrapped(inner: Value, mut root: Map<String, Value>) -> Value {
    root.insert("type".into(), json!("object"));
    root.insert("properties".into(), json!({ WRAP_KEY: inner }));
    root.insert("required".into(), json!([WRAP_KEY]));
    Value::Object(root)
}

fn is_object_schema(schema: &Value) -> bool {
    schema.get("type").and_then(Value::as_str) == Some("object")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objects_go_out_unchanged() {
        let data = json!({"a": 1});
        for revision in [
            Revision::V2025_06_18,
            Revision::V2025_11_25,
            Revision::V2026_07_28,
        ] {
            assert_eq!(content(&data, None, revision), Some(data.clone()));
        }
    }

    #[test]
    fn no_structured_content_before_2025_06_18() {
        for revision in [Revision::V2024_11_05, Revision::V2025_03_26] {
            assert_eq!(content(&json!({"a": 1}), None, revision), None);
            assert_eq!(output_schema(&json!({"type": "object"}), revision), None);
        }
    }

    #[test]
    fn non_objects_are_wrapped_on_the_handshake_era_only() {
        let list = json!([1, 2]);
        let schema = json!({"type": "array", "items": {"type": "integer"}});
        assert_eq!(
            content(&list, Some(&schema), Revision::V2025_11_25),
            Some(json!({"result": [1, 2]}))
        );
        assert_eq!(
            content(&list, Some(&schema), Revision::V2026_07_28),
            Some(list.clone())
        );
        assert_eq!(
            content(&json!(7), None, Revision::V2025_06_18),
            Some(json!({"result": 7}))
        );
    }

    #[test]
    fn written_shapes_are_the_shaped_values() {
        for (data, shape) in [
            (json!({"a": "b\"c"}), Shape::AsIs),
            (json!([1, "x"]), Shape::Wrapped),
            (json!(null), Shape::Wrapped),
        ] {
            let mut out = Vec::new();
            write_shaped(&mut out, &data, shape);
            let expected = serde_json::to_vec(&shaped(data, shape)).unwrap();
            assert_eq!(String::from_utf8(out), String::from_utf8(expected));
        }
    }

    #[test]
    fn schema_and_content_are_wrapped_alike() {
        let schema = json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "array",
            "items": {"$ref": "#/$defs/item"},
            "$defs": {"item": {"type": "string"}}
        });
        let advertised = output_schema(&schema, Revision::V2025_11_25).unwrap();
        assert_eq!(
            advertised,
            json!({
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "$defs": {"item": {"type": "string"}},
                "type": "object",
                "properties": {"result": {"type": "array", "items": {"$ref": "#/$defs/item"}}},
                "required": ["result"]
            })
        );
        // The wrapped content validates against the wrapped schema.
        let data = content(&json!(["a", "b"]), Some(&schema), Revision::V2025_11_25).unwrap();
        let validator = jsonschema::validator_for(&advertised).unwrap();
        assert!(validator.is_valid(&data));
        assert!(!validator.is_valid(&json!({"result": [1]})));
    }

    #[test]
    fn object_schema_decides_even_for_odd_data() {
        // With an object schema, non-object data is never wrapped into a shape the
        // advertised schema would not describe.
        let schema = json!({"type": "object"});
        assert_eq!(
            content(&json!([1]), Some(&schema), Revision::V2025_11_25),
            None
        );
    }
}
