//! The process-level half of `make bench` (issue #7): stdio calls/s against a
//! bare rmcp server, the same server running calc with wasmtime alone
//! (`wasmtime_add`), and wassette when `WASSETTE` names its binary; Streamable
//! HTTP throughput and latency under `wrk` (and what metrics, traces and the
//! audit log cost there, `bench/observing.rs`), start-up to the first `tools/list`,
//! resident memory. It then reads criterion's estimates of the in-process
//! benchmarks (`benches/call.rs`), prints one table and writes it into
//! `docs/benchmarks.md`.
//!
//! Environment: `TOOLHOST`, `NATIVE_ADD` and `WASMTIME_ADD` (the binaries), `CRITERION_DIR`
//! (criterion's output), optional `P1_COUNT` (the `p1_count` example, run under
//! valgrind for P1's instruction counts, `bench/count.rs`), optional `TOOLHOST_PGO` (the profile-guided build of
//! `make pgo`, whose stdio calls, start-up and memory are then measured beside
//! the plain build's), optional `CRITERION_PGO_DIR` (criterion's output for its
//! `call/` benchmarks built profile-guided by `make pgo-bench`), `WASSETTE`,
//! `WRK` (default `wrk`), `QUICK=1` (shorter runs).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

#[path = "bench/count.rs"]
mod count;
#[path = "bench/observing.rs"]
mod observing;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn rust_guest(name: &str) -> PathBuf {
    root().join(format!(
        "guest-examples/target/wasm32-wasip2/release/{name}.wasm"
    ))
}

fn lang_guest(name: &str) -> PathBuf {
    root().join(format!("guest-examples/target/lang/{name}.wasm"))
}

