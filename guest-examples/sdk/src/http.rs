//! Outgoing HTTP requests, through the host's `wasi:http/outgoing-handler`.
//!
//! The host lets a request through only when the operator's policy grants its
//! method and URL (`http = ["GET https://api.example.com/*"]`); any other is
//! refused with [`Error::code`] `"HTTP-request-denied"`. The host never
//! follows redirects: a 3xx reaches the tool as it is. Requests are
//! synchronous: each call returns once the whole response body has been read.
//!
//! ```no_run
//! use toolhost_guest::http;
//!
//! # fn main() -> Result<(), http::Error> {
//! let page = http::get("https://example.org/")?;
//! println!("{} {}", page.status, page.text());
//!
//! let token = toolhost_guest::secret("github").unwrap_or_default();
//! let user = http::Request::get("https://api.github.com/user")
//!     .header("authorization", format!("Bearer {token}"))
//!     .header("accept", "application/json")
//!     .send()?;
//! let user: serde_json::Value = user.json().unwrap_or_default();
//! # Ok(())
//! # }
//! ```
//!
//! Only a component that calls this module imports `wasi:http`: the bindings
//! a tool does not use are left out of its component.

use std::fmt;
use std::time::Duration;

use wasi::http::outgoing_handler;
use wasi::http::types::{
    self, ErrorCode, Fields, IncomingBody, Method, OutgoingBody, OutgoingRequest, RequestOptions,
    Scheme,
};
use wasi::io::streams::{InputStream, OutputStream, StreamError};

/// Why a request failed.
#[derive(Debug, Clone)]
pub enum Error {
    /// The URL is not `scheme://authority[/path][?query]`.
    InvalidUrl(String),
    /// The method is not a valid HTTP token.
    InvalidMethod(String),
    /// A header name or value was refused (malformed, or one the host
    /// forbids guests to set, such as `host` or `connection`).
    InvalidHeader(String),
    /// The request failed with this `wasi:http` error: refused by the
    /// host's policy, unreachable, a TLS failure, a body over the host's
    /// limit, ... [`Error::code`] names the case.
    Http(ErrorCode),
    /// Reading or writing a body failed without a `wasi:http` error code.
    Stream(String),
}

impl Error {
    /// The name of the `wasi:http` error-code case, as the WIT spells it
    /// (`"HTTP-request-denied"`, `"connection-refused"`, `"DNS-error"`), or
    /// for the errors this module finds itself `"invalid-url"`,
    /// `"invalid-method"`, `"invalid-header"` and `"stream-error"`.
    pub fn code(&self) -> &'static str {
        match self {
            Error::InvalidUrl(_) => "invalid-url",
            Error::InvalidMethod(_) => "invalid-method",
            Error::InvalidHeader(_) => "invalid-header",
            Error::Http(code) => code_name(code),
            Error::Stream(_) => "stream-error",
        }
    }

    /// True when the host's policy (or a budget of the call) refused the
    /// request: retrying will not help.
    pub fn is_denied(&self) -> bool {
        matches!(self, Error::Http(ErrorCode::HttpRequestDenied))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::InvalidUrl(detail)
            | Error::InvalidMethod(detail)
            | Error::InvalidHeader(detail)
            | Error::Stream(detail) => write!(f, "{}: {detail}", self.code()),
            Error::Http(ErrorCode::InternalError(Some(detail))) => {
                write!(f, "{}: {detail}", self.code())
            }
            Error::Http(ErrorCode::DnsError(payload)) => match &payload.rcode {
                Some(rcode) => write!(f, "{}: {rcode}", self.code()),
                None => f.write_str(self.code()),
            },
            Error::Http(_) => f.write_str(self.code()),
        }
    }
}

impl std::error::Error for Error {}

