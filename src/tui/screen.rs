//! The screen: where the live area sits on the terminal and how finished lines reach the
//! terminal's own scrollback.
//!
//! In inline mode the live area (streaming answer, composer, status line) is a band of
//! rows that grows and shrinks with its content; finished lines are inserted above it
//! through a scrolling region (DECSTBM) and a line feed at its bottom margin, so the
//! terminal scrolls them into its native scrollback and the live area is not touched.
//! The live area itself is redrawn by diff against the previous frame, so a frame costs
//! what is on screen, never what is in the session. In alternate-screen mode the live
//! area is the whole screen.
//!
//! Everything is written into a byte buffer that the caller writes to the terminal in
//! one go, so a frame reaches the terminal as one write. This module knows nothing about
//! cells, events or keys: it draws what a render function puts in a buffer.

use std::io::{self, Write};

use crossterm::cursor::{Hide, MoveTo, Show};
use crossterm::queue;
use crossterm::terminal::{Clear, ClearType};
use ratatui::backend::{Backend, CrosstermBackend};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::text::Line;
use ratatui::widgets::Widget;

use super::wrap::wrap_lines;

/// Rows rendered into one cell buffer when inserting history.
const INSERT_PIECE: usize = 256;

/// Whether the live area is a band in the normal screen or the whole alternate screen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Placement {
    /// A band at the bottom of the normal screen; history goes to scrollback.
    Inline,
    /// The whole alternate screen.
    Full,
}

/// The live area and the bytes that update it.
#[derive(Debug)]
pub struct Screen {
    out: Vec<u8>,
    placement: Placement,
    cols: u16,
    rows: u16,
    /// First row of the live area.
    top: u16,
    /// Rows of the live area.
    height: u16,
    /// What the live area shows now (area at 0,0).
    shown: Buffer,
    /// Redraw every cell of the live area on the next frame.
    stale: bool,
    /// Where the terminal cursor was left by the last frame (`None`: unknown).
    cursor: Option<Option<Position>>,
    /// Whether the history above the live area is as written, or must be printed
    /// again after a resize.
    history: History,
}

/// Whether the rows above the live area are where this screen put them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum History {
    /// As written: new lines are inserted above the live area.
    Placed,
    /// The terminal was resized since: the history must be printed again.
    Lost,
}

impl Screen {
    /// A screen of `cols` x `rows` whose live area starts at the cursor's row (the next
    /// row when the cursor is not in the first column).
    pub fn new(placement: Placement, cols: u16, rows: u16, cursor: Position) -> Screen {
        let top = match placement {
            Placement::Inline => cursor.y.saturating_add(u16::from(cursor.x > 0)),
            Placement::Full => 0,
        };
        Screen {
            out: Vec::new(),
            placement,
            cols,
            rows,
            top,
            height: 0,
            shown: Buffer::empty(Rect::new(0, 0, cols, 0)),
            stale: true,
            cursor: None,
            history: History::Placed,
        }
    }

    /// The terminal's size (columns, rows).
    pub fn size(&self) -> (u16, u16) {
        (self.cols, self.rows)
    }

    /// The most rows the live area may take (inline mode keeps one row above it, so
    /// there is always a region to scroll history through).
    pub fn max_height(&self) -> u16 {
        match self.placement {
            Placement::Inline => self.rows.saturating_sub(1).max(1),
            Placement::Full => self.rows,
        }
    }

    /// Takes the bytes produced so far.
    #[cfg(test)]
    pub fn take_output(&mut self) -> Vec<u8> {
        std::mem::take(&mut self.out)
    }

    /// Writes the bytes produced so far to `w` in one write and flushes it.
    pub fn flush_to(&mut self, w: &mut impl Write) -> io::Result<()> {
        if !self.out.is_empty() {
            w.write_all(&self.out)?;
            self.out.clear();
        }
        w.flush()
    }

