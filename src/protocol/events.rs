//! What the agent tells frontends: [`Event`] and the value types only events carry
//! (how a turn ended, a sub-agent's events, listings of saved sessions, a resumed
//! session's history, a call's status and the approval it waits for, where a context
//! window came from). Part of the contract (`protocol`); like the rest of it, it must not
//! know how a frontend draws anything or how the agent works.

use super::*;
/// An event of a forked skill's sub-agent: only what a turn can emit (its text, tool
/// calls, usage, warnings, end). Session events (configuration, shutdown, a cleared
/// conversation), approval requests (answered as usual, never wrapped) and another
/// sub-agent's events cannot be inside, because [`SubAgentEvent::new`] refuses them.
/// Serialized as the event itself.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(transparent)]
pub struct SubAgentEvent(Box<Event>);

impl SubAgentEvent {
    /// Wraps a turn event; gives back any event that cannot come from a sub-agent
    /// (boxed: an approval request is large, and the way back should not be).
    pub fn new(event: Event) -> Result<SubAgentEvent, Box<Event>> {
        match event {
            Event::TurnStarted { .. }
            | Event::RequestStarted { .. }
            | Event::TextDelta { .. }
            | Event::ReasoningDelta { .. }
            | Event::Retrying { .. }
            | Event::ToolCallBegin { .. }
            | Event::ToolOutputDelta { .. }
            | Event::ToolResult { .. }
            | Event::ToolCallEnd { .. }
            | Event::AutoDenied { .. }
            | Event::Usage { .. }
            | Event::Warning { .. }
            | Event::HookRan(_)
            | Event::Plan { .. }
            | Event::TurnComplete { .. } => Ok(SubAgentEvent(Box::new(event))),
            Event::SessionConfigured { .. }
            | Event::ApprovalRequest(_)
            | Event::SubAgent { .. }
            | Event::ConversationCleared
            | Event::SessionResumed(_)
            | Event::SessionList { .. }
            | Event::Permissions { .. }
            | Event::PermissionRemoved { .. }
            | Event::RuleAdded { .. }
            | Event::TurnLeftOut { .. }
            | Event::Exported { .. }
            | Event::Undone { .. }
            | Event::RewindPoints { .. }
            | Event::Rewound { .. }
            | Event::SkillsReloaded { .. }
            | Event::SessionDiff { .. }
            | Event::ApprovalModeChanged { .. }
            | Event::Compacted { .. }
            | Event::ContextWindow { .. }
            | Event::ModelChanged { .. }
            | Event::EffortChanged { .. }
            | Event::ModelList(_)
            | Event::Status(_)
            | Event::Context(_)
            | Event::ShutdownComplete { .. }
            | Event::SkillList(_)
            | Event::McpServerList { .. }
            | Event::PluginList(_)
            | Event::HookList(_)
            | Event::SlashCommands(_) => Err(Box::new(event)),
        }
    }

    /// The sub-agent's event.
    pub fn event(&self) -> &Event {
        &self.0
    }

    /// The sub-agent's event, owned.
    pub fn into_event(self) -> Event {
        *self.0
    }
}

/// Why the skills were looked at again.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ReloadTrigger {
    /// Before a turn (said only when something changed).
    BeforeTurn,
    /// `/skills reload`.
    Asked,
}

/// How a turn ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "snake_case")]
pub enum TurnOutcome {
    /// The model answered without asking for more tools.
    Completed,
    /// The user interrupted; what was streamed stays in history.
    Interrupted,
    /// `--max-turns` model requests were made and the model still wanted tools.
    MaxTurnsReached {
        /// The limit that was reached.
        limit: u32,
    },
    /// A limit of the whole run (`--timeout`, `--max-cost`) stopped the turn: its
    /// commands were stopped, what was streamed stays in history, and every later turn
    /// of the run stops at once.
    LimitReached {
        /// Which limit.
        limit: super::RunLimit,
    },
    /// The model stopped before its answer was finished; what it wrote is the answer,
    /// and it is incomplete.
    Truncated {
        /// Why it stopped.
        reason: TruncationReason,
    },
    /// The turn failed; the session goes on.
    Failed {
        /// What kind of failure, for exit codes and scripts.
        kind: ErrorKind,
        /// A message for people: what failed, where, and what to do.
        message: String,
    },
}

