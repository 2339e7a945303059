//! Starting a command: the program (a `bash -c` line, with `sh` where bash is missing
//! if asked — a line too long for one argument goes through a private file as
//! `bash FILE` —, or a program and its arguments), its folder, environment and stdin, its
//! output pipes (one shared pipe, or one each), its own process group, and the
//! [`Confinement`] that wraps it. Hands back the child, its group and the read ends of
//! its pipes; it must not know how output is kept or how long anything may run.

use std::io;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use tokio::io::AsyncWriteExt;
use tokio::net::unix::pipe;
use tokio::process::{Child, Command};

use super::supervise::ProcessGroup;
use super::{Confinement, EnvChange, ExecError, Program, Prompts, Stdin, secrets, spare};
use crate::sandbox::job::{Job, JobStderr, JobStdin};
use crate::sandbox::{SandboxPolicy, SessionSandbox};
use std::collections::BTreeMap;
use std::ffi::OsString;
use std::sync::Arc;

/// Everything needed to build the command (stdin's bytes travel separately).
pub(super) struct Plan<'a> {
    pub(super) program: &'a Program,
    pub(super) cwd: &'a Path,
    pub(super) prompts: Prompts,
    pub(super) env: &'a [EnvChange],
    pub(super) stdin: &'a Stdin,
    /// stdout and stderr on one pipe.
    pub(super) merged: bool,
    pub(super) confinement: &'a Confinement,
}

/// A started command.
pub(super) struct Launched {
    pub(super) child: Child,
    /// Armed: dropping it kills the group.
    pub(super) group: ProcessGroup,
    /// The read end of stdout (of both streams when merged).
    pub(super) stdout: Option<pipe::Receiver>,
    /// The read end of stderr; `None` when merged.
    pub(super) stderr: Option<pipe::Receiver>,
    /// The sandbox it runs in, if any.
    pub(super) sandbox: Option<Arc<SandboxPolicy>>,
    /// The private file holding a command line too long for `-c`, removed when the
    /// command is done with (this is dropped).
    pub(super) _script: Option<ScriptFile>,
    /// The kind of spare launcher to start for the next confined command, once this one
    /// has ended; `None` when it ran unconfined.
    pub(super) spare: Option<spare::Kind>,
}

/// Lines longer than this are not passed as `bash -c LINE`: one argument may hold at
/// most 128 KiB (`MAX_ARG_STRLEN`), so they go through a [`ScriptFile`] as `bash FILE`.
const LONGEST_ARGUMENT: usize = 100 * 1024;

/// A command line written to a private file (0600, in a folder of its own, 0700, in
/// the temp folder, which the sandbox lets commands read), removed with its folder
/// when dropped.
#[derive(Debug)]
pub(super) struct ScriptFile {
    dir: PathBuf,
    file: PathBuf,
}

impl ScriptFile {
    fn write(line: &str) -> io::Result<ScriptFile> {
        use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let base = std::env::temp_dir();
        // A fresh folder only this user can enter: a name taken (by anyone) is
        // skipped, never reused.
        let dir = loop {
            let n = NEXT.fetch_add(1, Ordering::Relaxed);
            let dir = base.join(format!("harness9-cmd-{}-{n}", std::process::id()));
            match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
                Ok(()) => break dir,
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        };
        let script = ScriptFile {
            file: dir.join("command.sh"),
            dir,
        };
        let mut file = std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&script.file)?;
        std::io::Write::write_all(&mut file, line.as_bytes())?;
        Ok(script)
    }
}

impl Drop for ScriptFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.file);
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// The write ends the child gets; ours are dropped once it has started, so end of file
/// comes when the child and everything it started close theirs.
struct Writers {
    stdout: io::PipeWriter,
    stderr: Option<io::PipeWriter>,
}

impl Writers {
    fn stdout(&self) -> io::Result<Stdio> {
        Ok(Stdio::from(self.stdout.try_clone()?))
    }

    fn stderr(&self) -> io::Result<Stdio> {
        let writer = self.stderr.as_ref().unwrap_or(&self.stdout);
        Ok(Stdio::from(writer.try_clone()?))
    }
}

