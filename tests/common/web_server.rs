//! Local web servers for the outgoing-HTTP tests (issue #13): plain HTTP and
//! HTTPS on `127.0.0.1:0`, the HTTPS one with a certificate (for the IP
//! `127.0.0.1` and the name `localhost`) signed by a CA the test makes
//! ([`TestCa`], written to a PEM file for `host.http_ca_file`). Each records every
//! request it receives (method, path and query, headers, body) before it
//! answers. A raw TCP sink ([`TcpSink`]) records what a socket writes.
//!
//! Routes (any method unless said otherwise):
//! - `/page`: an HTML page with a `<title>` ([`PAGE_TITLE`]) and two links
//!   ([`PAGE_LINKS`]);
//! - `/api/user`: JSON `{"login": "ada", "id": 7, "authorization": "present" |
//!   "absent"}`: whether an `Authorization` header came, never its value;
//! - `/redirect?to=URL`: `302 Found` with `Location: URL`;
//! - `/big?bytes=N`: a body of N bytes (`x`);
//! - `/slow?ms=N`: the answer `slow` after N ms (the request is recorded when it
//!   arrives);
//! - `/echo`: 200 with the request's body as the response's body;
//! - `/reflect`: a destination that reflects what it received: the
//!   `Authorization` header back in a response header (`x-seen`) and in the
//!   body (`seen <value> end`), the body sent as two frames 50 ms apart, split
//!   in the middle of the header's value;
//! - anything else: 404.

use std::collections::HashMap;
use std::io::Read as _;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::{HeaderMap, Method, StatusCode, Uri, header};
use axum::response::{IntoResponse, Response};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use tokio::net::{TcpListener, TcpStream};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::server::TlsStream;

/// The `<title>` of `/page`.
pub const PAGE_TITLE: &str = "Toolhost test page";

/// The links of `/page`: (href, text).
pub const PAGE_LINKS: [(&str, &str); 2] = [
    ("https://example.org/docs", "The docs"),
    ("/about", "About us"),
];

/// A request as a server received it.
#[derive(Debug, Clone)]
pub struct Recorded {
    pub method: String,
    /// The path and the query (`/page?x=1`).
    pub target: String,
    pub headers: HeaderMap,
    pub body: Bytes,
}

impl Recorded {
    /// The value of header `name`, as text.
    pub fn header(&self, name: &str) -> Option<String> {
        self.headers
            .get(name)
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
    }

    /// Everything received, as one text (method, target, every header, the
    /// body), to look for a value anywhere in it.
    pub fn text(&self) -> String {
        let mut out = format!("{} {}\n", self.method, self.target);
        for (name, value) in &self.headers {
            out.push_str(&format!(
                "{name}: {}\n",
                String::from_utf8_lossy(value.as_bytes())
            ));
        }
        out.push('\n');
        out.push_str(&String::from_utf8_lossy(&self.body));
        out
    }
}

/// A CA made for one test: its certificate in a PEM file, and the TLS setup of a
/// server whose certificate it signed.
pub struct TestCa {
    /// The CA's certificate (PEM): what `host.http_ca_file` names.
    pub pem_file: PathBuf,
    pub pem: String,
    server: Arc<rustls::ServerConfig>,
}

impl TestCa {
    /// A new CA, written to `dir/test-ca.pem`, and a server certificate it signs
    /// for `127.0.0.1` and `localhost`.
    pub fn new(dir: &Path) -> TestCa {
        let ca = super::postgres::new_ca("toolhost HTTP test CA");
        let key = rcgen::KeyPair::generate().unwrap();
        let mut params =
            rcgen::CertificateParams::new(vec!["127.0.0.1".to_owned(), "localhost".to_owned()])
                .unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "localhost");
        let certificate = params.signed_by(&key, &ca).unwrap();
        let pem = ca.pem();
        let pem_file = dir.join("test-ca.pem");
        std::fs::write(&pem_file, &pem).unwrap();
        let chain = vec![CertificateDer::from(certificate.der().to_vec())];
        let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
        let server = rustls::ServerConfig::builder_with_provider(Arc::new(
            rustls::crypto::ring::default_provider(),
        ))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(chain, key)
        .unwrap();
        TestCa {
            pem_file,
            pem,
            server: Arc::new(server),
        }
    }

    /// A client of the tests' own that trusts this CA (and nothing else).
    pub fn client(&self) -> reqwest::Client {
        reqwest::Client::builder()
            .tls_built_in_root_certs(false)
            .add_root_certificate(reqwest::Certificate::from_pem(self.pem.as_bytes()).unwrap())
            .build()
            .unwrap()
    }
}

type Log = Arc<Mutex<Vec<Recorded>>>;

/// A running server (HTTP or HTTPS) on `127.0.0.1`.
pub struct WebServer {
    pub addr: SocketAddr,
    pub scheme: &'static str,
    log: Log,
}

