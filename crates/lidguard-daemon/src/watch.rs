//! Watching the agents themselves: their processes and their transcripts.
//!
//! - **Processes.** One small task per watched process waits for its exit without polling
//!   (a Linux pidfd becomes readable when the process ends; elsewhere a slow liveness poll)
//!   and reports [`Input::ProcessesGone`], the cancel path.
//! - **Transcripts.** One `notify` watcher (inotify on Linux) for all sessions, on the
//!   transcripts' parent directories — or, while a parent does not exist yet (Claude Code
//!   creates a project's folder with its first transcript, Codex a day's folder with the day's
//!   first session), on the nearest folder above it that does, moving down as the folders
//!   appear. Only events that can mean new bytes count (a write, a new file, a rename, a
//!   removal); the daemon's own reads (opens, accesses, closes) and metadata changes do not.
//!   A changed transcript is read after a short debounce, and only when its size or identity
//!   moved: the appended bytes ([`Tail`]) go to the provider's [`Detector`], which turns them
//!   into activity, a soft-lock or an interrupt. A slow metadata poll covers only transcripts
//!   that cannot be watched (no inotify, a watch refused).
//!
//! Nothing here spins: idle sessions cost one parked task and one inotify watch each, and an
//! idle transcript is never read again.

use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::time::Duration;

use lidguard_core::registry::{Input, StopSession};
use lidguard_core::session::{Session, SessionKey, StopKind};
use lidguard_platform::tail::Tail;
use lidguard_providers::transcript::{Detector, Discovery, Signal, discover};
use notify::Watcher;
use tokio::sync::mpsc;
use tokio::task::AbortHandle;

/// How long changes to a transcript are gathered before it is read.
pub(crate) const DEBOUNCE: Duration = Duration::from_millis(50);
/// The slow fallback: transcripts' sizes are compared this often.
pub(crate) const TRANSCRIPT_POLL: Duration = Duration::from_secs(5);
/// How often a session without a transcript path looks for one.
const DISCOVERY_RETRY: Duration = Duration::from_secs(30);
/// How many times a session looks for its transcript. The search walks the agent's session
/// folders on the daemon's task, so it is not repeated for the session's whole life; agents
/// create the file when the session starts, before its first hook.
const DISCOVERY_ATTEMPTS: u8 = 3;
/// Liveness poll where no pidfd is available.
const PROCESS_POLL: Duration = Duration::from_secs(5);

/// A file-system event that can mean new bytes in a transcript.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct FsChange {
    pub(crate) path: PathBuf,
    /// Something was created, removed or renamed (a folder on a transcript's path may have
    /// appeared): the watches may need to move.
    pub(crate) structural: bool,
}

/// Whether a `notify` event can mean new bytes, and whether it is structural. Reads, opens,
/// closes after reading and metadata changes are not changes: counting them made the daemon's
/// own reads look like writes.
fn classify(kind: &notify::EventKind) -> Option<bool> {
    use notify::EventKind;
    use notify::event::{AccessKind, AccessMode, ModifyKind};
    match kind {
        EventKind::Access(AccessKind::Close(AccessMode::Write)) => Some(false),
        EventKind::Access(_) => None,
        EventKind::Modify(ModifyKind::Metadata(_)) => None,
        EventKind::Modify(ModifyKind::Name(_)) => Some(true),
        EventKind::Modify(_) => Some(false),
        EventKind::Create(_) | EventKind::Remove(_) => Some(true),
        EventKind::Any | EventKind::Other => Some(true),
    }
}

/// The folder to watch for `path`: its parent, or the nearest folder above it that exists.
fn watch_point(path: &Path) -> Option<PathBuf> {
    path.ancestors()
        .skip(1)
        .find(|dir| dir.is_dir())
        .map(Path::to_path_buf)
}

/// One followed transcript.
struct Followed {
    key: SessionKey,
    tail: Tail,
    detector: Detector,
}

/// What the runtime shows about a session's transcript.
#[derive(Clone, Debug)]
pub(crate) enum TranscriptNote {
    /// Followed.
    Following(PathBuf),
    /// Looked for, not found (yet).
    NotFound,
    /// Several candidates; none followed.
    Ambiguous(usize),
}

impl TranscriptNote {
    pub(crate) fn describe(&self) -> String {
        match self {
            TranscriptNote::Following(p) => format!("following {}", p.display()),
            TranscriptNote::NotFound => "no transcript found".to_owned(),
            TranscriptNote::Ambiguous(n) => {
                format!("{n} transcripts match the session id; none followed")
            }
        }
    }
}

