//! MCP servers outside the model's tool calls. Loading their tools: servers with
//! `preload = true` when the session starts (and again after `/clear`), and the servers
//! a resumed session had loaded; each load runs on its own task, so nothing here delays
//! a request, the tools join the registry when the server answers, and a failure is a
//! warning through the servers' notice callback. And the user's `/SERVER:PROMPT args`:
//! the prompt got from the server and sent, as the server wrote it, as a turn.
//! It knows the session's setup and turns; it must not know frontends.

use super::AgentSetup;
use super::slash::SlashLine;
use super::turn::{SessionState, TurnContext, run_turn};
use crate::mcp::config::Preload;
use crate::mcp::connection::{McpError, Request};
use crate::mcp::prompts;
use crate::mcp::tools::{self, owner};
use crate::protocol::TurnOutcome;

/// Loads `server`'s tools in the background; once they are in, the server counts as
/// loaded (the session records it and `unload_skill` can take it away).
pub fn load_in_background(setup: &AgentSetup, server: &str) {
    let servers = setup.mcp.clone();
    let loaded = setup.tools.loaded().clone();
    let skills = setup.loaded_skills.clone();
    let server = server.to_string();
    tokio::spawn(async move {
        match tools::load(&servers, &server, &loaded).await {
            Ok(_) => {
                skills.mark(&owner(&server));
            }
            // A failed start was reported by the servers already.
            Err(tools::LoadError::Server(_)) => {}
            Err(e @ tools::LoadError::Collision(_)) => {
                servers.report(format!(
                    "MCP server `{server}`: its tools were not loaded: {e}"
                ));
            }
        }
    });
}

/// Starts every server with `preload = true` in the background.
pub fn preload(setup: &AgentSetup) {
    for name in setup.mcp.usable() {
        if setup
            .mcp
            .config(&name)
            .is_some_and(|c| c.preload == Preload::AtStart)
        {
            load_in_background(setup, &name);
        }
    }
}

/// Runs `/SERVER:PROMPT args`: gets the prompt (starting the server when needed), and
/// runs a turn with its text. Problems (an unknown prompt, a missing argument, a server
/// that does not start) end the turn as failed with the reason.
pub async fn run_prompt(
    state: &mut SessionState,
    ctx: &TurnContext,
    server: &str,
    prompt: &str,
    args: &str,
) -> TurnOutcome {
    let line = SlashLine::new(ctx, &format!("{server}:{prompt}"), args);
    let servers = &ctx.setup.mcp;
    let known = tokio::select! {
        listed = servers.prompts(server) => listed,
        _ = ctx.cancel.cancelled() => Err(McpError::Cancelled),
    };
    let known = match known {
        Ok(known) => known,
        Err(McpError::Cancelled) => return line.end(TurnOutcome::Interrupted),
        Err(e) => return line.fail(e.to_string()),
    };
    let Some(info) = known.iter().find(|p| p.name == prompt) else {
        let names: Vec<String> = known.iter().map(|p| prompts::usage(server, p)).collect();
        return line.fail(format!(
            "MCP server `{server}` has no prompt `{prompt}`; its prompts: {}",
            if names.is_empty() {
                "none".to_string()
            } else {
                names.join(", ")
            }
        ));
    };
    let arguments = match prompts::bind(server, info, args) {
        Ok(a) => a,
        Err(message) => return line.fail(message),
    };
    let text = match servers
        .request(
            server,
            Request::GetPrompt {
                name: prompt,
                arguments,
            },
            &ctx.cancel,
        )
        .await
    {
        Ok(result) => prompts::message_text(&result),
        Err(McpError::Cancelled) => return line.end(TurnOutcome::Interrupted),
        Err(e) => return line.fail(e.to_string()),
    };
    if text.trim().is_empty() {
        return line.fail(format!("the prompt /{server}:{prompt} came back empty"));
    }
    // The server's text as it is: no inline commands, no templates.
    run_turn(state, ctx, text).await.outcome
}
