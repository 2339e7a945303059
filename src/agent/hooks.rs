//! The session's hooks where the agent meets them: the hooks in force (built once in
//! `session.rs`: config.toml's only, until project hooks can be trusted), [`fire`] — the
//! one function every event's hooks run through, which reports every run as an
//! [`Event::HookRan`] — and the tool-call steps: PreToolUse before a call is prepared
//! and judged, PermissionRequest just before the user would be asked, PostToolUse and
//! PostToolUseFailure after it ran. The prompt and stop events are in `hooks_turn.rs`.
//!
//! A PreToolUse denial (a hook's deny, exit 2, or a guard that could not answer) ends
//! the call before it is judged; a hook's `updatedInput` replaces the arguments, which
//! are then prepared and judged like the model's own. A hook's `allow` and `ask` go to
//! the approval policy as a [`HookStance`], which composes them with the rules (deny
//! rules still deny; secret files and destructive commands still ask). What a
//! PostToolUse hook says for the model is appended after the result by harness9, in a
//! block marked as hook output.
//!
//! It must not know how hooks run inside (`crate::hooks`) or how events are drawn.

use std::sync::Arc;

use serde_json::Value;

use crate::agent::approval::{AskPlan, HookStance};
use crate::agent::turn::{SessionState, TurnContext};
use crate::hooks::{
    Answer, Decision, Detail, Event as HookEvent, HookInput, HookRun, HookSet, KeepGoing,
    OriginKind, Outcome, Report, RunContext, Target, Verdict, claude_tool_input, claude_tool_name,
    harness9_tool_input, run_event,
};
use crate::llm::ToolCall;
use crate::protocol::{Event, HookKeepGoing, HookOrigin, HookRan, HookResult};

/// The hooks in force for a session, and how they run.
#[derive(Debug, Clone)]
pub struct SessionHooks {
    set: Arc<HookSet>,
    run: RunContext,
    /// What `/hooks` lists: every configured hook, in force or not.
    listing: Arc<crate::protocol::HookListing>,
    /// The session as hooks are told it (set when the session starts, resumes or is
    /// cleared): what a sub-agent's hooks are told too.
    session: Arc<std::sync::Mutex<HeldSession>>,
}

/// The session's id and record file, as hooks are told them.
#[derive(Debug, Clone, Default)]
pub struct HeldSession {
    /// `session_id`.
    pub id: String,
    /// `transcript_path` (empty when the session is not saved).
    pub transcript: String,
}

impl SessionHooks {
    /// `set` run as `run` says.
    pub fn new(set: HookSet, run: RunContext) -> Self {
        SessionHooks {
            set: Arc::new(set),
            run,
            listing: Arc::default(),
            session: Arc::default(),
        }
    }

    /// Tells hooks from now on that the session is `session`.
    pub fn set_session(&self, session: HeldSession) {
        if let Ok(mut held) = self.session.lock() {
            *held = session;
        }
    }

    /// The session as last set.
    pub fn session(&self) -> HeldSession {
        self.session
            .lock()
            .map(|held| held.clone())
            .unwrap_or_default()
    }

    /// The same hooks, with what `/hooks` lists.
    pub fn with_listing(mut self, listing: crate::protocol::HookListing) -> Self {
        self.listing = Arc::new(listing);
        self
    }

    /// What `/hooks` lists.
    pub fn listing(&self) -> &crate::protocol::HookListing {
        &self.listing
    }

    /// The hooks in force.
    pub fn set(&self) -> &HookSet {
        &self.set
    }

    /// How they run.
    pub fn run_context(&self) -> &RunContext {
        &self.run
    }
    /// Whether any hook is configured for `event` (nothing is prepared for an event
    /// without hooks).
    pub(super) fn has(&self, event: HookEvent) -> bool {
        self.set.count(event) > 0
    }
}

/// Whether the agent goes on after an event's hooks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum AfterHooks {
    /// It goes on.
    GoOn,
    /// A hook said `continue: false`: the turn ends (the reason was shown with the
    /// hook's run).
    Stop,
}

impl AfterHooks {
    /// What `report`'s hooks said.
    pub(super) fn of(report: &Report) -> AfterHooks {
        match report.stop() {
            Some(_) => AfterHooks::Stop,
            None => AfterHooks::GoOn,
        }
    }
}

