//! harness9's own environment block, as the kernel shows it in `/proc/PID/environ`:
//! the bytes between `env_start` and `env_end` (`/proc/self/stat`) that the process was
//! started with. `std::env::remove_var` never touches them, so a secret that was in the
//! environment stays readable there for the whole run. [`hide_values`] overwrites the
//! values chosen with NUL bytes, in place, through `/proc/self/mem` (no `unsafe`): the
//! variable then reads as empty both there and through `getenv`, and every other byte
//! stays where it was (the C library's `environ` points into this block).
//! [`hide_arguments`] does the same with `*` for arguments in `/proc/PID/cmdline`, which
//! every user can read. [`make_undumpable`] then keeps other processes of the same user
//! out of `/proc/PID/{environ,mem,maps,fd}` and ptrace, and core dumps off.
//!
//! It knows the block's layout and the two system interfaces; it must not know which
//! variables are secret (the caller decides) or what harness9 does with them.

use std::ffi::OsStr;

/// Why the block could not be read or changed.
#[derive(Debug, thiserror::Error)]
pub enum SelfEnvError {
    /// `/proc/self/stat` or `/proc/self/mem` could not be used.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// `/proc/self/stat` did not hold the block's bounds.
    #[error("/proc/self/stat does not say where the environment is")]
    NoBounds,
    /// After the overwrite the block still held a value it should not.
    #[error("a value was still there after it was overwritten")]
    StillThere,
    /// `prctl(PR_SET_DUMPABLE, 0)` failed.
    #[error("prctl(PR_SET_DUMPABLE): {0}")]
    Prctl(#[source] std::io::Error),
    /// Not available on this system.
    #[error("not supported on this system")]
    Unsupported,
}

/// One `NAME=value` entry of the block: where its value starts and how long it is.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Entry<'a> {
    name: &'a [u8],
    value: &'a [u8],
    /// Offset of the value from the block's start.
    value_at: usize,
}

/// The entries of a raw block (`NAME=value\0NAME=value\0…`); pieces without `=` (left
/// by an earlier overwrite, or odd) are skipped.
fn entries(block: &[u8]) -> Vec<Entry<'_>> {
    let mut found = Vec::new();
    let mut at = 0;
    for piece in block.split(|b| *b == 0) {
        if let Some(eq) = piece.iter().position(|b| *b == b'=') {
            found.push(Entry {
                name: &piece[..eq],
                value: &piece[eq + 1..],
                value_at: at + eq + 1,
            });
        }
        at += piece.len() + 1;
    }
    found
}

/// The environment block's bounds: `env_start` and `env_end`, fields 50 and 51 of
/// `/proc/self/stat`.
const ENVIRONMENT: (usize, usize) = (50, 51);
/// The arguments' bounds: `arg_start` and `arg_end`, fields 48 and 49.
const ARGUMENTS: (usize, usize) = (48, 49);

/// Two fields of the text of `/proc/self/stat`, counted after the command name (which
/// may hold spaces and parentheses), as a start below an end.
fn bounds(stat: &str, (first, second): (usize, usize)) -> Option<(u64, u64)> {
    let (_, after_name) = stat.rsplit_once(')')?;
    // Field 3 (the state) is the first one after the name.
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let start = fields.get(first.checked_sub(3)?)?.parse().ok()?;
    let end = fields.get(second.checked_sub(3)?)?.parse().ok()?;
    (start < end).then_some((start, end))
}

/// One piece of a block to overwrite: where, how long, and with which byte.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Overwrite {
    at: usize,
    len: usize,
    fill: u8,
}

/// Reads the block between the two `/proc/self/stat` fields `region` names, asks
/// `choose` which parts to overwrite, writes them through `/proc/self/mem`, and reads
/// the block back to check every part holds its fill byte. Returns how many parts.
#[cfg(target_os = "linux")]
fn overwrite(
    region: (usize, usize),
    choose: &dyn Fn(&[u8]) -> Vec<Overwrite>,
) -> Result<usize, SelfEnvError> {
    use std::os::unix::fs::FileExt;
    let io = |what| move |source| SelfEnvError::Io { what, source };
    let stat = std::fs::read_to_string("/proc/self/stat").map_err(io("/proc/self/stat"))?;
    let (start, end) = bounds(&stat, region).ok_or(SelfEnvError::NoBounds)?;
    let len = usize::try_from(end - start).map_err(|_| SelfEnvError::NoBounds)?;
    let mem = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/proc/self/mem")
        .map_err(io("/proc/self/mem"))?;
    let mut block = vec![0u8; len];
    mem.read_exact_at(&mut block, start)
        .map_err(io("reading /proc/self/mem"))?;
    let chosen = choose(&block);
    for part in &chosen {
        mem.write_all_at(&vec![part.fill; part.len], start + part.at as u64)
            .map_err(io("writing /proc/self/mem"))?;
    }
    mem.read_exact_at(&mut block, start)
        .map_err(io("reading /proc/self/mem"))?;
    let intact = chosen
        .iter()
        .all(|p| block[p.at..p.at + p.len].iter().all(|b| *b == p.fill));
    if !intact {
        return Err(SelfEnvError::StillThere);
    }
    Ok(chosen.len())
}