/// Why a compaction happened.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CompactionTrigger {
    /// The next request would have passed the threshold of the context window.
    Threshold,
    /// The user asked (`/compact`).
    Manual,
    /// The provider refused a request as too long for its context window.
    Rejection,
}

impl Event {
    /// The line every frontend shows for an [`Event::SkillsReloaded`]: what changed, or,
    /// when the user asked, that nothing did. `None` for a look before a turn that found
    /// nothing, and for any other event.
    pub fn reload_line(&self) -> Option<String> {
        let Event::SkillsReloaded {
            changes,
            skills,
            trigger,
            ..
        } = self
        else {
            return None;
        };
        values::describe_reload(changes, *skills, *trigger)
    }

    /// The line the interactive frontends show for an [`Event::TurnLeftOut`]; `None` for
    /// any other event.
    pub fn left_out_line(&self) -> Option<String> {
        let Event::TurnLeftOut { messages, saved } = self else {
            return None;
        };
        let (what, they) = match messages {
            1 => ("its 1 message".to_string(), "it stays"),
            n => (format!("its {n} messages"), "they stay"),
        };
        let saved = if *saved {
            format!(" ({they} in the saved session)")
        } else {
            String::new()
        };
        Some(format!(
            "this turn failed, so {what} will not be sent again{saved}; the next prompt \
             starts from the conversation before it"
        ))
    }

    /// The line every frontend shows for an [`Event::RuleAdded`]; `None` for any other
    /// event.
    pub fn rule_added_line(&self) -> Option<String> {
        let Event::RuleAdded { rule, source } = self else {
            return None;
        };
        Some(match source {
            Source::Session => {
                format!("Added the rule `allow {rule}` for this session.")
            }
            other => format!(
                "Added the rule `allow {rule}` to {other}; it holds in later sessions too \
                 (/permissions lists it)."
            ),
        })
    }

    /// The line every frontend shows for an [`Event::Compacted`]; `None` for any other
    /// event.
    pub fn compaction_line(&self) -> Option<String> {
        let Event::Compacted {
            trigger,
            tokens_before,
            tokens_after,
            summarized_messages,
        } = self
        else {
            return None;
        };
        let why = match trigger {
            CompactionTrigger::Threshold => "the context window was nearly full",
            CompactionTrigger::Manual => "as asked",
            CompactionTrigger::Rejection => "the provider refused the request as too long",
        };
        Some(format!(
            "Compacted the conversation ({why}): {summarized_messages} messages summarized, \
             about {tokens_before} → {tokens_after} tokens; the saved session keeps everything."
        ))
    }
}

/// Where a context window came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum WindowSource {
    /// `context_window` in config.toml.
    Config,
    /// The cache of windows learned earlier.
    Cache,
    /// The endpoint's `/models` list.
    Models,
    /// llama.cpp's `/props`.
    Props,
    /// Ollama's `/api/show`.
    OllamaShow,
    /// A provider's "context length exceeded" error.
    Rejection,
    /// The built-in table of model families.
    Table,
}

impl WindowSource {
    /// Where the number came from, for people.
    pub fn describe(self) -> &'static str {
        match self {
            WindowSource::Config => "config.toml",
            WindowSource::Cache => "cached",
            WindowSource::Models => "the endpoint's /v1/models",
            WindowSource::Props => "llama.cpp /props",
            WindowSource::OllamaShow => "Ollama /api/show",
            WindowSource::Rejection => "the provider's error",
            WindowSource::Table => "built-in table",
        }
    }
}

/// The format of an exported session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExportFormat {
    /// Markdown fit to attach to a pull request.
    Markdown,
    /// Every record, as one JSON document.
    Json,
}

