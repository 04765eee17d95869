//! The audit log: one JSON line per `tools/call`, to standard error or a file
//! (`host.audit`), saying who called which tool of which build, with what
//! outcome, how long it took, which argument keys it passed and which trace it
//! belongs to.
//!
//! A line never holds a token (the caller is its principal and the position of
//! its `[[token]]` entry), a secret (the host only knows a secret's placeholder
//! in the guest and its value in the request it sends; neither is a field here)
//! or an argument value, unless the operator asks for values
//! (`host.audit_values`).
//!
//! Lines are made on the task serving the call, serialized from the borrowed
//! entry, and handed to a writer thread through a queue of [`QUEUE_LINES`]: a
//! call never waits for the disk. The writer writes what has gathered, then
//! naps [`GATHER`], so under load one write serves many lines. When the
//! queue is full the line is dropped, never the call held up; every dropped line
//! counts in `toolhost_audit_dropped_total`, the first of a run of drops logs a
//! warning (`error.type = "audit_dropped"`), and the writer writes a line
//! `{"event":"audit_dropped","count":N}` into the audit log itself where the gap
//! is, so a reader of the log sees that lines are missing and how many.

use std::io::Write as _;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use serde_json::{Map, Value, json};

use crate::config::AuditSink;

/// Lines waiting for the writer at most.
pub const QUEUE_LINES: usize = 4096;

/// How long the writer waits after a write for more lines to gather: a line
/// reaches the file at most this much later than alone, and the queue holds
/// [`QUEUE_LINES`] lines per nap (400,000 calls/s).
const GATHER: Duration = Duration::from_millis(10);

/// The longest tool name written as the caller sent it (an unknown tool's name
/// is the caller's text); longer ones are cut at a character boundary.
const MAX_NAME_BYTES: usize = 128;

/// Where audit lines go; cheap to clone, one writer behind every clone.
#[derive(Clone, Default)]
pub struct Audit {
    writer: Option<Arc<Writer>>,
}

struct Writer {
    queue: mpsc::SyncSender<Message>,
    /// Lines dropped since the writer last said so in the log.
    dropped: Arc<AtomicU64>,
    values: bool,
}

enum Message {
    Line(String),
    /// Write everything queued before, flush, then answer.
    Flush(mpsc::SyncSender<()>),
}

/// One call, as the audit log records it.
pub struct Entry<'a> {
    /// `"stdio"` or `"http"`.
    pub transport: &'static str,
    /// The token's principal; `None` for the local operator (stdio) or the open
    /// caller of a loopback server without tokens.
    pub principal: Option<&'a str>,
    /// The token's id (`token-N`); never the token.
    pub token_id: Option<&'a str>,
    /// The tool's public name, or the name an unknown-tool call asked for.
    pub tool: &'a str,
    /// The plugin or webhook serving the tool; `None` when no tool was found.
    pub plugin: Option<&'a str>,
    /// The SHA-256 of the component (hex); `None` for a webhook or no tool.
    pub digest: Option<&'a str>,
    /// `"ok"`, the result's error code, or the refusal before the call.
    pub outcome: &'a str,
    pub duration_ms: f64,
    pub arguments: Option<&'a Map<String, Value>>,
    pub request_id: &'a str,
    /// The host's id of the call (`callId` in failure details); `None` when the
    /// call was refused before it started.
    pub call_id: Option<&'a str>,
    /// The id of the call's trace (32 hex digits): the caller's `traceparent`
    /// continued, or the trace the host started; `None` with neither.
    pub trace_id: Option<&'a str>,
}

impl Audit {
    /// No audit log.
    pub fn off() -> Audit {
        Audit::default()
    }

    /// The audit log `sink` names; with `values`, lines carry argument values.
    ///
    /// # Errors
    ///
    /// A message naming `host.audit` and the file when the file cannot be opened
    /// for appending (created 0600 when missing), or the writer cannot start.
    pub fn open(sink: &AuditSink, values: bool) -> Result<Audit, String> {
        let out: Box<dyn std::io::Write + Send> = match sink {
            AuditSink::Off => return Ok(Audit::off()),
            AuditSink::Stderr => Box::new(std::io::stderr()),
            AuditSink::File(path) => Box::new(std::io::BufWriter::new(open_append(path)?)),
        };
        let (queue, received) = mpsc::sync_channel(QUEUE_LINES);
        let dropped = Arc::new(AtomicU64::new(0));
        let counted = dropped.clone();
        std::thread::Builder::new()
            .name("toolhost-audit".into())
            .spawn(move || write_lines(out, &received, &counted))
            .map_err(|e| format!("host.audit: cannot start the audit writer: {e}"))?;
        Ok(Audit {
            writer: Some(Arc::new(Writer {
                queue,
                dropped,
                values,
            })),
        })
    }

    /// Whether lines are written at all.
    pub fn is_on(&self) -> bool {
        self.writer.is_some()
    }

