//! Tasks (the 2026-07-28 `io.modelcontextprotocol/tasks` extension) across
//! real host processes, with the conformance guest's task fixtures
//! (`slow_compute`, `failing_job`, `protocol_error_job`, `confirm_delete`):
//! a task created on one replica is polled, answered and cancelled on another
//! sharing one PostgreSQL, and reported failed there once its replica died; a crash fails a task where a reported error
//! completes it; a caller that did not declare the extension waits for the
//! result, or is refused for a tool that runs only as a task; one principal
//! never sees another's task; and a replica runs no more tasks at once than
//! its budget, a flood keeping its callers waiting instead, and an answered
//! task queued behind them is not taken for lost.

use crate::common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::host::guest;
use common::mcp_client::{message, modern};
use common::process::Host;
use serde_json::{Value, json};
use toolhost::render::Revision;

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// A configuration serving the conformance guest to two principals in spec
/// mode (a text part is a text block), on `store` (a `[store]` body), with
/// `extra` host keys.
fn config(dir: &Path, name: &str, store: &str, extra: &str) -> PathBuf {
    let text = format!(
        "[host]\ndata_dir = \"{data}\"\noutput_mode = \"spec\"\n{extra}\n\n\
         [store]\n{store}\nsigning_key_file = \"{key}\"\n\n\
         [[token]]\ntoken = \"secret-a\"\nprincipal = \"alice\"\n\
         [[token]]\ntoken = \"secret-b\"\nprincipal = \"bob\"\n\n\
         [[plugin]]\npath = \"{guest}\"\n",
        data = dir.join(name).display(),
        key = dir.join("signing.key").display(),
        guest = guest("conformance").display(),
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// A 2026-07-28 request that declares the tasks extension (or not), as a
/// principal; the JSON-RPC message of the answer.
async fn request(url: &str, bearer: &str, method: &str, params: Value, tasks: bool) -> Value {
    let name = params
        .get("name")
        .or_else(|| params.get("taskId"))
        .and_then(Value::as_str)
        .map(str::to_owned);
    let mut params = params;
    let capabilities = match tasks {
        true => json!({"elicitation": {}, "extensions": {TASKS: {}}}),
        false => json!({"elicitation": {}}),
    };
    params["_meta"] = json!({"io.modelcontextprotocol/clientCapabilities": capabilities});
    let response = modern(method, name.as_deref(), params, Some(bearer), url)
        .timeout(Duration::from_secs(60))
        .send()
        .await
        .unwrap();
    message(response).await
}

async fn call(url: &str, tool: &str, arguments: Value) -> Value {
    let params = json!({"name": tool, "arguments": arguments});
    request(url, "secret-a", "tools/call", params, true).await["result"].clone()
}

async fn get(url: &str, bearer: &str, task: &str) -> Value {
    request(url, bearer, "tasks/get", json!({"taskId": task}), true).await
}

/// Polls `task` on `url` until its status is one of `statuses`.
async fn until(url: &str, task: &str, statuses: &[&str]) -> Value {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let got = get(url, "secret-a", task).await;
        let status = got["result"]["status"]
            .as_str()
            .unwrap_or_default()
            .to_owned();
        if statuses.contains(&status.as_str()) {
            return got["result"].clone();
        }
        assert!(Instant::now() < deadline, "task {task} stayed {got}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// The id of a task a call created.
fn task_id(created: &Value) -> String {
    assert_eq!(created["resultType"], "task", "a task: {created}");
    for field in ["taskId", "status", "createdAt", "lastUpdatedAt", "ttlMs"] {
        assert!(created.get(field).is_some(), "{field} in {created}");
    }
    created["taskId"].as_str().unwrap().to_owned()
}

/// The text of the first content block of an inlined result.
fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_task_survives_a_replica_switch_on_one_postgres() {
    let dir = tempfile::tempdir().unwrap();
    let store = format!(
        "kind = \"postgres\"\nurl = \"{}\"\nca_file = \"{}\"",
        common::postgres::database().await,
        common::postgres::ca_file().await.display()
    );
    // A logs what its tasks do: the test reads that its instance ended.
    let a = Host::start_logging(&config(dir.path(), "replica-a", &store, ""), "info");
    let b = Host::start(&config(dir.path(), "replica-b", &store, ""));
    let schemas = common::McpSchemas::load();

    // Created on A, polled to completion on B: B renders nothing, it reads
    // the result A rendered.
    let created = call(
        &a.url,
        "slow_compute",
        json!({"seconds": 1.5, "label": "switch"}),
    )
    .await;
    let task = task_id(&created);
    let working = get(&b.url, "secret-a", &task).await["result"].clone();
    assert_eq!(working["status"], "working", "{working}");
    assert!(working.get("result").is_none(), "{working}");
    let done = until(&b.url, &task, &["completed", "failed", "cancelled"]).await;
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(text(&done["result"]), "Computed switch in 1.5 s.", "{done}");
    schemas
        .check_call_tool_result(Revision::V2026_07_28, &done["result"])
        .unwrap();
    assert!(done.get("requestState").is_none(), "{done}");

    // Another principal learns nothing of it, on either replica.
    for url in [&a.url, &b.url] {
        let foreign = get(url, "secret-b", &task).await;
        assert_eq!(foreign["error"]["code"], -32602, "{foreign}");
    }

    // Cancelled on B, it ends on A, whose instance goes.
    let created = call(
        &a.url,
        "slow_compute",
        json!({"seconds": 60, "label": "cancel"}),
    )
    .await;
    let task = task_id(&created);
    let ack = request(
        &b.url,
        "secret-a",
        "tasks/cancel",
        json!({"taskId": task}),
        true,
    )
    .await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let line = a.wait_for_log("the running replica ends the task", |line| {
        line.contains("the task was cancelled; its instance ends") && line.contains(&task)
    });
    assert!(line.contains(&task), "{line}");
    assert_eq!(
        until(&a.url, &task, &["cancelled"]).await["status"],
        "cancelled"
    );
    let again = request(
        &a.url,
        "secret-a",
        "tasks/cancel",
        json!({"taskId": task}),
        true,
    )
    .await;
    assert_eq!(
        again["result"],
        json!({"resultType": "complete"}),
        "idempotent: {again}"
    );

    // Asking on A, answered on B, which runs the tool again to its end.
    let created = call(&a.url, "confirm_delete", json!({"filename": "old.txt"})).await;
    let task = task_id(&created);
    let asking = until(&b.url, &task, &["input_required"]).await;
    let keys: Vec<&String> = asking["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .collect();
    assert_eq!(keys.len(), 1, "{asking}");
    assert_eq!(
        asking["inputRequests"][keys[0]]["method"],
        "elicitation/create"
    );
    let answer = json!({keys[0].as_str(): {"action": "accept", "content": {"confirm": true}}});
    let params = json!({"taskId": task, "inputResponses": answer});
    let ack = request(&b.url, "secret-a", "tasks/update", params, true).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");
    let done = until(&a.url, &task, &["completed", "failed", "cancelled"]).await;
    assert_eq!(text(&done["result"]), "Deleted old.txt.", "{done}");

    // Lost with its replica: A dies mid-task, and B, finding the task untouched
    // for ten seconds, reports it failed instead of working forever.
    let created = call(
        &a.url,
        "slow_compute",
        json!({"seconds": 60, "label": "lost"}),
    )
    .await;
    let task = task_id(&created);
    a.kill();
    let lost = until(&b.url, &task, &["completed", "failed", "cancelled"]).await;
    assert_eq!(lost["status"], "failed", "{lost}");
    let message = lost["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("replica running this task stopped"),
        "{lost}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_crash_fails_a_task_and_a_reported_error_completes_it() {
    let dir = tempfile::tempdir().unwrap();
    let host = Host::start(&config(dir.path(), "one", "kind = \"sqlite\"", ""));

    let task = task_id(&call(&host.url, "protocol_error_job", json!({})).await);
    let failed = until(&host.url, &task, &["completed", "failed", "cancelled"]).await;
    assert_eq!(failed["status"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    assert_eq!(failed["error"]["data"]["code"], "tool_error", "{failed}");
    assert!(failed.get("result").is_none(), "{failed}");

    let task = task_id(&call(&host.url, "failing_job", json!({})).await);
    let completed = until(&host.url, &task, &["completed", "failed", "cancelled"]).await;
    assert_eq!(completed["status"], "completed", "{completed}");
    assert_eq!(completed["result"]["isError"], true, "{completed}");

    let unknown = get(&host.url, "secret-a", "0123456789abcdef").await;
    assert_eq!(unknown["error"]["code"], -32602, "{unknown}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_caller_without_the_extension_waits_or_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let host = Host::start(&config(dir.path(), "one", "kind = \"sqlite\"", ""));

    let params = json!({"name": "slow_compute", "arguments": {"seconds": 1, "label": "sync"}});
    let waited = request(&host.url, "secret-a", "tools/call", params, false).await;
    assert_eq!(waited["result"]["resultType"], "complete", "{waited}");
    assert_eq!(text(&waited["result"]), "Computed sync in 1 s.", "{waited}");

    let params = json!({"name": "failing_job", "arguments": {}});
    let refused = request(&host.url, "secret-a", "tools/call", params, false).await;
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"][TASKS].is_object(),
        "{refused}"
    );

    for method in ["tasks/get", "tasks/cancel"] {
        let gated = request(&host.url, "secret-a", method, json!({"taskId": "x"}), false).await;
        assert_eq!(gated["error"]["code"], -32021, "{method}: {gated}");
    }
}

/// A hostile caller starting more long tasks than the replica's budget gets
/// tasks up to it; the next call keeps its caller waiting instead of running
/// in the background.
#[tokio::test(flavor = "multi_thread")]
async fn a_flood_of_tasks_stays_within_the_running_budget() {
    let dir = tempfile::tempdir().unwrap();
    let extra = "max_running_tasks = 2";
    let host = Host::start(&config(dir.path(), "one", "kind = \"sqlite\"", extra));

    let arguments = json!({"seconds": 2.5, "label": "flood"});
    let first = task_id(&call(&host.url, "slow_compute", arguments.clone()).await);
    let second = task_id(&call(&host.url, "slow_compute", arguments.clone()).await);
    let started = Instant::now();
    let third = call(&host.url, "slow_compute", arguments).await;
    assert_eq!(
        third["resultType"], "complete",
        "a waited-for result: {third}"
    );
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "it ran while its caller waited"
    );
    host.wait_for_log("the budget refusal", |line| line.contains("tasks_full"));
    for task in [first, second] {
        let done = until(&host.url, &task, &["completed", "failed", "cancelled"]).await;
        assert_eq!(done["status"], "completed", "{done}");
    }
}

/// A task whose last answer arrives while every slot is busy waits for one,
/// `working` the whole time (not lost, past the ten seconds after which an
/// untouched task is), then runs to its end.
#[tokio::test(flavor = "multi_thread")]
async fn an_answered_task_waits_for_a_slot_without_going_stale() {
    let dir = tempfile::tempdir().unwrap();
    let extra = "max_running_tasks = 1";
    let path = config(dir.path(), "queue", "kind = \"sqlite\"", extra);
    // Runs longer than the default deadline of 10 s, the staleness limit.
    let mut toml = std::fs::read_to_string(&path).unwrap();
    toml.push_str("[plugin.policy]\ntimeout_ms = 30000\n");
    std::fs::write(&path, toml).unwrap();
    let host = Host::start(&path);

    // Asking: its run ended, so it holds no slot.
    let asking = task_id(&call(&host.url, "confirm_delete", json!({"filename": "q.txt"})).await);
    let questions = until(&host.url, &asking, &["input_required"]).await;
    let key = questions["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .next()
        .unwrap()
        .clone();
    // Its slot is given back just after its row says so.
    tokio::time::sleep(Duration::from_millis(500)).await;
    // The one slot, busy past the staleness limit.
    let busy = task_id(
        &call(
            &host.url,
            "slow_compute",
            json!({"seconds": 13, "label": "busy"}),
        )
        .await,
    );
    let answer = json!({key: {"action": "accept", "content": {"confirm": true}}});
    let params = json!({"taskId": asking, "inputResponses": answer});
    let ack = request(&host.url, "secret-a", "tasks/update", params, true).await;
    assert_eq!(ack["result"], json!({"resultType": "complete"}), "{ack}");

    tokio::time::sleep(Duration::from_secs(11)).await;
    let queued = get(&host.url, "secret-a", &asking).await["result"].clone();
    assert_eq!(queued["status"], "working", "queued, not lost: {queued}");
    let done = until(&host.url, &busy, &["completed", "failed", "cancelled"]).await;
    assert_eq!(done["status"], "completed", "{done}");
    let done = until(&host.url, &asking, &["completed", "failed", "cancelled"]).await;
    assert_eq!(text(&done["result"]), "Deleted q.txt.", "{done}");
}
