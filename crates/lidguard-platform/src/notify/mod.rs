//! Desktop notifications: what needs the user, shown by the desktop's notification service.
//!
//! Linux: `org.freedesktop.Notifications` on the session bus (every desktop has one: GNOME
//! Shell, Plasma, xfce4-notifyd, dunst, mako). The connection is made at the first notice, so a
//! daemon started before the desktop still notifies once it is up.
//!
//! Windows: the balloon of a notification-area icon that comes with the notice (`balloon`),
//! shown as a toast by Windows 10 and 11.
//!
//! macOS: a user notification posted through `osascript` (`osascript`).

#[cfg(windows)]
mod balloon;
#[cfg(any(target_os = "macos", all(test, unix)))]
mod osascript;

pub use lidguard_core::desktop::Notice;

/// What the user must allow before the OS shows lidguard's notices, on an OS that asks: macOS
/// lists `display notification` under Script Editor in Notification Center and drops it,
/// without an error, until Script Editor may post notifications (it appears in System Settings
/// → Notifications once it has tried).
pub const PERMISSION: Option<&str> = if cfg!(target_os = "macos") {
    Some(MACOS_PERMISSION)
} else {
    None
};

/// [`PERMISSION`] on macOS.
pub const MACOS_PERMISSION: &str = "macOS shows lidguard's notices only once Script Editor may \
    post notifications: run `osascript -e 'display notification \"lidguard\"'` once, then \
    System Settings → Notifications → Script Editor → Allow notifications";

/// How long osascript may take to post a notice (the daemon waits 5 s for any notice).
#[cfg(target_os = "macos")]
const OSASCRIPT_LIMIT: std::time::Duration = std::time::Duration::from_secs(4);

/// Why a notice was not shown.
#[derive(Debug, thiserror::Error)]
pub enum NotifyError {
    /// No notification backend on this platform.
    #[error("desktop notifications are not built for this platform yet")]
    Unsupported,
    /// No session bus to reach (a server, a headless or CI machine): no desktop to tell.
    #[error("no session bus here: {0}")]
    NoSession(String),
    /// The session bus or the notification service could not be reached.
    #[error("the desktop's notification service: {0}")]
    Service(String),
}

/// Sends notices to the desktop's notification service.
#[derive(Debug, Default)]
pub struct Notifier {
    #[cfg(target_os = "linux")]
    connection: tokio::sync::OnceCell<zbus::Connection>,
}

impl Notifier {
    /// A notifier that connects when it first sends.
    pub fn new() -> Notifier {
        Notifier::default()
    }

    /// Shows `notice`; returns the id the service gave it.
    #[cfg(target_os = "linux")]
    pub async fn send(&self, notice: &Notice) -> Result<u32, NotifyError> {
        use std::collections::HashMap;

        use zbus::Variant as Value;

        let fail = |e: zbus::Error| NotifyError::Service(e.to_string());
        let connection = self
            .connection
            .get_or_try_init(zbus::Connection::session)
            .await
            .map_err(|e| NotifyError::NoSession(e.to_string()))?;
        // The freedesktop urgency levels: 1 normal, 2 critical.
        let mut hints: HashMap<&str, Value<'_>> = HashMap::new();
        hints.insert("urgency", Value::U8(if notice.urgent { 2 } else { 1 }));
        hints.insert("desktop-entry", Value::from("lidguard"));
        let actions: Vec<&str> = Vec::new();
        let reply = connection
            .call_method(
                Some("org.freedesktop.Notifications"),
                "/org/freedesktop/Notifications",
                Some("org.freedesktop.Notifications"),
                "Notify",
                &(
                    "lidguard",
                    0u32,
                    "",
                    notice.summary.as_str(),
                    notice.body.as_str(),
                    actions,
                    hints,
                    -1i32,
                ),
            )
            .await
            .map_err(fail)?;
        reply.body().deserialize::<u32>().map_err(fail)
    }

    /// Shows `notice` as a balloon of an icon of its own; returns the icon's id.
    #[cfg(windows)]
    pub async fn send(&self, notice: &Notice) -> Result<u32, NotifyError> {
        let notice = notice.clone();
        tokio::task::spawn_blocking(move || balloon::show(&notice))
            .await
            .map_err(|e| NotifyError::Service(e.to_string()))?
    }

    /// Shows `notice` through osascript; returns the notice's number (osascript gives none).
    #[cfg(target_os = "macos")]
    pub async fn send(&self, notice: &Notice) -> Result<u32, NotifyError> {
        use std::sync::atomic::{AtomicU32, Ordering};

        static NEXT_ID: AtomicU32 = AtomicU32::new(1);
        let notice = notice.clone();
        tokio::task::spawn_blocking(move || {
            osascript::show(crate::osascript::PROGRAM, &notice, OSASCRIPT_LIMIT)
        })
        .await
        .map_err(|e| NotifyError::Service(e.to_string()))??;
        Ok(NEXT_ID.fetch_add(1, Ordering::Relaxed))
    }

    /// Shows `notice`: not built for this platform yet.
    #[cfg(not(any(target_os = "linux", windows, target_os = "macos")))]
    pub async fn send(&self, _notice: &Notice) -> Result<u32, NotifyError> {
        Err(NotifyError::Unsupported)
    }
}