impl ExportFormat {
    /// The file extension.
    pub fn extension(self) -> &'static str {
        match self {
            ExportFormat::Markdown => "md",
            ExportFormat::Json => "json",
        }
    }
}

/// A saved session as listings and pickers show it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SessionListing {
    /// Its id.
    pub id: String,
    /// Last written, milliseconds since the Unix epoch.
    pub modified_ms: u64,
    /// Turns saved.
    pub turns: u64,
    /// The model last used.
    pub model: String,
    /// The first prompt, on one line, shortened.
    pub first_prompt: Option<String>,
}

impl SessionListing {
    /// Its turn count as listings show it: "1 turn", "3 turns".
    pub fn turns_text(&self) -> String {
        if self.turns == 1 {
            "1 turn".to_string()
        } else {
            format!("{} turns", self.turns)
        }
    }

    /// The widest of `sessions` by `measure`, for a listing's column (0 for none).
    pub fn column_width(sessions: &[SessionListing], measure: impl Fn(&Self) -> usize) -> usize {
        sessions.iter().map(measure).max().unwrap_or(0)
    }
}

/// A resumed session, as [`Event::SessionResumed`] tells it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ResumedSession {
    /// The session's id.
    pub id: String,
    /// The model from now on.
    pub model: String,
    /// Turns saved so far.
    pub turns: u64,
    /// Skills loaded again, with their tools.
    pub loaded_skills: Vec<String>,
    /// The latest prompts, answers and tool calls (at most 200), oldest first.
    pub history: Vec<HistoryItem>,
    /// What changed since it was saved (the system prompt, a skill gone...).
    pub notes: Vec<String>,
}

/// One thing said in a saved session, for frontends to show when it is resumed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum HistoryItem {
    /// What the user sent (or an expanded skill invocation).
    User {
        /// The text.
        text: String,
    },
    /// The model's reasoning before an answer or tool calls (shown as a thought).
    Reasoning {
        /// The readable reasoning text.
        text: String,
    },
    /// The model's answer text.
    Assistant {
        /// The text.
        text: String,
    },
    /// A tool call the model made.
    ToolCall {
        /// Tool name.
        name: String,
        /// Its arguments, shortened.
        arguments: String,
    },
}

/// Why an answer is incomplete (`finish_reason` of the last request).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TruncationReason {
    /// The output token limit was reached (`finish_reason: "length"`).
    Length,
    /// The provider's content filter cut the answer (`"content_filter"`).
    ContentFilter,
}

impl TruncationReason {
    /// The error kind scripts see for it.
    pub fn kind(self) -> ErrorKind {
        match self {
            TruncationReason::Length => ErrorKind::OutputLimit,
            TruncationReason::ContentFilter => ErrorKind::ContentFilter,
        }
    }

    /// What happened, for people.
    pub fn describe(self) -> &'static str {
        match self {
            TruncationReason::Length => {
                "the answer was cut off at the model's output limit (finish_reason: length)"
            }
            TruncationReason::ContentFilter => {
                "the answer was cut off by the provider's content filter (finish_reason: content_filter)"
            }
        }
    }
}

/// Where a tool call stands, for frontends that show live status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolStatus {
    /// Finished and the model gets its output.
    Ok,
    /// Finished with an error the model sees (bad arguments, a failing command...).
    Error,
    /// Not run: the approval was denied or nobody could approve it.
    Denied,
    /// Stopped by an interrupt.
    Interrupted,
}

/// Why the agent skipped asking for approval and denied a call by itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum AutoDenyReason {
    /// Print or pipe mode: nobody can answer, and the approval mode (or a rule, or a
    /// destructive command: `because`) wanted a person to.
    NobodyToAsk {
        /// Why it needed a person beyond the approval mode.
        because: Option<AskBecause>,
    },
    /// A deny rule refused it (in any mode).
    Rule {
        /// The rule.
        rule: String,
        /// Where it came from.
        source: Source,
    },
    /// Plan mode refused it: it would change something other than the plan file, or
    /// the tool does not run in plan mode.
    PlanMode {
        /// Why, in words for a person.
        why: String,
    },
}

