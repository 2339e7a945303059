//! Claude Code plugins: a folder with `.claude-plugin/plugin.json` holding commands,
//! agents, skills, hooks and MCP servers, shared through `marketplace.json`
//! catalogues. This module owns the format (`manifest.rs`), reading a plugin folder as
//! repository input (`folder.rs`: no link followed, every read capped, every entry that
//! cannot be used reported with its path and why), the installed plugins under
//! `$HARNESS9_HOME/plugins/` with their content hashes and the user's trust
//! (`store.rs`, `fetch.rs`), and what a trusted plugin brings to a session as one unit
//! (`in_force.rs`). `cli.rs` is `harness9 plugin add|list|remove|trust`.
//!
//! Nothing from a plugin loads or runs before the user trusted it as it is now: a
//! plugin whose files changed after `trust` is untrusted again.
//!
//! It must not know the agent loop, frontends or terminals; it hands skills folders,
//! hooks and MCP servers to the modules that load them.

pub mod cli;
mod fetch;
mod folder;
mod in_force;
pub mod manifest;
mod store;

#[cfg(test)]
mod tests;

use std::path::PathBuf;

pub use folder::{HookLine, PluginFolder, inspect};
pub use in_force::{PluginsInForce, load_in_force};
pub use manifest::{Manifest, Marketplace, check_name, parse_manifest, parse_marketplace};
pub use store::{
    Added, Installed, PluginStore, Record, Standing, StoreError, TrustOutcome, content_hash,
};

/// Something in a plugin or marketplace that could not be used, and where.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct PluginError {
    /// The file or folder.
    pub path: PathBuf,
    /// What is wrong.
    pub problem: Problem,
}

/// What is wrong with a plugin's file or entry.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Problem {
    /// It could not be read (a link, a FIFO, a permission, not UTF-8…).
    #[error("cannot be read: {reason}")]
    Unreadable {
        /// Why.
        reason: String,
    },
    /// It is larger than the cap.
    #[error("is larger than {limit} bytes")]
    TooLarge {
        /// The cap.
        limit: u64,
    },
    /// It does not parse.
    #[error("does not parse ({reason})")]
    Parse {
        /// The parser's message.
        reason: String,
    },
    /// `plugin.json` (or a marketplace entry) has no `name`.
    #[error("has no `name`")]
    MissingName,
    /// A name that cannot name a plugin.
    #[error(
        "`{name}` cannot name a plugin (ASCII letters, digits, `-` and `_`, starting with a \
         letter or a digit, at most 64)"
    )]
    BadName {
        /// The name as written.
        name: String,
    },
    /// A key of the wrong shape.
    #[error("`{key}` must be {expected}")]
    WrongShape {
        /// The key.
        key: &'static str,
        /// What it must be.
        expected: &'static str,
    },
    /// A component path that is absolute or climbs out of the plugin.
    #[error("`{path}` is not a relative path inside the plugin; it was not used")]
    OutsidePlugin {
        /// The path as written.
        path: String,
    },
    /// A component path that does not exist.
    #[error("`{path}` does not exist in the plugin; it was not used")]
    Missing {
        /// The path as written.
        path: String,
    },
    /// A symbolic link: never followed out of (or inside) a plugin.
    #[error("is a symbolic link; plugins are read without following links, so it was skipped")]
    Link,
    /// Neither a regular file nor a folder (a FIFO, a socket, a device).
    #[error("is not a regular file or a folder; it was skipped")]
    Special,
    /// A commands path that names one file (only folders are read).
    #[error("`{path}` is a file; harness9 reads command folders only, so it was not used")]
    CommandFile {
        /// The path as written.
        path: String,
    },
    /// An agents or skills path that names one file outside the folders read.
    #[error("`{path}` is a file; harness9 reads agent and skill folders only, so it was not used")]
    ComponentFile {
        /// The path as written.
        path: String,
    },
    /// Too many files, too many bytes or too deep.
    #[error("{what}; the rest was not copied")]
    Limit {
        /// Which limit.
        what: String,
    },
    /// A marketplace source kind harness9 does not fetch.
    #[error("source `{kind}` is not supported (a relative path, `github` or `url`/`git` are)")]
    UnsupportedSource {
        /// The kind as written.
        kind: String,
    },
    /// A hook file entry (the hook module's own reason).
    #[error("{reason}")]
    Hook {
        /// Why.
        reason: String,
    },
    /// An MCP server entry (the MCP module's own reason).
    #[error("{reason}")]
    Mcp {
        /// Why.
        reason: String,
    },
}
