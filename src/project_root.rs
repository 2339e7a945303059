//! The one answer to "which project is this?": the project root a working folder
//! belongs to ([`find`]), and the chain of folders from that root down to the working
//! folder ([`chain`]). Everything that reads a project's own files (`AGENTS.md`, skill
//! roots, `.harness9/`, `.mcp.json`, the permission file) and every per-project record
//! (sessions, trust lists) takes the root from here, so they never disagree.
//!
//! The root is the nearest folder at or above the working folder that holds a `.git`
//! folder or a `.git` file (a worktree, a submodule: the submodule's own root is nearer
//! than its superproject's), else the working folder itself. A `.git` that is a link,
//! or that is not owned by the user running harness9 (nor is the folder holding it),
//! ends the search with the working folder as the root, as git refuses a repository
//! another user owns: a `/tmp/.git` someone else made must not turn `/tmp` into the
//! project and its files into this user's project files. The user's home folder (`$HOME`)
//! is not the root of a folder below it: a home kept in git (dotfiles) is not a project,
//! and its `.harness9/` is harness9's own home, not a project's settings.
//!
//! It must not know what callers read in the folders it names.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// How the root was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Found {
    /// A `.git` folder or file marks it.
    Repository,
    /// No repository holds the working folder: the root is the working folder.
    NoRepository,
    /// The nearest `.git` is not this user's (or is a link), so it was not used: the
    /// root is the working folder.
    Refused {
        /// The `.git` refused.
        marker: PathBuf,
        /// Why.
        why: Refusal,
    },
}

/// Why a `.git` was not taken as the project's mark.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// It, or the folder holding it, belongs to another user.
    OtherOwner,
    /// It is a symbolic link.
    Link,
}

/// The project a working folder belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProjectRoot {
    /// The root folder (canonical when the working folder was).
    pub path: PathBuf,
    /// How it was found.
    pub found: Found,
}

impl ProjectRoot {
    /// A start-up warning when a repository was refused.
    pub fn warning(&self) -> Option<String> {
        let Found::Refused { marker, why } = &self.found else {
            return None;
        };
        let why = match why {
            Refusal::OtherOwner => "belongs to another user",
            Refusal::Link => "is a symbolic link",
        };
        Some(format!(
            "{} {why}, so it does not mark the project: the project is the working folder {} \
             (its AGENTS.md, skills, .harness9/ and .mcp.json are read from there)",
            marker.display(),
            self.path.display()
        ))
    }
}

/// The project root of `workdir` (see the module's paragraph). `workdir` is made
/// canonical when it can be.
pub fn find(workdir: &Path) -> ProjectRoot {
    let home = std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .and_then(|h| Path::new(&h).canonicalize().ok());
    find_below(workdir, home.as_deref())
}

/// [`find`] with the user's home folder given.
fn find_below(workdir: &Path, home: Option<&Path>) -> ProjectRoot {
    let dir = workdir
        .canonicalize()
        .unwrap_or_else(|_| workdir.to_path_buf());
    let me = nix::unistd::geteuid().as_raw();
    for candidate in dir.ancestors() {
        if home == Some(candidate) && candidate != dir {
            break;
        }
        let marker = candidate.join(".git");
        let Ok(meta) = std::fs::symlink_metadata(&marker) else {
            continue;
        };
        let refused = |why| ProjectRoot {
            path: dir.clone(),
            found: Found::Refused {
                marker: marker.clone(),
                why,
            },
        };
        if meta.file_type().is_symlink() {
            return refused(Refusal::Link);
        }
        if !(meta.is_dir() || meta.is_file()) {
            continue;
        }
        let holder_is_mine = std::fs::metadata(candidate).is_ok_and(|m| m.uid() == me);
        if meta.uid() != me || !holder_is_mine {
            return refused(Refusal::OtherOwner);
        }
        return ProjectRoot {
            path: candidate.to_path_buf(),
            found: Found::Repository,
        };
    }
    ProjectRoot {
        path: dir,
        found: Found::NoRepository,
    }
}

