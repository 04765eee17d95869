//! App tools served by an HTTP endpoint ([`Webhook`]), the second kind of app
//! tool beside `legacy-app` components.
//!
//! Configured once at load ([`Webhook::configure`]): the URL must parse, its
//! address must be on `host.webhook_allow`, the secret must be set. Each call is
//! one POST of `{"tool", "arguments", "context"}` with three headers:
//!
//! - `X-Toolhost-Timestamp`: unix seconds when the call was sent;
//! - `X-Toolhost-Delivery`: 128 random bits in hex, new for every call;
//! - `X-Toolhost-Signature`: `sha256=<hex>`, HMAC-SHA256 under the shared secret
//!   over `<timestamp>.<delivery>.<body>`.
//!
//! A receiver checks the signature, refuses timestamps too far from its clock, and
//! refuses a delivery id it has seen (a replay). The answer is either the legacy
//! `{"success": ..}` envelope or a versioned result (`{"format": N, "result":
//! {..}}`); anything else is passed through as text, as the legacy rule says.
//! [`decode_app_response`] parses it, once (the format: `docs/operating.md`).
//!
//! Defaults are strict: no redirects are followed, name lookups only yield
//! addresses the allow-list grants (a name never grants loopback or private
//! addresses), the call has `timeout_ms` (10 s) in all, and an answer over
//! `max_response_bytes` (1 MiB) is refused without being read further. Every
//! failure is a coded result naming the webhook and tool; none reaches the caller
//! as a transport error. The caller sees the code, the webhook's and tool's
//! names, the HTTP status and the budgets; the URL, the transport error and any
//! part of the answer go to the log only, on a line of the call's span (the
//! caller's details carry its `callId`).

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use hmac::{Hmac, KeyInit, Mac};
use reqwest::dns::{Addrs, Name, Resolve, Resolving};
use serde_json::{Value, json};
use sha2::Sha256;

use super::descriptor::{Annotations, ToolDescriptor};
use super::faults::host_failure;
use super::network::NetworkPolicy;
use super::plugin::CallContext;
use crate::config::WebhookConfig;
use crate::render::format::decode_app_response;
use crate::result::{ErrorCode, ToolResult};

/// The header names of a signed call.
pub mod headers {
    pub const TIMESTAMP: &str = "x-toolhost-timestamp";
    pub const DELIVERY: &str = "x-toolhost-delivery";
    pub const SIGNATURE: &str = "x-toolhost-signature";
}

/// A webhook that cannot be set up; the message names it and the key to fix.
#[derive(Debug, thiserror::Error)]
#[error("webhook {webhook}: {problem}")]
pub struct WebhookError {
    pub webhook: String,
    pub problem: String,
}

/// An HTTP endpoint serving app tools, validated once at load.
pub struct Webhook {
    name: Arc<str>,
    url: reqwest::Url,
    secret: Vec<u8>,
    timeout: Duration,
    max_response_bytes: usize,
    client: reqwest::Client,
    tools: Vec<ToolDescriptor>,
}

impl std::fmt::Debug for Webhook {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Webhook")
            .field("name", &self.name)
            .field("url", &self.url.as_str())
            .field("secret", &"<hidden>")
            .finish_non_exhaustive()
    }
}

/// Name lookups that return only the addresses the allow-list grants.
struct AllowedResolver {
    policy: Arc<NetworkPolicy>,
    port: u16,
}

impl Resolve for AllowedResolver {
    fn resolve(&self, name: Name) -> Resolving {
        let (policy, port) = (self.policy.clone(), self.port);
        Box::pin(async move {
            let mut allowed = Vec::new();
            for addr in tokio::net::lookup_host((name.as_str(), port)).await? {
                if policy.allows_connect(addr).await {
                    allowed.push(addr);
                }
            }
            if allowed.is_empty() {
                return Err(Denied(format!(
                    "no address of {} is on host.webhook_allow",
                    name.as_str()
                ))
                .into());
            }
            Ok(Box::new(allowed.into_iter()) as Addrs)
        })
    }
}

/// A connection the allow-list refused.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
struct Denied(String);

