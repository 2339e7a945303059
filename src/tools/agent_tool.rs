//! The `agent` tool (`{agent, task}`): runs one agent definition ([`crate::agents`]) in
//! a sub-agent with its own conversation, the definition's prompt (and the skills it
//! preloads) as its system prompt and the task as its first message; only its final
//! answer comes back. The sub-agent is run by the agent's [`Forker`](super::Forker),
//! the one runner forked skills use, which narrows its tools and approval mode; this
//! tool only turns a definition into a [`ForkRequest`].
//!
//! The call itself touches nothing (every call the sub-agent makes is judged on its
//! own), so it needs no approval. It must not know how the sub-agent runs.

use std::sync::Arc;

use serde::Deserialize;

use super::{
    Access, AgentLimits, ForkError, ForkOf, ForkRequest, ToolContext, ToolFatal, ToolFuture,
    ToolOutput, TypedTool,
};
use crate::agents::{AgentCatalog, AgentDefinition, ToolChoice};
use crate::skills::SharedCatalog;

/// The tool's name.
pub const NAME: &str = "agent";

/// Runs agent definitions.
#[derive(Debug, Clone)]
pub struct AgentTool {
    agents: Arc<AgentCatalog>,
    skills: SharedCatalog,
}

impl AgentTool {
    /// The tool over `agents`, preloading skills from `skills`.
    pub fn new(agents: Arc<AgentCatalog>, skills: SharedCatalog) -> Self {
        AgentTool { agents, skills }
    }

    /// The sub-agent's system prompt: the definition's, then each preloaded skill's
    /// text; and the skills that could not be loaded.
    async fn instructions(&self, agent: &AgentDefinition) -> (String, Vec<String>) {
        let mut prompt = agent.prompt.clone();
        let mut missing = Vec::new();
        let catalog = self.skills.current();
        for name in &agent.skills {
            let Some(skill) = catalog.get(name).cloned() else {
                missing.push(format!("{name} (no such skill)"));
                continue;
            };
            match tokio::task::spawn_blocking(move || skill.load_body()).await {
                Ok(Ok(body)) => {
                    prompt.push_str(&format!("\n\n## Skill: {name}\n\n{body}"));
                }
                Ok(Err(e)) => missing.push(format!("{name} ({e})")),
                Err(e) => missing.push(format!("{name} ({e})")),
            }
        }
        (prompt, missing)
    }
}

/// The arguments of an `agent` call.
#[derive(Debug, Deserialize)]
pub struct Args {
    agent: String,
    task: String,
}

impl TypedTool for AgentTool {
    type Args = Args;

    const NAME: &'static str = NAME;
    const DESCRIPTION: &'static str = "Delegate a self-contained task to a sub-agent with \
         its own context (it sees nothing of this conversation; give it everything it needs). \
         Built in: `explore` (reads and searches the project, read-only) and `general` (your \
         tools); others are listed under Available Agents. Several agent calls in one response \
         run in parallel. Returns the sub-agent's final answer.";

    const PARAMETERS: &'static str = include_str!("schemas/agent.json");

    fn access(&self, _args: &Args, _ctx: &ToolContext) -> Access {
        // Every call the sub-agent makes is judged (and asked about) on its own.
        Access::ReadOnly
    }

    fn summary(&self, args: &Args) -> String {
        let first = args.task.lines().next().unwrap_or("");
        let mut task: String = first.chars().take(60).collect();
        if task.len() < args.task.trim_end().len() {
            task.push_str(" ...");
        }
        format!("{}: {task}", args.agent)
    }

    fn execute<'a>(&'a self, args: Args, ctx: &'a ToolContext) -> ToolFuture<'a> {
        Box::pin(async move {
            let Some(agent) = self.agents.get(args.agent.trim()) else {
                let names: Vec<&str> = self
                    .agents
                    .agents()
                    .iter()
                    .map(|a| a.name.as_str())
                    .collect();
                return Ok(ToolOutput::error(format!(
                    "no agent named `{}`; available: {}",
                    args.agent,
                    names.join(", ")
                )));
            };
            let Some(forker) = ctx.forker.as_ref() else {
                return Ok(ToolOutput::error(
                    "a sub-agent cannot start another sub-agent; do the work with your tools",
                ));
            };
            if args.task.trim().is_empty() {
                return Ok(ToolOutput::error(
                    "the task is empty: say what the agent should do",
                ));
            }
            let (instructions, missing) = self.instructions(agent).await;
            let request = ForkRequest {
                skill: agent.name.clone(),
                instructions,
                task: args.task,
                allowed_tools: match &agent.tools {
                    ToolChoice::Inherit => None,
                    ToolChoice::Only(list) => Some(list.clone()),
                },
                parent_call_id: (!ctx.call_id.is_empty()).then(|| ctx.call_id.clone()),
                of: ForkOf::Agent(AgentLimits {
                    disallowed_tools: agent.disallowed.clone(),
                    permission: agent.permission,
                    confinement: agent.confinement,
                    model: agent.model.clone(),
                    max_turns: agent.max_turns,
                }),
            };
            let note = match missing.as_slice() {
                [] => String::new(),
                m => format!("\n(Skills it could not preload: {}.)", m.join(", ")),
            };
            match forker.fork(request).await {
                Ok(answer) => Ok(ToolOutput::ok(format!(
                    "<agent-result name=\"{}\">\n{answer}\n</agent-result>{note}",
                    agent.name
                ))),
                Err(ForkError::Interrupted) => Err(ToolFatal::Interrupted),
                Err(ForkError::Failed(message)) => Ok(ToolOutput::error(format!(
                    "agent `{}` failed: {message}{note}",
                    agent.name
                ))),
            }
        })
    }
}
