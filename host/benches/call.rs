//! In-process costs of a call (issue #7, P1, P3 and the instance pool), measured
//! with criterion. `make bench` runs it and reads the estimates back from
//! `target/criterion/` for its summary table.
//!
//! - `call/toolhost/{pooling,on-demand}`: one call of calc's `add` as the MCP
//!   handler makes it: arguments validated against the input schema, a fresh
//!   store and instance, the call, the output checked and the result rendered for
//!   MCP 2026-07-28 (compat).
//! - `call/toolhost/pooling-text`: the same call rendered as every edge sends
//!   it (stdio, Streamable HTTP with or without a session), where the mapper
//!   writes the result's JSON text itself (`mcp_as_text`). `pooling` renders
//!   rmcp's typed result, as only a 2025-11-25 task's result still is.
//! - `call/floor`: the floor under it: wasmtime alone instantiating the same
//!   component in the same engine (the pooling one toolhost builds) and calling
//!   `add` through the same bindings, with an empty WASI context.
//! - `render/<size>/<target>`: the mapper alone, for every target, to bytes
//!   (for MCP, rmcp's typed result serialized as rmcp does: a 2025-11-25
//!   task's result; legacy and A2A as they go out).
//! - `render-text/<size>/<target>`: the same for every MCP target as every
//!   edge sends a call's result, where the mapper writes the result's JSON text
//!   itself, in one pass.
//! - `offload/sqlite/1MB`: a 1 MB result over the limit, stored in SQLite and
//!   rendered as a link.
//! - `http/*` (issue #13, measured side by side in rounds, not by criterion:
//!   see [`http`]): one outgoing request through the host against the
//!   same request from a native client, to a local HTTP server (on a runtime
//!   of its own): `http/toolhost/request` is one call of http_probe's
//!   `http_request` (a GET of 64 bytes, allowed by the plugin's `http` rule,
//!   rendered as above); `http/toolhost/no-request` one call of the same
//!   plugin's `http_secret`, which sends nothing (the call without the
//!   request); `http/native/hyper-new-connection` the same GET from hyper
//!   alone on a new connection (as the host sends each request: connect,
//!   HTTP/1.1 handshake, request, body), `http/native/new-connection` from
//!   reqwest opening a connection per request, and `http/native/keep-alive`
//!   from reqwest on a kept-alive connection.

