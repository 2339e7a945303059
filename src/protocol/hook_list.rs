//! What `/hooks` and `harness9 hooks list` show, as plain data ([`HookListing`]): every
//! configured hook with its event, matcher, command, the file it came from, whether it
//! is a guard, and whether it is in force (and why, or why not), plus what in the hook
//! files could not be used. The words every frontend uses for it are
//! [`describe_hooks`]'s, so the TUI, the REPL, `-p` and the subcommand say the same.
//!
//! It owns the types and the words; it must not know how hooks are read, trusted or run,
//! or how a listing is drawn.

use std::path::PathBuf;

use serde::Serialize;

use super::hooks::HookOrigin;

/// Everything `/hooks` shows ([`super::Event::HookList`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct HookListing {
    /// Every configured hook: config.toml's first, then the project's, each in file order.
    pub hooks: Vec<HookEntry>,
    /// What in the hook files could not be used, one line each (file and reason).
    pub problems: Vec<String>,
}

impl HookListing {
    /// How many of the project's hooks are not in force.
    pub fn not_in_force(&self) -> usize {
        self.hooks
            .iter()
            .filter(|h| matches!(h.standing, HookStanding::NotInForce { .. }))
            .count()
    }
}

/// One configured hook in a [`HookListing`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HookEntry {
    /// The event's name (`PreToolUse`, `SessionStart`…).
    pub event: String,
    /// The matcher as read (`*` for every firing).
    pub matcher: String,
    /// The command line.
    pub command: String,
    /// The file it was configured in.
    pub origin: PathBuf,
    /// Which kind of file that is.
    pub origin_kind: HookOrigin,
    /// Whether its failure denies.
    pub role: HookRole,
    /// Whether it runs.
    pub standing: HookStanding,
}

/// Whether a hook that cannot answer denies.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum HookRole {
    /// `on_error = "deny"`: missing, crashed, timed out or bad JSON denies.
    Guard,
    /// Its failure is reported and does not block.
    Plain,
}

/// Whether a listed hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(tag = "state", content = "because", rename_all = "snake_case")]
pub enum HookStanding {
    /// It runs.
    InForce(InForceBecause),
    /// It does not run.
    NotInForce(NotInForceBecause),
}

/// Why a hook is in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InForceBecause {
    /// The user wrote it in config.toml.
    UserConfig,
    /// The project's hook, exactly as the user trusted it.
    Trusted,
    /// A plugin's hook: the plugin is trusted as its files are now.
    Plugin,
}

/// Why a project hook is not in force.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NotInForceBecause {
    /// The project's hooks were never trusted on this machine.
    NotTrusted,
    /// The project's hooks were trusted, but not this one as it stands now: it is new,
    /// or it (or a script it names in the project) changed since.
    ChangedSinceTrust,
}

impl HookStanding {
    /// The words for it.
    pub fn describe(self) -> &'static str {
        match self {
            HookStanding::InForce(InForceBecause::UserConfig) => "in force (config.toml)",
            HookStanding::InForce(InForceBecause::Trusted) => "in force (trusted)",
            HookStanding::InForce(InForceBecause::Plugin) => "in force (trusted plugin)",
            HookStanding::NotInForce(NotInForceBecause::NotTrusted) => {
                "NOT in force: the project's hooks are not trusted"
            }
            HookStanding::NotInForce(NotInForceBecause::ChangedSinceTrust) => {
                "NOT in force: new or changed since trusted"
            }
        }
    }
}

/// One line of [`describe_hooks`], with what it is (for frontends that style it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookLine {
    /// What the line shows.
    pub kind: HookLineKind,
    /// The words.
    pub text: String,
}

/// What a [`HookLine`] shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookLineKind {
    /// An event's heading, or "No hooks configured.".
    Heading,
    /// A hook, with its standing.
    Hook(HookStanding),
    /// The file the hook above came from.
    Origin,
    /// Something in a hook file that could not be used.
    Problem,
    /// How many are not in force, and the command that trusts them.
    Summary,
}

/// The command that trusts the project's hooks as they stand.
pub const TRUST_COMMAND: &str = "harness9 hooks trust";

