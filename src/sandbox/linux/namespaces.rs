//! Running a command in its own namespaces. The launcher (single-threaded, before
//! anything else in `main`) creates a user namespace (mapping only its own user and
//! group, so no other user's files are its to override) and a PID namespace, then
//! forks:
//!
//! - the child is PID 1 of the new PID namespace: it makes its own mount namespace,
//!   builds the file system there (`mounts`),
//!   mounts a `/proc` that shows only the sandbox's processes, confines itself (Landlock,
//!   seccomp, capabilities), starts the command as PID 2, and reaps every process in the
//!   namespace. When the command exits it hands its exit status to the parent over a
//!   pipe, then waits for whatever the command left running (a background job) and exits
//!   with the last of them, taking the namespaces down (which waits for the kernel's RCU
//!   grace periods: a millisecond or more that nobody waits for).
//! - the parent, outside the PID namespace, blocks the signals it could be sent, waits
//!   for that status and exits the same way: with the same code, or killed by the same
//!   signal. harness9 waits for it as it would for the command.
//!
//! Signals: everything stays in harness9's process group for the command, so the
//! group's SIGTERM and SIGKILL reach the command and its children directly. The child
//! (an init process ignores what it has no handler for) dies of SIGKILL only, and its
//! death kills everything left in the namespace; it also dies when the parent is killed
//! before the command ends (parent-death signal).
//!
//! It knows processes and namespaces; the file system is `mounts`', the confinement
//! `super`'s.

use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sched::{CloneFlags, unshare};
use nix::sys::prctl;
use nix::sys::signal::{SigSet, SigmaskHow, Signal, sigprocmask};
use nix::sys::wait::{WaitStatus, waitpid};
use nix::unistd::{ForkResult, Pid};

use super::mounts;
use crate::sandbox::launcher::{self, CANNOT_RUN, Environment, Launch, NOT_FOUND};
use crate::sandbox::{Namespaces, SandboxPolicy};

/// How the command ended, as the child reports it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ending {
    Exited(i32),
    Killed(Signal),
}

impl Ending {
    fn encode(self) -> [u8; 4] {
        match self {
            Ending::Exited(code) => code.to_le_bytes(),
            Ending::Killed(signal) => (-(signal as i32)).to_le_bytes(),
        }
    }

    fn decode(bytes: [u8; 4]) -> Option<Ending> {
        match i32::from_le_bytes(bytes) {
            code if code >= 0 => Some(Ending::Exited(code)),
            negative => Signal::try_from(-negative).ok().map(Ending::Killed),
        }
    }
}

type Failure = (String, u8);

fn fail(what: &str) -> impl FnOnce(Errno) -> Failure + '_ {
    move |e| {
        (
            format!("cannot build the sandbox's namespaces: {what}: {e}"),
            CANNOT_RUN,
        )
    }
}

/// Runs `launch` for `policy` in new namespaces; returns the exit code when the command
/// exited (after dying of its signal when it was killed).
pub fn run(policy: &SandboxPolicy, launch: &Launch, env: Environment<'_>) -> Result<u8, Failure> {
    let cwd = std::env::current_dir()
        .map_err(|e| (format!("cannot tell the working folder: {e}"), CANNOT_RUN))?;
    start(Task::Given {
        policy,
        launch,
        env,
        cwd: &cwd,
    })
}

/// Builds the namespaces and forks their first process, which then waits for a job on
/// stdin (the launcher's `--job-in-namespaces`); returns the exit code as [`run`] does.
pub fn run_job() -> Result<u8, Failure> {
    start(Task::Job)
}

/// What the namespaces' first process runs.
enum Task<'a> {
    /// What the launcher was started with.
    Given {
        policy: &'a SandboxPolicy,
        launch: &'a Launch,
        env: Environment<'a>,
        cwd: &'a Path,
    },
    /// A job it reads from stdin.
    Job,
}

fn start(task: Task<'_>) -> Result<u8, Failure> {
    let uid = nix::unistd::geteuid();
    let gid = nix::unistd::getegid();
    single_threaded()?;
    // The mount namespace is the child's alone (it makes its own, below): freeing one
    // waits for an RCU grace period, which the child's exit may do in the background
    // while this process, the one harness9 waits for, has already exited.
    unshare(CloneFlags::CLONE_NEWUSER | CloneFlags::CLONE_NEWPID).map_err(fail("unshare"))?;
    map_ids(uid.as_raw(), gid.as_raw())?;
    let mut blocked = SigSet::all();
    for synchronous in [
        Signal::SIGSEGV,
        Signal::SIGBUS,
        Signal::SIGFPE,
        Signal::SIGILL,
        Signal::SIGTRAP,
        Signal::SIGSYS,
    ] {
        blocked.remove(synchronous);
    }
    sigprocmask(SigmaskHow::SIG_BLOCK, Some(&blocked), None).map_err(fail("block signals"))?;
    let (status_read, status_write) =
        nix::unistd::pipe2(OFlag::O_CLOEXEC).map_err(fail("make a pipe"))?;
    match fork_child().map_err(fail("fork"))? {
        ForkResult::Child => {
            drop(status_read);
            std::process::exit(child(task, status_write))
        }
        ForkResult::Parent { child } => {
            drop(status_write);
            Ok(parent(child, status_read))
        }
    }
}

