//! Tasks: the 2026-07-28 `io.modelcontextprotocol/tasks` extension (SEP-2663)
//! for tools whose plugin says they may run as tasks (the `tasks` export).
//!
//! The server decides. A call of such a tool from a caller that declared the
//! extension starts as any call; when it has neither finished nor stopped to
//! ask within [`TASK_AFTER`], it becomes a task: its row is written to the
//! store ([`crate::store::TaskRow`]), the caller gets the task's id, and the
//! call goes on in the same instance, in the background. A call that finishes
//! or asks sooner is answered as if it were not a task (the "immediate result"
//! the extension allows), so a tool that asks first and works later is asked
//! in the call (`input_required`) and runs as a task once answered.
//!
//! Every replica sharing the store answers for every task:
//! - `tasks/get` reads the row: the status, and the result rendered for
//!   2026-07-28 (`completed`), the error (`failed`: the sandbox ended the call
//!   before the tool answered) or the questions (`input_required`).
//! - `tasks/cancel` marks the row `cancelled`; the replica running the call
//!   sees it within [`CANCEL_POLL`] and drops the call, which ends its
//!   instance.
//! - The replica running a call touches its row every [`HEARTBEAT`]; a
//!   `working` task untouched for [`STALE_AFTER`] was lost with its replica
//!   (killed, or shut down past its drain), and `tasks/get` marks it `failed`.
//!   Nothing runs it again: a tool may have done things it should not do
//!   twice.
//! - `tasks/update` records answers to a task's questions; once every
//!   question has one, the replica that got the last answer runs the tool again
//!   from the start in a fresh instance, replaying the answers as a stateless
//!   retry would ([`super::input::Replay`], the row holding the round's
//!   `requestState`).
//!
//! Writes are compare-and-set on the row's version, so a result never
//! overwrites a cancellation that came first. Background calls are bounded by
//! `host.max_running_tasks` per replica ([`MAX_RUNNING`] by default): a call
//! that would become a task beyond it keeps its caller waiting instead.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use rmcp::ErrorData;
use rmcp::model::{
    ClientCapabilities, CreateTaskResult, DetailedTask, GetTaskResult, InputRequests,
    InputResponses, JsonObject, Task, TaskPayload, TaskStatus,
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};

use super::asking::{Asking, Subject};
use super::drain::CallGuard;
use super::handler::Session;
use crate::catalog::Caller;
use crate::render::{OutputMode, Revision};
use crate::runtime::Called;
use crate::store::{StoreError, TaskRow};

/// How long a call of a task-supporting tool may take before it becomes a
/// task.
pub const TASK_AFTER: Duration = Duration::from_millis(500);

/// How long a task stays readable after it was created.
pub const TASK_TTL: Duration = Duration::from_secs(60 * 60);

/// How often a caller is told to poll.
pub const POLL_INTERVAL: Duration = Duration::from_millis(500);

/// How often the replica running a task looks for its cancellation.
pub const CANCEL_POLL: Duration = Duration::from_millis(250);

/// How often the replica running a task says so, by touching its row.
pub const HEARTBEAT: Duration = Duration::from_secs(2);

/// How long a `working` task may go untouched before it counts as lost: the
/// replica running it stopped (it died, or shut down past its drain).
pub const STALE_AFTER: Duration = Duration::from_secs(10);

/// How many tasks one replica runs at once, unless `host.max_running_tasks`
/// says otherwise.
pub const MAX_RUNNING: usize = crate::config::HostSettings::DEFAULT_MAX_RUNNING_TASKS;

/// The tasks a replica runs in the background.
pub struct Running {
    slots: Arc<Semaphore>,
    max: usize,
}

impl Running {
    /// Room for `max` tasks at once.
    pub fn new(max: usize) -> Running {
        Running {
            slots: Arc::new(Semaphore::new(max)),
            max,
        }
    }
}

