//! The conversation kept in memory: every finished line of the session, in order, the
//! source of truth every redraw of the history starts from. In alternate-screen mode it
//! is drawn above the live area (drawing walks back from the end and stops when the area
//! is full, so a frame costs what is on screen, not the length of the session); in
//! inline mode it is printed again into a cleared terminal after a resize
//! ([`Transcript::tail_rows`]), since what the terminal did to its scrollback cannot be
//! known.
//!
//! It knows nothing about cells or events: it stores finished lines.

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Style};
use ratatui::text::Line;
use ratatui::widgets::Widget;

use super::wrap::wrap_line;

/// Finished lines and how far the view is scrolled up.
#[derive(Debug, Default)]
pub struct Transcript {
    lines: Vec<Line<'static>>,
    /// Rows scrolled up from the bottom.
    offset: usize,
}

impl Transcript {
    /// Appends finished lines (the view stays where it is if scrolled up).
    pub fn push(&mut self, lines: Vec<Line<'static>>) {
        self.lines.extend(lines);
    }

    /// The last `max_rows` rows of the transcript wrapped to `width`, oldest first; when
    /// older lines are left out, a first row says how many.
    pub fn tail_rows(&self, width: u16, max_rows: usize) -> Vec<Line<'static>> {
        let mut rows: Vec<Line<'static>> = Vec::new();
        let mut left_out = self.lines.len();
        for line in self.lines.iter().rev() {
            let wrapped = wrap_line(line, width);
            if rows.len() + wrapped.len() > max_rows {
                break;
            }
            rows.extend(wrapped.into_iter().rev());
            left_out -= 1;
        }
        if left_out > 0 {
            let dim = Style::new().fg(Color::DarkGray);
            rows.push(Line::styled(
                format!("… {left_out} earlier lines (ctrl+t shows the whole transcript)"),
                dim,
            ));
        }
        rows.reverse();
        rows
    }

    /// Scrolls by `rows` (positive is up, towards older lines).
    pub fn scroll(&mut self, rows: isize) {
        self.offset = self.offset.saturating_add_signed(rows);
    }

    /// Back to the newest lines.
    pub fn scroll_to_bottom(&mut self) {
        self.offset = 0;
    }

    /// Draws the visible rows, newest at the bottom of `area`.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer) {
        self.offset = self.render_at(area, buf, self.offset).0;
    }

    /// Draws the rows `up` rows above the newest, newest at the bottom of `area`;
    /// returns `up` kept within the transcript, and the rows walked (all of them when
    /// the view reaches the oldest line).
    pub fn render_at(&self, area: Rect, buf: &mut Buffer, up: usize) -> (usize, usize) {
        let height = usize::from(area.height);
        if height == 0 {
            return (up, 0);
        }
        let mut rows: Vec<Line<'static>> = Vec::with_capacity(height.saturating_add(up).min(4096));
        for line in self.lines.iter().rev() {
            let wrapped = wrap_line(line, area.width);
            rows.extend(wrapped.into_iter().rev());
            if rows.len() >= height.saturating_add(up) {
                break;
            }
        }
        // Do not scroll past the oldest line.
        let up = up.min(rows.len().saturating_sub(height));
        let visible: Vec<&Line<'static>> = rows.iter().skip(up).take(height).collect();
        let start = area.bottom() - visible.len() as u16;
        for (i, line) in visible.into_iter().rev().enumerate() {
            line.render(Rect::new(area.x, start + i as u16, area.width, 1), buf);
        }
        (up, rows.len())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::test_support::buffer_rows as rows;

    #[test]
    fn shows_the_newest_lines_and_scrolls() {
        let mut t = Transcript::default();
        t.push((0..100).map(|i| Line::from(format!("l{i}"))).collect());
        let area = Rect::new(0, 0, 10, 3);
        let mut buf = Buffer::empty(area);
        t.render(area, &mut buf);
        assert_eq!(rows(&buf), vec!["l97", "l98", "l99"]);
        t.scroll(2);
        let mut buf = Buffer::empty(area);
        t.render(area, &mut buf);
        assert_eq!(rows(&buf), vec!["l95", "l96", "l97"]);
        t.scroll(1000);
        let mut buf = Buffer::empty(area);
        t.render(area, &mut buf);
        assert_eq!(rows(&buf), vec!["l0", "l1", "l2"]);
    }

    #[test]
    fn the_tail_is_wrapped_and_says_what_it_leaves_out() {
        let mut t = Transcript::default();
        t.push(vec![
            Line::from("first"),
            Line::from("one two three"),
            Line::from("last"),
        ]);
        let all = crate::tui::test_support::texts(&t.tail_rows(8, 10));
        assert_eq!(all, vec!["first", "one two", "three", "last"]);
        // A wrapped line is never cut in half: it is left out whole.
        let tail = crate::tui::test_support::texts(&t.tail_rows(8, 2));
        assert_eq!(
            tail,
            vec![
                "… 2 earlier lines (ctrl+t shows the whole transcript)",
                "last"
            ]
        );
    }
}
