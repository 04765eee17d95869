//! The `[store]` table: where large results are kept and which key signs their
//! links.
//!
//! The default needs no setup: SQLite in `host.data_dir`, with a signing key
//! generated beside it. Several replicas share one PostgreSQL database and one
//! key file.

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::ConfigError;

/// Where stored results live.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreBackend {
    /// One SQLite file (the default: `<data_dir>/results.sqlite3`).
    Sqlite { path: PathBuf },
    /// A PostgreSQL database, for several replicas.
    Postgres {
        /// Where the connection URL comes from.
        url: Secret,
        /// Connections each host keeps open at most.
        pool_size: usize,
        /// The CA (PEM) that signed the server's certificate, trusted instead of
        /// the system's CAs; `None` (the default) trusts the system's.
        ca_file: Option<PathBuf>,
    },
}

/// A value given literally in the file or by the name of an environment variable
/// (read when the store opens, so the file need not hold a password).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Secret {
    Literal(String),
    Env(String),
}

impl Secret {
    /// The value.
    ///
    /// # Errors
    ///
    /// When the environment variable is unset or not Unicode; the message names it.
    pub fn resolve(&self) -> Result<String, String> {
        match self {
            Secret::Literal(value) => Ok(value.clone()),
            Secret::Env(name) => std::env::var(name).map_err(|e| {
                format!("store.url_env: the environment variable {name} is not usable: {e}")
            }),
        }
    }
}

/// The store settings, with paths resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoreConfig {
    pub backend: StoreBackend,
    /// The HMAC key for links (hex), created when missing; replicas share it.
    pub signing_key_file: PathBuf,
}

#[derive(Deserialize, Default)]
#[serde(deny_unknown_fields)]
pub(super) struct RawStore {
    kind: Option<String>,
    path: Option<PathBuf>,
    url: Option<String>,
    url_env: Option<String>,
    pool_size: Option<usize>,
    ca_file: Option<PathBuf>,
    signing_key_file: Option<PathBuf>,
}

impl RawStore {
    /// Checks the table; relative paths are resolved against `data_dir`.
    pub(super) fn resolve(self, data_dir: &Path, file: &Path) -> Result<StoreConfig, ConfigError> {
        let error = |problem: String| ConfigError::new(file, problem);
        let backend = match self.kind.as_deref().unwrap_or("sqlite") {
            "sqlite" => {
                if let Some(key) = [
                    ("url", self.url.is_some()),
                    ("url_env", self.url_env.is_some()),
                    ("pool_size", self.pool_size.is_some()),
                    ("ca_file", self.ca_file.is_some()),
                ]
                .iter()
                .find_map(|(key, set)| set.then_some(key))
                {
                    return Err(error(format!(
                        "store.{key} applies to PostgreSQL only; set store.kind = \"postgres\" or remove store.{key}"
                    )));
                }
                StoreBackend::Sqlite {
                    path: data_dir.join(self.path.unwrap_or_else(|| "results.sqlite3".into())),
                }
            }
            "postgres" => {
                if self.path.is_some() {
                    return Err(error(
                        "store.path applies to SQLite only; PostgreSQL is named by store.url or store.url_env".into(),
                    ));
                }
                let url = match (self.url, self.url_env) {
                    (Some(url), None) => Secret::Literal(url),
                    (None, Some(name)) => Secret::Env(name),
                    _ => {
                        return Err(error(
                            "store.kind = \"postgres\" needs exactly one of store.url (postgres://user@host/db) and store.url_env (a variable holding it)".into(),
                        ));
                    }
                };
                let pool_size = self.pool_size.unwrap_or(8);
                if pool_size == 0 {
                    return Err(error("store.pool_size must be at least 1".into()));
                }
                StoreBackend::Postgres {
                    url,
                    pool_size,
                    ca_file: self.ca_file.map(|ca| data_dir.join(ca)),
                }
            }
            other => {
                return Err(error(format!(
                    "store.kind: unknown store {other:?}; use \"sqlite\" or \"postgres\""
                )));
            }
        };
        Ok(StoreConfig {
            backend,
            signing_key_file: data_dir.join(
                self.signing_key_file
                    .unwrap_or_else(|| "signing.key".into()),
            ),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<StoreConfig, String> {
        let raw: RawStore = toml::from_str(text).map_err(|e| e.to_string())?;
        raw.resolve(Path::new("/var/lib/toolhost"), Path::new("t.toml"))
            .map_err(|e| e.to_string())
    }

    #[test]
    fn the_default_is_sqlite_in_the_data_dir_with_a_key_beside_it() {
        let store = parse("").unwrap();
        assert_eq!(
            store.backend,
            StoreBackend::Sqlite {
                path: "/var/lib/toolhost/results.sqlite3".into()
            }
        );
        assert_eq!(
            store.signing_key_file,
            PathBuf::from("/var/lib/toolhost/signing.key")
        );
    }

    #[test]
    fn postgres_takes_a_url_or_the_variable_holding_one() {
        let store =
            parse("kind = \"postgres\"\nurl_env = \"DB\"\nsigning_key_file = \"/etc/k\"").unwrap();
        assert_eq!(
            store.backend,
            StoreBackend::Postgres {
                url: Secret::Env("DB".into()),
                pool_size: 8,
                ca_file: None,
            }
        );
        assert_eq!(store.signing_key_file, PathBuf::from("/etc/k"));
        // A relative CA file lies in data_dir, like every path of the table.
        let store = parse("kind = \"postgres\"\nurl = \"u\"\nca_file = \"db-ca.pem\"").unwrap();
        assert!(matches!(
            store.backend,
            StoreBackend::Postgres { ca_file: Some(ca), .. } if ca == Path::new("/var/lib/toolhost/db-ca.pem")
        ));
    }

    #[test]
    fn inconsistent_settings_are_refused_with_the_key_named() {
        for (text, expected) in [
            ("kind = \"postgres\"", "exactly one of store.url"),
            (
                "kind = \"postgres\"\nurl = \"a\"\nurl_env = \"B\"",
                "exactly one of store.url",
            ),
            (
                "url = \"postgres://x\"",
                "store.url applies to PostgreSQL only",
            ),
            (
                "pool_size = 3",
                "store.pool_size applies to PostgreSQL only",
            ),
            (
                "ca_file = \"ca.pem\"",
                "store.ca_file applies to PostgreSQL only",
            ),
            (
                "kind = \"postgres\"\nurl = \"a\"\npath = \"x\"",
                "store.path applies to SQLite only",
            ),
            (
                "kind = \"postgres\"\nurl = \"a\"\npool_size = 0",
                "at least 1",
            ),
            ("kind = \"redis\"", "unknown store \"redis\""),
        ] {
            let error = parse(text).unwrap_err();
            assert!(error.contains(expected), "{text}: {error}");
            assert!(error.starts_with("t.toml: "), "{error}");
        }
    }
}
