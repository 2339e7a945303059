//! Agent Skills: folders holding a `SKILL.md` that teach the model a way of doing a job.
//! This module owns discovery below the skill roots, frontmatter parsing, the catalog
//! (winners, shadowed and invalid skills, warnings), the index section of the system
//! prompt, body loading, template expansion and the `skills` subcommands' output.
//!
//! It must not know about the model client, the agent loop or terminals: frontends and
//! the prompt builder read the catalog; the `use_skill` tool and the input router call it.
//! The only outside name it knows is the list of built-in slash commands (from `input`),
//! to warn when a skill's name collides with one.
//!
//! Start-up reads only each `SKILL.md`'s frontmatter (bounded), and not even that when
//! the discovery cache (`cache`, in `$HARNESS9_HOME/cache/skills-index`) shows the file
//! unchanged; the body is read by [`Skill::load_body`] when the skill is used.

pub mod active;
pub mod assess;
pub mod bundle;
mod cache;
mod catalog;
pub mod cli;
pub mod commands;
mod discovery;
pub mod docs;
pub mod folder;
pub mod frontmatter;
mod index;
pub mod inline_shell;
pub mod invoke;
pub mod lazy;
pub mod listing;
pub mod name;
pub mod reload;
pub mod remote;
pub mod template;
pub mod validate;
mod warning;

use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use assess::{Verdict, assess};
pub use catalog::{Catalog, DiscoveryStats, InvalidSkill};
pub use discovery::{MAX_DEPTH, MAX_DIRS_PER_ROOT};
pub use frontmatter::Frontmatter;
pub use index::{
    DEFAULT_INDEX_BUDGET, INDEX_HEADER, IndexEntry, SkillIndex, fit as fit_index, index_budget,
};
pub use lazy::LazyFrontmatter;
pub use name::NameProblem;
pub use reload::{SharedCatalog, SkillsWatch};
pub use template::invocation_prompt;
pub use warning::{SkillWarning, WarningKind};

/// Where to look for skills. Roots, highest precedence first: each `flag_dirs` entry;
/// then, for every folder from `workdir` up to `project_root` (nearest first),
/// `{folder}/skills`, `{folder}/.agents/skills`, `{folder}/.claude/skills`; then
/// `{harness9_home}/skills`, `{user_home}/.agents/skills`, `{user_home}/.claude/skills`;
/// last, each `remote_dirs` entry (the extracted caches of remote roots).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DiscoveryOptions {
    /// `--skills-dir` values in the order given (relative ones resolve against `workdir`).
    pub flag_dirs: Vec<PathBuf>,
    /// The working folder.
    pub workdir: PathBuf,
    /// The project root `workdir` belongs to ([`crate::project_root`]); empty (or not
    /// above `workdir`) means `workdir` alone.
    pub project_root: PathBuf,
    /// `$HARNESS9_HOME` (default `~/.harness9`).
    pub harness9_home: PathBuf,
    /// The user's home directory, when known.
    pub user_home: Option<PathBuf>,
    /// Extracted remote roots ([`remote::sync_remote_root`]), lowest precedence.
    pub remote_dirs: Vec<PathBuf>,
    /// The trusted plugins' skill and command folders (`crate::plugins` decides which),
    /// after the user's roots and before the remote ones.
    pub plugins: Vec<PluginDirs>,
}

/// One trusted plugin's folders, as the skills catalog reads them: its skills like a
/// user root's, its commands labelled `(plugin:NAME)`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PluginDirs {
    /// The plugin's name.
    pub plugin: String,
    /// Folders of skill folders.
    pub skills: Vec<PathBuf>,
    /// Command folders.
    pub commands: Vec<PathBuf>,
}

