//! macOS's plain parts through the real CLI on this machine: `macos-permission` writing the
//! sudoers drop-in (checked by the real `visudo`) and the launchd job into temporary
//! directories, and `SleepDisabled` left set by a dead daemon put back by the next command and by
//! the `power-restore --wait-for-daemon` watcher — the setting kept in the file below
//! `LIDGUARD_SYS_ROOT`, the backups in the real store.

use std::path::Path;
use std::process::{Output, Stdio};
use std::time::Duration;

use lidguard_daemon::{InstanceLock, StoreBackups};
use lidguard_ipc::Places;
use lidguard_platform::pmset::{FileSetting, PerSource, Setting};
use lidguard_platform::sleep_disabled;

use crate::util::{Home, eventually};

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn visudo_present() -> bool {
    let present = Path::new("/usr/sbin/visudo").exists();
    crate::util::runs_here((!present).then(|| "visudo (the sudo package) is missing".to_owned()))
}

/// This process's user name (the account must exist for the job's owner).
fn me() -> String {
    let uid = rustix::process::getuid();
    let passwd = std::fs::read_to_string("/etc/passwd").unwrap();
    passwd
        .lines()
        .find_map(|line| {
            let fields: Vec<&str> = line.split(':').collect();
            (fields.get(2) == Some(&uid.as_raw().to_string().as_str()))
                .then(|| fields[0].to_owned())
        })
        .unwrap()
}

#[test]
fn macos_permission_dry_run_install_status_remove() {
    if !visudo_present() {
        return;
    }
    let home = Home::new();
    let sudoers = tempfile::tempdir().unwrap();
    let user_home = tempfile::tempdir().unwrap();
    let user = me();
    let args = |action: &str, extra: &[&str]| {
        let mut all = vec![
            "macos-permission",
            action,
            "--sudoers-dir",
            sudoers.path().to_str().unwrap(),
            "--home",
            user_home.path().to_str().unwrap(),
            "--user",
            &user,
        ];
        all.extend_from_slice(extra);
        all.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let run = |a: Vec<String>| {
        let refs: Vec<&str> = a.iter().map(String::as_str).collect();
        home.run(&refs)
    };

    let dry = run(args("install", &["--dry-run"]));
    let shown = text(&dry);
    assert!(dry.status.success(), "{shown}");
    assert!(
        shown.contains(&format!(
            "{user} ALL=(root) NOPASSWD: /usr/bin/pmset -a disablesleep 1, /usr/bin/pmset -a \
             disablesleep 0, /usr/bin/pmset -a hibernatemode 25, /usr/bin/pmset -b hibernatemode \
             0, /usr/bin/pmset -b hibernatemode 3, /usr/bin/pmset -b hibernatemode 25, \
             /usr/bin/pmset -c hibernatemode 0, /usr/bin/pmset -c hibernatemode 3, \
             /usr/bin/pmset -c hibernatemode 25"
        )),
        "{shown}"
    );
    assert!(shown.contains("accepted by visudo -cf"), "{shown}");
    assert!(
        shown.contains("<string>--wait-for-daemon</string>"),
        "{shown}"
    );
    assert_eq!(std::fs::read_dir(sudoers.path()).unwrap().count(), 0);
    assert!(!user_home.path().join("Library").exists());

    let out = run(args("install", &[]));
    assert!(out.status.success(), "{}", text(&out));
    let rule = sudoers.path().join("lidguard");
    let job = user_home
        .path()
        .join("Library/LaunchAgents/dev.lidguard.power-restore.plist");
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o7777;
    assert_eq!(mode(&rule), 0o440);
    assert_eq!(mode(&job), 0o644);
    let exe = std::fs::read_to_string(&job).unwrap();
    assert!(exe.contains(env!("CARGO_BIN_EXE_lidguard")), "{exe}");

    let status = run(args("status", &[]));
    let shown = text(&status);
    assert!(shown.contains(&format!("installed for {user}")), "{shown}");
    assert!(
        shown.contains("launchd job") && shown.contains(": installed"),
        "{shown}"
    );

    let again = run(args("install", &[]));
    assert!(
        text(&again).contains("already installed"),
        "{}",
        text(&again)
    );

    let out = run(args("remove", &[]));
    assert!(out.status.success(), "{}", text(&out));
    assert!(!rule.exists() && !job.exists());
}

#[test]
fn macos_permission_leaves_foreign_files_alone() {
    if !visudo_present() {
        return;
    }
    let home = Home::new();
    let sudoers = tempfile::tempdir().unwrap();
    let user_home = tempfile::tempdir().unwrap();
    std::fs::write(sudoers.path().join("lidguard"), "me ALL=(ALL) ALL\n").unwrap();
    let out = home.run(&[
        "macos-permission",
        "install",
        "--sudoers-dir",
        sudoers.path().to_str().unwrap(),
        "--home",
        user_home.path().to_str().unwrap(),
        "--user",
        &me(),
    ]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("not written by lidguard"),
        "{}",
        text(&out)
    );
    assert_eq!(
        std::fs::read_to_string(sudoers.path().join("lidguard")).unwrap(),
        "me ALL=(ALL) ALL\n"
    );
    assert!(!user_home.path().join("Library").exists());
}

/// `SleepDisabled` in the file below `sys`.
fn sleep_disabled_now(sys: &Path) -> bool {
    Setting::<bool>::read(&FileSetting::sleep_disabled(sys)).unwrap()
}

/// What a daemon killed with sleep disabled leaves: the backup (0) in the store and the setting
/// at 1. Returns the sys root.
fn left_by_a_dead_daemon(home: &Home) -> std::path::PathBuf {
    let sys = home.path().join("sys");
    std::fs::create_dir_all(sys.join("power")).unwrap();
    let file = FileSetting::sleep_disabled(&sys);
    let setting: &dyn Setting<bool> = &file;
    setting.write(false).unwrap();
    let backups = StoreBackups::open(&Places::under(home.path())).unwrap();
    sleep_disabled::change(setting, &backups).unwrap();
    assert!(setting.read().unwrap());
    sys
}

#[test]
fn any_command_puts_back_sleep_disabled_left_by_a_dead_daemon() {
    let home = Home::new();
    let sys = left_by_a_dead_daemon(&home);
    let out = home
        .cmd(&["settings"])
        .env("LIDGUARD_SYS_ROOT", &sys)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(
            "restored your SleepDisabled setting (0), which a stopped daemon had left changed"
        ),
        "{}",
        text(&out)
    );
    assert!(!sleep_disabled_now(&sys));
    // Settled: nothing is restored twice.
    let out = home
        .cmd(&["power-restore"])
        .env("LIDGUARD_SYS_ROOT", &sys)
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "nothing to restore\n");
}

