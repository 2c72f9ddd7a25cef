//! The event stream's hub: numbers each event, keeps the last [`REPLAY_CAPACITY`] (at most
//! [`REPLAY_BYTES`]) for replay, and hands every new one to the followers. Publishing never waits
//! for a follower: each has a bounded backlog, and one that falls further behind is told how many
//! events it missed. Free-text fields are cut ([`FIELD_LIMIT`], [`LINE_LIMIT`]), so the replay and
//! a stalled follower's backlog stay small whatever the agents send. The runtime mirrors the
//! replay window in the database, and a restarted daemon starts from it.

use std::collections::VecDeque;
use std::sync::Arc;

use jiff::Timestamp;
use lidguard_core::provider::Provider;
use lidguard_ipc::stream::{
    FIELD_LIMIT, LINE_LIMIT, REPLAY_BYTES, REPLAY_CAPACITY, Replay, StreamEvent, StreamFilter,
};
use tokio::sync::{broadcast, mpsc};

/// How many events a follower may be behind before it misses some (with [`LINE_LIMIT`], a
/// stalled follower holds at most 32 MiB).
const BACKLOG: usize = 4 * 1024;

/// The field limit used for an event whose line is still over [`LINE_LIMIT`].
const CROWDED_FIELD_LIMIT: usize = 256;

/// One published event, serialized once for every follower.
#[derive(Debug)]
pub(crate) struct Item {
    /// The JSON line, newline included.
    pub(crate) line: Box<str>,
    id: u64,
    at: Timestamp,
    provider: Option<Provider>,
    session_id: Option<String>,
}

impl Item {
    pub(crate) fn admitted_by(&self, filter: &StreamFilter) -> bool {
        filter.admits(self.provider, self.session_id.as_deref())
    }
}

/// A follower, as the connection that serves it receives it.
pub(crate) struct Following {
    /// The replayed events, oldest first.
    pub(crate) replay: Vec<Arc<Item>>,
    /// New events, when the follower keeps following.
    pub(crate) live: Option<broadcast::Receiver<Arc<Item>>>,
    /// Which events it wants.
    pub(crate) filter: StreamFilter,
    /// Held while the connection lives; its drop tells the runtime.
    pub(crate) _present: Present,
}

/// Counts a follower while it is connected.
pub(crate) struct Present {
    _count: Arc<()>,
    left: mpsc::UnboundedSender<()>,
}

impl Drop for Present {
    fn drop(&mut self) {
        let _ = self.left.send(());
    }
}

/// What publishing kept, for the database's copy of the replay window.
pub(crate) struct Published {
    pub(crate) id: u64,
    pub(crate) line: String,
    /// The replay dropped every event up to this id.
    pub(crate) dropped_through: Option<u64>,
}

pub(crate) struct Hub {
    next_id: u64,
    recent: VecDeque<Arc<Item>>,
    /// The bytes of the lines in `recent`.
    recent_bytes: usize,
    tx: broadcast::Sender<Arc<Item>>,
    followers: Arc<()>,
    left: mpsc::UnboundedSender<()>,
}

impl Hub {
    /// A hub; `left` hears whenever a follower goes away.
    pub(crate) fn new(left: mpsc::UnboundedSender<()>) -> Hub {
        Hub {
            next_id: 1,
            recent: VecDeque::with_capacity(REPLAY_CAPACITY),
            recent_bytes: 0,
            tx: broadcast::channel(BACKLOG).0,
            followers: Arc::new(()),
            left,
        }
    }

    /// Numbers `event`, keeps it for replay and sends it to the followers.
    pub(crate) fn publish(&mut self, mut event: StreamEvent) -> Published {
        event.observation.id = self.next_id;
        self.next_id += 1;
        event.cut_fields(FIELD_LIMIT);
        let mut line = serde_json::to_string(&event).unwrap_or_default();
        if line.len() > LINE_LIMIT {
            event.cut_fields(CROWDED_FIELD_LIMIT);
            line = serde_json::to_string(&event).unwrap_or_default();
        }
        line.push('\n');
        let id = event.observation.id;
        let item = Arc::new(Item {
            line: line.clone().into_boxed_str(),
            id,
            at: event.observation.at,
            provider: event.observation.provider,
            session_id: event.observation.session_id,
        });
        let dropped_through = self.keep(Arc::clone(&item));
        // No follower: nobody to send to, which is fine.
        let _ = self.tx.send(item);
        Published {
            id,
            line,
            dropped_through,
        }
    }

