//! The SQLite store of the lidguard daemon.
//!
//! The store is deliberately decoupled from the domain types: sessions, backups, history
//! entries and event details are stored as JSON text next to a few key columns, so the
//! core's types can evolve without migrations. The store never parses that JSON.
//!
//! Timestamps are stored as RFC 3339 UTC text as printed by [`jiff::Timestamp`]
//! (e.g. `2025-01-02T03:04:05.123456789Z`); they round-trip exactly, to the nanosecond.
//!
//! One [`Store`] wraps one connection; it is `Send` but not `Sync`, so the daemon owns it
//! from one task (or behind a mutex).

mod error;
mod migrations;

use std::path::{Path, PathBuf};
use std::time::Duration;

use jiff::Timestamp;
use rusqlite::types::Type;
use rusqlite::{Connection, OpenFlags, OptionalExtension, Row, TransactionBehavior, params};

pub use crate::error::StoreError;
use crate::migrations::MIGRATIONS;

/// How long a statement waits for another connection's lock before failing with
/// [`StoreError::Locked`]. Short, because the daemon must never hang on a stuck peer.
const BUSY_TIMEOUT: Duration = Duration::from_millis(250);

/// Default number of rows kept in the event log.
pub const DEFAULT_EVENT_LOG_LIMIT: usize = 10_000;

/// The name used for an in-memory database in error messages.
const MEMORY: &str = ":memory:";

/// The lidguard database: one SQLite connection plus the event log bound.
#[derive(Debug)]
pub struct Store {
    conn: Connection,
    path: Option<PathBuf>,
    event_log_limit: usize,
    /// Why the last write failed, until one succeeds again.
    write_failure: std::cell::RefCell<Option<String>>,
}

/// One write of a batch ([`Store::write_batch`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreWrite {
    /// [`Store::upsert_session`].
    UpsertSession {
        /// The provider kind.
        provider: String,
        /// The provider's session id.
        session_id: String,
        /// The configured provider name.
        provider_name: String,
        /// JSON text of the core's session.
        data_json: String,
        /// When it was written.
        updated_at: Timestamp,
    },
    /// [`Store::delete_session`].
    DeleteSession {
        /// The provider kind.
        provider: String,
        /// The provider's session id.
        session_id: String,
        /// The configured provider name.
        provider_name: String,
    },
    /// [`Store::append_event`].
    Event(EventRow),
    /// One line of the event stream, kept for replay after a restart.
    StreamLine {
        /// The stream's event number.
        id: u64,
        /// The JSON line.
        line: String,
    },
    /// Drops the stream lines up to this event number (the replay let them go).
    ForgetStreamLines {
        /// The last event number dropped.
        through: u64,
    },
    /// Keeps the daemon's own state under `key` (JSON text), or forgets it (`None`).
    DaemonState {
        /// The name of the state (e.g. `pause`).
        key: &'static str,
        /// JSON text of the state; `None` deletes it.
        data_json: Option<String>,
    },
    /// [`Store::record_hook_receipt`].
    HookReceipt {
        /// The provider that sent the hook.
        provider: String,
        /// The hook event name.
        event: String,
        /// When it was received.
        at: Timestamp,
    },
}

/// A damaged database that [`Store::open_or_recover`] moved aside.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MovedAside {
    /// Where the damaged file is now.
    pub to: PathBuf,
    /// What was wrong with it.
    pub reason: String,
}

/// The key of a stored session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SessionRowKey<'a> {
    /// The provider kind (e.g. `claude`).
    pub provider: &'a str,
    /// The provider's session id.
    pub session_id: &'a str,
    /// The configured provider name (distinguishes several custom providers).
    pub provider_name: &'a str,
}

/// A stored session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionRow {
    /// The provider kind.
    pub provider: String,
    /// The provider's session id.
    pub session_id: String,
    /// The configured provider name.
    pub provider_name: String,
    /// JSON text of the core's session.
    pub data_json: String,
    /// When the session was last written.
    pub updated_at: Timestamp,
}

/// An OS-policy value saved before lidguard changed it, to be restored later.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PolicyBackup {
    /// What was backed up (e.g. `logind-lid-switch`); at most one backup per kind.
    pub kind: String,
    /// JSON text of the saved value.
    pub data_json: String,
    /// When the backup was saved.
    pub saved_at: Timestamp,
}

