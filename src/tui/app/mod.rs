//! The TUI's state machine, with no terminal attached: it takes agent [`Event`]s, key
//! presses and pastes, and produces [`Op`]s for the agent, finished lines for the
//! scrollback, and a drawing of the live area. The event loop feeds it and writes what
//! it produces; tests drive it directly and draw it on a `TestBackend`.
//!
//! It owns the meaning of keys (Esc interrupts, Ctrl+C twice exits, ...) and of routed
//! input (built-ins shown locally, prompts and skills sent as user input). It knows
//! nothing about how bytes reach the terminal.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

mod input;

use super::StartView;
use super::approval::ApprovalOverlay;
use super::cells::{HistoryCell, NoticeKind, SPINNER, ToolCell, outcome_notice, sub_agent_end};
use super::composer::{Composer, History};
use super::history_search::HistorySearch;
use super::mention_popup::MentionPopup;
use super::picker::SessionPicker;
use super::popup::SlashPopup;
use super::resume::{NO_SESSIONS, resumed_cells};
use super::status::{SessionStatus, StatusView, TurnState, display_dir, render_status};
use super::stream::{Chunk, LiveTurn};
use super::transcript::Transcript;
use super::views;
use super::wrap::wrap_lines;
use crate::agent::SessionInfo;
use crate::protocol::{AutoDenyReason, Event, Op, ToolStatus, TurnOutcome, Usage};
use crate::skills::active::LoadedSkills;

/// Two Ctrl+C within this window exit.
const DOUBLE_PRESS: Duration = Duration::from_millis(2000);
/// Spinner frame length (10 fps).
pub const FRAME: Duration = Duration::from_millis(100);
/// Rows of live answer text shown at most (the rest is committed as it completes).
const LIVE_MAX_ROWS: usize = 12;

/// Where the session is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lifecycle {
    /// Running.
    Active,
    /// `Op::Shutdown` was sent; waiting for `ShutdownComplete`.
    ShuttingDown,
    /// Done: the session usage to report.
    Finished(Usage),
}

/// Something the event loop must do for the app.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Nothing.
    None,
    /// Open the draft in `$EDITOR`.
    OpenEditor,
}

/// What the app hands to the event loop.
#[derive(Debug, Default)]
struct Outbox {
    ops: Vec<Op>,
    lines: Vec<Line<'static>>,
    committed_any: bool,
}

/// The TUI's state.
#[derive(Debug)]
pub struct App {
    catalog: crate::skills::SharedCatalog,
    mcp: crate::mcp::McpServers,
    index_budget: usize,
    loaded_skills: LoadedSkills,
    status: SessionStatus,
    turn: TurnState,
    turn_started: Option<Instant>,
    composer: Composer,
    popup: Option<SlashPopup>,
    /// The `@` picker, while the word at the cursor is a mention.
    mention: Option<MentionPopup>,
    /// The mention (where its `@` stands) whose picker Esc closed.
    mention_dismissed: Option<usize>,
    /// The project's files for the `@` picker, indexed from its first use.
    files: Option<crate::mentions::FileIndex>,
    workdir: std::path::PathBuf,
    /// Woken when background work (the file index) has something to show.
    waker: Arc<tokio::sync::Notify>,
    approvals: ApprovalOverlay,
    /// The saved sessions to choose from, while `/resume` shows them.
    picker: Option<SessionPicker>,
    /// Ctrl+R's search through the input history, in the composer's place.
    search: Option<HistorySearch>,
    live: LiveTurn,
    /// Inputs sent while a turn ran, as typed, waiting for their `TurnStarted`.
    queued: VecDeque<String>,
    out: Outbox,
    /// The conversation, kept only in alternate-screen mode.
    transcript: Option<Transcript>,
    lifecycle: Lifecycle,
    ctrl_c_at: Option<Instant>,
    /// A switch to full-auto waiting for the user's yes, with its question.
    mode_confirm: Option<String>,
}

/// Where finished cells live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellHistory {
    /// In the terminal's own scrollback (inline mode).
    Scrollback,
    /// In a transcript the app keeps and redraws (alternate screen).
    Transcript,
}

