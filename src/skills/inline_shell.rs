//! Inline shell in skill bodies: `` !`command` `` is replaced by the command's output
//! when the skill is invoked. Only skills from local roots (flag, project, user) may run
//! commands, and only when the caller says the approval mode allows commands; otherwise
//! each command is replaced by a short notice. A command that fails (non-zero exit,
//! timeout, cannot start) aborts the invocation with an error naming it.
//!
//! This module owns finding those commands and turning their results into text; the
//! process supervisor ([`crate::exec`]) runs them. It must not know about the approval
//! policy's details, the agent loop or terminals: callers pass a [`Permission`].

use std::path::Path;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::exec::{
    self, Capture, Confinement, EnvChange, Exit, Leftovers, Output, Program, Prompts, Request,
    Sink, Stdin,
};

/// The most output kept from one command, in bytes.
pub const MAX_OUTPUT_BYTES: usize = 16 * 1024;
/// How long one command may run.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// Whether inline commands may run for this invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Permission {
    /// Run them.
    Run,
    /// Run each one the gate lets through (the session's permission rules); replace
    /// the others by a notice giving the gate's reason.
    Checked(CommandGate),
    /// Do not run them; replace each by a notice giving this reason.
    Refuse(String),
}

/// Judges one inline command line before it runs: `Ok` runs it, `Err(reason)` does
/// not. Built by the agent from its approval policy; this module only calls it.
#[derive(Clone)]
pub struct CommandGate(std::sync::Arc<Judge>);

/// What a [`CommandGate`] calls: `Ok` runs the command, `Err(reason)` does not.
type Judge = dyn Fn(&str) -> Result<(), String> + Send + Sync;

impl CommandGate {
    /// A gate from a judging function.
    pub fn new(judge: impl Fn(&str) -> Result<(), String> + Send + Sync + 'static) -> Self {
        CommandGate(std::sync::Arc::new(judge))
    }

    /// Whether `command` may run, or why not.
    pub fn check(&self, command: &str) -> Result<(), String> {
        (self.0)(command)
    }
}

impl std::fmt::Debug for CommandGate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CommandGate")
    }
}

impl PartialEq for CommandGate {
    fn eq(&self, other: &Self) -> bool {
        std::sync::Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for CommandGate {}

/// The permission for one skill: `mode` (what the approval mode allows) narrowed by
/// where the skill comes from — skills from remote roots never run commands.
pub fn permission_for(skill: &crate::skills::Skill, mode: &Permission) -> Permission {
    use crate::skills::RootKind;
    match skill.root.kind {
        RootKind::Flag | RootKind::Project | RootKind::User | RootKind::Plugin => mode.clone(),
        RootKind::Remote => {
            Permission::Refuse("skills from remote roots never run commands".into())
        }
    }
}

/// Why an invocation was aborted.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum InlineShellError {
    /// The command ran and failed.
    #[error("inline command `{command}` in skill `{skill}` failed ({status}){}", detail(.output))]
    Failed {
        /// The skill.
        skill: String,
        /// The command.
        command: String,
        /// Exit status or signal, in words.
        status: String,
        /// What it printed (capped).
        output: String,
    },
    /// The command could not be started.
    #[error("inline command `{command}` in skill `{skill}` could not start: {reason}")]
    Spawn {
        /// The skill.
        skill: String,
        /// The command.
        command: String,
        /// The OS error.
        reason: String,
    },
    /// The command ran longer than [`TIMEOUT`].
    #[error("inline command `{command}` in skill `{skill}` timed out after {} s", TIMEOUT.as_secs())]
    Timeout {
        /// The skill.
        skill: String,
        /// The command.
        command: String,
    },
    /// The user interrupted.
    #[error("interrupted")]
    Interrupted,
}

fn detail(output: &str) -> String {
    let output = output.trim();
    if output.is_empty() {
        String::new()
    } else {
        format!(": {output}")
    }
}

/// One `` !`command` `` found in a body: byte range and the command.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Site {
    start: usize,
    end: usize,
    command: String,
}

