//! The hostile guests: each misbehaves in one way, and each is contained. For
//! every one the test asserts the exact error code, that nothing was read, written
//! or connected that the policy did not grant, and that the next call is served.

use crate::common;

use std::io::Read as _;
use std::net::TcpListener;
use std::path::Path;

use common::host::{TestHost, code, guest};
use serde_json::{Value, json};
use toolhost::result::{ErrorCode, ToolResult};

const SECRET: &str = "the-secret-outside-the-grant";

/// A granted directory `granted/` (read-only at /data) with a symlink to
/// `secret.txt`, which lies beside it, outside the grant.
struct Fixture {
    dir: tempfile::TempDir,
    listener: TcpListener,
}

impl Fixture {
    fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("granted")).unwrap();
        std::fs::write(dir.path().join("granted/inside.txt"), "inside").unwrap();
        std::fs::write(dir.path().join("secret.txt"), SECRET).unwrap();
        std::os::unix::fs::symlink(
            dir.path().join("secret.txt"),
            dir.path().join("granted/link-to-secret"),
        )
        .unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        Fixture { dir, listener }
    }

    fn granted(&self) -> std::path::PathBuf {
        self.dir.path().join("granted")
    }

    fn port(&self) -> u16 {
        self.listener.local_addr().unwrap().port()
    }

    /// Whether anything connected to the listener since the last look.
    fn connection(&self) -> Option<String> {
        let (mut stream, _) = self.listener.accept().ok()?;
        stream.set_nonblocking(false).unwrap();
        stream
            .set_read_timeout(Some(std::time::Duration::from_secs(2)))
            .unwrap();
        let mut received = String::new();
        let _ = stream.read_to_string(&mut received);
        Some(received)
    }

    /// The hostile plugin with no grants but the read-only directory, and the same
    /// component as `open_*` with the network and `PATH` granted.
    async fn host(&self) -> TestHost {
        TestHost::new(&format!(
            r#"
[[plugin]]
path = "{hostile}"
[plugin.policy]
memory_mib = 32
timeout_ms = 1000
[[plugin.policy.preopens]]
host = "{granted}"
guest = "/data"

[[plugin]]
name = "hostile-open"
path = "{hostile}"
prefix = "open"
[plugin.policy]
memory_mib = 32
timeout_ms = 1000
network = ["127.0.0.1:{port}"]
env = ["PATH"]
"#,
            hostile = guest("hostile").display(),
            granted = self.granted().display(),
            port = self.port(),
        ))
        .await
    }
}

/// The whole result as text (its stored form), to look for leaks anywhere in it.
fn text(result: &ToolResult) -> String {
    toolhost::render::format::encode(result).1
}

/// After a hostile call, the host still serves: a fresh instance counts from 1.
async fn still_serves(host: &TestHost) {
    let fresh = host.call("stateful", json!({})).await;
    assert_eq!(fresh.data(), Some(&json!({"count": 1})), "{fresh:?}");
}

async fn contained(
    host: &TestHost,
    tool: &str,
    arguments: Value,
    expected: ErrorCode,
) -> ToolResult {
    let result = host.call(tool, arguments).await;
    assert_eq!(code(&result), expected, "{tool}: {result:?}");
    let details = result
        .error()
        .unwrap()
        .details
        .as_ref()
        .expect("fault details");
    assert_eq!(
        details["tool"],
        json!(tool),
        "{tool}: the details name the tool"
    );
    assert_eq!(
        details["plugin"],
        json!("hostile"),
        "{tool}: the details name the plugin"
    );
    still_serves(host).await;
    result
}

#[tokio::test(flavor = "multi_thread")]
async fn a_loop_that_never_calls_the_host_hits_the_deadline() {
    let fixture = Fixture::new();
    let host = fixture.host().await;
    let result = contained(&host, "spin", json!({}), ErrorCode::Timeout).await;
    assert_eq!(
        result.error().unwrap().details.as_ref().unwrap()["timeoutMs"],
        json!(1000)
    );
    contained(&host, "slow_host_calls", json!({}), ErrorCode::Timeout).await;
}

