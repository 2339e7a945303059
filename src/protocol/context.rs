//! What a session's context holds, as `/context`, `harness9 context` and stream-json's
//! `session_configured` show it: the instruction files in force ([`InstructionFileInfo`],
//! also what a session file records of the nested files attached to a tool result), the
//! skill roots, the MCP index and what a request costs ([`ContextReport`], worded once by
//! [`ContextReport::lines`]). Computed by `instructions` and the agent; it only names the
//! values and their words.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// Where an instruction file comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum InstructionOrigin {
    /// The user's own, for every project (`~/.agents/AGENTS.md`, `~/.harness9/AGENTS.md`).
    Global,
    /// A folder from the project root down to the working folder: in the system prompt.
    Project,
    /// A folder below the working folder: attached to the tool result that first
    /// worked there.
    Nested,
}

/// One instruction file in force.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InstructionFileInfo {
    /// Where it is, as found (not through its links).
    pub path: PathBuf,
    /// Whose it is.
    pub origin: InstructionOrigin,
    /// Its size in bytes.
    pub bytes: u64,
    /// How many of them the model is shown (fewer when it was shortened to fit the cap).
    pub shown: u64,
    /// Whether less than the whole file is shown (`shown < bytes`; written for readers
    /// of stream-json, and recomputed when read).
    #[serde(default)]
    pub shortened: bool,
}

impl InstructionFileInfo {
    /// A file of `bytes` bytes of which the model is shown `shown`.
    pub fn new(path: PathBuf, origin: InstructionOrigin, bytes: u64, shown: u64) -> Self {
        InstructionFileInfo {
            path,
            origin,
            bytes,
            shown,
            shortened: shown < bytes,
        }
    }

    /// About how many tokens the model reads of it.
    pub fn tokens(&self) -> u64 {
        estimated_tokens(usize::try_from(self.shown).unwrap_or(usize::MAX))
    }
}

/// About how many tokens `bytes` bytes of text make (4 bytes a token, as the agent
/// estimates before the provider has counted).
pub fn estimated_tokens(bytes: usize) -> u64 {
    (bytes as u64).div_ceil(4)
}

/// A skills root in force and how many skills were found there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillRootCount {
    /// The root.
    pub path: PathBuf,
    /// Skills found below it (shadowed ones too).
    pub skills: usize,
}

/// What the model's context holds and what a request costs (`/context`, `harness9
/// context`): asked with `Op::Context`, answered by `Event::Context`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ContextReport {
    /// The instruction files in force: the chain (in the system prompt), then the
    /// nested files the conversation holds, in the order attached.
    pub instructions: Vec<InstructionFileInfo>,
    /// The cap they share (`instructions_max_bytes`).
    pub instructions_max_bytes: usize,
    /// The skill roots with skills, nearest first.
    pub skill_roots: Vec<SkillRootCount>,
    /// MCP servers configured.
    pub mcp_servers: usize,
    /// Bytes of the system prompt's MCP index.
    pub mcp_index_bytes: usize,
    /// Bytes of the system prompt.
    pub system_prompt_bytes: usize,
    /// Tools offered.
    pub tools: usize,
    /// Bytes of their specs (names, descriptions, schemas).
    pub tools_bytes: usize,
    /// About how many tokens the conversation after the system prompt takes.
    pub conversation_tokens: u64,
    /// About how many tokens the next request takes in all (the provider's last count
    /// and what was added since, when it has counted).
    pub request_tokens: u64,
    /// The model's context window in tokens, when known.
    pub window: Option<u64>,
}

impl ContextReport {
    /// The report as lines of text, the same in every frontend and the subcommand.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.instructions.is_empty() {
            out.push(format!(
                "Instruction files: none (cap {} bytes)",
                self.instructions_max_bytes
            ));
        } else {
            out.push(format!(
                "Instruction files (they share a cap of {} bytes):",
                self.instructions_max_bytes
            ));
        }
        for file in &self.instructions {
            let origin = match file.origin {
                InstructionOrigin::Global => "global, system prompt",
                InstructionOrigin::Project => "system prompt",
                InstructionOrigin::Nested => "attached to a tool result",
            };
            let mut line = format!(
                "  {}  {} bytes, about {} tokens ({origin})",
                file.path.display(),
                file.bytes,
                file.tokens()
            );
            if file.shortened {
                line.push_str(&format!(
                    "; shortened: {} of {} bytes shown",
                    file.shown, file.bytes
                ));
            }
            out.push(line);
        }
        if self.skill_roots.is_empty() {
            out.push("Skill roots: none with skills".to_string());
        } else {
            out.push("Skill roots:".to_string());
        }
        for root in &self.skill_roots {
            let s = if root.skills == 1 { "" } else { "s" };
            out.push(format!(
                "  {}  {} skill{s}",
                root.path.display(),
                root.skills
            ));
        }
        let servers = if self.mcp_servers == 1 { "" } else { "s" };
        out.push(format!(
            "MCP index: {} bytes, about {} tokens ({} server{servers})",
            self.mcp_index_bytes,
            estimated_tokens(self.mcp_index_bytes),
            self.mcp_servers
        ));
        out.push("Request:".to_string());
        out.push(format!(
            "  system prompt  {} bytes, about {} tokens",
            self.system_prompt_bytes,
            estimated_tokens(self.system_prompt_bytes)
        ));
        let tools = if self.tools == 1 { "" } else { "s" };
        out.push(format!(
            "  tools          {} bytes, about {} tokens ({} tool{tools})",
            self.tools_bytes,
            estimated_tokens(self.tools_bytes),
            self.tools
        ));
        out.push(format!(
            "  conversation   about {} tokens",
            self.conversation_tokens
        ));
        let window = match self.window {
            Some(w) if w > 0 => format!(
                "about {} tokens, {}% of the {w}-token window",
                self.request_tokens,
                self.request_tokens * 100 / w
            ),
            _ => format!(
                "about {} tokens (the window is not known)",
                self.request_tokens
            ),
        };
        out.push(format!("  in all         {window}"));
        out
    }

    /// The report as JSON (`harness9 context --json`): the fields, and the estimated
    /// tokens beside each size.
    pub fn to_json(&self) -> serde_json::Value {
        let instructions: Vec<serde_json::Value> = self
            .instructions
            .iter()
            .map(|f| {
                serde_json::json!({
                    "path": f.path,
                    "origin": f.origin,
                    "bytes": f.bytes,
                    "shown": f.shown,
                    "shortened": f.shortened,
                    "tokens": f.tokens(),
                })
            })
            .collect();
        serde_json::json!({
            "instructions": instructions,
            "instructions_max_bytes": self.instructions_max_bytes,
            "skill_roots": self.skill_roots,
            "mcp": {
                "servers": self.mcp_servers,
                "index_bytes": self.mcp_index_bytes,
                "index_tokens": estimated_tokens(self.mcp_index_bytes),
            },
            "request": {
                "system_prompt_bytes": self.system_prompt_bytes,
                "system_prompt_tokens": estimated_tokens(self.system_prompt_bytes),
                "tools": self.tools,
                "tools_bytes": self.tools_bytes,
                "tools_tokens": estimated_tokens(self.tools_bytes),
                "conversation_tokens": self.conversation_tokens,
                "tokens": self.request_tokens,
                "window": self.window,
            },
        })
    }
}
