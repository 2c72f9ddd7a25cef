//! What the user is told: the core decides each moment once ([`lidguard_core::notice`]) and
//! this part hands it to every channel — the desktop here, the phone ([`super::phone`]). A new
//! channel is a file with a `tell` and a line in [`Notices::tell`], and its setting.

use lidguard_core::event::Lid;
use lidguard_core::notice::{Moment, Moments};
use lidguard_core::registry::{Effect, Registry};
use lidguard_core::session::Session;

use super::desktop::DesktopNotices;
use super::phone::Phone;

pub(super) struct Notices {
    moments: Moments,
    desktop: DesktopNotices,
}

impl Notices {
    pub(super) fn new() -> Notices {
        Notices {
            moments: Moments::default(),
            desktop: DesktopNotices::new(),
        }
    }

    /// Sessions restored at start: their waits began before this daemon.
    pub(super) fn restored(&mut self, sessions: &[Session]) {
        self.moments.restored(sessions);
    }

    /// The moments an input's `effects` make (the registry as it is after it), told.
    pub(super) fn effects(&mut self, effects: &[Effect], registry: &Registry, phone: &mut Phone) {
        let moments = self.moments.due(effects, registry);
        self.tell(&moments, registry, phone);
    }

    /// After the effects are carried out: protection not held (`unavailable`: why), told.
    pub(super) fn protection(
        &mut self,
        unavailable: Option<&str>,
        registry: &Registry,
        phone: &mut Phone,
    ) {
        let moments = self.moments.protection(unavailable, registry);
        self.tell(&moments, registry, phone);
    }

    /// Every channel gets every moment; each decides whether and how it tells it.
    fn tell(&mut self, moments: &[Moment], registry: &Registry, phone: &mut Phone) {
        let settings = registry.settings();
        let lid_open = registry.machine().lid != Lid::Closed;
        for moment in moments {
            self.desktop.tell(moment, settings, lid_open);
            phone.tell(moment, settings);
        }
    }
}
