//! The WIT package in `wit/` parses, and has the worlds and interfaces the host
//! links against. A broken WIT fails here before it fails in a guest build.

use std::path::Path;

use wit_parser::Resolve;

#[test]
fn wit_package_parses_with_both_worlds() {
    let mut resolve = Resolve::default();
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../wit");
    let (package, _) = resolve
        .push_dir(&dir)
        .unwrap_or_else(|e| panic!("wit/ does not parse: {e:#}"));
    let package = &resolve.packages[package];
    assert_eq!(package.name.to_string(), "toolhost:plugin@0.1.0");
    for world in ["plugin", "legacy-app"] {
        assert!(
            package.worlds.contains_key(world),
            "world {world} is missing"
        );
    }
    for interface in ["types", "tool", "app", "host"] {
        assert!(
            package.interfaces.contains_key(interface),
            "interface {interface} is missing"
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
            "type {ty} is missing from interface types"
        );
    }
}
