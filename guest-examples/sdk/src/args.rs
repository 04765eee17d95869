//! Reading a call's arguments into a struct of the tool's own.

use serde::de::DeserializeOwned;
use serde_json::json;

use crate::ResultBuilder;
use crate::wit::{ErrorCode, ToolResult};

/// Parses the arguments (JSON text) into `T`.
///
/// When they do not fit, the error is a ready `invalid_arguments` failure
/// whose message says what is wrong and whose details name the field
/// (`{"field": "b"}`; nested fields as `filter.status` or `items[2].id`), so
/// a tool can return it as it is, or pass it on with `?`:
///
/// ```
/// # use serde::Deserialize;
/// # use toolhost_guest::{ResultBuilder, ToolResult, json, parse_args};
/// #[derive(Deserialize)]
/// struct Divide {
///     a: f64,
///     b: f64,
/// }
///
/// fn divide(arguments: &str) -> Result<ResultBuilder, ResultBuilder> {
///     let Divide { a, b } = parse_args(arguments)?;
///     Ok(ToolResult::success(json!({"quotient": a / b})))
/// }
/// # let failure = divide(r#"{"a": 1}"#).unwrap_err().build();
/// # assert!(matches!(failure.outcome, toolhost_guest::Outcome::Failure(_)));
/// ```
pub fn parse_args<T: DeserializeOwned>(arguments: &str) -> Result<T, ResultBuilder> {
    let mut deserializer = serde_json::Deserializer::from_str(arguments);
    let args = serde_path_to_error::deserialize(&mut deserializer).map_err(|error| {
        let path = error.path().to_string();
        let inner = error.into_inner();
        let message = without_position(&inner);
        // A missing field is reported at the object that lacks it.
        let missing = message.strip_prefix("missing field ").and_then(backticked);
        let field = match (path.as_str(), missing) {
            (".", Some(name)) => Some(name.to_string()),
            (".", None) => message
                .strip_prefix("unknown field ")
                .and_then(backticked)
                .map(str::to_string),
            (path, Some(name)) => Some(format!("{path}.{name}")),
            (path, None) => Some(path.to_string()),
        };
        let (message, details) = match field {
            Some(field) => (
                format!("Invalid argument `{field}`: {message}."),
                json!({ "field": field }),
            ),
            None => (format!("Invalid arguments: {message}."), json!({})),
        };
        ToolResult::failure(ErrorCode::InvalidArguments, message).details(details)
    })?;
    // Nothing but whitespace may follow the value.
    deserializer.end().map_err(|error| {
        let message = without_position(&error);
        ToolResult::failure(
            ErrorCode::InvalidArguments,
            format!("Invalid arguments: {message}."),
        )
        .details(json!({}))
    })?;
    Ok(args)
}

/// Parses the arguments into `T` and runs `tool` with them; when they do not
/// fit, returns the `invalid_arguments` failure of [`parse_args`] instead.
///
/// `tool` may return a finished [`ToolResult`], a [`ResultBuilder`], or a
/// `Result` of those (so it can use `?`): see [`IntoToolResult`].
///
/// ```
/// # use serde::Deserialize;
/// # use toolhost_guest::{ToolResult, json, with_args};
/// #[derive(Deserialize)]
/// struct Hello {
///     name: Option<String>,
/// }
///
/// # let arguments = String::from("{}");
/// let result = with_args(&arguments, |Hello { name }| {
///     let name = name.unwrap_or_else(|| "world".into());
///     ToolResult::empty().summary(format!("Greeted {name}"))
/// });
/// ```
pub fn with_args<T, R>(arguments: &str, tool: impl FnOnce(T) -> R) -> ToolResult
where
    T: DeserializeOwned,
    R: IntoToolResult,
{
    match parse_args(arguments) {
        Ok(args) => tool(args).into_tool_result(),
        Err(failure) => failure.build(),
    }
}

/// What a tool function may return: a [`ToolResult`], a [`ResultBuilder`],
/// or a `Result` whose both sides are one of these, so that a function can
/// return early with `?`:
///
/// ```
/// # use toolhost_guest::{ErrorCode, ResultBuilder, ToolResult, json};
/// fn divide(a: f64, b: f64) -> Result<ResultBuilder, ResultBuilder> {
///     if b == 0.0 {
///         return Err(ToolResult::failure(ErrorCode::InvalidArguments, "b must not be zero")
///             .details(json!({"field": "b"})));
///     }
///     Ok(ToolResult::success(json!({"quotient": a / b})))
/// }
/// ```
pub trait IntoToolResult {
    /// Finishes the result.
    fn into_tool_result(self) -> ToolResult;
}

