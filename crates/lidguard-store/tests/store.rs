//! Integration tests of the lidguard store against real database files.
#![allow(
    clippy::disallowed_methods,
    reason = "tests write fixtures and read the environment"
)]

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use jiff::{Timestamp, ToSpan};
use lidguard_store::{EventRow, SessionRowKey, Store, StoreError, StoreWrite};
use tempfile::TempDir;

fn temp_db() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lidguard.db");
    (dir, path)
}

/// A timestamp with sub-microsecond digits, to prove exact round trips.
fn ts(seconds: i64) -> Timestamp {
    Timestamp::new(1_750_000_000 + seconds, 123_456_789).unwrap()
}

fn key<'a>(provider: &'a str, session_id: &'a str, provider_name: &'a str) -> SessionRowKey<'a> {
    SessionRowKey {
        provider,
        session_id,
        provider_name,
    }
}

fn event(i: usize) -> EventRow {
    EventRow {
        at: ts(i as i64),
        name: format!("event-{i}"),
        provider: None,
        session_id: None,
        detail_json: format!("{{\"i\":{i}}}"),
    }
}

fn raw_count(path: &Path, table: &str) -> i64 {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row(&format!("SELECT count(*) FROM {table}"), [], |row| {
        row.get(0)
    })
    .unwrap()
}

fn assert_fast(started: Instant) {
    let elapsed = started.elapsed();
    assert!(elapsed < Duration::from_secs(5), "took {elapsed:?}");
}

