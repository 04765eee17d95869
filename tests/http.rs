//! Outgoing HTTP through the host (issue #13) against the release host
//! (`toolhost serve --http` as a process) and local web servers
//! (`common::web_server`): an HTTPS one whose certificate a CA made by the test
//! signed (trusted through `host.http_ca_file`) and plain HTTP ones, each
//! recording every request it receives.
//!
//! - The example tools in Rust, JavaScript and Python fetch a page and call an
//!   API through the allow-list, rendered through the mapper.
//! - Every refusal of the allow-list and of the budgets, with the test guest
//!   `http_probe`: the guest gets `HTTP-request-denied` (or a stream error, or
//!   the deadline), the server receives nothing, the call ends with the code the
//!   contract names. A granted server whose certificate no trusted CA signed
//!   fails its TLS handshake (`TLS-certificate-error`).
//! - Secrets: the value reaches only the bound destination, in a header; every
//!   other way out (another destination, the URL, the body, a log line, a
//!   result, a socket) carries the placeholder, and the value is in no log line,
//!   no fault detail and no stored row.
//! - `toolhost check` on a component that imports wasi:http.
//!
//! Each test starts one host for a group of cases (a host start costs about a
//! second) and runs the cases one after the other; a failing case does not hide
//! the others: every case runs, and the test fails naming each one that failed
//! (its panic message is above).

use crate::common;

use std::os::unix::fs::PermissionsExt as _;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::attack;
use common::host::{guest, lang_guest, root};
use common::mcp_client::{message, modern};
use common::process::Host;
use common::web_server::{PAGE_LINKS, PAGE_TITLE, TcpSink, TestCa, WebServer};
use futures::FutureExt as _;
use futures::future::BoxFuture;
use serde_json::{Value, json};

// ---------------------------------------------------------------------------
// What the tests share.

/// The data directory of every host here: its compile cache keeps the
/// JavaScript and Python components compiled across hosts and runs. Each host
/// keeps its result store and signing key in a temporary directory of its own.
fn shared_data_dir() -> PathBuf {
    root().join("target/test-http/data")
}

/// Writes `dir/toolhost.toml`: the shared data directory, the `[host]` keys
/// `host`, a SQLite store in `dir`, then `plugins` (TOML text).
fn write_config(dir: &Path, host: &str, plugins: &str) -> PathBuf {
    let config = dir.join("toolhost.toml");
    std::fs::write(
        &config,
        format!(
            "[host]\ndata_dir = \"{data}\"\n{host}\n\n\
             [store]\nkind = \"sqlite\"\npath = \"{store}\"\nsigning_key_file = \"{key}\"\n\n\
             {plugins}",
            data = shared_data_dir().display(),
            store = dir.join("results.sqlite3").display(),
            key = dir.join("signing.key").display(),
        ),
    )
    .unwrap();
    config
}

/// The `[host]` key trusting the test CA.
fn trust(ca: &TestCa) -> String {
    format!("http_ca_file = \"{}\"", ca.pem_file.display())
}

/// A random value (32 hex digits) no one can guess: a secret of this run.
fn random_value(label: &str) -> String {
    let mut bytes = [0u8; 16];
    getrandom::fill(&mut bytes).unwrap();
    format!("{label}-{}", hex::encode(bytes))
}

/// Writes a secret's value to `dir/name` with mode 0600 (as `from_file` demands).
fn secret_file(dir: &Path, name: &str, value: &str) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, value).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    path
}

/// Calls `tool` on `host` (2026-07-28, compat) and returns the JSON-RPC message.
async fn call(host: &Host, tool: &str, arguments: Value) -> Value {
    attack::call(&host.url, tool, arguments).await
}

/// The structured content of a call's result.
fn data(message: &Value) -> &Value {
    &message["result"]["structuredContent"]
}

/// The legacy envelope in the compat text block of a call's result.
fn envelope(message: &Value) -> Value {
    let text = message["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text block: {message}"));
    serde_json::from_str(text).unwrap_or_else(|e| panic!("the text is not JSON ({e}): {message}"))
}

/// The error code of a failed call (`None` for a success).
fn code(message: &Value) -> Option<String> {
    attack::error_code(message)
}

/// The error message and details of a failed call, as one text.
fn failure_text(message: &Value) -> String {
    let envelope = envelope(message);
    format!(
        "{} {}",
        envelope["error"], envelope["_meta"]["errorDetails"]
    )
}

/// The `details` of a failed call.
fn details(message: &Value) -> Value {
    envelope(message)["_meta"]["errorDetails"].clone()
}

/// Asserts `message` is a success and returns its structured content.
#[track_caller]
fn success(message: &Value) -> Value {
    assert_eq!(code(message), None, "expected a success: {message}");
    data(message).clone()
}

/// Asserts the probe saw a refusal it reported (`unwrap = false`): the guest
/// got `HTTP-request-denied` and failed with `tool_error`, which the host turned
/// into `permission_denied` naming what it denied.
#[track_caller]
fn assert_refused_to_guest(message: &Value) {
    assert_eq!(
        code(message).as_deref(),
        Some("permission_denied"),
        "a tool_error after a denial is the denial's: {message}"
    );
    let text = failure_text(message);
    assert!(
        text.contains("HTTP-request-denied"),
        "the guest got HTTP-request-denied: {text}"
    );
    let denied = details(message)["denied"].to_string();
    assert!(
        denied.contains("is not granted"),
        "details.denied: {denied}"
    );
}

/// Asserts a probe that trapped on a refusal (`unwrap = true`) ended as
/// `permission_denied` whose `details.denied` names `method` and `url_part`.
#[track_caller]
fn assert_denied(message: &Value, method: &str, url_part: &str) {
    assert_eq!(
        code(message).as_deref(),
        Some("permission_denied"),
        "{message}"
    );
    let denied = details(message)["denied"].to_string();
    assert!(
        denied.contains(&format!("HTTP {method} ")) && denied.contains(url_part),
        "details.denied names {method} and {url_part}: {denied}"
    );
    assert!(denied.contains("is not granted"), "{denied}");
}

/// The `budget` of a failed call's details.
fn budget(message: &Value) -> Option<String> {
    details(message)["budget"].as_str().map(str::to_owned)
}

/// `http_probe`'s `http_request` arguments for one GET of `url`.
fn get(url: &str) -> Value {
    json!({"url": url})
}

/// Runs every case in order (a panic ends only its case), then fails naming
/// those that failed.
async fn run_cases(cases: Vec<(&'static str, BoxFuture<'_, ()>)>) {
    let total = cases.len();
    let mut failed = Vec::new();
    for (name, case) in cases {
        eprintln!("--- case {name}");
        let started = Instant::now();
        if AssertUnwindSafe(case).catch_unwind().await.is_err() {
            eprintln!("--- case {name} FAILED (its panic is above)");
            failed.push(name);
        } else {
            eprintln!("--- case {name} passed in {:?}", started.elapsed());
        }
    }
    assert!(
        failed.is_empty(),
        "{} of {total} cases failed: {failed:?} (each one's panic message is above)",
        failed.len()
    );
}

/// `tools/list` of `host`: each tool by name.
async fn tools(host: &Host) -> serde_json::Map<String, Value> {
    let response = modern("tools/list", None, json!({}), None, &host.url)
        .send()
        .await
        .unwrap();
    let listed = message(response).await;
    listed["result"]["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools: {listed}"))
        .iter()
        .map(|tool| (tool["name"].as_str().unwrap().to_owned(), tool.clone()))
        .collect()
}

