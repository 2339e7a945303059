//! Confining a command on Linux. With namespaces (`namespaces`, `mounts`, `mountinfo`),
//! the command runs in a read-only file system with masks and a fresh `/proc`; in every
//! case the process that starts it confines itself last ([`confine`]): root keeps only
//! the capabilities that concern file ownership (no `CAP_SETFCAP`, `CAP_SYS_ADMIN`, …);
//! a Landlock ruleset allows reading and executing everywhere, writing beneath the
//! policy's paths and `/dev/null` (and the sandbox's private `/dev/pts`), refuses TCP
//! bind and connect where the kernel handles them, and scopes abstract Unix sockets and
//! signals to the sandbox where it can; and the seccomp filters (`seccomp`) refuse what
//! could undo the rest. Each refused call fails with EPERM.
//!
//! Only the launcher calls [`launch`], in its single thread. It must not know what runs
//! afterwards.

mod mountinfo;
mod mounts;
mod namespaces;
mod seccomp;

use std::os::unix::process::CommandExt;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
};

use super::launcher::{CANNOT_RUN, Environment, Launch, NOT_FOUND};
use super::{Availability, Namespaces, Network, SandboxPolicy};

/// The newest Landlock ABI this code asks for; older kernels get what they support.
const WANTED: ABI = ABI::V6;

/// Why a command could not be confined.
#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    /// Landlock refused the ruleset.
    #[error("Landlock: {0}")]
    Landlock(#[from] landlock::RulesetError),
    /// The kernel enforced nothing.
    #[error("the kernel did not enforce the Landlock ruleset (is Landlock enabled?)")]
    NotEnforced,
    /// The seccomp filter could not be installed.
    #[error("seccomp: {0}")]
    Seccomp(#[from] seccompiler::Error),
    /// The seccomp filter's jumps do not fit (a table grown past what one program holds).
    #[error("seccomp: the filter is too long for its jumps")]
    FilterTooLong,
    /// No seccomp filter can be built for this CPU.
    #[error("harness9's seccomp filter does not support this CPU architecture ({0})")]
    UnsupportedArch(&'static str),
    /// A capability could not be dropped.
    #[error("cannot drop root's capabilities: {0}")]
    Capabilities(#[source] std::io::Error),
}

/// A `/proc` file's text, read in as few calls as it allows: `/proc` files report no
/// size, so `read_to_string` would start with a 32-byte read and grow from there, each
/// read making the kernel produce the text again up to where it stopped.
fn read_proc(path: &str) -> std::io::Result<String> {
    use std::io::Read;
    let mut text = String::with_capacity(16 * 1024);
    std::fs::File::open(path)?.read_to_string(&mut text)?;
    Ok(text)
}

/// Whether Landlock confines file system access here.
pub fn availability() -> Availability {
    if !seccomp::supported() {
        return Availability::Unavailable {
            reason: format!(
                "harness9's seccomp filter does not support this CPU architecture ({})",
                std::env::consts::ARCH
            ),
        };
    }
    let probe = Ruleset::default()
        .set_compatibility(CompatLevel::HardRequirement)
        .handle_access(AccessFs::from_all(ABI::V1))
        .and_then(|ruleset| ruleset.create());
    match probe {
        Ok(_) => Availability::Available,
        Err(e) => Availability::Unavailable {
            reason: format!("this Linux kernel does not offer Landlock ({e})"),
        },
    }
}

/// What the system says about unprivileged user namespaces, when it restricts them: a
/// hint for the start-up warning.
pub fn userns_restriction() -> Option<String> {
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .ok()
            .map(|v| v.trim().to_string())
    };
    if read("/proc/sys/kernel/apparmor_restrict_unprivileged_userns").as_deref() == Some("1") {
        return Some(
            "AppArmor restricts unprivileged user namespaces \
             (kernel.apparmor_restrict_unprivileged_userns = 1)"
                .into(),
        );
    }
    if read("/proc/sys/kernel/unprivileged_userns_clone").as_deref() == Some("0") {
        return Some("kernel.unprivileged_userns_clone = 0".into());
    }
    if read("/proc/sys/user/max_user_namespaces").as_deref() == Some("0") {
        return Some("user.max_user_namespaces = 0".into());
    }
    None
}

/// Builds the user and PID namespaces and forks their first process, which waits for a
/// job on stdin and runs it (see [`namespaces::run_job`]); the exit code.
pub fn run_job() -> Result<u8, (String, u8)> {
    namespaces::run_job()
}

/// Runs `launch` under `policy`; returns the command's exit code (with namespaces, the
/// launcher waits for it), or never returns (without, it becomes the command).
pub fn launch(
    policy: &SandboxPolicy,
    launch: &Launch,
    env: Environment<'_>,
) -> Result<u8, (String, u8)> {
    match (policy.namespaces, launch) {
        (Namespaces::On, _) => namespaces::run(policy, launch, env),
        (Namespaces::Off, Launch::Probe) => Ok(0),
        (Namespaces::Off, Launch::Run(command)) => {
            confine(policy)
                .map_err(|e| (format!("cannot confine the command: {e}"), CANNOT_RUN))?;
            let mut started = std::process::Command::new(&command[0]);
            started.args(&command[1..]);
            env.apply(&mut started);
            let error = started.exec();
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
    }
}

/// Confines the calling thread (and what it starts) to `policy`: capabilities, then
/// Landlock, then seccomp.
pub fn confine(policy: &SandboxPolicy) -> Result<(), ConfineError> {
    drop_capabilities()?;
    let mut ruleset = Ruleset::default().handle_access(AccessFs::from_all(WANTED))?;
    if policy.network == Network::Deny {
        ruleset = ruleset.handle_access(AccessNet::from_all(WANTED))?;
    }
    let ruleset = ruleset.scope(Scope::AbstractUnixSocket | Scope::Signal)?;
    // With namespaces, /dev/pts is the sandbox's own instance: ptys work inside and
    // reach no terminal outside.
    let private_ptys: &[&str] = match policy.namespaces {
        Namespaces::On => &["/dev/pts", "/dev/ptmx"],
        Namespaces::Off => &[],
    };
    let status = ruleset
        .create()?
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(WANTED)))?
        .add_rules(path_beneath_rules(
            ["/dev/null"],
            AccessFs::from_all(WANTED),
        ))?
        .add_rules(path_beneath_rules(private_ptys, AccessFs::from_all(WANTED)))?
        .add_rules(path_beneath_rules(
            &policy.writable,
            AccessFs::from_all(WANTED),
        ))?
        .restrict_self()?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(ConfineError::NotEnforced);
    }
    // Landlock's restrict_self set no_new_privs, which installing a filter needs.
    seccompiler::apply_filter(&seccomp::program(policy.network)?)?;
    Ok(())
}

