//! Relay leases: which places (`ssh:alice@build`, `container:dev`) have a relay connected
//! now. Sessions that came through a relay belong to its place, not to one connection, so an
//! SSH connection that drops and comes back, or a relay that takes its lease again after the
//! daemon restarted, keeps them; they end [`RELAY_GRACE`] after the last relay to their place
//! ended, when none came back in that time.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

/// How long a place's sessions outlive its last relay: a relay back within it keeps them,
/// and the sessions of a relay that does not come back end within 10 s.
pub const RELAY_GRACE: Duration = Duration::from_secs(8);

/// The places relays held leases on in this daemon's life, and how many hold one now.
#[derive(Clone, Debug, Default)]
pub(crate) struct Leases(Arc<Mutex<HashMap<String, usize>>>);

/// One relay's hold on its place; dropping it lets go.
pub(crate) struct Held {
    leases: Leases,
    place: String,
}

impl Leases {
    /// A relay to `place` holds its lease until the returned value is dropped.
    pub(crate) fn hold(&self, place: &str) -> Held {
        *self.map().entry(place.to_owned()).or_default() += 1;
        Held {
            leases: self.clone(),
            place: place.to_owned(),
        }
    }

    /// Whether a relay to `place` holds its lease now.
    pub(crate) fn held(&self, place: &str) -> bool {
        self.map().get(place).is_some_and(|&n| n > 0)
    }

    /// The places a relay held a lease on in this daemon's life (now or before: the sessions
    /// of one whose relays left end by their own grace time).
    pub(crate) fn known(&self) -> Vec<String> {
        self.map().keys().cloned().collect()
    }

    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, usize>> {
        // A count is never left half-changed, so a poisoned lock's data is sound.
        self.0.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Held {
    fn drop(&mut self) {
        let mut map = self.leases.map();
        if let Some(n) = map.get_mut(&self.place) {
            *n = n.saturating_sub(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_place_is_held_while_any_of_its_relays_is() {
        let leases = Leases::default();
        let first = leases.hold("ssh:a@b");
        let second = leases.hold("ssh:a@b");
        let other = leases.hold("container:dev");
        drop(first);
        assert!(leases.held("ssh:a@b"));
        drop(second);
        assert!(!leases.held("ssh:a@b"));
        drop(other);
        assert!(!leases.held("container:dev"));
        let mut known = leases.known();
        known.sort();
        assert_eq!(known, ["container:dev", "ssh:a@b"]);
    }
}
