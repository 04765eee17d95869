//! The rules that keep directory grants (`policy.preopens`) away from what the host
//! loads and from each other, checked on the real filesystem each time a
//! configuration is loaded: at start and at every hot load.
//!
//! A grant is refused, with an error naming both paths, when it is, contains or
//! lies inside:
//! - a plugin directory (`host.plugin_dirs`): a guest could install code and a
//!   sidecar granting it anything, which hot load would run;
//! - `host.data_dir`: the compile cache (native code the host loads), the result
//!   store and its keys;
//! - the directory of the toolhost binary;
//!
//! when it is or contains the configuration file's directory (when there is a file:
//! the configuration decides every grant), or is writable and lies inside it; or when
//! it contains a configured component, the result store or its signing key, the file
//! of a secret (`[[plugin.secret]] from_file`) or the CA trusted for guests' HTTPS.
//! (A read-only grant may lie inside the configuration's directory: the defaults,
//! named as a file, grant `guest-examples/files/sample-data` beside themselves, and
//! everything the configuration names is protected on its own.)
//! Between plugins, a writable grant may overlap no other grant (of another plugin,
//! or another of the same plugin's); read-only grants may overlap each other.
//!
//! Every path is canonicalised (symlinks resolved) before comparing, and compared as
//! written too. A grant whose path *passes through* a writable grant (a prefix of it
//! resolves inside one) is refused as well: the guest holding the writable grant
//! could replace that step with a symlink before the next load. The canonical path
//! replaces the configured one, so the directory the runtime opens is the one
//! checked here. The same holds for the protected paths: one that passes through a
//! writable grant is refused.

use std::path::{Component, Path, PathBuf};

use super::{Config, ConfigError, StoreBackend};

/// A path grants must keep away from.
struct Protected {
    /// What it is, with its key (`host.data_dir`).
    what: String,
    /// Why a grant there is dangerous.
    why: &'static str,
    /// As configured (absolute, `..` removed) and canonical.
    written: PathBuf,
    resolved: PathBuf,
    kind: Kind,
}

/// How a grant may not overlap a protected path.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    /// A directory: no grant is, contains or lies inside it.
    Dir,
    /// The configuration's directory: no grant is or contains it, and no writable
    /// grant lies inside it.
    ConfigDir,
    /// A file: no grant contains it.
    File,
}

/// One grant, resolved.
struct Grant {
    plugin: String,
    source: PathBuf,
    index: usize,
    written: PathBuf,
    resolved: PathBuf,
    /// The canonical form of every prefix of the path as written.
    steps: Vec<PathBuf>,
    writable: bool,
}