// ---------------------------------------------------------------------------
// The test servers themselves.

/// The servers answer as the other tests expect (checked with a client of the
/// test's own, trusting the test CA): a broken server would make every other
/// test here fail for the wrong reason.
#[tokio::test(flavor = "multi_thread")]
async fn the_test_servers_answer_and_record_every_request() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new(dir.path());
    let https = WebServer::https(&ca).await;
    let http = WebServer::http().await;
    let client = ca.client();

    let page = client
        .get(https.url("/page?x=1"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        page.contains(&format!("<title>{PAGE_TITLE}</title>")),
        "{page}"
    );
    // The certificate names localhost too.
    let by_name = client.get(https.url_by_name("/page")).send().await.unwrap();
    assert_eq!(by_name.status(), 200);
    // A client that does not trust the test CA refuses the server.
    assert!(
        reqwest::get(https.url("/page")).await.is_err(),
        "the server's certificate is trusted only through the test CA"
    );

    let user: Value = client
        .get(https.url("/api/user"))
        .bearer_auth("t0ken")
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        user,
        json!({"login": "ada", "id": 7, "authorization": "present"})
    );
    assert!(!user.to_string().contains("t0ken"));

    let reflected = client
        .get(https.url("/reflect"))
        .bearer_auth("t0ken")
        .send()
        .await
        .unwrap();
    assert_eq!(reflected.headers()["x-seen"], "Bearer t0ken");
    assert_eq!(reflected.text().await.unwrap(), "seen Bearer t0ken end");

    let to = http.url("/page?from=redirect");
    let redirect = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .tls_built_in_root_certs(false)
        .add_root_certificate(reqwest::Certificate::from_pem(ca.pem.as_bytes()).unwrap())
        .build()
        .unwrap()
        .get(https.url(&format!("/redirect?to={}", urlencode(&to))))
        .send()
        .await
        .unwrap();
    assert_eq!(redirect.status(), 302);
    assert_eq!(redirect.headers()["location"].to_str().unwrap(), to);

    let big = reqwest::get(http.url("/big?bytes=12345"))
        .await
        .unwrap()
        .bytes()
        .await
        .unwrap();
    assert_eq!(big.len(), 12345);
    let started = Instant::now();
    let slow = reqwest::get(http.url("/slow?ms=300")).await.unwrap();
    assert_eq!(slow.text().await.unwrap(), "slow");
    assert!(started.elapsed() >= Duration::from_millis(300));
    let echo = reqwest::Client::new()
        .post(http.url("/echo?e=1"))
        .header("x-test", "yes")
        .body("the body")
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert_eq!(echo, "the body");

    let https_seen: Vec<String> = https.requests().iter().map(|r| r.target.clone()).collect();
    assert_eq!(
        https_seen,
        [
            "/page?x=1",
            "/page",
            "/api/user",
            "/reflect",
            &format!("/redirect?to={}", urlencode(&to))
        ],
        "the untrusted client's request never got through the handshake"
    );
    assert_eq!(
        https.requests()[2].header("authorization").as_deref(),
        Some("Bearer t0ken")
    );
    let echoed = http.requests_with("/echo?e=1");
    assert_eq!(echoed.len(), 1);
    assert_eq!(echoed[0].method, "POST");
    assert_eq!(echoed[0].header("x-test").as_deref(), Some("yes"));
    assert_eq!(&echoed[0].body[..], b"the body");
    assert!(http.requests_with("/page?from=redirect").is_empty());

    let sink = TcpSink::start();
    {
        use std::io::Write as _;
        let mut stream = std::net::TcpStream::connect(sink.addr).unwrap();
        stream.write_all(b"raw bytes").unwrap();
    }
    assert_eq!(sink.wait_for("raw").as_deref(), Some("raw bytes"));
}

/// Percent-encodes `text` for a query value.
fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

// ---------------------------------------------------------------------------
// The example tools in three languages.

/// One language's example: its component and the prefix its tools get here.
struct Example {
    language: &'static str,
    component: PathBuf,
    prefix: &'static str,
}

fn examples() -> [Example; 3] {
    [
        Example {
            language: "Rust",
            component: guest("web"),
            prefix: "rs",
        },
        Example {
            language: "JavaScript",
            component: lang_guest("js_web"),
            prefix: "js",
        },
        Example {
            language: "Python",
            component: lang_guest("py_web"),
            prefix: "py",
        },
    ]
}

/// The name of `tool` of `example` in the host's catalog.
fn example_tool(example: &Example, tool: &str) -> String {
    format!("{}_{tool}", example.prefix)
}

/// `fetch_title` and `call_api` of the Rust, JavaScript and Python examples,
/// against the HTTPS and the HTTP server, through the allow-list and the
/// mapper: the same structured content in every language, the secret's value
/// only at the bound destination.
#[tokio::test(flavor = "multi_thread")]
async fn the_example_tools_fetch_pages_and_call_an_api_in_rust_javascript_and_python() {
    let dir = tempfile::tempdir().unwrap();
    let ca = TestCa::new(dir.path());
    let https = WebServer::https(&ca).await;
    let http = WebServer::http().await;
    let value = random_value("api-value");
    let key_file = secret_file(dir.path(), "api.secret", &value);
    let plugins: String = examples()
        .iter()
        .map(|example| {
            format!(
                "[[plugin]]\nname = \"{prefix}_web\"\nprefix = \"{prefix}\"\npath = \"{path}\"\n\
                 [plugin.policy]\nhttp = {rules:?}\nmemory_mib = 256\ntimeout_ms = 20000\n\
                 [[plugin.secret]]\nname = \"api\"\nfrom_file = \"{key}\"\nhosts = {bound:?}\n\n",
                prefix = example.prefix,
                path = example.component.display(),
                rules = [https.rule(), http.rule()],
                key = key_file.display(),
                bound = [https.url("/api/*")],
            )
        })
        .collect();
    let config = write_config(dir.path(), &trust(&ca), &plugins);
    // The first start compiles the JavaScript and Python components (the shared
    // compile cache keeps them for later runs).
    let host = Host::start_with(&config, "warn", &[], Duration::from_secs(600));

    let listed = tools(&host).await;
    let mut contents = Vec::new();
    for example in examples() {
        let language = example.language;
        let fetch_title = example_tool(&example, "fetch_title");
        let call_api = example_tool(&example, "call_api");
        for name in [&fetch_title, &call_api] {
            let tool = listed
                .get(name.as_str())
                .unwrap_or_else(|| panic!("{language}: {name} is listed: {listed:?}"));
            // The examples say so themselves; with HTTP rules the host keeps it.
            assert_eq!(
                tool["annotations"]["openWorldHint"], true,
                "{language}: {tool}"
            );
        }

        for server in [&https, &http] {
            let url = server.url(&format!("/page?lang={}", example.prefix));
            let fetched = call(&host, &fetch_title, json!({"url": url})).await;
            let structured = success(&fetched);
            let links: Vec<Value> = PAGE_LINKS
                .iter()
                .map(|(href, text)| json!({"href": href, "text": text}))
                .collect();
            assert_eq!(
                structured,
                json!({"url": url, "status": 200, "title": PAGE_TITLE, "links": links}),
                "{language} fetch_title from {}: {fetched}",
                server.scheme
            );
            // The compat text block carries the same data (the mapper rendered it).
            assert_eq!(
                envelope(&fetched)["data"],
                structured,
                "{language}: {fetched}"
            );
            let received = server.requests_with(&format!("/page?lang={}", example.prefix));
            assert_eq!(
                received.len(),
                1,
                "{language}: one request reached the {} server",
                server.scheme
            );
            assert_eq!(received[0].method, "GET");
            contents.push((language, server.scheme, structured));
        }

        // The API at the bound destination: the value in the header, never in the result.
        let api = https.url(&format!("/api/user?lang={}", example.prefix));
        let answered = call(&host, &call_api, json!({"url": api})).await;
        let structured = success(&answered);
        assert_eq!(
            structured,
            json!({"status": 200, "body": {"login": "ada", "id": 7, "authorization": "present"}}),
            "{language} call_api: {answered}"
        );
        assert!(!answered.to_string().contains(&value), "{answered}");
        let received = https.requests_with(&format!("/api/user?lang={}", example.prefix));
        assert_eq!(received.len(), 1, "{language}");
        assert_eq!(
            received[0].header("authorization"),
            Some(format!("Bearer {value}")),
            "{language}: the bound destination receives the value in the header"
        );
        assert_eq!(
            received[0].header("accept").as_deref(),
            Some("application/json"),
            "{language}"
        );

        // The same tool to a destination the secret is not bound to: the placeholder.
        let unbound = http.url(&format!("/api/user?lang={}", example.prefix));
        let answered = call(&host, &call_api, json!({"url": unbound})).await;
        assert_eq!(
            success(&answered)["body"]["authorization"],
            "present",
            "{language}: {answered}"
        );
        let received = http.requests_with(&format!("/api/user?lang={}", example.prefix));
        assert_eq!(received.len(), 1, "{language}");
        let sent = received[0].header("authorization").unwrap_or_default();
        assert!(
            sent.starts_with("Bearer ") && sent.len() > "Bearer ".len(),
            "{language}: {sent}"
        );
        assert!(
            !sent.contains(&value),
            "{language}: an unbound destination received the secret's value: {sent}"
        );
    }
    // Every language rendered the same page the same way.
    for (language, scheme, structured) in &contents {
        let mut expected = contents[0].2.clone();
        expected["url"] = structured["url"].clone();
        assert_eq!(
            structured, &expected,
            "{language} over {scheme} differs from Rust over https"
        );
    }
    for line in host.log_lines() {
        assert!(!line.contains(&value), "the value is in the log: {line}");
    }
}

