//! The desktop channel, sent off the event loop: the core decides the moments
//! ([`lidguard_core::notice`]) and how the desktop tells them ([`lidguard_core::desktop`]);
//! this part shows them through the platform's notifier.

use std::sync::Arc;
use std::time::Duration;

use lidguard_core::desktop::{Desktop, Notice};
use lidguard_core::notice::Moment;
use lidguard_core::settings::Settings;
use lidguard_platform::notify::{Notifier, NotifyError};

/// How long one notice may take to reach the notification service.
const SEND_LIMIT: Duration = Duration::from_secs(5);

pub(super) struct DesktopNotices {
    told: Desktop,
    notifier: Arc<Notifier>,
}

impl DesktopNotices {
    pub(super) fn new() -> DesktopNotices {
        DesktopNotices {
            told: Desktop::default(),
            notifier: Arc::new(Notifier::new()),
        }
    }

    /// Tells `moment` on the desktop, if its setting (and for a wait, the open lid) lets it.
    pub(super) fn tell(&mut self, moment: &Moment, settings: &Settings, lid_open: bool) {
        if let Some(notice) = self.told.tell(moment, settings, lid_open) {
            self.show(notice);
        }
    }

    fn show(&self, notice: Notice) {
        let notifier = Arc::clone(&self.notifier);
        tokio::spawn(async move {
            match tokio::time::timeout(SEND_LIMIT, notifier.send(&notice)).await {
                Ok(Ok(id)) => tracing::info!(id, summary = %notice.summary, "desktop notified"),
                // No desktop to tell: not a failure (servers, CI, a daemon without one).
                Ok(Err(e @ (NotifyError::Unsupported | NotifyError::NoSession(_)))) => {
                    tracing::debug!(error = %e, summary = %notice.summary, "no desktop notification");
                }
                Ok(Err(e)) => {
                    tracing::warn!(error = %e, summary = %notice.summary, "desktop notification failed")
                }
                Err(_) => {
                    tracing::warn!(summary = %notice.summary, "the desktop's notification service did not answer in 5 s")
                }
            }
        });
    }
}
