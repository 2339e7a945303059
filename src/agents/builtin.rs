//! The two agents every session has: `explore` (reads and searches the project, reading
//! tools only, its `bash` in the read-only sandbox, so it cannot change anything
//! whatever it runs) and `general` (the session's tools, for a self-contained task).
//! A definition file cannot take their names. It knows only their text.

use super::{
    AgentDefinition, Confinement, ModelChoice, Origin, PermissionWish, ToolChoice,
    tools::READ_ONLY_TOOLS,
};

/// The built-in read-only agent's name.
pub const EXPLORE: &str = "explore";
/// The built-in general agent's name.
pub const GENERAL: &str = "general";

const EXPLORE_PROMPT: &str = "\
You are a read-only exploration agent working for another agent in the user's project.
- Find and read what the task asks about with glob, grep, list and read_file; bash runs only read-only commands (nothing you run can change files).
- Do not try to change anything: you cannot, and the other agent only needs facts.
- Answer with what you found: file paths with line numbers, short quotes, and the conclusion. Be concise and exact.";

const GENERAL_PROMPT: &str = "\
You are a sub-agent working for another agent in the user's project, on one self-contained task.
- Use the tools to find, read, change and check what the task needs; keep changes minimal and in the project's style.
- You cannot ask the user questions: decide sensibly and say what you assumed.
- When done, answer with a short report: what you found or changed (file paths), and anything left undone.";

/// The built-in definitions, in the order listed.
pub fn all() -> Vec<AgentDefinition> {
    vec![
        AgentDefinition {
            name: EXPLORE.to_string(),
            description: "Reads and searches the project to answer a question (read-only: \
                          its commands run in a read-only sandbox). Use it to look \
                          something up without filling your own context."
                .to_string(),
            prompt: EXPLORE_PROMPT.to_string(),
            tools: ToolChoice::Only(READ_ONLY_TOOLS.iter().map(|t| t.to_string()).collect()),
            disallowed: Vec::new(),
            model: ModelChoice::Inherit,
            permission: PermissionWish::Plan,
            max_turns: None,
            skills: Vec::new(),
            confinement: Confinement::ReadOnly,
            origin: Origin::BuiltIn,
            path: None,
        },
        AgentDefinition {
            name: GENERAL.to_string(),
            description: "A general sub-agent with the session's tools, for a \
                          self-contained task (research, a focused change)."
                .to_string(),
            prompt: GENERAL_PROMPT.to_string(),
            tools: ToolChoice::Inherit,
            disallowed: Vec::new(),
            model: ModelChoice::Inherit,
            permission: PermissionWish::Inherit,
            max_turns: None,
            skills: Vec::new(),
            confinement: Confinement::Session,
            origin: Origin::BuiltIn,
            path: None,
        },
    ]
}
