//! A plugin's secrets at run time: each value read once at load, the placeholder
//! the guest holds instead, and the one place the value is put back: the header
//! values of a request to a destination the secret is bound to.
//!
//! A placeholder is `toolhost-secret-<name>-<32 hex>`, the hex an HMAC of the
//! plugin and secret names under a key drawn once per host process: stable across
//! the plugin's calls and hot loads, unguessable, and worthless outside this
//! process. Nothing here prints a value: [`Secret`]'s `Debug` shows the name only.

use std::sync::OnceLock;

use hmac::{Hmac, KeyInit, Mac};
use http::HeaderValue;
use sha2::Sha256;

use bytes::Bytes;

use super::rules::{Destination, HttpRules};
use super::scrub::Scrubber;
use crate::config::{SECRET_KEY_PREFIX, SecretConfig, SecretSource};

/// One secret: its value, its placeholder and where it may go.
pub struct Secret {
    name: String,
    value: Vec<u8>,
    placeholder: String,
    hosts: HttpRules,
}

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Secret")
            .field("name", &self.name)
            .field("value", &"<redacted>")
            .finish_non_exhaustive()
    }
}

/// The secrets of one plugin.
#[derive(Debug, Default)]
pub struct Secrets {
    secrets: Vec<Secret>,
}

/// The key of this process's placeholders.
fn process_key() -> &'static [u8; 32] {
    static KEY: OnceLock<[u8; 32]> = OnceLock::new();
    KEY.get_or_init(|| {
        let mut key = [0; 32];
        getrandom::fill(&mut key).expect("the system's random source");
        key
    })
}

/// The placeholder of secret `name` of `plugin` in this process.
fn placeholder(plugin: &str, name: &str) -> String {
    let mut mac = Hmac::<Sha256>::new_from_slice(process_key()).expect("any key length");
    mac.update(plugin.as_bytes());
    mac.update(&[0]);
    mac.update(name.as_bytes());
    let tag = mac.finalize().into_bytes();
    format!("toolhost-secret-{name}-{}", hex::encode(&tag[..16]))
}

impl Secrets {
    /// Reads the value of each of `configs` (from its environment variable, or its
    /// file, which must be mode 0600) and parses its destinations.
    ///
    /// # Errors
    ///
    /// A message naming the secret and what is wrong: an unset variable, a file
    /// that cannot be read or that others may read, a value that cannot be a
    /// header value, a malformed destination.
    pub fn load(plugin: &str, configs: &[SecretConfig]) -> Result<Secrets, String> {
        let mut secrets = Vec::new();
        for config in configs {
            let name = &config.name;
            let value = match config.source() {
                SecretSource::Env(var) => std::env::var(&var)
                    .map_err(|e| {
                        format!("secret {name:?}: the environment variable {var} is not usable ({e}); set it before starting toolhost")
                    })?
                    .into_bytes(),
                SecretSource::File(path) => {
                    crate::store::private::check(&path, &format!("the file of secret {name:?}"))
                        .map_err(|e| format!("secret {name:?}: {e}"))?;
                    let mut bytes = std::fs::read(&path).map_err(|e| {
                        format!("secret {name:?}: cannot read {}: {e}", path.display())
                    })?;
                    while bytes.last().is_some_and(|b| matches!(b, b'\n' | b'\r')) {
                        bytes.pop();
                    }
                    bytes
                }
            };
            if value.is_empty() || HeaderValue::from_bytes(&value).is_err() {
                return Err(format!(
                    "secret {name:?}: the value is empty or holds bytes a header value cannot (line breaks, NUL, control characters)"
                ));
            }
            let hosts = HttpRules::parse(&format!("secret {name:?} hosts"), &config.hosts)?;
            secrets.push(Secret {
                placeholder: placeholder(plugin, name),
                name: name.clone(),
                value,
                hosts,
            });
        }
        Ok(Secrets { secrets })
    }

    pub fn is_empty(&self) -> bool {
        self.secrets.is_empty()
    }

