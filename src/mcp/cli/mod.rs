//! The `harness9 mcp list|tools|add|remove|trust` subcommands: what each prints and
//! returns, given the resolved [`McpSetup`] (and, for `list` and `tools`, the
//! [`McpServers`] that start servers). `add` and `remove` edit the `[mcp_servers.NAME]`
//! tables of the user's config.toml or the project's `.harness9/config.toml` through
//! [`super::edit`], so comments and layout survive; `.mcp.json` is read, never edited. A
//! server the user adds to the project themselves is approved at once
//! ([`config::trust_project_server`]).
//!
//! Servers are remote, untrusted text: their names, descriptions, prompts and error
//! messages (with their stderr's end) reach the terminal only through [`SafeWriter`]
//! (control characters shown as `^[`; JSON with them escaped). Argument parsing belongs
//! to `crate::cli`, exit codes and writing errors to `main` (through
//! [`McpCliError::kind`]); this module must not know clap, the agent or any frontend.
//!
//! `mcp list --json` prints one array with one object per configured server, with these
//! fields: `name`; `scope` (`user`, `project` or `mcp_json`); `file` (where it is
//! defined); `transport` (`stdio` or `http`); `target` (the command line or the URL);
//! `description` (the configured one, or null); `preload` (bool); `state` (`ok`,
//! `failed`, `disabled` or `not_approved`); `error` (the failure, or null); and, when
//! `state` is `ok`, `tools` and `prompts` (counts), `resources` (bool) and `server` (its
//! name and version, or null) — null otherwise.

mod change;
mod list;
mod tools;

pub use change::{add, remove, trust};
pub use list::list;
pub use tools::tools;

use std::io::{self, Write};
use std::path::PathBuf;
use std::time::Duration;

use super::config::{
    Enabled, McpServerConfig, McpTransport, PROJECT_CONFIG, ServerFile, ServerSandbox, Trust,
    TrustError,
};
use super::connection::McpError;
use super::edit::EditError;
use crate::safe_text;
use crate::subcommand::Kind;

/// The longest `mcp list` waits for one server (less when its start-up timeout is).
pub const LIST_START_LIMIT: Duration = Duration::from_secs(15);

/// How `list` and `tools` print.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Text for people.
    Text,
    /// One JSON document (`--json`).
    Json,
}

/// Which file `add` and `remove` edit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scope {
    /// The user's config.toml.
    User,
    /// The project's `.harness9/config.toml`.
    Project,
}

/// The files the subcommands read and edit.
#[derive(Debug, Clone)]
pub struct Files {
    /// The user's config.toml.
    pub user_config: PathBuf,
    /// The project directory.
    pub project: PathBuf,
}

impl Scope {
    /// What a symbolic link at the scope's file means when it is written: the user's
    /// config.toml may live in a dotfiles folder; a project's file is the repository's,
    /// and is never written through a link.
    fn links(self) -> crate::private_files::Links {
        match self {
            Scope::User => crate::private_files::Links::Follow,
            Scope::Project => crate::private_files::Links::Refuse,
        }
    }
}

impl Files {
    fn of(&self, scope: Scope) -> PathBuf {
        match scope {
            Scope::User => self.user_config.clone(),
            Scope::Project => self.project.join(PROJECT_CONFIG),
        }
    }
}

/// `mcp add`: a server to write.
#[derive(Debug, Clone)]
pub struct AddRequest {
    /// Its name.
    pub name: String,
    /// Where it goes.
    pub scope: Scope,
    /// Its table.
    pub server: ServerFile,
    /// Replace a server of that name.
    pub force: bool,
}

/// How servers are started for `list` and `tools`.
#[derive(Debug, Clone, Default)]
pub struct StartOptions {
    /// Why servers with `sandbox = true` cannot run in this run's sandbox (the sandbox
    /// was asked for but cannot be had); they are reported, never started unconfined.
    pub sandbox_refusal: Option<String>,
}