/// A call waiting for the user's yes or no ([`Event::ApprovalRequest`]); frontends keep
/// it as it is until it is answered.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ApprovalAsk {
    /// Id to answer with.
    pub call_id: String,
    /// Tool name (as in [`Event::ToolCallBegin`]).
    pub name: String,
    /// What the call would do.
    pub request: ApprovalRequestKind,
    /// Why it is asked beyond the approval mode (`None`: the mode asks).
    pub because: Option<AskBecause>,
    /// What an "always" answer (this session, this project) would add.
    pub offer: Offer,
}

/// What the agent tells frontends. Every variant is rendered by every frontend (or
/// deliberately ignored with a reason in that frontend).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Event {
    /// The session is ready; sent once, first.
    SessionConfigured {
        /// Model id in use.
        model: String,
        /// The project directory.
        workdir: PathBuf,
        /// How many skills are in the index.
        skills: usize,
        /// The model's context window in tokens, when known.
        context_window: Option<u64>,
        /// Where the window's size came from, when known.
        context_window_source: Option<WindowSource>,
        /// The saved session's id (`None` when sessions are not saved).
        session_id: Option<String>,
        /// The reasoning effort sent with each request (`None`: none is sent).
        effort: Option<Effort>,
        /// The approval mode at start (`approval_mode_changed` follows a switch).
        approval_mode: ApprovalMode,
        /// The plan file, in plan mode (`None` outside it, or when none could be made).
        #[serde(skip_serializing_if = "Option::is_none")]
        plan_file: Option<PathBuf>,
        /// The instruction files in force: the chain in the system prompt, then the
        /// nested files a resumed conversation holds.
        instructions: Vec<crate::protocol::InstructionFileInfo>,
    },
    /// The model's context window was learnt from the endpoint (or from a refusal)
    /// after the session started; it is used from the next request on.
    ContextWindow {
        /// Tokens.
        tokens: u64,
        /// Where it came from.
        source: WindowSource,
    },
    /// A turn started for this user input.
    TurnStarted {
        /// The user message as sent to the model.
        text: String,
    },
    /// A piece of the assistant's answer.
    TextDelta {
        /// The new text.
        text: String,
    },
    /// A piece of the model's reasoning (show dimmed).
    ReasoningDelta {
        /// The new reasoning text.
        text: String,
    },
    /// The request is retried; drop what was streamed since the last `RequestStarted`.
    Retrying {
        /// The attempt about to be made (2 for the first retry).
        attempt: u32,
        /// How long the agent waits before it.
        delay_ms: u64,
        /// What went wrong, for people.
        reason: String,
    },
    /// A model request is about to be sent (one per model round trip).
    RequestStarted {
        /// 1-based index of the request within the turn.
        request: u32,
    },
    /// A tool call is about to run (after approval, if one was needed).
    ToolCallBegin {
        /// The model's id for the call.
        call_id: String,
        /// Tool name.
        name: String,
        /// The main argument in a few words (path, pattern, command).
        summary: String,
        /// The files it works on (file tools), for frontends beside an editor; not in
        /// headless output.
        #[serde(skip)]
        locations: Vec<crate::protocol::FileLocation>,
    },
    /// Live output of a running tool (bash), line by line.
    ToolOutputDelta {
        /// The call this output belongs to.
        call_id: String,
        /// One or more complete lines.
        text: String,
    },
    /// A tool call finished.
    ToolCallEnd {
        /// The model's id for the call.
        call_id: String,
        /// Tool name.
        name: String,
        /// How it ended.
        status: ToolStatus,
        /// A short summary for people (first lines of output, or the error).
        summary: String,
        /// A unified diff, for calls that changed a file.
        diff: Option<String>,
        /// The changed file's whole text before and after (write_file, edit_file; not
        /// for files over [`crate::protocol::FileChange::MAX_TEXT`]); not in headless
        /// output.
        #[serde(skip)]
        change: Option<Box<crate::protocol::FileChange>>,
    },
    /// The whole result of a call whose summary left lines out, sent just before its
    /// [`Event::ToolCallEnd`], for a frontend's full view of the transcript (the TUI's
    /// Ctrl+T); frontends that show only summaries ignore it.
    ToolResult {
        /// The call.
        call_id: String,
        /// The result as the tool gave it (before it was fitted to the window).
        content: String,
    },
    /// A call needs a yes or no; answer with [`Op::Approval`].
    ApprovalRequest(ApprovalAsk),
    /// A call that needed approval was denied without asking (print and pipe modes).
    AutoDenied {
        /// The call.
        call_id: String,
        /// Tool name (as in [`Event::ToolCallBegin`]).
        name: String,
        /// What the call would have done.
        request: ApprovalRequestKind,
        /// Why nobody was asked.
        reason: AutoDenyReason,
    },
    /// Token counts after a model request.
    Usage {
        /// This turn so far.
        turn: Usage,
        /// The whole session so far.
        session: Usage,
        /// Input tokens of the latest request of the main conversation (how full the
        /// context is); `None` when this count has no such measure (a forked skill's
        /// sub-agent runs in its own context), so the last known value still holds.
        context_tokens: Option<u64>,
    },
    /// Something the user should know that does not stop the turn (a skill that
    /// could not load, a setting ignored...).
    Warning {
        /// The warning, with what to do about it.
        message: String,
    },
    /// A hook ran (every run of every event): `-v` shows each, stream-json writes it
    /// as a `hook` line, and frontends show the runs that blocked, failed or stopped
    /// the agent ([`HookRan::notice_line`]) and a hook's `systemMessage`.
    #[serde(rename = "hook")]
    HookRan(Box<HookRan>),
    /// A turn ended.
    TurnComplete {
        /// How it ended.
        outcome: TurnOutcome,
        /// The assistant's final text of the turn (may be empty): the conversation's
        /// own answer, shared, not a copy of it.
        final_text: SharedText,
        /// Usage for the turn.
        usage: Usage,
        /// Model requests made in the turn.
        requests: u32,
    },
    /// The turn failed, so its messages are left out of what is sent next. Sent just
    /// before its [`Event::TurnComplete`]; frontends show it after the error that event
    /// reports, which it explains (print mode, where no prompt follows, shows nothing).
    TurnLeftOut {
        /// How many messages.
        messages: usize,
        /// Whether the saved session keeps them.
        saved: bool,
    },
    /// Something a forked skill's sub-agent did (its text, tool calls, usage, end),
    /// wrapped so frontends can show it apart from the main conversation. Approval
    /// requests from a sub-agent are not wrapped: they arrive as ordinary
    /// [`Event::ApprovalRequest`]s and are answered the same way.
    SubAgent {
        /// The main conversation's tool call that started it (`use_skill`), or `None`
        /// when the user invoked the skill with `/name`.
        parent_call_id: Option<String>,
        /// The forked skill's name.
        skill: String,
        /// What the sub-agent did.
        event: SubAgentEvent,
    },
    /// The conversation sent to the model was replaced by a summary (the saved session
    /// keeps every message).
    Compacted {
        /// Why: the window was nearly full, the user asked, or the provider refused a
        /// request as too long.
        trigger: CompactionTrigger,
        /// Estimated prompt tokens before.
        tokens_before: u64,
        /// Estimated prompt tokens after.
        tokens_after: u64,
        /// How many messages the summary replaced.
        summarized_messages: usize,
    },
    /// A saved session was resumed (at start, or after [`Op::Resume`]): what was said
    /// is in its history, and the conversation goes on from it.
    SessionResumed(Box<ResumedSession>),
    /// The permission rules in force, after [`Op::ListPermissions`].
    Permissions {
        /// Every rule, numbered.
        rules: Vec<RuleView>,
        /// The project file's `allow` rules not in force until this user approves them
        /// (`harness9 permissions trust`).
        untrusted: Vec<String>,
        /// The project's rule file.
        project_file: PathBuf,
    },
    /// An "always" answer (`a` this session, `p` this project) added an allow rule.
    RuleAdded {
        /// The rule as written (`bash(cargo test:*)`).
        rule: String,
        /// Where it holds: this session, or the project's rule file.
        source: Source,
    },
    /// A rule was removed after [`Op::RemovePermission`].
    PermissionRemoved {
        /// The rule as it was listed.
        rule: RuleView,
    },
    /// This project's saved sessions, newest first, after [`Op::ListSessions`].
    SessionList {
        /// The sessions.
        sessions: Vec<SessionListing>,
    },
    /// The session was written to a file after [`Op::Export`].
    Exported {
        /// The file.
        path: PathBuf,
    },
    /// The model's plan as it now stands (`update_plan`; also after a resume that saved
    /// one).
    Plan {
        /// The plan.
        #[serde(flatten)]
        plan: crate::protocol::PlanUpdate,
    },
    /// The approval mode is now `mode` (after [`Op::SetApprovalMode`], or an approved
    /// plan).
    ApprovalModeChanged {
        /// The mode in force.
        mode: ApprovalMode,
    },
    /// The skills were looked at again (before a turn, when something changed; or on
    /// [`Op::ReloadSkills`], always). The system prompt is not touched: the model is
    /// told with its next message.
    SkillsReloaded {
        /// What changed (empty: nothing).
        changes: SkillChanges,
        /// How many skills there are now.
        skills: usize,
        /// Problems with skills not reported before (path and reason).
        warnings: Vec<String>,
        /// Why they were looked at.
        trigger: ReloadTrigger,
    },
    /// What [`Op::Undo`] did.
    Undone {
        /// Restored, nothing to undo, or refused (with the files why).
        outcome: UndoOutcome,
    },
    /// The user messages the conversation can be rewound to, oldest first, after
    /// [`Op::ListRewindPoints`] (empty: none).
    RewindPoints {
        /// The messages, with the files rewinding to each would put back.
        points: Vec<RewindPoint>,
    },
    /// The conversation was rewound after [`Op::Rewind`].
    Rewound {
        /// The first turn left out.
        turn: u64,
        /// What the user typed for it, to edit and send again.
        text: String,
        /// What putting the files back did, newest turn first (a refusal last).
        files: Vec<UndoOutcome>,
    },
    /// What this session changed in the project, after [`Op::Diff`].
    SessionDiff {
        /// A unified diff (empty: nothing changed); `None` when no tool that may change
        /// files has run yet.
        diff: Option<String>,
    },
    /// The conversation was cleared after [`Op::NewConversation`].
    ConversationCleared,
    /// The session's state, after [`Op::Status`].
    Status(Box<StatusReport>),
    /// What the model's context holds, after [`Op::Context`].
    Context(Box<crate::protocol::ContextReport>),
    /// The model was switched after [`Op::SetModel`].
    ModelChanged {
        /// The new model id (`NAME/model` on a named provider).
        model: String,
    },
    /// The reasoning effort was set after [`Op::SetEffort`]; it is sent from the next
    /// request on.
    EffortChanged {
        /// The new level.
        effort: Effort,
    },
    /// Every provider's models, after [`Op::ListModels`].
    ModelList(ModelList),
    /// The agent stopped after [`Op::Shutdown`]; no events follow.
    ShutdownComplete {
        /// Usage for the whole session.
        usage: Usage,
    },

    // ----- listings: a frontend's own questions; print mode shows none of them -------
    /// The skills, after [`Op::ListSkills`].
    SkillList(SkillListing),
    /// The configured MCP servers with their state, after [`Op::ListMcpServers`].
    McpServerList {
        /// In name order; empty without servers.
        servers: Vec<McpServerEntry>,
    },
    /// The installed plugins, after [`Op::ListPlugins`].
    PluginList(super::PluginListing),
    /// Every configured hook, in force or not, after [`Op::ListHooks`].
    HookList(HookListing),
    /// The slash commands changed (skills reloaded, an MCP server's prompts learnt):
    /// all of them, in place of what the frontend had (`SessionInfo` carries them at
    /// start).
    SlashCommands(SlashCommands),
}