impl App {
    /// A new app for this session. The alternate screen keeps a transcript to redraw
    /// from; inline mode leaves finished cells to the terminal's scrollback.
    pub fn new(info: &SessionInfo, cells: CellHistory) -> App {
        let user_home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        let status = SessionStatus {
            model: info.model.clone(),
            workdir: display_dir(&info.workdir, user_home.as_deref()),
            context_window: info.context_window,
            context_tokens: 0,
            usage: Usage::default(),
            skills: info.catalog.current().skills().len(),
            approval_mode: info.approval_mode,
        };
        let history = History::load(&info.home.join("history"));
        let mut app = App {
            catalog: info.catalog.clone(),
            mcp: info.mcp.clone(),
            index_budget: info.index_budget,
            loaded_skills: info.loaded_skills.clone(),
            status,
            turn: TurnState::Idle,
            turn_started: None,
            composer: Composer::new(history),
            popup: None,
            mention: None,
            mention_dismissed: None,
            files: None,
            workdir: info.workdir.clone(),
            waker: Arc::new(tokio::sync::Notify::new()),
            approvals: ApprovalOverlay::default(),
            picker: None,
            search: None,
            live: LiveTurn::default(),
            queued: VecDeque::new(),
            out: Outbox::default(),
            transcript: match cells {
                CellHistory::Transcript => Some(Transcript::default()),
                CellHistory::Scrollback => None,
            },
            lifecycle: Lifecycle::Active,
            ctrl_c_at: None,
            mode_confirm: None,
        };
        app.commit_cell(views::welcome(
            &app.status,
            info.approval_mode,
            info.mcp.usable().len(),
        ));
        for warning in &info.startup_warnings {
            app.commit_notice(NoticeKind::Warning, warning);
        }
        app
    }

    /// Shows what the TUI starts with: for the resume picker, asks for the sessions.
    pub fn start(&mut self, view: StartView) {
        match view {
            StartView::Conversation => {}
            StartView::ResumePicker => self.out.ops.push(Op::ListSessions),
        }
    }

    // ----- outputs -------------------------------------------------------------------

    /// Ops to send to the agent, in order.
    pub fn take_ops(&mut self) -> Vec<Op> {
        std::mem::take(&mut self.out.ops)
    }

