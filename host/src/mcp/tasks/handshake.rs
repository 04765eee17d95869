//! 2025-11-25's tasks (`tasks/*` before the extension): the caller asks for a
//! task in its `tools/call` (`task`), gets the task at once, and then polls
//! `tasks/get`, waits on `tasks/result`, or ends the task with
//! `tasks/cancel`. The [`super::edge`] hands these requests here.
//!
//! A task is the same row an extension task is ([`super`]), so any replica
//! sharing the store answers for it, and cancelling it ends its instance. Its
//! result is rendered for 2025-11-25, and a task whose result is an error
//! (the tool's own, or the coded error of a fault) has `failed`, as that
//! revision says; `tasks/result` returns that result either way.
//!
//! A tool that asks moves its task to `input_required`. Its questions go to
//! the client on the `tasks/result` request that waits on the task, each
//! marked with the task (`io.modelcontextprotocol/related-task`), and the
//! answers run the tool again from the start in a fresh instance, replaying
//! them, as the extension's `tasks/update` does.
//!
//! `tasks/list` pages through the caller's tasks; it is offered only to a
//! caller the server tells from others ([`super::edge::lists_tasks`]).

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CreateTaskResult, CustomRequest, CustomResult,
    GetMeta as _, InputRequest, InputResponses, ServerRequest, Task, TaskStatus,
};
use rmcp::service::{OriginatingRequestId, RequestContext};
use rmcp::{ErrorData, RoleServer};
use serde::Deserialize;
use serde_json::Value;

use super::edge::TaskAsked;
use super::{
    CANCEL_POLL, Called, Resume, Start, is_lost, new_row, now_ms, pending_questions, status_of,
    store_failed, stored, task_from, task_of,
};
use crate::catalog::Caller;
use crate::mcp::handler::Session;
use crate::mcp::tools_call::unavailable;
use crate::render::task as wire;
use crate::runtime::TaskSupport;
use crate::store::TaskSummary;

/// A tool's `execution.taskSupport` on 2025-11-25; `None` for the default,
/// `forbidden`.
pub(super) fn task_support(support: TaskSupport) -> Option<&'static str> {
    match support {
        TaskSupport::Forbidden => None,
        TaskSupport::Optional => Some("optional"),
        TaskSupport::Required => Some("required"),
    }
}

/// Whether a 2025-11-25 call of a tool with `support` runs as a task: when it
/// `asked` to.
///
/// # Errors
///
/// `-32601`, as 2025-11-25 says, for a task asked of a tool that does not run
/// as one, and for a tool that runs only as a task called without asking.
pub(super) fn admits(support: TaskSupport, asked: bool) -> Result<bool, ErrorData> {
    let refused = |why: &str| {
        Err(ErrorData::new(
            rmcp::model::ErrorCode::METHOD_NOT_FOUND,
            format!("Method not found: {why}"),
            None,
        ))
    };
    match (support, asked) {
        (TaskSupport::Forbidden, true) => {
            refused("this tool does not run as a task; call it without `task`")
        }
        (TaskSupport::Required, false) => {
            refused("this tool runs only as a task; call it with `task`")
        }
        (_, asked) => Ok(asked),
    }
}

/// The params of `tasks/get`, `tasks/result` and `tasks/cancel`.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct TaskRef {
    task_id: String,
}

fn task_ref(request: &CustomRequest) -> Result<String, ErrorData> {
    let params = request.params.clone().unwrap_or(Value::Null);
    serde_json::from_value::<TaskRef>(params)
        .map(|params| params.task_id)
        .map_err(|e| ErrorData::invalid_params(format!("{}: {e}", request.method), None))
}

