//! What a session's context holds, as `/context`, `harness9 context` and stream-json's
//! `session_configured` show it: the instruction files in force ([`InstructionFileInfo`],
//! also what a session file records of the nested files attached to a tool result).
//! Computed by `instructions` and the agent; it only names the values.

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
}

impl InstructionFileInfo {
    /// Whether less than the whole file is shown.
    pub fn shortened(&self) -> bool {
        self.shown < self.bytes
    }
}
