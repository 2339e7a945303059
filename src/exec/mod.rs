//! The one process supervisor: every child process harness9 runs for the model or a
//! skill (`bash`, `skill_run`, tools.json tools, inline `` !`cmd` ``) is started, read,
//! timed, cancelled and stopped here. A [`Request`] names what to run (a `bash -c` line
//! or a program and its arguments), where, with which variables and stdin, how to keep
//! its output and how long it may take; [`run`] spawns it in its own process group,
//! streams stdout and stderr (live to a channel, capped head-and-tail or head-only for
//! the result), and returns a [`Finished`] whose [`Exit`] says how it ended. On timeout
//! or cancellation the whole group gets SIGTERM, then SIGKILL; an abandoned call (its
//! future dropped) kills the group at once.
//!
//! [`Confinement`] says whether the session's sandbox ([`crate::sandbox`]) wraps the
//! command: then it starts through the launcher, and a failure that looks like the
//! sandbox's doing gets a note naming what would allow it. This module knows processes,
//! pipes and signals;
//! it must not know tools, skills, the model or how a result is worded for anyone (it
//! borrows only the head-and-tail collector of `tools::truncate`, which knows nothing of
//! where its text comes from).
//!
//! `launch.rs` builds and spawns the command (its environment without secrets:
//! `secrets.rs`; a confined one as a job for a launcher started ahead, `spare.rs`),
//! `capture.rs` keeps what a stream printed, `supervise.rs` waits, drains
//! and stops the process group, `groups.rs` remembers every group that may still run so
//! [`stop_all`] can end them when harness9 is told to end, and `self_env.rs` hides the
//! secrets in harness9's own environment block.

use std::ffi::OsString;
use std::io;
use std::path::PathBuf;
use std::time::Duration;

use nix::sys::signal::Signal;
use tokio::sync::mpsc::UnboundedSender;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

mod capture;
mod groups;
mod launch;
pub mod secrets;
pub mod self_env;
pub mod service;
mod spare;
mod supervise;

pub use groups::stop_all;
#[cfg(test)]
pub(crate) mod test_support;
#[cfg(test)]
mod tests;

/// Room a user keeps in each share of its output budget for the lines it adds around
/// the captured text (status lines, labels); see [`Capture::within`].
pub const FOOTER_RESERVE: usize = 400;

/// What to run, where, and how to treat it.
#[derive(Debug)]
pub struct Request {
    /// The command.
    pub program: Program,
    /// Its working directory.
    pub cwd: PathBuf,
    /// Whether pagers and credential prompts are switched off (before `env` applies).
    pub prompts: Prompts,
    /// Changes to the inherited environment, applied in order.
    pub env: Vec<EnvChange>,
    /// What it reads on stdin.
    pub stdin: Stdin,
    /// How stdout and stderr are read and kept.
    pub output: Output,
    /// How long it may run before its group is stopped.
    pub timeout: Duration,
    /// What happens to processes it leaves running when it exits by itself.
    pub leftovers: Leftovers,
    /// How the command is wrapped before it starts.
    pub confinement: Confinement,
}

/// The command itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Program {
    /// `bash -c line`.
    Bash {
        /// The command line.
        line: String,
    },
    /// `bash -c line`, or `sh -c line` when bash is not installed.
    BashOrSh {
        /// The command line.
        line: String,
    },
    /// A program and its arguments, without a shell.
    Direct {
        /// The program (a name looked up in `PATH`, or a path).
        program: PathBuf,
        /// Its arguments.
        args: Vec<String>,
    },
}

/// One change to the environment the command inherits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvChange {
    /// Set `name` to `value`.
    Set {
        /// The variable.
        name: OsString,
        /// Its value.
        value: OsString,
    },
    /// Remove `name`.
    Remove {
        /// The variable.
        name: OsString,
    },
}

impl EnvChange {
    /// Sets `name` to `value`.
    pub fn set(name: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        EnvChange::Set {
            name: name.into(),
            value: value.into(),
        }
    }
}

/// Whether the command may page or prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prompts {
    /// `PAGER=cat`, `GIT_PAGER=cat`, `GIT_TERMINAL_PROMPT=0`: nothing waits for a reader
    /// or a password nobody can type.
    Suppressed,
    /// The environment as inherited.
    AsInherited,
}

