//! A Markdown table drawn with box rules for the TUI: the layout (column widths, cells
//! wrapped, never cut) is [`crate::text_table`]'s; this draws it as styled lines, the
//! header row set off by a rule, each column aligned as the table's delimiter row says.
//!
//! It knows nothing of Markdown parsing or the screen: cells in, lines out.

use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};

use crate::text_table::{Align, Piece, layout, line_width, padding};

/// The rows of a table being read, cell by cell.
#[derive(Debug, Default)]
pub struct TableBuild {
    /// Each column's alignment.
    pub aligns: Vec<Align>,
    /// The rows so far (the header first).
    pub rows: Vec<Vec<Vec<Piece<Style>>>>,
    /// Rows of the header.
    pub head_rows: usize,
    /// True while inside a cell.
    pub in_cell: bool,
}

impl TableBuild {
    /// A new row (`head`: part of the header).
    pub fn start_row(&mut self, head: bool) {
        self.rows.push(Vec::new());
        if head {
            self.head_rows = self.rows.len();
        }
    }

    /// A new cell in the current row.
    pub fn start_cell(&mut self) {
        if self.rows.is_empty() {
            self.rows.push(Vec::new());
        }
        if let Some(row) = self.rows.last_mut() {
            row.push(Vec::new());
        }
        self.in_cell = true;
    }

    /// Text in the current cell.
    pub fn push(&mut self, text: &str, style: Style) {
        if let Some(cell) = self.rows.last_mut().and_then(|r| r.last_mut()) {
            cell.push(Piece {
                text: text.replace('\n', " "),
                style,
            });
        }
    }

    /// Draws the table in `width` columns, each line after `prefix`.
    pub fn lines(&self, width: usize, prefix: &[Span<'static>]) -> Vec<Line<'static>> {
        let laid = layout(&self.rows, width);
        let rule = Style::new().fg(Color::DarkGray);
        let border = |left: &str, mid: &str, right: &str| {
            let mut text = String::from(left);
            for (i, w) in laid.widths.iter().enumerate() {
                if i > 0 {
                    text.push_str(mid);
                }
                text.push_str(&"─".repeat(w + 2));
            }
            text.push_str(right);
            let mut spans = prefix.to_vec();
            spans.push(Span::styled(text, rule));
            Line::from(spans)
        };
        let mut out = vec![border("┌", "┬", "┐")];
        for (r, row) in laid.rows.iter().enumerate() {
            if r > 0 && r == self.head_rows {
                out.push(border("├", "┼", "┤"));
            }
            let height = row.iter().map(Vec::len).max().unwrap_or(1);
            for i in 0..height {
                let mut spans = prefix.to_vec();
                spans.push(Span::styled("│", rule));
                for (c, cell) in row.iter().enumerate() {
                    let empty = Vec::new();
                    let line = cell.get(i).unwrap_or(&empty);
                    let align = self.aligns.get(c).copied().unwrap_or_default();
                    let (before, after) = padding(align, line_width(line), laid.widths[c]);
                    spans.push(Span::raw(" ".repeat(before + 1)));
                    spans.extend(line.iter().map(|p| Span::styled(p.text.clone(), p.style)));
                    spans.push(Span::raw(" ".repeat(after + 1)));
                    spans.push(Span::styled("│", rule));
                }
                out.push(Line::from(spans));
            }
        }
        out.push(border("└", "┴", "┘"));
        out
    }
}

/// A pulldown-cmark column alignment as the layout's.
pub fn align(a: pulldown_cmark::Alignment) -> Align {
    match a {
        pulldown_cmark::Alignment::Center => Align::Center,
        pulldown_cmark::Alignment::Right => Align::Right,
        pulldown_cmark::Alignment::None | pulldown_cmark::Alignment::Left => Align::Left,
    }
}