    /// The terminal was resized. What it did to the rows already written cannot be
    /// known: terminals move content between the screen and their scrollback when they
    /// change height, rewrap it (or not) when they change width, and bytes written
    /// before the resize reached them may have landed in either geometry. So nothing on
    /// it is trusted any more. In inline mode the next frame starts from a cleared
    /// terminal and scrollback and prints the history again (see [`Screen::reprint`]):
    /// the caller's transcript, not the terminal, is the source of truth. In full-screen
    /// mode the next frame redraws every cell.
    pub fn resize(&mut self, cols: u16, rows: u16) -> io::Result<()> {
        self.cols = cols;
        self.rows = rows;
        self.top = 0;
        match self.placement {
            Placement::Full => queue!(self.out, MoveTo(0, 0), Clear(ClearType::All))?,
            Placement::Inline => self.history = History::Lost,
        }
        self.stale = true;
        self.cursor = None;
        Ok(())
    }

    /// The history on the terminal was covered (a full-height view): the next frame
    /// prints it again (inline mode; nothing to do on the alternate screen).
    pub fn forget_history(&mut self) {
        if self.placement == Placement::Inline {
            self.history = History::Lost;
        }
        self.stale = true;
        self.cursor = None;
    }

    /// True when the next frame must start with [`Screen::reprint`]: the terminal was
    /// resized since the history was last printed.
    pub fn wants_history(&self) -> bool {
        self.history == History::Lost
    }