/// `fork` is only sound here while this process has one thread; it has, unless this
/// function is called from elsewhere than the launcher. Checked, not assumed.
fn single_threaded() -> Result<(), Failure> {
    let status = super::read_proc("/proc/self/status").unwrap_or_default();
    let threads = status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))
        .and_then(|n| n.trim().parse::<u32>().ok());
    match threads {
        Some(1) => Ok(()),
        _ => Err((
            "cannot build the sandbox's namespaces: the launcher must have exactly one \
             thread, and it cannot tell that it has"
                .into(),
            CANNOT_RUN,
        )),
    }
}

/// The one `unsafe` block of the launcher.
#[allow(unsafe_code)]
fn fork_child() -> Result<ForkResult, Errno> {
    // SAFETY: `fork` is unsafe because a child of a multi-threaded process may only call
    // async-signal-safe functions. The launcher calls this right after
    // `single_threaded()` confirmed this process has exactly one thread (it runs before
    // anything else in `main`: no runtime, no other thread), so the child is a full copy
    // of a single-threaded process and may allocate, lock and print as usual.
    unsafe { nix::unistd::fork() }
}

/// Maps this user and group (only them) into the new user namespace.
fn map_ids(uid: u32, gid: u32) -> Result<(), Failure> {
    let write = |file: &str, text: String| {
        std::fs::write(file, text).map_err(|e| {
            (
                format!("cannot build the sandbox's namespaces: write {file}: {e}"),
                CANNOT_RUN,
            )
        })
    };
    write("/proc/self/setgroups", "deny".into())?;
    write("/proc/self/uid_map", format!("{uid} {uid} 1"))?;
    write("/proc/self/gid_map", format!("{gid} {gid} 1"))
}

/// The parent: waits for the command's status (or, when none comes, the child's own
/// end) and returns its exit code, after dying of its signal when it was killed.
fn parent(child: Pid, status: OwnedFd) -> u8 {
    let mut bytes = [0u8; 4];
    let ending = match read_exact(&status, &mut bytes) {
        Ok(()) => Ending::decode(bytes),
        Err(_) => None,
    };
    let ending = ending.unwrap_or_else(|| {
        loop {
            match waitpid(child, None) {
                Ok(WaitStatus::Exited(_, code)) => break Ending::Exited(code),
                Ok(WaitStatus::Signaled(_, signal, _)) => break Ending::Killed(signal),
                Err(Errno::EINTR) | Ok(_) => continue,
                Err(_) => break Ending::Exited(i32::from(CANNOT_RUN)),
            }
        }
    });
    match ending {
        Ending::Exited(code) => u8::try_from(code & 0xff).unwrap_or(CANNOT_RUN),
        Ending::Killed(signal) => {
            die_of(signal);
            128u8.saturating_add(signal as u8)
        }
    }
}