#[test]
fn sessions_round_trip_upsert_delete_and_order() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path).unwrap();
    assert!(store.load_sessions().unwrap().is_empty());

    // The last one replaces data and time of an existing key.
    for (n, (provider, id, name)) in [
        ("codex", "s2", "codex"),
        ("claude", "s9", "claude"),
        ("codex", "s1", "work"),
        ("codex", "s1", "home"),
        ("codex", "s2", "codex"),
    ]
    .into_iter()
    .enumerate()
    {
        let n = n as i64 + 1;
        store
            .upsert_session(&key(provider, id, name), &format!(r#"{{"v":{n}}}"#), ts(n))
            .unwrap();
    }

    let rows = store.load_sessions().unwrap();
    let keys: Vec<_> = rows
        .iter()
        .map(|r| {
            (
                r.provider.as_str(),
                r.session_id.as_str(),
                r.provider_name.as_str(),
            )
        })
        .collect();
    assert_eq!(
        keys,
        [
            ("claude", "s9", "claude"),
            ("codex", "s1", "home"),
            ("codex", "s1", "work"),
            ("codex", "s2", "codex"),
        ]
    );
    assert_eq!(rows[3].data_json, r#"{"v":5}"#);
    assert_eq!(rows[3].updated_at, ts(5));
    assert_eq!(rows[0].data_json, r#"{"v":2}"#);
    assert_eq!(rows[0].updated_at, ts(2));

    store.delete_session(&key("codex", "s1", "home")).unwrap();
    // Deleting a missing session is fine.
    store
        .delete_session(&key("codex", "nope", "codex"))
        .unwrap();
    let rows = store.load_sessions().unwrap();
    assert_eq!(rows.len(), 3);
    assert!(rows.iter().all(|r| r.provider_name != "home"));
}

#[test]
fn policy_backup_is_never_overwritten() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path).unwrap();
    assert_eq!(store.policy_backup("lid-switch").unwrap(), None);

    let save =
        |kind: &str, json: &str, t: i64| store.save_policy_backup(kind, json, ts(t)).unwrap();
    assert!(save("lid-switch", r#""suspend""#, 1));
    assert!(
        !save("lid-switch", r#""ignore""#, 2),
        "second save of the same kind must report that a backup exists"
    );
    assert!(save("idle-action", r#""sleep""#, 3));

    let lid = store.policy_backup("lid-switch").unwrap().unwrap();
    assert_eq!(lid.kind, "lid-switch");
    assert_eq!(lid.data_json, r#""suspend""#, "first backup kept");
    assert_eq!(lid.saved_at, ts(1));

    let kinds: Vec<_> = store
        .policy_backups()
        .unwrap()
        .into_iter()
        .map(|b| b.kind)
        .collect();
    assert_eq!(kinds, ["idle-action", "lid-switch"]);

    assert!(store.delete_policy_backup("lid-switch").unwrap());
    assert!(!store.delete_policy_backup("lid-switch").unwrap());
    assert_eq!(store.policy_backup("lid-switch").unwrap(), None);
    // After a delete, a new backup may be saved again.
    assert!(save("lid-switch", r#""lock""#, 4));
    let lid = store.policy_backup("lid-switch").unwrap().unwrap();
    assert_eq!(lid.data_json, r#""lock""#);
}

#[test]
fn event_round_trip_with_optional_fields() {
    let store = Store::open_in_memory().unwrap();
    let full = EventRow {
        at: ts(7),
        name: "hook".into(),
        provider: Some("claude".into()),
        session_id: Some("abc".into()),
        detail_json: r#"{"event":"Stop"}"#.into(),
    };
    store.append_event(&event(1)).unwrap();
    store.append_event(&full).unwrap();
    assert_eq!(store.recent_events(10).unwrap(), [event(1), full.clone()]);
    assert_eq!(store.recent_events(1).unwrap(), [full]);
    assert!(store.recent_events(0).unwrap().is_empty());
}

#[test]
fn event_log_keeps_exactly_the_newest_limit() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    store.set_event_log_limit(100);
    for i in 0..1000 {
        store.append_event(&event(i)).unwrap();
    }
    let names: Vec<_> = store
        .recent_events(usize::MAX)
        .unwrap()
        .into_iter()
        .map(|e| e.name)
        .collect();
    let expected: Vec<_> = (900..1000).map(|i| format!("event-{i}")).collect();
    assert_eq!(names, expected, "newest 100, oldest first");
    assert_eq!(raw_count(&path, "events"), 100, "older rows are deleted");

    let last_three: Vec<_> = store
        .recent_events(3)
        .unwrap()
        .into_iter()
        .map(|e| e.name)
        .collect();
    assert_eq!(last_three, ["event-997", "event-998", "event-999"]);

    // Shrinking the limit applies at the next append.
    store.set_event_log_limit(10);
    store.append_event(&event(1000)).unwrap();
    assert_eq!(raw_count(&path, "events"), 10);
    assert_eq!(store.recent_events(100).unwrap()[0].name, "event-991");
}

#[test]
fn event_log_default_limit_is_ten_thousand() {
    assert_eq!(lidguard_store::DEFAULT_EVENT_LOG_LIMIT, 10_000);
    let store = Store::open_in_memory().unwrap();
    for i in 0..200 {
        store.append_event(&event(i)).unwrap();
    }
    assert_eq!(store.recent_events(usize::MAX).unwrap().len(), 200);
}

#[test]
fn suspend_history_retention() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path).unwrap();
    for i in 0..5 {
        store
            .append_suspend_history(ts(i), &format!("{{\"n\":{i}}}"), Some(3))
            .unwrap();
    }
    let rows = store.suspend_history(100).unwrap();
    let data: Vec<_> = rows.iter().map(|r| r.data_json.as_str()).collect();
    assert_eq!(data, [r#"{"n":2}"#, r#"{"n":3}"#, r#"{"n":4}"#]);
    assert_eq!(rows[2].recorded_at, ts(4));
    assert_eq!(raw_count(&path, "suspend_history"), 3);

    // Recording off: nothing inserted, existing entries untouched.
    store
        .append_suspend_history(ts(9), r#"{"n":9}"#, None)
        .unwrap();
    assert_eq!(store.suspend_history(100).unwrap(), rows);

    // `limit` returns the newest entries, newest last.
    let newest: Vec<_> = store
        .suspend_history(2)
        .unwrap()
        .into_iter()
        .map(|r| r.data_json)
        .collect();
    assert_eq!(newest, [r#"{"n":3}"#, r#"{"n":4}"#]);

    // Some(0) keeps nothing.
    store
        .append_suspend_history(ts(10), r#"{"n":10}"#, Some(0))
        .unwrap();
    assert!(store.suspend_history(100).unwrap().is_empty());
}

#[test]
fn hook_receipts_count_and_last_seen() {
    let store = Store::open_in_memory().unwrap();
    assert!(store.hook_receipts().unwrap().is_empty());
    store.record_hook_receipt("codex", "Stop", ts(1)).unwrap();
    store.record_hook_receipt("claude", "Stop", ts(2)).unwrap();
    store.record_hook_receipt("codex", "Stop", ts(3)).unwrap();
    store
        .record_hook_receipt("claude", "PreToolUse", ts(4))
        .unwrap();
    store.record_hook_receipt("codex", "Stop", ts(5)).unwrap();

    let got: Vec<_> = store
        .hook_receipts()
        .unwrap()
        .into_iter()
        .map(|r| (r.provider, r.event, r.count, r.last_seen))
        .collect();
    let s = String::from;
    assert_eq!(
        got,
        [
            (s("claude"), s("PreToolUse"), 1, ts(4)),
            (s("claude"), s("Stop"), 1, ts(2)),
            (s("codex"), s("Stop"), 3, ts(5)),
        ]
    );
}

#[test]
fn timestamps_round_trip_exactly() {
    let store = Store::open_in_memory().unwrap();
    let times = [
        Timestamp::UNIX_EPOCH,
        Timestamp::new(0, 1).unwrap(),
        Timestamp::new(-1, 999_999_999).unwrap(),
        ts(0),
        Timestamp::MIN,
        Timestamp::MAX,
        ts(0) + 1.microsecond(),
    ];
    for (i, &at) in times.iter().enumerate() {
        store.append_event(&EventRow { at, ..event(i) }).unwrap();
    }
    let got: Vec<_> = store
        .recent_events(100)
        .unwrap()
        .into_iter()
        .map(|e| e.at)
        .collect();
    assert_eq!(got, times);
}

#[test]
fn reopen_keeps_data_and_migrates_once() {
    let (_dir, path) = temp_db();
    let latest = Store::latest_schema_version();
    assert!(latest >= 1);
    {
        let store = Store::open(&path).unwrap();
        assert_eq!(store.path(), Some(path.as_path()));
        assert_eq!(store.schema_version().unwrap(), latest);
        store
            .upsert_session(&key("codex", "s1", "codex"), "{}", ts(1))
            .unwrap();
        store.save_policy_backup("lid", "1", ts(2)).unwrap();
        store.append_event(&event(3)).unwrap();
        store.append_suspend_history(ts(4), "{}", Some(5)).unwrap();
        store.record_hook_receipt("codex", "Stop", ts(5)).unwrap();
    }
    for _ in 0..2 {
        // A second run of the migration would fail on CREATE TABLE; this must succeed.
        let store = Store::open(&path).unwrap();
        assert_eq!(store.schema_version().unwrap(), latest);
        assert_eq!(store.load_sessions().unwrap().len(), 1);
        assert_eq!(store.policy_backup("lid").unwrap().unwrap().saved_at, ts(2));
        assert_eq!(store.recent_events(10).unwrap(), [event(3)]);
        assert_eq!(store.suspend_history(10).unwrap().len(), 1);
        assert_eq!(store.hook_receipts().unwrap()[0].count, 1);
    }
}

#[test]
fn in_memory_store_has_no_path_and_latest_schema() {
    let store = Store::open_in_memory().unwrap();
    assert_eq!(store.path(), None);
    assert_eq!(
        store.schema_version().unwrap(),
        Store::latest_schema_version()
    );
}

#[test]
fn corrupt_file_is_reported_with_its_path() {
    let (_dir, path) = temp_db();
    let garbage: String = "this is not an sqlite database. "
        .chars()
        .cycle()
        .take(4096)
        .collect();
    std::fs::write(&path, garbage).unwrap();

    let started = Instant::now();
    let err = Store::open(&path).unwrap_err();
    assert_fast(started);
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains("not a valid SQLite database"), "{msg}");
    assert!(msg.contains("move it aside"), "{msg}");
    assert_eq!(err.path(), path);
}

#[test]
fn a_database_cut_short_or_damaged_is_moved_aside_and_a_new_one_made() {
    let (dir, path) = temp_db();
    {
        let store = Store::open(&path).unwrap();
        store.record_hook_receipt("claude", "Stop", ts(0)).unwrap();
    }
    // A whole database first: nothing to recover.
    let (store, moved) = Store::open_or_recover(&path).unwrap();
    assert_eq!(moved, None);
    assert_eq!(store.hook_receipts().unwrap().len(), 1);
    drop(store);
    let whole = std::fs::read(&path).unwrap();
    std::fs::write(&path, &whole[..1000]).unwrap();
    // `open` alone refuses it (SQLite would take it for an empty database)...
    let err = Store::open(&path).unwrap_err();
    assert!(err.to_string().contains("cut short"), "{err}");
    // ...and `open_or_recover` keeps it aside and starts again.
    let (store, moved) = Store::open_or_recover(&path).unwrap();
    let moved = moved.expect("moved aside");
    assert!(moved.reason.contains("cut short"), "{moved:?}");
    assert_eq!(std::fs::read(&moved.to).unwrap(), whole[..1000].to_vec());
    assert!(moved.to.starts_with(dir.path()));
    assert!(store.hook_receipts().unwrap().is_empty());
}

#[test]
fn write_failures_are_remembered_until_a_write_succeeds() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path).unwrap();
    assert_eq!(store.write_failure(), None);
    // Another process holds the write lock: lidguard's writes fail (after the busy timeout).
    let holder = rusqlite::Connection::open(&path).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();
    assert!(store.record_hook_receipt("claude", "Stop", ts(0)).is_err());
    let failure = store.write_failure().expect("remembered");
    assert!(failure.contains("lidguard.db"), "{failure}");
    // Reads neither set nor clear it.
    let _ = store.hook_receipts();
    assert!(store.write_failure().is_some());
    holder.execute_batch("COMMIT").unwrap();
    store.record_hook_receipt("claude", "Stop", ts(1)).unwrap();
    assert_eq!(store.write_failure(), None);
}

#[test]
fn corrupt_binary_file_is_reported() {
    let (_dir, path) = temp_db();
    // Deterministic pseudo-random bytes.
    let mut x: u32 = 0x9E37_79B9;
    let bytes: Vec<u8> = (0..4096)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x as u8
        })
        .collect();
    std::fs::write(&path, bytes).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err:?}");
    assert!(err.to_string().contains(&path.display().to_string()));
}

#[test]
fn locked_new_database_fails_fast_on_open() {
    let (_dir, path) = temp_db();
    let holder = rusqlite::Connection::open(&path).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();

    let started = Instant::now();
    let err = Store::open(&path).unwrap_err();
    assert_fast(started);
    assert!(matches!(err, StoreError::Locked { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains("locked by another process"), "{msg}");

    // Once the other process lets go, opening works.
    holder.execute_batch("ROLLBACK").unwrap();
    Store::open(&path).unwrap();
}

#[test]
fn locked_existing_database_fails_fast_on_open() {
    let (_dir, path) = temp_db();
    drop(Store::open(&path).unwrap()); // now a WAL database with the schema
    let holder = rusqlite::Connection::open(&path).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();

    let started = Instant::now();
    let err = Store::open(&path).unwrap_err();
    assert_fast(started);
    assert!(matches!(err, StoreError::Locked { .. }), "{err:?}");
}

#[test]
fn locked_database_fails_fast_on_write() {
    let (_dir, path) = temp_db();
    let store = Store::open(&path).unwrap();
    let holder = rusqlite::Connection::open(&path).unwrap();
    holder.execute_batch("BEGIN EXCLUSIVE").unwrap();

    let expect_locked = |name: &str, started: Instant, result: Result<(), StoreError>| {
        assert_fast(started);
        let err = result.unwrap_err();
        assert!(matches!(err, StoreError::Locked { .. }), "{name}: {err:?}");
        assert!(err.to_string().contains(&path.display().to_string()));
    };
    let started = Instant::now();
    let result = store.upsert_session(&key("a", "b", "c"), "{}", ts(0));
    expect_locked("upsert_session", started, result);
    let started = Instant::now();
    let result = store.append_event(&event(0));
    expect_locked("append_event", started, result);
    let started = Instant::now();
    let result = store.save_policy_backup("lid", "1", ts(0)).map(drop);
    expect_locked("save_policy_backup", started, result);
    let started = Instant::now();
    let result = store.record_hook_receipt("a", "b", ts(0));
    expect_locked("record_hook_receipt", started, result);
    // WAL lets reads go on while another process writes.
    assert!(store.load_sessions().unwrap().is_empty());

    holder.execute_batch("ROLLBACK").unwrap();
    store.append_event(&event(1)).unwrap();
}

#[test]
fn missing_parent_directory_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let missing = dir.path().join("no-such-dir");
    let path = missing.join("lidguard.db");
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Directory { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains(&missing.display().to_string()), "{msg}");
    assert!(!missing.exists(), "open must not create the directory");
}

#[test]
fn parent_that_is_a_file_is_named() {
    // Permission bits do not stop root, but a regular file as parent fails for everyone.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("plain-file");
    std::fs::write(&file, "x").unwrap();
    let path = file.join("lidguard.db");
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Directory { .. }), "{err:?}");
    let msg = err.to_string();
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    assert!(msg.contains("not a directory"), "{msg}");
}

#[test]
fn database_path_that_is_a_directory_is_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("lidguard.db");
    std::fs::create_dir(&path).unwrap();
    let err = Store::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Access { .. }), "{err:?}");
    assert!(err.to_string().contains(&path.display().to_string()));
}

#[test]
fn too_new_schema_version_is_refused() {
    let (_dir, path) = temp_db();
    let too_new = Store::latest_schema_version() + 1;
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.pragma_update(None, "user_version", too_new).unwrap();
    }
    let before = std::fs::read(&path).unwrap();
    let err = Store::open(&path).unwrap_err();
    match &err {
        StoreError::TooNew {
            found, supported, ..
        } => {
            assert_eq!(*found, too_new);
            assert_eq!(*supported, Store::latest_schema_version());
        }
        other => panic!("expected TooNew, got {other:?}"),
    }
    assert_eq!(
        std::fs::read(&path).unwrap(),
        before,
        "not one byte of the newer database changed"
    );
    let msg = err.to_string();
    assert!(msg.contains("created by a newer lidguard"), "{msg}");
    assert!(msg.contains(&path.display().to_string()), "{msg}");
    // The refused database is left as it was.
    let conn = rusqlite::Connection::open(&path).unwrap();
    let version: u32 = conn
        .pragma_query_value(None, "user_version", |row| row.get(0))
        .unwrap();
    assert_eq!(version, too_new);
}

#[test]
fn failed_migration_names_the_version() {
    // A foreign database that already has a table of the same name.
    let (_dir, path) = temp_db();
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE events (x)").unwrap();
    }
    let err = Store::open(&path).unwrap_err();
    assert!(
        matches!(err, StoreError::Migration { version: 1, .. }),
        "{err:?}"
    );
    assert!(err.to_string().contains(&path.display().to_string()));
    // The failed step was rolled back as a whole.
    let conn = rusqlite::Connection::open(&path).unwrap();
    let tables: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE name = 'sessions'",
            [],
            |row| row.get(0),
        )
        .unwrap();
    assert_eq!(tables, 0);
}

