use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;

use crate::util::Home;

fn raw(home: &Home, bytes: &[u8]) -> serde_json::Value {
    let mut stream = UnixStream::connect(home.socket()).unwrap();
    // The daemon may stop reading early (oversized requests) and answer at once.
    let _ = stream.write_all(bytes);
    let _ = stream.shutdown(std::net::Shutdown::Write);
    let mut line = String::new();
    BufReader::new(stream).read_line(&mut line).unwrap();
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
}

#[test]
fn malformed_requests_get_errors_and_the_daemon_keeps_serving() {
    let home = Home::new();
    home.ok(&["start", "--provider", "claude", "--session", "s"]);
    let cases: &[&[u8]] = &[
        b"garbage\n",
        b"{\"v\":1}\n",
        b"{\"v\":1,\"command\":\"start\"}\n",
        b"{\"v\":7,\"command\":\"status\"}\n",
        b"{\"command\":\"status\"}\n",
        b"{\"v\":1,\"command\":\"start\",\"provider\":\"nope\",\"sessionId\":\"x\"}\n",
        b"\xff\xfe\x00\n",
        b"[1,2,3]",
    ];
    for bytes in cases {
        let answer = raw(&home, bytes);
        assert_eq!(
            answer["ok"],
            false,
            "{:?} -> {answer}",
            String::from_utf8_lossy(bytes)
        );
        assert!(!answer["message"].as_str().unwrap().is_empty());
    }
    let answer = raw(&home, b"{\"v\":7,\"command\":\"status\"}\n");
    assert!(answer["message"].as_str().unwrap().contains("version 7"));
    // A huge line is refused, not buffered forever.
    let mut huge = vec![b'a'; 2 << 20];
    huge.push(b'\n');
    let answer = raw(&home, &huge);
    assert!(
        answer["message"].as_str().unwrap().contains("too large"),
        "{answer}"
    );
    // An empty connection is fine too.
    drop(UnixStream::connect(home.socket()).unwrap());
    assert_eq!(home.status()["sessions"][0]["sessionId"], "s");
}

/// Runs `lidguard status` as another uid.
fn status_as_other_user(home: &Home) -> std::process::Output {
    home.cmd_as(4242, &["status"]).output().unwrap()
}

#[test]
fn another_users_connection_is_refused() {
    if !rustix::process::getuid().is_root() {
        eprintln!("skipping: switching uid needs root");
        return;
    }
    let home = Home::new();
    home.ok(&["start", "--provider", "claude", "--session", "s"]);
    // The home itself must be reachable for the other user to get as far as the socket.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o755)).unwrap();

    // First wall: the runtime directory is private.
    let out = status_as_other_user(&home);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("ermission denied"), "{err}");

    // Second wall: even with the directory and socket opened up, the daemon checks the uid.
    std::fs::set_permissions(
        &home.places.runtime_dir,
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::fs::set_permissions(home.socket(), std::fs::Permissions::from_mode(0o666)).unwrap();
    let out = status_as_other_user(&home);
    assert!(
        !out.status.success(),
        "stdout: {}\nstderr: {}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("connection refused") && err.contains("4242"),
        "{err}"
    );
    // The owner is still served.
    assert_eq!(home.status()["sessions"][0]["sessionId"], "s");
}

#[test]
fn a_corrupt_settings_file_is_reported_and_never_overwritten() {
    let home = Home::new();
    home.write_settings("{ \"sessionTimeoutMinutes\": 5, oops");
    let path = home.places.settings_file();
    let err = home.fails(&["settings", "--suspend-mode", "hibernate"]);
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{ \"sessionTimeoutMinutes\": 5, oops"
    );

    // The daemon still runs, with defaults, and says why.
    home.ok(&["start", "--provider", "claude", "--session", "s"]);
    let status = home.status();
    assert!(
        crate::util::text(&status["settingsError"]).contains("settings.json"),
        "{status}"
    );
    assert_eq!(status["settings"]["sessionTimeoutMinutes"], 12);
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "{ \"sessionTimeoutMinutes\": 5, oops"
    );
}

/// The files next to the database whose names start with `lidguard.db.corrupt-`.
fn moved_aside(home: &Home) -> Vec<std::path::PathBuf> {
    let mut found: Vec<_> = std::fs::read_dir(&home.places.state_dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("lidguard.db.corrupt-"))
        })
        .collect();
    found.sort();
    found
}

