//! The mapper and its renderers: the only place that knows a wire format.
//!
//! A renderer turns a borrowed [`ToolResult`] into what goes on the wire for one
//! output format: the legacy envelope's JSON text ([`legacy`]), rmcp's typed
//! `CallToolResult` of one MCP revision in one [`OutputMode`] ([`mcp`]), which
//! rmcp serializes as it is, or an A2A task's JSON text ([`a2a`]). Every
//! renderer maps every part of every result; where a format lacks a concept it
//! writes the documented text form of [`text`] (see `docs/rendering.md`).
//!
//! The [`Mapper`] picks the renderer for a [`Target`] (a `match`, see
//! [`Target::render`]), applies the size limit of that format to the complete
//! rendering, and moves what does not fit into the result store, rendering a link
//! instead.

pub mod a2a;
pub mod format;
pub mod input;
pub mod legacy;
mod literal;
mod mapper;
pub mod mcp;
mod members;
pub mod meta;
pub mod prompt;
pub mod request_error;
pub mod resource;
mod revision;
pub mod structured;
pub mod task;
pub mod text;

pub use mapper::{Mapper, Rendered, SizeLimits, json_size};
pub use mcp::ServerInfo;
pub use revision::{Revision, UnknownRevision};

use std::fmt;
use std::str::FromStr;

use jiff::Timestamp;
use serde_json::Value;

use crate::result::ToolResult;

/// What a renderer wrote: what the transport sends, without another conversion.
#[derive(Debug, Clone, PartialEq)]
pub enum Rendering {
    /// A `CallToolResult` as rmcp sends it.
    Mcp(Box<rmcp::model::CallToolResult>),
    /// A JSON document as text: the legacy envelope, an A2A task, or a
    /// `CallToolResult` for an edge that sends text ([`RenderContext::mcp_as_text`]).
    Json(String),
}

impl Rendering {
    /// The bytes a client receives: the compact JSON of the rendering (for MCP,
    /// the `result` member of the JSON-RPC response, as rmcp writes it).
    pub fn to_json(&self) -> String {
        match self {
            Rendering::Mcp(result) => {
                serde_json::to_string(result).expect("a CallToolResult always serializes")
            }
            Rendering::Json(text) => text.clone(),
        }
    }

    /// [`Rendering::to_json`], taking the text of a text rendering instead of
    /// copying it.
    pub fn into_json(self) -> String {
        match self {
            Rendering::Json(text) => text,
            typed => typed.to_json(),
        }
    }

    /// The rendering as a JSON tree, to inspect it (tests, the CLI); what is sent
    /// is [`Rendering::to_json`] or the typed value itself.
    pub fn to_value(&self) -> Value {
        match self {
            Rendering::Mcp(result) => {
                serde_json::to_value(result).expect("a CallToolResult always serializes")
            }
            Rendering::Json(text) => {
                serde_json::from_str(text).expect("a renderer writes valid JSON")
            }
        }
    }

    /// The size in bytes of [`Rendering::to_json`]: the length of the text, or
    /// for a typed result its serialization counted without keeping it.
    pub fn size(&self) -> usize {
        match self {
            Rendering::Mcp(result) => json_size(result),
            Rendering::Json(text) => text.len(),
        }
    }
}

/// What a renderer may need to know beside the result itself.
#[derive(Debug, Clone, Copy)]
pub struct RenderContext<'a> {
    /// The render time: the generation time of results that do not carry one.
    pub now: Timestamp,
    /// The output schema the tool declared, which decides how non-object data is
    /// wrapped for revisions that only allow objects.
    pub output_schema: Option<&'a Value>,
    /// The tool that produced the result (names the A2A artifact).
    pub tool: &'a str,
    /// The request's id (the A2A task id).
    pub request_id: &'a str,
    /// Who called: stored results are bound to this principal.
    pub principal: Option<&'a str>,
    /// The server that answers, which 2026-07-28 results name in their `_meta`
    /// (none: the entry is left out, as for a rendering outside a server).
    pub server: Option<ServerInfo<'a>>,
    /// Whether the edge sends an MCP result as JSON text (stdio), not as rmcp's
    /// typed `CallToolResult` (HTTP): the MCP renderer then writes
    /// [`Rendering::Json`], the same bytes, in one pass.
    pub mcp_as_text: bool,
}