/// An entry of the bounded event log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventRow {
    /// When the event happened.
    pub at: Timestamp,
    /// The event name.
    pub name: String,
    /// The provider involved, if any.
    pub provider: Option<String>,
    /// The session involved, if any.
    pub session_id: Option<String>,
    /// JSON text with event details.
    pub detail_json: String,
}

/// An entry of the suspend history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HistoryRow {
    /// When the entry was recorded.
    pub recorded_at: Timestamp,
    /// JSON text of the core's history entry.
    pub data_json: String,
}

/// How often a hook event was received from a provider, and when last.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookReceipt {
    /// The provider that sent the hook.
    pub provider: String,
    /// The hook event name.
    pub event: String,
    /// How many times it was received.
    pub count: u64,
    /// When it was last received.
    pub last_seen: Timestamp,
}

impl Store {
    /// Opens the database at `path`, creating it if missing, and brings its schema up to date.
    ///
    /// The parent directory must already exist. Sets `journal_mode=WAL`,
    /// `synchronous=NORMAL`, `foreign_keys=ON` and a 250 ms busy timeout, so a database
    /// locked by another process fails promptly with [`StoreError::Locked`] instead of
    /// hanging; a file that is not an SQLite database gives [`StoreError::Corrupt`].
    pub fn open(path: &Path) -> Result<Store, StoreError> {
        check_parent_dir(path)?;
        check_file(path)?;
        // SQLite would create the file with its own default mode; the database is the user's
        // alone (its -wal and -shm files take the same mode).
        lidguard_files::private::create_if_missing(path)
            .map_err(|e| StoreError::classify_io(path, e))?;
        // No SQLITE_OPEN_URI: a file literally named `file:...` must stay a file name.
        let flags = OpenFlags::SQLITE_OPEN_READ_WRITE
            | OpenFlags::SQLITE_OPEN_CREATE
            | OpenFlags::SQLITE_OPEN_NO_MUTEX;
        let conn = Connection::open_with_flags(path, flags)
            .map_err(|e| StoreError::classify(path, "open", e))?;
        Self::init(conn, Some(path.to_path_buf()))
    }

    /// Opens a fresh in-memory database (for tests and `--no-store` style runs).
    pub fn open_in_memory() -> Result<Store, StoreError> {
        let conn = Connection::open_in_memory()
            .map_err(|e| StoreError::classify(Path::new(MEMORY), "open", e))?;
        Self::init(conn, None)
    }

    fn init(mut conn: Connection, path: Option<PathBuf>) -> Result<Store, StoreError> {
        let shown = path.as_deref().unwrap_or(Path::new(MEMORY));
        let err = |action| move |e| StoreError::classify(shown, action, e);
        // The busy timeout comes first: every later statement may touch a locked file.
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(err("set the busy timeout"))?;
        // The first read, which is where a corrupt or locked database shows up. A database
        // from a newer lidguard is refused here, before anything (WAL mode, migrations) could
        // write to it.
        let found: u32 = conn
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(err("read the schema version"))?;
        if found > latest_version() {
            return Err(StoreError::TooNew {
                path: shown.to_path_buf(),
                found,
                supported: latest_version(),
            });
        }
        let mode: String = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
            .map_err(err("enable write-ahead logging"))?;
        if path.is_some() && !mode.eq_ignore_ascii_case("wal") {
            tracing::warn!(db = %shown.display(), mode, "could not enable WAL journal mode");
        }
        conn.pragma_update(None, "synchronous", "NORMAL")
            .map_err(err("set synchronous mode"))?;
        conn.pragma_update(None, "foreign_keys", "ON")
            .map_err(err("enable foreign keys"))?;
        migrate(&mut conn, shown)?;
        Ok(Store {
            conn,
            path,
            event_log_limit: DEFAULT_EVENT_LOG_LIMIT,
            write_failure: std::cell::RefCell::new(None),
        })
    }

