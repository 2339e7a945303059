//! Headless output: renders agent [`Event`]s for print mode (`-p`) and pipe mode in the
//! three documented formats (`text`, `json`, `stream-json`; see docs/HEADLESS.md), and
//! runs print mode itself ([`once`]: one prompt, its answer, how it ended).
//!
//! It owns the JSON schema scripts parse. It writes plain bytes to the writers it is
//! given and never touches terminal modes; it must not know how the agent works inside.
//! Everything it writes passes through [`SafeWriter`]: text has its control characters
//! made visible ([`crate::safe_text`]) and JSON lines have DEL and C1 characters escaped,
//! so neither an answer nor a file's contents can steer the terminal reading it.

use std::io::{self, Write};
use std::time::Instant;

use serde_json::json;

mod once;
mod thoughts;

use crate::protocol::{
    ApprovalRequestKind, AskBecause, AutoDenyReason, ErrorKind, Event, Location, ToolStatus,
    TurnOutcome, Usage,
};
use crate::safe_text::SafeWriter;
use crate::sink::{ReaderState, ReaderWatch, Sink};
pub use once::{PrintEnd, PrintError, PrintOptions, StdinKind, run};
pub use thoughts::ThoughtDisplay;

/// Version of the JSON output schema (bumped on incompatible changes). Version 2: the
/// `start` line comes before everything else, `result` carries `session_usage`, and
/// `shutdown_complete` is no longer written, so that a stream ends with its last
/// `result`.
pub const SCHEMA_VERSION: u32 = 3;

/// Bytes of a JSON line serialized before they are passed on.
const JSON_BUFFER: usize = 8 * 1024;

/// `--output-format`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum OutputFormat {
    /// Plain text: the answer on stdout, activity and problems on stderr.
    #[default]
    Text,
    /// One JSON object per turn, at its end.
    Json,
    /// One JSON event per line, as they happen.
    StreamJson,
}

/// How text answers reach stdout in the text format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TextDelivery {
    /// Stream deltas as they arrive (pipe mode).
    Stream,
    /// Print only the final answer of the turn (print mode).
    FinalOnly,
}

/// How the final answer's Markdown reaches stdout in print mode's text format.
pub enum AnswerRender {
    /// As the model wrote it (`--raw`).
    Raw,
    /// Through a renderer (the REPL's Markdown stream in its plain style, wired in by
    /// `launch`), so `-p` shows what pipe mode shows. What it returns still passes
    /// through the neutralizing writer.
    Rendered(Box<dyn FnMut(&str) -> String + Send>),
}

impl std::fmt::Debug for AnswerRender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            AnswerRender::Raw => "Raw",
            AnswerRender::Rendered(_) => "Rendered",
        })
    }
}

/// Whether tool activity is written to stderr in the text format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Activity {
    /// Tool calls, retries and usage on stderr.
    Shown,
    /// One line per tool call on stderr (what runs, not how it ended), with the
    /// warnings, denials and errors: the line REPL on a terminal.
    Calls,
    /// Only warnings, denials and errors on stderr.
    Hidden,
}

/// The end of one turn, as a frontend reports it to main.
#[derive(Debug, Clone, PartialEq)]
pub struct TurnReport {
    /// How the turn ended.
    pub outcome: TurnOutcome,
    /// Usage of the turn.
    pub usage: Usage,
}

/// The `result` object of the JSON formats, borrowing the answer from the event (a long
/// answer is not copied to be written).
#[derive(serde::Serialize)]
struct ResultLine<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    schema_version: u32,
    result: &'a str,
    is_error: bool,
    error: Option<ResultError>,
    turns: u32,
    usage: Usage,
    session_usage: Usage,
    /// The share of the turn's input tokens read from the provider's prompt cache, in
    /// percent (`null` when no input was counted).
    cache_hit_percent: Option<u64>,
    /// The same for the whole session.
    session_cache_hit_percent: Option<u64>,
    duration_ms: u64,
    model: String,
    /// `--output-schema`: the final answer's JSON value (absent without the flag, and
    /// when the turn did not complete).
    #[serde(skip_serializing_if = "Option::is_none")]
    structured_output: Option<serde_json::Value>,
}

/// Whether a `result` carries the answer's JSON value (`--output-schema`, where the
/// agent made the completed answer exactly that value's text).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StructuredOutput {
    /// No schema: no `structured_output`.
    #[default]
    Absent,
    /// A completed answer is parsed into `structured_output`.
    Parsed,
}

