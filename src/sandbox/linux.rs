//! Confining the calling thread on Linux: a Landlock ruleset (read and execute
//! everywhere, write beneath the policy's paths and `/dev/null`, TCP bind and connect
//! refused where the kernel handles them, abstract Unix sockets and signals scoped to
//! the sandbox where it can) and a seccomp filter: always refusing io_uring (its
//! operations would pass the other checks), kernel modules, kexec, bpf and the
//! `TIOCSTI`/`TIOCLINUX` ioctls (typing into the user's terminal), and, when the network
//! is denied, making `socket()` fail with EPERM for every family but `AF_UNIX`. Each
//! refused call fails with EPERM, also through the x32 ABI on x86_64.
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
    /// No seccomp filter can be built for this CPU.
    #[error("harness9's seccomp filter does not support this CPU architecture ({0})")]
    UnsupportedArch(&'static str),
}

/// Whether Landlock confines file system access here.
pub fn availability() -> Availability {
    if target_arch().is_err() {
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
    // Landlock's restrict_self set no_new_privs, which installing a filter needs.
    seccompiler::apply_filter(&filter(policy.network)?)?;
    Ok(())
}

fn target_arch() -> Result<TargetArch, ConfineError> {
    match std::env::consts::ARCH {
        "x86_64" => Ok(TargetArch::x86_64),
        "aarch64" => Ok(TargetArch::aarch64),
        "riscv64" => Ok(TargetArch::riscv64),
        other => Err(ConfineError::UnsupportedArch(other)),
    }
}

// The ioctl request's type differs between C libraries (c_ulong or c_int).
#[allow(clippy::unnecessary_cast)]
const TIOCSTI: u64 = libc::TIOCSTI as u64;
#[allow(clippy::unnecessary_cast)]
const TIOCLINUX: u64 = libc::TIOCLINUX as u64;

/// x32 system calls on x86_64 carry this bit in their number.
const X32_SYSCALL_BIT: i64 = 0x4000_0000;

/// The seccomp program: the listed calls fail with EPERM, everything else is allowed.
fn filter(network: Network) -> Result<seccompiler::BpfProgram, ConfineError> {
    let arch = target_arch()?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    // An empty rule list matches every call.
    for call in [
        libc::SYS_io_uring_setup,
        libc::SYS_io_uring_enter,
        libc::SYS_io_uring_register,
        libc::SYS_init_module,
        libc::SYS_finit_module,
        libc::SYS_delete_module,
        libc::SYS_kexec_load,
        libc::SYS_kexec_file_load,
        libc::SYS_bpf,
    ] {
        rules.insert(call, Vec::new());
    }
    let request_is = |request: u64| -> Result<SeccompRule, ConfineError> {
        Ok(SeccompRule::new(vec![SeccompCondition::new(
            1,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Eq,
            request,
        )?])?)
    };
    rules.insert(
        libc::SYS_ioctl,
        vec![request_is(TIOCSTI)?, request_is(TIOCLINUX)?],
    );
    if network == Network::Deny {
        let not_unix = SeccompRule::new(vec![SeccompCondition::new(
            0,
            SeccompCmpArgLen::Dword,
            SeccompCmpOp::Ne,
            libc::AF_UNIX as u64,
        )?])?;
        rules.insert(libc::SYS_socket, vec![not_unix]);
    }
    if arch == TargetArch::x86_64 {
        // The same calls through the x32 ABI, where a kernel offers it (x32 ioctl takes
        // another number, and its arguments are the same).
        let x32: Vec<(i64, Vec<SeccompRule>)> = rules
            .iter()
            .filter(|(call, _)| **call != libc::SYS_ioctl)
            .map(|(call, chain)| (call | X32_SYSCALL_BIT, chain.clone()))
            .collect();
        rules.extend(x32);
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )?;
    Ok(filter.try_into()?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_builds_for_both_network_settings() {
        assert!(!filter(Network::Deny).unwrap().is_empty());
        assert!(!filter(Network::Allow).unwrap().is_empty());
    }
}
