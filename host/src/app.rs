//! The composition root: where the configuration meets the parts it configures.
//!
//! The modules inward of the edge take plain values: the store knows no
//! `[store]` table and the mapper no `[host]` table. This module reads them and
//! builds the [`ResultStore`] and the [`Mapper`] that `main.rs` hands to the
//! server and the `call` command. It is the outermost layer of `host/src`: it
//! may import every module, and none imports it (see `docs/decisions.md`).

use std::sync::Arc;

pub mod telemetry;

use jiff::{SignedDuration, Timestamp};

use crate::config::{Config, StoreBackend};
use crate::render::Mapper;
use crate::store::{PostgresStore, ResultStore, Signer, SqliteStore};

/// Opens the store `[store]` names, with its signing key (created on first
/// start); links live for `host.result_ttl_secs`.
///
/// # Errors
///
/// A message naming the key file, the database file or the PostgreSQL problem,
/// fit to print at start-up.
pub async fn open_store(config: &Config) -> Result<Arc<dyn ResultStore>, String> {
    let ttl = SignedDuration::from_secs(config.host.result_ttl_secs);
    let key = &config.store.signing_key_file;
    let signer = Signer::load_or_create(key).map_err(|e| format!("{}: {e}", key.display()))?;
    Ok(match &config.store.backend {
        StoreBackend::Sqlite { path } => Arc::new(
            SqliteStore::open(path, signer, ttl, Timestamp::now).map_err(|e| e.to_string())?,
        ),
        StoreBackend::Postgres {
            url,
            pool_size,
            ca_file,
        } => Arc::new(
            PostgresStore::connect(
                &url.resolve()?,
                *pool_size,
                ca_file.as_deref(),
                signer,
                ttl,
                Timestamp::now,
            )
            .await
            .map_err(|e| {
                format!("{e}; check store.url and that the database accepts connections")
            })?,
        ),
    })
}

/// The mapper of `config`: its size limits (`host.size_limit` and
/// `[host.size_limits]`), offloading to `store`.
pub fn mapper(config: &Config, store: Arc<dyn ResultStore>) -> Mapper {
    Mapper::new(config.host.size_limits, Some(store))
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    use super::*;
    use crate::config::{Secret, StoreConfig};
    use crate::store::Offload;

    fn config_in(dir: &Path, backend: StoreBackend) -> Config {
        let mut config = Config::embedded();
        config.host.result_ttl_secs = 120;
        config.store = StoreConfig {
            backend,
            signing_key_file: dir.join("signing.key"),
        };
        config
    }

    fn sqlite_in(dir: &Path) -> Config {
        config_in(
            dir,
            StoreBackend::Sqlite {
                path: dir.join("results.sqlite3"),
            },
        )
    }

    async fn open_error(config: &Config) -> String {
        match open_store(config).await {
            Ok(_) => panic!("the store opened"),
            Err(message) => message,
        }
    }

    #[tokio::test]
    async fn sqlite_opens_with_a_new_key_and_links_live_for_the_configured_ttl() {
        let dir = tempfile::tempdir().unwrap();
        let config = sqlite_in(dir.path());
        let store = open_store(&config).await.unwrap();
        assert!(dir.path().join("signing.key").exists());
        let before = Timestamp::now();
        let kept = store
            .put(Offload {
                format: 1,
                body: "{}",
                data_size: Some(2),
                principal: Some("alice"),
            })
            .await
            .unwrap();
        let ttl = kept.expires_at.duration_since(before).as_secs();
        assert!((119..=121).contains(&ttl), "expires {ttl} s after the put");
        let row = store.get(&kept.uri, Some("alice")).await.unwrap();
        assert_eq!(row.map(|row| row.body), Some("{}".to_owned()));
    }

    #[tokio::test]
    async fn a_key_that_is_not_hex_is_refused_naming_its_file() {
        let dir = tempfile::tempdir().unwrap();
        let config = sqlite_in(dir.path());
        let key = &config.store.signing_key_file;
        crate::store::private::create_new(key).unwrap();
        std::fs::write(key, "not a key").unwrap();
        let message = open_error(&config).await;
        assert!(
            message.starts_with(&format!("{}: ", key.display()))
                && message.contains("does not hold a hex key"),
            "{message}"
        );
        assert!(!dir.path().join("results.sqlite3").exists(), "{message}");
    }

    #[tokio::test]
    async fn a_database_in_a_file_that_is_no_directory_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let blocker = dir.path().join("file");
        std::fs::write(&blocker, "").unwrap();
        let config = config_in(
            dir.path(),
            StoreBackend::Sqlite {
                path: blocker.join("results.sqlite3"),
            },
        );
        let message = open_error(&config).await;
        assert!(
            message.starts_with("result store: ")
                && message.contains(&blocker.display().to_string()),
            "{message}"
        );
    }

    #[tokio::test]
    async fn an_unset_url_variable_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let variable = "TOOLHOST_APP_TEST_URL_THAT_IS_NEVER_SET";
        let config = config_in(
            dir.path(),
            StoreBackend::Postgres {
                url: Secret::Env(variable.into()),
                pool_size: 1,
                ca_file: None,
            },
        );
        let message = open_error(&config).await;
        assert!(
            message.starts_with(&format!(
                "store.url_env: the environment variable {variable} is not usable"
            )),
            "{message}"
        );
    }
}
