//! What observability costs on P2h (#16): the same `wrk` run against servers
//! that differ only in what they record, side by side in one run: nothing
//! (`host.metrics = false`), the metrics (the default), the metrics and every
//! trace sent over OTLP/HTTP to a receiver in this process, the same with 1 %
//! of the traces kept, and the metrics, every trace and the audit log to a
//! file. The servers run at once on their own ports; the rounds go through
//! them in turn, so a slow moment of the machine falls on all of them, and
//! each is given as the ratio of its median to the median of "nothing".

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use prost::Message as _;

use super::{Table, median, root, rust_guest, wait_for_port, wrk};

/// One server setting under test.
struct Variant {
    name: &'static str,
    /// Lines added to `[host]`.
    host: &'static str,
    /// Whether traces go to the receiver, and the share kept.
    traces: Option<f64>,
}

const VARIANTS: [Variant; 5] = [
    Variant {
        name: "nothing recorded (host.metrics = false)",
        host: "metrics = false\n",
        traces: None,
    },
    Variant {
        name: "metrics (the default)",
        host: "",
        traces: None,
    },
    Variant {
        name: "metrics + traces, all kept",
        host: "",
        traces: Some(1.0),
    },
    Variant {
        name: "metrics + traces, 1 % kept",
        host: "",
        traces: Some(0.01),
    },
    Variant {
        name: "metrics + traces, all kept + audit log to a file",
        host: "audit = \"audit.jsonl\"\n",
        traces: Some(1.0),
    },
];

/// An OTLP/HTTP receiver counting the spans it decodes.
struct Receiver {
    url: String,
    spans: Arc<AtomicU64>,
    _runtime: tokio::runtime::Runtime,
}

fn receiver() -> Receiver {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("a runtime for the receiver");
    let spans = Arc::new(AtomicU64::new(0));
    let counted = spans.clone();
    let app = axum::Router::new().route(
        "/v1/traces",
        axum::routing::post(move |body: axum::body::Bytes| {
            let counted = counted.clone();
            async move {
                use opentelemetry_proto::tonic::collector::trace::v1::ExportTraceServiceRequest;
                let request = ExportTraceServiceRequest::decode(body).unwrap_or_default();
                let n: usize = request
                    .resource_spans
                    .iter()
                    .flat_map(|r| &r.scope_spans)
                    .map(|s| s.spans.len())
                    .sum();
                counted.fetch_add(n as u64, Ordering::Relaxed);
                ""
            }
        }),
    );
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("a port for the receiver");
    let url = format!("http://{}", listener.local_addr().unwrap());
    runtime.spawn(async move { axum::serve(listener, app).await });
    Receiver {
        url,
        spans,
        _runtime: runtime,
    }
}

fn config(index: usize, variant: &Variant, otlp: &str) -> PathBuf {
    let dir = root().join(format!("target/bench/observing-{index}"));
    std::fs::create_dir_all(&dir).expect("bench dir");
    let _ = std::fs::remove_file(dir.join("audit.jsonl"));
    let mut toml = format!(
        "[host]\ndata_dir = \"{}\"\n{}",
        dir.join("data").display(),
        variant.host
    );
    if let Some(ratio) = variant.traces {
        toml.push_str(&format!(
            "[telemetry]\notlp_endpoint = \"{otlp}\"\nsample_ratio = {ratio}\n"
        ));
    }
    toml.push_str(&format!(
        "[[plugin]]\nname = \"calc\"\nprefix = \"calc\"\npath = \"{}\"\n",
        rust_guest("calc").display()
    ));
    let file = dir.join("toolhost.toml");
    std::fs::write(&file, toml).expect("config");
    file
}

/// Runs the comparison with the 2026-07-28 `tools/call` of `script` at 32
/// connections, `rounds` times `seconds` per server; adds one row per variant
/// to `table` and says what the receiver got in `notes`.
pub fn run(
    toolhost: &Path,
    script: &Path,
    seconds: u32,
    rounds: usize,
    table: &mut Table,
    notes: &mut Vec<String>,
) {
    println!("P2h with metrics, traces and the audit log on and off:");
    let receiver = receiver();
    let mut servers: Vec<(Child, String)> = VARIANTS
        .iter()
        .enumerate()
        .map(|(index, variant)| {
            let addr = format!("127.0.0.1:{}", 18960 + index);
            let child = Command::new(toolhost)
                .args(["serve", "--http", &addr, "--config"])
                .arg(config(index, variant, &receiver.url))
                .env("TOOLHOST_LOG", "warn")
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("toolhost serve --http");
            (child, addr)
        })
        .collect();
    for (_, addr) in &servers {
        wait_for_port(addr);
    }
    let mut rates = vec![Vec::new(); VARIANTS.len()];
    let mut p99s = vec![Vec::new(); VARIANTS.len()];
    let mut calls = 0.0;
    for _ in 0..rounds {
        for (index, (_, addr)) in servers.iter().enumerate() {
            let r = wrk(&format!("http://{addr}/mcp"), script, 32, seconds);
            println!(
                "  {}: {:.0} calls/s, p99 {:.2} ms, {} errors",
                VARIANTS[index].name, r.rps, r.p99, r.errors
            );
            if VARIANTS[index].traces == Some(1.0) {
                calls += r.rps * f64::from(seconds);
            }
            rates[index].push(r.rps);
            p99s[index].push(r.p99);
        }
    }
    // The spans of the last batches leave at shutdown.
    for (child, _) in &mut servers {
        // SAFETY: kill only sends SIGTERM to a child this bench started.
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) };
    }
    for (child, _) in &mut servers {
        let _ = child.wait();
    }
    let base = median(rates[0].clone());
    for (index, variant) in VARIANTS.iter().enumerate() {
        let rate = median(rates[index].clone());
        let p99 = median(p99s[index].clone());
        table.row(
            &format!(
                "P2h cost of observability, 2026-07-28, 32 clients: {}",
                variant.name
            ),
            format!("{rate:.0} calls/s, p99 {p99:.2} ms (median of {rounds})"),
            "side by side",
            format!("{:.2}× the calls/s with nothing recorded", rate / base),
        );
    }
    let received = receiver.spans.load(Ordering::Relaxed);
    notes.push(format!(
        "Observability on P2h: the in-process OTLP receiver got {received} spans for about {calls:.0} calls with every trace kept (6 spans per call when none is dropped: HTTP, MCP request, call, instantiate, guest, render; the batch processor drops what does not fit its queue of 2,048). The receiver runs on the same 2 cores as the server and wrk, so the traced rows include decoding the spans."
    ));
}
