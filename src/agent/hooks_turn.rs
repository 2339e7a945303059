//! The hooks of a turn as a whole: UserPromptSubmit before a prompt (typed, piped,
//! `-p`, or a `/name` line) becomes a turn, and Stop (SubagentStop in a forked skill's
//! sub-agent) when the agent has answered. Both run through `hooks::fire`, so every
//! run is reported.
//!
//! A prompt a hook blocks (exit 2, `decision: "block"`, `continue: false`) never enters
//! the conversation; what the hooks add (plain stdout on exit 0, `additionalContext`)
//! goes with it as a note marked as hook output. A Stop hook's block makes the agent go
//! on with the reason as the next user-side message, at most [`MAX_STOP_CONTINUES`]
//! times in a row within one turn, so a hook that always blocks cannot keep the agent
//! (and its bill) going forever; `stop_hook_active` is true on the firings after a
//! block.
//!
//! It must not know how hooks run inside or how events are drawn.

use crate::agent::hooks::{fire, hook_block};
use crate::agent::turn::{SessionState, TurnContext};
use crate::hooks::{Decision, Detail, Event as HookEvent, Outcome, Report, Target, Verdict};
use crate::protocol::Event;
use crate::sessions::NoteKind;

/// The most times in a row one turn goes on because a Stop hook blocked the stop. A
/// hook that blocks every stop (a loop it never ends) costs at most this many more
/// rounds of the model per turn (and never more requests than `--max-turns`); past it
/// the agent stops and says why.
pub const MAX_STOP_CONTINUES: u32 = 20;

/// What the UserPromptSubmit hooks did with a prompt.
pub(super) enum PromptHooks {
    /// The prompt goes on (with any context they added, as a note).
    Go,
    /// A hook blocked it (or stopped the agent): it is not sent.
    Blocked {
        /// Why, for the user.
        reason: String,
    },
}

/// Runs the UserPromptSubmit hooks on `prompt`, the text as the user gave it. What
/// they add goes to the conversation's notes, which the turn's message carries.
pub(super) async fn user_prompt_submit(
    state: &mut SessionState,
    ctx: &TurnContext,
    prompt: &str,
) -> PromptHooks {
    if !ctx.setup.hooks.has(HookEvent::UserPromptSubmit) {
        return PromptHooks::Go;
    }
    let report = fire(
        state,
        ctx,
        HookEvent::UserPromptSubmit,
        Target::Nothing,
        || Detail::Prompt {
            prompt: prompt.to_string(),
        },
    )
    .await;
    if let Some(reason) = report.stop() {
        return PromptHooks::Blocked {
            reason: reason
                .unwrap_or("a UserPromptSubmit hook stopped the agent")
                .to_string(),
        };
    }
    if let Verdict::Deny { reason, .. } = report.verdict() {
        return PromptHooks::Blocked { reason };
    }
    let added = context_of(HookEvent::UserPromptSubmit, &report);
    if !added.is_empty() {
        state
            .conversation
            .add_note(NoteKind::Hook, added.trim_start().to_string());
    }
    PromptHooks::Go
}

/// What exit-0 hooks of a firing said for the model: their plain stdout and their
/// `additionalContext`, each as a block marked as hook output.
fn context_of(event: HookEvent, report: &Report) -> String {
    let mut out = String::new();
    for run in &report.runs {
        let Outcome::Answered { answer } = &run.outcome else {
            continue;
        };
        for text in [&answer.plain_text, &answer.additional_context]
            .into_iter()
            .flatten()
        {
            let text = text.trim();
            if !text.is_empty() {
                out.push_str(&hook_block(event, &run.command, text));
            }
        }
    }
    out
}

/// Consecutive continues a Stop hook caused in the running turn.
#[derive(Debug, Default)]
pub(super) struct StopLoop {
    continues: u32,
}

/// Whether the agent stops after answering.
pub(super) enum AfterStop {
    /// It stops: the turn ends.
    Stop,
    /// A Stop hook blocked the stop: the agent goes on with this user-side message.
    GoOn {
        /// The hook's reason, marked as hook output.
        message: String,
    },
}

/// Runs the Stop hooks (SubagentStop in a sub-agent) once the agent answered with
/// `last_answer` and no tool call.
pub(super) async fn stop(
    state: &SessionState,
    ctx: &TurnContext,
    stops: &mut StopLoop,
    last_answer: &str,
) -> AfterStop {
    let event = if ctx.events.is_forked() {
        HookEvent::SubagentStop
    } else {
        HookEvent::Stop
    };
    if !ctx.setup.hooks.has(event) {
        return AfterStop::Stop;
    }
    let active = stops.continues > 0;
    let report = fire(state, ctx, event, Target::Nothing, || Detail::Stop {
        stop_hook_active: active,
        last_assistant_message: Some(last_answer.to_string()),
    })
    .await;
    if report.stop().is_some() {
        return AfterStop::Stop;
    }
    let Some((command, reason)) = first_block(&report) else {
        return AfterStop::Stop;
    };
    if stops.continues >= MAX_STOP_CONTINUES {
        ctx.emit(Event::Warning {
            message: format!(
                "a {} hook blocked the stop {} times in a row in this turn; the agent stops \
                 here (at most {MAX_STOP_CONTINUES}), so a hook that never lets it stop \
                 cannot keep it going",
                event.name(),
                stops.continues + 1
            ),
        });
        return AfterStop::Stop;
    }
    stops.continues += 1;
    AfterStop::GoOn {
        message: hook_block(event, &command, &reason)
            .trim_start()
            .to_string(),
    }
}

/// The first hook that blocked the stop (exit 2, `decision: "block"`), with its
/// reason. A guard that could not answer does not keep the agent going: stopping is
/// the safe side.
fn first_block(report: &Report) -> Option<(String, String)> {
    report.runs.iter().find_map(|run| {
        let reason = match &run.outcome {
            Outcome::Blocked { reason } => reason.trim().to_string(),
            Outcome::Answered { answer } => match &answer.decision {
                Some(Decision::Deny { reason }) => reason.clone().unwrap_or_default(),
                _ => return None,
            },
            Outcome::GuardFailed { .. } | Outcome::Failed { .. } => return None,
        };
        let reason = if reason.trim().is_empty() {
            "a Stop hook asked the agent to go on".to_string()
        } else {
            reason
        };
        Some((run.command.clone(), reason))
    })
}
