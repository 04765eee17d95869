//! [`PostgresStore`]: stored results in PostgreSQL, the store for several host
//! replicas behind one load balancer.
//!
//! Rows are the ones [`super::SqliteStore`] keeps (the serialized result with its
//! format version, MIME, size, principal, creation and expiry) in the table
//! `toolhost_results`, created on first connect. Every write is one autocommitted
//! statement: PostgreSQL acknowledges it only once its WAL record is flushed (the
//! default `synchronous_commit = on`), so a link handed out survives a crash of the
//! host and of the database. Replicas sharing this database and the signing key
//! read each other's links; nothing else is shared between them.
//!
//! Connections come from a small pool (`deadpool-postgres`) and speak TLS as the
//! URL's `sslmode` says ([`super::postgres_tls`]: rustls, the system's CAs or
//! `store.ca_file`); `verify-full` is the mode for a database on the network.

use std::time::Duration;

use std::path::Path;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod, Runtime};
use jiff::{SignedDuration, Timestamp};

use super::postgres_tls::{self, SslMode};
use super::row::{MIME, NewRow};
use super::signing::Signer;
use super::{Kept, Offload, ResultStore, StoreError, StoreFuture, StoredRow, TaskRow, TaskSummary};

/// Serialises the schema setup of replicas starting at once (an arbitrary,
/// fixed advisory lock number: "toolhost" in ASCII).
const SCHEMA_LOCK: i64 = 0x746f_6f6c_686f_7374;

const SCHEMA: &str = "SET LOCAL client_min_messages = warning;
    CREATE TABLE IF NOT EXISTS toolhost_results (
        id TEXT PRIMARY KEY,
        format INTEGER NOT NULL,
        body TEXT NOT NULL,
        mime TEXT NOT NULL,
        size BIGINT,
        principal TEXT,
        created_at BIGINT NOT NULL,
        expires_at BIGINT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS toolhost_results_expiry ON toolhost_results (expires_at);
    CREATE TABLE IF NOT EXISTS toolhost_tasks (
        id TEXT PRIMARY KEY,
        principal TEXT,
        status TEXT NOT NULL,
        body TEXT,
        call TEXT NOT NULL,
        created_ms BIGINT NOT NULL,
        updated_ms BIGINT NOT NULL,
        expires_at BIGINT NOT NULL,
        version BIGINT NOT NULL
    );
    CREATE INDEX IF NOT EXISTS toolhost_tasks_expiry ON toolhost_tasks (expires_at);
    CREATE INDEX IF NOT EXISTS toolhost_tasks_principal ON toolhost_tasks (principal, id);";

const INSERT: &str = "INSERT INTO toolhost_results
    (id, format, body, mime, size, principal, created_at, expires_at)
    VALUES ($1, $2, $3, $4, $5, $6, $7, $8)";

/// Results in a PostgreSQL database.
pub struct PostgresStore {
    pool: Pool,
    signer: Signer,
    ttl: SignedDuration,
    clock: fn() -> Timestamp,
}

fn failed(what: &str) -> impl Fn(tokio_postgres::Error) -> StoreError + '_ {
    move |e| StoreError(format!("{what}: {}", chain(&e)))
}

/// An error with its causes (`tokio-postgres` and the pool show only the
/// outermost: "db error", "error performing TLS handshake").
fn chain(error: &dyn std::error::Error) -> String {
    let mut text = error.to_string();
    let mut source = error.source();
    while let Some(cause) = source {
        let cause_text = cause.to_string();
        if !text.ends_with(&cause_text) {
            text.push_str(": ");
            text.push_str(&cause_text);
        }
        source = cause.source();
    }
    text
}

