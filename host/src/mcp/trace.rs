//! Trace context at the edge: the span of each HTTP request and of each MCP
//! request, each continuing the caller's trace when it sends a W3C
//! `traceparent`, in the HTTP header or (any revision; 2026-07-28 reserves the
//! key for it) in the request's `_meta`.
//!
//! The spans are DEBUG spans of this crate, so with traces off and the default
//! log level they are never created. With traces on (`app::telemetry`),
//! `tracing`'s OpenTelemetry layer makes them OpenTelemetry spans, named and
//! attributed after the OpenTelemetry semantic conventions for HTTP and MCP
//! servers; the spans of one `tools/call`:
//!
//! ```text
//! POST /mcp                      (HTTP only; the header's traceparent is its parent)
//! └── tools/call add             (the `_meta` traceparent, when sent, is its parent)
//!     ├── call                   (the tool call: plugin, tool, outcome, instance time)
//!     │   ├── instantiate
//!     │   └── guest
//!     └── render                 (bytes rendered, offloaded or not)
//!         └── store              (only for a result over the size limit)
//! ```
//!
//! A caller's trace context is bounded: a `traceparent` is at most
//! [`MAX_TRACEPARENT`] bytes and a `tracestate` at most [`MAX_TRACESTATE`],
//! longer ones are ignored (W3C Trace Context's own limits).

use axum::extract::Request;
use axum::middleware::Next;
use axum::response::Response;
use opentelemetry::Context;
use opentelemetry::propagation::{Extractor, TextMapPropagator as _};
use opentelemetry::trace::TraceContextExt as _;
use opentelemetry_sdk::propagation::TraceContextPropagator;
use serde_json::{Map, Value};
use tracing::Instrument as _;
use tracing::field::Empty;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

/// The longest `traceparent` read (version 00 is 55 bytes; later versions may
/// append fields).
pub const MAX_TRACEPARENT: usize = 128;

/// The longest `tracestate` read (W3C: 32 members, 512 characters).
pub const MAX_TRACESTATE: usize = 512;

/// The longest request path a span name carries.
const MAX_PATH: usize = 64;

/// The span of the HTTP request an MCP request came in, for the MCP request's
/// span to continue (rmcp serves a request on a task of its own, where the
/// HTTP span is not the current one).
#[derive(Clone)]
pub struct HttpSpan(pub tracing::Span);

/// A request's span and the id of the trace it belongs to.
pub struct RequestTrace {
    pub span: tracing::Span,
    /// The trace id (32 hex digits): of the span when traces are on, else of
    /// the caller's `traceparent`; `None` without either.
    pub trace_id: Option<String>,
}

/// The HTTP middleware: every request runs in its `{method} {route}` span.
pub async fn http_span(mut request: Request, next: Next) -> Response {
    let span = {
        let method = request.method().as_str();
        let path = bounded(request.uri().path());
        tracing::debug_span!(
            "http",
            otel.name = %HttpName { method, path },
            otel.kind = "server",
            otel.status_code = Empty,
            http.request.method = method,
            url.path = path,
            http.response.status_code = Empty,
        )
    };
    if !span.is_disabled() {
        let parent = remote_parent(&Headers(request.headers()));
        if parent.span().span_context().is_valid() {
            let _ = span.set_parent(parent);
        }
        request.extensions_mut().insert(HttpSpan(span.clone()));
    }
    let response = next.run(request).instrument(span.clone()).await;
    let status = response.status();
    span.record("http.response.status_code", i64::from(status.as_u16()));
    if status.is_server_error() {
        span.record("otel.status_code", "ERROR");
    }
    response
}

/// An HTTP span's name: named after the route, never a path a caller made
/// up (OpenTelemetry's HTTP conventions: `{method} {route}`, else `{method}`).
struct HttpName<'a> {
    method: &'a str,
    path: &'a str,
}

impl std::fmt::Display for HttpName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let route = match self.path {
            "/mcp" | "/metrics" | "/healthz" | "/readyz" => self.path,
            path if path.starts_with("/.well-known/") => "/.well-known",
            _ => return f.write_str(self.method),
        };
        write!(f, "{} {route}", self.method)
    }
}

/// An MCP span's name: `{method} {target}`, else `{method}`.
struct McpName<'a> {
    method: &'a str,
    target: Option<&'a str>,
}

impl std::fmt::Display for McpName<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.target {
            Some(target) => write!(f, "{} {}", self.method, bounded(target)),
            None => f.write_str(self.method),
        }
    }
}

// Numbers are recorded as `i64`: the OpenTelemetry layer records a `u64` as text.

