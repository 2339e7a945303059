//! Keys and submitted input: what each key press means (Ctrl+C, Shift+Tab, the popups,
//! the composer) and what a routed input does (built-ins shown here, prompts and skills
//! sent to the agent as ops). It draws nothing and knows nothing about the terminal.

use std::time::Instant;

use crossterm::event::{KeyCode, KeyEvent, KeyEventKind, KeyModifiers};

use super::{Action, App, CellHistory, DOUBLE_PRESS, Lifecycle, mode_words};
use crate::input::{Builtin, PermissionsCommand, Routed, route};
use crate::protocol::Op;
use crate::tui::approval::AfterAnswer;
use crate::tui::cells::{HistoryCell, NoticeKind};
use crate::tui::composer::ComposerAction;
use crate::tui::history_search::{HistorySearch, SearchAction};
use crate::tui::overlay::{Layer, Popup};
use crate::tui::picker::PickerAction;
use crate::tui::rewind::RewindAction;
use crate::tui::status::TurnState;
use crate::tui::transcript_view::{TranscriptView, ViewAction};
use crate::tui::views;

impl App {
    /// Applies a key press. Ctrl+C comes first, whatever is open; then the layer that
    /// has the keys ([`crate::tui::overlay::Overlay::focus`]) takes it.
    pub fn on_key(&mut self, key: KeyEvent, now: Instant) -> Action {
        if key.kind == KeyEventKind::Release {
            return Action::None;
        }
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        if ctrl && key.code == KeyCode::Char('c') {
            self.ctrl_c(now);
            return Action::None;
        }
        // Any other key means the next Ctrl+C is a first press again (and any key but
        // Esc, the next Esc).
        self.ctrl_c_at = None;
        let esc_armed = self.esc_at.take().filter(|_| key.code == KeyCode::Esc);
        if ctrl && key.code == KeyCode::Char('t') && self.overlay.transcript.is_none() {
            self.overlay.transcript = Some(TranscriptView::default());
            return Action::None;
        }
        if self.overlay.focus() == Layer::ModeConfirm {
            self.answer_mode_switch(key);
            return Action::None;
        }
        if key.code == KeyCode::BackTab && self.lifecycle == Lifecycle::Active {
            self.ask_mode(next_mode(self.status.approval_mode));
            return Action::None;
        }
        if self.lifecycle != Lifecycle::Active {
            if ctrl && key.code == KeyCode::Char('d') {
                self.request_exit();
            }
            return Action::None;
        }
        match self.overlay.focus() {
            Layer::Transcript => self.transcript_key(key),
            Layer::Approval => self.approval_key(key),
            Layer::Picker => self.picker_key(key),
            Layer::Rewind => self.rewind_key(key),
            Layer::Search => self.search_key(key),
            Layer::ModeConfirm | Layer::Popup | Layer::Composer => {
                return self.composer_key(key, now, esc_armed);
            }
        }
        Action::None
    }

    /// A key for Ctrl+T's transcript view.
    fn transcript_key(&mut self, key: KeyEvent) {
        let Some(view) = &mut self.overlay.transcript else {
            return;
        };
        if view.handle_key(key) == ViewAction::Close {
            self.close_transcript();
        }
    }

    /// The answer to "Full-auto? y/n": `y` switches, `n` or Esc keeps the mode, and
    /// every other key is ignored (text typed ahead is neither an answer nor a draft).
    fn answer_mode_switch(&mut self, key: KeyEvent) {
        let switch = match key.code {
            KeyCode::Char('y' | 'Y') => true,
            KeyCode::Char('n' | 'N') | KeyCode::Esc => false,
            _ => return,
        };
        self.overlay.mode_confirm = None;
        if switch {
            self.out.ops.push(Op::SetApprovalMode {
                mode: crate::protocol::ApprovalMode::FullAuto,
            });
        } else {
            let kept = mode_words(self.status.approval_mode);
            self.commit_notice(NoticeKind::Info, &format!("Approval mode kept: {kept}."));
        }
    }

