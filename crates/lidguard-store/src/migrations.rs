//! Schema migrations.
//!
//! `MIGRATIONS[i]` upgrades a database from schema version `i` to `i + 1`; the version
//! lives in `PRAGMA user_version`. Steps are only ever appended, never edited, because
//! databases in the field have already run the old ones.
//!
//! Domain data (sessions, history entries, backups, event details) is stored as JSON text
//! next to a few key columns, so the core's types can evolve without a migration.
//! Timestamps are RFC 3339 UTC text as printed by `jiff::Timestamp` (nanosecond precision).

pub(crate) const MIGRATIONS: &[&str] = &[
    // Version 1: the initial schema.
    "
    CREATE TABLE sessions (
        provider      TEXT NOT NULL,
        session_id    TEXT NOT NULL,
        provider_name TEXT NOT NULL,
        data_json     TEXT NOT NULL,
        updated_at    TEXT NOT NULL,
        PRIMARY KEY (provider, session_id, provider_name)
    ) WITHOUT ROWID;

    CREATE TABLE policy_backups (
        kind      TEXT NOT NULL PRIMARY KEY,
        data_json TEXT NOT NULL,
        saved_at  TEXT NOT NULL
    ) WITHOUT ROWID;

    -- `id` is the rowid: new rows get max(id) + 1 and only the oldest rows are ever
    -- deleted, so ids stay contiguous and `id <= newest - N` selects all but the newest N.
    CREATE TABLE events (
        id          INTEGER PRIMARY KEY,
        at          TEXT NOT NULL,
        name        TEXT NOT NULL,
        provider    TEXT,
        session_id  TEXT,
        detail_json TEXT NOT NULL
    );

    -- Same id scheme as `events`.
    CREATE TABLE suspend_history (
        id          INTEGER PRIMARY KEY,
        recorded_at TEXT NOT NULL,
        data_json   TEXT NOT NULL
    );

    CREATE TABLE hook_receipts (
        provider  TEXT NOT NULL,
        event     TEXT NOT NULL,
        count     INTEGER NOT NULL,
        last_seen TEXT NOT NULL,
        PRIMARY KEY (provider, event)
    ) WITHOUT ROWID;
    ",
    // Version 2: the event stream's replay window (`lidguard events`), kept across restarts.
    // `id` is the stream's own event number; the daemon deletes what its replay dropped.
    "
    CREATE TABLE stream_events (
        id   INTEGER PRIMARY KEY,
        line TEXT NOT NULL
    );
    ",
    // Version 3: what the daemon keeps of its own beyond sessions (the user's pause), by name.
    "
    CREATE TABLE daemon_state (
        key       TEXT NOT NULL PRIMARY KEY,
        data_json TEXT NOT NULL
    ) WITHOUT ROWID;
    ",
];