/// The span of an MCP request for `method` (and its `target`, a tool name or
/// a URI, when it has one): its parent is the `traceparent` of `meta`, else
/// the HTTP request's span, else none (a new trace). Without traces (and at
/// the default log level) the span is disabled and this costs a map lookup.
pub fn request_span(
    method: &'static str,
    target: Option<&str>,
    request_id: &str,
    meta: &Map<String, Value>,
    http: Option<&HttpSpan>,
) -> RequestTrace {
    let span = tracing::debug_span!(
        parent: None,
        "mcp",
        otel.name = %McpName { method, target },
        otel.kind = "server",
        otel.status_code = Empty,
        mcp.method.name = method,
        jsonrpc.request.id = bounded(request_id),
        gen_ai.tool.name = Empty,
        error.type = Empty,
        toolhost.plugin = Empty,
        toolhost.outcome = Empty,
        toolhost.rendered_bytes = Empty,
        toolhost.offloaded = Empty,
    );
    let sent = meta
        .contains_key("traceparent")
        .then(|| remote_parent(&MetaFields(meta)))
        .filter(|parent| parent.span().span_context().is_valid());
    if span.is_disabled() {
        let trace_id = sent.map(|parent| parent.span().span_context().trace_id().to_string());
        return RequestTrace { span, trace_id };
    }
    let parent = sent.or_else(|| http.map(|http| http.0.context()));
    if let Some(parent) = parent {
        let _ = span.set_parent(parent);
    }
    let context = span.context();
    let ids = context.span().span_context().clone();
    let trace_id = ids.is_valid().then(|| ids.trace_id().to_string());
    RequestTrace { span, trace_id }
}

/// The caller's trace context in `carrier`; an empty context when there is
/// none or it is malformed.
fn remote_parent(carrier: &dyn Extractor) -> Context {
    TraceContextPropagator::new().extract(carrier)
}

/// `text` (a path, a tool name, a request id) cut to [`MAX_PATH`] bytes at a character boundary.
fn bounded(text: &str) -> &str {
    super::cut(text, MAX_PATH)
}

/// The longest value read of a trace-context key.
fn limit(key: &str) -> usize {
    if key.eq_ignore_ascii_case("tracestate") {
        MAX_TRACESTATE
    } else {
        MAX_TRACEPARENT
    }
}

struct Headers<'a>(&'a http::HeaderMap);

impl Extractor for Headers<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        let value = self.0.get(key)?.to_str().ok()?;
        (value.len() <= limit(key)).then_some(value)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(http::HeaderName::as_str).collect()
    }
}

struct MetaFields<'a>(&'a Map<String, Value>);

impl Extractor for MetaFields<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        let value = self.0.get(key)?.as_str()?;
        (value.len() <= limit(key)).then_some(value)
    }

    fn keys(&self) -> Vec<&str> {
        self.0.keys().map(String::as_str).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const PARENT: &str = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";

    fn meta(value: Value) -> Map<String, Value> {
        value.as_object().unwrap().clone()
    }

    #[test]
    fn the_trace_id_of_a_meta_traceparent_is_known_without_traces_on() {
        let sent = request_span(
            "tools/call",
            Some("add"),
            "1",
            &meta(json!({ "traceparent": PARENT })),
            None,
        );
        assert_eq!(
            sent.trace_id.as_deref(),
            Some("4bf92f3577b34da6a3ce929d0e0e4736")
        );
        let none = request_span("tools/call", Some("add"), "1", &Map::new(), None);
        assert_eq!(none.trace_id, None);
    }

    #[test]
    fn a_malformed_or_oversized_traceparent_is_ignored() {
        let long = format!("{PARENT}-{}", "a".repeat(MAX_TRACEPARENT));
        for bad in [json!("00-zz-00-01"), json!(long), json!(7)] {
            let trace = request_span(
                "tools/call",
                None,
                "1",
                &meta(json!({ "traceparent": bad })),
                None,
            );
            assert_eq!(trace.trace_id, None, "{bad}");
        }
    }

    #[test]
    fn spans_are_named_after_routes_and_methods_never_made_up_paths() {
        let http = |method, path| HttpName { method, path }.to_string();
        assert_eq!(http("POST", "/mcp"), "POST /mcp");
        assert_eq!(
            http("GET", "/.well-known/oauth-protected-resource/mcp"),
            "GET /.well-known"
        );
        assert_eq!(http("GET", "/a-path-made-up-by-a-caller"), "GET");
        let mcp = |target| {
            McpName {
                method: "tools/call",
                target,
            }
            .to_string()
        };
        assert_eq!(mcp(Some("add")), "tools/call add");
        assert_eq!(mcp(None), "tools/call");
    }

    #[test]
    fn a_long_target_is_cut_at_a_character_boundary() {
        let name = "é".repeat(100);
        let cut = bounded(&name);
        assert!(cut.len() <= MAX_PATH && name.starts_with(cut));
    }
}
