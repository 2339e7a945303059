//! The session picker: `/resume` without an id (and `harness9 --resume` in the TUI)
//! shows this project's saved sessions in place of the composer, one row each (when it
//! was last written, its turns, its model and its first prompt, shortened to the
//! width), newest first, with one selected. Up/Down and PgUp/PgDn (Home/End) move,
//! Enter resumes the selected session, Esc closes the picker. Narrow terminals drop the
//! model, then the turns, before the prompt; short ones show fewer rows and scroll.
//!
//! It knows nothing about the agent: keys become a [`PickerAction`] that the app turns
//! into an `Op::Resume`.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::wrap::sanitize;
use crate::protocol::SessionListing;
use crate::sessions::record::display_utc;

/// Session rows shown at most; more scroll.
pub const MAX_ROWS: u16 = 10;
/// Widest model column; longer names are shortened.
const MODEL_WIDTH: usize = 24;
/// Below this width the model column is left out.
const WITH_MODEL: u16 = 64;
/// Below this width the turns column is left out too.
const WITH_TURNS: u16 = 44;

/// What a key did to the picker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PickerAction {
    /// The picker stays open (the selection may have moved).
    Stay,
    /// Esc: close it, resume nothing.
    Close,
    /// Enter: resume the session with this id.
    Resume(String),
}

/// The sessions and the selection.
#[derive(Debug, Clone)]
pub struct SessionPicker {
    sessions: Vec<SessionListing>,
    selected: usize,
    /// The first row shown, so the selection moves within the page before it scrolls.
    top: usize,
    /// Rows shown at the last draw: how far PgUp/PgDn move.
    page: usize,
}

impl SessionPicker {
    /// A picker over `sessions`, newest first; `None` when there are none.
    pub fn new(mut sessions: Vec<SessionListing>) -> Option<SessionPicker> {
        if sessions.is_empty() {
            return None;
        }
        sessions.sort_by(|a, b| {
            b.modified_ms
                .cmp(&a.modified_ms)
                .then_with(|| b.id.cmp(&a.id))
        });
        Some(SessionPicker {
            sessions,
            selected: 0,
            top: 0,
            page: usize::from(MAX_ROWS),
        })
    }

    /// The selected session.
    #[cfg(test)]
    pub fn selected(&self) -> &SessionListing {
        &self.sessions[self.selected]
    }

    fn select(&mut self, index: usize) {
        self.selected = index.min(self.sessions.len() - 1);
    }

    /// Applies a key.
    pub fn handle_key(&mut self, key: KeyEvent) -> PickerAction {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Up => self.select(self.selected.saturating_sub(1)),
            KeyCode::Char('p') if ctrl => self.select(self.selected.saturating_sub(1)),
            KeyCode::Down => self.select(self.selected + 1),
            KeyCode::Char('n') if ctrl => self.select(self.selected + 1),
            KeyCode::PageUp => self.select(self.selected.saturating_sub(self.page)),
            KeyCode::PageDown => self.select(self.selected + self.page),
            KeyCode::Home => self.select(0),
            KeyCode::End => self.select(usize::MAX),
            KeyCode::Enter => {
                return PickerAction::Resume(self.sessions[self.selected].id.clone());
            }
            KeyCode::Esc => return PickerAction::Close,
            _ => {}
        }
        PickerAction::Stay
    }

    /// Rows wanted: a title, the sessions (at most [`MAX_ROWS`]) and a line of keys.
    pub fn height(&self) -> u16 {
        u16::try_from(self.sessions.len())
            .unwrap_or(MAX_ROWS)
            .min(MAX_ROWS)
            + 2
    }

    /// Draws the picker into `area`: the title and the keys when there is room, and as
    /// many sessions as fit around the selection.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer) {
        let height = usize::from(area.height);
        if height == 0 || area.width == 0 {
            return;
        }
        let title = height >= 2;
        let keys = height >= 3;
        let rows = height - usize::from(title) - usize::from(keys);
        self.page = rows.max(1);
        if self.selected < self.top {
            self.top = self.selected;
        } else if self.selected >= self.top + rows {
            self.top = self.selected + 1 - rows;
        }
        self.top = self.top.min(self.sessions.len().saturating_sub(rows));

        let dim = Style::new().fg(Color::DarkGray);
        let mut y = area.y;
        let mut line_at = |line: Line<'static>, y: &mut u16| {
            line.render(Rect::new(area.x, *y, area.width, 1), buf);
            *y += 1;
        };
        if title {
            // A rule like the composer's, with the title in it.
            let position = format!(
                " · {} of {} · newest first ",
                self.selected + 1,
                self.sessions.len()
            );
            let name = "Resume a session";
            let used = 3 + name.width() + position.width();
            line_at(
                Line::from(vec![
                    Span::styled("── ", dim),
                    Span::styled(
                        name,
                        Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
                    ),
                    Span::styled(position, dim),
                    Span::styled(
                        "─".repeat(usize::from(area.width).saturating_sub(used)),
                        dim,
                    ),
                ]),
                &mut y,
            );
        }
        let columns = Columns::for_width(area.width, &self.sessions);
        for (i, session) in self.sessions.iter().enumerate().skip(self.top).take(rows) {
            line_at(columns.row(session, i == self.selected), &mut y);
        }
        if keys {
            let id = &self.sessions[self.selected].id;
            line_at(
                Line::styled(format!("↑↓ choose · enter resumes {id} · esc closes"), dim),
                &mut y,
            );
        }
    }
}