#[test]
fn a_corrupt_database_is_moved_aside_kept_and_named_and_a_new_one_is_used() {
    let home = Home::new();
    std::fs::create_dir_all(&home.places.state_dir).unwrap();
    let db = home.places.database();
    std::fs::write(&db, vec![b'x'; 8192]).unwrap();
    home.ok(&["start", "--provider", "claude", "--session", "s"]);
    let status = home.status();
    assert_eq!(
        status["store"]["error"],
        serde_json::Value::Null,
        "{status}"
    );
    let moved = &status["store"]["movedAside"];
    assert!(
        crate::util::text(&moved["reason"]).contains("SQLite's header"),
        "{status}"
    );
    let kept = moved_aside(&home);
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(moved["path"], kept[0].display().to_string());
    assert_eq!(
        std::fs::read(&kept[0]).unwrap(),
        vec![b'x'; 8192],
        "the damaged file is kept, byte for byte"
    );
    let human = home.ok(&["status"]);
    assert!(human.contains("moved aside to"), "{human}");
    // The new database is in use: the session was saved into it.
    let conn = rusqlite::Connection::open(&db).unwrap();
    let n: i64 = conn
        .query_row("SELECT count(*) FROM sessions", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 1);
}

#[test]
fn a_database_cut_short_is_not_silently_replaced() {
    let home = Home::new();
    // A real database with history, then truncated to 1,000 bytes.
    home.ok(&["start", "--provider", "claude", "--session", "s"]);
    home.ok(&["stop", "--provider", "claude", "--session", "s"]);
    crate::util::signal(home.daemon_pid().unwrap(), rustix::process::Signal::TERM);
    assert!(home.wait_daemon_gone(std::time::Duration::from_secs(10)));
    let db = home.places.database();
    let whole = std::fs::read(&db).unwrap();
    assert!(whole.len() >= 4096);
    std::fs::write(&db, &whole[..1000]).unwrap();
    for suffix in ["-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", db.display()));
    }
    home.ok(&["start", "--provider", "claude", "--session", "t"]);
    let status = home.status();
    let reason = status["store"]["movedAside"]["reason"].as_str().unwrap();
    assert!(reason.contains("cut short"), "{status}");
    let kept = moved_aside(&home);
    assert_eq!(std::fs::read(&kept[0]).unwrap(), whole[..1000].to_vec());
}

#[test]
fn a_database_from_a_newer_lidguard_is_left_byte_for_byte() {
    let home = Home::new();
    std::fs::create_dir_all(&home.places.state_dir).unwrap();
    let db = home.places.database();
    {
        let conn = rusqlite::Connection::open(&db).unwrap();
        conn.execute_batch("CREATE TABLE future(x); PRAGMA user_version = 999;")
            .unwrap();
    }
    let before = std::fs::read(&db).unwrap();
    home.ok(&["start", "--provider", "claude", "--session", "s"]);
    let status = home.status();
    let err = status["store"]["error"].as_str().unwrap();
    assert!(
        err.contains("schema version 999") && err.contains("untouched"),
        "{err}"
    );
    assert_eq!(status["sessions"][0]["sessionId"], "s");
    crate::util::signal(home.daemon_pid().unwrap(), rustix::process::Signal::TERM);
    assert!(home.wait_daemon_gone(std::time::Duration::from_secs(10)));
    assert_eq!(std::fs::read(&db).unwrap(), before, "not one byte changed");
    assert!(moved_aside(&home).is_empty());
}

#[test]
fn a_locked_database_degrades_without_hanging() {
    let home = Home::new();
    std::fs::create_dir_all(&home.places.state_dir).unwrap();
    let conn = rusqlite::Connection::open(home.places.database()).unwrap();
    conn.execute_batch(
        "PRAGMA journal_mode=DELETE; CREATE TABLE x(y); BEGIN EXCLUSIVE; INSERT INTO x VALUES (1);",
    )
    .unwrap();
    let started = std::time::Instant::now();
    home.ok(&["start", "--provider", "claude", "--session", "s"]);
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    let status = home.status();
    assert!(
        crate::util::text(&status["store"]["error"]).contains("locked"),
        "{status}"
    );
    assert_eq!(status["sessions"][0]["state"], "active");
    drop(conn);
}

#[test]
fn an_unusable_state_directory_degrades_with_a_clear_reason() {
    let home = Home::new();
    // A file where the state directory should be: unwritable even for root.
    std::fs::write(home.path().join("state"), "not a directory").unwrap();
    home.ok(&["start", "--provider", "claude", "--session", "s"]);
    let status = home.status();
    let err = status["store"]["error"].as_str().unwrap();
    assert!(err.contains("state directory"), "{err}");
    assert_eq!(status["sessions"][0]["sessionId"], "s");
}

#[test]
fn an_unusable_runtime_directory_is_a_clear_error() {
    let home = Home::new();
    std::fs::write(home.path().join("run"), "not a directory").unwrap();
    let err = home.fails(&["start", "--provider", "claude", "--session", "s"]);
    assert!(
        err.contains("cannot start the lidguard daemon") || err.contains("run"),
        "{err}"
    );
}
