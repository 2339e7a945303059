//! The conversation cells: what one user message, answer, reasoning, tool call or notice
//! looks like, as width-independent styled lines (the screen wraps them).
//!
//! Cells are pure data plus a `lines` method; they know nothing about the screen, the
//! agent or input handling. Running cells (a tool still going) are drawn in the live
//! area; finished ones are committed once and never drawn again.

use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

use super::wrap::sanitize;
use crate::protocol::{ToolStatus, TurnOutcome};
use crate::tools::TypedTool;
use crate::tools::skill_run::SkillRun;

/// Lines of tool output shown under a finished call.
const RESULT_LINES: usize = 5;
/// Lines of live output shown under a running call.
const LIVE_LINES: usize = 5;
/// Lines of a diff shown before it is cut.
const DIFF_LINES: usize = 60;
/// Lines of reasoning kept visible once it is collapsed.
const REASONING_LINES: usize = 2;

/// Spinner frames, one per tick.
pub const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// How loud a notice is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoticeKind {
    /// Neutral information (conversation cleared, model switched).
    Info,
    /// Something to know; work goes on.
    Warning,
    /// Something failed.
    Error,
}

/// Where a tool call stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ToolState {
    /// Still running.
    Running,
    /// Finished.
    Done(ToolStatus),
}

/// One tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCell {
    /// The model's id for the call.
    pub call_id: String,
    /// Tool name.
    pub name: String,
    /// The main argument in a few words.
    pub summary: String,
    /// Running or finished.
    pub state: ToolState,
    /// Live output (kept to the last few lines) while running; the result after.
    pub output: Vec<String>,
    /// The unified diff of an edit.
    pub diff: Option<String>,
    /// Lines of `output` shown once finished.
    shown: usize,
    /// The whole result, when the summary left lines out (for the transcript view).
    pub full: Option<String>,
}

impl ToolCell {
    /// A call that just started.
    pub fn running(call_id: &str, name: &str, summary: &str) -> Self {
        ToolCell {
            call_id: call_id.to_string(),
            name: name.to_string(),
            summary: summary.to_string(),
            state: ToolState::Running,
            output: Vec::new(),
            diff: None,
            shown: RESULT_LINES,
            full: None,
        }
    }

    /// Appends live output, keeping only the last lines that can be shown.
    pub fn push_output(&mut self, text: &str) {
        for line in sanitize(text).lines() {
            self.output.push(line.to_string());
        }
        let excess = self.output.len().saturating_sub(LIVE_LINES);
        self.output.drain(..excess);
    }

    /// Marks the call finished with its result summary and diff.
    pub fn finish(&mut self, status: ToolStatus, summary: &str, diff: Option<String>) {
        self.state = ToolState::Done(status);
        let result: Vec<String> = sanitize(summary).lines().map(str::to_string).collect();
        self.output = match status {
            // What an interrupted command printed stays on screen, then whatever the
            // result adds.
            ToolStatus::Interrupted if !self.output.is_empty() => {
                let mut kept = std::mem::take(&mut self.output);
                kept.extend(result.into_iter().filter(|l| !l.trim().is_empty()));
                kept
            }
            _ => result,
        };
        // skill_run's JSON report, made readable: every line of it is shown.
        if self.name == <SkillRun as TypedTool>::NAME
            && let Some(body) = super::skill_run_cell::readable(summary)
        {
            self.shown = body.len();
            self.output = body
                .iter()
                .map(|l| sanitize(l).replace('\n', " "))
                .collect();
        }
        self.diff = diff;
    }

