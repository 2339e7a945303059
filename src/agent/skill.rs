//! Skills the agent runs itself: `/name args` invocations ([`run_skill`]: the skill
//! pipeline of [`crate::skills::invoke`], then a normal turn) and forked skills
//! (`context: fork`): a sub-agent with its own conversation, the prepared skill as its
//! instructions, the arguments as its task, and only the skill's `allowed-tools`. Only
//! its final answer returns to the main conversation. [`AgentForker`] gives the same
//! power to tools (`use_skill` on a fork skill) through [`crate::tools::Forker`].
//!
//! It must not know how events are drawn.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use crate::agent::turn::{SessionState, TurnContext, TurnResult, run_turn};
use crate::agent::{AgentSetup, ApprovalMode};
use crate::llm::Message;
use crate::protocol::{ErrorKind, Event, TurnOutcome, Usage};
use crate::skills::inline_shell::{InlineShellError, Permission};
use crate::skills::invoke::{self, InlineShell, PrepareError, Prepared};
use crate::tools::skill::{BundledTools, load_bundled_tools};
use crate::tools::{ForkError, ForkRequest, Forker};

/// The task given to a forked skill invoked without arguments.
const DEFAULT_TASK: &str = "Carry out the instructions above.";

/// Whether inline commands may run under an approval mode (before looking at where a
/// skill comes from: see [`inline_shell::permission_for`]).
pub fn mode_permission(mode: ApprovalMode) -> Permission {
    match mode {
        ApprovalMode::FullAuto => Permission::Run,
        ApprovalMode::Suggest => {
            Permission::Refuse("approval mode suggest does not allow commands".into())
        }
        ApprovalMode::AutoEdit => {
            Permission::Refuse("approval mode auto-edit does not allow commands".into())
        }
    }
}

/// Whether a tool may be used by a sub-agent whose skill lists `allowed`. Entries may
/// use harness9's names (`read_file`) or Claude Code's (`Read`, `Bash(git:*)`).
pub fn tool_allowed(allowed: &[String], tool: &str) -> bool {
    allowed
        .iter()
        .flat_map(|e| e.split([',', ' ']))
        .any(|entry| {
            let base = entry
                .split('(')
                .next()
                .unwrap_or(entry)
                .trim()
                .to_ascii_lowercase();
            let mapped = match base.as_str() {
                "read" => "read_file",
                "write" => "write_file",
                "edit" | "multiedit" => "edit_file",
                "ls" => "list",
                other => other,
            };
            !mapped.is_empty() && mapped == tool
        })
}

/// Tools a sub-agent never gets: they change the main conversation's loaded skills.
const MAIN_SESSION_ONLY: [&str; 3] = ["use_skill", "unload_skill", "skill_select_docs"];

/// Runs a sub-agent for `request`; returns its result and the usage it consumed.
pub async fn run_fork(
    parent: &TurnContext,
    model: &str,
    request: ForkRequest,
) -> (Result<TurnResult, ForkError>, Usage) {
    let tools = match request.allowed_tools.as_deref() {
        Some(allowed) if !allowed.is_empty() => parent
            .setup
            .tools
            .filtered(|t| tool_allowed(allowed, t) && !MAIN_SESSION_ONLY.contains(&t)),
        _ => parent
            .setup
            .tools
            .filtered(|t| !MAIN_SESSION_ONLY.contains(&t)),
    };
    let setup = AgentSetup {
        tools,
        system_prompt: request.instructions.clone(),
        ..AgentSetup::clone(&parent.setup)
    };
    let ctx = TurnContext {
        setup: Arc::new(setup),
        events: parent
            .events
            .forked(request.parent_call_id.clone(), &request.skill),
        cancel: parent.cancel.clone(),
        pending: parent.pending.clone(),
    };
    let mut state = SessionState {
        messages: vec![Message::System {
            content: request.instructions,
        }],
        model: model.to_string(),
        usage: Usage::default(),
        policy: crate::agent::approval::ApprovalPolicy::new(
            parent.setup.approval_mode,
            parent.setup.approver,
        ),
    };
    let task = if request.task.trim().is_empty() {
        DEFAULT_TASK.to_string()
    } else {
        request.task
    };
    let result = run_turn(&mut state, &ctx, task).await;
    let outcome = match &result.outcome {
        TurnOutcome::Completed => Ok(result.clone()),
        TurnOutcome::Interrupted => Err(ForkError::Interrupted),
        TurnOutcome::MaxTurnsReached { limit } => Err(ForkError::Failed(format!(
            "the sub-agent for skill `{}` stopped after {limit} model requests without a final answer",
            request.skill
        ))),
        TurnOutcome::Failed { message, .. } => Err(ForkError::Failed(message.clone())),
    };
    (outcome, state.usage)
}

/// The agent's [`Forker`] for tools: runs sub-agents and keeps their usage for the
/// parent turn to add.
pub struct AgentForker {
    ctx: TurnContext,
    model: String,
    usage: Mutex<Usage>,
}

impl AgentForker {
    /// A forker for tools called in `ctx`, using the session's current model.
    pub fn new(ctx: TurnContext, state: &SessionState) -> Arc<Self> {
        Arc::new(AgentForker {
            ctx,
            model: state.model.clone(),
            usage: Mutex::new(Usage::default()),
        })
    }