impl DiscoveryOptions {
    /// Every root in precedence order (whether or not it exists).
    pub fn roots(&self) -> Vec<SkillRoot> {
        let mut roots: Vec<SkillRoot> = self
            .flag_dirs
            .iter()
            .map(|d| SkillRoot {
                path: self.workdir.join(d).into(),
                kind: RootKind::Flag,
            })
            .collect();
        for folder in crate::project_root::chain(&self.project_root, &self.workdir)
            .iter()
            .rev()
        {
            for sub in ["skills", ".agents/skills", ".claude/skills"] {
                roots.push(SkillRoot {
                    path: folder.join(sub).into(),
                    kind: RootKind::Project,
                });
            }
        }
        roots.push(SkillRoot {
            path: self.harness9_home.join("skills").into(),
            kind: RootKind::User,
        });
        if let Some(home) = &self.user_home {
            for sub in [".agents/skills", ".claude/skills"] {
                roots.push(SkillRoot {
                    path: home.join(sub).into(),
                    kind: RootKind::User,
                });
            }
        }
        for plugin in &self.plugins {
            roots.extend(plugin.skills.iter().map(|d| SkillRoot {
                path: d.as_path().into(),
                kind: RootKind::Plugin,
            }));
        }
        roots.extend(self.remote_dirs.iter().map(|d| SkillRoot {
            path: d.as_path().into(),
            kind: RootKind::Remote,
        }));
        roots
    }

    /// The folders searched for Claude Code commands ([`commands`]), highest precedence
    /// first: for every folder from `workdir` up to `project_root` (nearest first),
    /// `{folder}/.agents/commands` and `{folder}/.claude/commands`; then
    /// `{harness9_home}/commands`, `{user_home}/.agents/commands`,
    /// `{user_home}/.claude/commands`. Skills of the same name (from [`Self::roots`])
    /// win over commands, as in Claude Code.
    pub fn command_roots(&self) -> Vec<SkillRoot> {
        let mut roots = Vec::new();
        for folder in crate::project_root::chain(&self.project_root, &self.workdir)
            .iter()
            .rev()
        {
            for sub in [".agents/commands", ".claude/commands"] {
                roots.push(SkillRoot {
                    path: folder.join(sub).into(),
                    kind: RootKind::Project,
                });
            }
        }
        roots.push(SkillRoot {
            path: self.harness9_home.join("commands").into(),
            kind: RootKind::User,
        });
        if let Some(home) = &self.user_home {
            for sub in [".agents/commands", ".claude/commands"] {
                roots.push(SkillRoot {
                    path: home.join(sub).into(),
                    kind: RootKind::User,
                });
            }
        }
        roots
    }

    /// The folder project commands must stay inside once links are resolved: the
    /// project root, else the working folder.
    pub fn project_boundary(&self) -> &Path {
        if self.project_root.as_os_str().is_empty() || !self.workdir.starts_with(&self.project_root)
        {
            &self.workdir
        } else {
            &self.project_root
        }
    }

    /// The roots that exist as directories, in precedence order (for `skills validate`
    /// without paths).
    pub fn existing_roots(&self) -> Vec<PathBuf> {
        self.roots()
            .into_iter()
            .filter(|r| r.path.is_dir())
            .map(|r| r.path.to_path_buf())
            .collect()
    }
}

/// Which kind of root a skill came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum RootKind {
    /// A `--skills-dir` directory.
    Flag,
    /// A directory inside the project.
    Project,
    /// A directory in the user's home.
    User,
    /// The cache of a remote root (an archive downloaded from a URL). Its skills never
    /// run inline shell.
    Remote,
    /// A folder of a plugin the user trusted as it is (`harness9 plugin trust`).
    Plugin,
}

impl RootKind {
    /// `flag`, `project`, `user`, `remote` or `plugin`.
    pub fn as_str(self) -> &'static str {
        match self {
            RootKind::Flag => "flag",
            RootKind::Project => "project",
            RootKind::User => "user",
            RootKind::Remote => "remote",
            RootKind::Plugin => "plugin",
        }
    }
}

impl fmt::Display for RootKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A skills root: a directory searched for skills.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct SkillRoot {
    /// The root directory as configured (shared by every skill found under it).
    pub path: Arc<Path>,
    /// Its kind.
    pub kind: RootKind,
}

/// How a discovered skill stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillStatus {
    /// Loaded cleanly.
    Ok,
    /// Loaded, with warnings (see [`Catalog::warnings`]).
    Warning,
    /// A skill with the same name and higher precedence wins.
    Shadowed {
        /// The winner's `SKILL.md`.
        by: PathBuf,
    },
}

impl SkillStatus {
    /// `ok`, `warning` or `shadowed`.
    pub fn as_str(&self) -> &'static str {
        match self {
            SkillStatus::Ok => "ok",
            SkillStatus::Warning => "warning",
            SkillStatus::Shadowed { .. } => "shadowed",
        }
    }
}