    /// The lines of this finished call with its whole output and diff, as Ctrl+T's
    /// transcript view shows them.
    pub fn full_lines(&self) -> Vec<Line<'static>> {
        let mut expanded = self.clone();
        expanded.shown = usize::MAX;
        if let Some(full) = &self.full {
            expanded.output = sanitize(full).lines().map(str::to_string).collect();
            if let Some(diff) = &self.diff {
                // The diff is drawn below; its text in the result is not repeated.
                let text = sanitize(full).replacen(diff.as_str(), "", 1);
                expanded.output = text.trim_end().lines().map(str::to_string).collect();
            }
        }
        let mut lines = HistoryCell::Tool(expanded.clone()).lines();
        if let Some(diff) = &self.diff {
            // The whole diff, not the first lines of it.
            let cut = diff_lines(diff, DIFF_LINES).len();
            lines.truncate(lines.len().saturating_sub(cut));
            lines.extend(diff_lines(diff, usize::MAX));
        }
        lines
    }

    /// The lines of this call; `spinner` is the frame shown while it runs.
    pub fn lines(&self, spinner: &str) -> Vec<Line<'static>> {
        let (icon, icon_style, note) = match self.state {
            ToolState::Running => (spinner, Style::new().fg(Color::Yellow), ""),
            ToolState::Done(ToolStatus::Ok) => ("✓", Style::new().fg(Color::Green), ""),
            ToolState::Done(ToolStatus::Error) => ("✗", Style::new().fg(Color::Red), ""),
            ToolState::Done(ToolStatus::Denied) => ("⊘", Style::new().fg(Color::Yellow), " denied"),
            ToolState::Done(ToolStatus::Interrupted) => {
                ("■", Style::new().fg(Color::Yellow), " interrupted")
            }
        };
        let mut header = vec![
            Span::styled(format!("{icon} "), icon_style),
            Span::styled(self.name.clone(), Style::new().add_modifier(Modifier::BOLD)),
        ];
        if !self.summary.is_empty() {
            header.push(Span::raw(" "));
            header.push(Span::raw(sanitize(&self.summary).replace('\n', " ")));
        }
        if !note.is_empty() {
            header.push(Span::styled(note, icon_style));
        }
        let mut lines = vec![Line::from(header)];

        let limit = match self.state {
            ToolState::Running => LIVE_LINES,
            ToolState::Done(_) => self.shown,
        };
        let body_style = match self.state {
            ToolState::Done(ToolStatus::Error) => Style::new().fg(Color::Red),
            _ => Style::new().fg(Color::DarkGray),
        };
        let shown = self.output.len().min(limit);
        for (i, text) in self.output.iter().take(shown).enumerate() {
            let lead = if i == 0 { "  └ " } else { "    " };
            lines.push(Line::from(vec![
                Span::styled(lead, Style::new().fg(Color::DarkGray)),
                Span::styled(text.clone(), body_style),
            ]));
        }
        if self.output.len() > shown {
            lines.push(more_line(self.output.len() - shown));
        }
        if let Some(diff) = &self.diff {
            lines.extend(diff_lines(diff, DIFF_LINES));
        }
        lines
    }
}

fn more_line(hidden: usize) -> Line<'static> {
    let s = if hidden == 1 { "" } else { "s" };
    Line::styled(
        format!("    … {hidden} more line{s}"),
        Style::new().fg(Color::DarkGray),
    )
}

/// A unified diff coloured line by line, cut after `limit` lines.
pub fn diff_lines(diff: &str, limit: usize) -> Vec<Line<'static>> {
    let diff = sanitize(diff);
    let all: Vec<&str> = diff.lines().collect();
    let mut lines: Vec<Line<'static>> = all
        .iter()
        .take(limit)
        .map(|l| {
            let style = if l.starts_with("+++") || l.starts_with("---") {
                Style::new().add_modifier(Modifier::BOLD)
            } else if l.starts_with('+') {
                Style::new().fg(Color::Green)
            } else if l.starts_with('-') {
                Style::new().fg(Color::Red)
            } else if l.starts_with("@@") {
                Style::new().fg(Color::Cyan)
            } else {
                Style::new()
            };
            // A `+`/`-` gutter of its own span, so wrapped rows repeat it (wrap.rs).
            match l.split_at_checked(1) {
                Some((sign @ ("+" | "-"), rest))
                    if !rest.is_empty() && !l.starts_with("+++") && !l.starts_with("---") =>
                {
                    Line::from(vec![
                        Span::raw("    "),
                        Span::styled(sign.to_string(), style),
                        Span::styled(rest.to_string(), style),
                    ])
                }
                _ => Line::from(vec![Span::raw("    "), Span::styled(l.to_string(), style)]),
            }
        })
        .collect();
    if all.len() > limit {
        lines.push(more_line(all.len() - limit));
    }
    lines
}

/// A finished piece of the conversation.
#[derive(Debug, Clone, PartialEq)]
pub enum HistoryCell {
    /// What the user typed.
    User {
        /// The text as typed (for skills, the `/name args` line).
        text: String,
    },
    /// The model's reasoning, shown collapsed.
    Reasoning {
        /// The full reasoning text.
        text: String,
    },
    /// A finished tool call.
    Tool(ToolCell),
    /// A warning, an error or a piece of information.
    Notice {
        /// How loud it is.
        kind: NoticeKind,
        /// The message, with what to do about it.
        message: String,
    },
}