/// Which columns a row has at this width, and how wide each is.
struct Columns {
    width: usize,
    turns: Option<usize>,
    model: Option<usize>,
}

impl Columns {
    fn for_width(width: u16, sessions: &[SessionListing]) -> Columns {
        let turns = SessionListing::column_width(sessions, |s| s.turns_text().width());
        let model =
            SessionListing::column_width(sessions, |s| sanitize(&s.model).width()).min(MODEL_WIDTH);
        Columns {
            width: usize::from(width),
            turns: (width >= WITH_TURNS).then_some(turns),
            model: (width >= WITH_MODEL && model > 0).then_some(model),
        }
    }

    /// One session's row: marker, when, turns, model, then the first prompt in the rest
    /// of the width.
    fn row(&self, session: &SessionListing, selected: bool) -> Line<'static> {
        let (marker, base) = if selected {
            (
                "› ",
                Style::new()
                    .fg(Color::Cyan)
                    .add_modifier(Modifier::REVERSED),
            )
        } else {
            ("  ", Style::new())
        };
        let dim = if selected {
            base
        } else {
            Style::new().fg(Color::DarkGray)
        };
        let mut spans = vec![
            Span::styled(marker, base.add_modifier(Modifier::BOLD)),
            Span::styled(display_utc(session.modified_ms), base),
        ];
        if let Some(width) = self.turns {
            spans.push(Span::styled(
                format!("  {}", pad(&session.turns_text(), width)),
                dim,
            ));
        }
        if let Some(width) = self.model {
            let model = fit(&sanitize(&session.model), width);
            spans.push(Span::styled(format!("  {}", pad(&model, width)), dim));
        }
        let used: usize = spans.iter().map(|s| s.content.width()).sum();
        let room = self.width.saturating_sub(used + 2);
        let (prompt, style) = match &session.first_prompt {
            Some(p) => (
                sanitize(p).split_whitespace().collect::<Vec<_>>().join(" "),
                base,
            ),
            None => ("(no prompt)".to_string(), dim),
        };
        if room > 0 {
            spans.push(Span::styled(format!("  {}", fit(&prompt, room)), style));
        }
        Line::from(spans)
    }
}

/// `text` padded with spaces to `width` columns.
fn pad(text: &str, width: usize) -> String {
    let mut out = text.to_string();
    out.push_str(&" ".repeat(width.saturating_sub(text.width())));
    out
}