    /// Finished lines for the scrollback (inline mode), in order.
    pub fn take_lines(&mut self) -> Vec<Line<'static>> {
        std::mem::take(&mut self.out.lines)
    }

    /// What the status line shows (tests).
    #[cfg(test)]
    pub(super) fn status(&self) -> &SessionStatus {
        &self.status
    }

    /// Where the session is.
    pub fn lifecycle(&self) -> Lifecycle {
        self.lifecycle
    }

    /// The session usage known so far.
    pub fn usage(&self) -> Usage {
        self.status.usage
    }

    /// True while something animates (a turn runs): the loop ticks at [`FRAME`].
    pub fn animating(&self) -> bool {
        !matches!(self.turn, TurnState::Idle | TurnState::WaitingApproval)
    }

    /// When the app needs waking up besides animation (the Ctrl+C hint expiring).
    pub fn deadline(&self) -> Option<Instant> {
        self.ctrl_c_at.map(|t| t + DOUBLE_PRESS)
    }

    /// Time passed: expires the Ctrl+C hint.
    pub fn tick(&mut self, now: Instant) {
        if self.ctrl_c_at.is_some_and(|t| now >= t + DOUBLE_PRESS) {
            self.ctrl_c_at = None;
        }
    }

    /// The draft with large pastes in full (for `$EDITOR`).
    pub fn draft(&self) -> String {
        self.composer.full_text()
    }

    /// Replaces the draft (after `$EDITOR`).
    pub fn set_draft(&mut self, text: &str) {
        self.composer.set_text(text.trim_end_matches('\n'));
        self.refresh_popup();
    }

    /// Shows a notice (used by the event loop for its own problems).
    pub fn notice(&mut self, kind: NoticeKind, message: &str) {
        self.commit_notice(kind, message);
    }

    fn push_lines(&mut self, lines: Vec<Line<'static>>) {
        match &mut self.transcript {
            Some(t) => t.push(lines),
            None => self.out.lines.extend(lines),
        }
    }

    fn commit_cell(&mut self, lines: Vec<Line<'static>>) {
        if lines.is_empty() {
            return;
        }
        let mut all = Vec::with_capacity(lines.len() + 1);
        if self.out.committed_any {
            all.push(Line::default());
        }
        all.extend(lines);
        self.out.committed_any = true;
        self.push_lines(all);
    }

    fn commit_chunk(&mut self, chunk: Chunk) {
        if chunk.lines.is_empty() {
            return;
        }
        if chunk.starts_cell {
            self.commit_cell(chunk.lines);
        } else {
            self.push_lines(chunk.lines);
        }
    }

    fn commit_notice(&mut self, kind: NoticeKind, message: &str) {
        let cell = HistoryCell::Notice {
            kind,
            message: message.to_string(),
        };
        self.commit_cell(cell.lines());
    }

    /// Commits the answer and reasoning streamed so far.
    fn flush_stream(&mut self) {
        if let Some(cell) = self.live.finish_reasoning() {
            self.commit_cell(cell.lines());
        }
        let chunk = self.live.finish_text();
        self.commit_chunk(chunk);
    }

    // ----- agent events --------------------------------------------------------------

    /// Shows what a forked skill's sub-agent does: its start, each tool call and its
    /// end. Its text is not shown: only its final answer returns to the conversation.
    fn on_sub_agent(&mut self, skill: &str, event: Event) {
        match event {
            Event::TurnStarted { .. } => {
                self.flush_stream();
                self.commit_notice(NoticeKind::Info, &format!("sub-agent `{skill}` is working"));
            }
            Event::ToolCallBegin { name, summary, .. } => {
                self.turn = TurnState::RunningTool {
                    name: format!("{skill} › {name}"),
                };
                self.commit_notice(NoticeKind::Info, &format!("↳ {skill}: {name} {summary}"));
            }
            Event::ToolCallEnd {
                name,
                status: ToolStatus::Error | ToolStatus::Denied,
                summary,
                ..
            } => {
                let first = summary.lines().next().unwrap_or("");
                self.commit_notice(
                    NoticeKind::Warning,
                    &format!("↳ {skill}: {name} failed: {first}"),
                );
            }
            Event::TurnComplete { outcome, .. } => {
                let how = sub_agent_end(outcome);
                self.commit_notice(NoticeKind::Info, &format!("sub-agent `{skill}` {how}"));
                self.turn = TurnState::Thinking;
            }
            _ => {}
        }
    }

    /// Applies one agent event.
    pub fn on_event(&mut self, event: Event, now: Instant) {
        match event {
            Event::SessionConfigured {
                model,
                skills,
                context_window,
                ..
            } => {
                self.status.model = model;
                self.status.skills = skills;
                self.status.context_window = context_window.or(self.status.context_window);
            }
            Event::TurnStarted { text } => {
                let shown = self.queued.pop_front().unwrap_or(text);
                self.commit_cell(HistoryCell::User { text: shown }.lines());
                self.turn = TurnState::Thinking;
                self.turn_started = Some(now);
            }
            Event::TextDelta { text } => {
                if let Some(cell) = self.live.finish_reasoning() {
                    self.commit_cell(cell.lines());
                }
                let chunk = self.live.push_text(&text);
                self.commit_chunk(chunk);
                if !matches!(self.turn, TurnState::WaitingApproval) {
                    self.turn = TurnState::Responding;
                }
            }
            Event::ReasoningDelta { text } => self.live.push_reasoning(&text),
            Event::Retrying {
                attempt,
                delay_ms,
                reason,
            } => {
                let printed = self.live.discard_text();
                let _ = self.live.finish_reasoning();
                let secs = delay_ms as f64 / 1000.0;
                let withdrawn = if printed {
                    "; the answer above was cut off and starts again"
                } else {
                    ""
                };
                self.commit_notice(
                    NoticeKind::Warning,
                    &format!("{reason}; retrying (attempt {attempt}) in {secs:.1}s{withdrawn}"),
                );
            }
            Event::RequestStarted { .. } => {
                if self.live.running_tool().is_none() && self.turn != TurnState::WaitingApproval {
                    self.turn = TurnState::Thinking;
                }
            }
            Event::ToolCallBegin {
                call_id,
                name,
                summary,
            } => {
                self.flush_stream();
                self.turn = TurnState::RunningTool { name: name.clone() };
                self.live
                    .begin_tool(ToolCell::running(&call_id, &name, &summary));
            }
            Event::ToolOutputDelta { call_id, text } => self.live.tool_output(&call_id, &text),
            Event::ToolCallEnd {
                call_id,
                name,
                status,
                summary,
                diff,
            } => {
                self.flush_stream();
                let tool = self.live.end_tool(&call_id, &name, status, &summary, diff);
                self.commit_cell(HistoryCell::Tool(tool).lines());
                if self.turn != TurnState::WaitingApproval {
                    self.turn = match self.live.running_tool() {
                        Some(name) => TurnState::RunningTool {
                            name: name.to_string(),
                        },
                        None => TurnState::Thinking,
                    };
                }
            }
            Event::ApprovalRequest(ask) => {
                self.flush_stream();
                self.approvals.push(ask);
                self.turn = TurnState::WaitingApproval;
            }
            Event::SubAgent { skill, event, .. } => self.on_sub_agent(&skill, event.into_event()),
            Event::AutoDenied {
                name: tool, reason, ..
            } => self.commit_notice(
                NoticeKind::Warning,
                &match reason {
                    AutoDenyReason::NobodyToAsk { .. } => {
                        format!("`{tool}` was denied: nobody can approve it in this mode")
                    }
                    AutoDenyReason::Rule { rule, source } => {
                        format!("`{tool}` was denied by the rule `deny {rule}` ({source})")
                    }
                },
            ),
            Event::Permissions {
                rules,
                untrusted,
                project_file,
            } => self.commit_notice(
                NoticeKind::Info,
                crate::permissions::describe_list(&rules, &untrusted, &project_file).trim_end(),
            ),
            Event::PermissionRemoved { rule } => self.commit_notice(
                NoticeKind::Info,
                &format!(
                    "Removed rule {}: {} {} ({}).",
                    rule.number,
                    rule.effect.as_str(),
                    rule.rule,
                    rule.source
                ),
            ),
            Event::Usage {
                session,
                context_tokens,
                ..
            } => {
                self.status.usage = session;
                // A forked skill's usage has no context measure: keep the last one.
                if let Some(tokens) = context_tokens {
                    self.status.context_tokens = tokens;
                }
            }
            Event::Warning { message } => self.commit_notice(NoticeKind::Warning, &message),
            Event::TurnComplete { outcome, .. } => self.turn_complete(outcome),
            ref compacted @ Event::Compacted { tokens_after, .. } => {
                self.status.context_tokens = tokens_after;
                let line = compacted.compaction_line().unwrap_or_default();
                self.commit_notice(NoticeKind::Info, &line);
            }
            Event::SessionResumed(resumed) => {
                self.flush_stream();
                for cell in resumed_cells(&resumed) {
                    self.commit_cell(cell);
                }
                self.status.model = resumed.model;
                self.status.context_tokens = 0;
            }
            Event::SessionList { sessions } => match SessionPicker::new(sessions) {
                Some(picker) => self.picker = Some(picker),
                None => self.commit_notice(NoticeKind::Info, NO_SESSIONS),
            },
            Event::ContextWindow { tokens, source } => {
                self.status.context_window = Some(tokens);
                tracing::info!("context window {tokens} from {}", source.describe());
            }
            Event::Exported { path } => self.commit_notice(
                NoticeKind::Info,
                &format!("Exported the session to {}.", path.display()),
            ),
            Event::ApprovalModeChanged { mode } => {
                self.status.approval_mode = mode;
                self.commit_notice(
                    NoticeKind::Info,
                    &format!("Approval mode: {}.", mode_words(mode)),
                );
            }
            ref reloaded @ Event::SkillsReloaded {
                skills,
                ref warnings,
                ..
            } => {
                self.status.skills = skills;
                for warning in warnings {
                    self.commit_notice(NoticeKind::Warning, warning);
                }
                if let Some(line) = reloaded.reload_line() {
                    self.commit_notice(NoticeKind::Info, &line);
                }
            }
            Event::Undone { outcome } => {
                let kind = match outcome {
                    crate::protocol::UndoOutcome::Refused { .. } => NoticeKind::Error,
                    _ => NoticeKind::Info,
                };
                self.commit_notice(kind, &outcome.describe());
            }
            Event::SessionDiff { diff } => match diff.as_deref() {
                None | Some("") => self.commit_notice(
                    NoticeKind::Info,
                    "No changes: this session has not changed a file of the project.",
                ),
                Some(diff) => self.commit_cell(super::cells::diff_lines(diff, usize::MAX)),
            },
            Event::ConversationCleared => {
                self.status.context_tokens = 0;
                self.commit_notice(NoticeKind::Info, "Started a new conversation.");
            }
            Event::ModelChanged { model } => {
                self.commit_notice(NoticeKind::Info, &format!("Model switched to {model}."));
                self.status.model = model;
            }
            Event::ShutdownComplete { usage } => {
                self.flush_stream();
                self.lifecycle = Lifecycle::Finished(usage);
            }
        }
    }

    fn turn_complete(&mut self, outcome: TurnOutcome) {
        self.flush_stream();
        for tool in self.live.abandon_tools() {
            self.commit_cell(HistoryCell::Tool(tool).lines());
        }
        self.approvals.clear();
        if let Some(notice) = outcome_notice(outcome) {
            self.commit_cell(notice.lines());
        }
        self.turn = if self.lifecycle == Lifecycle::Active {
            TurnState::Idle
        } else {
            TurnState::Exiting
        };
        self.turn_started = None;
    }

    // ----- input ---------------------------------------------------------------------

    /// Applies pasted text (one input, never sent line by line).
    pub fn on_paste(&mut self, text: &str) {
        if self.approvals.is_active() {
            self.approvals.paste(text);
        } else if self.picker.is_none() {
            self.composer.paste(text);
            self.refresh_popup();
        }
    }

    fn refresh_popup(&mut self) {
        self.refresh_mention();
        self.popup = match self.mention {
            Some(_) => None,
            None => SlashPopup::for_draft(
                self.composer.text(),
                &self.catalog.current(),
                &self.mcp,
                self.popup.as_ref(),
            ),
        };
    }

    /// Opens, follows or closes the `@` picker for the word at the cursor; the first one
    /// starts indexing the project.
    fn refresh_mention(&mut self) {
        let typing = crate::mentions::typing_at(self.composer.text(), self.composer.cursor());
        let Some((at, query)) = typing.filter(|(at, _)| self.mention_dismissed != Some(*at)) else {
            if typing.is_none() {
                self.mention_dismissed = None;
            }
            self.mention = None;
            return;
        };
        let index = match &self.files {
            Some(index) => {
                if self.mention.is_none() {
                    index.refresh_if_stale();
                }
                index
            }
            None => {
                let waker = Arc::clone(&self.waker);
                self.files.insert(crate::mentions::FileIndex::start(
                    &self.workdir,
                    move || waker.notify_one(),
                ))
            }
        };
        match &mut self.mention {
            Some(popup) => popup.retarget(at, query, index),
            None => self.mention = Some(MentionPopup::open(at, query, index)),
        }
    }

    /// What the event loop waits on besides input and the agent: background work with
    /// something new to show.
    pub fn waker(&self) -> Arc<tokio::sync::Notify> {
        Arc::clone(&self.waker)
    }

    /// Takes in what background work published (the `@` picker's latest list); true
    /// when the screen needs drawing again.
    pub fn on_wake(&mut self) -> bool {
        match (&mut self.mention, &self.files) {
            (Some(popup), Some(index)) => popup.update(index),
            _ => false,
        }
    }

    fn busy(&self) -> bool {
        self.turn_started.is_some()
    }

    fn request_exit(&mut self) {
        if self.lifecycle == Lifecycle::Active {
            self.out.ops.push(Op::Shutdown);
            self.lifecycle = Lifecycle::ShuttingDown;
            self.turn = TurnState::Exiting;
        } else if self.lifecycle == Lifecycle::ShuttingDown {
            // Asked again while the agent winds down: leave now.
            self.lifecycle = Lifecycle::Finished(self.status.usage);
        }
    }

    // ----- drawing -------------------------------------------------------------------

    fn spinner(&self, now: Instant) -> &'static str {
        let since = self
            .turn_started
            .map_or(0, |t| now.duration_since(t).as_millis());
        SPINNER[(since / FRAME.as_millis()) as usize % SPINNER.len()]
    }

    /// Plans the live area at this width: its rows, within `max_height`.
    fn plan(&self, width: u16, max_height: u16, now: Instant) -> Plan {
        let spinner = self.spinner(now);
        let mut live = wrap_lines(&self.live.live_lines(spinner), width);
        let dim = Style::new().fg(Color::DarkGray);
        for q in self.queued.iter().filter(|_| self.busy()) {
            let first = q.lines().next().unwrap_or("");
            live.push(Line::from(vec![
                Span::styled("↳ queued: ", dim),
                Span::styled(first.to_string(), dim),
            ]));
        }
        let overlay = match (&self.picker, &self.search) {
            _ if self.approvals.is_active() => self.approvals.height(width),
            (Some(picker), _) => picker.height(),
            (None, Some(search)) => search.height(width),
            (None, None) => 0,
        };
        let composer = if overlay > 0 {
            0
        } else {
            1 + self.composer.height(width)
        };
        let popup = match (&self.mention, &self.popup, overlay) {
            (Some(m), _, 0) => m.height(),
            (None, Some(p), 0) => p.height(),
            _ => 0,
        };
        let status = 1;
        let mut budget = max_height.saturating_sub(status);
        let composer = composer.min(budget);
        budget -= composer;
        let overlay = overlay.min(budget);
        budget -= overlay;
        let popup = popup.min(budget);
        budget -= popup;
        let live_rows = live.len().min(LIVE_MAX_ROWS).min(usize::from(budget));
        let skip = live.len() - live_rows;
        live.drain(..skip);
        Plan {
            live,
            overlay,
            composer,
            popup,
            height: live_rows as u16 + overlay + composer + popup + status,
        }
    }

    /// Rows the live area wants at this width (at most `max_height`).
    pub fn desired_height(&self, width: u16, max_height: u16, now: Instant) -> u16 {
        self.plan(width, max_height, now).height
    }

    /// Draws the live area (and, in alternate-screen mode, the conversation above it)
    /// into `area`; returns where the terminal cursor goes.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, now: Instant) -> Option<Position> {
        let plan = self.plan(area.width, area.height, now);
        let mut y = area.y;
        if let Some(t) = &mut self.transcript {
            let rows = area.height.saturating_sub(plan.height);
            t.render(Rect::new(area.x, y, area.width, rows), buf);
            y += rows;
        }
        for line in &plan.live {
            line.render(Rect::new(area.x, y, area.width, 1), buf);
            y += 1;
        }
        let mut cursor = None;
        if plan.overlay > 0 {
            let overlay = Rect::new(area.x, y, area.width, plan.overlay);
            match (&mut self.picker, &self.search) {
                _ if self.approvals.is_active() => cursor = self.approvals.render(overlay, buf),
                (Some(picker), _) => picker.render(overlay, buf),
                (None, Some(search)) => cursor = search.render(overlay, buf),
                (None, None) => {}
            }
            y += plan.overlay;
        }
        if plan.composer > 0 {
            let rule = "─".repeat(usize::from(area.width));
            buf.set_string(area.x, y, rule, Style::new().fg(Color::DarkGray));
            let placeholder = if self.busy() {
                "type to queue a message · esc to interrupt"
            } else {
                "ask anything · / for commands · @ for files · ctrl+g editor"
            };
            let rows = plan.composer - 1;
            cursor =
                self.composer
                    .render(Rect::new(area.x, y + 1, area.width, rows), buf, placeholder);
            y += plan.composer;
        }
        if plan.popup > 0 {
            let rect = Rect::new(area.x, y, area.width, plan.popup);
            match (&self.mention, &self.popup) {
                (Some(mention), _) => mention.render(rect, buf),
                (None, Some(popup)) => popup.render(rect, buf),
                (None, None) => {}
            }
            y += plan.popup;
        }
        let hint = self
            .mode_confirm
            .as_deref()
            .or(self.ctrl_c_at.map(|_| "press Ctrl+C again to exit"));
        let view = StatusView {
            state: &self.turn,
            elapsed: self.turn_started.map(|t| now.duration_since(t)),
            spinner: self.spinner(now),
            hint,
        };
        if y < area.bottom() {
            render_status(Rect::new(area.x, y, area.width, 1), buf, &self.status, view);
        }
        cursor
    }
}

/// The live area's rows for one frame.
struct Plan {
    live: Vec<Line<'static>>,
    overlay: u16,
    composer: u16,
    popup: u16,
    height: u16,
}

/// An approval mode as the TUI words it.
fn mode_words(mode: crate::protocol::ApprovalMode) -> &'static str {
    match mode {
        crate::protocol::ApprovalMode::Suggest => "suggest (edits and commands ask)",
        crate::protocol::ApprovalMode::AutoEdit => {
            "auto-edit (edits in the project and read-only commands run; other commands ask)"
        }
        crate::protocol::ApprovalMode::FullAuto => "full-auto (everything runs unless a rule asks)",
    }
}