/// All watches of one daemon.
pub(crate) struct Watchers {
    inputs: mpsc::Sender<Input>,
    processes: HashMap<SessionKey, (u32, AbortHandle)>,
    followed: BTreeMap<PathBuf, Followed>,
    notes: HashMap<SessionKey, TranscriptNote>,
    /// When each session last looked for its transcript, and how many times it has.
    last_discovery: HashMap<SessionKey, (std::time::Instant, u8)>,
    fs: Option<notify::RecommendedWatcher>,
    /// The folders watched, each the watch point of at least one transcript.
    watched_dirs: HashSet<PathBuf>,
    /// Transcripts whose watch point could not be watched: the slow poll covers them.
    unwatched: HashSet<PathBuf>,
    /// A folder on a transcript's path appeared or went: the watches move at the next sync.
    resync: bool,
    /// Paths changed since the last read.
    dirty: HashSet<PathBuf>,
    home: Option<PathBuf>,
}

impl Watchers {
    /// `inputs` receives what the watches find; `fs_events` receives the paths the file
    /// watcher reports (the runtime hands them back to [`Watchers::changed`]).
    pub(crate) fn new(
        inputs: mpsc::Sender<Input>,
        fs_events: mpsc::UnboundedSender<FsChange>,
    ) -> Watchers {
        let fs = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            let Ok(event) = event else { return };
            let Some(structural) = classify(&event.kind) else {
                return;
            };
            for path in event.paths {
                let _ = fs_events.send(FsChange { path, structural });
            }
        })
        .inspect_err(
            |e| tracing::warn!(error = %e, "no file-system notifications; transcripts are polled"),
        )
        .ok();
        Watchers {
            inputs,
            processes: HashMap::new(),
            followed: BTreeMap::new(),
            notes: HashMap::new(),
            last_discovery: HashMap::new(),
            fs,
            watched_dirs: HashSet::new(),
            unwatched: HashSet::new(),
            resync: false,
            dirty: HashSet::new(),
            home: lidguard_files::environment::var("HOME")
                .map(PathBuf::from)
                .or_else(std::env::home_dir),
        }
    }

    /// What is known about `key`'s transcript.
    pub(crate) fn note(&self, key: &SessionKey) -> Option<&TranscriptNote> {
        self.notes.get(key)
    }

    /// Whether some followed transcript has no working watch (the slow poll runs only then).
    pub(crate) fn needs_poll(&self) -> bool {
        !self.unwatched.is_empty()
    }

    /// Whether the watches must move (a folder on a transcript's path appeared or went).
    pub(crate) fn needs_resync(&self) -> bool {
        self.resync
    }

    /// How many times `key`'s transcript was opened to be read.
    pub(crate) fn reads(&self, key: &SessionKey) -> Option<u64> {
        self.followed
            .values()
            .find(|f| f.key == *key)
            .map(|f| f.tail.reads())
    }

    /// Whether reads are waiting for the debounce.
    pub(crate) fn has_dirty(&self) -> bool {
        !self.dirty.is_empty()
    }

    /// Brings the watches in line with the sessions.
    pub(crate) fn sync<'a>(
        &mut self,
        sessions: impl Iterator<Item = &'a Session>,
        watch_processes: bool,
    ) {
        let sessions: Vec<&Session> = sessions.collect();
        let keys: HashSet<&SessionKey> = sessions.iter().map(|s| &s.key).collect();

        // Processes.
        self.processes.retain(|key, (_, task)| {
            let keep = keys.contains(key) && watch_processes;
            if !keep {
                task.abort();
            }
            keep
        });
        if watch_processes {
            for s in &sessions {
                let Some(pid) = s.watched_pid else { continue };
                if self.processes.get(&s.key).is_some_and(|(p, _)| *p == pid) {
                    continue;
                }
                if let Some((_, old)) = self.processes.remove(&s.key) {
                    old.abort();
                }
                let task = tokio::spawn(wait_for_exit(pid, s.key.clone(), self.inputs.clone()));
                self.processes
                    .insert(s.key.clone(), (pid, task.abort_handle()));
            }
        }

        // Transcripts.
        self.followed.retain(|_, f| keys.contains(&f.key));
        self.notes.retain(|key, _| keys.contains(key));
        self.last_discovery.retain(|key, _| keys.contains(key));
        for s in &sessions {
            let path = match &s.transcript_path {
                Some(path) => Some(PathBuf::from(path)),
                None => self.discover(s),
            };
            let Some(path) = path else { continue };
            if self.followed.get(&path).is_some_and(|f| f.key == s.key) {
                continue;
            }
            self.follow(&s.key, path);
        }
        self.move_watches();
    }

    /// Watches each followed transcript's watch point (its parent, or the nearest existing
    /// folder above it) and nothing else.
    pub(crate) fn move_watches(&mut self) {
        self.resync = false;
        let points: Vec<(PathBuf, Option<PathBuf>)> = self
            .followed
            .keys()
            .map(|p| (p.clone(), watch_point(p)))
            .collect();
        let wanted: HashSet<PathBuf> = points.iter().filter_map(|(_, w)| w.clone()).collect();
        let Some(fs) = self.fs.as_mut() else {
            self.unwatched = points.into_iter().map(|(p, _)| p).collect();
            return;
        };
        for dir in self.watched_dirs.difference(&wanted) {
            let _ = fs.unwatch(dir);
        }
        let mut watched = HashSet::new();
        for dir in wanted {
            if self.watched_dirs.contains(&dir) {
                watched.insert(dir);
                continue;
            }
            match fs.watch(&dir, notify::RecursiveMode::NonRecursive) {
                Ok(()) => {
                    watched.insert(dir);
                }
                Err(e) => {
                    tracing::debug!(error = %e, dir = %dir.display(), "cannot watch; polling it");
                }
            }
        }
        self.unwatched = points
            .into_iter()
            .filter(|(_, point)| point.as_ref().is_none_or(|d| !watched.contains(d)))
            .map(|(p, _)| p)
            .collect();
        self.watched_dirs = watched;
    }

    fn discover(&mut self, s: &Session) -> Option<PathBuf> {
        if let Some(TranscriptNote::Following(path)) = self.notes.get(&s.key) {
            return Some(path.clone());
        }
        let attempts = match self.last_discovery.get(&s.key) {
            Some((at, n)) if *n >= DISCOVERY_ATTEMPTS || at.elapsed() < DISCOVERY_RETRY => {
                return None;
            }
            Some((_, n)) => *n,
            None => 0,
        };
        self.last_discovery
            .insert(s.key.clone(), (std::time::Instant::now(), attempts + 1));
        let home = self.home.clone()?;
        let var = lidguard_files::environment::var;
        match discover(s.key.provider, &s.key.session_id, &home, &var) {
            Discovery::Found(path) => Some(path),
            Discovery::NotFound => {
                self.notes.insert(s.key.clone(), TranscriptNote::NotFound);
                None
            }
            Discovery::Ambiguous(n) => {
                self.notes
                    .insert(s.key.clone(), TranscriptNote::Ambiguous(n));
                None
            }
        }
    }

    fn follow(&mut self, key: &SessionKey, path: PathBuf) {
        self.followed.retain(|_, f| f.key != *key);
        let mut tail = Tail::new(&path);
        let mut detector = Detector::new(key.provider);
        // What is already there sets the state (a pending question) but signals nothing.
        loop {
            match tail.read() {
                Ok(got) => detector.prime(&got.lines),
                Err(e) => {
                    tracing::debug!(error = %e, path = %path.display(), "transcript not readable yet");
                    break;
                }
            }
            if !tail.behind() {
                break;
            }
        }
        tracing::info!(session = %key, path = %path.display(), "following transcript");
        self.notes
            .insert(key.clone(), TranscriptNote::Following(path.clone()));
        self.followed.insert(
            path,
            Followed {
                key: key.clone(),
                tail,
                detector,
            },
        );
    }

    /// Takes in one change; whether transcripts wait to be read (a read is due after the
    /// debounce).
    pub(crate) fn take_change(&mut self, change: FsChange) -> bool {
        self.changed(change);
        if self.needs_resync() {
            self.move_watches();
        }
        self.has_dirty()
    }

    /// A change the file watcher reported.
    pub(crate) fn changed(&mut self, change: FsChange) {
        if self.followed.contains_key(&change.path) {
            self.dirty.insert(change.path);
            return;
        }
        if !change.structural {
            return;
        }
        // A folder on the way to a transcript appeared (or went): watch deeper (or higher),
        // and look at the transcripts below it, which may have been written at once.
        let below: Vec<PathBuf> = self
            .followed
            .keys()
            .filter(|p| p.starts_with(&change.path))
            .cloned()
            .collect();
        if !below.is_empty() {
            self.resync = true;
            self.dirty.extend(below);
        }
    }

    /// The slow fallback for transcripts that cannot be watched: marks those that moved.
    pub(crate) fn poll(&mut self) {
        for path in &self.unwatched {
            if self.followed.get(path).is_some_and(|f| f.tail.has_news()) {
                self.dirty.insert(path.clone());
            }
        }
    }

    /// Reads the dirty transcripts; returns what the detectors found, one input per session.
    pub(crate) fn read_dirty(&mut self) -> Vec<Input> {
        let mut inputs = Vec::new();
        for path in std::mem::take(&mut self.dirty) {
            let Some(f) = self.followed.get_mut(&path) else {
                continue;
            };
            // Only a file whose size or identity moved is opened.
            if !f.tail.has_news() {
                continue;
            }
            let mut lines = Vec::new();
            loop {
                match f.tail.read() {
                    Ok(got) => {
                        if got.restarted {
                            f.detector = Detector::new(f.key.provider);
                        }
                        lines.extend(got.lines);
                    }
                    Err(e) => {
                        tracing::debug!(error = %e, path = %path.display(), "cannot read transcript");
                        break;
                    }
                }
                if !f.tail.behind() {
                    break;
                }
            }
            let Some(signal) = f.detector.feed(&lines) else {
                continue;
            };
            let key = f.key.clone();
            if let Signal::WorkDelivered { work_ids } = &signal {
                let event = lidguard_core::event::AgentEvent::new(
                    key.provider,
                    key.session_id.clone(),
                    "transcript-background-work-finished",
                    lidguard_core::event::EventKind::WorkNoticeDelivered {
                        work_ids: work_ids.clone(),
                    },
                );
                inputs.push(Input::Agent {
                    event: Box::new(event),
                    lid: lidguard_core::event::Lid::Unknown,
                    external_displays: None,
                });
            }
            inputs.push(match signal {
                Signal::Activity {
                    reason,
                    answered: true,
                } => Input::Activity {
                    key,
                    reason: reason.to_owned(),
                },
                Signal::Activity {
                    reason,
                    answered: false,
                } => Input::TranscriptGrowth {
                    key,
                    reason: reason.to_owned(),
                },
                Signal::WorkDelivered { .. } => Input::Activity {
                    key,
                    reason: "transcript_background_work_finished".to_owned(),
                },
                Signal::SoftLock { reason } => Input::SoftLock {
                    key,
                    reason: reason.to_owned(),
                },
                Signal::Stop { reason } => Input::Stop(StopSession {
                    key,
                    kind: StopKind::Interrupted,
                    end_reason: Some(reason.to_owned()),
                    pending_work: None,
                    stop_hook: None,
                }),
            });
        }
        inputs
    }
}

