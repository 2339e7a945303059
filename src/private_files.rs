//! Files harness9 keeps, written so that only this user reads them and so that two
//! processes never lose each other's changes: private folders (0700) and files (0600)
//! for logs, histories and sessions, tightened when they already exist wider; and
//! [`update`], the one read-change-write of a small file harness9 edits (rule files,
//! trust lists, config.toml, caches): an exclusive `flock` on the file's folder, read,
//! change, write to a fresh temporary file beside it, rename over it, unlock. A second
//! process waits for the first, then reads what the first wrote.
//!
//! The lock is taken on the folder, not on a lock file beside the file, so that no
//! stray file appears in a project's `.harness9/` (which may be committed); and not on
//! the file itself, which the rename replaces. It must not know what the files hold.

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

/// Creates `dir` and its missing parents, private to the user (0700 on Unix); when
/// `dir` already exists and is the user's, its mode is tightened to 0700.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder.create(dir)?;
    tighten(dir, 0o700)
}

/// Options for a private file (0600 on Unix when created), opened for appending.
pub fn private_append_options() -> OpenOptions {
    let mut options = OpenOptions::new();
    options.append(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600);
    }
    options
}

/// Opens `path` for appending, creating it 0600 in a private folder (0700); an
/// existing file or folder of this user's that is wider is tightened. For logs and
/// histories.
pub fn open_private_log(path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent() {
        create_private_dir(dir)?;
    }
    let file = private_append_options().create(true).open(path)?;
    tighten_open(&file, 0o600)?;
    Ok(file)
}

/// Takes group and other permissions away from `path` when it has any and is this
/// user's (a folder made by an older version, or with a wider umask); a symbolic link is
/// left alone.
fn tighten(path: &Path, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let meta = std::fs::symlink_metadata(path)?;
        if meta.file_type().is_symlink() {
            return Ok(());
        }
        if meta.mode() & 0o077 != 0 {
            let changed = std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode));
            return ignore_not_ours(changed);
        }
    }
    #[cfg(not(unix))]
    let _ = (path, mode);
    Ok(())
}

/// A `chmod` of someone else's file fails with EPERM: not ours to tighten.
fn ignore_not_ours(result: io::Result<()>) -> io::Result<()> {
    match result {
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied => Ok(()),
        other => other,
    }
}

/// [`tighten`] for an open file (no path to race on).
fn tighten_open(file: &File, mode: u32) -> io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{MetadataExt, PermissionsExt};
        let meta = file.metadata()?;
        if meta.mode() & 0o077 != 0 {
            return ignore_not_ours(file.set_permissions(std::fs::Permissions::from_mode(mode)));
        }
    }
    #[cfg(not(unix))]
    let _ = (file, mode);
    Ok(())
}

/// What a symbolic link at the file's own path means for [`update`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Links {
    /// Write to what it points at (the user's own config.toml kept in a dotfiles
    /// folder stays a link).
    Follow,
    /// Refuse to write: neither read nor write through it (a repository's
    /// `.harness9/permissions.toml` pointing at `~/.bashrc` must not make harness9
    /// write there, and replacing it would lose the rules it leads to).
    Refuse,
}

/// Who may read what [`update`] creates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Privacy {
    /// A new file 0600, new folders 0700 (files under `$HARNESS9_HOME`).
    Private,
    /// The umask decides (a project's files, which others may share).
    Shared,
}

/// How [`update`] treats the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UpdateMode {
    /// A link at the file's path.
    pub links: Links,
    /// New files' and folders' permissions. An existing file keeps its own.
    pub privacy: Privacy,
}

/// Why an [`update`] failed: the lock, reading or writing (the change's own error is
/// the caller's).
#[derive(Debug, thiserror::Error)]
#[error("{action} {}: {source}", path.display())]
pub struct UpdateIoError {
    /// What was being done.
    pub action: &'static str,
    /// The file or folder.
    pub path: PathBuf,
    /// The OS error.
    #[source]
    pub source: io::Error,
}

impl UpdateIoError {
    fn new(action: &'static str, path: &Path) -> impl FnOnce(io::Error) -> UpdateIoError {
        let path = path.to_path_buf();
        move |source| UpdateIoError {
            action,
            path,
            source,
        }
    }
}

