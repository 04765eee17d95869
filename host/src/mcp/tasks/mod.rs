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
//! 2025-11-25's tasks (`tasks/*`, where the caller asks for a task) share the
//! rows, the running and the replay: [`handshake`] serves their methods, and
//! [`edge`] carries past rmcp what its types do not have of them.
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
use rmcp::model::{ClientCapabilities, CreateTaskResult, JsonObject, Task, TaskStatus};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio::sync::{OwnedSemaphorePermit, Semaphore, oneshot};

use super::asking::{Asking, Subject};
use super::drain::CallGuard;
use super::handler::Session;
use crate::catalog::Caller;
use crate::render::{OutputMode, Revision};
use crate::runtime::Called;
use crate::store::{StoreError, TaskRow};

pub mod edge;
mod handshake;
mod requests;

use requests::pending_questions;

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
    /// The revision the task's caller speaks: 2025-11-25 for a task the
    /// caller asked for (`tasks/*`), 2026-07-28 for the extension's (rows
    /// written before this was kept have none).
    #[serde(default)]
    revision: Option<String>,
}

impl Resume {
    /// What a new task's row holds to go on with the call `start`.
    fn of(start: &Start) -> Resume {
        Resume {
            tool: start.tool.clone(),
            arguments: start.arguments.clone(),
            mode: start.mode.as_str().to_owned(),
            capabilities: start.capabilities.clone(),
            revision: Some(start.revision.as_str().to_owned()),
            ..Resume::default()
        }
    }

    /// The revision the task's result is rendered for.
    fn revision(&self) -> Revision {
        self.revision
            .as_deref()
            .and_then(|revision| revision.parse().ok())
            .unwrap_or(Revision::V2026_07_28)
    }
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
    parse_status(&row.id, &row.status)
}

fn parse_status(id: &str, status: &str) -> Result<TaskStatus, ErrorData> {
    serde_json::from_value(Value::String(status.to_owned()))
        .map_err(|_| ErrorData::internal_error(format!("task {id} has an unknown status"), None))
}

/// Whether a task with `status`, last touched at `updated_ms`, was lost with
/// its replica: `working`, and untouched for [`STALE_AFTER`].
fn is_lost(status: &str, updated_ms: i64) -> bool {
    status == stored(TaskStatus::Working) && now_ms() - updated_ms > STALE_AFTER.as_millis() as i64
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
    task_from(&row.id, &row.status, row.created_ms, row.updated_ms)
}

/// A task as callers are shown it, from its id, stored status and times.
fn task_from(id: &str, status: &str, created_ms: i64, updated_ms: i64) -> Result<Task, ErrorData> {
    Ok(Task::new(
        id.to_owned(),
        parse_status(id, status)?,
        iso(created_ms),
        iso(updated_ms),
    )
    .with_ttl_ms(TASK_TTL.as_millis() as u64)
    .with_poll_interval_ms(POLL_INTERVAL.as_millis() as u64))
}

/// Whether a call of a tool with `support` runs as a task for this request:
/// on 2025-11-25 when the call asked to (`asked`, its `task` member); on
/// 2026-07-28 when the caller declared the extension (in the request's
/// `_meta` or its session), the server deciding later whether it becomes one.
///
/// # Errors
///
/// - 2025-11-25: `-32601` for a task asked of a tool that does not run as
///   one, or a tool that runs only as a task called without asking.
/// - Other revisions: `-32021` for a tool that runs only as a task, called by
///   a caller that did not declare the extension.
pub(super) fn runs_as_task(
    support: crate::runtime::TaskSupport,
    revision: Revision,
    capabilities: Option<&ClientCapabilities>,
    asked: bool,
) -> Result<bool, ErrorData> {
    if edge::applies_to(revision) {
        return handshake::admits(support, asked);
    }
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
    /// The revision the caller speaks, which the result is rendered for.
    pub revision: Revision,
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
            let resume = Resume::of(&start);
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
        let handshake = edge::applies_to(resume.revision());
        match called {
            Called::Finished(result) => self.rendered(result, resume, start, handshake).await,
            // A 2025-11-25 task answers what its call would have answered: a
            // fault too is a coded error result.
            Called::Failed(result) if handshake => {
                self.rendered(result, resume, start, handshake).await
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

    /// A task's result, rendered for its caller's revision: `completed`,
    /// or for a 2025-11-25 task whose result is an error, `failed` (as that
    /// revision has it).
    async fn rendered(
        &self,
        result: crate::result::ToolResult,
        resume: Resume,
        start: &Start,
        handshake: bool,
    ) -> (TaskStatus, Option<String>, Resume) {
        let mode = resume.mode.parse().unwrap_or(self.server.default_mode);
        let principal = start.caller.principal.as_deref();
        let catalog = self.server.catalog();
        let schema = catalog
            .tool(&resume.tool)
            .and_then(|tool| tool.descriptor.output_schema.as_ref());
        // Typed: a task's result is stored and wrapped, never sent as it is.
        let target = (resume.revision(), mode, None);
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
            Ok(result) if handshake && result.is_error == Some(true) => {
                (TaskStatus::Failed, Some(text(&result)), resume)
            }
            Ok(result) => (TaskStatus::Completed, Some(text(&result)), resume),
            Err(error) => (TaskStatus::Failed, Some(text(&error)), resume),
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

    /// One of the slots of the running tasks, once there is one: while every
    /// slot is busy the task is queued, not lost. `None` when the task was
    /// cancelled meanwhile.
    async fn slot_for(&self, row: &TaskRow) -> Option<OwnedSemaphorePermit> {
        let acquire = self.server.running.slots.clone().acquire_owned();
        match self.while_working(row, acquire).await {
            Some(Ok(slot)) => Some(slot),
            Some(Err(_)) => None,
            None => {
                tracing::info!(task = %row.id, "the task was cancelled while it waited for a slot");
                None
            }
        }
    }

    /// Runs a task's tool again in the background, replaying its answers.
    fn resume(&self, row: TaskRow, resume: Resume, caller: Caller, request_id: String) {
        let session = self.clone();
        tokio::spawn(async move {
            let Some(slot) = session.slot_for(&row).await else {
                return;
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
                revision: resume.revision(),
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
