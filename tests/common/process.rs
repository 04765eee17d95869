//! Real `toolhost serve --http` processes for the tests: started on a port of
//! their choosing (read from the log line that names the URL), killed with
//! SIGKILL when dropped, their memory read from `/proc`, their log kept for
//! assertions ([`Host::log_lines`], [`Host::wait_for_log`]).

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// One `toolhost serve --http` process on a port of its choosing.
pub struct Host {
    pub url: String,
    child: Child,
    log: Arc<Mutex<Vec<String>>>,
}

impl Host {
    /// Starts a host logging warnings (and the line naming the URL).
    pub fn start(config: &Path) -> Host {
        Host::start_logging(config, "warn")
    }

    /// Starts a host whose log has what `filter` (a `TOOLHOST_LOG` value, such
    /// as `"info"`) lets through, and the line naming the URL.
    pub fn start_logging(config: &Path, filter: &str) -> Host {
        Host::start_with(config, filter, &[], Duration::from_secs(60))
    }

    /// [`Host::start_logging`] with more environment variables (`env`), waiting
    /// up to `wait` for it to serve (it loads and compiles every plugin first).
    pub fn start_with(config: &Path, filter: &str, env: &[(&str, &str)], wait: Duration) -> Host {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolhost"))
            .args(["serve", "--http", "127.0.0.1:0", "--config"])
            .arg(config)
            .env("TOOLHOST_LOG", format!("{filter},toolhost::mcp::http=info"))
            .envs(env.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting toolhost");
        let (found, url) = std::sync::mpsc::channel();
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let log = Arc::new(Mutex::new(Vec::new()));
        let kept = log.clone();
        std::thread::spawn(move || {
            let mut found = Some(found);
            for line in stderr.lines().map_while(Result::ok) {
                kept.lock().unwrap().push(line.clone());
                if let Some(start) = line.find("url=http://") {
                    let url: String = line[start + 4..]
                        .chars()
                        .take_while(|c| !c.is_whitespace())
                        .collect();
                    if let Some(found) = found.take() {
                        let _ = found.send(url);
                    }
                }
                eprintln!("[toolhost] {line}");
            }
        });
        let url = url.recv_timeout(wait).unwrap_or_else(|_| {
            panic!("toolhost did not start serving within {wait:?} (its log is above)")
        });
        Host { child, url, log }
    }

    /// Every line the process wrote to its log (stderr) so far.
    pub fn log_lines(&self) -> Vec<String> {
        self.log.lock().unwrap().clone()
    }

    /// The first log line for which `matches` holds, waiting up to 10 s for it
    /// (the log is read by another thread).
    ///
    /// # Panics
    ///
    /// When no such line appears in time; the message quotes `what`.
    pub fn wait_for_log(&self, what: &str, matches: impl Fn(&str) -> bool) -> String {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(line) = self.log.lock().unwrap().iter().find(|l| matches(l)) {
                return line.clone();
            }
            assert!(
                Instant::now() < deadline,
                "no log line {what} within 10 s; the log:\n{}",
                self.log_lines().join("\n")
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The resident memory of the process, in KiB (`VmRSS`).
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|value| value.trim().trim_end_matches("kB").trim().parse().ok())
            .expect("VmRSS in /proc/<pid>/status")
    }

    /// Sends `signal` (e.g. `libc::SIGTERM`) to the process.
    pub fn signal(&self, signal: i32) {
        // SAFETY: kill only sends a signal to the child this Host started.
        let sent = unsafe { libc::kill(self.pid() as libc::pid_t, signal) };
        assert_eq!(sent, 0, "kill({}, {signal})", self.pid());
    }

    /// The exit status, waiting up to `within` for the process to end.
    ///
    /// # Panics
    ///
    /// When it is still running then.
    pub fn wait_exit(&mut self, within: Duration) -> std::process::ExitStatus {
        let log = self.log.clone();
        wait_exit(&mut self.child, within, || log.lock().unwrap().join("\n"))
    }

    /// SIGKILL: no shutdown code runs.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The exit status of `child`, waiting up to `within` for it to end.
///
/// # Panics
///
/// When it is still running then, with `log()` (what the process wrote).
pub fn wait_exit(
    child: &mut std::process::Child,
    within: Duration,
    log: impl Fn() -> String,
) -> std::process::ExitStatus {
    let deadline = Instant::now() + within;
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status;
        }
        assert!(
            Instant::now() < deadline,
            "toolhost still runs {within:?} later; its log:\n{}",
            log()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