/// Why an `mcp` subcommand failed.
#[derive(Debug, thiserror::Error)]
pub enum McpCliError {
    /// What was typed names a server that cannot be used or written this way.
    #[error("{0}")]
    Usage(String),
    /// What was typed names no server there is (in the files asked about).
    #[error("{0}")]
    NotFound(String),
    /// `mcp list` could not load every definition or file; the warnings said which.
    #[error(
        "the list is incomplete: {} could not be loaded (see the warnings)",
        count(*problems, "definition or file", "definitions or files")
    )]
    Incomplete {
        /// How many warnings there were.
        problems: usize,
    },
    /// `mcp add --scope project` wrote the server but could not approve it.
    #[error(
        "{} could not be read back, so `{name}` is not approved yet; check the file, then \
         run `harness9 mcp trust`",
        path.display()
    )]
    NotApproved {
        /// The server.
        name: String,
        /// The project's file it was written to.
        path: PathBuf,
    },
    /// A config file could not be read, edited or written.
    #[error(transparent)]
    Edit(#[from] EditError),
    /// The server could not be started or answered with an error.
    #[error(transparent)]
    Server(#[from] McpError),
    /// The trust list could not be written.
    #[error("cannot record the approval: {0}")]
    Trust(#[from] TrustError),
    /// Standard output failed.
    #[error("cannot write the output: {0}")]
    Output(#[from] io::Error),
}

impl McpCliError {
    /// The kind of failure, for the exit code: what the user typed is a usage error or
    /// names nothing; an incomplete list or approval failed; the rest (a server that
    /// fails, a file that cannot be read or written) is internal.
    pub fn kind(&self) -> Kind {
        match self {
            McpCliError::Usage(_) => Kind::Usage,
            McpCliError::NotFound(_) => Kind::NotFound,
            McpCliError::Incomplete { .. } | McpCliError::NotApproved { .. } => Kind::Failed,
            McpCliError::Edit(_)
            | McpCliError::Server(_)
            | McpCliError::Trust(_)
            | McpCliError::Output(_) => Kind::Internal,
        }
    }
}

/// What one server's check found.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Probe {
    Ok {
        tools: usize,
        prompts: usize,
        resources: bool,
        implementation: Option<String>,
    },
    Failed(String),
    Disabled,
    NotApproved,
}

impl Probe {
    fn state(&self) -> &'static str {
        match self {
            Probe::Ok { .. } => "ok",
            Probe::Failed(_) => "failed",
            Probe::Disabled => "disabled",
            Probe::NotApproved => "not_approved",
        }
    }

    fn words(&self) -> String {
        match self {
            Probe::Ok {
                tools,
                prompts,
                implementation,
                ..
            } => {
                let mut text = format!(
                    "ok — {}, {}",
                    count(*tools, "tool", "tools"),
                    count(*prompts, "prompt", "prompts")
                );
                if let Some(imp) = implementation {
                    text.push_str(&format!(" ({imp})"));
                }
                text
            }
            Probe::Failed(message) => format!("failed — {}", one_line(message)),
            Probe::Disabled => "disabled".into(),
            Probe::NotApproved => "not approved (harness9 mcp trust)".into(),
        }
    }
}

fn count(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `text` on one line: its lines joined with ` | `.
fn one_line(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines.join(" | ")
}

/// Why `config` may not start in this run, if it may not.
fn blocked(config: &McpServerConfig, options: &StartOptions) -> Option<Probe> {
    if config.enabled == Enabled::No {
        return Some(Probe::Disabled);
    }
    if config.trust == Trust::Untrusted {
        return Some(Probe::NotApproved);
    }
    match (&config.transport, &options.sandbox_refusal) {
        (
            McpTransport::Stdio {
                sandbox: ServerSandbox::Session,
                ..
            },
            Some(reason),
        ) => Some(Probe::Failed(format!(
            "it asks for the sandbox (`sandbox = true`), which cannot be had: {reason}"
        ))),
        _ => None,
    }
}

/// Rows in columns, indented; cells are neutralized first so the widths are those shown.
fn table<const N: usize>(rows: &[[String; N]], out: &mut dyn Write) -> io::Result<()> {
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            r.iter()
                .map(|c| safe_text::neutralize(c).into_owned())
                .collect()
        })
        .collect();
    let mut widths = [0usize; N];
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    for row in &rows {
        let mut line = String::from(" ");
        for (i, cell) in row.iter().enumerate() {
            line.push(' ');
            line.push_str(cell);
            if i + 1 < N {
                let pad = widths[i].saturating_sub(cell.chars().count()) + 1;
                line.push_str(&" ".repeat(pad));
            }
        }
        writeln!(out, "{}", line.trim_end())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