/// What the command reads on stdin.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stdin {
    /// Nothing (`/dev/null`).
    Null,
    /// These bytes, then end of file. Written from a task of their own, so a command
    /// that reads nothing cannot block the call; a broken pipe is ignored.
    Bytes(Vec<u8>),
}

/// How stdout and stderr are read.
#[derive(Debug, Clone)]
pub enum Output {
    /// Both on one pipe, kept as one text interleaved exactly as written
    /// ([`Finished::stdout`]; [`Finished::stderr`] stays empty).
    Merged(Sink),
    /// Each on a pipe of its own, kept apart.
    Split {
        /// Where stdout goes.
        stdout: Sink,
        /// Where stderr goes.
        stderr: Sink,
    },
}

/// Where one stream's output goes.
#[derive(Debug, Clone)]
pub struct Sink {
    /// What is kept for the result.
    pub capture: Capture,
    /// Receives the output as it arrives, in whole lines where lines are short (at most
    /// about 1 MiB per stream, then one notice). `None`: nobody watches.
    pub live: Option<UnboundedSender<String>>,
}

/// What is kept of one stream for the result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Capture {
    /// At most `max_bytes`: everything when it fits, else the head and the tail around a
    /// marker line saying what was cut (`crate::truncate::HeadTail`).
    HeadTail {
        /// The cap.
        max_bytes: usize,
    },
    /// The first `max_bytes` bytes; the rest is read and dropped.
    Head {
        /// The cap.
        max_bytes: usize,
    },
}

impl Capture {
    /// Head and tail within `share` of an output budget, less [`FOOTER_RESERVE`].
    pub fn within(share: usize) -> Self {
        Capture::HeadTail {
            max_bytes: share.saturating_sub(FOOTER_RESERVE),
        }
    }
}

/// What happens to processes the command leaves behind in its group when it exits by
/// itself (timeouts and cancellation always stop the whole group).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Leftovers {
    /// They keep running (a background job the user asked for).
    Leave,
    /// They get SIGKILL (what they need goes away with the call).
    Kill,
}

/// How the command is wrapped before it starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Confinement {
    /// Run as is, with the user's rights.
    Unconfined,
    /// Inside the session's sandbox ([`crate::sandbox::configure`]); as is when the
    /// session has none (`--sandbox off`, or nothing configured, as in unit tests).
    SessionSandbox,
    /// Inside the session's sandbox with writes allowed only beneath these folders (and
    /// `/dev/null`), whatever the session's own writable paths or mode: a skill run
    /// writes only in its workspace. As is when the session has no sandbox.
    SessionSandboxWritingOnly(Vec<PathBuf>),
    /// Inside the session's sandbox with these files or folders kept visible (read-only)
    /// inside the folders it masks: a hook reads the session's record file, which lives
    /// in the masked `$HARNESS9_HOME`. As is when the session has no sandbox.
    SessionSandboxSeeing(Vec<PathBuf>),
    /// In a sandbox that lets it write nothing (plan mode): the session's made read-only,
    /// or, when the session has none, one built for this ([`crate::sandbox::read_only`]).
    /// Never run as is: where no sandbox can be had, it does not start
    /// ([`ExecError::NoReadOnlySandbox`]).
    ReadOnly,
}

/// How a finished command ended and what it printed.
#[derive(Debug)]
pub struct Finished {
    /// How it ended.
    pub exit: Exit,
    /// Whether its output pipes closed or were held open after it ended.
    pub pipes: Pipes,
    /// What stdout kept (with [`Output::Merged`], both streams).
    pub stdout: String,
    /// What stderr kept (empty with [`Output::Merged`]).
    pub stderr: String,
    /// From just before the spawn until the group was stopped or released.
    pub elapsed: Duration,
}

/// How the command ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// It exited with `code`.
    Exited {
        /// The exit code.
        code: i32,
    },
    /// A signal ended it (not one we sent for a timeout or cancellation).
    Signalled {
        /// The signal number.
        signal: i32,
    },
    /// It ran past its timeout and its group was stopped.
    TimedOut {
        /// The timeout.
        after: Duration,
    },
    /// The call was cancelled and its group was stopped.
    Cancelled,
}

impl Exit {
    /// True for exit code 0.
    pub fn success(self) -> bool {
        self == Exit::Exited { code: 0 }
    }