/// The `error` of a `result`.
#[derive(serde::Serialize)]
struct ResultError {
    kind: &'static str,
    message: String,
}

impl TurnReport {
    /// The error kind of a turn that did not complete.
    pub fn error_kind(&self) -> Option<ErrorKind> {
        match &self.outcome {
            TurnOutcome::Completed => None,
            TurnOutcome::Interrupted => Some(ErrorKind::Interrupted),
            TurnOutcome::MaxTurnsReached { .. } => Some(ErrorKind::MaxTurns),
            TurnOutcome::Truncated { reason } => Some(reason.kind()),
            TurnOutcome::Failed { kind, .. } => Some(*kind),
            TurnOutcome::LimitReached { limit } => Some(limit.kind()),
        }
    }
}

/// Renders events in one output format. A reader that goes away (`| head`) ends the
/// output quietly: see [`HeadlessRenderer::reader`].
pub struct HeadlessRenderer<O: Write, E: Write> {
    format: OutputFormat,
    delivery: TextDelivery,
    activity: Activity,
    out: Sink<SafeWriter<O>>,
    err: Sink<SafeWriter<E>>,
    turn_started: Instant,
    /// Whether the text format left stdout mid-line.
    mid_line: bool,
    header_written: bool,
    model: String,
    /// The whole session's usage so far (from `usage` events).
    session_usage: Usage,
    /// How the final answer is shown ([`TextDelivery::FinalOnly`]).
    answer: AnswerRender,
    /// Reasoning on stderr in the text format, when asked for.
    thoughts: thoughts::Thoughts,
    /// The version of the input lines read (`--input-format stream-json`), named in
    /// the `start` line.
    input_schema: Option<u64>,
    /// Whether a `result` carries `structured_output`.
    structured: StructuredOutput,
}

impl<O: Write, E: Write> HeadlessRenderer<O, E> {
    /// A renderer writing answers to `out` and diagnostics to `err`.
    pub fn new(
        format: OutputFormat,
        delivery: TextDelivery,
        activity: Activity,
        out: O,
        err: E,
    ) -> Self {
        HeadlessRenderer {
            format,
            delivery,
            activity,
            out: Sink::new(SafeWriter::text(out)),
            err: Sink::new(SafeWriter::text(err)),
            turn_started: Instant::now(),
            mid_line: false,
            header_written: false,
            model: String::new(),
            session_usage: Usage::default(),
            answer: AnswerRender::Raw,
            thoughts: thoughts::Thoughts::default(),
            structured: StructuredOutput::Absent,
            input_schema: None,
        }
    }

    /// Names the version of the input schema in the `start` line (stream-json input).
    pub fn with_input_schema(mut self, version: Option<u64>) -> Self {
        self.input_schema = version;
        self
    }

    /// Sets whether a `result` carries the answer's JSON value (`--output-schema`).
    pub fn with_structured_output(mut self, structured: StructuredOutput) -> Self {
        self.structured = structured;
        self
    }

    /// Sets whether reasoning is shown on stderr in the text format.
    pub fn with_thoughts(mut self, display: ThoughtDisplay) -> Self {
        self.thoughts = thoughts::Thoughts::new(display);
        self
    }

    /// Whether reasoning is shown in the text format.
    pub fn shows_thoughts(&self) -> bool {
        self.format == OutputFormat::Text && self.thoughts.shown()
    }

    /// Ends a thought being shown, before other output.
    pub fn end_thought(&mut self) -> io::Result<()> {
        self.thoughts.end(self.err.get_mut().get_mut())
    }

    /// Sets how the final answer is shown in the text format.
    pub fn with_answer_render(mut self, answer: AnswerRender) -> Self {
        self.answer = answer;
        self
    }

    /// Whether stdout still has a reader; when it is gone, output is dropped and the
    /// frontend should stop the session.
    pub fn reader(&self) -> ReaderState {
        self.out.state()
    }

    /// A handle that sees when stdout's reader goes.
    pub fn reader_watch(&self) -> ReaderWatch {
        self.out.watch()
    }

    /// The model named in results before the agent has said which (set-up failures).
    pub fn set_model(&mut self, model: &str) {
        self.model = model.to_string();
    }

