//! Where a plugin's component comes from and who must have signed it: the
//! `source` (or `path`) and `signers` of a `[[plugin]]`, and the operator's trust
//! policy, `[trust]`.
//!
//! Parsing fixes everything at load: each source is a file or an `oci://`
//! reference checked for shape; each signer names a key of `[trust.keys]`; every
//! key file is resolved against the file that names it (and read when the host
//! starts, by `supply`). By default a registry source needs a signature by a
//! trusted key and a file source does not, unless it names `signers` or
//! `trust.require_signature = true`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::ConfigError;

/// The scheme of a registry source.
pub const OCI_SCHEME: &str = "oci://";

/// The operator's trust policy (`[trust]`): the public keys that may sign
/// components, by name.
#[derive(Debug, Clone, Default)]
pub struct TrustConfig {
    /// Public key files (wasmsign2 / minisign-style Ed25519, PEM, DER or raw), by
    /// the name plugins use in `signers`.
    pub keys: BTreeMap<String, PathBuf>,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawTrust {
    #[serde(default)]
    keys: BTreeMap<String, PathBuf>,
    require_signature: Option<bool>,
}

/// The trust policy as written, resolved, and the global `require_signature`.
pub(super) fn resolve(
    raw: RawTrust,
    file: &Path,
    base: &Path,
) -> Result<(TrustConfig, Option<bool>), ConfigError> {
    for name in raw.keys.keys() {
        if !super::is_plain_name(name) {
            return Err(ConfigError::new(
                file,
                format!("trust.keys: key name {name:?} may hold only letters, digits, '_' and '-'"),
            ));
        }
    }
    let keys = raw
        .keys
        .into_iter()
        .map(|(name, path)| (name, base.join(path)))
        .collect();
    Ok((TrustConfig { keys }, raw.require_signature))
}

/// Where one plugin's component comes from.
pub(super) enum Origin {
    File(PathBuf),
    Registry(String),
}

/// The origin of `[[plugin]]` number `index`, from its `path` or `source`
/// (exactly one of them).
pub(super) fn origin(
    path: Option<PathBuf>,
    source: Option<String>,
    index: usize,
    file: &Path,
    base: &Path,
) -> Result<Origin, ConfigError> {
    match (path, source) {
        (Some(_), Some(_)) => Err(ConfigError::new(
            file,
            format!(
                "[[plugin]] number {index} has both `path` and `source`; keep one (`source` takes a path or an oci:// reference)"
            ),
        )),
        (None, None) => Err(ConfigError::new(
            file,
            format!(
                "[[plugin]] number {index} has no `path` to a .wasm component (or `source`, a path or an oci:// reference)"
            ),
        )),
        (Some(path), None) => Ok(Origin::File(base.join(path))),
        (None, Some(source)) => match source.strip_prefix(OCI_SCHEME) {
            Some(reference) => {
                check_reference(reference).map_err(|problem| {
                    ConfigError::new(
                        file,
                        format!("[[plugin]] number {index}: source {source:?}: {problem}"),
                    )
                })?;
                Ok(Origin::Registry(source))
            }
            None if source.contains("://") => Err(ConfigError::new(
                file,
                format!(
                    "[[plugin]] number {index}: source {source:?}: unknown scheme; use a path or oci://REGISTRY/REPOSITORY:TAG (or @sha256:DIGEST)"
                ),
            )),
            None => Ok(Origin::File(base.join(source))),
        },
    }
}

/// A registry reference's shape: `REGISTRY/REPOSITORY` with a tag or a digest.
fn check_reference(reference: &str) -> Result<(), String> {
    let Some((registry, rest)) = reference.split_once('/') else {
        return Err("names no repository; use oci://REGISTRY/REPOSITORY:TAG".into());
    };
    if registry.is_empty() || rest.is_empty() {
        return Err("names no registry or no repository; use oci://REGISTRY/REPOSITORY:TAG".into());
    }
    if let Some((_, digest)) = rest.split_once('@') {
        let hex = digest.strip_prefix("sha256:").unwrap_or_default();
        if hex.len() != 64 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(format!(
                "digest {digest:?} is not sha256: and 64 hexadecimal digits"
            ));
        }
    } else if !rest.rsplit('/').next().unwrap_or_default().contains(':') {
        return Err(
            "has neither a tag nor a digest; name one (e.g. :1.0 or @sha256:...) so what runs is never an implicit `latest`"
                .into(),
        );
    }
    Ok(())
}

/// The name a registry source gives its plugin: the repository's last segment.
pub(super) fn registry_name(source: &str) -> String {
    let reference = source.strip_prefix(OCI_SCHEME).unwrap_or(source);
    let repository = reference.split('@').next().unwrap_or_default();
    let last = repository.rsplit('/').next().unwrap_or_default();
    last.split(':').next().unwrap_or_default().to_owned()
}

