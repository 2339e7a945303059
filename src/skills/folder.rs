//! The one walk through a skill's folder: files below a starting subfolder, as paths
//! relative to the skill folder (`/`-separated), sorted, bounded in depth, in entries
//! looked at and in files kept. Hidden names (`.git`, `.DS_Store`) are skipped, and a
//! symlink is followed only while it stays inside the skill folder, so a skill cannot
//! list (or later hand out) files from elsewhere on the machine.
//!
//! Used for a skill's documents ([`super::docs`]) and for the bundled files `use_skill`
//! names. It knows nothing of what the files are for.

use std::path::{Path, PathBuf};

/// Directory entries looked at per walk at most (a stray `node_modules` stays cheap).
const MAX_VISITED: usize = 5_000;

/// What to walk and what to keep.
#[derive(Debug, Clone, Copy)]
pub struct WalkLimits {
    /// Folder levels searched below the starting folder.
    pub max_depth: usize,
    /// Files kept at most.
    pub max_files: usize,
}

/// One file of a skill folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FolderFile {
    /// Relative to the skill folder, `/`-separated.
    pub path: String,
    /// Size in bytes.
    pub size: u64,
}

/// Files found by [`walk`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Listing {
    /// The files kept, sorted by path.
    pub files: Vec<FolderFile>,
    /// The walk stopped at a limit before seeing everything.
    pub truncated: bool,
}

/// Walks `skill_dir/start` (`start` empty: the whole folder) and keeps the files whose
/// relative path `keep` accepts.
pub fn walk(
    skill_dir: &Path,
    start: &str,
    limits: WalkLimits,
    keep: &dyn Fn(&str) -> bool,
) -> Listing {
    let root = std::fs::canonicalize(skill_dir).unwrap_or_else(|_| skill_dir.to_path_buf());
    let mut walk = Walk {
        root: root.clone(),
        limits,
        keep,
        listing: Listing::default(),
        visited: 0,
    };
    let dir = if start.is_empty() {
        root
    } else {
        root.join(start)
    };
    walk.visit(&dir, start, 0);
    walk.listing.files.sort_by(|a, b| a.path.cmp(&b.path));
    walk.listing
}

struct Walk<'a> {
    root: PathBuf,
    limits: WalkLimits,
    keep: &'a dyn Fn(&str) -> bool,
    listing: Listing,
    visited: usize,
}

impl Walk<'_> {
    fn visit(&mut self, dir: &Path, rel: &str, depth: usize) {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        let mut names: Vec<String> = rd
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.'))
            .collect();
        names.sort();
        for name in names {
            self.visited += 1;
            if self.listing.files.len() >= self.limits.max_files || self.visited > MAX_VISITED {
                self.listing.truncated = true;
                return;
            }
            let path = dir.join(&name);
            let rel_path = if rel.is_empty() {
                name.clone()
            } else {
                format!("{rel}/{name}")
            };
            // Symlinks are followed only while they stay inside the skill folder.
            let Ok(real) = std::fs::canonicalize(&path) else {
                continue;
            };
            if !real.starts_with(&self.root) {
                continue;
            }
            let Ok(meta) = std::fs::metadata(&real) else {
                continue;
            };
            if meta.is_dir() {
                if depth < self.limits.max_depth {
                    self.visit(&path, &rel_path, depth + 1);
                } else {
                    self.listing.truncated = true;
                }
            } else if meta.is_file() && (self.keep)(&rel_path) {
                self.listing.files.push(FolderFile {
                    path: rel_path,
                    size: meta.len(),
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A file holding "x" at `path`.
    fn write(path: &Path) {
        crate::test_support::write(path, "x");
    }

    const WIDE: WalkLimits = WalkLimits {
        max_depth: 4,
        max_files: 100,
    };

    #[test]
    fn files_below_the_start_sorted_without_hidden_ones() {
        let dir = crate::test_support::temp_tree(&[
            ("scripts/b.sh", "x"),
            ("scripts/a/x.py", "x"),
            ("scripts/.hidden", "x"),
            ("top.md", "x"),
        ]);
        let d = dir.path();
        let listing = walk(d, "scripts", WIDE, &|_| true);
        let paths: Vec<&str> = listing.files.iter().map(|f| f.path.as_str()).collect();
        assert_eq!(paths, ["scripts/a/x.py", "scripts/b.sh"]);
        assert!(!listing.truncated);
        let all = walk(d, "", WIDE, &|p| p.ends_with(".md"));
        assert_eq!(all.files.len(), 1);
        assert_eq!(all.files[0].path, "top.md");
    }

    #[test]
    fn limits_are_reported_and_links_outside_are_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        write(&outside.path().join("secret.md"));
        let d = dir.path();
        for i in 0..5 {
            write(&d.join(format!("f{i}.md")));
        }
        write(&d.join("a/b/c/deep.md"));
        std::os::unix::fs::symlink(outside.path(), d.join("link")).unwrap();
        let few = walk(
            d,
            "",
            WalkLimits {
                max_depth: 1,
                max_files: 3,
            },
            &|_| true,
        );
        assert_eq!(few.files.len(), 3);
        assert!(few.truncated);
        let shallow = walk(
            d,
            "",
            WalkLimits {
                max_depth: 1,
                max_files: 100,
            },
            &|_| true,
        );
        assert!(shallow.truncated, "a/b/c is deeper than allowed");
        assert!(!shallow.files.iter().any(|f| f.path.contains("secret")));
    }
}
