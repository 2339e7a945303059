//! Reading hook configuration: the `hooks` block of a Claude Code settings file (JSON)
//! and the same shape in TOML (`[hooks]` in config.toml, `.harness9/hooks.toml`):
//! event → `[{ matcher, hooks: [{ type = "command", command, timeout }] }]`, plus
//! harness9's own `on_error = "deny"` on a hook (a guard). Every entry that cannot be
//! used is reported as a [`HookFileError`] naming the file and the reason, never
//! silently dropped; entries that can be used still load. A guard under a matcher that
//! does not compile is kept (it denies every firing); other hooks under it are not.
//!
//! It knows the formats; it must not know where files are or how hooks run.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use super::matcher::Matcher;
use super::{DEFAULT_TIMEOUT, Event, Group, Hook, HookSet, MAX_TIMEOUT, OnError, Origin};

/// The most hooks one file may configure.
pub const MAX_HOOKS_PER_FILE: usize = 256;
/// The longest command line accepted, in bytes.
pub const MAX_COMMAND_BYTES: usize = 16 * 1024;

/// Something in a hook file that could not be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{}: {problem}", path.display())]
pub struct HookFileError {
    /// The file.
    pub path: PathBuf,
    /// What is wrong.
    pub problem: Problem,
}

/// What is wrong with a hook file or an entry of it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum Problem {
    /// The file could not be read.
    #[error("cannot be read: {reason}")]
    Unreadable {
        /// Why.
        reason: String,
    },
    /// The file is larger than the cap.
    #[error("is larger than {limit} bytes; no hook in it was loaded")]
    TooLarge {
        /// The cap.
        limit: usize,
    },
    /// The file does not parse, or its `hooks` block has the wrong shape.
    #[error("does not parse ({reason}); no hook in it was loaded")]
    Parse {
        /// The parser's message.
        reason: String,
    },
    /// An event name harness9 does not know.
    #[error("`{event}` is not a hook event harness9 knows; its hooks were not loaded")]
    UnknownEvent {
        /// The name as written.
        event: String,
    },
    /// A hook type other than `command`.
    #[error(
        "{event}: hooks of type `{kind}` are not supported (only `command`); it was not loaded"
    )]
    UnsupportedType {
        /// The event.
        event: &'static str,
        /// The type as written.
        kind: String,
    },
    /// A command hook without a command.
    #[error("{event}: a command hook has no `command`; it was not loaded")]
    MissingCommand {
        /// The event.
        event: &'static str,
    },
    /// A command longer than [`MAX_COMMAND_BYTES`].
    #[error(
        "{event}: a command is {len} bytes long (at most {MAX_COMMAND_BYTES}); it was not loaded"
    )]
    CommandTooLong {
        /// The event.
        event: &'static str,
        /// Its length.
        len: usize,
    },
    /// A matcher that does not compile.
    #[error(
        "{event}: {reason}; guards under it deny every call, other hooks under it were not \
         loaded"
    )]
    BadMatcher {
        /// The event.
        event: &'static str,
        /// Why.
        reason: String,
    },
    /// A timeout that is not a positive number of seconds up to an hour.
    #[error(
        "{event}: `timeout` must be a number of seconds above 0 and at most 3600; {used} s is used"
    )]
    BadTimeout {
        /// The event.
        event: &'static str,
        /// The timeout used instead.
        used: u64,
    },
    /// An `on_error` value other than `deny` or `continue`.
    #[error(
        "{event}: `on_error = \"{value}\"` is not `deny` or `continue`; the hook is treated as a guard"
    )]
    BadOnError {
        /// The event.
        event: &'static str,
        /// The value as written.
        value: String,
    },
    /// More hooks than [`MAX_HOOKS_PER_FILE`].
    #[error("configures more than {limit} hooks; the rest were not loaded")]
    TooMany {
        /// The cap.
        limit: usize,
    },
}

/// A settings file: only its `hooks` key matters here.
#[derive(Debug, Deserialize)]
struct Settings {
    #[serde(default)]
    hooks: Option<RawHooks>,
}

type RawHooks = BTreeMap<String, Vec<RawGroup>>;

#[derive(Debug, Deserialize)]
struct RawGroup {
    #[serde(default)]
    matcher: Option<String>,
    #[serde(default)]
    hooks: Vec<RawHook>,
}

#[derive(Debug, Deserialize)]
struct RawHook {
    #[serde(rename = "type")]
    kind: String,
    #[serde(default)]
    command: Option<String>,
    #[serde(default)]
    timeout: Option<f64>,
    #[serde(default)]
    on_error: Option<String>,
}

/// The hooks of a Claude Code settings file's text (`{"hooks": {...}, ...}`; every other
/// key is ignored), and what could not be used.
pub fn parse_json_settings(text: &str, origin: &Origin) -> (HookSet, Vec<HookFileError>) {
    match serde_json::from_str::<Settings>(text) {
        Ok(settings) => build(settings.hooks.unwrap_or_default(), origin),
        Err(e) => parse_failed(origin, e.to_string()),
    }
}

