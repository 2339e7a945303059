//! The listings a frontend shows or completes from, as plain data: what `/skills` lists
//! ([`SkillListing`]), what `/mcp` lists ([`McpServerEntry`]), and the slash commands a
//! line can run besides the built-ins ([`SlashCommands`], for routing and completion).
//! The agent builds them from its live state and sends them as events; a frontend keeps
//! its own copy and never reaches into the core for them.
//!
//! It owns the types and the words every frontend uses for their states; it must not
//! know where the data comes from (catalogs, servers) or how it is drawn.

use std::path::PathBuf;

use serde::Serialize;

/// Everything `/skills` shows ([`super::Event::SkillList`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillListing {
    /// Usable skills, in catalog order.
    pub skills: Vec<SkillEntry>,
    /// Skills hidden by one of the same name: name and path.
    pub shadowed: Vec<(String, PathBuf)>,
    /// `SKILL.md` files that are not usable skills: path and why.
    pub invalid: Vec<(PathBuf, String)>,
    /// How many warnings discovery reported.
    pub warnings: usize,
    /// Characters the index uses.
    pub index_used: usize,
    /// The index budget in characters.
    pub index_budget: usize,
}

impl SkillListing {
    /// The share of the index budget in use, in percent.
    pub fn index_percent(&self) -> usize {
        (self.index_used * 100)
            .checked_div(self.index_budget)
            .unwrap_or(0)
    }
}

/// One usable skill in [`SkillListing`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillEntry {
    /// Its name (`/name` runs it).
    pub name: String,
    /// `argument-hint`, if any.
    pub argument_hint: Option<String>,
    /// Ok or with warnings.
    pub standing: SkillStanding,
    /// What else to say, in a fixed order.
    pub notes: Vec<SkillNote>,
    /// The description on one line.
    pub description: String,
    /// Its `SKILL.md`.
    pub path: PathBuf,
}

/// How a listed skill stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillStanding {
    /// Loaded cleanly.
    Ok,
    /// Loaded, with warnings.
    Warning,
    /// A skill of the same name and higher precedence wins.
    Shadowed,
}

impl SkillStanding {
    /// `ok`, `warning` or `shadowed`: the words every frontend shows.
    pub fn as_str(self) -> &'static str {
        match self {
            SkillStanding::Ok => "ok",
            SkillStanding::Warning => "warning",
            SkillStanding::Shadowed => "shadowed",
        }
    }
}

/// One thing worth saying about a listed skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "note", content = "origin", rename_all = "snake_case")]
pub enum SkillNote {
    /// Where it was found.
    Root(SkillOrigin),
    /// Loaded in this session (by `use_skill` or `/name`).
    Loaded,
    /// `user-invocable: false`: only the model can load it.
    ModelOnly,
    /// `disable-model-invocation: true`: only `/name`, never in the index.
    SlashOnly,
    /// Its description was shortened to fit the index budget.
    Shortened,
    /// Left out of the index: the budget ran out.
    LeftOut,
    /// A Claude Code command (a Markdown file below a `commands/` folder), not a
    /// `SKILL.md` folder.
    Command,
}

impl SkillNote {
    /// The words every frontend shows.
    pub fn label(self) -> &'static str {
        match self {
            SkillNote::Root(origin) => origin.as_str(),
            SkillNote::Loaded => "loaded",
            SkillNote::ModelOnly => "model only",
            SkillNote::SlashOnly => "slash command only",
            SkillNote::Shortened => "description shortened",
            SkillNote::LeftOut => "left out of the index",
            SkillNote::Command => "command",
        }
    }
}

/// Where a skill was found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillOrigin {
    /// A `--skills-dir` directory.
    Flag,
    /// A directory inside the project.
    Project,
    /// A directory in the user's home.
    User,
    /// The cache of a remote root.
    Remote,
    /// A trusted plugin's folder.
    Plugin,
}

