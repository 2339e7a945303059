//! The launcher: when harness9 is started as `harness9 __harness9-sandbox-exec --mode M
//! --network N --namespaces on|off --project P [--write PATH]... [--read-only PATH]...
//! [--mask PATH]... [--visible PATH]... -- PROGRAM ARGS...`, it confines itself with the
//! policy those arguments describe and runs PROGRAM: with namespaces, in a fresh user,
//! mount and PID namespace it builds first (waiting for PROGRAM and exiting as it did);
//! without, by replacing itself with PROGRAM after Landlock and seccomp. It runs before
//! anything else in `main` (no runtime, no config, no threads), and it never runs
//! PROGRAM less confined than asked: any failure prints one line to stderr and exits
//! 126. `__harness9-sandbox-exec --probe` builds the namespaces with an empty policy and
//! runs nothing (exit 0 when that worked): the session's start-up check.
//! `__harness9-sandbox-exec --job` reads the same arguments, with the command's working
//! folder, environment and streams, as a [`Job`] on stdin: a launcher a session started
//! ahead, so the command does not wait for the launcher's own start.
//!
//! It owns the launcher's argument format (written by
//! [`super::SandboxPolicy::launcher_args`]); it must not know why the command runs.

use std::ffi::OsString;
use std::path::PathBuf;

use super::job::{Job, JobError, JobStderr, JobStdin};
use super::{LAUNCHER_MARKER, Namespaces, Network, SandboxMode, SandboxPolicy};

/// The exit code when the command could not be confined or started (as shells use for
/// "found but cannot run").
pub const CANNOT_RUN: u8 = 126;
/// The exit code when the command does not exist (as shells use).
pub const NOT_FOUND: u8 = 127;

/// The argument that makes a launcher wait for its [`Job`] on stdin.
pub const JOB_FLAG: &str = "--job";
/// The same, for jobs whose policy asks for namespaces: the user and PID namespaces and
/// their first process are made before the job comes.
pub const JOB_IN_NAMESPACES_FLAG: &str = "--job-in-namespaces";

/// The environment the command gets.
#[derive(Debug, Clone, Copy)]
pub enum Environment<'a> {
    /// The launcher's own (a launcher started for the command inherits it).
    Inherited,
    /// Exactly these variables (a job's).
    Exactly(&'a [(OsString, OsString)]),
}

impl Environment<'_> {
    /// Gives `command` this environment.
    pub fn apply(self, command: &mut std::process::Command) {
        if let Environment::Exactly(vars) = self {
            command.env_clear();
            command.envs(vars.iter().map(|(name, value)| (name, value)));
        }
    }
}

/// What the launcher was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Launch {
    /// Run this program with these arguments.
    Run(Vec<OsString>),
    /// Build the namespaces, run nothing.
    Probe,
}

/// When the process was started as the launcher, confines it and runs the command;
/// returns the exit code (the command's, or the launcher's own when it could not run
/// it). `None`: this is not a launcher start.
pub fn run_if_requested() -> Option<u8> {
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() != Some(std::ffi::OsStr::new(LAUNCHER_MARKER)) {
        return None;
    }
    let rest: Vec<OsString> = args.collect();
    match rest.as_slice() {
        [flag] if flag == JOB_FLAG => Some(run_job()),
        [flag] if flag == JOB_IN_NAMESPACES_FLAG => Some(run_job_in_namespaces()),
        _ => Some(launch_with(&rest, Environment::Inherited)),
    }
}

/// Confines itself as `args` say and runs the command with `env`; the exit code.
fn launch_with(args: &[OsString], env: Environment<'_>) -> u8 {
    let (message, code) = match checked(args) {
        Ok((policy, launch)) => match run(&policy, &launch, env) {
            Ok(code) => return code,
            Err(failure) => failure,
        },
        Err(message) => (message, CANNOT_RUN),
    };
    say(&message);
    code
}

/// The policy and the launch `args` describe, when this launcher may run them.
pub(super) fn checked(args: &[OsString]) -> Result<(SandboxPolicy, Launch), String> {
    let parsed = parse(args)?;
    if std::env::var_os("HARNESS9_SANDBOX_UNAVAILABLE").is_some_and(|v| v == "1") {
        return Err("the sandbox is not available (HARNESS9_SANDBOX_UNAVAILABLE is set)".into());
    }
    Ok(parsed)
}

/// One line on stderr, as every launcher failure is told.
pub(super) fn say(message: &str) {
    crate::sink::stderr_line(&format!("harness9 sandbox: {message}"));
}