use std::hint::black_box;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use criterion::{BatchSize, Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use toolhost::catalog::Caller;
use toolhost::render::{Mapper, RenderContext, SizeLimits, Target};
use toolhost::result::{ContentPart, ToolResult};
use toolhost::runtime::POOL_INSTANCES;
use toolhost::store::{Signer, SqliteStore};

#[path = "../examples/bench/floor.rs"]
mod floor;
#[path = "../examples/bench/p1.rs"]
mod p1;
use floor::{floor_call, floor_pre};
use p1::{Host, SERVER, TARGET, example, host_of, root, toolhost_call};

#[cfg(feature = "mimalloc")]
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn calls(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("tokio");
    let args = json!({"a": 2, "b": 3});
    let pooling = rt.block_on(p1::calc_host(true, POOL_INSTANCES));
    let on_demand = rt.block_on(p1::calc_host(false, POOL_INSTANCES));
    let pre = floor_pre(&pooling.runtime, &example("calc"));
    let mut group = c.benchmark_group("call");
    group.bench_function("floor", |b| {
        b.to_async(&rt)
            .iter(|| floor_call(&pre, "add", r#"{"a":2,"b":3}"#))
    });
    group.bench_function("toolhost/pooling", |b| {
        b.to_async(&rt)
            .iter(|| toolhost_call(&pooling, &args, false))
    });
    group.bench_function("toolhost/pooling-text", |b| {
        b.to_async(&rt)
            .iter(|| toolhost_call(&pooling, &args, true))
    });
    group.bench_function("toolhost/on-demand", |b| {
        b.to_async(&rt)
            .iter(|| toolhost_call(&on_demand, &args, false))
    });
    group.finish();
}

/// A successful result whose MCP rendering is about `bytes` long: an object of
/// records, a summary and a text part. Its data is read from JSON text, as a
/// guest's answer arrives.
fn result_of(bytes: usize) -> ToolResult {
    let row = json!({"id": 12345, "name": "a row of the result", "ok": true, "score": 0.5});
    let per_row = row.to_string().len() + 1;
    // The compat rendering carries the data twice (structured and in the text).
    let rows: Vec<Value> = (0..(bytes / 2 / per_row).max(1))
        .map(|_| row.clone())
        .collect();
    ToolResult::success_from_json(&json!({ "rows": rows }).to_string())
        .expect("JSON")
        .summary("rows of the result")
        .part(ContentPart::text("a text part"))
        .build()
}

fn render(c: &mut Criterion) {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio");
    let sizes = [("1KB", 1_000), ("24KB", 24_000), ("1MB", 1_000_000)];
    // Without a limit: the mapper renders everything inline.
    let mapper = Mapper::new(SizeLimits::uniform(usize::MAX), None);
    let mut ctx = RenderContext::new("bench", jiff::Timestamp::now());
    ctx.server = Some(SERVER);
    for (label, bytes) in sizes {
        let result = result_of(bytes);
        let mut group = c.benchmark_group(format!("render/{label}"));
        if bytes > 100_000 {
            group.sample_size(10);
        }
        // The floor: the data alone written once as compact JSON.
        let data = result.data().expect("data");
        group.bench_function("floor", |b| {
            b.iter(|| {
                let mut out = Vec::with_capacity(bytes);
                serde_json::to_writer(&mut out, data).expect("json");
                out
            })
        });
        // Each target to the bytes a client receives, as the MCP edge renders a
        // call's result. Where the rendering carries the data as structured
        // content (MCP from 2025-06-18), the edge gives the result away and the
        // data moves into the rendering: measured from a copy made outside the
        // measurement, the drop of the rendering (and so of the data) inside it.
        // The other targets borrow the result, as before.
        for target in Target::all() {
            let moves =
                matches!(target, Target::Mcp { revision, .. } if revision.has_structured_content());
            group.bench_function(target.to_string(), |b| {
                if moves {
                    b.to_async(&rt).iter_batched(
                        || result.clone(),
                        |result| async {
                            let rendered = mapper.render_owned(result, target, &ctx).await;
                            rendered.rendering.into_json()
                        },
                        BatchSize::SmallInput,
                    )
                } else {
                    b.to_async(&rt).iter(|| async {
                        let rendered = mapper.render(&result, target, &ctx).await;
                        rendered.rendering.into_json()
                    })
                }
            });
        }
        group.finish();

        // Over stdio and over HTTP without a session the mapper writes the
        // text itself, from the borrowed result (the edge gives the result
        // away, but nothing of it moves into the text: it is dropped after the
        // rendering, as the borrowing rows above leave it out).
        let mut group = c.benchmark_group(format!("render-text/{label}"));
        if bytes > 100_000 {
            group.sample_size(10);
        }
        let mut text_ctx = ctx;
        text_ctx.mcp_as_text = true;
        for target in Target::all() {
            if !matches!(target, Target::Mcp { .. }) {
                continue;
            }
            group.bench_function(target.to_string(), |b| {
                b.to_async(&rt).iter(|| async {
                    let rendered = mapper.render(&result, target, &text_ctx).await;
                    rendered.rendering.into_json()
                })
            });
        }
        group.finish();
    }

    let dir = tempfile::tempdir().expect("tempdir");
    let store = SqliteStore::open(
        &dir.path().join("results.sqlite3"),
        Signer::new(vec![7; 32]),
        jiff::SignedDuration::from_hours(1),
        jiff::Timestamp::now,
    )
    .expect("sqlite");
    let mapper = Mapper::new(SizeLimits::default(), Some(Arc::new(store)));
    let result = result_of(1_000_000);
    let mut group = c.benchmark_group("offload/sqlite");
    group.sample_size(10);
    group.bench_function("1MB", |b| {
        b.to_async(&rt).iter(|| async {
            let rendered = mapper.render(&result, TARGET, &ctx).await;
            assert!(rendered.offloaded);
            rendered
        })
    });
    group.finish();
}

/// A local HTTP server answering every request with 64 bytes, on a runtime of
/// its own (so its work is not counted in the client's thread); its address.
/// With `close`, it closes each connection after its answer (`Connection:
/// close`): the closing side keeps the TIME_WAIT, so tens of thousands of new
/// connections from one client do not use up its ephemeral ports.
fn local_server(close: bool) -> std::net::SocketAddr {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let addr = listener.local_addr().expect("addr");
    listener.set_nonblocking(true).expect("nonblocking");
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("tokio");
        rt.block_on(async move {
            let listener = tokio::net::TcpListener::from_std(listener).expect("listener");
            let app = axum::Router::new().fallback(move || async move {
                let mut response = axum::response::IntoResponse::into_response("x".repeat(64));
                if close {
                    response.headers_mut().insert(
                        axum::http::header::CONNECTION,
                        axum::http::HeaderValue::from_static("close"),
                    );
                }
                response
            });
            axum::serve(listener, app).await.expect("serve");
        });
    });
    addr
}

async fn http_host(rule: &str) -> Host {
    host_of(
        &format!(
            "[[plugin]]\npath = \"{}\"\n[plugin.policy]\nhttp = [\"{rule}\"]\n",
            example("http_probe").display()
        ),
        POOL_INSTANCES,
    )
    .await
}

/// One call of `tool` rendered for MCP, as [`toolhost_call`]; panics on a
/// failure, and checks the answer holds `expect`.
async fn probe_call(host: &Host, name: &str, args: &Value, expect: &str) -> String {
    let tool = host.catalog.tool(name).expect("known tool");
    let result = host
        .catalog
        .call(tool, Some(args), &Caller::local(), "1", None)
        .await;
    assert!(result.error().is_none(), "{result:?}");
    let mut ctx = RenderContext::new(name, jiff::Timestamp::now());
    ctx.request_id = "1";
    ctx.server = Some(SERVER);
    let rendered = host.mapper.render_owned(result, TARGET, &ctx).await;
    let text = rendered.rendering.to_json();
    assert!(text.contains(expect), "{text}");
    text
}

async fn native_get(client: &reqwest::Client, url: &str) -> usize {
    let response = client.get(url).send().await.expect("GET");
    assert!(response.status().is_success());
    let body = response.bytes().await.expect("body");
    assert_eq!(body.len(), 64);
    body.len()
}

/// The same GET from hyper alone on a new connection: what the host does
/// around wasmtime-wasi-http (connect, HTTP/1.1 handshake, request, body).
async fn hyper_get(addr: std::net::SocketAddr) -> usize {
    use http_body_util::BodyExt as _;
    let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream.set_nodelay(true).expect("nodelay");
    let (mut sender, connection) = hyper::client::conn::http1::handshake::<
        _,
        http_body_util::Empty<bytes::Bytes>,
    >(hyper_util::rt::TokioIo::new(stream))
    .await
    .expect("handshake");
    // As the host does, the connection is left to end in a task of its own.
    tokio::spawn(connection);
    let request = http::Request::get("/bytes")
        .header("host", addr.to_string())
        .body(http_body_util::Empty::new())
        .expect("request");
    let response = sender.send_request(request).await.expect("send");
    assert!(response.status().is_success());
    let body = response
        .into_body()
        .collect()
        .await
        .expect("body")
        .to_bytes();
    assert_eq!(body.len(), 64);
    drop(sender);
    body.len()
}

/// The variants of the side-by-side HTTP measurement, in the order they are
/// reported.
const HTTP_VARIANTS: [&str; 5] = [
    "toolhost/request",
    "toolhost/no-request",
    "native/hyper-new-connection",
    "native/new-connection",
    "native/keep-alive",
];

/// Rounds of the side-by-side measurement (after one of warm-up), and calls
/// of each variant per round.
const HTTP_ROUNDS: usize = 30;
const HTTP_PER_ROUND: usize = 200;

/// The outgoing-HTTP figures, side by side: not one criterion bench after the
/// other (on a shared machine the load moves between benches, and with it
/// the ratios), but rounds in which every variant makes [`HTTP_PER_ROUND`]
/// calls in turn (the order rotating from round to round). Each variant's
/// figure is the median over the rounds of its mean time per call; so is the
/// ratio of the added cost to hyper's. Printed, and written as JSON to
/// `http-side-by-side.json` beside criterion's estimates for the driver. Not
/// run when `TOOLHOST_BENCH_HTTP` is `0`.
fn http(_: &mut Criterion) {
    // `PGO=1 make bench` trains and measures P1 alone in the profile-guided build.
    if std::env::var_os("TOOLHOST_BENCH_HTTP").is_some_and(|v| v == "0") {
        return;
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("tokio");
    let addr = local_server(true);
    let url = format!("http://{addr}/bytes");
    let kept_url = format!("http://{}/bytes", local_server(false));
    let host = rt.block_on(http_host(&format!("GET http://{addr}/*")));
    let request = json!({"url": url});
    let no_request = json!({"name": "none"});
    let fresh = reqwest::Client::builder()
        .pool_max_idle_per_host(0)
        .build()
        .expect("client");
    let kept = reqwest::Client::new();
    let mut samples: Vec<Vec<f64>> = vec![Vec::new(); HTTP_VARIANTS.len()];
    rt.block_on(async {
        for round in 0..=HTTP_ROUNDS {
            for k in 0..HTTP_VARIANTS.len() {
                let variant = (k + round) % HTTP_VARIANTS.len();
                let started = std::time::Instant::now();
                for _ in 0..HTTP_PER_ROUND {
                    match variant {
                        0 => {
                            black_box(
                                probe_call(&host, "http_request", &request, "xxxxxxxx").await,
                            );
                        }
                        1 => {
                            black_box(
                                probe_call(&host, "http_secret", &no_request, "placeholder").await,
                            );
                        }
                        2 => {
                            black_box(hyper_get(addr).await);
                        }
                        3 => {
                            black_box(native_get(&fresh, &url).await);
                        }
                        _ => {
                            black_box(native_get(&kept, &kept_url).await);
                        }
                    }
                }
                // Round 0 warms up.
                if round > 0 {
                    samples[variant]
                        .push(started.elapsed().as_nanos() as f64 / HTTP_PER_ROUND as f64);
                }
            }
        }
    });
    let median = |values: &[f64]| {
        let mut sorted = values.to_vec();
        sorted.sort_by(f64::total_cmp);
        sorted[sorted.len() / 2]
    };
    let ratios: Vec<f64> = (0..HTTP_ROUNDS)
        .map(|r| (samples[0][r] - samples[1][r]) / samples[2][r])
        .collect();
    let mut medians = serde_json::Map::new();
    println!("http (side by side, {HTTP_ROUNDS} rounds of {HTTP_PER_ROUND} calls each):");
    for (name, values) in HTTP_VARIANTS.iter().zip(&samples) {
        let (low, high) = values
            .iter()
            .fold((f64::MAX, 0.0_f64), |(l, h), v| (l.min(*v), h.max(*v)));
        println!(
            "  http/{name}: median {:.1} µs per call (rounds {:.1}–{:.1} µs)",
            median(values) / 1e3,
            low / 1e3,
            high / 1e3
        );
        medians.insert(format!("http/{name}"), json!(median(values)));
    }
    let mut sorted = ratios.clone();
    sorted.sort_by(f64::total_cmp);
    let quartiles = [sorted[sorted.len() / 4], sorted[sorted.len() * 3 / 4]];
    println!(
        "  added by the host ÷ hyper: median {:.2}× (quartiles {:.2}×–{:.2}×)",
        median(&ratios),
        quartiles[0],
        quartiles[1]
    );
    // Where criterion writes its own estimates: `CRITERION_HOME` when set (as
    // `PGO=1 make bench` does for the profile-guided build), else
    // `<target>/criterion`.
    let dir = std::env::var_os("CRITERION_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            std::env::var_os("CARGO_TARGET_DIR")
                .map(PathBuf::from)
                .unwrap_or_else(|| root().join("target"))
                .join("criterion")
        });
    std::fs::create_dir_all(&dir).expect("the criterion directory");
    let report = json!({
        "rounds": HTTP_ROUNDS,
        "per_round": HTTP_PER_ROUND,
        "median_ns": medians,
        "ratio_median": median(&ratios),
        "ratio_quartiles": quartiles,
        "rounds_ns": HTTP_VARIANTS
            .iter()
            .zip(&samples)
            .map(|(name, values)| (format!("http/{name}"), json!(values.iter().map(|v| v.round()).collect::<Vec<_>>())))
            .collect::<serde_json::Map<_, _>>(),
    });
    std::fs::write(
        dir.join("http-side-by-side.json"),
        serde_json::to_string_pretty(&report).expect("json"),
    )
    .expect("writing the HTTP figures");
}

fn quick() -> Criterion {
    Criterion::default()
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(3))
        .without_plots()
}

criterion_group! {
    name = benches;
    config = quick();
    targets = calls, render, http
}
criterion_main!(benches);
