//! One picture of the project's files: every file the project does not ignore (its
//! `.gitignore`s and `.ignore`s apply; `.git/` is never included), with its size,
//! modification time, inode, permissions and the SHA-256 of its content, whose bytes are
//! kept in the [`Store`]. Taking a picture again reuses the previous one's digest for a
//! file whose size, time, inode and mode are unchanged, so only changed files are read.
//! Files over [`MAX_FILE_BYTES`] are recorded without content (a change to one cannot be
//! undone, and `/undo` says so). Contents and link targets are read through
//! `nofollow` (no link followed on the way, no FIFO waited on), and [`current`], the
//! check before a restore, looks at the entry that way too. It knows files; it must not
//! know turns or the agent.

use std::collections::{BTreeMap, BTreeSet};
use std::io::Read as _;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;
use std::sync::Mutex;

use sha2::{Digest as _, Sha256};

use super::store::Store;
use crate::nofollow::{self, FileError};

/// The largest file whose content is kept.
pub const MAX_FILE_BYTES: u64 = crate::protocol::UndoOutcome::MAX_KEPT_FILE_BYTES;

/// A file's content identity.
pub type Digest = [u8; 32];

/// What is known of one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileState {
    /// Size in bytes.
    pub size: u64,
    /// Modification time, nanoseconds since the epoch.
    pub mtime_ns: i128,
    /// Inode number.
    pub ino: u64,
    /// Permission bits.
    pub mode: u32,
    /// What it is.
    pub kind: FileKind,
}

/// A file's content.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileKind {
    /// A regular file whose content is in the store.
    Stored(Digest),
    /// A regular file too large to keep.
    Large,
    /// A symbolic link to this target.
    Link(std::path::PathBuf),
}

impl FileState {
    /// Whether the stat part says nothing changed (then the content did not either).
    fn same_stat(&self, other: &FileState) -> bool {
        self.size == other.size
            && self.mtime_ns == other.mtime_ns
            && self.ino == other.ino
            && self.mode == other.mode
    }

    /// Whether two states hold the same content (and permissions).
    pub fn same_content(&self, other: &FileState) -> bool {
        self.mode == other.mode
            && match (&self.kind, &other.kind) {
                (FileKind::Large, FileKind::Large) => self.same_stat(other),
                (a, b) => a == b,
            }
    }
}

/// Every file, by its path relative to the project (with `/`).
pub type Manifest = BTreeMap<String, FileState>;

/// Why a picture could not be taken.
#[derive(Debug, thiserror::Error)]
#[error("cannot snapshot the project: {0}")]
pub struct SnapshotError(pub String);

/// Takes a picture of `project`, reusing `previous` where files are unchanged and
/// storing the content of the rest in `store`.
pub fn take(
    project: &Path,
    previous: Option<&Manifest>,
    store: &Store,
) -> Result<Manifest, SnapshotError> {
    take_with_folders(project, previous, store).map(|(files, _)| files)
}

/// [`take`], with the folders the walk went through (relative, with `/`; the project
/// itself left out): what a turn created is told from what was there before it.
pub fn take_with_folders(
    project: &Path,
    previous: Option<&Manifest>,
    store: &Store,
) -> Result<(Manifest, BTreeSet<String>), SnapshotError> {
    let found: Mutex<Vec<(String, std::fs::Metadata)>> = Mutex::new(Vec::new());
    let folders: Mutex<BTreeSet<String>> = Mutex::new(BTreeSet::new());
    // A .gitignore counts in a project that is not a git repository too.
    crate::project_walk::project_walker(project)
        .build_parallel()
        .run(|| {
            Box::new(|entry| {
                let Ok(entry) = entry else {
                    return ignore::WalkState::Continue;
                };
                let Some(kind) = entry.file_type() else {
                    return ignore::WalkState::Continue;
                };
                let Ok(rel) = entry.path().strip_prefix(project) else {
                    return ignore::WalkState::Continue;
                };
                if kind.is_dir() {
                    if let Some(rel) = rel.to_str().filter(|r| !r.is_empty()) {
                        folders
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .insert(rel.to_string());
                    }
                    return ignore::WalkState::Continue;
                }
                if let (Some(rel), Ok(meta)) = (rel.to_str(), entry.path().symlink_metadata()) {
                    found
                        .lock()
                        .unwrap_or_else(std::sync::PoisonError::into_inner)
                        .push((rel.to_string(), meta));
                }
                ignore::WalkState::Continue
            })
        });
    let found = found
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    // Hash what changed on two threads: reading dominates, and this machine class has two
    // cores.
    let results: Mutex<Manifest> = Mutex::new(BTreeMap::new());
    let errors: Mutex<Vec<String>> = Mutex::new(Vec::new());
    let chunk = found.len().div_ceil(2).max(1);
    std::thread::scope(|scope| {
        for part in found.chunks(chunk) {
            let (results, errors) = (&results, &errors);
            scope.spawn(move || {
                for (rel, meta) in part {
                    match state_of(project, rel, meta, previous, store) {
                        Ok(Some(state)) => {
                            results
                                .lock()
                                .unwrap_or_else(std::sync::PoisonError::into_inner)
                                .insert(rel.clone(), state);
                        }
                        Ok(None) => {}
                        Err(e) => errors
                            .lock()
                            .unwrap_or_else(std::sync::PoisonError::into_inner)
                            .push(format!("{rel}: {e}")),
                    }
                }
            });
        }
    });
    let errors = errors
        .into_inner()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    if let Some(first) = errors.first() {
        // A file that vanished mid-walk is no error; one that cannot be read or stored is.
        return Err(SnapshotError(format!(
            "{first} ({} file(s) failed)",
            errors.len()
        )));
    }
    Ok((
        results
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
        folders
            .into_inner()
            .unwrap_or_else(std::sync::PoisonError::into_inner),
    ))
}

