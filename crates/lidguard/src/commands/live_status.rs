//! `lidguard live-status`: a terminal dashboard fed by the event stream. It redraws when an
//! event or a key arrives — never on a timer, except once a second while a suspend countdown
//! is on screen.

use std::collections::VecDeque;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;

use jiff::Timestamp;
use jiff::tz::TimeZone;
use lidguard_ipc::Places;
use lidguard_ipc::client;
use lidguard_ipc::protocol::{Request, SessionState, Status};
use lidguard_ipc::stream::{Replay, StreamEvent, StreamFilter};
use ratatui::crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
use ratatui::layout::{Constraint, Layout};
use ratatui::style::{Modifier, Style};
use ratatui::text::Line;
use ratatui::widgets::{Block, Paragraph, Row, Table, TableState};

use super::session::{REQUEST_TIMEOUT, daemon_error};

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

pub(crate) fn run(places: &Places) -> anyhow::Result<ExitCode> {
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
    let mut view = View::new();
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
                        view.event(&line);
                        changed = true;
                    }
                    Wake::StreamEnded => {
                        view.daemon_stopped = true;
                        changed = true;
                    }
                    Wake::Terminal(Event::Key(key)) if key.kind != KeyEventKind::Release => {
                        match key.code {
                            KeyCode::Char('q') | KeyCode::Esc => return Ok(()),
                            KeyCode::Char('c') if key.modifiers.contains(KeyModifiers::CONTROL) => {
                                return Ok(());
                            }
                            KeyCode::Up | KeyCode::Char('k') => view.select(-1),
                            KeyCode::Down | KeyCode::Char('j') => view.select(1),
                            KeyCode::Char('d') | KeyCode::Delete => {
                                view.remove_selected(places);
                                changed = true;
                            }
                            KeyCode::Char('r') if view.daemon_stopped => {
                                view.daemon_stopped = false;
                                if let Err(e) = connect(places, &tx) {
                                    view.message = Some(format!("{e:#}"));
                                }
                                changed = true;
                            }
                            _ => {}
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
    let request = Request::Events {
        filter: StreamFilter::default(),
        replay: Replay::Last(EVENTS_KEPT),
        follow: true,
    };
    let lines = super::events::open(places, &request, true).map_err(daemon_error)?;
    let tx = tx.clone();
    std::thread::spawn(move || {
        for line in lines {
            let Ok(line) = line else { break };
            if tx.send(Wake::Event(line)).is_err() {
                return;
            }
        }
        let _ = tx.send(Wake::StreamEnded);
    });
    Ok(())
}

struct View {
    status: Option<Status>,
    /// Why there is no status.
    error: Option<String>,
    events: VecDeque<String>,
    table: TableState,
    message: Option<String>,
    daemon_stopped: bool,
    tz: TimeZone,
}

impl View {
    fn new() -> View {
        View {
            status: None,
            error: None,
            events: VecDeque::with_capacity(EVENTS_KEPT),
            table: TableState::default().with_selected(Some(0)),
            message: None,
            daemon_stopped: false,
            tz: TimeZone::system(),
        }
    }

    fn event(&mut self, line: &str) {
        let Ok(event) = serde_json::from_str::<StreamEvent>(line) else {
            return;
        };
        if self.events.len() == EVENTS_KEPT {
            self.events.pop_front();
        }
        self.events
            .push_back(super::events::render(&event, &self.tz));
    }

    fn refresh(&mut self, places: &Places) {
        match client::request(places, &Request::Status, REQUEST_TIMEOUT) {
            Ok(response) if response.ok => {
                self.status = response.status.map(|s| *s);
                self.error = None;
            }
            Ok(response) => self.error = Some(response.message),
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
        let count = self.status.as_ref().map_or(0, |s| s.sessions.len());
        if count == 0 {
            return;
        }
        let now = self.table.selected().unwrap_or(0);
        let next = now.saturating_add_signed(step).min(count - 1);
        self.table.select(Some(next));
    }

    fn remove_selected(&mut self, places: &Places) {
        let Some(session) = self
            .status
            .as_ref()
            .and_then(|s| s.sessions.get(self.table.selected().unwrap_or(0)))
        else {
            return;
        };
        let request = Request::RemoveSession {
            all: false,
            session_id: Some(session.session_id.clone()),
            provider: Some(session.provider),
            provider_name: session.provider_name.clone(),
        };
        self.message = Some(match client::request(places, &request, REQUEST_TIMEOUT) {
            Ok(r) => format!("{} {}: {}", session.provider, session.session_id, r.message),
            Err(e) => e.to_string(),
        });
    }

    fn draw(&mut self, frame: &mut ratatui::Frame) {
        let [head, sessions, events, foot] = Layout::vertical([
            Constraint::Length(6),
            Constraint::Min(5),
            Constraint::Min(6),
            Constraint::Length(1),
        ])
        .areas(frame.area());
        frame.render_widget(
            Paragraph::new(self.head()).block(Block::bordered().title(" lidguard live-status ")),
            head,
        );
        let rows: Vec<Row> = self
            .status
            .iter()
            .flat_map(|s| &s.sessions)
            .map(|s| {
                let state = match s.state {
                    SessionState::Active if s.pending_provider_work => "working (background)",
                    SessionState::Active => "working",
                    SessionState::SoftLocked => "waiting for you",
                };
                let why = s
                    .soft_lock_reason
                    .clone()
                    .or_else(|| s.pending_provider_work_reason.clone())
                    .unwrap_or_default();
                Row::new(vec![
                    s.provider.to_string(),
                    visible(&s.session_id),
                    state.to_owned(),
                    visible(&why),
                    self.local(s.last_activity_at),
                ])
            })
            .collect();
        let count = rows.len();
        let table = Table::new(
            rows,
            [
                Constraint::Length(9),
                Constraint::Percentage(35),
                Constraint::Length(21),
                Constraint::Percentage(30),
                Constraint::Length(9),
            ],
        )
        .header(
            Row::new(["provider", "session", "state", "why", "activity"])
                .style(Style::new().add_modifier(Modifier::BOLD)),
        )
        .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED))
        .block(Block::bordered().title(format!(" sessions ({count}) ")));
        frame.render_stateful_widget(table, sessions, &mut self.table);
        let shown = usize::from(events.height.saturating_sub(2));
        let lines: Vec<Line> = self
            .events
            .iter()
            .skip(self.events.len().saturating_sub(shown))
            .map(|e| Line::raw(visible(e)))
            .collect();
        frame.render_widget(
            Paragraph::new(lines).block(Block::bordered().title(" last events ")),
            events,
        );
        let mut keys = "q quit · ↑/↓ select · d remove the selected session".to_owned();
        if self.daemon_stopped {
            keys.push_str(" · r reconnect");
        }
        if let Some(message) = &self.message {
            keys.push_str(" — ");
            keys.push_str(message);
        }
        frame.render_widget(Paragraph::new(visible(&keys)), foot);
    }

    fn head(&self) -> Vec<Line<'static>> {
        let mut lines = Vec::new();
        if self.daemon_stopped {
            lines.push(Line::raw(
                "The daemon stopped: the stream ended (r reconnects and starts it).",
            ));
        }
        let Some(s) = &self.status else {
            lines.push(Line::raw(format!(
                "No status: {}",
                self.error.as_deref().unwrap_or("not read yet")
            )));
            return lines;
        };
        let protection = super::status::protection_text(&s.protection);
        lines.push(Line::raw(format!("Protection: {}", visible(&protection))));
        lines.push(Line::raw(format!(
            "Lid: {} · displays: {} connected, {} external{}",
            s.lid,
            s.visible_displays.map_or("?".into(), |n| n.to_string()),
            s.external_displays.map_or("?".into(), |n| n.to_string()),
            super::status::battery_text(s.battery.as_ref()),
        )));
        let suspend = match &s.pending_suspend {
            Some(pending) => {
                let left = pending
                    .due_at
                    .duration_since(Timestamp::now())
                    .as_secs()
                    .max(0);
                format!(
                    "Suspend in {left} s ({:?}, phase {:?})",
                    pending.reason, pending.phase
                )
            }
            None => "No suspend pending".to_owned(),
        };
        lines.push(Line::raw(suspend));
        let ask = match s.pending_suspend.as_ref().and_then(|p| p.ask.as_ref()) {
            Some(ask) => format!(
                "Ask before sleep: {} — {}'s Stop hook waits",
                ask.status.as_str(),
                visible(&ask.key.to_string())
            ),
            None => format!("Ask before sleep: {}", s.ask_before_sleep),
        };
        lines.push(Line::raw(ask));
        lines
    }

    fn local(&self, at: Timestamp) -> String {
        at.to_zoned_datetime(self.tz.clone())
            .strftime("%H:%M:%S")
            .to_string()
    }
}

/// Text from outside with control, bidi and invisible characters escaped, as everywhere else on
/// the terminal.
fn visible(text: &str) -> String {
    lidguard_core::text::escape_controls(text).into_owned()
}