impl Session {
    /// A 2025-11-25 task request the edge handed on as a custom one: its
    /// answer, or `None` for a request that is not one.
    pub(in crate::mcp) async fn handshake_task_request(
        &self,
        request: &CustomRequest,
        context: RequestContext<RoleServer>,
    ) -> Option<Result<CustomResult, ErrorData>> {
        let method = request.method.as_str();
        if method == "tools/call" {
            // rmcp moves a request's extensions into its context.
            let asked = *context.extensions.get::<TaskAsked>()?;
            let answer = self.call_as_task(request, context, asked).await;
            return Some(answer.map(CustomResult));
        }
        if method == "tasks/list" {
            return Some(
                self.handshake_list(request, &context)
                    .await
                    .map(CustomResult),
            );
        }
        if !matches!(method, "tasks/get" | "tasks/result" | "tasks/cancel") {
            return None;
        }
        let task = match (task_ref(request), self.caller(&context)) {
            (Ok(id), Ok(caller)) => (id, caller),
            (Err(error), _) | (_, Err(error)) => return Some(Err(error)),
        };
        let answer = match method {
            "tasks/get" => self.handshake_get(&task).await,
            "tasks/result" => self.handshake_result(&task, &context).await,
            _ => self.handshake_cancel(&task).await,
        };
        Some(answer.map(CustomResult))
    }

    /// A task-augmented `tools/call`: the task, created at once.
    async fn call_as_task(
        &self,
        request: &CustomRequest,
        context: RequestContext<RoleServer>,
        asked: TaskAsked,
    ) -> Result<Value, ErrorData> {
        let params = request.params.clone().unwrap_or(Value::Null);
        let params: CallToolRequestParams = serde_json::from_value(params)
            .map_err(|e| ErrorData::invalid_params(format!("tools/call: {e}"), None))?;
        match self.call(params, context, Some(asked)).await? {
            CallToolResponse::Task(created) => Ok(wire::created(&created.task)),
            _ => Err(ErrorData::internal_error(
                "a call asked to run as a task did not become one",
                None,
            )),
        }
    }

    /// Starts a 2025-11-25 task: its row is written, and `call` runs in the
    /// background in one of the running tasks' slots.
    ///
    /// # Errors
    ///
    /// `-32000` once a drain has started, or while every slot is taken (the
    /// caller asked for a task, so it is not kept waiting as an extension
    /// caller is); an internal error when the task could not be stored.
    pub(in crate::mcp) async fn task_now(
        &self,
        start: Start,
        call: impl Future<Output = Called> + Send + 'static,
    ) -> Result<CreateTaskResult, ErrorData> {
        let Some(in_flight) = self.server.drain.admit() else {
            return Err(unavailable("the server is shutting down"));
        };
        let Ok(slot) = self.server.running.slots.clone().try_acquire_owned() else {
            let max = self.server.running.max;
            tracing::warn!(error.type = "tasks_full", max, "host.max_running_tasks tasks are running; a call asking for a task is refused");
            return Err(unavailable(&format!(
                "{max} tasks are running, as many as this server runs at once; try again later"
            )));
        };
        let resume = Resume::of(&start);
        let row = new_row(&start.caller, &resume, now_ms()).map_err(store_failed)?;
        self.server
            .store
            .put_task(&row)
            .await
            .map_err(store_failed)?;
        tracing::info!(task = %row.id, tool = %start.tool, "the call runs as a task");
        let created = CreateTaskResult::new(task_of(&row)?);
        let session = self.clone();
        tokio::spawn(async move {
            session
                .drive(row, resume, start, call, (slot, in_flight))
                .await;
        });
        Ok(created)
    }

    /// `tasks/get`: the task as it is now.
    async fn handshake_get(&self, (id, caller): &(String, Caller)) -> Result<Value, ErrorData> {
        let row = self.current_row(id, caller).await?;
        let mut task = task_of(&row)?;
        task.status_message = status_message(task.status, row.body.as_deref());
        Ok(wire::handshake(&task))
    }