    /// Opens the database like [`Store::open`]; a damaged one (not SQLite, cut short, or
    /// failing SQLite's quick integrity check) is moved aside — kept, with its `-wal` and
    /// `-shm` files, as `<name>.corrupt-<UTC time>` — and a new one is made. Anything else
    /// (locked, newer schema, unwritable) stays an error and the file stays as it is.
    pub fn open_or_recover(path: &Path) -> Result<(Store, Option<MovedAside>), StoreError> {
        let reason = match Store::open(path).and_then(|s| s.quick_check().map(|()| s)) {
            Ok(store) => return Ok((store, None)),
            Err(StoreError::Corrupt { reason, .. }) => reason,
            Err(e) => return Err(e),
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let stamp = Timestamp::now().strftime("%Y%m%dT%H%M%SZ").to_string();
        let to = path.with_file_name(format!("{name}.corrupt-{stamp}"));
        for suffix in ["", "-wal", "-shm"] {
            let from = path.with_file_name(format!("{name}{suffix}"));
            let dest = path.with_file_name(format!("{name}.corrupt-{stamp}{suffix}"));
            #[allow(
                clippy::disallowed_methods,
                reason = "moves a damaged database aside whole; nothing is written"
            )]
            let moved = std::fs::rename(&from, &dest);
            match moved {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound && !suffix.is_empty() => {}
                Err(e) => return Err(StoreError::classify_io(&from, e)),
            }
        }
        tracing::error!(db = %path.display(), moved_to = %to.display(), %reason, "the database was damaged: moved it aside and started a new one");
        let store = Store::open(path)?;
        Ok((store, Some(MovedAside { to, reason })))
    }

    /// SQLite's quick integrity check (a few milliseconds for lidguard's small database).
    pub fn quick_check(&self) -> Result<(), StoreError> {
        let shown = self.path.as_deref().unwrap_or(Path::new(MEMORY));
        let result: String = self
            .conn
            .query_row("PRAGMA quick_check", [], |row| row.get(0))
            .map_err(|e| StoreError::classify(shown, "check the database", e))?;
        if result == "ok" {
            Ok(())
        } else {
            Err(StoreError::Corrupt {
                path: shown.to_path_buf(),
                reason: format!("SQLite's integrity check says: {result}"),
            })
        }
    }

    /// Why the last write failed (a full disk, a file made read-only), until a write succeeds
    /// again. Reads do not change it.
    pub fn write_failure(&self) -> Option<String> {
        self.write_failure.borrow().clone()
    }

    /// Remembers the outcome of a write for [`Store::write_failure`].
    fn wrote<T>(&self, write: impl FnOnce() -> Result<T, StoreError>) -> Result<T, StoreError> {
        let result = write();
        *self.write_failure.borrow_mut() = result.as_ref().err().map(ToString::to_string);
        result
    }

    /// The database file, or `None` for an in-memory store.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// The schema version of the database (`PRAGMA user_version`).
    pub fn schema_version(&self) -> Result<u32, StoreError> {
        self.conn
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(self.err("read the schema version"))
    }

    /// The newest schema version this binary knows.
    pub fn latest_schema_version() -> u32 {
        latest_version()
    }

    // ----- sessions -----

    /// Inserts the session, or replaces its data and time if the key exists.
    pub fn upsert_session(
        &self,
        key: &SessionRowKey<'_>,
        data_json: &str,
        updated_at: Timestamp,
    ) -> Result<(), StoreError> {
        self.wrote(|| -> Result<(), StoreError> {
            sql_upsert_session(&self.conn, key, data_json, updated_at)
                .map_err(self.err("save a session"))
        })
    }

    /// Deletes the session with this key; deleting a missing session is not an error.
    pub fn delete_session(&self, key: &SessionRowKey<'_>) -> Result<(), StoreError> {
        self.wrote(|| -> Result<(), StoreError> {
            sql_delete_session(&self.conn, key).map_err(self.err("delete a session"))
        })
    }

    /// All sessions, ordered by provider, session id, provider name.
    pub fn load_sessions(&self) -> Result<Vec<SessionRow>, StoreError> {
        self.query_all(
            "load sessions",
            "SELECT provider, session_id, provider_name, data_json, updated_at FROM sessions
             ORDER BY provider, session_id, provider_name",
            [],
            |row| {
                Ok(SessionRow {
                    provider: row.get(0)?,
                    session_id: row.get(1)?,
                    provider_name: row.get(2)?,
                    data_json: row.get(3)?,
                    updated_at: timestamp(row, 4)?,
                })
            },
        )
    }

    // ----- policy backups -----

    /// Saves a backup of an OS-policy value, unless one of this `kind` already exists.
    ///
    /// Returns `Ok(false)` and keeps the existing backup if there is one: that one holds
    /// the user's original value, while the current OS value may already be lidguard's.
    /// The write is synced to disk (`synchronous=FULL`) before returning, because the
    /// caller changes the OS setting next and must not lose the original on a crash.
    pub fn save_policy_backup(
        &self,
        kind: &str,
        data_json: &str,
        saved_at: Timestamp,
    ) -> Result<bool, StoreError> {
        self.wrote(|| -> Result<bool, StoreError> {
            let inserted = self.durably("save a policy backup", |conn| {
                conn.execute(
                    "INSERT INTO policy_backups (kind, data_json, saved_at) VALUES (?1, ?2, ?3)
                     ON CONFLICT (kind) DO NOTHING",
                    params![kind, data_json, saved_at.to_string()],
                )
            })?;
            Ok(inserted == 1)
        })
    }

    /// The backup of this `kind`, if any.
    pub fn policy_backup(&self, kind: &str) -> Result<Option<PolicyBackup>, StoreError> {
        self.conn
            .query_row(
                "SELECT kind, data_json, saved_at FROM policy_backups WHERE kind = ?1",
                [kind],
                policy_backup_row,
            )
            .optional()
            .map_err(self.err("read a policy backup"))
    }

    /// All backups, ordered by kind.
    pub fn policy_backups(&self) -> Result<Vec<PolicyBackup>, StoreError> {
        self.query_all(
            "read policy backups",
            "SELECT kind, data_json, saved_at FROM policy_backups ORDER BY kind",
            [],
            policy_backup_row,
        )
    }

    /// Deletes the backup of this `kind` (after it was restored); returns whether one existed.
    ///
    /// Also synced to disk: a deletion lost in a crash would make lidguard restore a stale
    /// value over a setting the user may have changed since.
    pub fn delete_policy_backup(&self, kind: &str) -> Result<bool, StoreError> {
        self.wrote(|| -> Result<bool, StoreError> {
            let deleted = self.durably("delete a policy backup", |conn| {
                conn.execute("DELETE FROM policy_backups WHERE kind = ?1", [kind])
            })?;
            Ok(deleted == 1)
        })
    }

    // ----- event log -----

    /// Appends to the event log, dropping the oldest entries beyond the limit
    /// (see [`Store::set_event_log_limit`]).
    pub fn append_event(&self, event: &EventRow) -> Result<(), StoreError> {
        self.wrote(|| -> Result<(), StoreError> {
            let limit = self.event_log_limit;
            self.in_transaction("append an event", |conn| {
                sql_insert_event(conn, event)?;
                keep_newest(conn, "events", limit)
            })
        })
    }

    /// The newest `limit` events, oldest first (newest last).
    pub fn recent_events(&self, limit: usize) -> Result<Vec<EventRow>, StoreError> {
        self.query_all(
            "read the event log",
            "SELECT at, name, provider, session_id, detail_json FROM
                (SELECT * FROM events ORDER BY id DESC LIMIT ?1)
             ORDER BY id",
            [sql_count(limit)],
            event_row,
        )
    }

    /// The newest `limit` events with this `name` (and `provider`, when given), newest last.
    pub fn recent_events_matching(
        &self,
        name: &str,
        provider: Option<&str>,
        limit: usize,
    ) -> Result<Vec<EventRow>, StoreError> {
        self.query_all(
            "read the event log",
            "SELECT at, name, provider, session_id, detail_json FROM
                (SELECT * FROM events WHERE name = ?1 AND (?2 IS NULL OR provider = ?2)
                 ORDER BY id DESC LIMIT ?3)
             ORDER BY id",
            rusqlite::params![name, provider, sql_count(limit)],
            event_row,
        )
    }

    /// Sets how many events the log keeps (default [`DEFAULT_EVENT_LOG_LIMIT`]).
    ///
    /// Takes effect at the next [`Store::append_event`]; `0` keeps nothing.
    pub fn set_event_log_limit(&mut self, limit: usize) {
        self.event_log_limit = limit;
    }

    // ----- suspend history -----

    /// Records a suspend-history entry and keeps only the newest `keep` entries.
    ///
    /// `keep: None` means history recording is off: nothing is inserted and existing
    /// entries are left alone. `Some(0)` clears the history.
    pub fn append_suspend_history(
        &self,
        recorded_at: Timestamp,
        data_json: &str,
        keep: Option<u32>,
    ) -> Result<(), StoreError> {
        self.wrote(|| -> Result<(), StoreError> {
            let Some(keep) = keep else { return Ok(()) };
            self.in_transaction("record suspend history", |conn| {
                conn.execute(
                    "INSERT INTO suspend_history (recorded_at, data_json) VALUES (?1, ?2)",
                    params![recorded_at.to_string(), data_json],
                )?;
                keep_newest(conn, "suspend_history", keep as usize)
            })
        })
    }

    /// The newest `limit` suspend-history entries, oldest first (newest last).
    pub fn suspend_history(&self, limit: usize) -> Result<Vec<HistoryRow>, StoreError> {
        self.query_all(
            "read suspend history",
            "SELECT recorded_at, data_json FROM
                (SELECT * FROM suspend_history ORDER BY id DESC LIMIT ?1)
             ORDER BY id",
            [sql_count(limit)],
            |row| {
                Ok(HistoryRow {
                    recorded_at: timestamp(row, 0)?,
                    data_json: row.get(1)?,
                })
            },
        )
    }

    // ----- hook receipts -----

    /// Counts one received hook `event` from `provider`; `last_seen` becomes `at`.
    pub fn record_hook_receipt(
        &self,
        provider: &str,
        event: &str,
        at: Timestamp,
    ) -> Result<(), StoreError> {
        self.wrote(|| -> Result<(), StoreError> {
            sql_hook_receipt(&self.conn, provider, event, at)
                .map_err(self.err("record a hook receipt"))
        })
    }

    /// All hook receipts, ordered by provider and event.
    pub fn hook_receipts(&self) -> Result<Vec<HookReceipt>, StoreError> {
        self.query_all(
            "read hook receipts",
            "SELECT provider, event, count, last_seen FROM hook_receipts ORDER BY provider, event",
            [],
            |row| {
                let count: i64 = row.get(2)?;
                Ok(HookReceipt {
                    provider: row.get(0)?,
                    event: row.get(1)?,
                    count: u64::try_from(count)
                        .map_err(|_| rusqlite::Error::IntegralValueOutOfRange(2, count))?,
                    last_seen: timestamp(row, 3)?,
                })
            },
        )
    }

    // ----- helpers -----

    /// Maps an SQLite error to a [`StoreError`] naming this database.
    fn err(&self, action: &'static str) -> impl FnOnce(rusqlite::Error) -> StoreError + '_ {
        move |e| StoreError::classify(self.shown_path(), action, e)
    }

    fn shown_path(&self) -> &Path {
        self.path.as_deref().unwrap_or(Path::new(MEMORY))
    }

    fn query_all<T, P: rusqlite::Params>(
        &self,
        action: &'static str,
        sql: &str,
        params: P,
        map: impl FnMut(&Row<'_>) -> rusqlite::Result<T>,
    ) -> Result<Vec<T>, StoreError> {
        self.conn
            .prepare_cached(sql)
            .and_then(|mut stmt| stmt.query_map(params, map)?.collect())
            .map_err(self.err(action))
    }

    /// The daemon's own state kept under `key` ([`StoreWrite::DaemonState`]), as JSON text.
    pub fn daemon_state(&self, key: &str) -> Result<Option<String>, StoreError> {
        let rows = self.query_all(
            "read the daemon's state",
            "SELECT data_json FROM daemon_state WHERE key = ?1",
            [key],
            |row| row.get(0),
        )?;
        Ok(rows.into_iter().next())
    }

    /// The event stream's kept lines, oldest first, with their event numbers.
    pub fn load_stream_lines(&self) -> Result<Vec<(u64, String)>, StoreError> {
        self.query_all(
            "load the event stream",
            "SELECT id, line FROM stream_events ORDER BY id",
            [],
            |row| {
                let id: i64 = row.get(0)?;
                Ok((u64::try_from(id).unwrap_or(0), row.get(1)?))
            },
        )
    }

    /// Carries out `writes` in order in one transaction: one commit for everything a hook event
    /// changed (the daemon answers the hook first and writes afterwards).
    pub fn write_batch(&self, writes: &[StoreWrite]) -> Result<(), StoreError> {
        if writes.is_empty() {
            return Ok(());
        }
        let limit = self.event_log_limit;
        self.wrote(|| {
            self.in_transaction("save what changed", |conn| {
                for write in writes {
                    match write {
                        StoreWrite::UpsertSession {
                            provider,
                            session_id,
                            provider_name,
                            data_json,
                            updated_at,
                        } => sql_upsert_session(
                            conn,
                            &SessionRowKey {
                                provider,
                                session_id,
                                provider_name,
                            },
                            data_json,
                            *updated_at,
                        )?,
                        StoreWrite::DeleteSession {
                            provider,
                            session_id,
                            provider_name,
                        } => sql_delete_session(
                            conn,
                            &SessionRowKey {
                                provider,
                                session_id,
                                provider_name,
                            },
                        )?,
                        StoreWrite::Event(event) => {
                            sql_insert_event(conn, event)?;
                            // Right after the insert: it goes by the last inserted row id.
                            keep_newest(conn, "events", limit)?;
                        }
                        StoreWrite::HookReceipt {
                            provider,
                            event,
                            at,
                        } => sql_hook_receipt(conn, provider, event, *at)?,
                        StoreWrite::DaemonState { key, data_json } => {
                            sql_daemon_state(conn, key, data_json.as_deref())?;
                        }
                        StoreWrite::StreamLine { id, line } => {
                            conn.prepare_cached(
                                "INSERT OR REPLACE INTO stream_events (id, line) VALUES (?1, ?2)",
                            )?
                            .execute(params![sql_id(*id), line])?;
                        }
                        StoreWrite::ForgetStreamLines { through } => {
                            conn.prepare_cached("DELETE FROM stream_events WHERE id <= ?1")?
                                .execute([sql_id(*through)])?;
                        }
                    }
                }
                Ok(())
            })
        })
    }

    /// [`Store::write_batch`] with the commit synced to disk (`synchronous=FULL`): for changes
    /// a command was told were made, which must survive a crash of the machine too.
    pub fn write_batch_synced(&self, writes: &[StoreWrite]) -> Result<(), StoreError> {
        self.synced("save what changed, synced", || self.write_batch(writes))
    }

    /// Runs `f` in one write transaction, so its statements commit together.
    fn in_transaction<T>(
        &self,
        action: &'static str,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        // IMMEDIATE takes the write lock up front: a deferred transaction that reads first
        // could fail with SQLITE_BUSY without waiting for the busy timeout.
        rusqlite::Transaction::new_unchecked(&self.conn, TransactionBehavior::Immediate)
            .and_then(|tx| {
                let value = f(&tx)?;
                tx.commit()?;
                Ok(value)
            })
            .map_err(self.err(action))
    }

    /// Runs the write `f` with `synchronous=FULL`, so it is on disk when this returns.
    fn durably<T>(
        &self,
        action: &'static str,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T>,
    ) -> Result<T, StoreError> {
        // The setting cannot change inside a transaction, so `f` runs in autocommit mode.
        self.synced(action, || f(&self.conn).map_err(self.err(action)))
    }

    /// Runs `f` with `synchronous=FULL` and puts NORMAL back afterwards, even if `f` failed:
    /// later writes need not be synced.
    fn synced<T>(
        &self,
        action: &'static str,
        f: impl FnOnce() -> Result<T, StoreError>,
    ) -> Result<T, StoreError> {
        self.conn
            .pragma_update(None, "synchronous", "FULL")
            .map_err(self.err(action))?;
        let result = f();
        let restored = self.conn.pragma_update(None, "synchronous", "NORMAL");
        let value = result?;
        restored.map_err(self.err(action))?;
        Ok(value)
    }
}

/// Fails early, naming the directory, if the database's parent directory is not usable;
/// SQLite would only say "unable to open database file".
fn check_parent_dir(path: &Path) -> Result<(), StoreError> {
    let dir = match path.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir,
        // A bare file name lives in the current directory, which exists.
        _ => return Ok(()),
    };
    let problem = match std::fs::metadata(dir) {
        Ok(meta) if meta.is_dir() => return Ok(()),
        Ok(_) => std::io::Error::from(std::io::ErrorKind::NotADirectory),
        Err(e) => e,
    };
    Err(StoreError::Directory {
        path: path.to_path_buf(),
        dir: dir.to_path_buf(),
        source: problem,
    })
}

