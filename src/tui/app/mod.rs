//! The TUI's state machine, with no terminal attached: it takes agent [`Event`]s, key
//! presses and pastes, and produces [`Op`]s for the agent, finished lines for the
//! scrollback, and a drawing of the live area. The event loop feeds it and writes what
//! it produces; tests drive it directly and draw it on a `TestBackend`.
//!
//! It owns the meaning of keys (Esc interrupts, Ctrl+C twice exits, ...) and of routed
//! input (built-ins shown locally or asked of the agent, prompts and skills sent as user
//! input). `events.rs` applies agent events and `input.rs` keys and routed input, one
//! step per kind; what sits on top of the composer is one [`Overlay`], whose priority
//! order keys, pastes and drawing all follow. It knows nothing about how bytes reach
//! the terminal.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::tui::plan_view::plan_lines;
use ratatui::buffer::Buffer;
use ratatui::layout::{Position, Rect};
use ratatui::style::{Color, Style};
use ratatui::text::{Line, Span};
use ratatui::widgets::Widget;

mod events;
mod input;

use super::StartView;
use super::cells::{HistoryCell, NoticeKind, SPINNER};
use super::composer::{Composer, History};
use super::mention_popup::MentionPopup;
use super::overlay::{Layer, Overlay, Popup};
use super::popup::SlashPopup;
use super::status::{SessionStatus, StatusView, TurnState, display_dir, render_status};
use super::stream::{Chunk, LiveTurn};
use super::transcript::Transcript;
use super::views;
use super::wrap::wrap_lines;
use crate::agent::SessionInfo;
use crate::protocol::{Op, SlashCommands, Usage};

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
    /// Read the clipboard's image (Ctrl+V) and hand it to [`App::on_clipboard`].
    PasteClipboardImage,
}

/// What the app hands to the event loop.
#[derive(Debug, Default)]
struct Outbox {
    ops: Vec<Op>,
    lines: Vec<Line<'static>>,
    committed_any: bool,
    history: HistoryRedraw,
}

/// Whether the history on the terminal must be printed again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum HistoryRedraw {
    /// It is as it was.
    #[default]
    Keep,
    /// A full-height view covered it (inline mode): print it again.
    Reprint,
}

/// The TUI's state.
#[derive(Debug)]
pub struct App {
    /// The slash commands for routing and completion, as the agent last sent them.
    commands: SlashCommands,
    status: SessionStatus,
    turn: TurnState,
    turn_started: Option<Instant>,
    /// The model's plan (`update_plan`), drawn above the composer.
    plan: Option<crate::protocol::PlanUpdate>,
    /// The rows the plan may take: a third of the height the live area may have, as the
    /// last `desired_height` was told (drawing then keeps to what it planned).
    plan_room: std::cell::Cell<u16>,
    composer: Composer,
    /// What sits on top of the composer (the mode switch's question, approvals, the
    /// resume picker, the history search, the popups), in one priority order.
    overlay: Overlay,
    /// The project's files for the `@` picker, indexed from its first use.
    files: Option<crate::mentions::FileIndex>,
    workdir: std::path::PathBuf,
    /// `$HOME`, for a pasted `~/` path.
    user_home: Option<std::path::PathBuf>,
    /// Whether a pasted image becomes a chip, and how large it may be.
    images: crate::images::ImageIntake,
    /// Whether Ctrl+V already said no clipboard tool is installed (said once).
    clipboard_note: ClipboardNote,
    /// Woken when background work (the file index) has something to show.
    waker: Arc<tokio::sync::Notify>,
    live: LiveTurn,
    /// Inputs sent while a turn ran, as typed, waiting for their `TurnStarted`.
    queued: VecDeque<String>,
    out: Outbox,
    /// Every finished line of the session: drawn above the live area on the alternate
    /// screen, printed again after a resize inline.
    transcript: Transcript,
    /// The same with every tool call's whole output, for Ctrl+T's view.
    full: Transcript,
    /// Where finished lines are shown.
    cells: CellHistory,
    lifecycle: Lifecycle,
    ctrl_c_at: Option<Instant>,
    /// The note about a failed turn's messages, shown after the turn's error.
    left_out: Option<String>,
    /// When Esc was last pressed on an idle, empty composer (a second press soon after
    /// opens the rewind picker).
    esc_at: Option<Instant>,
}

