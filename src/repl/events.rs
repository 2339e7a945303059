//! The REPL's side of agent events: an approval asked on the terminal (or denied in a
//! pipe), what the REPL keeps of the session (model, context, usage, approval mode, slash
//! commands), the answers to what it asked the agent for, and the renderer's turn end.
//! One step per kind; it knows the REPL's state and renderer, not how turns work.

use std::io::{self, Write};

use super::render;
use super::{Repl, ReplInput, State, mode_name};
use crate::protocol::{ApprovalAsk, ApprovalDecision, ErrorKind, Event, Op};

impl<O: Write, E: Write> Repl<O, E> {
    /// One agent event: an approval is asked at once; anything else updates what the
    /// REPL keeps of the session, answers what it was waiting for, and goes to the
    /// renderer.
    pub(super) fn on_event(&mut self, event: Event) -> io::Result<()> {
        if let Event::ApprovalRequest(ask) = &event {
            return self.ask_approval(ask);
        }
        self.keep(&event);
        self.answered(&event)?;
        self.render(&event)
    }

    /// Asks the user on the terminal, or puts it to a stream-json driver; in a pipe,
    /// denies (the agent runs with nobody to ask there and never sends this; answering
    /// anyway means a turn can never hang).
    fn ask_approval(&mut self, ask: &ApprovalAsk) -> io::Result<()> {
        let ApprovalAsk {
            call_id,
            name: tool,
            request,
            because,
            offer,
        } = ask;
        if self.input == ReplInput::StreamJson {
            return self.ask_driver(ask);
        }
        match &self.terminal {
            Some(terminal) => {
                self.renderer
                    .approval_request(tool, request, because.as_ref(), offer)?;
                terminal.request_approval();
                self.reading = true;
                self.asking = Some(call_id.clone());
                self.asked = match request {
                    crate::protocol::ApprovalRequestKind::Plan { .. } => super::Asked::Plan,
                    _ => super::Asked::Call,
                };
                Ok(())
            }
            None => {
                self.send(Op::Approval {
                    call_id: call_id.clone(),
                    decision: ApprovalDecision::Deny {
                        reason: Some("nobody can approve in pipe mode".into()),
                    },
                });
                self.renderer.denied(tool, request)
            }
        }
    }

    /// What the REPL keeps of the session: the model, the context window and how full
    /// it is, usage, the approval mode, the slash commands, whether the agent stopped.
    fn keep(&mut self, event: &Event) {
        match event {
            Event::SessionConfigured {
                model,
                context_window,
                effort,
                ..
            } => {
                self.model = model.clone();
                self.context_window = *context_window;
                self.effort = *effort;
            }
            Event::EffortChanged { effort } => self.effort = Some(*effort),
            Event::ContextWindow { tokens, .. } => self.context_window = Some(*tokens),
            Event::Usage {
                session,
                context_tokens,
                ..
            } => {
                self.usage = *session;
                // A forked skill's usage has no context measure: keep the last one.
                if let Some(tokens) = context_tokens {
                    self.context_tokens = *tokens;
                }
            }
            Event::SubAgent { skill, event, .. } => self.sub_agents.record(skill, event.event()),
            Event::Compacted { tokens_after, .. } => self.context_tokens = *tokens_after,
            Event::ConversationCleared => self.context_tokens = 0,
            Event::ModelChanged { model } => self.model = model.clone(),
            Event::SessionResumed(resumed) => {
                self.model = resumed.model.clone();
                self.context_tokens = 0;
            }
            Event::ApprovalModeChanged { mode } => self.approval_mode = *mode,
            Event::SlashCommands(commands) => self.commands = commands.clone(),
            Event::ShutdownComplete { usage } => {
                self.usage = *usage;
                self.state = State::Done;
            }
            _ => {}
        }
    }

