//! Inline shell in skill bodies: `` !`command` `` is replaced by the command's output
//! when the skill is invoked. Only skills from local roots (flag, project, user) may run
//! commands, and only when the caller says the approval mode allows commands; otherwise
//! each command is replaced by a short notice. A command that fails (non-zero exit,
//! timeout, cannot start) aborts the invocation with an error naming it.
//!
//! This module owns finding and running those commands. It must not know about the
//! approval policy's details, the agent loop or terminals: callers pass a [`Permission`].

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio_util::sync::CancellationToken;

/// The most output kept from one command, in bytes.
pub const MAX_OUTPUT_BYTES: usize = 16 * 1024;
/// How long one command may run.
pub const TIMEOUT: Duration = Duration::from_secs(30);

/// Whether inline commands may run for this invocation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Permission {
    /// Run them.
    Run,
    /// Do not run them; replace each by a notice giving this reason.
    Refuse(String),
}

/// The permission for one skill: `mode` (what the approval mode allows) narrowed by
/// where the skill comes from — skills from remote roots never run commands.
pub fn permission_for(skill: &crate::skills::Skill, mode: &Permission) -> Permission {
    use crate::skills::RootKind;
    match skill.root.kind {
        RootKind::Flag | RootKind::Project | RootKind::User => mode.clone(),
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
        match permission {
            Permission::Refuse(reason) => {
                out.push_str(&format!(
                    "[inline command `{}` not run: {reason}]",
                    site.command
                ));
            }
            Permission::Run => {
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
    let mut child = tokio::process::Command::new("bash")
        .arg("-c")
        .arg(command)
        .current_dir(workdir)
        .env("SKILL_DIR", skill_dir)
        .env("SKILL_NAME", skill)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| InlineShellError::Spawn {
            skill: skill.to_string(),
            command: command.to_string(),
            reason: e.to_string(),
        })?;
    let pgid = child.id().and_then(|id| i32::try_from(id).ok());
    let mut stdout = child.stdout.take();
    let mut stderr = child.stderr.take();
    let work = async {
        let mut out = Vec::new();
        let mut err = Vec::new();
        let read_out = async {
            if let Some(s) = stdout.as_mut() {
                let _ = s
                    .take(MAX_OUTPUT_BYTES as u64 * 4)
                    .read_to_end(&mut out)
                    .await;
            }
        };
        let read_err = async {
            if let Some(s) = stderr.as_mut() {
                let _ = s.take(MAX_OUTPUT_BYTES as u64).read_to_end(&mut err).await;
            }
        };
        tokio::join!(read_out, read_err);
        let status = child.wait().await;
        (status, out, err)
    };
    let kill_group = || {
        if let Some(pgid) = pgid {
            let _ = nix::sys::signal::killpg(
                nix::unistd::Pid::from_raw(pgid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    };
    let result = tokio::select! {
        r = work => r,
        () = cancel.cancelled() => {
            kill_group();
            return Err(InlineShellError::Interrupted);
        }
        () = tokio::time::sleep(TIMEOUT) => {
            kill_group();
            return Err(InlineShellError::Timeout { skill: skill.to_string(), command: command.to_string() });
        }
    };
    let (status, out, err) = result;
    let mut text = String::from_utf8_lossy(&out).into_owned();
    if text.len() > MAX_OUTPUT_BYTES {
        let mut cut = MAX_OUTPUT_BYTES;
        while !text.is_char_boundary(cut) {
            cut -= 1;
        }
        text.truncate(cut);
        text.push_str("\n[output cut]");
    }
    match status {
        Ok(s) if s.success() => Ok(text),
        Ok(s) => Err(InlineShellError::Failed {
            skill: skill.to_string(),
            command: command.to_string(),
            status: s.code().map_or_else(
                || "killed by a signal".to_string(),
                |c| format!("exit code {c}"),
            ),
            output: String::from_utf8_lossy(&err).chars().take(500).collect(),
        }),
        Err(e) => Err(InlineShellError::Spawn {
            skill: skill.to_string(),
            command: command.to_string(),
            reason: e.to_string(),
        }),
    }
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
    use crate::skills::{Catalog, DiscoveryOptions};

    #[test]
    fn remote_skills_never_run_commands_local_ones_follow_the_mode() {
        let remote = tempfile::tempdir().unwrap();
        let local = tempfile::tempdir().unwrap();
        for (root, name) in [(remote.path(), "far"), (local.path(), "near")] {
            let dir = root.join(name);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(
                dir.join("SKILL.md"),
                format!("---\nname: {name}\ndescription: d\n---\n!`id`\n"),
            )
            .unwrap();
        }
        let empty = tempfile::tempdir().unwrap();
        let catalog = Catalog::discover(&DiscoveryOptions {
            flag_dirs: vec![local.path().to_path_buf()],
            workdir: empty.path().to_path_buf(),
            harness9_home: empty.path().to_path_buf(),
            user_home: None,
            remote_dirs: vec![remote.path().to_path_buf()],
        });
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
