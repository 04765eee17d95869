//! Guests' outgoing HTTP (`wasi:http/outgoing-handler`, wasmtime-wasi-http's
//! bindings): the host sends every request itself, after its checks, and puts the
//! plugin's secrets into the headers of requests bound for their destinations.
//!
//! Two steps, as for the other capabilities: [`HttpGate::configure`] once per
//! plugin at load (the rules, the secrets' values, the budgets), and
//! [`HttpGate::prepare`] per call (a [`HttpCall`], the call's counters).
//!
//! Defaults are deny: a plugin without `policy.http` rules gets every request
//! refused. Each request, in order:
//! 1. counted against `max_http_requests`;
//! 2. matched against the rules (method, scheme, host, port, path): no rule, no
//!    request;
//! 3. the secrets bound to its destination are put in place of their placeholders
//!    in its header values (nowhere else);
//! 4. its host resolved (an IP literal is used as written: a rule named it), and
//!    only public addresses kept for a name (the same IANA special-purpose list as
//!    sockets: a name never reaches loopback, private, link-local, metadata or
//!    NAT64 addresses);
//! 5. connected with timeouts bounded by the time left until the call's deadline,
//!    TLS verified against [`tls::HttpTls`], HTTP/1.1; redirects are the guest's
//!    to follow or not (each is a request of its own, checked again);
//! 6. its request and response bodies counted against `max_http_request_bytes` and
//!    `max_http_response_bytes`;
//! 7. in the answer to a request that carried a secret, the secret's value put back
//!    to its placeholder (`scrub.rs`), headers and body.
//!
//! A refusal is `HTTP-request-denied` for the guest, logged with
//! `error.type = "network_denied"` and recorded as a denial of the call (a guest
//! that then traps ends `permission_denied` naming the request); a budget hit ends
//! the call `resource_limit` naming the budget, however the guest goes on.

mod body;
mod rules;
mod scrub;
mod secrets;
mod tls;

pub use rules::{Destination, HttpRules};
pub use scrub::Scrubber;
pub use secrets::Secrets;
pub use tls::HttpTls;

use std::net::{IpAddr, SocketAddr};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use http::uri::Scheme;
use http_body_util::BodyExt as _;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;
use tracing::Instrument as _;
use wasmtime_wasi_http::p2::bindings::http::types::ErrorCode;
use wasmtime_wasi_http::{Error, RequestOptions, WasiBody, WasiHttpHooks};

use super::network::not_public_class;
use super::policy::{Denials, record_denial};
use super::state::BudgetHit;
use body::{Counted, Direction, Incoming};

/// The longest part of a URL quoted in a denial.
const QUOTED_URL_CHARS: usize = 200;

/// What one plugin may send, configured once at load.
#[derive(Debug)]
pub struct HttpGate {
    rules: HttpRules,
    secrets: Secrets,
    tls: Arc<HttpTls>,
    budgets: HttpBudgets,
}

/// The per-call budgets of `wasi:http`, from the plugin's policy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HttpBudgets {
    /// `max_http_requests`.
    pub requests: u32,
    /// `max_http_request_bytes`: request body bytes sent.
    pub sent_bytes: u64,
    /// `max_http_response_bytes`: response body bytes received.
    pub received_bytes: u64,
}

impl HttpGate {
    /// Parses `rules` and loads `secrets` for `plugin`.
    ///
    /// # Errors
    ///
    /// A message naming the malformed rule or the secret that cannot be loaded.
    pub fn configure(
        plugin: &str,
        rules: &[String],
        secrets: &[crate::config::SecretConfig],
        budgets: HttpBudgets,
        tls: Arc<HttpTls>,
    ) -> Result<HttpGate, String> {
        let rules = HttpRules::parse("policy.http", rules)?;
        let secrets = Secrets::load(plugin, secrets)?;
        if rules.is_empty() && !secrets.is_empty() {
            tracing::warn!(
                plugin,
                "the plugin has secrets but no policy.http rule, so no request can carry them"
            );
        }
        Ok(HttpGate {
            rules,
            secrets,
            tls,
            budgets,
        })
    }

    /// Whether any request may be sent at all.
    pub fn has_rules(&self) -> bool {
        !self.rules.is_empty()
    }

