//! The composer: the multi-line input box. It owns the draft text and cursor, the
//! editing keys, and the history of sent inputs (Up/Down recall, saved under
//! `$HARNESS9_HOME/history`). It renders itself into a given area and reports where
//! the terminal cursor goes.
//!
//! It knows nothing about what a submitted line means (the input router decides) or
//! about the agent.

use std::io::Write;
use std::path::{Path, PathBuf};

use crossterm::event::{KeyCode, KeyEvent, KeyModifiers};
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Modifier, Style};
use unicode_segmentation::UnicodeSegmentation;
use unicode_width::UnicodeWidthStr;

use super::pastes::Pastes;

/// A move up or down (the cursor between lines, or through the history).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Vertical {
    Up,
    Down,
}

/// Most rows the composer takes on screen; longer drafts scroll.
pub const MAX_ROWS: u16 = 10;
/// Entries kept in the history file.
const HISTORY_LIMIT: usize = 1000;
/// Columns taken by the prompt marker.
const PROMPT_WIDTH: u16 = 2;

/// What a key did to the composer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ComposerAction {
    /// The key was not for the composer.
    Ignored,
    /// The draft or cursor changed.
    Edited,
    /// Enter: the draft is ready to send.
    Submit,
}

/// Sent inputs, oldest first, optionally mirrored to a file. The file uses the line
/// REPL's format (rustyline's `#V2`: one entry per line, `\\` and `\n` escaped), so
/// both frontends share one history.
#[derive(Debug, Default)]
pub struct History {
    entries: Vec<String>,
    file: Option<PathBuf>,
}

/// The first line of a history file in the shared format.
const HISTORY_HEADER: &str = "#V2";

fn escape_entry(entry: &str) -> String {
    entry.replace('\\', "\\\\").replace('\n', "\\n")
}

fn unescape_entry(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some('n') => out.push('\n'),
                Some(other) => out.push(other),
                None => out.push('\\'),
            }
        } else {
            out.push(c);
        }
    }
    out
}

impl History {
    /// Loads the history file (a missing or unreadable file gives an empty history).
    pub fn load(file: &Path) -> History {
        let entries = std::fs::read_to_string(file)
            .map(|text| {
                let mut lines = text.lines().peekable();
                let v2 = lines.peek() == Some(&HISTORY_HEADER);
                if v2 {
                    lines.next();
                }
                lines
                    .filter(|l| !l.is_empty())
                    .map(|l| if v2 { unescape_entry(l) } else { l.to_string() })
                    .collect()
            })
            .unwrap_or_default();
        History {
            entries,
            file: Some(file.to_path_buf()),
        }
    }

    /// Records an input; failures to write the file are ignored (history is a comfort).
    pub fn push(&mut self, entry: &str) {
        if entry.trim().is_empty() || self.entries.last().is_some_and(|l| l == entry) {
            return;
        }
        self.entries.push(entry.to_string());
        let excess = self.entries.len().saturating_sub(HISTORY_LIMIT);
        self.entries.drain(..excess);
        if let Some(file) = &self.file {
            let fresh = !std::fs::metadata(file).is_ok_and(|m| m.len() > 0);
            // What the user typed may hold anything: 0600, like the REPL's history.
            if let Ok(mut f) = crate::private_files::open_private_log(file) {
                if fresh {
                    let _ = writeln!(f, "{HISTORY_HEADER}");
                }
                let _ = writeln!(f, "{}", escape_entry(entry));
            }
        }
    }

    /// The entries, oldest first.
    pub fn entries(&self) -> &[String] {
        &self.entries
    }

    fn get(&self, i: usize) -> Option<&str> {
        self.entries.get(i).map(String::as_str)
    }

    fn len(&self) -> usize {
        self.entries.len()
    }
}

/// The draft being typed.
#[derive(Debug, Default)]
pub struct Composer {
    text: String,
    /// Byte offset of the cursor in `text` (always on a grapheme boundary).
    cursor: usize,
    history: History,
    /// While browsing history: the entry shown, and the draft it replaced.
    browsing: Option<(usize, String)>,
    /// Large pastes standing in the draft as placeholders.
    pastes: Pastes,
}