#[test]
fn the_watcher_restores_once_the_daemon_is_gone() {
    let home = Home::new();
    let sys = left_by_a_dead_daemon(&home);
    let places = Places::under(home.path());
    places.ensure_runtime_dir().unwrap();
    // A daemon still holds the instance lock (and the change).
    let daemon = InstanceLock::acquire(&places.lock_file()).unwrap();
    let spawn = || {
        home.cmd(&["power-restore", "--wait-for-daemon"])
            .env("LIDGUARD_SYS_ROOT", &sys)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap()
    };
    let mut watcher = spawn();
    std::thread::sleep(Duration::from_millis(500));
    assert!(
        watcher.try_wait().unwrap().is_none(),
        "it waits for the daemon"
    );
    assert!(sleep_disabled_now(&sys));

    // A second watcher leaves at once.
    let second = spawn().wait_with_output().unwrap();
    assert!(second.status.success());
    assert_eq!(
        String::from_utf8_lossy(&second.stdout),
        "nothing to restore\n"
    );

    drop(daemon);
    assert!(
        eventually(Duration::from_secs(10), || watcher
            .try_wait()
            .unwrap()
            .is_some()),
        "the watcher ends after the daemon"
    );
    let out = watcher.wait_with_output().unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("restored your SleepDisabled setting (0)"),
        "{}",
        text(&out)
    );
    assert!(!sleep_disabled_now(&sys));
}

