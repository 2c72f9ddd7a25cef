//! Hearing that the lid or the displays changed, instead of reading them every few seconds.
//!
//! - The lid: logind's `PropertiesChanged` for `LidClosed` on the system bus; on macOS the root
//!   power domain's clamshell notification, which also tells an external display appearing or
//!   going, and IOKit's power-source notification for the battery.
//! - The displays: the kernel's DRM uevents (a connector plugged or unplugged), listened to
//!   only while sessions exist or a suspend waits (every other device's uevents arrive on the
//!   same socket, and an idle daemon should not wake for them).
//! - Lid, display, power-source and thermal-state files under `LIDGUARD_PROC_ROOT` /
//!   `LIDGUARD_SYS_ROOT` (a fake tree, for tests and debugging): inotify on those files.
//!
//! Each change sends `()`; the runtime then reads the lid and the displays. What has no signal
//! (a lid known only from `/proc/acpi`, no uevents) falls back to a slow poll while needed.

use std::path::PathBuf;

use lidguard_platform::power::PowerControl;
use lidguard_platform::sources::Roots;
use notify::Watcher;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

/// How often the lid and displays are read while sessions exist or a suspend is pending, when
/// one of them has no change signal; with signals they are read only when they change, and
/// when a decision needs them.
pub(crate) const FALLBACK_POLL: std::time::Duration = std::time::Duration::from_secs(15);

/// The watches, and which sources they cover.
pub(crate) struct MachineWatch {
    changed: mpsc::UnboundedSender<()>,
    /// inotify on a fake tree.
    _files: Option<notify::RecommendedWatcher>,
    /// The DRM uevent listener, while active.
    uevents: Option<AbortHandle>,
    /// Displays come from the real `/sys` (uevents), not a fake tree.
    real_sys: bool,
    /// The lid's changes are signalled (logind, or inotify on a fake tree).
    pub(crate) lid_signalled: bool,
    /// The displays' changes are signalled (uevents while active, or inotify on a fake tree).
    pub(crate) displays_signalled: bool,
    /// The battery's changes are signalled (uevents while active, macOS's power-source
    /// notification, or inotify on a fake tree).
    pub(crate) battery_signalled: bool,
}

impl MachineWatch {
    /// Sets up what can be signalled; `changed` hears of every change.
    pub(crate) async fn start(
        roots: &Roots,
        power: Option<&dyn PowerControl>,
        changed: mpsc::UnboundedSender<()>,
    ) -> MachineWatch {
        let watch = if roots.overridden {
            let lid_dir = roots.proc_root.join("acpi/button/lid");
            let drm_dir = roots.sys_root.join("class/drm");
            // The recorded power sources and thermal state of a relocated Mac.
            let power_dir = roots.sys_root.join("power");
            let (files, watched) = watch_files(&[lid_dir, drm_dir, power_dir], changed.clone());
            MachineWatch {
                changed,
                _files: files,
                uevents: None,
                real_sys: false,
                lid_signalled: watched[0],
                displays_signalled: watched[1],
                // A relocated battery is read with each change of the lid or displays, as
                // before; a recorded Mac's power sources (in the power folder) are watched.
                battery_signalled: true,
            }
        } else {
            let lid_signalled = match power {
                Some(power) => power.watch_lid(changed.clone()).await,
                None => false,
            };
            let battery_signalled = cfg!(target_os = "linux")
                || lidguard_platform::battery::watch(roots, changed.clone());
            MachineWatch {
                changed,
                _files: None,
                uevents: None,
                real_sys: true,
                lid_signalled,
                // Linux: DRM uevents. macOS: the clamshell notification that tells the lid also
                // tells an external display appearing or going (what a closed lid means).
                displays_signalled: cfg!(target_os = "linux")
                    || (cfg!(target_os = "macos") && lid_signalled),
                battery_signalled,
            }
        };
        tracing::info!(
            lid = watch.lid_signalled,
            displays = watch.displays_signalled,
            battery = watch.battery_signalled,
            "lid and display changes signalled (else polled every {} s while needed)",
            FALLBACK_POLL.as_secs()
        );
        watch
    }

    /// Listens to DRM uevents while `active` (sessions exist or a suspend waits).
    pub(crate) fn set_active(&mut self, active: bool) {
        if !self.real_sys {
            return;
        }
        match (active, &self.uevents) {
            (true, None) => self.uevents = self.listen(),
            (false, Some(task)) => {
                task.abort();
                self.uevents = None;
            }
            _ => {}
        }
    }

    #[cfg(target_os = "linux")]
    fn listen(&mut self) -> Option<AbortHandle> {
        match lidguard_platform::uevents::Uevents::open() {
            Ok(mut events) => {
                let changed = self.changed.clone();
                let task = tokio::spawn(async move {
                    // Displays (DRM hotplug) and power supplies (the battery's charge and
                    // status, AC plugged or not) for the battery floor.
                    while events.next_of_any(&["drm", "power_supply"]).await.is_ok() {
                        if changed.send(()).is_err() {
                            break;
                        }
                    }
                });
                Some(task.abort_handle())
            }
            Err(e) => {
                tracing::warn!(error = %e, "no display hotplug events; displays are polled");
                self.displays_signalled = false;
                None
            }
        }
    }

    #[cfg(not(target_os = "linux"))]
    fn listen(&mut self) -> Option<AbortHandle> {
        let _ = &self.changed;
        None
    }

    /// Whether everything is signalled (else the slow fallback poll runs while needed).
    pub(crate) fn complete(&self) -> bool {
        self.lid_signalled && self.displays_signalled && self.battery_signalled
    }
}

impl Drop for MachineWatch {
    fn drop(&mut self) {
        if let Some(task) = self.uevents.take() {
            task.abort();
        }
    }
}

/// inotify on each of `dirs` (recursively: a connector's or a lid's own folder holds its
/// `status` / `state` file). Returns the watcher and which dirs are watched.
fn watch_files(
    dirs: &[PathBuf],
    changed: mpsc::UnboundedSender<()>,
) -> (Option<notify::RecommendedWatcher>, Vec<bool>) {
    let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
        let Ok(event) = event else { return };
        let counts = !matches!(
            event.kind,
            notify::EventKind::Access(_)
                | notify::EventKind::Modify(notify::event::ModifyKind::Metadata(_))
        );
        if counts {
            let _ = changed.send(());
        }
    });
    let Ok(mut watcher) = watcher else {
        return (None, vec![false; dirs.len()]);
    };
    let watched = dirs
        .iter()
        .map(|dir| {
            watcher
                .watch(dir, notify::RecursiveMode::Recursive)
                .inspect_err(
                    |e| tracing::debug!(error = %e, dir = %dir.display(), "not watched; polled"),
                )
                .is_ok()
        })
        .collect();
    (Some(watcher), watched)
}