/// What a task's row holds besides its status and body: what a replica needs
/// to go on with the call.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
struct Resume {
    tool: String,
    #[serde(default)]
    arguments: Option<JsonObject>,
    mode: String,
    /// What the creating request declared, for the questions of later rounds.
    #[serde(default)]
    capabilities: Option<ClientCapabilities>,
    /// The `requestState` of the round of questions the task waits on.
    #[serde(default)]
    state: Option<String>,
    /// The keys of that round's questions still unanswered.
    #[serde(default)]
    pending: Vec<String>,
    /// The answers sent so far in this round, by key.
    #[serde(default)]
    responses: BTreeMap<String, Value>,
}

/// How a task-supporting call went within [`TASK_AFTER`].
// As for `Called`: the large variant is the common one.
#[allow(clippy::large_enum_variant)]
pub(super) enum Early {
    /// It ended (finished, failed or asked): answered as any call.
    Done(Called),
    /// It became a task, which is in the store.
    Task(Box<CreateTaskResult>),
}

/// A task's status as the rows hold it (the extension's own words).
fn stored(status: TaskStatus) -> String {
    match serde_json::to_value(status) {
        Ok(Value::String(text)) => text,
        _ => unreachable!("a task status serializes to a string"),
    }
}

fn status_of(row: &TaskRow) -> Result<TaskStatus, ErrorData> {
    serde_json::from_value(Value::String(row.status.clone())).map_err(|_| {
        ErrorData::internal_error(format!("task {} has an unknown status", row.id), None)
    })
}

fn store_failed(error: StoreError) -> ErrorData {
    tracing::error!(error.type = "store_failed", "{error}");
    ErrorData::internal_error("the task store failed; try again", None)
}

fn now_ms() -> i64 {
    jiff::Timestamp::now().as_millisecond()
}

fn iso(ms: i64) -> String {
    jiff::Timestamp::from_millisecond(ms)
        .map(|t| t.to_string())
        .unwrap_or_default()
}

/// The task as the extension shows it, without what it holds.
fn task_of(row: &TaskRow) -> Result<Task, ErrorData> {
    Ok(Task::new(
        row.id.clone(),
        status_of(row)?,
        iso(row.created_ms),
        iso(row.updated_ms),
    )
    .with_ttl_ms(TASK_TTL.as_millis() as u64)
    .with_poll_interval_ms(POLL_INTERVAL.as_millis() as u64))
}

/// Whether a call of a tool with `support` runs as a task for this request:
/// only for a 2026-07-28 caller that declared the extension (in the request's
/// `_meta` or its session).
///
/// # Errors
///
/// `-32021` for a tool that runs only as a task, called by a caller that did
/// not declare the extension.
pub(super) fn runs_as_task(
    support: crate::runtime::TaskSupport,
    revision: Revision,
    capabilities: Option<&ClientCapabilities>,
) -> Result<bool, ErrorData> {
    let declared = revision.is_stateless() && capabilities.is_some_and(|c| c.supports_tasks());
    if support == crate::runtime::TaskSupport::Required && !declared {
        return Err(ErrorData::missing_required_client_capability(
            ClientCapabilities::builder().enable_tasks().build(),
        ));
    }
    Ok(declared && support.allows_tasks())
}

/// What a call that may become a task needs to go on without its request.
pub(super) struct Start {
    pub caller: Caller,
    pub tool: String,
    pub arguments: Option<JsonObject>,
    pub mode: OutputMode,
    pub capabilities: Option<ClientCapabilities>,
    pub request_id: String,
    pub asking: Asking,
}