/// Runs the hooks of `event` whose matchers take `target` (nothing at all, and no
/// input built, when none does), each reported as an [`Event::HookRan`]; returns their
/// report for the caller to act on.
pub(super) async fn fire(
    state: &SessionState,
    ctx: &TurnContext,
    event: HookEvent,
    target: Target<'_>,
    detail: impl FnOnce() -> Detail,
) -> Report {
    let hooks = &ctx.setup.hooks;
    let selected = hooks.set.select(event, target);
    if selected.is_empty() {
        return Report::default();
    }
    // A sub-agent's hooks are told the session's id and record, not its own.
    let session = if ctx.events.is_forked() {
        hooks.session()
    } else {
        HeldSession {
            id: state.cache_key.clone(),
            transcript: transcript_path(state),
        }
    };
    let input = HookInput::new(
        event,
        &session.id,
        &session.transcript,
        hooks.run.cwd.clone(),
        detail(),
    );
    let run = hooks.run.seeing_transcript(&session.transcript);
    let report = run_event(&selected, &input, &run, &ctx.cancel).await;
    let tool = match target {
        Target::Tool { name } => Some(name.to_string()),
        Target::Kind { .. } | Target::Nothing => None,
    };
    for run in &report.runs {
        ctx.emit(Event::HookRan(Box::new(seen(event, tool.clone(), run))));
    }
    report
}

/// The session's record file, as hooks are told it (`transcript_path`): empty when the
/// session is not saved.
pub(super) fn transcript_path(state: &SessionState) -> String {
    state
        .conversation
        .record_path()
        .map(|p| p.display().to_string())
        .unwrap_or_default()
}

/// One run as frontends see it.
pub(super) fn seen(event: HookEvent, tool: Option<String>, run: &HookRun) -> HookRan {
    let (result, keep_going, system_message) = match &run.outcome {
        Outcome::Answered { answer } => answered(answer),
        Outcome::Blocked { reason } => (
            HookResult::Blocked {
                reason: if reason.trim().is_empty() {
                    "blocked by the hook (exit 2, no reason given)".to_string()
                } else {
                    reason.trim().to_string()
                },
            },
            HookKeepGoing::Yes,
            None,
        ),
        Outcome::GuardFailed { failure } => (
            HookResult::GuardFailed {
                reason: failure.to_string(),
            },
            HookKeepGoing::Yes,
            None,
        ),
        Outcome::Failed { failure } => (
            HookResult::Failed {
                reason: failure.to_string(),
            },
            HookKeepGoing::Yes,
            None,
        ),
    };
    HookRan {
        event,
        command: run.command.clone(),
        origin: match run.origin.kind {
            OriginKind::UserConfig => HookOrigin::UserConfig,
            OriginKind::ProjectToml => HookOrigin::ProjectToml,
            OriginKind::ClaudeSettings => HookOrigin::ClaudeSettings,
            OriginKind::ClaudeLocalSettings => HookOrigin::ClaudeLocalSettings,
            OriginKind::Plugin => HookOrigin::Plugin,
        },
        origin_path: run.origin.path.clone(),
        tool,
        result,
        keep_going,
        system_message,
        elapsed_ms: u64::try_from(run.elapsed.as_millis()).unwrap_or(u64::MAX),
    }
}

fn answered(answer: &Answer) -> (HookResult, HookKeepGoing, Option<String>) {
    let result = match &answer.decision {
        None => HookResult::Answered,
        Some(Decision::Allow { reason }) => HookResult::Allowed {
            reason: reason.clone(),
        },
        Some(Decision::Ask { reason }) => HookResult::Asked {
            reason: reason.clone(),
        },
        Some(Decision::Deny { reason }) => HookResult::Denied {
            reason: reason.clone(),
        },
    };
    let keep_going = match &answer.keep_going {
        KeepGoing::Yes => HookKeepGoing::Yes,
        KeepGoing::Stop { reason } => HookKeepGoing::Stop {
            reason: reason.clone(),
        },
    };
    (result, keep_going, answer.system_message.clone())
}

