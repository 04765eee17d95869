//! Trusted distribution end to end: a real registry (Debian's `docker-registry`,
//! the CNCF distribution server, on a loopback port), the example components
//! published to it with `toolhost publish`, served from `oci://` sources, pinned
//! in the data directory and served from there with the registry stopped; and
//! every refusal with its exact message: unsigned, signed by an untrusted key, a
//! tampered pinned copy, a moved tag before `toolhost update`, a new version that
//! requests more than approved before `toolhost approve`.

use crate::common;

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use common::host::{guest, lang_guest};

/// One `docker-registry serve` on a loopback port, storing into its own
/// directory; killed when dropped.
struct Registry {
    port: u16,
    child: Child,
}

/// The bcrypt hash of [`PASSWORD`] for user [`USER`], as htpasswd writes it.
const HTPASSWD: &str = "ci:$2a$05$LIlpsRF1awW.d7zh5QBRcuCmzqcVcuLR9UWSNoZn6uBK5fsGy0zB6";
const USER: &str = "ci";
const PASSWORD: &str = "s3cret-pass";

impl Registry {
    fn start(dir: &Path) -> Registry {
        Registry::start_with(dir, "")
    }

    /// A registry that asks for [`USER`] and [`PASSWORD`] (basic auth, htpasswd).
    fn start_with_password(dir: &Path) -> Registry {
        std::fs::write(dir.join("htpasswd"), format!("{HTPASSWD}\n")).unwrap();
        Registry::start_with(
            dir,
            &format!(
                "auth:\n  htpasswd:\n    realm: toolhost-test\n    path: {}\n",
                dir.join("htpasswd").display()
            ),
        )
    }

    fn start_with(dir: &Path, more: &str) -> Registry {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let config = dir.join("registry.yml");
        std::fs::write(
            &config,
            format!(
                "version: 0.1\nlog:\n  level: error\nstorage:\n  filesystem:\n    rootdirectory: {}\nhttp:\n  addr: 127.0.0.1:{port}\n{more}",
                dir.join("registry-store").display()
            ),
        )
        .unwrap();
        let child = Command::new(registry_binary())
            .arg("serve")
            .arg(&config)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("starting docker-registry (make setup installs it)");
        let registry = Registry { port, child };
        let deadline = Instant::now() + Duration::from_secs(30);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "docker-registry did not listen on {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        registry
    }

    /// `oci://127.0.0.1:PORT/<repository>`.
    fn url(&self, repository: &str) -> String {
        format!("oci://127.0.0.1:{}/{repository}", self.port)
    }
}