    /// Clears the terminal, its scrollback included, and prints `rows` (already wrapped
    /// to the width) from its top, the oldest scrolling into the scrollback: after this
    /// the terminal holds each row exactly once, whatever the resizes before it did.
    /// The live area is drawn below them by the next [`Screen::draw`].
    pub fn reprint(&mut self, rows: &[Line<'static>]) -> io::Result<()> {
        // Reset any scrolling region, go home, clear the screen and then the scrollback
        // (some terminals, tmux among them, push a cleared screen into the scrollback).
        self.out.extend_from_slice(b"\x1b[r\x1b[H\x1b[2J\x1b[3J");
        self.top = 0;
        self.height = 0;
        self.stale = true;
        self.cursor = None;
        self.history = History::Placed;
        self.insert_rows(rows)
    }

    /// Forces a full redraw on the next frame (after an external program used the
    /// terminal).
    pub fn invalidate(&mut self) {
        self.stale = true;
        self.cursor = None;
    }

    /// Inserts finished lines above the live area (inline mode), wrapped to the width.
    /// In full-screen mode this does nothing: the caller keeps and draws its history.
    pub fn insert_lines(&mut self, lines: &[Line<'static>]) -> io::Result<()> {
        if self.placement == Placement::Full || lines.is_empty() || self.cols == 0 {
            return Ok(());
        }
        self.insert_rows(&wrap_lines(lines, self.cols))
    }

    /// Inserts rows already wrapped to the width above the live area (inline mode).
    fn insert_rows(&mut self, lines: &[Line<'static>]) -> io::Result<()> {
        if self.placement == Placement::Full || self.cols == 0 {
            return Ok(());
        }
        // A piece at a time, so the cell buffer stays small however many rows come.
        for piece in lines.chunks(INSERT_PIECE) {
            self.insert_piece(piece)?;
        }
        Ok(())
    }

    /// Inserts at most [`INSERT_PIECE`] wrapped rows above the live area.
    fn insert_piece(&mut self, lines: &[Line<'static>]) -> io::Result<()> {
        let n = u16::try_from(lines.len()).unwrap_or(u16::MAX);
        self.cursor = None;
        let mut buf = Buffer::empty(Rect::new(0, 0, self.cols, n));
        for (i, line) in lines.iter().enumerate() {
            line.render(Rect::new(0, i as u16, self.cols, 1), &mut buf);
        }
        let mut drawn: u16 = 0;

        // First use the free rows below the live area: the live area moves down and the
        // lines take its old place (it is redrawn on the next frame).
        let bottom = self.top.saturating_add(self.height).min(self.rows);
        let room = self.rows.saturating_sub(bottom);
        if room > 0 {
            let k = room.min(n);
            for row in 0..k {
                queue!(
                    self.out,
                    MoveTo(0, self.top + row),
                    Clear(ClearType::UntilNewLine)
                )?;
            }
            self.draw_rows(&buf, 0, k, self.top)?;
            self.top += k;
            drawn = k;
            if self.height > 0 {
                self.stale = true;
            }
        }

        // Then scroll the rows above the live area up, one line feed at a time at the
        // bottom margin of a region ending just above it: the top row goes to the
        // terminal's scrollback and the new line is drawn on the freed row.
        if drawn < n {
            if self.top == 0 {
                // No region above the live area (terminal of one row): nothing to do.
                return Ok(());
            }
            write!(self.out, "\x1b[1;{}r", self.top)?;
            for row in drawn..n {
                queue!(self.out, MoveTo(0, self.top - 1))?;
                self.out.push(b'\n');
                queue!(
                    self.out,
                    MoveTo(0, self.top - 1),
                    Clear(ClearType::UntilNewLine)
                )?;
                self.draw_rows(&buf, row, 1, self.top - 1)?;
            }
            self.out.extend_from_slice(b"\x1b[r");
        }
        Ok(())
    }

    /// Draws `count` rows of `buf` starting at row `from`, on screen rows from `at`.
    fn draw_rows(&mut self, buf: &Buffer, from: u16, count: u16, at: u16) -> io::Result<()> {
        let width = usize::from(buf.area.width);
        let start = usize::from(from) * width;
        let end = start + usize::from(count) * width;
        let blank = ratatui::buffer::Cell::default();
        let cells = buf.content[start..end]
            .iter()
            .enumerate()
            .filter(|(_, c)| **c != blank)
            .map(|(i, c)| ((i % width) as u16, at + (i / width) as u16, c));
        let mut backend = CrosstermBackend::new(&mut self.out);
        backend.draw(cells)
    }

    /// Draws one frame of the live area with `height` rows: `render` fills a buffer at
    /// (0,0) and returns where the cursor goes. Only cells that changed are written,
    /// unless the area moved or was invalidated.
    pub fn draw<F>(&mut self, height: u16, render: F) -> io::Result<()>
    where
        F: FnOnce(Rect, &mut Buffer) -> Option<Position>,
    {
        let height = match self.placement {
            Placement::Full => self.rows,
            Placement::Inline => height.min(self.max_height()),
        };
        if self.placement == Placement::Inline {
            // Grow: scroll the whole screen up when the band would pass the bottom.
            let needed = self.top.saturating_add(height);
            if needed > self.rows {
                let k = needed - self.rows;
                queue!(self.out, MoveTo(0, self.rows.saturating_sub(1)))?;
                for _ in 0..k {
                    self.out.push(b'\n');
                }
                self.top = self.top.saturating_sub(k);
                self.stale = true;
                self.cursor = None;
            }
            // Shrink: blank the rows given back.
            if height < self.height {
                for row in self.top + height..(self.top + self.height).min(self.rows) {
                    queue!(self.out, MoveTo(0, row), Clear(ClearType::UntilNewLine))?;
                }
                self.cursor = None;
            }
        }
        let area = Rect::new(0, 0, self.cols, height);
        let mut next = Buffer::empty(area);
        let cursor = render(area, &mut next);

        let top = self.top;
        if self.stale || self.shown.area != area {
            for row in 0..height {
                queue!(
                    self.out,
                    MoveTo(0, top + row),
                    Clear(ClearType::UntilNewLine)
                )?;
            }
            let empty = Buffer::empty(area);
            let cells = empty
                .diff(&next)
                .into_iter()
                .map(|(x, y, c)| (x, y + top, c));
            CrosstermBackend::new(&mut self.out).draw(cells)?;
            self.cursor = None;
        } else {
            let changed = self.shown.diff(&next);
            if !changed.is_empty() {
                let cells = changed.into_iter().map(|(x, y, c)| (x, y + top, c));
                CrosstermBackend::new(&mut self.out).draw(cells)?;
                self.cursor = None;
            }
        }
        let cursor = cursor
            .filter(|p| p.y < height)
            .map(|p| Position::new(p.x, top + p.y));
        if self.cursor != Some(cursor) {
            match cursor {
                Some(p) => queue!(self.out, MoveTo(p.x, p.y), Show)?,
                // Hidden, it waits at the live area's top-left: a known place, for resizes.
                None => queue!(self.out, Hide, MoveTo(0, top))?,
            }
            self.cursor = Some(cursor);
        }
        self.shown = next;
        self.height = height;
        self.stale = false;
        Ok(())
    }

    /// Clears the live area and leaves the cursor, visible, where it started, so what
    /// is printed next follows the conversation.
    pub fn finish(&mut self) -> io::Result<()> {
        if self.placement == Placement::Inline {
            let top = self.top.min(self.rows.saturating_sub(1));
            queue!(self.out, MoveTo(0, top), Clear(ClearType::FromCursorDown))?;
        }
        queue!(self.out, Show)?;
        self.height = 0;
        self.stale = true;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parser(rows: u16, cols: u16) -> vt100::Parser {
        vt100::Parser::new(rows.try_into().unwrap(), cols.try_into().unwrap(), 1000)
    }

    /// A terminal of `rows` x `cols` showing `shell`, and an inline screen on it with
    /// the cursor at `cursor`.
    fn inline(rows: u16, cols: u16, shell: &[u8], cursor: Position) -> (vt100::Parser, Screen) {
        let mut p = parser(rows, cols);
        p.process(shell);
        (p, Screen::new(Placement::Inline, cols, rows, cursor))
    }

    fn row(p: &vt100::Parser, r: u16) -> String {
        p.screen()
            .contents_between(r, 0, r, p.screen().size().1.get())
            .trim_end()
            .to_string()
    }

    fn text_lines(range: std::ops::Range<usize>) -> Vec<Line<'static>> {
        range.map(|i| Line::from(format!("line {i}"))).collect()
    }

    /// Draws a live area of `height` rows: `label` on top, "status" at the bottom.
    fn draw_live(screen: &mut Screen, label: &str, height: u16) {
        screen
            .draw(height, |area, buf| {
                buf.set_string(0, 0, label, ratatui::style::Style::new());
                buf.set_string(0, area.height - 1, "status", ratatui::style::Style::new());
                Some(Position::new(2, 0))
            })
            .unwrap();
    }

    /// Draws the live area and feeds what was written to the terminal `p`.
    fn live(screen: &mut Screen, p: &mut vt100::Parser, label: &str, height: u16) {
        draw_live(screen, label, height);
        p.process(&screen.take_output());
    }

    /// Checks the text of each `(row, text)`.
    fn assert_rows(p: &vt100::Parser, expected: &[(u16, &str)]) {
        for &(r, text) in expected {
            assert_eq!(row(p, r), text, "row {r}");
        }
    }

    #[test]
    fn live_area_starts_below_the_shell_prompt() {
        let (mut p, mut s) = inline(10, 20, b"$ harness9", Position::new(10, 0));
        live(&mut s, &mut p, "> hi", 2);
        assert_rows(&p, &[(0, "$ harness9"), (1, "> hi"), (2, "status")]);
        assert_eq!(p.screen().cursor_position(), (1, 2));
    }

    #[test]
    fn inserted_lines_push_the_live_area_down_then_scroll_into_scrollback() {
        let (mut p, mut s) = inline(6, 20, b"", Position::new(0, 0));
        live(&mut s, &mut p, "> a", 2);
        s.insert_lines(&text_lines(0..3)).unwrap();
        live(&mut s, &mut p, "> b", 2);
        assert_rows(
            &p,
            &[(0, "line 0"), (2, "line 2"), (3, "> b"), (4, "status")],
        );

        s.insert_lines(&text_lines(3..8)).unwrap();
        live(&mut s, &mut p, "> c", 2);
        // The live area is at the bottom; the last 4 lines are above it.
        assert_rows(
            &p,
            &[(0, "line 4"), (3, "line 7"), (4, "> c"), (5, "status")],
        );
        // The rest went to the scrollback, in order.
        p.screen_mut().set_scrollback(4);
        assert_rows(&p, &[(0, "line 0"), (3, "line 3")]);
    }

    #[test]
    fn unchanged_frames_write_almost_nothing() {
        let (mut p, mut s) = inline(6, 40, b"", Position::new(0, 0));
        live(&mut s, &mut p, "> same", 2);
        draw_live(&mut s, "> same", 2);
        let bytes = s.take_output();
        assert!(bytes.is_empty(), "{:?}", String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn growing_at_the_bottom_scrolls_and_shrinking_clears() {
        let (mut p, mut s) = inline(6, 20, b"a\r\nb\r\nc\r\nd\r\ne", Position::new(1, 4));
        live(&mut s, &mut p, "> x", 3);
        assert_rows(&p, &[(2, "e"), (3, "> x"), (5, "status")]);
        live(&mut s, &mut p, "> y", 2);
        assert_rows(&p, &[(4, "status"), (5, "")]);
    }

    #[test]
    fn finish_clears_the_live_area_and_shows_the_cursor() {
        let (mut p, mut s) = inline(6, 20, b"", Position::new(0, 0));
        s.insert_lines(&text_lines(0..1)).unwrap();
        live(&mut s, &mut p, "> a", 2);
        s.finish().unwrap();
        p.process(&s.take_output());
        assert_rows(&p, &[(0, "line 0"), (1, "")]);
        assert_eq!(p.screen().cursor_position(), (1, 0));
        assert!(!p.screen().hide_cursor());
    }

    /// Every row the terminal holds, scrollback first, trimmed.
    fn history(p: &mut vt100::Parser) -> Vec<String> {
        let (rows, cols) = p.screen().size();
        let screen = p.screen_mut();
        screen.set_scrollback(usize::MAX);
        let mut back = screen.scrollback();
        let mut all = Vec::new();
        while back > 0 {
            screen.set_scrollback(back);
            let take = back.min(usize::from(rows.get()));
            all.extend(screen.rows(0, cols.get()).take(take));
            back -= take;
        }
        screen.set_scrollback(0);
        all.extend(screen.rows(0, cols.get()));
        all.into_iter().map(|r| r.trim_end().to_string()).collect()
    }

    #[test]
    fn after_a_resize_the_history_is_printed_again_once_from_a_cleared_terminal() {
        let (mut p, mut s) = inline(10, 30, b"$ old shell output", Position::new(18, 0));
        let all = text_lines(0..25);
        s.insert_lines(&all[..20]).unwrap();
        live(&mut s, &mut p, "> a", 2);
        // The terminal shrinks, then grows, while lines are written for the old size:
        // whatever it did with them, the history is printed again after the resize.
        p.screen_mut()
            .set_size(6.try_into().unwrap(), 20.try_into().unwrap());
        s.insert_lines(&all[20..]).unwrap();
        p.process(&s.take_output());
        p.screen_mut()
            .set_size(12.try_into().unwrap(), 24.try_into().unwrap());
        s.resize(24, 12).unwrap();
        assert!(s.wants_history());
        s.reprint(&wrap_lines(&all, 24)).unwrap();
        assert!(!s.wants_history());
        live(&mut s, &mut p, "> b", 2);
        let mut want: Vec<String> = (0..25).map(|i| format!("line {i}")).collect();
        want.extend(["> b".to_string(), "status".to_string()]);
        let mut got = history(&mut p);
        while got.last().is_some_and(String::is_empty) {
            got.pop();
        }
        assert_eq!(
            got, want,
            "the shell's output is cleared, each line is there once"
        );
    }

    #[test]
    fn a_resize_in_full_screen_mode_redraws_every_cell() {
        let mut p = parser(6, 20);
        let mut s = Screen::new(Placement::Full, 20, 6, Position::new(0, 0));
        live(&mut s, &mut p, "> a", 6);
        p.screen_mut()
            .set_size(8.try_into().unwrap(), 20.try_into().unwrap());
        s.resize(20, 8).unwrap();
        assert!(
            !s.wants_history(),
            "the caller draws its history in the frame"
        );
        live(&mut s, &mut p, "> a", 8);
        assert_rows(&p, &[(0, "> a"), (7, "status")]);
    }

    #[test]
    fn long_lines_are_wrapped_when_inserted() {
        let (mut p, mut s) = inline(6, 10, b"", Position::new(0, 0));
        s.insert_lines(&[Line::from("one two three four")]).unwrap();
        live(&mut s, &mut p, ">", 1);
        assert_rows(&p, &[(0, "one two"), (1, "three four")]);
    }
}