// ---------------------------------------------------------------------------
// The allow-list, the budgets and the deadline.

/// The servers and the host of the policy cases.
struct Policy {
    /// HTTPS, granted (every method) by address, and by the name `localhost`.
    https: WebServer,
    /// HTTP, granted for GET only.
    http: WebServer,
    /// HTTP, on no rule: it must never receive a request.
    outside: WebServer,
    /// HTTPS, granted, but with a certificate of a CA the host does not trust.
    untrusted: WebServer,
    host: Host,
    _dir: tempfile::TempDir,
}

/// The request budgets of the `probe` plugin in the policy cases.
const MAX_REQUESTS: u64 = 3;
const MAX_RESPONSE_BYTES: u64 = 64 * 1024;
const MAX_REQUEST_BYTES: u64 = 16 * 1024;
const PROBE_TIMEOUT_MS: u64 = 2_000;

impl Policy {
    async fn start() -> Policy {
        let dir = tempfile::tempdir().unwrap();
        let ca = TestCa::new(dir.path());
        let https = WebServer::https(&ca).await;
        let http = WebServer::http().await;
        let outside = WebServer::http().await;
        let other = dir.path().join("other-ca");
        std::fs::create_dir(&other).unwrap();
        let untrusted = WebServer::https(&TestCa::new(&other)).await;
        let rules = [
            https.rule(),
            https.url_by_name("/*"),
            format!("GET {}", http.rule()),
            untrusted.rule(),
        ];
        let plugins = format!(
            "[[plugin]]\nname = \"probe\"\npath = \"{probe}\"\n[plugin.policy]\n\
             http = {rules:?}\nmax_http_requests = {MAX_REQUESTS}\n\
             max_http_response_bytes = {MAX_RESPONSE_BYTES}\nmax_http_request_bytes = {MAX_REQUEST_BYTES}\n\
             timeout_ms = {PROBE_TIMEOUT_MS}\n\n\
             [[plugin]]\nname = \"closed\"\nprefix = \"closed\"\npath = \"{probe}\"\n",
            probe = guest("http_probe").display(),
        );
        let config = write_config(dir.path(), &trust(&ca), &plugins);
        // As an operator may run it: errors must not carry the host's
        // backtraces to the guest all the same (`response_over_budget`).
        let host = Host::start_with(
            &config,
            "info",
            &[("RUST_BACKTRACE", "1")],
            Duration::from_secs(60),
        );
        Policy {
            https,
            http,
            outside,
            untrusted,
            host,
            _dir: dir,
        }
    }

    async fn request(&self, arguments: Value) -> Value {
        call(&self.host, "http_request", arguments).await
    }