impl PostgresStore {
    /// Connects to `url` (`postgres://user:password@host:port/database`, or the
    /// key=value form) with the TLS its `sslmode` asks for, trusting `ca_file`
    /// (PEM) or the system's CAs, creates the table when it is missing, and keeps
    /// up to `pool_size` connections; links live for `ttl`.
    ///
    /// # Errors
    ///
    /// A [`StoreError`] naming the problem when the URL does not parse, the CA
    /// file is unusable, the database cannot be reached within 10 s (or its
    /// certificate is refused), or the table cannot be created.
    pub async fn connect(
        url: &str,
        pool_size: usize,
        ca_file: Option<&Path>,
        signer: Signer,
        ttl: SignedDuration,
        clock: fn() -> Timestamp,
    ) -> Result<PostgresStore, StoreError> {
        let (url, mode) = postgres_tls::split_sslmode(url)?;
        let mut config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| StoreError(format!("PostgreSQL URL: {e}")))?;
        let local = config
            .get_hosts()
            .iter()
            .all(|host| !matches!(host, tokio_postgres::config::Host::Tcp(_)));
        // A Unix socket never speaks TLS (as in libpq): it is a local file.
        let mode = if local && !config.get_hosts().is_empty() {
            SslMode::Disable
        } else {
            mode
        };
        config.ssl_mode(mode.negotiation());
        if !mode.authenticates(ca_file) {
            tracing::warn!(
                sslmode = ?mode,
                error.type = "store_unauthenticated",
                "the PostgreSQL store does not check whom it talks to; on a network, use sslmode=verify-full with store.ca_file"
            );
        }
        let tls = postgres_tls::connector(mode, ca_file)?;
        let manager = Manager::from_config(
            config,
            tls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let timeout = Some(Duration::from_secs(10));
        let pool = Pool::builder(manager)
            .max_size(pool_size.max(1))
            .wait_timeout(timeout)
            .create_timeout(timeout)
            .recycle_timeout(timeout)
            .runtime(Runtime::Tokio1)
            .build()
            .map_err(|e| StoreError(format!("PostgreSQL pool: {e}")))?;
        let store = PostgresStore {
            pool,
            signer,
            ttl,
            clock,
        };
        let mut client = store.client().await?;
        let setup = client
            .transaction()
            .await
            .map_err(failed("setting up the results table"))?;
        setup
            .execute("SELECT pg_advisory_xact_lock($1)", &[&SCHEMA_LOCK])
            .await
            .map_err(failed("setting up the results table"))?;
        setup
            .batch_execute(SCHEMA)
            .await
            .map_err(failed("setting up the results table"))?;
        setup
            .commit()
            .await
            .map_err(failed("setting up the results table"))?;
        Ok(store)
    }

    async fn client(&self) -> Result<deadpool_postgres::Client, StoreError> {
        self.pool
            .get()
            .await
            .map_err(|e| StoreError(format!("connecting to PostgreSQL: {}", chain(&e))))
    }

    /// Whether a connection of the pool speaks TLS, as the server sees it
    /// (`pg_stat_ssl`); for the tests.
    #[doc(hidden)]
    pub async fn connection_uses_tls(&self) -> Result<bool, StoreError> {
        let row = self
            .client()
            .await?
            .query_one(
                "SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()",
                &[],
            )
            .await
            .map_err(failed("asking pg_stat_ssl"))?;
        Ok(row.get(0))
    }

    /// Writes a row as a given format version wrote it (for reading old rows back).
    #[doc(hidden)]
    pub async fn insert_raw(
        &self,
        id: &str,
        format: u64,
        body: &str,
        principal: Option<&str>,
        expires: i64,
    ) -> Result<String, StoreError> {
        let now = (self.clock)().as_second();
        let format = format as i64;
        self.client()
            .await?
            .execute(
                INSERT,
                &[
                    &id,
                    &(format as i32),
                    &body,
                    &MIME,
                    &None::<i64>,
                    &principal,
                    &now,
                    &expires,
                ],
            )
            .await
            .map_err(failed("writing a result"))?;
        Ok(self.signer.link(id, principal, expires))
    }
}

