//! An A2A (Agent2Agent) 1.0 task: the ADR's check that the result object is not
//! shaped after MCP.
//!
//! A success is a task in `TASK_STATE_COMPLETED` with one artifact named after the
//! tool; a failure is a task in `TASK_STATE_FAILED` whose status message carries
//! the error (its message as text, its code and details as data). The artifact
//! holds, in order: the summary (text), the data (a data part; any JSON value),
//! each content part, and each stored link (a URL part). Metadata goes into the
//! artifact's (or, without an artifact, the task's) `metadata` under the same keys
//! as MCP `_meta`.
//!
//! Part mapping: text → `text` (+ `mediaType`); binary → `raw` (base64) +
//! `mediaType`; resource link → `url` + `mediaType` + `filename` (its name), title,
//! description and size in the part's metadata; embedded resource → `text` or
//! `raw`, its URI in the part's metadata; stored link → `url`, size and expiry in
//! the part's metadata.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

use super::{RenderContext, meta, text};
use crate::result::{ContentPart, Outcome, ResourceBody, ToolResult};

/// Renders an A2A 1.0 `Task` as its compact JSON text.
pub fn render(result: &ToolResult, ctx: &RenderContext<'_>) -> String {
    super::mcp::json_text(&task(result, ctx))
}

/// The task of `result`.
fn task(result: &ToolResult, ctx: &RenderContext<'_>) -> Value {
    {
        let metadata = meta::metadata_map(result, ctx);
        let generated_at = result.metadata().generated_at.unwrap_or(ctx.now);
        let task_id = if ctx.request_id.is_empty() {
            ctx.tool
        } else {
            ctx.request_id
        };

        let mut parts = Vec::new();
        if let Some(summary) = result.summary() {
            parts.push(json!({ "text": summary }));
        }
        if let Some(data) = result.data() {
            parts.push(json!({ "data": data, "mediaType": "application/json" }));
        }
        parts.extend(result.content().iter().map(part));
        for link in result.stored_links() {
            let mut link_meta = Map::new();
            if let Some(size) = link.size {
                link_meta.insert("size".into(), json!(size));
            }
            if let Some(at) = link.expires_at {
                link_meta.insert("expiresAt".into(), json!(at.to_string()));
            }
            let mut url = json!({ "url": link.uri, "mediaType": link.mime });
            if !link_meta.is_empty() {
                url["metadata"] = Value::Object(link_meta);
            }
            parts.push(url);
        }

        let mut status = Map::new();
        let mut task = Map::new();
        task.insert("id".into(), json!(task_id));
        task.insert("contextId".into(), json!(task_id));
        match result.outcome() {
            Outcome::Success { .. } => {
                status.insert("state".into(), json!("TASK_STATE_COMPLETED"));
                if parts.is_empty() {
                    parts.push(json!({ "text": text::empty(result) }));
                }
            }
            Outcome::Failure(error) => {
                status.insert("state".into(), json!("TASK_STATE_FAILED"));
                let mut error_data = json!({ "code": error.code.as_str() });
                if let Some(details) = &error.details {
                    error_data["details"] = details.clone();
                }
                status.insert(
                    "message".into(),
                    json!({
                        "messageId": format!("{task_id}-error"),
                        "role": "ROLE_AGENT",
                        "parts": [{ "text": error.message }, { "data": error_data }],
                    }),
                );
            }
        }
        status.insert("timestamp".into(), json!(generated_at.to_string()));
        task.insert("status".into(), Value::Object(status));

        if parts.is_empty() {
            task.insert("metadata".into(), Value::Object(metadata));
        } else {
            task.insert(
                "artifacts".into(),
                json!([{
                    "artifactId": format!("{task_id}-result"),
                    "name": ctx.tool,
                    "parts": parts,
                    "metadata": metadata,
                }]),
            );
        }
        Value::Object(task)
    }
}

fn part(content: &ContentPart) -> Value {
    match content {
        ContentPart::Text { text, mime } => match mime {
            Some(mime) => json!({ "text": text, "mediaType": mime }),
            None => json!({ "text": text }),
        },
        ContentPart::Binary { data, mime } => {
            json!({ "raw": STANDARD.encode(data), "mediaType": mime })
        }
        ContentPart::ResourceLink(link) => {
            let mut out = json!({ "url": link.uri, "filename": link.name });
            if let Some(mime) = &link.mime {
                out["mediaType"] = json!(mime);
            }
            let mut facts = Map::new();
            if let Some(title) = &link.title {
                facts.insert("title".into(), json!(title));
            }
            if let Some(description) = &link.description {
                facts.insert("description".into(), json!(description));
            }
            if let Some(size) = link.size {
                facts.insert("size".into(), json!(size));
            }
            if !facts.is_empty() {
                out["metadata"] = Value::Object(facts);
            }
            out
        }
        ContentPart::EmbeddedResource { uri, mime, body } => {
            let mut out = match body {
                ResourceBody::Text(text) => json!({ "text": text }),
                ResourceBody::Bytes(bytes) => json!({ "raw": STANDARD.encode(bytes) }),
            };
            if let Some(mime) = mime {
                out["mediaType"] = json!(mime);
            }
            out["metadata"] = json!({ "uri": uri });
            out
        }
    }
}
