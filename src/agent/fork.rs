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
use crate::agent::approval::ApprovalPolicy;
use crate::agent::conversation::Conversation;
use crate::agent::turn::{SessionState, TurnContext, TurnResult, run_turn};
use crate::protocol::{TurnOutcome, Usage};
use crate::tools::{ForkError, ForkRequest, Forker};

/// The task given to a forked skill invoked without arguments.
const DEFAULT_TASK: &str = "Carry out the instructions above.";

/// Whether a tool may be used by a sub-agent whose skill or definition lists `allowed`.
/// Entries may use harness9's names (`read_file`) or Claude Code's (`Read`,
/// `Bash(git:*)`), mapped once by [`crate::agents::tools`].
pub fn tool_allowed(allowed: &[String], tool: &str) -> bool {
    crate::agents::tools::list_names(allowed, tool)
}

/// Tools a sub-agent never gets: they change the main conversation's loaded skills.
const MAIN_SESSION_ONLY: [&str; 3] = ["use_skill", "unload_skill", "skill_select_docs"];

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
        // A sub-agent's conversation is its own and is not saved: its final answer is
        // what the main conversation keeps.
        conversation: Conversation::new(request.instructions, None),
        model: model.to_string(),
        effort,
        // Its conversation is its own: so is the cache it may reuse.
        cache_key: crate::sessions::record::SessionId::generate().to_string(),
        usage: Usage::default(),
        policy,
        // A forked skill saves into, and reads from, the session's artifacts.
        artifacts: parent_artifacts,
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
        TurnOutcome::Truncated { reason } => Err(ForkError::Failed(format!(
            "the sub-agent for skill `{}` stopped early: {}",
            request.skill,
            reason.describe()
        ))),
    };
    (outcome, state.usage)
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