    /// `tasks/list`: a page of the caller's tasks, in the order of their ids,
    /// [`LIST_PAGE`] at a time; the cursor is the last id of the page before.
    ///
    /// # Errors
    ///
    /// `-32601` for a caller the server cannot tell from others (see
    /// [`super::edge::lists_tasks`]); `-32602` for a cursor that is not one.
    async fn handshake_list(
        &self,
        request: &CustomRequest,
        context: &RequestContext<RoleServer>,
    ) -> Result<Value, ErrorData> {
        let caller = self.caller(context)?;
        if !super::edge::lists_tasks(self.transport, &caller) {
            return Err(ErrorData::new(
                rmcp::model::ErrorCode::METHOD_NOT_FOUND,
                "Method not found: tasks/list is offered only to a caller with a principal",
                None,
            ));
        }
        let cursor = request
            .params
            .as_ref()
            .and_then(|params| params.get("cursor"))
            .map(|cursor| match cursor.as_str() {
                Some(id) if is_task_id(id) => Ok(id.to_owned()),
                _ => Err(ErrorData::invalid_params(
                    format!("tasks/list: {cursor} is not a cursor this server gave"),
                    None,
                )),
            })
            .transpose()?;
        let mut page = self
            .server
            .store
            .tasks_of(
                caller.principal.as_deref(),
                cursor.as_deref(),
                LIST_PAGE + 1,
            )
            .await
            .map_err(store_failed)?;
        let more = page.len() > LIST_PAGE;
        page.truncate(LIST_PAGE);
        let tasks = page
            .iter()
            .map(listed_task)
            .collect::<Result<Vec<_>, _>>()?;
        let next = more
            .then(|| page.last().map(|task| task.id.as_str()))
            .flatten();
        Ok(wire::listed(&tasks, next))
    }

    /// `tasks/cancel`: the task, cancelled.
    ///
    /// # Errors
    ///
    /// `-32602` for a task that had already ended.
    async fn handshake_cancel(&self, (id, caller): &(String, Caller)) -> Result<Value, ErrorData> {
        let (row, cancelled) = self.cancel(id, caller).await?;
        if !cancelled {
            return Err(ErrorData::invalid_params(
                format!(
                    "task {id} has already ended ({}); only a task that has not can be cancelled",
                    row.status
                ),
                Some(serde_json::json!({ "taskId": id })),
            ));
        }
        Ok(wire::handshake(&task_of(&row)?))
    }

    /// `tasks/result`: once the task has ended, what its call answered (tied
    /// to the task in its `_meta`), or the error it ended with. Until then
    /// it waits, and puts the questions of a task that asks to the client.
    async fn handshake_result(
        &self,
        (id, caller): &(String, Caller),
        context: &RequestContext<RoleServer>,
    ) -> Result<Value, ErrorData> {
        loop {
            let row = self.current_row(id, caller).await?;
            match status_of(&row)? {
                TaskStatus::Completed | TaskStatus::Failed => {
                    let held: Value = row
                        .body
                        .as_deref()
                        .and_then(|body| serde_json::from_str(body).ok())
                        .ok_or_else(|| {
                            ErrorData::internal_error(format!("task {id} holds no result"), None)
                        })?;
                    if wire::is_rpc_error(&held) {
                        return Err(serde_json::from_value(held).unwrap_or_else(|_| {
                            ErrorData::internal_error(format!("task {id} failed"), None)
                        }));
                    }
                    return Ok(wire::with_related(held, id));
                }
                TaskStatus::Cancelled => {
                    return Err(ErrorData::invalid_params(
                        format!("task {id} was cancelled; it has no result"),
                        Some(serde_json::json!({ "taskId": id })),
                    ));
                }
                TaskStatus::InputRequired => self.put_questions(&row, caller, context).await?,
                _ => {
                    tokio::select! {
                        () = tokio::time::sleep(CANCEL_POLL) => {}
                        () = context.ct.cancelled() => {
                            return Err(ErrorData::internal_error("the request was cancelled", None));
                        }
                    }
                }
            }
        }
    }