impl HistoryCell {
    /// The cell's lines, without the blank separator line.
    pub fn lines(&self) -> Vec<Line<'static>> {
        match self {
            HistoryCell::User { text } => user_lines(text),
            HistoryCell::Reasoning { text } => reasoning_lines(text),
            HistoryCell::Tool(tool) => tool.lines(SPINNER[0]),
            HistoryCell::Notice { kind, message } => notice_lines(*kind, message),
        }
    }

    /// The lines Ctrl+T's transcript shows: a thought whole, anything else as [`lines`].
    ///
    /// [`lines`]: HistoryCell::lines
    pub fn full_lines(&self) -> Vec<Line<'static>> {
        match self {
            HistoryCell::Reasoning { text } => reasoning_full_lines(text),
            other => other.lines(),
        }
    }
}

/// The notice a turn's end leaves in the conversation (none when it completed).
pub fn outcome_notice(outcome: TurnOutcome) -> Option<HistoryCell> {
    let (kind, message) = match outcome {
        TurnOutcome::Completed => return None,
        TurnOutcome::Interrupted => (
            NoticeKind::Warning,
            "Interrupted. Tell the model what to do differently.".to_string(),
        ),
        TurnOutcome::MaxTurnsReached { limit } => (
            NoticeKind::Warning,
            format!("Stopped after {limit} model requests (--max-turns); send a message to go on."),
        ),
        TurnOutcome::Truncated { reason } => (
            NoticeKind::Warning,
            format!("Warning: {}.", reason.describe()),
        ),
        TurnOutcome::Failed { message, .. } => (NoticeKind::Error, message),
        TurnOutcome::LimitReached { limit } => (NoticeKind::Error, limit.describe()),
    };
    Some(HistoryCell::Notice { kind, message })
}

/// How a forked skill's sub-agent ended, in words (`sub-agent `x` {this}`).
pub fn sub_agent_end(outcome: TurnOutcome) -> String {
    match outcome {
        TurnOutcome::Completed => "finished".to_string(),
        TurnOutcome::Interrupted => "was interrupted".to_string(),
        TurnOutcome::MaxTurnsReached { limit } => format!("stopped after {limit} requests"),
        TurnOutcome::Truncated { reason } => format!("stopped early: {}", reason.describe()),
        TurnOutcome::Failed { message, .. } => format!("failed: {message}"),
        TurnOutcome::LimitReached { limit } => limit.describe(),
    }
}

/// A user message: a marker, then the text as typed.
pub fn user_lines(text: &str) -> Vec<Line<'static>> {
    let marker = Style::new().fg(Color::Cyan).add_modifier(Modifier::BOLD);
    sanitize(text)
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let lead = if i == 0 { "› " } else { "  " };
            Line::from(vec![Span::styled(lead, marker), Span::raw(l.to_string())])
        })
        .collect()
}

/// Reasoning, collapsed to a header and its first lines, dimmed.
pub fn reasoning_lines(text: &str) -> Vec<Line<'static>> {
    let dim = Style::new()
        .fg(Color::DarkGray)
        .add_modifier(Modifier::ITALIC);
    let text = sanitize(text);
    let words = text.split_whitespace().count();
    let body: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
    let mut lines = vec![Line::styled(format!("∴ Thought ({words} words)"), dim)];
    for l in body.iter().take(REASONING_LINES) {
        lines.push(Line::styled(format!("  {}", l.trim()), dim));
    }
    if body.len() > REASONING_LINES {
        let hidden = body.len() - REASONING_LINES;
        let s = if hidden == 1 { "" } else { "s" };
        lines.push(Line::styled(
            format!("    … {hidden} more line{s} · ctrl+t to expand"),
            Style::new().fg(Color::DarkGray),
        ));
    }
    lines
}

/// Reasoning whole, dimmed, for Ctrl+T's transcript: the same header, then every line.
pub fn reasoning_full_lines(text: &str) -> Vec<Line<'static>> {
    let dim = Style::new()
        .fg(Color::DarkGray)
        .add_modifier(Modifier::ITALIC);
    let text = sanitize(text);
    let words = text.split_whitespace().count();
    let body = text.trim_matches('\n').lines().map(|l| {
        let l = l.trim_end();
        if l.is_empty() {
            Line::default()
        } else {
            Line::styled(format!("  {l}"), dim)
        }
    });
    std::iter::once(Line::styled(format!("∴ Thought ({words} words)"), dim))
        .chain(body)
        .collect()
}

