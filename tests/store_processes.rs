//! The result store across real host processes (`toolhost serve --http`):
//! a host killed with SIGKILL while it offloads loses no result whose link it
//! handed out, on SQLite and on PostgreSQL; and two replicas sharing one
//! PostgreSQL database and one signing key serve each other's links, while a
//! host with another key serves none of them. PostgreSQL is reached over TLS
//! (`sslmode=verify-full` with the test CA as `store.ca_file`). The SQLite
//! files and the signing key are created 0600, and a host refuses to start on a
//! key others can read.

use crate::common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::host::guest;
use common::mcp_client::modern;
use common::process::Host;
use serde_json::{Value, json};

enum Backend {
    Sqlite,
    /// The URL and the CA file.
    Postgres(String, PathBuf),
}

impl Backend {
    async fn postgres() -> Backend {
        Backend::Postgres(
            common::postgres::database().await,
            common::postgres::ca_file().await,
        )
    }
}

/// A configuration serving `bulk` with a small inline limit, so each call offloads.
fn config(dir: &Path, name: &str, backend: &Backend, key: &Path) -> PathBuf {
    let store = match backend {
        Backend::Sqlite => "kind = \"sqlite\"".to_owned(),
        Backend::Postgres(url, ca) => format!(
            "kind = \"postgres\"\nurl = \"{url}\"\nca_file = \"{}\"",
            ca.display()
        ),
    };
    let text = format!(
        "[host]\ndata_dir = \"{data}\"\nsize_limit = 2048\n\n\
         [store]\n{store}\nsigning_key_file = \"{key}\"\n\n\
         [[token]]\ntoken = \"secret-a\"\nprincipal = \"alice\"\n\
         [[token]]\ntoken = \"secret-b\"\nprincipal = \"bob\"\n\n\
         [[plugin]]\npath = \"{bulk}\"\n",
        data = dir.join(name).display(),
        key = key.display(),
        bulk = guest("bulk").display(),
    );
    let path = dir.join(format!("{name}.toml"));
    std::fs::write(&path, text).unwrap();
    path
}

/// Calls `bulk` for `count` items as alice; the link of the offloaded result,
/// or `None` when the host did not answer completely.
async fn offload(url: &str, count: usize) -> Option<String> {
    let response = modern(
        "tools/call",
        Some("bulk"),
        json!({"name": "bulk", "arguments": {"count": count}}),
        Some("secret-a"),
        url,
    )
    .timeout(Duration::from_secs(30))
    .send()
    .await
    .ok()?;
    let text = response.text().await.ok()?;
    let message: Value = text
        .lines()
        .filter_map(|line| line.strip_prefix("data:"))
        .chain(std::iter::once(text.as_str()))
        .filter_map(|data| serde_json::from_str::<Value>(data.trim()).ok())
        .find(|m| m.get("id").is_some())?;
    let link = message["result"]["content"]
        .as_array()?
        .iter()
        .find(|block| block["type"] == "resource_link")
        .unwrap_or_else(|| panic!("a result over the limit is offloaded: {message}"));
    Some(link["uri"].as_str()?.to_owned())
}

/// Reads `uri` through `url` as the holder of `bearer`: the items, or the error.
async fn read(url: &str, uri: &str, bearer: &str) -> Result<Vec<Value>, Value> {
    let response = modern(
        "resources/read",
        Some(uri),
        json!({"uri": uri}),
        Some(bearer),
        url,
    )
    .send()
    .await
    .unwrap();
    let message = common::mcp_client::message(response).await;
    match message["result"]["contents"][0]["text"].as_str() {
        Some(text) => Ok(serde_json::from_str::<Value>(text).unwrap()["items"]
            .as_array()
            .unwrap()
            .clone()),
        None => Err(message),
    }
}

/// Offloads in a loop from four clients, kills the host with SIGKILL mid-stream,
/// restarts it on the same store, and reads every link it had answered with.
async fn killed_while_offloading_loses_no_answered_result(backend: Backend) {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("signing.key");
    let config = config(dir.path(), "host", &backend, &key);
    let host = Host::start(&config);
    let answered: Arc<Mutex<Vec<(String, usize)>>> = Arc::default();
    let clients: Vec<_> = (0..4)
        .map(|client| {
            let (url, answered) = (host.url.clone(), answered.clone());
            tokio::spawn(async move {
                for call in 0.. {
                    let count = 100 + client * 50 + call % 40;
                    match offload(&url, count).await {
                        Some(uri) => answered.lock().unwrap().push((uri, count)),
                        None => break,
                    }
                }
            })
        })
        .collect();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while answered.lock().unwrap().len() < 60 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the host answered too few calls"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Killed while the four clients still have calls in flight.
    host.kill();
    for client in clients {
        client.await.unwrap();
    }
    let answered = answered.lock().unwrap().clone();
    let host = Host::start(&config);
    for (uri, count) in &answered {
        let items = read(&host.url, uri, "secret-a")
            .await
            .unwrap_or_else(|e| panic!("{uri} was answered before the kill but is gone: {e}"));
        assert_eq!(items.len(), *count, "{uri}");
        assert_eq!(items[count - 1]["id"], json!(count), "{uri}: the last item");
    }
    eprintln!("{} answered links read back after SIGKILL", answered.len());
}

