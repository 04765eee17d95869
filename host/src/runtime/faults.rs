//! How a call that went wrong in the sandbox becomes a coded result.
//!
//! | what happened | code |
//! |---|---|
//! | the deadline passed (epoch or wall clock), or the fuel ran out | `timeout` |
//! | a budget was hit (`memory_mib`, `max_resources`, ...: named in details as `budget`), the stack overflowed, the pool was full | `resource_limit` |
//! | the guest trapped after the policy denied it a capability (or returned `tool_error` after it: `plugin.rs`) | `permission_denied` |
//! | any other trap or panic, a malformed result | `tool_error` |
//!
//! Every fault result names the plugin and the tool in its details, with the trap
//! and the end of the guest's stderr where there is one (the guest's own words,
//! about its own view of the world). What the host knows beyond that (an error
//! chain that may name host paths, a file or an address of the host) goes to the
//! log only, on a line of the call's span, whose `call_id` the caller's details
//! carry as `callId` (the catalog sets it for the task serving the call:
//! [`with_call_id`]).

use serde_json::{Map, Value, json};
use wasmtime::Trap;

use super::state::BudgetHit;
use crate::result::{ErrorCode, ToolResult};

/// What a caller is told of a failure whose cause is the host's (instantiation,
/// a host import, the sandbox's setup): the chain may name the host's files.
const CAUSE_IN_THE_LOG: &str =
    "The tool failed in the sandbox; the host's log has the cause under this call's callId.";

tokio::task_local! {
    /// The id of the call this task serves, for the details of host failures.
    static CALL_ID: String;
}

/// Runs `call` as the call `id`: every fault and host failure it yields names
/// the id as `callId`, the id on the log lines of its span.
pub async fn with_call_id<F: Future>(id: String, call: F) -> F::Output {
    CALL_ID.scope(id, call).await
}

/// Adds the current call's id to `details`, when a call is being served.
fn name_the_call(details: &mut Map<String, Value>) {
    if let Ok(id) = CALL_ID.try_with(Clone::clone) {
        details.insert("callId".into(), json!(id));
    }
}

/// Counts a call the budget `budget` (a policy key, or `timeout`, `fuel`,
/// `stack`, `instance_pool`: a closed set) refused, in
/// `toolhost_budget_refusals_total`.
pub(super) fn refused(budget: &'static str, plugin: &str) {
    metrics::counter!("toolhost_budget_refusals_total", "budget" => budget, "plugin" => plugin.to_owned()).increment(1);
}

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
    name_the_call(&mut details);
    if let Some(trap) = trap {
        details.insert("trap".into(), json!(trap.to_string()));
    }
    if !ctx.stderr.is_empty() {
        details.insert("stderr".into(), json!(ctx.stderr));
    }

    let (code, message) =
        if error.downcast_ref::<DeadlineExceeded>().is_some() || trap == Some(Trap::Interrupt) {
            refused("timeout", ctx.plugin);
            details.insert("timeoutMs".into(), json!(ctx.timeout_ms));
            (
                ErrorCode::Timeout,
                format!(
                    "The call ran past its deadline of {} ms and was stopped.",
                    ctx.timeout_ms
                ),
            )
        } else if trap == Some(Trap::OutOfFuel) {
            refused("fuel", ctx.plugin);
            (
                ErrorCode::Timeout,
                "The call used up its fuel budget and was stopped.".to_owned(),
            )
        } else if let Some(hit) = ctx.budget {
            refused(hit.key, ctx.plugin);
            details.insert("budget".into(), json!(hit.key));
            details.insert("limit".into(), json!(hit.message));
            (
                ErrorCode::ResourceLimit,
                format!("The call was stopped: {}.", hit.message),
            )
        } else if trap == Some(Trap::StackOverflow) {
            refused("stack", ctx.plugin);
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
            refused("instance_pool", ctx.plugin);
            (
                ErrorCode::ResourceLimit,
                "No instance slot is free; try again shortly.".to_owned(),
            )
        } else {
            let message = match trap {
                Some(trap) => format!("The tool crashed: {trap}."),
                None => CAUSE_IN_THE_LOG.to_owned(),
            };
            (ErrorCode::ToolError, message)
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
    name_the_call(&mut details);
    if let Value::Object(extra) = extra {
        details.extend(extra);
    }
    ToolResult::failure_with(code, message, Value::Object(details))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_error_reaches_the_log_but_not_the_caller() {
        let error = wasmtime::Error::msg("/var/lib/toolhost/secret-dir: No such file or directory")
            .context("preparing the sandbox");
        let result = fault(
            &error,
            FaultContext {
                plugin: "p",
                tool: "t",
                timeout_ms: 1000,
                budget: None,
                denials: &[],
                stderr: String::new(),
            },
        );
        let (_, text) = crate::render::format::encode(&result);
        assert_eq!(result.error().unwrap().code, ErrorCode::ToolError);
        assert!(!text.contains("/var/lib"), "{text}");
        assert!(!text.contains("secret-dir"), "{text}");
        let details = result.error().unwrap().details.as_ref().unwrap();
        assert_eq!(details["plugin"], "p");
        assert_eq!(details["tool"], "t");
        assert_eq!(details.get("callId"), None, "no call is being served");
    }

    #[tokio::test]
    async fn host_failures_of_a_call_name_its_id() {
        let result = with_call_id("00ff00ff00ff00ff".into(), async {
            host_failure(ErrorCode::Timeout, "m".into(), "p", "t", json!({"x": 1}))
        })
        .await;
        let details = result.error().unwrap().details.as_ref().unwrap();
        assert_eq!(details["callId"], "00ff00ff00ff00ff");
        assert_eq!(details["x"], 1);
    }
}
