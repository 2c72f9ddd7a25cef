//! File-based sensing against fake `/proc` and `/sys` trees.
#![allow(
    clippy::disallowed_methods,
    reason = "tests write fixtures and read the environment"
)]

use std::fs;
use std::path::Path;

use lidguard_platform::sources::{
    Lid, Roots, has_lid_switch, lid_state, lid_state_from_files, visible_displays,
};
use tempfile::TempDir;

struct Tree {
    dir: TempDir,
    roots: Roots,
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().expect("tempdir");
        let roots = Roots::new(dir.path().join("proc"), dir.path().join("sys"));
        fs::create_dir_all(&roots.proc_root).expect("proc");
        fs::create_dir_all(&roots.sys_root).expect("sys");
        Tree { dir, roots }
    }

    fn write(&self, relative: &str, content: &[u8]) {
        let path = self.dir.path().join(relative);
        fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        fs::write(path, content).expect("write");
    }

    fn mkdir(&self, relative: &str) {
        fs::create_dir_all(self.dir.path().join(relative)).expect("mkdir");
    }

    fn path(&self, relative: &str) -> std::path::PathBuf {
        self.dir.path().join(relative)
    }
}

#[test]
fn roots_new_is_overridden() {
    let roots = Roots::new("/a", Path::new("/b"));
    assert!(roots.overridden);
    assert_eq!(roots.proc_root, Path::new("/a"));
    assert_eq!(roots.sys_root, Path::new("/b"));
    assert!(!Roots::system().overridden);
}

#[test]
fn lid_open_and_closed() {
    let tree = Tree::new();
    tree.write("proc/acpi/button/lid/LID0/state", b"state:      open\n");
    assert_eq!(lid_state_from_files(&tree.roots), Lid::Open);

    tree.write("proc/acpi/button/lid/LID0/state", b"state:      closed\n");
    assert_eq!(lid_state_from_files(&tree.roots), Lid::Closed);
}

#[test]
fn any_closed_lid_wins_over_open_ones() {
    let tree = Tree::new();
    tree.write("proc/acpi/button/lid/LID0/state", b"state:      open\n");
    tree.write("proc/acpi/button/lid/LID1/state", b"state:      CLOSED\n");
    tree.write("proc/acpi/button/lid/LID2/state", b"state:      open\n");
    assert_eq!(lid_state_from_files(&tree.roots), Lid::Closed);
}

#[test]
fn lid_unknown_cases() {
    // No acpi directory at all.
    let tree = Tree::new();
    assert_eq!(lid_state_from_files(&tree.roots), Lid::Unknown);

    // The proc root itself missing.
    let missing = Roots::new(tree.path("nowhere/proc"), tree.path("nowhere/sys"));
    assert_eq!(lid_state_from_files(&missing), Lid::Unknown);

    // An empty lid directory.
    tree.mkdir("proc/acpi/button/lid");
    assert_eq!(lid_state_from_files(&tree.roots), Lid::Unknown);

    // A lid without a state file.
    tree.mkdir("proc/acpi/button/lid/LID0");
    assert_eq!(lid_state_from_files(&tree.roots), Lid::Unknown);

    // Malformed content, including bytes that are not UTF-8.
    tree.write(
        "proc/acpi/button/lid/LID0/state",
        b"state: \xff\xfe half-shut\n",
    );
    assert_eq!(lid_state_from_files(&tree.roots), Lid::Unknown);
    tree.write("proc/acpi/button/lid/LID0/state", b"");
    assert_eq!(lid_state_from_files(&tree.roots), Lid::Unknown);
}

#[test]
fn unreadable_lid_entries_are_unknown() {
    // `lid` is a file, so it cannot be listed (this fails even for root, unlike chmod 000).
    let tree = Tree::new();
    tree.write("proc/acpi/button/lid", b"open");
    assert_eq!(lid_state_from_files(&tree.roots), Lid::Unknown);

    // `state` is a directory, so it cannot be read.
    let tree = Tree::new();
    tree.mkdir("proc/acpi/button/lid/LID0/state");
    assert_eq!(lid_state_from_files(&tree.roots), Lid::Unknown);

    // An unreadable entry next to a readable one does not hide the readable one.
    tree.write("proc/acpi/button/lid/LID1/state", b"state: open\n");
    assert_eq!(lid_state_from_files(&tree.roots), Lid::Open);
}

