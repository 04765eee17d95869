//! Attacks on a real release host: a hostile call against a `toolhost serve --http`
//! process ([`super::process::Host`]), watched from `/proc` while it runs (peak
//! resident memory, peak open descriptors), with ordinary calls made beside it that
//! must each be answered within a second, and canary files outside every grant
//! that must be neither read nor changed.
//!
//! ```ignore
//! let outcome = attack::run(&host, "fd_bomb", json!({}), attack::ordinary_add()).await;
//! assert_eq!(outcome.code.as_deref(), Some("resource_limit"));
//! outcome.within(attack::Bounds { rss_mib: 256, fds: 512 });
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::mcp_client::{message, modern};
use super::process::Host;

/// The most an ordinary call may take while an attack runs.
pub const ORDINARY_DEADLINE: Duration = Duration::from_secs(1);

/// Calls `tool` on the host at `url` in the 2026-07-28 era (compat mode) and
/// returns the JSON-RPC message.
pub async fn call(url: &str, tool: &str, arguments: Value) -> Value {
    call_as(url, tool, arguments, None).await
}

/// [`call`] with a bearer token.
pub async fn call_as(url: &str, tool: &str, arguments: Value, bearer: Option<&str>) -> Value {
    let request = modern(
        "tools/call",
        Some(tool),
        json!({"name": tool, "arguments": arguments}),
        bearer,
        url,
    )
    .header("x-toolhost-output-mode", "compat");
    let response = request
        .send()
        .await
        .unwrap_or_else(|e| panic!("{tool}: the server did not answer: {e}"));
    message(response).await
}

/// The error code of a failed call's message (from the legacy envelope of the
/// compat text block); `None` for a success.
pub fn error_code(message: &Value) -> Option<String> {
    let result = &message["result"];
    if result["isError"] != true {
        return None;
    }
    let text = result["content"][0]["text"].as_str().unwrap_or_default();
    let envelope: Value = serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("the error text is not the envelope ({e}): {message}"));
    Some(
        envelope["_meta"]["errorCode"]
            .as_str()
            .unwrap_or("?")
            .to_owned(),
    )
}

/// The number of open descriptors of process `pid` (`/proc/<pid>/fd`).
pub fn open_fds(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd"))
        .map(|entries| entries.count())
        .unwrap_or(0)
}

/// The resident memory of process `pid`, in KiB (`VmRSS`).
pub fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmRSS:"))
        .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

/// An ordinary call made beside an attack, and the answer it must give.
#[derive(Clone)]
pub struct Ordinary {
    pub tool: &'static str,
    pub arguments: Value,
    /// The structured content it must return.
    pub expected: Value,
}

/// `add(2, 3) = 5` of the `calc` example, which the attack configurations load.
pub fn ordinary_add() -> Ordinary {
    Ordinary {
        tool: "add",
        arguments: json!({"a": 2, "b": 3}),
        expected: json!({"sum": 5}),
    }
}

/// What the host may hold while an attack runs.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    /// Peak resident memory, in MiB.
    pub rss_mib: u64,
    /// Peak open descriptors.
    pub fds: usize,
}

/// How an attack went.
#[derive(Debug)]
pub struct Outcome {
    /// The hostile call's JSON-RPC message.
    pub message: Value,
    /// Its error code (`None`: it succeeded).
    pub code: Option<String>,
    /// The host's resident memory before the attack and at its peak, in KiB.
    pub rss_before_kib: u64,
    pub peak_rss_kib: u64,
    /// The host's open descriptors before the attack and at their peak.
    pub fds_before: usize,
    pub peak_fds: usize,
    /// The ordinary calls made while the attack ran, and the slowest of them.
    pub ordinary_calls: usize,
    pub slowest_ordinary: Duration,
}

impl Outcome {
    /// Asserts the host stayed within `bounds` and every ordinary call was answered
    /// within [`ORDINARY_DEADLINE`].
    pub fn within(&self, bounds: Bounds) -> &Self {
        assert!(
            self.peak_rss_kib <= bounds.rss_mib * 1024,
            "host RSS peaked at {} MiB (before: {} MiB), over the bound of {} MiB",
            self.peak_rss_kib / 1024,
            self.rss_before_kib / 1024,
            bounds.rss_mib
        );
        assert!(
            self.peak_fds <= bounds.fds,
            "host held {} open descriptors at the peak (before: {}), over the bound of {}",
            self.peak_fds,
            self.fds_before,
            bounds.fds
        );
        assert!(
            self.ordinary_calls > 0,
            "no ordinary call ran while the attack did"
        );
        assert!(
            self.slowest_ordinary <= ORDINARY_DEADLINE,
            "an ordinary call beside the attack took {:?} (bound {ORDINARY_DEADLINE:?})",
            self.slowest_ordinary
        );
        self
    }