    /// Queues the line of `entry`; never waits (a full queue drops it, counted).
    pub fn record(&self, entry: &Entry<'_>) {
        let Some(writer) = &self.writer else {
            return;
        };
        let line = line(entry, writer.values, jiff::Timestamp::now());
        match writer.queue.try_send(Message::Line(line)) {
            Ok(()) => {}
            Err(mpsc::TrySendError::Full(_)) => {
                metrics::counter!("toolhost_audit_dropped_total").increment(1);
                if writer.dropped.fetch_add(1, Ordering::Relaxed) == 0 {
                    tracing::warn!(error.type = "audit_dropped", queue = QUEUE_LINES, "the audit writer is behind: audit lines are being dropped (counted in toolhost_audit_dropped_total and marked in the audit log)");
                }
            }
            Err(mpsc::TrySendError::Disconnected(_)) => {
                metrics::counter!("toolhost_audit_dropped_total").increment(1);
                tracing::error!(error.type = "audit_dropped", "the audit writer has stopped; an audit line was dropped");
            }
        }
    }

    /// Waits (up to `wait`) until every line queued so far is written and
    /// flushed: at the end of serving, so no line is lost at exit.
    pub fn flush(&self, wait: Duration) {
        let Some(writer) = &self.writer else {
            return;
        };
        let (done, flushed) = mpsc::sync_channel(1);
        if writer.queue.send(Message::Flush(done)).is_ok() && flushed.recv_timeout(wait).is_err() {
            tracing::warn!(error.type = "audit_dropped", "the audit log was not flushed in time at exit");
        }
    }
}

/// Opens `path` for appending, created 0600 when missing.
fn open_append(path: &Path) -> Result<std::fs::File, String> {
    let mut options = std::fs::OpenOptions::new();
    options.append(true).create(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path).map_err(|e| {
        format!(
            "host.audit: cannot open {} to append the audit log: {e}",
            path.display()
        )
    })
}

/// The writer thread: writes what comes, flushing whenever the queue is empty,
/// and marks where lines were dropped.
fn write_lines(
    mut out: Box<dyn std::io::Write + Send>,
    received: &mpsc::Receiver<Message>,
    dropped: &AtomicU64,
) {
    let write = |out: &mut Box<dyn std::io::Write + Send>, line: &str| {
        // One write per line: on standard error, a line is not split by the
        // log lines written beside it.
        let mut bytes = Vec::with_capacity(line.len() + 1);
        bytes.extend_from_slice(line.as_bytes());
        bytes.push(b'\n');
        if let Err(error) = out.write_all(&bytes) {
            metrics::counter!("toolhost_audit_dropped_total").increment(1);
            tracing::error!(%error, error.type = "audit_write_failed", "cannot write the audit log; the line is lost");
        }
    };
    while let Ok(first) = received.recv() {
        let mut next = Some(first);
        while let Some(message) = next.take() {
            match message {
                Message::Line(line) => write(&mut out, &line),
                Message::Flush(done) => {
                    let _ = out.flush();
                    let _ = done.send(());
                }
            }
            next = received.try_recv().ok();
        }
        let count = dropped.swap(0, Ordering::Relaxed);
        if count > 0 {
            let mark = json!({
                "time": jiff::Timestamp::now().to_string(),
                "event": "audit_dropped",
                "count": count,
            });
            write(&mut out, &mark.to_string());
        }
        if let Err(error) = out.flush() {
            tracing::error!(%error, error.type = "audit_write_failed", "cannot flush the audit log");
        }
        // Lines gather while the writer naps: under load one write (and no
        // wake-up of this thread) serves many calls instead of one each.
        std::thread::sleep(GATHER);
    }
}

/// The JSON line of `entry` at `time`, written straight from the borrowed
/// entry (no `Value` tree per call).
fn line(entry: &Entry<'_>, values: bool, time: jiff::Timestamp) -> String {
    let line = Line {
        time,
        event: "tool_call",
        transport: entry.transport,
        principal: entry.principal,
        token_id: entry.token_id,
        tool: bounded(entry.tool),
        plugin: entry.plugin,
        digest: entry.digest,
        outcome: entry.outcome,
        duration_ms: (entry.duration_ms * 1000.0).round() / 1000.0,
        argument_keys: Keys(entry.arguments),
        request_id: bounded(entry.request_id),
        call_id: entry.call_id,
        trace_id: entry.trace_id,
        arguments: values.then_some(entry.arguments),
    };
    serde_json::to_string(&line).expect("an audit line serializes")
}

