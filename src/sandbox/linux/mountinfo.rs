//! Reading `/proc/self/mountinfo`: each mount's id, its parent's, where it is mounted
//! and its per-mount flags; and which mounts a path can reach ([`visible`]): not those
//! covered by a later mount on the same place, nor anything beneath a covered one. The
//! launcher remounts every visible mount read-only; a covered one cannot be reached by
//! any path, so it needs nothing.
//!
//! It knows the file's format, nothing about what is done with it.

use std::collections::HashMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;
use std::path::PathBuf;

use nix::mount::MsFlags;

/// One line of the mount table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Mount {
    /// Its id.
    pub id: u64,
    /// Its parent's id.
    pub parent: u64,
    /// Where it is mounted.
    pub path: PathBuf,
    /// Its per-mount flags (read-only, nosuid, nodev, noexec, the atime rule, nosymfollow).
    pub flags: MsFlags,
}

/// The flags a mount's options field names.
fn flags_of(options: &str) -> MsFlags {
    let mut flags = MsFlags::empty();
    for option in options.split(',') {
        flags |= match option {
            "ro" => MsFlags::MS_RDONLY,
            "nosuid" => MsFlags::MS_NOSUID,
            "nodev" => MsFlags::MS_NODEV,
            "noexec" => MsFlags::MS_NOEXEC,
            "noatime" => MsFlags::MS_NOATIME,
            "nodiratime" => MsFlags::MS_NODIRATIME,
            "relatime" => MsFlags::MS_RELATIME,
            "nosymfollow" => MsFlags::from_bits_retain(libc::MS_NOSYMFOLLOW),
            _ => MsFlags::empty(),
        };
    }
    flags
}

/// A path as the table writes it: space, tab, newline and backslash as `\NNN` octal.
fn unescape(field: &str) -> PathBuf {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let octal = bytes.get(i + 1..i + 4).and_then(|d| {
            let text = std::str::from_utf8(d).ok()?;
            u8::from_str_radix(text, 8).ok()
        });
        match (bytes[i], octal) {
            (b'\\', Some(byte)) => {
                out.push(byte);
                i += 4;
            }
            (byte, _) => {
                out.push(byte);
                i += 1;
            }
        }
    }
    PathBuf::from(OsString::from_vec(out))
}

/// The mounts in `text` (lines it cannot read are left out).
pub fn parse(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split(' ').collect();
            Some(Mount {
                id: fields.first()?.parse().ok()?,
                parent: fields.get(1)?.parse().ok()?,
                path: unescape(fields.get(4)?),
                flags: flags_of(fields.get(5)?),
            })
        })
        .collect()
}

/// The mounts a path reaches: the top one at each place, when what it is mounted on is
/// reachable itself.
pub fn visible(mounts: &[Mount]) -> Vec<&Mount> {
    let by_id: HashMap<u64, &Mount> = mounts.iter().map(|m| (m.id, m)).collect();
    let covered = |m: &Mount| {
        mounts
            .iter()
            .any(|other| other.parent == m.id && other.path == m.path && other.id != m.id)
    };
    // Reachable: the root, or mounted on a reachable mount that is either not covered
    // or covered by this very mount.
    let reachable = |m: &Mount| {
        let mut current = m;
        for _ in 0..mounts.len() {
            let Some(parent) = by_id.get(&current.parent) else {
                return true;
            };
            if parent.id == current.id {
                return true;
            }
            if covered(parent) && parent.path != current.path {
                return false;
            }
            current = parent;
        }
        false
    };
    mounts
        .iter()
        .filter(|m| !covered(m) && reachable(m))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    const TABLE: &str = "\
22 27 0:21 / /proc rw,relatime - proc proc rw
24 27 0:6 / /dev rw,nosuid,relatime - devtmpfs devtmpfs rw,mode=755
25 24 0:23 / /dev/shm rw,relatime - tmpfs tmpfs rw
26 24 0:24 / /dev/pts rw,relatime - devpts devpts rw,mode=600
27 1 254:0 / / rw,relatime - ext4 /dev/vda rw
28 27 0:25 / /mnt/odd\\040name ro,nosuid,nodev,noexec,noatime - tmpfs x ro
29 26 0:26 / /dev/pts rw,relatime - devpts devpts rw,mode=600
30 25 0:27 / /dev/shm rw,relatime - tmpfs tmpfs rw
31 25 0:28 / /dev/shm/hidden rw - tmpfs tmpfs rw
";

    #[test]
    fn the_table_gives_ids_places_and_flags() {
        let mounts = parse(TABLE);
        assert_eq!(mounts.len(), 9);
        let odd = mounts.iter().find(|m| m.id == 28).unwrap();
        assert_eq!(odd.path, PathBuf::from("/mnt/odd name"));
        assert!(odd.flags.contains(
            MsFlags::MS_RDONLY
                | MsFlags::MS_NOSUID
                | MsFlags::MS_NODEV
                | MsFlags::MS_NOEXEC
                | MsFlags::MS_NOATIME
        ));
        let dev = mounts.iter().find(|m| m.id == 24).unwrap();
        assert_eq!(dev.flags, MsFlags::MS_NOSUID | MsFlags::MS_RELATIME);
        assert_eq!(unescape("a\\134b\\011c"), PathBuf::from("a\\b\tc"));
        assert_eq!(unescape("trailing\\"), PathBuf::from("trailing\\"));
    }

    #[test]
    fn covered_mounts_and_what_lies_beneath_them_are_not_visible() {
        let mounts = parse(TABLE);
        let mut ids: Vec<u64> = visible(&mounts).iter().map(|m| m.id).collect();
        ids.sort_unstable();
        // 25 and 26 are covered by 30 and 29; 31 was mounted inside the covered 25.
        assert_eq!(ids, vec![22, 24, 27, 28, 29, 30]);
    }
}
