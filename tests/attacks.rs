//! The hostile guest's attacks against a real release host (`toolhost serve --http`
//! as a process): each is refused or contained with its exact code, the host's
//! resident memory and open descriptors stay within bounds while it runs (read
//! from `/proc`), an ordinary call beside it is answered within a second, and
//! canary files outside every grant are neither read nor changed.
//!
//! The in-process detail of each fault (messages, details, the next call) is in
//! `tests/sandbox.rs`; the attacks of issue #12 have files of their own
//! (`grants.rs`, `budgets.rs`, `network.rs`).

use crate::common;

use std::io::Read as _;
use std::net::TcpListener;
use std::path::Path;

use common::attack::{self, Bounds, Canary, Outcome};
use common::host::guest;
use common::process::Host;
use serde_json::{Value, json};

/// A host with `calc` (the ordinary calls) and `hostile` (memory 32 MiB, 1 s,
/// `granted/` read-only at /data) in `dir`, whose canary lies beside the grant.
struct Fixture {
    dir: tempfile::TempDir,
    canary: Canary,
    listener: TcpListener,
    host: Host,
}

impl Fixture {
    fn start() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let granted = dir.path().join("granted");
        std::fs::create_dir(&granted).unwrap();
        std::fs::write(granted.join("inside.txt"), "inside").unwrap();
        let canary = Canary::plant(dir.path(), "secret.txt");
        std::os::unix::fs::symlink(&canary.path, granted.join("link-to-secret")).unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let config = dir.path().join("toolhost.toml");
        std::fs::write(
            &config,
            format!(
                r#"[host]
data_dir = "{data}"

[[plugin]]
path = "{calc}"

[[plugin]]
path = "{hostile}"
[plugin.policy]
memory_mib = 32
timeout_ms = 1000
[[plugin.policy.preopens]]
host = "{granted}"
guest = "/data"
"#,
                data = dir.path().join("data").display(),
                calc = guest("calc").display(),
                hostile = guest("hostile").display(),
                granted = granted.display(),
            ),
        )
        .unwrap();
        let host = Host::start(&config);
        Fixture {
            dir,
            canary,
            listener,
            host,
        }
    }

    async fn attack(&self, tool: &str, arguments: Value, code: &str) -> Outcome {
        let outcome = attack::run(&self.host, tool, arguments, attack::ordinary_add()).await;
        assert_eq!(
            outcome.code.as_deref(),
            Some(code),
            "{tool}: {}",
            outcome.message
        );
        // The guest may hold its 32 MiB and the host its buffers; nothing more.
        outcome.within(Bounds {
            rss_mib: outcome.rss_before_kib / 1024 + 128,
            fds: outcome.fds_before + 32,
        });
        self.canary.assert_safe(&outcome.text());
        outcome
    }

    /// Whether anything connected to the listener.
    fn connected(&self) -> bool {
        match self.listener.accept() {
            Ok((mut stream, _)) => {
                let mut received = String::new();
                let _ = stream.read_to_string(&mut received);
                true
            }
            Err(_) => false,
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn loops_bombs_and_overflows_are_stopped_while_the_host_serves() {
    let fixture = Fixture::start();
    fixture.attack("spin", json!({}), "timeout").await;
    fixture
        .attack("slow_host_calls", json!({}), "timeout")
        .await;
    fixture
        .attack("memory_bomb", json!({}), "resource_limit")
        .await;
    fixture
        .attack("huge_output", json!({}), "resource_limit")
        .await;
    fixture
        .attack("deep_recursion_native", json!({}), "resource_limit")
        .await;
    fixture.attack("panic", json!({}), "tool_error").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn nothing_outside_the_grant_is_read_written_or_reached() {
    let fixture = Fixture::start();
    for (tool, arguments) in [
        ("read_passwd", json!({})),
        ("escape_dotdot", json!({})),
        ("escape_symlink", json!({})),
        (
            "escape_absolute",
            json!({"path": fixture.canary.path.display().to_string()}),
        ),
        ("write_readonly", json!({})),
    ] {
        let outcome = fixture.attack(tool, arguments, "tool_error").await;
        assert!(
            !outcome.text().contains("root:"),
            "{tool}: {}",
            outcome.text()
        );
    }
    assert!(
        !Path::new(&fixture.dir.path().join("granted/written.txt")).exists(),
        "the read-only grant was written"
    );
    let port = fixture.listener.local_addr().unwrap().port();
    fixture
        .attack(
            "connect_tcp",
            json!({"host": "127.0.0.1", "port": port}),
            "permission_denied",
        )
        .await;
    assert!(
        !fixture.connected(),
        "a guest without a network rule connected"
    );
    // The host has a HOME; the guest, granted no variable, must not see it.
    let home = std::env::var("HOME").unwrap();
    let outcome = fixture
        .attack("read_env", json!({"name": "HOME"}), "tool_error")
        .await;
    assert!(
        !outcome.text().contains(&format!("\"{home}\"")),
        "{}",
        outcome.text()
    );
}