/// Refuses a file that cannot be a whole SQLite database: not starting with SQLite's header,
/// or not a whole number of pages long (a truncated file, which SQLite would otherwise take
/// for an empty database and overwrite). An empty or missing file is a new database.
fn check_file(path: &Path) -> Result<(), StoreError> {
    use std::io::Read;
    let corrupt = |reason: String| StoreError::Corrupt {
        path: path.to_path_buf(),
        reason,
    };
    let mut file = match std::fs::File::open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(StoreError::classify_io(path, e)),
    };
    let meta = file
        .metadata()
        .map_err(|e| StoreError::classify_io(path, e))?;
    // Not a regular file (a directory): SQLite says what is wrong with it.
    if !meta.is_file() || meta.len() == 0 {
        return Ok(());
    }
    let len = meta.len();
    let mut header = [0u8; 100];
    if len < 100 || file.read_exact(&mut header).is_err() {
        return Err(corrupt(format!(
            "the file is {len} bytes, shorter than SQLite's header"
        )));
    }
    if &header[..16] != b"SQLite format 3\0" {
        return Err(corrupt(
            "the file does not start with SQLite's header".to_owned(),
        ));
    }
    // Bytes 16-17: the page size, big-endian; 1 stands for 65536 (sqlite.org/fileformat.html).
    let page = match u16::from_be_bytes([header[16], header[17]]) {
        1 => 65_536,
        n => u64::from(n),
    };
    if page < 512 || !page.is_power_of_two() {
        return Err(corrupt(format!(
            "its header gives an impossible page size ({page})"
        )));
    }
    if len % page != 0 {
        return Err(corrupt(format!(
            "the file is {len} bytes, not a whole number of {page}-byte pages: it was cut short"
        )));
    }
    Ok(())
}

