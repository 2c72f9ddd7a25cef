//! A stand-in for the desktop's notification service (`org.freedesktop.Notifications`) on a
//! private bus: it answers as a real one does and keeps what it was asked to show, so a test
//! can read what the user would have seen.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use zbus::OwnedVariant;

use crate::served::Served;

/// A notification as the service received it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Received {
    /// The application's name.
    pub app_name: String,
    /// The title line.
    pub summary: String,
    /// The text.
    pub body: String,
    /// The `urgency` hint (0 low, 1 normal, 2 critical), when given.
    pub urgency: Option<u8>,
}

type Inbox = Arc<Mutex<Vec<Received>>>;

struct Service {
    inbox: Inbox,
}

#[zbus::interface(name = "org.freedesktop.Notifications")]
impl Service {
    #[allow(
        clippy::too_many_arguments,
        clippy::needless_pass_by_value,
        reason = "the specification's signature, as zbus hands it over"
    )]
    fn notify(
        &self,
        app_name: String,
        _replaces_id: u32,
        _app_icon: String,
        summary: String,
        body: String,
        _actions: Vec<String>,
        hints: HashMap<String, OwnedVariant>,
        _expire_timeout: i32,
    ) -> u32 {
        let urgency = hints.get("urgency").and_then(|v| u8::try_from(&**v).ok());
        let mut inbox = self.inbox.lock().unwrap_or_else(PoisonError::into_inner);
        inbox.push(Received {
            app_name,
            summary,
            body,
            urgency,
        });
        u32::try_from(inbox.len()).unwrap_or(u32::MAX)
    }

    fn get_capabilities(&self) -> Vec<String> {
        vec!["body".to_owned()]
    }

    fn get_server_information(&self) -> (String, String, String, String) {
        (
            "lidguard-testbus".to_owned(),
            "lidguard".to_owned(),
            "0".to_owned(),
            "1.2".to_owned(),
        )
    }
}

/// The notification service stand-in, serving until dropped.
#[derive(Debug)]
pub struct NotificationService {
    inbox: Inbox,
    _served: Served,
}

impl NotificationService {
    /// Serves `org.freedesktop.Notifications` on the bus at `address`; returns once the name
    /// is owned.
    pub fn start(address: &str) -> Result<NotificationService, crate::BusError> {
        let inbox = Inbox::default();
        let service = Service {
            inbox: Arc::clone(&inbox),
        };
        let served = Served::start(
            address,
            "the notification service stand-in",
            "org.freedesktop.Notifications",
            Box::new(move |builder| builder.serve_at("/org/freedesktop/Notifications", service)),
        )?;
        Ok(NotificationService {
            inbox,
            _served: served,
        })
    }

    /// Everything received so far, in order.
    pub fn received(&self) -> Vec<Received> {
        self.inbox
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}
