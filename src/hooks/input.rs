//! What a hook reads on stdin: one JSON object with Claude Code's field names
//! (`session_id`, `transcript_path`, `cwd`, `hook_event_name`, and per event
//! `tool_name`, `tool_input`, `tool_response`, `prompt`, `stop_hook_active`, `source`…),
//! and a tool call in Claude Code's shape: harness9's `bash`, `read_file`, `write_file`,
//! `edit_file`, `glob`, `grep` and `list` are named `Bash`, `Read`, `Write`, `Edit`,
//! `Glob`, `Grep` and `LS`, and their arguments renamed where Claude Code's differ
//! (`path` → `file_path`, `timeout_secs` → `timeout` in milliseconds). Other tools (MCP's
//! `mcp__server__tool`, skills) keep their names and arguments.
//!
//! It knows the two vocabularies; it must not know tools' behaviour or how hooks run.

use std::path::PathBuf;

use serde::Serialize;
use serde_json::{Map, Value};

use super::Event;

/// The JSON a hook reads on stdin.
#[derive(Debug, Clone, Serialize)]
pub struct HookInput {
    /// The session's id.
    pub session_id: String,
    /// The session's saved transcript (empty when sessions are not saved).
    pub transcript_path: String,
    /// The working folder.
    pub cwd: PathBuf,
    /// The event's name.
    pub hook_event_name: &'static str,
    /// What the event is about.
    #[serde(flatten)]
    pub detail: Detail,
}

/// The fields one kind of event adds.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Detail {
    /// A tool call (PreToolUse, PermissionRequest, PostToolUse, PostToolUseFailure).
    Tool {
        /// Claude Code's name for the tool, where it has one.
        tool_name: String,
        /// The arguments in Claude Code's shape.
        tool_input: Value,
        /// The result (after the call), as text.
        #[serde(skip_serializing_if = "Option::is_none")]
        tool_response: Option<Value>,
    },
    /// A tool call that failed (PostToolUseFailure).
    ToolFailure {
        /// Claude Code's name for the tool, where it has one.
        tool_name: String,
        /// The arguments in Claude Code's shape.
        tool_input: Value,
        /// What went wrong, as the model was told.
        error: String,
    },
    /// A submitted prompt.
    Prompt {
        /// The prompt's text.
        prompt: String,
    },
    /// The agent or a sub-agent stopped.
    Stop {
        /// Whether the agent is already going on because a Stop hook asked it to.
        stop_hook_active: bool,
        /// The agent's last answer, when it gave one.
        #[serde(skip_serializing_if = "Option::is_none")]
        last_assistant_message: Option<String>,
    },
    /// A session started or ended, a compaction, a notification.
    Kind {
        /// `source`, `trigger`, `reason` or `notification_type`, by event.
        #[serde(flatten)]
        fields: Map<String, Value>,
    },
}

impl HookInput {
    /// The input for `event` with its `detail`.
    pub fn new(
        event: Event,
        session_id: &str,
        transcript_path: &str,
        cwd: PathBuf,
        detail: Detail,
    ) -> Self {
        HookInput {
            session_id: session_id.to_string(),
            transcript_path: transcript_path.to_string(),
            cwd,
            hook_event_name: event.name(),
            detail,
        }
    }

    /// A tool call's input, named and shaped as Claude Code's.
    pub fn tool(
        event: Event,
        session_id: &str,
        transcript_path: &str,
        cwd: PathBuf,
        tool: &str,
        arguments: &Value,
        response: Option<Value>,
    ) -> Self {
        let tool_name = claude_tool_name(tool).unwrap_or(tool).to_string();
        HookInput::new(
            event,
            session_id,
            transcript_path,
            cwd,
            Detail::Tool {
                tool_name,
                tool_input: claude_tool_input(tool, arguments),
                tool_response: response,
            },
        )
    }
}

/// Claude Code's name for harness9's tool `name`, where it has one.
pub fn claude_tool_name(name: &str) -> Option<&'static str> {
    Some(match name {
        "bash" => "Bash",
        "read_file" => "Read",
        "write_file" => "Write",
        "edit_file" => "Edit",
        "glob" => "Glob",
        "grep" => "Grep",
        "list" => "LS",
        _ => return None,
    })
}

/// harness9's name for Claude Code's tool `name`, where harness9 has that tool.
pub fn harness9_tool_name(name: &str) -> Option<&'static str> {
    Some(match name {
        "Bash" => "bash",
        "Read" => "read_file",
        "Write" => "write_file",
        "Edit" => "edit_file",
        "Glob" => "glob",
        "Grep" => "grep",
        "LS" => "list",
        _ => return None,
    })
}

/// Argument names that differ: (harness9's, Claude Code's) for each tool.
fn renames(tool: &str) -> &'static [(&'static str, &'static str)] {
    match tool {
        "read_file" | "write_file" | "edit_file" => &[("path", "file_path")],
        "bash" => &[("timeout_secs", "timeout")],
        "grep" => &[("case_insensitive", "-i"), ("max_results", "head_limit")],
        _ => &[],
    }
}

/// harness9's arguments for `tool` in Claude Code's shape (unchanged for tools Claude
/// Code does not have, and for arguments that are not an object).
pub fn claude_tool_input(tool: &str, arguments: &Value) -> Value {
    let Value::Object(args) = arguments else {
        return arguments.clone();
    };
    let mut out = Map::new();
    for (key, value) in args {
        let renamed = renames(tool)
            .iter()
            .find(|(ours, _)| ours == key)
            .map_or(key.as_str(), |(_, theirs)| theirs);
        let value = match (tool, key.as_str(), value) {
            // Claude Code's Bash timeout is in milliseconds.
            ("bash", "timeout_secs", Value::Number(n)) => n
                .as_u64()
                .map_or_else(|| value.clone(), |s| Value::from(s.saturating_mul(1000))),
            _ => value.clone(),
        };
        out.insert(renamed.to_string(), value);
    }
    Value::Object(out)
}

/// A hook's `updatedInput` (in Claude Code's shape) as harness9's arguments for `tool`:
/// the renames undone. Keys harness9's tool does not know are kept, so the tool's own
/// argument check refuses them rather than this silently dropping them.
pub fn harness9_tool_input(tool: &str, updated: &Value) -> Value {
    let Value::Object(args) = updated else {
        return updated.clone();
    };
    let mut out = Map::new();
    for (key, value) in args {
        let renamed = renames(tool)
            .iter()
            .find(|(_, theirs)| theirs == key)
            .map_or(key.as_str(), |(ours, _)| ours);
        let value = match (tool, key.as_str(), value) {
            ("bash", "timeout", Value::Number(n)) => n
                .as_u64()
                .map_or_else(|| value.clone(), |ms| Value::from(ms.div_ceil(1000))),
            _ => value.clone(),
        };
        out.insert(renamed.to_string(), value);
    }
    Value::Object(out)
}