fn latest_version() -> u32 {
    u32::try_from(MIGRATIONS.len()).expect("fewer than 2^32 migrations")
}

/// Applies the pending migration steps, one transaction each.
fn migrate(conn: &mut Connection, path: &Path) -> Result<(), StoreError> {
    let latest = latest_version();
    loop {
        // The version is read inside an IMMEDIATE (write-locked) transaction so that two
        // processes opening a new database at once cannot both apply the same step.
        let tx = conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(|e| StoreError::classify(path, "start a schema migration", e))?;
        let found: u32 = tx
            .pragma_query_value(None, "user_version", |row| row.get(0))
            .map_err(|e| StoreError::classify(path, "read the schema version", e))?;
        if found > latest {
            return Err(StoreError::TooNew {
                path: path.to_path_buf(),
                found,
                supported: latest,
            });
        }
        let Some(step) = MIGRATIONS.get(found as usize) else {
            // Up to date; the empty transaction is rolled back on drop.
            return Ok(());
        };
        let version = found + 1;
        tx.execute_batch(step)
            .and_then(|()| tx.pragma_update(None, "user_version", version))
            .and_then(|()| tx.commit())
            .map_err(|e| match StoreError::classify(path, "migrate", e) {
                StoreError::Sqlite { source, .. } => StoreError::Migration {
                    path: path.to_path_buf(),
                    version,
                    source,
                },
                other => other,
            })?;
        tracing::info!(db = %path.display(), version, "applied database migration");
    }
}

