//! The desktop on a private session bus: desktop notifications received by a stand-in for the
//! notification service, and `lidguard tray` read and clicked with `busctl` as a tray host
//! would: the item's `Status`, tooltip and menu follow a session from start (Active) to a
//! wait for the user (NeedsAttention) to its end (Passive); the menu's pause lets go of
//! logind's locks (on the private system bus) and its resume takes them back.

use std::process::{Child, Stdio};
use std::time::Duration;

use lidguard_core::provider::Provider;
use lidguard_ipc::protocol::{Request, SessionRef};
use serde_json::Value;

use crate::util::{Home, eventually, session_ref};

const WAIT: Duration = Duration::from_secs(10);
const ITEM: &str = "org.kde.StatusNotifierItem";

/// The tray process, killed if the test fails first.
struct Tray(Child);

impl Drop for Tray {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// `busctl --json=short ARGS` on `bus`, parsed.
fn json(bus: &lidguard_testbus::PrivateBus, args: &[&str]) -> Value {
    // `--` ends busctl's options: `-1` is an argument.
    let mut all = vec!["--json=short", "--"];
    all.extend(args);
    let out = bus.busctl(&all).unwrap_or_else(|e| panic!("{e}"));
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{e}: {out}"))
}

fn property(bus: &lidguard_testbus::PrivateBus, name: &str, property: &str) -> Value {
    json(
        bus,
        &["get-property", name, "/StatusNotifierItem", ITEM, property],
    )["data"]
        .clone()
}

/// The menu's items as (id, label, enabled), depth first.
fn menu(bus: &lidguard_testbus::PrivateBus, name: &str) -> Vec<(i64, String, bool)> {
    fn walk(node: &Value, out: &mut Vec<(i64, String, bool)>) {
        let id = node[0].as_i64().unwrap();
        let props = &node[1];
        if let Some(label) = props["label"]["data"].as_str() {
            let enabled = props["enabled"]["data"].as_bool().unwrap_or(true);
            out.push((id, label.to_owned(), enabled));
        }
        for child in node[2].as_array().into_iter().flatten() {
            walk(&child["data"], out);
        }
    }
    let layout = json(
        bus,
        &[
            "call",
            name,
            "/MenuBar",
            "com.canonical.dbusmenu",
            "GetLayout",
            "iias",
            "0",
            "-1",
            "0",
        ],
    );
    let mut items = Vec::new();
    walk(&layout["data"][1], &mut items);
    items
}

fn click(bus: &lidguard_testbus::PrivateBus, name: &str, label: &str) {
    let items = menu(bus, name);
    let (id, _, enabled) = items
        .iter()
        .find(|(_, l, _)| l == label)
        .unwrap_or_else(|| panic!("no {label:?} in {items:?}"));
    assert!(enabled, "{label} is greyed out: {items:?}");
    let id = id.to_string();
    bus.busctl(&[
        "--",
        "call",
        name,
        "/MenuBar",
        "com.canonical.dbusmenu",
        "Event",
        "isvu",
        &id,
        "clicked",
        "s",
        "",
        "0",
    ])
    .unwrap_or_else(|e| panic!("{e}"));
}

fn tooltip_title(bus: &lidguard_testbus::PrivateBus, name: &str) -> String {
    property(bus, name, "ToolTip")[2]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// Waits until the item's `Status` is `want` and its tooltip title contains `says`.
fn wait_for(bus: &lidguard_testbus::PrivateBus, name: &str, want: &str, says: &str) {
    let ok = eventually(WAIT, || {
        property(bus, name, "Status") == want && tooltip_title(bus, name).contains(says)
    });
    assert!(
        ok,
        "wanted {want} / {says:?}; the item shows {} / {:?}",
        property(bus, name, "Status"),
        tooltip_title(bus, name)
    );
}

#[test]
fn the_tray_item_follows_a_session_and_its_menu_pauses_and_resumes() {
    let _serial = lidguard_testbus::serial();
    let Some(logind) = lidguard_testbus::logind_or_skip() else {
        return;
    };
    let Some(session_bus) = lidguard_testbus::bus_or_skip() else {
        return;
    };
    let home = Home::with_bus(logind.address()).with_session_bus(session_bus.address());
    let mut tray = Tray(home.cmd(&["tray"]).stdin(Stdio::null()).spawn().unwrap());
    let mut name = String::new();
    assert!(
        eventually(WAIT, || {
            let names = session_bus
                .busctl(&["list", "--acquired"])
                .unwrap_or_default();
            name = names
                .split_whitespace()
                .find(|n| n.starts_with(ITEM))
                .unwrap_or_default()
                .to_owned();
            !name.is_empty()
        }),
        "no {ITEM}-* name on the session bus"
    );
    assert_eq!(property(&session_bus, &name, "Id"), "lidguard");
    wait_for(&session_bus, &name, "Passive", "idle");

    home.ok(&["start", "--provider", "claude", "--session", "s1"]);
    wait_for(
        &session_bus,
        &name,
        "Active",
        "1 agent working · lid-close safe",
    );
    let items = menu(&session_bus, &name);
    assert!(
        items.iter().any(|(_, l, _)| l == "claude · ? · working"
            || l.starts_with("claude · ") && l.ends_with(" · working")),
        "{items:?}"
    );
    assert!(
        items
            .iter()
            .any(|(_, l, enabled)| l == "Cancel the pending suspend" && !enabled),
        "{items:?}"
    );

    // The agent asks for permission: the user is needed.
    let session = session_ref(Provider::Claude, "s1");
    home.request(&Request::SoftLock {
        session: session.clone(),
        reason: "permission_prompt".into(),
    });
    wait_for(
        &session_bus,
        &name,
        "NeedsAttention",
        "1 agent waiting for you",
    );
    home.request(&Request::Activity {
        session,
        reason: "PostToolUse:Bash".into(),
    });
    wait_for(&session_bus, &name, "Active", "working");

    // The menu's pause lets go of logind's locks; its resume takes them back.
    assert_eq!(logind.block_inhibited(), "idle:handle-lid-switch");
    click(&session_bus, &name, "Pause protection for 30 min");
    assert_eq!(logind.wait_block_inhibited(WAIT, str::is_empty), "");
    wait_for(&session_bus, &name, "Passive", "protection paused until");
    click(&session_bus, &name, "Resume protection");
    assert_eq!(
        logind.wait_block_inhibited(WAIT, |s| s == "idle:handle-lid-switch"),
        "idle:handle-lid-switch"
    );
    wait_for(&session_bus, &name, "Active", "1 agent working");

    // The closed-lid decision, as `lidguard settings` would set it.
    click(&session_bus, &name, "Allow");
    assert!(
        eventually(
            WAIT,
            || home.status()["settings"]["closedLidPermissionRequestDecision"] == "Allow"
        ),
        "{}; tooltip {}",
        home.status()["settings"],
        property(&session_bus, &name, "ToolTip")
    );

    home.ok(&["stop", "--provider", "claude", "--session", "s1"]);
    wait_for(&session_bus, &name, "Passive", "idle");

    click(&session_bus, &name, "Quit the tray");
    let mut status = None;
    assert!(eventually(WAIT, || {
        status = tray.0.try_wait().unwrap();
        status.is_some()
    }));
    assert!(status.unwrap().success(), "{status:?}");
}

/// One tray per user: a second one says which runs and exits 1; `uninstall` stops the one that
/// runs (its login entry alone would leave the icon until the next login).
#[test]
fn one_tray_per_user_and_uninstall_stops_it() {
    let _serial = lidguard_testbus::serial();
    let Some(session_bus) = lidguard_testbus::bus_or_skip() else {
        return;
    };
    let home = Home::new().with_session_bus(session_bus.address());
    let mut tray = Tray(home.cmd(&["tray"]).stdin(Stdio::null()).spawn().unwrap());
    assert!(
        eventually(WAIT, || session_bus
            .busctl(&["list", "--acquired"])
            .unwrap_or_default()
            .contains(ITEM)),
        "no {ITEM}-* name on the session bus"
    );
    let pid = tray.0.id();
    let second = home.run(&["tray"]);
    assert_eq!(second.status.code(), Some(1), "{second:?}");
    let said = String::from_utf8_lossy(&second.stderr);
    assert!(
        said.contains(&format!("lidguard's tray already runs (pid {pid})")),
        "{said}"
    );

    let out = home.run(&["uninstall", "--yes"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains(&format!("stopped the tray (pid {pid})")),
        "{out:?}"
    );
    assert!(
        eventually(WAIT, || tray.0.try_wait().unwrap().is_some()),
        "the tray still runs"
    );
}

/// What needs the user reaches the desktop's notification service once per session and
/// reason: protection that cannot be held (urgent), an agent waiting for the user with the lid
/// open; a wait that ends and comes back is told again, and a setting turns a kind off.
#[test]
fn desktop_notifications_once_per_session_and_reason() {
    let Some(bus) = lidguard_testbus::bus_or_skip() else {
        return;
    };
    let service = lidguard_testbus::NotificationService::start(bus.address()).unwrap();
    // No system bus: protection is wanted and cannot be held.
    let home = Home::new().with_session_bus(bus.address());
    let received = |n: usize| {
        assert!(
            eventually(WAIT, || service.received().len() >= n),
            "wanted {n}, got {:?}",
            service.received()
        );
        // Nothing more trails in.
        std::thread::sleep(Duration::from_millis(300));
        let got = service.received();
        assert_eq!(got.len(), n, "{got:?}");
        got
    };
    home.ok(&["start", "--provider", "claude", "--session", "s1"]);
    let got = received(1);
    assert_eq!(got[0].app_name, "lidguard");
    assert_eq!(got[0].summary, "lidguard cannot keep this machine awake");
    assert!(got[0].body.contains("lidguard doctor"), "{got:?}");
    assert_eq!(got[0].urgency, Some(2));
    home.ok(&["start", "--provider", "claude", "--session", "s2"]);

    let s1 = session_ref(Provider::Claude, "s1");
    let lock = |session: &SessionRef, reason: &str| {
        home.request(&Request::SoftLock {
            session: session.clone(),
            reason: reason.into(),
        });
    };
    lock(&s1, "permission_prompt");
    let got = received(2);
    assert!(got[1].summary.ends_with("needs you"), "{got:?}");
    assert!(got[1].body.contains("a permission prompt"), "{got:?}");
    assert_eq!(got[1].urgency, Some(1));
    // Another reason for the same wait: not told twice.
    lock(&s1, "elicitation_dialog");
    received(2);
    // The wait ends and a new one begins: told again.
    home.request(&Request::Activity {
        session: s1.clone(),
        reason: "PostToolUse:Bash".into(),
    });
    lock(&s1, "permission_prompt");
    received(3);
    // Turned off: nothing.
    home.ok(&["settings", "--notify-waiting-for-you", "false"]);
    let s2 = session_ref(Provider::Claude, "s2");
    lock(&s2, "permission_prompt");
    received(3);
}

/// A process of the desktop this test starts, killed with it.
struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Whether every program the real tray host needs is here (CI installs them).
fn desktop_programs() -> bool {
    let have = |p: &str| {
        std::process::Command::new("sh")
            .args(["-c", &format!("command -v {p}")])
            .output()
            .is_ok_and(|o| o.status.success())
    };
    // ImageMagick's own `convert` (a stand-in of that name may sit earlier on the PATH).
    let imagemagick = std::process::Command::new("convert")
        .arg("-version")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("ImageMagick"));
    let mut missing: Vec<&str> = ["Xvfb", "xfce4-panel", "xwd", "dbus-daemon"]
        .into_iter()
        .filter(|p| !have(p))
        .collect();
    if !imagemagick {
        missing.push("ImageMagick's convert");
    }
    crate::util::runs_here((!missing.is_empty()).then(|| format!("{missing:?} not installed")))
}

/// Reads one line a child prints on stdout (an address, a display number).
fn first_line(child: &mut Child) -> String {
    use std::io::BufRead;
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    line.trim().to_owned()
}

/// The item in a real tray host: Xfce's panel (its systray plugin hosts StatusNotifierItems)
/// on Xvfb registers lidguard's item with its watcher and draws it: green while a session
/// works, in a screenshot of the screen (kept as `target/tray-in-xfce4-panel.png`).
#[test]
fn the_item_shows_in_xfce4_panel_under_xvfb() {
    if !desktop_programs() {
        return;
    }
    let _serial = lidguard_testbus::serial();
    let Some(logind) = lidguard_testbus::logind_or_skip() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    // A session bus as a desktop has one: the panel's settings service (xfconfd) is started
    // on demand from the standard service folders.
    let mut bus = std::process::Command::new("dbus-daemon")
        .args(["--session", "--nofork", "--print-address=1"])
        .arg(format!(
            "--address=unix:path={}",
            dir.path().join("bus").display()
        ))
        .stdout(Stdio::piped())
        .stdin(Stdio::null())
        .spawn()
        .unwrap();
    let address = first_line(&mut bus);
    let _bus = Running(bus);
    let mut xvfb = std::process::Command::new("Xvfb")
        .args([
            "-displayfd",
            "1",
            "-screen",
            "0",
            "800x120x24",
            "-nolisten",
            "tcp",
        ])
        .stdout(Stdio::piped())
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let display = format!(":{}", first_line(&mut xvfb));
    let _xvfb = Running(xvfb);
    let desktop_env = |cmd: &mut std::process::Command| {
        cmd.env("DISPLAY", &display)
            .env("DBUS_SESSION_BUS_ADDRESS", &address)
            .env("XDG_CONFIG_HOME", dir.path().join("config"))
            .env("XDG_DATA_HOME", dir.path().join("data"))
            .env("XDG_CACHE_HOME", dir.path().join("cache"))
            .env("HOME", dir.path());
    };
    let mut panel = std::process::Command::new("xfce4-panel");
    panel.arg("--disable-wm-check");
    desktop_env(&mut panel);
    let _panel = Running(
        panel
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    let watcher = "org.kde.StatusNotifierWatcher";
    let registered = || {
        std::process::Command::new("busctl")
            .arg(format!("--address={address}"))
            .args([
                "--json=short",
                "get-property",
                watcher,
                "/StatusNotifierWatcher",
                watcher,
                "RegisteredStatusNotifierItems",
            ])
            .output()
            .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
            .unwrap_or_default()
    };
    assert!(
        eventually(Duration::from_secs(90), || registered()
            .contains("\"data\"")),
        "the panel's systray never offered a StatusNotifierWatcher"
    );

    let home = Home::with_bus(logind.address()).with_session_bus(&address);
    let mut tray = home.cmd(&["tray"]);
    tray.env("DISPLAY", &display).stdin(Stdio::null());
    let _tray = Tray(tray.spawn().unwrap());
    home.ok(&["start", "--provider", "claude", "--session", "s1"]);
    assert!(
        eventually(WAIT, || registered()
            .contains("org.kde.StatusNotifierItem-")),
        "the watcher lists {}",
        registered()
    );

    // The panel draws the icon: the protecting green (#2e7d32) is on screen.
    let shot = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .join("tray-in-xfce4-panel.png");
    // Everything but that green turned black: the mean brightness counts its pixels
    // ((0x2e + 0x7d + 0x32) / 765 = 0.2889 each).
    let green_pixels = || -> u64 {
        let script = format!(
            "xwd -root -silent -display {display} | convert xwd:- {0} && convert {0} -fill black \
             +opaque '#2e7d32' -format '%[fx:int(mean*w*h/0.2889)]' info:",
            shot.display()
        );
        let out = std::process::Command::new("sh")
            .args(["-c", &script])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout)
            .trim()
            .parse()
            .unwrap_or(0)
    };
    let mut seen = 0;
    assert!(
        eventually(WAIT, || {
            seen = green_pixels();
            seen > 50
        }),
        "{seen} green pixels in {}",
        shot.display()
    );
    eprintln!(
        "the tray icon in xfce4-panel: {} ({seen} green pixels)",
        shot.display()
    );
}
