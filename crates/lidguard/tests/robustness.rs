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

/// What sits in the socket's place once the daemon moved it aside (`lidguard.sock.found-…`).
fn found_beside_socket(home: &Home) -> Vec<std::path::PathBuf> {
    let run = home.socket().parent().unwrap().to_path_buf();
    std::fs::read_dir(run)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.to_string_lossy().contains("lidguard.sock.found-"))
        .collect()
}

/// A file put in the socket's place does not make lidguard unusable: the running daemon binds
/// its socket again at once (the file kept beside it) and the next `start` is answered by it.
#[test]
fn a_socket_replaced_by_a_file_is_bound_again_and_the_next_start_answered_at_once() {
    let home = Home::new();
    home.ok(&["start", "--provider", "claude", "--session", "s"]);
    let pid = home.daemon_pid().unwrap();
    // In one step: between a removal and a write the daemon may already have bound its
    // socket again, and the write would then meet the socket.
    let notes = home.path().join("notes");
    std::fs::write(&notes, "someone's notes\n").unwrap();
    std::fs::rename(&notes, home.socket()).unwrap();

    let began = std::time::Instant::now();
    let said = home.ok(&["start", "--provider", "claude", "--session", "t"]);
    let took = began.elapsed();
    assert!(took < std::time::Duration::from_secs(3), "{took:?}: {said}");
    assert_eq!(home.daemon_pid(), Some(pid), "the same daemon answers");
    assert_eq!(home.session_ids(), ["s", "t"]);
    let found = found_beside_socket(&home);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        std::fs::read_to_string(&found[0]).unwrap(),
        "someone's notes\n"
    );
}

/// A daemon that cannot answer (stopped here) while a file is in its socket's place is named
/// at once, with its pid and what is there; once it runs again it binds its socket again.
#[test]
fn a_daemon_that_cannot_answer_is_named_at_once_with_what_is_in_its_sockets_place() {
    let home = Home::new();
    home.ok(&["start", "--provider", "claude", "--session", "s"]);
    let pid = home.daemon_pid().unwrap();
    let signal = |name: &str| {
        let status = std::process::Command::new("kill")
            .args([format!("-{name}"), pid.to_string()])
            .status()
            .unwrap();
        assert!(status.success());
    };
    signal("STOP");
    std::fs::remove_file(home.socket()).unwrap();
    std::fs::write(home.socket(), "x").unwrap();

    let began = std::time::Instant::now();
    let err = home.fails(&["start", "--provider", "claude", "--session", "t"]);
    let took = began.elapsed();
    signal("CONT");
    assert!(took < std::time::Duration::from_secs(3), "{took:?}: {err}");
    assert!(err.contains(&format!("(pid {pid})")), "{err}");
    assert!(err.contains("a file is in the socket's place"), "{err}");
    assert!(err.contains(&format!("`kill {pid}`")), "{err}");

    assert!(crate::util::eventually(
        std::time::Duration::from_secs(5),
        || home.daemon_answers()
    ));
    home.ok(&["start", "--provider", "claude", "--session", "t"]);
    assert_eq!(home.daemon_pid(), Some(pid));
}

/// Folders the user cannot write are said at once, as another user would meet them: a
/// read-only state folder on `start` (the session runs, unsaved), a read-only runtime folder
/// as the reason the daemon cannot start.
#[test]
fn folders_it_cannot_write_are_said_at_once() {
    const UID: u32 = 4243;
    let home = Home::new();
    std::fs::create_dir_all(home.path().join("state")).unwrap();
    home.chown_to(UID);
    let read_only = |dir: &str| {
        use std::os::unix::fs::PermissionsExt;
        let path = home.path().join(dir);
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o500)).unwrap();
    };
    read_only("state");
    let start = |id: &str| {
        let began = std::time::Instant::now();
        let out = home
            .cmd_as(UID, &["start", "--provider", "claude", "--session", id])
            .output()
            .unwrap();
        (out, began.elapsed())
    };
    let (out, took) = start("s");
    let said = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(took < std::time::Duration::from_secs(3), "{took:?}");
    assert!(
        said.contains("not saved to the database") && said.contains("state/lidguard.db"),
        "{said}"
    );
    let stop = home.cmd_as(UID, &["daemon-stop"]).output().unwrap();
    assert!(stop.status.success(), "{stop:?}");

    std::fs::remove_dir_all(home.path().join("run")).unwrap();
    std::fs::create_dir(home.path().join("run")).unwrap();
    home.chown_to(UID);
    read_only("run");
    let (out, took) = start("s");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{out:?}");
    assert!(took < std::time::Duration::from_secs(3), "{took:?}");
    assert!(
        err.contains("cannot open the lock file") && err.contains("run/lidguard.lock"),
        "{err}"
    );
}
