//! Ctrl+R: a reverse search over the input history (the file the TUI and the REPL
//! share). It takes the composer's place: the query on the first row, the newest entry
//! containing it below (the query lit), and how many entries match. Typing narrows,
//! Backspace widens, Ctrl+R (or Up) goes to an older match and Ctrl+S (or Down) to a
//! newer one; Enter (or Tab, or an arrow sideways) takes the match into the draft to
//! edit or send; Esc leaves the draft as it was. Matching is on substrings, ignoring
//! case unless the query has a capital; an entry repeated in the history counts once.
//!
//! It knows the history's entries and keys; it knows nothing about the agent.

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

use super::wrap::visible;

/// Rows of the matched entry shown at most.
const ENTRY_ROWS: usize = 4;
/// What the first row starts with.
const LABEL: &str = "search history: ";

/// What a key did to the search.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SearchAction {
    /// Still searching.
    Stay,
    /// Put this entry in the draft (`None`: nothing matched; leave the draft alone).
    Take(Option<String>),
    /// Closed; the draft stays as it was.
    Close,
}

/// An open search.
#[derive(Debug, Clone)]
pub struct HistorySearch {
    query: String,
    /// The matching entries, newest first, each text once.
    matches: Vec<String>,
    /// Which of them is shown.
    at: usize,
}

impl HistorySearch {
    /// A search over `entries` (oldest first), showing the newest until a query is typed.
    pub fn new(entries: &[String]) -> HistorySearch {
        let mut search = HistorySearch {
            query: String::new(),
            matches: Vec::new(),
            at: 0,
        };
        search.find(entries);
        search
    }

    fn find(&mut self, entries: &[String]) {
        let sensitive = self.query.chars().any(char::is_uppercase);
        let needle = if sensitive {
            self.query.clone()
        } else {
            self.query.to_lowercase()
        };
        let mut seen = std::collections::HashSet::new();
        self.matches = entries
            .iter()
            .rev()
            .filter(|e| {
                if sensitive {
                    e.contains(&needle)
                } else {
                    e.to_lowercase().contains(&needle)
                }
            })
            .filter(|e| seen.insert(e.as_str()))
            .cloned()
            .collect();
        self.at = 0;
    }

    /// The entry shown.
    fn current(&self) -> Option<&str> {
        self.matches.get(self.at).map(String::as_str)
    }

    /// Applies a key; `entries` is the history, oldest first.
    pub fn handle_key(&mut self, key: KeyEvent, entries: &[String]) -> SearchAction {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        match key.code {
            KeyCode::Char('r') if ctrl => self.older(),
            KeyCode::Char('s') if ctrl => self.newer(),
            KeyCode::Char('g') if ctrl => return SearchAction::Close,
            KeyCode::Char(c) if !ctrl && !alt => {
                self.query.push(c);
                self.find(entries);
            }
            KeyCode::Backspace if self.query.pop().is_some() => self.find(entries),
            KeyCode::Up => self.older(),
            KeyCode::Down => self.newer(),
            KeyCode::Enter
            | KeyCode::Tab
            | KeyCode::Left
            | KeyCode::Right
            | KeyCode::Home
            | KeyCode::End => return SearchAction::Take(self.current().map(str::to_string)),
            KeyCode::Esc => return SearchAction::Close,
            _ => {}
        }
        SearchAction::Stay
    }

    fn older(&mut self) {
        if self.at + 1 < self.matches.len() {
            self.at += 1;
        }
    }

    fn newer(&mut self) {
        self.at = self.at.saturating_sub(1);
    }

    /// Rows wanted: the query row and the entry's (at most [`ENTRY_ROWS`]).
    pub fn height(&self, width: u16) -> u16 {
        let rows = self
            .current()
            .map_or(0, |e| entry_rows(e, width).len().min(ENTRY_ROWS));
        1 + rows as u16
    }