    /// A request the allow-list refuses, first as the guest sees it, then with
    /// the guest trapping on it: `permission_denied` naming `method` and
    /// `url_part`. `marker` is in the URL: no server may record it.
    async fn refused(&self, arguments: Value, method: &str, url_part: &str, marker: &str) {
        let logged = |host: &Host| {
            host.log_lines()
                .iter()
                // In the call's span, so the caller's callId finds it.
                .filter(|l| {
                    l.contains("network_denied")
                        && l.contains(url_part)
                        && l.contains("call{call_id=")
                })
                .count()
        };
        let before = logged(&self.host);
        let seen = self.request(arguments.clone()).await;
        assert_refused_to_guest(&seen);
        let mut trapping = arguments;
        trapping["unwrap"] = json!(true);
        let trapped = self.request(trapping).await;
        assert_denied(&trapped, method, url_part);
        for server in [&self.https, &self.http, &self.outside] {
            assert!(
                server.requests_with(marker).is_empty(),
                "the {} server on port {} received a refused request: {}",
                server.scheme,
                server.port(),
                server.received_text()
            );
        }
        // Each refusal is logged as a network denial naming the request.
        let deadline = Instant::now() + Duration::from_secs(10);
        while logged(&self.host) < before + 2 {
            assert!(
                Instant::now() < deadline,
                "two log lines with error.type network_denied naming {url_part}, in the call's span; the log:\n{}",
                self.host.log_lines().join("\n")
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// Every refusal of the allow-list (a host not on it, a name resolving to
/// loopback, an IP literal outside it, a disallowed method, a plugin with no
/// rule), a redirect the host does not follow, the three budgets and the
/// deadline, against one host.
#[tokio::test(flavor = "multi_thread")]
async fn the_allow_list_the_budgets_and_the_deadline_hold_every_request() {
    let policy = Policy::start().await;
    let p = &policy;
    run_cases(vec![
        ("granted requests over HTTPS and HTTP", granted(p).boxed()),
        ("a host not on the list", host_not_on_the_list(p).boxed()),
        (
            "an IP literal outside the list",
            ip_literal_outside(p).boxed(),
        ),
        (
            "a name resolving to loopback",
            name_resolving_to_loopback(p).boxed(),
        ),
        ("a disallowed method", disallowed_method(p).boxed()),
        (
            "a certificate the host does not trust",
            untrusted_certificate(p).boxed(),
        ),
        (
            "a redirect to a disallowed host",
            redirect_not_followed(p).boxed(),
        ),
        (
            "a response over the budget",
            response_over_budget(p).boxed(),
        ),
        (
            "more requests than the budget",
            too_many_requests(p).boxed(),
        ),
        (
            "a request body over the budget",
            request_over_budget(p).boxed(),
        ),
        ("a request running at the deadline", deadline(p).boxed()),
        (
            "a plugin with no HTTP rule",
            plugin_without_rules(p).boxed(),
        ),
        ("open-world hints", open_world_hints(p).boxed()),
    ])
    .await;
}

async fn granted(p: &Policy) {
    for (server, marker) in [(&p.https, "granted-https"), (&p.http, "granted-http")] {
        let answer = p
            .request(json!({"url": server.url(&format!("/page?case={marker}")), "headers": {"x-probe": "1"}}))
            .await;
        let data = success(&answer);
        assert_eq!(data["status"], 200, "{answer}");
        assert_eq!(data["sent"], 1, "{answer}");
        assert!(
            data["body"]
                .as_str()
                .unwrap_or_default()
                .contains(&format!("<title>{PAGE_TITLE}</title>")),
            "{answer}"
        );
        assert!(
            data["headers"]["content-type"]
                .as_str()
                .unwrap_or_default()
                .starts_with("text/html"),
            "{answer}"
        );
        let received = server.requests_with(marker);
        assert_eq!(received.len(), 1, "{}", server.received_text());
        assert_eq!(received[0].method, "GET");
        assert_eq!(received[0].header("x-probe").as_deref(), Some("1"));
    }
}

async fn host_not_on_the_list(p: &Policy) {
    // Refused before any name lookup: were it looked up, `.invalid` would fail
    // as a DNS error instead.
    p.refused(
        get("http://not-listed.invalid/page?case=not-listed"),
        "GET",
        "http://not-listed.invalid/page",
        "case=not-listed",
    )
    .await;
    p.refused(
        get("https://example.org/?case=example-org"),
        "GET",
        "https://example.org/",
        "case=example-org",
    )
    .await;
}

async fn ip_literal_outside(p: &Policy) {
    // A port of 127.0.0.1 no rule names (a server listens there).
    p.refused(
        get(&p.outside.url("/page?case=other-port")),
        "GET",
        &p.outside.url("/page"),
        "case=other-port",
    )
    .await;
    // Another loopback address, on a granted port (nothing listens there: a
    // request let through would fail to connect, not be denied).
    let url = format!("http://127.0.0.2:{}/page?case=other-address", p.http.port());
    p.refused(get(&url), "GET", "127.0.0.2", "case=other-address")
        .await;
    // The HTTPS server's port, but over plain HTTP: the scheme is part of the rule.
    let origin = format!("http://127.0.0.1:{}", p.https.port());
    p.refused(
        get(&format!("{origin}/page?case=other-scheme")),
        "GET",
        &origin,
        "case=other-scheme",
    )
    .await;
}

async fn name_resolving_to_loopback(p: &Policy) {
    // The rule names `localhost`, which resolves to loopback: a name grants
    // public addresses only.
    p.refused(
        get(&p.https.url_by_name("/page?case=by-name")),
        "GET",
        "localhost",
        "case=by-name",
    )
    .await;
}

async fn disallowed_method(p: &Policy) {
    let url = p.http.url("/echo?case=post");
    p.refused(
        json!({"url": url, "method": "POST", "body": "x"}),
        "POST",
        &p.http.url("/echo"),
        "case=post",
    )
    .await;
    p.refused(
        json!({"url": p.http.url("/echo?case=delete"), "method": "DELETE"}),
        "DELETE",
        &p.http.url("/echo"),
        "case=delete",
    )
    .await;
    // GET is on the rule.
    let answer = p.request(get(&p.http.url("/echo?case=get"))).await;
    assert_eq!(success(&answer)["status"], 200, "{answer}");
    assert_eq!(p.http.requests_with("case=get").len(), 1);
}

async fn untrusted_certificate(p: &Policy) {
    // Granted by a rule, but its certificate is signed by a CA neither the
    // system nor `host.http_ca_file` trusts: the TLS handshake fails, no HTTP
    // request reaches the server, and it is no denial (the policy allowed it).
    let answer = p
        .request(get(&p.untrusted.url("/page?case=untrusted")))
        .await;
    assert_eq!(code(&answer).as_deref(), Some("tool_error"), "{answer}");
    let text = failure_text(&answer);
    assert!(text.contains("TLS-certificate-error"), "{text}");
    assert!(
        p.untrusted.requests().is_empty(),
        "{}",
        p.untrusted.received_text()
    );
}

async fn redirect_not_followed(p: &Policy) {
    for (target, marker) in [
        (p.outside.url("/page?case=redirected-out"), "redirected-out"),
        // Not even to a granted destination: the host follows no redirect.
        (p.http.url("/page?case=redirected-in"), "redirected-in"),
    ] {
        let url = p.https.url(&format!("/redirect?to={}", urlencode(&target)));
        let answer = p.request(get(&url)).await;
        let data = success(&answer);
        assert_eq!(data["status"], 302, "the guest gets the 3xx: {answer}");
        assert_eq!(data["headers"]["location"], target.as_str(), "{answer}");
        assert_eq!(data["sent"], 1, "{answer}");
        assert_eq!(
            p.https.requests_with("/redirect?to=").len(),
            if marker == "redirected-out" { 1 } else { 2 }
        );
        for server in [&p.outside, &p.http] {
            assert!(
                server.requests_with(marker).is_empty(),
                "the redirect was followed: {}",
                server.received_text()
            );
        }
    }
}

async fn response_over_budget(p: &Policy) {
    let over = p
        .request(get(&p.https.url(&format!(
            "/big?bytes={}&case=big-over",
            MAX_RESPONSE_BYTES * 4
        ))))
        .await;
    assert_eq!(code(&over).as_deref(), Some("resource_limit"), "{over}");
    assert_eq!(
        budget(&over).as_deref(),
        Some("max_http_response_bytes"),
        "{over}"
    );
    // The guest logs the error it read from the body stream (its debug
    // string): the error, without the host's backtrace, although the host
    // runs with RUST_BACKTRACE=1.
    let seen = p
        .host
        .wait_for_log("with the guest's view of the cut body", |l| {
            l.contains("case=big-over") && l.contains("failed:")
        });
    assert!(seen.contains("exceeds limit"), "{seen}");
    assert!(seen.contains("tool="), "one line, fields and all: {seen}");
    let log = p.host.log_lines();
    assert!(
        !log.iter()
            .any(|l| l.contains("Stack backtrace") || l.contains(".cargo/registry")),
        "a host backtrace in the log:\n{}",
        log.join("\n")
    );
    // Within the budget the same request goes through, whole.
    let bytes = MAX_RESPONSE_BYTES / 2;
    let within = p
        .request(get(&p
            .https
            .url(&format!("/big?bytes={bytes}&case=big-within"))))
        .await;
    let data = success(&within);
    assert_eq!(
        data["body"].as_str().map(str::len),
        Some(bytes as usize),
        "the whole body"
    );
}

async fn too_many_requests(p: &Policy) {
    let over = p
        .request(json!({"url": p.https.url("/echo?case=count-over"), "times": MAX_REQUESTS + 2}))
        .await;
    assert_eq!(code(&over).as_deref(), Some("resource_limit"), "{over}");
    assert_eq!(
        budget(&over).as_deref(),
        Some("max_http_requests"),
        "{over}"
    );
    assert_eq!(
        p.https.requests_with("case=count-over").len() as u64,
        MAX_REQUESTS,
        "the requests past the budget never left the host"
    );
    // The budget is per call: the next call may send as many again.
    let within = p
        .request(json!({"url": p.https.url("/echo?case=count-within"), "times": MAX_REQUESTS}))
        .await;
    assert_eq!(success(&within)["sent"], MAX_REQUESTS, "{within}");
    assert_eq!(
        p.https.requests_with("case=count-within").len() as u64,
        MAX_REQUESTS
    );
}

async fn request_over_budget(p: &Policy) {
    let over = p
        .request(json!({
            "url": p.https.url("/echo?case=body-over"),
            "method": "POST",
            "body": "b".repeat(MAX_REQUEST_BYTES as usize * 2),
        }))
        .await;
    assert_eq!(code(&over).as_deref(), Some("resource_limit"), "{over}");
    assert_eq!(
        budget(&over).as_deref(),
        Some("max_http_request_bytes"),
        "{over}"
    );
    assert!(
        p.https
            .requests_with("case=body-over")
            .iter()
            .all(|r| r.body.len() as u64 <= MAX_REQUEST_BYTES),
        "no more than the budget was sent"
    );
    let body = "b".repeat(MAX_REQUEST_BYTES as usize / 2);
    let within = p
        .request(
            json!({"url": p.https.url("/echo?case=body-within"), "method": "POST", "body": body}),
        )
        .await;
    assert_eq!(success(&within)["body"], body.as_str());
    let received = p.https.the_request_with("case=body-within");
    assert_eq!(received.body.len(), body.len());
}

async fn deadline(p: &Policy) {
    let started = Instant::now();
    let answer = p
        .request(get(&p.https.url("/slow?ms=30000&case=slow")))
        .await;
    let took = started.elapsed();
    assert_eq!(code(&answer).as_deref(), Some("timeout"), "{answer}");
    assert!(
        took < Duration::from_millis(PROBE_TIMEOUT_MS + 3_000),
        "the call ended at its deadline of {PROBE_TIMEOUT_MS} ms, not the request's 30 s: {took:?}"
    );
    assert!(
        took >= Duration::from_millis(PROBE_TIMEOUT_MS - 100),
        "{took:?}"
    );
    assert_eq!(
        p.https.requests_with("case=slow").len(),
        1,
        "the request was running"
    );
    // The host goes on serving the plugin.
    let after = p.request(get(&p.https.url("/page?case=after-slow"))).await;
    assert_eq!(success(&after)["status"], 200);
}

async fn plugin_without_rules(p: &Policy) {
    // The same component under another name, with no `http` rule: every
    // request is refused, to every server.
    for (server, marker) in [(&p.https, "closed-https"), (&p.http, "closed-http")] {
        let arguments = get(&server.url(&format!("/page?case={marker}")));
        let seen = call(&p.host, "closed_http_request", arguments.clone()).await;
        assert_refused_to_guest(&seen);
        let mut trapping = arguments;
        trapping["unwrap"] = json!(true);
        let trapped = call(&p.host, "closed_http_request", trapping).await;
        assert_denied(&trapped, "GET", &server.url("/page"));
        assert!(server.requests_with(marker).is_empty());
    }
}

async fn open_world_hints(p: &Policy) {
    let listed = tools(&p.host).await;
    let hint = |name: &str| {
        listed
            .get(name)
            .unwrap_or_else(|| panic!("{name} is listed: {listed:?}"))["annotations"]
            ["openWorldHint"]
            .clone()
    };
    // Tools that leave the hint unset: with HTTP rules, an open world ...
    for tool in ["log_text", "tcp_send"] {
        assert_eq!(
            hint(tool),
            true,
            "{tool} of a plugin with HTTP rules: {:?}",
            listed.get(tool)
        );
    }
    // ... and the same tools of the same component without any rule: closed.
    for tool in ["closed_log_text", "closed_tcp_send", "closed_http_secret"] {
        assert_eq!(hint(tool), false, "{tool}: {:?}", listed.get(tool));
    }
    // A tool that says it is open stays so (http_request declares it).
    assert_eq!(hint("http_request"), true);
    assert_eq!(hint("closed_http_request"), true);
}

// ---------------------------------------------------------------------------
// Secrets by reference.

/// The servers, the host and the values of the secret cases.
struct Secrets {
    /// HTTPS: the destination `token` is bound to.
    https: WebServer,
    /// HTTP: granted (every method); `envtok` is bound to its GET requests only.
    http: WebServer,
    sink: TcpSink,
    host: Host,
    /// The value of `token` (from a 0600 file, bound to the HTTPS server),
    /// of `pathtok` (from a file, bound to the HTTPS server's `/api/*` only) and
    /// of `envtok` (from the
    /// environment).
    token: String,
    envtok: String,
    pathtok: String,
    config: PathBuf,
    dir: tempfile::TempDir,
    /// Every message the host answered with, to look for the values in.
    answers: std::sync::Mutex<Vec<Value>>,
}

const SECRETS_SIZE_LIMIT: usize = 4096;

impl Secrets {
    async fn start() -> Secrets {
        let dir = tempfile::tempdir().unwrap();
        let ca = TestCa::new(dir.path());
        let https = WebServer::https(&ca).await;
        let http = WebServer::http().await;
        let sink = TcpSink::start();
        let token = random_value("token-value");
        let envtok = random_value("envtok-value");
        let pathtok = random_value("pathtok-value");
        let pathtok_file = secret_file(dir.path(), "pathtok.secret", &pathtok);
        let token_file = secret_file(dir.path(), "token.secret", &token);
        let rules = [https.rule(), http.rule()];
        let plugins = format!(
            "[[plugin]]\nname = \"probe\"\npath = \"{probe}\"\n[plugin.policy]\n\
             http = {rules:?}\nnetwork = [\"{sink}\"]\ntimeout_ms = 2000\n\
             [[plugin.secret]]\nname = \"token\"\nfrom_file = \"{token_file}\"\nhosts = {token_hosts:?}\n\
             [[plugin.secret]]\nname = \"envtok\"\nfrom_env = \"TOOLHOST_TEST_ENVTOK\"\nhosts = {env_hosts:?}\n\
             [[plugin.secret]]\nname = \"pathtok\"\nfrom_file = \"{pathtok_file}\"\nhosts = {path_hosts:?}\n\n\
             [[plugin]]\nname = \"other\"\nprefix = \"other\"\npath = \"{probe}\"\n[plugin.policy]\n\
             http = {rules:?}\n",
            probe = guest("http_probe").display(),
            sink = sink.addr,
            token_file = token_file.display(),
            token_hosts = [https.rule()],
            env_hosts = [format!("GET {}", http.rule())],
            pathtok_file = pathtok_file.display(),
            path_hosts = [https.url("/api/*")],
        );
        let config = write_config(
            dir.path(),
            &format!("{}\nsize_limit = {SECRETS_SIZE_LIMIT}", trust(&ca)),
            &plugins,
        );
        // Everything the host logs about calls, and wasmtime-wasi-http's own lines.
        let host = Secrets::host(&config, &envtok);
        Secrets {
            https,
            http,
            sink,
            host,
            token,
            envtok,
            pathtok,
            config,
            dir,
            answers: Default::default(),
        }
    }

    /// A host process of `config`, logging everything it logs about calls, and
    /// wasmtime-wasi-http's own lines.
    fn host(config: &Path, envtok: &str) -> Host {
        Host::start_with(
            config,
            "info,toolhost=trace,wasmtime_wasi_http=trace",
            &[("TOOLHOST_TEST_ENVTOK", envtok)],
            Duration::from_secs(60),
        )
    }

    async fn call(&self, tool: &str, arguments: Value) -> Value {
        let answer = call(&self.host, tool, arguments).await;
        self.answers.lock().unwrap().push(answer.clone());
        answer
    }

    async fn placeholder(&self, name: &str) -> String {
        let answer = self.call("http_secret", json!({"name": name})).await;
        success(&answer)["placeholder"]
            .as_str()
            .unwrap_or_else(|| panic!("{name} has a placeholder: {answer}"))
            .to_owned()
    }

    /// Asserts no value of a secret is in `text` (`what` names where it was).
    #[track_caller]
    fn assert_no_value(&self, what: &str, text: &str) {
        for value in self.values() {
            assert!(
                !text.contains(value.as_str()),
                "{what} carries a secret's value: {text}"
            );
        }
    }

    fn values(&self) -> [&String; 3] {
        [&self.token, &self.envtok, &self.pathtok]
    }
}

/// Each way a placeholder can leave a guest, and where the value may go: only
/// into a header of a request to the bound destination.
#[tokio::test(flavor = "multi_thread")]
async fn a_secret_reaches_only_its_bound_destination_and_only_in_a_header() {
    let secrets = Secrets::start().await;
    let s = &secrets;
    run_cases(vec![
        ("placeholders", placeholders(s).boxed()),
        ("the bound destination", bound_destination(s).boxed()),
        ("a binding by method", bound_by_method(s).boxed()),
        ("a binding by path", bound_by_path(s).boxed()),
        ("an unbound destination", unbound_destination(s).boxed()),
        ("another plugin", another_plugin(s).boxed()),
        ("another host process", another_process(s).boxed()),
        (
            "a bound destination that reflects the value",
            reflected(s).boxed(),
        ),
        ("the URL", in_the_url(s).boxed()),
        ("the body and the result", in_the_body(s).boxed()),
        ("a log line", in_a_log_line(s).boxed()),
        ("a socket write", in_a_socket_write(s).boxed()),
        ("fault details", in_fault_details(s).boxed()),
        ("a stored row", in_a_stored_row(s).boxed()),
        // Last: over everything the cases above made the host say and send.
        (
            "no log line, answer or stray request",
            nowhere_else(s).boxed(),
        ),
    ])
    .await;
}

async fn placeholders(s: &Secrets) {
    let token = s.placeholder("token").await;
    let envtok = s.placeholder("envtok").await;
    for (name, placeholder, value) in [("token", &token, &s.token), ("envtok", &envtok, &s.envtok)]
    {
        assert!(!placeholder.is_empty());
        assert!(
            !placeholder.contains(value.as_str()) && !value.contains(placeholder.as_str()),
            "{name}: the placeholder is not the value"
        );
    }
    assert_ne!(token, envtok, "each secret has its own placeholder");
    // The same placeholder on every call of this host.
    assert_eq!(s.placeholder("token").await, token);
    // No placeholder for a secret that is not defined, nor for another plugin's.
    let unknown = s.call("http_secret", json!({"name": "nope"})).await;
    assert_eq!(success(&unknown), json!({"placeholder": null}), "{unknown}");
    let other = s.call("other_http_secret", json!({"name": "token"})).await;
    assert_eq!(success(&other), json!({"placeholder": null}), "{other}");
}

async fn bound_destination(s: &Secrets) {
    let token = s.placeholder("token").await;
    let answer = s
        .call(
            "http_request",
            json!({
                "url": s.https.url("/api/user?case=bound"),
                "headers": {"authorization": format!("Bearer {token}"), "x-api-key": token},
            }),
        )
        .await;
    let data = success(&answer);
    assert_eq!(data["status"], 200, "{answer}");
    let body: Value = serde_json::from_str(data["body"].as_str().unwrap()).unwrap();
    assert_eq!(body["authorization"], "present");
    let received = s.https.the_request_with("case=bound");
    assert_eq!(
        received.header("authorization"),
        Some(format!("Bearer {}", s.token)),
        "the value replaces the placeholder inside the header's value"
    );
    assert_eq!(received.header("x-api-key"), Some(s.token.clone()));
    s.assert_no_value("the result", &answer.to_string());
}

async fn bound_by_method(s: &Secrets) {
    // `envtok` is bound to GET requests to the HTTP server only.
    let envtok = s.placeholder("envtok").await;
    for (method, marker, expected) in [
        ("GET", "case=env-get", s.envtok.clone()),
        ("POST", "case=env-post", envtok.clone()),
    ] {
        let answer = s
            .call(
                "http_request",
                json!({"url": s.http.url(&format!("/echo?{marker}")), "method": method, "headers": {"x-token": envtok}}),
            )
            .await;
        assert_eq!(success(&answer)["status"], 200, "{answer}");
        let received = s.http.the_request_with(marker);
        assert_eq!(
            received.header("x-token"),
            Some(expected),
            "{method}: the value only for the bound method"
        );
    }
}

async fn bound_by_path(s: &Secrets) {
    // `pathtok` is bound to the HTTPS server's /api/* only.
    let pathtok = s.placeholder("pathtok").await;
    for (path, marker, expected) in [
        ("/api/user", "case=path-api", s.pathtok.clone()),
        ("/echo", "case=path-echo", pathtok.clone()),
        ("/apiary", "case=path-apiary", pathtok.clone()),
    ] {
        let answer = s
            .call(
                "http_request",
                json!({"url": s.https.url(&format!("{path}?{marker}")), "headers": {"x-token": pathtok}}),
            )
            .await;
        assert_eq!(code(&answer), None, "{answer}");
        let received = s.https.the_request_with(marker);
        assert_eq!(
            received.header("x-token"),
            Some(expected),
            "{path}: the value only under the bound path"
        );
    }
}

async fn unbound_destination(s: &Secrets) {
    // `token` is bound to the HTTPS server; the HTTP one is granted but not bound.
    let token = s.placeholder("token").await;
    let answer = s
        .call(
            "http_request",
            json!({"url": s.http.url("/api/user?case=unbound"), "headers": {"authorization": format!("Bearer {token}")}}),
        )
        .await;
    assert_eq!(success(&answer)["status"], 200, "{answer}");
    let received = s.http.the_request_with("case=unbound");
    assert_eq!(
        received.header("authorization"),
        Some(format!("Bearer {token}")),
        "an unbound destination gets the placeholder"
    );
}

async fn another_plugin(s: &Secrets) {
    // A plugin the secret is not defined for, sending the first plugin's
    // placeholder to the bound destination: the placeholder.
    let token = s.placeholder("token").await;
    let answer = s
        .call(
            "other_http_request",
            json!({"url": s.https.url("/echo?case=other-plugin"), "headers": {"authorization": format!("Bearer {token}")}}),
        )
        .await;
    assert_eq!(success(&answer)["status"], 200, "{answer}");
    let received = s.https.the_request_with("case=other-plugin");
    assert_eq!(
        received.header("authorization"),
        Some(format!("Bearer {token}"))
    );
}

async fn reflected(s: &Secrets) {
    // The bound destination sends the header it got back, in a header and in a
    // body whose two frames split the value: the guest gets the placeholder.
    let token = s.placeholder("token").await;
    let answer = s
        .call(
            "http_request",
            json!({"url": s.https.url("/reflect?case=reflect"), "headers": {"authorization": format!("Bearer {token}")}}),
        )
        .await;
    let data = success(&answer);
    let received = s.https.the_request_with("case=reflect");
    assert_eq!(
        received.header("authorization"),
        Some(format!("Bearer {}", s.token)),
        "the destination got the value"
    );
    assert_eq!(
        data["body"],
        format!("seen Bearer {token} end"),
        "the reflected body has the placeholder: {answer}"
    );
    assert_eq!(
        data["headers"]["x-seen"],
        format!("Bearer {token}"),
        "the reflected header has the placeholder: {answer}"
    );
    s.assert_no_value("a reflected answer", &answer.to_string());
}

async fn another_process(s: &Secrets) {
    // The same configuration in a second process: its placeholder differs, and
    // the first process's placeholder is worthless there (it leaves as it is,
    // even to the bound destination).
    let token = s.placeholder("token").await;
    let second = Secrets::host(&s.config, &s.envtok);
    let answer = call(&second, "http_secret", json!({"name": "token"})).await;
    let theirs = success(&answer)["placeholder"]
        .as_str()
        .unwrap_or_default()
        .to_owned();
    assert!(!theirs.is_empty(), "{answer}");
    assert_ne!(theirs, token, "a placeholder is per host process");
    let answer = call(
        &second,
        "http_request",
        json!({"url": s.https.url("/echo?case=second-process"), "headers": {"authorization": format!("Bearer {token}"), "x-theirs": theirs}}),
    )
    .await;
    assert_eq!(code(&answer), None, "{answer}");
    let received = s.https.the_request_with("case=second-process");
    assert_eq!(
        received.header("authorization"),
        Some(format!("Bearer {token}")),
        "another process's placeholder is not replaced"
    );
    assert_eq!(
        received.header("x-theirs"),
        Some(s.token.clone()),
        "the second process replaces its own"
    );
    for line in second.log_lines() {
        s.assert_no_value("a log line of the second host", &line);
    }
}

async fn in_the_url(s: &Secrets) {
    let token = s.placeholder("token").await;
    let answer = s
        .call(
            "http_request",
            json!({"url": s.https.url(&format!("/echo?case=url&token={token}"))}),
        )
        .await;
    assert_eq!(success(&answer)["status"], 200, "{answer}");
    let received = s.https.the_request_with("case=url");
    assert_eq!(
        received.target,
        format!("/echo?case=url&token={token}"),
        "the URL carries the placeholder"
    );
}

async fn in_the_body(s: &Secrets) {
    let token = s.placeholder("token").await;
    let body = format!("token={token}");
    let answer = s
        .call(
            "http_request",
            json!({
                "url": s.https.url("/echo?case=body"),
                "method": "POST",
                "headers": {"authorization": format!("Bearer {token}"), "content-type": "text/plain"},
                "body": body,
            }),
        )
        .await;
    let data = success(&answer);
    // The echoed body comes back into the result: the placeholder.
    assert_eq!(data["body"], body.as_str(), "{answer}");
    let received = s.https.the_request_with("case=body");
    assert_eq!(
        &received.body[..],
        body.as_bytes(),
        "the body carries the placeholder"
    );
    // The header of the same request to the bound destination: the value.
    assert_eq!(
        received.header("authorization"),
        Some(format!("Bearer {}", s.token))
    );
    s.assert_no_value("the result", &answer.to_string());
}

async fn in_a_log_line(s: &Secrets) {
    let token = s.placeholder("token").await;
    let marker = format!("log-marker {token}");
    let answer = s.call("log_text", json!({"text": marker})).await;
    assert_eq!(success(&answer), json!({"logged": true}), "{answer}");
    let line = s
        .host
        .wait_for_log("with the logged text", |line| line.contains("log-marker"));
    assert!(
        line.contains(&token),
        "the log line carries the placeholder: {line}"
    );
    s.assert_no_value("the log line", &line);
}

async fn in_a_socket_write(s: &Secrets) {
    let token = s.placeholder("token").await;
    let envtok = s.placeholder("envtok").await;
    let text = format!("socket {token} {envtok}");
    let answer = s
        .call(
            "tcp_send",
            json!({"addr": s.sink.addr.to_string(), "text": text}),
        )
        .await;
    assert_eq!(code(&answer), None, "{answer}");
    let received = s
        .sink
        .wait_for("socket ")
        .unwrap_or_else(|| panic!("the sink received nothing: {answer}"));
    assert_eq!(received, text, "a socket write carries the placeholders");
}

async fn in_fault_details(s: &Secrets) {
    let token = s.placeholder("token").await;
    let header = json!({"authorization": format!("Bearer {token}")});
    // Refused: a destination not on the list, the placeholder in the URL and a
    // header.
    let url = format!("http://not-listed.invalid/?case=fault&t={token}");
    let denied = s
        .call(
            "http_request",
            json!({"url": url, "headers": header, "unwrap": true}),
        )
        .await;
    assert_eq!(
        code(&denied).as_deref(),
        Some("permission_denied"),
        "{denied}"
    );
    s.assert_no_value("a denial's details", &denied.to_string());
    // At the bound destination, still running at the deadline.
    let late = s
        .call(
            "http_request",
            json!({"url": s.https.url("/slow?ms=30000&case=fault-slow"), "headers": header}),
        )
        .await;
    assert_eq!(code(&late).as_deref(), Some("timeout"), "{late}");
    s.assert_no_value("a timeout's details", &late.to_string());
    assert_eq!(
        s.https.requests_with("case=fault-slow")[0].header("authorization"),
        Some(format!("Bearer {}", s.token)),
        "the request that timed out carried the value"
    );
}

async fn in_a_stored_row(s: &Secrets) {
    let token = s.placeholder("token").await;
    // The echoed body is larger than the inline limit: the result is stored.
    let body = format!("stored {token} {}", "y".repeat(SECRETS_SIZE_LIMIT * 2));
    let answer = s
        .call(
            "http_request",
            json!({
                "url": s.https.url("/echo?case=stored"),
                "method": "POST",
                "headers": {"authorization": format!("Bearer {token}")},
                "body": body,
            }),
        )
        .await;
    assert_eq!(code(&answer), None, "{answer}");
    let link = answer["result"]["content"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|block| block["type"] == "resource_link")
        .unwrap_or_else(|| panic!("a result over the limit is stored: {answer}"));
    let received = s.https.requests_with("case=stored");
    assert_eq!(
        received[0].header("authorization"),
        Some(format!("Bearer {}", s.token))
    );
    // The stored row, read back through the host, has the placeholder.
    let uri = link["uri"].as_str().unwrap();
    let response = modern(
        "resources/read",
        Some(uri),
        json!({"uri": uri}),
        None,
        &s.host.url,
    )
    .send()
    .await
    .unwrap();
    let read = message(response).await;
    assert!(read.to_string().contains(&token), "{read}");
    s.assert_no_value("the stored result read back", &read.to_string());
    // Every byte of the store's files on disk (the database, its WAL).
    let mut found = false;
    for entry in std::fs::read_dir(s.dir.path()).unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.starts_with("results.sqlite3") {
            continue;
        }
        let bytes = std::fs::read(entry.path()).unwrap();
        found |= contains(&bytes, token.as_bytes());
        for value in s.values() {
            assert!(
                !contains(&bytes, value.as_bytes()),
                "{name} holds a secret's value"
            );
        }
    }
    assert!(
        found,
        "the stored row (with the placeholder) is in the store's files"
    );
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

async fn nowhere_else(s: &Secrets) {
    // Lines are read by another thread: let the last ones arrive.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let lines = s.host.log_lines();
    assert!(
        lines.len() > 10,
        "the host logged its calls: {} lines",
        lines.len()
    );
    for line in &lines {
        s.assert_no_value("a log line of the host", line);
    }
    for answer in s.answers.lock().unwrap().iter() {
        s.assert_no_value("an answer", &answer.to_string());
    }
    // A value only ever in a header of a request to its bound destination:
    // `envtok` in GET requests to the HTTP server, `token` in requests to the
    // HTTPS one, `pathtok` in those under its /api/.
    for server in [&s.http, &s.https] {
        for request in server.requests() {
            let what = format!("a request to the {} server", server.scheme);
            s.assert_no_value(&what, &request.target);
            s.assert_no_value(&what, &String::from_utf8_lossy(&request.body));
            let allowed: Vec<&String> = if server.scheme == "http" {
                if request.method == "GET" {
                    vec![&s.envtok]
                } else {
                    vec![]
                }
            } else if request.target.starts_with("/api/") {
                vec![&s.token, &s.pathtok]
            } else {
                vec![&s.token]
            };
            for (name, value) in &request.headers {
                let value = String::from_utf8_lossy(value.as_bytes());
                for secret in s.values() {
                    assert!(
                        !value.contains(secret.as_str()) || allowed.contains(&secret),
                        "{what} {} {}: header {name} carries a value not bound to it",
                        request.method,
                        request.target
                    );
                }
            }
        }
    }
    for received in s.sink.received() {
        s.assert_no_value("a socket write", &received);
    }
}

// ---------------------------------------------------------------------------
// `toolhost check`.

fn toolhost(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(args)
        .current_dir(root())
        .env("TOOLHOST_LOG", "warn")
        .output()
        .expect("running toolhost")
}

/// `toolhost check` reports that a component imports wasi:http, warns when the
/// configuration it is checked against (the sidecar) has no HTTP rule, and
/// does not warn when it has one.
#[test]
fn check_reports_the_http_import_and_warns_without_a_rule() {
    let dir = tempfile::tempdir().unwrap();
    let component = dir.path().join("probe.wasm");
    std::fs::copy(guest("http_probe"), &component).unwrap();

    let bare = toolhost(&["check", component.to_str().unwrap()]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&bare.stdout).into_owned(),
        String::from_utf8_lossy(&bare.stderr).into_owned(),
    );
    assert!(
        bare.status.success(),
        "a warning is no error: {stdout}{stderr}"
    );
    let warnings: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("warning: "))
        .collect();
    assert!(
        warnings
            .iter()
            .any(|l| l.contains("wasi:http") && l.contains("rule")),
        "a warning names the import and the missing rule: {stdout}"
    );
    let all = format!("{stdout}{stderr}");
    assert!(all.contains("wasi:http"), "{all}");

    std::fs::write(
        dir.path().join("probe.toml"),
        "[policy]\nhttp = [\"https://api.example.com/*\"]\n",
    )
    .unwrap();
    let ruled = toolhost(&["check", component.to_str().unwrap()]);
    let (stdout, stderr) = (
        String::from_utf8_lossy(&ruled.stdout).into_owned(),
        String::from_utf8_lossy(&ruled.stderr).into_owned(),
    );
    assert!(ruled.status.success(), "{stdout}{stderr}");
    assert!(
        !stdout
            .lines()
            .any(|l| l.starts_with("warning: ") && l.contains("wasi:http")),
        "no warning with a rule: {stdout}"
    );
    assert!(
        format!("{stdout}{stderr}").contains("wasi:http"),
        "the import is still reported: {stdout}{stderr}"
    );

    // Checked against an operator's configuration instead of the sidecar: its
    // `[[plugin]]` for the component decides.
    for (rules, warned) in [("[]", true), ("[\"GET https://api.example.com/*\"]", false)] {
        let config = dir.path().join("toolhost.toml");
        std::fs::write(
            &config,
            format!(
                "[host]\ndata_dir = \"{}\"\n\n[[plugin]]\npath = \"{}\"\n[plugin.policy]\nhttp = {rules}\n",
                dir.path().join("data").display(),
                component.display()
            ),
        )
        .unwrap();
        let checked = toolhost(&[
            "check",
            "--config",
            config.to_str().unwrap(),
            component.to_str().unwrap(),
        ]);
        let stdout = String::from_utf8_lossy(&checked.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&checked.stderr);
        assert!(checked.status.success(), "{stdout}{stderr}");
        let warning = stdout
            .lines()
            .find(|l| l.starts_with("warning: ") && l.contains("wasi:http"));
        assert_eq!(
            warning.is_some(),
            warned,
            "http = {rules} in the configuration: {stdout}"
        );
        if let Some(warning) = warning {
            assert!(
                warning.contains(&config.display().to_string()),
                "the warning names the configuration: {warning}"
            );
        }
    }

    // A component that imports no wasi:http: not reported.
    let calc = toolhost(&["check", guest("calc").to_str().unwrap()]);
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&calc.stdout),
        String::from_utf8_lossy(&calc.stderr)
    );
    assert!(calc.status.success(), "{text}");
    assert!(!text.contains("wasi:http"), "{text}");
}