impl Session {
    /// Runs a call that may become a task (`call` is the call itself, its
    /// questions going to `start.asking`). The request waits for it up to
    /// [`TASK_AFTER`], or until `gone` (the caller went away, which ends it).
    ///
    /// # Errors
    ///
    /// An internal error when the task could not be stored.
    pub(super) async fn call_or_task(
        &self,
        start: Start,
        call: impl Future<Output = Called> + Send + 'static,
        gone: tokio_util::sync::CancellationToken,
    ) -> Result<Early, ErrorData> {
        let (early, answer) = oneshot::channel();
        let session = self.clone();
        tokio::spawn(async move {
            tokio::pin!(call);
            tokio::select! {
                called = &mut call => {
                    let _ = early.send(Ok(Early::Done(called)));
                    return;
                }
                () = tokio::time::sleep(TASK_AFTER) => {}
                () = gone.cancelled() => return,
            }
            // No room for another task, or a drain has begun (it waits for
            // tasks as for calls, and no call becomes one once it started):
            // the caller goes on waiting, unless it went away.
            let room = session.server.running.slots.clone().try_acquire_owned();
            let in_flight = session.server.drain.admit();
            let (Ok(slot), Some(in_flight)) = (room, in_flight) else {
                if session.server.drain.started() {
                    tracing::info!("shutting down: this call keeps its caller waiting");
                } else {
                    let max = session.server.running.max;
                    tracing::warn!(error.type = "tasks_full", max, "host.max_running_tasks tasks are running; this call keeps its caller waiting");
                }
                tokio::select! {
                    called = call => { let _ = early.send(Ok(Early::Done(called))); }
                    () = gone.cancelled() => {}
                }
                return;
            };
            let slot = (slot, in_flight);
            let created = now_ms();
            let resume = Resume {
                tool: start.tool.clone(),
                arguments: start.arguments.clone(),
                mode: start.mode.as_str().to_owned(),
                capabilities: start.capabilities.clone(),
                ..Resume::default()
            };
            let row = match new_row(&start.caller, &resume, created) {
                Ok(row) => row,
                Err(error) => {
                    let _ = early.send(Err(store_failed(error)));
                    return;
                }
            };
            if let Err(error) = session.server.store.put_task(&row).await {
                let _ = early.send(Err(store_failed(error)));
                return;
            }
            tracing::info!(task = %row.id, tool = %start.tool, "the call became a task");
            let created =
                task_of(&row).map(|task| Early::Task(Box::new(CreateTaskResult::new(task))));
            let _ = early.send(created);
            session.drive(row, resume, start, call, slot).await;
        });
        answer
            .await
            .unwrap_or_else(|_| Err(ErrorData::internal_error("the request was cancelled", None)))
    }

    /// Runs a task's call to its end, unless the task is cancelled first,
    /// and writes how it ended.
    async fn drive(
        &self,
        row: TaskRow,
        resume: Resume,
        start: Start,
        call: impl Future<Output = Called>,
        _slot: (OwnedSemaphorePermit, CallGuard),
    ) {
        let Some(called) = self.while_working(&row, call).await else {
            tracing::info!(task = %row.id, "the task was cancelled; its instance ends");
            return;
        };
        let (status, body, resume) = self.outcome(called, resume, &start).await;
        if let Err(error) = self.settle(&row, status, body, &resume).await {
            tracing::error!(task = %row.id, error.type = "store_failed", "the task's outcome was not written: {error}");
        }
    }

    /// Whether `row`'s task is still `working` (not cancelled); a store that
    /// cannot say counts as yes. Touches the row when [`HEARTBEAT`] has passed
    /// since it was last touched: a task no replica touches goes stale.
    async fn still_working(&self, row: &TaskRow) -> bool {
        let store = &self.server.store;
        match store.task(&row.id, row.principal.as_deref()).await {
            Ok(Some(now)) if now.status == stored(TaskStatus::Working) => {
                if now_ms() - now.updated_ms >= HEARTBEAT.as_millis() as i64 {
                    let touched = TaskRow {
                        updated_ms: now_ms(),
                        ..now
                    };
                    if let Err(error) = store.update_task(&touched).await {
                        tracing::warn!(task = %row.id, error.type = "store_failed", "{error}");
                    }
                }
                true
            }
            Ok(_) => false,
            Err(error) => {
                tracing::warn!(task = %row.id, error.type = "store_failed", "{error}");
                true
            }
        }
    }