/// Whether a note was shown once already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ClipboardNote {
    /// Not yet.
    NotSaid,
    /// Yes: not again.
    Said,
}

/// Where finished cells live.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CellHistory {
    /// In the terminal's own scrollback (inline mode).
    Scrollback,
    /// Drawn from the transcript above the live area (alternate screen).
    Transcript,
}

impl App {
    /// A new app for this session. Both modes keep the transcript; inline mode also
    /// hands finished lines out for the terminal's scrollback.
    pub fn new(info: &SessionInfo, cells: CellHistory) -> App {
        let user_home = std::env::var_os("HOME").map(std::path::PathBuf::from);
        let status = SessionStatus {
            model: info.model.clone(),
            workdir: display_dir(&info.workdir, user_home.as_deref()),
            context_window: info.context_window,
            context_tokens: 0,
            usage: Usage::default(),
            sub_agents: Default::default(),
            skills: info.commands.skills.len(),
            approval_mode: info.approval_mode,
            effort: None,
        };
        let history = History::load(&info.home.join("history"));
        let mut app = App {
            commands: info.commands.clone(),
            status,
            turn: TurnState::Idle,
            turn_started: None,
            plan: None,
            plan_room: std::cell::Cell::new(0),
            composer: Composer::new(history),
            overlay: Overlay::default(),
            files: None,
            workdir: info.workdir.clone(),
            user_home: user_home.clone(),
            images: info.images,
            clipboard_note: ClipboardNote::NotSaid,
            waker: Arc::new(tokio::sync::Notify::new()),
            live: LiveTurn::default(),
            queued: VecDeque::new(),
            out: Outbox::default(),
            transcript: Transcript::default(),
            full: Transcript::default(),
            cells,
            lifecycle: Lifecycle::Active,
            ctrl_c_at: None,
            esc_at: None,
            left_out: None,
        };
        app.commit_cell(views::welcome(
            &app.status,
            info.approval_mode,
            info.commands.usable_mcp_servers(),
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

    /// The terminal's width: tables in answers are laid out for it.
    pub fn set_width(&mut self, width: u16) {
        self.live.set_width(width);
    }

    /// The last `max_rows` rows of the history wrapped to `width` (inline mode prints
    /// them again after a resize).
    pub fn history_rows(&self, width: u16, max_rows: usize) -> Vec<Line<'static>> {
        self.transcript.tail_rows(width, max_rows)
    }

    /// Whether the history must be printed again (after the transcript view closed).
    pub fn take_history_redraw(&mut self) -> HistoryRedraw {
        std::mem::take(&mut self.out.history)
    }

    /// Closes Ctrl+T's view; inline, the history it covered is printed again.
    fn close_transcript(&mut self) {
        self.overlay.transcript = None;
        if self.cells == CellHistory::Scrollback {
            self.out.history = HistoryRedraw::Reprint;
        }
    }

    fn push_lines(&mut self, lines: Vec<Line<'static>>) {
        self.push_expanded(lines.clone(), lines);
    }

    /// Pushes `shown` to the history and `full` (the same with whole tool outputs) to
    /// the transcript view's.
    fn push_expanded(&mut self, shown: Vec<Line<'static>>, full: Vec<Line<'static>>) {
        if self.cells == CellHistory::Scrollback {
            self.out.lines.extend(shown.iter().cloned());
        }
        self.transcript.push(shown);
        self.full.push(full);
    }

    fn commit_cell(&mut self, lines: Vec<Line<'static>>) {
        self.commit_expanded(lines.clone(), lines);
    }

    /// Commits a cell shown as `shown`, and as `full` in the transcript view.
    fn commit_expanded(&mut self, shown: Vec<Line<'static>>, full: Vec<Line<'static>>) {
        if shown.is_empty() {
            return;
        }
        let gap = |lines: Vec<Line<'static>>, first: bool| {
            let mut all = Vec::with_capacity(lines.len() + 1);
            if !first {
                all.push(Line::default());
            }
            all.extend(lines);
            all
        };
        let first = !self.out.committed_any;
        self.out.committed_any = true;
        self.push_expanded(gap(shown, first), gap(full, first));
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

    /// Commits a thought: collapsed in the conversation, whole in Ctrl+T's view.
    fn commit_thought(&mut self, cell: &HistoryCell) {
        self.commit_expanded(cell.lines(), cell.full_lines());
    }

    /// Commits the answer and reasoning streamed so far.
    fn flush_stream(&mut self) {
        if let Some(cell) = self.live.finish_reasoning() {
            self.commit_thought(&cell);
        }
        let chunk = self.live.finish_text();
        self.commit_chunk(chunk);
    }

    // ----- input ---------------------------------------------------------------------

    /// Applies pasted text (one input, never sent line by line) to what is shown: an
    /// approval's reason, nothing under the picker, else the draft (where the path of
    /// an image file becomes an `[image #N]` chip).
    pub fn on_paste(&mut self, text: &str) {
        match self.overlay.shown() {
            Layer::Approval => self.overlay.approvals.paste(text),
            Layer::Transcript | Layer::Picker | Layer::Rewind => {}
            Layer::ModeConfirm | Layer::Search | Layer::Popup | Layer::Composer => {
                self.paste_into_draft(text);
                self.refresh_popup();
            }
        }
    }

    fn paste_into_draft(&mut self, text: &str) {
        use crate::tui::image_paste::{PastedPath, pasted_image};
        let max_bytes = match self.images {
            crate::images::ImageIntake::Accept { max_bytes } => max_bytes,
            // Still looked at, to say why it stays text; never read past the sniff.
            crate::images::ImageIntake::Refuse => crate::images::DEFAULT_MAX_IMAGE_BYTES,
        };
        let home = self.user_home.clone();
        match pasted_image(text, &self.workdir, home.as_deref(), max_bytes) {
            PastedPath::NotAnImage => self.composer.paste(text),
            PastedPath::Refused { reason } => {
                self.composer.paste(text);
                self.commit_notice(
                    NoticeKind::Warning,
                    &format!("Pasted as text, not as an image: {reason}"),
                );
            }
            PastedPath::Image { image } => match self.images {
                crate::images::ImageIntake::Accept { .. } => self.composer.attach_image(image),
                crate::images::ImageIntake::Refuse => {
                    self.composer.paste(text);
                    self.commit_notice(
                        NoticeKind::Info,
                        "Pasted as text: images are off for this model (images = false).",
                    );
                }
            },
        }
    }

    /// Ctrl+V: asks the event loop for the clipboard's image, unless images are off.
    fn paste_clipboard_image(&mut self) -> Action {
        match self.images {
            crate::images::ImageIntake::Accept { .. } => Action::PasteClipboardImage,
            crate::images::ImageIntake::Refuse => {
                self.commit_notice(
                    NoticeKind::Info,
                    "Images are off for this model (images = false): nothing was pasted.",
                );
                Action::None
            }
        }
    }

    /// The largest image the draft takes (Ctrl+V's cap); `None` when images are off.
    pub fn image_cap(&self) -> Option<u64> {
        match self.images {
            crate::images::ImageIntake::Accept { max_bytes } => Some(max_bytes),
            crate::images::ImageIntake::Refuse => None,
        }
    }

    /// What Ctrl+V found: an image becomes a chip in the draft; otherwise a note (that
    /// no tool is installed is said once a session).
    pub fn on_clipboard(&mut self, found: crate::tui::image_paste::Clipboard) {
        use crate::tui::image_paste::Clipboard;
        match found {
            Clipboard::Image { image } => {
                if self.overlay.shown() == Layer::Composer || self.overlay.shown() == Layer::Popup {
                    self.composer.attach_image(image);
                    self.refresh_popup();
                }
            }
            Clipboard::NoTool => {
                if self.clipboard_note == ClipboardNote::NotSaid {
                    self.clipboard_note = ClipboardNote::Said;
                    self.commit_notice(
                        NoticeKind::Info,
                        "No clipboard image: install wl-paste (Wayland) or xclip (X11), or paste the image file's path.",
                    );
                }
            }
            Clipboard::NoImage { reason } => {
                self.commit_notice(NoticeKind::Info, &format!("No clipboard image ({reason})."));
            }
        }
    }

    /// Opens, follows or closes the popup for the draft: the `@` picker while the word
    /// at the cursor is a mention, else the `/` popup while a command name is typed.
    fn refresh_popup(&mut self) {
        let (mention, slash) = match self.overlay.popup.take() {
            Some(Popup::Mention(mention)) => (Some(mention), None),
            Some(Popup::Slash(slash)) => (None, Some(slash)),
            None => (None, None),
        };
        self.overlay.popup = match self.follow_mention(mention) {
            Some(mention) => Some(Popup::Mention(mention)),
            None => SlashPopup::for_draft(self.composer.text(), &self.commands, slash.as_ref())
                .map(Popup::Slash),
        };
    }

    /// The `@` picker for the word at the cursor: `open` following it, a new one (the
    /// first starts indexing the project), or none.
    fn follow_mention(&mut self, open: Option<MentionPopup>) -> Option<MentionPopup> {
        let typing = crate::mentions::typing_at(self.composer.text(), self.composer.cursor());
        let dismissed = self.overlay.mention_dismissed;
        let Some((at, query)) = typing.filter(|(at, _)| dismissed != Some(*at)) else {
            if typing.is_none() {
                self.overlay.mention_dismissed = None;
            }
            return None;
        };
        let index = match &self.files {
            Some(index) => {
                if open.is_none() {
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
        Some(match open {
            Some(mut popup) => {
                popup.retarget(at, query, index);
                popup
            }
            None => MentionPopup::open(at, query, index),
        })
    }

    /// What the event loop waits on besides input and the agent: background work with
    /// something new to show.
    pub fn waker(&self) -> Arc<tokio::sync::Notify> {
        Arc::clone(&self.waker)
    }

    /// Takes in what background work published (the `@` picker's latest list); true
    /// when the screen needs drawing again.
    pub fn on_wake(&mut self) -> bool {
        match (self.overlay.mention_mut(), &self.files) {
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
        if self.overlay.shown() == Layer::Transcript {
            return Plan {
                live: Vec::new(),
                overlay: max_height,
                composer: 0,
                popup: 0,
                height: max_height,
            };
        }
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
        let overlay = self.overlay.covering_height(width);
        let composer = if overlay > 0 {
            0
        } else {
            1 + self.composer.height(width)
        };
        let popup = self.overlay.popup_height();
        let status = 1;
        let mut budget = max_height.saturating_sub(status);
        let composer = composer.min(budget);
        budget -= composer;
        let overlay = overlay.min(budget);
        budget -= overlay;
        let popup = popup.min(budget);
        budget -= popup;
        // The plan first (a third of the height at most: one line when that is too few).
        let plan_lines = match (&self.plan, overlay) {
            (Some(plan), 0) => plan_lines(plan, width, budget.min(self.plan_room.get()).max(1)),
            _ => Vec::new(),
        };
        let plan_rows = (plan_lines.len() as u16).min(budget);
        budget -= plan_rows;
        let live_rows = live.len().min(LIVE_MAX_ROWS).min(usize::from(budget));
        let skip = live.len() - live_rows;
        live.drain(..skip);
        live.extend(plan_lines.into_iter().take(usize::from(plan_rows)));
        let live_rows = live.len();
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
        self.plan_room.set(max_height / 3);
        self.plan(width, max_height, now).height
    }

    /// Draws the live area (and, in alternate-screen mode, the conversation above it)
    /// into `area`; returns where the terminal cursor goes.
    pub fn render(&mut self, area: Rect, buf: &mut Buffer, now: Instant) -> Option<Position> {
        if let Some(view) = &mut self.overlay.transcript {
            view.render(&self.full, area, buf);
            return None;
        }
        let plan = self.plan(area.width, area.height, now);
        let mut y = area.y;
        if self.cells == CellHistory::Transcript {
            let rows = area.height.saturating_sub(plan.height);
            self.transcript
                .render(Rect::new(area.x, y, area.width, rows), buf);
            y += rows;
        }
        for line in &plan.live {
            line.render(Rect::new(area.x, y, area.width, 1), buf);
            y += 1;
        }
        let mut cursor = None;
        if plan.overlay > 0 {
            let overlay = Rect::new(area.x, y, area.width, plan.overlay);
            cursor = self.overlay.render_covering(overlay, buf);
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
            self.overlay.render_popup(rect, buf);
            y += plan.popup;
        }
        let hint = self
            .overlay
            .hint()
            .or(self.ctrl_c_at.map(|_| "press Ctrl+C again to exit"))
            .or(self
                .esc_at
                .map(|_| "press Esc again to rewind to an earlier message"));
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
        crate::protocol::ApprovalMode::Plan => {
            "plan (reading tools only, commands read-only in the sandbox, writes only to the plan file)"
        }
    }
}