/// Finds `` !`command` `` occurrences: a `!` right before a backtick-quoted span on
/// one line, not preceded by a letter, digit or another backtick (so prose like
/// ``Hello!`x` `` and inline code are left alone).
fn sites(body: &str) -> Vec<Site> {
    let bytes = body.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i + 1 < bytes.len() {
        let preceded_ok = i == 0 || !(bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'`');
        if bytes[i] == b'!' && bytes[i + 1] == b'`' && preceded_ok {
            let rest = &body[i + 2..];
            if let Some(close) = rest.find(['`', '\n'])
                && rest.as_bytes()[close] == b'`'
                && !rest[..close].trim().is_empty()
            {
                let end = i + 2 + close + 1;
                out.push(Site {
                    start: i,
                    end,
                    command: rest[..close].to_string(),
                });
                i = end;
                continue;
            }
        }
        i += 1;
    }
    out
}

/// `body` with every inline command replaced by one placeholder character that is not
/// white space: the text as its author wrote it, for finding `@path` mentions. A
/// command's output is never read for mentions (a `git log` line holding
/// `@~/.ssh/id_rsa` must not become one), and the placeholder keeps whatever followed
/// a command from looking as if it started a word.
pub fn without_commands(body: &str) -> String {
    let mut out = String::with_capacity(body.len());
    let mut last = 0;
    for site in sites(body) {
        out.push_str(&body[last..site.start]);
        out.push('\u{FFFC}');
        last = site.end;
    }
    out.push_str(&body[last..]);
    out
}

/// True when `body` holds at least one inline command.
pub fn has_inline_commands(body: &str) -> bool {
    !sites(body).is_empty()
}

/// Replaces every inline command in `body` by its output (or a notice).
pub async fn expand(
    body: &str,
    skill: &str,
    skill_dir: &Path,
    workdir: &Path,
    permission: &Permission,
    cancel: &CancellationToken,
) -> Result<String, InlineShellError> {
    let sites = sites(body);
    if sites.is_empty() {
        return Ok(body.to_string());
    }
    let mut out = String::with_capacity(body.len());
    let mut last = 0;
    for site in sites {
        out.push_str(&body[last..site.start]);
        let verdict = match permission {
            Permission::Refuse(reason) => Err(reason.clone()),
            Permission::Checked(gate) => gate.check(&site.command),
            Permission::Run => Ok(()),
        };
        match verdict {
            Err(reason) => {
                out.push_str(&format!(
                    "[inline command `{}` not run: {reason}]",
                    site.command
                ));
            }
            Ok(()) => {
                let output = run(&site.command, skill, skill_dir, workdir, cancel).await?;
                out.push_str(output.trim_end_matches('\n'));
            }
        }
        last = site.end;
    }
    out.push_str(&body[last..]);
    Ok(out)
}

