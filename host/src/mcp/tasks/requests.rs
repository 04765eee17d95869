//! What callers ask of a task that exists, in either era: read it (a task
//! whose replica stopped is marked `failed` here), cancel it, answer its
//! questions. The extension's `tasks/get`, `tasks/cancel` and `tasks/update`
//! and 2025-11-25's `tasks/get`, `tasks/result` and `tasks/cancel` are built
//! on these.

use rmcp::ErrorData;
use rmcp::model::{
    DetailedTask, GetTaskResult, InputRequests, InputResponses, JsonObject, TaskPayload, TaskStatus,
};
use serde_json::{Value, json};

use super::{Resume, is_lost, now_ms, status_of, store_failed, stored, task_of, text};
use crate::catalog::Caller;
use crate::mcp::handler::Session;
use crate::store::TaskRow;

impl Session {
    /// The task `id` of `caller`.
    ///
    /// # Errors
    ///
    /// `-32602` for a task that does not exist, expired or is another
    /// caller's (alike).
    pub(super) async fn task_row(&self, id: &str, caller: &Caller) -> Result<TaskRow, ErrorData> {
        self.server
            .store
            .task(id, caller.principal.as_deref())
            .await
            .map_err(store_failed)?
            .ok_or_else(|| {
                ErrorData::invalid_params(format!("no task {id:?}"), Some(json!({ "taskId": id })))
            })
    }

    /// `tasks/get`: the task as its row holds it now. A `working` task no
    /// replica touched for [`STALE_AFTER`] is lost: it is marked `failed`.
    pub(in crate::mcp) async fn task_status(
        &self,
        id: &str,
        caller: &Caller,
    ) -> Result<GetTaskResult, ErrorData> {
        let row = self.current_row(id, caller).await?;
        let task = task_of(&row)?;
        let body = |what: &str| -> Result<Value, ErrorData> {
            row.body
                .as_deref()
                .and_then(|body| serde_json::from_str(body).ok())
                .ok_or_else(|| {
                    ErrorData::internal_error(format!("task {id} holds no readable {what}"), None)
                })
        };
        let object = |value: Value| match value {
            Value::Object(object) => object,
            _ => JsonObject::new(),
        };
        let payload = match task.status {
            TaskStatus::Completed => TaskPayload::Completed {
                result: object(body("result")?),
            },
            TaskStatus::Failed => TaskPayload::Failed {
                error: object(body("error")?),
            },
            TaskStatus::InputRequired => TaskPayload::InputRequired {
                input_requests: pending_questions(&row)?,
            },
            TaskStatus::Cancelled => TaskPayload::Cancelled,
            _ => TaskPayload::Working,
        };
        Ok(GetTaskResult::new(DetailedTask::new(task, payload)))
    }

    /// The row of the task `id` of `caller` as it is now. A `working` task no
    /// replica touched for [`STALE_AFTER`] is lost: it is marked `failed`.
    ///
    /// # Errors
    ///
    /// `-32602` for a task that does not exist, expired or is another
    /// caller's (alike); an internal error when the store fails.
    pub(super) async fn current_row(
        &self,
        id: &str,
        caller: &Caller,
    ) -> Result<TaskRow, ErrorData> {
        let mut row = self.task_row(id, caller).await?;
        while is_lost(&row.status, row.updated_ms) {
            let error = ErrorData::internal_error(
                "the replica running this task stopped before the task ended; call the tool again",
                None,
            );
            let lost = TaskRow {
                status: stored(TaskStatus::Failed),
                body: Some(text(&error)),
                updated_ms: now_ms(),
                ..row.clone()
            };
            if self
                .server
                .store
                .update_task(&lost)
                .await
                .map_err(store_failed)?
            {
                tracing::warn!(task = %id, error.type = "task_lost", "a task's replica stopped running it; the task failed");
                row = TaskRow {
                    version: lost.version + 1,
                    ..lost
                };
            } else {
                row = self.task_row(id, caller).await?;
            }
        }
        Ok(row)
    }

    /// `tasks/cancel`: marks a task that has not ended `cancelled`; the
    /// replica running it drops the call. A task that ended stays as it was:
    /// the answer is the row as it is now, and whether this cancelled it.
    pub(in crate::mcp) async fn cancel(
        &self,
        id: &str,
        caller: &Caller,
    ) -> Result<(TaskRow, bool), ErrorData> {
        loop {
            let row = self.task_row(id, caller).await?;
            if status_of(&row)?.is_terminal() {
                return Ok((row, false));
            }
            let next = TaskRow {
                status: stored(TaskStatus::Cancelled),
                body: None,
                updated_ms: now_ms(),
                ..row
            };
            if self
                .server
                .store
                .update_task(&next)
                .await
                .map_err(store_failed)?
            {
                tracing::info!(task = %id, "task cancelled");
                let cancelled = TaskRow {
                    version: next.version + 1,
                    ..next
                };
                return Ok((cancelled, true));
            }
        }
    }

    /// `tasks/update`: records the answers to a task's pending questions
    /// (answers under other keys are ignored); with the last one, runs the
    /// tool again on this replica, replaying them.
    pub(in crate::mcp) async fn answer_task(
        &self,
        id: &str,
        responses: &InputResponses,
        caller: &Caller,
        request_id: &str,
    ) -> Result<(), ErrorData> {
        loop {
            let row = self.task_row(id, caller).await?;
            if status_of(&row)? != TaskStatus::InputRequired {
                return Ok(());
            }
            let mut resume: Resume = serde_json::from_str(&row.call)
                .map_err(|e| ErrorData::internal_error(format!("task {id}: {e}"), None))?;
            let answered: Vec<(String, Value)> = responses
                .iter()
                .filter(|(key, _)| resume.pending.contains(key))
                .map(|(key, value)| (key.clone(), value.clone()))
                .collect();
            if answered.is_empty() {
                return Ok(());
            }
            for (key, value) in answered {
                resume.pending.retain(|pending| *pending != key);
                resume.responses.insert(key, value);
            }
            let ready = resume.pending.is_empty();
            let status = match ready {
                true => TaskStatus::Working,
                false => TaskStatus::InputRequired,
            };
            let next = TaskRow {
                status: stored(status),
                call: serde_json::to_string(&resume)
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?,
                updated_ms: now_ms(),
                ..row
            };
            if !self
                .server
                .store
                .update_task(&next)
                .await
                .map_err(store_failed)?
            {
                continue;
            }
            if ready {
                let row = TaskRow {
                    version: next.version + 1,
                    ..next
                };
                self.resume(row, resume, caller.clone(), request_id.to_owned());
            }
            return Ok(());
        }
    }
}

/// The questions a task in `input_required` waits on the answers to.
///
/// # Errors
///
/// An internal error for a row whose questions do not read back.
pub(super) fn pending_questions(row: &TaskRow) -> Result<InputRequests, ErrorData> {
    let resume: Resume = serde_json::from_str(&row.call).unwrap_or_default();
    let mut questions: InputRequests = row
        .body
        .as_deref()
        .and_then(|body| serde_json::from_str(body).ok())
        .ok_or_else(|| {
            ErrorData::internal_error(format!("task {} holds no readable questions", row.id), None)
        })?;
    questions.retain(|key, _| resume.pending.contains(key));
    Ok(questions)
}
