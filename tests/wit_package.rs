//! The WIT packages parse and have the worlds and interfaces the host links
//! against: `wit/` (the current `0.2.0`) and `wit/0.1.0/` (frozen: components
//! built against it still load). A broken WIT fails here before it fails in a
//! guest build.

use std::path::Path;

use wit_parser::{PackageId, Resolve};

fn parse(dir: &str) -> (Resolve, PackageId) {
    let mut resolve = Resolve::default();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(dir);
    let (package, _) = resolve
        .push_dir(&dir)
        .unwrap_or_else(|e| panic!("{} does not parse: {e:#}", dir.display()));
    (resolve, package)
}

fn assert_has(resolve: &Resolve, package: PackageId, worlds: &[&str], interfaces: &[&str]) {
    let package = &resolve.packages[package];
    for world in worlds {
        assert!(
            package.worlds.contains_key(*world),
            "{}: world {world} is missing",
            package.name
        );
    }
    for interface in interfaces {
        assert!(
            package.interfaces.contains_key(*interface),
            "{}: interface {interface} is missing",
            package.name
        );
    }
    let types = &resolve.interfaces[package.interfaces["types"]];
    for ty in [
        "tool-result",
        "outcome",
        "content-part",
        "stored-link",
        "metadata",
        "namespaced-value",
        "error-code",
    ] {
        assert!(
            types.types.contains_key(ty),
            "{}: type {ty} is missing from types",
            package.name
        );
    }
}

#[test]
fn the_current_package_has_every_world_and_interface() {
    let (resolve, package) = parse("wit");
    assert_eq!(
        resolve.packages[package].name.to_string(),
        "toolhost:plugin@0.2.0"
    );
    assert_has(
        &resolve,
        package,
        &["plugin", "full", "legacy-app"],
        &[
            "types",
            "tool",
            "app",
            "host",
            "prompts",
            "resources",
            "completion",
        ],
    );
}

#[test]
fn the_frozen_0_1_0_package_is_still_there() {
    let (resolve, package) = parse("wit/0.1.0");
    assert_eq!(
        resolve.packages[package].name.to_string(),
        "toolhost:plugin@0.1.0"
    );
    assert_has(
        &resolve,
        package,
        &["plugin", "legacy-app"],
        &["types", "tool", "app", "host"],
    );
}

/// The host shares one set of Rust types between the two packages, which holds
/// only while `types` (and the interfaces `tool`, `app` and `host` use) stay the
/// same text apart from the package line. A change to them in `0.2.0` needs
/// types of its own in `runtime/bindings.rs`.
#[test]
fn the_shared_interfaces_are_unchanged_since_0_1_0() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit");
    for file in ["types.wit", "tool.wit", "host.wit"] {
        let read = |path: &Path| {
            let text = std::fs::read_to_string(path).unwrap();
            text.lines().skip(1).collect::<Vec<_>>().join("\n")
        };
        assert_eq!(
            read(&root.join(file)),
            read(&root.join("0.1.0").join(file)),
            "wit/{file} differs from wit/0.1.0/{file} beyond the package line"
        );
    }
}
