//! Every end-to-end test of toolhost, in one test binary: each file beside this
//! one is a module of it (`cargo test --release --test integration http::` runs
//! the tests of `tests/http.rs`). One binary links wasmtime and the host once,
//! where a binary per file linked them thirty times over (each a few hundred
//! MB with line tables); the tests run side by side as before, `--test-threads`
//! at a time.

mod common;

mod attacks;
mod budgets;
mod cli;
mod distribution;
mod examples;
mod fault_detail;
mod formats;
mod golden_matrix;
mod grants;
mod http;
mod interaction;
mod languages;
mod load_faults;
mod mcp_http;
mod mcp_stdio;
mod module_flow;
mod network;
mod oauth;
mod observability;
mod offers;
mod operations;
mod render_rules;
mod sandbox;
mod store;
mod store_processes;
mod tasks;
mod tasks_handshake;
mod telemetry;
mod webhooks;
mod wire;
mod wit_package;