#[cfg(unix)]
#[test]
fn permission_denied_lid_directory_is_unknown_or_readable() {
    use std::os::unix::fs::PermissionsExt;
    let tree = Tree::new();
    tree.write("proc/acpi/button/lid/LID0/state", b"state: closed\n");
    let lid_dir = tree.path("proc/acpi/button/lid");
    fs::set_permissions(&lid_dir, fs::Permissions::from_mode(0o000)).expect("chmod");
    let can_still_read = fs::read_dir(&lid_dir).is_ok(); // root ignores the mode
    let expected = if can_still_read {
        Lid::Closed
    } else {
        Lid::Unknown
    };
    assert_eq!(lid_state_from_files(&tree.roots), expected);
    fs::set_permissions(&lid_dir, fs::Permissions::from_mode(0o755)).expect("chmod back");
}

#[test]
fn lid_switch_from_input_capabilities() {
    let tree = Tree::new();
    assert!(!has_lid_switch(&tree.roots), "empty tree");

    tree.write("sys/class/input/input0/capabilities/sw", b"0\n");
    tree.write("sys/class/input/input1/capabilities/key", b"ffff\n");
    tree.mkdir("sys/class/input/event0");
    assert!(!has_lid_switch(&tree.roots), "no device with SW_LID");

    // SW_TABLET_MODE (bit 1) alone is not a lid.
    tree.write("sys/class/input/input2/capabilities/sw", b"2\n");
    assert!(!has_lid_switch(&tree.roots));

    // Bit 0 of the last (least significant) word.
    tree.write("sys/class/input/input3/capabilities/sw", b"1 0\n");
    assert!(
        !has_lid_switch(&tree.roots),
        "bit 0 of a higher word is not SW_LID"
    );
    tree.write("sys/class/input/input4/capabilities/sw", b"garbage\n");
    assert!(!has_lid_switch(&tree.roots));

    tree.write("sys/class/input/input5/capabilities/sw", b"0 21\n");
    assert!(has_lid_switch(&tree.roots), "0x21 has bit 0 set");
}

#[test]
fn lid_switch_from_acpi_files() {
    let tree = Tree::new();
    tree.mkdir("proc/acpi/button/lid/LID0");
    assert!(
        !has_lid_switch(&tree.roots),
        "a lid directory without a state file"
    );
    tree.write("proc/acpi/button/lid/LID0/state", b"state: open\n");
    assert!(has_lid_switch(&tree.roots));
}

#[test]
fn displays_with_and_without_internal_panels() {
    let tree = Tree::new();
    assert_eq!(
        visible_displays(&tree.roots, false),
        0,
        "missing drm directory"
    );

    tree.mkdir("sys/class/drm/card0");
    tree.mkdir("sys/class/drm/renderD128");
    tree.write("sys/class/drm/version", b"drm 1.1.0\n");
    tree.write("sys/class/drm/card0-eDP-1/status", b"connected\n");
    tree.write("sys/class/drm/card0-HDMI-A-1/status", b"connected\n");
    tree.write("sys/class/drm/card0-DP-1/status", b"disconnected\n");
    assert_eq!(visible_displays(&tree.roots, false), 2);
    assert_eq!(visible_displays(&tree.roots, true), 1);

    tree.write("sys/class/drm/card0-HDMI-A-1/status", b"disconnected\n");
    assert_eq!(visible_displays(&tree.roots, false), 1);
    assert_eq!(visible_displays(&tree.roots, true), 0);

    // Trimmed and case-insensitive; other internal families excluded too.
    tree.write("sys/class/drm/card0-DP-1/status", b"  Connected \n");
    tree.write("sys/class/drm/card1-LVDS-1/status", b"connected");
    tree.write("sys/class/drm/card1-dsi-1/status", b"CONNECTED\n");
    tree.write("sys/class/drm/card1-VGA-1/status", b"unknown\n");
    assert_eq!(visible_displays(&tree.roots, false), 4);
    assert_eq!(visible_displays(&tree.roots, true), 1);
}

#[test]
fn combined_lid_state_uses_files_for_overridden_roots() {
    let tree = Tree::new();
    // A lid switch exists, but the roots are overridden: logind must not be asked.
    tree.write("sys/class/input/input0/capabilities/sw", b"1\n");
    tree.write("proc/acpi/button/lid/LID0/state", b"state: closed\n");
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    assert_eq!(rt.block_on(lid_state(&tree.roots)), Lid::Closed);
    tree.write("proc/acpi/button/lid/LID0/state", b"state: open\n");
    assert_eq!(rt.block_on(lid_state(&tree.roots)), Lid::Open);
}