#[test]
fn a_batch_commits_every_kind_of_write_in_order_and_keeps_the_event_limit() {
    let (_dir, path) = temp_db();
    let mut store = Store::open(&path).unwrap();
    store.set_event_log_limit(5);
    let mut writes = Vec::new();
    for i in 0..12 {
        writes.push(StoreWrite::Event(event(i)));
        // Other tables' inserts in between must not confuse the event log's trimming.
        writes.push(StoreWrite::HookReceipt {
            provider: "claude".into(),
            event: "PostToolUse".into(),
            at: ts(i as i64),
        });
        writes.push(StoreWrite::UpsertSession {
            provider: "claude".into(),
            session_id: format!("s{i}"),
            provider_name: String::new(),
            data_json: "{}".into(),
            updated_at: ts(i as i64),
        });
    }
    writes.push(StoreWrite::DeleteSession {
        provider: "claude".into(),
        session_id: "s0".into(),
        provider_name: String::new(),
    });
    store.write_batch(&writes).unwrap();
    let events = store.recent_events(100).unwrap();
    let names: Vec<&str> = events.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(names.len(), 5, "{names:?}");
    assert_eq!(events.last().unwrap(), &event(11));
    assert_eq!(store.hook_receipts().unwrap()[0].count, 12);
    assert_eq!(store.load_sessions().unwrap().len(), 11);
    assert_eq!(store.write_failure(), None);
}

#[test]
fn daemon_state_is_kept_replaced_and_forgotten_across_opens() {
    let (_dir, path) = temp_db();
    let put = |json: Option<&str>| {
        let store = Store::open(&path).unwrap();
        let write = StoreWrite::DaemonState {
            key: "pause",
            data_json: json.map(str::to_owned),
        };
        store.write_batch_synced(&[write]).unwrap();
    };
    let read = || Store::open(&path).unwrap().daemon_state("pause").unwrap();
    assert_eq!(read(), None);
    put(Some(r#"{"until":null}"#));
    assert_eq!(read().as_deref(), Some(r#"{"until":null}"#));
    put(Some(r#"{"until":"2026-12-06T00:00:00Z"}"#));
    assert_eq!(
        read().as_deref(),
        Some(r#"{"until":"2026-12-06T00:00:00Z"}"#)
    );
    put(None);
    assert_eq!(read(), None);
}
