//! harness9's own environment block, as the kernel shows it in `/proc/PID/environ`:
//! the bytes between `env_start` and `env_end` (`/proc/self/stat`) that the process was
//! started with. `std::env::remove_var` never touches them, so a secret that was in the
//! environment stays readable there for the whole run. [`hide_values`] overwrites the
//! values chosen with NUL bytes, in place, through `/proc/self/mem` (no `unsafe`): the
//! variable then reads as empty both there and through `getenv`, and every other byte
//! stays where it was (the C library's `environ` points into this block).
//! [`make_undumpable`] then keeps other processes of the same user out of
//! `/proc/PID/{environ,mem,cmdline}` and ptrace, and core dumps off.
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

/// `env_start` and `env_end` from the text of `/proc/self/stat` (fields 50 and 51,
/// counted after the command name, which may hold spaces and parentheses).
fn env_bounds(stat: &str) -> Option<(u64, u64)> {
    let (_, after_name) = stat.rsplit_once(')')?;
    // Field 3 (the state) is the first one after the name.
    let fields: Vec<&str> = after_name.split_whitespace().collect();
    let start = fields.get(50 - 3)?.parse().ok()?;
    let end = fields.get(51 - 3)?.parse().ok()?;
    (start < end).then_some((start, end))
}

/// Overwrites, in this process's environment block, the value of every variable
/// `hide(name, value)` chooses; returns how many. Call it while this is the only thread
/// that reads the environment (at start-up): the bytes change under `getenv`.
#[cfg(target_os = "linux")]
pub fn hide_values(hide: &dyn Fn(&OsStr, &OsStr) -> bool) -> Result<usize, SelfEnvError> {
    use std::os::unix::ffi::OsStrExt;
    use std::os::unix::fs::FileExt;
    let io = |what| move |source| SelfEnvError::Io { what, source };
    let stat = std::fs::read_to_string("/proc/self/stat").map_err(io("/proc/self/stat"))?;
    let (start, end) = env_bounds(&stat).ok_or(SelfEnvError::NoBounds)?;
    let len = usize::try_from(end - start).map_err(|_| SelfEnvError::NoBounds)?;
    let mem = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/proc/self/mem")
        .map_err(io("/proc/self/mem"))?;
    let mut block = vec![0u8; len];
    mem.read_exact_at(&mut block, start)
        .map_err(io("reading /proc/self/mem"))?;
    let chosen: Vec<(usize, usize)> = entries(&block)
        .into_iter()
        .filter(|e| {
            !e.value.is_empty() && hide(OsStr::from_bytes(e.name), OsStr::from_bytes(e.value))
        })
        .map(|e| (e.value_at, e.value.len()))
        .collect();
    for &(at, len) in &chosen {
        mem.write_all_at(&vec![0; len], start + at as u64)
            .map_err(io("writing /proc/self/mem"))?;
    }
    // What the kernel shows now must hold none of them.
    let shown = std::fs::read("/proc/self/environ").map_err(io("/proc/self/environ"))?;
    let left = entries(&shown).into_iter().any(|e| {
        !e.value.is_empty() && hide(OsStr::from_bytes(e.name), OsStr::from_bytes(e.value))
    });
    if left {
        return Err(SelfEnvError::StillThere);
    }
    Ok(chosen.len())
}

/// Not available outside Linux.
#[cfg(not(target_os = "linux"))]
pub fn hide_values(_hide: &dyn Fn(&OsStr, &OsStr) -> bool) -> Result<usize, SelfEnvError> {
    Err(SelfEnvError::Unsupported)
}

/// `prctl(PR_SET_DUMPABLE, 0)`: other processes of the same user can no longer open
/// this one's `/proc/PID/{environ,mem,cmdline,fd}` or ptrace it, and it dumps no core.
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
    fn the_bounds_are_fields_50_and_51_whatever_the_name() {
        let tail: Vec<String> = (3..=52).map(|n| n.to_string()).collect();
        let stat = format!("1234 (a) b) (c) {}", tail.join(" "));
        assert_eq!(env_bounds(&stat), Some((50, 51)));
        assert_eq!(env_bounds("1234 (x) S 1 2"), None);
        let real = std::fs::read_to_string("/proc/self/stat").unwrap();
        assert!(env_bounds(&real).is_some(), "{real}");
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
