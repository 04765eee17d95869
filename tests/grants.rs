//! Paths fixed at load, and what the host loads kept from guests (issue #12), against
//! the release binary: a preopen swapped for a symlink between calls, the grant rules
//! as load errors (at start and at hot load), limits out of range, a private data
//! directory, and a compile cache that loads only what this host wrote.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use common::attack::{self, Bounds, Canary};
use common::host::guest;
use common::mcp_client::{message, modern};
use common::process::Host;
use serde_json::{Value, json};
use sha2::{Digest, Sha256};

/// A scratch tree: `conf/` for the configuration file, `data/` for data_dir, and
/// whatever a test adds (grants, plugin directories, canaries) beside them.
struct Tree {
    dir: tempfile::TempDir,
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("conf")).unwrap();
        Tree { dir }
    }

    fn path(&self, sub: &str) -> PathBuf {
        self.dir.path().join(sub)
    }

    fn mkdir(&self, sub: &str) -> PathBuf {
        let path = self.path(sub);
        std::fs::create_dir_all(&path).unwrap();
        path
    }

    /// Writes conf/toolhost.toml: `[host]` with data_dir (and `host`, more keys),
    /// then `rest`.
    fn config(&self, host: &str, rest: &str) -> PathBuf {
        let file = self.path("conf/toolhost.toml");
        std::fs::write(
            &file,
            format!(
                "[host]\ndata_dir = \"{}\"\n{host}\n{rest}",
                self.path("data").display()
            ),
        )
        .unwrap();
        file
    }
}

/// A `[[plugin]]` table for a component with `grants` (`(host path, writable)`);
/// its tools are prefixed with `name` unless that is the component's own.
fn plugin(name: &str, component: &str, grants: &[(&Path, bool)]) -> String {
    let mut text = format!(
        "[[plugin]]\nname = \"{name}\"\npath = \"{}\"\n",
        guest(component).display()
    );
    if name != component {
        text.push_str(&format!("prefix = \"{name}\"\n"));
    }
    for (host, writable) in grants {
        text.push_str(&format!(
            "[[plugin.policy.preopens]]\nhost = \"{}\"\nguest = \"/data\"\nwritable = {writable}\n",
            host.display()
        ));
    }
    text
}

/// What a `toolhost` command did.
struct Ran {
    code: i32,
    stdout: String,
    stderr: String,
}