fn env_path(key: &str) -> Option<PathBuf> {
    std::env::var_os(key)
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

/// A server spoken to over stdio, one request at a time.
struct Stdio_ {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: u64,
}

impl Stdio_ {
    fn spawn(program: &Path, args: &[&str]) -> Stdio_ {
        let mut child = Command::new(program)
            .args(args)
            .env("TOOLHOST_LOG", "warn")
            .env("RUST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{}: {e}", program.display()));
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        Stdio_ {
            child,
            stdin,
            stdout,
            next_id: 1,
        }
    }

    fn send(&mut self, message: &Value) {
        let mut line = message.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).expect("write");
        self.stdin.flush().expect("flush");
    }

    fn send_request(&mut self, method: &str, params: Value) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    fn response(&mut self, id: u64) -> Value {
        let mut line = String::new();
        loop {
            line.clear();
            let n = self.stdout.read_line(&mut line).expect("read");
            assert!(n > 0, "the server closed stdout");
            let Ok(message) = serde_json::from_str::<Value>(&line) else {
                continue;
            };
            if message.get("id").and_then(Value::as_u64) == Some(id) {
                if let Some(error) = message.get("error") {
                    panic!("JSON-RPC error: {error}");
                }
                return message["result"].clone();
            }
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.send_request(method, params);
        self.response(id)
    }

    fn initialize(&mut self) -> Value {
        let result = self.request(
            "initialize",
            json!({"protocolVersion": "2025-03-26", "capabilities": {},
                   "clientInfo": {"name": "toolhost-bench", "version": "1"}}),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        result
    }

    fn rss_kib(&self) -> u64 {
        rss_kib(self.child.id())
    }
}

impl Drop for Stdio_ {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn rss_kib(pid: u32) -> u64 {
    status_kib(pid, "VmRSS:")
}

/// A memory figure of `/proc/<pid>/status` (`VmRSS:`, `RssAnon:`, ..), in KiB.
fn status_kib(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// A server under test over stdio: how to start it and which call is trivial.
#[derive(Clone)]
struct Subject {
    label: &'static str,
    program: PathBuf,
    args: Vec<String>,
    tool: String,
    arguments: Value,
}

impl Subject {
    fn start(&self) -> Stdio_ {
        let args: Vec<&str> = self.args.iter().map(String::as_str).collect();
        Stdio_::spawn(&self.program, &args)
    }

    fn call(&self, server: &mut Stdio_) -> Value {
        server.request(
            "tools/call",
            json!({"name": self.tool, "arguments": self.arguments}),
        )
    }
}

/// Sequential calls per second over one stdio connection, for `window`.
fn calls_per_second(subject: &Subject, server: &mut Stdio_, window: Duration) -> f64 {
    for _ in 0..50 {
        subject.call(server);
    }
    let started = Instant::now();
    let mut calls = 0u64;
    while started.elapsed() < window {
        subject.call(server);
        calls += 1;
    }
    calls as f64 / started.elapsed().as_secs_f64()
}

/// Time from spawning the process to the answer of `tools/list`, the resident
/// memory once it is idle, and how much of that is private (not mapped from files).
fn start_up(subject: &Subject) -> (Duration, u64, usize, u64) {
    let started = Instant::now();
    let mut server = subject.start();
    server.initialize();
    let listed = server.request("tools/list", json!({}));
    let elapsed = started.elapsed();
    let tools = listed["tools"].as_array().map_or(0, Vec::len);
    std::thread::sleep(Duration::from_millis(300));
    let private = status_kib(server.child.id(), "RssAnon:");
    (elapsed, server.rss_kib(), tools, private)
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
}

fn toolhost_config(name: &str, plugins: &[(String, PathBuf)], extra: &str) -> PathBuf {
    let dir = root().join("target/bench").join(name);
    std::fs::create_dir_all(&dir).expect("bench dir");
    let mut toml = format!("[host]\ndata_dir = \"{}\"\n", dir.join("data").display());
    for (plugin, path) in plugins {
        write!(
            toml,
            "[[plugin]]\nname = \"{plugin}\"\nprefix = \"{plugin}\"\npath = \"{}\"\n{extra}",
            path.display()
        )
        .unwrap();
    }
    let file = dir.join("toolhost.toml");
    std::fs::write(&file, toml).expect("config");
    file
}

fn rust_examples() -> Vec<(String, PathBuf)> {
    [
        "hello",
        "calc",
        "files",
        "media",
        "bulk",
        "errors",
        "word_stats",
        "conformance",
    ]
    .iter()
    .map(|n| (n.replace('_', ""), rust_guest(n)))
    .collect()
}

/// The measured rows: (what, measured, target, ratio or verdict).
#[derive(Default)]
struct Table {
    rows: Vec<[String; 4]>,
}

impl Table {
    fn row(&mut self, what: &str, measured: String, target: &str, verdict: String) {
        println!("  {what}: {measured} (target {target}; {verdict})");
        self.rows
            .push([what.into(), measured, target.into(), verdict]);
    }

    fn markdown(&self) -> String {
        let mut out = String::from(
            "| measurement | measured | target | ratio / verdict |\n|---|---|---|---|\n",
        );
        for [a, b, c, d] in &self.rows {
            writeln!(out, "| {a} | {b} | {c} | {d} |").unwrap();
        }
        out
    }
}

fn verdict(pass: bool) -> &'static str {
    if pass { "met" } else { "NOT met" }
}

/// P2s's verdict on toolhost's stdio calls/s: its ratio to the bare rmcp server's.
fn p2s_verdict(toolhost: f64, native: f64) -> String {
    let ratio = toolhost / native;
    format!("{ratio:.2}× ({})", verdict(ratio >= 0.9))
}

/// P4's verdict on the start-up time of the Rust examples: its ratio to 50 ms.
fn p4_verdict(t: Duration) -> String {
    let seconds = t.as_secs_f64();
    format!(
        "{:.2}× target ({})",
        seconds / 0.05,
        verdict(seconds <= 0.05)
    )
}

/// P5's verdict on the idle `VmRSS` of the Rust examples, in KiB: its ratio to 30 MB.
fn p5_verdict(kib: u64) -> String {
    let bytes = kib as f64 * 1024.0;
    format!("{:.2}× target ({})", bytes / 30e6, verdict(bytes <= 30e6))
}

fn ms(d: Duration) -> String {
    format!("{:.1} ms", d.as_secs_f64() * 1e3)
}

fn mib(kib: u64) -> String {
    format!("{:.1} MiB", kib as f64 / 1024.0)
}

/// P1's rows from one build's criterion estimates `est`: its text path, which
/// every edge sends a call's result by, and the typed path (labelled `what`),
/// each against the floor of the same build.
fn p1_rows(table: &mut Table, est: &BTreeMap<String, f64>, what: [&str; 2]) {
    let Some(floor) = est.get("call/floor") else {
        return;
    };
    let calls = ["call/toolhost/pooling-text", "call/toolhost/pooling"];
    for (n, (what, id)) in what.into_iter().zip(calls).enumerate() {
        let Some(call) = est.get(id) else { continue };
        let ratio = call / floor;
        // The goal is the edges' path; the typed one is shown for comparison.
        let (target, verdict_text) = match n {
            0 => (
                "≤ 1.3× floor",
                format!("{ratio:.2}× ({})", verdict(ratio <= 1.3)),
            ),
            _ => ("—", format!("{ratio:.2}×")),
        };
        table.row(
            what,
            format!("{:.1} µs vs {:.1} µs", call / 1e3, floor / 1e3),
            target,
            verdict_text,
        );
    }
}

/// criterion's mean estimates, by benchmark id, in nanoseconds.
fn criterion_estimates(dir: &Path) -> BTreeMap<String, f64> {
    let mut found = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.ends_with("new/benchmark.json") {
                let read = |p: &Path| -> Option<Value> {
                    serde_json::from_str(&std::fs::read_to_string(p).ok()?).ok()
                };
                let (Some(bench), Some(est)) =
                    (read(&path), read(&path.with_file_name("estimates.json")))
                else {
                    continue;
                };
                if let (Some(id), Some(mean)) = (
                    bench["full_id"].as_str(),
                    est["mean"]["point_estimate"].as_f64(),
                ) {
                    found.insert(id.to_owned(), mean);
                }
            }
        }
    }
    found
}