/// What the PreToolUse hooks let through.
pub(super) enum PreTool {
    /// The call goes on to be prepared and judged with these arguments.
    Proceed {
        /// The arguments: the model's, or a hook's `updatedInput`.
        args: Value,
        /// What the hooks said, for the approval policy.
        stance: HookStance,
    },
    /// A hook denied it (or stopped the agent): the model gets this text.
    Denied {
        /// Why, for the model.
        message: String,
        /// Whether the turn goes on.
        after: AfterHooks,
    },
}

/// Runs the PreToolUse hooks matching `call` (nothing at all when none matches).
pub(super) async fn pre_tool_use(
    state: &SessionState,
    ctx: &TurnContext,
    call: &ToolCall,
    args: Value,
) -> PreTool {
    let target = Target::Tool { name: &call.name };
    let report = fire(state, ctx, HookEvent::PreToolUse, target, || {
        tool_detail(&call.name, &args)
    })
    .await;
    if let Some(reason) = report.stop() {
        let why = reason.unwrap_or("no reason given");
        return PreTool::Denied {
            message: format!("Not run: a PreToolUse hook stopped the agent: {why}"),
            after: AfterHooks::Stop,
        };
    }
    let stance = match report.verdict() {
        Verdict::Deny { reason, .. } => {
            return PreTool::Denied {
                message: format!("Not run: a PreToolUse hook blocked this call: {reason}"),
                after: AfterHooks::GoOn,
            };
        }
        Verdict::Ask { reason } => HookStance::Ask {
            why: match reason {
                Some(r) => format!("a PreToolUse hook asks: {r}"),
                None => "a PreToolUse hook asks for confirmation".to_string(),
            },
        },
        Verdict::Allow { .. } => HookStance::Allow,
        Verdict::NoDecision => HookStance::Silent,
    };
    match report.updated_input() {
        Some(updated) => match harness9_tool_input(&call.name, updated) {
            args @ Value::Object(_) => PreTool::Proceed { args, stance },
            _ => PreTool::Denied {
                message: "Not run: a PreToolUse hook's updatedInput is not a JSON object."
                    .to_string(),
                after: AfterHooks::GoOn,
            },
        },
        None => PreTool::Proceed { args, stance },
    }
}

/// The detail of a tool event: Claude Code's name and argument shape.
fn tool_detail(tool: &str, args: &Value) -> Detail {
    Detail::Tool {
        tool_name: claude_tool_name(tool).unwrap_or(tool).to_string(),
        tool_input: claude_tool_input(tool, args),
        tool_response: None,
    }
}

/// What the PermissionRequest hooks answered for a question about to be asked.
pub(super) enum PermissionAnswer {
    /// No hook answered it (or its allow cannot answer this question): ask as usual.
    Ask,
    /// A hook allowed it, and the question is one a hook's allow may answer.
    Allow,
    /// A hook denied it: the model gets this text.
    Deny {
        /// Why, for the model.
        message: String,
    },
}

/// Runs the PermissionRequest hooks for `call` just before the user would be asked
/// `plan` (in headless runs too, where nobody can be). Their allow answers only what a
/// PreToolUse allow may ([`HookStance::Allow`]): never a rule's, a destructive
/// command's or an unreadable line's question.
pub(super) async fn permission_request(
    state: &SessionState,
    ctx: &TurnContext,
    call: &ToolCall,
    args: Option<&Value>,
    plan: &AskPlan,
) -> PermissionAnswer {
    if !ctx.setup.hooks.has(HookEvent::PermissionRequest) {
        return PermissionAnswer::Ask;
    }
    let target = Target::Tool { name: &call.name };
    let empty = Value::Object(serde_json::Map::new());
    let args = args.unwrap_or(&empty);
    let report = fire(state, ctx, HookEvent::PermissionRequest, target, || {
        tool_detail(&call.name, args)
    })
    .await;
    match report.verdict() {
        Verdict::Deny { reason, .. } => PermissionAnswer::Deny {
            message: format!("Not run: a PermissionRequest hook denied this call: {reason}"),
        },
        Verdict::Allow { .. } if crate::agent::approval::hook_may_allow(plan) => {
            PermissionAnswer::Allow
        }
        Verdict::Allow { .. } | Verdict::Ask { .. } | Verdict::NoDecision => PermissionAnswer::Ask,
    }
}

/// How a call that ran ended, for its post hooks.
pub(super) enum Ran<'a> {
    /// It succeeded: PostToolUse, with its result.
    Succeeded {
        /// The result as the model gets it.
        content: &'a str,
    },
    /// It failed: PostToolUseFailure, with the error.
    Failed {
        /// The error as the model gets it.
        error: &'a str,
    },
}