impl Webhook {
    /// Validates `config` against the allow-list `allow` (`host.webhook_allow`).
    ///
    /// # Errors
    ///
    /// A [`WebhookError`] when the URL does not parse or is not http(s), its
    /// address is not allowed, the secret's variable is unset, or a tool's
    /// description is unusable.
    pub async fn configure(
        config: &WebhookConfig,
        allow: &[String],
    ) -> Result<Webhook, WebhookError> {
        let error = |problem: String| WebhookError {
            webhook: config.name.clone(),
            problem,
        };
        let url = reqwest::Url::parse(&config.url)
            .map_err(|e| error(format!("url {:?}: {e}", config.url)))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(error(format!(
                "url {:?}: only http and https endpoints can be called",
                config.url
            )));
        }
        let (Some(host), Some(port)) = (url.host_str(), url.port_or_known_default()) else {
            return Err(error(format!("url {:?} names no host", config.url)));
        };
        let policy =
            NetworkPolicy::parse(allow).map_err(|e| error(format!("host.webhook_allow: {e}")))?;
        if policy.is_empty() {
            return Err(error(format!(
                "host.webhook_allow is empty, so {host}:{port} cannot be reached; add \"{host}:{port}\" to it"
            )));
        }
        // An address in the URL is checked now; a name is checked on every lookup.
        let literal = host.trim_start_matches('[').trim_end_matches(']');
        if let Ok(ip) = literal.parse::<std::net::IpAddr>()
            && !policy.allows_connect(SocketAddr::new(ip, port)).await
        {
            return Err(error(format!(
                "{host}:{port} is not on host.webhook_allow; add it there to allow this webhook"
            )));
        }
        let secret = match (&config.secret, &config.secret_env) {
            (Some(secret), _) => secret.clone().into_bytes(),
            (None, Some(name)) => std::env::var(name)
                .map_err(|_| {
                    error(format!(
                        "secret_env: the environment variable {name} is not set"
                    ))
                })?
                .into_bytes(),
            (None, None) => return Err(error("needs `secret` or `secret_env`".into())),
        };
        if secret.len() < 16 {
            tracing::warn!(webhook = %config.name, "the webhook secret is shorter than 16 bytes; use a long random one");
        }
        let client = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .dns_resolver(Arc::new(AllowedResolver {
                policy: Arc::new(policy),
                port,
            }))
            .no_proxy()
            .user_agent(concat!("toolhost/", env!("CARGO_PKG_VERSION")))
            .build()
            .map_err(|e| error(format!("cannot build an HTTP client: {e}")))?;
        let tools = config
            .tools
            .iter()
            .map(|tool| ToolDescriptor {
                name: tool.name.clone(),
                title: tool.title.clone(),
                description: tool.description.clone(),
                input_schema: tool.input_schema.clone(),
                output_schema: tool.output_schema.clone(),
                annotations: Annotations {
                    read_only: tool.read_only,
                    destructive: tool.destructive,
                    idempotent: tool.idempotent,
                    open_world: tool.open_world,
                },
                required_privileges: tool.required_privileges.clone(),
                required_client_capabilities: Vec::new(),
                task_support: Default::default(),
            })
            .collect::<Vec<_>>();
        if tools.is_empty() {
            return Err(error(
                "serves no tool; describe each in a [[webhook.tool]] table".into(),
            ));
        }
        Ok(Webhook {
            name: config.name.as_str().into(),
            url,
            secret,
            timeout: Duration::from_millis(config.timeout_ms),
            max_response_bytes: config.max_response_bytes,
            client,
            tools,
        })
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The endpoint, for messages.
    pub fn url(&self) -> &str {
        self.url.as_str()
    }

    pub fn tools(&self) -> &[ToolDescriptor] {
        &self.tools
    }

    /// The signature header value of `body` sent at `timestamp` as `delivery`.
    pub fn sign(secret: &[u8], timestamp: i64, delivery: &str, body: &[u8]) -> String {
        let mut mac =
            <Hmac<Sha256> as KeyInit>::new_from_slice(secret).expect("HMAC takes any key length");
        mac.update(timestamp.to_string().as_bytes());
        mac.update(b".");
        mac.update(delivery.as_bytes());
        mac.update(b".");
        mac.update(body);
        format!("sha256={}", hex::encode(mac.finalize().into_bytes()))
    }