/// A draft taken for sending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Taken {
    /// As it stood in the composer (large pastes as placeholders): what the
    /// conversation shows.
    pub shown: String,
    /// With every paste in full: what is sent.
    pub full: String,
    /// The images whose chips stand in it, in the order they stand.
    pub images: Vec<crate::protocol::ImageInput>,
}

impl Composer {
    /// An empty composer with this history.
    pub fn new(history: History) -> Self {
        Composer {
            history,
            ..Composer::default()
        }
    }

    /// The inputs sent before.
    pub fn history(&self) -> &History {
        &self.history
    }

    /// The draft.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// True when the draft is empty.
    pub fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Replaces the draft and puts the cursor at its end.
    pub fn set_text(&mut self, text: &str) {
        self.text = text.to_string();
        self.cursor = self.text.len();
        self.browsing = None;
        self.pastes.clear();
    }

    /// The draft with every collapsed paste in full (for the editor).
    pub fn full_text(&self) -> String {
        self.pastes.expand(&self.text)
    }

    /// Ctrl+O: puts every collapsed paste's full text in place of its placeholder.
    pub fn expand_pastes(&mut self) -> bool {
        if self.pastes.is_empty() {
            return false;
        }
        let before = self.pastes.expand(&self.text[..self.cursor]).len();
        self.text = self.pastes.expand(&self.text);
        self.cursor = before;
        self.pastes.forget_texts();
        true
    }

    /// Inserts a paste: a large one as a placeholder (see [`Pastes`]), else as typed.
    pub fn paste(&mut self, text: &str) {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        match self.pastes.collapse(&text, &self.text) {
            Some(label) => self.insert(&label),
            None => self.insert(&text),
        }
    }

    /// Removes `range` from the draft (grown to whole placeholders) and puts the cursor
    /// where it was.
    fn remove(&mut self, range: std::ops::Range<usize>) {
        let range = self.pastes.widen(&self.text, range);
        self.text.replace_range(range.clone(), "");
        self.cursor = range.start;
        self.pastes.prune(&self.text);
    }

    /// Moves the cursor out of a placeholder it landed in: to its start when moving
    /// left, else to its end.
    fn snap(&mut self, leftwards: bool) {
        if let Some(span) = self.pastes.inside(&self.text, self.cursor) {
            self.cursor = if leftwards { span.start } else { span.end };
        }
    }

    /// Empties the draft.
    pub fn clear(&mut self) {
        self.set_text("");
    }

    /// Takes the draft for sending and records it (in full) in the history.
    pub fn take(&mut self) -> Taken {
        let shown = std::mem::take(&mut self.text);
        let full = self.pastes.expand(&shown);
        let images = self.pastes.images(&shown);
        self.cursor = 0;
        self.browsing = None;
        self.pastes.clear();
        self.history.push(&full);
        Taken {
            shown,
            full,
            images,
        }
    }

    /// Puts an `[image #N]` chip for `image` at the cursor (see [`Pastes`]).
    pub fn attach_image(&mut self, image: crate::protocol::ImageInput) {
        let label = self.pastes.add_image(image, &self.text);
        self.insert(&label);
    }

    /// Where the cursor is (a byte offset into the draft).
    pub fn cursor(&self) -> usize {
        self.cursor
    }

    /// Replaces `range` of the draft with `text` and puts the cursor after it.
    pub fn replace(&mut self, range: std::ops::Range<usize>, text: &str) {
        self.text.replace_range(range.clone(), text);
        self.cursor = range.start + text.len();
        self.browsing = None;
    }

    /// Inserts text at the cursor (typed or pasted; `\r\n` and `\r` become `\n`).
    pub fn insert(&mut self, text: &str) {
        let text = text.replace("\r\n", "\n").replace('\r', "\n");
        self.text.insert_str(self.cursor, &text);
        self.cursor += text.len();
    }

    fn prev_boundary(&self) -> usize {
        self.text[..self.cursor]
            .grapheme_indices(true)
            .next_back()
            .map_or(0, |(i, _)| i)
    }

    fn next_boundary(&self) -> usize {
        self.text[self.cursor..]
            .graphemes(true)
            .next()
            .map_or(self.cursor, |g| self.cursor + g.len())
    }

