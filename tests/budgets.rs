//! Every host resource a call can touch has a budget (issue #12, attacks 3-6):
//! hostile guests (`guest-examples/hostile-budget`) against the release host,
//! each ending with `resource_limit` and the budget's key in the details (or
//! getting nothing at all), while the host's resident memory and open
//! descriptors, read from `/proc`, stay within stated bounds and an ordinary
//! `add` beside the attack is answered within a second.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use common::attack::{self, Bounds, ORDINARY_DEADLINE, ordinary_add};
use common::host::guest;
use common::mcp_client::open_session;
use common::process::Host;
use serde_json::{Value, json};

/// A temporary directory with the configuration `toolhost.toml` of `plugins`
/// (TOML text; `{budget}`, `{calc}` and `{dir}` are replaced), the calc example
/// always loaded beside them.
struct Setup {
    dir: tempfile::TempDir,
}

impl Setup {
    fn new(host: &str, plugins: &str) -> Setup {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("files")).unwrap();
        std::fs::write(dir.path().join("files/a.txt"), "a").unwrap();
        let config = format!(
            "[host]\ndata_dir = \"{data}\"\n{host}\n\n[[plugin]]\npath = \"{calc}\"\n{plugins}",
            data = dir.path().join("data").display(),
            calc = guest("calc").display(),
        )
        .replace("{budget}", &guest("hostile_budget").display().to_string())
        .replace("{dir}", &dir.path().display().to_string());
        std::fs::write(dir.path().join("toolhost.toml"), config).unwrap();
        Setup { dir }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn start(&self) -> Host {
        Host::start(&self.path("toolhost.toml"))
    }

    /// Adds the component `file` as the plugin `name` and lists the tools:
    /// the host must refuse to load. Its stderr, which says why.
    fn refused_at_load(&self, name: &str, file: &Path) -> String {
        let config = std::fs::read_to_string(self.path("toolhost.toml")).unwrap()
            + &format!(
                "\n[[plugin]]\nname = \"{name}\"\npath = \"{}\"\n",
                file.display()
            );
        std::fs::write(self.path("toolhost.toml"), config).unwrap();
        let output = Command::new(env!("CARGO_BIN_EXE_toolhost"))
            .args(["tools", "--config"])
            .arg(self.path("toolhost.toml"))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(!output.status.success(), "{name} loaded: {stderr}");
        stderr
    }
}

/// The `budget` key anywhere in a failed call's envelope (its error details).
fn budget_of(message: &Value) -> Option<String> {
    fn find(value: &Value) -> Option<String> {
        match value {
            Value::Object(map) => map
                .get("budget")
                .and_then(Value::as_str)
                .map(str::to_owned)
                .or_else(|| map.values().find_map(find)),
            Value::Array(items) => items.iter().find_map(find),
            _ => None,
        }
    }
    let text = message["result"]["content"][0]["text"].as_str()?;
    find(&serde_json::from_str(text).ok()?)
}

/// Asserts a hostile call ended as `resource_limit` naming `budget`.
fn assert_budget(outcome: &attack::Outcome, budget: &str) {
    eprintln!(
        "{budget}: RSS {} -> {} MiB, fds {} -> {}, {} ordinary calls, slowest {:?}",
        outcome.rss_before_kib / 1024,
        outcome.peak_rss_kib / 1024,
        outcome.fds_before,
        outcome.peak_fds,
        outcome.ordinary_calls,
        outcome.slowest_ordinary
    );
    assert_eq!(
        outcome.code.as_deref(),
        Some("resource_limit"),
        "{}",
        outcome.message
    );
    assert_eq!(
        budget_of(&outcome.message).as_deref(),
        Some(budget),
        "{}",
        outcome.message
    );
}