impl ResultStore for PostgresStore {
    fn put_task<'a>(&'a self, task: &'a TaskRow) -> StoreFuture<'a, ()> {
        Box::pin(async move {
            self.client()
                .await?
                .execute(
                    "INSERT INTO toolhost_tasks
                     (id, principal, status, body, call, created_ms, updated_ms, expires_at, version)
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)",
                    &[
                        &task.id,
                        &task.principal,
                        &task.status,
                        &task.body,
                        &task.call,
                        &task.created_ms,
                        &task.updated_ms,
                        &task.expires_at,
                        &task.version,
                    ],
                )
                .await
                .map_err(failed("writing a task"))?;
            Ok(())
        })
    }

    fn task<'a>(
        &'a self,
        id: &'a str,
        principal: Option<&'a str>,
    ) -> StoreFuture<'a, Option<TaskRow>> {
        let now = (self.clock)().as_second();
        Box::pin(async move {
            let row = self
                .client()
                .await?
                .query_opt(
                    "SELECT id, principal, status, body, call, created_ms, updated_ms, expires_at, version
                     FROM toolhost_tasks
                     WHERE id = $1 AND principal IS NOT DISTINCT FROM $2 AND expires_at > $3",
                    &[&id, &principal, &now],
                )
                .await
                .map_err(failed("reading a task"))?;
            Ok(row.map(|row| TaskRow {
                id: row.get(0),
                principal: row.get(1),
                status: row.get(2),
                body: row.get(3),
                call: row.get(4),
                created_ms: row.get(5),
                updated_ms: row.get(6),
                expires_at: row.get(7),
                version: row.get(8),
            }))
        })
    }

    fn tasks_of<'a>(
        &'a self,
        principal: Option<&'a str>,
        after: Option<&'a str>,
        limit: usize,
    ) -> StoreFuture<'a, Vec<TaskSummary>> {
        let now = (self.clock)().as_second();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        Box::pin(async move {
            let rows = self
                .client()
                .await?
                .query(
                    "SELECT id, status, created_ms, updated_ms
                     FROM toolhost_tasks
                     WHERE principal IS NOT DISTINCT FROM $1 AND expires_at > $2 AND id > $3
                     ORDER BY id LIMIT $4",
                    &[&principal, &now, &after.unwrap_or(""), &limit],
                )
                .await
                .map_err(failed("listing tasks"))?;
            Ok(rows
                .iter()
                .map(|row| TaskSummary {
                    id: row.get(0),
                    status: row.get(1),
                    created_ms: row.get(2),
                    updated_ms: row.get(3),
                })
                .collect())
        })
    }

    fn update_task<'a>(&'a self, task: &'a TaskRow) -> StoreFuture<'a, bool> {
        Box::pin(async move {
            let changed = self
                .client()
                .await?
                .execute(
                    "UPDATE toolhost_tasks
                     SET status = $3, body = $4, call = $5, updated_ms = $6, version = version + 1
                     WHERE id = $1 AND version = $2",
                    &[
                        &task.id,
                        &task.version,
                        &task.status,
                        &task.body,
                        &task.call,
                        &task.updated_ms,
                    ],
                )
                .await
                .map_err(failed("updating a task"))?;
            Ok(changed == 1)
        })
    }

    fn put<'a>(&'a self, offload: Offload<'a>) -> StoreFuture<'a, Kept> {
        let row = NewRow::new(offload, (self.clock)(), self.ttl);
        Box::pin(async move {
            let row = row?;
            let format = i32::try_from(row.format)
                .map_err(|_| StoreError(format!("format version {} out of range", row.format)))?;
            self.client()
                .await?
                .execute(
                    INSERT,
                    &[
                        &row.id,
                        &format,
                        &row.body,
                        &MIME,
                        &row.size,
                        &row.principal,
                        &row.created_at,
                        &row.expires_at,
                    ],
                )
                .await
                .map_err(failed("writing a result"))?;
            row.kept(&self.signer)
        })
    }

    fn get<'a>(
        &'a self,
        uri: &'a str,
        principal: Option<&'a str>,
    ) -> StoreFuture<'a, Option<StoredRow>> {
        Box::pin(async move {
            let now = (self.clock)().as_second();
            let Some(id) = self.signer.verify(uri, principal, now) else {
                return Ok(None);
            };
            let row = self
                .client()
                .await?
                .query_opt(
                    "SELECT format, body FROM toolhost_results
                     WHERE id = $1 AND principal IS NOT DISTINCT FROM $2 AND expires_at > $3",
                    &[&id, &principal, &now],
                )
                .await
                .map_err(failed("reading a result"))?;
            Ok(row.map(|row| StoredRow {
                format: i64::from(row.get::<_, i32>(0)),
                body: row.get(1),
            }))
        })
    }

    /// `SELECT 1` on a connection of the pool: a dead server fails the connect,
    /// a connection the server dropped fails the query.
    fn derived_key(&self, purpose: &str) -> Option<[u8; 32]> {
        Some(self.signer.derive(purpose))
    }

    fn ping(&self) -> StoreFuture<'_, ()> {
        Box::pin(async move {
            self.client()
                .await?
                .simple_query("SELECT 1")
                .await
                .map_err(failed("pinging PostgreSQL"))?;
            Ok(())
        })
    }

    fn purge(&self) -> StoreFuture<'_, u64> {
        let now = (self.clock)().as_second();
        Box::pin(async move {
            let client = self.client().await?;
            let results = client
                .execute(
                    "DELETE FROM toolhost_results WHERE expires_at <= $1",
                    &[&now],
                )
                .await
                .map_err(failed("purging expired results"))?;
            let tasks = client
                .execute("DELETE FROM toolhost_tasks WHERE expires_at <= $1", &[&now])
                .await
                .map_err(failed("purging expired tasks"))?;
            Ok(results + tasks)
        })
    }
}