    /// Reports a failure that ended the run before any turn could start (an unusable
    /// prompt, a bad config): an `error` line and a `result` in `stream-json`, a
    /// `result` in `json`, `error: …` on stderr in `text`. Scripts get the same last
    /// line as for a failed turn.
    pub fn fail_before_turn(&mut self, kind: ErrorKind, message: &str) -> io::Result<()> {
        let report = TurnReport {
            outcome: TurnOutcome::Failed {
                kind,
                message: message.to_string(),
            },
            usage: Usage::default(),
        };
        match self.format {
            OutputFormat::Text => {
                writeln!(self.err, "error: {message}")?;
                self.err.flush()
            }
            OutputFormat::StreamJson => {
                self.error(message)?;
                let result = self.result_line(&report, "", 0);
                self.json_line(&result)
            }
            OutputFormat::Json => {
                let result = self.result_line(&report, "", 0);
                self.json_line(&result)
            }
        }
    }

    /// Writes a warning that did not come through the agent (start-up warnings).
    pub fn warning(&mut self, message: &str) -> io::Result<()> {
        self.diagnostic("warning", message)
    }

    /// Writes a user-facing error that is not a turn outcome (unknown command...).
    pub fn error(&mut self, message: &str) -> io::Result<()> {
        self.diagnostic("error", message)
    }

    /// An input line that could not be used (stream-json input): an `error` line with
    /// `input_line`, or `error: input line N: …` on stderr.
    pub fn input_error(&mut self, line: u64, message: &str) -> io::Result<()> {
        let message = format!("input line {line}: {message}");
        match self.format {
            OutputFormat::StreamJson => {
                self.json_line(&json!({"type": "error", "message": message, "input_line": line}))
            }
            _ => {
                writeln!(self.err, "error: {message}")?;
                self.err.flush()
            }
        }
    }

    /// Writes `kind: message` to stderr, or a `{"type": kind, "message": ...}` line in
    /// stream-json.
    fn diagnostic(&mut self, kind: &str, message: &str) -> io::Result<()> {
        match self.format {
            OutputFormat::StreamJson => self.json_line(&json!({"type": kind, "message": message})),
            _ => {
                writeln!(self.err, "{kind}: {message}")?;
                self.err.flush()
            }
        }
    }

    /// Renders one event; returns the turn report when the event ends a turn. The
    /// listings a frontend asks for or keeps (`/skills`, `/mcp`, `/status`, the slash
    /// commands) are not print mode's, nor is a call's whole result (a full view's, the
    /// summary is in its end): nothing is written for them, in any format.
    pub fn render(&mut self, event: &Event) -> io::Result<Option<TurnReport>> {
        // The note about a failed turn's messages is for a prompt that follows: the
        // REPL shows it itself, and print mode has none.
        if matches!(
            event,
            Event::SkillList(_)
                | Event::McpServerList { .. }
                | Event::PluginList(_)
                | Event::HookList(_)
                | Event::SlashCommands(_)
                | Event::TurnLeftOut { .. }
                | Event::ToolResult { .. }
                | Event::Status(_)
                | Event::ModelList(_)
                | Event::Context(_)
        ) {
            return Ok(None);
        }
        if let Event::SessionConfigured { model, .. } = event {
            self.model = model.clone();
        }
        match event {
            Event::TurnStarted { .. } => self.turn_started = Instant::now(),
            Event::Usage { session, .. } => self.session_usage = *session,
            Event::ShutdownComplete { usage } => self.session_usage = *usage,
            _ => {}
        }
        match self.format {
            OutputFormat::StreamJson => self.render_stream_json(event)?,
            OutputFormat::Json => {}
            OutputFormat::Text => self.render_text(event)?,
        }
        let Event::TurnComplete {
            outcome,
            final_text,
            usage,
            requests,
        } = event
        else {
            return Ok(None);
        };
        let report = TurnReport {
            outcome: outcome.clone(),
            usage: *usage,
        };
        match self.format {
            OutputFormat::Text => self.finish_text_turn(&report, final_text)?,
            OutputFormat::Json | OutputFormat::StreamJson => {
                let result = self.result_line(&report, final_text, *requests);
                self.json_line(&result)?;
            }
        }
        Ok(Some(report))
    }

