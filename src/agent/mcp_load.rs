//! Loading MCP servers' tools outside a tool call: servers with `preload = true` when the
//! session starts (and again after `/clear`), and the servers a resumed session had
//! loaded. Each load runs on its own task, so nothing here delays a request; the tools
//! join the registry when the server answers, and a failure is a warning through the
//! servers' notice callback. It knows the session's setup; it must not know frontends.

use super::AgentSetup;
use crate::mcp::config::Preload;
use crate::mcp::tools::{self, owner};

/// Loads `server`'s tools in the background, marking it loaded at once (so the session
/// records it and `unload_skill` can take it away).
pub fn load_in_background(setup: &AgentSetup, server: &str) {
    let servers = setup.mcp.clone();
    let loaded = setup.tools.loaded().clone();
    let skills = setup.loaded_skills.clone();
    let server = server.to_string();
    skills.mark(&owner(&server));
    tokio::spawn(async move {
        match tools::load(&servers, &server, &loaded).await {
            Ok(_) => {}
            // A failed start was reported by the servers already.
            Err(tools::LoadError::Server(_)) => {
                skills.unload(&owner(&server));
            }
            Err(e @ tools::LoadError::Collision(_)) => {
                skills.unload(&owner(&server));
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
