//! How tasks look on the wire beyond what rmcp writes.
//!
//! - What a task that failed shows its caller (the tasks extension's
//!   `error`): a JSON-RPC error object made of the coded failure the host made
//!   of a call the sandbox ended before the tool answered (a trap, a budget,
//!   the deadline). A failure the tool reported itself is not one of these:
//!   its task completes with the result the mapper renders, `isError` and all.
//! - 2025-11-25's tasks, which rmcp's types do not have: the `Task` object,
//!   the `CreateTaskResult` (`{"task": ..}`), the `tasks` server capability,
//!   and the `io.modelcontextprotocol/related-task` entry of a result's or a
//!   request's `_meta`.

use rmcp::model::Task;
use serde_json::{Map, Value, json};

/// The `_meta` key that ties a message to its task (2025-11-25).
pub const RELATED_TASK: &str = "io.modelcontextprotocol/related-task";

/// A task as 2025-11-25 shows it: `ttl` and `pollInterval` in milliseconds.
pub fn handshake(task: &Task) -> Value {
    let mut out = Map::new();
    out.insert("taskId".into(), json!(task.task_id));
    out.insert("status".into(), json!(task.status));
    if let Some(message) = &task.status_message {
        out.insert("statusMessage".into(), json!(message));
    }
    out.insert("createdAt".into(), json!(task.created_at));
    out.insert("lastUpdatedAt".into(), json!(task.last_updated_at));
    out.insert("ttl".into(), json!(task.ttl_ms));
    if let Some(interval) = task.poll_interval_ms {
        out.insert("pollInterval".into(), json!(interval));
    }
    Value::Object(out)
}

/// 2025-11-25's answer to a call that became a task.
pub fn created(task: &Task) -> Value {
    json!({ "task": handshake(task) })
}

/// The value of [`RELATED_TASK`] for the task `id`.
pub fn related(id: &str) -> Value {
    json!({ "taskId": id })
}

/// `result` (a rendered result, as `tasks/result` returns it) tied to the
/// task `id` in its `_meta`.
pub fn with_related(mut result: Value, id: &str) -> Value {
    if let Value::Object(object) = &mut result {
        let meta = object
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.insert(RELATED_TASK.into(), related(id));
        }
    }
    result
}

/// Whether a rendered result held by a task is a JSON-RPC error rather than a
/// result: a `CallToolResult` always has `content`, an error never.
pub fn is_rpc_error(held: &Value) -> bool {
    held.get("content").is_none() && held.get("code").is_some()
}

/// Declares 2025-11-25's tasks in an `initialize` result: task-augmented
/// `tools/call`, `tasks/cancel`, and `tasks/list` when `list`.
pub fn declare_handshake_tasks(initialize: &mut Value, list: bool) {
    if let Some(capabilities) = initialize
        .get_mut("capabilities")
        .and_then(Value::as_object_mut)
    {
        let mut tasks = json!({ "cancel": {}, "requests": { "tools": { "call": {} } } });
        if list {
            tasks["list"] = json!({});
        }
        capabilities.insert("tasks".into(), tasks);
    }
}

/// A page of 2025-11-25's `tasks/list`, and the cursor of the next one.
pub fn listed(tasks: &[Task], next: Option<&str>) -> Value {
    let mut out = json!({ "tasks": tasks.iter().map(handshake).collect::<Vec<_>>() });
    if let Some(next) = next {
        out["nextCursor"] = json!(next);
    }
    out
}

/// Adds each listed tool's `execution` to a 2025-11-25 `tools/list` result:
/// `support(name)` is its `taskSupport`, `None` for the default
/// (`forbidden`).
pub fn list_execution(list: &mut Value, support: impl Fn(&str) -> Option<&'static str>) {
    let Some(tools) = list.get_mut("tools").and_then(Value::as_array_mut) else {
        return;
    };
    for tool in tools {
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            continue;
        };
        if let Some(support) = support(name) {
            tool["execution"] = json!({ "taskSupport": support });
        }
    }
}

use crate::result::ToolResult;

/// JSON-RPC's code for an internal error: the call could not be carried out.
const INTERNAL_ERROR: i64 = -32603;

/// The `error` of a task whose call ended with `result`: its message, and its
/// code and details under `data`.
pub fn failure(result: &ToolResult) -> Value {
    let Some(error) = result.error() else {
        return json!({ "code": INTERNAL_ERROR, "message": "The call ended without a result." });
    };
    let mut data = Map::new();
    data.insert("code".into(), json!(error.code.as_str()));
    if let Some(details) = &error.details {
        data.insert("details".into(), details.clone());
    }
    json!({ "code": INTERNAL_ERROR, "message": error.message, "data": data })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::result::ErrorCode;
    use rmcp::model::TaskStatus;

    #[test]
    fn a_handshake_task_has_the_2025_11_25_names() {
        let task = Task::new(
            "t1".to_owned(),
            TaskStatus::Working,
            "2026-12-06T01:00:00Z".to_owned(),
            "2026-12-06T01:00:01Z".to_owned(),
        )
        .with_ttl_ms(3_600_000)
        .with_poll_interval_ms(500);
        assert_eq!(
            created(&task),
            json!({ "task": {
                "taskId": "t1",
                "status": "working",
                "createdAt": "2026-12-06T01:00:00Z",
                "lastUpdatedAt": "2026-12-06T01:00:01Z",
                "ttl": 3_600_000,
                "pollInterval": 500
            }})
        );
        let result = with_related(json!({ "content": [] }), "t1");
        assert_eq!(
            result,
            json!({ "content": [], "_meta": { RELATED_TASK: { "taskId": "t1" } } })
        );
        assert!(!is_rpc_error(&result));
        assert!(is_rpc_error(&json!({ "code": -32603, "message": "lost" })));
    }

    #[test]
    fn only_task_tools_gain_an_execution() {
        let mut list = json!({ "tools": [{ "name": "slow" }, { "name": "quick" }] });
        list_execution(&mut list, |name| (name == "slow").then_some("required"));
        assert_eq!(
            list,
            json!({ "tools": [
                { "name": "slow", "execution": { "taskSupport": "required" } },
                { "name": "quick" }
            ]})
        );
        let mut init = json!({ "capabilities": { "tools": {} } });
        declare_handshake_tasks(&mut init, false);
        assert_eq!(
            init["capabilities"]["tasks"],
            json!({ "cancel": {}, "requests": { "tools": { "call": {} } } })
        );
        declare_handshake_tasks(&mut init, true);
        assert_eq!(init["capabilities"]["tasks"]["list"], json!({}));
    }

    #[test]
    fn a_fault_becomes_an_internal_error_with_its_code_and_details() {
        let result = ToolResult::failure_with(
            ErrorCode::Timeout,
            "The call ran past its deadline.",
            json!({ "plugin": "demo" }),
        );
        assert_eq!(
            failure(&result),
            json!({
                "code": -32603,
                "message": "The call ran past its deadline.",
                "data": { "code": "timeout", "details": { "plugin": "demo" } }
            })
        );
    }
}