/// The hooks of a TOML file whose top level is the hooks block (`.harness9/hooks.toml`:
/// `[[PreToolUse]]` …) or holds it under `[hooks]`.
pub fn parse_toml_text(text: &str, origin: &Origin) -> (HookSet, Vec<HookFileError>) {
    match toml::from_str::<toml::Table>(text) {
        Ok(table) => {
            let block = match table.get("hooks") {
                Some(toml::Value::Table(inner)) if table.len() == 1 => inner.clone(),
                _ => table,
            };
            parse_toml_value(toml::Value::Table(block), origin)
        }
        Err(e) => parse_failed(origin, e.to_string()),
    }
}

/// The hooks of an already parsed TOML hooks block (config.toml's `[hooks]`).
pub fn parse_toml_value(value: toml::Value, origin: &Origin) -> (HookSet, Vec<HookFileError>) {
    match RawHooks::deserialize(value) {
        Ok(raw) => build(raw, origin),
        Err(e) => parse_failed(origin, e.to_string()),
    }
}

fn parse_failed(origin: &Origin, reason: String) -> (HookSet, Vec<HookFileError>) {
    (
        HookSet::new(),
        vec![error(&origin.path, Problem::Parse { reason })],
    )
}

fn error(path: &Path, problem: Problem) -> HookFileError {
    HookFileError {
        path: path.to_path_buf(),
        problem,
    }
}

fn build(raw: RawHooks, origin: &Origin) -> (HookSet, Vec<HookFileError>) {
    let mut set = HookSet::new();
    let mut problems = Vec::new();
    let mut loaded = 0usize;
    let mut too_many = false;
    for (name, groups) in raw {
        let Some(event) = Event::from_name(&name) else {
            problems.push(error(&origin.path, Problem::UnknownEvent { event: name }));
            continue;
        };
        for raw_group in groups {
            let (matcher, broken) = match Matcher::compile(raw_group.matcher.as_deref()) {
                Ok(m) => (m, false),
                Err(e) => {
                    problems.push(error(
                        &origin.path,
                        Problem::BadMatcher {
                            event: event.name(),
                            reason: e.to_string(),
                        },
                    ));
                    let text = raw_group.matcher.clone().unwrap_or_default();
                    let text: String = text.chars().take(80).collect();
                    (
                        Matcher::Broken {
                            text,
                            reason: e.to_string(),
                        },
                        true,
                    )
                }
            };
            let mut hooks = Vec::new();
            for raw_hook in raw_group.hooks {
                let Some(hook) = hook(raw_hook, event, origin, &mut problems) else {
                    continue;
                };
                if broken && hook.on_error != OnError::Deny {
                    continue;
                }
                if loaded == MAX_HOOKS_PER_FILE {
                    too_many = true;
                    break;
                }
                loaded += 1;
                hooks.push(hook);
            }
            if !hooks.is_empty() {
                set.push(event, Group { matcher, hooks });
            }
        }
    }
    if too_many {
        problems.push(error(
            &origin.path,
            Problem::TooMany {
                limit: MAX_HOOKS_PER_FILE,
            },
        ));
    }
    (set, problems)
}

fn hook(
    raw: RawHook,
    event: Event,
    origin: &Origin,
    problems: &mut Vec<HookFileError>,
) -> Option<Hook> {
    let name = event.name();
    if raw.kind != "command" {
        problems.push(error(
            &origin.path,
            Problem::UnsupportedType {
                event: name,
                kind: raw.kind.chars().take(40).collect(),
            },
        ));
        return None;
    }
    let Some(command) = raw.command.filter(|c| !c.trim().is_empty()) else {
        problems.push(error(&origin.path, Problem::MissingCommand { event: name }));
        return None;
    };
    if command.len() > MAX_COMMAND_BYTES {
        problems.push(error(
            &origin.path,
            Problem::CommandTooLong {
                event: name,
                len: command.len(),
            },
        ));
        return None;
    }
    let timeout = match raw.timeout {
        None => DEFAULT_TIMEOUT,
        Some(secs) if secs.is_finite() && secs > 0.0 && secs <= MAX_TIMEOUT.as_secs_f64() => {
            Duration::from_secs_f64(secs)
        }
        Some(_) => {
            problems.push(error(
                &origin.path,
                Problem::BadTimeout {
                    event: name,
                    used: DEFAULT_TIMEOUT.as_secs(),
                },
            ));
            DEFAULT_TIMEOUT
        }
    };
    let on_error = match raw.on_error.as_deref() {
        None | Some("continue") => OnError::Continue,
        Some("deny") => OnError::Deny,
        Some(other) => {
            problems.push(error(
                &origin.path,
                Problem::BadOnError {
                    event: name,
                    value: other.chars().take(40).collect(),
                },
            ));
            OnError::Deny
        }
    };
    Some(Hook {
        command,
        timeout,
        on_error,
        origin: origin.clone(),
        plugin_root: None,
        pinned: Vec::new(),
    })
}