/// One audit line, field by field in the order written.
#[derive(serde::Serialize)]
struct Line<'a> {
    #[serde(serialize_with = "rfc3339")]
    time: jiff::Timestamp,
    event: &'static str,
    transport: &'a str,
    principal: Option<&'a str>,
    token_id: Option<&'a str>,
    tool: &'a str,
    plugin: Option<&'a str>,
    digest: Option<&'a str>,
    outcome: &'a str,
    duration_ms: f64,
    argument_keys: Keys<'a>,
    request_id: &'a str,
    call_id: Option<&'a str>,
    trace_id: Option<&'a str>,
    /// Only with `host.audit_values`; `null` when the call had none.
    #[serde(skip_serializing_if = "Option::is_none")]
    arguments: Option<Option<&'a Map<String, Value>>>,
}

/// The keys of the arguments, as a JSON array (empty without arguments).
struct Keys<'a>(Option<&'a Map<String, Value>>);

impl serde::Serialize for Keys<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_seq(self.0.into_iter().flat_map(|arguments| arguments.keys()))
    }
}

fn rfc3339<S: serde::Serializer>(time: &jiff::Timestamp, serializer: S) -> Result<S::Ok, S::Error> {
    serializer.collect_str(time)
}

/// `text` cut to [`MAX_NAME_BYTES`] at a character boundary.
fn bounded(text: &str) -> &str {
    super::cut(text, MAX_NAME_BYTES)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry<'a>(arguments: &'a Map<String, Value>) -> Entry<'a> {
        Entry {
            transport: "http",
            principal: Some("alice"),
            token_id: Some("token-1"),
            tool: "add",
            plugin: Some("math"),
            digest: Some("ab12"),
            outcome: "ok",
            duration_ms: 1.234_567,
            arguments: Some(arguments),
            request_id: "7",
            call_id: Some("00ff"),
            trace_id: Some("4bf92f3577b34da6a3ce929d0e0e4736"),
        }
    }

    #[test]
    fn a_line_names_the_keys_and_not_the_values_unless_asked() {
        let arguments = json!({"a": "value-one", "b": 2})
            .as_object()
            .unwrap()
            .clone();
        let time: jiff::Timestamp = "2026-12-02T05:00:00Z".parse().unwrap();
        let text = line(&entry(&arguments), false, time);
        assert!(!text.contains("value-one"), "{text}");
        let value: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(value["argument_keys"], json!(["a", "b"]));
        assert_eq!(value["principal"], "alice");
        assert_eq!(value["token_id"], "token-1");
        assert_eq!(value["duration_ms"], 1.235);
        assert_eq!(value["time"], "2026-12-02T05:00:00Z");
        assert_eq!(value["trace_id"], "4bf92f3577b34da6a3ce929d0e0e4736");
        assert!(value.get("arguments").is_none());

        let with_values: Value =
            serde_json::from_str(&line(&entry(&arguments), true, time)).unwrap();
        assert_eq!(with_values["arguments"]["a"], "value-one");
    }

    #[test]
    fn a_line_is_written_field_by_field_as_documented() {
        let arguments = json!({"a": 1}).as_object().unwrap().clone();
        let time: jiff::Timestamp = "2026-12-02T05:00:00Z".parse().unwrap();
        assert_eq!(
            line(&entry(&arguments), false, time),
            r#"{"time":"2026-12-02T05:00:00Z","event":"tool_call","transport":"http","principal":"alice","token_id":"token-1","tool":"add","plugin":"math","digest":"ab12","outcome":"ok","duration_ms":1.235,"argument_keys":["a"],"request_id":"7","call_id":"00ff","trace_id":"4bf92f3577b34da6a3ce929d0e0e4736"}"#
        );
        let mut bare = entry(&arguments);
        bare.arguments = None;
        bare.trace_id = None;
        let text = line(&bare, true, time);
        assert!(
            text.ends_with(r#""argument_keys":[],"request_id":"7","call_id":"00ff","trace_id":null,"arguments":null}"#),
            "{text}"
        );
    }

    #[test]
    fn a_long_name_is_cut_at_a_character_boundary() {
        let name = "é".repeat(100);
        let cut = bounded(&name);
        assert!(cut.len() <= MAX_NAME_BYTES && name.starts_with(cut));
        assert_eq!(bounded("add"), "add");
    }

    #[test]
    fn a_file_gets_every_line_by_the_flush() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("audit.jsonl");
        let audit = Audit::open(&AuditSink::File(path.clone()), false).unwrap();
        let arguments = Map::new();
        for _ in 0..10 {
            audit.record(&entry(&arguments));
        }
        audit.flush(Duration::from_secs(10));
        let text = std::fs::read_to_string(&path).unwrap();
        assert_eq!(text.lines().count(), 10, "{text}");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o077, 0, "{mode:o}");
        }
    }

    #[test]
    fn a_file_that_cannot_be_opened_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("missing/audit.jsonl");
        let Err(error) = Audit::open(&AuditSink::File(path.clone()), false) else {
            panic!("opened");
        };
        assert!(
            error.starts_with("host.audit: ") && error.contains(&path.display().to_string()),
            "{error}"
        );
    }
}