    fn line_start(&self) -> usize {
        self.text[..self.cursor].rfind('\n').map_or(0, |i| i + 1)
    }

    fn line_end(&self) -> usize {
        self.text[self.cursor..]
            .find('\n')
            .map_or(self.text.len(), |i| self.cursor + i)
    }

    fn word_start(&self) -> usize {
        let before = &self.text[..self.cursor];
        let trimmed = before.trim_end();
        trimmed.rfind(|c: char| c.is_whitespace()).map_or(0, |i| {
            i + trimmed[i..].chars().next().map_or(1, char::len_utf8)
        })
    }

    fn word_end(&self) -> usize {
        let after = &self.text[self.cursor..];
        let skip = after.len() - after.trim_start().len();
        let rest = &after[skip..];
        self.cursor + skip + rest.find(char::is_whitespace).unwrap_or(rest.len())
    }

    /// Moves the cursor one line up or down; false when already on the first/last line.
    fn move_vertical(&mut self, way: Vertical) -> bool {
        let start = self.line_start();
        let column = self.text[start..self.cursor].width();
        let target_start = match way {
            Vertical::Down => match self.text[self.cursor..].find('\n') {
                Some(i) => self.cursor + i + 1,
                None => return false,
            },
            Vertical::Up if start == 0 => return false,
            Vertical::Up => self.text[..start - 1].rfind('\n').map_or(0, |i| i + 1),
        };
        let target_end = self.text[target_start..]
            .find('\n')
            .map_or(self.text.len(), |i| target_start + i);
        let mut pos = target_start;
        let mut width = 0;
        for (i, g) in self.text[target_start..target_end].grapheme_indices(true) {
            if width + g.width() > column {
                break;
            }
            width += g.width();
            pos = target_start + i + g.len();
        }
        self.cursor = pos;
        true
    }

    /// Steps through the history (Up: older entries); false when there is none.
    fn recall(&mut self, way: Vertical) -> bool {
        let len = self.history.len();
        let next = match (&self.browsing, way) {
            (None, Vertical::Up) if len > 0 => Some(len - 1),
            (None, _) => return false,
            (Some((i, _)), Vertical::Up) => Some(i.saturating_sub(1)),
            (Some((i, _)), Vertical::Down) if i + 1 < len => Some(i + 1),
            (Some(_), Vertical::Down) => None,
        };
        match next {
            Some(i) => {
                let draft = match self.browsing.take() {
                    Some((_, draft)) => draft,
                    None => self.text.clone(),
                };
                self.text = self.history.get(i).unwrap_or_default().to_string();
                self.cursor = self.text.len();
                self.browsing = Some((i, draft));
            }
            None => {
                if let Some((_, draft)) = self.browsing.take() {
                    self.text = draft;
                    self.cursor = self.text.len();
                }
            }
        }
        true
    }

