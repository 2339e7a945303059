//! The seccomp filters every confined command runs under (built with `seccompiler`, no
//! C library). The first makes these calls fail with EPERM:
//!
//! - io_uring (its operations would pass the other checks), kernel modules, kexec, bpf,
//!   and `open_by_handle_at` (opening a file by handle skips the paths the other layers
//!   judge);
//! - the `TIOCSTI` and `TIOCLINUX` ioctls (typing into the user's terminal);
//! - everything that changes mounts or namespaces: `mount`, `umount2`, `pivot_root`,
//!   `chroot`, `unshare`, `setns`, the new mount API (`fsopen`, `fsconfig`, `fsmount`,
//!   `fspick`, `move_mount`, `open_tree`, `mount_setattr`), and `clone` with any
//!   `CLONE_NEW*` flag, so a command cannot lift a mask or a read-only bind, even as root
//!   in its user namespace;
//! - the kernel keyring (`add_key`, `request_key`, `keyctl`: it holds the user's keys);
//! - setting a set-user-ID or set-group-ID bit: `chmod`, `fchmod`, `fchmodat`,
//!   `fchmodat2`, and creating a file with one (`open`, `openat` and `creat` with
//!   `O_CREAT` or `O_TMPFILE`, `mknod`, `mknodat`), compared on the mode argument's
//!   bits, so nothing planted in a writable folder grants privileges outside;
//! - with the network denied, `socket()` for every family but `AF_UNIX`.
//!
//! The second makes `clone3` and `openat2` fail with ENOSYS (their flags and mode are
//! behind a pointer the filter cannot read), so C libraries fall back to `clone` and
//! `openat`, which the first filter reads. On x86_64 the same calls through the x32 ABI
//! are refused too.
//!
//! It knows system calls; it must not know why a command runs.

use std::collections::BTreeMap;

use seccompiler::{
    SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter, SeccompRule,
    TargetArch,
};

use super::ConfineError;
use crate::sandbox::Network;

// The ioctl request's type differs between C libraries (c_ulong or c_int).
#[allow(clippy::unnecessary_cast)]
const TIOCSTI: u64 = libc::TIOCSTI as u64;
#[allow(clippy::unnecessary_cast)]
const TIOCLINUX: u64 = libc::TIOCLINUX as u64;

/// x32 system calls on x86_64 carry this bit in their number.
const X32_SYSCALL_BIT: i64 = 0x4000_0000;

/// The set-ID bits of a mode.
#[allow(clippy::unnecessary_cast)]
const SET_ID_BITS: [u64; 2] = [libc::S_ISUID as u64, libc::S_ISGID as u64];

/// The flags that make `clone` create a namespace.
const NAMESPACE_FLAGS: [i32; 7] = [
    libc::CLONE_NEWNS,
    libc::CLONE_NEWCGROUP,
    libc::CLONE_NEWUTS,
    libc::CLONE_NEWIPC,
    libc::CLONE_NEWUSER,
    libc::CLONE_NEWPID,
    libc::CLONE_NEWNET,
];

/// Calls refused whatever their arguments.
const ALWAYS_REFUSED: &[i64] = &[
    libc::SYS_io_uring_setup,
    libc::SYS_io_uring_enter,
    libc::SYS_io_uring_register,
    libc::SYS_init_module,
    libc::SYS_finit_module,
    libc::SYS_delete_module,
    libc::SYS_kexec_load,
    libc::SYS_kexec_file_load,
    libc::SYS_bpf,
    libc::SYS_open_by_handle_at,
    libc::SYS_mount,
    libc::SYS_umount2,
    libc::SYS_pivot_root,
    libc::SYS_chroot,
    libc::SYS_unshare,
    libc::SYS_setns,
    libc::SYS_fsopen,
    libc::SYS_fsconfig,
    libc::SYS_fsmount,
    libc::SYS_fspick,
    libc::SYS_move_mount,
    libc::SYS_open_tree,
    libc::SYS_mount_setattr,
    libc::SYS_add_key,
    libc::SYS_request_key,
    libc::SYS_keyctl,
];

/// `fchmodat2` (Linux 6.6), numbered alike on every architecture harness9 supports.
const SYS_FCHMODAT2: i64 = 452;

pub fn target_arch() -> Result<TargetArch, ConfineError> {
    match std::env::consts::ARCH {
        "x86_64" => Ok(TargetArch::x86_64),
        "aarch64" => Ok(TargetArch::aarch64),
        "riscv64" => Ok(TargetArch::riscv64),
        other => Err(ConfineError::UnsupportedArch(other)),
    }
}

fn condition(arg: u8, op: SeccompCmpOp, value: u64) -> Result<SeccompCondition, ConfineError> {
    Ok(SeccompCondition::new(
        arg,
        SeccompCmpArgLen::Dword,
        op,
        value,
    )?)
}

/// A rule matching when `bit` is set in argument `arg`.
fn has_bit(arg: u8, bit: u64) -> Result<SeccompCondition, ConfineError> {
    condition(arg, SeccompCmpOp::MaskedEq(bit), bit)
}