/// What a skill is made of: a folder with a `SKILL.md`, or a Claude Code command (one
/// Markdown file below a `commands/` folder, [`commands`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SkillKind {
    /// A folder holding `SKILL.md` (its documents, scripts and `tools.json` with it).
    Folder,
    /// A command file: only its text; no folder of its own.
    Command(CommandFile),
}

/// What a command file adds to a skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandFile {
    /// The file as found at discovery with every link resolved: the body is read from
    /// it again without following any link ([`crate::nofollow`]).
    pub real: PathBuf,
    /// The subfolders between the commands folder and the file (`frontend` for
    /// `frontend/build.md`): a label, as Claude Code shows it, not part of the name.
    pub namespace: Option<String>,
    /// Where its description came from.
    pub described_by: DescribedBy,
}

/// Where a command's description came from. Claude Code offers a command to the model
/// only when its frontmatter has a `description`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DescribedBy {
    /// The `description` field.
    Frontmatter,
    /// The first line of the body (there was no `description`).
    FirstLine,
}

impl SkillKind {
    /// `skill` or `command`.
    pub fn as_str(&self) -> &'static str {
        match self {
            SkillKind::Folder => "skill",
            SkillKind::Command(_) => "command",
        }
    }
}

/// One skill: its identity, where it lives and its frontmatter.
#[derive(Debug, Clone, PartialEq)]
pub struct Skill {
    /// The `name` field.
    pub name: String,
    /// The `description` field, exactly as YAML reads it (may hold newlines).
    pub description: String,
    /// The skill's directory (the one holding `SKILL.md`), as found below its root.
    pub dir: PathBuf,
    /// The `SKILL.md` file.
    pub path: PathBuf,
    /// The root it was found under.
    pub root: SkillRoot,
    /// Every frontmatter field, typed (its `name`/`description` duplicate the above);
    /// decoded from the discovery cache when first read.
    pub frontmatter: LazyFrontmatter,
    /// Ok, loaded with warnings, or shadowed.
    pub status: SkillStatus,
    /// A `SKILL.md` folder or a command file.
    pub kind: SkillKind,
}

impl Skill {
    /// False when `user-invocable: false`: no slash command.
    pub fn user_invocable(&self) -> bool {
        self.frontmatter.user_invocable()
    }

    /// False when `disable-model-invocation: true`: not in the index, not loadable by
    /// `use_skill`. A command is offered to the model only when its frontmatter gives a
    /// `description` (as Claude Code's `SlashCommand` tool does).
    pub fn model_invocable(&self) -> bool {
        let described = match &self.kind {
            SkillKind::Folder => true,
            SkillKind::Command(file) => file.described_by == DescribedBy::Frontmatter,
        };
        described && !self.frontmatter.disable_model_invocation()
    }

    /// The skill's own folder (documents, scripts, `tools.json`): `None` for a command,
    /// which has none (the folder it sits in is not its own).
    pub fn folder(&self) -> Option<&Path> {
        match self.kind {
            SkillKind::Folder => Some(&self.dir),
            SkillKind::Command(_) => None,
        }
    }

    /// The description on one line (whitespace runs collapsed), as the index shows it.
    pub fn one_line_description(&self) -> String {
        self.description
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    }

    /// Reads the body: everything after the closing `---` line, CRLF normalised, with
    /// surrounding whitespace trimmed. Reads the file now (not at discovery).
    pub fn load_body(&self) -> Result<String, SkillError> {
        match &self.kind {
            SkillKind::Folder => load_body_from(&self.path),
            SkillKind::Command(file) => commands::load_body(&self.path, &file.real),
        }
    }
}

/// Reads the body of any `SKILL.md` (see [`Skill::load_body`]).
pub fn load_body_from(path: &Path) -> Result<String, SkillError> {
    let text = crate::plain_file::read_to_string(path).map_err(|source| SkillError::Io {
        path: path.to_path_buf(),
        source,
    })?;
    let (_, body) = frontmatter::split(&text).map_err(|e| SkillError::Frontmatter {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    Ok(body.trim().to_string())
}

/// A failure using a skill.
#[derive(Debug, thiserror::Error)]
pub enum SkillError {
    /// The `SKILL.md` could not be read.
    #[error("cannot read {}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file no longer has a frontmatter block.
    #[error("{}: {reason}", path.display())]
    Frontmatter {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        reason: String,
    },
}
