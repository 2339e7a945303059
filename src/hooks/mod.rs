//! Hooks in Claude Code's format: commands the user (or, once trusted, the project)
//! configures to run at named points of a session — before and after a tool call, when a
//! prompt is submitted, when the agent stops — which may block, allow, rewrite or add
//! context. This module owns the configuration (`[hooks]` in config.toml,
//! `.harness9/hooks.toml`, the `hooks` block of `.claude/settings.json` and
//! `.claude/settings.local.json`), the events ([`Event`]), the matchers on tool names
//! (harness9's and Claude Code's, `matcher.rs`), and running the hooks of one event as
//! confined children with JSON on stdin (`input.rs`, `run.rs`), each ending in an
//! [`Outcome`] and the firing in a [`Verdict`].
//!
//! A hook marked `on_error = "deny"` is a guard: when it cannot give an answer (its
//! script is missing, it crashes, times out or prints JSON that does not parse), it
//! denies, and says why. Every other hook's failure is reported and does not block.
//!
//! It must not know the agent loop, tools, approval or permission rules (a caller
//! combines an outcome with the rule book), frontends or terminals.

mod config;
mod input;
mod load;
mod matcher;
mod pins;
mod run;
mod trust;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

pub use config::{HookFileError, Problem, parse_json_settings, parse_toml_text, parse_toml_value};
pub use input::{
    Detail, HookInput, claude_tool_input, claude_tool_name, harness9_tool_input, harness9_tool_name,
};
pub use load::{MAX_FILE_BYTES, load_project, read_capped};
pub use matcher::{Matcher, MatcherError};
pub use pins::{Held, PinnedScript};
pub use run::{
    Answer, Decision, Failure, HookRun, KeepGoing, Outcome, Report, RunContext, Verdict, run_event,
};
pub use trust::{ProjectHook, ProjectHooks, TRUST_FILE, TrustError, matcher_text, trust, untrust};

#[cfg(test)]
mod run_tests;
#[cfg(test)]
mod tests;

/// The default time a hook may run, as Claude Code's (60 s).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);
/// The longest `timeout` accepted (one hour).
pub const MAX_TIMEOUT: Duration = Duration::from_secs(3600);

/// A point of the session where hooks run (the contract's `HookEvent`, so the events
/// reporting runs name it the same way).
pub use crate::protocol::HookEvent as Event;

/// What `event`'s matchers are compared with.
pub fn matches_on(event: Event) -> MatchesOn {
    match event {
        Event::PreToolUse
        | Event::PermissionRequest
        | Event::PostToolUse
        | Event::PostToolUseFailure => MatchesOn::ToolName,
        Event::SessionStart
        | Event::PreCompact
        | Event::PostCompact
        | Event::Notification
        | Event::SessionEnd => MatchesOn::Kind,
        Event::UserPromptSubmit | Event::Stop | Event::SubagentStop => MatchesOn::Nothing,
    }
}

/// What an event's matchers are compared with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MatchesOn {
    /// The tool's name, harness9's or Claude Code's.
    ToolName,
    /// A word naming the kind of event (`startup`, `auto`, `permission_prompt`…).
    Kind,
    /// Nothing: every group runs whatever its matcher says.
    Nothing,
}

/// What one firing of an event is about, for the matchers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target<'a> {
    /// A tool call to the tool harness9 names `name`.
    Tool {
        /// harness9's name of the tool (`bash`, `read_file`, `mcp__s__t`).
        name: &'a str,
    },
    /// The kind of a session, compaction or notification event.
    Kind {
        /// `startup`, `resume`, `clear`, `compact`, `manual`, `auto`…
        kind: &'a str,
    },
    /// Nothing to match (prompts, stops).
    Nothing,
}

/// What happens when a hook cannot give an answer (missing, crashed, timed out, printed
/// JSON that does not parse).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnError {
    /// The failure is reported and the call goes on (Claude Code's behaviour).
    Continue,
    /// The hook is a guard: the failure denies the call, with the reason.
    Deny,
}

/// Where a hook was configured.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Origin {
    /// Which kind of file.
    pub kind: OriginKind,
    /// The file.
    pub path: PathBuf,
}

/// The kinds of files hooks come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OriginKind {
    /// `[hooks]` in the user's config.toml.
    UserConfig,
    /// The project's `.harness9/hooks.toml`.
    ProjectToml,
    /// The project's `.claude/settings.json`.
    ClaudeSettings,
    /// The project's `.claude/settings.local.json`.
    ClaudeLocalSettings,
    /// A plugin's hook file (`hooks/hooks.json` or one its `plugin.json` names). Only a
    /// plugin the user trusted as it is now is ever loaded (`crate::plugins`), so its
    /// hooks need no more trust here.
    Plugin,
}

impl OriginKind {
    /// Who must have trusted the file before its hooks run.
    pub fn trust(self) -> TrustNeeded {
        match self {
            OriginKind::UserConfig | OriginKind::Plugin => TrustNeeded::None,
            OriginKind::ProjectToml
            | OriginKind::ClaudeSettings
            | OriginKind::ClaudeLocalSettings => TrustNeeded::Project,
        }
    }
}

/// Whether hooks of an origin run before the user trusted them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrustNeeded {
    /// The user wrote them: they run.
    None,
    /// The repository brought them: they run only once the project's hooks are trusted.
    Project,
}