/// Reads `path` (`None` when it does not exist), hands its text to `change`, and writes
/// what `change` returns (`None`: leave the file as it is) — all while holding an
/// exclusive lock on its folder, so concurrent updates by other processes or threads
/// happen one after the other and none is lost. The new text goes to a temporary file
/// in the same folder, then replaces the file by a rename (readers see the old text or
/// the new, never half of it); the file keeps its permissions. Returns what `change`
/// returns beside the text.
pub fn update<T, E>(
    path: &Path,
    mode: UpdateMode,
    change: impl FnOnce(Option<String>) -> Result<(Option<String>, T), E>,
) -> Result<T, E>
where
    E: From<UpdateIoError>,
{
    let target = match mode.links {
        Links::Follow if path.is_symlink() => {
            std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
        }
        _ => path.to_path_buf(),
    };
    let dir = match target.parent() {
        Some(dir) if !dir.as_os_str().is_empty() => dir.to_path_buf(),
        _ => PathBuf::from("."),
    };
    // Missing folders are made (private ones 0700); existing ones are left as they are
    // (a dotfiles folder a followed link leads to is the user's business).
    let mut builder = DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    if mode.privacy == Privacy::Private {
        use std::os::unix::fs::DirBuilderExt;
        builder.mode(0o700);
    }
    builder
        .create(&dir)
        .map_err(UpdateIoError::new("cannot create", &dir))?;
    let _lock = lock_folder(&dir)?;
    if mode.links == Links::Refuse && target.is_symlink() {
        return Err(UpdateIoError::new("cannot write", &target)(io::Error::new(
            io::ErrorKind::InvalidInput,
            "it is a symbolic link, and harness9 does not write through links here; \
             make it a regular file",
        ))
        .into());
    }
    let old = match std::fs::read_to_string(&target) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(UpdateIoError::new("cannot read", &target)(e).into()),
    };
    let (new, value) = change(old)?;
    if let Some(text) = new {
        replace(&target, &dir, &text, mode.privacy)?;
    }
    Ok(value)
}

/// An exclusive lock on a folder, released when dropped (with the file).
#[derive(Debug)]
pub struct FolderLock {
    _folder: File,
}

/// Waits for an exclusive `flock` on `dir`.
pub fn lock_folder(dir: &Path) -> Result<FolderLock, UpdateIoError> {
    let folder = File::open(dir).map_err(UpdateIoError::new("cannot open", dir))?;
    folder
        .lock()
        .map_err(UpdateIoError::new("cannot lock", dir))?;
    Ok(FolderLock { _folder: folder })
}

