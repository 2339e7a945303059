//! Agent events: what each one changes in the app (the turn's state, the live answer and
//! tools, the status line, the overlay's questions and picker, the slash commands) and
//! which cells it commits. One step per kind of event, named for what it does; it draws
//! nothing and knows nothing about the terminal.

use std::time::Instant;

use super::{App, Lifecycle, mode_words};
use crate::protocol::{
    ApprovalAsk, AutoDenyReason, Event, HookRan, RuleView, ToolStatus, TurnOutcome, UndoOutcome,
    Usage,
};
use crate::tui::cells::{HistoryCell, NoticeKind, ToolCell, outcome_notice, sub_agent_end};
use crate::tui::picker::SessionPicker;
use crate::tui::resume::{NO_SESSIONS, resumed_cells};
use crate::tui::rewind::RewindPicker;
use crate::tui::status::TurnState;
use crate::tui::views;

impl App {
    /// Applies one agent event.
    pub fn on_event(&mut self, event: Event, now: Instant) {
        match event {
            Event::SessionConfigured {
                model,
                skills,
                context_window,
                effort,
                ..
            } => {
                self.status.effort = effort;
                self.status.model = model;
                self.status.skills = skills;
                self.status.context_window = context_window.or(self.status.context_window);
            }
            Event::TurnStarted { text } => self.turn_started(text, now),
            Event::TextDelta { text } => self.answer_streamed(&text),
            Event::ReasoningDelta { text } => self.live.push_reasoning(&text),
            Event::Retrying {
                attempt,
                delay_ms,
                reason,
            } => self.retrying(attempt, delay_ms, &reason),
            Event::RequestStarted { .. } => self.request_started(),
            Event::ToolCallBegin {
                call_id,
                name,
                summary,
                ..
            } => self.tool_began(&call_id, &name, &summary),
            Event::ToolOutputDelta { call_id, text } => self.live.tool_output(&call_id, &text),
            Event::ToolResult { call_id, content } => self.live.tool_result(&call_id, content),
            Event::ToolCallEnd {
                call_id,
                name,
                status,
                summary,
                diff,
                ..
            } => self.tool_ended(&call_id, &name, status, &summary, diff),
            Event::ApprovalRequest(ask) => self.approval_asked(ask),
            Event::SubAgent {
                parent_call_id,
                skill,
                event,
            } => {
                let event = event.into_event();
                self.status.sub_agents.record(&skill, &event);
                self.on_sub_agent(parent_call_id.as_deref(), &skill, event)
            }
            Event::AutoDenied {
                name: tool, reason, ..
            } => self.auto_denied(&tool, reason),
            Event::Usage {
                session,
                context_tokens,
                ..
            } => self.usage_counted(session, context_tokens),
            Event::Warning { message } => self.commit_notice(NoticeKind::Warning, &message),
            Event::HookRan(ran) => self.hook_ran(&ran),
            Event::TurnComplete { outcome, .. } => self.turn_complete(outcome),
            ref left_out @ Event::TurnLeftOut { .. } => self.left_out = left_out.left_out_line(),
            ref compacted @ Event::Compacted { tokens_after, .. } => {
                self.status.context_tokens = tokens_after;
                let line = compacted.compaction_line().unwrap_or_default();
                self.commit_notice(NoticeKind::Info, &line);
            }
            Event::ContextWindow { tokens, source } => {
                self.status.context_window = Some(tokens);
                tracing::info!("context window {tokens} from {}", source.describe());
            }
            Event::ApprovalModeChanged { mode } => {
                self.status.approval_mode = mode;
                self.commit_notice(
                    NoticeKind::Info,
                    &format!("Approval mode: {}.", mode_words(mode)),
                );
            }
            ref reloaded @ Event::SkillsReloaded { .. } => self.skills_reloaded(reloaded),
            Event::Plan { plan } => self.plan = Some(plan),
            Event::ConversationCleared => {
                self.plan = None;
                self.status.context_tokens = 0;
                self.commit_notice(NoticeKind::Info, "Started a new conversation.");
            }
            Event::ModelChanged { model } => {
                self.commit_notice(NoticeKind::Info, &format!("Model switched to {model}."));
                self.status.model = model;
            }
            Event::EffortChanged { effort } => {
                self.commit_notice(
                    NoticeKind::Info,
                    &format!("Reasoning effort set to {effort}."),
                );
                self.status.effort = Some(effort);
            }
            Event::ShutdownComplete { usage } => {
                self.flush_stream();
                self.lifecycle = Lifecycle::Finished(usage);
            }
            answer @ (Event::SessionResumed(_)
            | Event::SessionList { .. }
            | Event::Permissions { .. }
            | Event::PermissionRemoved { .. }
            | Event::RuleAdded { .. }
            | Event::Exported { .. }
            | Event::Undone { .. }
            | Event::RewindPoints { .. }
            | Event::Rewound { .. }
            | Event::SessionDiff { .. }
            | Event::SkillList(_)
            | Event::McpServerList { .. }
            | Event::PluginList(_)
            | Event::HookList(_)
            | Event::Status(_)
            | Event::ModelList(_)
            | Event::Context(_)
            | Event::SlashCommands(_)) => self.answered(answer),
        }
    }

