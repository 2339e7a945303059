//! The line REPL (being written).

mod markdown;

use crate::print::{Activity, OutputFormat};
use crate::protocol::{ErrorKind, Usage};

/// Where input lines come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplInput {
    /// A terminal: rustyline editing, history, completion, inline approvals.
    Terminal,
    /// A pipe or file: one turn per line, no prompts, approvals denied.
    Piped,
}

/// How the REPL runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReplOptions {
    /// Output format (text, json, stream-json).
    pub format: OutputFormat,
    /// Whether tool activity is shown on stderr in text output.
    pub activity: Activity,
    /// Terminal or pipe.
    pub input: ReplInput,
}

/// How a REPL session ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ReplSummary {
    /// The kind of the first failed turn, if any turn failed.
    pub failure: Option<ErrorKind>,
    /// Usage of the whole session.
    pub usage: Usage,
}