    /// The answers to what the REPL asked the agent: each ends its wait and is shown
    /// for people (the JSON formats carry the event itself; `report` says nothing in
    /// `stream-json`). Work that could not happen ends with the warning saying why.
    fn answered(&mut self, event: &Event) -> io::Result<()> {
        match event {
            // The headless renderer shows it (a note on stderr, or the JSON event).
            Event::Compacted { .. } => self.done_waiting(State::Compacting),
            Event::ConversationCleared => {
                self.done_waiting(State::Clearing);
                self.renderer.notice("new conversation")?;
            }
            Event::ModelChanged { model } => {
                self.done_waiting(State::SwitchingModel);
                self.renderer.notice(&format!("model: {model}"))?;
            }
            Event::EffortChanged { effort } => {
                self.done_waiting(State::SettingEffort);
                self.renderer
                    .notice(&format!("reasoning effort: {effort}"))?;
            }
            Event::ModelList(list) => {
                self.done_waiting(State::SwitchingModel);
                self.renderer.notice(&list.lines(usize::MAX).join("\n"))?;
            }
            // Sent for `/resume`, or at start for `-c` and `--resume ID`: text gets a
            // short recap.
            Event::SessionResumed(resumed) => {
                self.done_waiting(State::Resuming);
                self.renderer.report(&render::resumed_text(resumed))?;
            }
            Event::SessionList { sessions } => {
                self.done_waiting(State::Listing);
                self.renderer.report(&render::sessions_text(sessions))?;
            }
            Event::Permissions {
                rules,
                untrusted,
                project_file,
            } => {
                self.done_waiting(State::Permissions);
                let text = crate::permissions::describe_list(rules, untrusted, project_file);
                self.renderer.report(&text)?;
            }
            Event::PermissionRemoved { rule } => {
                self.done_waiting(State::Permissions);
                self.renderer.report(&format!(
                    "removed rule {}: {} {} ({})",
                    rule.number,
                    rule.effect.as_str(),
                    rule.rule,
                    rule.source
                ))?;
            }
            Event::Exported { path } => {
                self.done_waiting(State::Exporting);
                self.renderer
                    .report(&format!("exported to {}", path.display()))?;
            }
            Event::TurnLeftOut { .. } => self.left_out = event.left_out_line(),
            Event::RuleAdded { .. } => {
                if let Some(line) = event.rule_added_line() {
                    self.renderer.report(&line)?;
                }
            }
            Event::ApprovalModeChanged { mode } => {
                self.renderer
                    .report(&format!("approval mode: {}", mode_name(*mode)))?;
            }
            Event::Plan { plan } => self.renderer.report(&plan.as_text())?,
            Event::Undone { .. } | Event::SessionDiff { .. } => self.project_changes(event)?,
            Event::SkillsReloaded { warnings, .. } => {
                self.done_waiting(State::ReloadingSkills);
                for warning in warnings {
                    self.renderer.report(&format!("warning: {warning}"))?;
                }
                if let Some(line) = event.reload_line() {
                    self.renderer.report(&line)?;
                }
            }
            Event::SkillList(listing) => {
                self.done_waiting(State::ListingSkills);
                self.renderer.notice(&render::skills_text(listing))?;
            }
            Event::McpServerList { servers } => {
                self.done_waiting(State::ListingMcpServers);
                self.renderer.notice(&render::mcp_text(servers))?;
            }
            Event::PluginList(listing) => {
                self.done_waiting(State::ListingPlugins);
                let mut text = String::from("Plugins:\n");
                for line in listing.lines() {
                    text.push_str(&format!("  {line}\n"));
                }
                self.renderer.notice(&text)?;
            }
            Event::HookList(listing) => {
                self.done_waiting(State::ListingHooks);
                let mut text = String::from("Hooks:\n");
                for line in crate::protocol::describe_hooks(listing) {
                    text.push_str(&format!("  {}\n", line.text));
                }
                self.renderer.notice(&text)?;
            }
            Event::Status(report) => {
                self.done_waiting(State::Status);
                self.renderer.notice(&render::status_text(report))?;
            }
            Event::Context(report) => {
                self.done_waiting(State::Context);
                self.renderer.notice(&render::context_text(report))?;
            }
            Event::Warning { .. }
                if matches!(
                    self.state,
                    State::Compacting
                        | State::SwitchingModel
                        | State::Listing
                        | State::Resuming
                        | State::Exporting
                        | State::ProjectChanges
                        | State::Permissions
                ) =>
            {
                self.state = State::Idle;
            }
            _ => {}
        }
        Ok(())
    }

    /// What `/undo` did, or what `/diff` shows.
    fn project_changes(&mut self, event: &Event) -> io::Result<()> {
        self.done_waiting(State::ProjectChanges);
        match event {
            Event::Undone { outcome } => self.renderer.report(&outcome.describe()),
            Event::SessionDiff { diff } => match diff.as_deref() {
                None | Some("") => self
                    .renderer
                    .report("No changes: this session has not changed a file of the project."),
                Some(diff) => self.renderer.report(diff.trim_end()),
            },
            _ => Ok(()),
        }
    }

    /// The event through the renderer; a turn's end makes the REPL idle and may make
    /// the session a failure.
    fn render(&mut self, event: &Event) -> io::Result<()> {
        let Some(report) = self.renderer.event(event)? else {
            return Ok(());
        };
        // The note about the failed turn's messages explains the error just shown.
        if let Some(line) = self.left_out.take() {
            self.renderer.warning(&line)?;
        }
        if self.state == State::Turn {
            self.state = State::Idle;
        }
        self.driver.turn_ended();
        match report.error_kind() {
            // Stopping a turn with Ctrl-C on a terminal, or a driver's `interrupt`, is
            // the user's choice, not a failure of the session (a driver's input ending
            // with approvals pending, or Ctrl-C in a pipe, set the failure themselves).
            Some(ErrorKind::Interrupted)
                if matches!(self.input, ReplInput::Terminal | ReplInput::StreamJson) => {}
            Some(kind) => self.fail(kind),
            None => {}
        }
        Ok(())
    }
}
