//! What the REPL prints: agent events through the shared headless renderer (the same
//! text activity lines and JSON schema as print mode), with the assistant's text
//! streamed through the Markdown renderer in the text format; and the output of the
//! built-in commands and approval questions.
//!
//! Built-in output goes to stdout in the text format and to stderr in the JSON formats,
//! so that stdout stays one JSON document per line. Nothing untrusted reaches the
//! terminal raw: notices, info lines and approval details are neutralized
//! ([`crate::safe_text`]) as they are written, the headless renderer does the same for
//! its lines, and the Markdown stream neutralizes the answer before it adds its own
//! styling. It must not know how the agent or the line editor work.

use std::io::{self, Write};
use std::sync::{Arc, Mutex};

use crate::print::{
    Activity, HeadlessRenderer, OutputFormat, TextDelivery, TurnReport, describe_request,
};
use crate::protocol::{
    ApprovalRequestKind, AskBecause, Event, HistoryItem, Location, McpAction, McpServerEntry,
    Offer, ResumedSession, SessionListing, SkillEntry, SkillListing, Usage,
};
use crate::sessions::reader::one_line;
use crate::sessions::record::display_utc;

use crate::safe_text::neutralize;

use super::markdown::{MarkdownStream, MarkdownStyle};

/// A writer that can be shared by the headless renderer and the REPL.
pub struct SharedWriter<W>(Arc<Mutex<W>>);

impl<W> SharedWriter<W> {
    /// Wraps `inner`.
    pub fn new(inner: W) -> Self {
        SharedWriter(Arc::new(Mutex::new(inner)))
    }

    /// Runs `f` on the inner writer.
    pub fn with<T>(&self, f: impl FnOnce(&mut W) -> T) -> io::Result<T> {
        let mut guard = self
            .0
            .lock()
            .map_err(|_| io::Error::other("output lock poisoned"))?;
        Ok(f(&mut guard))
    }
}

impl<W> Clone for SharedWriter<W> {
    fn clone(&self) -> Self {
        SharedWriter(Arc::clone(&self.0))
    }
}

impl<W: Write> Write for SharedWriter<W> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.with(|w| w.write(buf))?
    }

    fn flush(&mut self) -> io::Result<()> {
        self.with(|w| w.flush())?
    }
}

/// How the answer reaches stdout in the text format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerDelivery {
    /// As it streams (a terminal: the user watches it; a retry prints one marker).
    Live,
    /// Each request's text is held until the request ends, up to [`HOLD_CAP`] bytes, so
    /// that a retried request leaves only the final attempt's answer in a pipe or file.
    PerRequest,
}

/// How the answer's Markdown reaches stdout in the text format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerText {
    /// Rendered: styled on a terminal, markers removed elsewhere.
    Rendered,
    /// As the model wrote it (`--raw`), control characters made visible.
    Raw,
}

/// What stands between one turn's output and the next on stdout (text format).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TurnSeparation {
    /// Nothing: the prompt line the user typed stands between them (a terminal).
    None,
    /// One blank line before a turn when stdout got anything since the last one (a
    /// pipe, where answers would otherwise run together).
    BlankLine,
}

/// The most answer text held for one request before it is streamed anyway.
pub const HOLD_CAP: usize = 256 << 10;

/// The line that tells a reader the text above it was cut off and starts again.
pub const RETRY_MARKER: &str =
    "[the answer above was cut off by a failed request; it starts again below]";

/// Renders events and REPL messages.
pub struct ReplRenderer<O: Write, E: Write> {
    format: OutputFormat,
    headless: HeadlessRenderer<SharedWriter<O>, SharedWriter<E>>,
    markdown: MarkdownStream,
    out: SharedWriter<O>,
    err: SharedWriter<E>,
    delivery: AnswerDelivery,
    separation: TurnSeparation,
    /// Rendered Markdown or the model's text.
    answer: AnswerText,
    /// The raw answer's neutralizer (a `\r` split across deltas).
    raw: crate::safe_text::Neutralizer,
    /// Whether the raw answer left stdout mid-line.
    raw_mid_line: bool,
    /// Whether stdout got anything since the last turn began (or the start).
    wrote_since_turn: bool,
    /// This request's text not yet written ([`AnswerDelivery::PerRequest`]).
    held: String,
    /// Whether any of this request's text reached stdout.
    written: bool,
}

