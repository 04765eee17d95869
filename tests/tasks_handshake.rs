//! 2025-11-25's tasks (`tasks/*` of the handshake era), spoken in raw
//! JSON-RPC over stdio and Streamable HTTP with the conformance guest's task
//! fixtures, every answer checked against the revision's official schema:
//! the capability and each tool's `execution`, a call that asks for a task,
//! `tasks/get`, `tasks/result` (waiting, tied to the task, putting a tool's
//! question to the client), `tasks/cancel`, the `-32601` of a tool called
//! against its task support, and one principal never seeing another's task.
//! A 2025-06-18 session is offered none of it.

use crate::common;

use std::time::{Duration, Instant};

use common::host::{guest, root};
use common::mcp_client::{in_session, message, open_session};
use common::process::Host;
use common::stdio::Client;
use common::{McpSchemas, error_code};
use serde_json::{Value, json};
use toolhost::render::Revision;

const REVISION: Revision = Revision::V2025_11_25;
const RELATED: &str = "io.modelcontextprotocol/related-task";

/// The `result` of `response`, valid as `definition` of 2025-11-25.
fn valid<'a>(schemas: &McpSchemas, definition: &str, response: &'a Value) -> &'a Value {
    schemas.result(REVISION, definition, response)
}

/// The conformance guest over stdio, its tasks in a store of its own under
/// `name`, with `extra` host keys.
fn conformance_host(name: &str, extra: &str) -> Client {
    // Fresh, so the tasks of an earlier run are not listed.
    let data = root().join("target/test-data").join(name);
    let _ = std::fs::remove_dir_all(&data);
    Client::start_with(&format!(
        "[host]\ndata_dir = \"{}\"\noutput_mode = \"spec\"\n{extra}\n[[plugin]]\npath = \"{}\"\n",
        data.display(),
        guest("conformance").display()
    ))
}

/// The id of the task a `tools/call` created, its answer checked.
fn created(schemas: &McpSchemas, response: &Value) -> String {
    let created = valid(schemas, "CreateTaskResult", response);
    assert_eq!(created["task"]["status"], "working", "{created}");
    assert!(created["task"]["ttl"].is_u64(), "{created}");
    created["task"]["taskId"].as_str().unwrap().to_owned()
}

