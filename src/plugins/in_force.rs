//! What the trusted plugins bring to a session, as one unit each: skill and command
//! folders (for the skills catalog, commands labelled `(plugin:NAME)`), hooks (their
//! origin the plugin, `CLAUDE_PLUGIN_ROOT` set), MCP servers (joined like configured
//! ones) and agent folders (the roots the delegation issue reads: [`PluginsInForce::agent_roots`]).
//! A plugin not trusted as it is now brings nothing, and is named in a warning.
//!
//! It must not know how the session loads what it hands over.

use std::path::{Path, PathBuf};

use super::folder::Counts;
use super::store::{PluginStore, Standing};
use crate::hooks::HookSet;
use crate::mcp::config::McpServerConfig;
use crate::protocol::{PluginContributions, PluginEntry, PluginListing, PluginStanding};
use crate::skills::PluginDirs;

/// One plugin as a session sees it (for `/plugins`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PluginSummary {
    /// Its name.
    pub name: String,
    /// Its version, if its manifest gives one.
    pub version: Option<String>,
    /// Whether it loaded.
    pub standing: Standing,
    /// What it contributes (counted whether or not it loaded).
    pub counts: Counts,
    /// Its folder.
    pub root: PathBuf,
}

/// Everything the trusted plugins bring.
#[derive(Debug, Clone, Default)]
pub struct PluginsInForce {
    /// Every installed plugin, loaded or not.
    pub plugins: Vec<PluginSummary>,
    /// The trusted plugins' skill and command folders, by plugin.
    pub skill_dirs: Vec<PluginDirs>,
    /// Their hooks.
    pub hooks: HookSet,
    /// Their MCP servers.
    pub mcp_servers: Vec<McpServerConfig>,
    /// Their agent folders, with the plugin's name.
    agents: Vec<(String, PathBuf)>,
    /// Their folders.
    trusted_roots: Vec<PathBuf>,
    /// Plugins left out and entries that could not be used, one line each.
    pub warnings: Vec<String>,
}

impl PluginsInForce {
    /// The `agents/` folders of the trusted plugins (and those their manifests name),
    /// each with its plugin's name: the extra roots agent definitions are read from.
    pub fn agent_roots(&self) -> &[(String, PathBuf)] {
        &self.agents
    }

    /// What `/plugins` shows.
    pub fn listing(&self) -> PluginListing {
        PluginListing {
            plugins: self
                .plugins
                .iter()
                .map(|p| PluginEntry {
                    name: p.name.clone(),
                    version: p.version.clone(),
                    standing: match p.standing {
                        Standing::Trusted => PluginStanding::Trusted,
                        Standing::NotTrusted => PluginStanding::NotTrusted,
                        Standing::ChangedSinceTrust => PluginStanding::ChangedSinceTrust,
                    },
                    contributes: PluginContributions {
                        commands: p.counts.commands,
                        skills: p.counts.skills,
                        agents: p.counts.agents,
                        hooks: p.counts.hooks,
                        mcp_servers: p.counts.mcp_servers,
                    },
                })
                .collect(),
        }
    }

    /// The trusted plugins' folders (kept readable inside a sandbox that masks the
    /// harness9 home, since their hooks and servers run from there).
    pub fn trusted_roots(&self) -> &[PathBuf] {
        &self.trusted_roots
    }
}

/// The plugins installed below `home` and what the trusted ones bring. With no plugin
/// installed this reads one missing file.
pub fn load_in_force(home: &Path, env: &dyn Fn(&str) -> Option<String>) -> PluginsInForce {
    let mut out = PluginsInForce::default();
    let installed = match PluginStore::new(home).installed(env) {
        Ok(installed) => installed,
        Err(e) => {
            out.warnings
                .push(format!("plugins: {e}; no plugin was loaded"));
            return out;
        }
    };
    for plugin in installed {
        let name = plugin.record.name.clone();
        let folder = match plugin.folder {
            Ok(folder) => folder,
            Err(e) => {
                out.warnings.push(format!(
                    "plugin {name} cannot be read ({e}); it was not loaded"
                ));
                continue;
            }
        };
        out.plugins.push(PluginSummary {
            name: name.clone(),
            version: folder.manifest.version.clone(),
            standing: plugin.standing,
            counts: folder.counts,
            root: plugin.root.clone(),
        });
        match plugin.standing {
            Standing::Trusted => {}
            Standing::NotTrusted | Standing::ChangedSinceTrust => {
                out.warnings.push(format!(
                    "plugin {name} is {}: nothing from it is loaded until `harness9 plugin \
                     trust {name}`",
                    plugin.standing.words()
                ));
                continue;
            }
        }
        for problem in &folder.problems {
            out.warnings.push(format!("plugin {name}: {problem}"));
        }
        out.trusted_roots.push(plugin.root.clone());
        out.skill_dirs.push(PluginDirs {
            plugin: name.clone(),
            skills: folder.skill_dirs.clone(),
            commands: folder.command_dirs.clone(),
        });
        out.hooks.extend(folder.hooks);
        out.mcp_servers.extend(folder.mcp_servers);
        out.agents
            .extend(folder.agent_dirs.into_iter().map(|d| (name.clone(), d)));
    }
    out
}