/// The width Markdown tables are laid out for: `$COLUMNS` when set, else the terminal's
/// width when the answer is styled for one, else 80.
fn table_width(style: MarkdownStyle) -> usize {
    if let Some(columns) = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|c| *c > 0)
    {
        return columns;
    }
    match style {
        MarkdownStyle::Ansi => crossterm::terminal::size()
            .map(|(cols, _)| usize::from(cols))
            .unwrap_or(super::markdown::DEFAULT_WIDTH),
        MarkdownStyle::Plain => super::markdown::DEFAULT_WIDTH,
    }
}

impl<O: Write, E: Write> ReplRenderer<O, E> {
    /// A renderer writing answers to `out` and everything else to `err`.
    pub fn new(
        format: OutputFormat,
        activity: Activity,
        style: MarkdownStyle,
        out: O,
        err: E,
    ) -> Self {
        let out = SharedWriter::new(out);
        let err = SharedWriter::new(err);
        ReplRenderer {
            format,
            headless: HeadlessRenderer::new(
                format,
                TextDelivery::Stream,
                activity,
                out.clone(),
                err.clone(),
            ),
            markdown: MarkdownStream::new(style).with_width(table_width(style)),
            out,
            err,
            delivery: AnswerDelivery::Live,
            separation: TurnSeparation::None,
            answer: AnswerText::Rendered,
            raw: crate::safe_text::Neutralizer::new(),
            raw_mid_line: false,
            wrote_since_turn: false,
            held: String::new(),
            written: false,
        }
    }

    /// Sets how the answer reaches stdout in the text format.
    pub fn with_delivery(mut self, delivery: AnswerDelivery) -> Self {
        self.delivery = delivery;
        self
    }

    /// Sets whether answers are rendered or shown as the model wrote them.
    pub fn with_answer_text(mut self, answer: AnswerText) -> Self {
        self.answer = answer;
        self
    }

    /// Sets whether reasoning is shown on stderr in the text format.
    pub fn with_thoughts(mut self, display: crate::print::ThoughtDisplay) -> Self {
        self.headless = self.headless.with_thoughts(display);
        self
    }

    /// Sets what stands between one turn's output and the next.
    pub fn with_separation(mut self, separation: TurnSeparation) -> Self {
        self.separation = separation;
        self
    }

    /// Renders one agent event; returns the report when it ends a turn.
    pub fn event(&mut self, event: &Event) -> io::Result<Option<TurnReport>> {
        if self.format == OutputFormat::Text {
            if !matches!(event, Event::ReasoningDelta { .. }) {
                self.headless.end_thought()?;
            }
            match event {
                Event::TurnStarted { .. } => {
                    self.end_text()?;
                    if self.separation == TurnSeparation::BlankLine && self.wrote_since_turn {
                        self.write_rendered("\n")?;
                    }
                    self.wrote_since_turn = false;
                }
                Event::TextDelta { text } => return self.answer_text(text).map(|()| None),
                Event::ReasoningDelta { .. } if !self.headless.shows_thoughts() => return Ok(None),
                // Shown: on stderr, by the headless renderer below.
                Event::ReasoningDelta { .. } => {}
                Event::Retrying { .. } => self.withdraw()?,
                Event::RequestStarted { .. } => {
                    self.end_text()?;
                    self.written = false;
                }
                _ => self.end_text()?,
            }
        }
        self.headless.render(event)
    }

    /// A piece of the answer as stdout shows it: rendered Markdown, or the model's text
    /// with only its control characters made visible (`--raw`).
    fn shape(&mut self, text: &str) -> String {
        match self.answer {
            AnswerText::Rendered => self.markdown.push(text),
            AnswerText::Raw => {
                let safe = self.raw.push(text).into_owned();
                if !safe.is_empty() {
                    self.raw_mid_line = !safe.ends_with('\n');
                }
                safe
            }
        }
    }

