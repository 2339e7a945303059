//! Ctrl+T's view of the whole transcript: every cell as committed, but each tool call
//! with its whole output (what the conversation shows collapsed as "… +N lines"), in a
//! scrollable full-height view. Up/Down (or k/j) move a row, PgUp/PgDn a page,
//! Home/End go to the start and the end; Esc, q or Ctrl+T close it and the session is
//! shown as it was.
//!
//! It owns the scroll position and its drawing; the lines are the app's full transcript.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};

use super::transcript::Transcript;

/// What a key did to the view.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ViewAction {
    /// The view stays open.
    Stay,
    /// The view closes.
    Close,
}

/// The open view: how far it is scrolled.
#[derive(Debug, Default)]
pub struct TranscriptView {
    /// Rows scrolled up from the end.
    up: usize,
    /// Rows of the last page drawn (for PgUp/PgDn).
    page: usize,
}

impl TranscriptView {
    /// A key while the view is open.
    pub fn handle_key(&mut self, key: KeyEvent) -> ViewAction {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let page = self.page.max(1);
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => return ViewAction::Close,
            KeyCode::Char('t') if ctrl => return ViewAction::Close,
            KeyCode::Up | KeyCode::Char('k') => self.up = self.up.saturating_add(1),
            KeyCode::Down | KeyCode::Char('j') => self.up = self.up.saturating_sub(1),
            KeyCode::PageUp | KeyCode::Char('b') => self.up = self.up.saturating_add(page),
            KeyCode::PageDown | KeyCode::Char(' ') => self.up = self.up.saturating_sub(page),
            KeyCode::Home | KeyCode::Char('g') => self.up = usize::MAX / 2,
            KeyCode::End | KeyCode::Char('G') => self.up = 0,
            _ => {}
        }
        ViewAction::Stay
    }

    /// Draws the view of `full` into `area`: a title row, the transcript, a key row.
    pub fn render(&mut self, full: &Transcript, area: Rect, buf: &mut Buffer) {
        if area.height < 3 {
            return;
        }
        let dim = Style::new().fg(Color::DarkGray);
        let title = Style::new().add_modifier(Modifier::BOLD);
        buf.set_string(area.x, area.y, "Transcript (ctrl+t)", title);
        let body = Rect::new(area.x, area.y + 1, area.width, area.height - 2);
        self.page = usize::from(body.height).saturating_sub(1);
        let (up, _) = full.render_at(body, buf, self.up);
        self.up = up;
        let position = if up == 0 {
            "at the end".to_string()
        } else {
            format!("{up} rows above the end")
        };
        let keys = format!("↑↓ pgup/pgdn home/end · esc or q to close · {position}");
        buf.set_string(area.x, area.bottom() - 1, keys, dim);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::test_support::buffer_rows as rows;
    use ratatui::text::Line;

    #[test]
    fn scrolls_through_everything_and_closes() {
        let mut t = Transcript::default();
        t.push((1..=50).map(|i| Line::from(format!("row {i}"))).collect());
        let mut view = TranscriptView::default();
        let area = Rect::new(0, 0, 60, 7);
        let mut buf = Buffer::empty(area);
        view.render(&t, area, &mut buf);
        let shown = rows(&buf);
        assert_eq!(shown[0], "Transcript (ctrl+t)");
        assert_eq!(
            &shown[1..6],
            ["row 46", "row 47", "row 48", "row 49", "row 50"]
        );
        assert!(shown[6].contains("at the end"), "{shown:?}");
        view.handle_key(KeyEvent::from(KeyCode::Home));
        let mut buf = Buffer::empty(area);
        view.render(&t, area, &mut buf);
        assert_eq!(rows(&buf)[1], "row 1");
        view.handle_key(KeyEvent::from(KeyCode::PageDown));
        let mut buf = Buffer::empty(area);
        view.render(&t, area, &mut buf);
        assert_eq!(rows(&buf)[1], "row 5");
        assert_eq!(
            view.handle_key(KeyEvent::from(KeyCode::Char('q'))),
            ViewAction::Close
        );
        assert_eq!(
            view.handle_key(KeyEvent::from(KeyCode::Esc)),
            ViewAction::Close
        );
    }
}
