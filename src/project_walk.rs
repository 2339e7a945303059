//! Which files of the project harness9 sees: one walker for the file-finding tools,
//! `@` mentions and their picker, and the `/undo` snapshots, so they all agree on what
//! is ignored. It knows the `ignore` crate's rules; it must not know what a caller does
//! with the files.

use std::path::Path;

use ignore::WalkBuilder;

/// The project walker: sorted by name, `.gitignore`, `.ignore` and
/// git excludes respected (also outside a git repository), hidden files included, `.git`
/// folders skipped, symlinks not followed.
pub fn project_walker(root: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|entry| entry.file_name() != ".git");
    builder
}