    /// Draws the search; returns where the cursor goes (after the query).
    pub fn render(&self, area: Rect, buf: &mut Buffer) -> Option<Position> {
        if area.height == 0 {
            return None;
        }
        let width = usize::from(area.width);
        let label = Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD);
        let dim = Style::new().fg(Color::DarkGray);
        let query = printable(&self.query);
        buf.set_stringn(area.x, area.y, LABEL, width, label);
        let query_x = area.x + LABEL.width() as u16;
        buf.set_stringn(
            query_x,
            area.y,
            &query,
            width.saturating_sub(LABEL.width()),
            Style::new(),
        );
        let count_x = LABEL.width() + query.width() + 2;
        let count = match (self.matches.len(), self.query.is_empty()) {
            (0, true) => "the history is empty".to_string(),
            (0, false) => "no match".to_string(),
            (n, _) => {
                let count = format!("{} of {n}", self.at + 1);
                let keys = format!("{count} · ctrl+r older · enter takes · esc cancels");
                if count_x + keys.width() <= width {
                    keys
                } else {
                    count
                }
            }
        };
        if count_x + count.width() <= width {
            buf.set_string(area.x + count_x as u16, area.y, &count, dim);
        }
        if let Some(entry) = self.current() {
            let lit = Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD);
            let rows = entry_rows(entry, area.width);
            let marks = self.marks(entry);
            for (i, (start, row)) in rows.iter().take(usize::from(area.height) - 1).enumerate() {
                let y = area.y + 1 + i as u16;
                let mut x = area.x + 2;
                for (j, c) in row.char_indices() {
                    let style = if marks.iter().any(|r| r.contains(&(start + j))) {
                        lit
                    } else {
                        Style::new()
                    };
                    let mut tmp = [0u8; 4];
                    buf.set_string(x, y, c.encode_utf8(&mut tmp), style);
                    x += c.width().unwrap_or(0) as u16;
                }
            }
        }
        let cursor_x = (query_x + query.width() as u16).min(area.right().saturating_sub(1));
        Some(Position::new(cursor_x, area.y))
    }

    /// Byte ranges of the query in `entry` (as matched: with or without case).
    fn marks(&self, entry: &str) -> Vec<std::ops::Range<usize>> {
        if self.query.is_empty() {
            return Vec::new();
        }
        let sensitive = self.query.chars().any(char::is_uppercase);
        if sensitive {
            return entry
                .match_indices(&self.query)
                .map(|(i, m)| i..i + m.len())
                .collect();
        }
        // Lower-casing can change lengths, so compare character by character.
        let needle: Vec<char> = self.query.to_lowercase().chars().collect();
        let chars: Vec<(usize, char)> = entry.char_indices().collect();
        let mut out = Vec::new();
        let mut i = 0;
        while i + needle.len() <= chars.len() {
            let hit = needle.iter().enumerate().all(|(k, n)| {
                let mut lower = chars[i + k].1.to_lowercase();
                lower.next() == Some(*n) && lower.next().is_none()
            });
            if hit {
                let end = chars.get(i + needle.len()).map_or(entry.len(), |(b, _)| *b);
                out.push(chars[i].0..end);
                i += needle.len();
            } else {
                i += 1;
            }
        }
        out
    }
}

/// `text` as one row shows it ([`visible`]).
fn printable(text: &str) -> String {
    text.chars().map(visible).collect()
}