    /// What `work` comes to, looking at `row` every [`CANCEL_POLL`] meanwhile
    /// ([`Session::still_working`], which keeps it fresh); `None`, with `work`
    /// dropped, once the task is no longer `working`.
    async fn while_working<T>(&self, row: &TaskRow, work: impl Future<Output = T>) -> Option<T> {
        tokio::pin!(work);
        loop {
            tokio::select! {
                done = &mut work => return Some(done),
                () = tokio::time::sleep(CANCEL_POLL) => {
                    if !self.still_working(row).await {
                        return None;
                    }
                }
            }
        }
    }

    /// What a task's call ended with, as its row is to hold it.
    async fn outcome(
        &self,
        called: Called,
        mut resume: Resume,
        start: &Start,
    ) -> (TaskStatus, Option<String>, Resume) {
        match called {
            Called::Finished(result) => {
                let mode = resume.mode.parse().unwrap_or(self.server.default_mode);
                let principal = start.caller.principal.as_deref();
                let catalog = self.server.catalog();
                let schema = catalog
                    .tool(&resume.tool)
                    .and_then(|tool| tool.descriptor.output_schema.as_ref());
                let target = (Revision::V2026_07_28, mode);
                let rendered = self
                    .render_call(
                        &resume.tool,
                        schema,
                        result,
                        target,
                        &start.request_id,
                        principal,
                    )
                    .await;
                match rendered {
                    Ok(result) => (TaskStatus::Completed, Some(text(&result)), resume),
                    Err(error) => (TaskStatus::Failed, Some(text(&error)), resume),
                }
            }
            Called::Failed(result) => (
                TaskStatus::Failed,
                Some(crate::render::task::failure(&result).to_string()),
                resume,
            ),
            Called::Asking(questions) => {
                let subject = Subject {
                    principal: start.caller.principal.as_deref(),
                    method: "tools/call",
                    name: &resume.tool,
                    arguments: resume.arguments.as_ref(),
                };
                match self.input_required(&start.asking, questions, &subject) {
                    Ok(required) => {
                        let requests = required.input_requests.unwrap_or_default();
                        resume.pending = requests.keys().cloned().collect();
                        resume.state = required.request_state;
                        resume.responses.clear();
                        (TaskStatus::InputRequired, Some(text(&requests)), resume)
                    }
                    Err(error) => (TaskStatus::Failed, Some(text(&error)), resume),
                }
            }
        }
    }

    /// Writes a task's new status, unless it was cancelled meanwhile.
    async fn settle(
        &self,
        row: &TaskRow,
        status: TaskStatus,
        body: Option<String>,
        resume: &Resume,
    ) -> Result<(), StoreError> {
        let store = &self.server.store;
        let call = serde_json::to_string(resume).map_err(|e| StoreError(e.to_string()))?;
        loop {
            let Some(current) = store.task(&row.id, row.principal.as_deref()).await? else {
                return Ok(());
            };
            if current.status != stored(TaskStatus::Working) {
                return Ok(());
            }
            let next = TaskRow {
                status: stored(status),
                body: body.clone(),
                call: call.clone(),
                updated_ms: now_ms(),
                ..current
            };
            if store.update_task(&next).await? {
                return Ok(());
            }
        }
    }

    /// Marks a task whose tool cannot run again `failed` with `error`.
    async fn fail(&self, row: &TaskRow, resume: &Resume, error: &ErrorData) {
        let body = Some(text(error));
        if let Err(store) = self.settle(row, TaskStatus::Failed, body, resume).await {
            tracing::error!(task = %row.id, error.type = "store_failed", "the task's failure was not written: {store}");
        }
    }

