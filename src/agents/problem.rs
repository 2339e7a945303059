//! What can be wrong with an agent definition or an agents folder: each problem names
//! the reason and what to do, and with its path makes one [`AgentWarning`] line, in the
//! same `path: reason` shape as the skills' warnings. Discovery never fails; every
//! problem becomes one of these. It knows nothing of how they are displayed.

use std::fmt;
use std::path::PathBuf;

use crate::skills::NameProblem;

/// One problem found, with the file or folder concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentWarning {
    /// The file or folder.
    pub path: PathBuf,
    /// What is wrong.
    pub problem: AgentProblem,
}

impl fmt::Display for AgentWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.path.display(), self.problem)
    }
}

/// Whether a problem keeps the definition from being used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Severity {
    /// The file is not a usable definition.
    Error,
    /// The definition is used; something in it is ignored or changed.
    Warning,
}

/// What is wrong, with the data needed to say what to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentProblem {
    /// The file could not be read (or is not UTF-8).
    Unreadable {
        /// The error.
        error: String,
    },
    /// Larger than the cap.
    TooLarge {
        /// The cap, in bytes.
        limit: usize,
    },
    /// A link: definitions are read without following links.
    Link,
    /// A project agents folder whose real place is outside the project.
    OutsideProject {
        /// Where it really is.
        real: PathBuf,
    },
    /// An agents root that is not a folder.
    RootNotDirectory,
    /// Folders below this one were not searched: too deep.
    DepthLimit {
        /// The limit.
        limit: usize,
    },
    /// More files in one agents folder than are read.
    CountLimit {
        /// The limit.
        limit: usize,
    },
    /// No frontmatter block.
    BadFrontmatter {
        /// Why.
        reason: String,
    },
    /// A required field is missing or empty.
    MissingField {
        /// `name` or `description`.
        field: &'static str,
    },
    /// The name can never be asked for.
    InvalidName {
        /// The name.
        name: String,
        /// Why.
        problem: NameProblem,
    },
    /// The description holds a control character that could steer a terminal.
    InvalidDescription {
        /// The first such character.
        found: char,
    },
    /// No body: the agent would have no instructions.
    EmptyPrompt,
    /// The YAML did not parse; fields were read line by line.
    YamlFallback {
        /// The parser's message.
        error: String,
    },
    /// A field has a value of the wrong type or an unknown value and was ignored.
    BadField {
        /// The field.
        field: String,
        /// What was expected.
        expected: &'static str,
    },
    /// A field harness9 does not know: ignored.
    UnknownField {
        /// The field as written.
        field: String,
    },
    /// A Claude Code field harness9 reads but cannot honour.
    Unsupported {
        /// The field.
        field: &'static str,
        /// What happens instead.
        instead: &'static str,
    },
    /// A Claude Code tool harness9 has no counterpart for: not given to the agent.
    UnknownTool {
        /// The entry as written.
        tool: String,
    },
    /// A name that is no built-in harness9 tool nor an MCP tool's (`mcp__…`): given
    /// only if a loaded skill's tool has that name.
    UnlistedTool {
        /// The entry as written.
        tool: String,
    },
    /// A definition of the same name with higher precedence wins.
    Shadowed {
        /// The shared name.
        name: String,
        /// The winner (a file, or `(built-in)`).
        by: String,
    },
}

impl AgentProblem {
    /// Whether the definition is left out because of it.
    pub fn severity(&self) -> Severity {
        match self {
            AgentProblem::YamlFallback { .. }
            | AgentProblem::BadField { .. }
            | AgentProblem::UnknownField { .. }
            | AgentProblem::Unsupported { .. }
            | AgentProblem::UnknownTool { .. }
            | AgentProblem::UnlistedTool { .. }
            | AgentProblem::Shadowed { .. }
            | AgentProblem::DepthLimit { .. }
            | AgentProblem::CountLimit { .. } => Severity::Warning,
            _ => Severity::Error,
        }
    }
}

impl fmt::Display for AgentProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AgentProblem::Unreadable { error } => write!(f, "cannot read: {error}; skipped"),
            AgentProblem::TooLarge { limit } => write!(
                f,
                "definition is larger than {limit} bytes; skipped (shorten it)"
            ),
            AgentProblem::Link => write!(
                f,
                "a link; agent definitions are read without following links, so it was \
                 skipped (copy the file instead)"
            ),
            AgentProblem::OutsideProject { real } => write!(
                f,
                "leads outside the project (to {}); project agent definitions are read \
                 only inside it, so the folder was skipped",
                real.display()
            ),
            AgentProblem::RootNotDirectory => write!(f, "agents root is not a directory; skipped"),
            AgentProblem::DepthLimit { limit } => write!(
                f,
                "not searched for agent definitions (more than {limit} levels below the \
                 agents folder); move the files higher"
            ),
            AgentProblem::CountLimit { limit } => write!(
                f,
                "only the first {limit} agent definitions of this folder were read"
            ),
            AgentProblem::BadFrontmatter { reason } => write!(
                f,
                "{reason}; skipped (start the file with `---`, then `name:` and \
                 `description:`, then a closing `---` and the agent's instructions)"
            ),
            AgentProblem::MissingField { field } => write!(
                f,
                "frontmatter has no `{field}`; skipped (add `{field}: ...` between the \
                 `---` lines)"
            ),
            AgentProblem::InvalidName { name, problem } => write!(
                f,
                "`name` \"{}\" {problem}, so the agent could never be asked for; skipped \
                 (rename it, e.g. `name: {}`)",
                crate::skills::name::escaped(name),
                crate::skills::name::suggested_name(name)
            ),
            AgentProblem::InvalidDescription { found } => write!(
                f,
                "`description` holds a control character (U+{:04X}) that could steer a \
                 terminal; skipped (remove it: line breaks and tabs are fine)",
                u32::from(*found)
            ),
            AgentProblem::EmptyPrompt => write!(
                f,
                "no instructions after the frontmatter; skipped (write the agent's system \
                 prompt below the closing `---`)"
            ),
            AgentProblem::YamlFallback { error } => write!(
                f,
                "frontmatter is not valid YAML ({error}); read it line by line (quote \
                 values holding `: `)"
            ),
            AgentProblem::BadField { field, expected } => {
                write!(f, "`{field}` should be {expected}; the field is ignored")
            }
            AgentProblem::UnknownField { field } => {
                write!(f, "`{field}` is not an agent definition field; ignored")
            }
            AgentProblem::Unsupported { field, instead } => {
                write!(f, "`{field}` is not supported; {instead}")
            }
            AgentProblem::UnknownTool { tool } => write!(
                f,
                "tool `{tool}` names no harness9 tool; the agent runs without it"
            ),
            AgentProblem::UnlistedTool { tool } => write!(
                f,
                "tool `{tool}` is no harness9 tool; the agent gets it only if a loaded \
                 skill has a tool of that name"
            ),
            AgentProblem::Shadowed { name, by } => write!(
                f,
                "agent `{name}` is shadowed by {by} (higher precedence); rename one of \
                 them to use both"
            ),
        }
    }
}
