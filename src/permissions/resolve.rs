//! Where a path really leads, for judging it: every symbolic link along it is followed
//! (a dangling one too, since writing through it creates its target), and `..` steps
//! back from where the link led, as the kernel does. Parts that do not exist yet are
//! kept as written. Rules judge the real path as well as the spelling, so a committed
//! `docs/settings.ini -> ../.git/config` is `.git/config` to them.
//!
//! It reads links and nothing else; it must not know rules.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

/// The most links followed before giving up (as the kernel's `ELOOP`).
const MAX_LINKS: usize = 40;

/// The path `path` (absolute) leads to, with every existing link followed.
pub fn real_path(path: &Path) -> PathBuf {
    let mut out = PathBuf::from("/");
    let mut pending: VecDeque<OsString> = parts(path);
    let mut links = 0;
    while let Some(part) = pending.pop_front() {
        if part == ".." {
            out.pop();
            continue;
        }
        let next = out.join(&part);
        let is_link = std::fs::symlink_metadata(&next).is_ok_and(|m| m.file_type().is_symlink());
        if !is_link || links >= MAX_LINKS {
            out = next;
            continue;
        }
        links += 1;
        match std::fs::read_link(&next) {
            Ok(target) => {
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                for part in parts(&target).into_iter().rev() {
                    pending.push_front(part);
                }
            }
            Err(_) => out = next,
        }
    }
    out
}

/// The normal parts of a path, `..` kept (`.` and the root dropped).
fn parts(path: &Path) -> VecDeque<OsString> {
    path.components()
        .filter_map(|c| match c {
            Component::Normal(p) => Some(p.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    #[test]
    fn links_lead_where_they_point_dangling_or_chained() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::create_dir(root.join("docs")).unwrap();
        symlink("../.git/config", root.join("docs/settings.ini")).unwrap();
        symlink("../.git/hooks/pre-commit", root.join("docs/dangling")).unwrap();
        symlink("settings.ini", root.join("docs/chain")).unwrap();
        symlink(root.join(".git"), root.join("g")).unwrap();
        symlink("loop", root.join("loop")).unwrap();
        for (written, real) in [
            ("docs/settings.ini", ".git/config"),
            ("docs/dangling", ".git/hooks/pre-commit"),
            ("docs/chain", ".git/config"),
            ("g/hooks/x", ".git/hooks/x"),
            ("g/../docs", "docs"),
            ("docs/new/file", "docs/new/file"),
            ("loop", "loop"),
        ] {
            assert_eq!(real_path(&root.join(written)), root.join(real), "{written}");
        }
        assert_eq!(real_path(Path::new("/")), PathBuf::from("/"));
    }
}