/// Writes `text` to a new temporary file in `dir` and renames it over `target`.
fn replace(target: &Path, dir: &Path, text: &str, privacy: Privacy) -> Result<(), UpdateIoError> {
    static WRITES: AtomicU64 = AtomicU64::new(0);
    let name = target
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let existing = std::fs::metadata(target).ok().map(|m| m.permissions());
    let (tmp, mut file) = loop {
        let unique = WRITES.fetch_add(1, Ordering::Relaxed);
        let tmp = dir.join(format!(".{name}.{}.{unique}.tmp", std::process::id()));
        let mut options = OpenOptions::new();
        options.write(true).create_new(true);
        #[cfg(unix)]
        if privacy == Privacy::Private || existing.is_some() {
            use std::os::unix::fs::OpenOptionsExt;
            options.mode(0o600);
        }
        match options.open(&tmp) {
            Ok(file) => break (tmp, file),
            // Left by a crashed writer with our pid long ago: try the next name.
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(UpdateIoError::new("cannot create", &tmp)(e)),
        }
    };
    let written = file
        .write_all(text.as_bytes())
        .and_then(|()| match &existing {
            Some(permissions) => file.set_permissions(permissions.clone()),
            None => Ok(()),
        })
        .and_then(|()| file.sync_all())
        .map_err(UpdateIoError::new("cannot write", &tmp))
        .and_then(|()| {
            std::fs::rename(&tmp, target).map_err(UpdateIoError::new("cannot replace", target))
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    const PRIVATE: UpdateMode = UpdateMode {
        links: Links::Refuse,
        privacy: Privacy::Private,
    };

    fn mode(path: &Path) -> u32 {
        std::fs::symlink_metadata(path)
            .unwrap()
            .permissions()
            .mode()
            & 0o777
    }

    /// Appending one line per update from many threads at once: every line is there
    /// (a read-change-write without the lock loses some within a few rounds).
    #[test]
    fn concurrent_updates_lose_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("sub/list.txt");
        const THREADS: usize = 8;
        const ROUNDS: usize = 40;
        std::thread::scope(|scope| {
            for t in 0..THREADS {
                let file = &file;
                scope.spawn(move || {
                    for r in 0..ROUNDS {
                        update::<_, UpdateIoError>(file, PRIVATE, |old| {
                            let mut text = old.unwrap_or_default();
                            text.push_str(&format!("{t}-{r}\n"));
                            Ok((Some(text), ()))
                        })
                        .unwrap();
                    }
                });
            }
        });
        let text = std::fs::read_to_string(&file).unwrap();
        assert_eq!(text.lines().count(), THREADS * ROUNDS);
        for t in 0..THREADS {
            for r in 0..ROUNDS {
                assert!(text.contains(&format!("{t}-{r}\n")), "{t}-{r} lost");
            }
        }
        // New files and folders are private; no temporary file is left behind.
        assert_eq!(mode(&file), 0o600);
        assert_eq!(mode(file.parent().unwrap()), 0o700);
        assert_eq!(
            std::fs::read_dir(file.parent().unwrap()).unwrap().count(),
            1
        );
    }

    #[test]
    fn links_are_followed_or_refused_and_permissions_kept() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("dotfiles/config.toml");
        std::fs::create_dir_all(real.parent().unwrap()).unwrap();
        std::fs::write(&real, "a\n").unwrap();
        std::fs::set_permissions(&real, std::fs::Permissions::from_mode(0o640)).unwrap();
        let link = dir.path().join("home/config.toml");
        std::fs::create_dir_all(link.parent().unwrap()).unwrap();
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let append = |old: Option<String>| -> Result<_, UpdateIoError> {
            Ok((Some(old.unwrap_or_default() + "b\n"), ()))
        };
        let follow = UpdateMode {
            links: Links::Follow,
            privacy: Privacy::Private,
        };
        update(&link, follow, append).unwrap();
        assert!(link.is_symlink());
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "a\nb\n");
        assert_eq!(mode(&real), 0o640);

        let refused = update(&link, PRIVATE, append).unwrap_err();
        assert!(refused.to_string().contains("symbolic link"), "{refused}");
        assert!(link.is_symlink());
        // The file it points at is untouched.
        assert_eq!(std::fs::read_to_string(&real).unwrap(), "a\nb\n");
    }

    #[derive(Debug)]
    enum Failed {
        Change,
        Io,
    }

    impl From<UpdateIoError> for Failed {
        fn from(_: UpdateIoError) -> Self {
            Failed::Io
        }
    }

    #[test]
    fn a_change_that_fails_or_keeps_the_text_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("f");
        std::fs::write(&file, "old").unwrap();
        let failed = update(
            &file,
            PRIVATE,
            |_| -> Result<(Option<String>, ()), Failed> { Err(Failed::Change) },
        );
        assert!(matches!(failed, Err(Failed::Change)));
        let kept = update::<_, UpdateIoError>(&file, PRIVATE, |old| Ok((None, old)));
        assert_eq!(kept.unwrap().as_deref(), Some("old"));
        assert_eq!(std::fs::read_to_string(&file).unwrap(), "old");
    }

    #[test]
    fn logs_are_private_and_wider_ones_are_tightened() {
        let dir = tempfile::tempdir().unwrap();
        let logs = dir.path().join("logs");
        std::fs::create_dir(&logs).unwrap();
        std::fs::set_permissions(&logs, std::fs::Permissions::from_mode(0o755)).unwrap();
        let old = logs.join("old.log");
        std::fs::write(&old, "x").unwrap();
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644)).unwrap();
        open_private_log(&old).unwrap();
        assert_eq!(mode(&logs), 0o700);
        assert_eq!(mode(&old), 0o600);
        let new = logs.join("mcp/new.log");
        open_private_log(&new).unwrap();
        assert_eq!(mode(&new), 0o600);
        assert_eq!(mode(new.parent().unwrap()), 0o700);
    }
}
