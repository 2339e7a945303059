//! `/context` answered from the live session: the instruction files in force (the
//! chain the system prompt holds, then the nested files the conversation holds), the
//! skill roots with their skill counts, the MCP index, and what the next request costs
//! (system prompt, tools, conversation, the window). The wording is the protocol's
//! ([`ContextReport::lines`]); it must not know how it is drawn.

use crate::agent::AgentSetup;
use crate::agent::conversation::{Conversation, estimate_messages};
use crate::protocol::{ContextReport, InstructionFileInfo, SkillRootCount};

/// What the model's context holds now, for a session of `setup` whose conversation is
/// `conversation`.
pub fn report(setup: &AgentSetup, conversation: &Conversation) -> ContextReport {
    let instructions = instruction_files(setup, conversation);
    let catalog = setup.catalog.current();
    let mut skill_roots: Vec<SkillRootCount> = Vec::new();
    for skill in catalog.skills() {
        let path = skill.root.path.to_path_buf();
        match skill_roots.iter_mut().find(|r| r.path == path) {
            Some(root) => root.skills += 1,
            None => skill_roots.push(SkillRootCount { path, skills: 1 }),
        }
    }
    let specs = setup.tools.specs();
    let tools_bytes: usize = specs
        .iter()
        .map(|s| s.name.len() + s.description.len() + s.parameters.to_string().len())
        .sum();
    let messages = conversation.messages();
    ContextReport {
        instructions,
        instructions_max_bytes: setup.nested_instructions.max_bytes(),
        skill_roots,
        mcp_servers: setup.mcp.statuses().len(),
        mcp_index_bytes: crate::mcp::index::section(&setup.mcp).map_or(0, |s| s.len()),
        system_prompt_bytes: conversation.system_prompt().len(),
        tools: specs.len(),
        tools_bytes,
        conversation_tokens: estimate_messages(messages.get(1..).unwrap_or_default()),
        request_tokens: conversation.estimate_tokens(&specs),
        window: setup.context_window.get(),
    }
}

/// The instruction files in force: the chain, then the nested files `conversation`
/// holds.
pub fn instruction_files(
    setup: &AgentSetup,
    conversation: &Conversation,
) -> Vec<InstructionFileInfo> {
    let mut files = setup.nested_instructions.chain().to_vec();
    files.extend(conversation.instructions_in_force());
    files
}
