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

/// A point of the session where hooks run, named as Claude Code names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Event {
    /// A session starts, resumes, is cleared or compacted (matcher: the source).
    SessionStart,
    /// The user submitted a prompt (no matcher).
    UserPromptSubmit,
    /// Before a tool call runs (matcher: the tool name).
    PreToolUse,
    /// An approval question is about to be asked (matcher: the tool name).
    PermissionRequest,
    /// After a tool call succeeded (matcher: the tool name).
    PostToolUse,
    /// After a tool call failed (matcher: the tool name).
    PostToolUseFailure,
    /// The agent finished its answer (no matcher).
    Stop,
    /// A sub-agent finished (no matcher).
    SubagentStop,
    /// Before a compaction (matcher: `manual` or `auto`).
    PreCompact,
    /// After a compaction (matcher: `manual` or `auto`).
    PostCompact,
    /// A notification is shown (matcher: its type).
    Notification,
    /// The session ends (matcher: the reason).
    SessionEnd,
}

impl Event {
    /// Every event, in the order of Claude Code's documentation.
    pub const ALL: [Event; 12] = [
        Event::SessionStart,
        Event::UserPromptSubmit,
        Event::PreToolUse,
        Event::PermissionRequest,
        Event::PostToolUse,
        Event::PostToolUseFailure,
        Event::Stop,
        Event::SubagentStop,
        Event::PreCompact,
        Event::PostCompact,
        Event::Notification,
        Event::SessionEnd,
    ];

    /// Its name in configuration and in `hook_event_name`.
    pub fn name(self) -> &'static str {
        match self {
            Event::SessionStart => "SessionStart",
            Event::UserPromptSubmit => "UserPromptSubmit",
            Event::PreToolUse => "PreToolUse",
            Event::PermissionRequest => "PermissionRequest",
            Event::PostToolUse => "PostToolUse",
            Event::PostToolUseFailure => "PostToolUseFailure",
            Event::Stop => "Stop",
            Event::SubagentStop => "SubagentStop",
            Event::PreCompact => "PreCompact",
            Event::PostCompact => "PostCompact",
            Event::Notification => "Notification",
            Event::SessionEnd => "SessionEnd",
        }
    }

    /// The event named exactly `name` (case matters, as in Claude Code).
    pub fn from_name(name: &str) -> Option<Event> {
        Event::ALL.into_iter().find(|e| e.name() == name)
    }

    /// What its matchers are compared with.
    pub fn matches_on(self) -> MatchesOn {
        match self {
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
}

impl OriginKind {
    /// Who must have trusted the file before its hooks run.
    pub fn trust(self) -> TrustNeeded {
        match self {
            OriginKind::UserConfig => TrustNeeded::None,
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

    /// Every group of `event`, in order.
    pub fn groups(&self, event: Event) -> &[Group] {
        self.groups.get(&event).map_or(&[], Vec::as_slice)
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
            let takes = match event.matches_on() {
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
