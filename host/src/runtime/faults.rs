//! How a call that went wrong in the sandbox becomes a coded result.
//!
//! | what happened | code |
//! |---|---|
//! | the deadline passed (epoch or wall clock), or the fuel ran out | `timeout` |
//! | a budget was hit (`memory_mib`, `max_resources`, ...: named in details as `budget`), the stack overflowed, the pool was full | `resource_limit` |
//! | the guest trapped after the policy denied it a capability | `permission_denied` |
//! | any other trap or panic, a malformed result | `tool_error` |
//!
//! Every fault result names the plugin and the tool in its details, with the trap
//! and the end of the guest's stderr where there is one.

use serde_json::{Map, Value, json};
use wasmtime::Trap;

use super::state::BudgetHit;
use crate::result::{ErrorCode, ToolResult};

/// The call ran past its wall-clock deadline.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the call ran past its deadline")]
pub struct DeadlineExceeded;

/// What the runtime knows about a failed call beside the error itself.
pub struct FaultContext<'a> {
    pub plugin: &'a str,
    pub tool: &'a str,
    pub timeout_ms: u128,
    /// The budget the call hit (memory, resource table, host imports), if any.
    pub budget: Option<&'a BudgetHit>,
    pub denials: &'a [String],
    pub stderr: String,
}

/// The result of a call that failed with `error`.
pub fn fault(error: &wasmtime::Error, ctx: FaultContext<'_>) -> ToolResult {
    let trap = error.downcast_ref::<Trap>().copied();
    let mut details = Map::new();
    details.insert("plugin".into(), json!(ctx.plugin));
    details.insert("tool".into(), json!(ctx.tool));
    if let Some(trap) = trap {
        details.insert("trap".into(), json!(trap.to_string()));
    }
    if !ctx.stderr.is_empty() {
        details.insert("stderr".into(), json!(ctx.stderr));
    }

    let (code, message) =
        if error.downcast_ref::<DeadlineExceeded>().is_some() || trap == Some(Trap::Interrupt) {
            details.insert("timeoutMs".into(), json!(ctx.timeout_ms));
            (
                ErrorCode::Timeout,
                format!(
                    "The call ran past its deadline of {} ms and was stopped.",
                    ctx.timeout_ms
                ),
            )
        } else if trap == Some(Trap::OutOfFuel) {
            (
                ErrorCode::Timeout,
                "The call used up its fuel budget and was stopped.".to_owned(),
            )
        } else if let Some(hit) = ctx.budget {
            details.insert("budget".into(), json!(hit.key));
            details.insert("limit".into(), json!(hit.message));
            (
                ErrorCode::ResourceLimit,
                format!("The call was stopped: {}.", hit.message),
            )
        } else if trap == Some(Trap::StackOverflow) {
            (
                ErrorCode::ResourceLimit,
                "The call was stopped: its stack overflowed.".to_owned(),
            )
        } else if !ctx.denials.is_empty() {
            details.insert("denied".into(), json!(ctx.denials));
            (
                ErrorCode::PermissionDenied,
                format!(
                    "The tool failed after being denied: {}.",
                    ctx.denials.join("; ")
                ),
            )
        } else if is_pool_exhausted(error) {
            (
                ErrorCode::ResourceLimit,
                "No instance slot is free; try again shortly.".to_owned(),
            )
        } else {
            let cause = match trap {
                Some(trap) => trap.to_string(),
                None => format!("{error:#}"),
            };
            (ErrorCode::ToolError, format!("The tool crashed: {cause}."))
        };
    tracing::warn!(plugin = ctx.plugin, tool = ctx.tool, code = %code, error.type = code.as_str(), error = %format!("{error:#}"), "call failed in the sandbox");
    ToolResult::failure_with(code, message, Value::Object(details))
}

fn is_pool_exhausted(error: &wasmtime::Error) -> bool {
    let text = format!("{error:#}");
    text.contains("maximum concurrent") || text.contains("pooling allocator")
}

/// A tool-level failure the host found (not a trap), with the plugin and tool named.
pub fn host_failure(
    code: ErrorCode,
    message: String,
    plugin: &str,
    tool: &str,
    extra: Value,
) -> ToolResult {
    let mut details = Map::new();
    details.insert("plugin".into(), json!(plugin));
    details.insert("tool".into(), json!(tool));
    if let Value::Object(extra) = extra {
        details.extend(extra);
    }
    ToolResult::failure_with(code, message, Value::Object(details))
}