/// A plugin of the hostile-budget guest named `name` with extra policy lines.
/// (8 s per call unless `policy` sets `timeout_ms`).
fn plugin(name: &str, policy: &str) -> String {
    let timeout = if policy.contains("timeout_ms") {
        ""
    } else {
        "timeout_ms = 8000\n"
    };
    format!(
        "\n[[plugin]]\nname = \"{name}\"\nprefix = \"{name}\"\npath = \"{{budget}}\"\n[plugin.policy]\n{timeout}{policy}\n"
    )
}

const READ_ONLY_FILES: &str =
    "[[plugin.policy.preopens]]\nhost = \"{dir}/files\"\nguest = \"/files\"\n";

#[tokio::test(flavor = "multi_thread")]
async fn files_opened_in_a_loop_end_at_max_resources_and_the_descriptors_stay_bounded() {
    let setup = Setup::new("", &plugin("b", READ_ONLY_FILES));
    let host = setup.start();
    let outcome = attack::run(
        &host,
        "b_open_files",
        json!({"path": "/files/a.txt", "count": 20_000}),
        ordinary_add(),
    )
    .await;
    assert_budget(&outcome, "max_resources");
    // At most the default 256 entries of the table are descriptors.
    outcome.within(Bounds {
        rss_mib: 256,
        fds: outcome.fds_before + 256 + 16,
    });
    // Within the budget the same tool works.
    let fine = attack::call(
        &host.url,
        "b_open_files",
        json!({"path": "/files/a.txt", "count": 100}),
    )
    .await;
    assert_eq!(
        fine["result"]["structuredContent"],
        json!({"opened": 100}),
        "{fine}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn without_a_network_rule_a_guest_gets_no_socket_at_all() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let setup = Setup::new("", &plugin("b", ""));
    let host = setup.start();
    let outcome = attack::run(
        &host,
        "b_open_sockets",
        json!({"host": "127.0.0.1", "port": port, "count": 20_000}),
        ordinary_add(),
    )
    .await;
    assert_eq!(outcome.code, None, "{}", outcome.message);
    let result = &outcome.message["result"]["structuredContent"];
    assert_eq!(result["connected"], json!(0), "{result}");
    assert_eq!(result["failed"], json!(20_000), "{result}");
    outcome.within(Bounds {
        rss_mib: 256,
        fds: outcome.fds_before + 16,
    });
    assert!(
        listener.accept().is_err(),
        "a guest without a network rule connected"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn sockets_under_a_network_rule_end_at_max_resources() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let setup = Setup::new(
        "",
        &plugin("b", &format!("network = [\"127.0.0.1:{port}\"]")),
    );
    let host = setup.start();
    let outcome = attack::run(
        &host,
        "b_open_sockets",
        json!({"host": "127.0.0.1", "port": port, "count": 20_000}),
        ordinary_add(),
    )
    .await;
    assert_budget(&outcome, "max_resources");
    outcome.within(Bounds {
        rss_mib: 256,
        fds: outcome.fds_before + 256 + 16,
    });
    drop(listener);
}

#[tokio::test(flavor = "multi_thread")]
async fn log_bytes_over_the_budget_end_as_resource_limit() {
    let setup = Setup::new("", &plugin("b", ""));
    let host = setup.start();
    // 1,000 lines of 1 MiB: 1 GB of log without a budget.
    let outcome = attack::run(
        &host,
        "b_log_flood",
        json!({"lines": 1000, "bytes": 1 << 20}),
        ordinary_add(),
    )
    .await;
    assert_budget(&outcome, "max_log_bytes");
    outcome.within(Bounds {
        rss_mib: 256,
        fds: outcome.fds_before + 16,
    });
    // Ordinary logging is within the budget.
    let fine = attack::call(&host.url, "b_log_flood", json!({"lines": 10, "bytes": 100})).await;
    assert_eq!(
        fine["result"]["structuredContent"],
        json!({"sent": 10}),
        "{fine}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn progress_bytes_over_the_budget_end_as_resource_limit() {
    let setup = Setup::new("", &plugin("b", ""));
    let host = setup.start();
    let outcome = attack::run(
        &host,
        "b_progress_flood",
        json!({"count": 1000, "bytes": 1 << 20}),
        ordinary_add(),
    )
    .await;
    assert_budget(&outcome, "max_progress_bytes");
    outcome.within(Bounds {
        rss_mib: 256,
        fds: outcome.fds_before + 16,
    });
}

#[tokio::test(flavor = "multi_thread")]
async fn a_megabyte_line_on_stdout_is_not_buffered_whole() {
    let setup = Setup::new("", &plugin("b", "memory_mib = 128"));
    let host = setup.start();
    // 64 MiB without a newline, in 4 KiB writes.
    let outcome = attack::run(
        &host,
        "b_stdout_line",
        json!({"bytes": 64 << 20}),
        ordinary_add(),
    )
    .await;
    assert_eq!(outcome.code, None, "{}", outcome.message);
    outcome.within(Bounds {
        rss_mib: 192,
        fds: outcome.fds_before + 16,
    });
}

/// Samples the RSS of `pid` every 10 ms until the returned flag is set.
fn sample_rss(pid: u32) -> (Arc<AtomicBool>, Arc<AtomicU64>, std::thread::JoinHandle<()>) {
    let done = Arc::new(AtomicBool::new(false));
    let peak = Arc::new(AtomicU64::new(attack::rss_kib(pid)));
    let thread = {
        let (done, peak) = (done.clone(), peak.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                peak.fetch_max(attack::rss_kib(pid), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    };
    (done, peak, thread)
}

/// Calls `add` over and over for `duration`, each answer within the deadline.
async fn ordinary_calls_for(url: &str, duration: Duration) -> usize {
    let until = Instant::now() + duration;
    let mut calls = 0;
    while Instant::now() < until {
        let started = Instant::now();
        let answer = attack::call(url, "add", json!({"a": 2, "b": 3})).await;
        assert!(
            started.elapsed() <= ORDINARY_DEADLINE,
            "add took {:?}",
            started.elapsed()
        );
        assert_eq!(answer["result"]["structuredContent"], json!({"sum": 5}));
        calls += 1;
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    calls
}

/// A client that asks for progress and does not read the response for 5 s,
/// while the guest sends 1 MiB progress messages in a loop (the byte budget
/// raised out of the way): the per-call queue coalesces progress, so the host
/// holds a bounded amount whatever the guest sends.
#[tokio::test(flavor = "multi_thread")]
async fn progress_to_a_client_that_does_not_read_keeps_the_host_bounded() {
    progress_to_a_client_that_does_not_read(Era::Stateless).await;
}

/// The same in a handshake-era session, where the progress goes through the
/// call's outlet into its response stream (`mcp::call_stream`).
#[tokio::test(flavor = "multi_thread")]
async fn progress_to_a_session_client_that_does_not_read_keeps_the_host_bounded() {
    progress_to_a_client_that_does_not_read(Era::Session).await;
}

enum Era {
    Stateless,
    Session,
}

async fn progress_to_a_client_that_does_not_read(era: Era) {
    let setup = Setup::new(
        "",
        &plugin(
            "b",
            "max_progress_bytes = 1000000000000\ntimeout_ms = 6000\nmemory_mib = 32",
        ),
    );
    let host = setup.start();
    let session = match era {
        Era::Stateless => None,
        Era::Session => Some(open_session(&host.url, "2025-11-25", None).await),
    };
    let before = host.rss_kib();
    let (done, peak, sampler) = sample_rss(host.pid());
    let mut params = json!({
        "name": "b_progress_flood",
        "arguments": {"count": 1_000_000, "bytes": 1 << 20},
        "_meta": {"progressToken": "slow-reader"},
    });
    let request = reqwest::Client::new()
        .post(&host.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("x-toolhost-output-mode", "compat");
    let request = match &session {
        None => {
            params["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2026-07-28");
            params["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({});
            request
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/call")
                .header("mcp-name", "b_progress_flood")
        }
        Some(session) => request
            .header("mcp-protocol-version", "2025-11-25")
            .header("mcp-session-id", session),
    };
    let response = request
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}))
        .send()
        .await
        .unwrap();
    // The body is not read while the guest floods.
    let calls = ordinary_calls_for(&host.url, Duration::from_secs(5)).await;
    assert!(calls > 0);
    let peak_mid = peak.load(Ordering::Relaxed);
    // Now read it all: the call ended at its deadline, after its progress.
    let text = tokio::time::timeout(Duration::from_secs(30), response.text())
        .await
        .expect("the response ends")
        .unwrap();
    done.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    assert!(
        text.contains("slow-reader"),
        "no progress reached the client"
    );
    assert!(
        text.contains("\"id\":1"),
        "no response: {}",
        &text[..200.min(text.len())]
    );
    let peak_kib = peak.load(Ordering::Relaxed).max(peak_mid);
    eprintln!(
        "a client not reading 1 MiB progress messages: RSS {} -> {} MiB, {} ordinary calls",
        before / 1024,
        peak_kib / 1024,
        calls
    );
    assert!(
        peak_kib <= before + 160 * 1024,
        "host RSS went from {} MiB to {} MiB while a client did not read",
        before / 1024,
        peak_kib / 1024
    );
}

/// A result over the plugin's `max_result_bytes` is refused before it is
/// converted: a 48 MB result under `memory_mib = 64` (attack 5).
#[tokio::test(flavor = "multi_thread")]
async fn a_result_over_max_result_bytes_is_refused_before_it_is_converted() {
    let setup = Setup::new("", &plugin("b", ""));
    let host = setup.start();
    let outcome = attack::run(
        &host,
        "b_big_result",
        json!({"bytes": 48_000_000}),
        ordinary_add(),
    )
    .await;
    assert_budget(&outcome, "max_result_bytes");
    // The guest's memory (64 MiB) and the lifted copy of its result, no more.
    outcome.within(Bounds {
        rss_mib: 320,
        fds: outcome.fds_before + 16,
    });
}

/// What converting and rendering one large result costs the host: peak RSS
/// over the baseline (guest memory, lifting, parsing, storing it as a link in
/// the default SQLite store), divided by the result's size, for a 32 MB result
/// of each shape, against the ratios stated for the threat model.
#[tokio::test(flavor = "multi_thread")]
async fn converting_a_large_result_costs_a_stated_multiple_of_it() {
    const BYTES: u64 = 32_000_000;
    let setup = Setup::new(
        "",
        &plugin("b", "memory_mib = 128\nmax_result_bytes = 67108864"),
    );
    let host = setup.start();
    // Warm up: the instance pool, the store, the allocator.
    let warm = attack::call(&host.url, "b_big_result", json!({"bytes": 1_000_000})).await;
    assert_eq!(attack::error_code(&warm), None, "{warm}");
    for (shape, bound) in [
        ("string", STRING_RESULT_RATIO),
        ("objects", OBJECT_RESULT_RATIO),
    ] {
        let outcome = attack::run(
            &host,
            "b_big_result",
            json!({"bytes": BYTES, "shape": shape}),
            ordinary_add(),
        )
        .await;
        assert_eq!(outcome.code, None, "{}", outcome.message);
        let grown = outcome.peak_rss_kib.saturating_sub(outcome.rss_before_kib) * 1024;
        let ratio = grown as f64 / BYTES as f64;
        eprintln!(
            "a {BYTES}-byte result of {shape}: host RSS {} -> {} MiB, {ratio:.1}x the result",
            outcome.rss_before_kib / 1024,
            outcome.peak_rss_kib / 1024
        );
        assert!(
            ratio <= bound,
            "a {BYTES}-byte result of {shape} grew the host by {ratio:.1}x the result (bound {bound}x)"
        );
    }
}

/// Host memory per byte of a result that is one long string (guest memory and
/// every copy included): the copies alone.
const STRING_RESULT_RATIO: f64 = 8.0;
/// Host memory per byte of a result of small JSON objects: dominated by the
/// parsed tree (`serde_json::Value`, order preserved), about 20 bytes per byte
/// of `{"id":1,"name":"item","ok":true}`.
const OBJECT_RESULT_RATIO: f64 = 24.0;

/// Eight large results at once under a host-wide budget of 16 MiB in flight:
/// they take turns (or fail with `resource_limit` when their deadline passes
/// while waiting) instead of being converted all at once.
#[tokio::test(flavor = "multi_thread")]
async fn many_large_results_at_once_wait_for_the_bytes_in_flight() {
    const BYTES: u64 = 12_000_000;
    const CALLS: usize = 8;
    let setup = Setup::new(
        "max_result_bytes_in_flight = 16777216",
        &plugin("b", "max_result_bytes = 33554432\ntimeout_ms = 20000"),
    );
    let host = setup.start();
    let before = host.rss_kib();
    let (done, peak, sampler) = sample_rss(host.pid());
    let calls: Vec<_> = (0..CALLS)
        .map(|_| {
            let url = host.url.clone();
            tokio::spawn(async move {
                attack::call(&url, "b_big_result", json!({"bytes": BYTES})).await
            })
        })
        .collect();
    let ordinary = ordinary_calls_for(&host.url, Duration::from_secs(2)).await;
    assert!(ordinary > 0);
    for call in calls {
        let message = call.await.unwrap();
        match attack::error_code(&message) {
            None => {}
            Some(code) => {
                assert_eq!(code, "resource_limit", "{message}");
                assert_eq!(
                    budget_of(&message).as_deref(),
                    Some("max_result_bytes_in_flight"),
                    "{message}"
                );
            }
        }
    }
    done.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    let peak_kib = peak.load(Ordering::Relaxed);
    eprintln!(
        "{CALLS} results of {BYTES} bytes at once: host RSS {} -> {} MiB",
        before / 1024,
        peak_kib / 1024
    );
    // Eight guests (up to 64 MiB each) and their lifted results may be held at
    // once; the conversions and renderings are limited to 16 MiB of results.
    let bound_mib = 8 * 64 + 16 * OBJECT_RESULT_RATIO as u64 + 128;
    assert!(
        peak_kib <= before + bound_mib * 1024,
        "host RSS went from {} MiB to {} MiB (bound: +{bound_mib} MiB)",
        before / 1024,
        peak_kib / 1024
    );
}

/// `path` with `count` extra core modules appended, each with a linear memory
/// of `mib` MiB whose pages its start function touches, each instantiated when
/// the component is: a component of several core instances with a memory each
/// (attack 6). The rest of the component is unchanged, so it still implements
/// the `plugin` world.
fn with_memory_hogs(path: &Path, count: usize, mib: u32) -> Vec<u8> {
    let mut component = std::fs::read(path).unwrap();
    let mut modules = 0u32;
    for payload in wasmparser::Parser::new(0).parse_all(&component) {
        if let wasmparser::Payload::ModuleSection { .. } = payload.unwrap() {
            modules += 1;
        }
    }
    // Nested modules' own payloads come after a ModuleSection; only top-level
    // ones count, and the guest's component nests no components.
    let pages = mib * 16;
    let hog = wat::parse_str(format!(
        r#"(module
            (memory {pages})
            (func $touch (local $at i32)
              (loop $next
                (i32.store8 (local.get $at) (i32.const 1))
                (local.set $at (i32.add (local.get $at) (i32.const 4096)))
                (br_if $next (i32.lt_u (local.get $at) (i32.const {bytes})))))
            (start $touch))"#,
        bytes = mib << 20
    ))
    .unwrap();
    for n in 0..count {
        section(&mut component, 1, &hog);
        let mut instance = vec![1, 0];
        leb(&mut instance, modules + n as u32);
        instance.push(0);
        section(&mut component, 2, &instance);
    }
    component
}

fn section(out: &mut Vec<u8>, id: u8, body: &[u8]) {
    out.push(id);
    leb(out, body.len() as u32);
    out.extend_from_slice(body);
}

fn leb(out: &mut Vec<u8>, mut value: u32) {
    loop {
        let byte = (value & 0x7f) as u8;
        value >>= 7;
        if value == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// `memory_mib` is the sum over the instance's memories: the same `grow` that
/// fits under 64 MiB in the plain guest ends as `resource_limit` in the one whose
/// three extra core instances already hold 48 MiB.
#[tokio::test(flavor = "multi_thread")]
async fn memory_mib_counts_every_memory_of_the_instance() {
    let setup = Setup::new("", &plugin("b", ""));
    let hogged = setup.path("hogged.wasm");
    std::fs::write(&hogged, with_memory_hogs(&guest("hostile_budget"), 3, 16)).unwrap();
    let config = std::fs::read_to_string(setup.path("toolhost.toml")).unwrap()
        + &format!(
            "\n[[plugin]]\nname = \"hog\"\nprefix = \"hog\"\npath = \"{}\"\n[plugin.policy]\ntimeout_ms = 8000\n",
            hogged.display()
        );
    std::fs::write(setup.path("toolhost.toml"), config).unwrap();
    let host = setup.start();
    let plain = attack::call(&host.url, "b_grow", json!({"mib": 30})).await;
    assert_eq!(
        plain["result"]["structuredContent"],
        json!({"grown": 30}),
        "{plain}"
    );
    let outcome = attack::run(&host, "hog_grow", json!({"mib": 30}), ordinary_add()).await;
    assert_budget(&outcome, "memory_mib");
    outcome.within(Bounds {
        rss_mib: 256,
        fds: outcome.fds_before + 16,
    });
}

/// A component whose core instances hold more than `memory_mib` together as
/// soon as it is instantiated (seven memories of 60 MiB under 64 MiB, ~480 MiB
/// before) does not load: `describe` is refused, naming the budget.
#[test]
fn a_component_holding_more_than_memory_mib_at_instantiation_does_not_load() {
    let setup = Setup::new("", "");
    let hogged = setup.path("hogged.wasm");
    std::fs::write(&hogged, with_memory_hogs(&guest("hostile_budget"), 7, 60)).unwrap();
    let stderr = setup.refused_at_load("hog", &hogged);
    assert!(
        stderr.contains("memory_mib") && stderr.contains("hogged.wasm"),
        "{stderr}"
    );
}

/// The engine is built without the WebAssembly proposals no toolhost guest
/// uses (threads' shared memory, GC types, stack switching): a component that
/// uses one is refused when it loads, naming the file and the proposal, and
/// the host never runs a line of it.
#[test]
fn a_component_using_a_proposal_the_engine_is_built_without_does_not_load() {
    let cases = [
        ("threads", "(memory 1 1 shared)", "threads must be enabled"),
        ("gc", "(type (struct (field i32)))", "gc types are disabled"),
        (
            "stack_switching",
            "(type $f (func)) (type (cont $f))",
            "stack switching is disabled",
        ),
    ];
    for (name, module, named) in cases {
        let setup = Setup::new("", "");
        let file = setup.path(&format!("{name}.wasm"));
        let component = wat::parse_str(format!("(component (core module {module}))"))
            .unwrap_or_else(|e| panic!("{name}: {e}"));
        std::fs::write(&file, component).unwrap();
        let stderr = setup.refused_at_load(name, &file);
        assert!(
            stderr.contains(&format!("{name}.wasm is not a valid WebAssembly component"))
                && stderr.contains(named),
            "{name}: {stderr}"
        );
    }
}
