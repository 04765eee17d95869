//! toolhost: an MCP server that runs tools written as sandboxed WebAssembly
//! components.
//!
//! The modules follow the flow of one call: a guest's answer becomes a
//! [`result::ToolResult`] (or is parsed from a legacy string by
//! [`render::legacy::parse`]), the [`render::Mapper`] renders it for the caller's
//! format, and results too large to send inline go to a [`store::ResultStore`].

pub mod app;
pub mod catalog;
pub mod config;
pub mod mcp;
pub mod render;
pub mod result;
pub mod runtime;
pub mod samples;
pub mod store;