/// What the post hooks give the call's result.
pub(super) struct PostTool {
    /// Text harness9 appends after the result (empty: none), marked as hook output.
    pub appended: String,
    /// Whether the turn goes on.
    pub after: AfterHooks,
}

/// Runs the PostToolUse (or PostToolUseFailure) hooks for `call`, which ran with
/// `args` (a PreToolUse hook's rewrite included; the model's own when `None`). Their
/// `decision: "block"` reason and `additionalContext` are appended after the result by
/// harness9, each in a block that names the event and the hook: the model reads them as
/// hook output because harness9 put them there, whatever the result itself says.
pub(super) async fn post_tool_use(
    state: &SessionState,
    ctx: &TurnContext,
    call: &ToolCall,
    args: Option<&Value>,
    ran: Ran<'_>,
) -> PostTool {
    let event = match ran {
        Ran::Succeeded { .. } => HookEvent::PostToolUse,
        Ran::Failed { .. } => HookEvent::PostToolUseFailure,
    };
    let nothing = PostTool {
        appended: String::new(),
        after: AfterHooks::GoOn,
    };
    if !ctx.setup.hooks.has(event) {
        return nothing;
    }
    let args = match args {
        Some(args) => args.clone(),
        None => match serde_json::from_str::<Value>(&call.arguments) {
            Ok(v @ Value::Object(_)) => v,
            _ => Value::Object(serde_json::Map::new()),
        },
    };
    let target = Target::Tool { name: &call.name };
    let report = fire(state, ctx, event, target, || {
        let tool_name = claude_tool_name(&call.name)
            .unwrap_or(&call.name)
            .to_string();
        let tool_input = claude_tool_input(&call.name, &args);
        match ran {
            Ran::Succeeded { content } => Detail::Tool {
                tool_name,
                tool_input,
                tool_response: Some(tool_response(&call.name, content)),
            },
            Ran::Failed { error } => Detail::ToolFailure {
                tool_name,
                tool_input,
                error: error.to_string(),
            },
        }
    })
    .await;
    PostTool {
        appended: for_the_model(event, &report),
        after: AfterHooks::of(&report),
    }
}

/// A result in the shape Claude Code's hooks read for the tool: Bash's
/// `{stdout, stderr, interrupted, isImage}`, the file tools' `{filePath, …}` where the
/// arguments say it, else the text.
fn tool_response(tool: &str, content: &str) -> Value {
    match tool {
        "bash" => serde_json::json!({
            "stdout": content,
            "stderr": "",
            "interrupted": false,
            "isImage": false,
        }),
        _ => Value::String(content.to_string()),
    }
}

/// What the hooks of one firing say for the model (blocks' reasons, then added
/// context), as the blocks harness9 appends: empty when they said nothing.
pub(super) fn for_the_model(event: HookEvent, report: &Report) -> String {
    let mut out = String::new();
    for run in &report.runs {
        let mut said: Vec<String> = Vec::new();
        match &run.outcome {
            Outcome::Blocked { reason } if !reason.trim().is_empty() => {
                said.push(reason.trim().to_string());
            }
            // A guard that could not answer: the model is told its check did not run.
            Outcome::GuardFailed { failure } => {
                said.push(format!(
                    "The {} guard could not answer ({failure}).",
                    event.name()
                ));
            }
            Outcome::Answered { answer } => {
                if let Some(Decision::Deny { reason: Some(r) }) = &answer.decision {
                    said.push(r.trim().to_string());
                }
                if let Some(context) = &answer.additional_context {
                    said.push(context.trim().to_string());
                }
            }
            _ => {}
        }
        for text in said.into_iter().filter(|t| !t.is_empty()) {
            out.push_str(&hook_block(event, &run.command, &text));
        }
    }
    out
}

/// One piece of hook output for the model, opening with its own blank line.
pub(super) fn hook_block(event: HookEvent, command: &str, text: &str) -> String {
    let command = command.replace('&', "&amp;").replace('"', "&quot;");
    format!(
        "\n\n<hook-output event=\"{}\" hook=\"{command}\">\n{text}\n</hook-output>",
        event.name()
    )
}