/// The folders from `root` down to `workdir`, root first, both included; just
/// `[workdir]` when `workdir` is not inside `root`.
pub fn chain(root: &Path, workdir: &Path) -> Vec<PathBuf> {
    if !workdir.starts_with(root) || root.as_os_str().is_empty() {
        return vec![workdir.to_path_buf()];
    }
    let mut folders: Vec<PathBuf> = workdir
        .ancestors()
        .take_while(|a| a.starts_with(root))
        .map(Path::to_path_buf)
        .collect();
    folders.reverse();
    folders
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical_temp() -> (tempfile::TempDir, PathBuf) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        (tmp, root)
    }

    #[test]
    fn the_nearest_git_folder_or_file_marks_the_root() {
        let (_tmp, base) = canonical_temp();
        let deep = base.join("repo/src/deep");
        std::fs::create_dir_all(&deep).unwrap();
        let outside = find(&deep);
        assert_eq!(outside.found, Found::NoRepository);
        assert_eq!(outside.path, deep);
        std::fs::create_dir(base.join("repo/.git")).unwrap();
        let inside = find(&deep);
        assert_eq!(
            (inside.path, inside.found),
            (base.join("repo"), Found::Repository)
        );
        // A worktree's (or a submodule's) `.git` is a file, and the nearest one wins.
        std::fs::write(base.join("repo/src/.git"), "gitdir: ../.git/modules/src\n").unwrap();
        assert_eq!(find(&deep).path, base.join("repo/src"));
        assert_eq!(find(&base.join("repo/src")).path, base.join("repo/src"));
        assert!(find(&deep).warning().is_none());
    }

    #[test]
    fn a_home_kept_in_git_is_not_the_project_of_a_folder_below_it() {
        let (_tmp, home) = canonical_temp();
        std::fs::create_dir_all(home.join(".git")).unwrap();
        std::fs::create_dir_all(home.join("notes/today")).unwrap();
        std::fs::create_dir_all(home.join("src/app/.git")).unwrap();
        let below = find_below(&home.join("notes/today"), Some(&home));
        assert_eq!(
            (below.path, below.found),
            (home.join("notes/today"), Found::NoRepository)
        );
        assert_eq!(
            find_below(&home.join("src/app"), Some(&home)).path,
            home.join("src/app")
        );
        // Started in the home itself, the home is the project.
        assert_eq!(find_below(&home, Some(&home)).found, Found::Repository);
    }

    #[test]
    fn a_linked_git_is_refused_and_the_working_folder_is_the_root() {
        let (_tmp, base) = canonical_temp();
        std::fs::create_dir_all(base.join("real/.git")).unwrap();
        std::fs::create_dir_all(base.join("up/sub")).unwrap();
        std::os::unix::fs::symlink(base.join("real/.git"), base.join("up/.git")).unwrap();
        let found = find(&base.join("up/sub"));
        assert_eq!(found.path, base.join("up/sub"));
        assert!(matches!(
            found.found,
            Found::Refused {
                why: Refusal::Link,
                ..
            }
        ));
        assert!(found.warning().unwrap().contains("symbolic link"));
    }

    #[test]
    fn a_git_another_user_owns_is_refused() {
        if !nix::unistd::geteuid().is_root() {
            return; // Only root can give a file to another user.
        }
        let (_tmp, base) = canonical_temp();
        let sub = base.join("shared/sub");
        std::fs::create_dir_all(&sub).unwrap();
        for (what, path) in [("marker", "shared/.git"), ("holder", "shared")] {
            let path = base.join(path);
            if what == "marker" {
                std::fs::create_dir(&path).unwrap();
            }
            let nobody = nix::unistd::Uid::from_raw(65534);
            nix::unistd::chown(&path, Some(nobody), None).unwrap();
            let found = find(&sub);
            assert_eq!(found.path, sub, "{what}");
            assert!(matches!(
                found.found,
                Found::Refused {
                    why: Refusal::OtherOwner,
                    ..
                }
            ));
            assert!(found.warning().unwrap().contains("another user"));
            let root = nix::unistd::Uid::from_raw(0);
            nix::unistd::chown(&path, Some(root), None).unwrap();
        }
        assert_eq!(find(&sub).path, base.join("shared"));
    }

    #[test]
    fn the_chain_runs_from_the_root_down_to_the_working_folder() {
        let root = Path::new("/r");
        assert_eq!(
            chain(root, Path::new("/r/a/b")),
            [Path::new("/r"), Path::new("/r/a"), Path::new("/r/a/b")]
        );
        assert_eq!(chain(root, root), [root]);
        assert_eq!(chain(root, Path::new("/rx/a")), [Path::new("/rx/a")]);
        assert_eq!(chain(Path::new(""), Path::new("/w")), [Path::new("/w")]);
    }
}
