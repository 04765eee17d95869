//! P1 counted: `p1_count <floor|text|typed> <calls>` makes that many calls of
//! one of P1's paths in one process, for `valgrind --tool=callgrind`, which
//! counts the instructions whatever else the machine is doing. Two runs with
//! different numbers of calls, subtracted, give the instructions of one call
//! (the start-up, the same in both, cancels out). `make bench` runs it
//! (`examples/bench/count.rs`).
//!
//! - `floor`: wasmtime alone instantiating calc and calling `add`, as
//!   criterion's `call/floor`;
//! - `text`: toolhost's call with the result's text written by the mapper, as
//!   every edge sends it (stdio, Streamable HTTP with or without a session);
//!   as `call/toolhost/pooling-text`;
//! - `typed`: the same call rendered as the typed result rmcp serializes (a
//!   2025-11-25 task's result), as `call/toolhost/pooling`.
//!
//! valgrind cannot reserve the address space of the default instance pool (4 GiB
//! a memory slot, 512 slots), so the pool here holds two instances: the floor
//! and the call share that engine, as they share the default one in criterion.

use std::process::ExitCode;

use serde_json::json;

#[path = "bench/floor.rs"]
mod floor;
#[path = "bench/p1.rs"]
mod p1;

/// Instances in the pool: one call at a time, and the floor's.
const POOL_INSTANCES: u32 = 4;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let (path, calls) = match args.as_slice() {
        [path, calls] if ["floor", "text", "typed"].contains(&path.as_str()) => {
            match calls.parse::<usize>() {
                Ok(calls) => (path.clone(), calls),
                Err(_) => return usage(),
            }
        }
        _ => return usage(),
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("tokio");
    let host = rt.block_on(p1::calc_host(true, POOL_INSTANCES));
    let pre = floor::floor_pre(&host.runtime, &p1::example("calc"));
    let arguments = json!({"a": 2, "b": 3});
    let mut bytes = 0;
    for _ in 0..calls {
        bytes += rt.block_on(async {
            match path.as_str() {
                "floor" => floor::floor_call(&pre, "add", r#"{"a":2,"b":3}"#)
                    .await
                    .len(),
                "text" => p1::toolhost_call(&host, &arguments, true).await.len(),
                _ => p1::toolhost_call(&host, &arguments, false).await.len(),
            }
        });
    }
    println!("{path}: {calls} calls, {bytes} bytes answered");
    ExitCode::SUCCESS
}

fn usage() -> ExitCode {
    eprintln!("usage: p1_count <floor|text|typed> <calls>");
    ExitCode::from(2)
}