    /// A key for the approval question on top.
    fn approval_key(&mut self, key: KeyEvent) {
        let Some(answer) = self.overlay.approvals.handle_key(key) else {
            return;
        };
        // "No, and stop": the interrupt goes first, so the turn ends while it waits for
        // the answer and never sends the denial to the model.
        if answer.turn == AfterAnswer::Interrupt {
            self.out.ops.push(Op::Interrupt);
        }
        self.out.ops.push(Op::Approval {
            call_id: answer.call_id,
            decision: answer.decision,
        });
        if !self.overlay.approvals.is_active() {
            self.turn = TurnState::Thinking;
        }
    }

    /// A key for the resume picker.
    fn picker_key(&mut self, key: KeyEvent) {
        let Some(picker) = &mut self.overlay.picker else {
            return;
        };
        match picker.handle_key(key) {
            PickerAction::Stay => {}
            PickerAction::Close => self.overlay.picker = None,
            PickerAction::Resume(id) => {
                self.overlay.picker = None;
                self.out.ops.push(Op::Resume { id });
            }
        }
    }

    /// A key for the rewind picker: a message chosen (and, when files would be put
    /// back, confirmed) is asked of the agent; its answer fills the composer.
    fn rewind_key(&mut self, key: KeyEvent) {
        let Some(rewind) = &mut self.overlay.rewind else {
            return;
        };
        match rewind.handle_key(key) {
            RewindAction::Stay => {}
            RewindAction::Close => self.overlay.rewind = None,
            RewindAction::Rewind(turn) => {
                self.overlay.rewind = None;
                self.out.ops.push(Op::Rewind { turn });
            }
        }
    }

    /// A key for the history search: a match taken becomes the draft.
    fn search_key(&mut self, key: KeyEvent) {
        let Some(search) = &mut self.overlay.search else {
            return;
        };
        match search.handle_key(key, self.composer.history().entries()) {
            SearchAction::Stay => {}
            SearchAction::Take(entry) => {
                self.overlay.search = None;
                if let Some(entry) = entry {
                    self.composer.set_text(&entry);
                    self.dismiss_mention_at_cursor();
                    self.refresh_popup();
                }
            }
            SearchAction::Close => self.overlay.search = None,
        }
    }

    /// A key for the composer and the popup under it.
    fn composer_key(&mut self, key: KeyEvent, now: Instant, esc_armed: Option<Instant>) -> Action {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        let popup_key = key.modifiers.is_empty()
            && matches!(
                key.code,
                KeyCode::Up | KeyCode::Down | KeyCode::Tab | KeyCode::Enter
            );
        match key.code {
            KeyCode::Char('r') if ctrl => {
                self.overlay.search = Some(HistorySearch::new(self.composer.history().entries()));
                self.overlay.popup = None;
                return Action::None;
            }
            KeyCode::Char('d') if ctrl && self.composer.is_empty() => {
                self.request_exit();
                return Action::None;
            }
            KeyCode::Char('d') if ctrl => {
                self.composer.handle_key(KeyEvent::from(KeyCode::Delete));
            }
            KeyCode::Char('g') if ctrl => return Action::OpenEditor,
            KeyCode::Char('v') if ctrl => return self.paste_clipboard_image(),
            KeyCode::Esc => {
                self.escape(now, esc_armed);
                return Action::None;
            }
            KeyCode::PageUp | KeyCode::PageDown => {
                if self.cells == CellHistory::Transcript {
                    let rows = if key.code == KeyCode::PageUp { 10 } else { -10 };
                    self.transcript.scroll(rows);
                }
                return Action::None;
            }
            _ if popup_key && self.overlay.mention().is_some() => self.mention_key(key.code),
            _ if popup_key && self.overlay.slash().is_some() => {
                self.popup_key(key.code);
                return Action::None;
            }
            KeyCode::Up | KeyCode::Down if key.modifiers.is_empty() => {
                let before = self.composer.text().to_string();
                self.composer.handle_key(key);
                // A message recalled from the history is no `@` being typed: its
                // mention opens no picker (typing a new `@` does).
                if self.composer.text() != before {
                    self.dismiss_mention_at_cursor();
                }
            }
            _ => match self.composer.handle_key(key) {
                ComposerAction::Submit => self.submit(),
                ComposerAction::Edited => {
                    self.transcript.scroll_to_bottom();
                }
                ComposerAction::Ignored => return Action::None,
            },
        }
        self.refresh_popup();
        Action::None
    }

