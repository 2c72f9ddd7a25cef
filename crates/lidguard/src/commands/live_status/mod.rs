//! `lidguard live-status`: a terminal dashboard fed by the event stream. It redraws when an
//! event or a key arrives — never on a timer, except once a second while a suspend countdown
//! is on screen.

mod screen;

use std::collections::VecDeque;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

use jiff::tz::TimeZone;
use lidguard_ipc::protocol::{Request, SessionRef, Status};
use lidguard_ipc::stream::{Replay, StreamEvent};
use lidguard_ipc::{Daemon, Places};
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::widgets::TableState;

use super::session::daemon_error;
use screen::{Screen, visible};

/// How many recent events the dashboard keeps.
const EVENTS_KEPT: usize = 200;

/// What wakes the dashboard.
enum Wake {
    /// A line of the event stream.
    Event(String),
    /// The stream ended: the daemon stopped.
    StreamEnded,
    /// A key or a resize.
    Terminal(Event),
}

/// Whether to colour: `auto` colours unless `NO_COLOR` is set (and not empty).
pub(crate) fn colour_on(choice: clap::ColorChoice) -> bool {
    match choice {
        clap::ColorChoice::Always => true,
        clap::ColorChoice::Never => false,
        clap::ColorChoice::Auto => {
            lidguard_files::environment::var("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

pub(crate) fn run(places: &Places, colour: bool) -> anyhow::Result<ExitCode> {
    use std::io::IsTerminal;
    if !std::io::stdout().is_terminal() {
        anyhow::bail!(
            "live-status needs a terminal; for scripts use `lidguard events --follow --json`"
        );
    }
    let (tx, wakes) = mpsc::channel();
    connect(places, &tx)?;
    let keys = tx.clone();
    std::thread::spawn(move || {
        while let Ok(e) = event::read() {
            if keys.send(Wake::Terminal(e)).is_err() {
                break;
            }
        }
    });
    let mut view = View::new(colour);
    view.refresh(places);
    let mut terminal = ratatui::init();
    let result = (|| -> anyhow::Result<()> {
        loop {
            terminal.draw(|frame| view.draw(frame))?;
            // Only a countdown on screen needs the clock.
            let wake = if view.counting_down() {
                match wakes.recv_timeout(Duration::from_secs(1)) {
                    Ok(wake) => Some(wake),
                    Err(mpsc::RecvTimeoutError::Timeout) => None,
                    Err(mpsc::RecvTimeoutError::Disconnected) => return Ok(()),
                }
            } else {
                Some(wakes.recv()?)
            };
            let mut changed = false;
            // Everything already waiting is taken together: one status read, one redraw.
            let waiting = wake
                .into_iter()
                .chain(std::iter::from_fn(|| wakes.try_recv().ok()));
            for wake in waiting {
                match wake {
                    Wake::Event(line) => {
                        view.event(line);
                        changed = true;
                    }
                    Wake::StreamEnded => {
                        view.daemon_stopped = true;
                        changed = true;
                    }
                    Wake::Terminal(Event::Key(key)) if key.kind != KeyEventKind::Release => {
                        let ctrl_c = key.code == KeyCode::Char('c')
                            && key.modifiers.contains(KeyModifiers::CONTROL);
                        match view.key(places, &tx, key.code, ctrl_c) {
                            Keyed::Quit => return Ok(()),
                            Keyed::Changed => changed = true,
                            Keyed::Shown => {}
                        }
                    }
                    Wake::Terminal(_) => {}
                }
            }
            if changed {
                view.refresh(places);
            }
        }
    })();
    ratatui::restore();
    result?;
    Ok(ExitCode::SUCCESS)
}

/// Follows the stream (starting the daemon when none runs) on a thread of its own.
fn connect(places: &Places, tx: &mpsc::Sender<Wake>) -> anyhow::Result<()> {
    let tx = tx.clone();
    super::session::starting_daemon(places)?
        .follow_in_background(Replay::Last(EVENTS_KEPT), move |line| {
            tx.send(line.map_or(Wake::StreamEnded, Wake::Event)).is_ok()
        })
        .map_err(daemon_error)
}

/// What a key did.
enum Keyed {
    Quit,
    /// Something changed on the daemon's side: read the status again.
    Changed,
    /// Only the screen changed.
    Shown,
}

/// Which list the arrows move in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Focus {
    Sessions,
    /// The events, with the selected one counted from the newest back.
    Events(usize),
}

struct View {
    status: Option<Status>,
    /// Why there is no status.
    error: Option<String>,
    /// Each event rendered, with its JSON line for the detail view.
    events: VecDeque<(String, String)>,
    table: TableState,
    focus: Focus,
    /// The event whose detail is open.
    detail: Option<String>,
    /// A session `d` asked to remove, waiting for `y`.
    confirm: Option<SessionRef>,
    message: Option<String>,
    daemon_stopped: bool,
    colour: bool,
    tz: TimeZone,
}

impl View {
    fn new(colour: bool) -> View {
        View {
            status: None,
            error: None,
            events: VecDeque::with_capacity(EVENTS_KEPT),
            table: TableState::default().with_selected(Some(0)),
            focus: Focus::Sessions,
            detail: None,
            confirm: None,
            message: None,
            daemon_stopped: false,
            colour,
            tz: TimeZone::system(),
        }
    }

    fn event(&mut self, line: String) {
        let Ok(event) = serde_json::from_str::<StreamEvent>(&line) else {
            return;
        };
        if self.events.len() == EVENTS_KEPT {
            self.events.pop_front();
        }
        let text = super::events::render(&event, &self.tz);
        self.events.push_back((text, line));
    }

    fn key(
        &mut self,
        places: &Places,
        tx: &mpsc::Sender<Wake>,
        code: KeyCode,
        ctrl_c: bool,
    ) -> Keyed {
        if ctrl_c {
            return Keyed::Quit;
        }
        // A question asked is answered first: `y` goes on, any other key keeps the session.
        if let Some(session) = self.confirm.take() {
            if code == KeyCode::Char('y') {
                self.remove(places, &session);
                return Keyed::Changed;
            }
            self.message = Some("kept".to_owned());
            return Keyed::Shown;
        }
        if self.detail.is_some() {
            if matches!(code, KeyCode::Esc | KeyCode::Enter | KeyCode::Char('q')) {
                self.detail = None;
            }
            return Keyed::Shown;
        }
        match code {
            KeyCode::Char('q') | KeyCode::Esc => return Keyed::Quit,
            KeyCode::Up | KeyCode::Char('k') => self.select(-1),
            KeyCode::Down | KeyCode::Char('j') => self.select(1),
            KeyCode::Tab => {
                self.focus = match self.focus {
                    Focus::Sessions if !self.events.is_empty() => Focus::Events(0),
                    _ => Focus::Sessions,
                };
            }
            KeyCode::Enter => {
                if let Focus::Events(back) = self.focus {
                    let index = self.events.len().saturating_sub(1 + back);
                    self.detail = self.events.get(index).map(|(_, raw)| raw.clone());
                }
            }
            KeyCode::Char('d') | KeyCode::Delete => self.ask_remove(),
            KeyCode::Char('c') => {
                self.message = Some(send(places, &Request::CancelSuspend));
                return Keyed::Changed;
            }
            KeyCode::Char('r') if self.daemon_stopped => {
                self.daemon_stopped = false;
                if let Err(e) = connect(places, tx) {
                    self.message = Some(format!("{e:#}"));
                }
                return Keyed::Changed;
            }
            _ => {}
        }
        Keyed::Shown
    }

    fn refresh(&mut self, places: &Places) {
        match Daemon::new(places).status() {
            Ok(status) => {
                self.status = Some(status);
                self.error = None;
            }
            Err(e) => self.error = Some(e.to_string()),
        }
        let count = self.status.as_ref().map_or(0, |s| s.sessions.len());
        let selected = self
            .table
            .selected()
            .unwrap_or(0)
            .min(count.saturating_sub(1));
        self.table.select(Some(selected));
    }

    fn counting_down(&self) -> bool {
        self.status
            .as_ref()
            .is_some_and(|s| s.pending_suspend.is_some())
    }

    fn select(&mut self, step: isize) {
        if let Focus::Events(back) = self.focus {
            // Up goes to older events.
            let last = self.events.len().saturating_sub(1);
            self.focus = Focus::Events(back.saturating_add_signed(-step).min(last));
            return;
        }
        let count = self.status.as_ref().map_or(0, |s| s.sessions.len());
        if count == 0 {
            return;
        }
        let now = self.table.selected().unwrap_or(0);
        let next = now.saturating_add_signed(step).min(count - 1);
        self.table.select(Some(next));
    }

    /// `d`: asks before removing the selected session.
    fn ask_remove(&mut self) {
        let Some(session) = self
            .status
            .as_ref()
            .and_then(|s| s.sessions.get(self.table.selected().unwrap_or(0)))
        else {
            return;
        };
        self.confirm = Some(SessionRef {
            provider: session.provider,
            session_id: session.session_id.clone(),
            provider_name: session.provider_name.clone(),
        });
    }

    fn remove(&mut self, places: &Places, session: &SessionRef) {
        let request = Request::RemoveSession {
            all: false,
            session_id: Some(session.session_id.clone()),
            provider: Some(session.provider),
            provider_name: session.provider_name.clone(),
        };
        let said = send(places, &request);
        self.message = Some(format!(
            "{} {}: {said}",
            session.provider, session.session_id
        ));
    }

    fn draw(&mut self, frame: &mut ratatui::Frame) {
        let mut foot = match &self.confirm {
            Some(s) => format!(
                "Remove {} {}? y removes it, any other key keeps it",
                s.provider, s.session_id
            ),
            None => {
                let mut keys =
                    "q quit · ↑/↓ select · Tab events · d remove a session · c cancel a suspend"
                        .to_owned();
                if self.daemon_stopped {
                    keys.push_str(" · r reconnect");
                }
                keys
            }
        };
        if let (Some(message), None) = (&self.message, &self.confirm) {
            foot.push_str(" — ");
            foot.push_str(message);
        }
        let screen = Screen {
            status: self.status.as_ref(),
            error: self.error.as_deref(),
            // One slice of the kept events, not a copy per redraw.
            events: self.events.make_contiguous(),
            daemon_stopped: self.daemon_stopped,
            foot: visible(&foot),
            detail: self.detail.as_deref(),
            event_selected: match self.focus {
                Focus::Events(back) => Some(back),
                Focus::Sessions => None,
            },
            colour: self.colour,
            tz: &self.tz,
        };
        screen.draw(frame, &mut self.table);
    }
}

/// Sends `request`; what the daemon said, or why it could not be asked.
fn send(places: &Places, request: &Request) -> String {
    match Daemon::new(places).send(request) {
        Ok(r) => r.message,
        Err(e) => e.to_string(),
    }
}
