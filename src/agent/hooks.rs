//! The session's hooks where the agent meets them: the hooks in force (built once in
//! `session.rs`: config.toml's only, until project hooks can be trusted) and the
//! PreToolUse step of a tool call (`call.rs`). A PreToolUse verdict that denies (a
//! hook's deny, exit 2, or a guard that could not answer) ends the call before it is
//! judged; a hook's `updatedInput` replaces the arguments, which are then prepared and
//! judged by the approval policy like the model's own, so deny rules, secret files and
//! destructive commands still decide. A hook's `allow` adds nothing (the rules decide);
//! its `ask` is not asked on its behalf yet, so it denies, saying so.
//!
//! It must not know how hooks run inside (`crate::hooks`) or how events are drawn.

use std::sync::Arc;

use serde_json::Value;

use crate::agent::turn::{SessionState, TurnContext};
use crate::hooks::{
    Event as HookEvent, HookInput, HookSet, Outcome, RunContext, Target, Verdict,
    harness9_tool_input, run_event,
};
use crate::llm::ToolCall;
use crate::protocol::Event;

/// The hooks in force for a session, and how they run.
#[derive(Debug, Clone)]
pub struct SessionHooks {
    set: Arc<HookSet>,
    run: RunContext,
    /// What `/hooks` lists: every configured hook, in force or not.
    listing: Arc<crate::protocol::HookListing>,
    /// The session's id as hooks are told it (set when the session starts or resumes).
    session_id: Arc<std::sync::Mutex<String>>,
}

impl SessionHooks {
    /// `set` run as `run` says.
    pub fn new(set: HookSet, run: RunContext) -> Self {
        SessionHooks {
            set: Arc::new(set),
            run,
            listing: Arc::default(),
            session_id: Arc::default(),
        }
    }

    /// Tells hooks from now on that the session is `id`.
    pub fn set_session_id(&self, id: &str) {
        if let Ok(mut held) = self.session_id.lock() {
            id.clone_into(&mut held);
        }
    }

    /// The session's id as last set.
    pub fn session_id(&self) -> String {
        self.session_id
            .lock()
            .map(|id| id.clone())
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
}

/// What the PreToolUse hooks let through.
pub(super) enum PreTool {
    /// The call goes on to be prepared and judged with these arguments.
    Proceed {
        /// The arguments: the model's, or a hook's `updatedInput`.
        args: Value,
    },
    /// A hook denied it: the model gets this text.
    Denied {
        /// Why, for the model.
        message: String,
    },
}

/// Runs the PreToolUse hooks matching `call` (nothing at all when none matches).
pub(super) async fn pre_tool_use(
    state: &SessionState,
    ctx: &TurnContext,
    call: &ToolCall,
    args: Value,
) -> PreTool {
    let hooks = &ctx.setup.hooks;
    let selected = hooks
        .set
        .select(HookEvent::PreToolUse, Target::Tool { name: &call.name });
    if selected.is_empty() {
        return PreTool::Proceed { args };
    }
    let input = HookInput::tool(
        HookEvent::PreToolUse,
        &state.cache_key,
        "",
        hooks.run.cwd.clone(),
        &call.name,
        &args,
        None,
    );
    let report = run_event(&selected, &input, &hooks.run, &ctx.cancel).await;
    for run in &report.runs {
        if let Outcome::Failed { failure } = &run.outcome {
            ctx.emit(Event::Warning {
                message: format!(
                    "hook `{}` failed ({failure}); it is not a guard, so {} goes on",
                    run.command, call.name
                ),
            });
        }
    }
    match report.verdict() {
        Verdict::Deny { command, reason } => {
            ctx.emit(Event::Warning {
                message: format!("hook `{command}` blocked {}: {reason}", call.name),
            });
            PreTool::Denied {
                message: format!("Not run: a PreToolUse hook blocked this call: {reason}"),
            }
        }
        Verdict::Ask { reason } => {
            let why = reason.map_or_else(String::new, |r| format!(" ({r})"));
            ctx.emit(Event::Warning {
                message: format!(
                    "a hook asked for confirmation of {}{why}; harness9 does not ask on a \
                     hook's behalf yet, so the call is denied",
                    call.name
                ),
            });
            PreTool::Denied {
                message: format!(
                    "Not run: a PreToolUse hook asked for the user's confirmation{why}, which \
                     is not available; the call was denied."
                ),
            }
        }
        Verdict::Allow { .. } | Verdict::NoDecision => match report.updated_input() {
            Some(updated) => match harness9_tool_input(&call.name, updated) {
                args @ Value::Object(_) => PreTool::Proceed { args },
                _ => PreTool::Denied {
                    message: "Not run: a PreToolUse hook's updatedInput is not a JSON object."
                        .to_string(),
                },
            },
            None => PreTool::Proceed { args },
        },
    }
}
