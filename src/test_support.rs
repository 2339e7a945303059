//! Fixtures shared by the unit tests: files and skill folders written into temporary
//! directories, and a catalog discovered from them. Compiled only for tests; it knows
//! skills discovery and the file system, nothing else.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::path::{Path, PathBuf};

use crate::skills::{Catalog, DiscoveryOptions};

/// Writes `text` to `path`, creating its parent folders.
pub fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
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
        harness9_home: root.join("h9"),
        ..DiscoveryOptions::default()
    })
}

/// Asserts that `text` contains `needle`, showing `text` when it does not.
#[track_caller]
pub fn assert_contains(text: &str, needle: &str) {
    assert!(text.contains(needle), "{needle:?} not found in:\n{text}");
}