impl Drop for Registry {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn registry_binary() -> PathBuf {
    let path = PathBuf::from("/usr/bin/docker-registry");
    assert!(
        path.exists(),
        "{} is missing: `make setup` installs Debian's docker-registry",
        path.display()
    );
    path
}

/// Runs `toolhost ARGS` in `dir` with `env`.
fn toolhost_in(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_toolhost"))
        .args(args)
        .current_dir(dir)
        .env("TOOLHOST_LOG", "warn")
        .envs(env.iter().copied())
        .output()
        .expect("running toolhost")
}

fn text(output: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

/// A working directory with a configuration, keys and a data directory.
struct Site {
    dir: tempfile::TempDir,
}

impl Site {
    fn new() -> Site {
        let site = Site {
            dir: tempfile::tempdir().unwrap(),
        };
        for key in ["alice", "mallory"] {
            let made = site.run(&["keygen", &format!("{key}.key")]);
            assert!(made.status.success(), "{}", text(&made));
        }
        site
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn run(&self, args: &[&str]) -> Output {
        toolhost_in(self.path(), args, &[])
    }

    /// `run` with `--config toolhost.toml` after the arguments.
    fn with_config(&self, args: &[&str], env: &[(&str, &str)]) -> Output {
        let mut all = args.to_vec();
        all.extend(["--config", "toolhost.toml"]);
        toolhost_in(self.path(), &all, env)
    }

    /// Writes `toolhost.toml`: alice's key trusted, the data directory here.
    fn configure(&self, plugins: &str) {
        std::fs::write(
            self.path().join("toolhost.toml"),
            format!(
                "[host]\ndata_dir = \"data\"\n\n[trust.keys]\nalice = \"alice.pub\"\n\n{plugins}"
            ),
        )
        .unwrap();
    }

    /// `toolhost publish COMPONENT TARGET [--sign KEY] [--policy FILE]`; returns
    /// the published component's digest.
    fn publish(
        &self,
        component: &Path,
        target: &str,
        key: Option<&str>,
        policy: Option<&str>,
    ) -> String {
        let mut args = vec!["publish", component.to_str().unwrap(), target];
        let key_file = key.map(|k| format!("{k}.key"));
        if let Some(key) = &key_file {
            args.extend(["--sign", key]);
        }
        if let Some(policy) = policy {
            std::fs::write(self.path().join("policy.toml"), policy).unwrap();
            args.extend(["--policy", "policy.toml"]);
        }
        let published = self.run(&args);
        assert!(published.status.success(), "{}", text(&published));
        digest_after(&text(&published), "component ")
    }

    /// The tool names `toolhost tools` lists, or the failure's text.
    fn tools(&self, env: &[(&str, &str)]) -> Result<Vec<String>, String> {
        let listed = self.with_config(&["tools"], env);
        if !listed.status.success() {
            return Err(text(&listed));
        }
        let out = String::from_utf8_lossy(&listed.stdout).into_owned();
        let names = serde_json::Deserializer::from_str(&out)
            .into_iter::<Value>()
            .map(|tool| tool.unwrap()["name"].as_str().unwrap().to_owned())
            .collect();
        Ok(names)
    }

    /// `toolhost call TOOL --args ARGS`: the structured content, or the text of a
    /// failure.
    fn call(&self, tool: &str, args: Value, env: &[(&str, &str)]) -> Result<Value, String> {
        let called = self.with_config(
            &["call", tool, "--args", &args.to_string(), "--mode", "spec"],
            env,
        );
        let answer: Value = serde_json::from_slice(&called.stdout)
            .unwrap_or_else(|_| panic!("{tool}: no JSON answer: {}", text(&called)));
        if called.status.success() {
            Ok(answer["structuredContent"].clone())
        } else {
            Err(answer.to_string())
        }
    }
}

/// The `sha256:<hex>` that follows `marker` in `text`.
fn digest_after(text: &str, marker: &str) -> String {
    let at = text
        .find(marker)
        .unwrap_or_else(|| panic!("no {marker:?} in {text}"))
        + marker.len();
    text[at..].chars().take(71).collect()
}

#[test]
fn published_components_are_pinned_and_served_from_the_registry_then_offline() {
    let site = Site::new();
    let registry = Registry::start(site.path());
    let calc = registry.url("tools/calc:1");
    let js = registry.url("tools/js_tools:1");
    site.publish(&guest("calc"), &calc, Some("alice"), None);
    site.publish(&lang_guest("js_tools"), &js, Some("alice"), None);
    site.configure(&format!(
        "[[plugin]]\nsource = \"{calc}\"\nsigners = [\"alice\"]\n\n[[plugin]]\nsource = \"{js}\"\n"
    ));

    let host = common::process::Host::start(&site.path().join("toolhost.toml"));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let answer = runtime.block_on(common::attack::call(
        &host.url,
        "add",
        json!({"a": 2, "b": 3}),
    ));
    assert_eq!(
        answer["result"]["structuredContent"],
        json!({"sum": 5}),
        "{answer}"
    );
    host.kill();

    let plugins = site.with_config(&["plugins"], &[]);
    let report = text(&plugins);
    assert!(plugins.status.success(), "{report}");
    assert!(report.contains(&format!("calc  {calc}")), "{report}");
    assert!(report.contains("signed by alice"), "{report}");
    let lock = std::fs::read_to_string(site.path().join("data/toolhost.lock")).unwrap();
    assert!(
        lock.contains("[plugin.calc]") && lock.contains("[plugin.js_tools]"),
        "{lock}"
    );

    drop(registry);
    let tools = site
        .tools(&[])
        .expect("served from the pinned copies, no registry");
    assert!(tools.contains(&"add".to_owned()), "{tools:?}");
    assert_eq!(
        site.call("add", json!({"a": 20, "b": 22}), &[]),
        Ok(json!({"sum": 42}))
    );
}

#[test]
fn an_unsigned_component_is_refused_naming_the_plugin_and_the_digest() {
    let site = Site::new();
    let registry = Registry::start(site.path());
    let calc = registry.url("tools/calc:1");
    let digest = site.publish(&guest("calc"), &calc, None, None);
    site.configure(&format!("[[plugin]]\nsource = \"{calc}\"\n"));
    let refused = site.tools(&[]).unwrap_err();
    assert!(
        refused.contains(&format!(
            "error: {calc}: plugin calc: component {digest} is not signed; the trust policy requires a signature by alice (sign it with `toolhost publish --sign KEY`)"
        )),
        "{refused}"
    );
    assert!(
        !site.path().join("data/toolhost.lock").exists(),
        "nothing was pinned"
    );
}

#[test]
fn a_component_signed_by_an_untrusted_key_is_refused() {
    let site = Site::new();
    let registry = Registry::start(site.path());
    let calc = registry.url("tools/calc:1");
    let digest = site.publish(&guest("calc"), &calc, Some("mallory"), None);
    site.configure(&format!(
        "[[plugin]]\nsource = \"{calc}\"\nsigners = [\"alice\"]\n"
    ));
    let refused = site.tools(&[]).unwrap_err();
    assert!(
        refused.contains(&format!(
            "error: {calc}: plugin calc: component {digest} has no valid signature by alice: it is signed by another key, or was changed after signing"
        )),
        "{refused}"
    );
}

#[test]
fn a_tampered_pinned_copy_is_refused() {
    let site = Site::new();
    let registry = Registry::start(site.path());
    let calc = registry.url("tools/calc:1");
    let digest = site.publish(&guest("calc"), &calc, Some("alice"), None);
    site.configure(&format!("[[plugin]]\nsource = \"{calc}\"\n"));
    site.tools(&[]).expect("pulled and pinned");
    let copy = site
        .path()
        .join("data/oci/sha256")
        .join(digest.trim_start_matches("sha256:"));
    let mut bytes = std::fs::read(&copy).unwrap();
    let last = bytes.len() - 1;
    bytes[last] ^= 1;
    std::fs::write(&copy, &bytes).unwrap();
    let found = format!("sha256:{}", hex_sha256(&bytes));
    let refused = site.tools(&[]).unwrap_err();
    assert!(
        refused.contains(&format!(
            "error: {calc}: plugin calc: the pinned copy {} has digest {found}, not the pinned {digest}: it was changed on disk; delete it and run toolhost update to pull it again",
            Path::new("data/oci/sha256").join(digest.trim_start_matches("sha256:")).display()
        )),
        "{refused}"
    );
}

fn hex_sha256(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn a_moved_tag_is_not_used_before_update() {
    let site = Site::new();
    let registry = Registry::start(site.path());
    let tag = registry.url("tools/moving:stable");
    site.publish(&guest("calc"), &tag, Some("alice"), None);
    site.configure(&format!("[[plugin]]\nsource = \"{tag}\"\n"));
    let first = site.tools(&[]).unwrap();
    assert!(first.contains(&"add".to_owned()), "{first:?}");
    let manifest_of = |output: &Output| digest_after(&text(output), "manifest ");
    let lock = std::fs::read_to_string(site.path().join("data/toolhost.lock")).unwrap();
    let old = digest_after(&lock, "manifest = \"");

    let moved = site.run(&[
        "publish",
        guest("hello").to_str().unwrap(),
        &tag,
        "--sign",
        "alice.key",
    ]);
    assert!(moved.status.success(), "{}", text(&moved));
    let new = manifest_of(&moved);
    assert_ne!(old, new);
    assert_eq!(
        site.tools(&[]).unwrap(),
        first,
        "the pin holds, the tag moved"
    );

    let updated = site.with_config(&["update"], &[]);
    assert!(updated.status.success(), "{}", text(&updated));
    assert_eq!(text(&updated), format!("moving: updated {old} -> {new}\n"));
    let now = site.tools(&[]).unwrap();
    assert!(
        !now.contains(&"add".to_owned()) && !now.is_empty(),
        "{now:?}"
    );
    let again = site.with_config(&["update", "moving"], &[]);
    assert_eq!(text(&again), format!("moving: up to date at {new}\n"));
}

#[test]
fn a_new_version_requesting_more_is_held_until_approved() {
    let site = Site::new();
    let registry = Registry::start(site.path());
    let tag = registry.url("tools/hostile:1");
    let env = [("VISIBLE", "seen"), ("SECRET_TOKEN", "t0ken")];
    site.publish(
        &guest("hostile"),
        &tag,
        Some("alice"),
        Some("env = [\"VISIBLE\"]\n"),
    );
    site.configure(&format!(
        "[[plugin]]\nsource = \"{tag}\"\n[plugin.policy]\nenv = [\"VISIBLE\", \"SECRET_TOKEN\"]\n"
    ));
    assert_eq!(
        site.call("read_env", json!({"name": "VISIBLE"}), &env),
        Ok(json!({"value": "seen"}))
    );
    assert!(
        site.call("read_env", json!({"name": "SECRET_TOKEN"}), &env)
            .is_err(),
        "granted, but not requested"
    );
    let lock = std::fs::read_to_string(site.path().join("data/toolhost.lock")).unwrap();
    let old = digest_after(&lock, "manifest = \"");

    let moved = site.run(&[
        "publish",
        guest("hostile").to_str().unwrap(),
        &tag,
        "--sign",
        "alice.key",
        "--policy",
        "more.toml",
    ]);
    assert!(!moved.status.success(), "no more.toml yet");
    std::fs::write(
        site.path().join("more.toml"),
        "env = [\"VISIBLE\", \"SECRET_TOKEN\"]\n",
    )
    .unwrap();
    let moved = site.run(&[
        "publish",
        guest("hostile").to_str().unwrap(),
        &tag,
        "--sign",
        "alice.key",
        "--policy",
        "more.toml",
    ]);
    assert!(moved.status.success(), "{}", text(&moved));
    let new = digest_after(&text(&moved), "manifest ");

    let held = site.with_config(&["update", "hostile"], &[]);
    assert!(held.status.success(), "{}", text(&held));
    assert_eq!(
        text(&held),
        format!(
            "hostile: {new} requests more than approved: environment variable SECRET_TOKEN; held, {old} keeps serving until `toolhost approve hostile`\n"
        )
    );
    assert!(
        site.call("read_env", json!({"name": "SECRET_TOKEN"}), &env)
            .is_err(),
        "the held version does not serve"
    );
    let started = site.with_config(&["tools"], &[]);
    let log = String::from_utf8_lossy(&started.stderr);
    assert!(
        started.status.success()
            && log.contains("a newer version waits for approval")
            && log.contains(&format!("waiting=\"{new}\""))
            && log.contains("more=environment variable SECRET_TOKEN"),
        "each start logs the difference: {log}"
    );
    let report = text(&site.with_config(&["plugins"], &[]));
    assert!(
        report.contains(&format!("  waiting:   {new} requests more than approved: environment variable SECRET_TOKEN; `toolhost approve hostile` pins it")),
        "{report}"
    );

    let approved = site.with_config(&["approve", "hostile"], &[]);
    assert!(approved.status.success(), "{}", text(&approved));
    assert_eq!(
        text(&approved),
        format!("hostile: approved {new}, requesting env VISIBLE, env SECRET_TOKEN\n")
    );
    assert_eq!(
        site.call("read_env", json!({"name": "SECRET_TOKEN"}), &env),
        Ok(json!({"value": "t0ken"}))
    );
    let nothing = site.with_config(&["approve", "hostile"], &[]);
    assert_eq!(nothing.status.code(), Some(1));
    assert!(
        text(&nothing).contains("plugin hostile: nothing waits for approval"),
        "{}",
        text(&nothing)
    );
}

#[test]
fn a_file_component_requesting_more_than_approved_is_refused_until_approved() {
    let site = Site::new();
    let component = site.path().join("hostile.wasm");
    let component_arg = component.to_str().unwrap();
    site.publish(
        &guest("hostile"),
        component_arg,
        None,
        Some("env = [\"VISIBLE\"]\n"),
    );
    site.configure(
        "[[plugin]]\npath = \"hostile.wasm\"\n[plugin.policy]\nenv = [\"VISIBLE\", \"HIDDEN\"]\n",
    );
    site.tools(&[]).expect("the first use pins it");

    let digest = site.publish(
        &guest("hostile"),
        component_arg,
        None,
        Some("env = [\"VISIBLE\", \"HIDDEN\"]\n"),
    );
    let refused = site.tools(&[]).unwrap_err();
    assert!(
        refused.contains(&format!(
            "error: hostile.wasm: plugin hostile: component {digest} requests more than was approved: environment variable HIDDEN; review it (toolhost plugins) and run `toolhost approve hostile`"
        )),
        "{refused}"
    );
    let approved = site.with_config(&["approve", "hostile"], &[]);
    assert!(approved.status.success(), "{}", text(&approved));
    site.tools(&[]).expect("approved");
}

#[test]
fn a_component_requesting_less_than_granted_gets_only_what_it_requested() {
    let site = Site::new();
    // Grants live outside the configuration's directory (the grant rules).
    let granted = tempfile::tempdir().unwrap();
    for dir in ["data", "other"] {
        std::fs::create_dir_all(granted.path().join(dir)).unwrap();
    }
    std::fs::write(
        granted.path().join("other/secret.txt"),
        "granted, not requested",
    )
    .unwrap();
    let component = site.path().join("hostile.wasm");
    site.publish(
        &guest("hostile"),
        component.to_str().unwrap(),
        None,
        Some("env = [\"VISIBLE\"]\npreopens = [{ guest = \"/data\" }]\nmemory_mib = 32\n"),
    );
    let granted_dir = granted.path().display();
    site.configure(&format!(
        "[[plugin]]\npath = \"hostile.wasm\"\n[plugin.policy]\nenv = [\"VISIBLE\", \"HIDDEN\"]\n\
         preopens = [{{ host = \"{granted_dir}/data\", guest = \"/data\", writable = true }}, {{ host = \"{granted_dir}/other\", guest = \"/other\" }}]\n",
    ));
    let env = [("VISIBLE", "seen"), ("HIDDEN", "hidden")];
    assert_eq!(
        site.call("read_env", json!({"name": "VISIBLE"}), &env),
        Ok(json!({"value": "seen"}))
    );
    assert!(
        site.call("read_env", json!({"name": "HIDDEN"}), &env)
            .is_err()
    );
    assert!(
        site.call(
            "escape_absolute",
            json!({"path": "/other/secret.txt"}),
            &env
        )
        .is_err(),
        "a granted directory it did not request is not there"
    );
    assert!(
        site.call("write_readonly", json!({}), &env).is_err(),
        "requested read-only, granted writable: read-only"
    );
    assert!(!granted.path().join("data/written.txt").exists());

    let checked = site.run(&[
        "check",
        component.to_str().unwrap(),
        "--config",
        "toolhost.toml",
    ]);
    let report = text(&checked);
    assert!(
        report.contains("note: ")
            && report.contains("requests: directory /data, env VISIBLE, memory_mib = 32"),
        "{report}"
    );
    assert!(report.contains("effective: directory /data ("), "{report}");
}

/// A registry that lies about `tools/calc:1`: its manifest gives `layer_size`
/// and `layer_digest` for the component, and its blob endpoint answers `blob`.
/// Returns the port and whether the blob was asked for.
fn lying_registry(
    layer_size: u64,
    layer_digest: String,
    blob: Vec<u8>,
) -> (u16, std::sync::Arc<std::sync::atomic::AtomicBool>) {
    use axum::http::{HeaderValue, StatusCode, Uri};
    use axum::response::IntoResponse as _;
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    listener.set_nonblocking(true).unwrap();
    let port = listener.local_addr().unwrap().port();
    let config = b"{}".to_vec();
    let manifest = json!({
        "schemaVersion": 2,
        "mediaType": "application/vnd.oci.image.manifest.v1+json",
        "config": {
            "mediaType": "application/vnd.wasm.config.v0+json",
            "digest": format!("sha256:{}", hex_sha256(&config)),
            "size": config.len(),
        },
        "layers": [{"mediaType": "application/wasm", "digest": layer_digest, "size": layer_size}],
    })
    .to_string();
    let manifest_digest = format!("sha256:{}", hex_sha256(manifest.as_bytes()));
    let asked = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let blob_asked = asked.clone();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async move {
            let app = axum::Router::new().fallback(move |uri: Uri| {
                let (manifest, digest, blob, config) = (
                    manifest.clone(),
                    manifest_digest.clone(),
                    blob.clone(),
                    config.clone(),
                );
                let asked = blob_asked.clone();
                async move {
                    let path = uri.path();
                    if path == "/v2/" {
                        return "{}".into_response();
                    }
                    if path.ends_with("/manifests/1") {
                        let mut response = manifest.into_response();
                        let headers = response.headers_mut();
                        headers.insert(
                            "content-type",
                            HeaderValue::from_static("application/vnd.oci.image.manifest.v1+json"),
                        );
                        headers.insert("docker-content-digest", digest.parse().unwrap());
                        return response;
                    }
                    if path.contains("/blobs/") {
                        if path.ends_with(&hex_sha256(&config)) {
                            return config.into_response();
                        }
                        asked.store(true, std::sync::atomic::Ordering::SeqCst);
                        return blob.into_response();
                    }
                    StatusCode::NOT_FOUND.into_response()
                }
            });
            let listener = tokio::net::TcpListener::from_std(listener).unwrap();
            axum::serve(listener, app).await.unwrap();
        });
    });
    (port, asked)
}

#[test]
fn a_lying_registry_cannot_oversize_or_swap_a_component() {
    let calc = std::fs::read(guest("calc")).unwrap();
    let calc_digest = format!("sha256:{}", hex_sha256(&calc));
    let mut swapped = calc.clone();
    let last = swapped.len() - 1;
    swapped[last] ^= 1;
    let mut longer = calc.clone();
    longer.extend_from_slice(&[0; 4096]);
    let cases = [
        ("oversized", 300 << 20, calc_digest.clone(), calc.clone()),
        ("swapped", calc.len() as u64, calc_digest.clone(), swapped),
        ("longer", calc.len() as u64, calc_digest, longer),
    ];
    for (case, size, digest, blob) in cases {
        let site = Site::new();
        let (port, asked) = lying_registry(size, digest, blob);
        let source = format!("oci://127.0.0.1:{port}/tools/calc:1");
        site.configure(&format!(
            "[trust]\nrequire_signature = false\n\n[[plugin]]\nsource = \"{source}\"\n"
        ));
        let refused = site.tools(&[]).unwrap_err();
        assert!(
            refused.contains(&format!("error: {source}: plugin calc: ")),
            "{case}: {refused}"
        );
        if case == "oversized" {
            assert!(
                refused.contains(
                    "the component layer has 314572800 bytes; at most 268435456 are pulled"
                ),
                "{refused}"
            );
            assert!(
                !asked.load(std::sync::atomic::Ordering::SeqCst),
                "refused before the download"
            );
        } else {
            assert!(
                refused.contains(&format!("pulling the component of {source} failed")),
                "{case}: {refused}"
            );
        }
        assert!(
            !site.path().join("data/toolhost.lock").exists(),
            "{case}: nothing was pinned"
        );
    }
}

#[test]
fn registry_credentials_come_from_the_environment_or_the_docker_config() {
    let site = Site::new();
    let registry = Registry::start_with_password(site.path());
    let calc = registry.url("tools/calc:1");
    let publish = |env: &[(&str, &str)]| {
        toolhost_in(
            site.path(),
            &[
                "publish",
                guest("calc").to_str().unwrap(),
                &calc,
                "--sign",
                "alice.key",
            ],
            env,
        )
    };
    let anonymous = publish(&[]);
    assert_eq!(anonymous.status.code(), Some(1), "{}", text(&anonymous));
    assert!(
        text(&anonymous).contains(&format!("error: pushing {calc} failed")),
        "{}",
        text(&anonymous)
    );
    let published = publish(&[
        ("TOOLHOST_REGISTRY_USERNAME", USER),
        ("TOOLHOST_REGISTRY_PASSWORD", PASSWORD),
    ]);
    assert!(published.status.success(), "{}", text(&published));

    site.configure(&format!("[[plugin]]\nsource = \"{calc}\"\n"));
    let refused = site.tools(&[]).unwrap_err();
    assert!(
        refused.contains(&format!(
            "error: {calc}: plugin calc: pulling the manifest of {calc} failed"
        )),
        "{refused}"
    );
    use base64::Engine as _;
    let docker = site.path().join("docker");
    std::fs::create_dir_all(&docker).unwrap();
    let auth = base64::engine::general_purpose::STANDARD.encode(format!("{USER}:{PASSWORD}"));
    std::fs::write(
        docker.join("config.json"),
        json!({"auths": {format!("127.0.0.1:{}", registry.port): {"auth": auth}}}).to_string(),
    )
    .unwrap();
    let tools = site
        .tools(&[("DOCKER_CONFIG", docker.to_str().unwrap())])
        .expect("pulled with the docker config's credentials");
    assert!(tools.contains(&"add".to_owned()), "{tools:?}");
}