/// `toolhost <args> --config <file>`, killed after 60 s (a `serve` that should
/// have been refused would run on).
fn toolhost(args: &[&str], config: &Path) -> Ran {
    let child = Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(args)
        .arg("--config")
        .arg(config)
        .env("TOOLHOST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || sender.send(child.wait_with_output().unwrap()));
    let output = receiver
        .recv_timeout(Duration::from_secs(60))
        .unwrap_or_else(|_| {
            // SAFETY: signalling our own child, which has not been reaped.
            unsafe { libc::kill(pid as i32, libc::SIGKILL) };
            panic!("toolhost {args:?} ran for 60 s (a refused configuration would have stopped it)")
        });
    Ran {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
    }
}

/// Asserts that both `toolhost tools` and `toolhost serve` refuse `config` with
/// exit code 2 and a message holding each of `needles`.
fn refused(config: &Path, needles: &[&str]) {
    for args in [&["tools"][..], &["serve", "--http", "127.0.0.1:0"][..]] {
        let Ran { code, stderr, .. } = toolhost(args, config);
        assert_eq!(code, 2, "{args:?}: {stderr}");
        for needle in needles {
            assert!(
                stderr.contains(needle),
                "{args:?}: {needle:?} is not in: {stderr}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_preopen_swapped_for_a_symlink_between_calls_still_reaches_the_directory_opened_at_load()
{
    let tree = Tree::new();
    let reference = tree.mkdir("shared/ref");
    std::fs::write(reference.join("readme.txt"), "the original directory\n").unwrap();
    // What the link will point at: a canary under the very name the tool reads.
    let secret = tree.mkdir("secret");
    let canary = Canary::plant(&secret, "readme.txt");
    let config = tree.config(
        "",
        &(plugin("b", "files", &[(&reference, false)]) + &plugin("calc", "calc", &[])),
    );
    let host = Host::start(&config);
    let first = attack::call(&host.url, "b_read_file", json!({"path": "readme.txt"})).await;
    assert_eq!(
        first["result"]["structuredContent"]["content"], "the original directory\n",
        "{first}"
    );

    // Between calls, from outside (as a plugin with a writable grant on shared/
    // could, were such a configuration allowed): `ref` renamed away, and a relative
    // symlink in its place.
    std::fs::rename(&reference, tree.path("shared/ref.old")).unwrap();
    std::os::unix::fs::symlink("../secret", &reference).unwrap();
    assert_eq!(
        std::fs::read_to_string(reference.join("readme.txt")).unwrap(),
        canary.content,
        "the link leads to the canary"
    );

    let outcome = attack::run(
        &host,
        "b_read_file",
        json!({"path": "readme.txt"}),
        attack::ordinary_add(),
    )
    .await;
    outcome.within(Bounds {
        rss_mib: 512,
        fds: 256,
    });
    assert_eq!(outcome.code, None, "{}", outcome.text());
    assert_eq!(
        outcome.message["result"]["structuredContent"]["content"],
        "the original directory\n",
        "{}",
        outcome.text()
    );
    canary.assert_safe(&outcome.text());

    // The link further up: `ref -> ../../..` (outside the tree); the listing is
    // still the one of the directory opened at load.
    std::fs::remove_file(&reference).unwrap();
    std::os::unix::fs::symlink("../../..", &reference).unwrap();
    let listed = attack::call(&host.url, "b_list_dir", json!({})).await;
    assert_eq!(
        listed["result"]["structuredContent"],
        json!(["readme.txt"]),
        "{listed}"
    );
    let read = attack::call(
        &host.url,
        "b_read_file",
        json!({"path": "secret/readme.txt"}),
    )
    .await;
    canary.assert_safe(&read.to_string());
}

#[test]
fn a_writable_grant_over_another_plugins_grant_is_a_load_error_naming_both() {
    // Issue #12, attack 1: A writable on DIR, B read-only on DIR/ref.
    let tree = Tree::new();
    let shared = tree.mkdir("shared");
    let reference = tree.mkdir("shared/ref");
    let config = tree.config(
        "",
        &(plugin("a", "files", &[(&shared, true)]) + &plugin("b", "files", &[(&reference, false)])),
    );
    refused(
        &config,
        &[
            "toolhost.toml: plugin a: policy.preopens",
            "writable grant",
            &shared.display().to_string(),
            &reference.display().to_string(),
            "plugin b",
        ],
    );
    // Read-only both: allowed.
    let config = tree.config(
        "",
        &(plugin("a", "files", &[(&shared, false)])
            + &plugin("b", "files", &[(&reference, false)])),
    );
    let ran = toolhost(&["tools"], &config);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
}

#[test]
fn a_grant_on_a_plugin_directory_the_data_directory_or_the_configuration_is_a_load_error() {
    let tree = Tree::new();
    let plugins = tree.mkdir("plugins");
    let data = tree.mkdir("data");
    let inside_conf = tree.mkdir("conf/notes");
    let host = format!("plugin_dirs = [\"{}\"]", plugins.display());
    // Issue #12, attack 2: a writable grant on a plugin directory (where a guest
    // would write x.wasm and a sidecar granting `/`).
    for (grant, writable, what) in [
        (
            plugins.clone(),
            true,
            "the plugin directory (host.plugin_dirs)",
        ),
        (
            plugins.clone(),
            false,
            "the plugin directory (host.plugin_dirs)",
        ),
        (
            tree.dir.path().to_path_buf(),
            false,
            "the plugin directory (host.plugin_dirs)",
        ),
        (
            data.join("compile-cache"),
            false,
            "the data directory (host.data_dir)",
        ),
        (
            inside_conf.clone(),
            true,
            "the directory of the configuration",
        ),
        (
            tree.path("conf"),
            false,
            "the directory of the configuration",
        ),
        (
            PathBuf::from("/"),
            true,
            "the plugin directory (host.plugin_dirs)",
        ),
    ] {
        std::fs::create_dir_all(&grant).unwrap();
        let config = tree.config(&host, &plugin("x", "files", &[(&grant, writable)]));
        let root = if what.contains("plugin directory") {
            plugins.display().to_string()
        } else if what.contains("data directory") {
            data.display().to_string()
        } else {
            tree.path("conf").display().to_string()
        };
        refused(
            &config,
            &[
                "toolhost.toml: plugin x: policy.preopens",
                &grant.display().to_string(),
                what,
                &root,
            ],
        );
    }
}

#[test]
fn limits_out_of_range_are_load_errors_naming_file_and_key() {
    let tree = Tree::new();
    for (key, value) in [
        // i64::MAX ms: `Instant + Duration` used to panic on it.
        ("timeout_ms", "9223372036854775807"),
        ("timeout_ms", "3600001"),
        ("memory_mib", "4097"),
        ("max_instances", "100000"),
        ("fuel", "0"),
    ] {
        let config = tree.config(
            "",
            &format!(
                "{}[plugin.policy]\n{key} = {value}\n",
                plugin("calc", "calc", &[])
            ),
        );
        refused(
            &config,
            &[
                "toolhost.toml: plugin calc: policy.",
                &format!("{key} = {value}"),
            ],
        );
    }
}

#[cfg(unix)]
#[test]
fn the_data_directory_is_created_private_and_a_loose_one_is_refused() {
    use std::os::unix::fs::PermissionsExt as _;
    let tree = Tree::new();
    let config = tree.config("", &plugin("calc", "calc", &[]));
    let ran = toolhost(&["tools"], &config);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&tree.path("data")), 0o700);
    assert_eq!(mode(&tree.path("data/compile-cache")), 0o700);
    assert_eq!(mode(&tree.path("data/compile-cache/cache.key")), 0o600);

    for (path, loose, fix) in [
        ("data", 0o770, "chmod 700"),
        ("data/compile-cache", 0o707, "chmod 700"),
        ("data/compile-cache/cache.key", 0o640, "chmod 600"),
    ] {
        let path = tree.path(path);
        let before = mode(&path);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(loose)).unwrap();
        refused(&config, &[&path.display().to_string(), fix]);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(before)).unwrap();
    }
    let ran = toolhost(&["tools"], &config);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
}

/// The cache entry of `component` in the compile cache `dir`.
fn cache_entry(dir: &Path, component: &str) -> PathBuf {
    let digest = hex::encode(Sha256::digest(std::fs::read(guest(component)).unwrap()));
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| {
            p.file_name()
                .unwrap()
                .to_string_lossy()
                .starts_with(&digest)
        })
        .unwrap_or_else(|| panic!("no cache entry of {component} in {}", dir.display()))
}