    /// The answers to what the user asked for with a built-in (`/resume`, `/permissions`,
    /// `/export`, `/undo`, `/diff`, `/skills`, `/mcp`) and the slash commands' updates.
    fn answered(&mut self, answer: Event) {
        match answer {
            Event::SessionResumed(resumed) => {
                self.flush_stream();
                for cell in resumed_cells(&resumed) {
                    self.commit_expanded(cell.shown, cell.full);
                }
                self.status.model = resumed.model;
                self.status.context_tokens = 0;
            }
            Event::SessionList { sessions } => match SessionPicker::new(sessions) {
                Some(picker) => self.overlay.picker = Some(picker),
                None => self.commit_notice(NoticeKind::Info, NO_SESSIONS),
            },
            Event::Permissions {
                rules,
                untrusted,
                project_file,
            } => self.commit_notice(
                NoticeKind::Info,
                crate::permissions::describe_list(&rules, &untrusted, &project_file).trim_end(),
            ),
            Event::PermissionRemoved { rule } => self.permission_removed(&rule),
            ref added @ Event::RuleAdded { .. } => {
                let line = added.rule_added_line().unwrap_or_default();
                self.commit_notice(NoticeKind::Info, &line);
            }
            Event::Exported { path } => self.commit_notice(
                NoticeKind::Info,
                &format!("Exported the session to {}.", path.display()),
            ),
            Event::Undone { outcome } => {
                let kind = match outcome {
                    UndoOutcome::Refused { .. } => NoticeKind::Error,
                    _ => NoticeKind::Info,
                };
                self.commit_notice(kind, &outcome.describe());
            }
            Event::RewindPoints { points } => match RewindPicker::new(points) {
                Some(picker) => self.overlay.rewind = Some(picker),
                None => self.commit_notice(
                    NoticeKind::Info,
                    "No earlier message to rewind to in this conversation.",
                ),
            },
            Event::Rewound { text, files, .. } => {
                let refused = files
                    .iter()
                    .any(|f| matches!(f, UndoOutcome::Refused { .. }));
                let kind = if refused {
                    NoticeKind::Warning
                } else {
                    NoticeKind::Info
                };
                self.commit_notice(kind, &crate::protocol::describe_rewind(&files));
                self.composer.set_text(&text);
                self.status.context_tokens = 0;
            }
            Event::SessionDiff { diff } => match diff.as_deref() {
                None | Some("") => self.commit_notice(
                    NoticeKind::Info,
                    "No changes: this session has not changed a file of the project.",
                ),
                Some(diff) => self.commit_cell(crate::tui::cells::diff_lines(diff, usize::MAX)),
            },
            Event::SkillList(listing) => self.commit_cell(views::skills(&listing)),
            Event::McpServerList { servers } => self.commit_cell(views::mcp(&servers)),
            Event::PluginList(listing) => self.commit_cell(views::plugins(&listing)),
            Event::HookList(listing) => self.commit_cell(super::super::hooks_view::hooks(&listing)),
            Event::Status(report) => self.commit_cell(views::status(&report)),
            Event::ModelList(list) => self.commit_cell(views::model_list(&list)),
            Event::Context(report) => self.commit_cell(views::context(&report)),
            Event::SlashCommands(commands) => self.commands = commands,
            // Only answers come here (`on_event`).
            _ => {}
        }
    }

    /// The turn for the oldest queued input began: the input as it was typed.
    fn turn_started(&mut self, text: String, now: Instant) {
        let shown = self.queued.pop_front().unwrap_or(text);
        self.commit_cell(HistoryCell::User { text: shown }.lines());
        self.turn = TurnState::Thinking;
        self.turn_started = Some(now);
    }

    /// A piece of the answer: the reasoning before it is done; whole lines commit.
    fn answer_streamed(&mut self, text: &str) {
        if let Some(cell) = self.live.finish_reasoning() {
            self.commit_thought(&cell);
        }
        let chunk = self.live.push_text(text);
        self.commit_chunk(chunk);
        if !matches!(self.turn, TurnState::WaitingApproval) {
            self.turn = TurnState::Responding;
        }
    }