    /// The usage sub-agents consumed so far (and resets it).
    pub fn take_usage(&self) -> Usage {
        self.usage
            .lock()
            .map(|mut u| std::mem::take(&mut *u))
            .unwrap_or_default()
    }
}

impl Forker for AgentForker {
    fn fork(
        &self,
        request: ForkRequest,
    ) -> Pin<Box<dyn Future<Output = Result<String, ForkError>> + Send + '_>> {
        Box::pin(async move {
            let (result, usage) = run_fork(&self.ctx, &self.model, request).await;
            if let Ok(mut u) = self.usage.lock() {
                u.add(&usage);
            }
            result.map(|r| r.final_text)
        })
    }
}

/// Runs a user-invoked skill (`/name args`) as a turn.
pub async fn run_skill(
    state: &mut SessionState,
    ctx: &TurnContext,
    name: &str,
    args: &str,
) -> TurnOutcome {
    let typed = if args.is_empty() {
        format!("/{name}")
    } else {
        format!("/{name} {args}")
    };
    let fail = |message: String| {
        ctx.events.emit(Event::TurnStarted {
            text: typed.clone(),
        });
        let outcome = TurnOutcome::Failed {
            kind: ErrorKind::Skill,
            message,
        };
        ctx.events.emit(Event::TurnComplete {
            outcome: outcome.clone(),
            final_text: String::new(),
            usage: Usage::default(),
            requests: 0,
        });
        outcome
    };
    let Some(skill) = ctx.setup.catalog.get(name) else {
        return fail(format!("no skill named `{name}`"));
    };
    if !skill.user_invocable() {
        return fail(format!(
            "skill `{name}` sets `user-invocable: false` and cannot be run as a slash command"
        ));
    }
    // The one skill pipeline: inline commands on the body as written, then the
    // arguments, so an argument can never smuggle in a command.
    let permission = mode_permission(state.policy.mode());
    let shell = InlineShell {
        permission: &permission,
        workdir: &ctx.setup.workdir,
        cancel: &ctx.cancel,
    };
    let prepared = match invoke::prepare(skill, args, shell).await {
        Ok(p) => p,
        Err(PrepareError::Body(e)) => return fail(format!("cannot run skill `{name}`: {e}")),
        Err(PrepareError::Inline(InlineShellError::Interrupted)) => {
            ctx.events.emit(Event::TurnStarted {
                text: typed.clone(),
            });
            ctx.events.emit(Event::TurnComplete {
                outcome: TurnOutcome::Interrupted,
                final_text: String::new(),
                usage: Usage::default(),
                requests: 0,
            });
            return TurnOutcome::Interrupted;
        }
        Err(PrepareError::Inline(e)) => return fail(format!("{e}; the skill was not run")),
    };
    ctx.setup.loaded_skills.mark(&skill.name);
    // A skill run with /name brings its tools.json tools, as use_skill would.
    match load_bundled_tools(skill, &ctx.setup.tools) {
        BundledTools::Failed(problem) => ctx.events.emit(Event::Warning {
            message: format!(
                "skill `{}`: its tools were not loaded: {problem}",
                skill.name
            ),
        }),
        BundledTools::None | BundledTools::Loaded(_) => {}
    }
    let (instructions, task) = match prepared {
        Prepared::Inline { text } => return run_turn(state, ctx, text).await.outcome,
        Prepared::Fork { instructions, task } => (instructions, task),
    };

    ctx.events.emit(Event::TurnStarted {
        text: typed.clone(),
    });
    let request = ForkRequest {
        skill: skill.name.clone(),
        instructions,
        task,
        allowed_tools: (!skill.frontmatter.allowed_tools.is_empty())
            .then(|| skill.frontmatter.allowed_tools.clone()),
        parent_call_id: None,
    };
    let (result, usage) = run_fork(ctx, &state.model.clone(), request).await;
    state.usage.add(&usage);
    ctx.events.emit(Event::Usage {
        turn: usage,
        session: state.usage,
        context_tokens: None,
    });
    let (outcome, final_text, requests) = match result {
        Ok(r) => {
            state.messages.push(Message::User { content: typed });
            state.messages.push(Message::Assistant {
                content: r.final_text.clone(),
                reasoning: None,
                tool_calls: Vec::new(),
            });
            ctx.events.emit(Event::TextDelta {
                text: r.final_text.clone(),
            });
            (TurnOutcome::Completed, r.final_text, r.requests)
        }
        Err(ForkError::Interrupted) => (TurnOutcome::Interrupted, String::new(), 0),
        Err(ForkError::Failed(message)) => (
            TurnOutcome::Failed {
                kind: ErrorKind::Skill,
                message,
            },
            String::new(),
            0,
        ),
    };
    ctx.events.emit(Event::TurnComplete {
        outcome: outcome.clone(),
        final_text,
        usage,
        requests,
    });
    outcome
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_tools_accept_our_names_and_claude_code_names() {
        let allowed = vec![
            "Read, Grep".to_string(),
            "Bash(git:*)".to_string(),
            "list".to_string(),
        ];
        for yes in ["read_file", "grep", "bash", "list"] {
            assert!(tool_allowed(&allowed, yes), "{yes}");
        }
        for no in ["write_file", "edit_file", "use_skill", "glob"] {
            assert!(!tool_allowed(&allowed, no), "{no}");
        }
    }
}