/// Overwrites with NUL bytes, in this process's environment block, the value of every
/// variable `hide(name, value)` chooses; returns how many. Call it while this is the
/// only thread that reads the environment (at start-up): the bytes change under
/// `getenv`.
#[cfg(target_os = "linux")]
pub fn hide_values(hide: &dyn Fn(&OsStr, &OsStr) -> bool) -> Result<usize, SelfEnvError> {
    use std::os::unix::ffi::OsStrExt;
    overwrite(ENVIRONMENT, &|block| {
        entries(block)
            .into_iter()
            .filter(|e| {
                !e.value.is_empty() && hide(OsStr::from_bytes(e.name), OsStr::from_bytes(e.value))
            })
            .map(|e| Overwrite {
                at: e.value_at,
                len: e.value.len(),
                fill: 0,
            })
            .collect()
    })
}

/// Overwrites with `*`, in this process's arguments as `/proc/PID/cmdline` shows them
/// (to every user, whatever the dumpable flag), every argument `hide` chooses (a base
/// URL with a password, a prompt quoting a key); returns how many. Call it once the
/// arguments were parsed: nothing reads them again.
#[cfg(target_os = "linux")]
pub fn hide_arguments(hide: &dyn Fn(&OsStr) -> bool) -> Result<usize, SelfEnvError> {
    use std::os::unix::ffi::OsStrExt;
    overwrite(ARGUMENTS, &|block| {
        let mut at = 0;
        let mut chosen = Vec::new();
        for piece in block.split(|b| *b == 0) {
            if !piece.is_empty() && hide(OsStr::from_bytes(piece)) {
                chosen.push(Overwrite {
                    at,
                    len: piece.len(),
                    fill: b'*',
                });
            }
            at += piece.len() + 1;
        }
        chosen
    })
}

/// Not available outside Linux.
#[cfg(not(target_os = "linux"))]
pub fn hide_arguments(_hide: &dyn Fn(&OsStr) -> bool) -> Result<usize, SelfEnvError> {
    Err(SelfEnvError::Unsupported)
}

/// Not available outside Linux.
#[cfg(not(target_os = "linux"))]
pub fn hide_values(_hide: &dyn Fn(&OsStr, &OsStr) -> bool) -> Result<usize, SelfEnvError> {
    Err(SelfEnvError::Unsupported)
}

/// `prctl(PR_SET_DUMPABLE, 0)`: other processes of the same user can no longer open
/// this one's `/proc/PID/{environ,mem,maps,fd}` or ptrace it, and it dumps no core
/// (`cmdline` stays readable to everyone: see [`hide_arguments`]).
/// The process itself still reads its own `/proc/self` (same thread group). Commands it
/// starts are dumpable again after `exec`.
#[cfg(target_os = "linux")]
pub fn make_undumpable() -> Result<(), SelfEnvError> {
    nix::sys::prctl::set_dumpable(false).map_err(|e| SelfEnvError::Prctl(e.into()))
}

/// Not available outside Linux.
#[cfg(not(target_os = "linux"))]
pub fn make_undumpable() -> Result<(), SelfEnvError> {
    Err(SelfEnvError::Unsupported)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bounds_are_counted_after_the_name_whatever_it_holds() {
        let tail: Vec<String> = (3..=52).map(|n| n.to_string()).collect();
        let stat = format!("1234 (a) b) (c) {}", tail.join(" "));
        assert_eq!(bounds(&stat, ENVIRONMENT), Some((50, 51)));
        assert_eq!(bounds(&stat, ARGUMENTS), Some((48, 49)));
        assert_eq!(bounds("1234 (x) S 1 2", ENVIRONMENT), None);
        let real = std::fs::read_to_string("/proc/self/stat").unwrap();
        assert!(bounds(&real, ENVIRONMENT).is_some(), "{real}");
        assert!(bounds(&real, ARGUMENTS).is_some(), "{real}");
    }

    #[test]
    fn entries_know_where_each_value_starts() {
        let block = b"A=1\0KEY=secret\0\0\0NOEQ\0B=\0";
        let found = entries(block);
        let names: Vec<&[u8]> = found.iter().map(|e| e.name).collect();
        assert_eq!(names, vec![&b"A"[..], b"KEY", b"B"]);
        assert_eq!(&block[found[1].value_at..][..6], b"secret");
        assert_eq!(found[2].value, b"");
    }
}
