//! Trusting the project's hooks by their content. A repository's hook files
//! (`.harness9/hooks.toml`, `.claude/settings*.json`) are untrusted input: their hooks
//! run only once this user trusted them on this machine (`harness9 hooks trust`), and
//! only as they stood then. Each hook has a fingerprint, a SHA-256 of everything that
//! decides what it does — the file kind it is in, its event, its matcher, its command,
//! timeout and `on_error`, and the content of every script the command names inside the
//! project (`$CLAUDE_PROJECT_DIR/…`, `${HARNESS9_PROJECT_DIR}/…`, or a relative path
//! with a `/`, read without following links) — and the trust list
//! (`$HARNESS9_HOME/hooks/trusted.json`, project root → fingerprints) records the
//! fingerprints of exactly the hooks that were shown when the user trusted them. A hook
//! added or changed afterwards (command, matcher, a script it names) has a fingerprint
//! not on the list and is not in force until trusted again; a hook file replaced by a
//! link is not read at all (`load.rs`). The list is changed under its folder's lock
//! ([`crate::private_files::update`]), so two processes trusting at once keep both.
//!
//! It owns the fingerprints, the trust list and which hooks are in force; it must not
//! know how hooks run, the agent or frontends.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use sha2::{Digest as _, Sha256};

use super::load::{load_project, read_capped};
use super::{Event, Group, Hook, HookFileError, HookSet, Matcher, OnError, OriginKind};
use crate::private_files::{self, Links, Privacy, UpdateIoError, UpdateMode};
use crate::protocol::{
    HookEntry, HookListing, HookOrigin, HookRole, HookStanding, InForceBecause, NotInForceBecause,
};

/// The trust list, relative to `$HARNESS9_HOME`.
pub const TRUST_FILE: &str = "hooks/trusted.json";

/// Why the trust list could not be read or written.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// Reading, locking or writing failed.
    #[error(transparent)]
    Io(#[from] UpdateIoError),
    /// The list is not the JSON harness9 writes.
    #[error("{}: does not parse ({message})", path.display())]
    Parse {
        /// The file.
        path: PathBuf,
        /// The parser's message.
        message: String,
    },
}

/// One project hook with its fingerprint.
#[derive(Debug, Clone)]
pub struct ProjectHook {
    /// Its event.
    pub event: Event,
    /// Its group's matcher.
    pub matcher: Matcher,
    /// The hook.
    pub hook: Hook,
    /// What trust records of it.
    pub fingerprint: String,
}

/// The project's hooks and what this user trusted of them.
#[derive(Debug, Clone, Default)]
pub struct ProjectHooks {
    /// The project root as resolved: the trust list's key.
    pub root: PathBuf,
    /// Every hook the project's files configure, in file order.
    pub hooks: Vec<ProjectHook>,
    /// What in the files could not be used (and a trust list that cannot be read).
    pub problems: Vec<String>,
    /// The fingerprints trusted for this project.
    trusted: BTreeSet<String>,
}

impl ProjectHooks {
    /// Reads the project's hook files beneath `project_root` and this user's trust list
    /// in `home` (`$HARNESS9_HOME`). A trust list that cannot be read trusts nothing, and
    /// says so in [`ProjectHooks::problems`].
    pub fn load(project_root: &Path, home: &Path) -> ProjectHooks {
        let (set, file_problems) = load_project(project_root);
        let root = std::fs::canonicalize(project_root).unwrap_or_else(|_| project_root.into());
        let mut problems: Vec<String> =
            file_problems.iter().map(HookFileError::to_string).collect();
        let mut hooks = Vec::new();
        for event in Event::ALL {
            for group in set.groups(event) {
                for hook in &group.hooks {
                    hooks.push(ProjectHook {
                        event,
                        matcher: group.matcher.clone(),
                        fingerprint: fingerprint(event, &group.matcher, hook, &root),
                        hook: hook.clone(),
                    });
                }
            }
        }
        // No hook, nothing to look up: start-up without project hooks reads no more.
        let trusted = match read_list(&home.join(TRUST_FILE)) {
            _ if hooks.is_empty() => BTreeSet::new(),
            Ok(mut list) => list.remove(&key(&root)).unwrap_or_default(),
            Err(e) => {
                problems.push(format!("{e}; no project hook is in force"));
                BTreeSet::new()
            }
        };
        ProjectHooks {
            root,
            hooks,
            problems,
            trusted,
        }
    }

    /// Whether `hook` runs: its fingerprint is on the trust list.
    pub fn is_trusted(&self, hook: &ProjectHook) -> bool {
        self.trusted.contains(&hook.fingerprint)
    }

