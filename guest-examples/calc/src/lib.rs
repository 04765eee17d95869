//! `calc`: arithmetic with declared output schemas: `add` and `divide`
//! return objects, `range` returns a list.

use serde::Deserialize;
use toolhost_guest::{
    CallContext, ErrorCode, Plugin, ResultBuilder, ToolDescriptor, ToolResult, Value, json,
    with_args,
};

/// The longest list `range` returns.
const MAX_RANGE: i64 = 10_000;

struct Calc;

#[derive(Deserialize)]
struct Pair {
    a: f64,
    b: f64,
}

#[derive(Deserialize)]
struct Range {
    start: i64,
    end: i64,
}

fn pair_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
        "required": ["a", "b"],
        "additionalProperties": false,
    })
}

fn number_schema(field: &str) -> Value {
    json!({
        "type": "object",
        "properties": {field: {"type": "number"}},
        "required": [field],
    })
}

/// A JSON number: whole values as integers (`3`, not `3.0`).
fn number(x: f64) -> Value {
    if x.fract() == 0.0 && x.abs() < 9_007_199_254_740_992.0 {
        json!(x as i64)
    } else {
        json!(x)
    }
}

/// Fails when an operation overflowed to infinity.
fn finite(x: f64) -> Result<f64, ResultBuilder> {
    if x.is_finite() {
        Ok(x)
    } else {
        Err(ToolResult::failure(
            ErrorCode::ToolError,
            "The result is too large to represent as a number.",
        ))
    }
}

fn add(Pair { a, b }: Pair) -> Result<ResultBuilder, ResultBuilder> {
    let sum = finite(a + b)?;
    Ok(ToolResult::success(json!({"sum": number(sum)})).summary(format!("{a} + {b} = {sum}")))
}

fn divide(Pair { a, b }: Pair) -> Result<ResultBuilder, ResultBuilder> {
    if b == 0.0 {
        return Err(
            ToolResult::failure(ErrorCode::InvalidArguments, "b must not be zero")
                .details(json!({"field": "b"})),
        );
    }
    let quotient = finite(a / b)?;
    Ok(ToolResult::success(json!({"quotient": number(quotient)}))
        .summary(format!("{a} / {b} = {quotient}")))
}

fn range(Range { start, end }: Range) -> ResultBuilder {
    if end.saturating_sub(start) > MAX_RANGE {
        return ToolResult::failure(
            ErrorCode::InvalidArguments,
            format!("A range holds at most {MAX_RANGE} integers: lower `end` or raise `start`."),
        )
        .details(json!({"field": "end", "max_len": MAX_RANGE}));
    }
    let numbers: Vec<i64> = (start..end).collect();
    ToolResult::success(&numbers).summary(format!(
        "{} integers from {start} to {end} (exclusive)",
        numbers.len()
    ))
}

impl Plugin for Calc {
    fn describe() -> Vec<ToolDescriptor> {
        vec![
            ToolDescriptor::new("add", "Adds two numbers.")
                .input_schema(pair_schema())
                .output_schema(number_schema("sum"))
                .read_only(true)
                .build(),
            ToolDescriptor::new(
                "range",
                "Lists the integers from start (inclusive) to end (exclusive), at most 10000.",
            )
            .input_schema(json!({
                "type": "object",
                "properties": {"start": {"type": "integer"}, "end": {"type": "integer"}},
                "required": ["start", "end"],
                "additionalProperties": false,
            }))
            .output_schema(json!({"type": "array", "items": {"type": "integer"}}))
            .read_only(true)
            .build(),
            ToolDescriptor::new("divide", "Divides a by b.")
                .input_schema(pair_schema())
                .output_schema(number_schema("quotient"))
                .read_only(true)
                .build(),
        ]
    }

    fn call(name: String, arguments: String, _context: CallContext) -> ToolResult {
        match name.as_str() {
            "add" => with_args(&arguments, add),
            "range" => with_args(&arguments, range),
            "divide" => with_args(&arguments, divide),
            other => ToolResult::unknown_tool(other).build(),
        }
    }
}

toolhost_guest::export_plugin!(Calc);