    /// Calls `tool` with `arguments` (already checked against its input schema).
    /// Never fails: an unreachable,
    /// slow, refusing or oversized endpoint yields a coded failure result.
    pub async fn call(&self, tool: &str, arguments: &Value, ctx: &CallContext) -> ToolResult {
        // `message` and `extra` are the caller's; `detail` is the operator's.
        let fail = |code: ErrorCode, message: String, extra: Value, detail: &str| {
            tracing::warn!(webhook = %self.name, tool, url = %self.url, error.type = code.as_str(), detail, "{message}");
            host_failure(code, message, &self.name, tool, extra)
        };
        let body = json!({
            "tool": tool,
            "arguments": arguments,
            "context": {"caller": ctx.caller, "requestId": ctx.request_id, "callId": ctx.call_id},
        })
        .to_string();
        let timestamp = jiff::Timestamp::now().as_second();
        let mut delivery = [0u8; 16];
        if let Err(e) = getrandom::fill(&mut delivery) {
            return fail(
                ErrorCode::ToolError,
                "No randomness for a delivery id.".into(),
                json!({}),
                &e.to_string(),
            );
        }
        let delivery = hex::encode(delivery);
        let signature = Webhook::sign(&self.secret, timestamp, &delivery, body.as_bytes());
        let exchange = async {
            let mut response = self
                .client
                .post(self.url.clone())
                .header(reqwest::header::CONTENT_TYPE, "application/json")
                .header(reqwest::header::ACCEPT, "application/json")
                .header(headers::TIMESTAMP, timestamp)
                .header(headers::DELIVERY, &delivery)
                .header(headers::SIGNATURE, signature)
                .body(body)
                .send()
                .await?;
            let status = response.status();
            let mut answer = Vec::new();
            while let Some(chunk) = response.chunk().await? {
                if answer.len() + chunk.len() > self.max_response_bytes {
                    return Ok(Answer::Oversized);
                }
                answer.extend_from_slice(&chunk);
            }
            Ok::<_, reqwest::Error>(Answer::Complete(status, answer))
        };
        let answer = match tokio::time::timeout(self.timeout, exchange).await {
            Err(_) => {
                return fail(
                    ErrorCode::Timeout,
                    format!(
                        "The webhook did not answer within {} ms.",
                        self.timeout.as_millis()
                    ),
                    json!({"timeoutMs": self.timeout.as_millis() as u64}),
                    "no complete answer in time",
                );
            }
            Ok(Err(e)) => {
                let denied = std::error::Error::source(&e)
                    .into_iter()
                    .chain(std::iter::successors(std::error::Error::source(&e), |e| {
                        e.source()
                    }))
                    .find_map(|e| e.downcast_ref::<Denied>());
                let mut detail = e.to_string();
                let mut source = std::error::Error::source(&e);
                while let Some(cause) = source {
                    detail.push_str(&format!(": {cause}"));
                    source = cause.source();
                }
                return match denied {
                    Some(denied) => fail(
                        ErrorCode::PermissionDenied,
                        "The webhook cannot be reached: its address is not on host.webhook_allow."
                            .into(),
                        json!({}),
                        &denied.to_string(),
                    ),
                    None => fail(
                        ErrorCode::ToolError,
                        "The webhook could not be reached.".into(),
                        json!({}),
                        &detail,
                    ),
                };
            }
            Ok(Ok(answer)) => answer,
        };
        let (status, answer) = match answer {
            Answer::Oversized => {
                return fail(
                    ErrorCode::ResourceLimit,
                    format!(
                        "The webhook's answer exceeds {} bytes, so it was not read.",
                        self.max_response_bytes
                    ),
                    json!({"maxResponseBytes": self.max_response_bytes}),
                    "answer over max_response_bytes",
                );
            }
            Answer::Complete(status, answer) => (status, answer),
        };
        if !status.is_success() {
            let excerpt: String = String::from_utf8_lossy(&answer).chars().take(200).collect();
            return fail(
                ErrorCode::ToolError,
                format!("The webhook answered HTTP {}.", status.as_u16()),
                json!({"status": status.as_u16()}),
                &format!("answer: {excerpt:?}"),
            );
        }
        let Ok(text) = String::from_utf8(answer) else {
            return fail(
                ErrorCode::ToolError,
                "The webhook's answer is not UTF-8 text.".into(),
                json!({}),
                "the answer is not UTF-8",
            );
        };
        match decode_app_response(&text) {
            Ok(result) => result,
            Err(e) => fail(
                ErrorCode::ToolError,
                "The webhook's answer is not a result.".into(),
                json!({}),
                &format!(
                    "{e}; answer: {:?}",
                    text.chars().take(200).collect::<String>()
                ),
            ),
        }
    }
}

enum Answer {
    Complete(reqwest::StatusCode, Vec<u8>),
    Oversized,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_signature_covers_timestamp_delivery_and_body() {
        let sign = |t, d, b: &str| Webhook::sign(b"secret", t, d, b.as_bytes());
        let base = sign(1, "d", "{}");
        assert!(base.starts_with("sha256=") && base.len() == 7 + 64);
        assert_ne!(base, sign(2, "d", "{}"));
        assert_ne!(base, sign(1, "e", "{}"));
        assert_ne!(base, sign(1, "d", "{ }"));
        assert_ne!(base, Webhook::sign(b"other", 1, "d", b"{}"));
    }
}