fn sql_upsert_session(
    conn: &Connection,
    key: &SessionRowKey<'_>,
    data_json: &str,
    updated_at: Timestamp,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO sessions (provider, session_id, provider_name, data_json, updated_at)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (provider, session_id, provider_name)
         DO UPDATE SET data_json = excluded.data_json, updated_at = excluded.updated_at",
    )?
    .execute(params![
        key.provider,
        key.session_id,
        key.provider_name,
        data_json,
        updated_at.to_string()
    ])
    .map(drop)
}

fn sql_delete_session(conn: &Connection, key: &SessionRowKey<'_>) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "DELETE FROM sessions WHERE provider = ?1 AND session_id = ?2 AND provider_name = ?3",
    )?
    .execute(params![key.provider, key.session_id, key.provider_name])
    .map(drop)
}

fn sql_insert_event(conn: &Connection, event: &EventRow) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO events (at, name, provider, session_id, detail_json)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(params![
        event.at.to_string(),
        event.name,
        event.provider,
        event.session_id,
        event.detail_json
    ])
    .map(drop)
}

fn sql_daemon_state(conn: &Connection, key: &str, json: Option<&str>) -> rusqlite::Result<()> {
    match json {
        Some(json) => conn
            .prepare_cached("INSERT OR REPLACE INTO daemon_state (key, data_json) VALUES (?1, ?2)")?
            .execute([key, json]),
        None => conn
            .prepare_cached("DELETE FROM daemon_state WHERE key = ?1")?
            .execute([key]),
    }
    .map(drop)
}