/// Spawns the command in its own process group.
pub(super) fn spawn(plan: &Plan<'_>) -> Result<Launched, ExecError> {
    // A read-only command starts confined or not at all: never as is.
    if *plan.confinement == Confinement::ReadOnly {
        let sandbox = crate::sandbox::read_only().map_err(|refusal| {
            ExecError::NoReadOnlySandbox(io::Error::new(
                io::ErrorKind::PermissionDenied,
                refusal.to_string(),
            ))
        })?;
        return spawn_confined(plan, sandbox);
    }
    if let Some(sandbox) = sandbox_of(plan.confinement)
        && plan.cwd.is_dir()
    {
        return spawn_confined(plan, sandbox);
    }
    let (out_reader, out_writer) = io::pipe().map_err(ExecError::Pipes)?;
    let (err_reader, err_writer) = if plan.merged {
        (None, None)
    } else {
        let (reader, writer) = io::pipe().map_err(ExecError::Pipes)?;
        (Some(reader), Some(writer))
    };
    let writers = Writers {
        stdout: out_writer,
        stderr: err_writer,
    };
    let script = match plan.program {
        Program::Bash { line } | Program::BashOrSh { line } if line.len() > LONGEST_ARGUMENT => {
            Some(ScriptFile::write(line).map_err(ExecError::Script)?)
        }
        _ => None,
    };
    let shell = |name: &str, line: &str| shell(name, line, script.as_ref());
    let mut child = match plan.program {
        // Through the launcher, a missing bash would only show once it runs: look first.
        Program::BashOrSh { line }
            if sandbox_of(plan.confinement).is_some() && !on_path("bash") =>
        {
            start(plan, shell("sh", line), &writers)?
        }
        Program::BashOrSh { line } => match start(plan, shell("bash", line), &writers) {
            Err(ExecError::Spawn { source, .. }) if source.kind() == io::ErrorKind::NotFound => {
                start(plan, shell("sh", line), &writers)?
            }
            other => other?,
        },
        Program::Bash { line } => start(plan, shell("bash", line), &writers)?,
        Program::Direct { program, args } => {
            let mut cmd = Command::new(program);
            cmd.args(args);
            start(plan, cmd, &writers)?
        }
    };
    drop(writers);
    let group = ProcessGroup::of(&child);
    if let Stdin::Bytes(bytes) = plan.stdin
        && let Some(mut stdin) = child.stdin.take()
    {
        let bytes = bytes.clone();
        tokio::spawn(async move {
            let _ = stdin.write_all(&bytes).await;
        });
    }
    let receiver = |reader: io::PipeReader| {
        pipe::Receiver::from_owned_fd(OwnedFd::from(reader)).map_err(ExecError::Pipes)
    };
    let stdout = Some(receiver(out_reader)?);
    let stderr = err_reader.map(receiver).transpose()?;
    Ok(Launched {
        child,
        group,
        stdout,
        stderr,
        sandbox: sandbox_of(plan.confinement).map(|s| s.policy),
        _script: script,
        spare: None,
    })
}

/// Starts a confined command through a launcher that waits for it ([`spare`]): the
/// launcher's arguments, the working folder, the exact environment and the streams go
/// to it as a job, followed by the stdin bytes.
fn spawn_confined(plan: &Plan<'_>, sandbox: SessionSandbox) -> Result<Launched, ExecError> {
    let script = match plan.program {
        Program::Bash { line } | Program::BashOrSh { line } if line.len() > LONGEST_ARGUMENT => {
            Some(ScriptFile::write(line).map_err(ExecError::Script)?)
        }
        _ => None,
    };
    let shell_args = |line: &str| -> Vec<OsString> {
        match &script {
            Some(script) => vec![script.file.clone().into_os_string()],
            None => vec!["-c".into(), line.into()],
        }
    };
    // Inside the launcher a missing bash only shows once it runs: look first.
    let (program, args): (OsString, Vec<OsString>) = match plan.program {
        Program::BashOrSh { line } if !on_path("bash") => ("sh".into(), shell_args(line)),
        Program::Bash { line } | Program::BashOrSh { line } => ("bash".into(), shell_args(line)),
        Program::Direct { program, args } => (
            program.clone().into_os_string(),
            args.iter().map(OsString::from).collect(),
        ),
    };
    let mut launcher_args = sandbox.policy.launcher_args();
    // The marker is the launcher's first argument, not the job's.
    launcher_args.remove(0);
    launcher_args.push("--".into());
    launcher_args.push(program.clone());
    launcher_args.extend(args);
    let job = Job {
        cwd: plan.cwd.to_path_buf(),
        stdin: match plan.stdin {
            Stdin::Null => JobStdin::Null,
            Stdin::Bytes(_) => JobStdin::Rest,
        },
        stderr: if plan.merged {
            JobStderr::IntoStdout
        } else {
            JobStderr::Own
        },
        env: command_env(plan),
        args: launcher_args,
    };
    let kind = spare::Kind {
        program: crate::sandbox::launcher_program(&sandbox.launcher),
        namespaces: sandbox.policy.namespaces,
    };
    let spare = spare::take_or_start(&kind).map_err(|source| ExecError::Spawn {
        program: program.to_string_lossy().into_owned(),
        source,
    })?;
    let spare::Spare {
        child,
        mut stdin,
        stdout,
        stderr,
        ..
    } = spare;
    let group = ProcessGroup::of(&child);
    let mut input = job.encode();
    if let Stdin::Bytes(bytes) = plan.stdin {
        input.extend_from_slice(bytes);
    }
    tokio::spawn(async move {
        // A launcher that is gone reports itself by its exit; nothing to add here.
        let _ = stdin.write_all(&input).await;
    });
    let receiver = |reader: io::PipeReader| {
        pipe::Receiver::from_owned_fd(OwnedFd::from(reader)).map_err(ExecError::Pipes)
    };
    Ok(Launched {
        child,
        group,
        stdout: Some(receiver(stdout)?),
        stderr: if plan.merged {
            None
        } else {
            Some(receiver(stderr)?)
        },
        sandbox: Some(Arc::clone(&sandbox.policy)),
        _script: script,
        spare: Some(kind),
    })
}

