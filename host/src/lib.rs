//! toolhost: an MCP server that runs tools written as sandboxed WebAssembly
//! components.
//!
//! The modules follow the flow of one call: the [`mcp`] server takes a request,
//! the [`catalog`] finds the tool, the [`runtime`] runs its component and turns
//! the guest's answer into a [`result::ToolResult`] (or parses it from a legacy
//! string with [`render::legacy::parse`]), the [`render::Mapper`] renders it for
//! the caller's format, and results too large to send inline go to a
//! [`store::ResultStore`]. [`app`], the composition root, reads the
//! configuration and builds the store and the mapper.
//!
//! Imports point from the edge inward. Each module imports only modules to its
//! right in
//!
//! ```text
//! app -> mcp -> catalog -> runtime -> config -> render -> store -> result
//! ```
//!
//! with two narrowings: `store` and `result` are leaves (they import nothing
//! from the crate), and `config` imports only `render`. [`samples`] (fixtures
//! for tests and benches) may import `result` and `render`, and nothing here
//! imports it. The test `module_flow` (`tests/module_flow.rs`) fails on any
//! import that breaks these rules; `docs/decisions.md` says why they are so.

pub mod app;
pub mod catalog;
pub mod config;
pub mod mcp;
pub mod render;
pub mod result;
pub mod runtime;
pub mod samples;
pub mod store;
pub mod supply;