/// The WIT name of a `wasi:http/types.error-code` case.
fn code_name(code: &ErrorCode) -> &'static str {
    use ErrorCode as E;
    match code {
        E::DnsTimeout => "DNS-timeout",
        E::DnsError(_) => "DNS-error",
        E::DestinationNotFound => "destination-not-found",
        E::DestinationUnavailable => "destination-unavailable",
        E::DestinationIpProhibited => "destination-IP-prohibited",
        E::DestinationIpUnroutable => "destination-IP-unroutable",
        E::ConnectionRefused => "connection-refused",
        E::ConnectionTerminated => "connection-terminated",
        E::ConnectionTimeout => "connection-timeout",
        E::ConnectionReadTimeout => "connection-read-timeout",
        E::ConnectionWriteTimeout => "connection-write-timeout",
        E::ConnectionLimitReached => "connection-limit-reached",
        E::TlsProtocolError => "TLS-protocol-error",
        E::TlsCertificateError => "TLS-certificate-error",
        E::TlsAlertReceived(_) => "TLS-alert-received",
        E::HttpRequestDenied => "HTTP-request-denied",
        E::HttpRequestLengthRequired => "HTTP-request-length-required",
        E::HttpRequestBodySize(_) => "HTTP-request-body-size",
        E::HttpRequestMethodInvalid => "HTTP-request-method-invalid",
        E::HttpRequestUriInvalid => "HTTP-request-URI-invalid",
        E::HttpRequestUriTooLong => "HTTP-request-URI-too-long",
        E::HttpRequestHeaderSectionSize(_) => "HTTP-request-header-section-size",
        E::HttpRequestHeaderSize(_) => "HTTP-request-header-size",
        E::HttpRequestTrailerSectionSize(_) => "HTTP-request-trailer-section-size",
        E::HttpRequestTrailerSize(_) => "HTTP-request-trailer-size",
        E::HttpResponseIncomplete => "HTTP-response-incomplete",
        E::HttpResponseHeaderSectionSize(_) => "HTTP-response-header-section-size",
        E::HttpResponseHeaderSize(_) => "HTTP-response-header-size",
        E::HttpResponseBodySize(_) => "HTTP-response-body-size",
        E::HttpResponseTrailerSectionSize(_) => "HTTP-response-trailer-section-size",
        E::HttpResponseTrailerSize(_) => "HTTP-response-trailer-size",
        E::HttpResponseTransferCoding(_) => "HTTP-response-transfer-coding",
        E::HttpResponseContentCoding(_) => "HTTP-response-content-coding",
        E::HttpResponseTimeout => "HTTP-response-timeout",
        E::HttpUpgradeFailed => "HTTP-upgrade-failed",
        E::HttpProtocolError => "HTTP-protocol-error",
        E::LoopDetected => "loop-detected",
        E::ConfigurationError => "configuration-error",
        E::InternalError(_) => "internal-error",
    }
}

/// A response, read in full.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The status code (a 3xx included: the host follows no redirect).
    pub status: u16,
    /// The header fields in the order received; names are lower case.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl Response {
    /// The first value of the header `name` (any case), if present.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// True for a 2xx status.
    pub fn is_success(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body as text (invalid UTF-8 replaced by U+FFFD).
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The body parsed as JSON.
    pub fn json<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_slice(&self.body)
    }
}

/// A request to build and [`send`](Request::send).
///
/// ```no_run
/// use toolhost_guest::http::Request;
///
/// let created = Request::post("https://api.example.com/items")
///     .header("content-type", "application/json")
///     .body(r#"{"name":"box"}"#)
///     .send();
/// ```
#[derive(Debug, Clone)]
pub struct Request {
    method: String,
    url: String,
    headers: Vec<(String, Vec<u8>)>,
    body: Option<Vec<u8>>,
    timeout: Option<Duration>,
}

impl Request {
    /// A request with any method (`"GET"`, `"PATCH"`, `"PROPFIND"`).
    pub fn new(method: impl Into<String>, url: impl Into<String>) -> Self {
        Request {
            method: method.into(),
            url: url.into(),
            headers: Vec::new(),
            body: None,
            timeout: None,
        }
    }

    /// A `GET` request.
    pub fn get(url: impl Into<String>) -> Self {
        Request::new("GET", url)
    }

    /// A `POST` request.
    pub fn post(url: impl Into<String>) -> Self {
        Request::new("POST", url)
    }

    /// Adds a header field (a name may be given more than once).
    pub fn header(mut self, name: impl Into<String>, value: impl AsRef<[u8]>) -> Self {
        self.headers.push((name.into(), value.as_ref().to_vec()));
        self
    }

    /// Sets the body, sent with its `content-length` unless a header sets
    /// one. Without a body, the request has an empty one.
    pub fn body(mut self, body: impl Into<Vec<u8>>) -> Self {
        self.body = Some(body.into());
        self
    }