/// For root: empties the capability bounding set but for the capabilities that concern
/// file ownership and permissions (what root's tools expect on its own files), so the
/// command gets no other one when it starts: no `CAP_SETFCAP` (file capabilities that
/// would work outside), no `CAP_SYS_ADMIN`, `CAP_SYS_PTRACE`, `CAP_NET_*`…. Other users
/// get no capability from `exec` anyway (no_new_privs).
fn drop_capabilities() -> Result<(), ConfineError> {
    use rustix::thread::{CapabilitySet, remove_capability_from_bounding_set};
    if !nix::unistd::geteuid().is_root() {
        return Ok(());
    }
    let keep = CapabilitySet::CHOWN
        | CapabilitySet::DAC_OVERRIDE
        | CapabilitySet::DAC_READ_SEARCH
        | CapabilitySet::FOWNER;
    for bit in 0..64u32 {
        let capability = CapabilitySet::from_bits_retain(1u64 << bit);
        if keep.contains(capability) {
            continue;
        }
        match remove_capability_from_bounding_set(capability) {
            Ok(()) => {}
            // Past the last capability this kernel knows.
            Err(rustix::io::Errno::INVAL) => break,
            Err(e) => return Err(ConfineError::Capabilities(e.into())),
        }
    }
    rustix::thread::clear_ambient_capability_set().map_err(|e| ConfineError::Capabilities(e.into()))
}
