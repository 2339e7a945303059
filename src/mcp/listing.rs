//! What `/mcp` shows, decided once for every frontend: each configured server with its
//! state in this session (not started, running with its tool count, failed with why,
//! disabled, not approved), whether its tools are loaded, what runs (the command line or
//! the URL) and where it is defined, and the prompts known for it as slash commands.
//! Server-provided text is neutralized here. The TUI styles the lines, the REPL prints
//! them. It must not know how anything is drawn.

use super::config::{Enabled, ServerOrigin, Trust};
use super::manager::{McpServers, ServerState};
use super::prompts;
use crate::safe_text::neutralize;
use crate::skills::active::LoadedSkills;

/// One server's entry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// `mcp:NAME`.
    pub name: String,
    /// Its state in words (`running, 9 tools`, `not started`, `failed: …`).
    pub state: String,
    /// Whether the state is a failure (frontends colour it).
    pub failed: bool,
    /// What runs, and where it is defined.
    pub detail: String,
    /// Its prompts as slash commands, with their arguments.
    pub prompts: Vec<String>,
}

/// The entries, in name order; empty without servers.
pub fn listing(servers: &McpServers, loaded: &LoadedSkills) -> Vec<Entry> {
    let loaded = loaded.names();
    servers
        .statuses()
        .into_iter()
        .map(|status| {
            let config = &status.config;
            let mut failed = false;
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
                        failed = true;
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
            Entry {
                name: owner,
                state: neutralize(&state).into_owned(),
                failed,
                detail: format!("{} ({origin})", neutralize(&config.target())),
                prompts,
            }
        })
        .collect()
}

/// The whole listing as text (the REPL's form; the TUI styles the same entries).
pub fn text(servers: &McpServers, loaded: &LoadedSkills) -> String {
    let entries = listing(servers, loaded);
    if entries.is_empty() {
        return "No MCP servers configured. Add one with `harness9 mcp add NAME -- COMMAND` \
                (docs/MCP.md).\n"
            .to_string();
    }
    let mut out = format!("MCP servers ({}):\n", entries.len());
    for e in entries {
        out.push_str(&format!("  {}  {}\n    {}\n", e.name, e.state, e.detail));
        if !e.prompts.is_empty() {
            out.push_str(&format!("    prompts: {}\n", e.prompts.join(", ")));
        }
    }
    out
}