    /// Bounds connecting, the wait for the response's first byte and each
    /// wait between bytes (the host bounds them anyway by the call's
    /// deadline).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sends the request and reads the whole response.
    pub fn send(self) -> Result<Response, Error> {
        let (scheme, authority, path) = split_url(&self.url)?;
        let headers = Fields::new();
        for (name, value) in &self.headers {
            headers
                .append(name, value)
                .map_err(|e| Error::InvalidHeader(format!("{name}: {e:?}")))?;
        }
        // A body of known length goes with its length rather than chunked:
        // not every server reads a chunked request.
        if let Some(body) = &self.body
            && !headers.has("content-length")
        {
            headers
                .append("content-length", body.len().to_string().as_bytes())
                .map_err(|e| Error::InvalidHeader(format!("content-length: {e:?}")))?;
        }
        let request = OutgoingRequest::new(headers);
        request
            .set_method(&method(&self.method)?)
            .map_err(|()| Error::InvalidMethod(self.method.clone()))?;
        request
            .set_scheme(Some(&scheme))
            .and_then(|()| request.set_authority(Some(authority)))
            .and_then(|()| request.set_path_with_query(Some(&path)))
            .map_err(|()| Error::InvalidUrl(self.url.clone()))?;
        let outgoing_body = request.body().expect("a new request's body is taken once");
        let options = self.timeout.map(|timeout| {
            let options = RequestOptions::new();
            let nanos = u64::try_from(timeout.as_nanos()).unwrap_or(u64::MAX);
            // A host that does not support a timeout refuses it; the
            // deadline of the call bounds the request anyway.
            let _ = options.set_connect_timeout(Some(nanos));
            let _ = options.set_first_byte_timeout(Some(nanos));
            let _ = options.set_between_bytes_timeout(Some(nanos));
            options
        });

        // Started first: the host streams the body as it is written.
        let pending = outgoing_handler::handle(request, options).map_err(Error::Http)?;
        let written = write_body(&outgoing_body, self.body.as_deref().unwrap_or_default());
        let finished =
            written.and_then(|()| OutgoingBody::finish(outgoing_body, None).map_err(Error::Http));

        pending.subscribe().block();
        let response = match pending.get() {
            Some(Ok(Ok(response))) => response,
            Some(Ok(Err(code))) => return Err(Error::Http(code)),
            Some(Err(())) | None => {
                return Err(Error::Stream("the response was already taken".into()));
            }
        };
        // The response's code says more than the stream's (a refused body
        // ends both).
        finished?;

        let status = response.status();
        let headers = response
            .headers()
            .entries()
            .into_iter()
            .map(|(name, value)| (name, String::from_utf8_lossy(&value).into_owned()))
            .collect();
        let incoming = response
            .consume()
            .map_err(|()| Error::Stream("the response body was already taken".into()))?;
        let body = read_body(&incoming)?;
        Ok(Response {
            status,
            headers,
            body,
        })
    }
}

/// Sends a `GET` request to `url` and reads the whole response.
///
/// ```no_run
/// let response = toolhost_guest::http::get("https://example.org/").unwrap();
/// assert!(response.is_success());
/// ```
pub fn get(url: &str) -> Result<Response, Error> {
    Request::get(url).send()
}

/// Sends a request with `method`, `headers` and an optional `body`, and reads
/// the whole response.
///
/// ```no_run
/// use toolhost_guest::http;
///
/// let response = http::request(
///     "PUT",
///     "https://api.example.com/items/7",
///     &[("content-type", "text/plain")],
///     Some(b"seven"),
/// );
/// ```
pub fn request(
    method: &str,
    url: &str,
    headers: &[(&str, &str)],
    body: Option<&[u8]>,
) -> Result<Response, Error> {
    let mut request = Request::new(method, url);
    for (name, value) in headers {
        request = request.header(*name, value);
    }
    if let Some(body) = body {
        request = request.body(body);
    }
    request.send()
}

fn method(name: &str) -> Result<Method, Error> {
    Ok(match name.to_ascii_uppercase().as_str() {
        "GET" => Method::Get,
        "HEAD" => Method::Head,
        "POST" => Method::Post,
        "PUT" => Method::Put,
        "DELETE" => Method::Delete,
        "CONNECT" => Method::Connect,
        "OPTIONS" => Method::Options,
        "TRACE" => Method::Trace,
        "PATCH" => Method::Patch,
        _ if !name.is_empty() && name.bytes().all(is_token_byte) => Method::Other(name.into()),
        _ => return Err(Error::InvalidMethod(name.into())),
    })
}

