//! Forked skills (`context: fork`): a sub-agent with its own conversation, the prepared
//! skill as its system prompt, the arguments as its task, only the skill's
//! `allowed-tools` (never the tools that change the main conversation's skills), and
//! the parent's approval policy (shared "always" answers). Only its final answer
//! returns. [`AgentForker`] hands this power to tools (`use_skill` on a fork skill)
//! through [`crate::tools::Forker`]; the agent's `/name` calls [`run_fork`] directly.
//!
//! It must not know how events are drawn or how a skill's text is prepared.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};

use crate::agent::AgentSetup;
use crate::agent::approval::{ApprovalPolicy, CommandSandbox};
use crate::agent::conversation::Conversation;
use crate::agent::endpoint::SharedClient;
use crate::agent::turn::{SessionState, TurnContext, TurnResult, run_turn};
use crate::agents::tools::READ_ONLY_TOOLS;
use crate::agents::{Confinement, ModelChoice, PermissionWish};
use crate::llm::Client;
use crate::protocol::ApprovalMode;
use crate::protocol::{TurnOutcome, Usage};
use crate::tools::{ForkError, ForkOf, ForkRequest, Forker};

/// The task given to a forked skill invoked without arguments.
const DEFAULT_TASK: &str = "Carry out the instructions above.";

/// Whether a tool may be used by a sub-agent whose skill or definition lists `allowed`.
/// Entries may use harness9's names (`read_file`) or Claude Code's (`Read`,
/// `Bash(git:*)`), mapped once by [`crate::agents::tools`].
pub fn tool_allowed(allowed: &[String], tool: &str) -> bool {
    crate::agents::tools::list_names(allowed, tool)
}

/// Tools a sub-agent never gets: they change the main conversation's loaded skills, or
/// start sub-agents of their own.
const MAIN_SESSION_ONLY: [&str; 4] = ["use_skill", "unload_skill", "skill_select_docs", "agent"];

