//! The launcher: when harness9 is started as `harness9 __harness9-sandbox-exec --mode M
//! --network N [--write PATH]... -- PROGRAM ARGS...`, it confines its own (single)
//! thread with the policy those arguments describe and replaces itself with PROGRAM.
//! It runs before anything else in `main` (no runtime, no config, no threads), and it
//! never runs PROGRAM unconfined: any failure prints one line to stderr and exits 126.
//!
//! It owns the launcher's argument format (written by
//! [`super::SandboxPolicy::launcher_args`]); it must not know why the command runs.

use std::ffi::OsString;
use std::path::PathBuf;

use super::{LAUNCHER_MARKER, Network, SandboxMode, SandboxPolicy};

/// The exit code when the command could not be confined or started (as shells use for
/// "found but cannot run").
pub const CANNOT_RUN: u8 = 126;
/// The exit code when the command does not exist (as shells use).
pub const NOT_FOUND: u8 = 127;

/// When the process was started as the launcher, confines it and runs the command
/// (never returning on success); returns the exit code when that failed. `None`: this
/// is not a launcher start.
pub fn run_if_requested() -> Option<u8> {
    let mut args = std::env::args_os().skip(1);
    if args.next().as_deref() != Some(std::ffi::OsStr::new(LAUNCHER_MARKER)) {
        return None;
    }
    let rest: Vec<OsString> = args.collect();
    let (message, code) = match parse(&rest) {
        Ok((policy, command)) => match confine_and_exec(&policy, &command) {
            Ok(never) => match never {},
            Err(failure) => failure,
        },
        Err(message) => (message, CANNOT_RUN),
    };
    crate::sink::stderr_line(&format!("harness9 sandbox: {message}"));
    Some(code)
}

/// The policy and the command from the launcher's arguments.
pub fn parse(args: &[OsString]) -> Result<(SandboxPolicy, Vec<OsString>), String> {
    let mut mode = None;
    let mut network = Network::Deny;
    let mut writable = Vec::new();
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
                let mode = mode.ok_or("no --mode given")?;
                return Ok((
                    SandboxPolicy {
                        mode,
                        writable,
                        network,
                    },
                    command,
                ));
            }
            ("--mode", Some(v)) => {
                mode = Some(match v.to_string_lossy().as_ref() {
                    "read-only" => SandboxMode::ReadOnly,
                    "workspace-write" => SandboxMode::WorkspaceWrite,
                    other => return Err(format!("unknown mode `{other}`")),
                });
            }
            ("--network", Some(v)) => {
                network = match v.to_string_lossy().as_ref() {
                    "deny" => Network::Deny,
                    "allow" => Network::Allow,
                    other => return Err(format!("unknown network setting `{other}`")),
                };
            }
            ("--write", Some(v)) => writable.push(PathBuf::from(v)),
            (other, _) => return Err(format!("unexpected launcher argument `{other}`")),
        }
        i += 2;
    }
    Err("no `--` before the command".into())
}

#[cfg(target_os = "linux")]
fn confine_and_exec(
    policy: &SandboxPolicy,
    command: &[OsString],
) -> Result<std::convert::Infallible, (String, u8)> {
    use std::os::unix::process::CommandExt;
    super::linux::confine(policy)
        .map_err(|e| (format!("cannot confine the command: {e}"), CANNOT_RUN))?;
    let error = std::process::Command::new(&command[0])
        .args(&command[1..])
        .exec();
    let code = if error.kind() == std::io::ErrorKind::NotFound {
        NOT_FOUND
    } else {
        CANNOT_RUN
    };
    Err((
        format!("cannot start `{}`: {error}", command[0].to_string_lossy()),
        code,
    ))
}

#[cfg(not(target_os = "linux"))]
fn confine_and_exec(
    _policy: &SandboxPolicy,
    _command: &[OsString],
) -> Result<std::convert::Infallible, (String, u8)> {
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
        let policy = SandboxPolicy::new(
            SandboxMode::WorkspaceWrite,
            std::path::Path::new("/p"),
            &[PathBuf::from("/x y")],
            Network::Allow,
        );
        let mut args = policy.launcher_args();
        args.remove(0);
        args.extend(os(&["--", "bash", "-c", "echo hi"]));
        let (read, command) = parse(&args).unwrap();
        assert_eq!(read, policy);
        assert_eq!(command, os(&["bash", "-c", "echo hi"]));
    }

    #[test]
    fn malformed_launcher_arguments_are_refused() {
        for bad in [
            &["--mode", "workspace-write"][..],
            &["--mode", "sideways", "--", "ls"],
            &["--", "ls"],
            &["--mode", "read-only", "--"],
            &["--bogus", "x", "--", "ls"],
        ] {
            assert!(parse(&os(bad)).is_err(), "{bad:?}");
        }
    }
}