/// The entry cut into rows of at most `width - 2` columns, each with the byte offset
/// it starts at in the entry; lines break at newlines. A tab becomes a space and any
/// other control character one `?` per byte, so every byte offset in a row is still
/// the entry's.
fn entry_rows(entry: &str, width: u16) -> Vec<(usize, String)> {
    let room = usize::from(width.saturating_sub(2)).max(1);
    let mut rows = Vec::new();
    let mut offset = 0;
    for line in entry.split('\n') {
        let mut row = String::new();
        let mut row_start = offset;
        let mut row_width = 0;
        for (i, c) in line.char_indices() {
            let shown = visible(c);
            let w = if shown == c {
                c.width().unwrap_or(0)
            } else {
                c.len_utf8()
            };
            if row_width + w > room {
                rows.push((row_start, std::mem::take(&mut row)));
                row_start = offset + i;
                row_width = 0;
            }
            // A replaced character keeps its byte length (one byte shown as itself,
            // the rest as `?`), so offsets in the row stay the entry's.
            row.push(shown);
            if shown != c {
                for _ in 1..c.len_utf8() {
                    row.push('?');
                }
            }
            row_width += w;
        }
        rows.push((row_start, row));
        offset += line.len() + 1;
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::test_support::drawn;
    use insta::assert_snapshot;

    fn history() -> Vec<String> {
        [
            "cargo test --lib",
            "fix the parser",
            "Cargo bench e2e",
            "fix the parser",
            "explain\nthe fix in main.rs",
        ]
        .map(String::from)
        .to_vec()
    }

    fn typed(search: &mut HistorySearch, text: &str, entries: &[String]) {
        for c in text.chars() {
            search.handle_key(KeyEvent::from(KeyCode::Char(c)), entries);
        }
    }

    fn ctrl(c: char) -> KeyEvent {
        KeyEvent::new(KeyCode::Char(c), KeyModifiers::CONTROL)
    }

    fn draw(search: &HistorySearch, width: u16) -> String {
        drawn(width, search.height(width), |f| {
            search.render(f.area(), f.buffer_mut());
        })
    }

    #[test]
    fn newest_match_first_and_ctrl_r_goes_older_once_per_text() {
        let h = history();
        let mut s = HistorySearch::new(&h);
        assert_eq!(s.current(), Some("explain\nthe fix in main.rs"));
        typed(&mut s, "fix", &h);
        assert_eq!(s.current(), Some("explain\nthe fix in main.rs"));
        assert_snapshot!(draw(&s, 60));
        s.handle_key(ctrl('r'), &h);
        assert_eq!(s.current(), Some("fix the parser"));
        // The repeated entry counts once: there is nothing older.
        s.handle_key(ctrl('r'), &h);
        assert_eq!(s.current(), Some("fix the parser"));
        s.handle_key(ctrl('s'), &h);
        assert_eq!(s.current(), Some("explain\nthe fix in main.rs"));
        s.handle_key(ctrl('r'), &h);
        assert_eq!(
            s.handle_key(KeyEvent::from(KeyCode::Enter), &h),
            SearchAction::Take(Some("fix the parser".into()))
        );
    }

    #[test]
    fn smart_case_backspace_no_match_and_esc() {
        let h = history();
        let mut s = HistorySearch::new(&h);
        typed(&mut s, "cargo", &h);
        assert_eq!(s.matches, ["Cargo bench e2e", "cargo test --lib"]);
        s.handle_key(KeyEvent::from(KeyCode::Backspace), &h);
        typed(&mut s, "O", &h);
        assert_eq!(s.matches, Vec::<String>::new());
        assert_snapshot!(draw(&s, 60));
        assert_eq!(
            s.handle_key(KeyEvent::from(KeyCode::Tab), &h),
            SearchAction::Take(None)
        );
        assert_eq!(
            s.handle_key(KeyEvent::from(KeyCode::Esc), &h),
            SearchAction::Close
        );
        let empty = HistorySearch::new(&[]);
        assert_snapshot!(draw(&empty, 60));
    }

    #[test]
    fn hostile_entries_render_without_escapes_and_marks_follow_case_folding() {
        let h = vec!["run \u{1b}[2J\u{9b}31m İstanbul STRASSE\tend".to_string()];
        let mut s = HistorySearch::new(&h);
        typed(&mut s, "strasse", &h);
        assert_eq!(s.matches.len(), 1);
        let marks = s.marks(&h[0]);
        assert_eq!(marks.len(), 1);
        assert_eq!(&h[0][marks[0].clone()], "STRASSE");
        let screen = draw(&s, 40);
        assert!(
            !screen.contains('\u{1b}') && !screen.contains('\u{9b}'),
            "{screen}"
        );
        assert!(screen.contains("STRASSE"), "{screen}");
    }
}
