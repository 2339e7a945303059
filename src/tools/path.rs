//! Path arguments of tools and `@` mentions: what the model or the user wrote, resolved
//! to the file it names, so that what is judged (inside or outside the project, secret,
//! protected) is the real file and not its spelling.
//!
//! Resolution (`permissions::resolve::real_path`, the one the rules use for what a
//! command names) follows every symlink of the part that exists, component by component
//! as the kernel does (`..` after a link climbs out of the link's target; a dangling link
//! counts as its target; a loop stops at a link after 40), and keeps what does not exist
//! yet as written, so a file about to be created resolves too. The result holds no
//! symlink and no `.` or `..`: the file tools then act on exactly that path without
//! following anything (`nofollow.rs`). This module knows nothing of approval policy
//! beyond building the request a path needs, and nothing of any particular tool.

use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use super::{Access, WorksIn};
use crate::paths::{absolute, normalize};
// The same resolution the permission rules use for what a command names.
pub use crate::permissions::resolve::real_path;
use crate::protocol::ApprovalRequestKind;

// Where a path lies is a protocol value: approval requests carry it.
pub use crate::protocol::Location;

/// A path argument resolved against the project directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    /// What was written: absolute, `.` and `..` folded lexically, symlinks not followed.
    pub written: PathBuf,
    /// What it names: every symlink followed, no `.` or `..` left. The path that is
    /// judged and acted on.
    pub real: PathBuf,
    /// How to name the written path to the model and the user: relative to the project
    /// directory when it lies there (`.` for the directory itself), absolute otherwise.
    pub display: String,
    /// How to name the real path, the same way.
    pub real_display: String,
    /// Where the real path lies.
    pub location: Location,
}

impl ResolvedPath {
    /// True when the real path lies outside the project directory.
    pub fn is_outside(&self) -> bool {
        self.location == Location::Outside
    }

    /// The written path when it is not the real one (it goes through a symlink).
    pub fn via(&self) -> Option<PathBuf> {
        (self.written != self.real).then(|| self.written.clone())
    }

    /// The name for messages: the written path, and where it leads when that differs
    /// (`docs/settings.ini -> .git/config`).
    pub fn shown(&self) -> String {
        if self.written == self.real {
            self.display.clone()
        } else {
            format!("{} -> {}", self.display, self.real_display)
        }
    }

    /// Reading it: a read inside the project (rules may still ask: secret files), or an
    /// approval request for a path outside it. A path through a symlink carries the
    /// written path so the question can show both.
    pub fn read_access(&self) -> Access {
        match (self.location, self.via()) {
            (Location::Inside, None) => Access::ReadInside(self.real.clone()),
            (Location::Inside, via @ Some(_)) => Access::NeedsApproval(ApprovalRequestKind::Read {
                path: self.real.clone(),
                via,
            }),
            (Location::Outside, via) => Access::NeedsApproval(ApprovalRequestKind::ReadOutside {
                path: self.real.clone(),
                via,
            }),
        }
    }

    /// Changing it, with the diff when it could be computed in advance.
    pub fn edit_access(&self, diff: Option<String>) -> Access {
        Access::NeedsApproval(ApprovalRequestKind::Edit {
            path: self.real.clone(),
            via: self.via(),
            diff,
            location: self.location,
        })
    }

    /// Where a call on it works: its real path.
    pub fn works_in(&self) -> WorksIn {
        WorksIn::Place {
            real: self.real.clone(),
        }
    }
}

/// Resolves `arg` (relative to `workdir`, absolute, or starting with `~/`) to the file
/// it names and decides whether that lies inside `workdir`. An empty argument means
/// `workdir` itself.
pub fn resolve(workdir: &Path, arg: &str) -> ResolvedPath {
    let given = absolute(arg, workdir);
    let written = normalize(&given);
    let real = real_path(&given);
    let root = real_path(workdir);
    let location = if real.starts_with(&root) {
        Location::Inside
    } else {
        Location::Outside
    };
    let name = |path: &Path| {
        relative_display(path, workdir)
            .or_else(|| relative_display(path, &root))
            .unwrap_or_else(|| path.display().to_string())
    };
    ResolvedPath {
        display: name(&written),
        real_display: name(&real),
        written,
        real,
        location,
    }
}

