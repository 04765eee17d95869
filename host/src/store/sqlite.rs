//! [`SqliteStore`]: stored results in one SQLite file in the data directory, the
//! default store, which needs no setup.
//!
//! Each row holds the serialized result with its format version (so a later
//! toolhost reads rows an older one wrote), its MIME type, size, principal,
//! creation and expiry times. The database runs in WAL mode with
//! `synchronous = FULL`: a commit is on disk before `put` returns, so a result
//! whose link was handed out survives a crash of the process and of the machine
//! (`NORMAL` would survive only the former). Links are signed ([`Signer`]), and a
//! read checks the signature, the expiry and the principal before it touches the
//! database.
//!
//! The file holds every stored result of every caller, so only the host's user
//! may read it: it is created with mode 0600 (SQLite gives its `-wal` and `-shm`
//! files the mode of the database), and an existing database, `-wal` or `-shm`
//! file that the group or others can read is refused at start (`chmod 600`).

use std::path::Path;
use std::sync::{Arc, Mutex};

use jiff::{SignedDuration, Timestamp};
use rusqlite::{Connection, OptionalExtension, params};

use super::row::{MIME, NewRow};
use super::signing::Signer;
use super::{Kept, Offload, ResultStore, StoreError, StoreFuture, StoredRow, TaskRow, TaskSummary};

/// Results in an SQLite file.
pub struct SqliteStore {
    connection: Arc<Mutex<Connection>>,
    /// The database file, which [`ResultStore::ping`] checks is still there.
    path: std::path::PathBuf,
    signer: Signer,
    ttl: SignedDuration,
    clock: fn() -> Timestamp,
}

fn failed(what: &str) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
    move |e| StoreError(format!("{what}: {e}"))
}

impl SqliteStore {
    /// Opens (or creates) the store at `path`; links live for `ttl`.
    ///
    /// # Errors
    ///
    /// A [`StoreError`] naming the file when it cannot be opened or set up.
    pub fn open(
        path: &Path,
        signer: Signer,
        ttl: SignedDuration,
        clock: fn() -> Timestamp,
    ) -> Result<SqliteStore, StoreError> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| StoreError(format!("{}: {e}", dir.display())))?;
        }
        let what = format!("{}", path.display());
        super::private::ensure(path, "the result database")
            .map_err(|e| StoreError(e.to_string()))?;
        for suffix in ["-wal", "-shm"] {
            let mut companion = path.as_os_str().to_owned();
            companion.push(suffix);
            let companion = std::path::PathBuf::from(companion);
            if companion.exists() {
                super::private::check(&companion, "the result database's file")
                    .map_err(|e| StoreError(e.to_string()))?;
            }
        }
        let connection = Connection::open(path).map_err(failed(&what))?;
        connection
            .execute_batch(
                "PRAGMA journal_mode = WAL;
                 PRAGMA synchronous = FULL;
                 PRAGMA busy_timeout = 5000;
                 CREATE TABLE IF NOT EXISTS results (
                     id TEXT PRIMARY KEY,
                     format INTEGER NOT NULL,
                     body TEXT NOT NULL,
                     mime TEXT NOT NULL,
                     size INTEGER,
                     principal TEXT,
                     created_at INTEGER NOT NULL,
                     expires_at INTEGER NOT NULL
                 );
                 CREATE INDEX IF NOT EXISTS results_expiry ON results (expires_at);
                 CREATE TABLE IF NOT EXISTS tasks (
                     id TEXT PRIMARY KEY,
                     principal TEXT,
                     status TEXT NOT NULL,
                     body TEXT,
                     call TEXT NOT NULL,
                     created_ms INTEGER NOT NULL,
                     updated_ms INTEGER NOT NULL,
                     expires_at INTEGER NOT NULL,
                     version INTEGER NOT NULL
                 );
                 CREATE INDEX IF NOT EXISTS tasks_expiry ON tasks (expires_at);
                 CREATE INDEX IF NOT EXISTS tasks_principal ON tasks (principal, id);",
            )
            .map_err(failed(&what))?;
        Ok(SqliteStore {
            connection: Arc::new(Mutex::new(connection)),
            path: path.to_path_buf(),
            signer,
            ttl,
            clock,
        })
    }

    /// Writes a row as a given format version wrote it (for reading old rows back).
    #[doc(hidden)]
    pub fn insert_raw(
        &self,
        id: &str,
        format: u64,
        body: &str,
        principal: Option<&str>,
        expires: i64,
    ) -> Result<String, StoreError> {
        let now = (self.clock)().as_second();
        self.connection
            .lock()
            .expect("store lock")
            .execute(
                "INSERT INTO results (id, format, body, mime, size, principal, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, NULL, ?5, ?6, ?7)",
                params![id, format as i64, body, MIME, principal, now, expires],
            )
            .map_err(failed("writing a result"))?;
        Ok(self.signer.link(id, principal, expires))
    }
}

impl SqliteStore {
    /// Runs `f` on the connection, off the async threads.
    async fn with_connection<T: Send + 'static>(
        &self,
        what: &'static str,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> Result<T, StoreError> {
        let connection = self.connection.clone();
        tokio::task::spawn_blocking(move || f(&connection.lock().expect("store lock")))
            .await
            .map_err(|e| StoreError(format!("the store's worker failed: {e}")))?
            .map_err(failed(what))
    }
}

impl ResultStore for SqliteStore {
    fn put_task<'a>(&'a self, task: &'a TaskRow) -> StoreFuture<'a, ()> {
        let task = task.clone();
        Box::pin(async move {
            self.with_connection("writing a task", move |connection| {
                connection.execute(
                    "INSERT INTO tasks (id, principal, status, body, call, created_ms, updated_ms, expires_at, version) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                    params![task.id, task.principal, task.status, task.body, task.call, task.created_ms, task.updated_ms, task.expires_at, task.version],
                )
            })
            .await
            .map(drop)
        })
    }