fn sql_hook_receipt(
    conn: &Connection,
    provider: &str,
    event: &str,
    at: Timestamp,
) -> rusqlite::Result<()> {
    conn.prepare_cached(
        "INSERT INTO hook_receipts (provider, event, count, last_seen)
         VALUES (?1, ?2, 1, ?3)
         ON CONFLICT (provider, event)
         DO UPDATE SET count = count + 1, last_seen = excluded.last_seen",
    )?
    .execute(params![provider, event, at.to_string()])
    .map(drop)
}

/// Deletes all but the newest `keep` rows of `table`.
///
/// Cheap: ids are contiguous (see the schema), so this is one range delete on the rowid
/// that removes about one row per insert once the table is full.
fn keep_newest(conn: &Connection, table: &str, keep: usize) -> rusqlite::Result<()> {
    let newest = conn.last_insert_rowid();
    let cutoff = newest.saturating_sub(sql_count(keep));
    conn.prepare_cached(&format!("DELETE FROM {table} WHERE id <= ?1"))?
        .execute([cutoff])?;
    Ok(())
}

/// An event number as an SQL integer (numbers beyond `i64::MAX` never occur).
fn sql_id(id: u64) -> i64 {
    i64::try_from(id).unwrap_or(i64::MAX)
}

/// A row count as an SQL integer; counts beyond `i64::MAX` mean "all".
fn sql_count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// Reads an RFC 3339 timestamp column.
/// One row of `SELECT at, name, provider, session_id, detail_json FROM events`.
fn event_row(row: &Row<'_>) -> rusqlite::Result<EventRow> {
    Ok(EventRow {
        at: timestamp(row, 0)?,
        name: row.get(1)?,
        provider: row.get(2)?,
        session_id: row.get(3)?,
        detail_json: row.get(4)?,
    })
}