    /// The project's hooks in force: the trusted ones, each as its own group (the same
    /// order, so selection is unchanged).
    pub fn in_force(&self) -> HookSet {
        let mut set = HookSet::new();
        for hook in self.hooks.iter().filter(|h| self.is_trusted(h)) {
            set.push(
                hook.event,
                Group {
                    matcher: hook.matcher.clone(),
                    hooks: vec![hook.hook.clone()],
                },
            );
        }
        set
    }

    /// How many of the project's hooks are not in force.
    pub fn not_in_force(&self) -> usize {
        self.hooks.iter().filter(|h| !self.is_trusted(h)).count()
    }

    /// Every hook, `user`'s (config.toml, always in force) first, then the project's
    /// with their standing, and what could not be used.
    pub fn listing(&self, user: &HookSet) -> HookListing {
        let mut hooks = Vec::new();
        for event in Event::ALL {
            for group in user.groups(event) {
                for hook in &group.hooks {
                    let because = match hook.origin.kind {
                        OriginKind::Plugin => InForceBecause::Plugin,
                        _ => InForceBecause::UserConfig,
                    };
                    hooks.push(entry(
                        event,
                        &group.matcher,
                        hook,
                        HookStanding::InForce(because),
                    ));
                }
            }
        }
        for hook in &self.hooks {
            let standing = if self.is_trusted(hook) {
                HookStanding::InForce(InForceBecause::Trusted)
            } else if self.trusted.is_empty() {
                HookStanding::NotInForce(NotInForceBecause::NotTrusted)
            } else {
                HookStanding::NotInForce(NotInForceBecause::ChangedSinceTrust)
            };
            hooks.push(entry(hook.event, &hook.matcher, &hook.hook, standing));
        }
        HookListing {
            hooks,
            problems: self.problems.clone(),
        }
    }
}

/// Records the hooks of `project` — exactly those loaded, which the caller has shown —
/// as this user's trusted hooks for the project (replacing what was trusted before, so a
/// hook removed and later added back needs trusting again). Returns how many.
pub fn trust(home: &Path, project: &ProjectHooks) -> Result<usize, TrustError> {
    let prints: BTreeSet<String> = project
        .hooks
        .iter()
        .map(|h| h.fingerprint.clone())
        .collect();
    let count = prints.len();
    update_list(home, |list| {
        if prints.is_empty() {
            list.remove(&key(&project.root));
        } else {
            list.insert(key(&project.root), prints);
        }
    })?;
    Ok(count)
}

/// Forgets every hook trusted for the project at `root`; whether there were any.
pub fn untrust(home: &Path, root: &Path) -> Result<bool, TrustError> {
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.into());
    let mut had = false;
    update_list(home, |list| had = list.remove(&key(&root)).is_some())?;
    Ok(had)
}

type TrustList = BTreeMap<String, BTreeSet<String>>;

fn key(root: &Path) -> String {
    root.to_string_lossy().into_owned()
}

fn parse_list(path: &Path, text: &str) -> Result<TrustList, TrustError> {
    serde_json::from_str(text).map_err(|e| TrustError::Parse {
        path: path.to_path_buf(),
        message: e.to_string(),
    })
}