    fn result_line<'a>(
        &self,
        report: &TurnReport,
        final_text: &'a str,
        requests: u32,
    ) -> ResultLine<'a> {
        let error = match &report.outcome {
            TurnOutcome::Completed => None,
            TurnOutcome::Interrupted => Some(ResultError {
                kind: ErrorKind::Interrupted.as_str(),
                message: "interrupted by the user".into(),
            }),
            TurnOutcome::MaxTurnsReached { limit } => Some(ResultError {
                kind: ErrorKind::MaxTurns.as_str(),
                message: format!("stopped after {limit} model requests (--max-turns)"),
            }),
            TurnOutcome::Truncated { reason } => Some(ResultError {
                kind: reason.kind().as_str(),
                message: reason.describe().to_string(),
            }),
            TurnOutcome::Failed { kind, message } => Some(ResultError {
                kind: kind.as_str(),
                message: message.clone(),
            }),
            TurnOutcome::LimitReached { limit } => Some(ResultError {
                kind: limit.kind().as_str(),
                message: limit.describe(),
            }),
        };
        ResultLine {
            kind: "result",
            schema_version: SCHEMA_VERSION,
            result: final_text,
            is_error: report.outcome != TurnOutcome::Completed,
            error,
            turns: requests,
            usage: report.usage,
            session_usage: self.session_usage,
            cache_hit_percent: report.usage.cache_hit_percent(),
            session_cache_hit_percent: self.session_usage.cache_hit_percent(),
            duration_ms: u64::try_from(self.turn_started.elapsed().as_millis()).unwrap_or(u64::MAX),
            model: self.model.clone(),
            structured_output: match (self.structured, &report.outcome) {
                (StructuredOutput::Parsed, TurnOutcome::Completed) => {
                    serde_json::from_str(final_text).ok()
                }
                _ => None,
            },
        }
    }

    /// Writes one JSON line; in `stream-json` the `start` line comes first, whatever
    /// is written first (a start-up warning, an error, an event). DEL and C1 characters,
    /// which `serde_json` leaves raw, are escaped ([`crate::safe_text::escape_json`]): the line
    /// parses to the same value and holds no raw control character.
    fn json_line(&mut self, value: &impl serde::Serialize) -> io::Result<()> {
        if self.format == OutputFormat::StreamJson && !self.header_written {
            self.header_written = true;
            let mut start = json!({"type": "start", "schema_version": SCHEMA_VERSION});
            if let Some(version) = self.input_schema {
                start["input_schema_version"] = json!(version);
            }
            serde_json::to_writer(&mut self.out, &start)?;
            self.out.write_all(b"\n")?;
        }
        // Serialized straight through the escaping writer, a few KB at a time: a long
        // answer's `result` is not copied into a line first.
        let mut json = io::BufWriter::with_capacity(JSON_BUFFER, SafeWriter::json(&mut self.out));
        serde_json::to_writer(&mut json, value)?;
        json.into_inner().map_err(io::IntoInnerError::into_error)?;
        self.out.write_all(b"\n")?;
        self.out.flush()
    }

    fn render_stream_json(&mut self, event: &Event) -> io::Result<()> {
        // The session total is in every `result` (`session_usage`), so the stream can
        // end with the last one: consumers read the last line.
        if let Event::ShutdownComplete { .. } = event {
            return Ok(());
        }
        self.json_line(event)
    }

    fn end_line(&mut self) -> io::Result<()> {
        if self.mid_line {
            self.out.write_all(b"\n")?;
            self.out.flush()?;
            self.mid_line = false;
        }
        Ok(())
    }

    fn render_text(&mut self, event: &Event) -> io::Result<()> {
        let shown = self.activity == Activity::Shown;
        if let Event::ReasoningDelta { text } = event {
            if self.thoughts.shown() {
                self.end_line()?;
                self.thoughts.piece(self.err.get_mut().get_mut(), text)?;
            }
            return Ok(());
        }
        self.end_thought()?;
        match event {
            Event::TextDelta { text } if self.delivery == TextDelivery::Stream => {
                self.out.write_all(text.as_bytes())?;
                self.out.flush()?;
                self.mid_line = !text.ends_with('\n');
            }
            Event::Retrying {
                attempt,
                delay_ms,
                reason,
            } if shown => {
                self.end_line()?;
                writeln!(
                    self.err,
                    "retrying (attempt {attempt} in {delay_ms} ms): {reason}"
                )?;
            }
            Event::ToolCallBegin { name, summary, .. }
                if shown || self.activity == Activity::Calls =>
            {
                self.end_line()?;
                writeln!(self.err, "→ {name} {summary}")?;
            }
            Event::ToolCallEnd {
                name,
                status,
                summary,
                ..
            } => {
                let first = summary.lines().next().unwrap_or("");
                match status {
                    ToolStatus::Ok if shown => writeln!(self.err, "  ✓ {first}")?,
                    ToolStatus::Error if shown => writeln!(self.err, "  ✗ {name}: {first}")?,
                    ToolStatus::Interrupted if shown => {
                        writeln!(self.err, "  ✗ {name}: interrupted")?
                    }
                    _ => {}
                }
            }
            // A sub-agent's hook runs are shown as the conversation's are.
            Event::SubAgent { event, .. } if matches!(event.event(), Event::HookRan(_)) => {
                return self.render_text(event.event());
            }
            Event::SubAgent { skill, event, .. } if shown => match event.event() {
                Event::TurnStarted { .. } => writeln!(self.err, "sub-agent `{skill}` is working")?,
                Event::ToolCallBegin { name, summary, .. } => {
                    writeln!(self.err, "  ↳ {skill}: {name} {summary}")?
                }
                Event::TurnComplete { outcome, .. } => {
                    let status = match outcome {
                        TurnOutcome::Completed => "finished",
                        _ => "did not finish",
                    };
                    writeln!(self.err, "sub-agent `{skill}` {status}")?
                }
                _ => {}
            },
            Event::AutoDenied {
                name: tool,
                request,
                reason,
                ..
            } => {
                self.end_line()?;
                writeln!(
                    self.err,
                    "harness9: denied {tool}: {}",
                    describe_denial(request, reason)
                )?;
            }
            Event::Warning { message } => {
                self.end_line()?;
                writeln!(self.err, "warning: {message}")?;
            }
            // Every run with -v; without it, the runs that blocked, failed or stopped
            // the agent, and what a hook says to the user.
            Event::HookRan(ran) => {
                self.end_line()?;
                if shown {
                    writeln!(self.err, "{}", ran.verbose_line())?;
                }
                if let Some(line) = ran.notice_line() {
                    writeln!(self.err, "warning: {line}")?;
                }
                if let Some(message) = &ran.system_message {
                    writeln!(self.err, "hook: {message}")?;
                }
            }
            // A skill that broke while the run went on is reported like one broken at
            // start.
            Event::SkillsReloaded { warnings, .. } if !warnings.is_empty() => {
                self.end_line()?;
                for warning in warnings {
                    writeln!(self.err, "warning: {warning}")?;
                }
            }
            Event::Compacted { .. } => {
                self.end_line()?;
                let line = event.compaction_line().unwrap_or_default();
                writeln!(self.err, "note: {line}")?;
            }
            Event::Usage { session, .. } if shown => {
                let est = if session.estimated {
                    " (estimated)"
                } else {
                    ""
                };
                let cost = session.cost.map(|c| format!(", {c}")).unwrap_or_default();
                writeln!(
                    self.err,
                    "  tokens: {} in, {} out{cost}{est}",
                    session.input_tokens, session.output_tokens
                )?;
            }
            _ => {}
        }
        self.err.flush()
    }

    fn finish_text_turn(&mut self, report: &TurnReport, final_text: &str) -> io::Result<()> {
        match self.delivery {
            TextDelivery::Stream => self.end_line()?,
            TextDelivery::FinalOnly => {
                let final_text = match &mut self.answer {
                    AnswerRender::Raw => final_text.to_string(),
                    AnswerRender::Rendered(render) => render(final_text),
                };
                if !final_text.is_empty() {
                    self.out.write_all(final_text.as_bytes())?;
                    if !final_text.ends_with('\n') {
                        self.out.write_all(b"\n")?;
                    }
                    self.out.flush()?;
                }
            }
        }
        match &report.outcome {
            TurnOutcome::Completed => {}
            TurnOutcome::Interrupted => writeln!(self.err, "error: interrupted")?,
            TurnOutcome::MaxTurnsReached { limit } => writeln!(
                self.err,
                "error: stopped after {limit} model requests without a final answer; raise --max-turns to allow more"
            )?,
            // The agent's warning event already said it.
            TurnOutcome::Truncated { .. } => {}
            TurnOutcome::Failed { message, .. } => writeln!(self.err, "error: {message}")?,
            TurnOutcome::LimitReached { limit } => {
                writeln!(self.err, "error: {}", limit.describe())?
            }
        }
        self.err.flush()
    }

    /// The writers back (tests).
    pub fn into_inner(mut self) -> (O, E) {
        let _ = self.out.flush();
        let _ = self.err.flush();
        (
            self.out.into_inner().into_inner(),
            self.err.into_inner().into_inner(),
        )
    }
}

