//! What the TUI shows when a saved session is resumed: its history as the cells the
//! user saw while it was live (their prompts as user cells, the model's answers as
//! Markdown, each tool call as one dim `↳ name args` line), then a notice naming the
//! session that goes on, and each note about what changed since it was saved.
//!
//! It only turns a [`ResumedSession`] into lines of cells; the app commits them, and
//! the picker (`super::picker`) is where a session is chosen.

use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};

use super::cells::{HistoryCell, NoticeKind};
use super::markdown::{Streaming, render_markdown};
use super::wrap::sanitize;
use crate::protocol::{HistoryItem, ResumedSession};
use crate::sessions::reader::one_line;

/// Shown instead of a picker when the project has no saved session.
pub const NO_SESSIONS: &str = "No other saved sessions for this project.";

/// Widest tool call line, in characters, before it is shortened.
const TOOL_LINE_CHARS: usize = 200;

/// The cells of a resumed session, oldest first, each as its lines: the history
/// (consecutive tool calls share one cell), then the notices.
pub fn resumed_cells(resumed: &ResumedSession) -> Vec<ResumedCell> {
    let mut cells: Vec<ResumedCell> = Vec::new();
    let mut tools: Vec<Line<'static>> = Vec::new();
    for item in &resumed.history {
        if let HistoryItem::ToolCall { name, arguments } = item {
            tools.push(tool_line(name, arguments));
            continue;
        }
        if !tools.is_empty() {
            cells.push(ResumedCell::same(std::mem::take(&mut tools)));
        }
        match item {
            HistoryItem::User { text } => {
                cells.push(ResumedCell::same(
                    HistoryCell::User { text: text.clone() }.lines(),
                ));
            }
            HistoryItem::Reasoning { text } if !text.trim().is_empty() => {
                let thought = HistoryCell::Reasoning { text: text.clone() };
                cells.push(ResumedCell {
                    shown: thought.lines(),
                    full: thought.full_lines(),
                });
            }
            HistoryItem::Assistant { text } if !text.trim().is_empty() => {
                cells.push(ResumedCell::same(render_markdown(
                    text,
                    Streaming::Complete,
                )));
            }
            HistoryItem::Assistant { .. }
            | HistoryItem::Reasoning { .. }
            | HistoryItem::ToolCall { .. } => {}
        }
    }
    if !tools.is_empty() {
        cells.push(ResumedCell::same(tools));
    }
    let turns = if resumed.turns == 1 { "turn" } else { "turns" };
    let notice =
        |kind, message: String| ResumedCell::same(HistoryCell::Notice { kind, message }.lines());
    cells.push(notice(
        NoticeKind::Info,
        format!(
            "Resumed session {} ({} {turns}, model {}).",
            resumed.id, resumed.turns, resumed.model
        ),
    ));
    for note in &resumed.notes {
        cells.push(notice(NoticeKind::Warning, note.clone()));
    }
    cells
}

/// One cell of a resumed session: as the conversation shows it, and as Ctrl+T's
/// transcript does (a thought whole).
#[derive(Debug, Clone, PartialEq)]
pub struct ResumedCell {
    /// The lines in the conversation.
    pub shown: Vec<Line<'static>>,
    /// The lines in the transcript view.
    pub full: Vec<Line<'static>>,
}

impl ResumedCell {
    fn same(lines: Vec<Line<'static>>) -> ResumedCell {
        ResumedCell {
            shown: lines.clone(),
            full: lines,
        }
    }
}

/// One tool call, on one dim line.
fn tool_line(name: &str, arguments: &str) -> Line<'static> {
    let dim = Style::new().fg(Color::DarkGray);
    let call = one_line(&sanitize(&format!("{name} {arguments}")), TOOL_LINE_CHARS);
    Line::from(vec![Span::styled("↳ ", dim), Span::styled(call, dim)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::test_support::texts;

    #[test]
    fn history_becomes_cells_then_notices() {
        let resumed = ResumedSession {
            id: "20261123-173501-a3f9c2".into(),
            model: "gpt-4o".into(),
            turns: 1,
            loaded_skills: Vec::new(),
            history: vec![
                HistoryItem::User {
                    text: "fix the test".into(),
                },
                HistoryItem::ToolCall {
                    name: "bash".into(),
                    arguments: "{\"command\":\n\"cargo test\"}".into(),
                },
                HistoryItem::ToolCall {
                    name: "read_file".into(),
                    arguments: "{\"path\":\"a.rs\"}".into(),
                },
                HistoryItem::Assistant {
                    text: "Fixed **it**.".into(),
                },
                HistoryItem::Assistant { text: "  ".into() },
            ],
            notes: vec!["skill `x` is no longer installed".into()],
        };
        let cells: Vec<Vec<String>> = resumed_cells(&resumed)
            .iter()
            .map(|c| texts(&c.shown))
            .collect();
        assert_eq!(
            cells,
            vec![
                vec!["› fix the test".to_string()],
                vec![
                    "↳ bash {\"command\": \"cargo test\"}".to_string(),
                    "↳ read_file {\"path\":\"a.rs\"}".to_string()
                ],
                vec!["Fixed it.".to_string()],
                vec![
                    "· Resumed session 20261123-173501-a3f9c2 (1 turn, model gpt-4o).".to_string()
                ],
                vec!["⚠ skill `x` is no longer installed".to_string()],
            ]
        );
    }
}