impl SkillOrigin {
    /// `flag`, `project`, `user`, `remote` or `plugin`.
    pub fn as_str(self) -> &'static str {
        match self {
            SkillOrigin::Flag => "flag",
            SkillOrigin::Project => "project",
            SkillOrigin::User => "user",
            SkillOrigin::Remote => "remote",
            SkillOrigin::Plugin => "plugin",
        }
    }
}

/// One configured MCP server as `/mcp` shows it ([`super::Event::McpServerList`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct McpServerEntry {
    /// `mcp:NAME`.
    pub name: String,
    /// Its state in words (`running, 9 tools`, `not started`, `failed: …`), neutralized.
    pub state: String,
    /// Whether the state is a failure (frontends colour it).
    pub health: McpHealth,
    /// What runs, and where it is defined, neutralized.
    pub detail: String,
    /// Its prompts as slash commands, with their arguments, neutralized.
    pub prompts: Vec<String>,
}

/// Whether a listed MCP server failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum McpHealth {
    /// Not started, running, disabled or waiting for approval.
    Fine,
    /// Its last start failed, or it stopped.
    Failed,
}

/// The slash commands a line can run besides the built-ins: the skills and the MCP
/// servers' prompts, for routing (`crate::input::route`) and completion. The frontend
/// gets them with the session ([`super::Event::SlashCommands`] after any change).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SlashCommands {
    /// Every skill of the catalog, in name order.
    pub skills: Vec<SlashSkill>,
    /// Every configured MCP server, usable or not.
    pub mcp_servers: Vec<McpServerName>,
    /// The prompts known for the usable servers (learnt at their last start), by server
    /// name.
    pub mcp_prompts: Vec<McpPromptCommand>,
}

impl SlashCommands {
    /// The skill named exactly `name`.
    pub fn skill(&self, name: &str) -> Option<&SlashSkill> {
        self.skills.iter().find(|s| s.name == name)
    }

    /// Names of the skills a user can run as `/name`, in order.
    pub fn user_invocable_names(&self) -> impl Iterator<Item = &str> {
        self.skills
            .iter()
            .filter(|s| s.invocation == SkillInvocation::Slash)
            .map(|s| s.name.as_str())
    }

    /// The configured MCP server `name`, usable or not.
    pub fn mcp_server(&self, name: &str) -> Option<&McpServerName> {
        self.mcp_servers.iter().find(|s| s.name == name)
    }

    /// How many MCP servers this session can use.
    pub fn usable_mcp_servers(&self) -> usize {
        self.mcp_servers
            .iter()
            .filter(|s| s.usable == McpUse::Usable)
            .count()
    }
}

/// A skill as a slash command.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SlashSkill {
    /// Its name.
    pub name: String,
    /// Its description on one line.
    pub description: String,
    /// `argument-hint`, if any.
    pub argument_hint: Option<String>,
    /// Whether `/name` runs it.
    pub invocation: SkillInvocation,
}

/// Who can run a skill.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SkillInvocation {
    /// The user, as `/name` (and the model, unless it is slash-only).
    Slash,
    /// Only the model (`user-invocable: false`).
    ModelOnly,
}

/// A configured MCP server's name, and whether this session can use it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct McpServerName {
    /// The server's name.
    pub name: String,
    /// Usable, or configured but not (disabled, not approved).
    pub usable: McpUse,
}

/// Whether a configured MCP server can be used in this session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum McpUse {
    /// Offered to the model; its prompts run as `/SERVER:PROMPT`.
    Usable,
    /// Disabled, or a project's server not approved on this machine.
    Unusable,
}

/// An MCP server's prompt as a slash command (`/SERVER:PROMPT`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct McpPromptCommand {
    /// The server.
    pub server: String,
    /// The prompt's name.
    pub name: String,
    /// What it is for, as the server said (untrusted: neutralize before showing).
    pub description: String,
    /// Its arguments, in order.
    pub arguments: Vec<McpPromptArgument>,
}

/// One argument of an MCP prompt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct McpPromptArgument {
    /// Its name.
    pub name: String,
    /// Whether it must be given (the MCP specification's `required`).
    pub required: bool,
}