/// Checks every grant of `config` against the rules above and replaces each
/// grant's host path by its canonical form. `config_file` is the file the
/// configuration was read from (`None` for the embedded defaults).
///
/// # Errors
///
/// A [`ConfigError`] naming the file that configures the offending grant, the key,
/// and both paths; or a grant that is not a directory.
pub fn check(config: &mut Config, config_file: Option<&Path>) -> Result<(), ConfigError> {
    let protected = protected(config, config_file);
    let mut grants = Vec::new();
    for plugin in &config.plugins {
        for (index, preopen) in plugin.policy.preopens.iter().enumerate() {
            let written = absolute(&preopen.host);
            let resolved = std::fs::canonicalize(&written)
                .ok()
                .filter(|p| p.is_dir())
                .ok_or_else(|| {
                    ConfigError::new(
                        &plugin.configured_in,
                        format!(
                            "plugin {}: policy.preopens: {} is not a directory on the host; create it or fix `host`",
                            plugin.name,
                            preopen.host.display()
                        ),
                    )
                })?;
            grants.push(Grant {
                plugin: plugin.name.clone(),
                source: plugin.configured_in.clone(),
                index,
                steps: steps(&written),
                written,
                resolved,
                writable: preopen.writable,
            });
        }
    }
    for grant in &grants {
        for root in &protected {
            let contains = root.resolved.starts_with(&grant.resolved)
                || root.written.starts_with(&grant.written);
            let inside = grant.resolved.starts_with(&root.resolved)
                || grant.written.starts_with(&root.written);
            let through = grant.writable
                && steps(&root.written)
                    .iter()
                    .any(|step| step.starts_with(&grant.resolved));
            let hit = through
                || match root.kind {
                    Kind::Dir => contains || inside,
                    Kind::ConfigDir => contains || (inside && grant.writable),
                    Kind::File => contains,
                };
            if hit {
                return Err(ConfigError::new(
                    &grant.source,
                    format!(
                        "plugin {}: policy.preopens: the grant {} overlaps {} {}: {}; grant a directory outside it",
                        grant.plugin,
                        shown(&grant.written, &grant.resolved),
                        root.what,
                        shown(&root.written, &root.resolved),
                        root.why
                    ),
                ));
            }
        }
    }
    for (i, writable) in grants.iter().enumerate().filter(|(_, g)| g.writable) {
        for (j, other) in grants.iter().enumerate() {
            if i == j {
                continue;
            }
            let through = other
                .steps
                .iter()
                .any(|step| step.starts_with(&writable.resolved));
            if overlap(&writable.resolved, &other.resolved)
                || overlap(&writable.written, &other.written)
                || through
            {
                let whose = if writable.plugin == other.plugin && writable.source == other.source {
                    format!("its own grant number {}", other.index + 1)
                } else {
                    format!(
                        "the grant of plugin {} ({})",
                        other.plugin,
                        other.source.display()
                    )
                };
                return Err(ConfigError::new(
                    &writable.source,
                    format!(
                        "plugin {}: policy.preopens: the writable grant {} overlaps {whose}, {}: through a writable directory one guest changes what another reads, or swaps a path for a symlink; make both read-only or grant directories apart",
                        writable.plugin,
                        shown(&writable.written, &writable.resolved),
                        shown(&other.written, &other.resolved),
                    ),
                ));
            }
        }
    }
    let mut resolved = grants.into_iter().map(|g| g.resolved);
    for plugin in &mut config.plugins {
        for preopen in &mut plugin.policy.preopens {
            preopen.host = resolved.next().expect("one resolved path per grant");
        }
    }
    Ok(())
}

/// Everything grants must keep away from.
fn protected(config: &Config, config_file: Option<&Path>) -> Vec<Protected> {
    let mut roots = Vec::new();
    let mut add = |what: String, why: &'static str, path: &Path, kind: Kind| {
        let written = absolute(path);
        let resolved = resolve(&written);
        roots.push(Protected {
            what,
            why,
            written,
            resolved,
            kind,
        });
    };
    for dir in &config.host.plugin_dirs {
        add(
            "the plugin directory (host.plugin_dirs)".into(),
            "a guest could install a component and a sidecar granting it anything, and hot load would run it",
            dir,
            Kind::Dir,
        );
    }
    add(
        "the data directory (host.data_dir)".into(),
        "it holds the compile cache (native code the host runs), the result store and keys",
        &config.host.data_dir,
        Kind::Dir,
    );
    if let Some(file) = config_file {
        add(
            format!("the directory of the configuration {}", file.display()),
            "the configuration decides every grant, and names the components to load",
            file.parent().unwrap_or(Path::new("")),
            Kind::ConfigDir,
        );
    }
    if let Some(dir) = std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(Path::to_path_buf))
    {
        add(
            "the directory of the toolhost binary".into(),
            "a guest could change the host itself",
            &dir,
            Kind::Dir,
        );
    }
    for (name, key) in &config.trust.keys {
        add(
            format!("the trusted key {name} ([trust.keys])"),
            "a guest could swap in its own key and have its own components accepted",
            key,
            Kind::File,
        );
    }
    // A registry source's copy lives in the data directory, protected above.
    for plugin in config.plugins.iter().filter(|p| p.registry.is_none()) {
        add(
            format!("the component of plugin {}", plugin.name),
            "a guest could replace code the host loads",
            &plugin.path,
            Kind::File,
        );
    }
    if let StoreBackend::Sqlite { path } = &config.store.backend {
        add(
            "the result store (store.path)".into(),
            "stored results belong to their callers",
            path,
            Kind::File,
        );
    }
    for plugin in &config.plugins {
        for secret in &plugin.secrets {
            if let Some(path) = &secret.from_file {
                add(
                    format!(
                        "the file of secret {:?} of plugin {}",
                        secret.name, plugin.name
                    ),
                    "a guest that reads it holds a credential the host keeps from guests",
                    path,
                    Kind::File,
                );
            }
        }
    }
    if let Some(ca) = &config.host.http_ca_file {
        add(
            "the CA trusted for guests' HTTPS (host.http_ca_file)".into(),
            "a guest that changes it can make the host trust a server of its own",
            ca,
            Kind::File,
        );
    }
    add(
        "the signing key (store.signing_key_file)".into(),
        "whoever reads it can forge links to stored results",
        &config.store.signing_key_file,
        Kind::File,
    );
    roots
}