#[tokio::test(flavor = "multi_thread")]
async fn sqlite_killed_while_offloading_loses_no_answered_result() {
    killed_while_offloading_loses_no_answered_result(Backend::Sqlite).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn postgres_killed_while_offloading_loses_no_answered_result() {
    killed_while_offloading_loses_no_answered_result(Backend::postgres().await).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn two_replicas_on_one_postgres_serve_each_others_links() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Backend::postgres().await;
    let key = dir.path().join("shared-signing.key");
    let a = Host::start(&config(dir.path(), "replica-a", &backend, &key));
    let b = Host::start(&config(dir.path(), "replica-b", &backend, &key));
    let stranger = Host::start(&config(
        dir.path(),
        "other-key",
        &backend,
        &dir.path().join("other.key"),
    ));

    let from_a = offload(&a.url, 321).await.expect("replica A answers");
    let from_b = offload(&b.url, 123).await.expect("replica B answers");
    assert_eq!(read(&b.url, &from_a, "secret-a").await.unwrap().len(), 321);
    assert_eq!(read(&a.url, &from_b, "secret-a").await.unwrap().len(), 123);
    assert_eq!(read(&a.url, &from_a, "secret-a").await.unwrap().len(), 321);

    let foreign = read(&b.url, &from_a, "secret-b").await.unwrap_err();
    assert_eq!(
        foreign["error"]["code"], -32602,
        "another principal: {foreign}"
    );
    let other_key = read(&stranger.url, &from_a, "secret-a").await.unwrap_err();
    assert_eq!(
        other_key["error"]["code"], -32602,
        "another key: {other_key}"
    );
}

fn mode(path: &Path) -> u32 {
    use std::os::unix::fs::PermissionsExt as _;
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

#[tokio::test(flavor = "multi_thread")]
async fn the_database_and_the_key_are_created_0600_whatever_the_umask() {
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("signing.key");
    let config = config(dir.path(), "host", &Backend::Sqlite, &key);
    // SAFETY: umask(2) only sets the process's file mode mask, which the host
    // inherits. Tests running beside this one create files with wider modes
    // meanwhile; none of them checks modes.
    let previous = unsafe { libc::umask(0o000) };
    let host = Host::start(&config);
    // SAFETY: as above; the mask as it was.
    unsafe { libc::umask(previous) };
    offload(&host.url, 200).await.expect("the host offloads");
    let database = dir.path().join("host/results.sqlite3");
    for path in [
        key.clone(),
        database.clone(),
        dir.path().join("host/results.sqlite3-wal"),
        dir.path().join("host/results.sqlite3-shm"),
    ] {
        assert_eq!(mode(&path), 0o600, "{}", path.display());
    }
}

/// Starts `toolhost serve` on `config` and returns its exit code and stderr,
/// expecting it to refuse to start.
fn refused_start(config: &Path) -> (Option<i32>, String) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(["serve", "--http", "127.0.0.1:0", "--config"])
        .arg(config)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    (
        output.status.code(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_key_or_database_others_can_read_is_refused_at_start_with_the_fix() {
    use std::os::unix::fs::PermissionsExt as _;
    let dir = tempfile::tempdir().unwrap();
    let key = dir.path().join("signing.key");
    let config = config(dir.path(), "host", &Backend::Sqlite, &key);
    // A first start creates both files; then the operator widens one at a time.
    drop(Host::start(&config));
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let (code, stderr) = tokio::task::spawn_blocking({
        let config = config.clone();
        move || refused_start(&config)
    })
    .await
    .unwrap();
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!("the signing key {} has mode 0644", key.display()))
            && stderr.contains(&format!("chmod 600 {}", key.display())),
        "{stderr}"
    );
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let database = dir.path().join("host/results.sqlite3");
    std::fs::set_permissions(&database, std::fs::Permissions::from_mode(0o640)).unwrap();
    let (code, stderr) = tokio::task::spawn_blocking(move || refused_start(&config))
        .await
        .unwrap();
    assert_eq!(code, Some(2), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "the result database {} has mode 0640",
            database.display()
        )) && stderr.contains(&format!("chmod 600 {}", database.display())),
        "{stderr}"
    );
}