    /// The `get-config` entries of the secrets' placeholders.
    pub fn placeholder_entries(&self) -> impl Iterator<Item = (String, String)> + '_ {
        self.secrets.config_entries()
    }

    /// The hooks of one call of `tool`, recording into `denials`, with requests
    /// bounded by `deadline`.
    pub fn prepare(
        self: &Arc<Self>,
        plugin: Arc<str>,
        tool: Arc<str>,
        denials: Denials,
        deadline: Instant,
    ) -> HttpCall {
        HttpCall {
            gate: self.clone(),
            who: Arc::new(Who {
                plugin,
                tool,
                denials,
            }),
            usage: Arc::new(HttpUsage::new(self.budgets)),
            deadline,
        }
    }
}

/// Whose requests these are, for denials and log lines.
struct Who {
    plugin: Arc<str>,
    tool: Arc<str>,
    denials: Denials,
}

impl Who {
    fn deny(&self, denial: String) {
        record_denial(&self.denials, &self.plugin, &self.tool, denial);
    }
}

/// What one call sent and received so far, shared with its bodies (which the
/// host polls outside the store), and the first budget it hit.
pub struct HttpUsage {
    budgets: HttpBudgets,
    requests: AtomicU32,
    sent: AtomicU64,
    received: AtomicU64,
    hit: Mutex<Option<BudgetHit>>,
}

impl HttpUsage {
    fn new(budgets: HttpBudgets) -> Self {
        HttpUsage {
            budgets,
            requests: AtomicU32::new(0),
            sent: AtomicU64::new(0),
            received: AtomicU64::new(0),
            hit: Mutex::new(None),
        }
    }

    fn record(&self, key: &'static str, message: String) {
        let mut hit = self.hit.lock().expect("budget lock");
        if hit.is_none() {
            *hit = Some(BudgetHit::new(key, message));
        }
    }

    /// Counts one more request; `false` past the budget.
    fn request(&self) -> bool {
        let n = self
            .requests
            .fetch_add(1, Ordering::Relaxed)
            .saturating_add(1);
        if n > self.budgets.requests {
            self.record(
                "max_http_requests",
                format!(
                    "the guest sent more than {} HTTP requests",
                    self.budgets.requests
                ),
            );
            return false;
        }
        true
    }

    /// Counts `bytes` of body going `direction`; past the budget, its size.
    fn count(&self, direction: Direction, bytes: u64) -> Result<(), u64> {
        let (total, budget, key, what) = match direction {
            Direction::Sent => (
                &self.sent,
                self.budgets.sent_bytes,
                "max_http_request_bytes",
                "sent",
            ),
            Direction::Received => (
                &self.received,
                self.budgets.received_bytes,
                "max_http_response_bytes",
                "received",
            ),
        };
        let now = total
            .fetch_add(bytes, Ordering::Relaxed)
            .saturating_add(bytes);
        if now > budget {
            self.record(
                key,
                format!("the call {what} more than {budget} bytes of HTTP bodies"),
            );
            return Err(budget);
        }
        Ok(())
    }

    /// The first budget the call's requests hit.
    pub fn hit(&self) -> Option<BudgetHit> {
        self.hit.lock().expect("budget lock").clone()
    }
}

/// The `wasi:http` hooks of one call: where its requests are checked and sent.
pub struct HttpCall {
    gate: Arc<HttpGate>,
    who: Arc<Who>,
    usage: Arc<HttpUsage>,
    deadline: Instant,
}

impl HttpCall {
    /// What the call's requests sent, received and hit.
    pub fn usage(&self) -> &HttpUsage {
        &self.usage
    }
}

/// What `send_request` answers: the response and the connection's future.
type Sent = Result<
    (
        http::Response<WasiBody>,
        Box<dyn Future<Output = Result<(), Error>> + Send>,
    ),
    Error,
>;

impl WasiHttpHooks for HttpCall {
    // The failures of a request the guest sees as its error code; the host logs
    // them on the call's span, at debug (the guest's own business).
    fn p2_error_from_hyper(&mut self, err: &hyper::Error) -> ErrorCode {
        tracing::debug!(plugin = %self.who.plugin, tool = %self.who.tool, "HTTP request failed: {err}");
        ErrorCode::HttpProtocolError
    }

    fn p2_error_from_connect(&mut self, err: &std::io::Error) -> ErrorCode {
        tracing::debug!(plugin = %self.who.plugin, tool = %self.who.tool, "HTTP connection failed: {err}");
        ErrorCode::ConnectionRefused
    }

    fn p2_error_from_tls(&mut self, err: &std::io::Error) -> ErrorCode {
        tracing::debug!(plugin = %self.who.plugin, tool = %self.who.tool, "HTTPS handshake failed: {err}");
        ErrorCode::TlsProtocolError
    }

