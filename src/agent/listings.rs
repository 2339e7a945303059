//! The listings a frontend asks for, built from the session's live state so that no
//! frontend holds a handle into the core: `/skills` ([`Event::SkillList`]), `/mcp`
//! ([`Event::McpServerList`]) and the slash commands for routing and completion
//! ([`SlashCommands`], in `SessionInfo` at start and in [`Event::SlashCommands`] after
//! the skills reloaded with changes or an MCP server's start learnt something new).
//! What each listing says is decided by `skills::listing` and `mcp::listing`; this
//! module only gathers the state they need. It must not know how listings are drawn.

use tokio::sync::mpsc;

use super::AgentSetup;
use crate::mcp::McpServers;
use crate::protocol::{Event, SlashCommands};
use crate::skills::Catalog;

/// The session's slash commands: the catalog's skills and the servers' known prompts.
pub fn slash_commands(catalog: &Catalog, mcp: &McpServers) -> SlashCommands {
    SlashCommands {
        skills: crate::skills::listing::slash_skills(catalog),
        mcp_servers: crate::mcp::listing::server_names(mcp),
        mcp_prompts: crate::mcp::listing::prompt_commands(mcp),
    }
}

impl AgentSetup {
    /// The slash commands as they stand now.
    pub fn slash_commands(&self) -> SlashCommands {
        slash_commands(&self.catalog.current(), &self.mcp)
    }
}

/// What `/skills` shows, now (loaded skills marked).
pub fn skills(setup: &AgentSetup) -> Event {
    Event::SkillList(crate::skills::listing::listing(
        &setup.catalog.current(),
        setup.index_budget,
        &setup.loaded_skills.names(),
    ))
}

/// What `/mcp` shows, now (servers whose tools are loaded marked).
pub fn mcp_servers(setup: &AgentSetup) -> Event {
    Event::McpServerList {
        servers: crate::mcp::listing::listing(&setup.mcp, &setup.loaded_skills.names()),
    }
}

/// Tells the frontend the slash commands whenever an MCP server's start learnt
/// something new (its prompts among it).
pub fn announce_mcp_changes(setup: &AgentSetup, events: &mpsc::UnboundedSender<Event>) {
    let catalog = setup.catalog.clone();
    let events = events.clone();
    setup.mcp.set_on_learnt(move |mcp| {
        let _ = events.send(Event::SlashCommands(slash_commands(
            &catalog.current(),
            mcp,
        )));
    });
}