    /// The end of the answer as stdout shows it: what the renderer held, or the
    /// newline a raw answer lacks.
    fn shape_end(&mut self) -> String {
        match self.answer {
            AnswerText::Rendered => self.markdown.finish(),
            AnswerText::Raw => {
                let mut rest = self.raw.finish().to_string();
                if std::mem::take(&mut self.raw_mid_line) || !rest.is_empty() {
                    rest.push('\n');
                }
                rest
            }
        }
    }

    /// A piece of the answer: held, or rendered and written.
    fn answer_text(&mut self, text: &str) -> io::Result<()> {
        if self.delivery == AnswerDelivery::PerRequest && !self.written {
            if self.held.len() + text.len() <= HOLD_CAP {
                self.held.push_str(text);
                return Ok(());
            }
            // Too long to hold: from here on it streams.
            self.release()?;
        }
        let shown = self.shape(text);
        self.written |= !shown.is_empty() || !text.is_empty();
        self.write_rendered(&shown)
    }

    /// Writes what is held for this request.
    fn release(&mut self) -> io::Result<()> {
        if self.held.is_empty() {
            return Ok(());
        }
        let held = std::mem::take(&mut self.held);
        self.written = true;
        let shown = self.shape(&held);
        self.write_rendered(&shown)
    }

    /// A failed attempt's text: dropped when held; when already written, ended with
    /// one marker line so the reader knows the answer starts again.
    fn withdraw(&mut self) -> io::Result<()> {
        self.held.clear();
        if self.written {
            let rest = self.shape_end();
            self.write_rendered(&rest)?;
            let mut marker = String::new();
            if !rest.ends_with('\n') {
                marker.push('\n');
            }
            marker.push_str(RETRY_MARKER);
            marker.push('\n');
            self.write_out(&marker)?;
        } else {
            // Nothing reached stdout: forget what the renderer has of it.
            let _ = self.shape_end();
        }
        self.written = false;
        Ok(())
    }

    /// Ends the assistant's text so far (before anything else is printed).
    fn end_text(&mut self) -> io::Result<()> {
        self.release()?;
        let rest = self.shape_end();
        self.write_rendered(&rest)
    }

    /// Writes what the Markdown stream made of the answer: already neutralized, with
    /// harness9's own styling escapes (which must survive) in it.
    fn write_rendered(&mut self, text: &str) -> io::Result<()> {
        if text.is_empty() {
            return Ok(());
        }
        self.wrote_since_turn = true;
        self.out.write_all(text.as_bytes())?;
        self.out.flush()
    }

    /// Writes text for people to stdout, neutralized.
    fn write_out(&mut self, text: &str) -> io::Result<()> {
        self.write_rendered(&neutralize(text))
    }

    /// A user-facing error that is not a turn outcome (unknown command...).
    pub fn error(&mut self, message: &str) -> io::Result<()> {
        self.end_text()?;
        self.headless.error(message)
    }

    /// A stream-json input line that could not be used: an `error` naming it.
    pub fn input_error(&mut self, line: u64, message: &str) -> io::Result<()> {
        self.end_text()?;
        self.headless.input_error(line, message)
    }

    /// The `start` line names the input schema's version (stream-json input).
    pub fn with_input_schema(mut self, version: Option<u64>) -> Self {
        self.headless = self.headless.with_input_schema(version);
        self
    }

    /// A warning from outside the event stream (start-up).
    pub fn warning(&mut self, message: &str) -> io::Result<()> {
        self.end_text()?;
        self.headless.warning(message)
    }

    /// Output of a built-in command: stdout in the text format, stderr otherwise.
    pub fn notice(&mut self, text: &str) -> io::Result<()> {
        self.end_text()?;
        let mut text = text.to_string();
        if !text.ends_with('\n') {
            text.push('\n');
        }
        match self.format {
            OutputFormat::Text => self.write_out(&text),
            OutputFormat::Json | OutputFormat::StreamJson => self.write_err(&text),
        }
    }

    /// What an agent event means for people (a resumed session, the saved sessions,
    /// an export), where a notice goes; nothing in `stream-json`, whose output already
    /// carries the event as a JSON line.
    pub fn report(&mut self, text: &str) -> io::Result<()> {
        match self.format {
            OutputFormat::StreamJson => Ok(()),
            OutputFormat::Text | OutputFormat::Json => self.notice(text),
        }
    }