/// `--job`: waits for one [`Job`] on stdin, then launches as a launcher started with its
/// arguments would.
fn run_job() -> u8 {
    match accept_job() {
        Ok(job) => launch_with(&job.args, Environment::Exactly(&job.env)),
        Err(failure) => failure.report(),
    }
}

/// `--job-in-namespaces`: builds the user and PID namespaces and forks their first
/// process now, which then waits for one [`Job`] on stdin and runs it there (its policy
/// must ask for namespaces). Nothing else is prepared ahead: the mount namespace, the
/// file system and the confinement are made for the job, from its policy.
fn run_job_in_namespaces() -> u8 {
    match job_in_namespaces() {
        Ok(code) => code,
        // Failed before the namespaces' first process existed: tell it where the job
        // says the command's stderr goes.
        Err((message, code)) => match accept_job() {
            Ok(_) => {
                say(&message);
                code
            }
            Err(failure) => failure.report(),
        },
    }
}

#[cfg(target_os = "linux")]
fn job_in_namespaces() -> Result<u8, (String, u8)> {
    super::linux::run_job()
}

#[cfg(not(target_os = "linux"))]
fn job_in_namespaces() -> Result<u8, (String, u8)> {
    Err(("the sandbox is only available on Linux".into(), CANNOT_RUN))
}

/// Why no job could be taken.
#[derive(Debug)]
pub(super) enum NoJob {
    /// Nothing came: the session let this launcher go unused.
    Released,
    /// What went wrong.
    Failed(String),
}

impl NoJob {
    /// Says what went wrong (nothing when released); the exit code.
    pub(super) fn report(self) -> u8 {
        if let NoJob::Failed(message) = self {
            say(&message);
        }
        CANNOT_RUN
    }
}

/// Reads the job on stdin and takes its streams and working folder: from here on this
/// process's stdin, stderr and folder are the command's.
pub(super) fn accept_job() -> Result<Job, NoJob> {
    use std::os::fd::AsFd;
    let job = std::io::stdin()
        .as_fd()
        .try_clone_to_owned()
        .map_err(JobError::Io)
        .and_then(|fd| Job::read(&mut std::fs::File::from(fd)));
    let job = match job {
        Ok(job) => job,
        Err(JobError::NoJob) => return Err(NoJob::Released),
        Err(e) => return Err(NoJob::Failed(e.to_string())),
    };
    take_streams(&job).map_err(NoJob::Failed)?;
    std::env::set_current_dir(&job.cwd).map_err(|e| {
        NoJob::Failed(format!(
            "cannot enter the working folder {}: {e}",
            job.cwd.display()
        ))
    })?;
    Ok(job)
}

/// Sets this process's standard streams as the job says (its children inherit them):
/// stderr onto stdout, stdin from `/dev/null`.
fn take_streams(job: &Job) -> Result<(), String> {
    if job.stderr == JobStderr::IntoStdout {
        nix::unistd::dup2_stderr(std::io::stdout())
            .map_err(|e| format!("cannot send stderr to stdout: {e}"))?;
    }
    if job.stdin == JobStdin::Null {
        let null =
            std::fs::File::open("/dev/null").map_err(|e| format!("cannot open /dev/null: {e}"))?;
        nix::unistd::dup2_stdin(&null).map_err(|e| format!("cannot read from /dev/null: {e}"))?;
    }
    Ok(())
}

/// The policy the probe builds: nothing writable, nothing masked, namespaces on.
fn probe_policy() -> SandboxPolicy {
    SandboxPolicy {
        mode: SandboxMode::ReadOnly,
        project: PathBuf::from("/"),
        writable: Vec::new(),
        read_only: Vec::new(),
        masked: Vec::new(),
        visible: Vec::new(),
        network: Network::Deny,
        namespaces: Namespaces::On,
        secrets_root: PathBuf::from("/"),
    }
}