    /// Adds `item` to the replay, dropping the oldest beyond its count and bytes; returns the
    /// id of the last one dropped.
    fn keep(&mut self, item: Arc<Item>) -> Option<u64> {
        self.recent_bytes += item.line.len();
        self.recent.push_back(item);
        let mut dropped = None;
        while self.recent.len() > REPLAY_CAPACITY
            || (self.recent_bytes > REPLAY_BYTES && self.recent.len() > 1)
        {
            let Some(old) = self.recent.pop_front() else {
                break;
            };
            self.recent_bytes -= old.line.len();
            dropped = Some(old.id);
        }
        dropped
    }

    /// Starts from the replay a previous daemon kept (oldest first); numbering goes on after
    /// it. Lines that do not parse are skipped.
    pub(crate) fn restore(&mut self, lines: Vec<(u64, String)>) {
        for (id, line) in lines {
            // A number is never given twice, even one whose line is unreadable.
            self.next_id = self.next_id.max(id + 1);
            let Ok(event) = serde_json::from_str::<StreamEvent>(&line) else {
                continue;
            };
            self.keep(Arc::new(Item {
                line: line.into_boxed_str(),
                id,
                at: event.observation.at,
                provider: event.observation.provider,
                session_id: event.observation.session_id,
            }));
        }
    }

    /// A new follower: the replay and the live feed are taken at the same moment, so nothing
    /// is seen twice or missed in between.
    pub(crate) fn follow(&self, filter: StreamFilter, replay: &Replay, live: bool) -> Following {
        let admitted = self.recent.iter().filter(|i| i.admitted_by(&filter));
        let replay: Vec<Arc<Item>> = match replay {
            Replay::Last(n) => {
                let all: Vec<_> = admitted.collect();
                let skip = all.len().saturating_sub(*n);
                all.into_iter().skip(skip).cloned().collect()
            }
            Replay::Since(t) => admitted.filter(|i| i.at >= *t).cloned().collect(),
        };
        Following {
            replay,
            live: live.then(|| self.tx.subscribe()),
            filter,
            _present: Present {
                _count: Arc::clone(&self.followers),
                left: self.left.clone(),
            },
        }
    }

    /// Followers connected now.
    pub(crate) fn followers(&self) -> usize {
        Arc::strong_count(&self.followers) - 1
    }

    /// Ends every live feed (the daemon is stopping): followers finish what they have and close.
    pub(crate) fn close(&mut self) {
        self.tx = broadcast::channel(1).0;
    }
}