/// A path argument as the model wrote it, resolved once per call: the first use (the
/// call's `access`, when the approval policy judges it) fixes the resolution, and running
/// the call acts on that same resolution, never on a second look at the disk.
#[derive(Debug, Clone, Default)]
pub struct PathArg {
    written: String,
    resolved: OnceLock<ResolvedPath>,
}

impl PathArg {
    /// An argument as written.
    pub fn new(written: impl Into<String>) -> Self {
        PathArg {
            written: written.into(),
            resolved: OnceLock::new(),
        }
    }

    /// The argument as written.
    pub fn as_str(&self) -> &str {
        &self.written
    }

    /// Its resolution against `workdir`, made on the first call and kept.
    pub fn resolve(&self, workdir: &Path) -> &ResolvedPath {
        self.resolved
            .get_or_init(|| resolve(workdir, &self.written))
    }
}

impl<'de> serde::Deserialize<'de> for PathArg {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        <String as serde::Deserialize>::deserialize(d).map(PathArg::new)
    }
}

fn relative_display(abs: &Path, base: &Path) -> Option<String> {
    let rel = abs.strip_prefix(base).ok()?;
    if rel.as_os_str().is_empty() {
        Some(".".to_string())
    } else {
        Some(rel.display().to_string())
    }
}

/// Names `path` for output: relative to `workdir` when it lies under it lexically,
/// absolute otherwise.
pub fn display_relative(path: &Path, workdir: &Path) -> String {
    relative_display(path, workdir).unwrap_or_else(|| path.display().to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;

    fn workdir() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        (dir, root)
    }

    #[test]
    fn paths_are_folded_and_placed() {
        let (_d, root) = workdir();
        let parent = root.parent().unwrap().display().to_string();
        let inside = |display: &str| (display.to_string(), Location::Inside);
        let outside = |display: String| (display, Location::Outside);
        for (arg, (display, location)) in [
            ("src/main.rs".to_string(), inside("src/main.rs")),
            (String::new(), inside(".")),
            (".".to_string(), inside(".")),
            ("./".to_string(), inside(".")),
            // Folded whether or not the folders exist.
            ("a/b/../../c/./d.txt".to_string(), inside("c/d.txt")),
            (root.join("x/y").display().to_string(), inside("x/y")),
            (
                "../elsewhere.txt".to_string(),
                outside(format!("{parent}/elsewhere.txt")),
            ),
            (
                "/etc/passwd".to_string(),
                outside("/etc/passwd".to_string()),
            ),
            // A sibling whose name starts with the project's is not inside it.
            (
                format!("{}-other/x", root.display()),
                outside(format!("{}-other/x", root.display())),
            ),
        ] {
            let r = resolve(&root, &arg);
            assert_eq!(
                (r.display.as_str(), r.location),
                (display.as_str(), location),
                "{arg:?}"
            );
            assert_eq!(r.is_outside(), location == Location::Outside);
            let abs = if display == "." {
                root.clone()
            } else {
                root.join(&display)
            };
            assert_eq!((&r.written, &r.real), (&abs, &abs), "{arg:?}");
            assert_eq!(r.via(), None);
            assert_eq!(r.shown(), display);
        }
    }

    #[test]
    fn symlinks_are_followed_to_the_real_file() {
        let (_d, root) = workdir();
        let (_o, other) = workdir();
        std::fs::write(other.join("secret.txt"), "s").unwrap();
        std::fs::create_dir_all(root.join(".git/hooks")).unwrap();
        std::fs::write(root.join(".git/config"), "").unwrap();
        symlink(&other, root.join("link")).unwrap();
        std::fs::create_dir(root.join("real")).unwrap();
        symlink(root.join("real"), root.join("alias")).unwrap();
        std::fs::create_dir(root.join("docs")).unwrap();
        symlink("../.git/config", root.join("docs/settings.ini")).unwrap();
        symlink(".git", root.join("dotgit")).unwrap();
        // A chain: a -> b -> docs/settings.ini -> .git/config.
        symlink("b", root.join("a")).unwrap();
        symlink("docs/settings.ini", root.join("b")).unwrap();
        // Dangling: the target does not exist yet, and counts.
        symlink(".git/hooks/pre-commit", root.join("hook.sh")).unwrap();
        // `..` after a link climbs out of its target, as the kernel reads it.
        std::fs::create_dir_all(root.join("deep/er")).unwrap();
        symlink("deep/er", root.join("up")).unwrap();
        let cases: [(&str, PathBuf, Location); 11] = [
            (
                "link/secret.txt",
                other.join("secret.txt"),
                Location::Outside,
            ),
            (
                "link/new/file.txt",
                other.join("new/file.txt"),
                Location::Outside,
            ),
            ("alias/f.txt", root.join("real/f.txt"), Location::Inside),
            (
                "docs/settings.ini",
                root.join(".git/config"),
                Location::Inside,
            ),
            ("dotgit/config", root.join(".git/config"), Location::Inside),
            ("a", root.join(".git/config"), Location::Inside),
            (
                "hook.sh",
                root.join(".git/hooks/pre-commit"),
                Location::Inside,
            ),
            ("up/../x", root.join("deep/x"), Location::Inside),
            (
                "docs/../docs/settings.ini",
                root.join(".git/config"),
                Location::Inside,
            ),
            (
                "link/../outside.txt",
                other.parent().unwrap().join("outside.txt"),
                Location::Outside,
            ),
            ("missing/../a", root.join(".git/config"), Location::Inside),
        ];
        for (arg, real, location) in cases {
            let r = resolve(&root, arg);
            assert_eq!((&r.real, r.location), (&real, location), "{arg}");
            assert_eq!(r.written, normalize(&root.join(arg)), "{arg}");
            assert_eq!(r.via(), Some(r.written.clone()), "{arg}");
        }
        let r = resolve(&root, "docs/settings.ini");
        assert_eq!(r.shown(), "docs/settings.ini -> .git/config");
        assert_eq!(
            r.edit_access(None),
            Access::NeedsApproval(ApprovalRequestKind::Edit {
                path: root.join(".git/config"),
                via: Some(root.join("docs/settings.ini")),
                diff: None,
                location: Location::Inside,
            })
        );
    }

    #[test]
    fn loops_and_long_chains_stop_at_a_link() {
        let (_d, root) = workdir();
        symlink("loop2", root.join("loop1")).unwrap();
        symlink("loop1", root.join("loop2")).unwrap();
        let r = resolve(&root, "loop1/x");
        // Left on a link: nothing acts on it (see nofollow.rs).
        assert!(
            std::fs::symlink_metadata(r.real.parent().unwrap())
                .unwrap()
                .file_type()
                .is_symlink(),
            "{r:?}"
        );
    }

    #[test]
    fn reads_carry_the_written_path_when_it_differs() {
        let (_d, root) = workdir();
        std::fs::write(root.join(".env"), "K=v").unwrap();
        symlink(".env", root.join("notes.txt")).unwrap();
        std::fs::write(root.join("plain.txt"), "x").unwrap();
        assert_eq!(
            resolve(&root, "plain.txt").read_access(),
            Access::ReadInside(root.join("plain.txt"))
        );
        assert_eq!(
            resolve(&root, "notes.txt").read_access(),
            Access::NeedsApproval(ApprovalRequestKind::Read {
                path: root.join(".env"),
                via: Some(root.join("notes.txt")),
            })
        );
        assert_eq!(
            resolve(&root, "/etc/hosts").read_access(),
            Access::NeedsApproval(ApprovalRequestKind::ReadOutside {
                path: real_path(Path::new("/etc/hosts")),
                via: (real_path(Path::new("/etc/hosts")) != Path::new("/etc/hosts"))
                    .then(|| PathBuf::from("/etc/hosts")),
            })
        );
    }
}