/// Waits for `pid` to exit, then reports the session's process gone.
async fn wait_for_exit(pid: u32, key: SessionKey, inputs: mpsc::Sender<Input>) {
    exited(pid).await;
    tracing::info!(session = %key, pid, "watched process exited");
    let _ = inputs.send(Input::ProcessesGone(vec![key])).await;
}

#[cfg(target_os = "linux")]
async fn exited(pid: u32) {
    use rustix::process::{Pid, PidfdFlags, pidfd_open};
    use tokio::io::Interest;
    use tokio::io::unix::AsyncFd;

    let Some(raw) = i32::try_from(pid).ok().and_then(Pid::from_raw) else {
        return;
    };
    match pidfd_open(raw, PidfdFlags::empty()) {
        // SAFETY: `fd` is an open pidfd that the AsyncFd owns from here on; it is closed only
        // when the AsyncFd drops, and `as_raw_fd` of an `OwnedFd` always returns that same fd.
        Ok(fd) => match unsafe { AsyncFd::register_with_interest(fd, Interest::READABLE) } {
            // A pidfd turns readable when its process exits.
            Ok(fd) => {
                let _ = fd.readable().await;
            }
            Err(e) => {
                tracing::debug!(error = ?e, "pidfd not pollable; polling");
                poll_exit(pid).await;
            }
        },
        Err(rustix::io::Errno::SRCH) => {}
        Err(e) => {
            tracing::debug!(error = %e, "no pidfd; polling");
            poll_exit(pid).await;
        }
    }
}

#[cfg(not(target_os = "linux"))]
async fn exited(pid: u32) {
    if !lidguard_platform::process::wait_exit(pid).await {
        poll_exit(pid).await;
    }
}

async fn poll_exit(pid: u32) {
    let roots = lidguard_platform::sources::Roots::system();
    while lidguard_platform::process::is_alive(&roots, pid) {
        tokio::time::sleep(PROCESS_POLL).await;
    }
}