/// The lid closed while a dead daemon held it: once `SleepDisabled` is back, the watcher does
/// what the kernel would have done at that lid close (it does not look at a lid closed before)
/// and puts the Mac to sleep — a request recorded below the relocated system; with the lid open
/// the Mac stays awake.
#[test]
fn the_watcher_puts_a_closed_mac_to_sleep_after_putting_sleep_back() {
    for (lid, requests, then) in [
        (
            "closed",
            "sleepnow\n",
            "the lid is closed, so the Mac was put to sleep as it would have been",
        ),
        ("open", "", "the Mac stays awake: the lid is open"),
    ] {
        let home = Home::new();
        let sys = left_by_a_dead_daemon(&home);
        let (proc_root, _) = crate::util::fake_roots(&home, lid);
        let out = home
            .cmd(&["power-restore", "--wait-for-daemon"])
            .env("LIDGUARD_SYS_ROOT", &sys)
            .env("LIDGUARD_PROC_ROOT", &proc_root)
            .output()
            .unwrap();
        assert!(out.status.success(), "{}", text(&out));
        assert_eq!(
            String::from_utf8_lossy(&out.stdout),
            format!(
                "restored your SleepDisabled setting (0), which a stopped daemon had left \
                 changed; {then}\n"
            ),
            "lid {lid}"
        );
        assert!(!sleep_disabled_now(&sys));
        let asked = std::fs::read_to_string(sys.join("power/sleep-requests")).unwrap_or_default();
        assert_eq!(asked, requests, "lid {lid}");
    }
}

#[test]
fn power_restore_puts_back_the_hibernate_mode_of_an_interrupted_hibernation() {
    let home = Home::new();
    let sys = home.path().join("sys");
    std::fs::create_dir_all(sys.join("power")).unwrap();
    let file = FileSetting::hibernate_mode(&sys);
    let mode: &dyn Setting<PerSource> = &file;
    // The user's own modes per power source.
    let users = PerSource {
        battery: Some(25),
        ac: Some(3),
    };
    mode.write(users).unwrap();
    let backups = StoreBackups::open(&Places::under(home.path())).unwrap();
    lidguard_platform::hibernate_mode::prepare(mode, &backups).unwrap();
    assert_eq!(mode.read().unwrap(), PerSource::both(25));
    drop(backups);

    let out = home
        .cmd(&["power-restore"])
        .env("LIDGUARD_SYS_ROOT", &sys)
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "restored your hibernatemode (battery 25, AC 3), which a stopped daemon had left \
         changed\n"
    );
    assert_eq!(mode.read().unwrap(), users);
}

/// Every file below `dir` owned by root, links not followed.
fn root_owned_below(dir: &Path) -> Vec<std::path::PathBuf> {
    use std::os::unix::fs::MetadataExt;
    let mut found = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap().flatten() {
            let meta = entry.path().symlink_metadata().unwrap();
            if meta.uid() == 0 {
                found.push(entry.path());
            }
            if meta.is_dir() {
                stack.push(entry.path());
            }
        }
    }
    found
}

