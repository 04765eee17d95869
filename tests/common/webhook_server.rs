//! A reference webhook for app tools, as an operator would write one, started by
//! the tests: it checks the signature scheme documented in `docs/operating.md`
//! (HMAC-SHA256 over `<timestamp>.<delivery>.<body>`), refuses unsigned, badly
//! signed, stale and replayed requests with 401, and answers each tool in a
//! different way (legacy envelope, versioned result, plain text, slow, huge).

use std::collections::HashSet;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use axum::body::Bytes;
use axum::extract::State;
use axum::http::{HeaderMap, StatusCode};
use axum::response::{IntoResponse, Response};
use hmac::{Hmac, KeyInit, Mac};
use serde_json::{Value, json};
use sha2::Sha256;

/// A request the webhook accepted, as it arrived.
#[derive(Debug, Clone)]
pub struct Delivery {
    pub headers: HeaderMap,
    pub body: Bytes,
}

#[derive(Default)]
struct Seen {
    deliveries: HashSet<String>,
    accepted: Vec<Delivery>,
    refused: Vec<String>,
}

/// The running webhook.
pub struct WebhookServer {
    pub url: String,
    seen: Arc<Mutex<Seen>>,
}

impl WebhookServer {
    /// Starts a webhook checking signatures with `secret`.
    pub async fn start(secret: &'static str) -> WebhookServer {
        let seen: Arc<Mutex<Seen>> = Arc::default();
        let app = axum::Router::new()
            .route("/hook", axum::routing::post(receive))
            .with_state((secret, seen.clone()));
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr: SocketAddr = listener.local_addr().unwrap();
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        WebhookServer {
            url: format!("http://{addr}/hook"),
            seen,
        }
    }

    /// The requests accepted so far.
    pub fn accepted(&self) -> Vec<Delivery> {
        self.seen.lock().unwrap().accepted.clone()
    }

    /// Why requests were refused, in order.
    pub fn refused(&self) -> Vec<String> {
        self.seen.lock().unwrap().refused.clone()
    }
}

fn refuse(seen: &Mutex<Seen>, why: &str) -> Response {
    seen.lock().unwrap().refused.push(why.to_owned());
    (StatusCode::UNAUTHORIZED, why.to_owned()).into_response()
}

async fn receive(
    State((secret, seen)): State<(&'static str, Arc<Mutex<Seen>>)>,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    let (Some(timestamp), Some(delivery), Some(signature)) = (
        header("x-toolhost-timestamp"),
        header("x-toolhost-delivery"),
        header("x-toolhost-signature"),
    ) else {
        return refuse(&seen, "unsigned");
    };
    let Ok(sent) = timestamp.parse::<i64>() else {
        return refuse(&seen, "bad timestamp");
    };
    if delivery.len() != 32 || !delivery.bytes().all(|b| b.is_ascii_hexdigit()) {
        return refuse(&seen, "bad delivery id");
    }
    let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(secret.as_bytes()).unwrap();
    mac.update(format!("{timestamp}.{delivery}.").as_bytes());
    mac.update(&body);
    let Some(given) = signature
        .strip_prefix("sha256=")
        .and_then(|hex_text| hex::decode(hex_text).ok())
    else {
        return refuse(&seen, "bad signature");
    };
    if mac.verify_slice(&given).is_err() {
        return refuse(&seen, "bad signature");
    }
    if (jiff::Timestamp::now().as_second() - sent).abs() > 300 {
        return refuse(&seen, "stale");
    }
    {
        let mut seen = seen.lock().unwrap();
        if !seen.deliveries.insert(delivery.to_owned()) {
            seen.refused.push("replayed".into());
            return (StatusCode::UNAUTHORIZED, "replayed").into_response();
        }
        seen.accepted.push(Delivery {
            headers: headers.clone(),
            body: body.clone(),
        });
    }
    let call: Value = serde_json::from_slice(&body).unwrap();
    let arguments = &call["arguments"];
    match call["tool"].as_str().unwrap_or_default() {
        "create_order" => json_answer(json!({
            "success": true,
            "data": {"orderId": "A-1001", "items": arguments["items"]},
            "dryRun": arguments["dryRun"].as_bool().unwrap_or(false),
        })),
        "reject" => json_answer(json!({
            "success": false,
            "error": {"message": "Out of stock", "code": "not_found", "sku": "X-9"},
        })),
        // Versioned answers of format 1, written as a webhook author would.
        "versioned" => literal_answer(
            r#"{"format": 1, "result": {"outcome": {"success": {"data": {"total": 42}}}, "summary": "42 in all"}}"#,
        ),
        "versioned_failure" => literal_answer(
            r#"{"format": 1, "result": {
                "outcome": {"failure": {"code": "not_found", "message": "No order A-7.", "details": {"orderId": "A-7"}}},
                "content": [{"kind": "text", "text": "Search by customer instead.", "mime": "text/markdown"}],
                "metadata": {"dryRun": false, "extensions": [{"namespace": "com.example.orders", "name": "region", "value": "eu"}]}
            }}"#,
        ),
        "context" => json_answer(json!({"success": true, "data": call["context"]})),
        "plain" => "plain words, no envelope".into_response(),
        "slow" => {
            tokio::time::sleep(std::time::Duration::from_secs(5)).await;
            json_answer(json!({"success": true, "data": "late"}))
        }
        "huge" => json_answer(json!({"success": true, "data": "x".repeat(2 << 20)})),
        // A versioned answer that is not a result, with a marker to look for.
        "bad_body" => json_answer(json!({"format": 1, "result": {"outcome": {"BODY-MARKER": 1}}})),
        other => (StatusCode::NOT_FOUND, format!("no tool {other}")).into_response(),
    }
}

/// `text` as it is, as a JSON answer.
fn literal_answer(text: &'static str) -> Response {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        text,
    )
        .into_response()
}

fn json_answer(value: Value) -> Response {
    (
        [(axum::http::header::CONTENT_TYPE, "application/json")],
        value.to_string(),
    )
        .into_response()
}