/// The environment a command gets, exactly as [`start`] gives it: this process's,
/// with pagers and prompts off when asked, without the secrets, then the plan's changes
/// in order (sorted by name, as the standard library passes a changed environment).
fn command_env(plan: &Plan<'_>) -> Vec<(OsString, OsString)> {
    let mut env: BTreeMap<OsString, OsString> = std::env::vars_os().collect();
    if plan.prompts == Prompts::Suppressed {
        for (name, value) in [
            ("PAGER", "cat"),
            ("GIT_PAGER", "cat"),
            ("GIT_TERMINAL_PROMPT", "0"),
        ] {
            env.insert(name.into(), value.into());
        }
    }
    for name in secrets::to_remove(std::env::vars_os()) {
        env.remove(&name);
    }
    for change in plan.env {
        match change {
            EnvChange::Set { name, value } => env.insert(name.clone(), value.clone()),
            EnvChange::Remove { name } => env.remove(name),
        };
    }
    env.into_iter().collect()
}

/// `SHELL -c LINE`, or `SHELL FILE` when the line was written to `script`.
fn shell(shell: &str, line: &str, script: Option<&ScriptFile>) -> Command {
    let mut cmd = Command::new(shell);
    match script {
        Some(script) => cmd.arg(&script.file),
        None => cmd.arg("-c").arg(line),
    };
    cmd
}

/// Configures `cmd` from the plan, confines it and starts it. The command (holding
/// clones of the write ends) is dropped before this returns.
fn start(plan: &Plan<'_>, cmd: Command, writers: &Writers) -> Result<Child, ExecError> {
    let program = cmd.as_std().get_program().to_string_lossy().into_owned();
    let mut cmd = confine(plan.confinement, cmd);
    let stdin = match plan.stdin {
        Stdin::Null => Stdio::null(),
        Stdin::Bytes(_) => Stdio::piped(),
    };
    cmd.current_dir(plan.cwd)
        .stdin(stdin)
        .stdout(writers.stdout().map_err(ExecError::Pipes)?)
        .stderr(writers.stderr().map_err(ExecError::Pipes)?);
    if plan.prompts == Prompts::Suppressed {
        cmd.env("PAGER", "cat")
            .env("GIT_PAGER", "cat")
            .env("GIT_TERMINAL_PROMPT", "0");
    }
    // Secrets never reach a child: the API key and header values under any name, every
    // variable whose name or value looks like a secret, and the variables that change
    // what bash runs (see `secrets`). Applied to the launcher too, which passes its
    // environment on to the command.
    for name in secrets::to_remove(std::env::vars_os()) {
        cmd.env_remove(name);
    }
    for change in plan.env {
        match change {
            EnvChange::Set { name, value } => cmd.env(name, value),
            EnvChange::Remove { name } => cmd.env_remove(name),
        };
    }
    cmd.process_group(0).kill_on_drop(true);
    cmd.spawn()
        .map_err(|source| ExecError::Spawn { program, source })
}

/// Whether `name` is an executable file in one of `PATH`'s folders.
fn on_path(name: &str) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::env::var_os("PATH").is_some_and(|path| {
        std::env::split_paths(&path).any(|dir| {
            std::fs::metadata(dir.join(name))
                .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
    })
}

/// The sandbox a command runs in (the session's, or the session's narrowed): the
/// launcher and the policy it applies. `None` when it runs as is.
fn sandbox_of(confinement: &Confinement) -> Option<SessionSandbox> {
    let session = match confinement {
        Confinement::Unconfined => return None,
        Confinement::SessionSandbox
        | Confinement::SessionSandboxWritingOnly(_)
        | Confinement::SessionSandboxSeeing(_) => crate::sandbox::session()?,
        Confinement::ReadOnly => return crate::sandbox::read_only().ok(),
    };
    match confinement {
        Confinement::SessionSandboxWritingOnly(writable) => Some(SessionSandbox {
            policy: Arc::new(session.policy.writing_only(writable)),
            launcher: session.launcher.clone(),
        }),
        Confinement::SessionSandboxSeeing(seen) => Some(SessionSandbox {
            policy: Arc::new(session.policy.seeing(seen)),
            launcher: session.launcher.clone(),
        }),
        _ => Some(session.clone()),
    }
}

/// The command as it will really be started: as is, or as the launcher's arguments
/// (the launcher confines itself, then runs it). Called before anything else is set on
/// the command, which only knows its program and arguments here.
fn confine(confinement: &Confinement, cmd: Command) -> Command {
    let Some(sandbox) = sandbox_of(confinement) else {
        return cmd;
    };
    let inner = cmd.as_std();
    Command::from(sandbox.command(inner.get_program(), inner.get_args()))
}
