//! Both real result stores, SQLite and PostgreSQL (a server the tests start):
//! what the mapper offloads at the size boundary reads back identical through
//! every renderer, only through a valid, unexpired link of the same principal;
//! expired rows are purged; rows an older format version wrote are read by that
//! version's parser; a second store on the same database and key (a restart, or
//! a replica) reads the first one's links. PostgreSQL is reached over TLS only
//! (`sslmode=verify-full` with a CA the test makes); a wrong CA, a certificate
//! for another name and a connection without TLS are refused.

use crate::common;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use jiff::{SignedDuration, Timestamp};
use serde_json::json;
use toolhost::render::format::{FormatVersion, decode_stored, encode};
use toolhost::render::{Mapper, RenderContext, SizeLimits, Target, json_size};
use toolhost::result::ToolResult;
use toolhost::store::{Offload, PostgresStore, ResultStore, Signer, SqliteStore, TaskRow};

/// The stores' clock, moved by the tests (only forward, and only past the expiry
/// of rows a test wrote for that purpose).
static NOW: AtomicI64 = AtomicI64::new(1_900_000_000);

fn now() -> Timestamp {
    Timestamp::from_second(NOW.load(Ordering::SeqCst)).unwrap()
}

#[derive(Debug, Clone, Copy)]
enum Backend {
    Sqlite,
    Postgres,
}

const BACKENDS: [Backend; 2] = [Backend::Sqlite, Backend::Postgres];

/// Where one store's rows and key live; opening it twice gives two stores on the
/// same data, as a restarted host or a second replica sees it.
struct Place {
    dir: tempfile::TempDir,
    url: Option<String>,
    ca_file: Option<std::path::PathBuf>,
}

enum Store {
    Sqlite(Arc<SqliteStore>),
    Postgres(Arc<PostgresStore>),
}

impl Place {
    async fn new(backend: Backend) -> Place {
        let (url, ca_file) = match backend {
            Backend::Sqlite => (None, None),
            Backend::Postgres => (
                Some(common::postgres::database().await),
                Some(common::postgres::ca_file().await),
            ),
        };
        Place {
            dir: tempfile::tempdir().unwrap(),
            url,
            ca_file,
        }
    }

    async fn open(&self) -> Store {
        let signer = Signer::load_or_create(&self.dir.path().join("signing.key")).unwrap();
        let ttl = SignedDuration::from_hours(1);
        match &self.url {
            None => Store::Sqlite(Arc::new(
                SqliteStore::open(&self.dir.path().join("results.sqlite3"), signer, ttl, now)
                    .unwrap(),
            )),
            Some(url) => Store::Postgres(Arc::new(
                PostgresStore::connect(url, 4, self.ca_file.as_deref(), signer, ttl, now)
                    .await
                    .unwrap(),
            )),
        }
    }

    fn signer(&self) -> Signer {
        Signer::load_or_create(&self.dir.path().join("signing.key")).unwrap()
    }
}

impl Store {
    fn shared(&self) -> Arc<dyn ResultStore> {
        match self {
            Store::Sqlite(store) => store.clone(),
            Store::Postgres(store) => store.clone(),
        }
    }

    /// The result behind `uri`, decoded as `resources/read` decodes it.
    async fn get(&self, uri: &str, principal: Option<&str>) -> Option<ToolResult> {
        let row = self.shared().get(uri, principal).await.unwrap()?;
        Some(decode_stored(row.format, &row.body).unwrap())
    }

    async fn insert_raw(
        &self,
        id: &str,
        version: FormatVersion,
        body: &str,
        principal: Option<&str>,
        expires: i64,
    ) -> String {
        match self {
            Store::Sqlite(store) => {
                store.insert_raw(id, version.number(), body, principal, expires)
            }
            Store::Postgres(store) => {
                store
                    .insert_raw(id, version.number(), body, principal, expires)
                    .await
            }
        }
        .unwrap()
    }
}

/// The first stored-result link in a rendering.
fn link_in(rendered: &serde_json::Value) -> String {
    let text = rendered.to_string();
    let start = text
        .find("toolhost://results/")
        .unwrap_or_else(|| panic!("no link in {text}"));
    text[start..]
        .chars()
        .take_while(|c| !matches!(c, '"' | ' ' | '\\' | ']' | ')'))
        .collect()
}