    /// Esc closes the popup (an `@` picker stays closed for that mention); with none
    /// open, it interrupts the running turn; on an empty composer with nothing running,
    /// it arms the rewind (the status line says so) and a second Esc right after (no
    /// other key between) opens the rewind picker.
    fn escape(&mut self, now: Instant, armed: Option<Instant>) {
        match self.overlay.popup.take() {
            Some(Popup::Mention(mention)) => self.overlay.mention_dismissed = Some(mention.at()),
            Some(Popup::Slash(_)) => {}
            None if self.busy() => self.out.ops.push(Op::Interrupt),
            None if self.composer.is_empty() && self.queued.is_empty() => match armed {
                Some(_) => self.out.ops.push(Op::ListRewindPoints),
                None => self.esc_at = Some(now),
            },
            None => {}
        }
    }

    /// Keeps the `@` picker closed for the mention at the cursor, if there is one (a
    /// draft that came from the history, not from typing).
    fn dismiss_mention_at_cursor(&mut self) {
        let typing = crate::mentions::typing_at(self.composer.text(), self.composer.cursor());
        if let Some((at, _)) = typing {
            self.overlay.mention_dismissed = Some(at);
        }
    }

    /// Up/Down move the `@` picker's selection; Tab or Enter put the selected path in
    /// place of the mention being typed (Enter with nothing listed sends the draft).
    fn mention_key(&mut self, code: KeyCode) {
        let Some(mention) = self.overlay.mention_mut() else {
            return;
        };
        match code {
            KeyCode::Up => mention.up(),
            KeyCode::Down => mention.down(),
            _ => match mention.pick(self.composer.cursor()) {
                Some(pick) => self.composer.replace(pick.range, &pick.text),
                None if code == KeyCode::Enter => self.submit(),
                None => {}
            },
        }
    }

    fn popup_key(&mut self, code: KeyCode) {
        let Some(popup) = self.overlay.slash_mut() else {
            return;
        };
        match code {
            KeyCode::Up => popup.up(),
            KeyCode::Down => popup.down(),
            _ => match popup.complete(self.composer.text()) {
                Some(done) => {
                    self.composer.set_text(&done.text);
                    if done.complete && code == KeyCode::Enter {
                        self.submit();
                    }
                    self.refresh_popup();
                }
                None if code == KeyCode::Enter => {
                    self.submit();
                    self.refresh_popup();
                }
                None => {
                    let text = self.composer.text().trim_end().to_string();
                    self.composer.set_text(&format!("{text} "));
                    self.refresh_popup();
                }
            },
        }
    }

    /// Ctrl+C does the first of: answer "no, and stop" to an approval, close the picker,
    /// clear the draft, interrupt the turn. Only a press that had none of those to do arms
    /// the exit ("press Ctrl+C again to exit"), so clearing a draft and then interrupting
    /// a turn is never taken for a double press.
    fn ctrl_c(&mut self, now: Instant) {
        if self.ctrl_c_at.is_some_and(|t| now < t + DOUBLE_PRESS) {
            self.ctrl_c_at = None;
            self.request_exit();
            return;
        }
        if self.lifecycle != Lifecycle::Active {
            self.ctrl_c_at = Some(now);
            return;
        }
        let acted = match self.overlay.shown() {
            Layer::Transcript => {
                self.close_transcript();
                true
            }
            Layer::Approval => {
                // Deny what is asked and stop the turn.
                self.out.ops.push(Op::Interrupt);
                let esc = KeyEvent::from(KeyCode::Esc);
                while let Some(answer) = self.overlay.approvals.handle_key(esc) {
                    self.out.ops.push(Op::Approval {
                        call_id: answer.call_id,
                        decision: answer.decision,
                    });
                }
                true
            }
            Layer::Picker => {
                self.overlay.picker = None;
                true
            }
            Layer::Rewind => {
                self.overlay.rewind = None;
                true
            }
            Layer::Search => {
                self.overlay.search = None;
                true
            }
            Layer::ModeConfirm | Layer::Popup | Layer::Composer => {
                if !self.composer.is_empty() {
                    self.composer.clear();
                    self.overlay.popup = None;
                    true
                } else if self.busy() {
                    self.out.ops.push(Op::Interrupt);
                    true
                } else {
                    false
                }
            }
        };
        self.ctrl_c_at = (!acted).then_some(now);
    }