impl WebServer {
    /// A plain HTTP server.
    pub async fn http() -> WebServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let log = Log::default();
        let app = router(log.clone());
        tokio::spawn(async move { axum::serve(listener, app).await.unwrap() });
        WebServer {
            addr,
            scheme: "http",
            log,
        }
    }

    /// An HTTPS server with the certificate `ca` signed.
    pub async fn https(ca: &TestCa) -> WebServer {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let log = Log::default();
        let app = router(log.clone());
        let tls = TlsListener::start(listener, TlsAcceptor::from(ca.server.clone()));
        tokio::spawn(async move { axum::serve(tls, app).await.unwrap() });
        WebServer {
            addr,
            scheme: "https",
            log,
        }
    }

    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// `scheme://127.0.0.1:port` followed by `path` (which starts with `/`).
    pub fn url(&self, path: &str) -> String {
        format!("{}://{}{path}", self.scheme, self.addr)
    }

    /// The same URL with the name `localhost` instead of the address.
    pub fn url_by_name(&self, path: &str) -> String {
        format!("{}://localhost:{}{path}", self.scheme, self.port())
    }

    /// An allow-list rule granting every path of this server:
    /// `scheme://127.0.0.1:port/*`.
    pub fn rule(&self) -> String {
        self.url("/*")
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<Recorded> {
        self.log.lock().unwrap().clone()
    }

    /// The requests whose target contains `marker`.
    pub fn requests_with(&self, marker: &str) -> Vec<Recorded> {
        self.requests()
            .into_iter()
            .filter(|r| r.target.contains(marker))
            .collect()
    }

    /// The one request whose target contains `marker`.
    ///
    /// # Panics
    ///
    /// When there is none or more than one, naming everything received.
    #[track_caller]
    pub fn the_request_with(&self, marker: &str) -> Recorded {
        let mut found = self.requests_with(marker);
        assert_eq!(
            found.len(),
            1,
            "one request with {marker:?}; received:\n{}",
            self.received_text()
        );
        found.remove(0)
    }

    /// Everything received so far, as one text.
    pub fn received_text(&self) -> String {
        self.requests()
            .iter()
            .map(Recorded::text)
            .collect::<Vec<_>>()
            .join("\n----\n")
    }
}

fn router(log: Log) -> axum::Router {
    axum::Router::new().fallback(handle).with_state(log)
}

async fn handle(
    State(log): State<Log>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
    body: Bytes,
) -> Response {
    let target = uri
        .path_and_query()
        .map(|p| p.as_str().to_owned())
        .unwrap_or_else(|| uri.path().to_owned());
    log.lock().unwrap().push(Recorded {
        method: method.to_string(),
        target,
        headers: headers.clone(),
        body: body.clone(),
    });
    let query: HashMap<String, String> = uri
        .query()
        .map(|q| {
            url_pairs(q)
                .into_iter()
                .collect::<HashMap<String, String>>()
        })
        .unwrap_or_default();
    let number = |key: &str| query.get(key).and_then(|v| v.parse::<u64>().ok());
    match uri.path() {
        "/page" => ([(header::CONTENT_TYPE, "text/html; charset=utf-8")], page()).into_response(),
        "/api/user" => {
            let authorization = if headers.contains_key(header::AUTHORIZATION) {
                "present"
            } else {
                "absent"
            };
            (
                [(header::CONTENT_TYPE, "application/json")],
                serde_json::json!({"login": "ada", "id": 7, "authorization": authorization})
                    .to_string(),
            )
                .into_response()
        }
        "/redirect" => match query.get("to") {
            Some(to) => (
                StatusCode::FOUND,
                [(header::LOCATION, to.as_str())],
                "moved",
            )
                .into_response(),
            None => (StatusCode::BAD_REQUEST, "no ?to=").into_response(),
        },
        "/big" => {
            let bytes = number("bytes").unwrap_or(0) as usize;
            (
                [(header::CONTENT_TYPE, "text/plain")],
                Body::from(vec![b'x'; bytes]),
            )
                .into_response()
        }
        "/slow" => {
            tokio::time::sleep(Duration::from_millis(number("ms").unwrap_or(0))).await;
            "slow".into_response()
        }
        "/echo" => ([(header::CONTENT_TYPE, "text/plain; charset=utf-8")], body).into_response(),
        "/reflect" => {
            let seen = headers
                .get(header::AUTHORIZATION)
                .map(|v| v.as_bytes().to_vec())
                .unwrap_or_default();
            let mut body = b"seen ".to_vec();
            body.extend_from_slice(&seen);
            body.extend_from_slice(b" end");
            let split = 5 + seen.len() / 2;
            let second = Bytes::from(body.split_off(split));
            let first = Bytes::from(body);
            let frames = futures::stream::unfold(0, move |sent| {
                let (first, second) = (first.clone(), second.clone());
                async move {
                    match sent {
                        0 => Some((Ok::<_, std::io::Error>(first), 1)),
                        1 => {
                            tokio::time::sleep(Duration::from_millis(50)).await;
                            Some((Ok(second), 2))
                        }
                        _ => None,
                    }
                }
            });
            let mut response = Body::from_stream(frames).into_response();
            if let Ok(value) = header::HeaderValue::from_bytes(&seen) {
                response.headers_mut().insert("x-seen", value);
            }
            response
        }
        _ => (StatusCode::NOT_FOUND, "no such page").into_response(),
    }
}