    /// The task `id` of `caller`.
    ///
    /// # Errors
    ///
    /// `-32602` for a task that does not exist, expired or is another
    /// caller's (alike).
    async fn task_row(&self, id: &str, caller: &Caller) -> Result<TaskRow, ErrorData> {
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
    pub(super) async fn task_status(
        &self,
        id: &str,
        caller: &Caller,
    ) -> Result<GetTaskResult, ErrorData> {
        let mut row = self.task_row(id, caller).await?;
        while row.status == stored(TaskStatus::Working)
            && now_ms() - row.updated_ms > STALE_AFTER.as_millis() as i64
        {
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
            TaskStatus::InputRequired => {
                let resume: Resume = serde_json::from_str(&row.call).unwrap_or_default();
                let mut input_requests: InputRequests = serde_json::from_value(body("questions")?)
                    .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
                input_requests.retain(|key, _| resume.pending.contains(key));
                TaskPayload::InputRequired { input_requests }
            }
            TaskStatus::Cancelled => TaskPayload::Cancelled,
            _ => TaskPayload::Working,
        };
        Ok(GetTaskResult::new(DetailedTask::new(task, payload)))
    }

    /// `tasks/cancel`: marks a task that has not ended `cancelled`; the
    /// replica running it drops the call. A task that ended stays as it was.
    pub(super) async fn cancel(&self, id: &str, caller: &Caller) -> Result<(), ErrorData> {
        loop {
            let row = self.task_row(id, caller).await?;
            if status_of(&row)?.is_terminal() {
                return Ok(());
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
                return Ok(());
            }
        }
    }

    /// `tasks/update`: records the answers to a task's pending questions
    /// (answers under other keys are ignored); with the last one, runs the
    /// tool again on this replica, replaying them.
    pub(super) async fn answer_task(
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

    /// Runs a task's tool again in the background, replaying its answers.
    fn resume(&self, row: TaskRow, resume: Resume, caller: Caller, request_id: String) {
        let session = self.clone();
        tokio::spawn(async move {
            // While every slot is busy the task is queued, not lost.
            let acquire = session.server.running.slots.clone().acquire_owned();
            let slot = match session.while_working(&row, acquire).await {
                Some(Ok(slot)) => slot,
                Some(Err(_)) => return,
                None => {
                    tracing::info!(task = %row.id, "the task was cancelled while it waited for a slot");
                    return;
                }
            };
            let Some(in_flight) = session.server.drain.admit() else {
                tracing::info!(task = %row.id, "shutting down: the answered task stays as it is");
                return;
            };
            let slot = (slot, in_flight);
            let subject = Subject {
                principal: caller.principal.as_deref(),
                method: "tools/call",
                name: &resume.tool,
                arguments: resume.arguments.as_ref(),
            };
            let asking = match session.replaying(
                &subject,
                resume.state.as_deref(),
                Some(&resume.responses),
                resume.capabilities.clone(),
            ) {
                Ok(asking) => asking,
                Err(error) => return session.fail(&row, &resume, &error).await,
            };
            let catalog = session.server.catalog();
            let Some(tool) = catalog
                .tool(&resume.tool)
                .filter(|tool| tool.visible_to(&caller))
            else {
                let error =
                    ErrorData::invalid_params(format!("Unknown tool: {}", resume.tool), None);
                return session.fail(&row, &resume, &error).await;
            };
            let arguments = resume.arguments.clone().map(Value::Object);
            let io = asking.io(None);
            let call = catalog.call_with(
                crate::catalog::new_call_id(),
                tool,
                arguments.as_ref(),
                &caller,
                &request_id,
                io,
            );
            let start = Start {
                caller: caller.clone(),
                tool: resume.tool.clone(),
                arguments: resume.arguments.clone(),
                mode: resume.mode.parse().unwrap_or(session.server.default_mode),
                capabilities: resume.capabilities.clone(),
                request_id: request_id.clone(),
                asking,
            };
            session.drive(row, resume, start, call, slot).await;
        });
    }
}

/// A new task's row: `working`, created now.
fn new_row(caller: &Caller, resume: &Resume, created: i64) -> Result<TaskRow, StoreError> {
    Ok(TaskRow {
        id: crate::store::new_task_id()?,
        principal: caller.principal.clone(),
        status: stored(TaskStatus::Working),
        body: None,
        call: serde_json::to_string(resume).map_err(|e| StoreError(e.to_string()))?,
        created_ms: created,
        updated_ms: created,
        expires_at: created / 1000 + TASK_TTL.as_secs() as i64,
        version: 0,
    })
}

/// The JSON text a row holds of `value`.
fn text<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}
