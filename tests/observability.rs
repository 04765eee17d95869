//! The audit log and the Prometheus metrics (#16) of a real `toolhost serve
//! --http` process: calls that succeed, fail, time out, use a secret and name
//! no tool each give one audit line with the right fields and no argument
//! value, token or secret; `/metrics` needs a token, refuses a foreign `Host`,
//! and parses with the official Prometheus client's parser
//! (`prometheus_client`, in the venv `make setup` makes), its counters moved by
//! exactly the calls made and the timeout counted under its budget.

use crate::common;

use std::collections::BTreeMap;
use std::io::Write as _;
use std::os::unix::fs::PermissionsExt as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::attack::call_as;
use common::host::{guest, root};
use common::process::Host;
use common::web_server::WebServer;
use serde_json::{Value, json};
use sha2::Digest as _;

fn random(label: &str) -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).unwrap();
    format!("{label}-{}", hex::encode(bytes))
}

fn digest_of(path: &std::path::Path) -> String {
    hex::encode(sha2::Sha256::digest(std::fs::read(path).unwrap()))
}

/// Every sample of a Prometheus text, as the official Python parser reads it:
/// (name, labels) -> value.
fn parse_metrics(text: &str) -> BTreeMap<(String, BTreeMap<String, String>), f64> {
    let python = root().join("tests/a2a/.venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run `make setup`",
        python.display()
    );
    let script = "import sys, json\nfrom prometheus_client.parser import text_string_to_metric_families\nout = []\nfor family in text_string_to_metric_families(sys.stdin.read()):\n    for s in family.samples:\n        out.append([s.name, s.labels, s.value])\nprint(json.dumps(out))\n";
    let mut child = Command::new(python)
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    assert!(
        output.status.success(),
        "the parser refused the text:\n{text}"
    );
    let samples: Vec<(String, BTreeMap<String, String>, f64)> =
        serde_json::from_slice(&output.stdout).unwrap();
    samples
        .into_iter()
        .map(|(name, labels, value)| ((name, labels), value))
        .collect()
}

fn sample(
    samples: &BTreeMap<(String, BTreeMap<String, String>), f64>,
    name: &str,
    labels: &[(&str, &str)],
) -> f64 {
    let labels = labels
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect();
    samples
        .get(&(name.to_owned(), labels))
        .copied()
        .unwrap_or(0.0)
}

