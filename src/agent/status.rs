//! `/status` answered from the live session: the model and tokens of the session state,
//! the provider's host, the context window as known now, the approval mode in force,
//! the sandbox, the saved session and its file, the instruction files in the system
//! prompt, and how many skills and MCP servers there are and are active. The wording is
//! the protocol's ([`StatusReport::lines`]); it must not know how it is drawn.

use crate::agent::AgentSetup;
use crate::agent::turn::SessionState;
use crate::mcp::ServerState;
use crate::protocol::{ApprovalMode, Counted, KnownWindow, SandboxState, SavedState, StatusReport};
use crate::sessions::SessionId;

/// The session as `/status` tells it, now.
pub fn report(
    setup: &AgentSetup,
    state: &SessionState,
    session_id: Option<&SessionId>,
    mode: ApprovalMode,
) -> StatusReport {
    let sandbox = match crate::sandbox::session() {
        Some(sandbox) => SandboxState::Confined {
            mode: sandbox.policy.mode.as_str().to_string(),
            network: sandbox.policy.network == crate::sandbox::Network::Allow,
        },
        None => SandboxState::Off,
    };
    let session = match (setup.sessions.as_ref(), session_id) {
        (Some(archive), Some(id)) => SavedState::Saved {
            id: id.to_string(),
            file: archive.file(id),
        },
        _ => SavedState::NotSaved,
    };
    let loaded = setup.loaded_skills.names();
    let catalog = setup.catalog.current();
    let skills = Counted {
        total: catalog.skills().len(),
        active: catalog
            .skills()
            .iter()
            .filter(|skill| loaded.contains(&skill.name))
            .count(),
    };
    let servers = setup.mcp.statuses();
    let mcp_servers = Counted {
        total: servers.len(),
        active: servers
            .iter()
            .filter(|s| matches!(s.state, ServerState::Running { .. }))
            .count(),
    };
    let has_requests = state.usage.input_tokens > 0 || state.usage.output_tokens > 0;
    StatusReport {
        model: super::endpoint::shown_model(setup, state),
        effort: state.effort,
        provider: crate::sessions::record::endpoint_host(&setup.client.config().base_url),
        context_window: setup.context_window.window().map(|w| KnownWindow {
            tokens: w.tokens,
            source: w.source,
        }),
        approval_mode: mode,
        sandbox,
        session,
        instructions: setup.instruction_files.clone(),
        skills,
        mcp_servers,
        usage: state.usage,
        context_tokens: has_requests
            .then(|| state.conversation.estimate_tokens(&setup.tools.specs())),
    }
}