#[test]
fn a_2025_11_25_client_runs_tools_as_tasks_over_stdio() {
    let schemas = McpSchemas::load();
    let mut client = conformance_host("tasks-2025-11-25", "");
    let init = client.initialize_with(REVISION, json!({"elicitation": {}, "tasks": {}}));
    let init = valid(&schemas, "InitializeResult", &init);
    assert_eq!(
        init["capabilities"]["tasks"],
        json!({"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}),
        "{init}"
    );

    // Each tool says whether it runs as a task.
    let (_, listed) = client.request("tools/list", json!({}));
    let tools = valid(&schemas, "ListToolsResult", &listed)["tools"]
        .as_array()
        .unwrap()
        .clone();
    let support = |name: &str| {
        tools.iter().find(|t| t["name"] == name).unwrap()["execution"]["taskSupport"].clone()
    };
    assert_eq!(support("slow_compute"), "optional");
    assert_eq!(support("failing_job"), "required");
    assert_eq!(support("greet"), Value::Null);

    // Asked for a task, the call answers at once; `tasks/result` waits.
    let started = Instant::now();
    let (_, call) = client.request(
        "tools/call",
        json!({"name": "slow_compute", "arguments": {"seconds": 1.5, "label": "stdio"}, "task": {"ttl": 60000}}),
    );
    let task = created(&schemas, &call);
    assert!(
        started.elapsed() < Duration::from_millis(1400),
        "not waited for"
    );
    let (_, got) = client.request("tasks/get", json!({"taskId": task}));
    assert_eq!(valid(&schemas, "GetTaskResult", &got)["status"], "working");
    let (_, result) = client.request("tasks/result", json!({"taskId": task}));
    let result = valid(&schemas, "CallToolResult", &result);
    assert_eq!(
        result["content"][0]["text"], "Computed stdio in 1.5 s.",
        "{result}"
    );
    assert_eq!(
        result["_meta"][RELATED]["taskId"],
        task.as_str(),
        "{result}"
    );
    let (_, done) = client.request("tasks/get", json!({"taskId": task}));
    assert_eq!(
        valid(&schemas, "GetTaskResult", &done)["status"],
        "completed"
    );
    let (_, late) = client.request("tasks/cancel", json!({"taskId": task}));
    assert_eq!(error_code(&late), -32602, "an ended task is not cancelled");

    // A tool's error fails its task; `tasks/result` still returns it.
    let (_, refused) = client.request(
        "tools/call",
        json!({"name": "failing_job", "arguments": {}}),
    );
    assert_eq!(
        error_code(&refused),
        -32601,
        "a task-only tool called without one"
    );
    let (_, refused) = client.request(
        "tools/call",
        json!({"name": "greet", "arguments": {"name": "x"}, "task": {}}),
    );
    assert_eq!(
        error_code(&refused),
        -32601,
        "a task of a tool that runs as none"
    );
    let (_, call) = client.request(
        "tools/call",
        json!({"name": "failing_job", "arguments": {}, "task": {}}),
    );
    let task = created(&schemas, &call);
    let (_, result) = client.request("tasks/result", json!({"taskId": task}));
    assert_eq!(
        valid(&schemas, "CallToolResult", &result)["isError"],
        true,
        "{result}"
    );
    let (_, failed) = client.request("tasks/get", json!({"taskId": task}));
    let failed = valid(&schemas, "GetTaskResult", &failed);
    assert_eq!(failed["status"], "failed", "{failed}");
    assert!(failed["statusMessage"].is_string(), "{failed}");

    // A tool's question goes to the client on `tasks/result`, tied to the task.
    let (_, call) = client.request(
        "tools/call",
        json!({"name": "confirm_delete", "arguments": {"filename": "a.txt"}, "task": {}}),
    );
    let task = created(&schemas, &call);
    let (asked, result) =
        client.request_answering("tasks/result", json!({"taskId": task}), |request| {
            assert_eq!(request["method"], "elicitation/create", "{request}");
            assert_eq!(
                request["params"]["_meta"][RELATED]["taskId"],
                task.as_str(),
                "{request}"
            );
            Ok(json!({"action": "accept", "content": {"confirm": true}}))
        });
    assert_eq!(
        asked
            .iter()
            .filter(|m| m["method"] == "elicitation/create")
            .count(),
        1
    );
    let result = valid(&schemas, "CallToolResult", &result);
    assert_eq!(result["content"][0]["text"], "Deleted a.txt.", "{result}");

    // Cancelled, a task ends its instance and has no result.
    let (_, call) = client.request(
        "tools/call",
        json!({"name": "slow_compute", "arguments": {"seconds": 30, "label": "long"}, "task": {}}),
    );
    let task = created(&schemas, &call);
    let (_, cancelled) = client.request("tasks/cancel", json!({"taskId": task}));
    assert_eq!(
        valid(&schemas, "CancelTaskResult", &cancelled)["status"],
        "cancelled"
    );
    let (_, result) = client.request("tasks/result", json!({"taskId": task}));
    assert_eq!(error_code(&result), -32602, "{result}");
    let (_, unknown) = client.request("tasks/get", json!({"taskId": "0123456789abcdef"}));
    assert_eq!(error_code(&unknown), -32602, "{unknown}");

    // Every task of the session's caller is listed, in one page here.
    let (_, listed) = client.request("tasks/list", json!({}));
    let listed = valid(&schemas, "ListTasksResult", &listed);
    let tasks = listed["tasks"].as_array().unwrap();
    assert_eq!(tasks.len(), 4, "{listed}");
    assert!(
        tasks
            .iter()
            .any(|t| t["taskId"] == task.as_str() && t["status"] == "cancelled")
    );
    assert!(listed.get("nextCursor").is_none(), "{listed}");
    let (_, bad) = client.request("tasks/list", json!({"cursor": "not-a-cursor"}));
    assert_eq!(error_code(&bad), -32602, "{bad}");
}

#[test]
fn a_2025_06_18_session_is_offered_no_tasks() {
    let mut client = conformance_host("tasks-2025-06-18", "");
    let init = client.initialize(Revision::V2025_06_18);
    assert!(
        init["result"]["capabilities"].get("tasks").is_none(),
        "{init}"
    );
    let (_, listed) = client.request("tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().unwrap();
    assert!(
        tools.iter().all(|t| t.get("execution").is_none()),
        "{listed}"
    );
    // A `task` it has no word for is ignored: the call answers as any.
    let (_, call) = client.request(
        "tools/call",
        json!({"name": "slow_compute", "arguments": {"seconds": 0, "label": "old"}, "task": {}}),
    );
    assert_eq!(
        call["result"]["content"][0]["text"], "Computed old in 0 s.",
        "{call}"
    );
    let (_, get) = client.request("tasks/get", json!({"taskId": "x"}));
    assert!(get.get("error").is_some(), "{get}");
}

/// A caller asked for a task, so past the running budget it is refused
/// rather than kept waiting; a cancelled task frees its slot.
#[test]
fn a_2025_11_25_task_past_the_running_budget_is_refused() {
    let schemas = McpSchemas::load();
    let mut client = conformance_host("tasks-2025-11-25-budget", "max_running_tasks = 1");
    client.initialize(REVISION);
    let long =
        json!({"name": "slow_compute", "arguments": {"seconds": 30, "label": "a"}, "task": {}});
    let (_, first) = client.request("tools/call", long.clone());
    let first = created(&schemas, &first);
    let (_, refused) = client.request("tools/call", long.clone());
    assert_eq!(error_code(&refused), -32000, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("try again"),
        "{refused}"
    );
    let (_, cancelled) = client.request("tasks/cancel", json!({"taskId": first}));
    assert_eq!(cancelled["result"]["status"], "cancelled", "{cancelled}");
    // The running replica sees the cancellation within 250 ms.
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let (_, again) = client.request("tools/call", long.clone());
        if again.get("result").is_some() {
            created(&schemas, &again);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the slot was never freed: {again}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// One POST in `session` as `bearer`: the JSON-RPC answer.
async fn post(
    url: &str,
    bearer: &str,
    session: &str,
    id: u64,
    method: &str,
    params: Value,
) -> Value {
    let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
    let response = in_session(url, REVISION.as_str(), Some(bearer), Some(session), body)
        .timeout(Duration::from_secs(60))
        .send()
        .await
        .unwrap();
    message(response).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_2025_11_25_task_over_http_is_its_principals_alone() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("host.toml");
    std::fs::write(
        &config,
        format!(
            "[host]\ndata_dir = \"{}\"\noutput_mode = \"spec\"\n\n\
             [[token]]\ntoken = \"secret-a\"\nprincipal = \"alice\"\n\
             [[token]]\ntoken = \"secret-b\"\nprincipal = \"bob\"\n\n\
             [[plugin]]\npath = \"{}\"\n",
            dir.path().join("data").display(),
            guest("conformance").display()
        ),
    )
    .unwrap();
    let host = Host::start(&config);
    let schemas = McpSchemas::load();
    let alice = open_session(&host.url, REVISION.as_str(), Some("secret-a")).await;
    let bob = open_session(&host.url, REVISION.as_str(), Some("secret-b")).await;

    let params = json!({"name": "slow_compute", "arguments": {"seconds": 1, "label": "http"}, "task": {"ttl": 1000}});
    let call = post(&host.url, "secret-a", &alice, 2, "tools/call", params).await;
    let task = created(&schemas, &call);
    for method in ["tasks/get", "tasks/result", "tasks/cancel"] {
        let foreign = post(
            &host.url,
            "secret-b",
            &bob,
            3,
            method,
            json!({"taskId": task}),
        )
        .await;
        assert_eq!(
            error_code(&foreign),
            -32602,
            "{method} of another's task: {foreign}"
        );
    }
    let result = post(
        &host.url,
        "secret-a",
        &alice,
        4,
        "tasks/result",
        json!({"taskId": task}),
    )
    .await;
    let result = valid(&schemas, "CallToolResult", &result);
    assert_eq!(
        result["content"][0]["text"], "Computed http in 1 s.",
        "{result}"
    );
    assert_eq!(
        result["_meta"][RELATED]["taskId"],
        task.as_str(),
        "{result}"
    );
    let got = post(
        &host.url,
        "secret-a",
        &alice,
        5,
        "tasks/get",
        json!({"taskId": task}),
    )
    .await;
    assert_eq!(
        valid(&schemas, "GetTaskResult", &got)["status"],
        "completed"
    );

    // A principal lists its own tasks only.
    let mine = post(&host.url, "secret-a", &alice, 6, "tasks/list", json!({})).await;
    let mine = valid(&schemas, "ListTasksResult", &mine);
    assert_eq!(mine["tasks"][0]["taskId"], task.as_str(), "{mine}");
    let theirs = post(&host.url, "secret-b", &bob, 7, "tasks/list", json!({})).await;
    assert_eq!(
        valid(&schemas, "ListTasksResult", &theirs)["tasks"],
        json!([])
    );
}
