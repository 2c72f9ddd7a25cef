//! The event stream's hub: numbers each event, keeps the last [`REPLAY_CAPACITY`] for replay,
//! and hands every new one to the followers. Publishing never waits for a follower: each has a
//! bounded backlog, and one that falls further behind is told how many events it missed.

use std::collections::VecDeque;
use std::sync::Arc;

use jiff::Timestamp;
use lidguard_core::provider::Provider;
use lidguard_ipc::stream::{REPLAY_CAPACITY, Replay, StreamEvent, StreamFilter};
use tokio::sync::{broadcast, mpsc};

/// How many events a follower may be behind before it misses some.
const BACKLOG: usize = 16 * 1024;

/// One published event, serialized once for every follower.
#[derive(Debug)]
pub(crate) struct Item {
    /// The JSON line, newline included.
    pub(crate) line: Box<str>,
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

pub(crate) struct Hub {
    next_id: u64,
    recent: VecDeque<Arc<Item>>,
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
            tx: broadcast::channel(BACKLOG).0,
            followers: Arc::new(()),
            left,
        }
    }

    /// Numbers `event`, keeps it for replay and sends it to the followers.
    pub(crate) fn publish(&mut self, mut event: StreamEvent) {
        event.observation.id = self.next_id;
        self.next_id += 1;
        let mut line = serde_json::to_string(&event).unwrap_or_default();
        line.push('\n');
        let item = Arc::new(Item {
            line: line.into_boxed_str(),
            at: event.observation.at,
            provider: event.observation.provider,
            session_id: event.observation.session_id,
        });
        if self.recent.len() == REPLAY_CAPACITY {
            self.recent.pop_front();
        }
        self.recent.push_back(Arc::clone(&item));
        // No follower: nobody to send to, which is fine.
        let _ = self.tx.send(item);
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
}
