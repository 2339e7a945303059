//! The session's side of hooks beyond a tool call: which hooks are in force when a
//! session starts (config.toml's, then the project's this user trusted as they stand,
//! `crate::hooks::ProjectHooks`), what `/hooks` lists, and the session events:
//!
//! - SessionStart (`source`: `startup`, `resume`, `clear`, `compact`): what its hooks
//!   print on exit 0 and their `additionalContext` become a note for the model, delivered
//!   with the next user message (`Conversation::add_note`, `NoteKind::Hook`) — never in
//!   the system prompt, which stays byte-identical so the provider's prompt cache holds;
//! - SessionEnd (`reason`: `clear`, `other`): waited for at most [`SESSION_END_WAIT`],
//!   then stopped, so leaving never hangs the terminal;
//! - PreCompact and PostCompact (matcher and `trigger`: `manual` or `auto`;
//!   `custom_instructions`: `/compact`'s focus);
//! - Notification (`notification_type` `permission_prompt` with a `message` when an
//!   approval is asked), run beside the question without holding it up.
//!
//! None of these events can deny anything: a guard's failure is reported like any
//! other. Every run is reported through [`report_runs`], the one place that says what a
//! hook run came to.
//!
//! It must not know how hooks are read, trusted or run inside (`crate::hooks`), or how
//! events are drawn.

use std::time::Duration;

use serde_json::{Map, Value};

use crate::agent::AgentSetup;
use crate::agent::turn::{SessionState, TurnContext};
use crate::config::Config;
use crate::hooks::{
    Detail, Event as HookEvent, HookInput, HookSet, Outcome, Report, Target, run_event,
};
use crate::protocol::{CompactionTrigger, Event, HookListing};
use crate::sessions::record::NoteKind;

/// The longest the SessionEnd hooks are waited for when the session ends.
pub const SESSION_END_WAIT: Duration = Duration::from_secs(5);
/// The most of the SessionStart hooks' context given to the model, in bytes.
pub const MAX_START_CONTEXT_BYTES: usize = 16 * 1024;

/// The hooks in force for a session started with `config`: config.toml's first, then
/// the trusted plugins', then the project's trusted ones; untrusted project hooks never run.
pub fn in_force(config: &Config) -> HookSet {
    let mut set = config.user_hooks.clone();
    set.extend(config.plugins.hooks.clone());
    set.extend(config.project_hooks.in_force());
    // The scripts they name in the project, as they are now: one changed during the
    // session (the model edits project files) is not run.
    set.pin_scripts(&config.project_root);
    set
}

/// Every configured hook with its standing, for `/hooks` and `harness9 hooks list`.
pub fn listing(config: &Config) -> HookListing {
    let mut yours = config.user_hooks.clone();
    yours.extend(config.plugins.hooks.clone());
    config.project_hooks.listing(&yours)
}

/// `/hooks`: the listing made when the session started (trust given later takes effect
/// in the next session, and the listing says what is in force in this one).
pub fn hook_list(setup: &AgentSetup) -> Event {
    Event::HookList(setup.hooks.listing().clone())
}

/// Why SessionStart fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StartSource {
    /// harness9 started with a new conversation.
    Startup,
    /// A saved session was resumed (at start or with `/resume`).
    Resume,
    /// `/clear` began a new conversation.
    Clear,
    /// A compaction replaced the older messages with a summary.
    Compact,
}

impl StartSource {
    fn name(self) -> &'static str {
        match self {
            StartSource::Startup => "startup",
            StartSource::Resume => "resume",
            StartSource::Clear => "clear",
            StartSource::Compact => "compact",
        }
    }
}

/// Why SessionEnd fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    /// `/clear` ended the conversation.
    Clear,
    /// The session ended (the user left, `-p` finished, a signal).
    Other,
}

impl EndReason {
    fn name(self) -> &'static str {
        match self {
            EndReason::Clear => "clear",
            EndReason::Other => "other",
        }
    }
}

fn trigger_name(trigger: CompactionTrigger) -> &'static str {
    match trigger {
        CompactionTrigger::Manual => "manual",
        CompactionTrigger::Threshold | CompactionTrigger::Rejection => "auto",
    }
}

/// The input of a session, compaction or notification event.
fn kind_input(ctx: &TurnContext, event: HookEvent, fields: &[(&str, Value)]) -> HookInput {
    let hooks = &ctx.setup.hooks;
    let fields: Map<String, Value> = fields
        .iter()
        .map(|(k, v)| ((*k).to_string(), v.clone()))
        .collect();
    let session = hooks.session();
    HookInput::new(
        event,
        &session.id,
        &session.transcript,
        hooks.run_context().cwd.clone(),
        Detail::Kind { fields },
    )
}

/// Runs `event`'s hooks whose matcher takes `kind` (nothing at all when none does) and
/// reports them; `None` when none ran.
async fn fire(
    ctx: &TurnContext,
    event: HookEvent,
    kind: &str,
    fields: &[(&str, Value)],
) -> Option<Report> {
    let hooks = &ctx.setup.hooks;
    let selected = hooks.set().select(event, Target::Kind { kind });
    if selected.is_empty() {
        return None;
    }
    let input = kind_input(ctx, event, fields);
    let run = hooks
        .run_context()
        .seeing_transcript(&hooks.session().transcript);
    let report = run_event(&selected, &input, &run, &ctx.cancel).await;
    report_runs(ctx, event, &report);
    Some(report)
}