    /// Switches the approval mode; a switch to full-auto asks first, naming the sandbox
    /// commands would run in.
    fn ask_mode(&mut self, mode: crate::protocol::ApprovalMode) {
        if mode == crate::protocol::ApprovalMode::FullAuto
            && self.status.approval_mode != crate::protocol::ApprovalMode::FullAuto
        {
            let confinement = match crate::sandbox::session() {
                Some(s) => format!("sandboxed ({})", s.policy.mode.as_str()),
                None => "unconfined (no sandbox)".to_string(),
            };
            self.overlay.mode_confirm = Some(format!(
                "Full-auto? Edits and commands run unasked, {confinement}. y/n"
            ));
            return;
        }
        self.out.ops.push(Op::SetApprovalMode { mode });
    }

    /// The command line's prompt: sent as if typed and submitted; while the resume
    /// picker is open it waits in the composer, to be sent once a session is picked.
    pub fn first_prompt(&mut self, text: &str, view: crate::tui::StartView) {
        self.composer.set_text(text);
        if view == crate::tui::StartView::Conversation {
            self.submit();
        }
    }

    fn submit(&mut self) {
        // The conversation shows the draft as it stood (large pastes as placeholders);
        // the router and the agent get it in full.
        let crate::tui::composer::Taken {
            shown: typed,
            full,
            images,
        } = self.composer.take();
        self.overlay.popup = None;
        let routed = route(&full, &self.commands);
        if !images.is_empty() && !matches!(routed, Routed::Prompt(_)) {
            self.commit_notice(
                NoticeKind::Warning,
                "Images go only with a message to the model: they were left out.",
            );
        }
        match routed {
            Routed::Empty => {}
            Routed::Prompt(text) => self.send(typed, Op::typed(text).with_images(images)),
            Routed::Invoke(invocation) => self.send(typed, Op::Invoke(invocation)),
            Routed::Shell(command) => self.send(typed, Op::Shell { command }),
            Routed::Builtin(builtin) => self.builtin(builtin, &typed),
            Routed::Error(message) => {
                self.commit_cell(HistoryCell::User { text: typed }.lines());
                self.commit_notice(NoticeKind::Error, &message);
            }
        }
    }

    fn send(&mut self, typed: String, op: Op) {
        self.queued.push_back(typed);
        self.out.ops.push(op);
    }