    fn task<'a>(
        &'a self,
        id: &'a str,
        principal: Option<&'a str>,
    ) -> StoreFuture<'a, Option<TaskRow>> {
        let (id, principal) = (id.to_owned(), principal.map(str::to_owned));
        let now = (self.clock)().as_second();
        Box::pin(async move {
            self.with_connection("reading a task", move |connection| {
                connection
                    .query_row(
                        "SELECT id, principal, status, body, call, created_ms, updated_ms, expires_at, version FROM tasks WHERE id = ?1 AND principal IS ?2 AND expires_at > ?3",
                        params![id, principal, now],
                        |row| {
                            Ok(TaskRow {
                                id: row.get(0)?,
                                principal: row.get(1)?,
                                status: row.get(2)?,
                                body: row.get(3)?,
                                call: row.get(4)?,
                                created_ms: row.get(5)?,
                                updated_ms: row.get(6)?,
                                expires_at: row.get(7)?,
                                version: row.get(8)?,
                            })
                        },
                    )
                    .optional()
            })
            .await
        })
    }

    fn tasks_of<'a>(
        &'a self,
        principal: Option<&'a str>,
        after: Option<&'a str>,
        limit: usize,
    ) -> StoreFuture<'a, Vec<TaskSummary>> {
        let (principal, after) = (principal.map(str::to_owned), after.unwrap_or("").to_owned());
        let now = (self.clock)().as_second();
        let limit = i64::try_from(limit).unwrap_or(i64::MAX);
        Box::pin(async move {
            self.with_connection("listing tasks", move |connection| {
                let mut listing = connection.prepare(
                    "SELECT id, status, created_ms, updated_ms FROM tasks WHERE principal IS ?1 AND expires_at > ?2 AND id > ?3 ORDER BY id LIMIT ?4",
                )?;
                let rows = listing.query_map(params![principal, now, after, limit], |row| {
                    Ok(TaskSummary {
                        id: row.get(0)?,
                        status: row.get(1)?,
                        created_ms: row.get(2)?,
                        updated_ms: row.get(3)?,
                    })
                })?;
                rows.collect()
            })
            .await
        })
    }

    fn update_task<'a>(&'a self, task: &'a TaskRow) -> StoreFuture<'a, bool> {
        let task = task.clone();
        Box::pin(async move {
            self.with_connection("updating a task", move |connection| {
                connection.execute(
                    "UPDATE tasks SET status = ?3, body = ?4, call = ?5, updated_ms = ?6, version = version + 1 WHERE id = ?1 AND version = ?2",
                    params![task.id, task.version, task.status, task.body, task.call, task.updated_ms],
                )
            })
            .await
            .map(|changed| changed == 1)
        })
    }

    fn put<'a>(&'a self, offload: Offload<'a>) -> StoreFuture<'a, Kept> {
        let row = NewRow::new(offload, (self.clock)(), self.ttl);
        let connection = self.connection.clone();
        Box::pin(async move {
            let row = row?;
            let written = row.clone();
            tokio::task::spawn_blocking(move || {
                connection
                    .lock()
                    .expect("store lock")
                    .execute(
                        "INSERT INTO results (id, format, body, mime, size, principal, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                        params![written.id, written.format, written.body, MIME, written.size, written.principal, written.created_at, written.expires_at],
                    )
                    .map_err(failed("writing a result"))
            })
            .await
            .map_err(|e| StoreError(format!("the store's writer failed: {e}")))??;
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
            let connection = self.connection.clone();
            let owner = principal.map(str::to_owned);
            let row = tokio::task::spawn_blocking(move || {
                connection
                    .lock()
                    .expect("store lock")
                    .query_row(
                        "SELECT format, body FROM results WHERE id = ?1 AND principal IS ?2 AND expires_at > ?3",
                        params![id, owner, now],
                        |row| Ok((row.get::<_, i64>(0)?, row.get::<_, String>(1)?)),
                    )
                    .optional()
                    .map_err(failed("reading a result"))
            })
            .await
            .map_err(|e| StoreError(format!("the store's reader failed: {e}")))??;
            Ok(row.map(|(format, body)| StoredRow { format, body }))
        })
    }

    /// The file is still where it was opened (a database whose file was removed
    /// keeps answering from the old inode, and loses every row at the next
    /// start), and a read of the table through the connection succeeds.
    fn derived_key(&self, purpose: &str) -> Option<[u8; 32]> {
        Some(self.signer.derive(purpose))
    }

    fn ping(&self) -> StoreFuture<'_, ()> {
        let connection = self.connection.clone();
        let path = self.path.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                std::fs::metadata(&path)
                    .map_err(|e| StoreError(format!("{}: {e}", path.display())))?;
                connection
                    .lock()
                    .expect("store lock")
                    .query_row(
                        "SELECT count(*) FROM (SELECT 1 FROM results LIMIT 1)",
                        [],
                        |_| Ok(()),
                    )
                    .map_err(failed("pinging the database"))
            })
            .await
            .map_err(|e| StoreError(format!("the store's pinger failed: {e}")))?
        })
    }

    fn purge(&self) -> StoreFuture<'_, u64> {
        let now = (self.clock)().as_second();
        Box::pin(async move {
            self.with_connection("purging expired results and tasks", move |connection| {
                let results = connection
                    .execute("DELETE FROM results WHERE expires_at <= ?1", params![now])?;
                let tasks =
                    connection.execute("DELETE FROM tasks WHERE expires_at <= ?1", params![now])?;
                Ok((results + tasks) as u64)
            })
            .await
        })
    }
}
