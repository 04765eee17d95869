//! A guest's stdout and stderr, sent line by line to the host log tagged with the
//! plugin and tool, with a byte budget per call so a chatty guest cannot flood the
//! log. The last bytes of stderr are kept for the fault report (a Rust panic
//! message lands there). What a stream holds is bounded whatever the guest
//! writes: the unfinished line up to [`LOG_BUDGET`] bytes (the rest of a longer
//! line is counted, not kept) and the [`TAIL`].

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};

use tokio::io::AsyncWrite;
use wasmtime_wasi::cli::{IsTerminal, StdoutStream};

/// Bytes of output logged per stream and call; the rest is counted, not logged.
const LOG_BUDGET: usize = 64 * 1024;
/// Bytes of the stream's end kept for fault reports.
const TAIL: usize = 2 * 1024;

/// One output stream of one call.
#[derive(Clone)]
pub struct GuestOutput {
    inner: Arc<Mutex<State>>,
}

struct State {
    plugin: Arc<str>,
    tool: Arc<str>,
    stream: &'static str,
    line: Vec<u8>,
    tail: VecDeque<u8>,
    logged: usize,
    dropped: usize,
}

impl GuestOutput {
    pub fn new(plugin: &Arc<str>, tool: &Arc<str>, stream: &'static str) -> Self {
        GuestOutput {
            inner: Arc::new(Mutex::new(State {
                plugin: plugin.clone(),
                tool: tool.clone(),
                stream,
                line: Vec::new(),
                tail: VecDeque::new(),
                logged: 0,
                dropped: 0,
            })),
        }
    }

    /// The last bytes written (up to 2 KiB), as text.
    pub fn tail(&self) -> String {
        let state = self.inner.lock().expect("output lock");
        let bytes: Vec<u8> = state.tail.iter().copied().collect();
        String::from_utf8_lossy(&bytes).trim().to_owned()
    }

    /// Logs what is left of an unfinished line, and how much went unlogged.
    pub fn finish(&self) {
        let mut state = self.inner.lock().expect("output lock");
        if !state.line.is_empty() {
            let line = std::mem::take(&mut state.line);
            state.log(&line);
        }
        if state.dropped > 0 {
            tracing::warn!(plugin = %state.plugin, tool = %state.tool, stream = state.stream, bytes = state.dropped, "guest output over the log budget was not logged");
        }
    }

    fn write(&self, bytes: &[u8]) {
        let mut state = self.inner.lock().expect("output lock");
        for &byte in bytes {
            if state.tail.len() == TAIL {
                state.tail.pop_front();
            }
            state.tail.push_back(byte);
        }
        for &byte in bytes {
            if byte == b'\n' {
                let line = std::mem::take(&mut state.line);
                state.log(&line);
            } else if state.line.len() < LOG_BUDGET {
                state.line.push(byte);
            } else {
                // A line is kept up to the budget: the rest of it is counted only.
                state.dropped += 1;
            }
        }
    }
}

impl State {
    fn log(&mut self, line: &[u8]) {
        if self.logged + line.len() > LOG_BUDGET {
            self.dropped += line.len();
            return;
        }
        self.logged += line.len();
        let text = String::from_utf8_lossy(line);
        tracing::info!(plugin = %self.plugin, tool = %self.tool, stream = self.stream, "{text}");
    }
}

impl IsTerminal for GuestOutput {
    fn is_terminal(&self) -> bool {
        false
    }
}

impl StdoutStream for GuestOutput {
    fn async_stream(&self) -> Box<dyn AsyncWrite + Send + Sync> {
        Box::new(self.clone())
    }
}

impl AsyncWrite for GuestOutput {
    fn poll_write(
        self: Pin<&mut Self>,
        _cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        self.write(buf);
        Poll::Ready(Ok(buf.len()))
    }

    fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}