fn wait_for_port(addr: &str) {
    for _ in 0..600 {
        if std::net::TcpStream::connect(addr).is_ok() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    panic!("nothing listens on {addr}");
}

/// `curl` a JSON-RPC POST; returns the headers and body.
fn curl(url: &str, headers: &[(&str, &str)], body: &Value) -> String {
    let mut cmd = Command::new("curl");
    cmd.args([
        "-s",
        "-i",
        "-X",
        "POST",
        url,
        "--data-binary",
        &body.to_string(),
    ]);
    for (k, v) in headers {
        cmd.args(["-H", &format!("{k}: {v}")]);
    }
    let out = cmd.output().expect("curl");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

struct WrkResult {
    rps: f64,
    p50: f64,
    p99: f64,
    errors: u64,
}

fn parse_duration_ms(s: &str) -> f64 {
    let s = s.trim();
    let (n, scale) = if let Some(v) = s.strip_suffix("us") {
        (v, 1e-3)
    } else if let Some(v) = s.strip_suffix("ms") {
        (v, 1.0)
    } else if let Some(v) = s.strip_suffix('s') {
        (v, 1e3)
    } else {
        (s, 1.0)
    };
    n.parse::<f64>().unwrap_or(f64::NAN) * scale
}

fn wrk(url: &str, script: &Path, connections: u32, seconds: u32) -> WrkResult {
    let wrk = std::env::var("WRK").unwrap_or_else(|_| "wrk".into());
    let out = Command::new(wrk)
        .args([
            "-t",
            &connections.min(2).to_string(),
            "-c",
            &connections.to_string(),
            "-d",
            &format!("{seconds}s"),
            "--latency",
            "-s",
            script.to_str().unwrap(),
            url,
        ])
        .output()
        .expect("wrk");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut result = WrkResult {
        rps: 0.0,
        p50: f64::NAN,
        p99: f64::NAN,
        errors: 0,
    };
    for line in text.lines() {
        let line = line.trim();
        if let Some(v) = line.strip_prefix("Requests/sec:") {
            result.rps = v.trim().parse().unwrap_or(0.0);
        } else if let Some(v) = line.strip_prefix("50%") {
            result.p50 = parse_duration_ms(v);
        } else if let Some(v) = line.strip_prefix("99%") {
            result.p99 = parse_duration_ms(v);
        } else if let Some(v) = line.strip_prefix("Non-2xx or 3xx responses:") {
            result.errors += v.trim().parse::<u64>().unwrap_or(0);
        } else if let Some(v) = line.strip_prefix("Socket errors:") {
            result.errors += v
                .split(',')
                .filter_map(|p| p.split_whitespace().last()?.parse::<u64>().ok())
                .sum::<u64>();
        }
    }
    result
}

fn wrk_script(path: &Path, headers: &[(&str, &str)], body: &Value) {
    let mut lua = String::from("wrk.method = \"POST\"\n");
    for (k, v) in headers {
        writeln!(lua, "wrk.headers[\"{k}\"] = \"{v}\"").unwrap();
    }
    // Every request gets an id of its own ("<thread>-<n>"): within a session,
    // rmcp keeps requests apart by id, and wrk's one static body would reuse one.
    let mut template = body.clone();
    template["id"] = json!("__ID__");
    let template = template.to_string().replace("\"__ID__\"", "\"%s\"");
    assert!(!template.contains("%%"), "no % in the body");
    writeln!(
        lua,
        "local template = [[{template}]]\n\
         local threads = 0\n\
         function setup(thread) threads = threads + 1; thread:set(\"tid\", threads) end\n\
         local counter = 0\n\
         function request()\n  counter = counter + 1\n  \
         return wrk.format(nil, nil, nil, string.format(template, tostring(tid) .. \"-\" .. counter))\nend"
    )
    .unwrap();
    std::fs::write(path, lua).expect("lua");
}

const MODERN_META: &str = "io.modelcontextprotocol/protocolVersion";

fn main() {
    let quick = std::env::var("QUICK").is_ok_and(|v| v == "1");
    let window = Duration::from_millis(if quick { 800 } else { 2_000 });
    let rounds = if quick { 1 } else { 3 };
    let wrk_seconds = if quick { 2 } else { 4 };
    let toolhost = env_path("TOOLHOST").unwrap_or_else(|| root().join("target/release/toolhost"));
    // The profile-guided build of `make pgo`, measured beside the plain one.
    let toolhost_pgo = env_path("TOOLHOST_PGO");
    let native = env_path("NATIVE_ADD").expect("NATIVE_ADD names the native rmcp server");
    let wasmtime_add = env_path("WASMTIME_ADD")
        .expect("WASMTIME_ADD names the rmcp server calling calc with wasmtime");
    let wassette = env_path("WASSETTE");
    let criterion = env_path("CRITERION_DIR").unwrap_or_else(|| root().join("target/criterion"));
    // criterion's output for its benchmark built profile-guided by `make pgo-bench`.
    let criterion_pgo = env_path("CRITERION_PGO_DIR");
    let mut table = Table::default();
    let mut notes: Vec<String> = Vec::new();

    // ---- P1, pool, P3: criterion's estimates.
    let est = criterion_estimates(&criterion);
    let get = |id: &str| est.get(id).copied();
    println!("in-process (criterion):");
    if get("call/floor").is_some()
        && let Some(pooling) = get("call/toolhost/pooling")
    {
        // P1: the text the mapper writes, as every edge sends a call's result
        // (stdio, HTTP with or without a session), and for comparison the
        // typed result rmcp serializes (left to a 2025-11-25 task's result).
        p1_rows(
            &mut table,
            &est,
            [
                "P1 one call in process (validate, fresh instance, call, render) vs raw wasmtime floor: the result's text written by the mapper, as every edge sends it (stdio, HTTP with or without a session)",
                "P1 typed, for comparison: the same call rendered as rmcp's typed result, which only a 2025-11-25 task's result still goes through",
            ],
        );
        // The same two rows from criterion's benchmark built profile-guided by
        // `make pgo-bench` (floor and toolhost alike), when `PGO=1 make bench` ran it.
        if let Some(pgo_est) = criterion_pgo.as_deref().map(criterion_estimates) {
            p1_rows(
                &mut table,
                &pgo_est,
                [
                    "P1 profile-guided (`make pgo-bench`: trained on this loop, floor and toolhost alike)",
                    "P1 typed, profile-guided (`make pgo-bench`)",
                ],
            );
        }
        // The same two ratios by instruction count, which the VM's load does not
        // move (`p1_count` under callgrind).
        if let Some(bin) = env_path("P1_COUNT") {
            let calls = if quick { (100, 300) } else { (500, 2500) };
            match count::p1(&bin, calls) {
                Ok(counts) => {
                    for (what, call, goal) in [
                        (
                            "P1 by instruction count (callgrind): the call vs the floor",
                            counts.text,
                            true,
                        ),
                        (
                            "P1 typed by instruction count (callgrind), for comparison",
                            counts.typed,
                            false,
                        ),
                    ] {
                        let ratio = call / counts.floor;
                        let (target, verdict_text) = match goal {
                            true => (
                                "≤ 1.3× floor",
                                format!("{ratio:.3}× ({})", verdict(ratio <= 1.3)),
                            ),
                            false => ("—", format!("{ratio:.3}×")),
                        };
                        table.row(
                            what,
                            format!("{call:.0} vs {:.0} instructions", counts.floor),
                            target,
                            verdict_text,
                        );
                    }
                }
                Err(note) => notes.push(note),
            }
        }
        if let Some(on_demand) = get("call/toolhost/on-demand") {
            table.row(
                "Instance pool: call with pooling vs on-demand allocator",
                format!("{:.1} µs vs {:.1} µs", pooling / 1e3, on_demand / 1e3),
                "pooling faster",
                format!("on-demand is {:.2}× pooling", on_demand / pooling),
            );
        }
    } else {
        notes.push(format!(
            "No criterion estimates under {}: run `cargo bench --bench call` first.",
            criterion.display()
        ));
    }
    // P3: each renderer to the bytes a client receives, beside the floor (the data
    // alone written once by serde_json), as text (every edge: the mapper writes
    // the text) and, for comparison, typed (rmcp serializes the typed result, as
    // for a 2025-11-25 task's result). The 24 KB goal holds for the revisions
    // without structured content on the edges' path; the others carry the data
    // twice (structured content and text) and are shown as they are.
    let edges = [
        (
            "render-text",
            "as text (every edge: stdio, HTTP with or without a session)",
        ),
        (
            "render",
            "typed for MCP, for comparison (a 2025-11-25 task's result)",
        ),
    ];
    for (size, (group_name, edge)) in ["1KB", "24KB", "1MB"]
        .into_iter()
        .flat_map(|size| edges.map(|edge| (size, edge)))
    {
        let prefix = format!("{group_name}/{size}/");
        let floor = get(&format!("render/{size}/floor"));
        let per: Vec<(&str, f64)> = est
            .iter()
            .filter_map(|(k, v)| Some((k.strip_prefix(&prefix)?, *v)))
            .filter(|(k, _)| *k != "floor")
            .collect();
        if per.is_empty() {
            continue;
        }
        let floor_text = floor.map_or_else(String::new, |f| format!("; floor {:.1} µs", f / 1e3));
        let early = |id: &str| id.starts_with("mcp-2024-11-05") || id.starts_with("mcp-2025-03-26");
        let groups: Vec<(&str, Vec<(&str, f64)>)> = if size == "24KB" {
            vec![
                (
                    "2024-11-05 to 2025-03-26",
                    per.iter().copied().filter(|(k, _)| early(k)).collect(),
                ),
                (
                    "the others",
                    per.iter().copied().filter(|(k, _)| !early(k)).collect(),
                ),
            ]
        } else {
            vec![("all", per.clone())]
        };
        for (label, group) in groups {
            let Some(&(worst_id, worst)) = group.iter().max_by(|a, b| a.1.total_cmp(&b.1)) else {
                continue;
            };
            let &(best_id, best) = group.iter().min_by(|a, b| a.1.total_cmp(&b.1)).unwrap();
            let measured = format!(
                "{:.1}–{:.1} µs (fastest {best_id}, slowest {worst_id}){floor_text}",
                best / 1e3,
                worst / 1e3,
            );
            let of_floor = floor.map_or_else(String::new, |f| {
                format!(", slowest {:.2}× floor", worst / f)
            });
            let (target, verdict_text) =
                if size == "24KB" && label != "the others" && group_name == "render-text" {
                    (
                        "≤ 20 µs",
                        format!(
                            "slowest {:.2}× target ({}){of_floor}",
                            worst / 20_000.0,
                            verdict(worst <= 20_000.0)
                        ),
                    )
                } else {
                    ("—", format!("—{of_floor}"))
                };
            table.row(
                &format!(
                    "P3 mapper to wire bytes {edge}, {size} result, {label} ({} renderers)",
                    group.len()
                ),
                measured,
                target,
                verdict_text,
            );
        }
    }
    if let Some(offload) = get("offload/sqlite/1MB") {
        table.row(
            "P3 offload + link of a 1 MB result, SQLite",
            format!("{:.2} ms", offload / 1e6),
            "≤ 5 ms",
            format!("{:.2}× target ({})", offload / 5e6, verdict(offload <= 5e6)),
        );
    }

    // ---- Outgoing HTTP (issue #13): the same GET through the host and natively,
    // measured side by side in rounds by benches/call.rs.
    let side_by_side: Option<Value> =
        std::fs::read_to_string(criterion.join("http-side-by-side.json"))
            .ok()
            .and_then(|text| serde_json::from_str(&text).ok());
    if let Some(http) = side_by_side {
        let ns = |id: &str| http["median_ns"][id].as_f64();
        if let (Some(request), Some(no_request), Some(hyper), Some(fresh), Some(kept)) = (
            ns("http/toolhost/request"),
            ns("http/toolhost/no-request"),
            ns("http/native/hyper-new-connection"),
            ns("http/native/new-connection"),
            ns("http/native/keep-alive"),
        ) {
            let added = request - no_request;
            let ratio = http["ratio_median"].as_f64().unwrap_or(added / hyper);
            let quartiles = &http["ratio_quartiles"];
            table.row(
                "HTTP: one outgoing GET (64 bytes, local server) through the host (http_probe's call with it − the same plugin's call without) vs hyper alone, a new connection each; medians of rounds side by side",
                format!(
                    "{:.1} µs ({:.1} − {:.1}) vs {:.1} µs",
                    added / 1e3,
                    request / 1e3,
                    no_request / 1e3,
                    hyper / 1e3
                ),
                "—",
                format!(
                    "{ratio:.2}× native (rounds' quartiles {:.2}×–{:.2}×)",
                    quartiles[0].as_f64().unwrap_or(f64::NAN),
                    quartiles[1].as_f64().unwrap_or(f64::NAN)
                ),
            );
            table.row(
                "HTTP: the request through the host vs reqwest, a new connection each / kept alive",
                format!(
                    "{:.1} µs vs {:.1} µs / {:.1} µs",
                    added / 1e3,
                    fresh / 1e3,
                    kept / 1e3
                ),
                "—",
                format!("{:.2}× / {:.2}×", added / fresh, added / kept),
            );
        }
    } else {
        notes.push(format!(
            "No outgoing-HTTP figures ({}): run `cargo bench --bench call` first.",
            criterion.join("http-side-by-side.json").display()
        ));
    }

    // ---- P2s: sequential stdio calls, side by side, alternating.
    println!("stdio (P2s):");
    let examples_cfg = toolhost_config("stdio", &[("calc".into(), rust_guest("calc"))], "");
    let mut subjects = vec![
        Subject {
            label: "toolhost",
            program: toolhost.clone(),
            args: vec![
                "serve".into(),
                "--config".into(),
                examples_cfg.display().to_string(),
            ],
            tool: "calc_add".into(),
            arguments: json!({"a": 2, "b": 3}),
        },
        Subject {
            label: "native rmcp",
            program: native.clone(),
            args: vec![],
            tool: "add".into(),
            arguments: json!({"a": 2, "b": 3}),
        },
        Subject {
            label: "rmcp + wasmtime",
            program: wasmtime_add.clone(),
            args: vec![rust_guest("calc").display().to_string()],
            tool: "add".into(),
            arguments: json!({"a": 2, "b": 3}),
        },
    ];
    if let Some(pgo) = &toolhost_pgo {
        subjects.push(Subject {
            label: "toolhost (PGO)",
            program: pgo.clone(),
            ..subjects[0].clone()
        });
    }
    let wassette_dir = root().join("target/bench/wassette-plugins");
    if let Some(wassette) = &wassette {
        let _ = std::fs::remove_dir_all(&wassette_dir);
        std::fs::create_dir_all(&wassette_dir).expect("dir");
        std::fs::copy(rust_guest("calc"), wassette_dir.join("calc.wasm")).expect("copy");
        let probe = Subject {
            label: "wassette",
            program: wassette.clone(),
            args: vec![
                "serve".into(),
                "--stdio".into(),
                "--plugin-dir".into(),
                wassette_dir.display().to_string(),
            ],
            tool: String::new(),
            arguments: Value::Null,
        };
        let mut server = probe.start();
        server.initialize();
        // wassette loads the plugin directory in the background: ask until the tool is there.
        let mut tool = None;
        for _ in 0..200 {
            let listed = server.request("tools/list", json!({}));
            tool = listed["tools"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|t| t["name"].as_str())
                .find(|n| n.ends_with("call") && !n.contains("load"))
                .map(str::to_owned);
            if tool.is_some() {
                break;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        match tool {
            Some(tool) => {
                let arguments = json!({"name": "add", "arguments": "{\"a\":2,\"b\":3}",
                    "context": {"caller": null, "request-id": "1", "deadline": null}});
                let answer = server.request("tools/call", json!({"name": tool, "arguments": arguments}));
                println!("  wassette: {tool} answers {answer}");
                if answer["isError"] == json!(true) || !answer.to_string().contains("sum") {
                    notes.push(format!("wassette's {tool} did not answer the sum, so it is left out: {answer}"));
                } else {
                    subjects.push(Subject { tool, arguments, ..probe });
                }
            }
            None => notes.push("wassette did not list calc's `call` function as a tool within 10 s; it is left out.".into()),
        }
    }
    let mut rates: BTreeMap<&str, Vec<f64>> = BTreeMap::new();
    for round in 0..rounds {
        for subject in &subjects {
            let mut server = subject.start();
            server.initialize();
            let answer = subject.call(&mut server);
            if round == 0 {
                println!("  {}: {}", subject.label, answer);
            }
            let rate = calls_per_second(subject, &mut server, window);
            rates.entry(subject.label).or_default().push(rate);
        }
    }
    let rate = |label: &str| rates.get(label).map(|v| median(v.clone()));
    let (th, nat) = (rate("toolhost").unwrap(), rate("native rmcp").unwrap());
    table.row(
        "P2s sequential stdio calls/s, toolhost vs bare rmcp native `add`",
        format!("{th:.0} vs {nat:.0} calls/s"),
        "≥ 0.9×",
        p2s_verdict(th, nat),
    );
    let sandboxed = rate("rmcp + wasmtime").unwrap();
    table.row(
        "P2s split: bare rmcp whose `add` runs calc in a fresh instance with wasmtime alone, vs native `add`",
        format!("{sandboxed:.0} vs {nat:.0} calls/s"),
        "—",
        format!("{:.2}× (a server instantiating per call, on rmcp's own stdio)", sandboxed / nat),
    );
    table.row(
        "P2s split: toolhost vs that rmcp + wasmtime server (what toolhost adds)",
        format!("{th:.0} vs {sandboxed:.0} calls/s"),
        "—",
        format!("{:.2}×", th / sandboxed),
    );
    if let Some(pgo) = rate("toolhost (PGO)") {
        table.row(
            "P2s with the profile-guided build (`make pgo`) vs bare rmcp native `add`",
            format!("{pgo:.0} vs {nat:.0} calls/s"),
            "≥ 0.9×",
            format!(
                "{}; {:.2}× the plain build",
                p2s_verdict(pgo, nat),
                pgo / th
            ),
        );
    }
    if let Some(ws) = rate("wassette") {
        table.row(
            "Peer: stdio calls/s, toolhost vs wassette (same calc.wasm)",
            format!("{th:.0} vs {ws:.0} calls/s"),
            "≥ 1.6×",
            format!("{:.2}× ({})", th / ws, verdict(th / ws >= 1.6)),
        );
        if let Some(pgo) = rate("toolhost (PGO)") {
            table.row(
                "Peer with the profile-guided build (`make pgo`) vs wassette",
                format!("{pgo:.0} vs {ws:.0} calls/s"),
                "≥ 1.6×",
                format!("{:.2}× ({})", pgo / ws, verdict(pgo / ws >= 1.6)),
            );
        }
    }

    // ---- P4, P5: start-up and memory.
    println!("start-up and memory (P4, P5):");
    let startup_of =
        |program: &Path, label: &'static str, cfg: &Path, runs: usize, cold_dir: Option<&Path>| {
            let subject = Subject {
                label,
                program: program.to_owned(),
                args: vec!["serve".into(), "--config".into(), cfg.display().to_string()],
                tool: String::new(),
                arguments: Value::Null,
            };
            let mut times = Vec::new();
            let mut rss = Vec::new();
            let mut private = Vec::new();
            let mut tools = 0;
            for _ in 0..runs {
                if let Some(dir) = cold_dir {
                    let _ = std::fs::remove_dir_all(dir);
                }
                let (t, r, n, p) = start_up(&subject);
                times.push(t.as_secs_f64());
                rss.push(r as f64);
                private.push(p as f64);
                tools = n;
            }
            (
                Duration::from_secs_f64(median(times)),
                median(rss) as u64,
                tools,
                median(private) as u64,
            )
        };
    let startup = |label: &'static str, cfg: &Path, runs: usize, cold_dir: Option<&Path>| {
        startup_of(&toolhost, label, cfg, runs, cold_dir)
    };
    let examples = rust_examples();
    let examples_cfg = toolhost_config("examples", &examples, "");
    startup("warm", &examples_cfg, 1, None);
    let (t, rss, n, private) = startup("examples", &examples_cfg, 7, None);
    table.row(
        &format!(
            "P4 start-up to first tools/list, the {} Rust examples ({n} tools), compile cache",
            examples.len()
        ),
        ms(t),
        "≤ 50 ms",
        p4_verdict(t),
    );
    table.row(
        "P5 resident memory, the examples idle (of which private: not mapped from the binary or the compiled components)",
        format!("{} ({})", mib(rss), mib(private)),
        "≤ 30 MB",
        p5_verdict(rss),
    );
    if let Some(pgo) = &toolhost_pgo {
        startup_of(pgo, "pgo-warm", &examples_cfg, 1, None);
        let (pgo_t, pgo_rss, _, pgo_private) = startup_of(pgo, "pgo", &examples_cfg, 7, None);
        table.row(
            "P4 start-up with the profile-guided build (`make pgo`), the Rust examples",
            ms(pgo_t),
            "≤ 50 ms",
            format!(
                "{}; {:.2}× the plain build",
                p4_verdict(pgo_t),
                pgo_t.as_secs_f64() / t.as_secs_f64()
            ),
        );
        table.row(
            "P5 resident memory with the profile-guided build (`make pgo`), the examples idle (private)",
            format!("{} ({})", mib(pgo_rss), mib(pgo_private)),
            "≤ 30 MB",
            format!(
                "{}; {:.2}× the plain build",
                p5_verdict(pgo_rss),
                pgo_rss as f64 / rss as f64
            ),
        );
    }
    let mut ten = rust_examples();
    ten.push(("js".into(), lang_guest("js_tools")));
    ten.push(("py".into(), lang_guest("py_tools")));
    let ten_cfg = toolhost_config("ten", &ten, "");
    let cache = root().join("target/bench/ten/data/compile-cache");
    let (cold, _, n, _) = startup("ten-cold", &ten_cfg, 1, Some(&cache));
    table.row(
        &format!(
            "P4 start-up, {} plugins incl. JS and Python ({n} tools), cold (compiles)",
            ten.len()
        ),
        ms(cold),
        "—",
        "—".into(),
    );
    let (cached, rss10, _, _) = startup("ten-cached", &ten_cfg, 5, None);
    table.row(
        &format!(
            "P4 start-up, {} plugins incl. JS and Python, cached",
            ten.len()
        ),
        ms(cached),
        "≤ 300 ms",
        format!(
            "{:.2}× target ({})",
            cached.as_secs_f64() / 0.3,
            verdict(cached.as_secs_f64() <= 0.3)
        ),
    );
    table.row(
        &format!(
            "P5 resident memory, {} plugins incl. JS and Python idle",
            ten.len()
        ),
        mib(rss10),
        "—",
        "—".into(),
    );
    let hundred: Vec<(String, PathBuf)> = (0..100)
        .map(|i| {
            let name = ["hello", "calc", "word_stats", "errors"][i % 4];
            (format!("p{i}"), rust_guest(name))
        })
        .collect();
    let hundred_cfg = toolhost_config("hundred", &hundred, "");
    startup("hundred-warm", &hundred_cfg, 1, None);
    let (t100, rss100, n100, _) = startup("hundred", &hundred_cfg, 3, None);
    table.row(
        &format!("P5 resident memory, 100 plugins ({n100} tools; hello, calc, word_stats, errors ×25), idle"),
        format!("{} (start-up {})", mib(rss100), ms(t100)),
        "≤ 512 MiB",
        format!("{:.2}× target ({})", rss100 as f64 / (512.0 * 1024.0), verdict(rss100 <= 512 * 1024)),
    );

    // Peer start-up and memory: wassette with calc.wasm in its plugin directory.
    if let Some(ws) = subjects.iter().find(|s| s.label == "wassette") {
        let mut times = Vec::new();
        let mut rss = Vec::new();
        for _ in 0..5 {
            let started = Instant::now();
            let mut server = ws.start();
            server.initialize();
            // Its first tools/list may come before the plugin is loaded: until calc's tool is listed.
            loop {
                let listed = server.request("tools/list", json!({}));
                if listed["tools"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|t| t["name"] == ws.tool.as_str())
                {
                    break;
                }
                assert!(
                    started.elapsed() < Duration::from_secs(30),
                    "wassette never listed {}",
                    ws.tool
                );
            }
            times.push(started.elapsed().as_secs_f64());
            std::thread::sleep(Duration::from_millis(300));
            rss.push(server.rss_kib() as f64);
        }
        let one_cfg = toolhost_config("one", &[("calc".into(), rust_guest("calc"))], "");
        let (t1, rss1, _, _) = startup("one", &one_cfg, 5, None);
        let (tw, rw) = (median(times), median(rss));
        table.row(
            "Peer: start-up to calc's tool listed, toolhost vs wassette (calc.wasm only, cached)",
            format!("{} vs {}", ms(t1), ms(Duration::from_secs_f64(tw))),
            "faster",
            format!(
                "{:.2}× faster ({})",
                tw / t1.as_secs_f64(),
                verdict(tw > t1.as_secs_f64())
            ),
        );
        table.row(
            "Peer: resident memory idle, toolhost vs wassette (calc.wasm only)",
            format!("{} vs {}", mib(rss1), mib(rw as u64)),
            "less",
            format!(
                "{:.2}× less ({})",
                rw / rss1 as f64,
                verdict(rw > rss1 as f64)
            ),
        );
    }

    // ---- P2h: Streamable HTTP under wrk.
    println!("Streamable HTTP (P2h):");
    let http_plugins = vec![
        ("calc".to_owned(), rust_guest("calc")),
        ("conformance".to_owned(), rust_guest("conformance")),
    ];
    let http_cfg = toolhost_config(
        "http",
        &http_plugins,
        "[plugin.policy]\nmax_instances = 128\n",
    );
    let addr = "127.0.0.1:18947";
    let url = format!("http://{addr}/mcp");
    let mut server = Command::new(&toolhost)
        .args([
            "serve",
            "--http",
            addr,
            "--config",
            http_cfg.to_str().unwrap(),
        ])
        .env("TOOLHOST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("toolhost serve --http");
    wait_for_port(addr);
    let dir = root().join("target/bench/http");
    let call_body = |tool: &str, arguments: Value, modern: bool| {
        let mut params = json!({"name": tool, "arguments": arguments});
        if modern {
            params["_meta"] = json!({MODERN_META: "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}});
        }
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
    };
    let base = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    // 2026-07-28: stateless, every request stands alone.
    let mut modern_headers = base.to_vec();
    modern_headers.extend([
        ("Mcp-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "calc_add"),
    ]);
    let body = call_body("calc_add", json!({"a": 2, "b": 3}), true);
    let check = curl(&url, &modern_headers, &body);
    println!(
        "  2026-07-28 check: answered a result: {}",
        check.contains("\"result\"")
    );
    if !check.contains("\"result\"") {
        notes.push(format!(
            "The 2026-07-28 HTTP call did not answer a result: {check}"
        ));
    }
    let modern_script = dir.join("modern.lua");
    wrk_script(&modern_script, &modern_headers, &body);
    // Handshake era (2025-11-25): one session, initialised here, shared by every connection.
    let init = curl(
        &url,
        &base,
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}}}),
    );
    let session = init.lines().find_map(|l| {
        let (k, v) = l.split_once(':')?;
        k.eq_ignore_ascii_case("mcp-session-id")
            .then(|| v.trim().to_owned())
    });
    let handshake_script = dir.join("handshake.lua");
    let mut handshake_ok = false;
    if let Some(session) = &session {
        let mut headers = base.to_vec();
        headers.extend([
            ("Mcp-Protocol-Version", "2025-11-25"),
            ("Mcp-Session-Id", session.as_str()),
        ]);
        curl(
            &url,
            &headers,
            &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        );
        let body = call_body("calc_add", json!({"a": 2, "b": 3}), false);
        let check = curl(&url, &headers, &body);
        handshake_ok = check.contains("\"result\"");
        println!("  handshake check: answered a result: {handshake_ok}");
        wrk_script(&handshake_script, &headers, &body);
    } else {
        notes.push(format!(
            "The handshake-era initialize returned no Mcp-Session-Id: {init}"
        ));
    }
    let mut http_rows = String::from(
        "| era | concurrent clients | calls/s | p50 | p99 | errors |\n|---|---|---|---|---|---|\n",
    );
    let mut eras = vec![("2026-07-28 (stateless)", &modern_script)];
    if handshake_ok {
        eras.push(("2025-11-25 (one session)", &handshake_script));
    }
    for (era, script) in &eras {
        for c in [1, 8, 32, 64] {
            let r = wrk(&url, script, c, wrk_seconds);
            println!(
                "  {era}, {c} clients: {:.0} calls/s, p50 {:.2} ms, p99 {:.2} ms, {} errors",
                r.rps, r.p50, r.p99, r.errors
            );
            writeln!(
                http_rows,
                "| {era} | {c} | {:.0} | {:.2} ms | {:.2} ms | {} |",
                r.rps, r.p50, r.p99, r.errors
            )
            .unwrap();
            if c == 32 {
                table.row(
                    &format!("P2h Streamable HTTP, {era}, 32 concurrent clients (wrk)"),
                    format!(
                        "{:.0} calls/s, p50 {:.2} ms, p99 {:.2} ms, {} errors",
                        r.rps, r.p50, r.p99, r.errors
                    ),
                    "≥ 15,000 calls/s, p99 ≤ 10 ms",
                    format!(
                        "{:.2}× rate target, p99 {:.2}× ({})",
                        r.rps / 15_000.0,
                        r.p99 / 10.0,
                        verdict(r.rps >= 15_000.0 && r.p99 <= 10.0 && r.errors == 0)
                    ),
                );
            }
        }
    }

    // ---- P2h again, with metrics, traces and the audit log on and off.
    observing::run(
        &toolhost,
        &modern_script,
        wrk_seconds,
        rounds,
        &mut table,
        &mut notes,
    );

    // ---- P5 per concurrent instance: 64 clients calling a tool that holds its
    // instance for 100 ms (conformance's test_tool_with_progress).
    let idle = rss_kib(server.id());
    let mut slow_headers = base.to_vec();
    slow_headers.extend([
        ("Mcp-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "conformance_test_tool_with_progress"),
    ]);
    let slow_script = dir.join("slow.lua");
    wrk_script(
        &slow_script,
        &slow_headers,
        &call_body("conformance_test_tool_with_progress", json!({}), true),
    );
    let pid = server.id();
    let sampler = std::thread::spawn(move || {
        let mut peak = 0;
        let started = Instant::now();
        while started.elapsed() < Duration::from_secs(3) {
            peak = peak.max(rss_kib(pid));
            std::thread::sleep(Duration::from_millis(20));
        }
        peak
    });
    let r = wrk(&url, &slow_script, 64, 3);
    let peak = sampler.join().unwrap();
    let per = (peak.saturating_sub(idle)) as f64 / 64.0;
    table.row(
        "P5 resident memory per concurrent instance (64 calls of a 100 ms tool, peak − idle) / 64",
        format!(
            "{:.0} KiB (idle {}, peak {}, {:.0} calls/s)",
            per,
            mib(idle),
            mib(peak),
            r.rps
        ),
        "—",
        "—".into(),
    );
    let _ = server.kill();
    let _ = server.wait();

    // ---- The table, and docs/benchmarks.md.
    let summary = table.markdown();
    println!("\n{summary}\n{http_rows}");
    for note in &notes {
        println!("note: {note}");
    }
    write_docs(&summary, &http_rows, &notes);
}

fn sh(cmd: &str) -> String {
    Command::new("sh")
        .args(["-c", cmd])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default()
}

fn write_docs(summary: &str, http_rows: &str, notes: &[String]) {
    let path = root().join("docs/benchmarks.md");
    let doc = std::fs::read_to_string(&path).unwrap_or_else(|_| "# Benchmarks\n".into());
    let cpu = sh("grep -m1 'model name' /proc/cpuinfo | cut -d: -f2");
    let machine = format!(
        "{} vCPUs ({}), {} MiB, {}; {}; load average (1, 5, 15 min) at the end of the run: {}",
        sh("nproc"),
        cpu.trim(),
        sh("awk '/MemTotal/ {print int($2/1024)}' /proc/meminfo"),
        sh("uname -sr"),
        sh("rustc -V"),
        sh("cut -d' ' -f1-3 /proc/loadavg"),
    );
    let mut section = String::new();
    writeln!(
        section,
        "<!-- make bench: begin (generated; edits between these markers are overwritten) -->"
    )
    .unwrap();
    writeln!(
        section,
        "### Latest `make bench`: {}\n",
        jiff::Timestamp::now().strftime("%Y-%m-%d %H:%M UTC")
    )
    .unwrap();
    writeln!(section, "Machine: {machine}.\n").unwrap();
    section.push_str(summary);
    section
        .push_str("\nStreamable HTTP, `wrk` with 2 threads on the same machine as the server:\n\n");
    section.push_str(http_rows);
    for note in notes {
        writeln!(section, "\nNote: {note}").unwrap();
    }
    writeln!(section, "<!-- make bench: end -->").unwrap();
    let begin = "<!-- make bench: begin";
    let end = "<!-- make bench: end -->\n";
    let updated = match (doc.find(begin), doc.find(end)) {
        (Some(b), Some(e)) => format!("{}{}{}", &doc[..b], section, &doc[e + end.len()..]),
        _ => format!(
            "{}\n{}",
            doc.trim_end_matches('\n').to_owned() + "\n",
            section
        ),
    };
    std::fs::write(&path, updated).expect("docs/benchmarks.md");
    println!("wrote {}", path.display());
}
