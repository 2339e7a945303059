//! Watching a started command: reading its pipes side by side while waiting until the
//! main process exits and its pipes close (or stay held by something it left running
//! past a short drain), the timeout passes, or the call is cancelled; then stopping its
//! process group (SIGTERM, SIGKILL once the main process is gone or the grace passes)
//! and reaping it. It must not know how the command was built or how output is worded.

use std::io;
use std::process::ExitStatus;
use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::io::AsyncReadExt;
use tokio::net::unix::pipe;
use tokio::process::Child;
use tokio::time::{Instant, sleep_until};
use tokio_util::sync::CancellationToken;

use super::capture::Collector;
use super::launch::Launched;
use super::{Exit, Leftovers, Pipes, Sink};

/// Between SIGTERM and SIGKILL.
const KILL_GRACE: Duration = Duration::from_secs(1);
/// How long to keep reading after the main process exited while something else (a
/// background job) still holds an output pipe open.
const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(300);
/// How long to wait for the main process to be reaped after SIGKILL.
const REAP_TIMEOUT: Duration = Duration::from_secs(2);
/// How long to read what is still buffered once the group is dead.
const FINAL_DRAIN: Duration = Duration::from_millis(50);
/// Bytes read from a pipe at a time.
const READ_CHUNK: usize = 16 * 1024;

/// What [`supervise`] saw.
pub(super) struct Outcome {
    pub(super) exit: Exit,
    pub(super) pipes: Pipes,
    pub(super) stdout: String,
    pub(super) stderr: String,
}

/// Reads, waits and stops the command as its request says.
pub(super) async fn supervise(
    launched: Launched,
    stdout: Sink,
    stderr: Option<Sink>,
    timeout: Duration,
    leftovers: Leftovers,
    cancel: &CancellationToken,
) -> Outcome {
    let Launched {
        mut child,
        group,
        stdout: out_pipe,
        stderr: err_pipe,
        ..
    } = launched;
    let mut streams = Streams {
        out: Stream::new(out_pipe, Some(stdout)),
        err: Stream::new(err_pipe, stderr),
    };
    let ending = wait(&mut child, &mut streams, timeout, cancel).await;
    let (exit, pipes, left) = match ending {
        Ending::Exited { status, pipes } => {
            let left = match leftovers {
                Leftovers::Kill => {
                    group.signal(Signal::SIGKILL);
                    LeftRunning::Nothing
                }
                Leftovers::Leave => LeftRunning::Jobs,
            };
            (exit_of(status), pipes, left)
        }
        Ending::TimedOut => {
            group.terminate(&mut child, &mut streams).await;
            let exit = Exit::TimedOut { after: timeout };
            (exit, Pipes::Closed, LeftRunning::Nothing)
        }
        Ending::Cancelled => {
            group.terminate(&mut child, &mut streams).await;
            (Exit::Cancelled, Pipes::Closed, LeftRunning::Nothing)
        }
    };
    group.disarm(left);
    Outcome {
        exit,
        pipes,
        stdout: streams.out.finish(),
        stderr: streams.err.finish(),
    }
}

/// The exit as reported by the OS. A status with neither a code nor a signal cannot
/// come from `wait` (it only reports stops when asked to); it reads as signal 0.
fn exit_of(status: ExitStatus) -> Exit {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(code), _) => Exit::Exited { code },
        (None, signal) => Exit::Signalled {
            signal: signal.unwrap_or(0),
        },
    }
}

/// How the wait ended.
enum Ending {
    /// The main process exited; `pipes` says whether its output closed too.
    Exited {
        status: ExitStatus,
        pipes: Pipes,
    },
    TimedOut,
    Cancelled,
}

/// One output pipe and where its bytes go; `pipe` is `None` once closed (or when the
/// stream shares another's pipe).
struct Stream {
    pipe: Option<pipe::Receiver>,
    collector: Option<Collector>,
    buf: Vec<u8>,
}

impl Stream {
    fn new(pipe: Option<pipe::Receiver>, sink: Option<Sink>) -> Self {
        Stream {
            buf: if pipe.is_some() {
                vec![0; READ_CHUNK]
            } else {
                Vec::new()
            },
            pipe,
            collector: sink.map(Collector::new),
        }
    }

