//! The agents index for the system prompt: one line per usable definition (built-ins
//! first, then by name), fitted to a character budget by the skills index's rule
//! (`skills::fit_index`). It is left out entirely when no definition exists beyond the
//! built-ins, so a session without agent files sends the same first request as before
//! (the `agent` tool's own description names the built-ins). Its output depends only
//! on the catalog and the budget, so the prompt stays byte-identical across turns.

use super::AgentCatalog;
use crate::skills::{IndexEntry, fit_index};

/// The first lines of the section.
pub const AGENTS_INDEX_HEADER: &str = "## Available Agents\nUse the `agent` tool with one of \
                                       these names and a self-contained task to delegate work \
                                       to a sub-agent with its own context; several calls in \
                                       one response run in parallel.";

/// The section, and what fitting it cost.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentIndex {
    /// The whole section (no trailing newline); `None` when there are no definitions
    /// beyond the built-ins.
    pub text: Option<String>,
    /// Names whose description was shortened (or left out) to fit.
    pub shortened: Vec<String>,
    /// Names left out entirely.
    pub dropped: Vec<String>,
    /// Characters used.
    pub used_chars: usize,
    /// The budget.
    pub budget_chars: usize,
}

impl AgentIndex {
    /// One line for the user when fitting the budget cost anything.
    pub fn warning(&self) -> Option<String> {
        if self.shortened.is_empty() && self.dropped.is_empty() {
            return None;
        }
        Some(format!(
            "agents index is over its budget of {} characters: {} description(s) \
             shortened, {} agent(s) left out; raise `skills_index_budget` in config.toml, \
             or remove agent definitions you do not use",
            self.budget_chars,
            self.shortened.len(),
            self.dropped.len()
        ))
    }
}

impl AgentCatalog {
    /// The index within `budget_chars` characters.
    pub fn index(&self, budget_chars: usize) -> AgentIndex {
        if !self.has_definitions() {
            return AgentIndex {
                text: None,
                shortened: Vec::new(),
                dropped: Vec::new(),
                used_chars: 0,
                budget_chars,
            };
        }
        let entries: Vec<IndexEntry<'_>> = self
            .agents()
            .iter()
            .map(|a| IndexEntry::new(&a.name, &a.description))
            .collect();
        let fitted = fit_index(AGENTS_INDEX_HEADER, &entries, budget_chars);
        AgentIndex {
            text: fitted.text,
            shortened: fitted.shortened,
            dropped: fitted.dropped,
            used_chars: fitted.used_chars,
            budget_chars,
        }
    }
}