/// Rules matching a mode argument `mode_arg` with a set-ID bit.
fn set_id_mode(mode_arg: u8) -> Result<Vec<SeccompRule>, ConfineError> {
    SET_ID_BITS
        .iter()
        .map(|bit| Ok(SeccompRule::new(vec![has_bit(mode_arg, *bit)?])?))
        .collect()
}

/// Rules matching an open with `O_CREAT` or `O_TMPFILE` (flags in `flags_arg`) and a
/// set-ID bit in its mode (`mode_arg`).
fn set_id_creation(flags_arg: u8, mode_arg: u8) -> Result<Vec<SeccompRule>, ConfineError> {
    #[allow(clippy::unnecessary_cast)]
    let creating = [libc::O_CREAT as u64, libc::O_TMPFILE as u64];
    let mut rules = Vec::new();
    for flag in creating {
        for bit in SET_ID_BITS {
            rules.push(SeccompRule::new(vec![
                has_bit(flags_arg, flag)?,
                has_bit(mode_arg, bit)?,
            ])?);
        }
    }
    Ok(rules)
}

/// Builds the two programs (see the module's documentation).
pub fn filters(network: Network) -> Result<Vec<seccompiler::BpfProgram>, ConfineError> {
    let arch = target_arch()?;
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    // An empty rule list matches every call.
    for call in ALWAYS_REFUSED {
        rules.insert(*call, Vec::new());
    }
    let request_is = |request: u64| -> Result<SeccompRule, ConfineError> {
        Ok(SeccompRule::new(vec![condition(
            1,
            SeccompCmpOp::Eq,
            request,
        )?])?)
    };
    rules.insert(
        libc::SYS_ioctl,
        vec![request_is(TIOCSTI)?, request_is(TIOCLINUX)?],
    );
    rules.insert(
        libc::SYS_clone,
        NAMESPACE_FLAGS
            .iter()
            .map(|flag| {
                #[allow(clippy::cast_sign_loss)]
                let flag = *flag as u64;
                Ok(SeccompRule::new(vec![has_bit(0, flag)?])?)
            })
            .collect::<Result<_, ConfineError>>()?,
    );
    rules.insert(libc::SYS_fchmod, set_id_mode(1)?);
    rules.insert(libc::SYS_fchmodat, set_id_mode(2)?);
    rules.insert(SYS_FCHMODAT2, set_id_mode(2)?);
    rules.insert(libc::SYS_openat, set_id_creation(2, 3)?);
    rules.insert(libc::SYS_mknodat, set_id_mode(2)?);
    legacy_calls(&mut rules)?;
    if network == Network::Deny {
        let not_unix =
            SeccompRule::new(vec![condition(0, SeccompCmpOp::Ne, libc::AF_UNIX as u64)?])?;
        rules.insert(libc::SYS_socket, vec![not_unix]);
    }
    let mut missing: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    missing.insert(libc::SYS_clone3, Vec::new());
    missing.insert(libc::SYS_openat2, Vec::new());
    if arch == TargetArch::x86_64 {
        with_x32(&mut rules);
        with_x32(&mut missing);
    }
    let refuse = |rules, errno: i32| -> Result<seccompiler::BpfProgram, ConfineError> {
        #[allow(clippy::cast_sign_loss)]
        let errno = errno as u32;
        Ok(SeccompFilter::new(
            rules,
            SeccompAction::Allow,
            SeccompAction::Errno(errno),
            arch,
        )?
        .try_into()?)
    };
    Ok(vec![
        refuse(rules, libc::EPERM)?,
        refuse(missing, libc::ENOSYS)?,
    ])
}

/// The calls only x86_64 has (newer architectures have just the `…at` forms).
#[cfg(target_arch = "x86_64")]
fn legacy_calls(rules: &mut BTreeMap<i64, Vec<SeccompRule>>) -> Result<(), ConfineError> {
    rules.insert(libc::SYS_chmod, set_id_mode(1)?);
    rules.insert(libc::SYS_creat, set_id_mode(1)?);
    rules.insert(libc::SYS_mknod, set_id_mode(1)?);
    rules.insert(libc::SYS_open, set_id_creation(1, 2)?);
    Ok(())
}

#[cfg(not(target_arch = "x86_64"))]
fn legacy_calls(_rules: &mut BTreeMap<i64, Vec<SeccompRule>>) -> Result<(), ConfineError> {
    Ok(())
}

/// The same calls through the x32 ABI, where a kernel offers it (x32's ioctl takes
/// another number, and its arguments are the same).
fn with_x32(rules: &mut BTreeMap<i64, Vec<SeccompRule>>) {
    let x32: Vec<(i64, Vec<SeccompRule>)> = rules
        .iter()
        .filter(|(call, _)| **call != libc::SYS_ioctl)
        .map(|(call, chain)| (call | X32_SYSCALL_BIT, chain.clone()))
        .collect();
    rules.extend(x32);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filters_build_for_both_network_settings() {
        for network in [Network::Deny, Network::Allow] {
            let programs = filters(network).unwrap();
            assert_eq!(programs.len(), 2);
            assert!(programs.iter().all(|p| !p.is_empty()));
        }
    }
}