    /// A line for people on stderr (banner, approval details).
    pub fn info(&mut self, text: &str) -> io::Result<()> {
        self.end_text()?;
        self.write_err(&format!("{text}\n"))
    }

    /// Writes text for people to stderr, neutralized.
    fn write_err(&mut self, text: &str) -> io::Result<()> {
        self.err.write_all(neutralize(text).as_bytes())?;
        self.err.flush()
    }

    /// Shows what an approval request is about, before the question is asked.
    pub fn approval_request(
        &mut self,
        tool: &str,
        request: &ApprovalRequestKind,
        because: Option<&AskBecause>,
        offer: &Offer,
    ) -> io::Result<()> {
        self.end_text()?;
        let mut text = match request {
            ApprovalRequestKind::Command { command, cwd } => {
                format!(
                    "{tool} wants to run a command in {}:\n  $ {command}\n",
                    cwd.display()
                )
            }
            ApprovalRequestKind::Edit { diff, location, .. } => {
                let place = if *location == Location::Outside {
                    " (outside the project)"
                } else {
                    ""
                };
                let path = request.shown_path().unwrap_or_default();
                let mut t = format!("{tool} wants to change {path}{place}\n");
                if let Some(diff) = diff {
                    for line in diff.lines() {
                        t.push_str("  ");
                        t.push_str(line);
                        t.push('\n');
                    }
                }
                t
            }
            ApprovalRequestKind::ReadOutside { .. } => {
                format!(
                    "{tool} wants to read {} (outside the project)\n",
                    request.shown_path().unwrap_or_default()
                )
            }
            ApprovalRequestKind::Read { .. } => {
                format!(
                    "{tool} wants to read {}\n",
                    request.shown_path().unwrap_or_default()
                )
            }
            ApprovalRequestKind::Mcp {
                server,
                tool: remote,
                action,
                arguments,
            } => match action {
                McpAction::CallTool => format!(
                    "MCP server `{server}` tool `{remote}` wants to run with:\n  {arguments}\n"
                ),
                McpAction::ReadResource => {
                    format!("MCP server `{server}`: read resources {arguments}\n")
                }
            },
            ApprovalRequestKind::Fetch { url, domain } => {
                format!("{tool} wants to fetch from {domain}:\n  {url}\n")
            }
            ApprovalRequestKind::Search { query, backend } => {
                format!("{tool} wants to search the web through {backend} for:\n  {query}\n")
            }
            ApprovalRequestKind::Plan { file, text } => {
                let mut t = format!(
                    "{tool}: the plan ({}) is ready for approval:\n",
                    file.display()
                );
                for line in text.lines() {
                    t.push_str("  ");
                    t.push_str(line);
                    t.push('\n');
                }
                t.push_str(
                    "  y = approve, then auto-edit · a = approve, then full-auto · \
                     p = approve, then suggest · n = keep planning\n",
                );
                t
            }
        };
        match because {
            Some(AskBecause::Rule { rule, source }) => {
                text.push_str(&format!(
                    "  asked because of the rule `ask {rule}` ({source})\n"
                ));
            }
            Some(AskBecause::Destructive { what, .. }) => {
                text.push_str(&format!("  destructive: {what}\n"));
            }
            Some(
                AskBecause::Opaque { why }
                | AskBecause::Unconfined { why }
                | AskBecause::Hook { why },
            ) => text.push_str(&format!("  asked because {why}\n")),
            None => {}
        }
        match offer {
            Offer::Rules { rules } => text.push_str(&format!(
                "  always (a: this session, p: saved for this project) adds: {}\n",
                rules.join(", ")
            )),
            Offer::OnceOnly { why } => text.push_str(&format!(
                "  \"always\" is not offered: {why}; a or p approve this once\n"
            )),
        }
        self.write_err(&text)
    }

    /// Says that a request nobody could answer was denied (pipe mode fallback).
    pub fn denied(&mut self, tool: &str, request: &ApprovalRequestKind) -> io::Result<()> {
        self.info(&format!(
            "harness9: denied {tool}: {}",
            describe_request(request)
        ))
    }