    /// Applies a key.
    pub fn handle_key(&mut self, key: KeyEvent) -> ComposerAction {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let alt = key.modifiers.contains(KeyModifiers::ALT);
        let shift = key.modifiers.contains(KeyModifiers::SHIFT);
        match key.code {
            KeyCode::Enter if shift || alt => self.insert("\n"),
            KeyCode::Char('j') if ctrl => self.insert("\n"),
            KeyCode::Enter => return ComposerAction::Submit,
            KeyCode::Char(c) if ctrl => match c {
                'a' => self.cursor = self.line_start(),
                'e' => self.cursor = self.line_end(),
                'b' => self.cursor = self.prev_boundary(),
                'f' => self.cursor = self.next_boundary(),
                'u' => self.remove(self.line_start()..self.cursor),
                'k' => self.remove(self.cursor..self.line_end()),
                'w' => self.remove(self.word_start()..self.cursor),
                'o' => {
                    if !self.expand_pastes() {
                        return ComposerAction::Ignored;
                    }
                }
                'h' => return self.handle_key(KeyEvent::from(KeyCode::Backspace)),
                _ => return ComposerAction::Ignored,
            },
            KeyCode::Char(c) if alt => match c {
                'b' => self.cursor = self.word_start(),
                'f' => self.cursor = self.word_end(),
                _ => return ComposerAction::Ignored,
            },
            KeyCode::Char(c) => {
                let mut buf = [0u8; 4];
                self.insert(c.encode_utf8(&mut buf));
            }
            KeyCode::Backspace if alt || ctrl => self.remove(self.word_start()..self.cursor),
            KeyCode::Backspace => self.remove(self.prev_boundary()..self.cursor),
            KeyCode::Delete => self.remove(self.cursor..self.next_boundary()),
            KeyCode::Left if ctrl || alt => self.cursor = self.word_start(),
            KeyCode::Right if ctrl || alt => self.cursor = self.word_end(),
            KeyCode::Left => self.cursor = self.prev_boundary(),
            KeyCode::Right => self.cursor = self.next_boundary(),
            KeyCode::Home => self.cursor = self.line_start(),
            KeyCode::End => self.cursor = self.line_end(),
            KeyCode::Up => {
                if !self.move_vertical(Vertical::Up) && !self.recall(Vertical::Up) {
                    return ComposerAction::Ignored;
                }
            }
            KeyCode::Down => {
                if !self.move_vertical(Vertical::Down) && !self.recall(Vertical::Down) {
                    return ComposerAction::Ignored;
                }
            }
            _ => return ComposerAction::Ignored,
        }
        let leftwards = matches!(key.code, KeyCode::Left | KeyCode::Home | KeyCode::Up)
            || (ctrl && matches!(key.code, KeyCode::Char('a' | 'b')))
            || (alt && key.code == KeyCode::Char('b'));
        self.snap(leftwards);
        ComposerAction::Edited
    }

    /// Visual rows of the draft at `width` columns (prompt included), with the row and
    /// column of the cursor.
    fn layout(&self, width: u16) -> (Vec<String>, (usize, u16)) {
        let avail = usize::from(width.saturating_sub(PROMPT_WIDTH).max(1));
        let mut rows: Vec<String> = Vec::new();
        let mut cursor = (0usize, 0u16);
        let mut offset = 0usize;
        for line in self.text.split('\n') {
            let mut row = String::new();
            let mut row_width = 0usize;
            for (i, g) in line.grapheme_indices(true) {
                if offset + i == self.cursor {
                    cursor = (rows.len(), row_width as u16);
                }
                let w = g.width();
                if row_width + w > avail {
                    rows.push(std::mem::take(&mut row));
                    row_width = 0;
                    if offset + i == self.cursor {
                        cursor = (rows.len(), 0);
                    }
                }
                row.push_str(g);
                row_width += w;
            }
            if offset + line.len() == self.cursor {
                if row_width >= avail {
                    rows.push(std::mem::take(&mut row));
                    row_width = 0;
                }
                cursor = (rows.len(), row_width as u16);
            }
            rows.push(row);
            offset += line.len() + 1;
        }
        (rows, cursor)
    }

    /// Whether the draft is a shell command (`!cmd`): its first non-blank character is
    /// `!`, as the input router reads it.
    pub fn is_shell_command(&self) -> bool {
        self.text.trim_start().starts_with('!')
    }

    /// Rows the composer needs at this width (capped at [`MAX_ROWS`]).
    pub fn height(&self, width: u16) -> u16 {
        let (rows, _) = self.layout(width);
        (rows.len() as u16).clamp(1, MAX_ROWS)
    }