    /// The whole message as text, to look for leaks anywhere in it.
    pub fn text(&self) -> String {
        self.message.to_string()
    }
}

/// Calls `tool` with `arguments` on `host` while `/proc` is sampled every 10 ms
/// and `ordinary` is called again and again beside it (each answer checked).
pub async fn run(host: &Host, tool: &str, arguments: Value, ordinary: Ordinary) -> Outcome {
    let pid = host.pid();
    let (rss_before_kib, fds_before) = (rss_kib(pid), open_fds(pid));
    let done = Arc::new(AtomicBool::new(false));
    let (peak_rss, peak_fds) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicUsize::new(0)));
    let sampler = {
        let (done, peak_rss, peak_fds) = (done.clone(), peak_rss.clone(), peak_fds.clone());
        std::thread::spawn(move || {
            while !done.load(Ordering::Relaxed) {
                peak_rss.fetch_max(rss_kib(pid), Ordering::Relaxed);
                peak_fds.fetch_max(open_fds(pid), Ordering::Relaxed);
                std::thread::sleep(Duration::from_millis(10));
            }
        })
    };
    let hostile = {
        let (url, tool) = (host.url.clone(), tool.to_owned());
        tokio::spawn(async move { call(&url, &tool, arguments).await })
    };
    // Give the attack a head start, then keep calling beside it until it ends.
    tokio::time::sleep(Duration::from_millis(50)).await;
    let (mut ordinary_calls, mut slowest) = (0, Duration::ZERO);
    while !hostile.is_finished() || ordinary_calls == 0 {
        let started = Instant::now();
        let answer = tokio::time::timeout(
            Duration::from_secs(30),
            call(&host.url, ordinary.tool, ordinary.arguments.clone()),
        )
        .await
        .unwrap_or_else(|_| panic!("{}: no answer within 30 s beside {tool}", ordinary.tool));
        slowest = slowest.max(started.elapsed());
        assert_eq!(
            answer["result"]["structuredContent"], ordinary.expected,
            "{} beside {tool}: {answer}",
            ordinary.tool
        );
        ordinary_calls += 1;
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let message = hostile.await.expect("the hostile call's task");
    done.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    let outcome = Outcome {
        code: error_code(&message),
        message,
        rss_before_kib,
        peak_rss_kib: peak_rss.load(Ordering::Relaxed).max(rss_before_kib),
        fds_before,
        peak_fds: peak_fds.load(Ordering::Relaxed).max(fds_before),
        ordinary_calls,
        slowest_ordinary: slowest,
    };
    eprintln!(
        "attack {tool}: {:?}; host RSS {} -> {} KiB at the peak, fds {} -> {}; {} ordinary calls beside it, the slowest {:?}",
        outcome.code,
        outcome.rss_before_kib,
        outcome.peak_rss_kib,
        outcome.fds_before,
        outcome.peak_fds,
        outcome.ordinary_calls,
        outcome.slowest_ordinary
    );
    outcome
}

/// A file outside every grant with content no tool can guess: it must stay as it
/// is, and its content must appear in no answer.
pub struct Canary {
    pub path: PathBuf,
    pub content: String,
}

impl Canary {
    /// Writes a canary named `name` into `dir`.
    pub fn plant(dir: &Path, name: &str) -> Canary {
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos();
        let content = format!("canary-{name}-{nanos:x}-{}", std::process::id());
        let path = dir.join(name);
        std::fs::write(&path, &content).unwrap();
        Canary { path, content }
    }

    /// Asserts the canary is unchanged and its content is not in `text`.
    pub fn assert_safe(&self, text: &str) {
        let now = std::fs::read_to_string(&self.path)
            .unwrap_or_else(|e| panic!("canary {} is gone: {e}", self.path.display()));
        assert_eq!(
            now,
            self.content,
            "canary {} was changed",
            self.path.display()
        );
        assert!(
            !text.contains(&self.content),
            "canary {} was read: its content is in {text}",
            self.path.display()
        );
    }
}