impl IntoToolResult for ToolResult {
    fn into_tool_result(self) -> ToolResult {
        self
    }
}

impl IntoToolResult for ResultBuilder {
    fn into_tool_result(self) -> ToolResult {
        self.build()
    }
}

/// A failure with the error's code, message and details (so `?` on a
/// [`crate::interaction::Refusal`] ends a tool with a coded failure).
impl IntoToolResult for crate::ToolError {
    fn into_tool_result(self) -> ToolResult {
        crate::result::ResultBuilder::new(crate::Outcome::Failure(self)).build()
    }
}

impl<T: IntoToolResult, E: IntoToolResult> IntoToolResult for Result<T, E> {
    fn into_tool_result(self) -> ToolResult {
        match self {
            Ok(result) => result.into_tool_result(),
            Err(failure) => failure.into_tool_result(),
        }
    }
}

/// serde_json's message without its " at line 1 column 9" suffix.
fn without_position(error: &serde_json::Error) -> String {
    let text = error.to_string();
    match text.rfind(" at line ") {
        Some(at) if error.line() > 0 => text[..at].to_string(),
        _ => text,
    }
}

/// The name in backticks at the start of `text` ("`b`, expected ...").
fn backticked(message: &str) -> Option<&str> {
    let rest = message.strip_prefix('`')?;
    Some(&rest[..rest.find('`')?])
}

#[cfg(test)]
mod tests {
    use serde::Deserialize;
    use serde_json::{Value, json};

    use super::*;
    use crate::wit::Outcome;

    #[derive(Debug, Deserialize)]
    #[serde(deny_unknown_fields)]
    #[allow(dead_code)]
    struct Args {
        a: f64,
        filter: Option<Filter>,
    }

    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Filter {
        status: String,
    }

    /// The message and details of the failure for `arguments`.
    fn failure(arguments: &str) -> (String, Value) {
        match parse_args::<Args>(arguments).unwrap_err().build().outcome {
            Outcome::Failure(error) => {
                assert!(matches!(error.code, ErrorCode::InvalidArguments));
                let details = serde_json::from_str(error.details.as_deref().unwrap()).unwrap();
                (error.message, details)
            }
            Outcome::Success(_) => panic!("not a failure"),
        }
    }

    #[test]
    fn parses_valid_arguments() {
        let args: Args = parse_args(r#"{"a": 1, "filter": {"status": "open"}}"#).unwrap();
        assert_eq!(args.a, 1.0);
    }

    #[test]
    fn names_the_field_of_each_kind_of_error() {
        assert_eq!(failure("{}").1, json!({"field": "a"}));
        assert_eq!(failure(r#"{"a": "x"}"#).1, json!({"field": "a"}));
        assert_eq!(failure(r#"{"a": 1, "c": 2}"#).1, json!({"field": "c"}));
        assert_eq!(
            failure(r#"{"a": 1, "filter": {}}"#).1,
            json!({"field": "filter.status"})
        );
        assert_eq!(
            failure(r#"{"a": 1, "filter": {"status": 3}}"#).1,
            json!({"field": "filter.status"})
        );
        assert_eq!(failure("[1]").1, json!({}));
        assert_eq!(
            failure(r#"{"a": 1} x"#).0,
            "Invalid arguments: trailing characters."
        );
    }

    #[test]
    fn message_has_no_position() {
        let (message, _) = failure(r#"{"a": "x"}"#);
        assert_eq!(
            message,
            "Invalid argument `a`: invalid type: string \"x\", expected f64."
        );
    }

    #[test]
    fn with_args_accepts_builders_and_results() {
        let ok = with_args(r#"{"a": 2}"#, |args: Args| {
            if args.a > 1.0 {
                Ok(ToolResult::success(json!({"a": args.a})))
            } else {
                Err(ToolResult::failure(ErrorCode::ToolError, "too small"))
            }
        });
        assert!(matches!(ok.outcome, Outcome::Success(Some(ref data)) if data == r#"{"a":2.0}"#));
    }
}
