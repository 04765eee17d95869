//! The network policy against a release host, with the `hostile-net` guest: a
//! guest may look up only the names its plugin's rules name (the filtered
//! `wasi:sockets/ip-name-lookup`), a refused lookup is a denial that ends the
//! call `permission_denied` naming the name, and a name never grants loopback
//! (only an address rule does).

use crate::common;

use std::io::Read;
use std::net::TcpListener;
use std::path::Path;

use common::attack::{self, Bounds};
use common::host::guest;
use common::process::Host;
use serde_json::json;

/// A host with `calc` and `hostile_net` under the network rules `rules`.
fn start(dir: &Path, rules: &[String]) -> Host {
    std::fs::create_dir_all(dir).unwrap();
    let config = dir.join("toolhost.toml");
    std::fs::write(
        &config,
        format!(
            "[host]\ndata_dir = \"{data}\"\n\n\
             [[plugin]]\npath = \"{calc}\"\n\n\
             [[plugin]]\npath = \"{net}\"\n[plugin.policy]\nnetwork = {rules:?}\n",
            data = dir.join("data").display(),
            calc = guest("calc").display(),
            net = guest("hostile_net").display(),
        ),
    )
    .unwrap();
    Host::start(&config)
}

/// A secret no lookup may carry out.
fn secret() -> String {
    format!(
        "{:x}{:x}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn a_guest_looks_up_only_the_names_its_rules_name() {
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let host = start(dir.path(), &[format!("localhost:{port}")]);

    // The name the rule names resolves.
    let allowed = attack::call(&host.url, "net_lookup", json!({"names": ["localhost"]})).await;
    assert_eq!(attack::error_code(&allowed), None, "{allowed}");
    let addresses = allowed["result"]["structuredContent"]["localhost"].to_string();
    assert!(
        addresses.contains("127.0.0.1") || addresses.contains("::1"),
        "{allowed}"
    );

    // Any other name is refused before a query leaves the host (without the
    // filter, the first would resolve from /etc/hosts if listed there and the
    // second fail as unresolvable, a `tool_error`): a denial naming the name.
    let data = secret();
    for name in ["ip6-localhost".to_owned(), format!("exfil-{data}.example")] {
        let refused = attack::call(
            &host.url,
            "net_lookup",
            json!({"names": ["localhost", name]}),
        )
        .await;
        assert_eq!(
            attack::error_code(&refused).as_deref(),
            Some("permission_denied"),
            "{refused}"
        );
        // The denial names the name (the guest's stderr, also in the details,
        // names it too, but never as "name lookup of").
        let text = refused.to_string();
        assert!(
            text.contains("name lookup of") && text.contains("is not granted"),
            "{text}"
        );
        assert!(text.contains(&name), "{text}");
    }

    // Carrying data out in many names: every lookup is refused, the host stays
    // within bounds and answers beside it.
    let outcome = attack::run(
        &host,
        "net_lookup_flood",
        json!({"count": 20_000, "data": data}),
        attack::ordinary_add(),
    )
    .await;
    assert_eq!(outcome.code, None, "{}", outcome.text());
    assert_eq!(
        outcome.message["result"]["structuredContent"],
        json!({"resolved": 0, "refused": 20_000}),
        "{}",
        outcome.text()
    );
    eprintln!("flood: {outcome:?}");
    outcome.within(Bounds {
        rss_mib: 256,
        fds: 64,
    });
    drop(listener);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_name_grants_no_loopback_address_but_an_address_rule_does() {
    let dir = tempfile::tempdir().unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();

    // The lookup of `localhost` is allowed; the loopback address it gives is not.
    let by_name = start(&dir.path().join("name"), &[format!("localhost:{port}")]);
    let refused = attack::call(
        &by_name.url,
        "net_connect",
        json!({"host": "localhost", "port": port}),
    )
    .await;
    assert_eq!(
        attack::error_code(&refused).as_deref(),
        Some("permission_denied"),
        "{refused}"
    );
    let text = refused.to_string();
    assert!(
        text.contains(&format!(":{port} (TcpConnect) is not granted")),
        "{text}"
    );
    assert!(
        !text.contains("name lookup"),
        "the lookup itself was allowed: {text}"
    );
    drop(by_name);

    // Granted as an address too, the connection by name goes through.
    let by_address = start(
        &dir.path().join("address"),
        &[format!("localhost:{port}"), format!("127.0.0.1:{port}")],
    );
    let accepted = std::thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut hello = [0u8; 5];
        stream.read_exact(&mut hello).unwrap();
        hello
    });
    let connected = attack::call(
        &by_address.url,
        "net_connect",
        json!({"host": "localhost", "port": port}),
    )
    .await;
    assert_eq!(
        connected["result"]["structuredContent"],
        json!({"connected": true}),
        "{connected}"
    );
    assert_eq!(&accepted.join().unwrap(), b"hello");
}
