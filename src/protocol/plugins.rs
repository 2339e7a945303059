//! What `/plugins` shows, as plain data: each installed plugin, whether it is trusted
//! (and so loaded) and what it contributes, worded once by [`PluginListing::lines`] for
//! every frontend. Asked with [`super::Op::ListPlugins`], answered by
//! [`super::Event::PluginList`].
//!
//! It must not know where plugins live or how they load.

use serde::Serialize;

use crate::safe_text::neutralize;

/// Every installed plugin, in name order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct PluginListing {
    /// The plugins.
    pub plugins: Vec<PluginEntry>,
}

/// One installed plugin.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct PluginEntry {
    /// Its name.
    pub name: String,
    /// Its version, if its manifest gives one (untrusted text: made inert when worded).
    pub version: Option<String>,
    /// Whether it loaded.
    pub standing: PluginStanding,
    /// What it holds.
    pub contributes: PluginContributions,
}

/// Whether a plugin loaded into this session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PluginStanding {
    /// Trusted as its files are: loaded.
    Trusted,
    /// Never trusted: nothing loaded.
    NotTrusted,
    /// Changed since it was trusted: nothing loaded.
    ChangedSinceTrust,
}

/// What a plugin holds, counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize)]
pub struct PluginContributions {
    /// Command files.
    pub commands: usize,
    /// Skills.
    pub skills: usize,
    /// Agent files.
    pub agents: usize,
    /// Hook commands.
    pub hooks: usize,
    /// MCP servers.
    pub mcp_servers: usize,
}

impl PluginContributions {
    /// `2 commands, 1 hook`, or `nothing`.
    pub fn words(&self) -> String {
        let parts = [
            (self.commands, "command", "commands"),
            (self.skills, "skill", "skills"),
            (self.agents, "agent", "agents"),
            (self.hooks, "hook", "hooks"),
            (self.mcp_servers, "MCP server", "MCP servers"),
        ];
        let words: Vec<String> = parts
            .iter()
            .filter(|(n, ..)| *n > 0)
            .map(|(n, one, many)| format!("{n} {}", if *n == 1 { one } else { many }))
            .collect();
        if words.is_empty() {
            "nothing".into()
        } else {
            words.join(", ")
        }
    }
}

impl PluginListing {
    /// One line per plugin (`name version — trusted: 3 commands, 1 hook`), or a line
    /// saying there are none and how to add one.
    pub fn lines(&self) -> Vec<String> {
        if self.plugins.is_empty() {
            return vec![
                "No plugins added (harness9 plugin add PATH|GIT-URL|MARKETPLACE [NAME]).".into(),
            ];
        }
        self.plugins
            .iter()
            .map(|p| {
                let version = p
                    .version
                    .as_deref()
                    .map(|v| format!(" {}", neutralize(v)))
                    .unwrap_or_default();
                let standing = match p.standing {
                    PluginStanding::Trusted => "trusted, loaded",
                    PluginStanding::NotTrusted => {
                        "not trusted, nothing loaded (harness9 plugin trust NAME)"
                    }
                    PluginStanding::ChangedSinceTrust => {
                        "changed since trusted, nothing loaded (harness9 plugin trust NAME)"
                    }
                };
                format!(
                    "{}{version} — {standing}: {}",
                    neutralize(&p.name),
                    p.contributes.words()
                )
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_plugin_is_one_line_with_its_standing_and_contributions() {
        let listing = PluginListing {
            plugins: vec![
                PluginEntry {
                    name: "commit-commands".into(),
                    version: Some("1.0.0\u{1b}[31m".into()),
                    standing: PluginStanding::Trusted,
                    contributes: PluginContributions {
                        commands: 3,
                        ..Default::default()
                    },
                },
                PluginEntry {
                    name: "guard".into(),
                    version: None,
                    standing: PluginStanding::NotTrusted,
                    contributes: PluginContributions {
                        hooks: 1,
                        ..Default::default()
                    },
                },
            ],
        };
        assert_eq!(
            listing.lines(),
            [
                "commit-commands 1.0.0^[[31m — trusted, loaded: 3 commands",
                "guard — not trusted, nothing loaded (harness9 plugin trust NAME): 1 hook",
            ]
        );
        assert!(PluginListing::default().lines()[0].starts_with("No plugins added"));
    }
}
