//! The result store across real host processes (`toolhost serve --http`):
//! a host killed with SIGKILL while it offloads loses no result whose link it
//! handed out, on SQLite and on PostgreSQL; and two replicas sharing one
//! PostgreSQL database and one signing key serve each other's links, while a
//! host with another key serves none of them.

mod common;

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::host::guest;
use common::mcp_client::modern;
use common::process::Host;
use serde_json::{Value, json};

enum Backend {
    Sqlite,
    Postgres(String),
}

/// A configuration serving `bulk` with a small inline limit, so each call offloads.
fn config(dir: &Path, name: &str, backend: &Backend, key: &Path) -> PathBuf {
    let store = match backend {
        Backend::Sqlite => "kind = \"sqlite\"".to_owned(),
        Backend::Postgres(url) => format!("kind = \"postgres\"\nurl = \"{url}\""),
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
    let url = common::postgres::database().await;
    killed_while_offloading_loses_no_answered_result(Backend::Postgres(url)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn two_replicas_on_one_postgres_serve_each_others_links() {
    let dir = tempfile::tempdir().unwrap();
    let backend = Backend::Postgres(common::postgres::database().await);
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
