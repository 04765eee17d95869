//! Load with faults: many calls at 64 concurrency over Streamable HTTP to a real
//! `toolhost serve` process, 5% of them to hostile tools (an endless loop, a
//! memory bomb, a trap, and the attacks of issue #12 on the host's budgets: files
//! held open, a log flood, a result over its size budget, memory grown past the
//! limit, name lookups off the rules). Every good call must return its right
//! result, every hostile one its coded error, and the server's resident memory
//! after the run must stay within 10% of what it was after warm-up. Every call
//! carries a bearer token and the audit log is on (#16): it must hold one line
//! per call, warm-up included, and the token in none.
//!
//! `make test` runs 4,000 calls; `make soak` runs the 20,000
//! (`TOOLHOST_LOAD_CALLS`).

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::host::guest;
use common::mcp_client::{message, modern};
use common::process::Host;
use serde_json::{Value, json};

const CONCURRENCY: usize = 64;

/// The hostile tools, their arguments and the code each must end with.
fn hostile() -> [(&'static str, Value, &'static str); 8] {
    [
        ("spin", json!({}), "timeout"),
        ("memory_bomb", json!({}), "resource_limit"),
        ("panic", json!({}), "tool_error"),
        (
            "open_files",
            json!({"path": "/files/a.txt", "count": 20_000}),
            "resource_limit",
        ),
        (
            "log_flood",
            json!({"lines": 20, "bytes": 65_536}),
            "resource_limit",
        ),
        // Just over the plugin's result budget (512 KiB here): refused before it is
        // converted. (At the default 16 MiB, each refused result is a lifted copy of
        // that size, and the allocator's high-water mark would depend on how many
        // happened to run at once, not on a leak.)
        ("big_result", json!({"bytes": 600_000}), "resource_limit"),
        ("grow", json!({"mib": 100}), "resource_limit"),
        (
            "net_lookup",
            json!({"names": ["localhost", "exfil-load.example"]}),
            "permission_denied",
        ),
    ]
}

/// What call `n` is: every 20th goes to a hostile tool (5%).
fn plan(n: usize) -> Option<(&'static str, Value, &'static str)> {
    let hostile = hostile();
    let count = hostile.len();
    (n % 20 == 7).then(|| hostile.into_iter().nth((n / 20) % count).unwrap())
}

/// The bearer token every call carries; it must appear in no audit line.
const LOAD_TOKEN: &str = "load-token-9d1f4c7e2b8a6035";

/// Calls `tool`; the structured result of a success, or the error code.
async fn call(
    client: &reqwest::Client,
    url: &str,
    tool: &str,
    arguments: Value,
) -> Result<Value, String> {
    let request = modern(
        "tools/call",
        Some(tool),
        json!({"name": tool, "arguments": arguments}),
        Some(LOAD_TOKEN),
        url,
    );
    let (_, request) = request.build_split();
    let response = client
        .execute(request.unwrap())
        .await
        .unwrap_or_else(|e| panic!("{tool}: the server did not answer: {e}"));
    let message = message(response).await;
    let result = &message["result"];
    if result["isError"] == true {
        let text = result["content"][0]["text"].as_str().unwrap_or_default();
        let envelope: Value = serde_json::from_str(text).unwrap_or_else(|e| {
            panic!("{tool}: the error text is not the envelope ({e}): {message}")
        });
        return Err(envelope["_meta"]["errorCode"]
            .as_str()
            .unwrap_or("?")
            .to_owned());
    }
    Ok(result["structuredContent"].clone())
}