#[test]
fn a_planted_or_changed_compile_cache_entry_is_compiled_again_never_loaded() {
    let tree = Tree::new();
    let config = tree.config(
        "",
        &(plugin("calc", "calc", &[]) + &plugin("hello", "hello", &[])),
    );
    let ran = toolhost(&["tools"], &config);
    assert_eq!(ran.code, 0, "{}", ran.stderr);
    let cache = tree.path("data/compile-cache");
    let (calc, hello) = (cache_entry(&cache, "calc"), cache_entry(&cache, "hello"));
    // `add` answers 5, and whether the log rejected an entry.
    let add = || {
        let ran = toolhost(&["call", "add", "--args", r#"{"a": 2, "b": 3}"#], &config);
        assert_eq!(ran.code, 0, "{}\n{}", ran.stdout, ran.stderr);
        assert!(ran.stdout.contains(r#""sum": 5"#), "{}", ran.stdout);
        ran.stderr
    };
    assert!(!add().contains("compile_cache_rejected"));

    // Planted: hello's entry, valid and tagged by this very host, under calc's name.
    // Loaded, it would serve hello's code as calc (no `add` at all).
    std::fs::copy(&hello, &calc).unwrap();
    let log = add();
    assert!(
        log.contains("compile_cache_rejected") && log.contains(&calc.display().to_string()),
        "{log}"
    );
    // The entry was written again, valid: the next start reads it without a word.
    assert!(!add().contains("compile_cache_rejected"));

    // Changed: one byte of calc's native code flipped; hello's without its tag (as
    // another program would write it).
    let mut bytes = std::fs::read(&calc).unwrap();
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x40;
    std::fs::write(&calc, &bytes).unwrap();
    let bytes = std::fs::read(&hello).unwrap();
    std::fs::write(&hello, &bytes[..bytes.len() - 32]).unwrap();
    let log = add();
    for entry in [&calc, &hello] {
        assert!(
            log.lines()
                .any(|line| line.contains("compile_cache_rejected")
                    && line.contains(&entry.display().to_string())),
            "{log}"
        );
    }
    assert!(!add().contains("compile_cache_rejected"));
}

/// A `toolhost serve --http` whose log lines are kept, to read why a hot load was
/// refused.
struct LoggedHost {
    url: String,
    child: Child,
    log: Arc<Mutex<Vec<String>>>,
}

impl LoggedHost {
    fn start(config: &Path) -> LoggedHost {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolhost"))
            .args(["serve", "--http", "127.0.0.1:0", "--config"])
            .arg(config)
            .env("TOOLHOST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let log = Arc::new(Mutex::new(Vec::new()));
        let stderr = BufReader::new(child.stderr.take().unwrap());
        let lines = log.clone();
        std::thread::spawn(move || {
            for line in stderr.lines().map_while(Result::ok) {
                eprintln!("[toolhost] {line}");
                lines.lock().unwrap().push(line);
            }
        });
        let started = Instant::now();
        let url = loop {
            let found = log.lock().unwrap().iter().find_map(|line| {
                let start = line.find("url=http://")?;
                Some(
                    line[start + 4..]
                        .chars()
                        .take_while(|c| !c.is_whitespace())
                        .collect::<String>(),
                )
            });
            if let Some(url) = found {
                break url;
            }
            assert!(
                started.elapsed() < Duration::from_secs(60),
                "toolhost did not start serving"
            );
            std::thread::sleep(Duration::from_millis(20));
        };
        LoggedHost { url, child, log }
    }

    /// Waits (at most 20 s) for a log line after the first `skip` holding every
    /// one of `needles`, and returns it.
    fn wait_for(&self, skip: usize, needles: &[&str]) -> String {
        let started = Instant::now();
        loop {
            if let Some(line) = self.log.lock().unwrap()[skip..]
                .iter()
                .find(|line| needles.iter().all(|n| line.contains(n)))
            {
                return line.clone();
            }
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "no log line with {needles:?}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn lines(&self) -> usize {
        self.log.lock().unwrap().len()
    }

    async fn tools(&self) -> Vec<String> {
        let response = modern("tools/list", None, json!({}), None, &self.url)
            .send()
            .await
            .unwrap();
        let listed: Value = message(response).await;
        listed["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("{listed}"))
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    }

    async fn add(&self) {
        let answer = attack::call(&self.url, "add", json!({"a": 2, "b": 3})).await;
        assert_eq!(
            answer["result"]["structuredContent"],
            json!({"sum": 5}),
            "{answer}"
        );
    }
}

impl Drop for LoggedHost {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_bad_sidecar_at_hot_load_is_refused_and_the_old_catalog_keeps_serving() {
    let tree = Tree::new();
    let plugins = tree.mkdir("plugins");
    std::fs::copy(guest("calc"), plugins.join("calc.wasm")).unwrap();
    let canary = Canary::plant(&tree.mkdir("secret"), "canary.txt");
    let config = tree.config(&format!("plugin_dirs = [\"{}\"]", plugins.display()), "");
    let host = LoggedHost::start(&config);
    let plugins_shown = plugins.display().to_string();
    let before = host.tools().await;
    assert!(before.contains(&"add".to_owned()), "{before:?}");
    host.add().await;

    // Each bad change is refused with its reason; the old tools keep serving.
    let bad = [
        // Issue #12, attack 2: a component with a sidecar granting `/`, writable.
        (
            "[policy]\nenv = [\"HOME\"]\nnetwork = [\"127.0.0.1:*\"]\n[[policy.preopens]]\nhost = \"/\"\nguest = \"/\"\nwritable = true\n".to_owned(),
            vec!["x.toml: plugin x: policy.preopens", "the grant / overlaps", &plugins_shown, "reload_refused"],
        ),
        (
            "[policy]\ntimeout_ms = 9223372036854775807\n".to_owned(),
            vec!["x.toml: plugin x: policy.timeout_ms = 9223372036854775807", "reload_refused"],
        ),
        // The engine was started without fuel metering (no plugin had `fuel`).
        (
            "[policy]\nfuel = 1000\n".to_owned(),
            vec!["x.toml: plugin x: policy.fuel", "without fuel metering", "reload_refused"],
        ),
        (
            "[policy]\nmemory_mib = 512\n".to_owned(),
            vec!["x.toml: plugin x: policy.memory_mib = 512", "reload_refused"],
        ),
    ];
    for (sidecar, needles) in bad {
        let skip = host.lines();
        let _ = std::fs::remove_file(plugins.join("x.wasm"));
        std::fs::write(plugins.join("x.toml"), sidecar).unwrap();
        std::fs::copy(guest("files"), plugins.join("x.part")).unwrap();
        std::fs::rename(plugins.join("x.part"), plugins.join("x.wasm")).unwrap();
        host.wait_for(skip, &needles);
        assert_eq!(host.tools().await, before);
        host.add().await;
        let missing = attack::call(&host.url, "read_file", json!({"path": "etc/passwd"})).await;
        assert!(
            missing.to_string().contains("unknown tool") || missing.get("error").is_some(),
            "{missing}"
        );
        canary.assert_safe(&missing.to_string());
    }

    // The watcher is still alive: a good change is loaded.
    let skip = host.lines();
    std::fs::remove_file(plugins.join("x.toml")).unwrap();
    std::fs::remove_file(plugins.join("x.wasm")).unwrap();
    std::fs::copy(guest("hello"), plugins.join("hello.part")).unwrap();
    std::fs::rename(plugins.join("hello.part"), plugins.join("hello.wasm")).unwrap();
    host.wait_for(skip, &["catalog reloaded"]);
    let after = host.tools().await;
    assert!(after.contains(&"hello".to_owned()), "{after:?}");
    host.add().await;
}