/// One line saying why a call was denied without asking.
pub fn describe_denial(request: &ApprovalRequestKind, reason: &AutoDenyReason) -> String {
    let what = match request {
        ApprovalRequestKind::Command { command, .. } => format!("command `{command}`"),
        ApprovalRequestKind::Edit { .. } => {
            format!("edit of {}", request.shown_path().unwrap_or_default())
        }
        ApprovalRequestKind::ReadOutside { .. } | ApprovalRequestKind::Read { .. } => {
            format!("reading {}", request.shown_path().unwrap_or_default())
        }
        ApprovalRequestKind::Mcp { server, tool, .. } => {
            format!("MCP tool `{tool}` of server `{server}`")
        }
        ApprovalRequestKind::Fetch { domain, .. } => format!("fetching from {domain}"),
        ApprovalRequestKind::Search { backend, .. } => {
            format!("searching the web through {backend}")
        }
        ApprovalRequestKind::Plan { file, .. } => format!("the plan in {}", file.display()),
    };
    match reason {
        AutoDenyReason::Rule { rule, source } => {
            format!("{what} is refused by the rule `deny {rule}` ({source})")
        }
        AutoDenyReason::NobodyToAsk {
            because: Some(AskBecause::Rule { rule, source }),
        } => format!(
            "{what} needs a person: the rule `ask {rule}` ({source}) asks every time, in every mode"
        ),
        AutoDenyReason::NobodyToAsk {
            because:
                Some(AskBecause::Destructive {
                    what: harm,
                    exact_rule,
                }),
        } => format!(
            "{what} needs a person: {harm}; allow it unattended only with the exact rule `{exact_rule}`"
        ),
        AutoDenyReason::NobodyToAsk {
            because:
                Some(
                    AskBecause::Opaque { why }
                    | AskBecause::Unconfined { why }
                    | AskBecause::Hook { why },
                ),
        } => format!("{what} needs a person: {why}"),
        AutoDenyReason::NobodyToAsk { because: None } => describe_request(request),
        AutoDenyReason::PlanMode { why } => format!("{what} is refused in plan mode: {why}"),
    }
}

