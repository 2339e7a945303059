//! The turn in progress: the answer being streamed, the reasoning, and the tool calls
//! still running. It decides what is final: whole rendered lines of the answer are
//! committed as soon as they are complete (so text never jumps), the rest stays live.
//!
//! It knows nothing about the screen or keys; the app asks it for lines.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::Line;

use super::cells::{HistoryCell, ToolCell};
use super::markdown::{DEFAULT_WIDTH, Streaming, render};
use crate::protocol::ToolStatus;

/// Live reasoning lines shown while the model thinks.
const LIVE_REASONING_LINES: usize = 3;

/// The streaming state of one turn.
#[derive(Debug, Default)]
pub struct LiveTurn {
    /// Markdown source of the answer being streamed.
    text: String,
    /// Rendered lines of `text` already committed.
    committed: usize,
    /// True once any line of this answer was committed (the next chunk needs no
    /// separator).
    answer_open: bool,
    /// Lines of `text` not yet committed, rendered (cache for drawing).
    pending: Vec<Line<'static>>,
    /// Reasoning text of the current request.
    reasoning: String,
    /// Tool calls still running, in start order.
    tools: Vec<ToolCell>,
    /// The width tables are laid out for (0: not known yet).
    width: u16,
}

/// Lines ready to commit, and whether they start a new cell (need a separator).
#[derive(Debug, Default, PartialEq)]
pub struct Chunk {
    /// True for the first lines of a cell.
    pub starts_cell: bool,
    /// The lines.
    pub lines: Vec<Line<'static>>,
}

impl LiveTurn {
    /// The terminal's width, for tables rendered from now on.
    pub fn set_width(&mut self, width: u16) {
        self.width = width;
    }

    fn width(&self) -> u16 {
        if self.width == 0 {
            DEFAULT_WIDTH
        } else {
            self.width
        }
    }

    /// Adds answer text; returns the lines that became complete.
    pub fn push_text(&mut self, delta: &str) -> Chunk {
        self.text.push_str(delta);
        let chunk = if delta.contains('\n') {
            let end = self.text.rfind('\n').map_or(0, |i| i + 1);
            let rendered = render(&self.text[..end], Streaming::Partial, self.width());
            self.take_from(rendered.lines, rendered.settled)
        } else {
            Chunk::default()
        };
        self.refresh_pending();
        chunk
    }

    /// Commits `lines[committed..settled]`.
    fn take_from(&mut self, mut lines: Vec<Line<'static>>, settled: usize) -> Chunk {
        lines.truncate(settled);
        if lines.len() <= self.committed {
            return Chunk::default();
        }
        let new: Vec<Line<'static>> = lines.into_iter().skip(self.committed).collect();
        self.committed += new.len();
        let starts_cell = !self.answer_open;
        self.answer_open = true;
        Chunk {
            starts_cell,
            lines: new,
        }
    }

    fn refresh_pending(&mut self) {
        let lines = render(&self.text, Streaming::Partial, self.width()).lines;
        self.pending = lines.into_iter().skip(self.committed).collect();
    }

    /// Ends the answer: returns its remaining lines and starts a fresh one.
    pub fn finish_text(&mut self) -> Chunk {
        let chunk = if self.text.trim().is_empty() {
            Chunk::default()
        } else {
            let lines = render(&self.text, Streaming::Complete, self.width()).lines;
            let settled = lines.len();
            self.take_from(lines, settled)
        };
        self.text.clear();
        self.committed = 0;
        self.answer_open = false;
        self.pending.clear();
        chunk
    }

    /// Drops the uncommitted part of the answer (the request is retried).
    /// Returns whether some of it was already committed (printed for good).
    pub fn discard_text(&mut self) -> bool {
        let printed = self.committed > 0;
        self.text.clear();
        self.committed = 0;
        self.answer_open = false;
        self.pending.clear();
        printed
    }

    /// True while an answer is being streamed.
    #[cfg(test)]
    pub fn has_text(&self) -> bool {
        !self.text.is_empty()
    }

    /// Adds reasoning text.
    pub fn push_reasoning(&mut self, delta: &str) {
        self.reasoning.push_str(delta);
    }

    /// Ends the reasoning: the collapsed cell to commit, if there was any.
    pub fn finish_reasoning(&mut self) -> Option<HistoryCell> {
        if self.reasoning.trim().is_empty() {
            self.reasoning.clear();
            return None;
        }
        Some(HistoryCell::Reasoning {
            text: std::mem::take(&mut self.reasoning),
        })
    }

    /// A tool call started.
    pub fn begin_tool(&mut self, tool: ToolCell) {
        self.tools.push(tool);
    }

    /// Whether the call `call_id` is running (its cell is live).
    pub fn is_running(&self, call_id: &str) -> bool {
        self.tools.iter().any(|t| t.call_id == call_id)
    }

    /// Live output for a running call.
    pub fn tool_output(&mut self, call_id: &str, text: &str) {
        if let Some(tool) = self.tools.iter_mut().find(|t| t.call_id == call_id) {
            tool.push_output(text);
        }
    }

    /// The whole result of a running call (before its end).
    pub fn tool_result(&mut self, call_id: &str, content: String) {
        if let Some(tool) = self.tools.iter_mut().find(|t| t.call_id == call_id) {
            tool.full = Some(content);
        }
    }

