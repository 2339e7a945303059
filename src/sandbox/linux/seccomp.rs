//! The seccomp filter every confined command runs under: a small classic-BPF program
//! written here (a table of calls, each with what to check; about a hundred
//! instructions, so installing it costs little) and installed with `seccompiler`. It
//! makes these calls fail with EPERM:
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
//!   `O_CREAT` or `O_TMPFILE`, `mknod`, `mknodat`), read from the mode argument's bits,
//!   so nothing planted in a writable folder grants privileges outside;
//! - with the network denied, `socket()` for every family but `AF_UNIX`;
//! - on x86_64, every call through the x32 ABI (whose numbers the table does not hold).
//!
//! `clone3` and `openat2` fail with ENOSYS (their flags and mode are behind a pointer a
//! filter cannot read), so C libraries fall back to `clone` and `openat`, which it
//! reads. A call made for another architecture than this one (a 32-bit program) kills
//! the process: the table's numbers would not mean the same calls.
//!
//! It knows system calls; it must not know why a command runs.

use seccompiler::sock_filter;

use super::ConfineError;
use crate::sandbox::Network;

/// What the filter does with one call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Check {
    /// Fail with EPERM.
    Refuse,
    /// Fail with ENOSYS (the C library then uses an older call).
    Missing,
    /// Fail with EPERM when any of `bits` is set in argument `arg`.
    AnyBit { arg: u32, bits: u32 },
    /// Fail with EPERM when argument `flags` has any of `creating` and argument `mode`
    /// any of `bits`.
    Creating {
        flags: u32,
        creating: u32,
        mode: u32,
        bits: u32,
    },
    /// Fail with EPERM when argument `arg` is one of `values`.
    OneOf { arg: u32, values: [u32; 2] },
    /// Fail with EPERM unless argument `arg` is `value`.
    AllExcept { arg: u32, value: u32 },
}

// mode_t is u32 here, another width elsewhere.
#[allow(clippy::unnecessary_cast)]
const SET_ID_BITS: u32 = (libc::S_ISUID | libc::S_ISGID) as u32;
#[allow(clippy::cast_sign_loss)]
const CREATING: u32 = (libc::O_CREAT | libc::O_TMPFILE) as u32;
#[allow(clippy::cast_sign_loss)]
const NAMESPACE_FLAGS: u32 = (libc::CLONE_NEWNS
    | libc::CLONE_NEWCGROUP
    | libc::CLONE_NEWUTS
    | libc::CLONE_NEWIPC
    | libc::CLONE_NEWUSER
    | libc::CLONE_NEWPID
    | libc::CLONE_NEWNET) as u32;
// The ioctl request's type differs between C libraries (c_ulong or c_int); the kernel
// reads its low 32 bits.
#[allow(clippy::unnecessary_cast, clippy::cast_possible_truncation)]
const TIOCSTI: u32 = libc::TIOCSTI as u32;
#[allow(clippy::unnecessary_cast, clippy::cast_possible_truncation)]
const TIOCLINUX: u32 = libc::TIOCLINUX as u32;
/// `fchmodat2` (Linux 6.6), numbered alike on every architecture harness9 supports.
const SYS_FCHMODAT2: i64 = 452;