/// One line describing what an approval request was about.
pub fn describe_request(request: &ApprovalRequestKind) -> String {
    match request {
        ApprovalRequestKind::Command { command, .. } => {
            format!(
                "command `{command}` needs approval; allow commands with --approval-mode full-auto"
            )
        }
        ApprovalRequestKind::Edit {
            location: Location::Inside,
            ..
        } => format!(
            "edit of {} needs approval; allow edits with --approval-mode auto-edit",
            request.shown_path().unwrap_or_default()
        ),
        ApprovalRequestKind::Edit { .. } => format!(
            "edit of {} (outside the project) needs approval; allow it with --approval-mode full-auto",
            request.shown_path().unwrap_or_default()
        ),
        ApprovalRequestKind::ReadOutside { .. } => format!(
            "reading {} (outside the project) needs approval; allow it with --approval-mode full-auto",
            request.shown_path().unwrap_or_default()
        ),
        ApprovalRequestKind::Read { .. } => format!(
            "reading {} needs approval (a permission rule asks about it)",
            request.shown_path().unwrap_or_default()
        ),
        ApprovalRequestKind::Mcp { server, tool, .. } => format!(
            "MCP tool `{tool}` of server `{server}` needs approval; allow it with the rule              `mcp__{server}` (the whole server) or --approval-mode full-auto"
        ),
        ApprovalRequestKind::Fetch { domain, .. } => format!(
            "fetching from {domain} needs approval; allow the host with the rule `web_fetch({domain})`"
        ),
        ApprovalRequestKind::Search { .. } => {
            "searching the web needs approval; allow it with the rule `web_search`".to_string()
        }
        ApprovalRequestKind::Plan { file, .. } => format!(
            "the plan in {} needs a person's approval; approve it in an interactive session",
            file.display()
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render_all(format: OutputFormat, events: &[Event]) -> (String, String) {
        let mut r = HeadlessRenderer::new(
            format,
            TextDelivery::Stream,
            Activity::Shown,
            Vec::new(),
            Vec::new(),
        );
        for e in events {
            r.render(e).unwrap();
        }
        let (o, e) = r.into_inner();
        (String::from_utf8(o).unwrap(), String::from_utf8(e).unwrap())
    }

    #[test]
    fn listings_are_never_written_in_any_format() {
        let listings = [
            Event::SkillList(crate::protocol::SkillListing {
                skills: Vec::new(),
                shadowed: Vec::new(),
                invalid: Vec::new(),
                warnings: 0,
                index_used: 0,
                index_budget: 8_000,
            }),
            Event::McpServerList {
                servers: Vec::new(),
            },
            Event::SlashCommands(crate::protocol::SlashCommands::default()),
        ];
        for format in [
            OutputFormat::Text,
            OutputFormat::Json,
            OutputFormat::StreamJson,
        ] {
            assert_eq!(
                render_all(format, &listings),
                (String::new(), String::new()),
                "{format:?}"
            );
        }
    }

    fn turn() -> Vec<Event> {
        vec![
            Event::TurnStarted { text: "hi".into() },
            Event::TextDelta { text: "Hel".into() },
            Event::TextDelta { text: "lo".into() },
            Event::ToolCallBegin {
                call_id: "c1".into(),
                name: "read_file".into(),
                summary: "a.rs".into(),
                locations: Vec::new(),
            },
            Event::ToolCallEnd {
                call_id: "c1".into(),
                name: "read_file".into(),
                status: ToolStatus::Ok,
                summary: "1 line".into(),
                diff: None,
                change: None,
            },
            Event::TurnComplete {
                outcome: TurnOutcome::Completed,
                final_text: "Hello".into(),
                usage: Usage {
                    input_tokens: 5,
                    output_tokens: 2,
                    ..Default::default()
                },
                requests: 2,
            },
        ]
    }

    #[test]
    fn text_streams_answer_to_stdout_and_activity_to_stderr() {
        let (out, err) = render_all(OutputFormat::Text, &turn());
        assert_eq!(out, "Hello\n");
        assert!(
            err.contains("→ read_file a.rs") && err.contains("✓ 1 line"),
            "{err}"
        );
    }

    #[test]
    fn json_is_one_object_with_the_documented_fields() {
        let (out, _) = render_all(OutputFormat::Json, &turn());
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines.len(), 1);
        let v: serde_json::Value = serde_json::from_str(lines[0]).unwrap();
        assert_eq!(v["schema_version"], SCHEMA_VERSION);
        assert_eq!(v["result"], "Hello");
        assert_eq!(v["is_error"], false);
        assert_eq!(v["turns"], 2);
        assert_eq!(v["usage"]["input_tokens"], 5);
        assert!(v["duration_ms"].is_u64());
    }

    #[test]
    fn stream_json_starts_with_schema_version_and_ends_with_result() {
        let (out, _) = render_all(OutputFormat::StreamJson, &turn());
        let values: Vec<serde_json::Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(values[0]["schema_version"], SCHEMA_VERSION);
        assert_eq!(values[2]["type"], "text_delta");
        assert_eq!(values.last().unwrap()["type"], "result");
    }

    const HOSTILE: &str = "\x1b]0;PWNED\x07\x1b[?1049h\x1b[?25l\u{9b}31m";

    fn hostile_turn() -> Vec<Event> {
        vec![
            Event::TurnStarted { text: "hi".into() },
            Event::TextDelta {
                text: format!("a{HOSTILE}"),
            },
            Event::ToolCallBegin {
                call_id: "c1".into(),
                name: "read_file".into(),
                summary: format!("x{HOSTILE}"),
                locations: Vec::new(),
            },
            Event::ToolCallEnd {
                call_id: "c1".into(),
                name: "read_file".into(),
                status: ToolStatus::Error,
                summary: format!("bad{HOSTILE}\rhidden"),
                diff: None,
                change: None,
            },
            Event::Warning {
                message: format!("w{HOSTILE}"),
            },
            Event::TurnComplete {
                outcome: TurnOutcome::Failed {
                    kind: ErrorKind::Server,
                    message: format!("e{HOSTILE}"),
                },
                final_text: format!("final{HOSTILE}").into(),
                usage: Usage::default(),
                requests: 1,
            },
        ]
    }

    fn assert_no_raw_controls(bytes: &str) {
        for bad in ['\x1b', '\x07', '\u{9b}'] {
            assert!(!bytes.contains(bad), "{bad:?} in {bytes:?}");
        }
    }

    #[test]
    fn text_output_shows_control_characters_instead_of_obeying_them() {
        let (out, err) = render_all(OutputFormat::Text, &hostile_turn());
        assert_no_raw_controls(&out);
        assert_no_raw_controls(&err);
        assert!(
            out.contains("a^[]0;PWNED^G^[[?1049h^[[?25l<U+009B>31m"),
            "{out}"
        );
        for line in [
            "→ read_file x^[]0;PWNED",
            "✗ read_file: bad^[",
            "warning: w^[",
            "error: e^[",
        ] {
            assert!(err.contains(line), "{line} not in {err}");
        }
        assert!(err.contains("^Mhidden"), "a lone CR is shown: {err}");
    }

    #[test]
    fn json_output_escapes_control_characters_and_keeps_the_text() {
        for format in [OutputFormat::Json, OutputFormat::StreamJson] {
            let (out, _) = render_all(format, &hostile_turn());
            assert_no_raw_controls(&out);
            let last: serde_json::Value =
                serde_json::from_str(out.lines().last().unwrap()).unwrap();
            assert_eq!(last["result"], format!("final{HOSTILE}"));
            assert_eq!(last["error"]["message"], format!("e{HOSTILE}"));
        }
    }

    #[test]
    fn a_long_json_result_written_in_parts_is_escaped_and_kept_whole() {
        // Longer than the serializer's buffer many times over, with DEL, C1 and
        // multi-byte characters wherever the parts happen to be cut.
        let unit = format!("{HOSTILE}\u{7f}é字 text ");
        let long = unit.repeat(4 * JSON_BUFFER / unit.len() + 3);
        let events = [Event::TurnComplete {
            outcome: TurnOutcome::Completed,
            final_text: long.clone().into(),
            usage: Usage::default(),
            requests: 1,
        }];
        for format in [OutputFormat::Json, OutputFormat::StreamJson] {
            let (out, _) = render_all(format, &events);
            assert_no_raw_controls(&out);
            assert!(!out.contains('\u{7f}'));
            let last: serde_json::Value =
                serde_json::from_str(out.lines().last().unwrap()).unwrap();
            assert_eq!(last["result"], long);
        }
    }

    #[test]
    fn failures_carry_their_kind() {
        let events = [Event::TurnComplete {
            outcome: TurnOutcome::Failed {
                kind: ErrorKind::Auth,
                message: "401 from x".into(),
            },
            final_text: Default::default(),
            usage: Usage::default(),
            requests: 1,
        }];
        let (out, _) = render_all(OutputFormat::Json, &events);
        let v: serde_json::Value = serde_json::from_str(out.trim()).unwrap();
        assert_eq!(v["is_error"], true);
        assert_eq!(v["error"]["kind"], "auth");
        let (_, err) = render_all(OutputFormat::Text, &events);
        assert!(err.contains("error: 401 from x"));
    }

    fn hook_ran(result: crate::protocol::HookResult, message: Option<&str>) -> Event {
        Event::HookRan(Box::new(crate::protocol::HookRan {
            event: crate::protocol::HookEvent::PreToolUse,
            command: "/h/g.sh".into(),
            origin: crate::protocol::HookOrigin::UserConfig,
            origin_path: "/h/config.toml".into(),
            tool: Some("bash".into()),
            result,
            keep_going: crate::protocol::HookKeepGoing::Yes,
            system_message: message.map(str::to_string),
            elapsed_ms: 3,
        }))
    }

    #[test]
    fn hook_runs_are_listed_with_v_and_blocks_always_and_stream_json_has_a_hook_line() {
        use crate::protocol::HookResult;
        let plain = hook_ran(HookResult::Answered, Some("formatted \u{1b}[2Jit"));
        let blocked = hook_ran(
            HookResult::Blocked {
                reason: "no rm".into(),
            },
            None,
        );
        let (_, err) = render_all(OutputFormat::Text, &[plain.clone(), blocked.clone()]);
        assert!(
            err.contains("hook PreToolUse bash `/h/g.sh`: ok (3 ms)"),
            "{err}"
        );
        assert!(err.contains("hook: formatted"), "{err}");
        assert!(!err.contains('\u{1b}'), "{err:?}");
        assert!(
            err.contains("warning: hook `/h/g.sh` blocked bash: no rm"),
            "{err}"
        );
        let mut quiet = HeadlessRenderer::new(
            OutputFormat::Text,
            TextDelivery::FinalOnly,
            Activity::Hidden,
            Vec::new(),
            Vec::new(),
        );
        quiet.render(&plain).unwrap();
        quiet.render(&blocked).unwrap();
        let (_, err) = quiet.into_inner();
        let err = String::from_utf8(err).unwrap();
        assert!(!err.contains("ok (3 ms)"), "{err}");
        assert!(err.contains("blocked bash: no rm"), "{err}");
        let (out, _) = render_all(OutputFormat::StreamJson, &[blocked]);
        let line: serde_json::Value = serde_json::from_str(out.lines().nth(1).unwrap()).unwrap();
        assert_eq!(line["type"], "hook");
        assert_eq!(line["event"], "PreToolUse");
        assert_eq!(line["result"]["kind"], "blocked");
        assert_eq!(line["result"]["reason"], "no rm");
        assert_eq!(line["elapsed_ms"], 3);
    }
}