/// RFC 9110 `tchar`.
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// `scheme://authority/path?query#fragment` into the scheme, the authority
/// and the path with its query (the fragment is not sent).
fn split_url(url: &str) -> Result<(Scheme, &str, String), Error> {
    let invalid = |why: &str| Error::InvalidUrl(format!("{url}: {why}"));
    let (scheme, rest) = url.split_once("://").ok_or_else(|| invalid("no scheme"))?;
    let scheme = match scheme.to_ascii_lowercase().as_str() {
        "http" => Scheme::Http,
        "https" => Scheme::Https,
        _ => return Err(invalid("the scheme is neither http nor https")),
    };
    let rest = rest.split_once('#').map_or(rest, |(before, _)| before);
    let end = rest.find(['/', '?']).unwrap_or(rest.len());
    let (authority, path) = rest.split_at(end);
    if authority.is_empty() {
        return Err(invalid("no host"));
    }
    if authority.contains('@') {
        return Err(invalid("user information is not supported"));
    }
    let path = if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("/{path}")
    };
    Ok((scheme, authority, path))
}

/// Writes `bytes` to the request body. The stream is dropped on return, as
/// `outgoing-body.finish` requires.
fn write_body(body: &OutgoingBody, bytes: &[u8]) -> Result<(), Error> {
    let stream: OutputStream = body
        .write()
        .map_err(|()| Error::Stream("the request body was already taken".into()))?;
    // `blocking-write-and-flush` takes at most 4096 bytes at a time.
    for chunk in bytes.chunks(4096) {
        stream
            .blocking_write_and_flush(chunk)
            .map_err(stream_error)?;
    }
    Ok(())
}

/// Reads the response body to its end. The stream is dropped before the
/// body, as the resources require.
fn read_body(body: &IncomingBody) -> Result<Vec<u8>, Error> {
    let stream: InputStream = body
        .stream()
        .map_err(|()| Error::Stream("the response body was already taken".into()))?;
    let mut bytes = Vec::new();
    loop {
        match stream.blocking_read(64 * 1024) {
            Ok(chunk) => bytes.extend_from_slice(&chunk),
            Err(StreamError::Closed) => return Ok(bytes),
            Err(e) => return Err(stream_error(e)),
        }
    }
}

/// A failed stream operation: the `wasi:http` error code behind it, if any
/// (a body over the host's limit, a connection cut).
fn stream_error(error: StreamError) -> Error {
    match error {
        StreamError::Closed => Error::Stream("the stream was closed early".into()),
        StreamError::LastOperationFailed(e) => match types::http_error_code(&e) {
            Some(code) => Error::Http(code),
            None => Error::Stream(e.to_debug_string()),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_split_into_scheme_authority_and_path() {
        let (scheme, authority, path) =
            split_url("https://api.example.com:8443/v1/x?q=1#top").unwrap();
        assert!(matches!(scheme, Scheme::Https));
        assert_eq!(
            (authority, path.as_str()),
            ("api.example.com:8443", "/v1/x?q=1")
        );
        let (scheme, authority, path) = split_url("HTTP://127.0.0.1").unwrap();
        assert!(matches!(scheme, Scheme::Http));
        assert_eq!((authority, path.as_str()), ("127.0.0.1", "/"));
        assert_eq!(split_url("http://[::1]?a").unwrap().2, "/?a");
        for bad in [
            "example.org/x",
            "ftp://example.org/",
            "http:///x",
            "http://u:p@host/",
        ] {
            assert_eq!(split_url(bad).unwrap_err().code(), "invalid-url", "{bad}");
        }
    }

    #[test]
    fn methods_and_error_codes_have_their_wit_names() {
        assert!(matches!(method("get").unwrap(), Method::Get));
        assert!(matches!(method("PROPFIND").unwrap(), Method::Other(m) if m == "PROPFIND"));
        assert_eq!(method("BAD METHOD").unwrap_err().code(), "invalid-method");
        assert_eq!(
            Error::Http(ErrorCode::HttpRequestDenied).code(),
            "HTTP-request-denied"
        );
        assert!(Error::Http(ErrorCode::HttpRequestDenied).is_denied());
        assert_eq!(
            Error::Http(ErrorCode::DestinationIpProhibited).to_string(),
            "destination-IP-prohibited"
        );
        assert_eq!(
            Error::Http(ErrorCode::InternalError(Some("boom".into()))).to_string(),
            "internal-error: boom"
        );
    }
}