    /// A call ended: the running cell (or a new one when it never began), finished.
    pub fn end_tool(
        &mut self,
        call_id: &str,
        name: &str,
        status: ToolStatus,
        summary: &str,
        diff: Option<String>,
    ) -> ToolCell {
        let mut tool = match self.tools.iter().position(|t| t.call_id == call_id) {
            Some(i) => self.tools.remove(i),
            None => ToolCell::running(call_id, name, ""),
        };
        tool.finish(status, summary, diff);
        tool
    }

    /// The name of the most recent running tool.
    pub fn running_tool(&self) -> Option<&str> {
        self.tools.last().map(|t| t.name.as_str())
    }

    /// Ends every running call as interrupted (the turn ended under them).
    pub fn abandon_tools(&mut self) -> Vec<ToolCell> {
        let mut tools = std::mem::take(&mut self.tools);
        for tool in &mut tools {
            let output = std::mem::take(&mut tool.output).join("\n");
            tool.finish(ToolStatus::Interrupted, &output, None);
        }
        tools
    }

    /// Lines of the live area, given the spinner frame: reasoning being streamed, the
    /// uncommitted tail of the answer, running tools.
    pub fn live_lines(&self, spinner: &str) -> Vec<Line<'static>> {
        let mut lines = Vec::new();
        if !self.reasoning.trim().is_empty() && self.text.is_empty() {
            let dim = Style::new()
                .fg(Color::DarkGray)
                .add_modifier(Modifier::ITALIC);
            lines.push(Line::styled("∴ Thinking…", dim));
            let body: Vec<&str> = self
                .reasoning
                .lines()
                .filter(|l| !l.trim().is_empty())
                .collect();
            let skip = body.len().saturating_sub(LIVE_REASONING_LINES);
            for l in &body[skip..] {
                lines.push(Line::styled(format!("  {}", l.trim()), dim));
            }
        }
        lines.extend(self.pending.iter().cloned());
        for tool in &self.tools {
            lines.extend(tool.lines(spinner));
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::test_support::texts;

    #[test]
    fn whole_lines_are_committed_as_they_complete() {
        let mut t = LiveTurn::default();
        let c = t.push_text("Hello wor");
        assert!(c.lines.is_empty());
        assert_eq!(texts(&t.live_lines("")), vec!["Hello wor"]);
        let c = t.push_text("ld\nsecond");
        assert!(c.starts_cell);
        assert_eq!(texts(&c.lines), vec!["Hello world"]);
        assert_eq!(texts(&t.live_lines("")), vec!["second"]);
        let c = t.push_text(" line\n\n```rust\nfn x() {}\n");
        assert!(!c.starts_cell);
        assert_eq!(
            texts(&c.lines),
            vec!["second line", "", "```rust", "fn x() {}"]
        );
        let c = t.finish_text();
        assert_eq!(texts(&c.lines), vec!["```"]);
        assert!(!t.has_text());
    }

    #[test]
    fn a_streamed_table_is_committed_whole_once_it_ends() {
        let mut t = LiveTurn::default();
        t.set_width(40);
        let c = t.push_text("Sizes:\n\n| file | lines |\n");
        assert_eq!(texts(&c.lines), vec!["Sizes:", ""]);
        let c = t.push_text("|---|--:|\n| main.rs | 12 |\n");
        assert!(c.lines.is_empty(), "{:?}", texts(&c.lines));
        // Shown live meanwhile, as a table.
        assert!(
            texts(&t.live_lines(""))
                .iter()
                .any(|l| l.contains("│ main.rs │"))
        );
        let c = t.push_text("| lib.rs | 1200 |\n\nDone.\n");
        assert_eq!(
            texts(&c.lines),
            vec![
                "┌─────────┬───────┐",
                "│ file    │ lines │",
                "├─────────┼───────┤",
                "│ main.rs │    12 │",
                "│ lib.rs  │  1200 │",
                "└─────────┴───────┘",
                "",
                "Done.",
            ]
        );
    }

    #[test]
    fn tools_run_and_end() {
        let mut t = LiveTurn::default();
        t.begin_tool(ToolCell::running("a", "bash", "ls"));
        t.tool_output("a", "file1\n");
        assert_eq!(t.running_tool(), Some("bash"));
        let live = texts(&t.live_lines("*"));
        assert_eq!(live, vec!["* bash ls", "  └ file1"]);
        let done = t.end_tool("a", "bash", ToolStatus::Ok, "file1", None);
        assert_eq!(done.output, vec!["file1"]);
        assert_eq!(t.running_tool(), None);
        let orphan = t.end_tool("b", "grep", ToolStatus::Denied, "denied", None);
        assert_eq!(orphan.name, "grep");
    }

    #[test]
    fn reasoning_is_live_then_collapsed() {
        let mut t = LiveTurn::default();
        t.push_reasoning("step one\nstep two\n");
        assert_eq!(texts(&t.live_lines(""))[0], "∴ Thinking…");
        let cell = t.finish_reasoning().unwrap();
        assert!(matches!(cell, HistoryCell::Reasoning { .. }));
        assert!(t.finish_reasoning().is_none());
    }
}