async fn run(
    command: &str,
    skill: &str,
    skill_dir: &Path,
    workdir: &Path,
    cancel: &CancellationToken,
) -> Result<String, InlineShellError> {
    let head = |max_bytes| Sink {
        capture: Capture::Head { max_bytes },
        live: None,
    };
    let request = Request {
        program: Program::Bash {
            line: command.to_string(),
        },
        cwd: workdir.to_path_buf(),
        prompts: Prompts::AsInherited,
        env: vec![
            EnvChange::set("SKILL_DIR", skill_dir),
            EnvChange::set("SKILL_NAME", skill),
        ],
        stdin: Stdin::Null,
        output: Output::Split {
            stdout: head(MAX_OUTPUT_BYTES * 4),
            stderr: head(MAX_OUTPUT_BYTES),
        },
        timeout: TIMEOUT,
        leftovers: Leftovers::Leave,
        confinement: Confinement::SessionSandbox,
    };
    let finished = exec::run(request, cancel)
        .await
        .map_err(|e| InlineShellError::Spawn {
            skill: skill.to_string(),
            command: command.to_string(),
            reason: e.io_error().to_string(),
        })?;
    let status = match finished.exit {
        Exit::Cancelled => return Err(InlineShellError::Interrupted),
        Exit::TimedOut { .. } => {
            return Err(InlineShellError::Timeout {
                skill: skill.to_string(),
                command: command.to_string(),
            });
        }
        exit if exit.success() => {
            let mut text = finished.stdout;
            if text.len() > MAX_OUTPUT_BYTES {
                text.truncate(text.floor_char_boundary(MAX_OUTPUT_BYTES));
                text.push_str("\n[output cut]");
            }
            return Ok(text);
        }
        Exit::Exited { code } => format!("exit code {code}"),
        Exit::Signalled { .. } => "killed by a signal".to_string(),
    };
    Err(InlineShellError::Failed {
        skill: skill.to_string(),
        command: command.to_string(),
        status,
        output: finished.stderr.chars().take(500).collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    async fn run_expand(body: &str, permission: Permission) -> Result<String, InlineShellError> {
        let dir = tempfile::tempdir().unwrap();
        expand(
            body,
            "demo",
            dir.path(),
            dir.path(),
            &permission,
            &CancellationToken::new(),
        )
        .await
    }

    #[test]
    fn finds_only_real_inline_commands() {
        let found: Vec<String> =
            sites("Branch: !`git branch --show-current`\nHello!`x` and `!`y` and !`` and !`z\n`")
                .into_iter()
                .map(|s| s.command)
                .collect();
        assert_eq!(found, ["git branch --show-current"]);
        assert!(!has_inline_commands("awk '{print $1}' costs $5.00 `code`"));
    }

    #[tokio::test]
    async fn commands_are_replaced_by_their_output() {
        let out = run_expand(
            "Files: !`printf 'a\\nb\\n'` end\nDir: !`basename \"$SKILL_NAME\"`",
            Permission::Run,
        )
        .await
        .unwrap();
        assert_eq!(out, "Files: a\nb end\nDir: demo");
    }

    #[tokio::test]
    async fn refused_commands_become_notices_and_do_not_run() {
        let dir = tempfile::tempdir().unwrap();
        let marker = dir.path().join("ran");
        let body = format!("X !`touch {}` Y", marker.display());
        let out = expand(
            &body,
            "demo",
            dir.path(),
            dir.path(),
            &Permission::Refuse("approval mode suggest does not allow commands".into()),
            &CancellationToken::new(),
        )
        .await
        .unwrap();
        assert!(
            out.starts_with("X [inline command `touch") && out.ends_with("allow commands] Y"),
            "{out}"
        );
        assert!(!marker.exists());
    }

    #[tokio::test]
    async fn a_failing_command_aborts_with_its_name_and_output() {
        let err = run_expand("A !`echo oops >&2; exit 3` B", Permission::Run)
            .await
            .unwrap_err();
        let msg = err.to_string();
        assert!(
            msg.contains("echo oops") && msg.contains("exit code 3") && msg.contains("oops"),
            "{msg}"
        );
    }

    #[tokio::test]
    async fn long_output_keeps_its_head_and_says_it_was_cut() {
        let out = run_expand("!`seq 1 100000`", Permission::Run)
            .await
            .unwrap();
        let all: String = (1..=100_000).map(|i| format!("{i}\n")).collect();
        assert_eq!(out, format!("{}\n[output cut]", &all[..MAX_OUTPUT_BYTES]));
    }

    #[tokio::test]
    async fn cancel_stops_a_long_command_promptly() {
        let dir = tempfile::tempdir().unwrap();
        let cancel = CancellationToken::new();
        let c = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(100)).await;
            c.cancel();
        });
        let started = std::time::Instant::now();
        let err = expand(
            "!`sleep 20`",
            "demo",
            dir.path(),
            dir.path(),
            &Permission::Run,
            &cancel,
        )
        .await
        .unwrap_err();
        assert_eq!(err, InlineShellError::Interrupted);
        assert!(started.elapsed() < Duration::from_secs(5));
    }
}

#[cfg(test)]
mod permission_tests {
    use super::*;
    use crate::test_support::{roots_catalog, write};

    #[test]
    fn remote_skills_never_run_commands_local_ones_follow_the_mode() {
        let remote = tempfile::tempdir().unwrap();
        let local = tempfile::tempdir().unwrap();
        for (root, name) in [(remote.path(), "far"), (local.path(), "near")] {
            write(
                &root.join(name).join("SKILL.md"),
                &format!("---\nname: {name}\ndescription: d\n---\n!`id`\n"),
            );
        }
        let empty = tempfile::tempdir().unwrap();
        let catalog = roots_catalog(
            empty.path(),
            vec![local.path().to_path_buf()],
            vec![remote.path().to_path_buf()],
        );
        let far = catalog.get("far").unwrap();
        let near = catalog.get("near").unwrap();
        assert!(
            matches!(permission_for(far, &Permission::Run), Permission::Refuse(r) if r.contains("remote"))
        );
        assert_eq!(permission_for(near, &Permission::Run), Permission::Run);
        let off = Permission::Refuse("mode".into());
        assert_eq!(permission_for(near, &off), off);
    }
}