    /// The writers back (tests).
    #[cfg(test)]
    pub fn writers(&self) -> (SharedWriter<O>, SharedWriter<E>) {
        (self.out.clone(), self.err.clone())
    }
}

/// `/help`.
pub fn help_text(builtins: &[(&str, &str)], terminal: bool) -> String {
    let width = builtins.iter().map(|(n, _)| n.len()).max().unwrap_or(0) + 1;
    let mut t = String::from("Commands:\n");
    for (name, description) in builtins {
        t.push_str(&format!(
            "  {:<width$}  {description}\n",
            format!("/{name}")
        ));
    }
    t.push_str("  /NAME [args]  Run the skill NAME with these arguments (/skills lists them)\n");
    t.push_str(
        "  !COMMAND      Run a shell command, judged like the model's bash calls; its output \
         goes to the model with the next message\n",
    );
    t.push_str(
        "Anything else is sent to the model. End a line with \\ to continue it on the next.\n",
    );
    if terminal {
        t.push_str(
            "Tab completes commands and skills; Ctrl-C stops a running turn; Ctrl-D quits.\n",
        );
    }
    t
}

/// `/skills`: the shared listing ([`crate::skills::listing`]) as plain text.
pub fn skills_text(listing: &SkillListing) -> String {
    if listing.skills.is_empty() {
        return "No skills found. Add skills/<name>/SKILL.md to the project or use --skills-dir.\n"
            .into();
    }
    let invocation = |e: &SkillEntry| match &e.argument_hint {
        Some(hint) => format!("/{} {hint}", e.name),
        None => format!("/{}", e.name),
    };
    let width = listing
        .skills
        .iter()
        .map(|e| invocation(e).chars().count())
        .max()
        .unwrap_or(0);
    let mut t = format!("Skills ({}):\n", listing.skills.len());
    for entry in &listing.skills {
        let mut notes = vec![entry.standing.as_str()];
        notes.extend(entry.notes.iter().map(|n| n.label()));
        t.push_str(&format!(
            "  {:<width$}  [{}]  {}\n",
            invocation(entry),
            notes.join(", "),
            entry.description
        ));
    }
    let (shadowed, invalid) = (listing.shadowed.len(), listing.invalid.len());
    if shadowed + invalid > 0 {
        t.push_str(&format!(
            "({shadowed} shadowed, {invalid} invalid; `harness9 skills list` shows them)\n"
        ));
    }
    t.push_str(&format!(
        "index: {} of {} characters ({}% of the budget)\n",
        listing.index_used,
        listing.index_budget,
        listing.index_percent()
    ));
    t
}

/// `/mcp`: the shared listing ([`crate::mcp::listing`]) as plain text.
pub fn mcp_text(servers: &[McpServerEntry]) -> String {
    if servers.is_empty() {
        return "No MCP servers configured. Add one with `harness9 mcp add NAME -- COMMAND` \
                (docs/MCP.md).\n"
            .to_string();
    }
    let mut out = format!("MCP servers ({}):\n", servers.len());
    for e in servers {
        out.push_str(&format!("  {}  {}\n    {}\n", e.name, e.state, e.detail));
        if !e.prompts.is_empty() {
            out.push_str(&format!("    prompts: {}\n", e.prompts.join(", ")));
        }
    }
    out
}

/// `/status`: the shared wording ([`crate::protocol::StatusReport::lines`]) as plain
/// text, one aligned label and value a line.
pub fn status_text(report: &crate::protocol::StatusReport) -> String {
    let rows = report.lines();
    let width = rows.iter().map(|(label, _)| label.len()).max().unwrap_or(0);
    let mut out = String::from("Status:\n");
    for (label, value) in rows {
        out.push_str(&format!("  {label:<width$}  {value}\n"));
    }
    out
}

/// `/context`: the shared wording ([`crate::protocol::ContextReport::lines`]) as plain
/// text.
pub fn context_text(report: &crate::protocol::ContextReport) -> String {
    let mut out = String::from(
        "Context:
",
    );
    for line in report.lines() {
        out.push_str("  ");
        out.push_str(&line);
        out.push('\n');
    }
    out
}

/// History items a resumed session's recap shows at most.
const RECAP_ITEMS: usize = 6;
/// Characters of one recap line at most.
const RECAP_CHARS: usize = 100;