fn read_exact(fd: &OwnedFd, buf: &mut [u8]) -> Result<(), Errno> {
    let mut done = 0;
    while done < buf.len() {
        match nix::unistd::read(fd, &mut buf[done..]) {
            Ok(0) => return Err(Errno::EPIPE),
            Ok(n) => done += n,
            Err(Errno::EINTR) => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Ends this process with `signal`, as the command ended (no core file). Returns when
/// the signal does not end a process here (one this process ignores, like SIGPIPE).
fn die_of(signal: Signal) {
    use nix::sys::resource::{Resource, setrlimit};
    let _ = setrlimit(Resource::RLIMIT_CORE, 0, nix::sys::resource::RLIM_INFINITY);
    let mut only = SigSet::all();
    only.remove(signal);
    let _ = sigprocmask(SigmaskHow::SIG_SETMASK, Some(&only), None);
    let _ = nix::sys::signal::raise(signal);
}

/// The child, PID 1 of the new namespace; returns its exit code.
fn child(task: Task<'_>, status: OwnedFd) -> i32 {
    match task {
        Task::Given {
            policy,
            launch,
            env,
            cwd,
        } => run_child(policy, launch, env, cwd, status),
        Task::Job => {
            // Tied to the launcher before waiting: an unused launcher that is killed
            // takes this process with it.
            if let Err(message) = tie_to_parent() {
                return say(message, CANNOT_RUN);
            }
            let job = match launcher::accept_job() {
                Ok(job) => job,
                Err(failure) => return i32::from(failure.report()),
            };
            let (policy, launch) = match launcher::checked(&job.args) {
                Ok((policy, _)) if policy.namespaces != Namespaces::On => {
                    return say(
                        "this launcher was started for a policy with namespaces".into(),
                        CANNOT_RUN,
                    );
                }
                Ok(parsed) => parsed,
                Err(message) => return say(message, CANNOT_RUN),
            };
            run_child(
                &policy,
                &launch,
                Environment::Exactly(&job.env),
                &job.cwd,
                status,
            )
        }
    }
}

fn say(message: String, code: u8) -> i32 {
    launcher::say(&message);
    i32::from(code)
}

/// Builds the file system, confines itself and runs the command; its exit code.
fn run_child(
    policy: &SandboxPolicy,
    launch: &Launch,
    env: Environment<'_>,
    cwd: &Path,
    status: OwnedFd,
) -> i32 {
    if let Err(message) = prepare(policy, cwd) {
        return say(message, CANNOT_RUN);
    }
    let command = match launch {
        Launch::Probe => {
            // Reported like a command's end, so the parent need not wait for this
            // process to take the namespaces down.
            let _ = nix::unistd::write(&status, &Ending::Exited(0).encode());
            return 0;
        }
        Launch::Run(command) => command,
    };
    let mut started = std::process::Command::new(&command[0]);
    started.args(&command[1..]);
    env.apply(&mut started);
    let started = started.spawn();
    let command_pid = match started {
        Ok(child) => Pid::from_raw(i32::try_from(child.id()).unwrap_or(i32::MAX)),
        Err(e) => {
            let code = if e.kind() == std::io::ErrorKind::NotFound {
                NOT_FOUND
            } else {
                CANNOT_RUN
            };
            return say(format!("cannot start `{}`: {e}", show(&command[0])), code);
        }
    };
    quiet_stdio();
    reap(command_pid, status);
    0
}

fn show(program: &OsString) -> String {
    program.to_string_lossy().into_owned()
}

/// Everything between the fork and starting the command, in the child.
fn prepare(policy: &SandboxPolicy, cwd: &Path) -> Result<(), String> {
    tie_to_parent()?;
    unshare(CloneFlags::CLONE_NEWNS).map_err(|e| {
        format!("cannot build the sandbox's namespaces: unshare the mount namespace: {e}")
    })?;
    mounts::build(policy).map_err(|e| format!("cannot build the sandbox's file system: {e}"))?;
    nix::unistd::chdir(cwd)
        .map_err(|e| format!("cannot enter the working folder {}: {e}", cwd.display()))?;
    super::confine(policy).map_err(|e| format!("cannot confine the command: {e}"))
}

/// Dies with the launcher (until the command has ended), and unblocks the signals the
/// launcher blocked before the fork.
fn tie_to_parent() -> Result<(), String> {
    prctl::set_pdeathsig(Signal::SIGKILL)
        .map_err(|e| format!("cannot tie the sandbox to the launcher: {e}"))?;
    // The command inherits this mask: it gets every signal as it would outside. (This
    // process, PID 1 of its namespace, is sent none it has no handler for.)
    sigprocmask(SigmaskHow::SIG_SETMASK, Some(&SigSet::empty()), None)
        .map_err(|e| format!("cannot unblock signals: {e}"))
}

/// The child's own standard streams go to /dev/null once the command has them, so a
/// background job the command left behind is what holds harness9's pipes, not this.
fn quiet_stdio() {
    if let Ok(null) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/null")
    {
        let _ = nix::unistd::dup2_stdin(&null);
        let _ = nix::unistd::dup2_stdout(&null);
        let _ = nix::unistd::dup2_stderr(&null);
    }
}

/// Reaps every process in the namespace; reports the command's ending as soon as it
/// comes, and returns when no process is left.
fn reap(command: Pid, status: OwnedFd) {
    let mut status = Some(status);
    loop {
        let ending = match waitpid(None::<Pid>, None) {
            Ok(WaitStatus::Exited(pid, code)) if pid == command => Ending::Exited(code),
            Ok(WaitStatus::Signaled(pid, signal, _)) if pid == command => Ending::Killed(signal),
            Ok(_) | Err(Errno::EINTR) => continue,
            // ECHILD: nothing left.
            Err(_) => return,
        };
        // The parent may exit now; what the command left running may keep running.
        let _ = prctl::set_pdeathsig(None);
        if let Some(fd) = status.take() {
            let _ = nix::unistd::write(&fd, &ending.encode());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ending_survives_the_pipe() {
        for ending in [
            Ending::Exited(0),
            Ending::Exited(3),
            Ending::Exited(255),
            Ending::Killed(Signal::SIGTERM),
            Ending::Killed(Signal::SIGKILL),
        ] {
            assert_eq!(Ending::decode(ending.encode()), Some(ending));
        }
    }
}