/// Runs a sub-agent for `request` under the parent's approval `policy` (shared: the
/// session's "always" answers hold in it, and its own hold in the session); returns its
/// result and the usage it consumed.
pub async fn run_fork(
    parent: &TurnContext,
    model: &str,
    effort: Option<crate::protocol::Effort>,
    policy: ApprovalPolicy,
    parent_artifacts: Option<crate::artifacts::ArtifactStore>,
    request: ForkRequest,
) -> (Result<TurnResult, ForkError>, Usage) {
    let limits = match &request.of {
        ForkOf::Skill => None,
        ForkOf::Agent(limits) => Some(limits),
    };
    let read_only = limits.is_some_and(|l| {
        l.confinement == Confinement::ReadOnly || l.permission == PermissionWish::Plan
    });
    let session_sandbox = CommandSandbox::of_session();
    // A read-only agent's commands run in the session's sandbox with nothing writable;
    // without a sandbox nothing could hold them to that, so it gets no `bash`.
    let read_only_sandbox = match &session_sandbox {
        CommandSandbox::Confined { secrets, .. } => Some(CommandSandbox::Confined {
            writable: Vec::new(),
            secrets: *secrets,
        }),
        CommandSandbox::Unconfined => None,
    };
    let allowed = request.allowed_tools.as_deref().filter(|a| !a.is_empty());
    let keep = |t: &str| {
        !MAIN_SESSION_ONLY.contains(&t)
            && allowed.is_none_or(|a| tool_allowed(a, t))
            && !limits.is_some_and(|l| tool_allowed(&l.disallowed_tools, t))
            && (!read_only
                || (READ_ONLY_TOOLS.contains(&t) && (t != "bash" || read_only_sandbox.is_some())))
    };
    let tools = parent.setup.tools.filtered(keep);
    let mut notes = Vec::new();
    let (client, model) = match limits.map(|l| &l.model) {
        Some(ModelChoice::Named(spec)) => match chosen_model(&parent.setup, &request.skill, spec) {
            Ok(Some((client, model))) => (client, model),
            Ok(None) => (parent.setup.client.clone(), model.to_string()),
            Err(note) => {
                notes.push(note);
                (parent.setup.client.clone(), model.to_string())
            }
        },
        _ => (parent.setup.client.clone(), model.to_string()),
    };
    let policy = match limits {
        None => policy,
        Some(l) => {
            let at_most = match l.permission {
                PermissionWish::AcceptEdits => ApprovalMode::AutoEdit,
                PermissionWish::Inherit | PermissionWish::Widest | PermissionWish::Plan => {
                    ApprovalMode::FullAuto
                }
            };
            let sandbox = read_only.then(|| read_only_sandbox.clone()).flatten();
            policy.narrowed(at_most, sandbox)
        }
    };
    let max_turns = match limits.and_then(|l| l.max_turns) {
        Some(cap) => cap.min(parent.setup.max_turns),
        None => parent.setup.max_turns,
    };
    let commands = if read_only {
        crate::exec::Confinement::SessionSandboxWritingOnly(Vec::new())
    } else {
        parent.setup.commands.clone()
    };
    let setup = AgentSetup {
        tools,
        system_prompt: request.instructions.clone(),
        client,
        max_turns,
        commands,
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
    for message in notes {
        ctx.emit(crate::protocol::Event::Warning { message });
    }
    let mut state = SessionState {
        // A sub-agent's conversation is its own and is not saved: its final answer is
        // what the main conversation keeps.
        conversation: Conversation::new(request.instructions, None),
        model,
        effort,
        // Its conversation is its own: so is the cache it may reuse.
        cache_key: crate::sessions::record::SessionId::generate().to_string(),
        usage: Usage::default(),
        policy,
        // A forked skill saves into, and reads from, the session's artifacts.
        artifacts: parent_artifacts,
        // Images it is shown live with its unsaved conversation.
        images: crate::images::ImageStore::default(),
    };
    let task = if request.task.trim().is_empty() {
        DEFAULT_TASK.to_string()
    } else {
        request.task
    };
    let result = run_turn(&mut state, &ctx, task).await;
    let outcome = match &result.outcome {
        TurnOutcome::Completed => Ok(result.clone()),
        // A limit of the run interrupts the parent's turn too, which names it.
        TurnOutcome::Interrupted | TurnOutcome::LimitReached { .. } => Err(ForkError::Interrupted),
        TurnOutcome::MaxTurnsReached { limit } => Err(ForkError::Failed(format!(
            "the sub-agent for skill `{}` stopped after {limit} model requests without a final answer",
            request.skill
        ))),
        TurnOutcome::Failed { message, .. } => Err(ForkError::Failed(message.clone())),
        TurnOutcome::Truncated { reason } => Err(ForkError::Failed(format!(
            "the sub-agent for skill `{}` stopped early: {}",
            request.skill,
            reason.describe()
        ))),
    };
    (outcome, state.usage)
}

/// The client and model an agent definition's `model` names: `Some` for `NAME/model`
/// of a configured provider (a client of its own when it is not the one in use),
/// `None` for the session's own; `Err` with a note when it names no configured
/// provider (the session's model is used).
fn chosen_model(
    setup: &AgentSetup,
    agent: &str,
    spec: &str,
) -> Result<Option<(SharedClient, String)>, String> {
    let current = setup.client.id();
    let choice = setup.providers.choose(spec, &current);
    let named = spec
        .split_once('/')
        .is_some_and(|(name, _)| name == choice.provider.name());
    let endpoint = setup.providers.endpoint(&choice.provider);
    let (Some(endpoint), true) = (endpoint, named && !choice.model.trim().is_empty()) else {
        return Err(format!(
            "agent `{agent}` asks for model `{spec}`, which no [providers.NAME] table configures; \
             it runs with the session's model"
        ));
    };
    if endpoint.id == current {
        return Ok(Some((setup.client.clone(), choice.model)));
    }
    match Client::new(endpoint.provider.clone()) {
        Ok(client) => Ok(Some((
            SharedClient::new(endpoint.id.clone(), client, endpoint.prices.clone()),
            choice.model,
        ))),
        Err(e) => Err(format!(
            "agent `{agent}` asks for model `{spec}`, but provider `{}` cannot be used ({e}); it \
             runs with the session's model",
            endpoint.id.name()
        )),
    }
}

/// The agent's [`Forker`] for tools: runs sub-agents and keeps their usage for the
/// parent turn to add.
pub struct AgentForker {
    ctx: TurnContext,
    model: String,
    effort: Option<crate::protocol::Effort>,
    policy: ApprovalPolicy,
    artifacts: Option<crate::artifacts::ArtifactStore>,
    usage: Mutex<Usage>,
}

impl AgentForker {
    /// A forker for tools called in `ctx`, using the session's current model.
    pub fn new(ctx: TurnContext, state: &SessionState) -> Arc<Self> {
        Arc::new(AgentForker {
            ctx,
            model: state.model.clone(),
            effort: state.effort,
            policy: state.policy.clone(),
            artifacts: state.artifacts.clone(),
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
            let (result, usage) = run_fork(
                &self.ctx,
                &self.model,
                self.effort,
                self.policy.clone(),
                self.artifacts.clone(),
                request,
            )
            .await;
            if let Ok(mut u) = self.usage.lock() {
                u.add(&usage);
            }
            result.map(|r| r.final_text.into_string())
        })
    }
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
