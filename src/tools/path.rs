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
    fn paths_are_folded_and_placed_without_touching_the_disk() {
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
            assert_eq!(r.abs, abs, "{arg:?}");
        }
    }

    #[test]
    fn symlinks_are_placed_by_where_they_point() {
        let (_d, root) = workdir();
        let (_o, other) = workdir();
        std::fs::write(other.join("secret.txt"), "s").unwrap();
        std::os::unix::fs::symlink(&other, root.join("link")).unwrap();
        std::fs::create_dir(root.join("real")).unwrap();
        std::os::unix::fs::symlink(root.join("real"), root.join("alias")).unwrap();
        // Files below a link, existing or not yet, are where the link points.
        for (arg, location) in [
            ("link/secret.txt", Location::Outside),
            ("link/new/file.txt", Location::Outside),
            ("alias/f.txt", Location::Inside),
        ] {
            let r = resolve(&root, arg);
            assert_eq!(r.location, location, "{arg}");
            // Named as written, not as the link resolves.
            assert_eq!(r.abs, root.join(arg));
        }
        assert_eq!(resolve(&root, "alias/f.txt").display, "alias/f.txt");
    }
}