/// A resumed session: its last few history items, one line each, then which session
/// goes on and what changed since it was saved.
pub fn resumed_text(resumed: &ResumedSession) -> String {
    // Thoughts are not printed in the REPL (as while a turn streams).
    let history: Vec<&HistoryItem> = resumed
        .history
        .iter()
        .filter(|item| !matches!(item, HistoryItem::Reasoning { .. }))
        .collect();
    let mut t = String::new();
    let hidden = history.len().saturating_sub(RECAP_ITEMS);
    if hidden > 0 {
        t.push_str(&format!("… {hidden} earlier\n"));
    }
    for item in &history[hidden..] {
        let (lead, text) = match item {
            HistoryItem::User { text } => ("you: ", text.clone()),
            HistoryItem::Assistant { text } => ("model: ", text.clone()),
            HistoryItem::ToolCall { name, arguments } => ("↳ ", format!("{name} {arguments}")),
            HistoryItem::Reasoning { .. } => continue,
        };
        t.push_str(lead);
        t.push_str(&one_line(&text, RECAP_CHARS));
        t.push('\n');
    }
    let turns = if resumed.turns == 1 { "turn" } else { "turns" };
    t.push_str(&format!(
        "resumed session {} ({} {turns}, model {})",
        resumed.id, resumed.turns, resumed.model
    ));
    for note in &resumed.notes {
        t.push_str(&format!("\nnote: {note}"));
    }
    t
}

/// `/resume` without an id: this project's saved sessions, newest first, one a line.
pub fn sessions_text(sessions: &[SessionListing]) -> String {
    if sessions.is_empty() {
        return "no other saved sessions for this project".into();
    }
    let turns_width = SessionListing::column_width(sessions, |s| s.turns_text().len());
    let model_width = SessionListing::column_width(sessions, |s| s.model.chars().count());
    let mut t = String::from("saved sessions, newest first:\n");
    for s in sessions {
        let prompt = s
            .first_prompt
            .as_deref()
            .map_or("(no prompt)".to_string(), |p| one_line(p, RECAP_CHARS));
        t.push_str(&format!(
            "  {}  {}  {:<turns_width$}  {:<model_width$}  {prompt}\n",
            s.id,
            display_utc(s.modified_ms),
            s.turns_text(),
            s.model,
        ));
    }
    t.push_str("resume one with /resume ID (a unique prefix of the id is enough)");
    t
}

