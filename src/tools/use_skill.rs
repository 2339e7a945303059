//! The `use_skill` tool: loads a skill's body into the conversation as a tool result.
