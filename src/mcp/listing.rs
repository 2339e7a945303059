//! What `/mcp` shows and what the servers offer as slash commands, decided once for
//! every frontend: each configured server with its state in this session (not started,
//! running with its tool count, failed with why, disabled, not approved), whether its
//! tools are loaded, what runs (the command line or the URL) and where it is defined, and
//! the prompts known for it ([`crate::protocol::McpServerEntry`]); and the servers'
//! names and known prompts for routing and completion. Both are protocol data the agent
//! sends. Server-provided text in the `/mcp` entries is neutralized here (a prompt's
//! description in the slash commands is neutralized by whoever shows it). It must not
//! know how anything is drawn, nor the agent's live state (loaded owners come in as
//! names).

use super::config::{Enabled, ServerOrigin, Trust};
use super::manager::{McpServers, ServerState};
use super::prompts;
use crate::protocol::{
    McpHealth, McpPromptArgument, McpPromptCommand, McpServerEntry, McpServerName, McpUse,
};
use crate::safe_text::neutralize;

/// The entries, in name order; empty without servers. `loaded` are the names of what
/// this session loaded (a server's tools are loaded under `mcp:NAME`).
pub fn listing(servers: &McpServers, loaded: &[String]) -> Vec<McpServerEntry> {
    servers
        .statuses()
        .into_iter()
        .map(|status| {
            let config = &status.config;
            let mut health = McpHealth::Fine;
            let mut state = if config.enabled == Enabled::No {
                "disabled".to_string()
            } else if config.trust == Trust::Untrusted {
                "not approved (review it, then `harness9 mcp trust`)".to_string()
            } else {
                match &status.state {
                    ServerState::NotStarted => "not started".to_string(),
                    ServerState::Running { tools: 1 } => "running, 1 tool".to_string(),
                    ServerState::Running { tools } => format!("running, {tools} tools"),
                    ServerState::Failed { error } => {
                        health = McpHealth::Failed;
                        format!("failed: {error}")
                    }
                }
            };
            let owner = format!("mcp:{}", config.name);
            if loaded.contains(&owner) {
                state.push_str(", loaded");
            }
            let origin = match &config.origin {
                ServerOrigin::User { .. } => "user config",
                ServerOrigin::Project { .. } => "project config",
                ServerOrigin::McpJson { .. } => ".mcp.json",
                ServerOrigin::Plugin { .. } => "plugin",
                ServerOrigin::Editor => "editor",
            };
            let prompts = status
                .memo
                .as_ref()
                .map(|m| {
                    m.prompts
                        .iter()
                        .map(|p| neutralize(&prompts::usage(&config.name, p)).into_owned())
                        .collect()
                })
                .unwrap_or_default();
            McpServerEntry {
                name: owner,
                state: neutralize(&state).into_owned(),
                health,
                detail: format!("{} ({origin})", neutralize(&config.target())),
                prompts,
            }
        })
        .collect()
}

/// Every configured server's name, with whether this session can use it.
pub fn server_names(servers: &McpServers) -> Vec<McpServerName> {
    servers
        .setup()
        .servers
        .iter()
        .map(|config| McpServerName {
            name: config.name.clone(),
            usable: if servers.has(&config.name) {
                McpUse::Usable
            } else {
                McpUse::Unusable
            },
        })
        .collect()
}

/// The prompts known for slash commands without starting anything
/// ([`McpServers::known_prompts`]).
pub fn prompt_commands(servers: &McpServers) -> Vec<McpPromptCommand> {
    servers
        .known_prompts()
        .into_iter()
        .map(|(server, prompt)| McpPromptCommand {
            server,
            name: prompt.name,
            description: prompt.description,
            arguments: prompt
                .arguments
                .into_iter()
                .map(|a| McpPromptArgument {
                    name: a.name,
                    required: a.required,
                })
                .collect(),
        })
        .collect()
}