/// The line a follower gets in place of `missed` events it read too slowly to receive.
pub(crate) fn lost_line(missed: u64) -> String {
    let mut event = StreamEvent::daemon(
        "events-lost",
        Some(format!(
            "{missed} events were not delivered: this follower read more slowly than they came"
        )),
    );
    // Stream notices are not daemon events and take no number.
    event.observation.source = lidguard_ipc::stream::Source::Stream;
    let mut line = serde_json::to_string(&event).unwrap_or_default();
    line.push('\n');
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event(session: Option<&str>) -> StreamEvent {
        let mut event = StreamEvent::daemon("k", None);
        event.observation.provider = session.map(|_| Provider::Claude);
        event.observation.session_id = session.map(str::to_owned);
        event
    }

    fn ids(items: &[Arc<Item>]) -> Vec<u64> {
        items
            .iter()
            .map(|i| {
                serde_json::from_str::<StreamEvent>(&i.line)
                    .unwrap()
                    .observation
                    .id
            })
            .collect()
    }

    #[tokio::test]
    async fn replay_then_live_without_gap_or_repeat() {
        let (left, mut gone) = mpsc::unbounded_channel();
        let mut hub = Hub::new(left);
        for _ in 0..5 {
            hub.publish(event(Some("a")));
        }
        hub.publish(event(Some("b")));
        let filter = StreamFilter {
            provider: None,
            session_id: Some("a".into()),
        };
        let mut f = hub.follow(filter, &Replay::Last(3), true);
        assert_eq!(ids(&f.replay), [3, 4, 5]);
        assert_eq!(hub.followers(), 1);
        hub.publish(event(None));
        let next = f.live.as_mut().unwrap().recv().await.unwrap();
        assert!(next.admitted_by(&f.filter));
        assert_eq!(ids(&[next]), [7]);
        drop(f);
        assert_eq!(hub.followers(), 0);
        assert!(gone.recv().await.is_some());
    }

    #[test]
    fn the_replay_keeps_the_newest_and_since_picks_by_time() {
        let (left, _gone) = mpsc::unbounded_channel();
        let mut hub = Hub::new(left);
        for _ in 0..REPLAY_CAPACITY + 10 {
            hub.publish(event(None));
        }
        let all = hub.follow(StreamFilter::default(), &Replay::Last(usize::MAX), false);
        assert_eq!(all.replay.len(), REPLAY_CAPACITY);
        assert_eq!(ids(&all.replay)[0], 11);
        assert!(all.live.is_none());
        let later = hub.follow(
            StreamFilter::default(),
            &Replay::Since(Timestamp::now() + jiff::SignedDuration::from_secs(60)),
            false,
        );
        assert!(later.replay.is_empty());
    }

    #[test]
    fn long_fields_are_cut_and_the_replay_is_bounded_by_bytes() {
        let (left, _gone) = mpsc::unbounded_channel();
        let mut hub = Hub::new(left);
        let huge = "é".repeat(250_000);
        let mut dropped = None;
        for _ in 0..REPLAY_CAPACITY {
            let mut e = event(Some("a"));
            e.observation.cwd = Some(huge.clone());
            e.observation.detail = Some(huge.clone());
            let kept = hub.publish(e);
            assert!(kept.line.len() <= LINE_LIMIT + 1, "{}", kept.line.len());
            dropped = kept.dropped_through.or(dropped);
        }
        assert!(hub.recent_bytes <= REPLAY_BYTES);
        assert!(hub.recent.len() < REPLAY_CAPACITY, "bounded by bytes first");
        assert_eq!(dropped, Some(hub.recent[0].id - 1));

        // Many long fields at once: cut further, to the line limit.
        let mut e = event(Some("a"));
        for text in [
            &mut e.observation.cwd,
            &mut e.observation.detail,
            &mut e.observation.tool,
            &mut e.observation.hook_event,
            &mut e.authority.outcome,
            &mut e.visibility.stdout,
        ] {
            *text = Some(huge.clone());
        }
        assert!(hub.publish(e).line.len() <= LINE_LIMIT);
        let first: StreamEvent = serde_json::from_str(&hub.recent[0].line).unwrap();
        let cwd = first.observation.cwd.unwrap();
        assert!(
            cwd.ends_with(" more bytes]") && cwd.starts_with("éé"),
            "{cwd}"
        );

        // One long field alone is cut to the field limit, on a character boundary.
        let mut e = event(None);
        e.observation.detail = Some(huge.clone());
        let kept = hub.publish(e);
        let e: StreamEvent = serde_json::from_str(&kept.line).unwrap();
        let detail = e.observation.detail.unwrap();
        assert!(
            detail.starts_with(&"é".repeat(FIELD_LIMIT / 2)),
            "{}",
            detail.len()
        );
        assert!(detail.ends_with(&format!("…[{} more bytes]", huge.len() - FIELD_LIMIT)));
    }

    #[test]
    fn a_restored_replay_goes_on_numbering_after_it() {
        let (left, _gone) = mpsc::unbounded_channel();
        let mut old = Hub::new(left.clone());
        let lines: Vec<(u64, String)> = (0..5)
            .map(|_| {
                let kept = old.publish(event(Some("a")));
                (kept.id, kept.line)
            })
            .chain([(6, "not json".to_owned())])
            .collect();
        let mut hub = Hub::new(left);
        hub.restore(lines);
        let all = hub.follow(StreamFilter::default(), &Replay::Last(usize::MAX), false);
        assert_eq!(ids(&all.replay), [1, 2, 3, 4, 5]);
        assert_eq!(hub.publish(event(None)).id, 7, "after every number seen");
    }
}