/// Whether one path is, contains or lies inside the other (by whole components).
fn overlap(a: &Path, b: &Path) -> bool {
    a.starts_with(b) || b.starts_with(a)
}

/// `path` made absolute against the current directory, `.` and `..` removed as
/// written (the canonical form is computed apart).
fn absolute(path: &Path) -> PathBuf {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().unwrap_or_default().join(path)
    };
    let mut out = PathBuf::new();
    for component in joined.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// The canonical form of `path`; for a path that does not exist (yet), the
/// canonical form of its nearest existing ancestor with the rest appended.
fn resolve(path: &Path) -> PathBuf {
    let mut missing = Vec::new();
    let mut current = path;
    loop {
        if let Ok(canonical) = std::fs::canonicalize(current) {
            return missing
                .iter()
                .rev()
                .fold(canonical, |path: PathBuf, part| path.join(part));
        }
        match (current.parent(), current.file_name()) {
            (Some(parent), Some(name)) => {
                missing.push(name.to_owned());
                current = parent;
            }
            _ => return path.to_path_buf(),
        }
    }
}

/// The canonical form of each prefix of `path`, the root excluded.
fn steps(path: &Path) -> Vec<PathBuf> {
    let mut prefix = PathBuf::new();
    let mut steps = Vec::new();
    for component in path.components() {
        prefix.push(component);
        if matches!(component, Component::Normal(_)) {
            steps.push(resolve(&prefix));
        }
    }
    steps
}

