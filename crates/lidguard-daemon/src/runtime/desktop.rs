//! Desktop notifications, sent off the event loop: the core decides which moments need the
//! user ([`lidguard_core::desktop`]); this part shows them through the platform's notifier.

use std::sync::Arc;
use std::time::Duration;

use lidguard_core::desktop::{Desktop, Seen};
use lidguard_core::registry::Registry;
use lidguard_ipc::protocol::ProtectionStatus;
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

    /// After an input that did `seen`: shows what is due, with protection as it is now.
    pub(super) fn after(&mut self, seen: &Seen, registry: &Registry, held: &ProtectionStatus) {
        let failed = (held.wanted && !held.held)
            .then_some(held.unavailable_reason.as_deref())
            .flatten();
        for notice in self.told.due(seen, registry, failed) {
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
}
