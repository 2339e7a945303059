//! `harness9 plugin add|list|remove|trust`, worded for a terminal or as JSON. Every text
//! a plugin brings (names, descriptions, hook commands, problems) is made inert before
//! it is written (`SafeWriter`).
//!
//! `plugin list --json` prints one array, one object per installed plugin: `name`,
//! `version` (or null), `description` (or null), `source`, `standing` (`trusted`,
//! `not_trusted`, `changed_since_trust`), `hash` (now, or null), `contributes`
//! (`commands`, `skills`, `agents`, `hooks`, `mcp_servers` counts), `problems` (strings).
//!
//! It must not know clap or the session.

use std::io::{self, Write};

use serde_json::json;

use super::folder::{Counts, PluginFolder};
use super::store::{Added, Installed, PluginStore, Standing, StoreError, TrustOutcome};
use crate::safe_text::SafeWriter;

/// Why a plugin subcommand failed.
#[derive(Debug, thiserror::Error)]
pub enum PluginCliError {
    /// The store refused or failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// Output could not be written.
    #[error("cannot write the output")]
    Output(#[from] io::Error),
}

impl PluginCliError {
    /// The kind of failure, for the exit code.
    pub fn kind(&self) -> crate::subcommand::Kind {
        match self {
            PluginCliError::Store(e) => e.kind(),
            PluginCliError::Output(_) => crate::subcommand::Kind::Internal,
        }
    }
}

/// `list`'s format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListFormat {
    /// A line per plugin and its contributions.
    Text,
    /// One JSON array.
    Json,
}

fn contributes(c: &Counts) -> String {
    crate::protocol::PluginContributions {
        commands: c.commands,
        skills: c.skills,
        agents: c.agents,
        hooks: c.hooks,
        mcp_servers: c.mcp_servers,
    }
    .words()
}

/// `plugin list`.
pub fn list(
    store: &PluginStore,
    format: ListFormat,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut dyn Write,
) -> Result<(), PluginCliError> {
    let installed = store.installed(env)?;
    match format {
        ListFormat::Json => {
            let items: Vec<serde_json::Value> = installed.iter().map(json_item).collect();
            let text = serde_json::to_string_pretty(&items).unwrap_or_default();
            let mut safe = SafeWriter::json(out);
            writeln!(safe, "{text}")?;
            safe.flush()?;
        }
        ListFormat::Text => {
            let mut safe = SafeWriter::text(out);
            if installed.is_empty() {
                writeln!(
                    safe,
                    "No plugins added. Add one with `harness9 plugin add PATH|GIT-URL|MARKETPLACE [NAME]`."
                )?;
            }
            for plugin in &installed {
                describe(plugin, &mut safe)?;
            }
            safe.flush()?;
        }
    }
    Ok(())
}

fn json_item(plugin: &Installed) -> serde_json::Value {
    let folder = plugin.folder.as_ref().ok();
    let mut problems: Vec<String> = Vec::new();
    match &plugin.folder {
        Ok(f) => problems.extend(f.problems.iter().map(ToString::to_string)),
        Err(e) => problems.push(e.to_string()),
    }
    json!({
        "name": plugin.record.name,
        "version": folder.and_then(|f| f.manifest.version.clone()),
        "description": folder.and_then(|f| f.manifest.description.clone()),
        "source": plugin.record.source,
        "standing": plugin.standing,
        "hash": plugin.hash.as_ref().ok(),
        "contributes": folder.map(|f| f.counts).unwrap_or_default(),
        "problems": problems,
    })
}

fn describe(plugin: &Installed, out: &mut dyn Write) -> io::Result<()> {
    let version = plugin
        .folder
        .as_ref()
        .ok()
        .and_then(|f| f.manifest.version.as_deref())
        .map(|v| format!(" {v}"))
        .unwrap_or_default();
    writeln!(
        out,
        "{}{version} — {}",
        plugin.record.name,
        plugin.standing.words()
    )?;
    match &plugin.folder {
        Ok(folder) => {
            if let Some(d) = &folder.manifest.description {
                writeln!(out, "  {d}")?;
            }
            writeln!(out, "  contributes: {}", contributes(&folder.counts))?;
            for p in &folder.problems {
                writeln!(out, "  problem: {p}")?;
            }
        }
        Err(e) => writeln!(out, "  cannot be read: {e}")?,
    }
    writeln!(out, "  from: {}", plugin.record.source)?;
    Ok(())
}