    /// Draws the draft (or `placeholder` when empty) and returns the cursor position.
    pub fn render(&self, area: Rect, buf: &mut Buffer, placeholder: &str) -> Option<Position> {
        if area.height == 0 || area.width <= PROMPT_WIDTH {
            return None;
        }
        // Shell mode (`!cmd`) shows a `$` prompt in its own colour.
        let (marker, prompt_style) = if self.is_shell_command() {
            (
                "$ ",
                Style::new().fg(Color::Yellow).add_modifier(Modifier::BOLD),
            )
        } else {
            (
                "› ",
                Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            )
        };
        let (rows, (cursor_row, cursor_col)) = self.layout(area.width);
        let visible = usize::from(area.height);
        let first = (cursor_row + 1).saturating_sub(visible);
        let labels: Vec<&str> = self
            .pastes
            .spans(&self.text)
            .into_iter()
            .map(|span| &self.text[span])
            .collect();
        let label_style = Style::new().fg(Color::Cyan);
        for (i, row) in rows.iter().skip(first).take(visible).enumerate() {
            let y = area.y + i as u16;
            let lead = if first + i == 0 { marker } else { "  " };
            buf.set_string(area.x, y, lead, prompt_style);
            let room = usize::from(area.width - PROMPT_WIDTH);
            buf.set_stringn(area.x + PROMPT_WIDTH, y, row, room, Style::new());
            // Placeholders of collapsed pastes stand out from typed text.
            for label in &labels {
                for (at, _) in row.match_indices(label) {
                    let x = area.x + PROMPT_WIDTH + row[..at].width() as u16;
                    buf.set_stringn(
                        x,
                        y,
                        label,
                        room.saturating_sub(row[..at].width()),
                        label_style,
                    );
                }
            }
        }
        if self.text.is_empty() && !placeholder.is_empty() {
            buf.set_stringn(
                area.x + PROMPT_WIDTH,
                area.y,
                placeholder,
                usize::from(area.width - PROMPT_WIDTH),
                Style::new().fg(Color::DarkGray),
            );
        }
        Some(Position::new(
            area.x + PROMPT_WIDTH + cursor_col,
            area.y + (cursor_row - first) as u16,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(code: KeyCode) -> KeyEvent {
        KeyEvent::from(code)
    }

    fn mods(code: KeyCode, m: KeyModifiers) -> KeyEvent {
        KeyEvent::new(code, m)
    }

    fn typed(text: &str) -> Composer {
        let mut c = Composer::default();
        c.insert(text);
        c
    }

    #[test]
    fn enter_submits_and_newline_keys_insert() {
        let mut c = typed("a");
        assert_eq!(
            c.handle_key(mods(KeyCode::Enter, KeyModifiers::SHIFT)),
            ComposerAction::Edited
        );
        c.handle_key(mods(KeyCode::Enter, KeyModifiers::ALT));
        c.handle_key(mods(KeyCode::Char('j'), KeyModifiers::CONTROL));
        assert_eq!(c.text(), "a\n\n\n");
        assert_eq!(c.handle_key(key(KeyCode::Enter)), ComposerAction::Submit);
    }

    #[test]
    fn paste_stays_one_draft_with_normalised_newlines() {
        let mut c = Composer::default();
        c.insert("line1\r\nline2\rline3");
        assert_eq!(c.text(), "line1\nline2\nline3");
    }

    #[test]
    fn a_large_paste_is_one_placeholder_that_moves_and_deletes_whole() {
        let body: String = (1..=300).map(|i| format!("row {i}\r\n")).collect();
        let full = body.replace("\r\n", "\n");
        let mut c = typed("see ");
        c.paste(&body);
        c.insert(" now");
        assert_eq!(c.text(), "see [pasted 300 lines] now");
        assert_eq!(c.full_text(), format!("see {full} now"));
        // Left from after it lands before it, never inside; Right jumps back over it.
        for _ in 0..5 {
            c.handle_key(key(KeyCode::Left));
        }
        assert_eq!(c.cursor(), 4);
        c.handle_key(key(KeyCode::Right));
        assert_eq!(c.cursor(), "see [pasted 300 lines]".len());
        // Ctrl+W cuts into it: the whole placeholder goes, and its text with it.
        c.handle_key(mods(KeyCode::Char('w'), KeyModifiers::CONTROL));
        assert_eq!(c.text(), "see  now");
        assert_eq!(c.full_text(), "see  now");
        // Backspace right after it takes it whole.
        c.paste(&body);
        c.handle_key(key(KeyCode::Backspace));
        assert_eq!(c.text(), "see  now");
        // Sent: shown with the placeholder, sent and remembered in full.
        c.paste(&body);
        let taken = c.take();
        assert_eq!(taken.shown, "see [pasted 300 lines] now");
        assert_eq!(taken.full, format!("see {full} now"));
        c.handle_key(key(KeyCode::Up));
        assert_eq!(c.text(), taken.full);
    }

    #[test]
    fn ctrl_o_expands_pastes_in_place() {
        let mut c = typed("a ");
        c.paste(&"x".repeat(2500));
        c.insert(" b");
        c.handle_key(key(KeyCode::Home));
        c.handle_key(key(KeyCode::Right));
        let action = c.handle_key(mods(KeyCode::Char('o'), KeyModifiers::CONTROL));
        assert_eq!(action, ComposerAction::Edited);
        assert_eq!(c.text(), format!("a {} b", "x".repeat(2500)));
        assert_eq!(c.cursor(), 1, "the cursor stays where it was in the text");
        let again = c.handle_key(mods(KeyCode::Char('o'), KeyModifiers::CONTROL));
        assert_eq!(again, ComposerAction::Ignored);
        // A small paste goes in as it is.
        let mut small = Composer::default();
        small.paste("one\ntwo");
        assert_eq!(small.text(), "one\ntwo");
    }

    #[test]
    fn editing_keys() {
        let mut c = typed("hello wide world");
        c.handle_key(mods(KeyCode::Char('w'), KeyModifiers::CONTROL));
        assert_eq!(c.text(), "hello wide ");
        c.handle_key(key(KeyCode::Backspace));
        c.handle_key(mods(KeyCode::Char('a'), KeyModifiers::CONTROL));
        c.handle_key(key(KeyCode::Delete));
        assert_eq!(c.text(), "ello wide");
        c.handle_key(mods(KeyCode::Char('k'), KeyModifiers::CONTROL));
        assert_eq!(c.text(), "");
    }

    #[test]
    fn up_down_move_between_lines_then_recall_history() {
        let mut c = Composer::new(History::default());
        c.insert("first");
        c.take();
        c.insert("second");
        c.take();
        c.insert("ab\ncd");
        assert_eq!(c.handle_key(key(KeyCode::Up)), ComposerAction::Edited);
        assert_eq!(c.cursor, 2, "moved to the end of line 1");
        c.handle_key(key(KeyCode::Up));
        assert_eq!(c.text(), "second");
        c.handle_key(key(KeyCode::Up));
        assert_eq!(c.text(), "first");
        c.handle_key(key(KeyCode::Down));
        c.handle_key(key(KeyCode::Down));
        assert_eq!(c.text(), "ab\ncd", "the draft comes back");
    }

    #[test]
    fn history_file_round_trips() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("history");
        let mut h = History::load(&file);
        h.push("one\ntwo");
        h.push("three");
        h.push("back\\slash");
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(
            text, "#V2\none\\ntwo\nthree\nback\\\\slash\n",
            "the REPL's format"
        );
        let h = History::load(&file);
        assert_eq!(h.entries, vec!["one\ntwo", "three", "back\\slash"]);
    }

    #[test]
    fn layout_wraps_and_places_cursor() {
        let c = typed("abcdef\nxy");
        let (rows, cursor) = c.layout(6); // 4 columns of text
        assert_eq!(rows, vec!["abcd", "ef", "xy"]);
        assert_eq!(cursor, (2, 2));
        assert_eq!(c.height(6), 3);
    }

    #[test]
    fn a_shell_command_gets_the_dollar_prompt() {
        let c = typed("!ls");
        let mut buf = Buffer::empty(Rect::new(0, 0, 20, 1));
        c.render(Rect::new(0, 0, 20, 1), &mut buf, "");
        assert_eq!(buf[(0, 0)].symbol(), "$");
        assert_eq!(buf[(2, 0)].symbol(), "!");
        let c = typed("hi!");
        c.render(Rect::new(0, 0, 20, 1), &mut buf, "");
        assert_eq!(buf[(0, 0)].symbol(), "›");
    }

    #[test]
    fn render_draws_prompt_and_cursor() {
        let c = typed("hi");
        let area = Rect::new(0, 0, 10, 1);
        let mut buf = Buffer::empty(area);
        let pos = c.render(area, &mut buf, "");
        assert_eq!(pos, Some(Position::new(4, 0)));
        assert_eq!(buf[(0, 0)].symbol(), "›");
        assert_eq!(buf[(2, 0)].symbol(), "h");
    }
}