fn page() -> String {
    let links: String = PAGE_LINKS
        .iter()
        .map(|(href, text)| format!("    <li><a href=\"{href}\">{text}</a></li>\n"))
        .collect();
    format!(
        "<!doctype html>\n<html>\n<head>\n  <meta charset=\"utf-8\">\n  <title>{PAGE_TITLE}</title>\n</head>\n<body>\n  <h1>Hello</h1>\n  <ul>\n{links}  </ul>\n</body>\n</html>\n"
    )
}

/// The `key=value` pairs of a query, percent-decoded (`+` is a space).
fn url_pairs(query: &str) -> Vec<(String, String)> {
    fn decode(text: &str) -> String {
        let bytes = text.as_bytes();
        let mut out = Vec::with_capacity(bytes.len());
        let mut i = 0;
        while i < bytes.len() {
            match bytes[i] {
                b'+' => out.push(b' '),
                b'%' if i + 2 < bytes.len() => {
                    let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).ok();
                    match hex.and_then(|h| u8::from_str_radix(h, 16).ok()) {
                        Some(byte) => {
                            out.push(byte);
                            i += 2;
                        }
                        None => out.push(b'%'),
                    }
                }
                byte => out.push(byte),
            }
            i += 1;
        }
        String::from_utf8_lossy(&out).into_owned()
    }
    query
        .split('&')
        .filter(|pair| !pair.is_empty())
        .map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (decode(key), decode(value))
        })
        .collect()
}

/// A listener handing axum finished TLS connections: the TCP accepts and the
/// handshakes run in tasks of their own, so a client that never completes a
/// handshake holds up no other.
struct TlsListener {
    addr: SocketAddr,
    ready: tokio::sync::mpsc::Receiver<(TlsStream<TcpStream>, SocketAddr)>,
}

impl TlsListener {
    fn start(listener: TcpListener, acceptor: TlsAcceptor) -> TlsListener {
        let addr = listener.local_addr().unwrap();
        let (send, ready) = tokio::sync::mpsc::channel(64);
        tokio::spawn(async move {
            loop {
                let Ok((stream, peer)) = listener.accept().await else {
                    continue;
                };
                let (acceptor, send) = (acceptor.clone(), send.clone());
                tokio::spawn(async move {
                    let handshake =
                        tokio::time::timeout(Duration::from_secs(10), acceptor.accept(stream));
                    if let Ok(Ok(tls)) = handshake.await {
                        let _ = send.send((tls, peer)).await;
                    }
                });
            }
        });
        TlsListener { addr, ready }
    }
}

impl axum::serve::Listener for TlsListener {
    type Io = TlsStream<TcpStream>;
    type Addr = SocketAddr;

    async fn accept(&mut self) -> (Self::Io, Self::Addr) {
        match self.ready.recv().await {
            Some(connection) => connection,
            // The accepting task ended (its runtime is shutting down).
            None => std::future::pending().await,
        }
    }

    fn local_addr(&self) -> std::io::Result<Self::Addr> {
        Ok(self.addr)
    }
}

/// A raw TCP server that reads each connection to its end and records the
/// bytes.
pub struct TcpSink {
    pub addr: SocketAddr,
    received: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl TcpSink {
    pub fn start() -> TcpSink {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let received: Arc<Mutex<Vec<Vec<u8>>>> = Arc::default();
        let kept = received.clone();
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let kept = kept.clone();
                std::thread::spawn(move || {
                    stream
                        .set_read_timeout(Some(Duration::from_secs(10)))
                        .unwrap();
                    let index = {
                        let mut all = kept.lock().unwrap();
                        all.push(Vec::new());
                        all.len() - 1
                    };
                    let mut buffer = [0u8; 4096];
                    while let Ok(n) = stream.read(&mut buffer) {
                        if n == 0 {
                            break;
                        }
                        kept.lock().unwrap()[index].extend_from_slice(&buffer[..n]);
                    }
                });
            }
        });
        TcpSink { addr, received }
    }

    /// What each connection sent so far, as text.
    pub fn received(&self) -> Vec<String> {
        self.received
            .lock()
            .unwrap()
            .iter()
            .map(|bytes| String::from_utf8_lossy(bytes).into_owned())
            .collect()
    }

    /// Waits up to 10 s for a connection that sent something containing
    /// `text`, and returns everything it sent.
    pub fn wait_for(&self, text: &str) -> Option<String> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(found) = self.received().into_iter().find(|r| r.contains(text)) {
                return Some(found);
            }
            if Instant::now() > deadline {
                return None;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}