/// Runs calls `range` at 64 concurrency and checks each answer.
async fn run(url: &str, range: std::ops::Range<usize>) -> (usize, usize) {
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(CONCURRENCY)
        .build()
        .unwrap();
    let next = Arc::new(AtomicUsize::new(range.start));
    let (good, hostile) = (Arc::new(AtomicUsize::new(0)), Arc::new(AtomicUsize::new(0)));
    let workers: Vec<_> = (0..CONCURRENCY)
        .map(|_| {
            let (client, url, next) = (client.clone(), url.to_owned(), next.clone());
            let (good, hostile, end) = (good.clone(), hostile.clone(), range.end);
            tokio::spawn(async move {
                loop {
                    let n = next.fetch_add(1, Ordering::Relaxed);
                    if n >= end {
                        break;
                    }
                    match plan(n) {
                        Some((tool, arguments, code)) => {
                            let answer = call(&client, &url, tool, arguments).await;
                            assert_eq!(answer, Err(code.to_owned()), "call {n} to {tool}");
                            hostile.fetch_add(1, Ordering::Relaxed);
                        }
                        None => {
                            let (a, b) = (n as i64, 1_000_000 - 3 * n as i64);
                            let answer = call(&client, &url, "add", json!({"a": a, "b": b})).await;
                            assert_eq!(answer, Ok(json!({"sum": a + b})), "call {n} to add");
                            good.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                }
            })
        })
        .collect();
    for worker in workers {
        worker.await.unwrap();
    }
    (
        good.load(Ordering::Relaxed),
        hostile.load(Ordering::Relaxed),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn good_calls_stay_right_and_memory_stays_flat_while_hostile_ones_fail() {
    let calls: usize = std::env::var("TOOLHOST_LOAD_CALLS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(4_000);
    let dir = tempfile::tempdir().unwrap();
    let files = dir.path().join("files");
    std::fs::create_dir(&files).unwrap();
    std::fs::write(files.join("a.txt"), "a").unwrap();
    let audit = dir.path().join("audit.jsonl");
    let config = dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        format!(
            "[host]\ndata_dir = \"{data}\"\naudit = \"{audit}\"\n\n\
             [[token]]\ntoken = \"{LOAD_TOKEN}\"\nprincipal = \"load\"\n\n\
             [[plugin]]\npath = \"{calc}\"\n[plugin.policy]\nmax_instances = 64\n\n\
             [[plugin]]\npath = \"{hostile}\"\n[plugin.policy]\nfuel = 200000000\ntimeout_ms = 5000\nmemory_mib = 16\nmax_instances = 16\n\n\
             [[plugin]]\npath = \"{budget}\"\n[plugin.policy]\ntimeout_ms = 5000\nmemory_mib = 64\nmax_instances = 8\nmax_result_bytes = 524288\n\
             [[plugin.policy.preopens]]\nhost = \"{files}\"\nguest = \"/files\"\n\n\
             [[plugin]]\npath = \"{net}\"\n[plugin.policy]\ntimeout_ms = 5000\nnetwork = [\"localhost:9\"]\n",
            data = dir.path().join("data").display(),
            audit = audit.display(),
            calc = guest("calc").display(),
            hostile = guest("hostile").display(),
            budget = guest("hostile_budget").display(),
            files = files.display(),
            net = guest("hostile_net").display(),
        ),
    )
    .unwrap();
    // The loop ends by fuel, not by the clock, so a loaded machine cannot turn the
    // memory bomb into a timeout.
    let host = Host::start(&config);
    // Warm-up: every kind of call, enough to fill the pools and the allocator.
    let warm = run(&host.url, 0..1_000).await;
    let after_warm_up = host.rss_kib();
    let (good, hostile) = run(&host.url, 1_000..1_000 + calls).await;
    let after_run = host.rss_kib();
    eprintln!(
        "{calls} calls ({good} good, {hostile} hostile) after {} warm-up calls: RSS {after_warm_up} KiB -> {after_run} KiB",
        warm.0 + warm.1
    );
    assert_eq!(good + hostile, calls);
    assert_eq!(
        hostile,
        (1_000..1_000 + calls)
            .filter(|&n| plan(n).is_some())
            .count()
    );
    assert!(
        after_run * 10 <= after_warm_up * 11,
        "resident memory grew more than 10% under load: {after_warm_up} KiB after warm-up, {after_run} KiB after {calls} calls"
    );

    // One audit line per call, warm-up included, each naming the principal
    // and the token's id; the token itself in none.
    let total = warm.0 + warm.1 + calls;
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let text = loop {
        let text = std::fs::read_to_string(&audit).unwrap_or_default();
        if text.lines().count() >= total || std::time::Instant::now() > deadline {
            break text;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let dropped: u64 = lines
        .iter()
        .filter(|l| l["event"] == "audit_dropped")
        .map(|l| l["count"].as_u64().unwrap_or(0))
        .sum();
    let calls_logged = lines.iter().filter(|l| l["event"] == "tool_call").count();
    assert_eq!(
        calls_logged, total,
        "{calls_logged} audit lines for {total} calls ({dropped} dropped)"
    );
    assert!(
        lines
            .iter()
            .all(|l| l["principal"] == "load" && l["token_id"] == "token-1"),
        "a line without the principal or the token id"
    );
    assert!(
        !text.contains(LOAD_TOKEN),
        "the bearer token is in the audit log"
    );
}
