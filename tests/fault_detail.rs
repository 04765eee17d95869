//! Callers see codes, operators see detail, against the release host: a webhook
//! that times out, answers 404, answers something that is not a result or cannot
//! be reached, and a guest that faults in the sandbox, each give the caller a
//! coded failure without the URL, the answer's body or a host path, but with a
//! `callId`; the host's log has that id on the line with the full detail.

use crate::common;

use std::path::Path;

use common::attack::{call, error_code};
use common::host::guest;
use common::process::Host;
use common::webhook_server::WebhookServer;
use serde_json::{Value, json};

const SECRET: &str = "a shared secret of enough length";

/// The `callId` anywhere in `value`, or in the JSON of any string in it (the
/// compat text block holds the envelope as text).
fn find_call_id(value: &Value) -> Option<String> {
    match value {
        Value::Object(map) => map
            .get("callId")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .or_else(|| map.values().find_map(find_call_id)),
        Value::Array(items) => items.iter().find_map(find_call_id),
        Value::String(text) => serde_json::from_str::<Value>(text)
            .ok()
            .filter(|inner| inner.is_object())
            .and_then(|inner| find_call_id(&inner)),
        _ => None,
    }
}

/// The call's id from a failed call's message: 16 hex digits.
fn call_id(tool: &str, message: &Value) -> String {
    let id = find_call_id(message).unwrap_or_else(|| panic!("{tool}: no callId in {message}"));
    assert!(
        id.len() == 16 && id.bytes().all(|b| b.is_ascii_hexdigit()),
        "{tool}: callId {id:?}"
    );
    id
}

fn assert_hides(tool: &str, message: &Value, secrets: &[&str]) {
    let text = message.to_string();
    for secret in secrets {
        assert!(
            !text.contains(secret),
            "{tool}: the caller was shown {secret:?}: {text}"
        );
    }
}

fn write_config(dir: &Path, body: &str) -> std::path::PathBuf {
    let path = dir.join("toolhost.toml");
    let text = format!(
        "[host]\ndata_dir = \"{}\"\nwebhook_allow = [\"127.0.0.1:*\"]\n\n{body}",
        dir.join("data").display()
    );
    std::fs::write(&path, text).unwrap();
    path
}

#[tokio::test(flavor = "multi_thread")]
async fn webhook_failures_show_the_caller_a_code_and_the_log_the_url_and_the_answer() {
    let webhook = WebhookServer::start(SECRET).await;
    // A port nothing listens on.
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let gone = format!("http://127.0.0.1:{closed}/gone-hook");
    let dir = tempfile::tempdir().unwrap();
    let mut body = format!(
        "[[webhook]]\nname = \"orders\"\nurl = \"{}\"\nsecret = \"{SECRET}\"\ntimeout_ms = 1000\n",
        webhook.url
    );
    for tool in ["slow", "missing", "bad_body"] {
        body.push_str(&format!(
            "[[webhook.tool]]\nname = \"{tool}\"\ndescription = \"The {tool} case.\"\n"
        ));
    }
    body.push_str(&format!(
        "\n[[webhook]]\nname = \"gone\"\nurl = \"{gone}\"\nsecret = \"{SECRET}\"\ntimeout_ms = 1000\n\
         [[webhook.tool]]\nname = \"unreachable\"\ndescription = \"Nobody listens.\"\n"
    ));
    let host = Host::start(&write_config(dir.path(), &body));
    let dir_text = dir.path().display().to_string();

    for (tool, code, url, answer) in [
        ("slow", "timeout", webhook.url.as_str(), None),
        (
            "missing",
            "tool_error",
            webhook.url.as_str(),
            Some("no tool missing"),
        ),
        (
            "bad_body",
            "tool_error",
            webhook.url.as_str(),
            Some("BODY-MARKER"),
        ),
        ("unreachable", "tool_error", gone.as_str(), None),
    ] {
        let message = call(&host.url, tool, json!({})).await;
        assert_eq!(
            error_code(&message).as_deref(),
            Some(code),
            "{tool}: {message}"
        );
        let mut hidden = vec![url, "127.0.0.1", "/hook", "gone-hook", &dir_text];
        hidden.extend(answer);
        assert_hides(tool, &message, &hidden);
        let id = call_id(tool, &message);
        // The full detail is the operator's: on a line of the call's span.
        let line = host.wait_for_log(&format!("with call_id={id} and {url}"), |line| {
            line.contains(&format!("call_id={id}")) && line.contains(url)
        });
        if let Some(answer) = answer {
            assert!(
                line.contains(answer),
                "{tool}: the log line lacks the answer: {line}"
            );
        }
        assert!(
            line.contains(&format!("tool={tool}")) || line.contains(&format!("tool=\"{tool}\"")),
            "{line}"
        );
    }
    // The 404's status is the caller's: a code, not a body.
    let missing = call(&host.url, "missing", json!({})).await;
    assert!(missing.to_string().contains("404"), "{missing}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sandbox_fault_shows_the_caller_the_trap_and_the_log_the_error_chain() {
    let dir = tempfile::tempdir().unwrap();
    let hostile = guest("hostile");
    let config = write_config(
        dir.path(),
        &format!(
            "[[plugin]]\npath = \"{}\"\n[plugin.policy]\nmemory_mib = 32\ntimeout_ms = 2000\n",
            hostile.display()
        ),
    );
    let host = Host::start_logging(&config, "info");
    let message = call(&host.url, "panic", json!({})).await;
    assert_eq!(
        error_code(&message).as_deref(),
        Some("tool_error"),
        "{message}"
    );
    let text = message.to_string();
    // The trap kind and the names are the caller's ...
    assert!(text.contains("unreachable"), "the trap kind: {text}");
    assert!(text.contains("hostile"), "the plugin: {text}");
    // ... host paths are not.
    let data_dir = dir.path().join("data");
    assert_hides(
        "panic",
        &message,
        &[
            &dir.path().display().to_string(),
            &data_dir.display().to_string(),
            &hostile.display().to_string(),
            "/proc/",
            "compile-cache",
        ],
    );
    let id = call_id("panic", &message);
    let line = host.wait_for_log(&format!("with call_id={id} and the error"), |line| {
        line.contains(&format!("call_id={id}")) && line.contains("call failed in the sandbox")
    });
    assert!(line.contains("error="), "the full error is logged: {line}");
    // Every line of the call carries the id: here also the call's summary line.
    host.wait_for_log(&format!("the summary of call {id}"), |line| {
        line.contains(&format!("call_id={id}")) && line.contains("failed=true")
    });
}