/// One configured command hook.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hook {
    /// The command line, run by `bash -c` (or `sh -c`).
    pub command: String,
    /// How long it may run.
    pub timeout: Duration,
    /// What its failure means.
    pub on_error: OnError,
    /// Where it was configured.
    pub origin: Origin,
    /// The plugin's folder, for a plugin's hook: `CLAUDE_PLUGIN_ROOT` in its
    /// environment (the shell expands `${CLAUDE_PLUGIN_ROOT}` in the command from there;
    /// the path is never spliced into the command's text).
    pub plugin_root: Option<PathBuf>,
    /// The scripts inside the project its command names, as they were when the session
    /// started ([`HookSet::pin_scripts`]): changed since, the hook does not run.
    pub pinned: Vec<PinnedScript>,
}

/// Hooks under one matcher.
#[derive(Debug, Clone)]
pub struct Group {
    /// Which firings it is for.
    pub matcher: Matcher,
    /// Its hooks, in the order written.
    pub hooks: Vec<Hook>,
}

/// A hook chosen for one firing.
#[derive(Debug, Clone, Copy)]
pub struct Selected<'a> {
    /// The hook.
    pub hook: &'a Hook,
    /// Why its matcher could not be compiled, when it could not: only guards are kept
    /// under such a matcher, and they deny every firing with this reason.
    pub broken: Option<&'a str>,
}

/// Every configured hook, by event.
#[derive(Debug, Clone, Default)]
pub struct HookSet {
    groups: BTreeMap<Event, Vec<Group>>,
}

impl HookSet {
    /// No hooks.
    pub fn new() -> Self {
        HookSet::default()
    }

    /// Adds a group to `event`.
    pub fn push(&mut self, event: Event, group: Group) {
        self.groups.entry(event).or_default().push(group);
    }

    /// Adds every group of `other` after this set's own.
    pub fn extend(&mut self, other: HookSet) {
        for (event, groups) in other.groups {
            self.groups.entry(event).or_default().extend(groups);
        }
    }

    /// Whether no hook is configured at all.
    pub fn is_empty(&self) -> bool {
        self.groups
            .values()
            .all(|g| g.iter().all(|g| g.hooks.is_empty()))
    }

    /// How many hooks are configured for `event`.
    pub fn count(&self, event: Event) -> usize {
        self.groups
            .get(&event)
            .map_or(0, |groups| groups.iter().map(|g| g.hooks.len()).sum())
    }

    /// Every hook of this set as a plugin's: origin [`OriginKind::Plugin`] and
    /// `CLAUDE_PLUGIN_ROOT` set to `root` when it runs.
    pub fn mark_plugin(&mut self, root: &std::path::Path) {
        for group in self.groups.values_mut().flatten() {
            for hook in &mut group.hooks {
                hook.origin.kind = OriginKind::Plugin;
                hook.plugin_root = Some(root.to_path_buf());
            }
        }
    }

    /// Every event with hooks, and its groups, in event order.
    pub fn events(&self) -> impl Iterator<Item = (Event, &[Group])> {
        self.groups.iter().map(|(e, g)| (*e, g.as_slice()))
    }

    /// Every group of `event`, in order.
    pub fn groups(&self, event: Event) -> &[Group] {
        self.groups.get(&event).map_or(&[], Vec::as_slice)
    }

    /// Pins, for every hook but a plugin's, the scripts inside `root` its command names
    /// (see `pins.rs`): from now on a hook whose script changed does not run it.
    pub fn pin_scripts(&mut self, root: &std::path::Path) {
        for groups in self.groups.values_mut() {
            for group in groups {
                for hook in &mut group.hooks {
                    if hook.origin.kind != OriginKind::Plugin {
                        hook.pinned = pins::pin(&hook.command, root);
                    }
                }
            }
        }
    }

    /// Only the hooks whose origin needs no more trust than `trusted` gives.
    pub fn in_force(&self, trusted: ProjectTrust) -> HookSet {
        let mut kept = HookSet::new();
        for (event, groups) in &self.groups {
            for group in groups {
                let hooks: Vec<Hook> = group
                    .hooks
                    .iter()
                    .filter(|h| match (h.origin.kind.trust(), trusted) {
                        (TrustNeeded::None, _) => true,
                        (TrustNeeded::Project, ProjectTrust::Trusted) => true,
                        (TrustNeeded::Project, ProjectTrust::Untrusted) => false,
                    })
                    .cloned()
                    .collect();
                if !hooks.is_empty() {
                    kept.push(
                        *event,
                        Group {
                            matcher: group.matcher.clone(),
                            hooks,
                        },
                    );
                }
            }
        }
        kept
    }

    /// The hooks of `event` whose matcher takes `target`, in configuration order, the
    /// same command line configured twice chosen once (as Claude Code does).
    pub fn select(&self, event: Event, target: Target<'_>) -> Vec<Selected<'_>> {
        let mut chosen: Vec<Selected<'_>> = Vec::new();
        for group in self.groups(event) {
            let takes = match matches_on(event) {
                MatchesOn::Nothing => true,
                MatchesOn::ToolName | MatchesOn::Kind => group.matcher.takes(target),
            };
            if !takes {
                continue;
            }
            for hook in &group.hooks {
                let this = Selected {
                    hook,
                    broken: group.matcher.broken_reason(),
                };
                match chosen.iter_mut().find(|c| c.hook.command == hook.command) {
                    // A guard among the copies makes the one run a guard.
                    Some(same) if hook.on_error == OnError::Deny => {
                        if same.hook.on_error == OnError::Continue {
                            *same = this;
                        }
                    }
                    Some(_) => {}
                    None => chosen.push(this),
                }
            }
        }
        chosen
    }
}

/// Whether the user trusted the project's hooks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectTrust {
    /// They run.
    Trusted,
    /// They are listed as not in force.
    Untrusted,
}