fn timestamp(row: &Row<'_>, idx: usize) -> rusqlite::Result<Timestamp> {
    let text = row.get_ref(idx)?.as_str()?;
    text.parse()
        .map_err(|e| rusqlite::Error::FromSqlConversionFailure(idx, Type::Text, Box::new(e)))
}

fn policy_backup_row(row: &Row<'_>) -> rusqlite::Result<PolicyBackup> {
    Ok(PolicyBackup {
        kind: row.get(0)?,
        data_json: row.get(1)?,
        saved_at: timestamp(row, 2)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pragma_i64(store: &Store, name: &str) -> i64 {
        store
            .conn
            .pragma_query_value(None, name, |row| row.get(0))
            .unwrap()
    }

    #[test]
    fn open_sets_connection_pragmas() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(&dir.path().join("lidguard.db")).unwrap();
        let mode: String = store
            .conn
            .pragma_query_value(None, "journal_mode", |row| row.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        assert_eq!(pragma_i64(&store, "synchronous"), 1, "NORMAL");
        assert_eq!(pragma_i64(&store, "foreign_keys"), 1);
        assert_eq!(pragma_i64(&store, "busy_timeout"), 250);
    }

    #[test]
    fn durable_writes_restore_normal_synchronous() {
        let store = Store::open_in_memory().unwrap();
        let t = Timestamp::UNIX_EPOCH;
        assert!(store.save_policy_backup("lid", "{}", t).unwrap());
        assert_eq!(pragma_i64(&store, "synchronous"), 1, "NORMAL after save");
        assert!(store.delete_policy_backup("lid").unwrap());
        assert_eq!(pragma_i64(&store, "synchronous"), 1, "NORMAL after delete");
    }

    #[test]
    fn durably_runs_the_write_with_full_synchronous() {
        let store = Store::open_in_memory().unwrap();
        let during = store
            .durably("test", |conn| {
                conn.pragma_query_value(None, "synchronous", |row| row.get::<_, i64>(0))
            })
            .unwrap();
        assert_eq!(during, 2, "FULL");
        assert_eq!(pragma_i64(&store, "synchronous"), 1);
    }
}