#[cfg(test)]
mod sub_agent_tests {
    use super::*;

    #[test]
    fn only_turn_events_nest_and_they_serialize_as_themselves() {
        let delta = Event::TextDelta { text: "hi".into() };
        let wrapped = SubAgentEvent::new(delta.clone()).unwrap();
        assert_eq!(
            serde_json::to_value(&wrapped).unwrap(),
            serde_json::to_value(&delta).unwrap()
        );
        let nested = Event::SubAgent {
            parent_call_id: None,
            skill: "s".into(),
            event: wrapped,
        };
        assert!(SubAgentEvent::new(nested).is_err());
        let shutdown = Event::ShutdownComplete {
            usage: Usage::default(),
        };
        assert_eq!(
            SubAgentEvent::new(shutdown.clone()),
            Err(Box::new(shutdown))
        );
    }

    #[test]
    fn a_denial_reason_is_an_object_with_a_kind() {
        let mode = AutoDenyReason::NobodyToAsk { because: None };
        assert_eq!(
            serde_json::to_value(&mode).unwrap(),
            serde_json::json!({"kind": "nobody_to_ask", "because": null})
        );
        let rule = AutoDenyReason::Rule {
            rule: "bash(curl:*)".into(),
            source: Source::Session,
        };
        assert_eq!(
            serde_json::to_value(&rule).unwrap(),
            serde_json::json!({"kind": "rule", "rule": "bash(curl:*)", "source": {"kind": "session"}})
        );
        let secret = AutoDenyReason::NobodyToAsk {
            because: Some(AskBecause::Rule {
                rule: "*(**/.env*)".into(),
                source: Source::BuiltIn,
            }),
        };
        assert_eq!(
            serde_json::to_value(&secret).unwrap()["because"]["source"]["kind"],
            "built_in"
        );
    }
}

