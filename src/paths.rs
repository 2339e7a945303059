//! Lexical path arithmetic shared by the tools, the permission rules and `@` mentions:
//! `~` expansion, joining a written path to a base, and folding `.` and `..`.
//!
//! Nothing here touches the file system: a path is judged as written, and whoever acts on
//! it resolves symlinks first. This module knows nothing of tools, rules or approval.

use std::path::{Component, Path, PathBuf};

/// `~` and `~/…` with the home directory (`$HOME`); `None` for any other word, and when
/// `$HOME` is not set.
pub fn expand_home(word: &str) -> Option<PathBuf> {
    let rest = if word == "~" {
        ""
    } else {
        word.strip_prefix("~/")?
    };
    let home = std::env::var_os("HOME")?;
    Some(PathBuf::from(home).join(rest))
}

/// The path `written` names when read in `base`: `~` expanded, an absolute path as it is,
/// anything else joined to `base`. Not normalised (see [`normalize`]).
pub fn absolute(written: &str, base: &Path) -> PathBuf {
    expand_home(written).unwrap_or_else(|| base.join(written))
}

/// Folds `.` and `..` lexically. `..` at the root stays at the root (as the kernel reads
/// `/..`); a relative path keeps the leading `..` it cannot fold; an empty result is `.`.
pub fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => match out.components().next_back() {
                Some(Component::Normal(_)) => {
                    out.pop();
                }
                Some(Component::RootDir | Component::Prefix(_)) => {}
                Some(Component::ParentDir | Component::CurDir) | None => out.push(component),
            },
            other => out.push(other),
        }
    }
    if out.as_os_str().is_empty() {
        out.push(".");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dots_fold_and_parent_stops_at_the_root() {
        for (given, folded) in [
            ("/a/./b/../c", "/a/c"),
            ("/..", "/"),
            ("/../etc/passwd", "/etc/passwd"),
            ("/a/../../b", "/b"),
            ("a/../..", ".."),
            ("../../x", "../../x"),
            ("a/..", "."),
            ("./", "."),
            ("", "."),
        ] {
            assert_eq!(normalize(Path::new(given)), Path::new(folded), "{given}");
        }
    }

    #[test]
    fn home_expands_only_for_a_tilde_word() {
        let Some(home) = std::env::var_os("HOME").map(PathBuf::from) else {
            assert_eq!(expand_home("~/x"), None, "no $HOME, nothing to expand to");
            return;
        };
        assert_eq!(expand_home("~"), Some(home.clone()));
        assert_eq!(expand_home("~/x/y"), Some(home.join("x/y")));
        for other in ["~user/x", "a/~", "x", "/~/x", ""] {
            assert_eq!(expand_home(other), None, "{other}");
        }
        assert_eq!(absolute("~/f", Path::new("/p")), home.join("f"));
        assert_eq!(absolute("src/f", Path::new("/p")), Path::new("/p/src/f"));
        assert_eq!(absolute("/etc/f", Path::new("/p")), Path::new("/etc/f"));
    }
}
