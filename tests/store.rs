//! The SQLite result store: what the mapper offloads reads back identical, only
//! through a valid, unexpired link of the same principal; expired rows are purged;
//! rows an older format version wrote are read by that version's parser.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};

use jiff::{SignedDuration, Timestamp};
use serde_json::json;
use toolhost::legacy::FormatVersion;
use toolhost::render::{Mapper, RenderContext, SizeLimits, Target};
use toolhost::result::ToolResult;
use toolhost::store::{ResultStore, Signer, SqliteStore};

/// The store's clock, moved by the tests (each test uses its own store file, and
/// only moves the clock forward past the expiry it tests).
static NOW: AtomicI64 = AtomicI64::new(1_900_000_000);

fn now() -> Timestamp {
    Timestamp::from_second(NOW.load(Ordering::SeqCst)).unwrap()
}

fn open(dir: &std::path::Path) -> SqliteStore {
    let signer = Signer::load_or_create(&dir.join("signing.key")).unwrap();
    SqliteStore::open(
        &dir.join("results.sqlite3"),
        signer,
        SignedDuration::from_hours(1),
        now,
    )
    .unwrap()
}

fn big() -> ToolResult {
    ToolResult::success(Some(
        json!({"rows": (0..20_000).collect::<Vec<_>>(), "note": "ünïcödé"}),
    ))
    .summary("20000 rows")
    .build()
}

#[tokio::test]
async fn an_offloaded_result_reads_back_identical_through_every_renderer() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(open(dir.path()));
    let mapper = Mapper::new(SizeLimits::default(), Some(store.clone()));
    let result = big();
    for target in Target::all() {
        let mut ctx = RenderContext::new("rows", now());
        ctx.principal = Some("alice");
        let rendered = mapper.render(&result, target, &ctx).await;
        assert!(rendered.offloaded, "{target}");
        let text = rendered.value.to_string();
        let start = text.find("toolhost://results/").unwrap();
        let uri: String = text[start..]
            .chars()
            .take_while(|c| !matches!(c, '"' | ' ' | '\\' | ']'))
            .collect();
        let back = store
            .get(&uri, Some("alice"))
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{target}: {uri}"));
        assert_eq!(back, result, "{target}");
        assert_eq!(
            serde_json::to_string(back.data().unwrap()).unwrap(),
            serde_json::to_string(result.data().unwrap()).unwrap()
        );
    }
}

#[tokio::test]
async fn only_a_valid_unexpired_link_of_the_same_principal_reads() {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(open(dir.path()));
    let mapper = Mapper::new(SizeLimits::uniform(1_000), Some(store.clone()));
    let mut ctx = RenderContext::new("rows", now());
    ctx.principal = Some("alice");
    let rendered = mapper.render(&big(), Target::Legacy, &ctx).await;
    let uri = rendered.value["_meta"]["resourceUri"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(store.get(&uri, Some("alice")).await.unwrap().is_some());
    assert!(
        store.get(&uri, Some("bob")).await.unwrap().is_none(),
        "foreign principal"
    );
    assert!(
        store.get(&uri, None).await.unwrap().is_none(),
        "no principal"
    );
    let tampered = uri.replacen("results/", "results/0", 1);
    assert!(
        store.get(&tampered, Some("alice")).await.unwrap().is_none(),
        "tampered"
    );
    let unknown = Signer::load_or_create(&dir.path().join("signing.key"))
        .unwrap()
        .link("00ff00ff", Some("alice"), now().as_second() + 60);
    assert!(
        store.get(&unknown, Some("alice")).await.unwrap().is_none(),
        "validly signed, unknown id"
    );
    // A second store on the same file and key (a restart, or a replica) reads it.
    let again = open(dir.path());
    assert!(again.get(&uri, Some("alice")).await.unwrap().is_some());
}

#[tokio::test]
async fn expired_links_are_refused_and_purge_removes_expired_rows_only() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let start = NOW.load(Ordering::SeqCst);
    let soon = store
        .insert_raw(
            "aa11",
            FormatVersion::V1,
            &serde_json::to_string(&big()).unwrap(),
            None,
            start + 10,
        )
        .unwrap();
    let later = store
        .insert_raw(
            "bb22",
            FormatVersion::V1,
            &serde_json::to_string(&big()).unwrap(),
            None,
            start + 100_000,
        )
        .unwrap();
    assert!(store.get(&soon, None).await.unwrap().is_some());
    // Past the first expiry (this test's rows only; other tests' stores are separate files).
    NOW.fetch_add(20, Ordering::SeqCst);
    assert!(store.get(&soon, None).await.unwrap().is_none(), "expired");
    assert_eq!(store.purge().unwrap(), 1);
    assert!(
        store.get(&later, None).await.unwrap().is_some(),
        "unexpired rows stay"
    );
}

#[tokio::test]
async fn a_row_written_in_an_older_format_is_read_by_its_parser() {
    let dir = tempfile::tempdir().unwrap();
    let store = open(dir.path());
    let expires = NOW.load(Ordering::SeqCst) + 3_600;
    let link = store
        .insert_raw(
            "cc33",
            FormatVersion::Legacy,
            r#"{"success": true, "data": {"orderId": "1001"}, "dryRun": true}"#,
            Some("alice"),
            expires,
        )
        .unwrap();
    let result = store.get(&link, Some("alice")).await.unwrap().unwrap();
    assert_eq!(result.data(), Some(&json!({"orderId": "1001"})));
    assert_eq!(result.metadata().dry_run, Some(true));
}
