//! What `live-status` draws: the head (protection first, kept whole), the sessions, the last
//! events, the keys; colour by state when colour is on.

use jiff::Timestamp;
use jiff::tz::TimeZone;
use lidguard_ipc::protocol::{SessionState, Status};
use ratatui::layout::{Constraint, Layout, Rect};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Cell, Clear, Paragraph, Row, Table, TableState, Wrap};

/// Everything on screen but the terminal itself.
pub(super) struct Screen<'a> {
    pub(super) status: Option<&'a Status>,
    pub(super) error: Option<&'a str>,
    pub(super) events: &'a [(String, String)],
    pub(super) daemon_stopped: bool,
    pub(super) foot: String,
    /// The event whose detail is open, as its raw JSON line.
    pub(super) detail: Option<&'a str>,
    /// Which event is selected (from the newest back), when the events have the focus.
    pub(super) event_selected: Option<usize>,
    pub(super) colour: bool,
    pub(super) tz: &'a TimeZone,
}

/// A style with `colour` as its foreground when colour is on.
fn paint(on: bool, colour: Color) -> Style {
    if on {
        Style::new().fg(colour)
    } else {
        Style::new()
    }
}

impl Screen<'_> {
    pub(super) fn draw(&self, frame: &mut ratatui::Frame, table: &mut TableState) {
        let area = frame.area();
        let head = self.head(area.width.saturating_sub(2));
        // The head is what matters most: it keeps its lines, the events give way first.
        let head_height = u16::try_from(head.1).unwrap_or(u16::MAX).saturating_add(2);
        let [top, sessions, events, foot] = Layout::vertical([
            Constraint::Length(head_height),
            Constraint::Min(4),
            Constraint::Fill(1),
            Constraint::Length(1),
        ])
        .areas(area);
        frame.render_widget(
            Paragraph::new(head.0)
                .wrap(Wrap { trim: false })
                .block(Block::bordered().title(" lidguard live-status ")),
            top,
        );
        self.sessions(frame, sessions, table);
        self.events(frame, events);
        frame.render_widget(Paragraph::new(visible(&self.foot)), foot);
        if let Some(raw) = self.detail {
            let popup = area.inner(ratatui::layout::Margin {
                horizontal: 2,
                vertical: 1,
            });
            let pretty = serde_json::from_str::<serde_json::Value>(raw)
                .and_then(|v| serde_json::to_string_pretty(&v))
                .unwrap_or_else(|_| raw.to_owned());
            let lines: Vec<Line> = pretty.lines().map(|l| Line::raw(visible(l))).collect();
            frame.render_widget(Clear, popup);
            frame.render_widget(
                Paragraph::new(lines)
                    .wrap(Wrap { trim: false })
                    .block(Block::bordered().title(" event (Esc closes) ")),
                popup,
            );
        }
    }

    /// The head's lines and how many rows they take at `width`.
    fn head(&self, width: u16) -> (Vec<Line<'static>>, usize) {
        let mut lines = Vec::new();
        if self.daemon_stopped {
            lines.push(Line::styled(
                "The daemon stopped: the stream ended (r reconnects and starts it).",
                paint(self.colour, Color::Red),
            ));
        }
        match self.status {
            None => lines.push(Line::raw(format!(
                "No status: {}",
                self.error.unwrap_or("not read yet")
            ))),
            Some(s) => self.status_lines(s, &mut lines),
        }
        let width = usize::from(width.max(1));
        let rows = lines.iter().map(|l| l.width().max(1).div_ceil(width)).sum();
        (lines, rows)
    }

    fn status_lines(&self, s: &Status, lines: &mut Vec<Line<'static>>) {
        let p = &s.protection;
        let text = p.in_words();
        let colour = if p.held {
            Color::Green
        } else if p.wanted {
            Color::Red
        } else if p.paused.is_some() || p.released_for().is_some() {
            Color::Yellow
        } else {
            Color::Reset
        };
        let mut style = paint(self.colour && colour != Color::Reset, colour);
        if p.wanted && !p.held {
            style = style.add_modifier(Modifier::BOLD);
        }
        lines.push(Line::from(vec![
            Span::raw("Protection: "),
            Span::styled(visible(&text), style),
        ]));
        lines.push(Line::raw(format!(
            "Lid: {} · displays: {} connected, {} external{}",
            s.lid,
            s.visible_displays.map_or("?".into(), |n| n.to_string()),
            s.external_displays.map_or("?".into(), |n| n.to_string()),
            super::super::status::machine_text(s),
        )));
        let suspend = match &s.pending_suspend {
            Some(pending) => {
                let left = pending
                    .due_at
                    .duration_since(Timestamp::now())
                    .as_secs()
                    .max(0);
                Line::styled(
                    format!(
                        "Suspend in {left} s ({:?}, phase {:?}) · c cancels it",
                        pending.reason, pending.phase
                    ),
                    paint(self.colour, Color::LightBlue).add_modifier(Modifier::BOLD),
                )
            }
            None => Line::raw("No suspend pending"),
        };
        lines.push(suspend);
        let ask = match s.pending_suspend.as_ref().and_then(|p| p.ask.as_ref()) {
            Some(ask) => format!(
                "Ask before sleep: {} — {}'s Stop hook waits",
                ask.status.as_str(),
                visible(&ask.key.to_string())
            ),
            None => format!("Ask before sleep: {}", s.ask_before_sleep),
        };
        lines.push(Line::raw(ask));
    }

    fn sessions(&self, frame: &mut ratatui::Frame, area: Rect, table: &mut TableState) {
        // The fixed columns (provider, state, activity and the gaps between the five) take 43;
        // the session id and the reason share the rest, the id cut to fit with an ellipsis.
        let rest = area.width.saturating_sub(2 + 43);
        let id_width = rest * 55 / 100;
        let why_width = rest - id_width;
        let rows: Vec<Row> = self
            .status
            .iter()
            .flat_map(|s| &s.sessions)
            .map(|s| {
                let (state, colour) = match s.state {
                    SessionState::Active if s.wakes_at.is_some() => {
                        ("held for its wake-up", Color::Green)
                    }
                    SessionState::Active if s.pending_provider_work => {
                        ("working (background)", Color::Green)
                    }
                    SessionState::Active => ("working", Color::Green),
                    SessionState::SoftLocked => ("waiting for you", Color::Yellow),
                };
                let why = s
                    .soft_lock_reason
                    .clone()
                    .or_else(|| s.pending_provider_work_reason.clone())
                    .unwrap_or_default();
                Row::new(vec![
                    Cell::from(s.provider.to_string()),
                    Cell::from(ellipsize(&visible(&s.session_id), usize::from(id_width))),
                    Cell::from(Span::styled(state, paint(self.colour, colour))),
                    Cell::from(visible(&why)),
                    Cell::from(self.local(s.last_activity_at)),
                ])
            })
            .collect();
        let count = rows.len();
        let widget = Table::new(
            rows,
            [
                Constraint::Length(9),
                Constraint::Length(id_width),
                Constraint::Length(21),
                Constraint::Length(why_width),
                Constraint::Length(9),
            ],
        )
        .header(
            Row::new(["provider", "session", "state", "why", "activity"])
                .style(Style::new().add_modifier(Modifier::BOLD)),
        )
        .row_highlight_style(Style::new().add_modifier(Modifier::REVERSED))
        .block(Block::bordered().title(format!(" sessions ({count}) ")));
        frame.render_stateful_widget(widget, area, table);
    }

    fn events(&self, frame: &mut ratatui::Frame, area: Rect) {
        let shown = usize::from(area.height.saturating_sub(2));
        let newest = self.events.len();
        let lines: Vec<Line> = self
            .events
            .iter()
            .enumerate()
            .skip(newest.saturating_sub(shown))
            .map(|(i, (text, _))| {
                let line = Line::raw(visible(text));
                if self.event_selected == Some(newest - 1 - i) {
                    line.style(Style::new().add_modifier(Modifier::REVERSED))
                } else {
                    line
                }
            })
            .collect();
        let title = if self.event_selected.is_some() {
            " last events (Enter shows one, Tab goes back) "
        } else {
            " last events "
        };
        frame.render_widget(
            Paragraph::new(lines).block(Block::bordered().title(title)),
            area,
        );
    }

    fn local(&self, at: Timestamp) -> String {
        at.to_zoned_datetime(self.tz.clone())
            .strftime("%H:%M:%S")
            .to_string()
    }
}

/// `text` cut to `max` characters with an ellipsis in the middle, keeping both ends (ids
/// differ at either end).
pub(super) fn ellipsize(text: &str, max: usize) -> String {
    let count = text.chars().count();
    if count <= max || max < 5 {
        return text.to_owned();
    }
    let keep = max - 1;
    let head: String = text.chars().take(keep / 2).collect();
    let tail: String = text.chars().skip(count - (keep - keep / 2)).collect();
    format!("{head}…{tail}")
}

/// Text from outside with control, bidi and invisible characters escaped, as everywhere else on
/// the terminal.
pub(super) fn visible(text: &str) -> String {
    lidguard_core::text::escape_controls(text).into_owned()
}

#[cfg(test)]
mod tests {
    use super::ellipsize;

    #[test]
    fn long_ids_keep_both_ends() {
        assert_eq!(ellipsize("short", 10), "short");
        let cut = ellipsize("0123456789abcdefghij", 9);
        assert_eq!(cut, "0123…ghij");
        assert_eq!(cut.chars().count(), 9);
    }
}