/// The policy and what to do, from the launcher's arguments.
pub fn parse(args: &[OsString]) -> Result<(SandboxPolicy, Launch), String> {
    if args.len() == 1 && args[0] == "--probe" {
        return Ok((probe_policy(), Launch::Probe));
    }
    let mut mode = None;
    let mut project = None;
    let mut policy = probe_policy();
    policy.namespaces = Namespaces::Off;
    let mut i = 0;
    while i < args.len() {
        let flag = args[i].to_string_lossy();
        let value = args.get(i + 1);
        match (flag.as_ref(), value) {
            ("--", _) => {
                let command = args[i + 1..].to_vec();
                if command.is_empty() {
                    return Err("no command after `--`".into());
                }
                policy.mode = mode.ok_or("no --mode given")?;
                policy.project = project.ok_or("no --project given")?;
                // The launcher masks what `--mask` names; it walks for nothing itself.
                policy.secrets_root = policy.project.clone();
                return Ok((policy, Launch::Run(command)));
            }
            ("--mode", Some(v)) => {
                mode = Some(match v.to_string_lossy().as_ref() {
                    "read-only" => SandboxMode::ReadOnly,
                    "workspace-write" => SandboxMode::WorkspaceWrite,
                    other => return Err(format!("unknown mode `{other}`")),
                });
            }
            ("--network", Some(v)) => {
                policy.network = match v.to_string_lossy().as_ref() {
                    "deny" => Network::Deny,
                    "allow" => Network::Allow,
                    other => return Err(format!("unknown network setting `{other}`")),
                };
            }
            ("--namespaces", Some(v)) => {
                policy.namespaces = match v.to_string_lossy().as_ref() {
                    "on" => Namespaces::On,
                    "off" => Namespaces::Off,
                    other => return Err(format!("unknown namespaces setting `{other}`")),
                };
            }
            ("--project", Some(v)) => project = Some(absolute(v)?),
            ("--write", Some(v)) => policy.writable.push(absolute(v)?),
            ("--read-only", Some(v)) => policy.read_only.push(absolute(v)?),
            ("--mask", Some(v)) => policy.masked.push(absolute(v)?),
            ("--visible", Some(v)) => policy.visible.push(absolute(v)?),
            (other, _) => return Err(format!("unexpected launcher argument `{other}`")),
        }
        i += 2;
    }
    Err("no `--` before the command".into())
}

/// Paths are bound and masked as given: a relative one would depend on the folder the
/// command starts in.
fn absolute(value: &OsString) -> Result<PathBuf, String> {
    let path = PathBuf::from(value);
    if path.is_absolute() {
        Ok(path)
    } else {
        Err(format!("path `{}` is not absolute", path.display()))
    }
}

#[cfg(target_os = "linux")]
fn run(policy: &SandboxPolicy, launch: &Launch, env: Environment<'_>) -> Result<u8, (String, u8)> {
    super::linux::launch(policy, launch, env)
}

#[cfg(not(target_os = "linux"))]
fn run(
    _policy: &SandboxPolicy,
    _launch: &Launch,
    _env: Environment<'_>,
) -> Result<u8, (String, u8)> {
    Err(("the sandbox is only available on Linux".into(), CANNOT_RUN))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn what_policy_args_write_the_launcher_reads_back() {
        let mut policy = SandboxPolicy::new(
            SandboxMode::WorkspaceWrite,
            std::path::Path::new("/p"),
            &[PathBuf::from("/x y")],
            Network::Allow,
        );
        policy.masked = vec![PathBuf::from("/home/u/.ssh")];
        policy.visible = vec![PathBuf::from("/home/u/.harness9/skills")];
        for namespaces in [Namespaces::On, Namespaces::Off] {
            let policy = policy.clone().with_namespaces(namespaces);
            let mut args = policy.launcher_args();
            args.remove(0);
            args.extend(os(&["--", "bash", "-c", "echo hi"]));
            let (read, launch) = parse(&args).unwrap();
            assert_eq!(read, policy);
            assert_eq!(launch, Launch::Run(os(&["bash", "-c", "echo hi"])));
        }
        assert_eq!(parse(&os(&["--probe"])).unwrap().1, Launch::Probe);
    }

    #[test]
    fn malformed_launcher_arguments_are_refused() {
        for bad in [
            &["--mode", "workspace-write", "--project", "/p"][..],
            &["--mode", "sideways", "--project", "/p", "--", "ls"],
            &["--project", "/p", "--", "ls"],
            &["--mode", "read-only", "--", "ls"],
            &["--mode", "read-only", "--project", "/p", "--"],
            &["--bogus", "x", "--", "ls"],
            &["--mode", "read-only", "--project", "p", "--", "ls"],
            &[
                "--mode",
                "read-only",
                "--project",
                "/p",
                "--mask",
                "rel",
                "--",
                "ls",
            ],
            &[
                "--mode",
                "read-only",
                "--project",
                "/p",
                "--namespaces",
                "maybe",
                "--",
                "ls",
            ],
            &["--probe", "--", "ls"],
        ] {
            assert!(parse(&os(bad)).is_err(), "{bad:?}");
        }
    }
}
