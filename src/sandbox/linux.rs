//! Confining the calling thread on Linux: a Landlock ruleset (read and execute
//! everywhere, write beneath the policy's paths and `/dev/null`, TCP bind and connect
//! refused where the kernel handles them, abstract Unix sockets and signals scoped to
//! the sandbox where it can) and, when the network is denied, a seccomp filter that
//! makes `socket()` fail with EPERM for every family but `AF_UNIX` and refuses
//! `io_uring_setup` (whose operations would bypass the socket check).
//!
//! Only the launcher calls [`confine`], in its single thread, right before `exec`. It must
//! not know what runs afterwards.

use std::collections::BTreeMap;

use landlock::{
    ABI, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope, path_beneath_rules,
};
use seccompiler::{
    SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    TargetArch,
};

use super::{Availability, Network, SandboxPolicy};

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
    /// The seccomp filter could not be built or installed.
    #[error("seccomp: {0}")]
    Seccomp(#[from] seccompiler::Error),
    /// The seccomp filter could not be built.
    #[error("seccomp: {0}")]
    SeccompBackend(#[from] seccompiler::BackendError),
    /// No seccomp filter exists for this CPU, so the network cannot be denied.
    #[error(
        "cannot deny the network on this CPU architecture ({0}); set network = \"allow\" under \
         [sandbox] in config.toml or use --sandbox off"
    )]
    UnsupportedArch(&'static str),
}

/// Whether Landlock confines file system access here.
pub fn availability() -> Availability {
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

/// Confines the calling thread (and what it `exec`s) to `policy`.
pub fn confine(policy: &SandboxPolicy) -> Result<(), ConfineError> {
    let mut ruleset = Ruleset::default().handle_access(AccessFs::from_all(WANTED))?;
    if policy.network == Network::Deny {
        ruleset = ruleset.handle_access(AccessNet::from_all(WANTED))?;
    }
    let ruleset = ruleset.scope(Scope::AbstractUnixSocket | Scope::Signal)?;
    let status = ruleset
        .create()?
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(WANTED)))?
        .add_rules(path_beneath_rules(
            ["/dev/null"],
            AccessFs::from_all(WANTED),
        ))?
        .add_rules(path_beneath_rules(
            &policy.writable,
            AccessFs::from_all(WANTED),
        ))?
        .restrict_self()?;
    if status.ruleset == RulesetStatus::NotEnforced {
        return Err(ConfineError::NotEnforced);
    }
    if policy.network == Network::Deny {
        deny_sockets()?;
    }
    Ok(())
}

fn deny_sockets() -> Result<(), ConfineError> {
    let arch = match std::env::consts::ARCH {
        "x86_64" => TargetArch::x86_64,
        "aarch64" => TargetArch::aarch64,
        "riscv64" => TargetArch::riscv64,
        other => return Err(ConfineError::UnsupportedArch(other)),
    };
    let not_unix = SeccompRule::new(vec![SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Ne,
        libc::AF_UNIX as u64,
    )?])?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    rules.insert(libc::SYS_socket, vec![not_unix]);
    // An empty rule list matches every call.
    rules.insert(libc::SYS_io_uring_setup, vec![]);
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )?;
    let program: seccompiler::BpfProgram = filter.try_into()?;
    // Landlock's restrict_self set no_new_privs, which installing a filter needs.
    seccompiler::apply_filter(&program)?;
    Ok(())
}