/// A notice: an icon and the message.
pub fn notice_lines(kind: NoticeKind, message: &str) -> Vec<Line<'static>> {
    let (icon, style) = match kind {
        NoticeKind::Info => ("·", Style::new().fg(Color::DarkGray)),
        NoticeKind::Warning => ("⚠", Style::new().fg(Color::Yellow)),
        NoticeKind::Error => ("✗", Style::new().fg(Color::Red)),
    };
    sanitize(message)
        .lines()
        .enumerate()
        .map(|(i, l)| {
            let lead = if i == 0 {
                format!("{icon} ")
            } else {
                "  ".to_string()
            };
            Line::from(vec![
                Span::styled(lead, style),
                Span::styled(l.to_string(), style),
            ])
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tui::markdown::{Streaming, render_markdown};
    use crate::tui::test_support::drawn;
    use crate::tui::test_support::texts;
    use insta::assert_snapshot;
    use ratatui::widgets::{Paragraph, Wrap};

    /// Draws lines on a TestBackend of the given size and returns the screen as text.
    pub(crate) fn screen(lines: Vec<Line<'static>>, width: u16, height: u16) -> String {
        drawn(width, height, |f| {
            f.render_widget(Paragraph::new(lines).wrap(Wrap { trim: false }), f.area())
        })
    }

    #[test]
    fn user_cell() {
        let cell = HistoryCell::User {
            text: "fix the failing test\nin crate foo".into(),
        };
        assert_snapshot!(screen(cell.lines(), 40, 3));
    }

    #[test]
    fn assistant_cell_with_code() {
        let markdown: &str = "## Plan\n\nI will **edit** `main.go`:\n\n- rename `x`\n- add a [test](https://go.dev)\n\n```go\nfunc main() {\n\tfmt.Println(\"hi\") // greet\n}\n```\n";
        // Answers are committed as rendered Markdown lines while they stream.
        let lines = render_markdown(markdown, Streaming::Complete);
        let code = lines
            .iter()
            .find(|l| l.to_string().starts_with("func"))
            .unwrap();
        assert_eq!(
            code.spans[0].style.fg,
            Some(Color::Magenta),
            "keyword coloured"
        );
        assert_snapshot!(screen(lines, 50, 12));
    }

    #[test]
    fn reasoning_cell_is_collapsed() {
        let cell = HistoryCell::Reasoning {
            text: "First I look at the tests.\nThen the code.\nThen I decide.\nFinally act.".into(),
        };
        assert_snapshot!(screen(cell.lines(), 40, 5));
        let full: Vec<String> = cell.full_lines().iter().map(|l| l.to_string()).collect();
        assert_eq!(
            full,
            [
                "∴ Thought (14 words)",
                "  First I look at the tests.",
                "  Then the code.",
                "  Then I decide.",
                "  Finally act."
            ]
        );
    }

    #[test]
    fn tool_cell_running_ok_and_error() {
        let mut tool = ToolCell::running("c1", "bash", "cargo test");
        tool.push_output("line 1\nline 2\n");
        let running = screen(tool.lines(SPINNER[3]), 40, 4);
        assert_snapshot!("tool_running", running);

        let mut ok = tool.clone();
        ok.finish(ToolStatus::Ok, "test result: ok. 3 passed", None);
        assert_snapshot!("tool_ok", screen(HistoryCell::Tool(ok).lines(), 40, 3));

        let mut err = tool.clone();
        err.finish(
            ToolStatus::Error,
            "exit status 101\nerror[E0308]: mismatched types",
            None,
        );
        assert_snapshot!("tool_error", screen(HistoryCell::Tool(err).lines(), 40, 4));
    }

    #[test]
    fn tool_cell_with_diff() {
        let mut tool = ToolCell::running("c2", "edit_file", "main.go");
        tool.finish(
            ToolStatus::Ok,
            "edited main.go",
            Some("--- a/main.go\n+++ b/main.go\n@@ -1,3 +1,3 @@\n package main\n-var x = 1\n+var count = 1\n".into()),
        );
        let lines = HistoryCell::Tool(tool).lines();
        let added = lines
            .iter()
            .find(|l| l.to_string().contains("+var count"))
            .unwrap();
        assert_eq!(added.spans[1].style.fg, Some(Color::Green));
        let removed = lines
            .iter()
            .find(|l| l.to_string().contains("-var x"))
            .unwrap();
        assert_eq!(removed.spans[1].style.fg, Some(Color::Red));
        assert_snapshot!(screen(lines, 40, 9));
    }

    #[test]
    fn a_wrapped_diff_line_keeps_its_gutter_and_colour_on_every_row() {
        let long = "let message = format!(\"a very long line of code {} that goes past eighty columns and then some more\", name);";
        let diff = format!("--- a/x.rs\n+++ b/x.rs\n@@ -1 +1 @@\n-{long}\n+{long}\n");
        for width in [80u16, 60, 40] {
            let rows = crate::tui::wrap::wrap_lines(&diff_lines(&diff, usize::MAX), width);
            for (sign, colour) in [('+', Color::Green), ('-', Color::Red)] {
                let mine: Vec<&Line<'static>> = rows
                    .iter()
                    .filter(|r| r.to_string().starts_with(&format!("    {sign}")))
                    .filter(|r| {
                        !r.to_string()
                            .starts_with(&format!("    {sign}{sign}{sign}"))
                    })
                    .collect();
                assert!(mine.len() >= 2, "{width}: {:?}", texts(&rows));
                for row in &mine {
                    assert!(row.width() <= usize::from(width), "{}", row);
                    assert!(row.spans[1].content.starts_with(sign), "{row}");
                    assert_eq!(row.spans[1].style.fg, Some(colour), "{row}");
                }
                let text: String = mine
                    .iter()
                    .map(|r| r.to_string()[5..].to_string())
                    .collect::<Vec<_>>()
                    .join(" ");
                let words: Vec<&str> = text.split_whitespace().collect();
                assert_eq!(
                    words,
                    long.split_whitespace().collect::<Vec<_>>(),
                    "{width}"
                );
            }
        }
    }

    #[test]
    fn a_skill_run_cell_reads_its_report_instead_of_showing_json() {
        let report = serde_json::json!({
            "exit_code": 0, "timed_out": false, "duration_ms": 820,
            "stdout": "rendering\nwrote out/report.pdf\n", "stderr": "",
            "files": [{"path": "out/report.pdf", "mime": "application/pdf", "size": 9}],
            "artifact_files": [{"name": "report.pdf", "version": 1}],
        });
        let mut tool = ToolCell::running("c3", "skill_run", "pdf: make report");
        tool.finish(ToolStatus::Ok, &report.to_string(), None);
        let shown = texts(&HistoryCell::Tool(tool).lines());
        assert_eq!(
            shown,
            vec![
                "✓ skill_run pdf: make report",
                "  └ exit 0 · 0.8 s",
                "    artifacts: report.pdf v1",
                "    files: out/report.pdf",
                "    rendering",
                "    wrote out/report.pdf",
            ]
        );
        assert!(!shown.iter().any(|l| l.contains('{')), "{shown:?}");
    }

    #[test]
    fn an_interrupted_call_keeps_what_it_printed() {
        let mut tool = ToolCell::running("c1", "bash", "make");
        tool.push_output("compiling a\ncompiling b\n");
        tool.finish(ToolStatus::Interrupted, "", None);
        let text: Vec<String> = tool.lines("").iter().map(|l| l.to_string()).collect();
        assert!(text.iter().any(|l| l.contains("compiling a")), "{text:?}");
        assert!(text.iter().any(|l| l.contains("compiling b")), "{text:?}");
        assert!(text[0].contains("interrupted"), "{text:?}");
    }

    #[test]
    fn long_tool_output_is_cut() {
        let mut tool = ToolCell::running("c3", "grep", "TODO");
        tool.finish(ToolStatus::Ok, "1\n2\n3\n4\n5\n6\n7\n8", None);
        let text = texts(&tool.lines(""));
        assert_eq!(text.last().map(String::as_str), Some("    … 3 more lines"));
    }

    #[test]
    fn warning_and_error_notices() {
        let warn = HistoryCell::Notice {
            kind: NoticeKind::Warning,
            message: "skill `x` skipped: missing description\nadd `description:` to its SKILL.md"
                .into(),
        };
        let err = HistoryCell::Notice {
            kind: NoticeKind::Error,
            message: "auth: the API key was refused; set OPENAI_API_KEY".into(),
        };
        let mut lines = warn.lines();
        lines.extend(err.lines());
        assert_snapshot!(screen(lines, 60, 3));
    }
}