    /// A failed attempt is retried: what it streamed is withdrawn, with a notice.
    fn retrying(&mut self, attempt: u32, delay_ms: u64, reason: &str) {
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

    fn request_started(&mut self) {
        if self.live.running_tool().is_none() && self.turn != TurnState::WaitingApproval {
            self.turn = TurnState::Thinking;
        }
    }

    fn tool_began(&mut self, call_id: &str, name: &str, summary: &str) {
        self.flush_stream();
        self.turn = TurnState::RunningTool {
            name: name.to_string(),
        };
        self.live
            .begin_tool(ToolCell::running(call_id, name, summary));
    }

    /// A tool call ended: its cell commits; the status follows what still runs.
    fn tool_ended(
        &mut self,
        call_id: &str,
        name: &str,
        status: ToolStatus,
        summary: &str,
        diff: Option<String>,
    ) {
        self.flush_stream();
        let tool = self.live.end_tool(call_id, name, status, summary, diff);
        let full = tool.full_lines();
        self.commit_expanded(HistoryCell::Tool(tool).lines(), full);
        if self.turn != TurnState::WaitingApproval {
            self.turn = match self.live.running_tool() {
                Some(name) => TurnState::RunningTool {
                    name: name.to_string(),
                },
                None => TurnState::Thinking,
            };
        }
    }

    /// A call waits for the user's answer: the question joins the overlay.
    fn approval_asked(&mut self, ask: ApprovalAsk) {
        self.flush_stream();
        self.overlay.approvals.push(ask);
        self.turn = TurnState::WaitingApproval;
    }

    /// Shows what a forked skill's sub-agent does: its start, each tool call and its
    /// end. Its text is not shown: only its final answer returns to the conversation.
    /// A sub-agent started by a tool call that is still running (an `agent` call, one
    /// of several side by side) shows its steps inside that call's cell instead.
    fn on_sub_agent(&mut self, parent: Option<&str>, skill: &str, event: Event) {
        if let Some(call_id) = parent.filter(|id| self.live.is_running(id)) {
            match event {
                Event::ToolCallBegin { name, summary, .. } => {
                    self.live
                        .tool_output(call_id, &format!("↳ {name} {summary}\n"));
                }
                Event::ToolCallEnd {
                    name,
                    status: ToolStatus::Error | ToolStatus::Denied,
                    summary,
                    ..
                } => {
                    let first = summary.lines().next().unwrap_or("");
                    let line = format!("↳ {name} failed: {first}\n");
                    self.live.tool_output(call_id, &line);
                }
                _ => {}
            }
            return;
        }
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
            Event::HookRan(ran) => self.hook_ran(&ran),
            Event::TurnComplete { outcome, .. } => {
                let how = sub_agent_end(outcome);
                self.commit_notice(NoticeKind::Info, &format!("sub-agent `{skill}` {how}"));
                self.turn = TurnState::Thinking;
            }
            _ => {}
        }
    }

    /// A hook's run: a cell for one that blocked, failed or stopped the agent, a dim
    /// line for its `systemMessage`; a plain run draws nothing (`-v` lists every run).
    fn hook_ran(&mut self, ran: &HookRan) {
        if let Some(line) = ran.notice_line() {
            self.commit_notice(NoticeKind::Warning, &line);
        }
        if let Some(message) = &ran.system_message {
            self.commit_notice(NoticeKind::Info, &format!("hook: {message}"));
        }
    }

    fn auto_denied(&mut self, tool: &str, reason: AutoDenyReason) {
        let message = match reason {
            AutoDenyReason::NobodyToAsk { .. } => {
                format!("`{tool}` was denied: nobody can approve it in this mode")
            }
            AutoDenyReason::Rule { rule, source } => {
                format!("`{tool}` was denied by the rule `deny {rule}` ({source})")
            }
            AutoDenyReason::PlanMode { why } => format!("`{tool}` was denied: {why}"),
        };
        self.commit_notice(NoticeKind::Warning, &message);
    }

    fn usage_counted(&mut self, session: Usage, context_tokens: Option<u64>) {
        self.status.usage = session;
        // A forked skill's usage has no context measure: keep the last one.
        if let Some(tokens) = context_tokens {
            self.status.context_tokens = tokens;
        }
    }

    fn permission_removed(&mut self, rule: &RuleView) {
        self.commit_notice(
            NoticeKind::Info,
            &format!(
                "Removed rule {}: {} {} ({}).",
                rule.number,
                rule.effect.as_str(),
                rule.rule,
                rule.source
            ),
        );
    }

    /// The skills were looked at again: the count, problems, and what changed.
    fn skills_reloaded(&mut self, reloaded: &Event) {
        let Event::SkillsReloaded {
            skills, warnings, ..
        } = reloaded
        else {
            return;
        };
        self.status.skills = *skills;
        for warning in warnings {
            self.commit_notice(NoticeKind::Warning, warning);
        }
        if let Some(line) = reloaded.reload_line() {
            self.commit_notice(NoticeKind::Info, &line);
        }
    }

    /// The turn ended: what streamed and the tools still shown commit, questions left
    /// unanswered close, and the outcome is said when it is not a plain completion.
    fn turn_complete(&mut self, outcome: TurnOutcome) {
        self.flush_stream();
        for tool in self.live.abandon_tools() {
            self.commit_cell(HistoryCell::Tool(tool).lines());
        }
        self.overlay.approvals.clear();
        if let Some(notice) = outcome_notice(outcome) {
            self.commit_cell(notice.lines());
        }
        // The note about the failed turn's messages explains the error just shown.
        if let Some(line) = self.left_out.take() {
            self.commit_notice(NoticeKind::Warning, &line);
        }
        self.turn = if self.lifecycle == Lifecycle::Active {
            TurnState::Idle
        } else {
            TurnState::Exiting
        };
        self.turn_started = None;
    }
}