fn read_list(path: &Path) -> Result<TrustList, TrustError> {
    match std::fs::read_to_string(path) {
        Ok(text) => parse_list(path, &text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(TrustList::new()),
        Err(source) => Err(TrustError::Io(UpdateIoError {
            action: "cannot read",
            path: path.to_path_buf(),
            source,
        })),
    }
}

/// Changes the list under its folder's lock (read, change, write, rename).
fn update_list(home: &Path, change: impl FnOnce(&mut TrustList)) -> Result<(), TrustError> {
    let path = home.join(TRUST_FILE);
    let mode = UpdateMode {
        links: Links::Follow,
        privacy: Privacy::Private,
    };
    private_files::update(&path, mode, |old| {
        let mut list = match old {
            Some(text) => parse_list(&path, &text)?,
            None => TrustList::new(),
        };
        change(&mut list);
        let text = serde_json::to_string_pretty(&list).map_err(|e| TrustError::Parse {
            path: path.clone(),
            message: e.to_string(),
        })?;
        Ok((Some(text), ()))
    })
}

fn entry(event: Event, matcher: &Matcher, hook: &Hook, standing: HookStanding) -> HookEntry {
    HookEntry {
        event: event.name().to_string(),
        matcher: matcher_text(matcher),
        command: hook.command.clone(),
        origin: hook.origin.path.clone(),
        origin_kind: match hook.origin.kind {
            OriginKind::UserConfig => HookOrigin::UserConfig,
            OriginKind::ProjectToml => HookOrigin::ProjectToml,
            OriginKind::ClaudeSettings => HookOrigin::ClaudeSettings,
            OriginKind::ClaudeLocalSettings => HookOrigin::ClaudeLocalSettings,
            OriginKind::Plugin => HookOrigin::Plugin,
        },
        role: match hook.on_error {
            OnError::Deny => HookRole::Guard,
            OnError::Continue => HookRole::Plain,
        },
        standing,
    }
}

/// A matcher as text: what it takes, whatever spelling chose it (`*`, `Edit|Write`, the
/// pattern, or a broken matcher's text).
pub fn matcher_text(matcher: &Matcher) -> String {
    match matcher {
        Matcher::Any => "*".to_string(),
        Matcher::Names { names } => names.join("|"),
        Matcher::Pattern { regex } => regex.as_str().to_string(),
        Matcher::Broken { text, .. } => text.clone(),
    }
}

/// The hook's fingerprint (see the module's comment).
fn fingerprint(event: Event, matcher: &Matcher, hook: &Hook, root: &Path) -> String {
    let kind = match hook.origin.kind {
        OriginKind::UserConfig => "user",
        OriginKind::ProjectToml => "hooks.toml",
        OriginKind::ClaudeSettings => "settings.json",
        OriginKind::ClaudeLocalSettings => "settings.local.json",
        OriginKind::Plugin => "plugin",
    };
    let matcher = match matcher {
        Matcher::Broken { text, reason } => format!("broken:{text}:{reason}"),
        other => format!("ok:{}", matcher_text(other)),
    };
    let on_error = match hook.on_error {
        OnError::Deny => "deny",
        OnError::Continue => "continue",
    };
    let scripts: Vec<serde_json::Value> = named_scripts(&hook.command, root)
        .into_iter()
        .map(|path| {
            let content = match read_capped(&path) {
                Ok(Some(text)) => format!("sha256:{}", hex(&Sha256::digest(text.as_bytes()))),
                Ok(None) => "missing".to_string(),
                Err(problem) => format!("unreadable:{problem}"),
            };
            serde_json::json!([path.to_string_lossy(), content])
        })
        .collect();
    // JSON keeps the fields apart: no two different hooks serialize alike.
    let canonical = serde_json::json!({
        "file": kind,
        "event": event.name(),
        "matcher": matcher,
        "command": hook.command,
        "timeout_ms": hook.timeout.as_millis().to_string(),
        "on_error": on_error,
        "scripts": scripts,
    });
    hex(&Sha256::digest(canonical.to_string().as_bytes()))
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The files inside the project that `command` names: words starting with the project
/// folder's variable (`$CLAUDE_PROJECT_DIR`, `${HARNESS9_PROJECT_DIR}`…, quotes
/// dropped) or relative paths with a `/` (anchored at the project root, never at the
/// folder harness9 was started in, so the fingerprint is the same from every folder).
/// Paths with `..` are left out: they may leave the project, whose files are the user's.
pub(super) fn named_scripts(command: &str, root: &Path) -> Vec<PathBuf> {
    const VARIABLES: [&str; 4] = [
        "${CLAUDE_PROJECT_DIR}",
        "$CLAUDE_PROJECT_DIR",
        "${HARNESS9_PROJECT_DIR}",
        "$HARNESS9_PROJECT_DIR",
    ];
    let mut found = BTreeSet::new();
    // A file a hook writes its output to (`>> "$CLAUDE_PROJECT_DIR/log"`) is data, not
    // a script: it changes every time the hook runs.
    let mut output_target_next = false;
    for word in command.split(|c: char| c.is_whitespace() || matches!(c, ';' | '&' | '|')) {
        if word.is_empty() {
            continue;
        }
        if std::mem::take(&mut output_target_next) {
            continue;
        }
        if let Some(operator) = output_redirection(word) {
            output_target_next = operator == word.len();
            continue;
        }
        let word: String = word.chars().filter(|c| !matches!(c, '"' | '\'')).collect();
        let relative = match VARIABLES.iter().find_map(|v| word.strip_prefix(v)) {
            Some(rest) => rest.trim_start_matches('/').to_string(),
            None if word.contains('/')
                && !word.starts_with('/')
                && !word.starts_with('~')
                && !word.starts_with('-')
                && !word.starts_with('$') =>
            {
                word.trim_start_matches("./").to_string()
            }
            None => continue,
        };
        let path = Path::new(&relative);
        if relative.is_empty()
            || path
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            continue;
        }
        found.insert(root.join(path));
    }
    found.into_iter().collect()
}

/// The length of the output redirection `word` starts with (`>`, `>>`, `2>`, `>|`…),
/// if it starts with one.
fn output_redirection(word: &str) -> Option<usize> {
    let digits = word.len() - word.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    let rest = &word[digits..];
    let operator = if rest.starts_with(">>") || rest.starts_with(">|") {
        2
    } else if rest.starts_with('>') {
        1
    } else {
        return None;
    };
    Some(digits + operator)
}

#[cfg(test)]
#[path = "trust_tests.rs"]
mod tests;
