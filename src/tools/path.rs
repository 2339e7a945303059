//! Path arguments of tools: resolves what the model wrote against the project directory
//! and decides whether the result lies inside the project.
//!
//! Resolution is lexical (`..` and `.` are folded without touching the disk, so paths
//! that do not exist yet resolve too); the inside/outside decision then canonicalises the
//! longest existing ancestor, so a symlink inside the project that points elsewhere counts
//! as outside. This module knows nothing of approval policy or of any particular tool.

use std::path::{Path, PathBuf};

use crate::paths::{absolute, normalize};

// Where a path lies is a protocol value: approval requests carry it.
pub use crate::protocol::Location;

/// A path argument resolved against the project directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResolvedPath {
    /// Absolute, lexically normalised path (symlinks not followed).
    pub abs: PathBuf,
    /// How to name the path to the model and the user: relative to the project
    /// directory when inside (`.` for the directory itself), absolute otherwise.
    pub display: String,
    /// Inside or outside the project.
    pub location: Location,
}

impl ResolvedPath {
    /// True when the path lies outside the project directory.
    pub fn is_outside(&self) -> bool {
        self.location == Location::Outside
    }
}

/// Resolves `arg` (relative to `workdir`, absolute, or starting with `~/`) and decides
/// whether it lies inside `workdir`. An empty argument means `workdir` itself.
pub fn resolve(workdir: &Path, arg: &str) -> ResolvedPath {
    let abs = normalize(&absolute(arg, workdir));
    let root = canonical_or_self(workdir);
    let real = canonicalize_existing_prefix(&abs);
    let location = if real.starts_with(&root) {
        Location::Inside
    } else {
        Location::Outside
    };
    let display = match location {
        Location::Inside => relative_display(&abs, workdir)
            .or_else(|| relative_display(&abs, &root))
            .unwrap_or_else(|| abs.display().to_string()),
        Location::Outside => abs.display().to_string(),
    };
    ResolvedPath {
        abs,
        display,
        location,
    }
}

fn canonical_or_self(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}

/// Canonicalises the longest ancestor of `abs` that exists and appends the rest.
fn canonicalize_existing_prefix(abs: &Path) -> PathBuf {
    let mut existing = abs;
    let mut rest: Vec<&std::ffi::OsStr> = Vec::new();
    loop {
        if let Ok(real) = std::fs::canonicalize(existing) {
            let mut out = real;
            for part in rest.iter().rev() {
                out.push(part);
            }
            return out;
        }
        match (existing.parent(), existing.file_name()) {
            (Some(parent), Some(name)) => {
                rest.push(name);
                existing = parent;
            }
            _ => return abs.to_path_buf(),
        }
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

    fn workdir() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        (dir, root)
    }

    #[test]
    fn relative_path_inside() {
        let (_d, root) = workdir();
        let r = resolve(&root, "src/main.rs");
        assert_eq!(r.abs, root.join("src/main.rs"));
        assert_eq!(r.display, "src/main.rs");
        assert_eq!(r.location, Location::Inside);
    }

    #[test]
    fn empty_and_dot_are_the_workdir() {
        let (_d, root) = workdir();
        for arg in ["", ".", "./"] {
            let r = resolve(&root, arg);
            assert_eq!(r.abs, root, "{arg:?}");
            assert_eq!(r.display, ".");
            assert_eq!(r.location, Location::Inside);
        }
    }

    #[test]
    fn dotdot_is_folded_without_existence() {
        let (_d, root) = workdir();
        let r = resolve(&root, "a/b/../../c/./d.txt");
        assert_eq!(r.abs, root.join("c/d.txt"));
        assert_eq!(r.display, "c/d.txt");
        assert!(!r.is_outside());
    }

    #[test]
    fn escaping_with_dotdot_is_outside() {
        let (_d, root) = workdir();
        let r = resolve(&root, "../elsewhere.txt");
        assert_eq!(r.location, Location::Outside);
        assert_eq!(r.abs, root.parent().unwrap().join("elsewhere.txt"));
        assert_eq!(r.display, r.abs.display().to_string());
    }

    #[test]
    fn absolute_paths_inside_and_outside() {
        let (_d, root) = workdir();
        let inside = resolve(&root, &root.join("x/y").display().to_string());
        assert_eq!(inside.location, Location::Inside);
        assert_eq!(inside.display, "x/y");
        let outside = resolve(&root, "/etc/passwd");
        assert_eq!(outside.location, Location::Outside);
        assert_eq!(outside.display, "/etc/passwd");
    }

    #[test]
    fn symlink_pointing_outside_is_outside() {
        let (_d, root) = workdir();
        let (_o, other) = workdir();
        std::fs::write(other.join("secret.txt"), "s").unwrap();
        std::os::unix::fs::symlink(&other, root.join("link")).unwrap();
        let r = resolve(&root, "link/secret.txt");
        assert_eq!(r.location, Location::Outside);
        // Not yet existing files below the link are outside too.
        let r = resolve(&root, "link/new/file.txt");
        assert_eq!(r.location, Location::Outside);
    }

    #[test]
    fn symlink_pointing_inside_is_inside() {
        let (_d, root) = workdir();
        std::fs::create_dir(root.join("real")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("alias")).unwrap();
        let r = resolve(&root, "alias/f.txt");
        assert_eq!(r.location, Location::Inside);
        assert_eq!(r.display, "alias/f.txt");
    }

    #[test]
    fn sibling_with_common_prefix_is_outside() {
        let (_d, root) = workdir();
        let sibling = format!("{}-other/x", root.display());
        assert_eq!(resolve(&root, &sibling).location, Location::Outside);
    }
}