/// A fuel budget stops a loop by instructions, not by the clock; a plugin beside
/// it without a budget runs unmetered (the engine meters every plugin once any
/// has a budget, and an empty tank would stop the other at its first call).
#[tokio::test(flavor = "multi_thread")]
async fn fuel_stops_a_loop_and_a_plugin_without_a_budget_runs_unmetered() {
    let host = TestHost::new(&format!(
        "[[plugin]]\npath = \"{hostile}\"\n[plugin.policy]\nfuel = 50000000\ntimeout_ms = 60000\n\
         [[plugin]]\npath = \"{calc}\"\n",
        hostile = guest("hostile").display(),
        calc = guest("calc").display(),
    ))
    .await;
    let result = host.call("spin", json!({})).await;
    assert_eq!(code(&result), ErrorCode::Timeout, "{result:?}");
    assert!(text(&result).contains("fuel"), "{result:?}");
    let sum = host.call("add", json!({"a": 2, "b": 3})).await;
    assert_eq!(sum.data(), Some(&json!({"sum": 5})), "{sum:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn memory_stack_and_output_bombs_hit_their_limits() {
    let fixture = Fixture::new();
    let host = fixture.host().await;
    contained(&host, "memory_bomb", json!({}), ErrorCode::ResourceLimit).await;
    // Recursion that overflows the wasm stack is a stack overflow; Rust's shadow
    // stack lives in linear memory, and overflowing it is an out-of-bounds access
    // the host cannot tell from any other: a crash.
    contained(
        &host,
        "deep_recursion_native",
        json!({}),
        ErrorCode::ResourceLimit,
    )
    .await;
    let shadow = contained(&host, "deep_recursion", json!({}), ErrorCode::ToolError).await;
    assert!(
        text(&shadow).contains("out of bounds memory access"),
        "{shadow:?}"
    );
    contained(&host, "huge_output", json!({}), ErrorCode::ResourceLimit).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_panic_is_a_tool_error_with_the_message() {
    let fixture = Fixture::new();
    let host = fixture.host().await;
    let result = contained(&host, "panic", json!({}), ErrorCode::ToolError).await;
    assert!(text(&result).contains("hostile panic"), "{result:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn nothing_outside_the_granted_directory_is_read() {
    let fixture = Fixture::new();
    let host = fixture.host().await;
    let passwd = contained(&host, "read_passwd", json!({}), ErrorCode::ToolError).await;
    assert!(!text(&passwd).contains("root:"), "{passwd:?}");
    let secret = fixture.dir.path().join("secret.txt");
    for (tool, arguments) in [
        ("escape_dotdot", json!({})),
        ("escape_symlink", json!({})),
        (
            "escape_absolute",
            json!({"path": secret.display().to_string()}),
        ),
    ] {
        let result = contained(&host, tool, arguments, ErrorCode::ToolError).await;
        assert!(
            !text(&result).contains(SECRET),
            "{tool} leaked the secret: {result:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_read_only_grant_is_not_written() {
    let fixture = Fixture::new();
    let host = fixture.host().await;
    contained(&host, "write_readonly", json!({}), ErrorCode::ToolError).await;
    assert!(
        !fixture.granted().join("written.txt").exists(),
        "the guest wrote into a read-only grant"
    );
    assert_eq!(
        std::fs::read_to_string(fixture.granted().join("inside.txt")).unwrap(),
        "inside"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn the_network_is_closed_unless_granted() {
    let fixture = Fixture::new();
    let host = fixture.host().await;
    let arguments = json!({"host": "127.0.0.1", "port": fixture.port()});
    let denied = contained(
        &host,
        "connect_tcp",
        arguments.clone(),
        ErrorCode::PermissionDenied,
    )
    .await;
    // Without a network rule no socket is created at all, so the denial names
    // the protocol, not an address.
    assert!(
        text(&denied).contains("TCP sockets are not granted"),
        "{denied:?}"
    );
    assert_eq!(
        fixture.connection(),
        None,
        "the denied guest reached the listener"
    );

    // The same component with the address granted gets through.
    let granted = host.call("open_connect_tcp", arguments).await;
    assert_eq!(
        granted.data(),
        Some(&json!({"connected": true})),
        "{granted:?}"
    );
    assert_eq!(fixture.connection().as_deref(), Some("hello"));
}

#[tokio::test(flavor = "multi_thread")]
async fn environment_variables_reach_a_guest_only_by_grant() {
    let fixture = Fixture::new();
    let host = fixture.host().await;
    let path = std::env::var("PATH").unwrap();
    let denied = contained(
        &host,
        "read_env",
        json!({"name": "PATH"}),
        ErrorCode::ToolError,
    )
    .await;
    assert!(!text(&denied).contains(&path), "{denied:?}");
    let granted = host.call("open_read_env", json!({"name": "PATH"})).await;
    assert_eq!(granted.data(), Some(&json!({"value": path})));
}

#[tokio::test(flavor = "multi_thread")]
async fn malformed_results_are_tool_errors() {
    let fixture = Fixture::new();
    let host = fixture.host().await;
    let bad_json = host.call("bad_json", json!({})).await;
    assert_eq!(code(&bad_json), ErrorCode::ToolError);
    assert!(
        bad_json.error().unwrap().message.contains("data"),
        "{bad_json:?}"
    );
    let bad_namespace = host.call("bad_namespace", json!({})).await;
    assert_eq!(code(&bad_namespace), ErrorCode::ToolError);
    assert!(
        bad_namespace.error().unwrap().message.contains("reserved"),
        "{bad_namespace:?}"
    );
    still_serves(&host).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn calls_never_share_state() {
    let fixture = Fixture::new();
    let host = fixture.host().await;
    for _ in 0..3 {
        still_serves(&host).await;
    }
    // Concurrent calls each get their own instance too.
    let calls = (0..8).map(|_| host.call("stateful", json!({})));
    for result in futures::future::join_all(calls).await {
        assert_eq!(result.data(), Some(&json!({"count": 1})));
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_compile_cache_serves_the_second_start() {
    let cache = tempfile::tempdir().unwrap();
    let config = toolhost::config::sidecar_plugin(&guest("calc")).unwrap();
    let load = |dir: &Path| {
        let runtime =
            toolhost::runtime::Runtime::new(Default::default(), dir.to_path_buf()).unwrap();
        let config = config.clone();
        async move {
            let started = std::time::Instant::now();
            let bytes = std::fs::read(&config.path).unwrap();
            let plugin = runtime.load_bytes(&config, bytes).await.unwrap();
            (plugin.from_cache(), started.elapsed())
        }
    };
    let (first_cached, first) = load(cache.path()).await;
    let (second_cached, second) = load(cache.path()).await;
    assert!(
        !first_cached && second_cached,
        "the second load reads the cache"
    );
    eprintln!("calc.wasm: first load {first:?} (compiled), second {second:?} (from the cache)");
}

/// Plugins keep the epoch ticker alive: a catalog outliving the runtime that
/// loaded it still stops a loop (the bug of a deadline nothing advances).
#[tokio::test(flavor = "multi_thread")]
async fn the_deadline_fires_even_after_the_runtime_is_dropped() {
    let fixture = Fixture::new();
    let TestHost { catalog, runtime } = fixture.host().await;
    drop(runtime);
    let caller = toolhost::catalog::Caller::local();
    let call = catalog.call_named("spin", None, &caller, "r", None);
    let result = tokio::time::timeout(std::time::Duration::from_secs(30), call)
        .await
        .expect("the deadline fired")
        .unwrap();
    assert_eq!(code(&result), ErrorCode::Timeout);
}

/// A guest blocked in a host call runs no code for the epoch check to stop: the
/// runtime's own timer cuts it at the deadline. `slow_compute` sleeps in
/// `wasi:io/poll` for 30 s against a deadline of 300 ms.
#[tokio::test(flavor = "multi_thread")]
async fn a_guest_waiting_in_a_host_call_is_stopped_at_the_deadline() {
    let host = TestHost::new(&format!(
        "[[plugin]]\npath = \"{}\"\n[plugin.policy]\ntimeout_ms = 300\n",
        guest("conformance").display()
    ))
    .await;
    let started = std::time::Instant::now();
    let result = host.call("slow_compute", json!({"seconds": 30})).await;
    assert_eq!(code(&result), ErrorCode::Timeout, "{result:?}");
    assert!(
        started.elapsed() < std::time::Duration::from_secs(10),
        "stopped after {:?}, not near its 300 ms deadline",
        started.elapsed()
    );
    let greeted = host.call("greet", json!({"name": "again"})).await;
    assert!(
        !greeted.is_failure(),
        "the next call is served: {greeted:?}"
    );
}

/// `max_instances` bounds a plugin's calls in flight. A call that finds every
/// slot taken waits for one, up to the plugin's timeout; past it, it is refused
/// with `resource_limit`, naming the bound. With one slot and a 2 s timeout: the
/// first call spins until its deadline (2 s); the second, sent at 0.8 s, waits
/// for the slot (the semaphore is fair) and then spins until its own (4 s); the
/// third, sent at 1 s, gives up at 3 s, while the second holds the slot.
#[tokio::test(flavor = "multi_thread")]
async fn a_call_waits_for_a_free_instance_until_the_timeout() {
    let host = TestHost::new(&format!(
        "[[plugin]]\npath = \"{}\"\n[plugin.policy]\ntimeout_ms = 2000\nmax_instances = 1\n",
        guest("hostile").display()
    ))
    .await;
    let after = |ms: u64| {
        let call = host.call("spin", json!({}));
        async move {
            tokio::time::sleep(std::time::Duration::from_millis(ms)).await;
            call.await
        }
    };
    let (first, second, third) = tokio::join!(after(0), after(800), after(1000));
    assert_eq!(code(&first), ErrorCode::Timeout, "{first:?}");
    assert_eq!(
        code(&second),
        ErrorCode::Timeout,
        "waited, then ran: {second:?}"
    );
    assert_eq!(code(&third), ErrorCode::ResourceLimit, "{third:?}");
    let details = third.error().unwrap().details.as_ref().unwrap();
    assert_eq!(details["maxInstances"], json!(1), "{third:?}");
    assert!(text(&third).contains("All 1 instances"), "{third:?}");
    still_serves(&host).await;
}