    fn builtin(&mut self, builtin: Builtin, typed: &str) {
        let echo = HistoryCell::User {
            text: typed.trim().to_string(),
        };
        match builtin {
            Builtin::Help => {
                self.commit_cell(echo.lines());
                self.commit_cell(views::help(&self.commands));
            }
            Builtin::Skills => {
                self.commit_cell(echo.lines());
                self.out.ops.push(Op::ListSkills);
            }
            Builtin::Usage => {
                self.commit_cell(echo.lines());
                self.commit_cell(views::usage(&self.status));
            }
            Builtin::Status => {
                self.commit_cell(echo.lines());
                self.out.ops.push(Op::Status);
            }
            Builtin::Context => {
                self.commit_cell(echo.lines());
                self.out.ops.push(Op::Context);
            }
            Builtin::Mcp => {
                self.commit_cell(echo.lines());
                self.out.ops.push(Op::ListMcpServers);
            }
            Builtin::Plugins => {
                self.commit_cell(echo.lines());
                self.out.ops.push(Op::ListPlugins);
            }
            Builtin::Hooks => {
                self.commit_cell(echo.lines());
                self.out.ops.push(Op::ListHooks);
            }
            Builtin::SkillsReload => {
                self.commit_cell(echo.lines());
                self.out.ops.push(Op::ReloadSkills);
            }
            Builtin::Undo => {
                self.commit_cell(echo.lines());
                self.out.ops.push(Op::Undo);
            }
            Builtin::Approvals(None) => {
                self.commit_cell(echo.lines());
                let mode = mode_words(self.status.approval_mode);
                self.commit_notice(
                    NoticeKind::Info,
                    &format!("Approval mode: {mode}. Switch with Shift+Tab or /approvals MODE."),
                );
            }
            Builtin::Approvals(Some(mode)) => {
                self.commit_cell(echo.lines());
                self.ask_mode(mode);
            }
            Builtin::Plan(task) => {
                self.out.ops.push(Op::SetApprovalMode {
                    mode: crate::protocol::ApprovalMode::Plan,
                });
                match task {
                    Some(text) => self.send(
                        typed.trim().to_string(),
                        Op::UserInput {
                            text,
                            origin: crate::protocol::InputOrigin::Typed,
                            piped: None,
                            images: Vec::new(),
                        },
                    ),
                    None => self.commit_cell(echo.lines()),
                }
            }
            Builtin::Diff => {
                self.commit_cell(echo.lines());
                self.out.ops.push(Op::Diff);
            }
            Builtin::Model(None) => {
                self.commit_cell(echo.lines());
                self.out.ops.push(Op::ListModels);
            }
            Builtin::Model(Some(model)) => {
                self.commit_cell(echo.lines());
                self.out.ops.push(Op::SetModel { model });
            }
            Builtin::Effort(None) => {
                self.commit_cell(echo.lines());
                let effort = crate::protocol::Effort::describe(self.status.effort);
                self.commit_notice(
                    NoticeKind::Info,
                    &format!(
                        "Reasoning effort: {effort}. Set it with /effort low|medium|high|off."
                    ),
                );
            }
            Builtin::Effort(Some(effort)) => {
                self.commit_cell(echo.lines());
                self.out.ops.push(Op::SetEffort { effort });
            }
            Builtin::Clear => {
                self.commit_cell(echo.lines());
                self.out.ops.push(Op::NewConversation);
            }
            Builtin::Compact(focus) => {
                self.commit_cell(echo.lines());
                self.commit_notice(NoticeKind::Info, "Compacting the conversation…");
                self.out.ops.push(Op::Compact { focus });
            }
            Builtin::Resume(id) => {
                self.commit_cell(echo.lines());
                self.out.ops.push(match id {
                    Some(id) => Op::Resume { id },
                    None => Op::ListSessions,
                });
            }
            Builtin::Export { format, path } => {
                self.commit_cell(echo.lines());
                self.out.ops.push(Op::Export { format, path });
            }
            Builtin::Permissions(command) => {
                self.commit_cell(echo.lines());
                self.out.ops.push(match command {
                    PermissionsCommand::List => Op::ListPermissions,
                    PermissionsCommand::Remove { number } => Op::RemovePermission { number },
                });
            }
            Builtin::Exit => self.request_exit(),
        }
    }
}

/// The mode Shift+Tab switches to after `mode`.
fn next_mode(mode: crate::protocol::ApprovalMode) -> crate::protocol::ApprovalMode {
    use crate::protocol::ApprovalMode;
    match mode {
        ApprovalMode::Suggest => ApprovalMode::AutoEdit,
        ApprovalMode::AutoEdit => ApprovalMode::FullAuto,
        ApprovalMode::FullAuto => ApprovalMode::Plan,
        ApprovalMode::Plan => ApprovalMode::Suggest,
    }
}