fn rows(n: usize) -> ToolResult {
    ToolResult::success(Some(
        json!({"rows": (0..n).collect::<Vec<_>>(), "note": "ünïcödé ✓"}),
    ))
    .summary(format!("{n} rows"))
    .build()
}

fn ctx(principal: Option<&'static str>) -> RenderContext<'static> {
    let mut ctx = RenderContext::new("rows", now());
    ctx.principal = principal;
    ctx
}

/// For every renderer: a rendering one byte under the limit and one exactly at it
/// go inline; one byte over goes to the store, and the link reads back the same
/// result, its data byte for byte.
#[tokio::test]
async fn offload_at_the_limit_boundary_reads_back_identical_on_both_stores() {
    let result = rows(300);
    let data = serde_json::to_string(result.data().unwrap()).unwrap();
    for backend in BACKENDS {
        let place = Place::new(backend).await;
        let store = place.open().await;
        for target in Target::all() {
            let ctx = ctx(Some("alice"));
            let size = Mapper::default()
                .render_inline(&result, target, &ctx)
                .size();
            // (limit, rendering size - limit, offloaded)
            for (limit, offloaded) in [(size + 1, false), (size, false), (size - 1, true)] {
                let mapper = Mapper::new(SizeLimits::uniform(limit), Some(store.shared()));
                let rendered = mapper.render(&result, target, &ctx).await;
                let what = format!("{backend:?} {target}, {size} bytes against limit {limit}");
                assert_eq!(rendered.offloaded, offloaded, "{what}");
                assert!(rendered.size() <= limit, "{what}: sent {}", rendered.size());
                if offloaded {
                    let back = store
                        .get(&link_in(&rendered.rendering.to_value()), Some("alice"))
                        .await
                        .unwrap_or_else(|| panic!("{what}: the link does not read"));
                    assert_eq!(back, result, "{what}");
                    assert_eq!(serde_json::to_string(back.data().unwrap()).unwrap(), data);
                    assert!(
                        !rendered.rendering.to_value().to_string().contains("299,"),
                        "{what}: the data travelled inline too"
                    );
                }
            }
        }
    }
}

#[tokio::test]
async fn only_a_valid_unexpired_link_of_the_same_principal_reads() {
    for backend in BACKENDS {
        let place = Place::new(backend).await;
        let store = place.open().await;
        let mapper = Mapper::new(SizeLimits::uniform(1_000), Some(store.shared()));
        let rendered = mapper
            .render(&rows(2_000), Target::Legacy, &ctx(Some("alice")))
            .await;
        let uri = rendered.rendering.to_value()["_meta"]["resourceUri"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(
            store.get(&uri, Some("alice")).await.is_some(),
            "{backend:?}"
        );
        for (presented, principal, case) in [
            (uri.clone(), Some("bob"), "foreign principal"),
            (uri.clone(), None, "no principal"),
            (
                uri.replacen("results/", "results/0", 1),
                Some("alice"),
                "tampered id",
            ),
            (
                uri.replacen("exp=", "exp=9", 1),
                Some("alice"),
                "tampered expiry",
            ),
            (
                place
                    .signer()
                    .link("00ff00ff", Some("alice"), now().as_second() + 60),
                Some("alice"),
                "validly signed, unknown id",
            ),
            (
                Signer::new(b"not the key of this host, 32 b..".to_vec()).link(
                    uri[19..51].as_ref(),
                    Some("alice"),
                    now().as_second() + 60,
                ),
                Some("alice"),
                "signed with another key",
            ),
        ] {
            assert!(
                store.get(&presented, principal).await.is_none(),
                "{backend:?}: {case} must not read"
            );
        }
        // A second store on the same data and key (a restart, or a replica) reads it.
        let again = place.open().await;
        assert_eq!(
            again.get(&uri, Some("alice")).await,
            Some(rows(2_000)),
            "{backend:?}"
        );
    }
}

#[tokio::test]
async fn expired_links_are_refused_and_purge_removes_expired_rows_only() {
    for backend in BACKENDS {
        let place = Place::new(backend).await;
        let store = place.open().await;
        let (_, body) = encode(&rows(50));
        let start = NOW.load(Ordering::SeqCst);
        let soon = store
            .insert_raw("aa11", FormatVersion::V1, &body, None, start + 10)
            .await;
        let later = store
            .insert_raw("bb22", FormatVersion::V1, &body, None, start + 100_000)
            .await;
        assert!(store.get(&soon, None).await.is_some(), "{backend:?}");
        // Past the first expiry (only this test's rows expire that soon).
        NOW.fetch_add(20, Ordering::SeqCst);
        assert!(
            store.get(&soon, None).await.is_none(),
            "{backend:?}: expired"
        );
        assert_eq!(store.shared().purge().await.unwrap(), 1, "{backend:?}");
        assert_eq!(store.shared().purge().await.unwrap(), 0, "{backend:?}");
        assert!(
            store.get(&later, None).await.is_some(),
            "{backend:?}: unexpired rows stay"
        );
    }
}

#[tokio::test]
async fn a_row_written_in_an_older_format_is_read_by_its_parser() {
    for backend in BACKENDS {
        let place = Place::new(backend).await;
        let store = place.open().await;
        let expires = NOW.load(Ordering::SeqCst) + 3_600;
        let link = store
            .insert_raw(
                "cc33",
                FormatVersion::Legacy,
                r#"{"success": true, "data": {"orderId": "1001"}, "dryRun": true}"#,
                Some("alice"),
                expires,
            )
            .await;
        let result = store.get(&link, Some("alice")).await.unwrap();
        assert_eq!(
            result.data(),
            Some(&json!({"orderId": "1001"})),
            "{backend:?}"
        );
        assert_eq!(result.metadata().dry_run, Some(true), "{backend:?}");
    }
}

/// Replicas starting at once set the schema up without tripping over each other.
#[tokio::test]
async fn replicas_connecting_at_once_share_one_table() {
    let url = common::postgres::database().await;
    let ca = common::postgres::ca_file().await;
    let dir = tempfile::tempdir().unwrap();
    let signer = Signer::load_or_create(&dir.path().join("signing.key")).unwrap();
    let stores = futures::future::join_all((0..6).map(|_| {
        PostgresStore::connect(
            &url,
            2,
            Some(&ca),
            signer.clone(),
            SignedDuration::from_hours(1),
            now,
        )
    }))
    .await;
    let stores: Vec<_> = stores.into_iter().map(Result::unwrap).collect();
    let result = rows(10);
    let (version, body) = encode(&result);
    let link = stores[0]
        .put(Offload {
            format: version.number(),
            body: &body,
            data_size: result.data().map(|data| json_size(data) as u64),
            principal: None,
        })
        .await
        .unwrap();
    for store in &stores {
        let row = store.get(&link.uri, None).await.unwrap().expect("it reads");
        assert_eq!(decode_stored(row.format, &row.body).unwrap(), result);
    }
}

#[tokio::test]
async fn an_unreachable_database_is_a_clear_error() {
    let signer = Signer::new(vec![7; 32]);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let error = PostgresStore::connect(
        &format!("postgres://nobody@127.0.0.1:{port}/none"),
        1,
        None,
        signer,
        SignedDuration::from_hours(1),
        now,
    )
    .await
    .err()
    .expect("nothing listens there");
    assert!(
        error.to_string().contains("connecting to PostgreSQL"),
        "{error}"
    );
}

/// Connects a store to `url` trusting `ca` (`None`: the system's CAs).
async fn connect(url: &str, ca: Option<&std::path::Path>) -> Result<PostgresStore, String> {
    PostgresStore::connect(
        url,
        1,
        ca,
        Signer::new(vec![7; 32]),
        SignedDuration::from_hours(1),
        now,
    )
    .await
    .map_err(|e| e.to_string())
}

#[tokio::test]
async fn the_store_speaks_tls_to_postgres_and_checks_the_certificate() {
    let url = common::postgres::database().await;
    let ca = common::postgres::ca_file().await;
    assert!(url.ends_with("sslmode=verify-full"), "{url}");
    let store = connect(&url, Some(&ca)).await.unwrap();
    assert!(
        store.connection_uses_tls().await.unwrap(),
        "pg_stat_ssl says the store's connection is not TLS"
    );
    // verify-ca: the chain is checked, the name is not.
    connect(&other_name(&url, "localhost"), Some(&ca))
        .await
        .unwrap();
    // require without a CA file: encrypted, the certificate unchecked (libpq's
    // rule); no sslmode is libpq's default, prefer, which takes TLS when offered.
    for unchecked in [
        url.replace("sslmode=verify-full", "sslmode=require"),
        url.replace("?sslmode=verify-full", ""),
    ] {
        let store = connect(&unchecked, None).await.unwrap();
        assert!(store.connection_uses_tls().await.unwrap(), "{unchecked}");
    }
    let verify_ca =
        other_name(&url, "db.example").replace("sslmode=verify-full", "sslmode=verify-ca");
    assert!(
        connect(&verify_ca, Some(&ca))
            .await
            .unwrap()
            .connection_uses_tls()
            .await
            .unwrap()
    );
}

#[tokio::test]
async fn a_wrong_ca_or_a_wrong_name_is_refused() {
    let url = common::postgres::database().await;
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other-ca.pem");
    std::fs::write(&other, common::postgres::new_ca("another CA").pem()).unwrap();
    for mode in ["verify-full", "verify-ca", "require"] {
        let error = connect(
            &url.replace("sslmode=verify-full", &format!("sslmode={mode}")),
            Some(&other),
        )
        .await
        .err()
        .unwrap_or_else(|| panic!("{mode}: a server signed by another CA was trusted"));
        assert!(
            error.contains("connecting to PostgreSQL") && error.contains("UnknownIssuer"),
            "{mode}: {error}"
        );
    }
    // The right CA, but the certificate does not name the host asked for
    // (`hostaddr` reaches the same server under another name).
    let ca = common::postgres::ca_file().await;
    let error = connect(&other_name(&url, "db.example"), Some(&ca))
        .await
        .err()
        .expect("a certificate for another name was accepted under verify-full");
    assert!(
        error.contains("invalid peer certificate")
            && error.contains("not valid for name \"db.example\""),
        "{error}"
    );
}

/// `url` with its host `127.0.0.1` named `name` instead, reached at 127.0.0.1.
fn other_name(url: &str, name: &str) -> String {
    format!("{}&hostaddr=127.0.0.1", url.replacen("127.0.0.1", name, 1))
}

#[tokio::test]
async fn without_tls_a_server_that_requires_it_refuses_the_store() {
    let url = common::postgres::database().await;
    let plain = url.replace("sslmode=verify-full", "sslmode=disable");
    let error = connect(&plain, None)
        .await
        .err()
        .expect("the server accepted a connection without TLS");
    assert!(
        error.contains("no pg_hba.conf entry") && error.contains("no encryption"),
        "{error}"
    );
    let unknown = connect(&url.replace("verify-full", "verify-everything"), None)
        .await
        .err()
        .unwrap();
    assert!(
        unknown.contains("sslmode \"verify-everything\" is unknown"),
        "{unknown}"
    );
}

/// A task row, as the MCP layer writes one.
fn task_row(id: &str, principal: Option<&str>, expires_at: i64) -> TaskRow {
    TaskRow {
        id: id.into(),
        principal: principal.map(str::to_owned),
        status: "working".into(),
        body: None,
        call: r#"{"tool":"slow"}"#.into(),
        created_ms: 1_000,
        updated_ms: 1_000,
        expires_at,
        version: 0,
    }
}

/// What every store does with tasks: a row reads back only for its principal
/// and until it expires, from a second store on the same data too (another
/// replica); a change applies only over the version it was read at, so of two
/// writers the second one loses and reads again; purge takes expired tasks.
#[tokio::test]
async fn task_rows_change_only_over_the_version_they_were_read_at() {
    let memory: Arc<dyn ResultStore> = Arc::new(toolhost::store::MemoryStore::new(
        SignedDuration::from_hours(1),
        now,
    ));
    // Each store with a second one on the same data (for memory, itself).
    type Pair = (String, Arc<dyn ResultStore>, Arc<dyn ResultStore>);
    let mut stores: Vec<Pair> = vec![("memory".into(), memory.clone(), memory)];
    let mut places = Vec::new();
    for backend in BACKENDS {
        let place = Place::new(backend).await;
        let (one, other) = (place.open().await.shared(), place.open().await.shared());
        stores.push((format!("{backend:?}"), one, other));
        places.push(place);
    }
    for (name, store, replica) in stores {
        let start = NOW.load(Ordering::SeqCst);
        let row = task_row("t1", Some("alice"), start + 3_600);
        store.put_task(&row).await.unwrap();
        assert!(
            store.put_task(&row).await.is_err(),
            "{name}: one row per id"
        );
        assert_eq!(
            replica.task("t1", Some("alice")).await.unwrap(),
            Some(row.clone()),
            "{name}"
        );
        for stranger in [Some("bob"), None] {
            assert_eq!(
                replica.task("t1", stranger).await.unwrap(),
                None,
                "{name}: {stranger:?}"
            );
        }

        let done = TaskRow {
            status: "completed".into(),
            body: Some(r#"{"content":[]}"#.into()),
            updated_ms: 2_000,
            ..row.clone()
        };
        let cancelled = TaskRow {
            status: "cancelled".into(),
            updated_ms: 2_001,
            ..row.clone()
        };
        assert!(
            replica.update_task(&cancelled).await.unwrap(),
            "{name}: the first writer"
        );
        assert!(
            !store.update_task(&done).await.unwrap(),
            "{name}: a stale writer loses"
        );
        let now = store.task("t1", Some("alice")).await.unwrap().unwrap();
        assert_eq!(
            (now.status.as_str(), now.version),
            ("cancelled", 1),
            "{name}"
        );
        assert_eq!(now.updated_ms, 2_001, "{name}");

        store
            .put_task(&task_row("t2", None, start + 5))
            .await
            .unwrap();
        assert!(store.task("t2", None).await.unwrap().is_some(), "{name}");
        NOW.fetch_add(10, Ordering::SeqCst);
        assert_eq!(
            store.task("t2", None).await.unwrap(),
            None,
            "{name}: expired"
        );
        assert_eq!(
            store.purge().await.unwrap(),
            1,
            "{name}: the expired task goes"
        );
        assert!(
            store.task("t1", Some("alice")).await.unwrap().is_some(),
            "{name}"
        );
    }
}

/// What every store lists of tasks: a principal's own that have not expired,
/// in the order of their ids, a page at a time after a given id, without what
/// they hold; the open caller's (`None`) are a principal of their own.
#[tokio::test]
async fn tasks_are_listed_per_principal_in_pages() {
    let memory: Arc<dyn ResultStore> = Arc::new(toolhost::store::MemoryStore::new(
        SignedDuration::from_hours(1),
        now,
    ));
    let mut stores: Vec<(String, Arc<dyn ResultStore>)> = vec![("memory".into(), memory)];
    let mut places = Vec::new();
    for backend in BACKENDS {
        let place = Place::new(backend).await;
        stores.push((format!("{backend:?}"), place.open().await.shared()));
        places.push(place);
    }
    for (name, store) in stores {
        let start = NOW.load(Ordering::SeqCst);
        for (id, principal, expires) in [
            ("a3", Some("alice"), start + 3_600),
            ("a1", Some("alice"), start + 3_600),
            ("a2", Some("alice"), start + 3_600),
            ("a0", Some("alice"), start - 1),
            ("b1", Some("bob"), start + 3_600),
            ("o1", None, start + 3_600),
        ] {
            store
                .put_task(&task_row(id, principal, expires))
                .await
                .unwrap();
        }
        let ids = |page: Vec<toolhost::store::TaskSummary>| {
            page.into_iter().map(|task| task.id).collect::<Vec<_>>()
        };
        let first = store.tasks_of(Some("alice"), None, 2).await.unwrap();
        assert_eq!(first[0].status, "working", "{name}");
        assert_eq!(first[0].created_ms, 1_000, "{name}");
        assert_eq!(
            ids(first),
            ["a1", "a2"],
            "{name}: ordered, the expired one left out"
        );
        let rest = store.tasks_of(Some("alice"), Some("a2"), 2).await.unwrap();
        assert_eq!(ids(rest), ["a3"], "{name}: after the cursor");
        let bob = store.tasks_of(Some("bob"), None, 10).await.unwrap();
        assert_eq!(ids(bob), ["b1"], "{name}");
        let open = store.tasks_of(None, None, 10).await.unwrap();
        assert_eq!(ids(open), ["o1"], "{name}");
        assert!(
            store
                .tasks_of(Some("carol"), None, 10)
                .await
                .unwrap()
                .is_empty(),
            "{name}"
        );
    }
}