/// The listing in lines of text, grouped by event (in the order of [`HookListing::hooks`]'
/// first appearance of each event): each hook's matcher, role, standing, command and
/// file. Everything here came from files a repository may have written: the caller
/// neutralizes control characters before writing it to a terminal.
pub fn describe_hooks(listing: &HookListing) -> Vec<HookLine> {
    let line = |kind: HookLineKind, text: String| HookLine { kind, text };
    let mut lines = Vec::new();
    if listing.hooks.is_empty() {
        lines.push(line(
            HookLineKind::Heading,
            "No hooks configured.".to_string(),
        ));
    }
    let mut events: Vec<&str> = Vec::new();
    for hook in &listing.hooks {
        if !events.contains(&hook.event.as_str()) {
            events.push(&hook.event);
        }
    }
    for event in events {
        lines.push(line(HookLineKind::Heading, format!("{event}:")));
        for hook in listing.hooks.iter().filter(|h| h.event == event) {
            let role = match hook.role {
                HookRole::Guard => "guard",
                HookRole::Plain => "hook",
            };
            lines.push(line(
                HookLineKind::Hook(hook.standing),
                format!(
                    "  [{}] {role} matcher {}: {}",
                    hook.standing.describe(),
                    hook.matcher,
                    one_line(&hook.command)
                ),
            ));
            lines.push(line(
                HookLineKind::Origin,
                format!("      from {}", hook.origin.display()),
            ));
        }
    }
    for problem in &listing.problems {
        lines.push(line(HookLineKind::Problem, format!("problem: {problem}")));
    }
    let waiting = listing.not_in_force();
    if waiting > 0 {
        lines.push(line(
            HookLineKind::Summary,
            format!(
                "{waiting} project hook{} not in force; `{TRUST_COMMAND}` shows and trusts them.",
                if waiting == 1 { " is" } else { "s are" }
            ),
        ));
    }
    lines
}

/// A command on one line: line breaks shown as `⏎`, at most 200 characters.
fn one_line(command: &str) -> String {
    let flat: String = command
        .chars()
        .map(|c| if c == '\n' || c == '\r' { '⏎' } else { c })
        .collect();
    if flat.chars().count() > 200 {
        let cut: String = flat.chars().take(199).collect();
        format!("{cut}…")
    } else {
        flat
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(event: &str, standing: HookStanding) -> HookEntry {
        HookEntry {
            event: event.into(),
            matcher: "Bash".into(),
            command: "guard.sh\nrm".into(),
            origin: PathBuf::from("/p/.claude/settings.json"),
            origin_kind: HookOrigin::ClaudeSettings,
            role: HookRole::Guard,
            standing,
        }
    }

    #[test]
    fn hooks_are_grouped_by_event_and_the_untrusted_counted() {
        let listing = HookListing {
            hooks: vec![
                entry("PreToolUse", HookStanding::InForce(InForceBecause::Trusted)),
                entry(
                    "Stop",
                    HookStanding::NotInForce(NotInForceBecause::NotTrusted),
                ),
                entry(
                    "PreToolUse",
                    HookStanding::NotInForce(NotInForceBecause::ChangedSinceTrust),
                ),
            ],
            problems: vec!["/p/x: bad".into()],
        };
        let lines: Vec<String> = describe_hooks(&listing)
            .into_iter()
            .map(|l| l.text)
            .collect();
        assert_eq!(lines[0], "PreToolUse:");
        assert_eq!(
            lines[1],
            "  [in force (trusted)] guard matcher Bash: guard.sh⏎rm"
        );
        assert_eq!(
            lines[3],
            "  [NOT in force: new or changed since trusted] guard matcher Bash: guard.sh⏎rm"
        );
        assert_eq!(lines[5], "Stop:");
        assert_eq!(lines[8], "problem: /p/x: bad");
        assert_eq!(
            lines[9],
            "2 project hooks are not in force; `harness9 hooks trust` shows and trusts them."
        );
        assert_eq!(
            describe_hooks(&HookListing::default())[0].text,
            "No hooks configured."
        );
    }
}
