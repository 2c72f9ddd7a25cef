//! `process::is_alive` against real processes and a fake proc tree.
#![allow(
    clippy::disallowed_methods,
    reason = "tests write fixtures and read the environment"
)]

use lidguard_platform::process::is_alive;
use lidguard_platform::sources::Roots;

#[test]
fn own_process_is_alive() {
    assert!(is_alive(&Roots::from_env(), std::process::id()));
}

#[test]
fn pid_zero_is_never_alive() {
    assert!(!is_alive(&Roots::system(), 0));
}

#[cfg(unix)]
#[test]
fn reaped_child_is_gone() {
    let mut child = std::process::Command::new("true")
        .spawn()
        .expect("spawn true");
    let pid = child.id();
    child.wait().expect("wait");
    assert!(!is_alive(&Roots::system(), pid));
}

#[cfg(target_os = "linux")]
#[test]
fn running_then_zombie_then_reaped_child() {
    use std::time::{Duration, Instant};

    let mut child = std::process::Command::new("sleep")
        .arg("0.3")
        .spawn()
        .expect("spawn sleep");
    let pid = child.id();
    assert!(is_alive(&Roots::system(), pid), "running");

    // Not waited for yet: once it exits it stays a zombie, which does not count as alive.
    let deadline = Instant::now() + Duration::from_secs(5);
    while is_alive(&Roots::system(), pid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .expect("the zombie's stat is still there");
    assert!(stat.contains(") Z "), "{stat}");
    assert!(!is_alive(&Roots::system(), pid), "zombie");

    child.wait().expect("reap");
    assert!(!is_alive(&Roots::system(), pid), "reaped");
}

#[cfg(target_os = "linux")]
#[test]
fn fake_proc_tree_states() {
    let dir = tempfile::tempdir().expect("tempdir");
    let roots = Roots::new(dir.path().join("proc"), dir.path().join("sys"));
    let write = |pid: u32, line: &str| {
        let path = roots.proc_root.join(pid.to_string());
        std::fs::create_dir_all(&path).expect("mkdir");
        std::fs::write(path.join("stat"), line).expect("write");
    };
    write(100, "100 (claude) S 1 100 100 0 -1 4194560 0 0\n");
    write(101, "101 (codex) Z 1 101 101 0 -1 4194560 0 0\n");
    write(102, "102 (a) b) c) R 1 102 102 0\n");
    write(103, "103 (weird) Z) X 1 0\n");
    write(104, "104 (node) D 1 0\n");
    write(105, "105 (");

    assert!(is_alive(&roots, 100), "sleeping");
    assert!(!is_alive(&roots, 101), "zombie");
    assert!(is_alive(&roots, 102), "name with ') ' in it, running");
    assert!(
        !is_alive(&roots, 103),
        "dead (X) after a name containing ') Z'"
    );
    assert!(is_alive(&roots, 104), "uninterruptible sleep");
    assert!(
        is_alive(&roots, 105),
        "an entry exists even if its stat line is cut short"
    );
    assert!(!is_alive(&roots, 999), "no entry");
    // The real process list is not consulted for overridden roots.
    assert!(!is_alive(&roots, std::process::id()));
}

#[test]
fn ancestry_walks_parents_from_a_fake_proc_tree() {
    use lidguard_platform::process::ancestry;
    let dir = tempfile::tempdir().unwrap();
    let proc_root = dir.path().join("proc");
    let add = |pid: u32, ppid: u32, comm: &str, cmdline: &[&str]| {
        let d = proc_root.join(pid.to_string());
        std::fs::create_dir_all(&d).unwrap();
        std::fs::write(d.join("stat"), format!("{pid} ({comm}) S {ppid} 1 1 0")).unwrap();
        std::fs::write(d.join("comm"), format!("{comm}\n")).unwrap();
        std::fs::write(d.join("cmdline"), cmdline.join("\0") + "\0").unwrap();
    };
    add(40, 30, "lidguard", &["lidguard", "claude-hook"]);
    add(30, 20, "sh", &["/bin/sh", "-c", "lidguard claude-hook"]);
    add(20, 10, "claude", &["claude", "-p", "hi"]);
    add(10, 1, "bash", &["-bash"]);
    let roots = lidguard_platform::sources::Roots::new(&proc_root, dir.path().join("sys"));
    let chain = ancestry(&roots, 40, 16);
    let names: Vec<_> = chain.iter().map(|p| p.name.as_str()).collect();
    assert_eq!(names, ["sh", "claude", "bash"]);
    assert_eq!(chain[1].cmdline, "claude -p hi");
    assert_eq!(chain[1].ppid, 10);
    assert_eq!(ancestry(&roots, 40, 1).len(), 1);
    // A cycle stops the walk instead of looping.
    add(10, 20, "bash", &["-bash"]);
    assert_eq!(ancestry(&roots, 40, 16).len(), 3);
    // A missing process ends it.
    assert!(ancestry(&roots, 999, 16).is_empty());
}