/// A path as written, and what it resolves to when that differs.
fn shown(written: &Path, resolved: &Path) -> String {
    if written == resolved {
        written.display().to_string()
    } else {
        format!(
            "{} (resolving to {})",
            written.display(),
            resolved.display()
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Setup {
        dir: tempfile::TempDir,
    }

    impl Setup {
        fn new() -> Setup {
            let dir = tempfile::tempdir().unwrap();
            for sub in ["conf", "data", "plugins", "shared/ref", "other"] {
                std::fs::create_dir_all(dir.path().join(sub)).unwrap();
            }
            Setup { dir }
        }

        fn path(&self, sub: &str) -> PathBuf {
            self.dir.path().join(sub)
        }

        /// A configuration in conf/ with `plugins` (TOML of `[[plugin]]` tables).
        fn check(&self, plugins: &str) -> Result<Config, String> {
            let base = self.path("conf");
            let file = base.join("toolhost.toml");
            let text = format!(
                "[host]\ndata_dir = \"../data\"\nplugin_dirs = [\"../plugins\"]\n{plugins}"
            );
            let mut config = Config::parse(&text, &file, &base).map_err(|e| e.to_string())?;
            check(&mut config, Some(&file)).map_err(|e| e.to_string())?;
            Ok(config)
        }
    }

    fn plugin(name: &str, grants: &[(&str, bool)]) -> String {
        let mut text = format!("[[plugin]]\nname = \"{name}\"\npath = \"/opt/{name}.wasm\"\n");
        for (host, writable) in grants {
            text.push_str(&format!(
                "[[plugin.policy.preopens]]\nhost = \"{host}\"\nguest = \"/d\"\nwritable = {writable}\n"
            ));
        }
        text
    }

    #[test]
    fn grants_apart_from_everything_load_with_their_canonical_path() {
        let setup = Setup::new();
        std::os::unix::fs::symlink(setup.path("other"), setup.path("link")).unwrap();
        let config = setup
            .check(&(plugin("a", &[("../link", true)]) + &plugin("b", &[("../shared", false)])))
            .unwrap();
        let a = &config.plugins[0].policy.preopens[0].host;
        assert_eq!(a, &std::fs::canonicalize(setup.path("other")).unwrap());
    }

    #[test]
    fn a_grant_on_or_around_what_the_host_loads_is_refused_naming_both_paths() {
        let setup = Setup::new();
        std::fs::create_dir_all(setup.path("plugins/sub")).unwrap();
        std::fs::create_dir_all(setup.path("conf/sub")).unwrap();
        for (grant, what) in [
            ("../plugins", "plugin directory"),
            ("../plugins/sub", "plugin directory"),
            ("..", "plugin directory"),
            ("../data", "data directory"),
            (".", "directory of the configuration"),
            ("/", "plugin directory"),
        ] {
            let error = setup
                .check(&plugin("a", &[(grant, false)]))
                .expect_err(grant);
            assert!(
                error.contains("toolhost.toml: plugin a: policy.preopens") && error.contains(what),
                "{grant}: {error}"
            );
        }
        // Inside the configuration's directory: read-only yes, writable no.
        setup.check(&plugin("a", &[("sub", false)])).unwrap();
        let error = setup.check(&plugin("a", &[("sub", true)])).unwrap_err();
        assert!(error.contains("directory of the configuration"), "{error}");
        let error = setup
            .check(&plugin("a", &[("../plugins", true)]))
            .unwrap_err();
        assert!(
            error.contains(&absolute(&setup.path("plugins")).display().to_string())
                && error.contains("hot load"),
            "{error}"
        );
    }

    #[test]
    fn a_writable_grant_may_overlap_no_other_grant() {
        let setup = Setup::new();
        // Read-only grants may overlap.
        setup
            .check(
                &(plugin("a", &[("../shared", false)]) + &plugin("b", &[("../shared/ref", false)])),
            )
            .unwrap();
        // Issue #12, attack 1: A writable on DIR, B read-only on DIR/ref.
        let error = setup
            .check(
                &(plugin("a", &[("../shared", true)]) + &plugin("b", &[("../shared/ref", false)])),
            )
            .unwrap_err();
        assert!(
            error.contains("plugin a: policy.preopens: the writable grant")
                && error.contains("plugin b")
                && error.contains(&setup.path("shared/ref").display().to_string()),
            "{error}"
        );
        // The other way round, and within one plugin.
        assert!(
            setup
                .check(
                    &(plugin("a", &[("../shared", false)])
                        + &plugin("b", &[("../shared/ref", true)]))
                )
                .is_err()
        );
        let error = setup
            .check(&plugin(
                "a",
                &[("../shared", true), ("../shared/ref", false)],
            ))
            .unwrap_err();
        assert!(error.contains("its own grant number 2"), "{error}");
    }

    #[test]
    fn a_grant_reached_through_a_writable_grant_is_refused() {
        let setup = Setup::new();
        // other/ is writable for a; b's path goes through a symlink a could have
        // planted there (other/hop -> ../shared).
        std::os::unix::fs::symlink("../shared", setup.path("other/hop")).unwrap();
        std::os::unix::fs::symlink(setup.path("other"), setup.path("via")).unwrap();
        let error = setup
            .check(
                &(plugin("a", &[("../other", true)]) + &plugin("b", &[("../via/hop/ref", false)])),
            )
            .unwrap_err();
        assert!(error.contains("the writable grant"), "{error}");
    }

    #[test]
    fn a_missing_grant_names_the_file_and_key() {
        let setup = Setup::new();
        let error = setup
            .check(&plugin("a", &[("../nowhere", false)]))
            .unwrap_err();
        assert!(
            error.contains("toolhost.toml: plugin a: policy.preopens")
                && error.contains("not a directory"),
            "{error}"
        );
    }
}
