//! Agent definitions: Markdown files with YAML frontmatter in Claude Code's format (one
//! file, one agent: `name`, `description`, `tools`/`disallowedTools`, `model`,
//! `permissionMode`, `maxTurns`, `skills`, the body as the agent's system prompt), found
//! in `.harness9/agents`, `.agents/agents` and `.claude/agents` along the project chain,
//! `$HARNESS9_HOME/agents`, `~/.claude/agents` and extra roots (a plugin's `agents/`),
//! plus the two built-ins `explore` and `general`. This module owns where they are
//! looked for ([`Places`]), how one file becomes an [`AgentDefinition`] or a reported
//! problem (`definition.rs`), the walk (`discovery.rs`), the catalog with its precedence,
//! the index section of the system prompt (`index.rs`) and the `agents` subcommands'
//! output (`cli.rs`).
//!
//! Definitions are repository input: read without following links, capped in size,
//! depth and count, and every file that is not a usable definition is reported with its
//! path and why. What a definition asks for is only a wish: the agent that runs it
//! narrows tools and never widens the approval mode. It must not know the agent loop,
//! the model client or terminals.

pub mod builtin;
pub mod cli;
mod definition;
mod discovery;
mod index;
mod problem;
pub mod tools;

use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use definition::parse_file;
pub use index::{AGENTS_INDEX_HEADER, AgentIndex};
pub use problem::{AgentProblem, AgentWarning};

/// The largest definition file read, in bytes.
pub const MAX_DEFINITION_BYTES: usize = 64 * 1024;
/// How many subfolder levels below an agents folder are searched.
pub const MAX_DEPTH: usize = 4;
/// How many definition files are read below one agents folder.
pub const MAX_PER_ROOT: usize = 1_000;

/// Where to look for agent definitions.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Places {
    /// The working folder.
    pub workdir: PathBuf,
    /// The project root `workdir` belongs to (empty, or not above `workdir`: `workdir`
    /// alone).
    pub project_root: PathBuf,
    /// `$HARNESS9_HOME`.
    pub harness9_home: PathBuf,
    /// The user's home directory, when known.
    pub user_home: Option<PathBuf>,
    /// Extra roots (a trusted plugin's `agents/` folder), lowest precedence, in order.
    pub extra_roots: Vec<PathBuf>,
}

impl Places {
    /// Every root in precedence order, whether or not it exists: for every folder from
    /// `workdir` up to the project root (nearest first) `.harness9/agents`,
    /// `.agents/agents`, `.claude/agents`; then `$HARNESS9_HOME/agents`,
    /// `~/.claude/agents`; then the extra roots.
    pub fn roots(&self) -> Vec<AgentRoot> {
        let mut roots = Vec::new();
        for folder in crate::project_root::chain(&self.project_root, &self.workdir)
            .iter()
            .rev()
        {
            for sub in [".harness9/agents", ".agents/agents", ".claude/agents"] {
                roots.push(AgentRoot {
                    path: folder.join(sub).into(),
                    origin: Origin::Project,
                });
            }
        }
        roots.push(AgentRoot {
            path: self.harness9_home.join("agents").into(),
            origin: Origin::User,
        });
        if let Some(home) = &self.user_home {
            roots.push(AgentRoot {
                path: home.join(".claude/agents").into(),
                origin: Origin::User,
            });
        }
        roots.extend(self.extra_roots.iter().map(|d| AgentRoot {
            path: d.as_path().into(),
            origin: Origin::Extra,
        }));
        roots
    }

    /// The folder project roots must stay inside once links are resolved: the project
    /// root, else the working folder.
    pub fn project_boundary(&self) -> &Path {
        if self.project_root.as_os_str().is_empty() || !self.workdir.starts_with(&self.project_root)
        {
            &self.workdir
        } else {
            &self.project_root
        }
    }
}

/// Where a definition came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Origin {
    /// Built into harness9.
    BuiltIn,
    /// A folder inside the project.
    Project,
    /// A folder in the user's home.
    User,
    /// An extra root (a plugin's).
    Extra,
}

impl Origin {
    /// `built-in`, `project`, `user` or `extra`.
    pub fn as_str(self) -> &'static str {
        match self {
            Origin::BuiltIn => "built-in",
            Origin::Project => "project",
            Origin::User => "user",
            Origin::Extra => "extra",
        }
    }
}

/// A folder searched for definitions.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct AgentRoot {
    /// The folder as configured.
    pub path: Arc<Path>,
    /// What kind of place it is.
    pub origin: Origin,
}

/// Which tools a definition asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ToolChoice {
    /// No `tools` field: every tool the parent may give a sub-agent.
    Inherit,
    /// Only these entries (Claude Code's names or harness9's, as written; mapped by
    /// [`tools::harness_tool`]).
    Only(Vec<String>),
}

/// Which model a definition asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelChoice {
    /// The session's model (no `model`, `inherit`, or a Claude alias such as `sonnet`).
    Inherit,
    /// A model by name: `NAME/model` of a configured provider, or a model of the
    /// session's endpoint; the runner falls back to the session's model when it is not
    /// configured.
    Named(String),
}

/// Claude Code's `permissionMode`, as a wish: the runner never lets it widen the
/// parent's approval mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PermissionWish {
    /// No field, or `default`: the parent's mode.
    Inherit,
    /// `acceptEdits`: edits without asking (only when the parent allows that too).
    AcceptEdits,
    /// `dontAsk` / `bypassPermissions`: as wide as the parent's mode, never wider.
    Widest,
    /// `plan`: reading tools only, its commands in the read-only sandbox.
    Plan,
}