    fn send_request(
        &mut self,
        mut request: http::Request<WasiBody>,
        options: Option<RequestOptions>,
        _fut: Box<dyn Future<Output = Result<(), Error>> + Send>,
    ) -> Box<dyn Future<Output = Sent> + Send> {
        let refuse = |error: Error| -> Box<dyn Future<Output = Sent> + Send> {
            Box::new(async move { Err(error) })
        };
        let uri = request.uri().clone();
        let https = uri.scheme() == Some(&Scheme::HTTPS);
        let (Some(authority), Some(host)) = (uri.authority(), uri.host()) else {
            return refuse(Error::HttpRequestUriInvalid);
        };
        let host = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_ascii_lowercase();
        let port = authority.port_u16().unwrap_or(if https { 443 } else { 80 });
        let shown = quoted(&format!(
            "{} {}://{}{}",
            request.method(),
            if https { "https" } else { "http" },
            authority,
            uri.path()
        ));
        if !self.usage.request() {
            return refuse(Error::HttpRequestDenied);
        }
        let method = request.method().clone();
        let destination = Destination {
            method: &method,
            https,
            host: &host,
            port,
            path: uri.path(),
        };
        if !self.gate.rules.matches(&destination) {
            self.who.deny(format!(
                "HTTP {shown} is not granted (no policy.http rule matches)"
            ));
            return refuse(Error::HttpRequestDenied);
        }
        let (used, scrubber) = self
            .gate
            .secrets
            .substitute(&destination, request.headers_mut());
        if !used.is_empty() {
            tracing::debug!(plugin = %self.who.plugin, tool = %self.who.tool, secrets = ?used, request = %shown, "secrets put into the request's headers");
        }
        let literal = host.parse::<IpAddr>().ok();
        let left = self.deadline.saturating_duration_since(Instant::now());
        let bound = |chosen: Option<Duration>| chosen.map_or(left, |d| d.min(left));
        let timeouts = Timeouts {
            connect: bound(options.and_then(|o| o.connect_timeout)),
            first_byte: bound(options.and_then(|o| o.first_byte_timeout)),
            between_bytes: bound(options.and_then(|o| o.between_bytes_timeout)),
        };
        let target = Target {
            host,
            literal,
            port,
            https,
            shown,
            scrubber,
        };
        let (gate, who, usage) = (self.gate.clone(), self.who.clone(), self.usage.clone());
        // wasmtime-wasi-http runs this in a task of its own: in the call's span.
        Box::new(
            send(gate, who, usage, target, request, timeouts).instrument(tracing::Span::current()),
        )
    }
}

/// Where a checked request goes.
struct Target {
    host: String,
    /// The host as an address, when the request names one.
    literal: Option<IpAddr>,
    port: u16,
    https: bool,
    /// `METHOD scheme://authority/path`, for denials.
    shown: String,
    /// When the request carries secrets: what takes their values out of the answer.
    scrubber: Option<Scrubber>,
}

#[derive(Clone, Copy)]
struct Timeouts {
    connect: Duration,
    first_byte: Duration,
    between_bytes: Duration,
}

