//! `[[webhook]]` tables: app tools served by an HTTP endpoint instead of a
//! component. The host POSTs each call, signed with a shared secret, and reads
//! the answer (a legacy envelope or a versioned result) through the same parser
//! and mapper as every other result.

use serde::Deserialize;
use serde_json::Value;

/// One webhook and the tools it serves.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookConfig {
    /// The webhook's name in logs and error details.
    pub name: String,
    /// The endpoint (`http://` or `https://`); its address must be on
    /// `host.webhook_allow`.
    pub url: String,
    /// The shared secret, or the name of an environment variable holding it.
    #[serde(default)]
    pub secret: Option<String>,
    #[serde(default)]
    pub secret_env: Option<String>,
    /// The budget of one call, connection and answer included.
    #[serde(default = "WebhookConfig::default_timeout_ms")]
    pub timeout_ms: u64,
    /// The largest answer read; a larger one is refused.
    #[serde(default = "WebhookConfig::default_max_response_bytes")]
    pub max_response_bytes: usize,
    /// Prepended to each tool name (`<prefix>_<tool>`).
    #[serde(default)]
    pub prefix: Option<String>,
    /// Privileges every tool of the webhook requires (beside each tool's
    /// `required_privileges`); default none.
    #[serde(default)]
    pub privileges: Vec<String>,
    /// The tools, described here because the endpoint is not asked.
    #[serde(default, rename = "tool")]
    pub tools: Vec<WebhookToolConfig>,
}

impl WebhookConfig {
    fn default_timeout_ms() -> u64 {
        10_000
    }
    fn default_max_response_bytes() -> usize {
        1 << 20
    }
}

/// A tool a webhook serves, described as a component would describe it.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WebhookToolConfig {
    pub name: String,
    #[serde(default)]
    pub title: Option<String>,
    pub description: String,
    /// JSON Schema of the arguments (a TOML table); default: any object.
    #[serde(default = "WebhookToolConfig::any_object")]
    pub input_schema: Value,
    #[serde(default)]
    pub output_schema: Option<Value>,
    #[serde(default)]
    pub required_privileges: Vec<String>,
    #[serde(default)]
    pub read_only: Option<bool>,
    #[serde(default)]
    pub destructive: Option<bool>,
    #[serde(default)]
    pub idempotent: Option<bool>,
    #[serde(default)]
    pub open_world: Option<bool>,
}

impl WebhookToolConfig {
    fn any_object() -> Value {
        serde_json::json!({"type": "object"})
    }
}