impl PermissionWish {
    /// The Claude Code spelling (`default` for [`PermissionWish::Inherit`]).
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionWish::Inherit => "default",
            PermissionWish::AcceptEdits => "acceptEdits",
            PermissionWish::Widest => "bypassPermissions",
            PermissionWish::Plan => "plan",
        }
    }
}

/// Where a sub-agent's `bash` runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Confinement {
    /// The session's sandbox, as the parent's commands.
    Session,
    /// The read-only sandbox: nothing on disk can be changed, whatever the command.
    ReadOnly,
}

/// One usable agent definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentDefinition {
    /// `name`.
    pub name: String,
    /// `description`: when to use it (one line in the index).
    pub description: String,
    /// The body: the agent's system prompt (trimmed).
    pub prompt: String,
    /// `tools`.
    pub tools: ToolChoice,
    /// `disallowedTools`, as written.
    pub disallowed: Vec<String>,
    /// `model`.
    pub model: ModelChoice,
    /// `permissionMode`.
    pub permission: PermissionWish,
    /// `maxTurns`: the most model requests it may make.
    pub max_turns: Option<u32>,
    /// `skills`: skills whose text is given to it before its task.
    pub skills: Vec<String>,
    /// Where its `bash` runs.
    pub confinement: Confinement,
    /// Where it came from.
    pub origin: Origin,
    /// Its file (`None` for a built-in).
    pub path: Option<PathBuf>,
}

impl AgentDefinition {
    /// The description on one line (whitespace runs collapsed).
    pub fn one_line_description(&self) -> String {
        self.description
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Where it is, for listings: its file, or `(built-in)`.
    pub fn shown_path(&self) -> String {
        self.path
            .as_ref()
            .map_or_else(|| "(built-in)".to_string(), |p| p.display().to_string())
    }
}

/// A file below an agents folder that is not a usable definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InvalidAgent {
    /// Its name, when one could be read.
    pub name: Option<String>,
    /// The file.
    pub path: PathBuf,
    /// The kind of folder it was found in.
    pub origin: Origin,
    /// Why it is not usable.
    pub reason: AgentProblem,
}

/// A definition that lost to another of the same name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Shadowed {
    /// The definition that lost.
    pub agent: AgentDefinition,
    /// Where the winner is (its file, or `(built-in)`).
    pub by: String,
}

/// Every definition found: winners (built-ins first, then by name), shadowed ones,
/// invalid files and warnings.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AgentCatalog {
    agents: Vec<AgentDefinition>,
    shadowed: Vec<Shadowed>,
    invalid: Vec<InvalidAgent>,
    warnings: Vec<AgentWarning>,
}

impl AgentCatalog {
    /// Searches every root of `places` and adds the built-ins. A name is taken by the
    /// built-ins first (a file cannot redefine `explore`), then by the roots in
    /// precedence order; later ones of the same name are shadowed and reported.
    pub fn discover(places: &Places) -> Self {
        let found = discovery::discover(places);
        Self::from_found(builtin::all(), found)
    }

    /// The catalog of definitions found in `paths` alone (files or folders), for
    /// `agents validate PATH`: no built-ins, no precedence beyond the order given.
    pub fn from_paths(paths: &[PathBuf]) -> Self {
        let found = discovery::discover_paths(paths);
        Self::from_found(Vec::new(), found)
    }

    fn from_found(builtins: Vec<AgentDefinition>, found: discovery::Found) -> Self {
        let mut catalog = AgentCatalog {
            agents: builtins,
            invalid: found.invalid,
            warnings: found.warnings,
            ..AgentCatalog::default()
        };
        let builtin_count = catalog.agents.len();
        for agent in found.agents {
            match catalog.agents.iter().find(|a| a.name == agent.name) {
                Some(winner) => {
                    let by = winner.shown_path();
                    catalog.warnings.push(AgentWarning {
                        path: agent.path.clone().unwrap_or_default(),
                        problem: AgentProblem::Shadowed {
                            name: agent.name.clone(),
                            by: by.clone(),
                        },
                    });
                    catalog.shadowed.push(Shadowed { agent, by });
                }
                None => catalog.agents.push(agent),
            }
        }
        catalog.agents[builtin_count..].sort_by(|a, b| a.name.cmp(&b.name));
        catalog
    }

    /// The usable definitions: built-ins first, then the others by name.
    pub fn agents(&self) -> &[AgentDefinition] {
        &self.agents
    }

    /// The definition called `name`.
    pub fn get(&self, name: &str) -> Option<&AgentDefinition> {
        self.agents.iter().find(|a| a.name == name)
    }

    /// Whether any definition beyond the built-ins is usable.
    pub fn has_definitions(&self) -> bool {
        self.agents.iter().any(|a| a.origin != Origin::BuiltIn)
    }

    /// Definitions that lost to another of the same name.
    pub fn shadowed(&self) -> &[Shadowed] {
        &self.shadowed
    }

    /// Files that are not usable definitions.
    pub fn invalid(&self) -> &[InvalidAgent] {
        &self.invalid
    }

    /// Every problem found, in the order found (invalid files included).
    pub fn warnings(&self) -> &[AgentWarning] {
        &self.warnings
    }
}

#[cfg(test)]
mod tests;
