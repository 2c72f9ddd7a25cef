//! What a part of the runtime asks the others to do: stream lines to publish, database writes
//! and registry inputs. Parts fill an outbox; the runtime empties it (a part never reaches
//! another part's state).

use lidguard_core::registry::{Input, LogEvent};
use lidguard_core::session::SessionKey;
use lidguard_ipc::stream::StreamEvent;
use lidguard_store::StoreWrite;

use super::lines::daemon_event;
use super::records;

/// Lines, writes and inputs, in the order they were asked for.
pub(super) struct Outbox {
    /// Whether writes reach a database (lines say whether they are logged).
    pub(super) logged: bool,
    pub(super) lines: Vec<StreamEvent>,
    pub(super) writes: Vec<StoreWrite>,
    pub(super) inputs: Vec<Input>,
}

impl Outbox {
    pub(super) fn new(logged: bool) -> Outbox {
        Outbox {
            logged,
            lines: Vec::new(),
            writes: Vec::new(),
            inputs: Vec::new(),
        }
    }

    /// Something worth the event log: a line for the stream, a row for the database.
    pub(super) fn log(&mut self, event: &LogEvent) {
        let mut line = daemon_event(&event.name, event.key.as_ref(), Some(event.detail.clone()));
        line.visibility.logged = self.logged;
        self.lines.push(line);
        let session = event.key.as_ref().map(ToString::to_string);
        tracing::info!(event = %event.name, session = session.as_deref().unwrap_or(""), detail = %event.detail);
        self.writes.push(records::log_event(event));
    }

    /// A line for the event stream.
    pub(super) fn publish(&mut self, line: StreamEvent) {
        self.lines.push(line);
    }

    /// A daemon event that only the stream carries (not the database's event log).
    pub(super) fn daemon(&mut self, kind: &str, key: Option<&SessionKey>, detail: String) {
        self.lines.push(daemon_event(kind, key, Some(detail)));
    }

    /// A database write, batched with the others of this step.
    pub(super) fn write(&mut self, write: StoreWrite) {
        self.writes.push(write);
    }

    /// An input for the registry, applied once this step's part is done.
    pub(super) fn apply(&mut self, input: Input) {
        self.inputs.push(input);
    }
}
