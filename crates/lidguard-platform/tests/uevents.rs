//! The uevent subscription against the real kernel: a `change` written to a device's `uevent`
//! file (root only; CI runs as root) arrives, and events of other subsystems are skipped.
#![cfg(target_os = "linux")]
#![allow(clippy::print_stderr, reason = "a skipped test says why")]
#![allow(
    clippy::disallowed_methods,
    reason = "tests write fixtures and read the environment"
)]

use std::time::Duration;

use lidguard_platform::uevents::Uevents;

#[tokio::test]
async fn a_kernel_uevent_arrives_and_other_subsystems_are_skipped() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: triggering a kernel uevent needs root (CI runs as root)");
        return;
    }
    let mut events = Uevents::open().unwrap();
    let trigger = |device: &'static str| {
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            std::fs::write(format!("/sys/class/mem/{device}/uevent"), "change").unwrap();
        })
    };
    trigger("null");
    tokio::time::timeout(Duration::from_secs(5), events.next_of("mem"))
        .await
        .expect("the mem event arrives")
        .unwrap();
    // A drm listener hears nothing from a mem event.
    trigger("zero");
    assert!(
        tokio::time::timeout(Duration::from_millis(600), events.next_of("drm"))
            .await
            .is_err()
    );
}