/// The state of one file (`None` when it vanished meanwhile, or is no longer what the
/// walk saw). Its content and link target are read through `nofollow`: a link swapped
/// in on the way since the walk is not read through, and a FIFO swapped in is not
/// waited on.
fn state_of(
    project: &Path,
    rel: &str,
    meta: &std::fs::Metadata,
    previous: Option<&Manifest>,
    store: &Store,
) -> std::io::Result<Option<FileState>> {
    let path = project.join(rel);
    let state = FileState {
        size: meta.len(),
        mtime_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
        ino: meta.ino(),
        mode: meta.permissions().mode() & 0o7777,
        kind: FileKind::Large,
    };
    if meta.file_type().is_symlink() {
        return match nofollow::read_link(&path) {
            Ok(target) => Ok(Some(FileState {
                kind: FileKind::Link(target),
                ..state
            })),
            Err(e) => changed_meanwhile(e),
        };
    }
    if !meta.is_file() {
        return Ok(None);
    }
    with_content(
        state,
        previous.and_then(|p| p.get(rel)),
        store,
        || match nofollow::open_read(&path) {
            Ok(mut file) => {
                let mut bytes = Vec::new();
                file.read_to_end(&mut bytes)?;
                Ok(Some(bytes))
            }
            Err(e) => changed_meanwhile(e),
        },
    )
}

/// `None` for an entry that is no longer what the walk saw (gone, a link on the way, a
/// folder or a special file now); the error for any other failure.
fn changed_meanwhile<T>(e: FileError) -> std::io::Result<Option<T>> {
    match e {
        FileError::Io(e) => Err(e),
        _ => Ok(None),
    }
}

/// A regular file's `state` with its content: `known`'s when the stat part is the same,
/// none when it is too large to keep, else what `read` gives (`None`: it vanished),
/// kept in `store`.
fn with_content<E: From<std::io::Error>>(
    mut state: FileState,
    known: Option<&FileState>,
    store: &Store,
    read: impl FnOnce() -> Result<Option<Vec<u8>>, E>,
) -> Result<Option<FileState>, E> {
    if let Some(before) = known
        && before.same_stat(&state)
        && !matches!(before.kind, FileKind::Link(_))
    {
        state.kind = before.kind.clone();
        return Ok(Some(state));
    }
    if state.size > MAX_FILE_BYTES {
        return Ok(Some(state));
    }
    let Some(bytes) = read()? else {
        return Ok(None);
    };
    let digest: Digest = Sha256::digest(&bytes).into();
    store.put(&digest, &bytes)?;
    state.kind = FileKind::Stored(digest);
    Ok(Some(state))
}

/// The state of one file now (for checks before a restore), read without following any
/// symbolic link on the way (`nofollow`): the answer is about the project's own entry,
/// and a link standing on the way now is [`FileError::LinkAppeared`] naming it.
pub fn current(
    project: &Path,
    rel: &str,
    store: &Store,
    known: Option<&FileState>,
) -> Result<Option<FileState>, FileError> {
    let path = project.join(rel);
    let Some(seen) = nofollow::stat(&path)? else {
        return Ok(None);
    };
    let state = FileState {
        size: seen.size,
        mtime_ns: seen.mtime_ns,
        ino: seen.ino,
        mode: seen.mode,
        kind: FileKind::Large,
    };
    match seen.kind {
        nofollow::FileKind::Symlink => match nofollow::read_link(&path) {
            Ok(target) => Ok(Some(FileState {
                kind: FileKind::Link(target),
                ..state
            })),
            Err(FileError::NotFound) => Ok(None),
            Err(e) => Err(e),
        },
        nofollow::FileKind::Regular => with_content(state, known, store, || {
            let mut file = match nofollow::open_read(&path) {
                Ok(file) => file,
                Err(FileError::NotFound) => return Ok(None),
                Err(e) => return Err(e),
            };
            let mut bytes = Vec::new();
            file.read_to_end(&mut bytes)?;
            Ok(Some(bytes))
        }),
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the walk saw was a file; by the time it is read, a FIFO or a folder swapped
    /// for a link out of the project stands there: neither is waited on nor read through.
    #[test]
    fn a_file_swapped_after_the_walk_is_neither_waited_on_nor_read_through_a_link() {
        let dir = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(dir.path()).unwrap();
        let (project, outside) = (root.join("p"), root.join("outside"));
        std::fs::create_dir_all(project.join("sub")).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(project.join("f.txt"), "mine").unwrap();
        std::fs::write(project.join("sub/g.txt"), "mine").unwrap();
        std::fs::write(outside.join("g.txt"), "SECRET outside").unwrap();
        let meta_f = project.join("f.txt").symlink_metadata().unwrap();
        let meta_g = project.join("sub/g.txt").symlink_metadata().unwrap();
        std::fs::remove_file(project.join("f.txt")).unwrap();
        nix::unistd::mkfifo(
            &project.join("f.txt"),
            nix::sys::stat::Mode::from_bits_truncate(0o644),
        )
        .unwrap();
        std::fs::remove_dir_all(project.join("sub")).unwrap();
        std::os::unix::fs::symlink(&outside, project.join("sub")).unwrap();
        let store_root = root.join("store");
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let store = Store::new(&store_root);
            let f = state_of(&project, "f.txt", &meta_f, None, &store).unwrap();
            let g = state_of(&project, "sub/g.txt", &meta_g, None, &store).unwrap();
            let _ = tx.send((f, g));
        });
        let (f, g) = rx
            .recv_timeout(std::time::Duration::from_secs(20))
            .expect("the picture waited on a FIFO");
        assert_eq!(f, None);
        assert_eq!(g, None, "read through the link");
    }
}