    /// `[exit code N]` or `[killed by signal N (NAME)]`; `None` for a timeout or a
    /// cancellation, which each user words for itself.
    pub fn status_line(self) -> Option<String> {
        match self {
            Exit::Exited { code } => Some(format!("[exit code {code}]")),
            Exit::Signalled { signal } => Some(format!(
                "[killed by signal {signal} ({})]",
                signal_name(signal).unwrap_or("unknown")
            )),
            Exit::TimedOut { .. } | Exit::Cancelled => None,
        }
    }
}

/// `SIGKILL` for 9, and so on; `None` for a number that names no signal.
pub fn signal_name(signal: i32) -> Option<&'static str> {
    Signal::try_from(signal).ok().map(Signal::as_str)
}

/// What became of the command's output pipes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pipes {
    /// They closed (or the group was stopped).
    Closed,
    /// The command exited by itself but something it started still held them after a
    /// short drain; what that prints later is not captured.
    HeldOpen,
}

/// Why a command could not start.
#[derive(Debug, thiserror::Error)]
pub enum ExecError {
    /// The pipes for its output could not be made.
    #[error("cannot create pipes: {0}")]
    Pipes(#[source] io::Error),
    /// A command line too long for `-c` could not be written to its private file.
    #[error("cannot write the long command line to a private file: {0}")]
    Script(#[source] io::Error),
    /// The program could not be started.
    #[error("cannot start `{program}`: {source}")]
    Spawn {
        /// The program as tried last (`bash`, `sh`, or the program's path).
        program: String,
        /// The OS error.
        #[source]
        source: io::Error,
    },
    /// A [`Confinement::ReadOnly`] command, and no sandbox to hold it: it was not started.
    #[error("{0}")]
    NoReadOnlySandbox(#[source] io::Error),
}

impl ExecError {
    /// The OS error underneath.
    pub fn io_error(&self) -> &io::Error {
        match self {
            ExecError::Pipes(source)
            | ExecError::Script(source)
            | ExecError::Spawn { source, .. }
            | ExecError::NoReadOnlySandbox(source) => source,
        }
    }
}

/// Starts the session's first spare sandbox launcher a moment from now (nothing without
/// a session sandbox), so that the first confined command, too, finds a launcher
/// waiting. Spawn it on the runtime once the session is ready.
pub async fn warm_up() {
    spare::warm_up().await;
}

/// Runs `request` to its end: it exits (and its output closes, or stays held by
/// something it left running past a short drain), its timeout passes, or `cancel`
/// fires. Dropping the returned future kills the process group.
pub async fn run(request: Request, cancel: &CancellationToken) -> Result<Finished, ExecError> {
    let Request {
        program,
        cwd,
        prompts,
        env,
        stdin,
        output,
        timeout,
        leftovers,
        confinement,
    } = request;
    let started = Instant::now();
    let merged = matches!(output, Output::Merged(_));
    let launched = launch::spawn(&launch::Plan {
        program: &program,
        cwd: &cwd,
        prompts,
        env: &env,
        stdin: &stdin,
        merged: matches!(output, Output::Merged(_)),
        confinement: &confinement,
    })?;
    let (out_sink, err_sink) = match output {
        Output::Merged(sink) => (sink, None),
        Output::Split { stdout, stderr } => (stdout, Some(stderr)),
    };
    let sandbox = launched.sandbox.clone();
    let spare = launched.spare.clone();
    let outcome =
        supervise::supervise(launched, out_sink, err_sink, timeout, leftovers, cancel).await;
    if let Some(kind) = spare {
        spare::replenish(kind);
    }
    let mut finished = Finished {
        exit: outcome.exit,
        pipes: outcome.pipes,
        stdout: outcome.stdout,
        stderr: outcome.stderr,
        elapsed: started.elapsed(),
    };
    if let Some(policy) = sandbox
        && matches!(finished.exit, Exit::Exited { code } if code != 0)
    {
        let printed = format!("{}\n{}", finished.stdout, finished.stderr);
        if let Some(note) = crate::sandbox::denial_note(&policy, &printed) {
            // Merged output has everything in stdout; else the note goes with stderr.
            let text = if merged {
                &mut finished.stdout
            } else {
                &mut finished.stderr
            };
            if !text.is_empty() && !text.ends_with('\n') {
                text.push('\n');
            }
            text.push_str(&note);
            text.push('\n');
        }
    }
    Ok(finished)
}
