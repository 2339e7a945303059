//! The rewind picker: Esc twice on an empty composer (no turn running, nothing asked)
//! shows this conversation's earlier messages in place of the composer, newest first.
//! Up/Down move, Enter chooses, Esc closes. When rewinding to the chosen message would
//! put files back, it asks first (naming them): `y` rewinds, `n` or Esc goes back to
//! the list, other keys do nothing.
//!
//! It knows nothing about the agent: keys become a [`RewindAction`] that the app turns
//! into an `Op::Rewind`.

use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;
use unicode_width::UnicodeWidthStr;

use super::picker::fit;
use super::wrap::sanitize;
use crate::protocol::RewindPoint;

/// Message rows shown at most; more scroll.
const MAX_ROWS: usize = 8;
/// Files named in the question at most.
const NAMED_FILES: usize = 5;

/// What a key did to the picker.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RewindAction {
    /// It stays open.
    Stay,
    /// Closed: nothing rewound.
    Close,
    /// Rewind to just before this turn.
    Rewind(u64),
}

/// The messages, the selection, and whether the question about files is up.
#[derive(Debug, Clone)]
pub struct RewindPicker {
    /// Newest first.
    points: Vec<RewindPoint>,
    selected: usize,
    top: usize,
    confirming: bool,
}

impl RewindPicker {
    /// A picker over `points` (oldest first, as the agent lists them); `None` for none.
    pub fn new(mut points: Vec<RewindPoint>) -> Option<RewindPicker> {
        if points.is_empty() {
            return None;
        }
        points.reverse();
        Some(RewindPicker {
            points,
            selected: 0,
            top: 0,
            confirming: false,
        })
    }

    /// Whether it asks about the files now.
    #[cfg(test)]
    pub fn is_confirming(&self) -> bool {
        self.confirming
    }

    /// Applies a key.
    pub fn handle_key(&mut self, key: KeyEvent) -> RewindAction {
        let point = &self.points[self.selected];
        if self.confirming {
            match key.code {
                KeyCode::Char('y' | 'Y') => return RewindAction::Rewind(point.turn),
                KeyCode::Char('n' | 'N') | KeyCode::Esc => self.confirming = false,
                _ => {}
            }
            return RewindAction::Stay;
        }
        match key.code {
            KeyCode::Up => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down => self.selected = (self.selected + 1).min(self.points.len() - 1),
            KeyCode::Enter if point.files.is_empty() => return RewindAction::Rewind(point.turn),
            KeyCode::Enter => self.confirming = true,
            KeyCode::Esc => return RewindAction::Close,
            _ => {}
        }
        RewindAction::Stay
    }

    /// Rows wanted: a title, the messages (or the question) and a line of keys.
    pub fn height(&self) -> u16 {
        let body = if self.confirming {
            2
        } else {
            self.points.len().min(MAX_ROWS)
        };
        u16::try_from(body + 2).unwrap_or(u16::MAX)
    }

    /// Draws it into `area`.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer) {
        let height = usize::from(area.height);
        if height == 0 || area.width == 0 {
            return;
        }
        let width = usize::from(area.width);
        let dim = Style::new().fg(Color::DarkGray);
        let mut lines: Vec<Line<'static>> = Vec::new();
        let name = "Rewind to an earlier message";
        lines.push(Line::from(vec![
            Span::styled("── ", dim),
            Span::styled(
                name,
                Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD),
            ),
            Span::styled(" ", dim),
            Span::styled("─".repeat(width.saturating_sub(4 + name.width())), dim),
        ]));
        let rows = height.saturating_sub(2).max(1);
        if self.confirming {
            let files = &self.points[self.selected].files;
            let mut named: Vec<String> = files
                .iter()
                .take(NAMED_FILES)
                .map(|f| sanitize(f))
                .collect();
            if files.len() > NAMED_FILES {
                named.push(format!("and {} more", files.len() - NAMED_FILES));
            }
            let question = format!(
                "Rewinding puts back {} file(s) changed since that message: {}",
                files.len(),
                named.join(", ")
            );
            lines.push(Line::styled(
                fit(&question, width),
                Style::new().fg(Color::Yellow),
            ));
            lines.push(Line::from("Rewind the conversation and these files? y/n"));
            lines.push(Line::styled("y rewinds · n or esc goes back", dim));
        } else {
            if self.selected < self.top {
                self.top = self.selected;
            } else if self.selected >= self.top + rows {
                self.top = self.selected + 1 - rows;
            }
            for (i, point) in self.points.iter().enumerate().skip(self.top).take(rows) {
                lines.push(row(point, i == self.selected, width));
            }
            lines.push(Line::styled(
                "↑↓ choose · enter puts it back in the composer and rewinds · esc closes",
                dim,
            ));
        }
        for (y, line) in lines.into_iter().take(height).enumerate() {
            let y = area.y + u16::try_from(y).unwrap_or(u16::MAX);
            line.render(Rect::new(area.x, y, area.width, 1), buf);
        }
    }
}

/// One message's row: marker, its first words, and how many files rewinding puts back.
fn row(point: &RewindPoint, selected: bool, width: usize) -> Line<'static> {
    let style = if selected {
        Style::new()
            .fg(Color::Cyan)
            .add_modifier(Modifier::REVERSED)
    } else {
        Style::new()
    };
    let marker = if selected { "› " } else { "  " };
    let files = match point.files.len() {
        0 => String::new(),
        1 => "  · 1 file".to_string(),
        n => format!("  · {n} files"),
    };
    let text = sanitize(&point.text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    let room = width.saturating_sub(marker.width() + files.width());
    Line::from(vec![
        Span::styled(marker, style.add_modifier(Modifier::BOLD)),
        Span::styled(fit(&text, room), style),
        Span::styled(files, Style::new().fg(Color::DarkGray)),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;

    fn point(turn: u64, text: &str, files: &[&str]) -> RewindPoint {
        RewindPoint {
            turn,
            text: text.into(),
            files: files.iter().map(|f| f.to_string()).collect(),
        }
    }

    #[test]
    fn newest_first_enter_rewinds_and_files_ask_first_taking_only_y_or_n() {
        assert!(RewindPicker::new(Vec::new()).is_none());
        let mut p = RewindPicker::new(vec![point(1, "first", &["a.txt"]), point(2, "second", &[])])
            .unwrap();
        let key = |c| KeyEvent::from(c);
        // The newest has no files: Enter rewinds at once.
        assert_eq!(p.handle_key(key(KeyCode::Enter)), RewindAction::Rewind(2));
        assert_eq!(p.handle_key(key(KeyCode::Down)), RewindAction::Stay);
        assert_eq!(p.handle_key(key(KeyCode::Enter)), RewindAction::Stay);
        assert!(p.is_confirming());
        for other in ['x', 'q', '/'] {
            assert_eq!(p.handle_key(key(KeyCode::Char(other))), RewindAction::Stay);
            assert!(p.is_confirming(), "{other} is no answer");
        }
        assert_eq!(p.handle_key(key(KeyCode::Char('n'))), RewindAction::Stay);
        assert!(!p.is_confirming());
        p.handle_key(key(KeyCode::Enter));
        assert_eq!(
            p.handle_key(key(KeyCode::Char('y'))),
            RewindAction::Rewind(1)
        );
        assert_eq!(p.handle_key(key(KeyCode::Esc)), RewindAction::Stay);
        assert_eq!(p.handle_key(key(KeyCode::Esc)), RewindAction::Close);
    }
}
