//! Which files of the project harness9 sees: one walker for the file-finding tools,
//! `@` mentions and their picker, and the `/undo` snapshots, so they all agree on what
//! is ignored. It knows the `ignore` crate's rules; it must not know what a caller does
//! with the files.
//!
//! The walker follows no symlinks, and it never opens an ignore file that is not a
//! regular file: the `ignore` crate reads `.gitignore` and `.ignore` (in the folder
//! walked, in every folder below it and in every folder above it) and
//! `.git/info/exclude` by following links and reading lines without end, so a committed
//! `.gitignore -> /dev/zero` would fill memory and a FIFO or `/dev/tty` would hang the
//! walk. A folder below whose ignore files are not plain files is not walked; when the
//! root or a folder above it has such files, no ignore file is read for that walk (git
//! itself does not follow a symlinked `.gitignore`).

use std::path::Path;

use ignore::WalkBuilder;

/// The ignore files the walker reads in each folder.
const IGNORE_FILES: &[&str] = &[".gitignore", ".ignore"];

/// The project walker: sorted by name, `.gitignore`, `.ignore` and
/// git excludes respected (also outside a git repository), hidden files included, `.git`
/// folders skipped, symlinks not followed, folders whose ignore files are not plain
/// files skipped.
pub fn project_walker(root: &Path) -> WalkBuilder {
    let mut builder = WalkBuilder::new(root);
    builder
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|entry| {
            let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
            entry.file_name() != ".git" && (!is_dir || ignore_files_are_plain(entry.path()))
        });
    // The crate reads the root's ignore files and, whatever `parents` says, every
    // ancestor's: when one of them is not a plain file, none is read.
    let real = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    if !real.ancestors().all(ignore_files_are_plain) {
        builder
            .git_ignore(false)
            .ignore(false)
            .git_exclude(false)
            .parents(false);
    }
    builder
}

/// Whether every ignore file the walker would open in `dir` is absent or a regular
/// file, looked at without following links.
fn ignore_files_are_plain(dir: &Path) -> bool {
    IGNORE_FILES
        .iter()
        .all(|name| regular_or_absent(&dir.join(name)))
        && git_exclude_is_plain(dir)
}

/// `.git/info/exclude` (read when `.git` is a folder) is absent or a regular file, and
/// no link leads to it. A `.git` file (a worktree's pointer) is not followed here.
fn git_exclude_is_plain(dir: &Path) -> bool {
    let git = dir.join(".git");
    match std::fs::symlink_metadata(&git) {
        Err(_) => true,
        Ok(meta) if meta.is_file() => true,
        Ok(meta) if meta.is_dir() => {
            let info = git.join("info");
            match std::fs::symlink_metadata(&info) {
                Err(_) => true,
                Ok(meta) if meta.is_dir() => regular_or_absent(&info.join("exclude")),
                Ok(_) => false,
            }
        }
        Ok(_) => false,
    }
}

fn regular_or_absent(path: &Path) -> bool {
    match std::fs::symlink_metadata(path) {
        Ok(meta) => meta.is_file(),
        Err(e) => e.kind() == std::io::ErrorKind::NotFound,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::symlink;
    use std::time::Duration;

    /// The files the walker yields under `root`, relative to it; panics when the walk
    /// does not finish within a deadline (it would hang or fill memory).
    fn walked(root: &Path) -> Vec<String> {
        let root = root.to_path_buf();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let found: Vec<String> = project_walker(&root)
                .build()
                .flatten()
                .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
                .filter_map(|e| {
                    e.path()
                        .strip_prefix(&root)
                        .ok()
                        .map(|p| p.display().to_string())
                })
                .collect();
            let _ = tx.send(found);
        });
        rx.recv_timeout(Duration::from_secs(30))
            .expect("the walk finishes")
    }

    fn fifo(path: &Path) {
        nix::unistd::mkfifo(path, nix::sys::stat::Mode::from_bits_truncate(0o644)).unwrap();
    }

    #[test]
    fn ignore_files_are_honoured_and_links_not_followed() {
        let dir = crate::test_support::temp_tree(&[
            (".gitignore", "target/\n"),
            ("src/a.rs", ""),
            ("src/.ignore", "gen.rs\n"),
            ("src/gen.rs", ""),
            ("target/out", ""),
            (".git/config", ""),
        ]);
        symlink("src", dir.path().join("alias")).unwrap();
        assert_eq!(
            walked(dir.path()),
            [".gitignore", "src/.ignore", "src/a.rs"]
        );
    }

    /// The class "an ignore file that is not a plain file": a link to an endless device,
    /// to a terminal, a FIFO, a link to a FIFO; below the root, at the root, in the
    /// git folder's exclude file and in a folder above the root.
    #[test]
    fn ignore_files_that_are_not_plain_files_are_never_opened() {
        let dir = crate::test_support::temp_tree(&[
            ("ok/a.txt", ""),
            ("zero/b.txt", ""),
            ("tty/c.txt", ""),
            ("pipe/d.txt", ""),
            ("piped-link/e.txt", ""),
            ("exclude/f.txt", ""),
            ("exclude/.git/info/keep", ""),
        ]);
        let root = dir.path();
        symlink("/dev/zero", root.join("zero/.gitignore")).unwrap();
        symlink("/dev/tty", root.join("tty/.ignore")).unwrap();
        fifo(&root.join("pipe/.gitignore"));
        fifo(&root.join("piped-link/fifo"));
        symlink("fifo", root.join("piped-link/.ignore")).unwrap();
        symlink("/dev/zero", root.join("exclude/.git/info/exclude")).unwrap();
        // Folders with such files are left out; the rest is walked.
        assert_eq!(walked(root), ["ok/a.txt"]);
        // Walked from such a folder, or from below one, the files are simply not read.
        for (from, file) in [
            ("zero", "b.txt"),
            ("tty", "c.txt"),
            ("pipe", "d.txt"),
            ("exclude", "f.txt"),
        ] {
            let files = walked(&root.join(from));
            assert!(files.contains(&file.to_string()), "{from}: {files:?}");
        }
        std::fs::create_dir(root.join("zero/sub")).unwrap();
        std::fs::write(root.join("zero/sub/g.txt"), "").unwrap();
        assert_eq!(walked(&root.join("zero/sub")), ["g.txt"]);
    }
}