impl<'a> RenderContext<'a> {
    /// A context for `tool` at time `now`, with no schema, request id or principal.
    pub fn new(tool: &'a str, now: Timestamp) -> Self {
        RenderContext {
            now,
            output_schema: None,
            tool,
            request_id: "",
            principal: None,
            server: None,
            mcp_as_text: false,
        }
    }
}

/// How MCP results are shaped; the ADR's phases.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum OutputMode {
    /// Phase 1: structured content and the error flag, with the legacy
    /// `{"success": ..}` string as the text block, so existing readers keep working.
    #[default]
    Compat,
    /// Phase 3: the data as plain JSON text, the summary and the metadata as text
    /// blocks of their own.
    Spec,
    /// For callers that read only the legacy envelope: the content is that one
    /// text block, which carries every part; structured content and the error
    /// flag are set as in `Compat` (a declared output schema obliges the former).
    Legacy,
}

impl OutputMode {
    pub const ALL: [OutputMode; 3] = [OutputMode::Compat, OutputMode::Spec, OutputMode::Legacy];

    pub fn as_str(self) -> &'static str {
        match self {
            OutputMode::Compat => "compat",
            OutputMode::Spec => "spec",
            OutputMode::Legacy => "legacy",
        }
    }
}

impl FromStr for OutputMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "compat" => Ok(OutputMode::Compat),
            "spec" => Ok(OutputMode::Spec),
            "legacy" => Ok(OutputMode::Legacy),
            other => Err(format!(
                "unknown output mode {other:?}; use \"compat\" (legacy text block), \"spec\" (plain JSON text) or \"legacy\" (the envelope only)"
            )),
        }
    }
}

/// The format a caller speaks: what the mapper renders for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// The legacy `{"success": ..}` envelope as a JSON object.
    Legacy,
    /// A `CallToolResult` of one MCP revision.
    Mcp {
        revision: Revision,
        mode: OutputMode,
    },
    /// An A2A 1.0 task with artifacts.
    A2a,
}

impl Target {
    /// Every target: the legacy envelope, each revision in each mode, A2A.
    pub fn all() -> Vec<Target> {
        let mut all = vec![Target::Legacy];
        for revision in Revision::ALL {
            for mode in OutputMode::ALL {
                all.push(Target::Mcp { revision, mode });
            }
        }
        all.push(Target::A2a);
        all
    }

    /// Renders `result` for this target, without a size limit.
    pub fn render(self, result: &ToolResult, ctx: &RenderContext<'_>) -> Rendering {
        match self {
            Target::Legacy => Rendering::Json(legacy::envelope_text(result, ctx)),
            Target::Mcp { revision, mode } => {
                let renderer = mcp::McpRenderer { revision, mode };
                match ctx.mcp_as_text {
                    true => Rendering::Json(renderer.render_text(result, ctx)),
                    false => Rendering::Mcp(Box::new(renderer.render(result, ctx))),
                }
            }
            Target::A2a => Rendering::Json(a2a::render(result, ctx)),
        }
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Legacy => f.write_str("legacy"),
            Target::Mcp { revision, mode } => write!(f, "mcp-{revision}-{}", mode.as_str()),
            Target::A2a => f.write_str("a2a"),
        }
    }
}

impl FromStr for Target {
    type Err = String;

    /// `legacy`, `a2a`, or `mcp-<revision>-<mode>` (`mcp-2025-06-18-compat`).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "legacy" => Ok(Target::Legacy),
            "a2a" => Ok(Target::A2a),
            _ => {
                let parsed = s
                    .strip_prefix("mcp-")
                    .and_then(|rest| rest.rsplit_once('-'))
                    .and_then(|(revision, mode)| {
                        Some(Target::Mcp {
                            revision: revision.parse().ok()?,
                            mode: mode.parse().ok()?,
                        })
                    });
                parsed.ok_or_else(|| {
                    format!("unknown target {s:?}; use \"legacy\", \"a2a\" or \"mcp-<revision>-<compat|spec>\", e.g. \"mcp-2025-06-18-compat\"")
                })
            }
        }
    }
}