#[cfg(test)]
mod compaction_line_tests {
    use super::*;

    #[test]
    fn the_left_out_line_counts_one_message_as_one() {
        let one = Event::TurnLeftOut {
            messages: 1,
            saved: true,
        };
        assert_eq!(
            one.left_out_line().as_deref(),
            Some(
                "this turn failed, so its 1 message will not be sent again (it stays in the \
                 saved session); the next prompt starts from the conversation before it"
            )
        );
        let three = Event::TurnLeftOut {
            messages: 3,
            saved: false,
        };
        let line = three.left_out_line().unwrap();
        assert!(
            line.contains("its 3 messages will not be sent again;"),
            "{line}"
        );
    }

    #[test]
    fn a_compaction_says_why_and_how_much_and_other_events_have_no_line() {
        let compacted = |trigger| Event::Compacted {
            trigger,
            tokens_before: 90_000,
            tokens_after: 12_000,
            summarized_messages: 41,
        };
        assert_eq!(
            compacted(CompactionTrigger::Threshold)
                .compaction_line()
                .as_deref(),
            Some(
                "Compacted the conversation (the context window was nearly full): 41 messages \
                 summarized, about 90000 → 12000 tokens; the saved session keeps everything."
            )
        );
        let manual = compacted(CompactionTrigger::Manual).compaction_line();
        assert!(manual.is_some_and(|l| l.contains("(as asked)")));
        let rejected = compacted(CompactionTrigger::Rejection).compaction_line();
        assert!(rejected.is_some_and(|l| l.contains("refused the request as too long")));
        let warning = Event::Warning {
            message: "x".into(),
        };
        assert_eq!(warning.compaction_line(), None);
    }
}