/// SessionStart: its hooks' context becomes a note for the model's next message.
pub(super) async fn session_start(
    state: &mut SessionState,
    ctx: &TurnContext,
    source: StartSource,
) {
    // The session's id: a compaction inside a sub-agent (whose id is its own) keeps it.
    if matches!(
        source,
        StartSource::Startup | StartSource::Resume | StartSource::Clear
    ) {
        ctx.setup.hooks.set_session(super::hooks::HeldSession {
            id: state.cache_key.clone(),
            transcript: super::hooks::transcript_path(state),
        });
    }
    let fields = [
        ("source", Value::from(source.name())),
        ("model", Value::from(state.model.clone())),
    ];
    let Some(report) = fire(ctx, HookEvent::SessionStart, source.name(), &fields).await else {
        return;
    };
    let mut pieces: Vec<String> = Vec::new();
    for run in &report.runs {
        if let Outcome::Answered { answer } = &run.outcome {
            pieces.extend(answer.plain_text.iter().map(|t| t.trim().to_string()));
            pieces.extend(
                answer
                    .additional_context
                    .iter()
                    .map(|t| t.trim().to_string()),
            );
        }
    }
    pieces.retain(|p| !p.is_empty());
    if pieces.is_empty() {
        return;
    }
    let mut text = pieces.join("\n\n");
    if text.len() > MAX_START_CONTEXT_BYTES {
        let mut cut = MAX_START_CONTEXT_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("\n[… cut: the SessionStart hooks gave more than 16 KiB]");
    }
    state.conversation.add_note(
        NoteKind::Hook,
        format!(
            "[Context from the session's SessionStart hooks ({})]\n{text}",
            source.name()
        ),
    );
}

/// SessionEnd, waited for at most [`SESSION_END_WAIT`]; hooks still running then are
/// stopped (their process groups ended) and reported.
pub(super) async fn session_end(ctx: &TurnContext, reason: EndReason) {
    let hooks = &ctx.setup.hooks;
    let selected = hooks.set().select(
        HookEvent::SessionEnd,
        Target::Kind {
            kind: reason.name(),
        },
    );
    if selected.is_empty() {
        return;
    }
    let input = kind_input(
        ctx,
        HookEvent::SessionEnd,
        &[("reason", Value::from(reason.name()))],
    );
    // A token of its own: an interrupt that ended the turn must not stop these.
    let stop = tokio_util::sync::CancellationToken::new();
    let run = hooks
        .run_context()
        .seeing_transcript(&hooks.session().transcript);
    let running = run_event(&selected, &input, &run, &stop);
    tokio::pin!(running);
    let report = tokio::select! {
        report = &mut running => report,
        () = tokio::time::sleep(SESSION_END_WAIT) => {
            stop.cancel();
            ctx.emit(Event::Warning {
                message: format!(
                    "SessionEnd hooks still ran after {} s; they were stopped",
                    SESSION_END_WAIT.as_secs()
                ),
            });
            running.await
        }
    };
    report_runs(ctx, HookEvent::SessionEnd, &report);
}

/// PreCompact, before a compaction's summary is asked for.
pub(super) async fn pre_compact(
    ctx: &TurnContext,
    trigger: CompactionTrigger,
    focus: Option<&str>,
) {
    let fields = [
        ("trigger", Value::from(trigger_name(trigger))),
        (
            "custom_instructions",
            Value::from(focus.unwrap_or_default()),
        ),
    ];
    fire(ctx, HookEvent::PreCompact, trigger_name(trigger), &fields).await;
}

/// PostCompact, then SessionStart with source `compact`, after a compaction happened.
pub(super) async fn post_compact(
    state: &mut SessionState,
    ctx: &TurnContext,
    trigger: CompactionTrigger,
) {
    let fields = [("trigger", Value::from(trigger_name(trigger)))];
    fire(ctx, HookEvent::PostCompact, trigger_name(trigger), &fields).await;
    session_start(state, ctx, StartSource::Compact).await;
}

/// Notification `permission_prompt`: run on a task of its own, so the question is asked
/// at once; what the hooks did is reported when they end.
pub(super) fn notify_permission_prompt(ctx: &TurnContext, tool: &str) {
    if ctx
        .setup
        .hooks
        .set()
        .select(
            HookEvent::Notification,
            Target::Kind {
                kind: "permission_prompt",
            },
        )
        .is_empty()
    {
        return;
    }
    let ctx = ctx.clone();
    let message = format!("harness9 needs your permission to use {tool}");
    tokio::spawn(async move {
        let fields = [
            ("notification_type", Value::from("permission_prompt")),
            ("message", Value::from(message)),
        ];
        fire(&ctx, HookEvent::Notification, "permission_prompt", &fields).await;
    });
}

/// Reports every run of one firing as an [`Event::HookRan`] (these events block
/// nothing: a block or a failed guard is only said).
fn report_runs(ctx: &TurnContext, event: HookEvent, report: &Report) {
    for run in &report.runs {
        ctx.emit(Event::HookRan(Box::new(super::hooks::seen(
            event, None, run,
        ))));
    }
}
