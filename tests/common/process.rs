//! Real `toolhost serve --http` processes for the tests: started on a port of
//! their choosing (read from the log line that names the URL), killed with
//! SIGKILL when dropped, their memory read from `/proc`.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// One `toolhost serve --http` process on a port of its choosing.
pub struct Host {
    pub url: String,
    child: Child,
}

impl Host {
    pub fn start(config: &Path) -> Host {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolhost"))
            .args(["serve", "--http", "127.0.0.1:0", "--config"])
            .arg(config)
            // Warnings, and the line naming the URL.
            .env("TOOLHOST_LOG", "warn,toolhost::mcp::http=info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("starting toolhost");
        let (found, url) = std::sync::mpsc::channel();
        let stderr = BufReader::new(child.stderr.take().unwrap());
        std::thread::spawn(move || {
            let mut found = Some(found);
            for line in stderr.lines().map_while(Result::ok) {
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
        let url = url
            .recv_timeout(Duration::from_secs(60))
            .expect("toolhost did not start serving within 60 s (its log is above)");
        Host { child, url }
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
