//! Fixtures shared by the unit tests: files and skill folders written into temporary
//! directories, a catalog discovered from them, and an assertion on text. Compiled only for tests; it knows
//! skills discovery and the file system, nothing else.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use crate::skills::{Catalog, DiscoveryOptions};

/// Writes `text` to `path`, creating its parent folders.
pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// Writes each `(path below root, text)`, creating parent folders.
pub fn write_tree(root: &Path, files: &[(&str, &str)]) {
    for (rel, text) in files {
        write(&root.join(rel), text);
    }
}

/// `n` lines `line 00001` … of 11 bytes each, newline included.
pub fn numbered_lines(n: usize) -> String {
    (1..=n).map(|i| format!("line {i:05}\n")).collect()
}

/// A temporary directory holding `files` (paths below it; see [`write_tree`]).
pub fn temp_tree(files: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    write_tree(dir.path(), files);
    dir
}

/// A temporary project holding `files`, and its catalog (see [`project_catalog`]).
pub fn project_with(files: &[(&str, &str)]) -> (tempfile::TempDir, Catalog) {
    let dir = temp_tree(files);
    let catalog = project_catalog(dir.path());
    (dir, catalog)
}

/// Writes `root/skills/NAME/SKILL.md` with `name`, a description, the extra frontmatter
/// lines `extra` (each ending in a newline) and `body`; returns the skill's folder.
pub fn write_skill(root: &Path, name: &str, extra: &str, body: &str) -> PathBuf {
    let dir = root.join("skills").join(name);
    write(
        &dir.join("SKILL.md"),
        &format!("---\nname: {name}\ndescription: The {name} skill\n{extra}---\n{body}\n"),
    );
    dir
}

/// The catalog of a project in `root` (its `skills/` folder; the harness9 home inside
/// it, so nothing outside the temporary directory is read), discovered without the
/// cache.
pub fn project_catalog(root: &Path) -> Catalog {
    Catalog::discover_uncached(&DiscoveryOptions {
        workdir: root.to_path_buf(),
        project_root: std::path::PathBuf::new(),
        harness9_home: root.join("h9"),
        ..DiscoveryOptions::default()
    })
}

/// The catalog of the skill roots `flag_dirs` and `remote_dirs` alone: the project and
/// the harness9 home are the folder `empty`, and there is no user home.
pub fn roots_catalog(empty: &Path, flag_dirs: Vec<PathBuf>, remote_dirs: Vec<PathBuf>) -> Catalog {
    Catalog::discover(&DiscoveryOptions {
        flag_dirs,
        workdir: empty.to_path_buf(),
        project_root: std::path::PathBuf::new(),
        harness9_home: empty.to_path_buf(),
        user_home: None,
        remote_dirs,
        plugins: Vec::new(),
    })
}

/// Asserts that `text` contains `needle`, showing `text` when it does not.
#[track_caller]
pub fn assert_contains(text: &str, needle: &str) {
    assert!(text.contains(needle), "{needle:?} not found in:\n{text}");
}
