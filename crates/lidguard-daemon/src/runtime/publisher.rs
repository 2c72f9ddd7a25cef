//! The stream's side of the runtime: the hub followers read, and the daemon events a hook
//! event caused, held back until the hook event's own line is out.

use lidguard_ipc::protocol::{Outcome, Response};
use lidguard_ipc::stream::{Replay, StreamEvent, StreamFilter};
use lidguard_store::StoreWrite;

use super::records::Records;
use crate::server::{Answer, Then};
use crate::stream::Hub;

pub(super) struct Publisher {
    pub(super) hub: Hub,
    /// While a hook event is applied, the daemon events it causes wait here, so the stream
    /// shows the observation before its consequences.
    held_back: Option<Vec<StreamEvent>>,
}

impl Publisher {
    pub(super) fn new(hub: Hub) -> Publisher {
        Publisher {
            hub,
            held_back: None,
        }
    }

    /// `lidguard events`: the lines kept since `replay`, then (with `follow`) every new one.
    pub(super) fn follow(&self, filter: StreamFilter, replay: &Replay, follow: bool) -> Answer {
        let following = self.hub.follow(filter, replay, follow);
        let message = if follow { "following" } else { "replay" };
        let answer = Response::ok(Outcome::Done, message);
        (answer, Some(Then::Follow(following)))
    }

    /// From now on lines wait until [`Publisher::release`].
    pub(super) fn hold_back(&mut self) {
        self.held_back = Some(Vec::new());
    }

    /// The lines held back, in order; they are published from here on.
    pub(super) fn release(&mut self) -> Vec<StreamEvent> {
        self.held_back.take().unwrap_or_default()
    }

    /// Sends `line` to the followers (or holds it back) and keeps it in the database's copy of
    /// the replay window.
    pub(super) fn publish(&mut self, line: StreamEvent, records: &mut Records) {
        if let Some(held) = &mut self.held_back {
            held.push(line);
            return;
        }
        let kept = self.hub.publish(line);
        records.write(StoreWrite::StreamLine {
            id: kept.id,
            line: kept.line,
        });
        if let Some(through) = kept.dropped_through {
            records.write(StoreWrite::ForgetStreamLines { through });
        }
    }
}
