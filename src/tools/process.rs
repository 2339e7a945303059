//! Running a command whose stdout and stderr are read side by side, for the tools that
//! hand a process its own streams (`skill_run`, tools.json tools): wait until it exits
//! and its streams close (or stay held by background jobs past a short drain), the
//! timeout passes, or the call is cancelled; and stop its whole process group.
//!
//! It owns the waiting and stopping only; what to run and how to report it stay with
//! each tool. It must not know about the model or frontends.

use std::io;
use std::process::ExitStatus;
use std::time::Duration;

use nix::sys::signal::Signal;
use nix::unistd::Pid;
use tokio::io::{AsyncRead, AsyncReadExt};
use tokio::process::{Child, ChildStderr, ChildStdout};
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

use super::bash::{DRAIN_AFTER_EXIT, KILL_GRACE, Output, ProcessGroup, REAP_TIMEOUT};

/// How the wait for a command ended.
pub(crate) enum Ending {
    /// It exited with this status.
    Exited(ExitStatus),
    /// The timeout passed first.
    TimedOut,
    /// The call was cancelled (interrupt).
    Cancelled,
}

/// The process group of a freshly spawned child (spawned with `process_group(0)`),
/// killed when dropped unless disarmed.
pub(crate) fn group_of(child: &Child) -> ProcessGroup {
    ProcessGroup {
        pgid: child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw),
        armed: true,
    }
}

/// A command's stdout and stderr, read side by side, each capped head-and-tail.
pub(crate) struct Streams {
    stdout: Option<ChildStdout>,
    stderr: Option<ChildStderr>,
    /// What stdout produced.
    pub(crate) out: Output,
    /// What stderr produced.
    pub(crate) err: Output,
    out_buf: Vec<u8>,
    err_buf: Vec<u8>,
}

impl Streams {
    /// Takes the child's pipes; `out` and `err` collect what they produce.
    pub(crate) fn take(child: &mut Child, out: Output, err: Output) -> Self {
        Streams {
            stdout: child.stdout.take(),
            stderr: child.stderr.take(),
            out,
            err,
            out_buf: vec![0; 16 * 1024],
            err_buf: vec![0; 16 * 1024],
        }
    }

    fn done(&self) -> bool {
        self.stdout.is_none() && self.stderr.is_none()
    }

    /// Reads what either stream has next (cancel-safe: nothing is lost when dropped).
    /// Pends forever once both are closed.
    async fn read_some(&mut self) {
        let Streams {
            stdout,
            stderr,
            out,
            err,
            out_buf,
            err_buf,
        } = self;
        tokio::select! {
            read = read_open(stdout, out_buf) => match read {
                Ok(0) | Err(_) => *stdout = None,
                Ok(n) => out.feed(&out_buf[..n]),
            },
            read = read_open(stderr, err_buf) => match read {
                Ok(0) | Err(_) => *stderr = None,
                Ok(n) => err.feed(&err_buf[..n]),
            },
        }
    }
}

async fn read_open<R: AsyncRead + Unpin>(
    reader: &mut Option<R>,
    buf: &mut [u8],
) -> io::Result<usize> {
    match reader {
        Some(reader) => reader.read(buf).await,
        None => std::future::pending().await,
    }
}

/// Waits until the main process exits and both streams close (or stay held by
/// background jobs past a short drain), the timeout passes, or the call is cancelled.
pub(crate) async fn wait(
    child: &mut Child,
    streams: &mut Streams,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Ending {
    let deadline = Instant::now() + timeout;
    let mut status: Option<ExitStatus> = None;
    let mut drain_until: Option<Instant> = None;
    loop {
        if let Some(status) = status
            && streams.done()
        {
            return Ending::Exited(status);
        }
        let open = !streams.done();
        tokio::select! {
            _ = cancel.cancelled() => return Ending::Cancelled,
            _ = streams.read_some(), if open => {}
            exited = child.wait(), if status.is_none() => match exited {
                Ok(exited) => {
                    status = Some(exited);
                    drain_until = Some(Instant::now() + DRAIN_AFTER_EXIT);
                }
                // Cannot happen for a child we spawned; treat it like a hang.
                Err(_) => return Ending::TimedOut,
            },
            _ = sleep_until(deadline), if status.is_none() => return Ending::TimedOut,
            _ = sleep_until(drain_until.unwrap_or(deadline)), if drain_until.is_some() => {
                if let Some(status) = status {
                    return Ending::Exited(status);
                }
            }
        }
    }
}

/// SIGTERM to the group; SIGKILL once the main process exits or the grace passes; the
/// output read meanwhile is kept.
pub(crate) async fn terminate(group: &ProcessGroup, child: &mut Child, streams: &mut Streams) {
    group.signal(Signal::SIGTERM);
    let grace_end = Instant::now() + KILL_GRACE;
    loop {
        let open = !streams.done();
        tokio::select! {
            _ = child.wait() => break,
            _ = streams.read_some(), if open => {}
            _ = sleep_until(grace_end) => break,
        }
    }
    group.signal(Signal::SIGKILL);
    let _ = tokio::time::timeout(REAP_TIMEOUT, child.wait()).await;
    let drain_end = Instant::now() + Duration::from_millis(50);
    while !streams.done() {
        tokio::select! {
            _ = streams.read_some() => {}
            _ = sleep_until(drain_end) => break,
        }
    }
}

/// Helpers for tests that check processes really went away.
#[cfg(test)]
pub(crate) mod test_support {
    use std::path::Path;
    use std::time::Duration;

    use tokio::time::Instant;

    /// True when `pid` no longer exists or is a zombie waiting to be reaped.
    pub(crate) fn process_gone(pid: i32) -> bool {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => true,
            Ok(stat) => stat
                .rsplit(')')
                .next()
                .is_some_and(|rest| rest.trim_start().starts_with('Z')),
        }
    }

    /// Waits until `condition` holds; panics naming `what` after 10 s.
    pub(crate) async fn wait_for(what: &str, mut condition: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while !condition() {
            assert!(Instant::now() < deadline, "timed out waiting for {what}");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }

    /// A pid a test script wrote to `path`.
    pub(crate) fn read_pid(path: &Path) -> i32 {
        std::fs::read_to_string(path)
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
    }
}