/// Whether a plugin needs a signature, and its signers checked against the keys.
pub(super) fn signature_policy(
    plugin: &str,
    signers: &[String],
    from_registry: bool,
    trust: &TrustConfig,
    require: Option<bool>,
    file: &Path,
) -> Result<bool, ConfigError> {
    if let Some(unknown) = signers.iter().find(|s| !trust.keys.contains_key(*s)) {
        return Err(ConfigError::new(
            file,
            format!(
                "plugin {plugin}: signer {unknown:?} is not a key of [trust.keys] (it has: {}); add the key or fix the name",
                key_names(trust)
            ),
        ));
    }
    let required = !signers.is_empty() || require.unwrap_or(from_registry);
    if required && trust.keys.is_empty() {
        return Err(ConfigError::new(
            file,
            format!(
                "plugin {plugin}: needs a signature by a trusted key ({}), but [trust.keys] lists none; add one (toolhost keygen makes a pair) or set trust.require_signature = false",
                if from_registry {
                    "registry sources do by default"
                } else {
                    "trust.require_signature = true"
                }
            ),
        ));
    }
    Ok(required)
}

fn key_names(trust: &TrustConfig) -> String {
    if trust.keys.is_empty() {
        "none".into()
    } else {
        trust.keys.keys().cloned().collect::<Vec<_>>().join(", ")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_need_a_repository_and_a_tag_or_a_digest() {
        assert!(check_reference("127.0.0.1:5000/calc:1").is_ok());
        assert!(check_reference(&format!("r.example/t/calc@sha256:{}", "a".repeat(64))).is_ok());
        assert!(
            check_reference("127.0.0.1:5000/calc")
                .unwrap_err()
                .contains("neither a tag")
        );
        assert!(
            check_reference("calc:1")
                .unwrap_err()
                .contains("no repository")
        );
        assert!(
            check_reference("r.example/calc@sha256:12")
                .unwrap_err()
                .contains("64 hexadecimal")
        );
    }

    fn parse_error(toml: &str) -> String {
        crate::config::Config::parse(toml, Path::new("t.toml"), Path::new(""))
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn sources_and_signers_are_checked_at_load() {
        assert!(
            parse_error("[[plugin]]\npath = \"a.wasm\"\nsource = \"b.wasm\"\n")
                .contains("[[plugin]] number 1 has both `path` and `source`")
        );
        assert!(
            parse_error("[[plugin]]\nsource = \"https://x.example/a.wasm\"\n")
                .contains("unknown scheme")
        );
        assert!(
            parse_error("[[plugin]]\nsource = \"oci://r.example/calc\"\n")
                .contains("has neither a tag nor a digest")
        );
        assert!(
            parse_error("[[plugin]]\nsource = \"oci://r.example/calc:1\"\n").contains(
                "plugin calc: needs a signature by a trusted key (registry sources do by default), but [trust.keys] lists none"
            )
        );
        assert!(
            parse_error(
                "[trust.keys]\nalice = \"a.pub\"\n[[plugin]]\npath = \"calc.wasm\"\nsigners = [\"bob\"]\n"
            )
            .contains("plugin calc: signer \"bob\" is not a key of [trust.keys] (it has: alice)")
        );
        assert!(
            parse_error(
                "[trust.keys]\nalice = \"a.pub\"\n[[plugin]]\nsource = \"oci://r.example/calc:1\"\n[[plugin]]\nsource = \"oci://q.example/calc:2\"\n"
            )
            .contains("two plugins are named \"calc\"")
        );
    }

    #[test]
    fn signatures_are_required_for_registries_by_default_and_for_files_when_asked() {
        let config = crate::config::Config::parse(
            "[trust.keys]\nalice = \"a.pub\"\n[[plugin]]\nsource = \"oci://r.example/calc:1\"\n[[plugin]]\npath = \"hello.wasm\"\n[[plugin]]\npath = \"files.wasm\"\nsigners = [\"alice\"]\n",
            Path::new("t.toml"),
            Path::new(""),
        )
        .unwrap();
        let required: Vec<_> = config
            .plugins
            .iter()
            .map(|p| (p.name.as_str(), p.require_signature))
            .collect();
        assert_eq!(
            required,
            [("calc", true), ("hello", false), ("files", true)]
        );
        assert_eq!(
            config.plugins[0].registry.as_deref(),
            Some("oci://r.example/calc:1")
        );
    }

    #[test]
    fn a_registry_source_names_its_plugin_by_the_repository() {
        assert_eq!(registry_name("oci://127.0.0.1:5000/tools/calc:1"), "calc");
        assert_eq!(registry_name("oci://r.example/echo@sha256:00"), "echo");
    }
}