/// Resolves, connects, and sends `request` to `target`.
async fn send(
    gate: Arc<HttpGate>,
    who: Arc<Who>,
    usage: Arc<HttpUsage>,
    target: Target,
    mut request: http::Request<WasiBody>,
    timeouts: Timeouts,
) -> Sent {
    let stream = within(timeouts.connect, connect(&who, &target)).await?;
    let stream: Box<dyn Stream> = if target.https {
        let config = gate.tls.client_config().map_err(|e| {
            tracing::error!(plugin = %who.plugin, error.type = "tls_configuration", "{e}");
            Error::ConfigurationError
        })?;
        let name = match target.literal {
            Some(ip) => rustls::pki_types::ServerName::IpAddress(ip.into()),
            None => rustls::pki_types::ServerName::try_from(target.host.clone())
                .map_err(|_| Error::HttpRequestUriInvalid)?,
        };
        let tls = tokio_rustls::TlsConnector::from(config).connect(name, stream);
        let tls = within(timeouts.connect, async {
            tls.await.map_err(|e| {
                tracing::debug!(plugin = %who.plugin, tool = %who.tool, request = %target.shown, "TLS failed: {e}");
                if e.get_ref().is_some_and(|inner| inner.is::<rustls::Error>()) {
                    Error::TlsCertificateError
                } else {
                    Error::Tls(e)
                }
            })
        })
        .await?;
        Box::new(tls)
    } else {
        Box::new(stream)
    };
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake::<_, Counted<WasiBody>>(TokioIo::new(stream))
            .await
            .map_err(Error::Hyper)?;
    // On the wire, the request names its path (the Host header names the authority).
    let path = request
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .parse()
        .map_err(|_| Error::HttpRequestUriInvalid)?;
    *request.uri_mut() = path;
    let request = request.map(|body| Counted::new(body, usage.clone(), Direction::Sent));

    let mut connection = Box::pin(connection);
    let response = sender.send_request(request);
    tokio::pin!(response);
    let first_byte = async {
        tokio::select! {
            response = &mut response => response.map(Some).map_err(Error::Hyper),
            // The connection ended (or failed) before the response came.
            ended = &mut connection => ended.map(|()| None).map_err(Error::Hyper),
        }
    };
    let outcome = tokio::time::timeout(timeouts.first_byte, first_byte)
        .await
        .map_err(|_| Error::ConnectionReadTimeout)??;
    let (response, connection): (_, Box<dyn Future<Output = Result<(), Error>> + Send>) =
        match outcome {
            Some(response) => (
                response,
                Box::new(async move { connection.await.map_err(Error::Hyper) }),
            ),
            // The response may still have arrived with the connection's end.
            None => (
                response.await.map_err(Error::Hyper)?,
                Box::new(async { Ok(()) }),
            ),
        };
    let (mut parts, incoming) = response.into_parts();
    let body = Counted::new(Incoming(incoming), usage, Direction::Received)
        .between_frames(timeouts.between_bytes);
    let body = match target.scrubber {
        None => body.boxed_unsync(),
        Some(scrubber) => {
            for value in parts.headers.values_mut() {
                if let Some(replaced) = scrubber.replace_all(value.as_bytes())
                    && let Ok(replaced) = http::HeaderValue::from_bytes(&replaced)
                {
                    *value = replaced;
                }
            }
            scrub::Scrubbed::new(body, scrubber).boxed_unsync()
        }
    };
    Ok((http::Response::from_parts(parts, body), connection))
}

/// `future`, or `connection-timeout` when it takes longer than `limit`.
async fn within<T>(
    limit: Duration,
    future: impl Future<Output = Result<T, Error>>,
) -> Result<T, Error> {
    tokio::time::timeout(limit, future)
        .await
        .unwrap_or(Err(Error::ConnectionTimeout))
}

/// What a request is sent over: TCP, or TLS over TCP.
trait Stream: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static {}
impl<T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Send + Unpin + 'static> Stream for T {}

/// Connects to the first address of `target` the policy allows.
async fn connect(who: &Who, target: &Target) -> Result<TcpStream, Error> {
    let addresses: Vec<SocketAddr> = match target.literal {
        // A rule named this address (rules match names and addresses apart).
        Some(ip) => vec![SocketAddr::new(ip, target.port)],
        None => {
            let resolved = tokio::net::lookup_host((target.host.as_str(), target.port))
                .await
                .map_err(|_| Error::DnsError {
                    rcode: Some("name could not be resolved".into()),
                    info_code: None,
                })?
                .collect::<Vec<_>>();
            let (public, refused): (Vec<_>, Vec<_>) = resolved
                .into_iter()
                .partition(|addr| not_public_class(addr.ip()).is_none());
            if public.is_empty() {
                let classes = refused
                    .iter()
                    .filter_map(|addr| not_public_class(addr.ip()))
                    .collect::<std::collections::BTreeSet<_>>()
                    .into_iter()
                    .collect::<Vec<_>>()
                    .join(", ");
                who.deny(format!(
                    "HTTP {} is not granted: {} resolves only to addresses a name never grants ({classes}); a rule must name such an address itself",
                    target.shown, target.host
                ));
                return Err(Error::HttpRequestDenied);
            }
            public
        }
    };
    let mut last = None;
    for address in addresses {
        match TcpStream::connect(address).await {
            Ok(stream) => {
                let _ = stream.set_nodelay(true);
                return Ok(stream);
            }
            Err(error) => last = Some(error),
        }
    }
    Err(last.map_or(Error::DestinationUnavailable, |e| {
        if e.kind() == std::io::ErrorKind::ConnectionRefused {
            Error::ConnectionRefused
        } else {
            Error::Connect(e)
        }
    }))
}

/// `text`, cut to [`QUOTED_URL_CHARS`] characters.
fn quoted(text: &str) -> String {
    match text.char_indices().nth(QUOTED_URL_CHARS) {
        Some((at, _)) => format!("{}...", &text[..at]),
        None => text.to_owned(),
    }
}