    /// Puts the questions an `input_required` task waits on to the client,
    /// on the request in `context`, and records the answers; with the last
    /// one, the tool runs again.
    ///
    /// # Errors
    ///
    /// An internal error when the client does not answer a question; the task
    /// stays `input_required`, and a later `tasks/result` asks again.
    async fn put_questions(
        &self,
        row: &crate::store::TaskRow,
        caller: &Caller,
        context: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let mut answers = InputResponses::new();
        for (key, question) in pending_questions(row)? {
            let mut request = match question {
                InputRequest::CreateMessage(request) => {
                    ServerRequest::CreateMessageRequest(request)
                }
                InputRequest::Elicitation(request) => ServerRequest::ElicitRequest(request),
                InputRequest::ListRoots(request) => ServerRequest::ListRootsRequest(request),
                _ => {
                    return Err(ErrorData::internal_error(
                        format!("task {} holds a question of an unknown kind", row.id),
                        None,
                    ));
                }
            };
            request
                .get_meta_mut()
                .insert(wire::RELATED_TASK.to_owned(), wire::related(&row.id));
            rmcp::model::GetExtensions::extensions_mut(&mut request)
                .insert(OriginatingRequestId(context.id.clone()));
            let answer = context.peer.send_request(request).await.map_err(|e| {
                ErrorData::internal_error(
                    format!(
                        "the client did not answer question {key} of task {}: {e}",
                        row.id
                    ),
                    None,
                )
            })?;
            answers.insert(key, serde_json::to_value(answer).unwrap_or_default());
        }
        let request_id = context.id.to_string();
        self.answer_task(&row.id, &answers, caller, &request_id)
            .await
    }
}

/// How many tasks one page of `tasks/list` holds.
const LIST_PAGE: usize = 50;

/// Whether `id` is shaped as the ids the store makes (32 hex digits).
fn is_task_id(id: &str) -> bool {
    id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// A listed task as `tasks/list` shows it; a task lost with its replica
/// shows `failed`, as `tasks/get` would make it.
fn listed_task(summary: &TaskSummary) -> Result<Task, ErrorData> {
    let lost = is_lost(&summary.status, summary.updated_ms);
    let status = match lost {
        true => stored(TaskStatus::Failed),
        false => summary.status.clone(),
    };
    task_from(&summary.id, &status, summary.created_ms, summary.updated_ms)
}

/// What 2025-11-25's `statusMessage` says of a task: why it failed, or what
/// the caller is to do next.
fn status_message(status: TaskStatus, body: Option<&str>) -> Option<String> {
    match status {
        TaskStatus::Failed => {
            let held: Value = serde_json::from_str(body?).ok()?;
            Some(match wire::is_rpc_error(&held) {
                true => held.get("message")?.as_str()?.to_owned(),
                false => "the tool answered with an error; tasks/result returns it".to_owned(),
            })
        }
        TaskStatus::InputRequired => {
            Some("the tool has questions; call tasks/result to get them".to_owned())
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_is_asked_only_of_a_tool_that_runs_as_one() {
        let code = |r: Result<bool, ErrorData>| r.unwrap_err().code.0;
        assert_eq!(code(admits(TaskSupport::Forbidden, true)), -32601);
        assert_eq!(code(admits(TaskSupport::Required, false)), -32601);
        assert!(!admits(TaskSupport::Forbidden, false).unwrap());
        assert!(!admits(TaskSupport::Optional, false).unwrap());
        assert!(admits(TaskSupport::Optional, true).unwrap());
        assert!(admits(TaskSupport::Required, true).unwrap());
    }

    #[test]
    fn a_failed_task_says_why() {
        let error = r#"{"code":-32603,"message":"the replica stopped"}"#;
        assert_eq!(
            status_message(TaskStatus::Failed, Some(error)).as_deref(),
            Some("the replica stopped")
        );
        let result = r#"{"content":[],"isError":true}"#;
        assert!(
            status_message(TaskStatus::Failed, Some(result))
                .unwrap()
                .contains("tasks/result")
        );
        assert_eq!(status_message(TaskStatus::Working, None), None);
    }
}