/// `sudo macos-permission install` writes the launchd job into the user's
/// `~/Library/LaunchAgents`. Links the user planted at the temporary and the final names, or in
/// place of the folder, change no file of root's, and nothing root-owned is left in the home.
#[test]
fn root_is_not_tricked_through_links_in_the_users_home() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt, symlink};
    if !visudo_present() || !rustix::process::geteuid().is_root() {
        return;
    }
    // `nobody` exists on every Debian system: the job's owner needs an account.
    let (user, uid) = ("nobody", 65534);
    let home = Home::new();
    let sudoers = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    let victim = outside.path().join("root-only");
    std::fs::write(&victim, "root's secret").unwrap();
    std::fs::set_permissions(&victim, std::fs::Permissions::from_mode(0o600)).unwrap();
    let user_home = tempfile::tempdir().unwrap();
    let agents = user_home.path().join("Library/LaunchAgents");
    std::fs::create_dir_all(&agents).unwrap();
    let plist = lidguard_platform::launchd::agent_path(user_home.path());
    let name = plist.file_name().unwrap().to_str().unwrap().to_owned();
    // Where an earlier lidguard wrote before renaming.
    let earlier_temp = agents.join(format!("{name}.lidguard-tmp"));
    symlink(&victim, &earlier_temp).unwrap();
    symlink(&victim, &plist).unwrap();
    for pid in 1..64 {
        let _ = symlink(&victim, agents.join(format!(".{name}.lidguard-{pid}")));
    }
    let chown = |path: &Path| {
        let status = std::process::Command::new("chown")
            .args(["-R", "-h", &format!("{uid}:{uid}")])
            .arg(path)
            .status()
            .unwrap();
        assert!(status.success());
    };
    chown(user_home.path());
    let install = |home_dir: &Path| {
        home.run(&[
            "macos-permission",
            "install",
            "--sudoers-dir",
            sudoers.path().to_str().unwrap(),
            "--home",
            home_dir.to_str().unwrap(),
            "--user",
            user,
        ])
    };
    let untouched = |why: &str| {
        assert_eq!(
            std::fs::read_to_string(&victim).unwrap(),
            "root's secret",
            "{why}"
        );
        let meta = victim.metadata().unwrap();
        assert_eq!((meta.uid(), meta.mode() & 0o777), (0, 0o600), "{why}");
        assert_eq!(
            root_owned_below(user_home.path()),
            Vec::<std::path::PathBuf>::new(),
            "{why}"
        );
    };

    // The final name is a link: it is not the user's job, so install refuses and changes nothing.
    let out = install(user_home.path());
    assert!(!out.status.success(), "{}", text(&out));
    untouched("a link at the job's name");
    std::fs::remove_file(&plist).unwrap();

    // A link at the temporary names: the job is written as the user's own, the links not followed.
    let out = install(user_home.path());
    assert!(out.status.success(), "{}", text(&out));
    untouched("links at the temporary names");
    let meta = plist.symlink_metadata().unwrap();
    assert!(meta.is_file());
    assert_eq!((meta.uid(), meta.mode() & 0o777), (uid, 0o644));

    // The folder itself replaced by a link into root's directory: refused.
    std::fs::remove_dir_all(user_home.path().join("Library")).unwrap();
    symlink(outside.path(), user_home.path().join("Library")).unwrap();
    chown(&user_home.path().join("Library"));
    std::fs::create_dir_all(outside.path().join("LaunchAgents")).unwrap();
    let out = install(user_home.path());
    assert!(!out.status.success());
    assert!(text(&out).contains("is a link"), "{}", text(&out));
    assert!(!outside.path().join("LaunchAgents").join(&name).exists());
    untouched("a link in place of ~/Library");
}

/// Root with the user's `HOME` (`sudo` on macOS keeps it; `sudo -E`): lidguard's own places are
/// the user's, so ordinary commands refuse, and the root-only ones neither log there nor tighten
/// anything; a link planted at the log's name is not followed.
#[test]
fn root_with_the_users_home_touches_nothing_there() {
    use std::os::unix::fs::{MetadataExt, symlink};
    if !rustix::process::geteuid().is_root() {
        return;
    }
    let uid = 65534;
    let user_home = tempfile::tempdir().unwrap();
    let state = user_home.path().join(".local/state/lidguard");
    std::fs::create_dir_all(&state).unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("created-by-root");
    symlink(&target, state.join("lidguard.log")).unwrap();
    let status = std::process::Command::new("chown")
        .args(["-R", "-h", &format!("{uid}:{uid}")])
        .arg(user_home.path())
        .status()
        .unwrap();
    assert!(status.success());
    let run = |args: &[&str]| {
        std::process::Command::new(crate::util::BIN)
            .args(args)
            .env_remove("LIDGUARD_HOME")
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("XDG_STATE_HOME")
            .env_remove("XDG_RUNTIME_DIR")
            .env("HOME", user_home.path())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let out = run(&["status"]);
    assert!(!out.status.success());
    assert!(
        text(&out).contains("belongs to user 65534"),
        "{}",
        text(&out)
    );
    let out = run(&["linux-permission", "status"]);
    assert!(!text(&out).contains("belongs to user"), "{}", text(&out));
    assert!(!target.exists(), "root followed the planted log link");
    assert_eq!(
        root_owned_below(user_home.path()),
        Vec::<std::path::PathBuf>::new()
    );
    for dir in [
        user_home.path().join(".local"),
        user_home.path().join(".local/state"),
        state,
    ] {
        assert_eq!(dir.metadata().unwrap().uid(), uid, "{}", dir.display());
    }
}