/// Calls refused whatever their arguments.
const REFUSED: &[i64] = &[
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

/// The filter's table for `network`: each call number and its check.
fn table(network: Network) -> Vec<(i64, Check)> {
    let mut table: Vec<(i64, Check)> = REFUSED.iter().map(|c| (*c, Check::Refuse)).collect();
    let mode = |arg| Check::AnyBit {
        arg,
        bits: SET_ID_BITS,
    };
    let creating = |flags, mode| Check::Creating {
        flags,
        creating: CREATING,
        mode,
        bits: SET_ID_BITS,
    };
    table.extend([
        (libc::SYS_clone3, Check::Missing),
        (libc::SYS_openat2, Check::Missing),
        (
            libc::SYS_clone,
            Check::AnyBit {
                arg: 0,
                bits: NAMESPACE_FLAGS,
            },
        ),
        (
            libc::SYS_ioctl,
            Check::OneOf {
                arg: 1,
                values: [TIOCSTI, TIOCLINUX],
            },
        ),
        (libc::SYS_fchmod, mode(1)),
        (libc::SYS_fchmodat, mode(2)),
        (SYS_FCHMODAT2, mode(2)),
        (libc::SYS_mknodat, mode(2)),
        (libc::SYS_openat, creating(2, 3)),
    ]);
    #[cfg(target_arch = "x86_64")]
    table.extend([
        (libc::SYS_chmod, mode(1)),
        (libc::SYS_creat, mode(1)),
        (libc::SYS_mknod, mode(1)),
        (libc::SYS_open, creating(1, 2)),
    ]);
    if network == Network::Deny {
        #[allow(clippy::cast_sign_loss)]
        let unix = libc::AF_UNIX as u32;
        table.push((
            libc::SYS_socket,
            Check::AllExcept {
                arg: 0,
                value: unix,
            },
        ));
    }
    table
}

const LOAD_WORD: u16 = 0x20; // BPF_LD | BPF_W | BPF_ABS
const JUMP_EQ: u16 = 0x15; // BPF_JMP | BPF_JEQ | BPF_K
const JUMP_GE: u16 = 0x35; // BPF_JMP | BPF_JGE | BPF_K
const JUMP_SET: u16 = 0x45; // BPF_JMP | BPF_JSET | BPF_K
const RETURN: u16 = 0x06; // BPF_RET | BPF_K
const ALLOW: u32 = 0x7fff_0000; // SECCOMP_RET_ALLOW
const KILL_PROCESS: u32 = 0x8000_0000; // SECCOMP_RET_KILL_PROCESS
const ERRNO: u32 = 0x0005_0000; // SECCOMP_RET_ERRNO
/// Offsets in `struct seccomp_data`.
const NR: u32 = 0;
const ARCH: u32 = 4;
/// The low 32 bits of argument `n` (every supported architecture is little-endian).
fn arg(n: u32) -> u32 {
    16 + 8 * n
}
/// x32 system calls on x86_64 carry this bit in their number.
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

fn op(code: u16, k: u32) -> sock_filter {
    sock_filter {
        code,
        jt: 0,
        jf: 0,
        k,
    }
}

fn jump(code: u16, k: u32, jt: u8, jf: u8) -> sock_filter {
    sock_filter { code, jt, jf, k }
}

#[allow(clippy::cast_sign_loss)]
fn errno(e: i32) -> u32 {
    ERRNO | (e as u32)
}

/// The audit architecture this build's calls are made under.
fn audit_arch() -> Result<u32, ConfineError> {
    match std::env::consts::ARCH {
        "x86_64" => Ok(0xc000_003e),
        "aarch64" => Ok(0xc000_00b7),
        "riscv64" => Ok(0xc000_00f3),
        other => Err(ConfineError::UnsupportedArch(other)),
    }
}

/// Whether this CPU architecture has a filter.
pub fn supported() -> bool {
    audit_arch().is_ok()
}

/// The instructions checking one call; every path ends in a return.
fn block(check: Check) -> Vec<sock_filter> {
    let eperm = errno(libc::EPERM);
    match check {
        Check::Refuse => vec![op(RETURN, eperm)],
        Check::Missing => vec![op(RETURN, errno(libc::ENOSYS))],
        Check::AnyBit { arg: n, bits } => vec![
            op(LOAD_WORD, arg(n)),
            jump(JUMP_SET, bits, 0, 1),
            op(RETURN, eperm),
            op(RETURN, ALLOW),
        ],
        Check::Creating {
            flags,
            creating,
            mode,
            bits,
        } => vec![
            op(LOAD_WORD, arg(flags)),
            jump(JUMP_SET, creating, 0, 3),
            op(LOAD_WORD, arg(mode)),
            jump(JUMP_SET, bits, 0, 1),
            op(RETURN, eperm),
            op(RETURN, ALLOW),
        ],
        Check::OneOf { arg: n, values } => vec![
            op(LOAD_WORD, arg(n)),
            jump(JUMP_EQ, values[0], 2, 0),
            jump(JUMP_EQ, values[1], 1, 0),
            op(RETURN, ALLOW),
            op(RETURN, eperm),
        ],
        Check::AllExcept { arg: n, value } => vec![
            op(LOAD_WORD, arg(n)),
            jump(JUMP_EQ, value, 0, 1),
            op(RETURN, ALLOW),
            op(RETURN, eperm),
        ],
    }
}

/// The program for `network` (see the module's documentation).
pub fn program(network: Network) -> Result<Vec<sock_filter>, ConfineError> {
    let native = audit_arch()?;
    let table = table(network);
    let mut code = vec![
        op(LOAD_WORD, ARCH),
        jump(JUMP_EQ, native, 1, 0),
        op(RETURN, KILL_PROCESS),
        op(LOAD_WORD, NR),
    ];
    if cfg!(target_arch = "x86_64") {
        code.push(jump(JUMP_GE, X32_SYSCALL_BIT, 0, 1));
        code.push(op(RETURN, errno(libc::EPERM)));
    }
    // One comparison per call, jumping to its block; then the default; then the blocks.
    let blocks: Vec<Vec<sock_filter>> = table.iter().map(|(_, c)| block(*c)).collect();
    let dispatch_start = code.len();
    let blocks_start = dispatch_start + table.len() + 1;
    let mut offset = blocks_start;
    for (i, ((call, _), block)) in table.iter().zip(&blocks).enumerate() {
        let from = dispatch_start + i + 1;
        let jt = u8::try_from(offset - from).map_err(|_| ConfineError::FilterTooLong)?;
        let nr = u32::try_from(*call).map_err(|_| ConfineError::FilterTooLong)?;
        code.push(jump(JUMP_EQ, nr, jt, 0));
        offset += block.len();
    }
    code.push(op(RETURN, ALLOW));
    code.extend(blocks.into_iter().flatten());
    Ok(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `program` on one call, as the kernel would: its return value.
    fn run(program: &[sock_filter], arch: u32, nr: u32, args: [u64; 6]) -> u32 {
        let mut data = Vec::new();
        data.extend(nr.to_le_bytes());
        data.extend(arch.to_le_bytes());
        data.extend(0u64.to_le_bytes());
        for a in args {
            data.extend(a.to_le_bytes());
        }
        let word = |at: u32| {
            let at = at as usize;
            u32::from_le_bytes(data[at..at + 4].try_into().unwrap())
        };
        let (mut pc, mut acc) = (0usize, 0u32);
        loop {
            let i = &program[pc];
            pc += 1;
            match i.code {
                LOAD_WORD => acc = word(i.k),
                RETURN => return i.k,
                JUMP_EQ | JUMP_GE | JUMP_SET => {
                    let taken = match i.code {
                        JUMP_EQ => acc == i.k,
                        JUMP_GE => acc >= i.k,
                        _ => acc & i.k != 0,
                    };
                    pc += usize::from(if taken { i.jt } else { i.jf });
                }
                other => panic!("unknown instruction {other:#x}"),
            }
        }
    }

    fn nr(call: i64) -> u32 {
        u32::try_from(call).unwrap()
    }

    #[test]
    fn the_program_refuses_the_class_and_allows_the_rest() {
        let deny = program(Network::Deny).unwrap();
        let allow = program(Network::Allow).unwrap();
        assert!(deny.len() < 160, "{} instructions", deny.len());
        let arch = audit_arch().unwrap();
        let call = |p: &[sock_filter], call: i64, args: [u64; 6]| run(p, arch, nr(call), args);
        let eperm = errno(libc::EPERM);
        for mode in [0o4755, 0o2755, 0o6777, 0o4000, 0o104_755] {
            assert_eq!(call(&deny, libc::SYS_fchmod, [3, mode, 0, 0, 0, 0]), eperm);
            assert_eq!(
                call(&deny, libc::SYS_fchmodat, [0, 0, mode, 0, 0, 0]),
                eperm
            );
            assert_eq!(call(&deny, SYS_FCHMODAT2, [0, 0, mode, 0, 0, 0]), eperm);
            assert_eq!(call(&deny, libc::SYS_mknodat, [0, 0, mode, 0, 0, 0]), eperm);
            for flags in [
                libc::O_CREAT,
                libc::O_WRONLY | libc::O_CREAT,
                libc::O_TMPFILE,
            ] {
                let flags = u64::try_from(flags).unwrap();
                assert_eq!(
                    call(&deny, libc::SYS_openat, [0, 0, flags, mode, 0, 0]),
                    eperm
                );
            }
        }
        for mode in [0o755, 0o644, 0o1777, 0o777] {
            assert_eq!(
                call(&deny, libc::SYS_fchmodat, [0, 0, mode, 0, 0, 0]),
                ALLOW
            );
            let flags = u64::try_from(libc::O_CREAT).unwrap();
            assert_eq!(
                call(&deny, libc::SYS_openat, [0, 0, flags, mode, 0, 0]),
                ALLOW
            );
        }
        // Without O_CREAT the mode argument means nothing.
        assert_eq!(
            call(&deny, libc::SYS_openat, [0, 0, 0, 0o4755, 0, 0]),
            ALLOW
        );
        for flag in [
            libc::CLONE_NEWUSER,
            libc::CLONE_NEWNS,
            libc::CLONE_NEWPID,
            libc::CLONE_NEWNET,
            libc::CLONE_NEWUTS,
            libc::CLONE_NEWIPC,
            libc::CLONE_NEWCGROUP,
        ] {
            let flags = u64::try_from(flag | libc::SIGCHLD).unwrap();
            assert_eq!(call(&deny, libc::SYS_clone, [flags, 0, 0, 0, 0, 0]), eperm);
        }
        let thread = u64::try_from(libc::CLONE_VM | libc::CLONE_THREAD | libc::CLONE_FS).unwrap();
        assert_eq!(call(&deny, libc::SYS_clone, [thread, 0, 0, 0, 0, 0]), ALLOW);
        for refused in [
            libc::SYS_mount,
            libc::SYS_umount2,
            libc::SYS_unshare,
            libc::SYS_setns,
            libc::SYS_pivot_root,
            libc::SYS_chroot,
            libc::SYS_open_tree,
            libc::SYS_move_mount,
            libc::SYS_fsopen,
            libc::SYS_mount_setattr,
            libc::SYS_keyctl,
            libc::SYS_open_by_handle_at,
            libc::SYS_io_uring_setup,
            libc::SYS_bpf,
        ] {
            assert_eq!(call(&deny, refused, [0; 6]), eperm, "{refused}");
            assert_eq!(call(&allow, refused, [0; 6]), eperm, "{refused}");
        }
        let enosys = errno(libc::ENOSYS);
        assert_eq!(call(&deny, libc::SYS_clone3, [0; 6]), enosys);
        assert_eq!(call(&deny, libc::SYS_openat2, [0; 6]), enosys);
        let tiocsti = u64::from(TIOCSTI);
        assert_eq!(
            call(&deny, libc::SYS_ioctl, [0, tiocsti, 0, 0, 0, 0]),
            eperm
        );
        assert_eq!(call(&deny, libc::SYS_ioctl, [0, 0x5401, 0, 0, 0, 0]), ALLOW);
        let inet = u64::try_from(libc::AF_INET).unwrap();
        let unix = u64::try_from(libc::AF_UNIX).unwrap();
        assert_eq!(call(&deny, libc::SYS_socket, [inet, 1, 0, 0, 0, 0]), eperm);
        assert_eq!(call(&deny, libc::SYS_socket, [unix, 1, 0, 0, 0, 0]), ALLOW);
        assert_eq!(call(&allow, libc::SYS_socket, [inet, 1, 0, 0, 0, 0]), ALLOW);
        for plain in [
            libc::SYS_read,
            libc::SYS_write,
            libc::SYS_execve,
            libc::SYS_exit_group,
        ] {
            assert_eq!(call(&deny, plain, [0; 6]), ALLOW, "{plain}");
        }
        // Another architecture's numbers, and x32's, are not read as this one's.
        assert_eq!(run(&deny, 0x4000_0003, 0, [0; 6]), KILL_PROCESS);
        if cfg!(target_arch = "x86_64") {
            let x32 = nr(libc::SYS_read) | X32_SYSCALL_BIT;
            assert_eq!(run(&deny, arch, x32, [0; 6]), eperm);
        }
    }
}
