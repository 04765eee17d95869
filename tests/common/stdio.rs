//! A `toolhost serve` over stdio, spoken to in raw JSON-RPC as a client of each
//! revision would (no SDK offers the older ones).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::Duration;

use serde_json::{Value, json};
use toolhost::render::Revision;

use super::host::{guest, root};

/// A running `toolhost serve` and the messages it sent.
pub struct Client {
    pub child: Child,
    pub stdin: Option<ChildStdin>,
    /// Every line the server writes to stdout, read on a thread of its own.
    pub lines: Receiver<String>,
    pub next_id: u64,
    /// How long to wait for a message before failing the test.
    pub patience: Duration,
    _config: tempfile::NamedTempFile,
}

impl Client {
    /// `toolhost serve` with the test plugins most tests use.
    pub fn start() -> Client {
        let mut toml = format!(
            "[host]\ndata_dir = \"{}\"\n",
            root().join("target/test-data").display()
        );
        for name in ["hello", "calc", "media", "bulk", "errors", "conformance"] {
            toml.push_str(&format!(
                "[[plugin]]\npath = \"{}\"\n",
                guest(name).display()
            ));
        }
        Client::start_with(&toml)
    }

    /// `toolhost serve` with the configuration `toml`.
    pub fn start_with(toml: &str) -> Client {
        let mut config = tempfile::NamedTempFile::new().unwrap();
        config.write_all(toml.as_bytes()).unwrap();
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolhost"))
            .args(["serve", "--config", config.path().to_str().unwrap()])
            .env("TOOLHOST_LOG", "warn")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take().unwrap();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        let (sender, lines) = channel();
        std::thread::spawn(move || {
            for line in stdout.lines() {
                let Ok(line) = line else { break };
                if sender.send(line).is_err() {
                    break;
                }
            }
        });
        Client {
            child,
            stdin: Some(stdin),
            lines,
            next_id: 1,
            patience: Duration::from_secs(30),
            _config: config,
        }
    }

    /// The next message from the server; `None` after `patience`.
    pub fn next(&mut self) -> Option<Value> {
        let line = self.lines.recv_timeout(self.patience).ok()?;
        Some(
            serde_json::from_str(&line)
                .unwrap_or_else(|e| panic!("not JSON on stdout ({e}): {line}")),
        )
    }

    /// Waits for a notification with `method`.
    pub fn notification(&mut self, method: &str) -> Value {
        loop {
            let message = self
                .next()
                .unwrap_or_else(|| panic!("no {method} within 30 s"));
            if message["method"] == method {
                return message;
            }
        }
    }

    pub fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().expect("stdin is open");
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    /// Sends a request; returns the notifications that came first and the response.
    pub fn request(&mut self, method: &str, params: Value) -> (Vec<Value>, Value) {
        self.request_answering(method, params, |request| {
            panic!("the server asked unexpectedly: {request}")
        })
    }

    /// Sends a request, answering each request the server sends before its
    /// response with the result `answer` gives (an `Err` answers with that
    /// JSON-RPC error); returns the server's requests and notifications, in
    /// order, and the response.
    pub fn request_answering(
        &mut self,
        method: &str,
        params: Value,
        mut answer: impl FnMut(&Value) -> Result<Value, Value>,
    ) -> (Vec<Value>, Value) {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let mut seen = Vec::new();
        loop {
            let message = self.next().expect("the server answers within 30 s");
            let is_request = message.get("method").is_some();
            if !is_request && message.get("id") == Some(&json!(id)) {
                return (seen, message);
            }
            if is_request && message.get("id").is_some() {
                let reply = match answer(&message) {
                    Ok(result) => json!({"jsonrpc": "2.0", "id": message["id"], "result": result}),
                    Err(error) => json!({"jsonrpc": "2.0", "id": message["id"], "error": error}),
                };
                self.send(&reply);
            }
            seen.push(message);
        }
    }

    pub fn initialize(&mut self, revision: Revision) -> Value {
        self.initialize_with(revision, json!({}))
    }

    /// `initialize` at `revision` declaring the client `capabilities`.
    pub fn initialize_with(&mut self, revision: Revision, capabilities: Value) -> Value {
        let (_, response) = self.request(
            "initialize",
            json!({"protocolVersion": revision.as_str(), "capabilities": capabilities, "clientInfo": {"name": "raw-test", "version": "1"}}),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        response
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