/// `text` shortened to `width` columns, ending in `…` when cut.
pub(super) fn fit(text: &str, width: usize) -> String {
    if text.width() <= width {
        return text.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w + 1 > width {
            break;
        }
        out.push(c);
        used += w;
    }
    if width > 0 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::test_support::drawn;
    use insta::assert_snapshot;

    /// 2026-11-23 17:35 UTC, in milliseconds.
    const T: u64 = 1_795_455_301_000;

    fn listing(id: &str, minutes_later: u64, turns: u64, prompt: Option<&str>) -> SessionListing {
        SessionListing {
            id: id.into(),
            modified_ms: T + minutes_later * 60_000,
            turns,
            model: "gpt-4o-mini".into(),
            first_prompt: prompt.map(str::to_string),
        }
    }

    fn three() -> SessionPicker {
        SessionPicker::new(vec![
            listing(
                "20261123-173501-a3f9c2",
                0,
                4,
                Some("fix the failing test in crate foo"),
            ),
            listing(
                "20261123-190000-0b1c2d",
                90,
                1,
                Some("explain how the parser handles nested blocks, in detail"),
            ),
            listing("20261124-080000-ffeedd", 900, 12, None),
        ])
        .unwrap()
    }

    fn draw(picker: &mut SessionPicker, width: u16, height: u16) -> String {
        drawn(width, height, |f| picker.render(f.area(), f.buffer_mut()))
    }

    fn key(picker: &mut SessionPicker, code: KeyCode) -> PickerAction {
        picker.handle_key(KeyEvent::from(code))
    }

    #[test]
    fn nothing_to_pick_is_no_picker() {
        assert!(SessionPicker::new(Vec::new()).is_none());
    }

    #[test]
    fn newest_first_and_keys_move_choose_and_close() {
        let (newest, middle, oldest) = (
            "20261124-080000-ffeedd",
            "20261123-190000-0b1c2d",
            "20261123-173501-a3f9c2",
        );
        let mut p = three();
        assert_eq!(p.selected().id, newest, "newest first");
        for (code, selected, why) in [
            (KeyCode::Up, newest, "stops at the top"),
            (KeyCode::Down, middle, "moves down"),
            (KeyCode::PageDown, oldest, "stops at the end"),
            (KeyCode::Down, oldest, "stays at the end"),
            (KeyCode::Home, newest, "back to the top"),
        ] {
            assert_eq!(key(&mut p, code), PickerAction::Stay, "{why}");
            assert_eq!(p.selected().id, selected, "{why}");
        }
        p.handle_key(KeyEvent::new(KeyCode::Char('n'), KeyModifiers::CONTROL));
        assert_eq!(
            key(&mut p, KeyCode::Enter),
            PickerAction::Resume("20261123-190000-0b1c2d".into())
        );
        assert_eq!(key(&mut p, KeyCode::Char('x')), PickerAction::Stay);
        assert_eq!(key(&mut p, KeyCode::Esc), PickerAction::Close);
    }

    #[test]
    fn wide_rows_show_every_column() {
        let mut p = three();
        key(&mut p, KeyCode::Down);
        assert_eq!(p.height(), 5);
        assert_snapshot!(draw(&mut p, 100, 5));
    }

    #[test]
    fn narrow_terminals_drop_columns_and_shorten_the_prompt() {
        let mut p = three();
        key(&mut p, KeyCode::Down);
        let medium = draw(&mut p, 56, 5);
        assert!(!medium.contains("gpt-4o-mini"), "{medium}");
        assert!(medium.contains("1 turn "), "{medium}");
        assert!(
            medium.contains("explain how the parser") && medium.contains('…'),
            "{medium}"
        );
        assert_snapshot!("narrow_56", medium);
        let small = draw(&mut p, 30, 5);
        assert!(!small.contains("turn"), "{small}");
        assert_snapshot!("narrow_30", small);
        // Every row fits its width: nothing is drawn past the edge.
        for line in small.lines() {
            assert!(line.chars().count() <= 32, "{line}");
        }
    }

    #[test]
    fn short_terminals_scroll_to_keep_the_selection_in_view() {
        let sessions: Vec<SessionListing> = (0..30)
            .map(|i| listing(&format!("s{i:02}"), i, i, Some(&format!("prompt {i}"))))
            .collect();
        let mut p = SessionPicker::new(sessions).unwrap();
        assert_eq!(p.height(), MAX_ROWS + 2);
        // Three rows of sessions fit between the title and the keys.
        let screen = draw(&mut p, 70, 5);
        assert!(screen.contains("› 2026") && screen.contains("prompt 29"));
        assert!(screen.contains("1 of 30"), "{screen}");
        key(&mut p, KeyCode::PageDown);
        assert_eq!(p.selected().id, "s26", "a page is the rows shown");
        let screen = draw(&mut p, 70, 5);
        assert!(screen.contains("prompt 26") && !screen.contains("prompt 29"));
        key(&mut p, KeyCode::End);
        let screen = draw(&mut p, 70, 5);
        assert!(screen.contains("prompt 0") && screen.contains("30 of 30"));
        // Taller again: the rows fill the space, the selection stays shown.
        let screen = draw(&mut p, 70, 12);
        assert!(screen.contains("prompt 9") && screen.contains("prompt 0"));
        // One row: only the selection.
        let screen = draw(&mut p, 70, 1);
        assert!(screen.contains("prompt 0") && !screen.contains("Resume"));
    }

    #[test]
    fn fit_counts_columns_not_bytes() {
        assert_eq!(fit("héllo wörld", 20), "héllo wörld");
        assert_eq!(fit("héllo wörld", 6), "héllo…");
        assert_eq!(fit("日本語のテキスト", 7), "日本語…");
        assert_eq!(pad("ab", 4), "ab  ");
    }
}
