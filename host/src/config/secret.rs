//! `[[plugin.secret]]` tables: credentials a plugin's requests carry without the
//! guest ever holding them.
//!
//! A secret's value comes from an environment variable or from a file only its
//! owner may read (mode 0600), never from the configuration itself, which may be
//! shared. It is bound to one plugin and to destination patterns (the syntax of
//! `policy.http`). The guest reads a placeholder with `get-config("secret:<name>")`;
//! the runtime puts the value in place of the placeholder only in the header values
//! of a request to a bound destination (`runtime/http`). Secrets are configured in
//! the operator's file only: a sidecar in a plugin directory cannot name one.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::ConfigError;

/// The `get-config` key prefix under which a guest finds its secrets'
/// placeholders; `policy.config` keys may not start with it.
pub const SECRET_KEY_PREFIX: &str = "secret:";

/// One secret as the operator wrote it (the value is read at load, by the runtime).
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SecretConfig {
    /// What the guest asks for: `get-config("secret:<name>")`.
    pub name: String,
    /// The environment variable holding the value.
    #[serde(default)]
    pub from_env: Option<String>,
    /// A file holding the value (trailing line breaks are not part of it); it
    /// must be readable by its owner only (mode 0600).
    #[serde(default)]
    pub from_file: Option<PathBuf>,
    /// The destinations that may receive the value (`policy.http` syntax).
    pub hosts: Vec<String>,
}

/// Where a secret's value comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SecretSource {
    Env(String),
    File(PathBuf),
}

impl SecretConfig {
    /// Where the value comes from (checked at parse: exactly one source).
    pub fn source(&self) -> SecretSource {
        match (&self.from_env, &self.from_file) {
            (Some(name), _) => SecretSource::Env(name.clone()),
            (None, Some(path)) => SecretSource::File(path.clone()),
            (None, None) => unreachable!("checked when the configuration is parsed"),
        }
    }
}

/// Checks the secrets of plugin `plugin` and resolves their files against `base`.
pub(super) fn check(
    plugin: &str,
    secrets: &mut [SecretConfig],
    file: &Path,
    base: &Path,
) -> Result<(), ConfigError> {
    let error = |name: &str, problem: String| {
        ConfigError::new(
            file,
            format!("plugin {plugin}: [[plugin.secret]] {name:?}: {problem}"),
        )
    };
    for i in 0..secrets.len() {
        let secret = &secrets[i];
        let name = secret.name.as_str();
        if !super::is_plain_name(name) {
            return Err(error(
                name,
                "the name may hold only letters, digits, '_' and '-' (the guest asks for get-config(\"secret:<name>\"))".into(),
            ));
        }
        if secrets[..i].iter().any(|other| other.name == secret.name) {
            return Err(error(
                name,
                "is configured twice; give each secret its own name".into(),
            ));
        }
        if secret.from_env.is_some() == secret.from_file.is_some() {
            return Err(error(
                name,
                "needs exactly one of `from_env` (an environment variable) and `from_file` (a file of mode 0600); a value is never written in the configuration".into(),
            ));
        }
        if secret.hosts.is_empty() {
            return Err(error(
                name,
                "`hosts` is empty, so no request could carry it; name the destinations, e.g. hosts = [\"https://api.example.com/*\"]".into(),
            ));
        }
        let secret = &mut secrets[i];
        if let Some(path) = &mut secret.from_file {
            *path = base.join(&*path);
        }
    }
    Ok(())
}
