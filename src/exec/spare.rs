//! The spare launcher: one sandbox launcher started ahead of the next confined command,
//! waiting on its stdin for that command's [`Job`] (`crate::sandbox::job`). A confined
//! command takes it (or starts one at once when there is none) and hands it the job: the
//! launcher's arguments as computed now, the working folder, the exact environment and
//! the streams. A moment after a confined command has ended, another spare is started
//! in the background for the next one, and the session's first one a moment after
//! start-up ([`warm_up`]), so commands do not wait for the launcher's own start (a new process, its dynamic linking and runtime, and, with
//! namespaces, the user and PID namespaces and their first process). Nothing of the
//! policy is decided ahead: the job carries it, and the launcher builds the mount
//! namespace, the file system and the confinement for it from scratch.
//!
//! A spare is started like any confined command's launcher: in a process group of its
//! own, without the secrets in its environment, killed when its handle is dropped; one
//! never used ends by itself when harness9 exits (its stdin closes). It knows processes
//! and pipes; it must not know what the command is.

use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use tokio::process::{Child, ChildStdin, Command};

use super::secrets;
use crate::sandbox::launcher::{JOB_FLAG, JOB_IN_NAMESPACES_FLAG};
use crate::sandbox::{LAUNCHER_MARKER, Namespaces};

/// What a spare was started for: the program and whether it builds namespaces ahead.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Kind {
    /// The launcher's binary.
    pub(super) program: PathBuf,
    /// The policy's namespaces setting.
    pub(super) namespaces: Namespaces,
}

/// A started launcher waiting for its job.
pub(super) struct Spare {
    pub(super) kind: Kind,
    pub(super) child: Child,
    /// Where the job (then the command's stdin) is written.
    pub(super) stdin: ChildStdin,
    /// The read ends of its stdout and stderr.
    pub(super) stdout: io::PipeReader,
    pub(super) stderr: io::PipeReader,
}

static SPARE: Mutex<Option<Spare>> = Mutex::new(None);

/// The spare of this kind, if one is waiting (and still alive); else a new one, started
/// now.
pub(super) fn take_or_start(kind: &Kind) -> io::Result<Spare> {
    let waiting = SPARE.lock().unwrap_or_else(PoisonError::into_inner).take();
    if let Some(mut spare) = waiting
        && spare.kind == *kind
        && matches!(spare.child.try_wait(), Ok(None))
    {
        tracing::debug!("confined command: the spare launcher takes it");
        return Ok(spare);
    }
    tracing::debug!("confined command: no spare launcher waiting, one starts now");
    start(kind)
}

/// How long after a confined command's end its replacement spare starts: long enough
/// for the session to send the command's result on (the spare's start would compete
/// with that for the CPUs), far shorter than any model takes to answer.
const REPLENISH_AFTER: Duration = Duration::from_millis(5);

/// Starts a spare of this kind for the next command, in the background, a moment from
/// now, unless one is waiting then. Needs the tokio runtime.
pub(super) fn replenish(kind: Kind) {
    tokio::spawn(async move {
        tokio::time::sleep(REPLENISH_AFTER).await;
        replenish_now(kind).await;
    });
}

/// How long after a session is ready its first spare starts: after the first request
/// has gone (which is then not slowed by the launcher's start), and before any model
/// answers with a first command.
const WARM_UP_AFTER: Duration = Duration::from_millis(15);

/// Starts the session's first spare a moment from now, when the session has a sandbox
/// (so the first confined command finds one waiting too). Needs the tokio runtime.
pub(super) async fn warm_up() {
    tokio::time::sleep(WARM_UP_AFTER).await;
    if let Some(sandbox) = crate::sandbox::session() {
        replenish_now(Kind {
            program: crate::sandbox::launcher_program(&sandbox.launcher),
            namespaces: sandbox.policy.namespaces,
        })
        .await;
    }
}

/// Starts a spare of this kind now, on a blocking thread, unless one is waiting.
async fn replenish_now(kind: Kind) {
    let waiting = SPARE
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .is_some();
    if waiting {
        return;
    }
    let _ = tokio::task::spawn_blocking(move || {
        let Ok(spare) = start(&kind) else {
            return;
        };
        let mut slot = SPARE.lock().unwrap_or_else(PoisonError::into_inner);
        if slot.is_none() {
            *slot = Some(spare);
        }
    })
    .await;
}

/// Starts a launcher that waits for one job.
fn start(kind: &Kind) -> io::Result<Spare> {
    let (stdout, stdout_writer) = io::pipe()?;
    let (stderr, stderr_writer) = io::pipe()?;
    let flag = match kind.namespaces {
        Namespaces::On => JOB_IN_NAMESPACES_FLAG,
        Namespaces::Off => JOB_FLAG,
    };
    let mut cmd = Command::new(&kind.program);
    cmd.args([LAUNCHER_MARKER, flag])
        .current_dir(Path::new("/"))
        .stdin(Stdio::piped())
        .stdout(Stdio::from(stdout_writer))
        .stderr(Stdio::from(stderr_writer));
    // As every child: no secret reaches it (the command's own environment comes with
    // the job, computed the same way).
    for name in secrets::to_remove(std::env::vars_os()) {
        cmd.env_remove(name);
    }
    cmd.process_group(0).kill_on_drop(true);
    let mut child = cmd.spawn()?;
    let stdin = child
        .stdin
        .take()
        .ok_or_else(|| io::Error::other("the launcher has no stdin"))?;
    Ok(Spare {
        kind: kind.clone(),
        child,
        stdin,
        stdout,
        stderr,
    })
}