    /// The `get-config` entries of the placeholders: `secret:<name>` for each.
    pub fn config_entries(&self) -> impl Iterator<Item = (String, String)> + '_ {
        self.secrets.iter().map(|secret| {
            (
                format!("{SECRET_KEY_PREFIX}{}", secret.name),
                secret.placeholder.clone(),
            )
        })
    }

    /// Puts the value of every secret bound to `destination` in place of its
    /// placeholder in `headers`' values; other placeholders stay as they are.
    /// Returns the secrets put in (their names for the log, never a value), and
    /// the scrubber that takes their values out of the answer.
    pub fn substitute(
        &self,
        destination: &Destination<'_>,
        headers: &mut http::HeaderMap,
    ) -> (Vec<&str>, Option<Scrubber>) {
        let mut used = Vec::new();
        let mut pairs = Vec::new();
        for secret in self.secrets.iter().filter(|s| s.hosts.matches(destination)) {
            let placeholder = secret.placeholder.as_bytes();
            for value in headers.values_mut() {
                let bytes = value.as_bytes();
                if !contains(bytes, placeholder) {
                    continue;
                }
                let replaced = replace(bytes, placeholder, &secret.value);
                // Both the value and the rest of the header are valid header bytes.
                if let Ok(mut new) = HeaderValue::from_bytes(&replaced) {
                    new.set_sensitive(true);
                    *value = new;
                    if !used.contains(&secret.name.as_str()) {
                        used.push(secret.name.as_str());
                        pairs.push((
                            Bytes::copy_from_slice(&secret.value),
                            Bytes::copy_from_slice(placeholder),
                        ));
                    }
                }
            }
        }
        (used, Scrubber::new(pairs))
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

fn replace(haystack: &[u8], needle: &[u8], with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(haystack.len() + with.len());
    let mut rest = haystack;
    while let Some(at) = rest.windows(needle.len()).position(|w| w == needle) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(with);
        rest = &rest[at + needle.len()..];
    }
    out.extend_from_slice(rest);
    out
}

#[cfg(test)]
mod tests {
    use http::Method;

    use super::*;

    fn secrets() -> Secrets {
        // SAFETY: a variable only this test reads, set before it is read.
        unsafe { std::env::set_var("TOOLHOST_TEST_SECRET_UNIT", "s3cr3t-value") };
        Secrets::load(
            "web",
            &[SecretConfig {
                name: "api".into(),
                from_env: Some("TOOLHOST_TEST_SECRET_UNIT".into()),
                from_file: None,
                hosts: vec!["https://api.example.com/*".into()],
            }],
        )
        .unwrap()
    }

    fn to(host: &str) -> Destination<'_> {
        Destination {
            method: &Method::GET,
            https: true,
            host,
            port: 443,
            path: "/user",
        }
    }

    #[test]
    fn the_value_replaces_the_placeholder_only_for_a_bound_destination() {
        let secrets = secrets();
        let (key, placeholder) = secrets.config_entries().next().unwrap();
        assert_eq!(key, "secret:api");
        assert!(
            placeholder.starts_with("toolhost-secret-api-"),
            "{placeholder}"
        );
        assert!(!placeholder.contains("s3cr3t"));
        let headers = || {
            let mut headers = http::HeaderMap::new();
            headers.insert(
                "authorization",
                HeaderValue::from_str(&format!("Bearer {placeholder}")).unwrap(),
            );
            headers.insert("x-other", HeaderValue::from_static("plain"));
            headers
        };

        let mut bound = headers();
        let (used, scrubber) = secrets.substitute(&to("api.example.com"), &mut bound);
        assert_eq!(used, ["api"]);
        assert_eq!(
            scrubber
                .unwrap()
                .replace_all(b"echo: Bearer s3cr3t-value")
                .unwrap(),
            format!("echo: Bearer {placeholder}").as_bytes()
        );
        assert_eq!(bound["authorization"], "Bearer s3cr3t-value");
        assert!(bound["authorization"].is_sensitive());
        assert_eq!(bound["x-other"], "plain");

        let mut unbound = headers();
        let (used, scrubber) = secrets.substitute(&to("evil.example.com"), &mut unbound);
        assert!(used.is_empty() && scrubber.is_none());
        assert_eq!(
            unbound["authorization"],
            format!("Bearer {placeholder}").as_str()
        );
    }

    #[test]
    fn placeholders_are_per_plugin_and_debug_shows_no_value() {
        assert_ne!(placeholder("a", "api"), placeholder("b", "api"));
        assert_eq!(placeholder("a", "api"), placeholder("a", "api"));
        let shown = format!("{:?}", secrets());
        assert!(!shown.contains("s3cr3t"), "{shown}");
    }

    #[test]
    fn a_loose_or_missing_source_is_refused_naming_the_secret() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("token");
        std::fs::write(&file, "abc\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        let config = |from_env: Option<&str>, from_file| SecretConfig {
            name: "tok".into(),
            from_env: from_env.map(str::to_owned),
            from_file,
            hosts: vec!["https://api.example.com/*".into()],
        };
        let err = Secrets::load("p", &[config(None, Some(file.clone()))]).unwrap_err();
        assert!(
            err.contains("secret \"tok\"") && err.contains("chmod 600"),
            "{err}"
        );
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
        }
        let loaded = Secrets::load("p", &[config(None, Some(file))]).unwrap();
        assert_eq!(loaded.secrets[0].value, b"abc");
        let err =
            Secrets::load("p", &[config(Some("TOOLHOST_TEST_UNSET_VARIABLE"), None)]).unwrap_err();
        assert!(err.contains("TOOLHOST_TEST_UNSET_VARIABLE"), "{err}");
    }
}
