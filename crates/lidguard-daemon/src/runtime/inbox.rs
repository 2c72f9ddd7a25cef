//! Where work reaches the runtime's loop: the channels the parts report on, and the timers of
//! what is polled.

use std::time::Duration;

use lidguard_core::registry::Input;
use lidguard_core::session::SessionKey;
use lidguard_core::suspend::TEMPERATURE_INTERVAL;
use tokio::sync::mpsc::{self, Receiver, Sender, UnboundedReceiver, UnboundedSender};
use tokio::time::{Interval, MissedTickBehavior, interval};

use super::outbound::Attempt;
use crate::remote::News;
use crate::watch::FsChange;

/// The sending ends, handed to the parts that report.
pub(super) struct Senders {
    pub(super) internal: Sender<Input>,
    pub(super) attempts: UnboundedSender<Attempt>,
    pub(super) hooks_gone: UnboundedSender<(SessionKey, u64)>,
    pub(super) fs: UnboundedSender<FsChange>,
    pub(super) followers_left: UnboundedSender<()>,
    pub(super) phone_news: UnboundedSender<News>,
    pub(super) machine: UnboundedSender<()>,
    pub(super) sleeps: UnboundedSender<bool>,
}

/// The receiving ends and the timers, which the loop waits on.
pub(super) struct Inbox {
    /// Inputs from work done off the loop (a sound played, a webhook sent).
    pub(super) internal: Receiver<Input>,
    /// Webhook attempts finished, for the event log.
    pub(super) attempts: UnboundedReceiver<Attempt>,
    /// Waiting Stop hooks whose connection ended.
    pub(super) hooks_gone: UnboundedReceiver<(SessionKey, u64)>,
    /// Transcript and process changes.
    pub(super) fs_events: UnboundedReceiver<FsChange>,
    /// A follower of the stream left.
    pub(super) followers_left: UnboundedReceiver<()>,
    /// What the phone (ntfy) and the ask-before-sleep exchange report.
    pub(super) phone_news: UnboundedReceiver<News>,
    /// The lid or the displays changed.
    pub(super) machine_changes: UnboundedReceiver<()>,
    /// The OS announced a sleep (`true`) or a wake-up.
    pub(super) sleeps: UnboundedReceiver<bool>,
    pub(super) transcript_poll: Interval,
    pub(super) machine_poll: Interval,
    pub(super) temperature_poll: Interval,
}

/// A new set of channels and timers.
pub(super) fn open() -> (Senders, Inbox) {
    let (internal, internal_rx) = mpsc::channel(64);
    let (attempts, attempts_rx) = mpsc::unbounded_channel();
    let (hooks_gone, hooks_gone_rx) = mpsc::unbounded_channel();
    let (fs, fs_rx) = mpsc::unbounded_channel();
    let (followers_left, followers_left_rx) = mpsc::unbounded_channel();
    let (phone_news, phone_news_rx) = mpsc::unbounded_channel();
    let (machine, machine_rx) = mpsc::unbounded_channel();
    let (sleeps, sleeps_rx) = mpsc::unbounded_channel();
    let temperature = Duration::try_from(TEMPERATURE_INTERVAL).unwrap_or(Duration::from_secs(10));
    let senders = Senders {
        internal,
        attempts,
        hooks_gone,
        fs,
        followers_left,
        phone_news,
        machine,
        sleeps,
    };
    let inbox = Inbox {
        internal: internal_rx,
        attempts: attempts_rx,
        hooks_gone: hooks_gone_rx,
        fs_events: fs_rx,
        followers_left: followers_left_rx,
        phone_news: phone_news_rx,
        machine_changes: machine_rx,
        sleeps: sleeps_rx,
        transcript_poll: every(crate::watch::TRANSCRIPT_POLL),
        machine_poll: every(crate::machine_watch::FALLBACK_POLL),
        temperature_poll: every(temperature),
    };
    (senders, inbox)
}

/// A timer that, after a late tick, waits a whole period again.
fn every(period: Duration) -> Interval {
    let mut timer = interval(period);
    timer.set_missed_tick_behavior(MissedTickBehavior::Delay);
    timer
}