/// What a plugin will run, for `trust` (and `add`).
fn will_run(folder: &PluginFolder, out: &mut dyn Write) -> io::Result<()> {
    let hooks = folder.hook_lines();
    if hooks.is_empty() {
        writeln!(out, "  hooks: none")?;
    } else {
        writeln!(
            out,
            "  hooks (each runs as a command with CLAUDE_PLUGIN_ROOT={}):",
            folder.root.display()
        )?;
        for h in hooks {
            writeln!(out, "    {} [{}]: {}", h.event, h.matcher, h.command)?;
        }
    }
    if folder.mcp_servers.is_empty() {
        writeln!(out, "  MCP servers: none")?;
    } else {
        writeln!(out, "  MCP servers:")?;
        for s in &folder.mcp_servers {
            writeln!(out, "    {}: {}", s.name, s.target())?;
        }
    }
    writeln!(out, "  also: {}", contributes(&folder.counts))?;
    for p in &folder.problems {
        writeln!(out, "  problem: {p}")?;
    }
    Ok(())
}

/// `plugin add`.
pub fn add(
    store: &PluginStore,
    source: &str,
    name: Option<&str>,
    cwd: &std::path::Path,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut dyn Write,
) -> Result<(), PluginCliError> {
    let Added { installed, skipped } = store.add(source, name, cwd, env)?;
    let mut safe = SafeWriter::text(out);
    writeln!(
        safe,
        "Added plugin {} to {} (not trusted: nothing from it loads yet).",
        installed.record.name,
        installed.root.display()
    )?;
    for s in &skipped {
        writeln!(safe, "  skipped: {s}")?;
    }
    if let Ok(folder) = &installed.folder {
        will_run(folder, &mut safe)?;
    }
    writeln!(
        safe,
        "Review it, then `harness9 plugin trust {}` to use it.",
        installed.record.name
    )?;
    safe.flush()?;
    Ok(())
}

/// `plugin remove`.
pub fn remove(store: &PluginStore, name: &str, out: &mut dyn Write) -> Result<(), PluginCliError> {
    store.remove(name)?;
    let mut safe = SafeWriter::text(out);
    writeln!(safe, "Removed plugin {name}.")?;
    safe.flush()?;
    Ok(())
}

/// `plugin trust`: shows what the plugin runs, then trusts it as it is now.
pub fn trust(
    store: &PluginStore,
    name: &str,
    env: &dyn Fn(&str) -> Option<String>,
    out: &mut dyn Write,
) -> Result<(), PluginCliError> {
    let shown = store.get(name, env)?;
    let hash = match &shown.hash {
        Ok(h) => h.clone(),
        Err(reason) => {
            return Err(StoreError::Source {
                path: shown.root.clone(),
                reason: reason.clone(),
            }
            .into());
        }
    };
    let folder = shown
        .folder
        .as_ref()
        .map_err(|e| StoreError::Plugin(e.clone()))?;
    let mut safe = SafeWriter::text(out);
    writeln!(safe, "Plugin {name} ({}) will run:", shown.root.display())?;
    will_run(folder, &mut safe)?;
    let outcome = store.trust(name, &hash, env)?;
    match outcome {
        TrustOutcome::Trusted { installed } => {
            debug_assert_eq!(installed.standing, Standing::Trusted);
            writeln!(
                safe,
                "Trusted {name} as it is now ({hash}); a change to its files untrusts it."
            )?;
        }
        TrustOutcome::Already { .. } => writeln!(safe, "{name} was already trusted as it is.")?,
    }
    safe.flush()?;
    Ok(())
}