async fn scrape(url: &str, bearer: &str) -> String {
    let response = reqwest::Client::new()
        .get(url)
        .bearer_auth(bearer)
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 200);
    response.text().await.unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn every_http_call_is_audited_and_counted_without_values_tokens_or_secrets() {
    let dir = tempfile::tempdir().unwrap();
    let server = WebServer::http().await;
    let secret = random("secret-value");
    let secret_file = dir.path().join("api.secret");
    std::fs::write(&secret_file, &secret).unwrap();
    std::fs::set_permissions(&secret_file, std::fs::Permissions::from_mode(0o600)).unwrap();
    let (alice, bob) = (random("alice-token"), random("bob-token"));
    let audit = dir.path().join("audit.jsonl");
    let config = dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        format!(
            "[host]\ndata_dir = \"{data}\"\naudit = \"{audit}\"\n\
             [store]\nkind = \"sqlite\"\npath = \"{d}/r.sqlite3\"\nsigning_key_file = \"{d}/k\"\n\
             [[token]]\ntoken = \"{alice}\"\nprincipal = \"alice\"\n\
             [[token]]\ntoken = \"{bob}\"\nprincipal = \"bob\"\n\
             [[plugin]]\npath = \"{calc}\"\n\
             [[plugin]]\nname = \"hostile\"\npath = \"{hostile}\"\n[plugin.policy]\ntimeout_ms = 300\n\
             [[plugin]]\nname = \"probe\"\npath = \"{probe}\"\n[plugin.policy]\nhttp = [\"{rule}\"]\n\
             [[plugin.secret]]\nname = \"api\"\nfrom_file = \"{secret_file}\"\nhosts = [\"{rule}\"]\n",
            data = root().join("target/test-data").display(),
            audit = audit.display(),
            d = dir.path().display(),
            calc = guest("calc").display(),
            hostile = guest("hostile").display(),
            probe = guest("http_probe").display(),
            rule = server.rule(),
            secret_file = secret_file.display(),
        ),
    )
    .unwrap();
    let host = Host::start(&config);
    let metrics_url = host.url.replace("/mcp", "/metrics");
    let before = parse_metrics(&scrape(&metrics_url, &alice).await);

    let (value_a, value_b) = ("1234567", random("not-a-number"));
    let unknown = random("no_such_tool").replace('-', "_");
    let ok = call_as(
        &host.url,
        "add",
        json!({"a": 1234567, "b": 1}),
        Some(&alice),
    )
    .await;
    assert!(ok["result"]["isError"] != true, "{ok}");
    let invalid = call_as(&host.url, "add", json!({"a": value_b, "b": 1}), Some(&bob)).await;
    assert_eq!(invalid["result"]["isError"], true, "{invalid}");
    let spin = call_as(&host.url, "spin", json!({}), Some(&alice)).await;
    assert_eq!(
        common::attack::error_code(&spin).as_deref(),
        Some("timeout")
    );
    let placeholder = call_as(
        &host.url,
        "http_secret",
        json!({"name": "api"}),
        Some(&alice),
    )
    .await;
    let placeholder = placeholder["result"]["structuredContent"]["placeholder"]
        .as_str()
        .unwrap_or_else(|| panic!("{placeholder}"))
        .to_owned();
    let sent = call_as(
        &host.url,
        "http_request",
        json!({"url": server.url("/echo?case=audit"), "headers": {"authorization": format!("Bearer {placeholder}")}}),
        Some(&alice),
    )
    .await;
    assert!(sent["result"]["isError"] != true, "{sent}");
    let received = server.requests_with("case=audit");
    assert_eq!(
        received[0].header("authorization"),
        Some(format!("Bearer {secret}")),
        "the secret reached its destination"
    );
    let missing = call_as(&host.url, &unknown, json!({"x": 1}), Some(&alice)).await;
    assert!(missing.get("error").is_some(), "{missing}");

    // One line per call, in order, as the writer gets to them.
    let deadline = Instant::now() + Duration::from_secs(10);
    let lines: Vec<Value> = loop {
        let text = std::fs::read_to_string(&audit).unwrap_or_default();
        let lines: Vec<Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        if lines.len() >= 6 || Instant::now() > deadline {
            for forbidden in [&alice, &bob, &secret, &value_b] {
                assert!(
                    !text.contains(forbidden.as_str()),
                    "the audit log holds {forbidden}: {text}"
                );
            }
            assert!(
                !text.contains(value_a),
                "an argument value is in the audit log: {text}"
            );
            break lines;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    assert_eq!(lines.len(), 6, "{lines:#?}");
    let expected = [
        (
            "add",
            "alice",
            "token-1",
            Some("calc"),
            "ok",
            json!(["a", "b"]),
        ),
        (
            "add",
            "bob",
            "token-2",
            Some("calc"),
            "invalid_arguments",
            json!(["a", "b"]),
        ),
        (
            "spin",
            "alice",
            "token-1",
            Some("hostile"),
            "timeout",
            json!([]),
        ),
        (
            "http_secret",
            "alice",
            "token-1",
            Some("probe"),
            "ok",
            json!(["name"]),
        ),
        (
            "http_request",
            "alice",
            "token-1",
            Some("probe"),
            "ok",
            json!(["url", "headers"]),
        ),
        (
            unknown.as_str(),
            "alice",
            "token-1",
            None,
            "unknown_tool",
            json!(["x"]),
        ),
    ];
    for (line, (tool, principal, token_id, plugin, outcome, keys)) in lines.iter().zip(expected) {
        assert_eq!(line["event"], "tool_call", "{line}");
        assert_eq!(line["transport"], "http", "{line}");
        assert_eq!(line["tool"], tool, "{line}");
        assert_eq!(line["principal"], principal, "{line}");
        assert_eq!(line["token_id"], token_id, "{line}");
        assert_eq!(line["plugin"], json!(plugin), "{line}");
        assert_eq!(line["outcome"], outcome, "{line}");
        assert_eq!(line["argument_keys"], keys, "{line}");
        assert_eq!(line["request_id"], "1", "{line}");
        assert!(line["duration_ms"].as_f64().unwrap() >= 0.0, "{line}");
        assert!(
            line["time"]
                .as_str()
                .unwrap()
                .parse::<jiff::Timestamp>()
                .is_ok(),
            "{line}"
        );
        assert!(line.get("arguments").is_none(), "{line}");
        match plugin {
            Some(_) => assert_eq!(line["call_id"].as_str().unwrap().len(), 16, "{line}"),
            None => assert!(
                line["call_id"].is_null() && line["digest"].is_null(),
                "{line}"
            ),
        }
    }
    assert_eq!(lines[0]["digest"], digest_of(&guest("calc")));
    assert_eq!(lines[2]["digest"], digest_of(&guest("hostile")));
    assert!(lines[2]["duration_ms"].as_f64().unwrap() >= 300.0);

    // /metrics: a token, a served Host, then the counters.
    let anonymous = reqwest::get(&metrics_url).await.unwrap();
    assert_eq!(anonymous.status(), 401);
    let foreign = reqwest::Client::new()
        .get(&metrics_url)
        .bearer_auth(&alice)
        .header("host", "rebound.example")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403);
    let text = scrape(&metrics_url, &alice).await;
    for forbidden in [&alice, &bob, &secret, &unknown, &value_b] {
        assert!(
            !text.contains(forbidden.as_str()),
            "/metrics holds {forbidden}"
        );
    }
    let after = parse_metrics(&text);
    let moved = |name: &str, labels: &[(&str, &str)]| {
        sample(&after, name, labels) - sample(&before, name, labels)
    };
    let calls = "toolhost_calls_total";
    assert_eq!(moved(calls, &[("tool", "add"), ("outcome", "ok")]), 1.0);
    assert_eq!(
        moved(calls, &[("tool", "add"), ("outcome", "invalid_arguments")]),
        1.0
    );
    assert_eq!(
        moved(calls, &[("tool", "spin"), ("outcome", "timeout")]),
        1.0
    );
    assert_eq!(
        moved(calls, &[("tool", "http_secret"), ("outcome", "ok")]),
        1.0
    );
    assert_eq!(
        moved(calls, &[("tool", "http_request"), ("outcome", "ok")]),
        1.0
    );
    assert_eq!(
        moved(calls, &[("tool", "(unknown)"), ("outcome", "unknown_tool")]),
        1.0
    );
    let all: f64 = after
        .iter()
        .filter(|((name, _), _)| name == calls)
        .map(|(_, v)| v)
        .sum();
    assert_eq!(all, 6.0, "no other call was counted");
    assert_eq!(
        moved("toolhost_call_duration_seconds_count", &[("tool", "add")]),
        2.0
    );
    assert_eq!(
        moved(
            "toolhost_budget_refusals_total",
            &[("budget", "timeout"), ("plugin", "hostile")]
        ),
        1.0
    );
    assert_eq!(
        sample(&after, "toolhost_instances_in_use", &[("plugin", "calc")]),
        0.0
    );
    assert!(
        after.contains_key(&(
            "toolhost_rate_limited_total".to_owned(),
            [("principal", "alice"), ("tool", "add")]
                .iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect()
        ))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn host_metrics_false_records_none_and_serves_no_metrics() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        format!(
            "[host]\ndata_dir = \"{d}/data\"\nmetrics = false\n[[plugin]]\npath = \"{calc}\"\n",
            d = dir.path().display(),
            calc = guest("calc").display(),
        ),
    )
    .unwrap();
    let host = Host::start(&config);
    let answer = common::attack::call(&host.url, "add", json!({"a": 1, "b": 2})).await;
    assert!(answer["result"].is_object(), "{answer}");
    let metrics = reqwest::get(host.url.replace("/mcp", "/metrics"))
        .await
        .unwrap();
    assert_eq!(metrics.status(), 404);
}