/// A secret's value is read from a file only its owner may read, or from the
/// environment; never from the configuration. A host refuses to start
/// otherwise, and says why without printing the value.
#[test]
fn a_secret_from_a_file_others_may_read_or_written_inline_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let value = random_value("loose-value");
    let loose = dir.path().join("loose.secret");
    std::fs::write(&loose, &value).unwrap();
    std::fs::set_permissions(&loose, std::fs::Permissions::from_mode(0o644)).unwrap();
    let plugin = |secret: &str| {
        format!(
            "[host]\ndata_dir = \"{data}\"\n\n[[plugin]]\npath = \"{probe}\"\n[plugin.policy]\n\
             http = [\"https://api.example.com/*\"]\n[[plugin.secret]]\nname = \"api\"\n{secret}\n\
             hosts = [\"https://api.example.com/*\"]\n",
            data = dir.path().join("data").display(),
            probe = guest("http_probe").display(),
        )
    };
    // (what, the secret's source lines, what the refusal must say)
    let cases = [
        (
            "a file of mode 0644",
            format!("from_file = \"{}\"", loose.display()),
            loose.display().to_string(),
        ),
        (
            "an inline value",
            format!("value = \"{value}\""),
            "unknown field `value`".to_owned(),
        ),
        (
            "no source",
            String::new(),
            "needs exactly one of `from_env`".to_owned(),
        ),
    ];
    for (what, secret, says) in cases {
        let config = dir.path().join("toolhost.toml");
        std::fs::write(&config, plugin(&secret)).unwrap();
        let output = toolhost(&["tools", "--config", config.to_str().unwrap()]);
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert_eq!(
            output.status.code(),
            Some(2),
            "{what}: the start is refused: {stdout}{stderr}"
        );
        assert!(stderr.contains(&says), "{what}: says {says:?}: {stderr}");
        // Neither the loose file's value nor one written inline is printed (a
        // TOML error names the line and column, never quotes the line).
        assert!(
            !format!("{stdout}{stderr}").contains(&value),
            "{what}: the value is printed: {stderr}"
        );
    }
    // With mode 0600 the same file is accepted.
    std::fs::set_permissions(&loose, std::fs::Permissions::from_mode(0o600)).unwrap();
    let config = dir.path().join("toolhost.toml");
    std::fs::write(
        &config,
        plugin(&format!("from_file = \"{}\"", loose.display())),
    )
    .unwrap();
    let output = toolhost(&["tools", "--config", config.to_str().unwrap()]);
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    assert!(!String::from_utf8_lossy(&output.stdout).contains(&value));
}