/// `/usage`.
pub fn usage_text(usage: &Usage, context_tokens: u64, context_window: Option<u64>) -> String {
    let est = if usage.estimated { " (estimated)" } else { "" };
    let mut t = format!(
        "tokens this session: {} in ({} cached), {} out, {} total{est}",
        usage.input_tokens,
        usage.cached_input_tokens,
        usage.output_tokens,
        usage.total()
    );
    if let Some(cache) = usage.cache_summary() {
        t.push_str(&format!("\nprompt cache: {cache}"));
    }
    if let Some(cost) = usage.cost {
        t.push_str(&format!("\ncost this session: {cost}{est}"));
    }
    match context_window {
        Some(window) if window > 0 => t.push_str(&format!(
            "\ncontext: {context_tokens} of {window} tokens ({}%)",
            context_tokens.saturating_mul(100) / window
        )),
        _ if context_tokens > 0 => t.push_str(&format!("\ncontext: {context_tokens} tokens")),
        _ => {}
    }
    t
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::{ToolStatus, TurnOutcome};
    use crate::test_support::assert_contains;

    /// A renderer of plain (unstyled) Markdown into two in-memory writers.
    fn plain(format: OutputFormat, activity: Activity) -> ReplRenderer<Vec<u8>, Vec<u8>> {
        ReplRenderer::new(
            format,
            activity,
            MarkdownStyle::Plain,
            Vec::new(),
            Vec::new(),
        )
    }

    fn text_of(w: &SharedWriter<Vec<u8>>) -> String {
        w.with(|v| String::from_utf8_lossy(v).into_owned()).unwrap()
    }

    #[test]
    fn text_format_renders_markdown_and_ends_lines_before_activity() {
        let mut r = plain(OutputFormat::Text, Activity::Shown);
        let (out, err) = r.writers();
        r.event(&Event::TextDelta {
            text: "**Reading** the ".into(),
        })
        .unwrap();
        r.event(&Event::TextDelta {
            text: "file".into(),
        })
        .unwrap();
        r.event(&Event::ToolCallBegin {
            call_id: "c".into(),
            name: "read_file".into(),
            summary: "a.rs".into(),
            locations: Vec::new(),
        })
        .unwrap();
        r.event(&Event::ToolCallEnd {
            call_id: "c".into(),
            name: "read_file".into(),
            status: ToolStatus::Ok,
            summary: "3 lines".into(),
            diff: None,
            change: None,
        })
        .unwrap();
        r.event(&Event::TextDelta {
            text: "Done.".into(),
        })
        .unwrap();
        let report = r
            .event(&Event::TurnComplete {
                outcome: TurnOutcome::Completed,
                final_text: "Done.".into(),
                usage: Usage::default(),
                requests: 2,
            })
            .unwrap();
        assert!(report.is_some());
        assert_eq!(text_of(&out), "Reading the file\nDone.\n");
        assert_contains(&text_of(&err), "→ read_file a.rs");
    }

    /// Feeds a first attempt cut off after `partial`, a retry, and `full`, then ends the
    /// turn; returns stdout.
    fn retried(delivery: AnswerDelivery, partial: &str, full: &str) -> String {
        let mut r = plain(OutputFormat::Text, Activity::Hidden).with_delivery(delivery);
        let (out, _) = r.writers();
        let events = [
            Event::RequestStarted { request: 1 },
            Event::TextDelta {
                text: partial.into(),
            },
            Event::Retrying {
                attempt: 2,
                delay_ms: 10,
                reason: "the connection broke mid-answer".into(),
            },
            Event::TextDelta { text: full.into() },
            Event::TurnComplete {
                outcome: TurnOutcome::Completed,
                final_text: full.into(),
                usage: Usage::default(),
                requests: 1,
            },
        ];
        for e in &events {
            r.event(e).unwrap();
        }
        text_of(&out)
    }

    #[test]
    fn a_retried_request_leaves_only_the_final_answer_in_a_pipe() {
        assert_eq!(
            retried(
                AnswerDelivery::PerRequest,
                "PARTIAL-CUT\nmore",
                "FULL ANSWER"
            ),
            "FULL ANSWER\n"
        );
    }

    #[test]
    fn on_a_terminal_a_retried_request_is_marked_once() {
        let out = retried(AnswerDelivery::Live, "PARTIAL-CUT\nmore", "FULL ANSWER");
        assert_eq!(
            out,
            format!("PARTIAL-CUT\nmore\n{RETRY_MARKER}\nFULL ANSWER\n")
        );
    }

    #[test]
    fn an_answer_too_long_to_hold_streams_and_a_retry_is_marked() {
        let long = "x".repeat(HOLD_CAP + 10);
        let out = retried(AnswerDelivery::PerRequest, &long, "FULL");
        assert!(out.starts_with("xxx"), "streamed once over the cap");
        assert!(out.ends_with(&format!("{RETRY_MARKER}\nFULL\n")));
    }

    #[test]
    fn json_formats_keep_notices_off_stdout() {
        let mut r = plain(OutputFormat::Json, Activity::Hidden);
        let (out, err) = r.writers();
        r.notice("model: m").unwrap();
        r.event(&Event::TextDelta { text: "x".into() }).unwrap();
        assert_eq!(text_of(&out), "");
        assert_eq!(text_of(&err), "model: m\n");
    }

    #[test]
    fn a_path_through_a_link_is_shown_with_the_file_it_reaches() {
        let mut r = plain(OutputFormat::Text, Activity::Shown);
        let (_, err) = r.writers();
        r.approval_request(
            "write_file",
            &ApprovalRequestKind::Edit {
                path: "/p/.git/config".into(),
                via: Some("/p/docs/settings.ini".into()),
                diff: None,
                location: Location::Inside,
            },
            None,
            &Offer::Rules {
                rules: vec!["edit(**)".into()],
            },
        )
        .unwrap();
        r.approval_request(
            "@~/x.txt",
            &ApprovalRequestKind::ReadOutside {
                path: "/home/u/x.txt".into(),
                via: None,
            },
            None,
            &Offer::Rules {
                rules: vec!["read(/home/u/**)".into()],
            },
        )
        .unwrap();
        let err = text_of(&err);
        assert!(
            err.contains("write_file wants to change /p/docs/settings.ini -> /p/.git/config\n"),
            "{err}"
        );
        assert!(
            err.contains("@~/x.txt wants to read /home/u/x.txt (outside the project)\n"),
            "{err}"
        );
    }

    #[test]
    fn notices_info_and_approvals_are_neutralized() {
        let mut r = plain(OutputFormat::Text, Activity::Shown);
        let (out, err) = r.writers();
        let hostile = "\x1b]0;PWNED\x07\u{9b}?25l";
        r.notice(&format!("model: {hostile}")).unwrap();
        r.info(&format!("info {hostile}")).unwrap();
        r.approval_request(
            "bash",
            &ApprovalRequestKind::Command {
                command: format!("echo {hostile}"),
                cwd: "/p".into(),
            },
            Some(&AskBecause::Opaque {
                why: format!("why {hostile}"),
            }),
            &Offer::Rules {
                rules: vec![format!("bash(echo {hostile}:*)")],
            },
        )
        .unwrap();
        r.event(&Event::TextDelta {
            text: format!("answer {hostile}"),
        })
        .unwrap();
        r.event(&Event::Warning {
            message: format!("warn {hostile}"),
        })
        .unwrap();
        let (out, err) = (text_of(&out), text_of(&err));
        for text in [&out, &err] {
            assert!(
                !text.contains(['\x1b', '\x07', '\u{9b}']),
                "raw control in {text:?}"
            );
        }
        assert!(out.contains("model: ^[]0;PWNED^G<U+009B>?25l"), "{out}");
        assert!(out.contains("answer ^[]0;PWNED^G"), "{out}");
        assert!(err.contains("info ^[]0;PWNED^G"), "{err}");
        assert!(err.contains("$ echo ^[]0;PWNED^G"), "{err}");
        assert!(err.contains("warning: warn ^["), "{err}");
    }

    #[test]
    fn help_lists_every_builtin() {
        let t = help_text(crate::protocol::BUILTINS, true);
        for (name, description) in crate::protocol::BUILTINS {
            assert!(
                t.contains(&format!("/{name}")) && t.contains(description),
                "{t}"
            );
        }
        assert!(t.contains("Ctrl-C"));
        assert!(!help_text(crate::protocol::BUILTINS, false).contains("Ctrl-C"));
    }

    #[test]
    fn usage_shows_context_share() {
        let usage = Usage {
            input_tokens: 1200,
            output_tokens: 300,
            cached_input_tokens: 1000,
            cache_write_tokens: 0,
            estimated: false,
            cost: None,
        };
        let t = usage_text(&usage, 800, Some(8000));
        assert!(
            t.contains("1200 in (1000 cached), 300 out, 1500 total"),
            "{t}"
        );
        assert!(t.contains("context: 800 of 8000 tokens (10%)"), "{t}");
        assert!(t.contains("prompt cache: 83% hit (1000 read)"), "{t}");
        let cold = usage_text(&Usage::default(), 0, None);
        assert!(!cold.contains("prompt cache"), "{cold}");
    }

    #[test]
    fn skills_text_uses_the_shared_labels() {
        let tmp = tempfile::tempdir().unwrap();
        crate::test_support::write_skill(
            tmp.path(),
            "demo",
            "argument-hint: \"[file]\"\ndisable-model-invocation: true\n",
            "b",
        );
        let catalog = crate::test_support::project_catalog(tmp.path());
        let listing = crate::skills::listing::listing(&catalog, 8_000, &["demo".to_string()]);
        let t = skills_text(&listing);
        assert!(
            t.contains("/demo [file]  [ok, project, loaded, slash command only]  The demo skill"),
            "{t}"
        );
        assert!(
            t.contains("index: 0 of 8000 characters (0% of the budget)"),
            "{t}"
        );
    }
}