    /// Reads once; pends forever when closed (so `select!` skips it).
    async fn read(&mut self) -> io::Result<usize> {
        match &mut self.pipe {
            Some(pipe) => pipe.read(&mut self.buf).await,
            None => std::future::pending().await,
        }
    }

    fn take(&mut self, read: io::Result<usize>) {
        match read {
            Ok(0) | Err(_) => self.pipe = None,
            Ok(n) => {
                if let Some(collector) = &mut self.collector {
                    collector.feed(&self.buf[..n]);
                }
            }
        }
    }

    fn finish(self) -> String {
        self.collector.map(Collector::finish).unwrap_or_default()
    }
}

/// The command's output pipes, read side by side.
struct Streams {
    out: Stream,
    err: Stream,
}

impl Streams {
    fn closed(&self) -> bool {
        self.out.pipe.is_none() && self.err.pipe.is_none()
    }

    /// Reads what either pipe has next (cancel-safe: nothing is lost when dropped).
    /// Pends forever once both are closed.
    async fn read_some(&mut self) {
        let Streams { out, err } = self;
        tokio::select! {
            read = out.read() => out.take(read),
            read = err.read() => err.take(read),
        }
    }
}

/// Waits until the main process exits and the pipes close (or stay held past
/// [`DRAIN_AFTER_EXIT`]), the timeout passes, or the call is cancelled.
async fn wait(
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
            && streams.closed()
        {
            return Ending::Exited {
                status,
                pipes: Pipes::Closed,
            };
        }
        let open = !streams.closed();
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
                    return Ending::Exited { status, pipes: Pipes::HeldOpen };
                }
            }
        }
    }
}

/// The command's process group. Killed when dropped while armed (the call was abandoned
/// mid-run), so nothing it started outlives an aborted call.
pub(super) struct ProcessGroup {
    pgid: Option<Pid>,
    armed: bool,
}

impl ProcessGroup {
    /// The group of a child spawned with `process_group(0)`, armed, and remembered for
    /// [`super::groups::stop_all`].
    pub(super) fn of(child: &Child) -> Self {
        let pgid = child
            .id()
            .and_then(|id| i32::try_from(id).ok())
            .map(Pid::from_raw);
        if let Some(pgid) = pgid {
            super::groups::register(pgid);
        }
        ProcessGroup { pgid, armed: true }
    }

    fn signal(&self, signal: Signal) {
        if let Some(pgid) = self.pgid {
            // ESRCH (the group is already gone) is fine.
            let _ = killpg(pgid, signal);
        }
    }

    /// SIGTERM to the group; SIGKILL once the main process exits or the grace passes
    /// (whichever is first, so stragglers never survive); output read meanwhile is kept.
    async fn terminate(&self, child: &mut Child, streams: &mut Streams) {
        self.signal(Signal::SIGTERM);
        let grace_end = Instant::now() + KILL_GRACE;
        loop {
            let open = !streams.closed();
            tokio::select! {
                _ = child.wait() => break,
                _ = streams.read_some(), if open => {}
                _ = sleep_until(grace_end) => break,
            }
        }
        self.signal(Signal::SIGKILL);
        let _ = tokio::time::timeout(REAP_TIMEOUT, child.wait()).await;
        // Whatever is still buffered in the pipes, without waiting for more.
        let drain_end = Instant::now() + FINAL_DRAIN;
        while !streams.closed() {
            tokio::select! {
                _ = streams.read_some() => {}
                _ = sleep_until(drain_end) => break,
            }
        }
    }

    /// Leaves the group alone from now on. When the command ended by itself and its
    /// leftovers were left running, the group stays remembered (harness9 ending by a
    /// signal still stops it); otherwise it is forgotten.
    fn disarm(mut self, left: LeftRunning) {
        self.armed = false;
        if let (Some(pgid), LeftRunning::Nothing) = (self.pgid, left) {
            super::groups::unregister(pgid);
        }
    }
}

/// Whether a finished command's group may still have processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum LeftRunning {
    /// The group was stopped.
    Nothing,
    /// Background jobs may go on ([`Leftovers::Leave`]).
    Jobs,
}

impl Drop for ProcessGroup {
    fn drop(&mut self) {
        if self.armed {
            self.signal(Signal::SIGKILL);
            if let Some(pgid) = self.pgid {
                super::groups::unregister(pgid);
            }
        }
    }
}
